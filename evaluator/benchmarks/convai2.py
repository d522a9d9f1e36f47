"""ConvAI2 (PersonaChat): hits@1, @5, @10 among each turn's 20 candidates, or token F1 of generated replies.

``--data``: a ParlAI file (``valid_self_original.txt``: the split is its name's first word; no test set was released)
or a folder of ``<split>_self_original.txt``. Items: turns, ``<file stem>:<dialog>:<line ID>``, candidates ``"1"`` ...
``"20"`` or their texts (the line's first candidate that normalises alike). Gold: every candidate equal to a label after
ParlAI's answer normalisation (:mod:`dialeval.metrics.answer`). A ``.txt`` of replies, a line per turn, gets token F1.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from dialeval.benchmarks.base import Evaluation, Request
from dialeval.benchmarks.items import ItemSet
from dialeval.benchmarks.itemset import ItemSetBenchmark
from dialeval.core.errors import UnreadableInput, UsageError
from dialeval.core.problems import Problem
from dialeval.formats.convai2 import DEFAULT_FILE, MAX_TURN, N_CANDIDATES, SPLITS, Turns, read_turns, split_of
from dialeval.metrics.answer import normalize_answer

_normalize = lru_cache(maxsize=1 << 16)(normalize_answer)  # a file's candidates recur across its turns
POSITIONS = tuple(str(j) for j in range(1, N_CANDIDATES + 1))


def data_files(data: Path) -> dict[str, Path]:
    """``{split: file}``: the file ``--data`` names, or a folder's default files."""
    files = ({s: data / DEFAULT_FILE.format(split=s) for s in SPLITS if (data / DEFAULT_FILE.format(split=s)).exists()}
             if data.is_dir() else {split_of(data): data})
    if not files or None in files:
        raise UsageError(f"{data}: neither a ConvAI2 file (<train|valid>_<persona>_<original|revised>.txt) nor a "
                         "folder holding train_self_original.txt or valid_self_original.txt")
    return files


def _load(path: Path) -> tuple[Turns, list[frozenset[str]]]:
    """A file's turns and each one's gold positions."""
    turns, gold = read_turns(path), []
    for i, labels in enumerate(turns.labels):
        wanted = {_normalize(x) for x in labels}
        gold.append(frozenset(POSITIONS[j] for j, c in enumerate(turns.candidates(i)) if _normalize(c) in wanted))
        if not gold[-1]:
            raise UsageError(f"{path}: turn {turns.item_ids[i]}: no candidate equals the label")
    return turns, gold


def _names(turns: Turns):
    """``names(i, text)``: the position of turn ``i``'s first candidate that normalises like ``text`` (or None)."""
    @lru_cache(maxsize=1)  # the turn asked last: a ranking of 20 texts normalises its candidates once
    def by_text(i: int) -> dict[str, str]:
        return {n: POSITIONS[j] for j, n in reversed(list(enumerate(map(_normalize, turns.candidates(i)))))}
    # a name longer than any turn (a hostile 100 MB one) is not normalised: it names none
    return lambda i, name: by_text(i).get(normalize_answer(name)) if len(name) <= MAX_TURN else None


class ConvAI2(ItemSetBenchmark):
    name = "convai2"
    title = "ConvAI2 (PersonaChat): hits@1/5/10 of 20 candidates per turn, or token F1 of generated replies"
    group_label = "file"
    split_names = SPLITS
    data_name = "ConvAI2"
    # the persona variant is the file's: a folder's train_self_original.txt, or whichever train_* file --data names
    split_descriptions = {"train": "training dialogs (PersonaChat; the file's persona variant: self, other, both or "
                                   "none, original or revised; a folder's train_self_original.txt)",
                          "valid": "the released validation dialogs (the test set was never released)"}
    default_metrics = ("hits@1", "hits@5", "hits@10")
    problem_codes = {"line-too-long": "a generated reply of more than 1,048,576 characters"}
    submission_formats = ("dstc6-result keyed by <file stem>:<dialog>:<line ID>, candidates by position 1-20 or text",
                          "scores (JSON, same names)", ".npy / .csv matrix (a row per turn, 20 columns)",
                          ".txt of generated replies, one line per turn (token F1)")

    def present(self, data: Path) -> dict[str, list[str]]:
        return {s: [p.stem] for s, p in data_files(data).items()}

    def load(self, data, split, group, with_gold, problems):
        path = data_files(data)[split]
        turns, gold = _load(path)
        return ItemSet(group, turns.item_ids, POSITIONS, gold if with_gold else None, turns.conversation_ids,
                       turns.turns, names=_names(turns), files=(path,), extra=turns)

    split_of_id = staticmethod(split_of)  # an item id starts with its file's stem: "valid_self_original:1:5"

    def metrics_for(self, evaluation: Evaluation) -> list[str]:
        return ["f1"] if evaluation.submission.get("format") == "text" else list(self.default_metrics)

    def signature_fields(self, request: Request, ev: Evaluation) -> dict:
        ties = {} if ev.submission.get("format") == "text" else {"ties": request.ties}
        return {"file": ",".join(ev.groups), "gold": "normalised-text", **ties}

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
    from dialeval.files.read import file_sha256, iter_text_lines
    from dialeval.metrics.answer import f1_scores

    path = Path(request.submission)
    fname, n, replies, problems = path.name, len(turns.item_ids), [], []
    shape = f"the file has {n} turns (one reply per line, in file order)"
    try:
        for lineno, line in iter_text_lines(path, shown=fname):
            if lineno > n or len(line) > MAX_TURN:  # a longer line is no reply: it is never tokenised
                problems.append(Problem("wrong-shape", "", f"more than {n} lines, but {shape}", file=fname) if lineno > n
                                else Problem("line-too-long", "", f"line {lineno}: over {MAX_TURN} characters", file=fname))
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
