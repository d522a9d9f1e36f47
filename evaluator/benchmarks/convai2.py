"""ConvAI2 (PersonaChat): hits@1, @5, @10 among each turn's 20 candidates, or token F1 of generated replies.

``--data``: one ParlAI file (``valid_self_original.txt``: its split is the name's first word; no test set was
released) or a folder of ``<split>_self_original.txt``. Items: every turn, id ``<file stem>:<dialog>:<line ID>``
(dialogs numbered from 1 in file order), candidates ``"1"`` ... ``"20"`` or their texts (a text names the first
candidate of the line that normalises alike). Gold: every candidate equal to a label after ParlAI's answer
normalisation (:mod:`dialeval.metrics.answer`), as ParlAI's hits@k compares them. A ``.txt`` of generated
replies, one line per turn, gets token F1. The release's gold is the last candidate: file-order ties rank it last.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dialeval.benchmarks.base import Evaluation, Request
from dialeval.benchmarks.items import ItemSet
from dialeval.benchmarks.itemset import ItemSetBenchmark
from dialeval.core.errors import UnreadableInput, UsageError
from dialeval.core.problems import Problem
from dialeval.formats.convai2 import DEFAULT_FILE, N_CANDIDATES, SPLITS, Turns, read_turns, split_of
from dialeval.metrics.answer import normalize_answer

POSITIONS = tuple(str(j) for j in range(1, N_CANDIDATES + 1))


def data_files(data: Path) -> dict[str, Path]:
    """``{split: file}``: the file ``--data`` names, or a folder's default files."""
    if data.is_dir():
        return {s: data / DEFAULT_FILE.format(split=s) for s in SPLITS if (data / DEFAULT_FILE.format(split=s)).exists()}
    if split_of(data) is None:
        raise UsageError(f"{data.name}: not a ConvAI2 file name (<train|valid>_<persona>_<original|revised>.txt)")
    return {split_of(data): data}


def _load(path: Path) -> tuple[Turns, list[frozenset[str]]]:
    """A file's turns and each one's gold positions."""
    turns, gold = read_turns(path), []
    for i, labels in enumerate(turns.labels):
        wanted = {normalize_answer(x) for x in labels}
        gold.append(frozenset(POSITIONS[j] for j, c in enumerate(turns.candidates(i)) if normalize_answer(c) in wanted))
        if not gold[-1]:
            raise UsageError(f"{path}: turn {turns.item_ids[i]}: no candidate equals the label")
    return turns, gold


class _Names:
    """A text -> the position of the first candidate of turn ``i`` that normalises alike (one turn kept)."""

    def __init__(self, turns: Turns):
        self.turns, self.i, self.by_text = turns, -1, {}

    def __call__(self, i: int, name: str) -> str | None:
        if i != self.i:
            self.i, self.by_text = i, {}
            for j, c in enumerate(self.turns.candidates(i)):
                self.by_text.setdefault(normalize_answer(c), POSITIONS[j])
        # a name far longer than any candidate (a hostile 100 MB one) is not normalised: it names none
        return self.by_text.get(normalize_answer(name)) if len(name) <= 1 << 16 else None


class ConvAI2(ItemSetBenchmark):
    name = "convai2"
    title = "ConvAI2 (PersonaChat): hits@1/5/10 of 20 candidates per turn, or token F1 of generated replies"
    group_label = "file"
    split_names = SPLITS
    default_metrics = ("hits@1", "hits@5", "hits@10")
    submission_formats = ("dstc6-result keyed by <file stem>:<dialog>:<line ID>, candidates by position 1-20 or text",
                          "scores (JSON, same names)", ".npy / .csv matrix (a row per turn, 20 columns)",
                          ".txt of generated replies, one line per turn (token F1)")

    def present(self, data: Path) -> dict[str, list[str]]:
        return {s: [p.stem] for s, p in data_files(data).items()}

    def load(self, data, split, group, with_gold, problems):
        path = data_files(data)[split]
        turns, gold = _load(path)
        return ItemSet(group, turns.item_ids, POSITIONS, gold if with_gold else None, turns.conversation_ids,
                       turns.turns, names=_Names(turns), files=(path,), extra=turns)

    split_of_id = staticmethod(split_of)  # an item id starts with its file's stem: "valid_self_original:1:5"

    def metrics_for(self, evaluation: Evaluation) -> list[str]:
        return ["f1"] if evaluation.submission.get("format") == "text" else list(self.default_metrics)

    def signature_fields(self, request: Request, ev: Evaluation) -> dict:
        text = ev.submission.get("format") == "text"
        return {"file": ",".join(ev.groups), "gold": "normalised-text", **({} if text else {"ties": request.ties})}

    def score_sets(self, request, splits, sets, identity, problems=None, others=()) -> Evaluation:
        """A ``.txt`` of generated replies is read here; every other submission by the skeleton."""
        own = [s for s in sets if not s.optional]
        if Path(request.submission).suffix.lower() != ".txt":
            return super().score_sets(request, splits, sets, identity, problems, others)
        if len(own) != 1:
            raise UsageError("convai2: a file of replies answers one data file: give one --split")
        table, found, info = _replies(request, own[0].split, own[0].extra)
        ev = Evaluation(table=table, problems=[*(problems or []), *found], splits=splits, groups=[own[0].group],
                        data=identity, submission=info, signature_fields={})
        ev.signature_fields = self.signature_fields(request, ev)
        return ev


def _replies(request: Request, split: str, turns: Turns):
    """Generated replies: a .txt of one line per turn, token F1 against the labels."""
    from dialeval.core.ranks import RankTable
    from dialeval.files.read import check_regular, file_sha256, iter_text_lines
    from dialeval.metrics.answer import f1_scores

    path = Path(request.submission)
    check_regular(path, what="one submission file")
    fname, n, replies, problems = path.name, len(turns.item_ids), [], []
    shape = f"the file has {n} turns (one reply per line, in file order)"
    try:
        for lineno, line in iter_text_lines(path, shown=fname):
            if lineno > n:
                problems.append(Problem("wrong-shape", "", f"more than {n} lines, but {shape}", file=fname))
                break
            replies.append(line.rstrip("\r"))
    except UnreadableInput as e:
        problems.append(Problem(e.code, "", e.reason, file=fname))
    if not problems and len(replies) < n:
        problems.append(Problem("wrong-shape", "", f"{len(replies)} lines, but {shape}", file=fname))
    info = {"path": str(path), "kind": "file", "sha256": file_sha256(path), "format": "text"}
    if problems or not request.scoring:
        return None, problems, info
    table = RankTable.build(benchmark="convai2", split=split, group=turns.stem, item_ids=turns.item_ids,
                            gold_rank=np.zeros(n, np.int32), n_candidates=N_CANDIDATES,
                            conversation_ids=turns.conversation_ids, turns=turns.turns,
                            values={"f1": f1_scores(replies, turns.labels)})
    return table, problems, info
