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
combination's numbers under the table.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dialeval.benchmarks.base import TIE_POLICIES, Evaluation, Option, Request
from dialeval.benchmarks.items import ItemSet
from dialeval.benchmarks.itemset import PROTOCOLS, ItemSetBenchmark, protocol_lines
from dialeval.core.errors import UnreadableInput, UsageError
from dialeval.core.problems import Capped, Problem, pointer, short
from dialeval.core.ranks import NumberedIds, RankTable
from dialeval.files.read import (
    SNIFF_BYTES,
    check_regular,
    file_sha256,
    iter_bounded_lines,
    open_input,
    read_bytes,
    sniff,
)
from dialeval.formats import douban as fmt
from dialeval.metrics.selection import context_metrics, gold_ranks

CONTEXTS = {"mixed": "SMN/DAM: at least one positive and one negative", "with-positive": "MSN: at least one positive",
            "all": "every context; one without a positive scores 0"}
_OPTIONS = (
    Option("contexts", "Contexts that count: mixed (SMN, DAM), with-positive (MSN) or all.", "choice",
           tuple(CONTEXTS), "mixed"),
    PROTOCOLS,
)


def kept(labels: np.ndarray, contexts: str) -> np.ndarray:
    """The contexts a protocol scores (a boolean mask over the rows of a (contexts, 10) label matrix)."""
    positives = labels.sum(axis=1)
    if contexts == "all":
        return np.ones(len(labels), bool)
    return (positives > 0) & ((positives < labels.shape[1]) | (contexts == "with-positive"))


class _TsvBenchmark(ItemSetBenchmark):
    group_label = "file"
    split_names = ("dev", "valid", "test")
    split_descriptions = {"dev": "development contexts (dev.txt)", "valid": "validation contexts (valid.txt)",
                          "test": "test contexts (test.txt), 10 candidate responses each"}
    default_metrics = ("map", "mrr", "p@1", "r10@1", "r10@2", "r10@5")
    submission_formats = ("one score per data line", "score<TAB>label lines (DAM)", "scores (JSON)")
    options = _OPTIONS
    problem_codes = {"labels-differ": "the labels of a score<TAB>label file are not the data's: the files are "
                                      "misaligned"}

    def present(self, data: Path) -> dict[str, list[str]]:
        if data.is_file() or (data.exists() and not data.is_dir()):  # one data file (a FIFO is refused when read)
            return {data.stem: [data.name]}
        found = {s: [f"{s}.txt"] for s in self.split_names if (data / f"{s}.txt").exists()}
        if not found:
            raise UsageError(f"{data}: no such file, and no {' or '.join(s + '.txt' for s in self.split_names)} in "
                             "such a folder")
        return found

    def load(self, data, split, group, with_gold, problems):
        path = data if data.name == group and not data.is_dir() else data / group
        labels = fmt.read_labels(path)
        return ItemSet(group, NumberedIds(f"{split}:", len(labels)), fmt.CANDIDATE_IDS, None, files=(path,),
                       extra=labels)

    def split_of_id(self, item_id: str) -> str | None:
        return item_id.partition(":")[0]

    def splits_of(self, submission, data: Path) -> list[str] | None:
        """The splits a JSON document's context ids name, or the one split whose line count a line file has."""
        check_regular(submission, what="one score file (.txt lines or .json scores)")
        if _head(Path(submission)) == b"{":
            return super().splits_of(submission, data)
        lines = _count_lines(Path(submission))
        return [s for s, (g,) in self.present(data).items()
                if _count_lines(data if data.name == g and not data.is_dir() else data / g) == lines]

    def signature_fields(self, request: Request, ev: Evaluation) -> dict:
        return {"ties": request.ties, "contexts": request.options.get("contexts", "mixed")}

    def score_sets(self, request: Request, splits, sets, identity, problems=None, others=()) -> Evaluation:
        """Read the submission (lines or JSON) against the contexts; per-context values under the protocol."""
        sets = [x for x in sets if not x.optional]
        sub = Path(request.submission)
        check_regular(sub, what="one score file (.txt lines or .json scores)")
        problems = list(problems or [])
        labels = {x.split: x.extra for x in sets}
        form = "scores" if _head(sub) == b"{" else "lines"
        scores, seen = (self.read_json if form == "scores" else self.read_lines)(sub, splits, labels, problems)
        info = {"path": str(sub), "kind": "file", "sha256": file_sha256(sub), "format": form}
        ev = Evaluation(table=None, problems=problems, splits=splits, groups=[x.group for x in sets], data=identity,
                        submission=info, signature_fields={})
        ev.signature_fields = self.signature_fields(request, ev)
        contexts = request.options.get("contexts", "mixed")
        if not request.scoring or not ev.valid or scores is None:
            return ev
        parts = []
        for x in sets:
            s = x.split
            parts.append(self.table(s, x.group, scores[s], labels[s], seen[s], request.ties, contexts))
            ev.notes.append(self.left_out(x.group, labels[s], contexts))
            if request.options.get("protocols"):
                ev.notes.extend(self.protocols(x.group, scores[s], labels[s], seen[s]))
        ev.table = RankTable.concat(parts)
        return ev

    # ---- reading --------------------------------------------------------------------------------------------
    def read_lines(self, sub: Path, splits: list[str], labels: dict, problems: list):
        """Scores as a (contexts, 10) matrix per split and which contexts were scored, or (None, None)."""
        file = sub.name
        if len(splits) > 1:
            raise UsageError("a line score file answers one split: pass --split")
        split = splits[0]
        want = labels[split]
        try:
            scores, given, faults = fmt.read_line_scores(sub, want.size, shown=file)
        except UnreadableInput as e:
            problems.append(Problem(e.code, "", e.reason, "error", file))
            return None, None
        problems.extend(Problem(f.code, f.pointer, f.message, f.severity, file) for f in faults)
        if scores is None:
            return None, None
        if given is not None and not np.array_equal(given, want.reshape(-1)):
            problems.append(Problem("labels-differ", "", "its labels are not the data's: the score file is not aligned "
                                    "with the data file (made from another file, or in another order); not scored",
                                    file=file))
            return None, None
        return {split: scores.reshape(want.shape)}, {split: np.ones(len(want), bool)}

    def read_json(self, sub: Path, splits: list[str], labels: dict, problems: list):
        from dialeval.formats.scores import decode_scores_json

        file = sub.name
        try:
            raw = read_bytes(sub)
            bad = sniff(raw[:SNIFF_BYTES], expect="a JSON scores document or one score per line")
            if bad is not None:
                raise bad
            ids = {fmt.item_id(s, i + 1): (s, i) for s in splits for i in range(len(labels[s]))}
            items, faults = decode_scores_json(raw, keep=ids)
        except UnreadableInput as e:
            problems.append(Problem(e.code, "", e.reason, "error", file))
            return None, None
        problems.extend(Problem(f.code, f.pointer, f.message, f.severity, file) for f in faults)
        if items is None:
            return None, None
        found = Capped(make=lambda message, severity: Problem("", "", message, severity, file))
        scores = {s: np.full(labels[s].shape, -np.inf) for s in splits}
        seen = {s: np.zeros(len(labels[s]), bool) for s in splits}
        col = {c: j for j, c in enumerate(fmt.CANDIDATE_IDS)}
        partial = 0
        for iid, cands in items.items():
            at = ids.get(iid)
            if at is None:
                if not found.full("unknown-dialog"):  # a million unknown items: twenty messages are built
                    found.append(Problem("unknown-dialog", "/items" + pointer(iid), f"item {short(iid)} is not a "
                                         f"context of split {', '.join(splits)}", file=file))
                continue
            for cid, v in cands.items():
                if cid not in col:
                    if not found.full("unknown-candidate"):
                        found.append(Problem("unknown-candidate", "/items" + pointer(iid, cid), f"candidate "
                                             f"{short(cid)} is not one of 1 ... {fmt.PER_CONTEXT}", file=file))
                else:
                    scores[at[0]][at[1], col[cid]] = v
            partial += len(cands) < fmt.PER_CONTEXT
            seen[at[0]][at[1]] = True
        missing = sum(int((~m).sum()) for m in seen.values())
        if missing:
            found.append(Problem("missing-dialog", "", f"{missing:,} contexts are not in the submission: each "
                                 "scores 0 on every metric", "warning", file))
        if partial:
            found.append(Problem("unscored-candidate", "", f"{partial:,} contexts do not score every candidate: the "
                                 "unscored ones rank below the scored ones, tied", "warning", file))
        problems.extend(found.close())
        return (None, None) if any(p.severity == "error" for p in found) else (scores, seen)

    # ---- scoring ---------------------------------------------------------------------------------------------
    def values(self, scores: np.ndarray, labels: np.ndarray, seen: np.ndarray, ties: str) -> dict[str, np.ndarray]:
        out = context_metrics(scores, labels, ties)
        if "r2@1" in self.default_metrics:  # 1 in 2: the first two candidates alone
            out.update({k: v for k, v in context_metrics(scores[:, :2], labels[:, :2], ties, (1,)).items()
                        if k == "r2@1"})
        return {k: np.where(seen, v, 0.0) for k, v in out.items()}

    def table(self, split, group, scores, labels, seen, ties, contexts) -> RankTable:
        rank, tied = gold_ranks(scores, labels, ties)
        t = RankTable.build(benchmark=self.name, split=split, group=group, item_ids=NumberedIds(f"{split}:", len(labels)),
                            gold_rank=np.where(seen, rank, 0), n_candidates=labels.shape[1], ties=np.where(seen, tied, 0),
                            values=self.values(scores, labels, seen, ties))
        return t.take(kept(labels, contexts))

    def left_out(self, group: str, labels: np.ndarray, contexts: str) -> str:
        positives = labels.sum(axis=1)
        n, keep = len(labels), int(kept(labels, contexts).sum())
        why = [f"{int((positives == 0).sum()):,} without a positive"] if contexts != "all" else []
        if contexts == "mixed":
            why.append(f"{int((positives == labels.shape[1]).sum()):,} without a negative")
        tail = f"; {n - keep:,} left out ({', '.join(why)})" if n > keep else "; none left out"
        return f"{group}: contexts {contexts} ({CONTEXTS[contexts]}): {keep:,} of {n:,} scored{tail}"

    def protocols(self, group: str, scores, labels, seen) -> list[str]:
        """One line per (contexts, ties) protocol with every default metric: how much a number owes to it."""
        rows = []
        for ties in TIE_POLICIES:
            v = self.values(scores, labels, seen, ties)
            for contexts in CONTEXTS:
                mask = kept(labels, contexts)
                rows.append(([contexts, ties], {m: float(v[m][mask].mean()) if mask.any() else float("nan")
                                                for m in self.default_metrics}, int(mask.sum())))
        return protocol_lines(f"{group}, every protocol", ["contexts", "ties"], list(self.default_metrics), rows)


def _head(path: Path) -> bytes:
    """The first byte after any BOM and whitespace (``{``: JSON scores); b"" when the file cannot say."""
    try:
        with open_input(path, what="a score file") as f:
            return f.file.read(SNIFF_BYTES).lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
    except (UnreadableInput, OSError):  # the line reader then reports the file as the submission's problem
        return b""


def _count_lines(path: Path) -> int:
    return sum(1 for _, line, _ in iter_bounded_lines(path, 0, what="a file") if line is None)


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
