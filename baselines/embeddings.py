"""Supervised embeddings (Bordes & Weston 2017, Table 2 "supervised embeddings").

    f(x, y) = (A Φ(x))ᵀ (B Φ(y))

Φ(x) is the bag of words of the input (every earlier utterance of the conversation, KB facts included, plus the
last user utterance), Φ(y) the bag of words of a candidate; A = B optionally (``tied``). Trained with the margin
ranking loss f(x, y) > 1 + f(x, ȳ): for each example, ``negatives`` candidates ȳ are sampled uniformly from the
training candidates (resampled when one is the gold) and the loss is Σ max(0, 1 − f(x, y) + f(x, ȳ)), with plain
SGD. Ranking scores every candidate with one matrix product. Embedding size, learning rate and the epoch are
chosen on dev from :data:`GRID`.

Two choices the paper leaves open are parameters: ``input_scale`` (``sqrt``, the default: the input bag divided by
√(1 + lines), which keeps SGD stable on long histories; ``none``: the plain sum) and ``unseen`` (``drop``, the
default: a word outside the vocabulary of the training dialogs and candidates adds nothing; ``random``: it gets a
fixed random vector drawn like the initial embeddings and never trained). On bAbI the vocabulary already holds the
whole candidate file, OOV entities included, and the input-side vectors of words absent from the training dialogs
are never updated, i.e. already random: ``unseen="random"`` leaves T1 OOV at 81.03 exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dialeval.baselines._torchutil import TorchRanker, require_torch, to_device, unique_inverse
from dialeval.core.errors import UsageError

GRID = ({"lr": 0.05}, {"lr": 0.1})
"""Dev grid per task (each entry overrides the defaults; the epoch is chosen on dev too)."""


def sample_negatives(torch, gold, n_candidates: int, negatives: int, gen):
    """``negatives`` candidate positions per gold, never the gold itself, as (distinct positions, inverse) host
    arrays: the golds' inverse first, then each example's negatives.

    Drawn from the seeded CPU generator (the stream the CPU numbers were stored with) and deduplicated on the host
    against the host copy of the golds, then sent to the device: torch.unique on a GPU would make the host wait
    for the device every batch. The distinct set comes from :func:`unique_inverse` (the values torch.unique gave,
    without its sort: at batch 256 × 100 draws the sort cost 30 µs per example)."""
    neg = torch.randint(0, n_candidates, (gold.shape[0], negatives), generator=gen).numpy()
    gold = gold.numpy()
    neg = np.where(neg == gold[:, None], (neg + 1) % n_candidates, neg)
    return unique_inverse(np.concatenate([gold, neg.ravel()]), n_candidates)


def _net(torch, n_vocab: int, d: int, tied: bool, negatives: int, margin: float, input_scale: str = "sqrt"):
    nn = torch.nn
    F = torch.nn.functional

    class EmbedNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.A = nn.Embedding(n_vocab, d, padding_idx=0)
            self.B = self.A if tied else nn.Embedding(n_vocab, d, padding_idx=0)
            for emb in {id(self.A): self.A, id(self.B): self.B}.values():
                nn.init.normal_(emb.weight, std=0.1)
                with torch.no_grad():
                    emb.weight[0].zero_()

        def inputs(self, batch):
            bags = F.embedding_bag(batch["rows"], self.A.weight, mode="sum", padding_idx=0)  # (U, d)
            present = (batch["age"] > 0).unsqueeze(-1).float()  # memory slots in use
            x = bags[batch["query"]] + (bags[batch["memory"]] * present).sum(1)  # (B, d)
            if input_scale == "none":  # the paper's plain bag (needs a much smaller lr)
                return x
            # Scaled by 1/sqrt(lines): a raw sum over a 100-line history explodes under SGD (loss 1e5 in epoch 1).
            return x / torch.sqrt(1.0 + present.sum(1))

        def candidates(self, cand_tokens):
            return F.embedding_bag(cand_tokens, self.B.weight, mode="sum", padding_idx=0)

        def scores(self, batch, cand_tokens, match):
            return self.inputs(batch) @ self.candidates(cand_tokens).T

        def loss(self, batch, cand_tokens, match, answer, gen):
            x = self.inputs(batch)  # (B, d)
            n_c = cand_tokens.shape[0]
            uniq, inv = sample_negatives(torch, batch["answer_cpu"], n_c, negatives, gen)
            t = to_device(torch, {"uniq": uniq, "inv": inv}, x.device)
            uniq, inv = t["uniq"], t["inv"]
            emb = self.candidates(cand_tokens[uniq])  # only the sampled candidates are embedded
            pos = (x * emb[inv[: x.shape[0]]]).sum(-1)  # (B,)
            negs = torch.einsum("bd,bkd->bk", x, emb[inv[x.shape[0] :]].view(x.shape[0], negatives, -1))
            return F.relu(margin - pos[:, None] + negs).sum(1).mean()

    return EmbedNet()


@dataclass
class SupervisedEmbeddings(TorchRanker):
    """(AΦ(x))ᵀ(BΦ(y)) with a margin ranking loss over sampled negatives, SGD."""

    name: str = "supervised-embeddings"
    seed: int = 0
    embedding_size: int = 32
    lr: float = 0.05
    epochs: int = 8
    patience: int = 2
    batch_size: int | None = None  # None: 32, or the device profile's batch on a GPU (_torchutil.training_profile)
    device_profile: bool | None = None  # None: on when the device is not the CPU; true: on any device; false: never
    profile_settings: dict | None = None  # grid / epochs / patience used instead when the device profile is on
    deterministic: bool | None = None  # fixed-order kernels; None: on (_torchutil.deterministic_on)
    negatives: int = 100
    margin: float = 1.0
    tied: bool = False
    input_scale: str = "sqrt"  # "sqrt": the input bag divided by sqrt(1 + lines); "none": the plain sum
    unseen: str = "drop"  # words never seen in training: "drop" them, or give each a fixed "random" untrained vector
    memory_size: int = 250  # input = up to this many earlier lines + the last one (T6 dialogs reach 500 lines)
    clip: float = 5.0  # gradient-norm clipping keeps SGD on summed hinge losses from diverging
    optimizer: str = "sgd"
    max_tokens: int = 40
    grid: tuple | list | None = field(default=GRID)
    kb: str | None = None
    progress: bool | None = None
    load_from: str | None = None  # directory written by save(): fit() loads it instead of training
    match = False
    needs_training = True
    HYPERPARAMETERS = (
        "embedding_size", "lr", "epochs", "patience", "batch_size", "negatives", "margin", "tied", "memory_size",
        "clip", "optimizer", "input_scale", "unseen",
    )

    def __post_init__(self):
        require_torch()
        self._init_common()

    def make_module(self, config: dict, n_vocab: int):
        torch = require_torch()
        if config.get("input_scale", "sqrt") not in ("sqrt", "none"):
            raise UsageError(f"supervised-embeddings: input_scale must be sqrt or none, got {config['input_scale']!r}")
        if config.get("unseen", "drop") not in ("drop", "random"):
            raise UsageError(f"supervised-embeddings: unseen must be drop or random, got {config['unseen']!r}")
        return _net(torch, n_vocab, config["embedding_size"], config["tied"], config["negatives"], config["margin"],
                    config.get("input_scale", "sqrt"))
