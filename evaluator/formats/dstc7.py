"""DSTC7 Track 1 and DSTC8 Track 2 (NOESIS) organiser files: data, the ground-truth TSV and subtask 2's pool.

Data: one JSON array per file; each example has ``example-id`` (a number in the released files),
``options-for-next`` (its candidates, ``candidate-id`` + ``utterance``), ``options-for-correct-answers`` (withheld
in test files) and ``scenario`` (the subtask). Utterances are never decoded. Ground truth: a TSV of
``example-id<TAB>id1,id2,...``. Subtask 2's pool: a JSON array of ``{"candidate-id": ...}`` objects, or text lines
``candidate-id[<TAB>utterance]``. All are organiser files: anything wrong in them is a usage error (exit 2).
Submissions are listed rankings (:mod:`dialeval.formats.listed`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import msgspec

from dialeval.core.errors import UsageError
from dialeval.files.read import organiser_fields, read_bytes
from dialeval.formats.jsonio import decode_organiser_json
from dialeval.formats.listed import ListedForm, key

NONE = "NONE"
"""The answer "no candidate is correct" (subtask 4 of DSTC7, every example of DSTC8)."""
RANKING = ListedForm("dstc7-ranking", "example-id", "candidate-ranking", "candidate-id", "confidence", "example",
                     none_id=NONE, number_ids="{n} example-ids are JSON numbers: matched here by value, but the "
                     "official script keys its ground truth by text and would score every one of them 0")


class _Option(msgspec.Struct, rename="kebab", gc=False):
    candidate_id: str | int


class _Example(msgspec.Struct, rename="kebab", gc=False):
    example_id: str | int
    options_for_next: list[_Option] = []
    options_for_correct_answers: list[_Option] | None = None
    scenario: int | str | None = None
    data_split: str | None = None


_DATA, _POOL = msgspec.json.Decoder(list[_Example]), msgspec.json.Decoder(list[_Option])


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
    examples = decode_organiser_json(path, _DATA, "a DSTC7 data file")
    ids = [key(e.example_id) for e in examples]
    if len(set(ids)) < len(ids):
        raise UsageError(f"{path}: an example-id is used twice")
    options = [tuple(key(c.candidate_id) for c in e.options_for_next) for e in examples]
    given = [e.options_for_correct_answers for e in examples]
    correct = None if all(g is None for g in given) else [tuple(key(c.candidate_id) for c in g or ()) for g in given]
    scenarios = {int(e.scenario) for e in examples if str(e.scenario).isdigit()}
    split = examples[0].data_split if examples else None
    return DataFile(path, ids, options, correct, scenarios.pop() if len(scenarios) == 1 else None, split)


def read_keys(path: Path) -> dict[str, list[str]]:
    """The ground-truth TSV: example id -> correct ids in file order, as written (spaces, empty and repeated ids
    kept). Columns after the second are ignored (ParlAI's ``ubuntu_responses_subtask_1.tsv`` adds the text)."""
    out: dict[str, list[str]] = {}
    for n, fields in organiser_fields(path, what="a ground-truth TSV file", maxsplit=2):
        if len(fields) < 2 or not fields[0].strip() or not fields[1].strip():
            raise UsageError(f"{path}:{n}: expected example-id<TAB>id1,id2,...")
        out[fields[0].strip()] = fields[1].split(",")  # as written: --lenient counts an empty or repeated id
    return out


def read_pool(path: Path) -> frozenset[str]:
    """Subtask 2's candidate pool: the ids of a JSON array of candidates, or the first field of each text line."""
    raw = read_bytes(path, what="a candidate pool file")
    if raw.lstrip()[:1] == b"[":
        return frozenset(key(c.candidate_id) for c in decode_organiser_json(path, _POOL, "a candidate pool file", raw))
    return frozenset(f[0].strip() for _, f in organiser_fields(path, what="a candidate pool file", maxsplit=1) if f[0].strip())

