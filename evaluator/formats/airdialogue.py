"""AirDialogue files: a split's ``<split>_data.json`` and ``<split>_kb.json`` (JSON lines, aligned by line).

Data line: ``{"intent": {...}, "expected_action": {"name": str, "flight": [int], "status": str}, "action": ...,
"dialogue": [str], ...}``; KB line: ``{"kb": [30 flights], "reservation": int}``, a flight holding the 12
features and ``flight_number``. The release's names and layout; nothing else is assumed (other keys are
skipped without being materialised).

Readers here decode straight into typed msgspec structs, line by line in blocks, and turn each block of KB
lines into numpy columns (:class:`KBArrays`, :func:`iter_kb_blocks`) so a 40,000-line split never exists as Python
dicts. Data errors raise :class:`~dialeval.core.errors.UsageError` with ``file line N``; a prediction file is only
split into lines here (:mod:`dialeval.formats.airdialogue_predictions` checks and reads it).
"""

from __future__ import annotations

import operator
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import chain, count
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from dialeval.core.errors import UsageError
from dialeval.files import read

DATA_SUFFIX = "_data.json"
KB_SUFFIX = "_kb.json"
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "June", "July", "Aug", "Sept", "Oct", "Nov", "Dec")
_MONTH_INDEX = {m: i + 1 for i, m in enumerate(MONTHS)}
AIRLINE_COST = {"UA": 0, "AA": 0, "Delta": 0, "Hawaiian": 0, "Southwest": 1, "Frontier": 1, "JetBlue": 1, "Spirit": 1}
STATUSES = ("book", "change", "cancel", "no_flight", "no_reservation")
"""The five gold statuses, in the order used by the numeric ``gold-status`` code."""
FEATURES = ("a1", "a2", "m1", "m2", "d1", "d2", "t1", "t2", "cl", "pr", "cn", "al")
"""The 12 flight features in the toolkit's token order (departure/return airport, month, day, hour, class,
price, connections, airline cost class)."""
# Prediction flight kinds (after the reader resolved the flight list against the line's KB).
EMPTY, IN_KB, INVALID = 0, 1, 2
"""``EMPTY``: no flight; ``IN_KB``: exactly one flight, found in the KB (``pred_index`` is its column);
``INVALID``: several flights, a flight outside the KB, or the toolkit's ``<unk>`` fill-in: 0 everywhere."""
CHUNK_CELLS = 4096 * 32
"""(item, gold flight) pairs x KB flights computed at once: the distance temporaries stay a few MB each whatever the
KB's width (4,096 pairs of 30-flight KBs; 131 pairs of 1,000-flight ones)."""
BLOCK = 2048  # lines decoded before a block is turned into columns (bounds the Python objects alive at once)
BLOCK_CELLS = BLOCK * 32
"""A block also ends before (lines x its widest KB) passes this: the block's arrays are padded to its widest KB,
so one wide line must not widen two thousand others (with 30-flight KBs the line count decides)."""


class Flight(msgspec.Struct, gc=False):
    departure_airport: str
    return_airport: str
    departure_month: str
    return_month: str
    departure_day: str | int
    return_day: str | int
    departure_time_num: int
    return_time_num: int
    class_: str = msgspec.field(name="class")
    price: int
    num_connections: int
    airline: str
    flight_number: int


@dataclass
class KBArrays:
    """One row per item, one column per KB flight (``valid`` is False in padding columns).

    All int64. Airports and class are codes of their strings (only compared for equality); months are 1-12,
    days and hours as numbers, ``al`` the airline's cost class (0 normal, 1 low).
    """

    a1: np.ndarray
    a2: np.ndarray
    m1: np.ndarray
    m2: np.ndarray
    d1: np.ndarray
    d2: np.ndarray
    t1: np.ndarray
    t2: np.ndarray
    cl: np.ndarray
    pr: np.ndarray
    cn: np.ndarray
    al: np.ndarray
    number: np.ndarray  # int64 flight numbers, -1 in padding
    valid: np.ndarray  # bool
    reservation: np.ndarray  # int64 per item (0 = none)

    def __len__(self) -> int:
        return int(self.number.shape[0])

    def take(self, rows) -> KBArrays:
        return KBArrays(**{k: getattr(self, k)[rows] for k in self.__dataclass_fields__})


class KBLine(msgspec.Struct, gc=False):
    kb: list[Flight]
    reservation: int = 0


class Action(msgspec.Struct):
    name: str
    flight: list[int]
    status: str


class GoldLine(msgspec.Struct):
    expected_action: Action


class GoldDialogueLine(msgspec.Struct):
    expected_action: Action
    dialogue: list[str] = []


class InferLine(msgspec.Struct):
    """What response generation reads of a data line (the rest is skipped without being materialised)."""

    dialogue: list[str] | None = None
    correct_sample: Any = True


class HumanLine(msgspec.Struct):
    expected_action: Action
    action: dict | None = None
    correct_sample: bool | None = None


def split_paths(data_dir: Path, split: str) -> tuple[Path, Path]:
    return Path(data_dir) / f"{split}{DATA_SUFFIX}", Path(data_dir) / f"{split}{KB_SUFFIX}"


def available_splits(data_dir: Path) -> list[str]:
    """Splits with both files in ``data_dir`` (train, dev, test first, then others alphabetically)."""
    d = Path(data_dir)
    if not d.is_dir():
        raise UsageError(f"{d}: not a directory")
    names = {p.name[: -len(DATA_SUFFIX)] for p in d.glob(f"*{DATA_SUFFIX}")}
    # exists(), not is_file(): a KB that is a FIFO or a device is then refused by name when it is read
    names = {n for n in names if (d / f"{n}{KB_SUFFIX}").exists()}
    order = {"train": 0, "dev": 1, "test": 2}
    return sorted(names, key=lambda n: (order.get(n, 3), n))


MAX_DATA_LINE_BYTES = 16 * 1024**2
"""The longest line of a data or KB file (the release's are a few KB): a longer one is a data error (exit 2), so a
single line never costs more than this before it is even decoded."""
MAX_FLIGHTS = 1000
"""The most flights a KB line, or a gold ``expected_action.flight`` list, may hold (the release has 30 per KB).
Scoring holds each block of KB lines as (lines x widest KB) arrays; this bound keeps that, and the flight
distances over it, small whatever the file."""
_INT64 = (-(2**63), 2**63)


def iter_raw_lines(path: Path, max_line: int = MAX_DATA_LINE_BYTES, what: str = "a JSON-lines file"
                   ) -> Iterator[tuple[int, bytes | None, int]]:
    """``(1-based line number, bytes without the newline or None when longer than max_line, length)``, streamed
    through :mod:`dialeval.files.read` (only regular files; BOM, UTF-16, compressed and binary files are
    refused with a problem code before the first line)."""
    return read.iter_bounded_lines(path, max_line, what=what, expect="JSON lines")


def _decode_error(path: Path, lineno: int, line: bytes, e: Exception) -> UsageError:
    """What is wrong with a data line, in our words (msgspec's own, "Input data was truncated" or "Expected
    `object`, got `array` - at `$.kb[0]`", are the library's)."""
    from dialeval.core.errors import UnreadableJSON
    from dialeval.formats.jsonio import _msgspec_path, parse_json_bytes

    where = f"{path.name} line {lineno}"
    if not line.strip():
        return UsageError(f"{where}: blank line (lines of the two files must align)")
    if isinstance(e, msgspec.ValidationError):
        wrong = "a required field is missing" if "missing required field" in str(e) else "a value has the wrong type"
        return UsageError(f"{where}: not an AirDialogue {'KB' if path.name.endswith(KB_SUFFIX) else 'data'} line "
                          f"({wrong} at {_msgspec_path(str(e))[:100]})")
    try:
        parse_json_bytes(line, where)
    except UnreadableJSON as u:
        reason = u.reason.replace(" at line 1 column ", " at column ").replace("the file ends", "the line ends")
        return UsageError(f"{where}: {reason}")
    except RecursionError:
        pass
    return UsageError(f"{where}: not a readable JSON line")


def decode_lines(path: Path, typ) -> Iterator[tuple[int, object]]:
    """Typed decoding of every line of a data file; a blank, malformed or overlong line is a UsageError naming
    the line (organizer data: exit 2)."""
    dec = msgspec.json.Decoder(typ)
    for lineno, line, length in iter_raw_lines(path):
        if line is None:
            raise UsageError(f"{path.name} line {lineno}: {length} bytes, longer than the limit of "
                             f"{MAX_DATA_LINE_BYTES} bytes for a line of AirDialogue data")
        try:
            yield lineno, dec.decode(line)
        except (msgspec.MsgspecError, ValueError, RecursionError) as e:
            raise _decode_error(path, lineno, line, e) from None


COLUMN_NAMES = (*FEATURES, "number")
_FLIGHT_TUPLE = operator.attrgetter(
    "departure_airport", "return_airport", "departure_month", "return_month", "departure_day", "return_day",
    "departure_time_num", "return_time_num", "class_", "price", "num_connections", "airline", "flight_number")
_DAY = {**{str(i): i for i in range(1, 32)}, **{i: i for i in range(1, 32)}}


def read_kb_blocks(path: Path) -> Iterator[tuple[int, list[KBLine]]]:
    """Blocks of decoded KB lines: ``(first line number, lines)``, at most :data:`BLOCK` lines and
    :data:`BLOCK_CELLS` (lines x widest KB) each; a KB of more than :data:`MAX_FLIGHTS` flights or a reservation
    past 64 bits is a data error naming its line."""
    block: list[KBLine] = []
    first = 1
    width = 0
    for lineno, obj in decode_lines(path, KBLine):
        k = len(obj.kb)
        if k > MAX_FLIGHTS:
            raise UsageError(f"{path.name} line {lineno}: a KB of {k} flights; at most {MAX_FLIGHTS} are read "
                             "(the release has 30)")
        if not _INT64[0] <= obj.reservation < _INT64[1]:
            raise UsageError(f"{path.name} line {lineno}: reservation is not a 64-bit integer")
        if block and (len(block) + 1) * max(width, k) > BLOCK_CELLS:
            yield first, block
            block = []
        if not block:
            first = lineno
            width = 0
        block.append(obj)
        width = max(width, k)
        if len(block) >= BLOCK:
            yield first, block
            block = []
    if block:
        yield first, block


def string_codes() -> dict:
    """A dict giving every new string the next integer (C-level through ``defaultdict``): equal codes = equal
    strings, so airports and classes are compared as integers."""
    return defaultdict(count().__next__)


def kb_block_columns(path: Path, first: int, block: list[KBLine], codes: dict | None = None):
    """One block's flights as flat int64 columns: months 1-12, days as numbers, airline as its cost class
    (0 normal, 1 low), airports and class as codes from ``codes`` (shared across blocks).

    One C-level attribute getter per flight, a transpose and ``np.fromiter`` over C-level maps: no Python code
    runs per flight feature.
    """
    codes = string_codes() if codes is None else codes
    kbs = list(map(operator.attrgetter("kb"), block))
    counts = list(map(len, kbs))
    rows = list(map(_FLIGHT_TUPLE, chain.from_iterable(kbs)))
    n = len(rows)
    cols = dict(zip(COLUMN_NAMES, zip(*rows))) if rows else {k: () for k in COLUMN_NAMES}
    del rows
    maps = {"a1": codes.__getitem__, "a2": codes.__getitem__, "cl": codes.__getitem__,
            "m1": _MONTH_INDEX.__getitem__, "m2": _MONTH_INDEX.__getitem__, "al": AIRLINE_COST.__getitem__,
            "d1": _DAY.__getitem__, "d2": _DAY.__getitem__}
    out = {}
    for k, v in cols.items():
        f = maps.get(k)
        try:
            out[k] = np.fromiter(v if f is None else map(f, v), np.int64, count=n)
        except KeyError:
            if k in ("d1", "d2"):  # a day spelt otherwise ("07"): the slow path
                try:
                    out[k] = np.fromiter(map(int, v), np.int64, count=n)
                    continue
                except ValueError:
                    pass
                except OverflowError:
                    raise UsageError(f"{path.name}: a number from line {first} on does not fit in 64 bits") from None
            raise UsageError(_locate_bad_value(path, first, block)) from None
        except OverflowError:
            raise UsageError(f"{path.name}: a number from line {first} on does not fit in 64 bits") from None
    reservation = [kb.reservation for kb in block]
    return counts, reservation, out


def _locate_bad_value(path: Path, first: int, block: list[KBLine]) -> str:
    """Which line holds an unknown month, airline or a non-numeric day (the slow path, only on error)."""
    for i, line in enumerate(block):
        for j, f in enumerate(line.kb):
            for what, v, ok in (
                ("departure_month", f.departure_month, f.departure_month in _MONTH_INDEX),
                ("return_month", f.return_month, f.return_month in _MONTH_INDEX),
                ("airline", f.airline, f.airline in AIRLINE_COST),
                ("departure_day", f.departure_day, str(f.departure_day).strip().lstrip("-").isdigit()),
                ("return_day", f.return_day, str(f.return_day).strip().lstrip("-").isdigit()),
            ):
                if not ok:
                    return f"{path.name} line {first + i}: kb[{j}].{what} has an unknown value {str(v)[:30]!r}"
    return f"{path.name}: unreadable KB block from line {first}"


def read_gold(path: Path, with_dialogue: bool = False) -> tuple[list[str], list[list[int]], list[str], list | None]:
    """(names, gold flight lists, statuses, dialogues or None) of every data line."""
    names: list[str] = []
    flights: list[list[int]] = []
    statuses: list[str] = []
    dialogues: list | None = [] if with_dialogue else None
    for _, obj in decode_lines(path, GoldDialogueLine if with_dialogue else GoldLine):
        a = obj.expected_action
        names.append(a.name)
        flights.append(a.flight)
        statuses.append(a.status)
        if dialogues is not None:
            dialogues.append(obj.dialogue)
    check_gold_flights(path, flights)
    return names, flights, statuses, dialogues


def check_gold_flights(path: Path, flights: list[list[int]]) -> None:
    """Gold flight lists are data: one of more than :data:`MAX_FLIGHTS` flights or a number past 64 bits is a data
    error (exit 2). The message names the line, never the number (gold flights are the answer key).

    One C-level pass over all lines (lengths, then every number into int64); lines are looked at one by one only
    to name the faulty one."""
    if not flights:
        return
    if max(map(len, flights)) > MAX_FLIGHTS:
        i = next(i for i, fl in enumerate(flights) if len(fl) > MAX_FLIGHTS)
        raise UsageError(f"{path.name} line {i + 1}: expected_action.flight lists {len(flights[i])} flights; at "
                         f"most {MAX_FLIGHTS} are read")
    try:
        np.fromiter(chain.from_iterable(flights), np.int64)
    except OverflowError:
        lo, hi = _INT64
        i = next(i for i, fl in enumerate(flights) if not all(lo <= f < hi for f in fl))
        raise UsageError(f"{path.name} line {i + 1}: expected_action.flight holds a number that is not a 64-bit "
                         "integer (a flight number of the line's KB)") from None


def read_human(path: Path) -> list[HumanLine]:
    """Every data line's gold, the human agent's own ``action`` and ``correct_sample`` (the ``human`` task)."""
    out = [obj for _, obj in decode_lines(path, HumanLine)]
    check_gold_flights(path, [h.expected_action.flight for h in out])
    return out


def iter_kb_blocks(path: Path):
    """``(0-based index of the block's first line, KBArrays of the block)`` for blocks of KB lines.

    Scoring runs block by block, so the split's KB never exists whole: at most one block of structs and its
    numpy columns are alive. The cyclic GC is paused while a block is decoded (the structs hold no cycles, and
    millions of allocations would otherwise trigger it over and over).
    """
    import gc

    codes = string_codes()
    blocks = read_kb_blocks(path)
    while True:
        enabled = gc.isenabled()
        gc.disable()
        try:
            item = next(blocks, None)
            if item is None:
                return
            first, block = item
            counts, reservation, cols = kb_block_columns(path, first, block, codes)
            del block, item
        finally:
            if enabled:
                gc.enable()
        yield first - 1, _block_arrays(counts, reservation, cols)


def _block_arrays(counts: list[int], reservation: list[int], cols: dict[str, np.ndarray]) -> KBArrays:
    n = len(counts)
    kmax = max(counts) if counts else 0
    cnt = np.asarray(counts, np.int64)
    uniform = n == 0 or bool((cnt == kmax).all())
    valid = np.ones((n, kmax), bool) if uniform else np.arange(kmax)[None, :] < cnt[:, None]

    def shape(arr, fill):
        if uniform:
            return arr.reshape(n, kmax)
        out = np.full((n, kmax), fill, dtype=arr.dtype)
        out[valid] = arr
        return out

    out = {k: shape(cols[k], -1 if k in ("a1", "a2", "cl") else 0) for k in FEATURES}
    return KBArrays(**out, number=shape(cols["number"], -1), valid=valid, reservation=np.asarray(reservation, np.int64))


def _pad(kb: KBArrays, kmax: int) -> KBArrays:
    k = kb.number.shape[1] if kb.number.ndim == 2 else 0
    if k == kmax:
        return kb
    fields = {}
    for name in kb.__dataclass_fields__:
        a = getattr(kb, name)
        if name == "reservation":
            fields[name] = a
            continue
        fill = False if name == "valid" else (-1 if name in ("a1", "a2", "cl", "number") else 0)
        out = np.full((a.shape[0], kmax), fill, dtype=a.dtype)
        out[:, :k] = a
        fields[name] = out
    return KBArrays(**fields)


def read_kb_arrays(path: Path) -> KBArrays:
    """The whole KB file as (items × flights) columns (for tools and tests; scoring streams the blocks)."""
    blocks = [kb for _, kb in iter_kb_blocks(path)]
    if not blocks:
        return _block_arrays([], [], {k: np.empty(0, np.int64) for k in COLUMN_NAMES})
    kmax = max(b.number.shape[1] for b in blocks)
    blocks = [_pad(b, kmax) for b in blocks]
    return KBArrays(**{k: np.concatenate([getattr(b, k) for b in blocks]) for k in KBArrays.__dataclass_fields__})


def gold_columns(kb: KBArrays, gold_flights: list[list[int]], data_name: str, offset: int = 0) -> list[list[int]]:
    """KB columns of each item's gold flights; a gold flight missing from its KB is a data error."""
    n_gold = np.fromiter(map(len, gold_flights), np.int64, count=len(gold_flights))
    owner = np.repeat(np.arange(len(gold_flights)), n_gold)
    flat = np.fromiter((f for fl in gold_flights for f in fl), np.int64, count=int(n_gold.sum()))
    # (pairs x KB width) at a time, in chunks of at most CHUNK_CELLS cells
    step = max(1, CHUNK_CELLS // max(1, kb.number.shape[1] if kb.number.ndim == 2 else 1))
    parts = []
    for s in range(0, len(flat), step):
        o = owner[s : s + step]
        eq = (kb.number[o] == flat[s : s + step, None]) & kb.valid[o]
        found = eq.any(axis=1)
        if not found.all():
            bad = int(o[~found][0]) + offset
            raise UsageError(f"{data_name} line {bad + 1}: a gold flight of expected_action is not in the line's KB")
        parts.append(eq.argmax(axis=1))
    cols = np.concatenate(parts).tolist() if parts else []
    out: list[list[int]] = []
    pos = 0
    for k in n_gold.tolist():
        out.append(cols[pos : pos + k])
        pos += k
    return out


def read_json_lines(path: Path) -> list[dict]:
    """Generic decoding (dicts) of every line: for small files and the tools (simulator, baselines)."""
    return [obj for _, obj in decode_lines(path, dict)]


def write_json_lines(path: Path, rows) -> None:
    """One compact JSON object per line, keys in insertion order, written atomically."""
    from dialeval.files.write import atomic_writer

    enc = msgspec.json.Encoder()
    with atomic_writer(path, "wb") as fh:
        for r in rows:
            fh.write(enc.encode(r))
            fh.write(b"\n")
