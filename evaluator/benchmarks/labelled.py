"""The skeleton of benchmarks whose contexts carry 0/1-labelled candidates (any number of positives per context)
and whose submissions score every candidate: Douban, E-commerce and Ubuntu v1 in the SMN/DAM/MSN TSV form.

A benchmark declares what :class:`~dialeval.benchmarks.itemset.ItemSetBenchmark` asks (splits, ``present``,
``load``, metrics) with one difference: ``load`` returns an :class:`~dialeval.benchmarks.items.ItemSet` whose
``extra`` is the (contexts, candidates) 0/1 label matrix, and :meth:`LabelledBenchmark.data_file` names the data
file of a group. This module reads the submission (one score per data line, DAM's ``score<TAB>label`` lines
whose labels must be the data's, or JSON scores keyed by context id; a missing context scores 0), computes
the per-context metrics of :mod:`dialeval.metrics.selection` under the tie policy, and applies the
``--contexts`` choice, saying how many contexts it left out and why. ``--protocols`` adds every (contexts,
ties) combination's numbers under the table. ``nested = (2,)`` adds R2@1 (the first two candidates alone).
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import numpy as np

from dialeval.benchmarks.base import TIE_POLICIES, Evaluation, Option, Request
from dialeval.benchmarks.itemset import PROTOCOLS, ItemSetBenchmark, protocol_lines
from dialeval.core.errors import UnreadableInput, UsageError
from dialeval.core.problems import Capped, Problem, pointer, short
from dialeval.core.ranks import RankTable
from dialeval.files.read import SNIFF_BYTES, check_regular, file_sha256, read_bytes, sniff
from dialeval.formats.scores import count_lines, first_byte, read_line_scores
from dialeval.metrics.selection import context_metrics, gold_ranks

CONTEXTS = {"mixed": "SMN/DAM: at least one positive and one negative", "with-positive": "MSN: at least one positive",
            "all": "every context; one without a positive scores 0"}
CONTEXTS_OPTION = Option("contexts", "Contexts that count: mixed (SMN, DAM), with-positive (MSN) or all.", "choice",
                         tuple(CONTEXTS), "mixed")
WHAT = "one score file (.txt lines or .json scores)"


def kept(labels: np.ndarray, contexts: str) -> np.ndarray:
    """The contexts a protocol scores (a boolean mask over the rows of a (contexts, N) label matrix)."""
    positives = labels.sum(axis=1)
    if contexts == "all":
        return np.ones(len(labels), bool)
    return (positives > 0) & ((positives < labels.shape[1]) | (contexts == "with-positive"))


def left_out(group: str, labels: np.ndarray, contexts: str) -> str:
    """The note saying how many contexts a protocol scores, and why the others are left out."""
    positives = labels.sum(axis=1)
    n, keep = len(labels), int(kept(labels, contexts).sum())
    why = [f"{int((positives == 0).sum()):,} without a positive"] if contexts != "all" else []
    if contexts == "mixed":
        why.append(f"{int((positives == labels.shape[1]).sum()):,} without a negative")
    tail = f"; {n - keep:,} left out ({', '.join(why)})" if n > keep else "; none left out"
    return f"{group}: contexts {contexts} ({CONTEXTS[contexts]}): {keep:,} of {n:,} scored{tail}"


class LabelledBenchmark(ItemSetBenchmark):
    """Contexts with 0/1-labelled candidates, scored from one score per candidate (module docstring)."""

    submission_formats = ("one score per data line", "score<TAB>label lines (DAM)", "scores (JSON)")
    submission_suffixes = (".json", ".txt")
    options: ClassVar[tuple[Option, ...]] = (CONTEXTS_OPTION, PROTOCOLS)

    def data_file(self, data: Path, group: str) -> Path:
        """The data file of a group: ``--data`` itself when it names a file, else the group's file in the folder."""
        return data if data.name == group and not data.is_dir() else data / group

    def splits_of(self, submission, data: Path) -> list[str] | None:
        """The splits a JSON document's context ids name, or the one split whose line count a line file has."""
        check_regular(submission, what=WHAT)
        if first_byte(submission) == b"{":
            return super().splits_of(submission, data)
        lines = count_lines(submission)
        return [s for s, (g, *_) in self.present(data).items() if count_lines(self.data_file(data, g)) == lines]

    def signature_fields(self, request: Request, ev: Evaluation) -> dict:
        return {"ties": request.ties, "contexts": request.options.get("contexts", "mixed")}

    def score_sets(self, request: Request, splits, sets, identity, problems=None, others=()) -> Evaluation:
        """Read the submission (lines or JSON) against the contexts; per-context values under the protocol."""
        outside = [x for x in sets if x.optional]  # files outside --task: a JSON document's items of them are left out
        sets = [x for x in sets if not x.optional]
        sub = Path(request.submission)
        check_regular(sub, what=WHAT)
        problems = list(problems or [])
        form = "scores" if first_byte(sub) == b"{" else "lines"
        if form == "scores":
            scores, seen = self.read_json(sub, splits, sets, problems, outside)
        else:
            scores, seen = self.read_lines(sub, splits, sets, problems)
        info = {"path": str(sub), "kind": "file", "sha256": file_sha256(sub), "format": form}
        ev = Evaluation(table=None, problems=problems, splits=splits, groups=[x.group for x in sets], data=identity,
                        submission=info, signature_fields={})
        ev.signature_fields = self.signature_fields(request, ev)
        contexts = request.options.get("contexts", "mixed")
        if not request.scoring or not ev.valid or scores is None:
            return ev
        parts = []
        for x in sets:
            s, labels = x.split, x.extra
            parts.append(self.table(x, scores[s], seen[s], request.ties).take(kept(labels, contexts)))
            ev.notes.append(left_out(x.group, labels, contexts))
            if request.options.get("protocols"):
                ev.notes.extend(self.protocols(x.group, scores[s], labels, seen[s]))
        ev.table = RankTable.concat(parts)
        return ev

    # ---- reading --------------------------------------------------------------------------------------------
    def read_lines(self, sub: Path, splits: list[str], sets, problems: list):
        """Scores as a (contexts, N) matrix per split and which contexts were scored, or (None, None)."""
        file = sub.name
        if len(splits) > 1:
            raise UsageError("a line score file answers one split: pass --split")
        split = splits[0]
        want = next(x.extra for x in sets if x.split == split)
        try:
            scores, given, faults = read_line_scores(sub, want.size, shown=file)
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

    def read_json(self, sub: Path, splits: list[str], sets, problems: list, outside=()):
        """JSON scores keyed by context id and candidate id; unscored candidates rank below, tied. Contexts of the
        ``outside`` sets (files outside --task) and of the data's other splits are left out unchecked, said in one
        warning each (:func:`~dialeval.benchmarks.rankings.other_split_outcome`)."""
        from dialeval.benchmarks.items import other_group_warning
        from dialeval.benchmarks.rankings import other_split_outcome
        from dialeval.formats.scores import decode_scores_json

        file = sub.name
        try:
            raw = read_bytes(sub)
            bad = sniff(raw[:SNIFF_BYTES], expect="a JSON scores document or one score per line")
            if bad is not None:
                raise bad
            ids = {iid: (x.split, i) for x in sets for i, iid in enumerate(x.item_ids)}
            other = {iid for x in outside for iid in x.item_ids}
            split_of = getattr(self, "other_split_of", None) or (lambda iid: None)

            def elsewhere(iid: str) -> str | None:
                """"": a file outside --task; a split's name: another split of the data; None: to be checked."""
                return "" if iid in other else None if iid in ids else split_of(iid)

            items, faults = decode_scores_json(raw, keep=ids, skip=lambda iid: elsewhere(iid) is not None)
        except UnreadableInput as e:
            problems.append(Problem(e.code, "", e.reason, "error", file))
            return None, None
        problems.extend(Problem(f.code, f.pointer, f.message, f.severity, file) for f in faults)
        if items is None:
            return None, None
        found = Capped(file=file)
        scores = {x.split: np.full(x.extra.shape, -np.inf) for x in sets}
        seen = {x.split: np.zeros(len(x.extra), bool) for x in sets}
        names = sets[0].candidates
        col = {c: j for j, c in enumerate(names)}
        partial = left_out = 0
        other_splits: dict[str, int] = {}
        for iid, cands in items.items():
            where = elsewhere(iid)
            if where == "":
                left_out += 1
                continue
            if where is not None:
                other_splits[where] = other_splits.get(where, 0) + 1
                continue
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
                                             f"{short(cid)} is not one of {names[0]} ... {names[-1]}", file=file))
                else:
                    scores[at[0]][at[1], col[cid]] = v
            partial += len(cands) < len(names)
            seen[at[0]][at[1]] = True
        missing = sum(int((~m).sum()) for m in seen.values())
        if missing:
            found.append(Problem("missing-dialog", "", f"{missing:,} {'context is' if missing == 1 else 'contexts are'} "
                                 "not in the submission: each scores 0 on every metric", "warning", file, count=missing))
        if left_out:
            found.always(other_group_warning(left_out, [*sets, *outside], self.group_label, file))
        if other_splits:
            unknown = len(items) - left_out - sum(other_splits.values()) - sum(int(m.sum()) for m in seen.values())
            found.always(other_split_outcome(other_splits, unknown, ", ".join(splits),
                                             any(m.any() for m in seen.values()), "context ids", file))
        if partial:
            found.append(Problem("unscored-candidate", "", f"{partial:,} {'context does' if partial == 1 else 'contexts do'} "
                                 "not score every candidate: the unscored ones rank below the scored ones, tied",
                                 "warning", file))
        problems.extend(found.close())
        return (None, None) if any(p.severity == "error" for p in found) else (scores, seen)

    # ---- scoring ---------------------------------------------------------------------------------------------
    def values(self, scores: np.ndarray, labels: np.ndarray, seen: np.ndarray, ties: str) -> dict[str, np.ndarray]:
        out = context_metrics(scores, labels, ties)
        for n in self.nested:  # 1 in n: the first n candidates alone
            out[f"r{n}@1"] = context_metrics(scores[:, :n], labels[:, :n], ties, (1,))[f"r{n}@1"]
        return {k: np.where(seen, v, 0.0) for k, v in out.items()}

    def table(self, x, scores, seen, ties) -> RankTable:
        labels = x.extra
        rank, tied = gold_ranks(scores, labels, ties)
        return RankTable.build(benchmark=self.name, split=x.split, group=x.group, item_ids=x.item_ids,
                               gold_rank=np.where(seen, rank, 0), n_candidates=labels.shape[1],
                               ties=np.where(seen, tied, 0), values=self.values(scores, labels, seen, ties))

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
