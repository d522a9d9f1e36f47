"""AirDialogue prediction files: checked line by line (strict) or read as the toolkit reads them (lenient).

A submission is JSON lines, one per data line in the same order,
``{"action": {"name": str, "flight": [int], "status": str}}`` with an optional ``"id"`` (the 0-based line
number; if present it must match) and an optional ``"dialogue"`` (self-play: a list of "speaker: text" turns).

Strict (:func:`read_strict`): a line-count mismatch, blank or non-JSON lines, wrong types, a status outside the five
values and missing keys are errors, each reported with its line (pointer ``/<0-based line>/...``, message
"line N"). A flight outside the KB or several flights are wrong answers: valid and scored 0, as the toolkit scores
them; so is a flight number past 64 bits (no KB holds one), while an integer literal of more than 4,300 digits
cannot be read at all (``wrong-type``). A line longer than :data:`MAX_LINE_BYTES` is ``line-too-long``; a file that
is not UTF-8 JSON lines (BOM, UTF-16, gzip, binary) or is empty is one problem (``bad-encoding``,
``wrong-file-type``, ``empty-file``). At most :data:`PROBLEMS_PER_CODE` problems are kept per code, then one line
without a code counts the rest (the shared cap, :class:`~dialeval.core.problems.Capped`). Lenient
(:func:`read_lenient`): the toolkit's reading of whatever it accepts (its fill-ins for missing fields, unknown
statuses as mismatches, extra or missing lines dropped), each quirk listed as a warning; where the toolkit
crashes, an ``official-crash`` error. :func:`read_human_actions` reads the data file's own ``action`` fields the
same two ways (the toolkit's ``--task human``).
"""

from __future__ import annotations

import re
from pathlib import Path

import msgspec
import numpy as np

from dialeval.core.errors import UnreadableInput, UsageError
from dialeval.core.problems import Capped, Problem, counted, json_type, pointer, short
from dialeval.formats.airdialogue import (
    EMPTY,
    IN_KB,
    INVALID,
    STATUSES,
    KBArrays,
    gold_columns,
    iter_kb_blocks,
    iter_raw_lines,
)

QUIRK_LIST_LIMIT = 20  # per quirk kind; the count of the rest is added to the last one listed
PROBLEMS_PER_CODE = 1000
"""Problems kept per code (strict mode, and --lenient crashes): a file of a million bad lines is reported with
the first thousand of each kind and their total, so memory follows the file's kinds of faults, not its size."""
MAX_LINE_BYTES = 1024**2
"""The longest prediction line read (a state and, for self-play, its dialogue: a few KB). A longer line is the
submission's fault, ``line-too-long`` (exit 1), and is never held whole."""
PREDICTION_FILE = "a JSON-lines prediction file"


class _FastAction(msgspec.Struct, forbid_unknown_fields=True):
    name: str
    flight: list[int]
    status: str


class _FastLine(msgspec.Struct, forbid_unknown_fields=True):
    action: _FastAction
    id: int | msgspec.UnsetType = msgspec.UNSET
    dialogue: list[str] | msgspec.UnsetType = msgspec.UNSET


_FAST = msgspec.json.Decoder(_FastLine)
_STATUS_SET = frozenset(STATUSES)
_LINE_KEYS = ("action", "id", "dialogue")
_ACTION_KEYS = ("name", "flight", "status")


_SEVERAL = [None, None]  # several flights (strict): always INVALID
_SEVERAL_TOK = ("unk",)  # several flights (lenient): the toolkit's joined string matches no flight either


def _capped(file: str) -> Capped:
    """The shared per-code cap at :data:`PROBLEMS_PER_CODE`; its closing line (how many more, by code) names the file."""
    return Capped(PROBLEMS_PER_CODE, file=file)


class Predictions:
    """Predictions of the scored lines: name, flight (as raw numbers or the toolkit's strings), status."""

    def __init__(self):
        self.names: list[str] = []
        self.flights: list = []  # list[int] (strict) or ("tok", [str...]) / ("unk",) (lenient)
        self.statuses: list[str] = []
        self.dialogues: list = []  # list[str] or None

    def add(self, name, flight, status, dialogue=None):
        # Only an empty or one-flight answer can score: several flights are kept as one shared marker, so a
        # line listing 100,000 flights costs nothing once read.
        if isinstance(flight, list):
            flight = flight if len(flight) <= 1 else _SEVERAL
        elif flight[0] == "tok" and len(flight[1]) > 1:
            flight = _SEVERAL_TOK
        self.names.append(name)
        self.flights.append(flight)
        self.statuses.append(status)
        self.dialogues.append(dialogue)


def _strict_check(obj, idx: int, file: str, problems: list[Problem]):
    """Check one decoded line; return (name, flights, status, dialogue) or None when it has errors."""
    line = idx + 1
    ok = True

    def err(code, ptr, msg, severity="error"):
        nonlocal ok
        problems.append(Problem(code, ptr, f"line {line}: {msg}", severity, file))
        if severity == "error":
            ok = False

    base = f"/{idx}"
    if not isinstance(obj, dict):
        err("item-not-object", base, f"each line must be a JSON object, got {_a(json_type(obj))}")
        return None
    for k in obj:
        if k not in _LINE_KEYS:
            err("unknown-key", base + pointer(k), f"unknown key {short(k)} (ignored)", "warning")
    if "id" in obj:
        v = obj["id"]
        if not isinstance(v, int) or isinstance(v, bool):
            err("wrong-type", f"{base}/id", f"id must be an integer (the 0-based line number), got {_a(json_type(v))}")
        elif v != idx:
            err("id-mismatch", f"{base}/id", f"id {_num(v)} does not match the line's position (expected {idx})")
    dialogue = obj.get("dialogue")
    if "dialogue" in obj and not (isinstance(dialogue, list) and all(isinstance(t, str) for t in dialogue)):
        err("wrong-type", f"{base}/dialogue", "dialogue must be an array of strings")
    if "action" not in obj:
        err("missing-key", f"{base}/action", 'missing "action" ({"name": ..., "flight": [...], "status": ...})')
        return None
    a = obj["action"]
    if not isinstance(a, dict):
        err("wrong-type", f"{base}/action", f"action must be an object, got {_a(json_type(a))}")
        return None
    for k in a:
        if k not in _ACTION_KEYS:
            err("unknown-key", base + pointer("action", k), f"unknown key {short(k)} (ignored)", "warning")
    for k in _ACTION_KEYS:
        if k not in a:
            err("missing-key", f"{base}/action/{k}", f"action has no {k!r}")
    name, flight, status = a.get("name"), a.get("flight"), a.get("status")
    if "name" in a and not isinstance(name, str):
        err("wrong-type", f"{base}/action/name", f"name must be a string, got {_a(json_type(name))}")
    if "flight" in a:
        if not isinstance(flight, list):
            err("wrong-type", f"{base}/action/flight",
                f"flight must be an array of flight numbers ([] for none), got {_a(json_type(flight))}")
        else:
            bad = [j for j, f in enumerate(flight) if not isinstance(f, int) or isinstance(f, bool)]
            if bad:  # one problem per array, however long
                j = bad[0]
                more = f" (and {len(bad) - 1} more in this array)" if len(bad) > 1 else ""
                err("wrong-type", f"{base}/action/flight/{j}",
                    f"a flight number is an integer, got {_a(json_type(flight[j]))}{more}")
    if "status" in a:
        if not isinstance(status, str):
            err("wrong-type", f"{base}/action/status", f"status must be a string, got {_a(json_type(status))}")
        elif status not in _STATUS_SET:
            err("unknown-status", f"{base}/action/status",
                f"status {short(status)} is not one of {', '.join(STATUSES)}")
    if not ok:
        return None
    return name, flight, status, dialogue


def _num(v: int) -> str:
    """An integer for a message: a long one shortened (Python refuses to print past 4,300 digits)."""
    if -(10**18) < v < 10**18:
        return str(v)
    return f"{'-' if v < 0 else ''}<an integer of about {int(abs(v).bit_length() * 0.30103) + 1} digits>"


def _a(word: str) -> str:
    """``"an integer"``, ``"a string"``."""
    return ("an " if word[:1] in "aeiou" else "a ") + word


def _lines(path: Path, file: str, refused: list[Problem]):
    """The prediction file's lines (see :func:`~dialeval.formats.airdialogue.iter_raw_lines`); a file that is not UTF-8 JSON lines
    (BOM, UTF-16, compressed, binary) is refused before its first line: one problem with the input layer's
    code, appended to ``refused``."""
    try:
        yield from iter_raw_lines(path, MAX_LINE_BYTES, what=PREDICTION_FILE)
    except UnreadableInput as e:
        refused.append(Problem(e.code, "", e.reason, "error", file))


def _too_long(idx: int, length: int, file: str) -> Problem:
    return Problem("line-too-long", f"/{idx}", f"line {idx + 1}: {length} bytes, longer than the limit of "
                   f"{MAX_LINE_BYTES} bytes for one prediction", "error", file)


def _unreadable_number(e: Exception) -> str | None:
    """The JSON pointer (below the line) of an integer literal too long to read, from msgspec's error; else None."""
    text = str(e)
    if "Integer value out of range" not in text:
        return None
    m = re.search(r"at `\$(.*)`", text)
    path = m.group(1) if m else ""
    if "..." in path:  # untyped decoding does not name object keys: point at the line
        return ""
    return "".join("/" + part for part in re.findall(r"[^.\[\]]+", path))


def read_strict(path: Path, n_data: int, file: str, problems: list[Problem]) -> Predictions | None:
    """Every line checked; None when the submission has errors (problems appended, at most
    :data:`PROBLEMS_PER_CODE` per code)."""
    preds = Predictions()
    n_lines = 0
    bad = False
    found = _capped(file)
    refused: list[Problem] = []
    for lineno, raw, length in _lines(path, file, refused):
        idx = lineno - 1
        n_lines = lineno
        if raw is None:
            found.append(_too_long(idx, length, file))
            bad = True
            continue
        fast_error = None
        try:
            fast = _FAST.decode(raw)
        except (msgspec.MsgspecError, ValueError, RecursionError) as e:
            fast, fast_error = None, e
        if fast is not None and fast.action.status in _STATUS_SET and (fast.id is msgspec.UNSET or fast.id == idx):
            a = fast.action
            if not bad:
                preds.add(a.name, a.flight, a.status, None if fast.dialogue is msgspec.UNSET else fast.dialogue)
            continue
        # The full checker explains what the fast path refused.
        if not raw.strip():
            found.append(Problem("blank-line", f"/{idx}", f"line {lineno}: blank line (one prediction per data "
                                 "line, in order)", "error", file))
            bad = True
            continue
        try:
            obj = msgspec.json.decode(raw)
        except (msgspec.MsgspecError, ValueError, RecursionError) as e:
            where = _unreadable_number(e)
            if where == "" and fast_error is not None:  # the typed decoder names the keys on the way
                where = _unreadable_number(fast_error) or ""
            if where is not None:  # valid JSON, but no field holds a number of thousands of digits
                found.append(Problem("wrong-type", f"/{idx}{where}", f"line {lineno}: an integer of more than 4,300 "
                                     "digits (a flight number is at most 64 bits)", "error", file))
            else:
                found.append(Problem("not-json", f"/{idx}", f"line {lineno}: not a JSON value", "error", file))
            bad = True
            continue
        r = _strict_check(obj, idx, file, found)
        if r is None:
            bad = True
        elif not bad:
            preds.add(*r)
    if refused:
        found.append(refused[0])
        bad = True
    elif n_lines == 0 and n_data > 0:
        found.append(Problem("empty-file", "", f"the file is empty; the split has {n_data} data lines (one "
                             "prediction per line, in order)", "error", file))
        bad = True
    elif n_lines != n_data:
        first = min(n_lines, n_data)
        found.append(Problem(
            "line-count", f"/{first}",
            f"the submission has {counted(n_lines, 'line')}, the split has {n_data} data lines (one prediction per data line, "
            f"in order); {'missing from' if n_lines < n_data else 'extra from'} line {first + 1}", "error", file))
        bad = True
    problems.extend(found.close())
    return None if bad else preds


SHOWN_FLIGHTS = 8  # flight strings turned into text for a message (a longer list scores 0 whatever it holds)


def _toolkit_flight_strings(v) -> tuple[int, list[str]] | None:
    """``(how many, the first few)`` of what ``[str(f) for f in o['flight']]`` gives for a truthy value; None where
    iterating it crashes. Only a one-flight answer can score, so a long list is never converted whole."""
    if isinstance(v, list):
        return len(v), [_py_str(x) for x in v[:SHOWN_FLIGHTS]]
    if isinstance(v, str):
        return len(v), list(v[:SHOWN_FLIGHTS])
    if isinstance(v, dict):
        return len(v), [str(k) for _, k in zip(range(SHOWN_FLIGHTS), v)]
    return None


def _py_str(x) -> str:
    """Python's ``str()`` of a decoded JSON value (what the toolkit puts inside ``<fl_...>``)."""
    if isinstance(x, str):
        return x
    return str(x)


class _Quirks:
    """The quirks applied (:data:`QUIRK_LIST_LIMIT` listed per kind, the count of the rest added to the last one
    listed) and the crashes and errors found (:data:`PROBLEMS_PER_CODE` per code)."""

    def __init__(self, file: str):
        self.file = file
        self.seen: dict[str, int] = {}  # quirk kind -> lines it was applied to
        self.last: dict[str, int] = {}  # quirk kind -> index of its last listed warning
        self.problems = _capped(file)  # the crashes and errors are capped; quirks have their own limit

    def add(self, kind: str, ptr: str, msg: str):
        self.seen[kind] = self.seen.get(kind, 0) + 1
        if self.seen[kind] <= QUIRK_LIST_LIMIT:
            self.last[kind] = len(self.problems)
            self.problems.always(Problem("official-quirk", ptr, msg, "warning", self.file))

    def crash(self, ptr: str, msg: str):
        self.problems.append(Problem("official-crash", ptr, msg, "error", self.file))

    def error(self, p: Problem):
        self.problems.append(p)

    def finish(self) -> list[Problem]:
        for kind, n in self.seen.items():
            if n > QUIRK_LIST_LIMIT:
                i = self.last[kind]
                p = self.problems[i]
                self.problems[i] = Problem(p.code, p.pointer, f"{p.message} (and {n - QUIRK_LIST_LIMIT} more lines "
                                           "with this quirk, not listed)", p.severity, p.file)
        return self.problems.close()


def _lenient_object(obj, idx: int, q: _Quirks, preds: Predictions, want_dialogue: bool) -> bool:
    """The toolkit's ``action_obj_to_str`` fill-ins on one line; False where it would crash."""
    line = idx + 1
    base = f"/{idx}"
    if not isinstance(obj, dict):
        q.crash(base, f"line {line}: {_a(json_type(obj))}, not an object: the toolkit crashes on it")
        return False
    if "id" in obj and obj["id"] != idx:
        q.add("id ignored", f"{base}/id", f"line {line}: id does not match the line's position; the toolkit "
              "ignores ids and scores lines by position")
    dialogue = obj.get("dialogue")
    if want_dialogue and not (isinstance(dialogue, list) and all(isinstance(t, str) for t in dialogue)):
        q.crash(f"{base}/dialogue", f"line {line}: no dialogue (array of strings): the toolkit's BLEU crashes")
        return False
    if "action" not in obj:
        q.add("missing action", f"{base}/action", f"line {line}: no action: scored as the toolkit's "
              "'<unk> <unk> <unk> <unk>' (name '<unk> <unk>', a flight matching nothing, status '<unk>')")
        preds.add("<unk> <unk>", ("unk",), "<unk>", dialogue)
        return True
    a = obj["action"]
    if not isinstance(a, dict):
        q.crash(f"{base}/action", f"line {line}: action is {_a(json_type(a))}: the toolkit crashes on it")
        return False
    ok = True
    if "name" not in a:
        q.add("missing name", f"{base}/action/name", f"line {line}: no name: filled in as '<unk> <unk>'")
        name = "<unk> <unk>"
    else:
        name = a["name"]
        if not isinstance(name, str):
            q.crash(f"{base}/action/name", f"line {line}: name is {_a(json_type(name))}: the toolkit crashes")
            ok = False
        elif " " not in name:
            # The toolkit's scorer (character F1) takes it; the model code's exact score (compute_01_score,
            # names split on " ") raises IndexError. Only the prediction is looked at: the gold's shape is secret.
            q.add("one-word name", f"{base}/action/name", f"line {line}: a name without a space: the toolkit's "
                  "score is unaffected, but its model code's exact-name score raises IndexError on it; name-exact "
                  "counts the missing word as a mismatch")
    if "status" not in a:
        q.add("missing status", f"{base}/action/status", f"line {line}: no status: filled in as 'unk' (a mismatch)")
        status = "unk"
    else:
        status = a["status"]
        if not isinstance(status, str):
            q.crash(f"{base}/action/status", f"line {line}: status is {_a(json_type(status))}: the toolkit crashes")
            ok = False
        elif status not in _STATUS_SET:
            q.add("unknown status", f"{base}/action/status",
                  f"line {line}: status {short(status)} is not one of the five values: scored as a mismatch")
    v = a.get("flight")
    if not v:
        if "flight" not in a or v is None or not isinstance(v, list):
            q.add("missing flight", f"{base}/action/flight",
                  f"line {line}: flight is {'missing' if 'flight' not in a else short(v)}: scored as no flight")
        flight = ("tok", [])
    else:
        got = _toolkit_flight_strings(v)
        if got is None:
            q.crash(f"{base}/action/flight", f"line {line}: flight is a bare {json_type(v)}: the toolkit crashes "
                    "iterating over it")
            ok = False
            flight = None
        else:
            n, strs = got
            if not (isinstance(v, list) and all(isinstance(x, int) and not isinstance(x, bool) for x in v)):
                shown = v[:SHOWN_FLIGHTS] if isinstance(v, (list, str)) else strs
                q.add("flight strings", f"{base}/action/flight", f"line {line}: flight {short(shown)} is not an array "
                      "of integers: matched as the toolkit's strings " + short("_".join(f"<fl_{s}>" for s in strs)))
            flight = ("tok", strs) if n <= 1 else _SEVERAL_TOK
    if ok:
        preds.add(name, flight, status, dialogue)
    return ok


def read_lenient(path: Path, n_data: int, file: str, want_dialogue: bool) -> tuple[Predictions, list[Problem], int]:
    """The toolkit's reading: lines zipped with the data (extra or missing lines dropped), fill-ins applied."""
    q = _Quirks(file)
    preds = Predictions()
    n_lines = 0
    crashed = False
    refused: list[Problem] = []
    for lineno, raw, length in _lines(path, file, refused):
        n_lines = lineno
        if lineno > n_data:
            continue  # zip() stops before parsing it
        idx = lineno - 1
        if raw is None:  # the toolkit would read it; dialeval's bound applies in both modes
            q.error(_too_long(idx, length, file))
            crashed = True
            continue
        try:
            obj = msgspec.json.decode(raw)
        except (msgspec.MsgspecError, ValueError, RecursionError) as e:
            if _unreadable_number(e) is not None:
                what = "an integer of more than 4,300 digits, which Python's int refuses"
            else:
                what = "a blank line" if not raw.strip() else "not JSON"
            q.crash(f"/{idx}", f"line {lineno}: {what}: the toolkit's json.loads crashes")
            crashed = True
            continue
        if not _lenient_object(obj, idx, q, preds, want_dialogue):
            crashed = True
    if refused:
        q.error(refused[0])
        crashed = True
    elif n_lines > n_data:
        q.add("extra lines", f"/{n_data}", f"lines {n_data + 1}-{n_lines} have no data line: the toolkit drops them "
              "silently")
    elif n_lines < n_data:
        q.add("missing lines", f"/{n_lines}", f"data lines {n_lines + 1}-{n_data} have no prediction: the toolkit "
              "drops them silently (they do not count in the means)")
    problems = q.finish()
    return (preds if not crashed else None), problems, min(n_lines, n_data)


_INT = re.compile(r"-?[0-9]{1,19}")  # longer cannot be a 64-bit KB number (and int() refuses 4,300+ digits)


def resolve_flights(kb: KBArrays, flights: list) -> tuple[np.ndarray, np.ndarray]:
    """(kind, KB column) per item: EMPTY, IN_KB with its column, or INVALID (several, outside the KB, <unk>)."""
    n = len(flights)
    kind = np.full(n, INVALID, np.int8)
    col = np.full(n, -1, np.int64)
    single_rows: list[int] = []
    single_num: list[int] = []
    for i, f in enumerate(flights):
        if isinstance(f, list):  # strict: integers
            if not f:
                kind[i] = EMPTY
            elif len(f) == 1:
                single_rows.append(i)
                single_num.append(f[0])
        elif f[0] == "tok":  # lenient: the toolkit's strings
            strs = f[1]
            if not strs or (len(strs) == 1 and strs[0] == "empty"):
                kind[i] = EMPTY
            elif len(strs) == 1 and _INT.fullmatch(strs[0]) and str(int(strs[0])) == strs[0]:
                single_rows.append(i)
                single_num.append(int(strs[0]))
    if single_rows:
        rows = np.asarray(single_rows)
        nums = np.asarray(single_num, dtype=object)
        # Numbers beyond int64 cannot be KB flights (the KB reader refuses them): a wrong answer, not an error.
        fits = np.fromiter((-(2**63) <= x < 2**63 for x in single_num), bool, count=len(single_num))
        rows, nums = rows[fits], nums[fits].astype(np.int64)
        eq = (kb.number[rows] == nums[:, None]) & kb.valid[rows]
        found = eq.any(axis=1)
        kind[rows[found]] = IN_KB
        col[rows[found]] = eq[found].argmax(axis=1)
    return kind, col


def read_human_actions(human, lenient: bool, file: str) -> tuple[Predictions | None, list[Problem], np.ndarray | None]:
    """The data file's own ``action`` lines as predictions (the toolkit's ``--task human``): (predictions, or None
    where the lenient reading crashes; problems; lenient: the lines marked ``correct_sample``, which the toolkit
    counts 1 without checking)."""
    preds = Predictions()
    if lenient:
        mask = np.zeros(len(human), bool)
        q = _Quirks(file)
        crashed = False
        for i, h in enumerate(human):
            if h.correct_sample is True:
                mask[i] = True
                q.add("correct_sample", f"/{i}/correct_sample", f"line {i + 1}: correct_sample is true: the "
                      "toolkit counts 1 everywhere without checking the action")
            obj = {"action": h.action} if h.action is not None else {}
            if not _lenient_object(obj, i, q, preds, False):
                crashed = True
        problems = q.finish()
        return (None if crashed else preds), problems, mask
    found = _capped(file)
    for i, h in enumerate(human):
        obj = {"action": h.action} if h.action is not None else {}
        r = _strict_check(obj, i, file, found)
        if r is not None:
            preds.add(*r)
    return preds, found.close(), None


def resolved_kb_blocks(kb_path: Path, data_name: str, n_data: int, gold_flights: list[list[int]], pred_flights: list):
    """``(first item, KB block, gold columns, prediction kinds, prediction columns)`` for the KB blocks of the
    ``len(gold_flights)`` items scored (:func:`~dialeval.formats.airdialogue.iter_kb_blocks`, one block alive at a
    time); a gold flight outside its KB, or a KB whose line count is not ``n_data``, is a data error."""
    n_scored = len(gold_flights)
    n_kb = 0
    for start, kb in iter_kb_blocks(kb_path):
        n_kb = start + len(kb)
        stop = min(n_kb, n_scored)
        if start >= stop:
            continue
        if stop - start < len(kb):
            kb = kb.take(slice(0, stop - start))
        gcols = gold_columns(kb, gold_flights[start:stop], data_name, start)
        kind, col = resolve_flights(kb, pred_flights[start:stop])
        yield start, kb, gcols, kind, col
        del kb, gcols, kind, col
    if n_kb != n_data:
        raise UsageError(f"{kb_path.name} has {n_kb} lines but {data_name} has {n_data}: the two files of "
                         "a split must align line by line")
