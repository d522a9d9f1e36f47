"""Score-based submissions: pure readers and the vectorised rank-of-gold computation.

Four file forms carry scores instead of ranks (higher score = better candidate):

* JSON ``{"format": "scores", "items": {"<item id>": {"<candidate id>": <number>, ...}, ...}}``
  (:func:`decode_scores_json`);
* a ``.npy`` matrix, one row per item, one column per candidate (:func:`open_npy_rows`);
* a headerless ``.csv`` matrix with the same layout, comma-separated numbers (:func:`read_csv_matrix`);
* a line score file, one score per data line (or ``score<TAB>label``), in the data's order
  (:func:`read_line_scores`: the Douban-style TSV benchmarks).

Every file is read through the input layer (:mod:`dialeval.files.read`). Readers here know nothing about
benchmarks or answer keys. Bad input comes back as :class:`~dialeval.core.problems.Problem` s (code, JSON
pointer, message) without a file: the benchmark layer, which knows the submitted file's name, adds it. Matrix
pointers are ``/<row>/<column>``, 0-based; messages also give the 1-based CSV line. At most :data:`MAX_FAULTS`
faults of one code are kept (:class:`~dialeval.core.problems.Capped`); the rest are counted in one closing line
that has no code.

:func:`fold_ties` is the one tie rule (``pessimistic``, ``optimistic``, ``expected``, ``input-order``; the names are
:data:`dialeval.benchmarks.base.TIE_POLICIES`); see :mod:`dialeval.core.ranks` for what ``gold_rank`` and ``ties`` mean.
"""

from __future__ import annotations

import ast
import math
import re
import struct
from pathlib import Path
from typing import Literal

import msgspec
import numpy as np

from dialeval.core.errors import UnreadableInput
from dialeval.core.problems import MAX_LISTED as MAX_FAULTS
from dialeval.core.problems import Capped, Problem, counted, pointer, short
from dialeval.core.problems import json_type as _json_type
from dialeval.files.read import SNIFF_BYTES, iter_bounded_lines, iter_byte_lines, open_input, os_error, sniff

CHUNK_ELEMENTS = 1 << 18
"""Rows are processed in chunks of about this many cells, so temporary arrays stay small whatever the
matrix size (a float64 copy of one chunk at most, never of the whole matrix)."""

INT_MIN, INT_MAX = -(1 << 63), (1 << 64) - 1
"""JSON integer scores must fit in 64 bits (what a ``.npy`` matrix can hold); within it they compare exactly."""


# ---- ranks ---------------------------------------------------------------------------------------------


def fold_ties(above, tied, policy: str):
    """THE tie rule: ``(gold_rank, ties)`` from s = candidates strictly above the gold and t = *other*
    candidates tied with it (ints or integer arrays alike).

    * ``pessimistic``: gold_rank = s + t + 1, ties = 0 (the gold ranks after every tied candidate);
    * ``optimistic``: gold_rank = s + 1, ties = 0;
    * ``expected``: gold_rank = s + 1, ties = t (metrics average over the t + 1 equal positions);
    * ``input-order``: gold_rank = s + t + 1, ties = 0, where the caller counts in t only the tied candidates
      that come *before* the gold in the data's candidate order (a stable sort: DAM's scorer).

    Callers check the policy name against :data:`dialeval.benchmarks.base.TIE_POLICIES` first.
    """
    if policy in ("pessimistic", "input-order"):
        return above + tied + 1, tied * 0
    if policy == "optimistic":
        return above + 1, tied * 0
    return above + 1, tied


def chunk_rows(n: int) -> int:
    """Rows per chunk for matrices n columns wide (about :data:`CHUNK_ELEMENTS` cells: a chunk stays in cache)."""
    return max(1, CHUNK_ELEMENTS // max(n, 1))


def new_counts(sizes: int, rows: int, policy: str) -> tuple[np.ndarray, np.ndarray | None]:
    """Zeroed (sizes, rows) int32 arrays for :func:`count_above_tied` (no tie counts under ``optimistic``)."""
    above = np.zeros((sizes, rows), np.int32)
    return above, (None if policy == "optimistic" else np.zeros((sizes, rows), np.int32))


def count_above_tied(c: np.ndarray, gold, sizes: list[int], above: np.ndarray, same: np.ndarray | None,
                     before: bool = False) -> None:
    """For each row of the chunk ``c`` (rows, n) and each N of ``sizes`` (ascending): ``above[j]`` = columns
    among the first ``sizes[j]`` scoring strictly above the gold, ``same[j]`` = the *other* columns among them
    scoring the same (skipped when ``same`` is None; ``before``: only those left of the gold's column, what
    ``input-order`` counts). ``gold``: one column for every row, or one per row.

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
            if before:
                eq &= np.arange(n)[None, :] < (np.asarray(gold)[:, None] if per_row else gold)
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
        if before:
            eq &= np.arange(n)[:, None] < (np.asarray(gold)[None, :] if per_row else gold)
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
    """(gold_rank, ties) per row of :func:`count_above_tied` 's (sizes, rows) counts, by :func:`fold_ties`."""
    rank, ties = fold_ties(above, np.zeros_like(above) if same is None else same, policy)
    rank = rank.astype(np.int32, copy=False)
    ties = ties.astype(np.int32, copy=False)
    return [(rank[j], ties[j]) for j in range(rank.shape[0])]


def rank_in_vector(scores: np.ndarray, gold_cols, policy: str) -> tuple[int, int]:
    """(gold_rank, ties) of the best-scoring gold among several in one score vector.

    The gold with the highest score counts (every gold scores at most as well as it). s = candidates
    strictly above it; t = *non-gold* candidates tied with it: golds tied with it are one block (with
    ``pessimistic`` the first gold of a tied block still ranks after the tied non-golds, with ``expected``
    the block counts as one gold among t + 1 positions, which can only understate a multi-gold hit; with
    ``input-order`` t counts the tied non-golds left of the block's first gold).
    ``gold_cols`` empty -> (0, 0): nothing to rank.
    """
    gold_cols = np.asarray(gold_cols, dtype=np.intp)
    if gold_cols.size == 0:
        return 0, 0
    best = scores[gold_cols].max()
    above = int(np.count_nonzero(scores > best))
    if policy == "input-order":
        first = int(gold_cols[scores[gold_cols] == best].min())
        tied = int(np.count_nonzero(scores[:first] == best))  # every gold left of `first` scores below best
    else:
        tied = int(np.count_nonzero(scores == best)) - int(np.count_nonzero(scores[gold_cols] == best))
    r, t = fold_ties(above, tied, policy)
    return int(r), int(t)


class FiniteCheck:
    """Finiteness of a matrix read chunk by chunk: :meth:`check` each chunk, then :meth:`faults`."""

    def __init__(self, *, csv_lines: bool = False, line_offset: int = 1):
        self.csv_lines = csv_lines
        self.line_offset = line_offset
        self.found = Capped()

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
        room = max(0, MAX_FAULTS - len(self.found))
        for r, col in zip(rr[:room].tolist(), cc[:room].tolist(), strict=True):
            row = first_row + r
            v = float(c[r, col])
            where = f"line {row + self.line_offset}, column {col + 1}" if self.csv_lines else f"row {row + 1}, column {col + 1}"
            self.found.append(Problem("score-not-finite", f"/{row}/{col}", f"{where}: score {v!r} is not a finite number"))
        more = len(rr) - min(room, len(rr))
        if more:  # counted, not built: a matrix of NaN costs no more than twenty of them
            self.found.dropped["score-not-finite"] = self.found.dropped.get("score-not-finite", 0) + more
            self.found.dropped_error = True
        return False

    def faults(self) -> list[Problem]:
        return self.found.close()


# ---- matrices ------------------------------------------------------------------------------------------


class MatrixRows:
    """A score matrix as consecutive row chunks (:meth:`chunks`); this one wraps an array in memory."""

    def __init__(self, m: np.ndarray):
        self.m = m
        self.shape: tuple[int, int] = m.shape
        self.dtype = m.dtype

    def size_fault(self) -> Problem | None:
        """A fault when the file holds fewer bytes than its header declares (None here: the data are read)."""
        return None

    def chunks(self, step: int):
        """Yield ``(first row, rows x columns array)``; a chunk is only valid until the next one is asked for."""
        for a in range(0, self.shape[0], step):
            yield a, np.asarray(self.m[a : a + step])


NPY_MAGIC = b"\x93NUMPY"
NPY_MAX_HEADER = 1 << 16
"""The largest ``.npy`` header read (numpy writes under 200 bytes for a 2-D matrix; version 1 cannot exceed
64 KiB): a header claiming gigabytes is refused before it is read."""
_NPY_KEYS = {"descr", "fortran_order", "shape"}


class NpyRows(MatrixRows):
    """The data of a 2-D ``.npy`` file, known from its header alone and streamed into one reused chunk buffer.

    Nothing is allocated from the header's numbers until the caller has compared the shape with the split
    (a 180-byte file may declare 10^13 cells) and :meth:`size_fault` has checked that the file really holds
    that many bytes. C order is read row block by row block; Fortran order (one column after another) reads
    each chunk's slice of every column; big-endian data are swapped in the buffer.
    """

    def __init__(self, path: Path, shown: str, offset: int, file_size: int, shape: tuple[int, int],
                 dtype: np.dtype, fortran: bool):
        self.path, self.shown, self.offset, self.file_size = path, shown, offset, file_size
        self.shape = shape
        self.dtype = dtype.newbyteorder("=") if dtype.byteorder not in "=|" else dtype
        self.stored = dtype
        self.fortran = fortran

    def size_fault(self) -> Problem | None:
        rows, n = self.shape
        need = rows * n * self.stored.itemsize
        have = self.file_size - self.offset
        if have < need:
            return Problem("unreadable-matrix", "", f"truncated: the header declares {rows} x {n} {self.stored.name} "
                         f"scores ({need:,} bytes), the file holds {max(have, 0):,} bytes of data")
        return None

    def chunks(self, step: int):
        rows, n = self.shape
        width = self.stored.itemsize
        swap = self.stored.byteorder not in "=|" and self.stored.newbyteorder("=") != self.stored
        with open_input(self.path, shown=self.shown, what="a .npy file") as f:
            fh = getattr(f.file, "raw", f.file)  # unbuffered: each chunk is read straight into its buffer
            if not self.fortran:
                buf = np.empty((min(step, rows), n), self.dtype)
                for a in range(0, rows, step):
                    b = buf[: min(step, rows - a)]
                    _read_into(fh, self.offset if a == 0 else None, b, f.name)  # sequential after the first
                    if swap:
                        b.byteswap(inplace=True)
                    yield a, b
                return
            buf = np.empty((n, min(step, rows)), self.dtype)  # one chunk's slice of every column
            for a in range(0, rows, step):
                k = min(step, rows - a)
                b = buf[:, :k]
                for j in range(n):
                    _read_into(fh, self.offset + (j * rows + a) * width, b[j], f.name)
                if swap:
                    b.byteswap(inplace=True)
                yield a, b.T


def _read_into(fh, at: int | None, out: np.ndarray, name: str) -> None:
    """Fill the contiguous array ``out`` with the bytes of ``fh`` from offset ``at`` (None: where it is)."""
    view = memoryview(out.reshape(-1).view(np.uint8))  # out is contiguous: a view, never a copy
    try:
        if at is not None:
            fh.seek(at)
        got = 0
        while got < len(view):
            k = fh.readinto(view[got:])
            if not k:
                raise NpyEnded
            got += k
    except OSError as e:
        raise os_error(name, e) from None


class NpyEnded(Exception):
    """The file ended before the data its header declares (it shrank after its size was checked)."""


def open_npy_rows(path: str | Path, *, shown: str | None = None) -> tuple[NpyRows | None, list[Problem]]:
    """A 2-D numeric ``.npy`` matrix as row chunks, judged from its header alone, or faults.

    Accepted dtypes: floating (float16 ... float128) and integer, either byte order, C or Fortran order.
    Refused: booleans, complex, strings, objects and structured records (the data of a pickled array are
    never read, let alone unpickled), and anything not two-dimensional. Raises
    :class:`~dialeval.core.errors.UsageError` only for the file as a file (missing, a FIFO or device, unreadable).
    """
    path = Path(path)
    name = shown or str(path)
    with open_input(path, shown=shown, what="a .npy file") as f:
        try:
            head = f.file.read(12)
            if len(head) < 10 or not head.startswith(NPY_MAGIC):
                return None, [_not_npy(head, f.file)]
            major = head[6]
            if major == 1:
                header_len, start = struct.unpack("<H", head[8:10])[0], 10
            elif major in (2, 3) and len(head) >= 12:
                header_len, start = struct.unpack("<I", head[8:12])[0], 12
            else:
                return None, [Problem("unreadable-matrix", "", f"not a readable .npy file (format version {major} "
                                    f"is not one numpy writes)")]
            if header_len > NPY_MAX_HEADER:
                return None, [Problem("unreadable-matrix", "", f"not a readable .npy file (its header claims "
                                    f"{header_len:,} bytes; numpy writes a few hundred)")]
            f.file.seek(start)
            raw = f.file.read(header_len)
        except OSError as e:
            raise os_error(name, e) from None
    if len(raw) < header_len:
        return None, [Problem("unreadable-matrix", "", f"truncated: the file ends inside its .npy header "
                            f"({len(raw)} of {header_len} bytes)")]
    parsed = _npy_header(raw, major)
    if isinstance(parsed, Problem):
        return None, [parsed]
    shape, fortran, dtype = parsed
    if len(shape) != 2:
        return None, [Problem("wrong-shape", "", f"shape {tuple(shape)} is not 2-D (rows, candidates)")]
    return NpyRows(path, name, start + header_len, f.size or 0, (shape[0], shape[1]), dtype, fortran), []


def _not_npy(head: bytes, fh) -> Problem:
    if not head:
        return Problem("empty-file", "", "the file is empty: expected a .npy matrix of scores")
    try:
        head = head + fh.read(SNIFF_BYTES - len(head))
    except OSError:
        pass
    bad = sniff(head, expect="a .npy matrix (np.save of one array; an .npz archive is not read)")
    if bad is not None and not head.startswith(NPY_MAGIC):
        return Problem(bad.code, "", bad.reason)
    return Problem("unreadable-matrix", "", "not a .npy file (no .npy header)" if not head.startswith(NPY_MAGIC)
                 else "truncated: the file ends inside its .npy header")


def _npy_header(raw: bytes, major: int):
    """``(shape, fortran, dtype)`` from a header's text, or a fault; the text is parsed as a literal only."""
    bad = Problem("unreadable-matrix", "", "not a readable .npy file (its header is not numpy's dictionary of "
                "descr, fortran_order and shape)")
    try:
        text = raw.decode("utf-8" if major >= 3 else "latin1")
        d = ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError, UnicodeDecodeError):
        return bad
    if not isinstance(d, dict) or set(d) != _NPY_KEYS:
        return bad
    shape, fortran, descr = d["shape"], d["fortran_order"], d["descr"]
    if (not isinstance(shape, tuple) or not all(type(x) is int and x >= 0 for x in shape)
            or not isinstance(fortran, bool)):
        return bad
    try:
        dtype = np.lib.format.descr_to_dtype(descr)
    except Exception:  # noqa: BLE001 - numpy's own errors for a descr it cannot read: one fault
        return bad
    if dtype.hasobject:
        return Problem("wrong-dtype", "", "the matrix holds Python objects (a pickle, never loaded); expected float "
                     "or integer scores")
    if dtype.names is not None or dtype.kind not in "fiu":
        return Problem("wrong-dtype", "", f"dtype {dtype} is not a float or integer type")
    return shape, fortran, dtype


_CELL = re.compile(rb'\s*"([^"]*)"\s*')
LOADTXT_MAX_LINE = 1 << 16
"""Longer lines are parsed cell by cell in Python: numpy's parser holds a line as 4 bytes per character, and a
100 MB cell then cost 700 MB before it was found not to be a number."""
EXCERPT = 40
"""Characters of a cell shown in a ``score-not-number`` message (only that many are ever decoded)."""


def read_csv_matrix(path: str | Path, *, shown: str | None = None, max_columns: int | None = None,
                    max_rows: int | None = None) -> tuple[np.ndarray | None, list[Problem]]:
    """A headerless CSV matrix of numbers (float64), or faults with the 1-based line and column.

    One row per line (``\\n`` or ``\\r\\n``), cells separated by commas, every row the same length; Python's
    float syntax (``1``, ``-0.5``, ``1e-3``; surrounding spaces allowed; a cell may be in double quotes).
    ``nan``/``inf`` parse but are reported by :class:`FiniteCheck`. Blank lines at the end are ignored;
    elsewhere they are a fault. Streamed line by line: memory is the matrix plus the longest line.
    ``max_columns``/``max_rows`` (what the caller can accept) stop a line or a file far too large early.
    """
    faults = Capped()
    blocks: list[np.ndarray] = []
    pending: list[bytes] = []
    pending_from = 0
    long_pending = False  # a pending line numpy's parser must not see
    width = width_line = None
    too_wide = False
    blank_at: list[int] = []  # blank lines not yet known to be trailing
    rows = 0
    lines = 0

    def flush() -> None:
        nonlocal pending, long_pending
        if not pending:
            return
        try:  # numpy's C parser; a block it refuses is read again cell by cell, which names each bad cell
            if long_pending:
                raise ValueError("a long line")
            block = np.loadtxt(pending, delimiter=",", dtype=np.float64, ndmin=2, comments=None, quotechar='"',
                               encoding="utf-8")
            if block.shape != (len(pending), width):
                raise ValueError("ragged")
        except ValueError:
            block = _rows_by_python(pending, pending_from, width, faults)
        blocks.append(block)
        pending = []
        long_pending = False

    try:
        for lineno, line in iter_byte_lines(path, shown=shown, what="a .csv file", bom_ok=True,
                                            expect="comma-separated numbers"):
            lines = lineno
            if not line.strip():
                blank_at.append(lineno)
                continue
            for b in blank_at:
                faults.append(Problem("wrong-shape", f"/{b - 1}", f"line {b}: empty line; expected a row of scores"))
            blank_at = []
            rows += 1
            if max_rows is not None and rows > max_rows:
                continue  # only counted: the caller reports the number of lines
            cells = line.count(b",") + 1
            if width is None:
                width, width_line = cells, lineno
                too_wide = max_columns is not None and cells > max_columns
            if too_wide:  # one problem for the file, found without parsing a single cell
                continue
            if cells != width and (b'"' not in line or (max_columns is not None and cells > max_columns)):
                faults.append(Problem("wrong-shape", f"/{lineno - 1}", f"line {lineno}: {cells} scores, but line "
                                    f"{width_line} has {width}"))
                continue
            if not pending:
                pending_from = lineno
            elif lineno != pending_from + len(pending):  # keep a block's lines consecutive (messages count them)
                flush()
                pending_from = lineno
            pending.append(line)
            long_pending = long_pending or len(line) > LOADTXT_MAX_LINE
            if len(pending) >= 8192:
                flush()
        flush()
    except UnreadableInput as e:
        return None, [Problem(e.code, "", e.reason)]
    if rows == 0:
        return None, [Problem("empty-file" if lines == 0 else "wrong-shape", "",
                            "the file is empty: expected one row of scores per item" if lines == 0
                            else "the file holds only blank lines: expected one row of scores per item")]
    if max_rows is not None and rows > max_rows:
        faults.append(Problem("wrong-shape", "", f"{counted(rows, 'line')}, but the split has "
                            f"{counted(max_rows, 'item')} (one line per item, in order)"))
    elif too_wide:
        faults.append(Problem("wrong-shape", "", f"{width} scores per line, but each item has {max_columns} candidates"))
    if faults:
        return None, faults.close()
    return (np.concatenate(blocks) if len(blocks) > 1 else blocks[0]), []


def _rows_by_python(lines: list[bytes], first: int, width: int | None, faults: Capped) -> np.ndarray:
    """The rows numpy refused, cell by cell with Python's float syntax; faults name line and column."""
    out = np.zeros((len(lines), width or 0))
    for i, line in enumerate(lines):
        lineno = first + i
        cells = _split_cells(line)
        if width is not None and len(cells) != width:
            faults.append(Problem("wrong-shape", f"/{lineno - 1}", f"line {lineno}: {len(cells)} scores, but the "
                                f"first row has {width}"))
            continue
        if lineno == 1 and len(cells) > 1 and not any(map(_is_number, cells)):  # a header: one line, not a cell each
            shown = line[:4 * EXCERPT + 8].decode("utf-8", "replace")[:EXCERPT]
            faults.append(Problem("score-not-number", "/0", f"line 1: {short(shown, EXCERPT)} looks like a header "
                                  "row: the CSV matrix is headerless (scores only); remove that line"))
            continue
        for j, cell in enumerate(cells):
            try:
                out[i, j] = float(cell)
            except ValueError:
                # a prefix of 4 bytes per character shown (and more) decodes to the same excerpt as the whole cell
                shown = cell[:4 * EXCERPT + 8].decode("utf-8", "replace")[:EXCERPT]
                faults.append(Problem("score-not-number", f"/{lineno - 1}/{j}",
                                      f"line {lineno}, column {j + 1}: {short(shown, EXCERPT)} is not a number"))
    return out


def _is_number(cell: bytes) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _split_cells(line: bytes) -> list[bytes]:
    """The cells of one line: split on commas, a cell in double quotes unquoted (a quoted comma stays)."""
    if b'"' not in line:
        return line.split(b",")
    cells, pos = [], 0
    while True:
        m = _CELL.match(line, pos)
        if m and (m.end() == len(line) or line[m.end():m.end() + 1] == b","):
            cells.append(m.group(1))
            pos = m.end()
        else:
            end = line.find(b",", pos)
            end = len(line) if end < 0 else end
            cells.append(line[pos:end])
            pos = end
        if pos >= len(line):
            return cells
        pos += 1  # the comma
        if pos == len(line):
            cells.append(b"")
            return cells


# ---- JSON scores ---------------------------------------------------------------------------------------


def decode_scores_json(raw: bytes, keep=None, skip=None) -> tuple[dict[str, dict[str, int | float] | None] | None, list[Problem]]:
    """The ``items`` mapping of a JSON score document and the faults in it (each with its pointer).

    Fast path: msgspec decodes the document with each item's scores left as raw JSON, then each item into
    ``dict[str, int | float]`` (integers stay integers, so they compare exactly; booleans and strings
    refused). ``keep`` (a container of item ids) keeps the scores of those items only: any other item maps
    to None once its scores are checked, so a million unknown items cost a million keys, not a million
    dictionaries. ``skip(item id)``, asked of the ids not in ``keep``: True for an item the run leaves out (a task
    outside ``--task``, another split): its scores are neither read nor checked, and it maps to None. On any failure the parsed document is walked to report
    every problem (``items`` is then
    None). Keys a JSON object repeats are faults too (``duplicate-dialog``, ``duplicate-candidate``), never a
    silent last-wins. Raises :class:`~dialeval.core.errors.UnreadableInput` when the bytes are not one JSON document.
    """
    items = None
    try:
        items = msgspec.json.decode(raw, type=_scores_type()).items
        scores_of = msgspec.json.Decoder(dict[str, int | float])
        strings = 3 + len(items)  # every key and the value "scores": what the text holds without repeated keys
        for iid, item in items.items():
            if skip is not None and (keep is None or iid not in keep) and skip(iid):
                items[iid] = None
                strings += _count_strings(msgspec.json.decode(item))  # what the quote count below expects
                continue
            scores = scores_of.decode(item)
            if not _all_ok(scores):
                items = None
                break
            strings += len(scores)
            items[iid] = scores if keep is None or iid in keep else None  # a new value, not a new key
    except Exception:  # noqa: BLE001 - any decode failure is re-diagnosed with pointers below
        items = None
    if items is not None:
        return items, duplicate_keys(raw, strings, Capped(), skip).close()
    from dialeval.formats.jsonio import parse_json_bytes

    data = parse_json_bytes(raw, "submission")
    faults = _diagnose_scores(data, Capped(), skip)
    return None, duplicate_keys(raw, _count_strings(data), faults, skip).close()


def _all_ok(scores: dict) -> bool:
    for v in scores.values():
        if type(v) is int:
            if not INT_MIN <= v <= INT_MAX:
                return False
        elif not math.isfinite(v):
            return False
    return True


_TYPE = None


def _scores_type():
    global _TYPE
    if _TYPE is None:
        class ScoresDoc(msgspec.Struct, forbid_unknown_fields=True):
            format: Literal["scores"]
            items: dict[str, msgspec.Raw]

        _TYPE = ScoresDoc
    return _TYPE


def _count_strings(data: object) -> int:
    """Keys and string values in a parsed JSON document (what its text holds if no key is repeated)."""
    n, todo = 0, [data]
    while todo:
        x = todo.pop()
        if isinstance(x, str):
            n += 1
        elif isinstance(x, dict):
            n += len(x)
            todo.extend(x.values())
        elif isinstance(x, list):
            todo.extend(x)
    return n


_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[{}\[\]]')


def duplicate_keys(raw: bytes, strings: int, faults: Capped, skip=None) -> Capped:
    """Faults for keys a JSON object of ``raw`` repeats, given that the parsed document holds ``strings``
    keys and string values: when the text holds as many strings, no key was dropped, which one count of
    quotes proves for a text without backslashes; otherwise its tokens are walked (objects inside arrays
    are not followed: no score document has them). ``skip(item id)``: an item left out, whose keys are not
    looked at. Appends to ``faults`` and returns it."""
    if b"\\" not in raw and raw.count(b'"') == 2 * strings:
        return faults
    import json

    stack: list[list] = []  # per open container: [is object, its pointer or None, keys seen, last key]
    for m in _TOKEN.finditer(raw):
        tok = m.group()
        if tok == b"{" or tok == b"[":
            ptr = None
            if stack and stack[-1][0] and stack[-1][1] is not None and stack[-1][3] is not None and not (
                    skip is not None and stack[-1][1] == "/items" and skip(stack[-1][3])):
                ptr = stack[-1][1] + pointer(stack[-1][3])
            elif not stack:
                ptr = ""
            stack.append([tok == b"{", ptr, set(), None])
        elif tok == b"}" or tok == b"]":
            if stack:
                stack.pop()
        elif stack and stack[-1][0]:
            after = raw[m.end():m.end() + 64].lstrip()
            if not after.startswith(b":"):
                continue  # a string value
            try:
                key = json.loads(tok)
            except ValueError:
                continue
            top = stack[-1]
            top[3] = key
            if top[1] is None:
                continue
            if key in top[2]:
                if not (skip is not None and top[1] == "/items" and skip(key)):
                    faults.append(_duplicate(top[1], key))
            else:
                top[2].add(key)
    return faults


def _duplicate(ptr: str, key: str) -> Problem:
    where = ptr + pointer(key)
    if ptr == "/items":
        return Problem("duplicate-dialog", where, f"item {short(key)} is scored twice: give each item one set of "
                     "scores (a later one would silently replace the earlier)")
    if ptr.startswith("/items/") and ptr.count("/") == 2:
        return Problem("duplicate-candidate", where, f"candidate_id {short(key)} is scored twice in this item")
    return Problem("unknown-key", where, f"key {short(key)} appears twice in the same object")


def _diagnose_scores(data: object, out: Capped, skip=None) -> Capped:
    if not isinstance(data, dict):
        out.append(Problem("wrong-type", "", f"a score document is a JSON object, found {_json_type(data)}"))
        return out
    if data.get("format") != "scores":
        out.append(Problem("wrong-type", "/format", 'a score document has "format": "scores"'))
    for k in sorted(set(data) - {"format", "items"}):
        out.append(Problem("unknown-key", pointer(k), f"unexpected key {short(k, 40)} in the score document"))
    if "items" not in data:
        out.append(Problem("missing-key", "", 'the score document has no "items"'))
        return out
    items = data["items"]
    if not isinstance(items, dict):
        out.append(Problem("wrong-type", "/items", f"items is a {_json_type(items)}, expected an object"))
        return out
    for iid, scores in items.items():
        if skip is not None and skip(iid):
            continue
        ptr = "/items" + pointer(iid)
        if not isinstance(scores, dict):
            out.append(Problem("wrong-type", ptr, f"the scores of an item are an object, found {_json_type(scores)}"))
            continue
        for cid, v in scores.items():
            if type(v) is bool or not isinstance(v, int | float):
                out.append(Problem("score-not-number", ptr + pointer(cid), f"score is a {_json_type(v)}, expected a number"))
            elif type(v) is int:
                if not INT_MIN <= v <= INT_MAX:
                    out.append(Problem("score-out-of-range", ptr + pointer(cid), f"an integer score of {v.bit_length()} "
                                     "bits: integer scores must fit in 64 bits (write larger ones as decimals)"))
            elif not math.isfinite(v):
                out.append(Problem("score-not-finite", ptr + pointer(cid), f"score {v!r} is not a finite number"))
    if not out:
        out.append(Problem("wrong-type", "", "not a score document"))
    return out


# ---- line score files -----------------------------------------------------------------------------------
# One score per data line, in the data's order (what SMN/DAM/MSN write for the Douban-style TSV files), either
# ``score`` or DAM's ``score<TAB>label``. Pointers are the 0-based line (``/<line - 1>``), messages give the line.

MAX_SCORE_LINE = 1024
"""Bytes in one score line (a number, a tab, a label): a longer line is refused without being held."""
_SUBMITTED_LABELS = {b"0": 0, b"1": 1, b"0.0": 0, b"1.0": 1}


def first_byte(path: str | Path) -> bytes:
    """The first byte after any BOM and whitespace (``{``: JSON scores); b"" when the file cannot say."""
    try:
        with open_input(path, what="a score file") as f:
            return f.file.read(SNIFF_BYTES).lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
    except (UnreadableInput, OSError):  # the line reader then reports the file as the submission's problem
        return b""


def count_lines(path: str | Path) -> int:
    """Lines in a file, counted without holding one."""
    return sum(1 for _, line, _ in iter_bounded_lines(path, 0, what="a file") if line is None)


def read_line_scores(path: str | Path, n_lines: int, *, shown: str | None = None
                     ) -> tuple[np.ndarray | None, np.ndarray | None, list[Problem]]:
    """``(scores, labels or None, faults)`` of a line score file that answers ``n_lines`` data lines: a file of the
    right size is read whole and parsed in one pass; any problem, or a larger file, is read line by line."""
    with open_input(path, what="a score file", shown=shown) as f:
        raw = f.read() if f.size is not None and f.size <= n_lines * 64 + 4096 else b""
    if raw and sniff(raw[:SNIFF_BYTES]) is None:
        lines = raw.split(b"\n")
        while lines and not lines[-1].strip():
            lines.pop()
        try:
            if len(lines) == n_lines and b"\t" not in raw:
                scores = np.array([float(x) for x in lines], np.float64)
                labels = None
            elif len(lines) == n_lines:
                pairs = [ln.split(b"\t") for ln in lines]
                scores = np.array([float(x) for x, _ in pairs], np.float64)
                labels = np.array([_SUBMITTED_LABELS[y.strip()] for _, y in pairs], np.int8)
            else:
                raise ValueError
            if np.isfinite(scores).all():
                return scores, labels, []
        except (ValueError, KeyError):  # a bad line, a third field: found and named line by line
            pass
    return _scores_line_by_line(path, n_lines, shown)


def _scores_line_by_line(path: str | Path, n_lines: int, shown: str | None
                         ) -> tuple[np.ndarray | None, np.ndarray | None, list[Problem]]:
    """``(scores, labels or None, faults)`` of a line score file that answers ``n_lines`` data lines.

    Every line is ``score`` or ``score<TAB>label`` (the form of the first line); a score is a finite number in
    Python's float syntax, a label ``0``/``1`` (``0.0``/``1.0`` as some scripts print them). Blank lines at the
    end are ignored. Lines past ``n_lines`` are counted, not parsed.
    """
    faults = Capped()
    scores = np.zeros(n_lines, np.float64)
    labels = np.zeros(n_lines, np.int8)
    width = None
    lines = blank = 0
    for lineno, line, length in iter_bounded_lines(path, MAX_SCORE_LINE, what="a score file", shown=shown,
                                                   expect="one score per line", bom_ok=True):
        if line is not None and not line.strip():
            blank = blank or lineno
            continue
        if blank:
            faults.append(Problem("wrong-shape", f"/{blank - 1}", f"line {blank}: empty line; expected a score"))
            blank = 0
        lines += 1
        if lines > n_lines:
            continue
        where = f"line {lineno}"
        if line is None:
            faults.append(Problem("wrong-shape", f"/{lineno - 1}", f"{where}: {length:,} bytes; a score line is at "
                                f"most {MAX_SCORE_LINE}"))
            continue
        cells = line.split(b"\t")
        width = width or len(cells)
        if len(cells) != width or width > 2:
            faults.append(Problem("wrong-shape", f"/{lineno - 1}", f"{where}: {len(cells)} fields, expected "
                                f"{'score<TAB>label' if width == 2 else 'one score'} as on line 1"))
            continue
        try:
            v = float(cells[0])
        except ValueError:
            text = short(cells[0].decode("utf-8", "replace"), 40)
            faults.append(Problem("score-not-number", f"/{lineno - 1}", f"{where}: {text} is not a number"))
            continue
        if not math.isfinite(v):
            faults.append(Problem("score-not-finite", f"/{lineno - 1}", f"{where}: score {v!r} is not a finite number"))
        scores[lines - 1] = v
        if width == 2:
            label = _SUBMITTED_LABELS.get(cells[1].strip())
            if label is None:
                text = short(cells[1].decode("utf-8", "replace"), 20)
                faults.append(Problem("bad-label", f"/{lineno - 1}", f"{where}: label {text} is not 0 or 1"))
            else:
                labels[lines - 1] = label
    if lines != n_lines:
        what = "empty" if not lines else f"{lines:,} score line{'s' if lines != 1 else ''}"
        faults.append(Problem("empty-file" if not lines else "wrong-shape", "", f"{what}, but the data has "
                            f"{n_lines:,} lines (one score per data line, in the data's order)"))
    listed = faults.close()
    if listed:
        return None, None, listed
    return scores, (labels if width == 2 else None), []
