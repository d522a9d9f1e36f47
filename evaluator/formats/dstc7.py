"""DSTC7 Track 1 and DSTC8 Track 2 (NOESIS) files: data, the ground-truth TSV, and rankings submitted for them.

Data: one JSON array per file; each example has ``example-id`` (a number in the released files),
``options-for-next`` (its candidates, ``candidate-id`` + ``utterance``), ``options-for-correct-answers`` (withheld
in test files) and ``scenario`` (the subtask). Utterances are never decoded. Ground truth: a TSV of
``example-id<TAB>id1,id2,...``. Both are organiser files: anything wrong in them is a usage error (exit 2).

Submission: ``[{"example-id": ..., "candidate-ranking": [{"candidate-id": ..., "confidence": ...}, ...]}, ...]``.
Ids are matched by value whatever their JSON type (``1100001`` and ``"1100001"`` are one id); the listed order is
the ranking. :func:`read_rankings` checks a submission and returns each example's listed ids.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import msgspec

from dialeval.core.errors import UnreadableInput, UsageError
from dialeval.core.problems import Capped, Problem, json_type, short
from dialeval.files.read import SNIFF_BYTES, iter_text_lines, read_bytes, sniff
from dialeval.formats.jsonio import parse_json_bytes

NONE = "NONE"
"""The answer "no candidate is correct" (subtask 4 of DSTC7, every example of DSTC8)."""
UNSET = msgspec.UNSET


class _Option(msgspec.Struct, rename="kebab", gc=False):
    candidate_id: str | int


class _Example(msgspec.Struct, rename="kebab", gc=False):
    example_id: str | int
    options_for_next: list[_Option] = []
    options_for_correct_answers: list[_Option] | None = None
    scenario: int | str | None = None
    data_split: str | None = None


class _Entry(msgspec.Struct, rename="kebab", gc=False):
    candidate_id: object = UNSET
    confidence: object = UNSET


class _Ranking(msgspec.Struct, rename="kebab", gc=False):
    example_id: object = UNSET
    candidate_ranking: list[_Entry] | msgspec.UnsetType = UNSET


class _Id(msgspec.Struct, rename="kebab", gc=False):
    example_id: object = UNSET


_DATA = msgspec.json.Decoder(list[_Example])
_SUBMISSION = msgspec.json.Decoder(list[_Ranking])
_IDS = msgspec.json.Decoder(list[_Id])


def key(value: object) -> str | None:
    """An id as the text it is matched by: a string as written, an integer's digits; None for any other type."""
    if isinstance(value, str):
        return value
    return str(value) if type(value) is int else None


def name_fields(name: str) -> tuple[str | None, int | None, str | None]:
    """``(dataset, subtask, split)`` a released file name gives (``ubuntu_dev_subtask_1.json``, ``Ubuntu_st1_test``,
    ``Advising_st1_validation``, ``task-1.ubuntu.dev.json``, ``Advising_subtask_3.json``); None for a field it does
    not give. Validation files are the ``dev`` split."""
    low = name.lower()
    dataset = re.search(r"ubuntu|advising", low)
    subtask = re.search(r"(?:subtask|st|task)[_-]?([1-5])(?!\d)", low)
    split = re.search(r"(?<![a-z])(train|dev|valid|validation|test)(?![a-z])", low)
    split = split and split.group(1).replace("validation", "dev").replace("valid", "dev")
    return (dataset and dataset.group(0), subtask and int(subtask.group(1)), split)


def example_ids(raw: bytes) -> set[str]:
    """The example ids a submission names (its rankings skipped); none for a file that is not such an array."""
    try:
        return {key(i.example_id) for i in _IDS.decode(raw)} - {None}
    except (msgspec.MsgspecError, ValueError, RecursionError):
        return set()


@dataclass
class DataFile:
    """One data file: per example its id, candidate ids and correct ids (None when the file withholds them)."""

    path: Path
    ids: list[str]
    options: list[tuple[str, ...]]
    correct: list[tuple[str, ...]] | None
    scenario: int | None
    split: str | None


def read_data(path: Path) -> DataFile:
    raw = read_bytes(path, what="a DSTC7 data file")
    bad = sniff(raw[:SNIFF_BYTES], expect="a JSON data file")
    if bad is not None:
        raise UsageError(f"{path}: {bad.reason}")
    try:
        examples = _DATA.decode(raw)
    except msgspec.ValidationError as e:
        raise UsageError(f"{path}: not a DSTC7 data file ({_where(e)})") from None
    except (msgspec.DecodeError, ValueError, RecursionError):
        parse_json_bytes(raw, str(path))  # says what and where
        raise UsageError(f"{path}: not a readable JSON document") from None
    del raw
    ids = [key(e.example_id) for e in examples]
    if len(set(ids)) < len(ids):
        raise UsageError(f"{path}: an example-id is used twice")
    options = [tuple(key(c.candidate_id) for c in e.options_for_next) for e in examples]
    given = [e.options_for_correct_answers for e in examples]
    correct = None if all(g is None for g in given) else [tuple(key(c.candidate_id) for c in g or ()) for g in given]
    scenarios = {int(e.scenario) for e in examples if str(e.scenario).isdigit()}
    split = examples[0].data_split if examples else None
    return DataFile(path, ids, options, correct, scenarios.pop() if len(scenarios) == 1 else None, split)


def _where(e: msgspec.ValidationError) -> str:
    m = re.search(r"`\$([^`]*)`", str(e))
    what = "a required field is missing" if "missing required field" in str(e) else "a value has the wrong type"
    return f"{what} at {m.group(1) if m else 'the top level'}"


def read_keys(path: Path) -> dict[str, list[str]]:
    """The ground-truth TSV: example id -> correct ids in file order, as written (spaces, empty and repeated ids
    kept). Columns after the second are ignored (ParlAI's ``ubuntu_responses_subtask_1.tsv`` adds the text)."""
    out: dict[str, list[str]] = {}
    try:
        for n, line in iter_text_lines(path, what="a ground-truth TSV file"):
            fields = line.split("\t", 2)
            if not line.strip():
                continue
            if len(fields) < 2 or not fields[0].strip() or not fields[1].strip():
                raise UsageError(f"{path}:{n}: expected example-id<TAB>id1,id2,...")
            out[fields[0].strip()] = fields[1].split(",")  # as written: --lenient counts an empty or repeated id
    except UnreadableInput as e:
        raise UsageError(f"{path}: {e.reason}") from None
    return out


def read_rankings(raw: bytes, file: str, examples: dict[str, int], allowed, none_ok, problems: Capped,
                  strict: bool = True) -> dict[int, list]:
    """Each listed example's position in ``examples`` -> the ids it ranks (strings; in lenient reading every value
    as written), checking ``raw`` against the data: ``allowed(i)`` is example i's candidate id set, ``none_ok(i)``
    whether ``NONE`` may be ranked. Problems go to ``problems``.

    Strict: an id outside the example, an id listed twice, a duplicate or unknown example is an error; a
    ranking shorter than the example's candidates and confidences that disagree with the listed order are
    warnings. Lenient (the official script's reading): duplicates and unknown ids are kept (the last ranking of
    an example wins), what would crash that script is an ``official-crash`` error, and ids written as numbers
    are matched by value but counted in one ``official-quirk`` warning (that script would match none of them).
    """
    def add(code: str, ptr: str, message: str, severity: str = "error") -> None:
        if not problems.full(code, severity):  # past the cap a problem is counted, not built
            problems.append(Problem(code, ptr, message, severity, file))

    bad = sniff(raw[:SNIFF_BYTES], expect="a JSON submission")
    try:
        if bad is not None:
            raise bad
        try:
            items = _SUBMISSION.decode(raw)
        except (msgspec.ValidationError, msgspec.DecodeError, ValueError, RecursionError):
            items = parse_json_bytes(raw, file)  # a plain reading explains what the typed one refused
    except UnreadableInput as e:
        add(e.code, "", e.reason)
        return {}
    if not isinstance(items, list):
        add("not-a-list", "", f"top level is a {json_type(items)}: expected an array of "
            '{"example-id": ..., "candidate-ranking": [...]} objects')
        return {}
    out: dict[int, list] = {}
    where: dict[int, int] = {}
    crash = None if strict else "official-crash"  # what the official script dies on, in lenient reading
    numbers = 0
    for i, item in enumerate(items):
        if isinstance(item, _Ranking):
            eid, ranking = item.example_id, item.candidate_ranking
        elif isinstance(item, dict):
            eid, ranking = item.get("example-id", UNSET), item.get("candidate-ranking", UNSET)
        else:
            add(crash or "item-not-object", f"/{i}", f"is a {json_type(item)}, not an object")
            continue
        if eid is UNSET or ranking is UNSET:
            add(crash or "missing-key", f"/{i}", f"has no {'example-id' if eid is UNSET else 'candidate-ranking'!r}")
            continue
        k = key(eid)
        if not isinstance(ranking, list) or (k is None and (strict or isinstance(eid, list | dict))):
            what = f"candidate-ranking is a {json_type(ranking)}" if k is not None else f"example-id is a {json_type(eid)}"
            add(crash or "wrong-type", f"/{i}", what)
            continue
        ids, confs = _entries(ranking, f"/{i}/candidate-ranking", strict, crash, add)
        at = examples.get(k)
        if ids is None or at is None:
            if at is None and k is not None and strict:
                add("unknown-dialog", f"/{i}/example-id", f"example-id {short(eid)} is not an example of the data")
            continue
        numbers += type(eid) is int
        if strict:
            _check(f"/{i}", ids, confs, allowed(at), none_ok(at), add, where.get(at))
        where[at] = i
        out[at] = ids
    if numbers and not strict:
        add("official-quirk", "", f"{numbers} example-ids are JSON numbers: matched here by value, but the official "
            "script keys its ground truth by text and would score every one of them 0", "warning")
    return out


def _entries(ranking: list, ptr: str, strict: bool, crash, add) -> tuple[list | None, list]:
    ids, confs = [], []
    for j, e in enumerate(ranking):
        if isinstance(e, _Entry):
            c, conf = e.candidate_id, e.confidence
        elif isinstance(e, dict):
            c, conf = e.get("candidate-id", UNSET), e.get("confidence")
        else:
            add(crash or "item-not-object", f"{ptr}/{j}", f"is a {json_type(e)}, not an object")
            return None, confs
        if c is UNSET:
            add(crash or "missing-key", f"{ptr}/{j}", "has no 'candidate-id'")
            return None, confs
        ids.append(key(c) if strict else c)
        confs.append(conf)
    return ids, confs


def _check(ptr: str, ids: list, confs: list, allowed, none_ok: bool, add, before) -> None:
    """Strict checks of one example's ranking (see :func:`read_rankings`)."""
    ptr += "/candidate-ranking"
    if before is not None:
        add("duplicate-dialog", ptr[: ptr.rindex("/")] + "/example-id", f"example already ranked at #/{before}")
    if not ids:
        add("empty-ranking", ptr, "lists no candidate")
    if len(set(ids)) != len(ids) or not allowed.issuperset(ids):
        seen: set = set()
        for j, c in enumerate(ids):
            at = f"{ptr}/{j}/candidate-id"
            if c is None:
                add("wrong-type", at, "is not a string")
            elif c in seen:
                add("duplicate-candidate", at, f"{short(c)} is listed twice")
            elif c == NONE and not none_ok and c not in allowed:
                add("unknown-candidate", at, "NONE is an answer only where the correct response may be absent")
            elif c not in allowed and c != NONE:
                add("unknown-candidate", at, f"{short(c)} is not a candidate of this example")
            seen.add(c)
    n = len(allowed) + (none_ok and NONE not in allowed)
    if len(ids) < min(n, 100):
        add("short-ranking", ptr, f"lists {len(ids)} of {n} candidates: a correct id it leaves out counts as not "
            "found", "warning")
    nums = [c for c in confs if type(c) in (int, float)]
    if len(nums) > 1 and any(a < b for a, b in zip(nums, nums[1:], strict=False)):
        add("confidence-order", ptr, "confidences rise along the list: the listed order is the ranking, "
            "confidences are not read", "warning")
