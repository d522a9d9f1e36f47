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

Devices. The model, the utterance table, the candidates and each split's match pairs live on the device (a GPU when
torch sees one). Per batch the host works out everything that decides a shape (the distinct rows and their inverse,
the trimmed width, which match pairs belong to the batch) from numpy and sends the integers in one non-blocking
copy; the device gathers and scatters. Nothing is read back inside an epoch on a GPU (loss sum and finiteness stay
device tensors), so the host can queue batches ahead. The CPU path computes exactly what it did before this split
(same values, same order of float operations), so the stored CPU numbers are reproduced bit for bit (at one torch
thread, their setting). A GPU's default kernels, and the CPU's with several threads, do not fix their order of
accumulation; fixed-order ones (:func:`deterministic_algorithms`, the default on every device;
``deterministic=false`` opts out) make such runs repeatable bit for bit too.

Batches. On the CPU a model trains at batch 32 (the stored numbers' setting); on another device, unless
``batch_size`` is given, at the device profile's batch of 256 (SGD's learning rate × 8, Adam's as it is:
:func:`training_profile`), since a batch-32 step on a GPU is bound by kernel launches. ``describe()`` (and so every
``reproduce babi`` record) carries ``training_profile``: which batch and learning rate were used, and why.
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


CUBLAS_WORKSPACE = ":4096:8"
"""The cuBLAS workspace setting torch's deterministic mode asks for (CUDA >= 10.2): with it cuBLAS gives the same
bits run to run. cuBLAS reads it when a process first uses it, so it must be in the environment before that."""


def deterministic_on(setting: bool | None, device) -> bool:
    """Whether a model's ``deterministic`` setting means fixed-order kernels on ``device``: ``true`` / ``false`` as
    given; unset (the default) means on, on every device, because the same seed must give the same bits and torch's
    default kernels do not: on the CPU with more than one torch thread (``benchmarks/bench_determinism.py``: bAbI
    T4, 2 threads, 3 runs gave 3 different sets of weights for both supervised embeddings and memn2n) and on a GPU
    (``benchmarks/gpu_table2.py`` on one NVIDIA H200: two default runs of memn2n-match T4 gave scores up to 5.3e-05
    apart). What they cost was measured on both: on the CPU nothing measurable (at 1 thread the same bits in
    0.87-1.17x the seconds; at 2 threads 0.6-2.0x, where the noise of a shared 2-core machine swamps the kernels);
    on the H200 1.10x the training seconds for memn2n-match T4 and 1.06x for supervised embeddings T4, and both
    gave byte-identical weights and scores run to run (``submissions/baselines/babi-neural-gpu.md``).
    ``deterministic=false`` opts out."""
    return True if setting is None else bool(setting)


@contextmanager
def deterministic_algorithms(torch, device, on: bool | None):
    """Yields the record of what fixed-order kernels did on ``device`` (``{}`` when off; ``on``: a model's
    ``deterministic`` setting, see :func:`deterministic_on`; ``requested`` in the record says whether it was
    ``deterministic=true`` rather than the default).

    Some default kernels accumulate in an order that is not fixed, so two runs with the same seed can differ in the
    last bits, and over thousands of steps in the dev-selected epoch: on a GPU (the backward passes of embeddings,
    gathers and indexing; cuBLAS with its default workspace; ``babi-neural-gpu.md``), and on the CPU with more than
    one torch thread (the indexing backward's accumulation; measured on bAbI T4 at 2 threads: 3 runs, 2 or 3
    different sets of trained weights; at 1 thread, the stored numbers' setting, runs repeat bit for bit). When on:
    ``torch.use_deterministic_algorithms(True, warn_only=True)`` inside the block, then restored, and on CUDA
    ``CUBLAS_WORKSPACE_CONFIG`` = :data:`CUBLAS_WORKSPACE` (unless already set; cuBLAS reads it at its first use in
    a process, so enter the block before the device's first matrix product). At 1 CPU thread the fixed-order kernels
    give the bits of torch's default ones (the stored CPU rows, made with those, stay: a test checks it). An
    operation without a deterministic kernel warns instead of failing (a long run is not lost to it): those warnings
    are collected into ``nondeterministic_ops`` (their first sentences, each once), others are shown as usual.
    """
    import warnings

    if not deterministic_on(on, device):
        yield {}
        return
    record: dict = {"requested": on is True, "device": device.type}
    if device.type == "cpu":
        record["torch_threads"] = torch.get_num_threads()
    if device.type == "cuda":
        record["cuda_started_before"] = bool(torch.cuda.is_initialized())
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", CUBLAS_WORKSPACE)
        record["cublas_workspace_config"] = os.environ["CUBLAS_WORKSPACE_CONFIG"]
    before = (torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled())
    torch.use_deterministic_algorithms(True, warn_only=True)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield record
    finally:
        torch.use_deterministic_algorithms(before[0], warn_only=before[1])
    ops: list[str] = []
    for w in caught:
        text = str(w.message)
        if "deterministic" in text:
            first = text.split(", but ")[0].split(". ")[0].strip()
            if first not in ops:
                ops.append(first)
        else:
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    record["nondeterministic_ops"] = ops


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
    """Token → id (0 = padding); unknown tokens are dropped when encoding.

    :func:`build_vocab` fills it from the training items: their contexts, answers and candidate lists. On bAbI a
    training item's candidates are the task's whole candidate file, so the vocabulary also holds words that occur
    only in test answers (OOV entities included), though never words of the test dialogs' contexts."""

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
        self._containing_array: dict[str, np.ndarray] = {}
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
        n_types = len(ENTITY_TYPES)
        codes = []  # candidate * 7 + type, so np.unique gives the pairs sorted and distinct (3x faster than a set of tuples)
        for w in words:
            t = lexicon.types.get(w, local.get(w))
            if t is None:
                continue
            cands = self._containing_array.get(w)
            if cands is None:
                cands = self._containing_array[w] = np.array(self.containing.get(w, ()), dtype=np.int64)
            if len(cands):
                codes.append(cands * n_types + t)
        if not codes:
            return np.zeros((0, 2), dtype=np.int64)
        u = np.unique(np.concatenate(codes))
        return np.stack([u // n_types, u % n_types], axis=1)


def unique_inverse(ids: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(ids, return_inverse=True)`` (the sorted distinct ids and each id's position among them) for 1-D
    ids in ``[0, size)``, without a sort: a presence mask and its running count, O(len(ids) + size). At batch 256
    the sort of a batch's 64k memory ids was most of the host's time per step (``benchmarks/bench_batch_profile.py``)."""
    present = np.zeros(size, dtype=bool)
    present[ids] = True
    position = np.cumsum(present) - 1
    return np.flatnonzero(present), position[ids]


def to_device(torch, arrays: dict[str, np.ndarray], device) -> dict:
    """Host int64 arrays as tensors on ``device``, without making the host wait for the device.

    On the CPU they are wrapped as they are. Elsewhere they travel as one buffer in one non-blocking copy, from
    pinned memory on CUDA: a plain ``.to("cuda")`` of pageable memory synchronises the stream, i.e. one host round
    trip per batch, which (with ~2 ms of work per batch) was what kept the GPU idle.
    """
    if device.type == "cpu":
        return {k: torch.from_numpy(np.ascontiguousarray(v, dtype=np.int64)) for k, v in arrays.items()}
    flat = np.concatenate([np.asarray(v, dtype=np.int64).ravel() for v in arrays.values()])
    buf = torch.from_numpy(flat)
    if device.type == "cuda":
        buf = buf.pin_memory()
    on_dev = buf.to(device, non_blocking=True)
    out, o = {}, 0
    for k, v in arrays.items():
        n = int(np.size(v))
        out[k] = on_dev[o : o + n].view(np.shape(v))
        o += n
    return out


class DeviceTable:
    """An :class:`UtteranceTable`'s rows on the device, with each row's length kept on the host (a batch's trimmed
    width is then known without reading the device)."""

    def __init__(self, torch, rows: np.ndarray, device):
        self.tokens = torch.from_numpy(rows).to(device)
        self.lengths = np.count_nonzero(rows, axis=1)  # rows are left-packed: non-zero count = length
        self.device = self.tokens.device


class DeviceSplit:
    """One split's encoded items ready for batching on a device: the shared :class:`DeviceTable`, the items'
    integer arrays (host) and, with match features, every item's (candidate, type) pairs once, as one (K, 2)
    device tensor with host offsets (CSR): a batch's dense (B, C, 7) features are then one scatter on the device.
    """

    def __init__(self, torch, enc: EncodedItems, table: DeviceTable, pairs: Sequence[np.ndarray] | None = None):
        self.enc = enc
        self.table = table
        self.n = len(enc.query)
        self.pairs = None
        if pairs is not None:
            self.offsets = np.zeros(len(pairs) + 1, dtype=np.int64)
            np.cumsum([len(p) for p in pairs], out=self.offsets[1:])
            flat = np.concatenate([np.asarray(p, dtype=np.int64).reshape(-1, 2) for p in pairs] or
                                  [np.zeros((0, 2), dtype=np.int64)])
            self.pairs = torch.from_numpy(flat).to(table.device)

    def batch(self, torch, idx: np.ndarray, n_candidates: int):
        """(batch, answer, match) for items ``idx``: the batch's distinct utterance rows (trimmed to their longest)
        and indexes into them, the gold positions, and the (B, C, 7) match features (None without them).

        ``rows`` (U, L) token ids, ``query`` (B,) and ``memory`` (B, M) row positions, ``speaker`` / ``age`` (B, M),
        ``answer_cpu`` the gold positions on the host (negative sampling draws there). Embedding the U distinct rows
        once avoids a (B, M, L, d) tensor (memories repeat across a batch). Everything that decides a shape is
        computed on the host (``np.unique`` gives torch.unique's sorted set and inverse), so the device never has
        to report back.
        """
        enc, b = self.enc, len(idx)
        ids = np.concatenate([enc.query[idx], enc.memory[idx].ravel()])
        uniq, inv = unique_inverse(ids, len(self.table.lengths))
        width = max(1, int(self.table.lengths[uniq].max()))
        host = {"uniq": uniq, "query": inv[:b], "memory": inv[b:].reshape(b, -1), "speaker": enc.speaker[idx],
                "age": enc.age[idx], "answer": enc.answer[idx]}
        if self.pairs is not None:
            start, count = self.offsets[idx], self.offsets[idx + 1] - self.offsets[idx]
            ends = np.cumsum(count)
            host["pair"] = np.repeat(start - (ends - count), count) + np.arange(int(ends[-1]) if b else 0)
            host["pair_row"] = np.repeat(np.arange(b), count)
        t = to_device(torch, host, self.table.device)
        batch = {
            "rows": self.table.tokens[t["uniq"]][:, :width].contiguous(),
            "query": t["query"],
            "memory": t["memory"],
            "speaker": t["speaker"],
            "age": t["age"],
            "answer_cpu": torch.from_numpy(np.ascontiguousarray(enc.answer[idx])),
        }
        match = None
        if self.pairs is not None:
            match = torch.zeros((b, n_candidates, len(ENTITY_TYPES)), device=self.table.device)
            p = self.pairs[t["pair"]]
            match[t["pair_row"], p[:, 0], p[:, 1]] = 1.0
        return batch, t["answer"], match


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
    """Tokens of the training contexts, answers and ``candidates`` (:func:`training_candidates`: every candidate
    the training items list, which on bAbI is the whole candidate file), sorted (deterministic ids)."""
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


def eval_rows(device) -> int:
    """Items per evaluation batch: 512 on the CPU (as the stored CPU numbers were made), 2,048 on an accelerator,
    where a batch is one launch sequence whatever its size (2,048 × 4,212 candidates × 7 match features is 240 MB).
    Training batches are set by :func:`training_profile`."""
    return 512 if device.type == "cpu" else 2048


BASE_BATCH = 32
"""The training batch of the stored CPU numbers: every default and grid learning rate is the one for this batch."""

PROFILE_BATCH = 256
"""The device profile's training batch (see :func:`training_profile`)."""


def profile_on(config: dict, device, forced: bool | None = None) -> bool:
    """Whether :func:`training_profile` applies the device profile to ``config`` (see there)."""
    if config.get("batch_size") is not None:
        return False
    return forced if forced is not None else device.type != "cpu"


PROFILE_SETTINGS_KEYS = ("grid", "epochs", "patience")
"""What a model's ``profile_settings`` may replace when the device profile is on."""


def training_profile(config: dict, device, forced: bool | None = None) -> tuple[dict, dict]:
    """(the configuration a training run uses, the record of how its batch size and learning rate were chosen).

    - ``config["batch_size"]`` set (not None): it is used as given, the learning rate unchanged (``explicit``).
    - The device profile, when the model's device is not the CPU (``forced=None``) or always (``forced=True``;
      ``forced=False`` never): batch :data:`PROFILE_BATCH` (256); with SGD the learning rate × 8 (256 / 32, the
      linear rule; grid entries' rates too), with Adam the learning rate as it is. The epoch cap, patience and dev
      selection are unchanged, unless the model's ``profile_settings`` replace them for the profile (grid, epochs,
      patience: memn2n-match T2, whose stored 6-epoch lr 0.01 setting stalls at 93 % dev at batch 256).
    - Otherwise batch :data:`BASE_BATCH`, the learning rate unchanged (``cpu``): the stored CPU numbers' setting.

    Why. At batch 32 a training step is a few small kernels, so on a GPU its time is kernel launches and host-side
    Python, not arithmetic: measured on an H200, 2,000-4,000 examples/s per job, no faster than one CPU thread. A
    step of 256 launches the same kernels, so an epoch costs 8× fewer launches. The losses are batch means, so with
    SGD an example's share of a step is lr / B: lr × 8 keeps it (the linear scaling rule). Adam's step is lr times a
    ratio of gradient moments, whatever the gradients' size; a larger batch only makes it less noisy, so lr stays.
    The square-root rule (lr × √8 ≈ 2.83) was tried on the CPU and made MemN2N unstable: memn2n T5's dev accuracy
    fell from 88 % to 79 % between epochs (hops 3: from 81 % to 55 %) and its test row missed the paper by 7.5
    points, while lr as it is reached 97.4 % (paper 96.1); memn2n-match T2 swung 92 → 84 % dev. Why not 512: with
    Adam memn2n-match T4 (3,507 training items: 7 steps per epoch) swung between 57 % and 82 % dev and missed its
    exact 100 (99.63), where 256 reached 100 % dev in 3 epochs. The CPU validation of every row is in
    ``submissions/baselines/babi-neural-gpu.md``.
    """
    cfg = dict(config)
    if cfg.get("batch_size") is not None:
        return cfg, {"name": "explicit", "batch_size": cfg["batch_size"], "lr": cfg["lr"], "lr_scale": 1.0}
    if not profile_on(cfg, device, forced):
        cfg["batch_size"] = BASE_BATCH
        return cfg, {"name": "cpu", "batch_size": BASE_BATCH, "lr": cfg["lr"], "lr_scale": 1.0}
    k = PROFILE_BATCH / BASE_BATCH
    rule = "linear" if cfg.get("optimizer", "adam") == "sgd" else "none"
    scale = k if rule == "linear" else 1.0
    cfg["batch_size"] = PROFILE_BATCH
    cfg["lr"] = cfg["lr"] * scale
    return cfg, {"name": "device", "why": "forced (device_profile=true)" if forced else f"device {device.type}",
                 "batch_size": PROFILE_BATCH, "base_batch_size": BASE_BATCH, "lr_rule": rule, "lr_scale": scale,
                 "lr": cfg["lr"], "base_lr": config["lr"]}


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
        # fixed-order kernels (the default on every device; deterministic=false opts out): set up before the first
        # tensor reaches the device, recorded in describe()
        with deterministic_algorithms(torch, device, getattr(self, "deterministic", None)) as determinism:
            self._train(torch, device, train, dev)
        if determinism:
            self.train_stats["deterministic"] = determinism
        return self

    def _train(self, torch, device, train: Sequence[DialogItem], dev: Sequence[DialogItem] | None) -> None:
        """``fit`` on ``device``: encode, train every grid configuration, keep the dev-selected (configuration, epoch)."""
        import copy
        import time

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
        dtable = DeviceTable(torch, table.array(), device)
        cand_t = torch.from_numpy(cset.tokens).to(device)
        tr = DeviceSplit(torch, enc_tr, dtable, [cset.match_pairs(it, self.lexicon) for it in train] if self.match else None)
        dv = (DeviceSplit(torch, enc_dev, dtable, [cset.match_pairs(it, self.lexicon) for it in dev] if self.match else None)
              if dev else None)

        base = self.current_config()
        grid_setting = self.grid
        # Settings a (model, task) needs only at the profile's batch (e.g. memn2n-match T2: a smaller learning rate
        # and more epochs, as its batch-32 run needs neither); the CPU path never sees them.
        extra = getattr(self, "profile_settings", None) or {}
        unknown = sorted(set(extra) - set(PROFILE_SETTINGS_KEYS)) if isinstance(extra, dict) else ["(not an object)"]
        if unknown:
            raise UsageError(f"baseline {self.name!r}: profile_settings takes {', '.join(PROFILE_SETTINGS_KEYS)}; "
                             f"not {', '.join(unknown)}")
        if extra and profile_on(base, device, getattr(self, "device_profile", None)):
            grid_setting = extra.get("grid", grid_setting)
            base.update({k: extra[k] for k in ("epochs", "patience") if k in extra})
        grid = list(grid_setting) if (grid_setting and dev) else [{}]
        best = None  # (key, config, state, epoch, acc, profile)
        self.selection = []
        t_start = time.perf_counter()
        examples = 0
        for gi, overrides in enumerate(grid):
            config, profile = training_profile({**base, **overrides}, device, getattr(self, "device_profile", None))
            torch.manual_seed(self.seed)
            gen = torch.Generator().manual_seed(self.seed)
            module = self.make_module(config, len(self.vocab)).to(device)
            opt = self.make_optimizer(torch, module, config)
            rng = np.random.default_rng(self.seed)
            best_cfg, since = -1.0, 0
            label = f"{self.name} " + (" ".join(f"{k}={v}" for k, v in overrides.items()) or "training")
            with epoch_progress(config["epochs"], label, self.progress) as advance:
                for epoch in range(1, config["epochs"] + 1):
                    total, finite, seen = self._train_epoch(torch, module, opt, config, tr, rng.permutation(tr.n),
                                                            cand_t, gen)
                    examples += seen
                    if not bool(finite):  # too large a learning rate: this configuration is dropped
                        self.selection.append({"config": overrides, "epoch": epoch, "diverged": True})
                        advance("diverged")
                        break
                    total = float(total)
                    acc = (int(self._dev_hits(torch, module, dv, cand_t, len(cands))) / max(1, dv.n)
                           if dv is not None else None)
                    self.selection.append(
                        {"config": overrides, "epoch": epoch, "train_loss": round(total / len(train), 5),
                         "dev_per_response": None if acc is None else round(acc, 5)}
                    )
                    advance(f"loss {total / len(train):.4f}" + ("" if acc is None else f" dev {100 * acc:.1f}%"))
                    score = -1.0 if acc is None else acc
                    key = (score, -gi, -epoch if acc is not None else epoch)
                    if best is None or key > best[0]:
                        best = (key, config, copy.deepcopy(module.state_dict()), epoch, acc, profile)
                    if acc is not None:
                        if acc > best_cfg:
                            best_cfg, since = acc, 0
                        else:
                            since += 1
                        if acc >= 1.0 or since >= config["patience"]:
                            break
        if best is None:
            raise UsageError(f"baseline {self.name!r}: training diverged in every configuration (lower lr)")
        _, config, state, epoch, acc, profile = best
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
            "training_profile": profile,
        }

    def make_optimizer(self, torch, module, config):
        # On CUDA the fused update is one kernel for all parameters instead of a few per parameter (training a
        # model this small is bound by kernel launches); the CPU keeps torch's default implementation.
        cls = torch.optim.SGD if config.get("optimizer", "adam") == "sgd" else torch.optim.Adam
        if next(module.parameters()).device.type == "cuda":
            try:
                return cls(module.parameters(), lr=config["lr"], fused=True)
            except (RuntimeError, TypeError, ValueError):  # a torch without the fused kernel: the default one
                pass
        return cls(module.parameters(), lr=config["lr"])

    def _train_epoch(self, torch, module, opt, config: dict, split: DeviceSplit, order: np.ndarray, cand_t, gen):
        """One epoch of batches of ``order`` -> (loss sum, all losses finite, examples trained on).

        On the CPU the loss is checked after each batch and the epoch stops at the first non-finite one (the
        behaviour the stored CPU numbers were made with). On another device nothing is read back during the epoch:
        the loss sum and the finiteness flag stay device tensors, read once by the caller, and a configuration that
        diverged is dropped at the end of its epoch instead of mid-way (same selection, some wasted steps).
        """
        on_host = split.table.device.type == "cpu"
        module.train()
        total = torch.zeros((), dtype=torch.float64, device=split.table.device)
        finite = torch.ones((), dtype=torch.bool, device=split.table.device)
        seen = 0
        for s in range(0, len(order), config["batch_size"]):
            idx = np.sort(order[s : s + config["batch_size"]])
            batch, answer, match = split.batch(torch, idx, cand_t.shape[0])
            opt.zero_grad()
            loss = module.loss(batch, cand_t, match, answer, gen)
            if on_host:
                if not bool(torch.isfinite(loss)):
                    return total, False, seen
            else:
                finite &= torch.isfinite(loss)
            loss.backward()
            if config.get("clip"):
                torch.nn.utils.clip_grad_norm_(module.parameters(), config["clip"])
            opt.step()
            total += loss.detach().double() * len(idx)  # float64, as the Python float sum it replaces
            seen += len(idx)
        return total, finite, seen

    def _dev_hits(self, torch, module, split: DeviceSplit, cand_t, n_cands: int):
        """Number of ``split`` items whose gold scores highest, as a device tensor (read once per epoch)."""
        module.eval()
        hits = torch.zeros((), dtype=torch.long, device=split.table.device)
        rows = eval_rows(split.table.device)
        with torch.no_grad():
            for s in range(0, split.n, rows):
                batch, answer, match = split.batch(torch, np.arange(s, min(s + rows, split.n)), n_cands)
                sc = torch.nan_to_num(module.scores(batch, cand_t, match), nan=-float("inf"))
                hits += (sc.argmax(dim=1) == answer).sum()
        module.train()
        return hits

    # -- scoring -----------------------------------------------------------------------------------------------
    def score_group(self, candidates: list[Candidate], items: Sequence[DialogItem]) -> np.ndarray:
        if self.module is None:
            raise UsageError(f"baseline {self.name!r} must be trained (fit) or loaded before ranking")
        torch = require_torch()
        device = getattr(self, "_device", torch.device("cpu"))
        if getattr(self, "unseen", "drop") == "random":
            self._add_unseen_words(torch, candidates, items)
        cs = self._candidate_set(candidates)
        table = UtteranceTable(self.vocab, self.max_tokens)
        enc = EncodedItems(items, table, self.memory_size)
        split = DeviceSplit(torch, enc, DeviceTable(torch, table.array(), device),
                            [cs.match_pairs(it, self.lexicon) for it in items] if self.match else None)
        cand_t = torch.from_numpy(cs.tokens).to(device)
        out = np.empty((len(items), len(candidates)), dtype=np.float64)
        rows = 256 if device.type == "cpu" else eval_rows(device)
        with torch.no_grad(), deterministic_algorithms(torch, device, getattr(self, "deterministic", None)):
            for s in range(0, len(items), rows):
                idx = np.arange(s, min(s + rows, len(items)))
                batch, _, match = split.batch(torch, idx, len(candidates))
                out[idx] = self.module.scores(batch, cand_t, match).double().cpu().numpy()
        # NaN would compare unequal to everything and so rank as if best; make it the worst score instead
        return np.nan_to_num(out, nan=-np.inf)

    def _add_unseen_words(self, torch, candidates: Sequence[Candidate], items: Sequence[DialogItem]) -> None:
        """``unseen="random"``: add the words of ``candidates`` / ``items`` never seen in training to the vocabulary,
        each with a fixed random vector (normal, std 0.1 like the initial embeddings; seeded by the model seed and the
        word, so a word's vector does not depend on what was scored before) in every vocabulary-sized embedding."""
        import zlib

        words = {w for c in candidates for w in tokens_of(c.utterance)}
        words.update(w for it in items for u in it.utterances for w in tokens_of(u))
        new = sorted(w for w in words if w not in self.vocab.stoi)
        if not new:
            return
        n = len(self.vocab)
        tables = {id(m): m for m in self.module.modules()
                  if isinstance(m, torch.nn.Embedding) and m.num_embeddings == n}.values()
        for emb in tables:
            w = emb.weight
            extra = torch.stack([
                torch.randn(w.shape[1], generator=torch.Generator().manual_seed(self.seed * 1_000_003 + zlib.crc32(t.encode())))
                for t in new]) * 0.1
            emb.weight = torch.nn.Parameter(torch.cat([w.detach(), extra.to(w.device, w.dtype)]), requires_grad=False)
            emb.num_embeddings = n + len(new)
        for t in new:
            self.vocab.add(t)
        self._cand_cache = {}  # candidate lists encoded with the smaller vocabulary

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
            **({"profile_settings": self.profile_settings} if getattr(self, "profile_settings", None) else {}),
            "dev_selection": self.selection,
            "match_features": list(ENTITY_TYPES) if self.match else [],
            **self.train_stats,
        }
