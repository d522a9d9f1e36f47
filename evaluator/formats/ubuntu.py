"""Ubuntu Dialogue Corpus v2 CSV files (next-utterance classification); streamed by :mod:`dialeval.formats.csvrows`.

Layout (the files the corpus' creation scripts write; comma-separated, minimal quoting, UTF-8):

* ``valid.csv`` / ``test.csv``: header ``Context,Ground Truth Utterance,Distractor_0,...,Distractor_8``;
  one row per context with the true next response and nine distractors sampled at random from the corpus
  (a distractor can have the same text as the ground truth).
* ``train.csv``: header ``Context,Utterance,Label``; label ``1.0`` (the true response) or ``0.0`` (a random
  one), also accepted as ``1`` / ``0``.

Every utterance ends with `` __eou__``; in a context every turn (one or more utterances of one speaker)
also ends with `` __eot__``. Texts are kept exactly as written (no normalisation).

These are organizer files, so a malformed one is a usage error (exit 2) naming ``file:line``; the rows of
a submission are checked elsewhere. Item ids and candidate ids are defined here so the benchmark, the
baselines and the tests agree: item ``<split>:<row>`` (1-based data row, header excluded) and candidates
``gt``, ``d0`` ... ``d8`` in file column order. Synthetic files in this layout: :mod:`dialeval.simulator.ubuntu`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from dialeval.core.errors import UsageError
from dialeval.formats.csvrows import header_rows, shorten

N_DISTRACTORS = 9
EVAL_HEADER = ("Context", "Ground Truth Utterance", *(f"Distractor_{i}" for i in range(N_DISTRACTORS)))
TRAIN_HEADER = ("Context", "Utterance", "Label")
CANDIDATE_IDS = ("gt", *(f"d{i}" for i in range(N_DISTRACTORS)))
"""Candidate ids in file column order: the ground truth, then Distractor_0 ... Distractor_8."""
EOU = "__eou__"
EOT = "__eot__"
_LABELS = {"1.0": 1, "0.0": 0, "1": 1, "0": 0}


def item_id(split: str, row: int) -> str:
    """``test:17``: the 17th data row (1-based, header excluded) of ``test.csv``."""
    return f"{split}:{row}"


@dataclass
class EvalFile:
    """A ``valid.csv`` / ``test.csv``: per row the context and its ten candidate texts (gt first)."""

    path: Path
    split: str
    contexts: list[str]
    candidates: list[tuple[str, ...]]  # (ground truth, distractor 0, ..., distractor 8) per row

    def __len__(self) -> int:
        return len(self.contexts)

    def item_ids(self) -> list[str]:
        return [item_id(self.split, i) for i in range(1, len(self) + 1)]


@dataclass
class TrainFile:
    path: Path
    contexts: list[str]
    utterances: list[str]
    labels: list[int]  # 1 = the true response, 0 = a random one


def read_eval(path: str | Path, split: str | None = None) -> EvalFile:
    """Read ``valid.csv`` / ``test.csv``; ``split`` defaults to the file's stem."""
    path = Path(path)
    contexts: list[str] = []
    cands: list[tuple[str, ...]] = []
    for _line, f in header_rows(path, EVAL_HEADER):
        contexts.append(f[0])
        cands.append(tuple(f[1:]))
    return EvalFile(path, split or path.stem, contexts, cands)


_CAPITAL = re.compile(r"[A-Z]")


def eval_rows_and_case(path: str | Path) -> tuple[int, bool]:
    """(data rows, whether any text holds an ASCII capital letter) of ``valid.csv`` / ``test.csv``.

    Two text versions of v2 circulate: the raw text (ParlAI's packaging) and the creator's tokenized, stemmed and
    lemmatized one, which the stemmer lower-cases: a capital letter says the text is raw; all lower case cannot
    tell the two apart."""
    n, capitals = 0, False
    for _, fields in header_rows(Path(path), EVAL_HEADER):
        n += 1
        capitals = capitals or any(map(_CAPITAL.search, fields))
    return n, capitals


def read_train(path: str | Path) -> TrainFile:
    """Read ``train.csv`` (labels ``1.0``/``0.0`` or ``1``/``0``)."""
    path = Path(path)
    out = TrainFile(path, [], [], [])
    for line, f in header_rows(path, TRAIN_HEADER):
        label = _LABELS.get(f[2].strip())
        if label is None:
            raise UsageError(f"{path}:{line}: label {shorten(f[2], 20)} is not 1.0, 0.0, 1 or 0")
        out.contexts.append(f[0])
        out.utterances.append(f[1])
        out.labels.append(label)
    return out


def turns(context: str) -> list[str]:
    """The turns of a context (split on `` __eot__``), each still holding its `` __eou__`` markers."""
    return [t.strip() for t in context.split(EOT) if t.strip()]
