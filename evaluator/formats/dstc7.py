"""DSTC7 Track 1 and DSTC8 Track 2 (NOESIS) files: the data, and the form of rankings submitted for them.

Data: one JSON array per file; each example has ``example-id`` (a number in the released files),
``options-for-next`` (its candidates, ``candidate-id`` + ``utterance``), ``options-for-correct-answers`` (withheld
in test files) and ``scenario`` (the subtask). Utterances are never decoded; anything wrong in a data file is a
usage error (exit 2). Submissions are listed rankings (:mod:`dialeval.formats.listed`), whose answer key is the
ground-truth TSV (``example-id<TAB>id1,id2,...``; ParlAI's ``ubuntu_responses_subtask_1.tsv`` adds a column) and
whose list of candidates is subtask 2's pool file (``candidate-id<TAB>utterance`` lines, or a JSON array).
"""

from __future__ import annotations

import re
from pathlib import Path

from dialeval.formats.listed import ItemFile, ListedForm, read_items

NONE = "NONE"
"""The answer "no candidate is correct" (subtask 4 of DSTC7, every example of DSTC8)."""
RANKING = ListedForm("dstc7-ranking", "example-id", "candidate-ranking", "candidate-id", "confidence", "example",
                     none_id=NONE, number_ids="{n} example-ids are JSON numbers: matched here by value, but the "
                     "official script keys its ground truth by text and would score every one of them 0",
                     options="options-for-next", correct="options-for-correct-answers",
                     fields=(("scenario", int | str | None), ("data-split", str | None)))


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


def read_data(path: Path) -> ItemFile:
    """A data file: its examples, and their ``scenario`` (the subtask) and ``data-split`` as ``fields``."""
    return read_items(path, RANKING, "a DSTC7 data file")
