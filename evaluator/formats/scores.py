"""Score-based submissions: pure readers and the vectorised rank-of-gold computation.

Three file forms carry scores instead of ranks (higher score = better candidate):

* JSON ``{"format": "scores", "items": {"<item id>": {"<candidate id>": <number>, ...}, ...}}``
  (:func:`decode_scores_json`);
* a ``.npy`` matrix, one row per item, one column per candidate (:func:`read_npy_matrix`);
* a headerless ``.csv`` matrix with the same layout, comma-separated numbers (:func:`read_csv_matrix`).

Readers here know nothing about benchmarks or answer keys. Bad input comes back as :class:`Fault` s (code,
JSON pointer, message): the benchmark layer, which knows the submitted file's name and each fault's severity,
turns them into :class:`~dialeval.core.problems.Problem` s. Matrix
pointers are ``/<row>/<column>``, 0-based; messages also give the 1-based CSV line.

:func:`ranks_from_scores` turns score rows into the gold rank under a tie policy (``pessimistic``,
``optimistic``, ``expected``); see :mod:`dialeval.core.ranks` for what ``gold_rank`` and ``ties`` mean.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Literal, NamedTuple

import numpy as np

from dialeval.core.errors import UsageError
from dialeval.core.problems import json_type as _json_type
from dialeval.core.problems import short

TIE_POLICIES = ("pessimistic", "optimistic", "expected")

CHUNK_ELEMENTS = 1 << 18
"""Rows are processed in chunks of about this many cells, so temporary arrays stay small whatever the
matrix size (a float64 copy of one chunk at most, never of the whole matrix)."""

LOAD_LIMIT = 1 << 30
""".npy files up to this size are read into memory; larger ones are memory-mapped and read chunk by chunk."""

MAX_FAULTS = 20
"""At most this many faults of one kind per file, then one summary line (a broken file stays readable)."""


class Fault(NamedTuple):
    """One problem found in a score file: a stable code, a JSON pointer ('' = whole file), a message."""

    code: str
    pointer: str
    message: str
    severity: str = "error"


def escape(part: object) -> str:
    """One JSON-pointer reference token (RFC 6901: ``~`` -> ``~0``, ``/`` -> ``~1``)."""
    return "/" + str(part).replace("~", "~0").replace("/", "~1")


# ---- ranks ---------------------------------------------------------------------------------------------


def _fold(above: np.ndarray, tied: np.ndarray, policy: str) -> tuple[np.ndarray, np.ndarray]:
    """(gold_rank, ties) from s = candidates strictly above the gold and t = others tied with it."""
    if policy == "pessimistic":
        return (above + tied + 1).astype(np.int32), np.zeros(above.shape, np.int32)
    if policy == "optimistic":
        return (above + 1).astype(np.int32), np.zeros(above.shape, np.int32)
    if policy == "expected":
        return (above + 1).astype(np.int32), tied.astype(np.int32)
    raise UsageError(f"unknown tie policy {policy!r} (known: {', '.join(TIE_POLICIES)})")


def ranks_from_scores(scores, gold_col, policy: str) -> tuple[np.ndarray, np.ndarray]:
    """Rank of the gold per row of a score matrix, under a tie policy. Vectorised over rows.

    ``scores``: (rows, n) numbers, higher is better (any float or integer dtype; a memory map is read
    in chunks). ``gold_col``: (rows,) column of each row's gold, or one int for every row. With s the
    number of candidates scoring strictly above the gold and t the number of *other* candidates scoring
    the same as it:

    * ``pessimistic``: gold_rank = s + t + 1, ties = 0 (the gold ranks after every tied candidate);
    * ``optimistic``: gold_rank = s + 1, ties = 0;
    * ``expected``: gold_rank = s + 1, ties = t (metrics average over the t + 1 equal positions).

    The scores must be finite (check with :func:`finite_faults` first): NaN compares unequal to itself.
    """
    n = scores.shape[1] if scores.ndim == 2 else 0
    return ranks_from_scores_nested(scores, gold_col, policy, (n,))[n]


def ranks_from_scores_nested(scores, gold_col, policy: str, sizes) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """:func:`ranks_from_scores` among the first N columns, for every N in ``sizes``, in one pass.

    ``{N: (gold_rank, ties)}``; a row whose gold column is N or beyond has rank 0 (not among them).
    The matrix is read in row chunks (:func:`count_above_tied` on each), so a memory map is never copied whole.
    """
    m = scores
    if m.ndim != 2:
        raise ValueError("scores must be a 2-D matrix")
    rows, n = m.shape
    sizes = sorted({int(x) for x in sizes})
    if any(not 1 <= x <= n for x in sizes):
        raise ValueError("every N must be between 1 and the number of columns")
    g = np.broadcast_to(np.asarray(gold_col, dtype=np.intp), (rows,))
    if rows and (g.min() < 0 or g.max() >= n):
        raise ValueError("gold column outside the matrix")
    uniform = not rows or g.min() == g.max()
    above, same = new_counts(len(sizes), rows, policy)
    step = chunk_rows(n)
    for a in range(0, rows, step):
        c = np.asarray(m[a : a + step])
        gold = int(g[0]) if uniform else g[a : a + step]
        count_above_tied(c, gold, sizes, above[:, a : a + step], None if same is None else same[:, a : a + step])
    ranked = fold_counts(above, same, policy)
    out = {}
    for j, x in enumerate(sizes):
        r, t = ranked[j]
        outside = g >= x
        if outside.any():
            r[outside] = 0
            t[outside] = 0
        out[x] = (r, t)
    return out


def chunk_rows(n: int) -> int:
    """Rows per chunk for matrices n columns wide (about :data:`CHUNK_ELEMENTS` cells: a chunk stays in cache)."""
    return max(1, CHUNK_ELEMENTS // max(n, 1))


def new_counts(sizes: int, rows: int, policy: str) -> tuple[np.ndarray, np.ndarray | None]:
    """Zeroed (sizes, rows) int32 arrays for :func:`count_above_tied` (no tie counts under ``optimistic``)."""
    if policy not in TIE_POLICIES:
        raise UsageError(f"unknown tie policy {policy!r} (known: {', '.join(TIE_POLICIES)})")
    above = np.zeros((sizes, rows), np.int32)
    return above, (None if policy == "optimistic" else np.zeros((sizes, rows), np.int32))


def count_above_tied(c: np.ndarray, gold, sizes: list[int], above: np.ndarray, same: np.ndarray | None) -> None:
    """For each row of the chunk ``c`` (rows, n) and each N of ``sizes`` (ascending): ``above[j]`` = columns
    among the first ``sizes[j]`` scoring strictly above the gold, ``same[j]`` = the *other* columns among them
    scoring the same (skipped when ``same`` is None). ``gold``: one column for every row, or one per row.

    Short rows (Ubuntu: ten candidates) are transposed first: each comparison and each running sum then runs
    over one contiguous row of the chunk instead of over ten cells at a time, which is what makes numpy fast.
    """
    rows, n = c.shape
    if not rows:
        return
    per_row = np.ndim(gold) != 0
    if n > 64:  # wide rows: numpy's row-wise reductions already run long inner loops
        at = np.arange(rows)
        gv = (c[at, gold] if per_row else c[:, gold])[:, None]
        gt = c > gv
        eq = None
        if same is not None:
            eq = c == gv
            eq[(at, gold) if per_row else (slice(None), gold)] = False
        for j, x in enumerate(sizes):
            above[j] = np.count_nonzero(gt[:, :x], axis=1)
            if eq is not None:
                same[j] = np.count_nonzero(eq[:, :x], axis=1)
        return
    ct = np.ascontiguousarray(c.T)  # (n, rows)
    self_at = (gold, np.arange(rows)) if per_row else gold
    g = ct[self_at]
    _prefix_sums(np.greater(ct, g), sizes, above)  # the gold is not above itself
    if same is not None:
        eq = np.equal(ct, g)
        eq[self_at] = False
        _prefix_sums(eq, sizes, same, sparse=True)


def _prefix_sums(b: np.ndarray, sizes: list[int], out: np.ndarray, sparse: bool = False) -> None:
    """``out[j]`` = sum of the 0/1 rows ``b[:sizes[j]]`` (b: (n, rows) booleans, n <= 64).

    ``sparse``: ``out`` is zeroed and most sums are 0 (ties): leave it untouched when every sum is, so its
    pages are never written (fresh memory costs more to write than the sums cost to compute).
    """
    b = b.view(np.int8)
    sums = []
    acc = None
    lo = 0
    for x in sizes:
        part = b[lo] if x - lo == 1 else np.add.reduce(b[lo:x], axis=0, dtype=np.int8)
        acc = part if acc is None else acc + part
        sums.append(acc)
        lo = x
    if sparse and not acc.any():
        return
    for j, v in enumerate(sums):
        out[j] = v


def fold_counts(above: np.ndarray, same: np.ndarray | None, policy: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """(gold_rank, ties) per row of :func:`count_above_tied` 's (sizes, rows) counts, under a tie policy.

    Works in place on ``above`` and ``same`` (they become the rank and ties columns).
    """
    if policy == "pessimistic":
        above += same
    above += 1
    zeros = np.zeros(above.shape[1], np.int32)
    if policy == "expected":
        return [(above[j], same[j]) for j in range(above.shape[0])]
    return [(above[j], zeros.copy() if j else zeros) for j in range(above.shape[0])]


def rank_in_vector(scores: np.ndarray, gold_cols, policy: str) -> tuple[int, int]:
    """(gold_rank, ties) of the best-scoring gold among several in one score vector.

    The gold with the highest score counts (every gold scores at most as well as it). s = candidates
    strictly above it; t = *non-gold* candidates tied with it: golds tied with it are one block (with
    ``pessimistic`` the first gold of a tied block still ranks after the tied non-golds, with ``expected``
    the block counts as one gold among t + 1 positions, which can only understate a multi-gold hit).
    ``gold_cols`` empty -> (0, 0): nothing to rank.
    """
    gold_cols = np.asarray(gold_cols, dtype=np.intp)
    if gold_cols.size == 0:
        return 0, 0
    best = scores[gold_cols].max()
    above = int(np.count_nonzero(scores > best))
    tied = int(np.count_nonzero(scores == best)) - int(np.count_nonzero(scores[gold_cols] == best))
    r, t = _fold(np.array([above]), np.array([tied]), policy)
    return int(r[0]), int(t[0])


def finite_faults(m, *, csv_lines: bool = False, line_offset: int = 1) -> list[Fault]:
    """A fault for each NaN or infinite cell (the first :data:`MAX_FAULTS`, then a count), read in chunks."""
    check = FiniteCheck(csv_lines=csv_lines, line_offset=line_offset)
    if m.dtype.kind == "f":
        step = chunk_rows(m.shape[1])
        for a in range(0, m.shape[0], step):
            check.check(np.asarray(m[a : a + step]), a)
    return check.faults()


class FiniteCheck:
    """Finiteness of a matrix read chunk by chunk: :meth:`check` each chunk, then :meth:`faults`."""

    def __init__(self, *, csv_lines: bool = False, line_offset: int = 1):
        self.csv_lines = csv_lines
        self.line_offset = line_offset
        self.found: list[Fault] = []
        self.bad_total = 0

    def check(self, c: np.ndarray, first_row: int) -> bool:
        """True when every cell of the chunk ``c`` (rows ``first_row`` ...) is finite; else records faults."""
        if c.dtype.kind != "f" or not c.size:
            return True
        flat = c.reshape(-1)
        # NaN and inf propagate through a sum of squares (a dot product, one fast pass), so a finite result
        # means every cell is finite; an infinite one may only be an overflow, which the exact test clears
        with np.errstate(over="ignore", invalid="ignore"):
            if np.isfinite(np.dot(flat, flat)):
                return True
        ok = np.isfinite(c)
        if ok.all():
            return True
        rr, cc = np.nonzero(~ok)
        self.bad_total += len(rr)
        room = max(0, MAX_FAULTS - len(self.found))
        for r, col in zip(rr[:room].tolist(), cc[:room].tolist(), strict=True):
            row = first_row + r
            v = float(c[r, col])
            where = f"line {row + self.line_offset}, column {col + 1}" if self.csv_lines else f"row {row + 1}, column {col + 1}"
            self.found.append(Fault("score-not-finite", f"/{row}/{col}", f"{where}: score {v!r} is not a finite number"))
        return False

    def faults(self) -> list[Fault]:
        out = list(self.found)
        if self.bad_total > len(out):
            out.append(Fault("score-not-finite", "", f"... and {self.bad_total - len(out)} more scores that are NaN or infinite"))
        return out


# ---- matrices ------------------------------------------------------------------------------------------


def read_npy_matrix(path: str | Path) -> tuple[np.ndarray | None, list[Fault]]:
    """A 2-D numeric ``.npy`` matrix (memory-mapped above :data:`LOAD_LIMIT`), or faults.

    Accepted dtypes: floating and integer. Refused: booleans, complex, strings, objects (pickles are
    never loaded), structured records, and anything not two-dimensional.
    """
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            magic = fh.read(6)
        if magic != b"\x93NUMPY":
            what = "an .npz archive" if magic.startswith(b"PK") else "no .npy header"
            return None, [Fault("unreadable-matrix", "", f"not a .npy file ({what})")]
        # small enough: read it (one copy, and faster than page-faulting a map); larger: map it
        mode = None if path.stat().st_size <= LOAD_LIMIT else "r"
        m = np.load(path, mmap_mode=mode, allow_pickle=False)
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except PermissionError:
        raise UsageError(f"{path}: permission denied") from None
    except IsADirectoryError:
        raise UsageError(f"{path}: is a directory, expected a .npy file") from None
    except ValueError as e:
        if "pickle" in str(e).lower() or "object" in str(e).lower():
            return None, [Fault("wrong-dtype", "", "the matrix holds Python objects; expected float or integer scores")]
        return None, [Fault("unreadable-matrix", "", "not a readable .npy file (bad header or truncated data)")]
    except (OSError, EOFError):
        return None, [Fault("unreadable-matrix", "", "not a readable .npy file (bad header or truncated data)")]
    if not isinstance(m, np.ndarray):  # np.load of an .npz archive gives an NpzFile
        return None, [Fault("unreadable-matrix", "", "not a .npy array (an .npz archive?)")]
    if m.dtype.names is not None or m.dtype.kind not in "fiu":
        return None, [Fault("wrong-dtype", "", f"dtype {m.dtype} is not a float or integer type")]
    if m.ndim != 2:
        return None, [Fault("wrong-shape", "", f"shape {tuple(m.shape)} is not 2-D (rows, candidates)")]
    return m, []


class MatrixRows:
    """A score matrix as consecutive row chunks (:meth:`chunks`); this one wraps an array (or memory map)."""

    def __init__(self, m: np.ndarray):
        self.m = m
        self.shape: tuple[int, int] = m.shape
        self.dtype = m.dtype

    def chunks(self, step: int):
        """Yield ``(first row, rows x columns array)``; a chunk is only valid until the next one is asked for."""
        for a in range(0, self.shape[0], step):
            yield a, np.asarray(self.m[a : a + step])


class NpyRows(MatrixRows):
    """The data of a C-ordered 2-D ``.npy`` file, streamed into one reused chunk buffer.

    Reading the file straight into a chunk-sized buffer avoids holding the whole matrix in memory, and each
    chunk is checked and ranked while it is still in the CPU cache.
    """

    def __init__(self, path: Path, offset: int, shape: tuple[int, int], dtype: np.dtype):
        self.path = path
        self.offset = offset
        self.shape = shape
        self.dtype = dtype

    def chunks(self, step: int):
        rows, n = self.shape
        buf = np.empty((min(step, rows), n), self.dtype)
        with open(self.path, "rb", buffering=0) as fh:
            fh.seek(self.offset)
            for a in range(0, rows, step):
                b = buf[: min(step, rows - a)]
                view = memoryview(b.reshape(-1).view(np.uint8))
                got = 0
                while got < len(view):
                    k = fh.readinto(view[got:])
                    if not k:
                        raise OSError("the .npy data ended early")
                    got += k
                yield a, b


def open_npy_rows(path: str | Path) -> tuple[MatrixRows | None, list[Fault]]:
    """A 2-D numeric ``.npy`` matrix as row chunks (streamed from the file), or faults.

    Same checks, faults and errors as :func:`read_npy_matrix`, which also handles the files not streamed
    here (Fortran order, other header versions, and everything it refuses).
    """
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            version = np.lib.format.read_magic(fh)
            if version == (1, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_1_0(fh)
            elif version == (2, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_2_0(fh)
            else:
                shape = None
            offset = fh.tell()
        simple = (
            shape is not None and len(shape) == 2 and not fortran and dtype.names is None and dtype.kind in "fiu"
            and path.stat().st_size >= offset + shape[0] * shape[1] * dtype.itemsize
        )
    except Exception:  # noqa: BLE001 - anything unusual is diagnosed by the full reader below
        simple = False
    if simple:
        return NpyRows(path, offset, (int(shape[0]), int(shape[1])), dtype), []
    m, faults = read_npy_matrix(path)
    return (None if m is None else MatrixRows(m)), faults


def read_csv_matrix(path: str | Path) -> tuple[np.ndarray | None, list[Fault]]:
    """A headerless CSV matrix of numbers (float64), or faults with the 1-based line and column.

    One row per line, cells separated by commas, every row the same length; Python's float syntax
    (``1``, ``-0.5``, ``1e-3``; surrounding spaces allowed). ``nan``/``inf`` parse but are reported by
    :func:`finite_faults`. An empty file is a fault.
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{path}: is a directory, expected a .csv file") from None
    except OSError as e:
        raise UsageError(f"{path}: cannot read: {e.strerror or e}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        return None, [Fault("score-not-number", "", f"not UTF-8 text (byte {e.start})")]
    del raw
    if not text.strip():
        return None, [Fault("wrong-shape", "", "the file is empty: expected one row of scores per item")]
    try:  # fast path: numpy's C parser; any failure is re-diagnosed line by line below
        m = np.loadtxt(text.splitlines(), delimiter=",", dtype=np.float64, ndmin=2, comments=None)
        return m, []
    except ValueError:
        pass
    return None, _diagnose_csv(text)


def _diagnose_csv(text: str) -> list[Fault]:
    out: list[Fault] = []
    width = None
    width_line = 0
    for i, row in enumerate(csv.reader(text.splitlines())):
        line = i + 1
        if len(out) >= MAX_FAULTS:
            out.append(Fault("score-not-number", "", "... more problems not shown"))
            break
        if not row or all(not c.strip() for c in row):
            out.append(Fault("wrong-shape", f"/{i}", f"line {line}: empty line; expected a row of scores"))
            continue
        if width is None:
            width, width_line = len(row), line
        elif len(row) != width:
            out.append(
                Fault("wrong-shape", f"/{i}", f"line {line}: {len(row)} scores, but line {width_line} has {width}")
            )
            continue
        for j, cell in enumerate(row):
            try:
                float(cell)
            except ValueError:
                out.append(Fault("score-not-number", f"/{i}/{j}", f"line {line}, column {j + 1}: {short(cell, 40)} is not a number"))
    if not out:  # numpy refused something the csv module accepts (e.g. quoted cells): say what is expected
        out.append(Fault("score-not-number", "", "cells must be plain unquoted numbers separated by commas"))
    return out


# ---- JSON scores ---------------------------------------------------------------------------------------


def decode_scores_json(raw: bytes | None, data: object = None) -> tuple[dict[str, dict[str, float]] | None, list[Fault]]:
    """The ``items`` mapping of a JSON score document, or every fault in it (each with its pointer).

    Fast path: msgspec decodes straight into ``dict[str, dict[str, float]]`` (integers accepted, booleans
    and strings refused); on any failure the parsed document ``data`` is walked to report every problem.
    Pass ``raw`` (the file's bytes) and/or ``data`` (already parsed).
    """
    if raw is not None:
        try:
            import msgspec

            doc = msgspec.json.decode(raw, type=_scores_type())
            items = doc.items
            if all(_all_finite(v) for v in items.values()):
                return items, []
        except Exception:  # noqa: BLE001 - any decode failure is re-diagnosed with pointers below
            pass
        if data is None:
            from dialeval.formats.jsonio import parse_json_bytes

            data = parse_json_bytes(raw, "submission")
    return None, _diagnose_scores(data)


def _all_finite(scores: dict) -> bool:
    return all(math.isfinite(v) for v in scores.values())


_TYPE = None


def _scores_type():
    global _TYPE
    if _TYPE is None:
        import msgspec

        class ScoresDoc(msgspec.Struct, forbid_unknown_fields=True):
            format: Literal["scores"]
            items: dict[str, dict[str, float]]

        _TYPE = ScoresDoc
    return _TYPE


def _diagnose_scores(data: object) -> list[Fault]:
    out: list[Fault] = []
    if not isinstance(data, dict):
        return [Fault("wrong-type", "", f"a score document is a JSON object, found {_json_type(data)}")]
    if data.get("format") != "scores":
        out.append(Fault("wrong-type", "/format", 'a score document has "format": "scores"'))
    for k in sorted(set(data) - {"format", "items"}):
        out.append(Fault("unknown-key", escape(k), f"unexpected key {short(k, 40)} in the score document"))
    if "items" not in data:
        out.append(Fault("missing-key", "", 'the score document has no "items"'))
        return out
    items = data["items"]
    if not isinstance(items, dict):
        out.append(Fault("wrong-type", "/items", f"items is a {_json_type(items)}, expected an object"))
        return out
    for iid, scores in items.items():
        ptr = "/items" + escape(iid)
        if not isinstance(scores, dict):
            out.append(Fault("wrong-type", ptr, f"the scores of an item are an object, found {_json_type(scores)}"))
            continue
        for cid, v in scores.items():
            if type(v) is bool or not isinstance(v, int | float):
                out.append(Fault("score-not-number", ptr + escape(cid), f"score is a {_json_type(v)}, expected a number"))
            elif not math.isfinite(v):
                out.append(Fault("score-not-finite", ptr + escape(cid), f"score {v!r} is not a finite number"))
    if not out:
        out.append(Fault("wrong-type", "", "not a score document"))
    return out


def scores_vector(n: int, cols: np.ndarray, values: np.ndarray) -> np.ndarray:
    """A length-``n`` float64 vector with ``values`` at ``cols`` and -inf elsewhere (unscored candidates
    rank below every scored one and tie among themselves)."""
    v = np.full(n, -np.inf)
    v[cols] = values
    return v
