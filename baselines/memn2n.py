"""End-to-end memory network (MemN2N) over the conversation, with and without the KB match features
(Bordes & Weston 2017, "Learning End-to-End Goal-Oriented Dialog", Table 2 "MemNN" / "MemNN + match").

Model (A: token embeddings of the input side, W: of the candidates, both d-dimensional bags of words):

    q        = A Φ(last user utterance)
    m_i      = A Φ(utterance i) + S[speaker_i] + T[age_i]        every earlier line, facts included (speaker kb)
    p        = softmax_i(qᵀ m_i);   o = Σ_i p_i m_i;   q ← R (q + o)      repeated for each hop (R: d×d, shared)
    score(y) = qᵀ (W Φ(y) + Σ_t match_t(y) · F_t)                          match_t ∈ {0, 1}, t = 7 KB types (+match)

trained with softmax cross-entropy over every training candidate (bAbI: the whole 4,212-line file), Adam and
gradient-norm clipping. Candidates are embedded once per batch (one (C, L) bag lookup) and scored with one
matrix product. Hyperparameters (hops, embedding size) and the epoch are chosen on dev from :data:`GRID`.

Words that never occur in training (the OOV test sets' entities) have no embedding: an OOV candidate is scored
from its known words (+ match features), which is why plain MemN2N loses accuracy on OOV and +match recovers it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dialeval.baselines._torchutil import ENTITY_TYPES, SPEAKERS, TorchRanker, require_torch

GRID = ({"hops": 1}, {"hops": 3}, {"hops": 3, "lr": 0.001})
"""Dev grid per task (each entry overrides the defaults; the epoch is chosen on dev too). The third entry exists for
T2: with lr 0.01 both hop counts stall at 79 % dev (every api_call missed), lr 0.001 reaches 99.8 % dev."""


def _net(torch, n_vocab: int, d: int, hops: int, memory_size: int, match: bool):
    nn = torch.nn
    F = torch.nn.functional

    class MemNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.A = nn.Embedding(n_vocab, d, padding_idx=0)
            self.W = nn.Embedding(n_vocab, d, padding_idx=0)
            self.S = nn.Embedding(len(SPEAKERS), d, padding_idx=0)
            self.T = nn.Embedding(memory_size + 1, d, padding_idx=0)
            self.R = nn.Linear(d, d, bias=False)
            self.F = nn.Parameter(torch.zeros(len(ENTITY_TYPES), d)) if match else None
            for emb in (self.A, self.W, self.S, self.T):
                nn.init.normal_(emb.weight, std=0.1)
                with torch.no_grad():
                    emb.weight[0].zero_()
            if match:
                nn.init.normal_(self.F, std=0.1)

        def query(self, batch):
            bags = F.embedding_bag(batch["rows"], self.A.weight, mode="sum", padding_idx=0)  # (U, d) distinct rows
            q = bags[batch["query"]]  # (B, d)
            m = bags[batch["memory"]] + self.S(batch["speaker"]) + self.T(batch["age"])  # (B, M, d)
            empty = batch["age"] == 0
            for _ in range(hops):
                logits = torch.einsum("bd,bmd->bm", q, m).masked_fill(empty, -1e9)
                p = torch.softmax(logits, dim=1).masked_fill(empty, 0.0)  # no memory at all -> o = 0
                q = self.R(q + torch.einsum("bm,bmd->bd", p, m))
            return q

        def scores(self, batch, cand_tokens, match):
            q = self.query(batch)
            cands = F.embedding_bag(cand_tokens, self.W.weight, mode="sum", padding_idx=0)  # (C, d), once per batch
            s = q @ cands.T  # (B, C): all candidates in one product
            if match is not None and self.F is not None:
                s = s + (match * (q @ self.F.T)[:, None, :]).sum(-1)
            return s

        def loss(self, batch, cand_tokens, match, answer, gen):
            return F.cross_entropy(self.scores(batch, cand_tokens, match), answer)

    return MemNet()


@dataclass
class MemN2N(TorchRanker):
    """MemN2N over the dialog history; softmax over all training candidates."""

    name: str = "memn2n"
    seed: int = 0
    embedding_size: int = 64
    hops: int = 3
    lr: float = 0.01
    epochs: int = 8
    patience: int = 2
    batch_size: int | None = None  # None: 32, or the device profile's batch on a GPU (_torchutil.training_profile)
    device_profile: bool | None = None  # None: on when the device is not the CPU; true: on any device; false: never
    profile_settings: dict | None = None  # grid / epochs / patience used instead when the device profile is on
    deterministic: bool | None = None  # fixed-order kernels; None: on (_torchutil.deterministic_on)
    memory_size: int = 100
    clip: float = 40.0
    optimizer: str = "adam"
    max_tokens: int = 40
    grid: tuple | list | None = field(default=GRID)
    kb: str | None = None  # KB file for the match features (else $DIALEVAL_KB; facts and api_call slots always)
    progress: bool | None = None  # rich bar on stderr; None = only when stderr is a terminal
    load_from: str | None = None  # directory written by save(): fit() loads it instead of training
    match = False
    needs_training = True
    HYPERPARAMETERS = (
        "embedding_size", "hops", "lr", "epochs", "patience", "batch_size", "memory_size", "clip", "optimizer",
    )

    def __post_init__(self):
        require_torch()
        self._init_common()

    def make_module(self, config: dict, n_vocab: int):
        torch = require_torch()
        return _net(torch, n_vocab, config["embedding_size"], config["hops"], config["memory_size"], self.match)


@dataclass
class MemN2NMatch(MemN2N):
    """MemN2N + the seven KB entity-type match features on the candidate side."""

    name: str = "memn2n-match"
    match = True
