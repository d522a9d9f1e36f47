"""Douban Conversation Corpus, E-commerce Dialogue Corpus and Ubuntu v1: response selection in the SMN/DAM/MSN
TSV form, ten candidates per context, scored with MAP, MRR, P@1 and R10@k (:mod:`dialeval.metrics.selection`).

Data (:mod:`dialeval.formats.douban`): ``--data test.txt`` (the split is the file's stem) or a folder holding
the split files (``dev.txt``/``test.txt``; Ubuntu v1 ``valid.txt``/``test.txt``). Submissions: one score per
data line (or DAM's ``score<TAB>label``: a label that differs from the data's means the files are misaligned),
or JSON scores keyed by context id
(``{"format": "scores", "items": {"test:1": {"1": 0.3, ..., "10": 0.1}}}``; a missing context scores 0).

The published scorers disagree, so the protocol is chosen and named in the signature: ``--contexts mixed``
(SMN, DAM: at least one positive and one negative), ``with-positive`` (MSN) or ``all`` (a context without a
positive scores 0), and every tie policy, ``input-order`` being DAM's stable sort. ``--protocols`` adds every
combination's numbers under the table. Reading the submission and the protocols are the skeleton's
(:mod:`dialeval.benchmarks.labelled`).
"""

from __future__ import annotations

from pathlib import Path

from dialeval.benchmarks.items import ItemSet
from dialeval.benchmarks.labelled import LabelledBenchmark
from dialeval.core.errors import UsageError
from dialeval.core.ranks import NumberedIds
from dialeval.formats import douban as fmt


class _TsvBenchmark(LabelledBenchmark):
    group_label = "file"
    public_data_note = ("each line's first field is its label (1: a true response), and a copy without it would still "
                        "give the answer away where the release puts the true response first of its ten (Ubuntu v1, "
                        "E-commerce); it is not a file dialeval or the release's scorers read either")
    split_names = ("dev", "valid", "test")
    split_file = "{split}.txt"
    split_descriptions = {"dev": "development contexts (dev.txt)", "valid": "validation contexts (valid.txt)",
                          "test": "test contexts (test.txt), 10 candidate responses each"}
    default_metrics = ("map", "mrr", "p@1", "r10@1", "r10@2", "r10@5")

    def present(self, data: Path) -> dict[str, list[str]]:
        if data.is_file() or (data.exists() and not data.is_dir()):  # one data file (a FIFO is refused when read)
            return {data.stem: [data.name]}
        found = {s: [f"{s}.txt"] for s in self.split_names if (data / f"{s}.txt").exists()}
        if not found:
            raise UsageError(f"{data}: no such file, and no {' or '.join(s + '.txt' for s in self.split_names)} in "
                             "such a folder")
        return found

    def load(self, data, split, group, with_gold, problems):
        path = self.data_file(data, group)
        labels = fmt.read_labels(path)
        return ItemSet(group, NumberedIds(f"{split}:", len(labels)), fmt.CANDIDATE_IDS, None, files=(path,),
                       extra=labels)

    def split_of_id(self, item_id: str) -> str | None:
        return item_id.partition(":")[0]


class Douban(_TsvBenchmark):
    name = "douban"
    data_name = "Douban Conversation Corpus"
    split_names = ("dev", "test")
    title = "Douban Conversation Corpus response selection (1,000 test contexts x 10), MAP/MRR/P@1/R10@k"


class Ecommerce(_TsvBenchmark):
    name = "ecommerce"
    data_name = "E-commerce Dialogue Corpus"
    split_names = ("dev", "test")
    title = "E-commerce Dialogue Corpus response selection (1,000 test contexts x 10, one positive each)"


class UbuntuV1(_TsvBenchmark):
    name = "ubuntu-v1"
    data_name = "Ubuntu Dialogue Corpus v1"
    split_names = ("valid", "test")
    title = "Ubuntu Dialogue Corpus v1 in the SMN/DAM TSV form (gold first of 10): R2@1, R10@1, R10@2, R10@5"
    default_metrics = ("r2@1", "r10@1", "r10@2", "r10@5")
    nested = (2,)  # R2@1: the gold among the first two candidates
