"""Ubuntu Dialogue Corpus v2, next-utterance classification: recall@k in 1-of-N (R2@1, R10@1, R10@2, R10@5).

Data: ``--data DIR`` holding ``valid.csv`` and/or ``test.csv`` (:mod:`dialeval.formats.ubuntu`). Each row is
one item, ``<split>:<row>`` (1-based, header excluded), with candidates ``gt``, ``d0`` ... ``d8`` (the
ground truth is always ``gt``). 1-in-N uses the first N candidates, so 1-in-2 is ``gt`` + ``d0``.

Submissions (:mod:`dialeval.benchmarks.items`): the DSTC6 result format keyed by these item ids, JSON scores,
or a score matrix: ``.npy`` (float or integer, shape rows x 10, or rows x N with 2 <= N <= 10 to score the
first N candidates only) or a headerless ``.csv``, one row per context in file order, columns in file order
(gt, d0 ... d8). Ties need a policy (``Request.ties``), which goes into every signature. A JSON submission
may cover ``valid`` and ``test`` at once (the item ids say which); a matrix covers one split.
"""

from __future__ import annotations

from pathlib import Path

from dialeval.benchmarks.base import Evaluation, Request
from dialeval.benchmarks.items import ItemSet, SameGold
from dialeval.benchmarks.itemset import SplitFileBenchmark
from dialeval.core.ranks import NumberedIds
from dialeval.formats.ubuntu import CANDIDATE_IDS, eval_rows_and_case, item_id

NESTED = (2, 5, 10)
_GOLD = frozenset({"gt"})


def item_set(split: str, n_rows: int, scoring: bool = True, files: tuple[Path, ...] = ()) -> ItemSet:
    """The items of one split with ``n_rows`` data rows (gold ``gt`` in column 0 when scoring)."""
    # ids made only when read (a million-row file scores without a million strings); same ids as item_id()
    ids = NumberedIds(item_id(split, ""), n_rows)
    gold = SameGold(_GOLD, n_rows) if scoring else None
    return ItemSet(Ubuntu.split_file.format(split=split), ids, CANDIDATE_IDS, gold,
                   gold_columns=0 if scoring else None, split=split, files=files)


class Ubuntu(SplitFileBenchmark):
    name = "ubuntu"
    public_data_note = ("test.csv names each row's true response by its column (Ground Truth Utterance, before the "
                        "distractors); a row without it is not a row dialeval or the release's scorers read")
    title = "Ubuntu Dialogue Corpus v2 next-utterance classification, recall@k in 1-of-N"
    group_label = "file"
    split_names = ("valid", "test")
    split_file = "{split}.csv"
    layout_name = "Ubuntu v2"
    data_name = "Ubuntu Dialogue Corpus v2"
    split_descriptions = {"valid": "dialogs of May to August 2012: the true next utterance among 10",
                          "test": "dialogs of September to December 2012: the true next utterance among 10"}
    default_metrics = ("r2@1", "r10@1", "r10@2", "r10@5")
    submission_formats = ("dstc6-result", "scores (JSON)", ".npy matrix", "headerless .csv matrix")
    nested = NESTED
    raw_text = False  # whether a text read holds a capital letter (raw text, not the stemmed version)

    def present(self, data: Path) -> dict[str, list[str]]:
        found = super().present(data)
        self.raw_text = False  # a new evaluation: set by load() from the files it reads
        return found

    def load(self, data, split, group, with_gold, problems):
        path = data / group
        rows, capitals = eval_rows_and_case(path)  # the input layer vets the file
        self.raw_text = self.raw_text or capitals
        return item_set(split, rows, with_gold, (path,))

    def split_of_id(self, item_id: str) -> str | None:
        return item_id.partition(":")[0]

    def metrics_for(self, evaluation: Evaluation) -> list[str]:
        """The default metrics whose 1-in-N the submission covers (a rows x 2 matrix gives R2@1 only)."""
        t = evaluation.table
        if t is None:
            return list(self.default_metrics)
        have = set(t.nested)
        return [m for m in self.default_metrics if int(m[1:].split("@")[0]) in have] or list(self.default_metrics)

    def signature_fields(self, request: Request, ev: Evaluation) -> dict:
        # which of v2's two text versions (releases.md): capitals mean raw text; the stemmed one is all lower case
        fields = {"ties": self.signed_ties(request, ev), "text": "raw" if self.raw_text else "lower"}
        cols = ev.submission.get("columns")
        if cols is not None and cols < len(CANDIDATE_IDS):
            fields["nc"] = cols
            ev.notes.append(f"the score matrix has {cols} columns: items are ranked among their first {cols} candidates")
        return fields
