"""DSTC6 Track 1 file format: dataset files, result/answer files and the challenge layout.

A challenge directory holds one folder per split (``tst1`` ... ``tst4``, or ``tst``/``tst-OOV``/``dev``
for converted bAbI data). Each split folder holds dataset files named
``dialog-task{N}{NAME}-{rest}.json`` and, unless the organizer keeps them apart (``--keys DIR``), the
answer keys named after them: ``<stem>.answers.json``.

Readers here return plain dataclasses and arrays; nothing downstream re-reads files.
Dataset items may carry two optional fields that the official files lack:
``conversation_id`` (str, groups the items that are turns of one conversation, for per-dialog accuracy)
and ``turn`` (int, 1-based position of the predicted bot turn in that conversation).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from dialeval.core.errors import UsageError
from dialeval.files.read import check_regular
from dialeval.formats.jsonio import dump_json_file, load_json_file

TASK_NAMES = {1: "API", 2: "REFINE", 3: "OPTIONS", 4: "INFOS", 5: "FULL", 6: "DSTC2"}
"""File-name infix per task number, as in the official release (task 6 is bAbI's DSTC2 task)."""

DSTC6_SPLITS = {
    "tst1": ("kb1", False),
    "tst2": ("kb2", False),
    "tst3": ("kb1", True),
    "tst4": ("kb2", True),
}
"""Official DSTC6 test splits: (knowledge base, dietary restrictions required)."""

ANSWERS_SUFFIX = ".answers.json"
TASK_DESCRIPTIONS = {
    "1": "issuing API calls: the bot asks for each missing slot, then calls the knowledge base",
    "2": "updating API calls: the user changes slots, the bot issues the updated call",
    "3": "displaying options: the bot proposes matching restaurants by rating until one is accepted",
    "4": "providing extra information: the bot gives the booked restaurant's phone number or address",
    "5": "full dialogs: tasks 1-4 in one conversation",
}
"""DSTC6 Track 1's tasks 1-5, the bAbI dialog tasks (both benchmarks' group descriptions)."""

DEFAULT_CANDIDATE_LIMIT = 10
"""Slots per dialog in the official scorer (its ``nb_candidate``): ``--lenient``'s default."""
DATASET_RE = re.compile(r"^dialog-task(?P<task>[1-9])(?P<name>[A-Za-z0-9]+)-(?P<rest>.+)\.json$")


def dataset_file_name(task: int, kb: str, restrictions: bool, kind: str = "tst1000") -> str:
    """Official file name, e.g. ``dialog-task1API-kb1_atmosphere-distr0.5-tst1000.json``."""
    slots = "atmosphere_restrictions" if restrictions else "atmosphere"
    return f"dialog-task{task}{TASK_NAMES[task]}-{kb}_{slots}-distr0.5-{kind}.json"


def answers_file_name(dataset_name: str) -> str:
    """``<stem>.answers.json`` for a dataset file name (the official key / submission naming)."""
    if not dataset_name.endswith(".json"):
        raise ValueError(f"not a .json file name: {dataset_name}")
    return dataset_name[: -len(".json")] + ANSWERS_SUFFIX


def parse_dataset_name(name: str) -> int | None:
    """Task number of a dataset file name, or None when the name is not a dataset file."""
    if name.endswith(ANSWERS_SUFFIX):
        return None
    m = DATASET_RE.match(name)
    return int(m.group("task")) if m else None


@dataclass(frozen=True)
class Candidate:
    candidate_id: str
    utterance: str


@dataclass
class DialogItem:
    """One prediction: a dialog prefix and the candidates for the next bot utterance."""

    dialog_id: str
    utterances: list[str]
    candidates: list[Candidate]
    answer: Candidate | None = None  # training files only
    conversation_id: str | None = None
    turn: int | None = None

    def to_json(self) -> dict:
        # Key order of the official files: dialog_id, candidates, utterances (then answer in training); in a
        # candidate, utterance before candidate_id.
        d: dict = {
            "dialog_id": self.dialog_id,
            "candidates": [{"utterance": c.utterance, "candidate_id": c.candidate_id} for c in self.candidates],
            "utterances": list(self.utterances),
        }
        if self.answer is not None:
            d["answer"] = {"utterance": self.answer.utterance, "candidate_id": self.answer.candidate_id}
        if self.conversation_id is not None:
            d["conversation_id"] = self.conversation_id
        if self.turn is not None:
            d["turn"] = self.turn
        return d


@dataclass
class TaskFile:
    """One dataset file of a split: where it is and which task it holds."""

    task: int
    path: Path

    @property
    def answers_name(self) -> str:
        return answers_file_name(self.path.name)


def item_from_json(obj: dict) -> DialogItem:
    """Build a DialogItem from a parsed dataset item (already structurally valid)."""
    cands = [Candidate(c["candidate_id"], c["utterance"]) for c in obj["candidates"]]
    ans = obj.get("answer")
    return DialogItem(
        dialog_id=obj["dialog_id"],
        utterances=list(obj["utterances"]),
        candidates=cands,
        answer=Candidate(ans["candidate_id"], ans["utterance"]) if ans else None,
        conversation_id=obj.get("conversation_id"),
        turn=obj.get("turn"),
    )


def read_dataset(path: str | Path) -> list[DialogItem]:
    """Read a dataset file (test or training) into DialogItems.

    Structural problems raise :class:`dialeval.core.errors.UsageError` with a JSON pointer; use
    :func:`dialeval.formats.dstc6_check.validate_dataset_json` for a full report of every problem.
    """
    from dialeval.formats.dstc6_check import check_dataset_json

    path = Path(path)
    data = load_json_file(path)
    problems = check_dataset_json(data)
    errors = [p for p in problems if p.severity == "error"]
    if errors:
        first = errors[0]
        n_more = len(errors) - 1 + sum(problems.dropped.values())  # those the per-code cap did not keep too
        more = f" (and {n_more} more problems)" if n_more else ""
        raise UsageError(f"{path}: invalid dataset file: {first.pointer or '/'}: {first.message}{more}")
    return [item_from_json(o) for o in data]


def write_dataset(path: str | Path, items: list[DialogItem]) -> None:
    """Write items in the official layout: one JSON array on one line, default separators."""
    dump_json_file(path, [it.to_json() for it in items])


def ranking_json(dialog_id: str, ranked_ids: list[str]) -> dict:
    """A result-file entry ranking ``ranked_ids`` in order (rank 1 first)."""
    return {
        "dialog_id": dialog_id,
        "lst_candidate_id": [{"candidate_id": cid, "rank": i} for i, cid in enumerate(ranked_ids, 1)],
    }


def write_results(path: str | Path, rankings: list[tuple[str, list[str]]]) -> None:
    """Write a result (submission) or answer-key file from (dialog_id, ranked candidate ids) pairs.

    An answer key is a result file whose rankings hold exactly the gold id.
    """
    dump_json_file(path, [ranking_json(d, r) for d, r in rankings])


def gold_from_answer_key_json(data: list) -> dict[str, str]:
    """dialog_id -> gold candidate id from a parsed (valid) answer-key file."""
    out: dict[str, str] = {}
    for item in data:
        for entry in item["lst_candidate_id"]:
            if entry["rank"] == 1:
                out[item["dialog_id"]] = entry["candidate_id"]
                break
    return out


@dataclass
class Split:
    """A split of a challenge: its dataset files per task and where their answer keys live."""

    name: str
    directory: Path
    files: dict[int, TaskFile] = field(default_factory=dict)
    keys_directory: Path | None = None

    def key_path(self, task: int) -> Path:
        tf = self.files[task]
        base = self.keys_directory if self.keys_directory is not None else self.directory
        return base / tf.answers_name


@dataclass
class Challenge:
    """A challenge directory in the official layout (one folder per split)."""

    root: Path
    keys_root: Path | None = None

    @property
    def splits(self) -> list[str]:
        return sorted(
            p.name for p in self.root.iterdir() if p.is_dir() and any(parse_dataset_name(f.name) for f in p.iterdir())
        )

    def split(self, name: str) -> Split:
        d = self.root / name
        if not d.is_dir():
            have = ", ".join(self.splits) or "none"
            raise UsageError(f"split {name!r} not found in challenge {self.root} (available: {have})")
        files: dict[int, TaskFile] = {}
        for f in sorted(d.iterdir()):
            task = parse_dataset_name(f.name)
            if task is None:
                continue
            # a test file that is a FIFO, a device or a folder is refused here, never skipped: skipping it
            # would score the split without that task (and opening a FIFO would wait for a writer)
            check_regular(f, what="a test JSON file")
            if task in files:
                raise UsageError(f"split {name}: two dataset files for task {task}: {files[task].path.name}, {f.name}")
            files[task] = TaskFile(task, f)
        if not files:
            raise UsageError(f"split {name!r} in {self.root} holds no dialog-task*.json dataset files")
        keys_dir = None
        if self.keys_root is not None:
            # Keys may be kept flat in one directory or in per-split folders like the challenge.
            keys_dir = self.keys_root / name if (self.keys_root / name).is_dir() else self.keys_root
        split = Split(name=name, directory=d, files=files, keys_directory=keys_dir)
        for task in files:  # a key that is a FIFO or a device: refused now, before any test file is read
            key = split.key_path(task)
            if os.path.lexists(key):
                check_regular(key, what="an answer-key JSON file")
        return split


def load_json(path: str | Path):
    """Parse a JSON file with a clear one-line error (re-exported for format users)."""
    return load_json_file(path)


__all__ = [
    "ANSWERS_SUFFIX",
    "Candidate",
    "Challenge",
    "DSTC6_SPLITS",
    "DialogItem",
    "Split",
    "TASK_NAMES",
    "TaskFile",
    "answers_file_name",
    "dataset_file_name",
    "gold_from_answer_key_json",
    "item_from_json",
    "load_json",
    "parse_dataset_name",
    "ranking_json",
    "read_dataset",
    "write_dataset",
    "write_results",
]
