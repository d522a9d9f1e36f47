"""Shared machinery of the torch baselines (supervised embeddings, MemN2N): torch import with an install hint,
seeding and threads, the vocabulary, the utterance table that items and candidates are encoded into, the KB
entity lexicon behind the match features, per-epoch progress, and save/load.

Encoding. Every distinct utterance (context line or candidate) is stored once as a row of token ids in an
utterance table; an item is then a handful of integers (query row, memory rows, speaker and age of each memory),
so a batch is gathered with one tensor index instead of Python padding. bAbI items of one conversation share
almost all their utterances, which keeps the table small (T5: ~30k rows for 18k items × up to 95 lines).

Speakers. A context line ``"<name> R_<attr> <value>"`` (3 tokens, middle one ``r_*``) is a KB fact; the other
lines alternate user, bot, user, … starting with the user (bAbI and DSTC6 both begin with a user turn).

Match features (Bordes & Weston 2017, sec. 4.2): for each candidate and each of the seven KB entity types
(cuisine, location, price, party size, rating, phone, address) one binary feature, on when one of the candidate's
words is an entity of that type that also occurs earlier in the conversation. Entity types come from (1) a KB file
(``dialog-babi-kb-all.txt``: ``1 <name> R_<attr>\\t<value>``), (2) the fact lines of the training dialogs and of
the item itself (what an OOV test dialog tells about its own restaurants), (3) the api_call slots: a word found in
the i-th argument of api_call candidates gets the type that known entities in that argument have (so the OOV
cuisines and locations of the candidate file are typed without a KB file).
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from dialeval.baselines.base import Baseline
from dialeval.baselines.data import ScoringMixin
from dialeval.core.errors import UsageError
from dialeval.formats.dstc6 import Candidate, DialogItem

INSTALL_HINT = "pip install 'dialeval[neural]' -c constraints.txt"

ENTITY_TYPES = ("cuisine", "location", "price", "number", "rating", "phone", "address")
"""The seven KB attributes of the match features (``number`` = party size), in feature order."""
_ATTR_TYPE = {f"r_{t}": i for i, t in enumerate(ENTITY_TYPES)}

SPEAKERS = ("<pad>", "user", "bot", "kb")
PAD = 0  # token id 0 is padding everywhere (embeddings use padding_idx=0, so it adds nothing)


def require_torch():
    """Import torch or raise the UsageError (exit 2) that says how to install it."""
    try:
        import torch
    except ImportError:
        raise UsageError(f"this baseline needs torch, which is not installed: {INSTALL_HINT}") from None
    return torch


def torch_threads() -> int:
    """Threads for torch: ``$DIALEVAL_TORCH_THREADS`` when set, else the CPU count.

    The override exists because intra-op threads only pay off on idle cores: on a 2-core machine already running
    other jobs, 2 threads measured 20x slower per batch than 1 (spinning threads fight for the cores).
    """
    env = os.environ.get("DIALEVAL_TORCH_THREADS", "").strip()
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            raise UsageError(f"DIALEVAL_TORCH_THREADS must be a number, got {env!r}") from None
    return max(1, os.cpu_count() or 1)


def setup_torch(seed: int):
    """Seed torch and numpy, set the thread count, pick the device (a GPU when present). Returns (torch, device)."""
    torch = require_torch()
    torch.manual_seed(seed)
    np.random.seed(seed % (2**32))
    torch.set_num_threads(torch_threads())
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch, device


def tokens_of(text: str) -> list[str]:
    """Lower-cased whitespace tokens (bAbI and DSTC6 text is already tokenised)."""
    return text.lower().split()


def is_fact(text: str) -> bool:
    t = text.split()
    return len(t) == 3 and t[1].lower().startswith("r_")


def speakers(utterances: Sequence[str]) -> list[int]:
    """Speaker index (SPEAKERS) per context line: facts are ``kb``; other lines alternate user / bot."""
    out: list[int] = []
    turn = 0
    for u in utterances:
        if is_fact(u):
            out.append(3)
        else:
            out.append(1 if turn % 2 == 0 else 2)
            turn += 1
    return out


class Vocab:
    """Token → id (0 = padding). Built from training text only; unknown tokens are dropped when encoding."""

    def __init__(self, tokens: Iterable[str] = ()):
        self.itos: list[str] = ["<pad>"]
        self.stoi: dict[str, int] = {"<pad>": 0}
        for t in tokens:
            self.add(t)

    def add(self, token: str) -> int:
        i = self.stoi.get(token)
        if i is None:
            i = self.stoi[token] = len(self.itos)
            self.itos.append(token)
        return i

    def encode(self, tokens: Iterable[str]) -> list[int]:
        return [i for i in (self.stoi.get(t) for t in tokens) if i is not None]

    def __len__(self) -> int:
        return len(self.itos)


class UtteranceTable:
    """Distinct utterances as padded rows of token ids (row 0 = the empty utterance)."""

    def __init__(self, vocab: Vocab, max_tokens: int = 40):
        self.vocab = vocab
        self.max_tokens = max_tokens
        self.rows: list[list[int]] = [[]]
        self.index: dict[str, int] = {"": 0}

    def row(self, text: str) -> int:
        r = self.index.get(text)
        if r is None:
            r = self.index[text] = len(self.rows)
            self.rows.append(self.vocab.encode(tokens_of(text))[: self.max_tokens])
        return r

    def array(self) -> np.ndarray:
        width = max(1, max(len(r) for r in self.rows))
        out = np.zeros((len(self.rows), width), dtype=np.int64)
        for i, r in enumerate(self.rows):
            out[i, : len(r)] = r
        return out


class EncodedItems:
    """Items as integer arrays over an utterance table.

    ``query[n]``: row of the last utterance; ``memory[n, j]``: rows of the previous ``memory_size`` utterances
    (most recent last, 0-padded on the left), ``speaker`` / ``age`` the same shape (age 1 = the line just before
    the query; 0 = padding), ``answer[n]``: position of the gold among the training candidates (-1 if none).
    """

    def __init__(self, items: Sequence[DialogItem], table: UtteranceTable, memory_size: int,
                 answer_index: dict[str, int] | None = None):
        n = len(items)
        self.query = np.zeros(n, dtype=np.int64)
        self.memory = np.zeros((n, memory_size), dtype=np.int64)
        self.speaker = np.zeros((n, memory_size), dtype=np.int64)
        self.age = np.zeros((n, memory_size), dtype=np.int64)
        self.answer = np.full(n, -1, dtype=np.int64)
        for i, it in enumerate(items):
            utt = it.utterances
            if utt:
                self.query[i] = table.row(utt[-1])
            ctx = utt[:-1]
            spk = speakers(utt)[:-1]
            keep = ctx[-memory_size:] if memory_size else []
            k = len(keep)
            if k:
                self.memory[i, memory_size - k :] = [table.row(u) for u in keep]
                self.speaker[i, memory_size - k :] = spk[-k:]
                self.age[i, memory_size - k :] = np.arange(k, 0, -1)
            if answer_index is not None and it.answer is not None:
                self.answer[i] = answer_index.get(it.answer.utterance, -1)


# ---------------------------------------------------------------------------------------------------------------
# KB lexicon and match features


class Lexicon:
    """Entity word → type index (ENTITY_TYPES)."""

    def __init__(self):
        self.types: dict[str, int] = {}

    def add_fact(self, text: str) -> None:
        t = text.lower().split()
        if len(t) == 3 and t[1] in _ATTR_TYPE:
            self.types.setdefault(t[2], _ATTR_TYPE[t[1]])

    def add_kb_file(self, path: str | Path) -> None:
        """``1 <name> R_<attr>\\t<value>`` lines (the bAbI KB files)."""
        try:
            with open(path, encoding="utf-8") as f:
                for line in f:
                    parts = line.replace("\t", " ").split()
                    if len(parts) == 4:
                        self.add_fact(" ".join(parts[1:]))
        except OSError as e:
            raise UsageError(f"cannot read the KB file {path}: {e.strerror or e}") from None

    def add_api_slots(self, utterances: Iterable[str]) -> None:
        """Type the arguments of api_call utterances by the majority known type of their slot position."""
        calls = [u.lower().split()[1:] for u in utterances if u.lower().startswith("api_call ")]
        by_pos: dict[int, Counter] = {}
        for args in calls:
            for p, w in enumerate(args):
                t = self.types.get(w)
                if t is not None:
                    by_pos.setdefault(p, Counter())[t] += 1
        slot = {p: c.most_common(1)[0][0] for p, c in by_pos.items()}
        for args in calls:
            for p, w in enumerate(args):
                if p in slot and not w.startswith("r_"):
                    self.types.setdefault(w, slot[p])

    def to_json(self) -> dict:
        return {w: ENTITY_TYPES[t] for w, t in sorted(self.types.items())}

    @classmethod
    def from_json(cls, d: dict) -> Lexicon:
        lex = cls()
        lex.types = {w: ENTITY_TYPES.index(t) for w, t in d.items()}
        return lex


class CandidateSet:
    """A candidate list encoded once: padded token ids (C, L) and, per word, the candidates containing it."""

    def __init__(self, candidates: Sequence[Candidate], vocab: Vocab, max_tokens: int = 40):
        self.candidates = candidates
        self.texts = [c.utterance for c in candidates]
        rows = [vocab.encode(tokens_of(t))[:max_tokens] for t in self.texts]
        width = max(1, max((len(r) for r in rows), default=1))  # trimmed: no all-padding columns
        self.tokens = np.zeros((len(rows), width), dtype=np.int64)
        for i, r in enumerate(rows):
            self.tokens[i, : len(r)] = r
        self.containing: dict[str, list[int]] = {}
        for i, t in enumerate(self.texts):
            for w in set(tokens_of(t)):
                self.containing.setdefault(w, []).append(i)

    def match_pairs(self, item: DialogItem, lexicon: Lexicon) -> np.ndarray:
        """(k, 2) array of (candidate position, entity type) for the item's match features."""
        local: dict[str, int] = {}
        words: set[str] = set()
        for u in item.utterances:
            toks = u.lower().split()
            words.update(toks)
            if len(toks) == 3 and toks[1] in _ATTR_TYPE:
                local.setdefault(toks[2], _ATTR_TYPE[toks[1]])
        pairs: set[tuple[int, int]] = set()
        for w in words:
            t = lexicon.types.get(w, local.get(w))
            if t is None:
                continue
            for c in self.containing.get(w, ()):
                pairs.add((c, t))
        if not pairs:
            return np.zeros((0, 2), dtype=np.int64)
        return np.array(sorted(pairs), dtype=np.int64)


def match_tensor(torch, pairs: Sequence[np.ndarray], n_candidates: int, device):
    """Dense (B, C, 7) float tensor from per-item (candidate, type) pairs."""
    out = torch.zeros((len(pairs), n_candidates, len(ENTITY_TYPES)), device=device)
    rows = [np.full(len(p), b, dtype=np.int64) for b, p in enumerate(pairs)]
    if any(len(p) for p in pairs):
        b = torch.from_numpy(np.concatenate(rows)).to(device)
        cp = torch.from_numpy(np.concatenate([p for p in pairs if len(p)])).to(device)
        out[b, cp[:, 0], cp[:, 1]] = 1.0
    return out


def training_candidates(train: Sequence[DialogItem]) -> list[Candidate]:
    """The softmax / negative-sampling set: every distinct candidate text of the training items (+ answers)."""
    seen: dict[str, Candidate] = {}
    for group in {id(it.candidates): it.candidates for it in train}.values():
        for c in group:
            seen.setdefault(c.utterance, c)
    for it in train:
        if it.answer is not None:
            seen.setdefault(it.answer.utterance, it.answer)
    return list(seen.values())


def build_vocab(train: Sequence[DialogItem], candidates: Sequence[Candidate]) -> Vocab:
    """Tokens of the training contexts, answers and training candidates, sorted (deterministic ids)."""
    toks: set[str] = set()
    for it in train:
        for u in it.utterances:
            toks.update(tokens_of(u))
        if it.answer is not None:
            toks.update(tokens_of(it.answer.utterance))
    for c in candidates:
        toks.update(tokens_of(c.utterance))
    return Vocab(sorted(toks))


# ---------------------------------------------------------------------------------------------------------------
# Progress and persistence


@contextmanager
def epoch_progress(total: int, description: str, enabled: bool | None = None):
    """Yields ``advance(text)``: a rich progress bar on stderr when stderr is a terminal, silent otherwise."""
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        yield lambda text="": None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        TextColumn("{task.fields[info]}"), console=Console(stderr=True), transient=False,
    ) as prog:
        task = prog.add_task(description, total=total, info="")

        def advance(text: str = "") -> None:
            prog.update(task, advance=1, info=text)

        yield advance


def save_model(directory: str | Path, torch, module, meta: dict) -> None:
    """``model.pt`` (state dict) + ``vocab.json`` (vocabulary, lexicon, hyperparameters) in ``directory``."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    torch.save({k: v.detach().cpu() for k, v in module.state_dict().items()}, d / "model.pt")
    from dialeval.files.write import atomic_write_text

    atomic_write_text(d / "vocab.json", json.dumps(meta, indent=1, sort_keys=True) + "\n")


def load_meta(directory: str | Path) -> dict:
    p = Path(directory) / "vocab.json"
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise UsageError(f"cannot read the saved model's {p}: {e}") from None


def load_state(directory: str | Path, torch):
    p = Path(directory) / "model.pt"
    try:
        return torch.load(p, map_location="cpu", weights_only=True)
    except (OSError, RuntimeError) as e:
        raise UsageError(f"cannot read the saved model's {p}: {e}") from None



# ---------------------------------------------------------------------------------------------------------------
# The shared trainer: encode, train with per-epoch dev selection over a small grid, score candidate groups


class TorchRanker(ScoringMixin, Baseline):
    """Base of the torch baselines. Subclasses define ``make_module(config, n_vocab)``; the module implements
    ``scores(batch, cand_tokens, match) -> (B, C)`` and ``loss(batch, cand_tokens, match, answer, gen)``.

    ``fit`` trains every configuration of ``grid`` (hyperparameter dicts overriding the instance's fields) for up
    to ``epochs`` epochs, evaluates dev per-response accuracy after each epoch and keeps the best (configuration,
    epoch); ties go to the earlier configuration and epoch. Without dev the last epoch of the first configuration
    is kept. Training stops early when dev accuracy is 100 % or has not improved for ``patience`` epochs.
    """

    match = False
    HYPERPARAMETERS: tuple[str, ...] = ()

    def _init_common(self):
        self.module = None
        self.vocab: Vocab | None = None
        self.lexicon = Lexicon()
        self.config: dict = {}
        self.selection: list[dict] = []
        self.train_stats: dict = {}
        self._cand_cache: dict[int, tuple[Sequence[Candidate], CandidateSet]] = {}

    # -- hooks -------------------------------------------------------------------------------------------------
    def make_module(self, config: dict, n_vocab: int):
        raise NotImplementedError

    def current_config(self) -> dict:
        return {k: getattr(self, k) for k in self.HYPERPARAMETERS}

    # -- encoding ----------------------------------------------------------------------------------------------
    def _batch(self, torch, enc: EncodedItems, table, idx: np.ndarray) -> dict:
        """Gather a batch: the distinct utterance rows it uses (trimmed to their longest), and indexes into them.

        ``rows`` (U, L) token ids, ``query`` (B,) and ``memory`` (B, M) row positions, ``speaker`` / ``age`` (B, M).
        Embedding the U distinct rows once avoids a (B, M, L, d) tensor (memories repeat across a batch).
        """
        b = len(idx)
        dev = table.device  # every index is made where the table lives (a CPU index into a GPU table copies)
        ids = torch.from_numpy(np.concatenate([enc.query[idx], enc.memory[idx].ravel()])).to(dev)
        uniq, inv = torch.unique(ids, return_inverse=True)
        rows = table[uniq]
        width = max(1, int((rows != 0).sum(1).max()))
        return {
            "rows": rows[:, :width].contiguous(),
            "query": inv[:b],
            "memory": inv[b:].view(b, -1),
            "speaker": torch.from_numpy(enc.speaker[idx]).to(dev),
            "age": torch.from_numpy(enc.age[idx]).to(dev),
        }

    def _candidate_set(self, candidates: Sequence[Candidate]) -> CandidateSet:
        hit = self._cand_cache.get(id(candidates))
        if hit is not None and hit[0] is candidates:
            return hit[1]
        cs = CandidateSet(candidates, self.vocab, self.max_tokens)
        if len(candidates) >= 100:  # shared lists (bAbI) are worth keeping; DSTC6 lists are per item
            self._cand_cache[id(candidates)] = (candidates, cs)
        return cs

    def _lexicon_for(self, train: Sequence[DialogItem], cands: Sequence[Candidate]) -> Lexicon:
        lex = Lexicon()
        kb = self.kb or os.environ.get("DIALEVAL_KB")
        if kb:
            lex.add_kb_file(kb)
        for it in train:
            for u in it.utterances:
                if is_fact(u):
                    lex.add_fact(u)
        lex.add_api_slots([c.utterance for c in cands])
        return lex

    # -- training ----------------------------------------------------------------------------------------------
    def fit(self, train: Sequence[DialogItem], dev: Sequence[DialogItem] | None = None):
        import copy
        import time

        torch, device = setup_torch(self.seed)
        if getattr(self, "load_from", None):  # a saved model: rank with it, no retraining
            saved = type(self).load(self.load_from)
            for k in ("vocab", "lexicon", "config", "train_stats", "module", "_device"):
                setattr(self, k, getattr(saved, k))
            for k, v in self.config.items():
                if k != "epoch":
                    setattr(self, k, v)
            self._cand_cache = {}
            return self
        train = [it for it in train if it.answer is not None]
        if not train:
            raise UsageError(f"baseline {self.name!r} needs training items with answers")
        dev = [it for it in (dev or []) if it.answer is not None]
        cands = training_candidates(train)
        self.vocab = build_vocab(train, cands)
        self._cand_cache = {}
        if self.match:
            self.lexicon = self._lexicon_for(train, cands)
        cset = CandidateSet(cands, self.vocab, self.max_tokens)
        answer_index = {c.utterance: i for i, c in enumerate(cands)}
        table = UtteranceTable(self.vocab, self.max_tokens)
        enc_tr = EncodedItems(train, table, self.memory_size, answer_index)
        enc_dev = EncodedItems(dev, table, self.memory_size, answer_index) if dev else None
        table_t = torch.from_numpy(table.array()).to(device)
        cand_t = torch.from_numpy(cset.tokens).to(device)
        pairs_tr = [cset.match_pairs(it, self.lexicon) for it in train] if self.match else None
        pairs_dev = [cset.match_pairs(it, self.lexicon) for it in dev] if (self.match and dev) else None

        grid = list(self.grid) if (self.grid and dev) else [{}]
        base = self.current_config()
        best = None  # (dev_acc, -config_index, -epoch, config, state, epoch)
        self.selection = []
        t_start = time.perf_counter()
        examples = 0
        for gi, overrides in enumerate(grid):
            config = {**base, **overrides}
            torch.manual_seed(self.seed)
            gen = torch.Generator().manual_seed(self.seed)
            module = self.make_module(config, len(self.vocab)).to(device)
            opt = self.make_optimizer(torch, module, config)
            rng = np.random.default_rng(self.seed)
            best_cfg, since = -1.0, 0
            diverged = False
            label = f"{self.name} " + (" ".join(f"{k}={v}" for k, v in overrides.items()) or "training")
            with epoch_progress(config["epochs"], label, self.progress) as advance:
                for epoch in range(1, config["epochs"] + 1):
                    module.train()
                    order = rng.permutation(len(train))
                    total = 0.0
                    for s in range(0, len(order), config["batch_size"]):
                        idx = np.sort(order[s : s + config["batch_size"]])
                        batch = self._batch(torch, enc_tr, table_t, idx)
                        batch = {k: v.to(device) for k, v in batch.items()}
                        match = (
                            match_tensor(torch, [pairs_tr[i] for i in idx], len(cands), device) if self.match else None
                        )
                        answer = torch.from_numpy(enc_tr.answer[idx]).to(device)
                        opt.zero_grad()
                        loss = module.loss(batch, cand_t, match, answer, gen)
                        if not bool(torch.isfinite(loss)):
                            diverged = True  # too large a learning rate: this configuration is dropped
                            break
                        loss.backward()
                        if config.get("clip"):
                            torch.nn.utils.clip_grad_norm_(module.parameters(), config["clip"])
                        opt.step()
                        total += float(loss.detach()) * len(idx)
                        examples += len(idx)
                    if diverged:
                        self.selection.append({"config": overrides, "epoch": epoch, "diverged": True})
                        advance("diverged")
                        break
                    acc = (
                        self._dev_accuracy(torch, module, enc_dev, table_t, cand_t, pairs_dev, len(cands), device)
                        if enc_dev is not None
                        else None
                    )
                    self.selection.append(
                        {"config": overrides, "epoch": epoch, "train_loss": round(total / len(train), 5),
                         "dev_per_response": None if acc is None else round(acc, 5)}
                    )
                    advance(f"loss {total / len(train):.4f}" + ("" if acc is None else f" dev {100 * acc:.1f}%"))
                    score = -1.0 if acc is None else acc
                    key = (score, -gi, -epoch if acc is not None else epoch)
                    if best is None or key > best[0]:
                        best = (key, config, copy.deepcopy(module.state_dict()), epoch, acc)
                    if acc is not None:
                        if acc > best_cfg:
                            best_cfg, since = acc, 0
                        else:
                            since += 1
                        if acc >= 1.0 or since >= config["patience"]:
                            break
        if best is None:
            raise UsageError(f"baseline {self.name!r}: training diverged in every configuration (lower lr)")
        _, config, state, epoch, acc = best
        self.config = {**config, "epoch": epoch}
        for k, v in config.items():
            setattr(self, k, v)
        self.module = self.make_module(config, len(self.vocab)).to(device)
        self.module.load_state_dict(state)
        self.module.eval()
        self._device = device
        seconds = time.perf_counter() - t_start
        self.train_stats = {
            "train_items": len(train),
            "training_candidates": len(cands),
            "vocabulary": len(self.vocab),
            "examples_seen": examples,
            "train_seconds": round(seconds, 2),
            "examples_per_second": round(examples / seconds, 1) if seconds > 0 else None,
            "dev_per_response": None if acc is None else round(100 * acc, 2),
            "device": str(device),
            "torch_threads": torch_threads(),
        }
        return self

    def make_optimizer(self, torch, module, config):
        if config.get("optimizer", "adam") == "sgd":
            return torch.optim.SGD(module.parameters(), lr=config["lr"])
        return torch.optim.Adam(module.parameters(), lr=config["lr"])

    def _dev_accuracy(self, torch, module, enc, table_t, cand_t, pairs, n_cands, device) -> float:
        module.eval()
        hits = 0
        with torch.no_grad():
            for s in range(0, len(enc.query), 512):
                idx = np.arange(s, min(s + 512, len(enc.query)))
                batch = {k: v.to(device) for k, v in self._batch(torch, enc, table_t, idx).items()}
                match = match_tensor(torch, [pairs[i] for i in idx], n_cands, device) if pairs is not None else None
                sc = torch.nan_to_num(module.scores(batch, cand_t, match), nan=-float("inf"))
                hits += int((sc.argmax(dim=1).cpu().numpy() == enc.answer[idx]).sum())
        module.train()
        return hits / max(1, len(enc.query))

    # -- scoring -----------------------------------------------------------------------------------------------
    def score_group(self, candidates: list[Candidate], items: Sequence[DialogItem]) -> np.ndarray:
        if self.module is None:
            raise UsageError(f"baseline {self.name!r} must be trained (fit) or loaded before ranking")
        torch = require_torch()
        device = getattr(self, "_device", torch.device("cpu"))
        cs = self._candidate_set(candidates)
        table = UtteranceTable(self.vocab, self.max_tokens)
        enc = EncodedItems(items, table, self.memory_size)
        table_t = torch.from_numpy(table.array()).to(device)
        cand_t = torch.from_numpy(cs.tokens).to(device)
        out = np.empty((len(items), len(candidates)), dtype=np.float64)
        with torch.no_grad():
            for s in range(0, len(items), 256):
                idx = np.arange(s, min(s + 256, len(items)))
                batch = {k: v.to(device) for k, v in self._batch(torch, enc, table_t, idx).items()}
                match = (
                    match_tensor(torch, [cs.match_pairs(items[i], self.lexicon) for i in idx], len(candidates), device)
                    if self.match
                    else None
                )
                out[idx] = self.module.scores(batch, cand_t, match).double().cpu().numpy()
        # NaN would compare unequal to everything and so rank as if best; make it the worst score instead
        return np.nan_to_num(out, nan=-np.inf)

    # -- persistence -------------------------------------------------------------------------------------------
    def save(self, directory: str | Path) -> None:
        """Write ``model.pt`` (state dict) and ``vocab.json`` (vocabulary, lexicon, configuration)."""
        torch = require_torch()
        if self.module is None:
            raise UsageError(f"baseline {self.name!r} has no trained model to save")
        meta = {
            "name": self.name,
            "seed": self.seed,
            "config": self.config,
            "vocabulary": self.vocab.itos,
            "lexicon": self.lexicon.to_json(),
            "train_stats": self.train_stats,
        }
        save_model(directory, torch, self.module, meta)

    @classmethod
    def load(cls, directory: str | Path, **params):
        """A ready-to-rank instance from :meth:`save`'s files (no retraining)."""
        torch = require_torch()
        meta = load_meta(directory)
        config = {k: v for k, v in meta["config"].items() if k != "epoch"}
        obj = cls(seed=meta.get("seed", 0), **{**config, **params, "load_from": None})
        obj.vocab = Vocab(meta["vocabulary"][1:])
        obj.lexicon = Lexicon.from_json(meta.get("lexicon", {}))
        obj.config = meta["config"]
        obj.train_stats = meta.get("train_stats", {})
        obj.module = obj.make_module(config, len(obj.vocab))
        obj.module.load_state_dict(load_state(directory, torch))
        obj.module.eval()
        obj._device = torch.device("cpu")
        return obj

    def describe(self) -> dict:
        return {
            "name": self.name,
            "seed": self.seed,
            "config": self.config or self.current_config(),
            "grid": list(self.grid or []),
            "dev_selection": self.selection,
            "match_features": list(ENTITY_TYPES) if self.match else [],
            **self.train_stats,
        }
