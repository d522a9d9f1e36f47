"""AirDialogue files: a split's ``<split>_data.json`` and ``<split>_kb.json`` (JSON lines, aligned by line).

Data line: ``{"intent": {...}, "expected_action": {"name": str, "flight": [int], "status": str}, "action": ...,
"dialogue": [str], ...}``; KB line: ``{"kb": [30 flights], "reservation": int}``, a flight holding the 12
features and ``flight_number``. The release's names and layout; nothing else is assumed (other keys are
skipped without being materialised).

Readers here decode straight into typed msgspec structs, line by line in blocks, and turn each block of KB
lines into numpy columns (:class:`~dialeval.metrics.airdialogue.KBArrays` is built by the benchmark from
:class:`KBColumns`) so a 40,000-line split never exists as Python dicts. Data errors raise
:class:`~dialeval.errors.UsageError` with ``file line N``; a prediction file is only split into lines here
(checking it produces Problems, which live above this layer).
"""

from __future__ import annotations

import operator
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path

import msgspec

from dialeval.errors import UsageError

DATA_SUFFIX = "_data.json"
KB_SUFFIX = "_kb.json"
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "June", "July", "Aug", "Sept", "Oct", "Nov", "Dec")
_MONTH_INDEX = {m: i + 1 for i, m in enumerate(MONTHS)}
AIRLINE_COST = {"UA": 0, "AA": 0, "Delta": 0, "Hawaiian": 0, "Southwest": 1, "Frontier": 1, "JetBlue": 1, "Spirit": 1}
BLOCK = 2048  # lines decoded before a block is turned into columns (bounds the Python objects alive at once)


class Flight(msgspec.Struct):
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


class KBLine(msgspec.Struct):
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
    names = {n for n in names if (d / f"{n}{KB_SUFFIX}").is_file()}
    order = {"train": 0, "dev": 1, "test": 2}
    return sorted(names, key=lambda n: (order.get(n, 3), n))


def iter_raw_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """``(1-based line number, bytes without the newline)``; a final newline does not make an extra line."""
    try:
        fh = open(path, "rb")
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{path}: is a directory, expected a JSON-lines file") from None
    except PermissionError:
        raise UsageError(f"{path}: permission denied") from None
    with fh:
        for i, line in enumerate(fh, 1):
            if line.endswith(b"\n"):
                line = line[:-1]
            if line.endswith(b"\r"):
                line = line[:-1]
            yield i, line


def _decode_error(path: Path, lineno: int, line: bytes, e: Exception) -> UsageError:
    if not line.strip():
        return UsageError(f"{path.name} line {lineno}: blank line (lines of the two files must align)")
    text = str(e).replace("`", "")
    return UsageError(f"{path.name} line {lineno}: {text[:200]}")


def decode_lines(path: Path, typ) -> Iterator[tuple[int, object]]:
    """Typed decoding of every line; a blank or malformed line is a UsageError naming the line."""
    dec = msgspec.json.Decoder(typ)
    for lineno, line in iter_raw_lines(path):
        try:
            yield lineno, dec.decode(line)
        except (msgspec.MsgspecError, ValueError) as e:
            raise _decode_error(path, lineno, line, e) from None


@dataclass
class KBColumns:
    """KB features as flat per-flight lists plus per-line flight counts (numpy conversion is the caller's)."""

    counts: list[int] = field(default_factory=list)
    reservation: list[int] = field(default_factory=list)
    columns: dict[str, list] = field(default_factory=dict)


_GETTERS = {
    "a1": operator.attrgetter("departure_airport"),
    "a2": operator.attrgetter("return_airport"),
    "m1": operator.attrgetter("departure_month"),
    "m2": operator.attrgetter("return_month"),
    "d1": operator.attrgetter("departure_day"),
    "d2": operator.attrgetter("return_day"),
    "t1": operator.attrgetter("departure_time_num"),
    "t2": operator.attrgetter("return_time_num"),
    "cl": operator.attrgetter("class_"),
    "pr": operator.attrgetter("price"),
    "cn": operator.attrgetter("num_connections"),
    "al": operator.attrgetter("airline"),
    "number": operator.attrgetter("flight_number"),
}


def read_kb_blocks(path: Path) -> Iterator[tuple[int, list[KBLine]]]:
    """Blocks of decoded KB lines: ``(first line number, lines)``."""
    block: list[KBLine] = []
    first = 1
    for lineno, obj in decode_lines(path, KBLine):
        if not block:
            first = lineno
        block.append(obj)
        if len(block) >= BLOCK:
            yield first, block
            block = []
    if block:
        yield first, block


def kb_block_columns(path: Path, first: int, block: list[KBLine]):
    """One block's flights as flat lists (months as 1-12, days as int, airline as its cost class)."""
    flights = list(chain.from_iterable(map(operator.attrgetter("kb"), block)))
    counts = list(map(len, map(operator.attrgetter("kb"), block)))
    cols = {k: list(map(g, flights)) for k, g in _GETTERS.items()}
    try:
        cols["m1"] = list(map(_MONTH_INDEX.__getitem__, cols["m1"]))
        cols["m2"] = list(map(_MONTH_INDEX.__getitem__, cols["m2"]))
        cols["al"] = list(map(AIRLINE_COST.__getitem__, cols["al"]))
        cols["d1"] = list(map(int, cols["d1"]))
        cols["d2"] = list(map(int, cols["d2"]))
    except (KeyError, ValueError):
        raise UsageError(_locate_bad_value(path, first, block)) from None
    reservation = [kb.reservation for kb in block]
    return counts, reservation, cols


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
    return names, flights, statuses, dialogues


def read_human(path: Path) -> list[HumanLine]:
    """Every data line's gold, the human agent's own ``action`` and ``correct_sample`` (the ``human`` task)."""
    return [obj for _, obj in decode_lines(path, HumanLine)]


def read_json_lines(path: Path) -> list[dict]:
    """Generic decoding (dicts) of every line: for small files and the tools (simulator, baselines)."""
    return [obj for _, obj in decode_lines(path, dict)]


def write_json_lines(path: Path, rows) -> None:
    """One compact JSON object per line, keys in insertion order, written atomically."""
    from dialeval.formats.jsonio import atomic_writer

    enc = msgspec.json.Encoder()
    with atomic_writer(path, "wb") as fh:
        for r in rows:
            fh.write(enc.encode(r))
            fh.write(b"\n")
