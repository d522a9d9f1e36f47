"""ConvAI2 (PersonaChat): hits@1, @5, @10 among each turn's 20 candidates, or token F1 of generated replies.

``--data``: a ParlAI file (``valid_self_original.txt``: the split is its name's first word; no test set was released)
or a folder of ``<split>_self_original.txt``. Items: turns, ``<file stem>:<dialog>:<line ID>``, candidates ``"1"`` ...
``"20"`` or their texts (the line's first candidate that normalises alike). Gold: every candidate equal to a label after
ParlAI's answer normalisation (:mod:`dialeval.metrics.answer`). A ``.txt`` of replies, a line per turn, gets token F1.
A ranking also carries ``f1``, the token F1 of its top candidate (ParlAI's ``f1`` for ranking models; ``--metrics``): a
tie at the top is settled by the tie policy on F1 itself (pessimistic: the lowest, optimistic: the highest, expected:
their mean, input-order: the first in the line's order); a turn not ranked scores 0.
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache
from pathlib import Path

import numpy as np

from dialeval.benchmarks.base import Evaluation, Request, one_split_refusal
from dialeval.benchmarks.items import ItemSet, score_replies
from dialeval.benchmarks.itemset import ItemSetBenchmark
from dialeval.core.errors import UsageError
from dialeval.formats.convai2 import DEFAULT_FILE, MAX_TURN, N_CANDIDATES, SPLITS, Turns, read_turns, split_of
from dialeval.metrics.answer import counts_f1, normalize_answer

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


def _top_f1(turns: Turns):
    """``top_values`` of a file's item set: the F1 of each turn's top candidate, ties settled as the docstring says."""
    settle = {"pessimistic": min, "optimistic": max, "expected": lambda f: sum(f) / len(f), "input-order": lambda f: f[0]}

    def values(top: np.ndarray, ties: str) -> dict[str, np.ndarray]:
        f1 = np.zeros(len(top))
        for i in np.flatnonzero(top.any(axis=1)):  # a turn not ranked scores 0
            cands, labels = turns.candidates(i), [Counter(_normalize(x).split()) for x in turns.labels[i]]
            cols = np.flatnonzero(top[i])[: 1 if ties == "input-order" else None]
            f1[i] = settle[ties]([counts_f1(Counter(_normalize(cands[j]).split()), labels) for j in cols])
        return {"f1": f1}
    return values


class ConvAI2(ItemSetBenchmark):
    name = "convai2"
    public_data_note = ("each turn's line holds its true reply (the label field) beside the candidates, and it is the "
                        "context of the turns after it")
    title = "ConvAI2 (PersonaChat): hits@1/5/10 of 20 candidates per turn, or token F1 of generated replies"
    group_label = "file"
    split_names = SPLITS
    split_file = DEFAULT_FILE
    # the test set stayed hidden; ParlAI's convai2 task serves valid when asked for test, dialeval never silently does
    unreleased_splits = {"test": "the ConvAI2 test set was never released (ParlAI's convai2 task reads the valid set "
                                 "when asked for test); pass --split valid"}
    data_name = "ConvAI2"
    # the persona variant is the file's: a folder's train_self_original.txt, or whichever train_* file --data names
    split_descriptions = {"train": "training dialogs (PersonaChat; the file's persona variant: self, other, both or "
                                   "none, original or revised; a folder's train_self_original.txt)",
                          "valid": "the released validation dialogs (the test set was never released)"}
    default_metrics = ("hits@1", "hits@5", "hits@10")
    extra_metrics = ("f1",)
    problem_codes = {"line-too-long": "a generated reply of more than 1,048,576 characters"}
    submission_formats = ("dstc6-result keyed by <file stem>:<dialog>:<line ID>, candidates by position 1-20 or text",
                          "scores (JSON, same names)", ".npy / .csv matrix (a row per turn, 20 columns)",
                          ".txt of generated replies, one line per turn (token F1)")
    submission_suffixes = (".json", ".npy", ".csv", ".txt")

    def present(self, data: Path) -> dict[str, list[str]]:
        return {s: [p.stem] for s, p in data_files(data).items()}

    def load(self, data, split, group, with_gold, problems):
        path = data_files(data)[split]
        turns, gold = _load(path)
        return ItemSet(group, turns.item_ids, POSITIONS, gold if with_gold else None, turns.conversation_ids,
                       turns.turns, names=_names(turns), files=(path,), extra=turns, top_values=_top_f1(turns))

    split_of_id = staticmethod(split_of)  # an item id starts with its file's stem: "valid_self_original:1:5"

    def metrics_for(self, evaluation: Evaluation) -> list[str]:
        return ["f1"] if evaluation.submission.get("format") == "text" else list(self.default_metrics)

    def signature_fields(self, request: Request, ev: Evaluation) -> dict:
        ties = {} if ev.submission.get("format") == "text" else {"ties": self.signed_ties(request, ev)}
        return {"file": ",".join(ev.groups), "gold": "normalised-text", **ties}

    def score_sets(self, request, splits, sets, identity, problems=None, others=()) -> Evaluation:
        """A ``.txt`` of generated replies is read here; every other submission by the skeleton."""
        own = [s for s in sets if not s.optional]
        if Path(request.submission).suffix.lower() != ".txt":
            return super().score_sets(request, splits, sets, identity, problems, others)
        if len(own) != 1:
            raise one_split_refusal(self.name, list(data_files(request.data)))
        table, found, info = score_replies(request.submission, own[0], own[0].extra.labels, benchmark=self.name,
                                           split=own[0].split, scoring=request.scoring, max_chars=MAX_TURN, noun="turns",
                                           too_long="line-too-long")
        ev = Evaluation(table=table, problems=[*(problems or []), *found], splits=splits, groups=[own[0].group],
                        data=identity, submission=info, signature_fields={})
        ev.signature_fields = self.signature_fields(request, ev)
        return ev

