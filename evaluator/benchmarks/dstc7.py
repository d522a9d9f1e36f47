"""DSTC7 Track 1 (NOESIS: subtasks 1-5, Ubuntu and Advising) and DSTC8 Track 2 subtask 1 (NOESIS II).

``--data`` is one released JSON file or a folder of them (:mod:`dialeval.formats.dstc7`). A submission is one
ranking file or, as the challenge took them (``submission.rst``), one zip of ``<Ubuntu|Advising>_subtask_<n>.json``
files: each member is scored against its own data file and the report holds every subtask's group. The dataset and subtask
come from the submission's file name (``Ubuntu_subtask_1.json``), else the data file's name or its ``scenario``,
and name the group (``ubuntu-1``). The correct ids come from the data's ``options-for-correct-answers`` or from the
ground-truth TSV given with ``--keys``. Subtask 2 ranks ids of the 120,000-candidate pool (``--pool FILE``, or the
one ``*pool*`` file beside the data); subtask 4 (every DSTC8 example) may rank ``NONE``, which is correct exactly
when no correct id is among the example's options. Submissions: :mod:`dialeval.benchmarks.listed`.

Metrics: R@k (success@k), MRR, MAP (textbook average precision over the correct ids) and the challenge's ranking
score, (R@10 + MRR) / 2. ``--lenient`` gives ``evaluations/metrics.py``'s numbers (its R@100 and MAP included).
DSTC8's ``--contexts``: ``all`` (the default, the official scorer: every example of the ground truth), ``mixed`` (the
NOESIS II baseline's ``is_valid_query``: only examples with a correct option and a wrong one) or ``with-positive``
(only examples with a correct option); the signature names a choice other than ``all``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path

from dialeval.benchmarks.base import Evaluation, Option, Request, parse_split_names
from dialeval.benchmarks.items import ItemSet
from dialeval.benchmarks.itemset import ItemSetBenchmark
from dialeval.benchmarks.listed import answer_key, one_file, shared_pool, side_file
from dialeval.core.errors import UsageError
from dialeval.core.ranks import RankTable
from dialeval.files.identity import data_identity
from dialeval.files.read import file_sha256
from dialeval.formats.dstc7 import NONE, RANKING, name_fields, read_data
from dialeval.formats.listed import read_answer_key

SUBTASK_2_LISTED = 100
"""A subtask 2 ranking lists the top 100 of the pool (submission.rst); strict mode refuses more, while the official
script reads every listed id (a correct id at 150 still earns 1/150 of MRR), and so does ``--lenient``."""
LENIENT_NOTES = (
    "lenient: R@k counts the examples whose first listed correct id is within the top k, over the ground truth's "
    "examples; R@100 counts a correct id listed at any position",
    "lenient: MAP is evaluations/metrics.py's, the mean over the correct ids in ground-truth order of (index + 1) / "
    "(submitted position + 1), over every id the ground truth lists (an empty or repeated one too): not average "
    "precision, and it can exceed 1",
    "lenient: an example ranked twice counts its last ranking, an id listed twice its first position; ids outside "
    "the example are ignored, confidences are not read",
    "lenient: only the ground truth's ids are upper-cased: a submitted id in another case matches nothing",
)


CORRECT = "options-for-correct-answers"
"""The data field holding an example's correct candidates (train and dev files; test files leave it out)."""


class DSTC7(ItemSetBenchmark):
    name = "dstc7"
    title = "DSTC7 Track 1 (NOESIS) response selection, subtasks 1-5, Ubuntu and Advising"
    group_label = "subtask"
    split_names = ("train", "dev", "test")
    data_name = "DSTC7 Track 1"
    split_descriptions = {"train": "training examples", "dev": "development examples",
                          "test": "test examples (the ground truth was released after the challenge)"}
    group_descriptions = {f"{key}-{n}": f"{label}: the next utterance among {text}"
                          for key, label in (("ubuntu", "Ubuntu IRC"), ("advising", "Advising"))
                          for n, text in enumerate(("100 candidates", "the 120,000-candidate pool",
                                                    "100 candidates, several of them correct (paraphrases)",
                                                    "100 candidates, or NONE when none is correct",
                                                    "100 candidates, with external knowledge"), 1)}
    default_metrics = ("r@1", "r@10", "r@50", "r@100", "mrr", "map", "noesis-score")
    submission_formats = ("ranking JSON [{example-id, candidate-ranking: [{candidate-id, confidence}]}]",)
    submission_suffixes = (".json",)
    options = (Option("lenient", "dstc7, dstc8: the official evaluations/metrics.py numbers, listing its definitions."),
               Option("pool", "dstc7, dstc8: subtask 2's candidate pool file (default: the one *pool* file beside "
                      "the data).", kind="text"))
    separate_keys = True
    listed, lenient_notes = RANKING, LENIENT_NOTES

    def public_files(self, files: dict[str, bytes], splits: list[str]) -> dict[str, bytes]:
        """The ``splits``' data files' examples without ``options-for-correct-answers`` (the ground truth, where a file
        carries it), and subtask 2's candidate pool (``*pool*``, which names no answer); nothing else (the
        ground-truth TSV given with ``--keys`` never reaches here, one left in the data folder stays out)."""
        import json

        from dialeval.formats.jsonio import parse_json_bytes

        out = {}
        for name, raw in files.items():
            base = name.rpartition("/")[2]
            if "pool" in base.lower():
                out[name] = raw
            elif base.endswith(".json") and (name_fields(base)[2] or "test") in splits:
                examples = parse_json_bytes(raw, name)
                if not isinstance(examples, list) or not all(isinstance(e, dict) and "options-for-next" in e
                                                             for e in examples):
                    continue  # not a data file (a run, a ground truth as JSON): never published
                if any(CORRECT in e for e in examples):
                    raw = (json.dumps([{k: v for k, v in e.items() if k != CORRECT} for e in examples],
                                      ensure_ascii=False, indent=1) + "\n").encode()
                out[name] = raw
        return out
    none_subtasks: frozenset[int] = frozenset({4})

    def evaluate(self, request: Request) -> Evaluation:
        """One ranking file, or a zip of them (each member against its own data file, one report)."""
        if not _is_zip(Path(request.submission)):
            return super().evaluate(request)
        from dialeval.files.archive import safe_extract
        from dialeval.files.write import private_temp_dir, release_private_temp_dir

        sub = Path(request.submission)
        tmp = private_temp_dir("zip-")
        try:
            safe_extract(sub, tmp / "x", sub, zip_ok=True)
            members = sorted((p for p in (tmp / "x").rglob("*") if p.is_file() and p.suffix.lower() == ".json"),
                             key=lambda p: p.name)
            if not members:
                raise UsageError(f"{sub}: the zip holds no .json ranking file (expected <Ubuntu|Advising>_subtask_<n>"
                                 ".json files)")
            if request.keys is not None and len(members) > 1:
                raise UsageError(f"{sub}: --keys is one subtask's ground truth, and the zip holds {len(members)} "
                                 "ranking files: score each file with its own --keys")
            runs, used = [], {}
            for m in members:
                runs.append(super().evaluate(replace(request, submission=m)))
                for split, files in self._used.items():
                    used.setdefault(split, []).extend(f for f in files if f not in used[split])
        finally:
            release_private_temp_dir(tmp)
        data = Path(request.data)
        identity = data_identity(list(dict.fromkeys(f for fs in used.values() for f in fs)),
                                 data if data.is_dir() else data.parent, splits=used)
        tables = [r.table for r in runs if r.table is not None]
        return Evaluation(
            table=RankTable.concat(tables) if len(tables) == len(runs) else None,
            problems=[p for r in runs for p in r.problems],
            splits=list(dict.fromkeys(s for r in runs for s in r.splits)),
            groups=list(dict.fromkeys(g for r in runs for g in r.groups)), data=identity,
            submission={"path": str(sub), "kind": "archive", "sha256": file_sha256(sub), "format": RANKING.name,
                        "files": [m.name for m in members]},
            signature_fields=runs[0].signature_fields, notes=list(dict.fromkeys(n for r in runs for n in r.notes)))

    def score_sets(self, request, splits, sets, identity, problems=None, others=()):
        # the data files a member was scored against: a zip's report hashes every member's
        self._used = {s: [f for x in sets if x.split == s and not x.optional for f in x.files] for s in splits}
        return super().score_sets(request, splits, sets, identity, problems, others)

    def _files(self, data: Path) -> list[Path]:
        # in a folder, released data files name their dataset and split (a run such as Ubuntu_subtask_1.json does not)
        return sorted(p for p in data.iterdir() if p.suffix == ".json" and None not in name_fields(p.name)[::2]
                      and "pool" not in p.name.lower()) if data.is_dir() else [data]

    def splits(self, data: Path) -> list[str]:
        return sorted({name_fields(p.name)[2] or "test" for p in self._files(Path(data))})

    def present(self, data: Path) -> dict[str, list[str]]:
        """The one data file the submission answers: of its dataset and subtask (subtask 5 is scored on subtask 1's
        files) and of ``--split``; without one, of the split whose examples it ranks."""
        request, sub = self.request, Path(self.request.submission)
        dataset, subtask, _ = name_fields(sub.name)
        splits = None if request.split in (None, "all", ["all"]) else parse_split_names(request.split)

        def fits(p: Path) -> bool:
            d, s, sp = name_fields(p.name)
            return d in (dataset or d, None) and s in (subtask or s, 1 if subtask == 5 else subtask, None) and \
                (splits is None or (sp or "test") in splits)

        self.df = df = one_file([read_data(p) for p in self._files(data) if fits(p)], sub, RANKING, data)
        scenario = str(df.one("scenario"))
        self.subtask = subtask or name_fields(df.path.name)[1] or (scenario.isdigit() and int(scenario)) or 1
        self.group = f"{dataset or name_fields(df.path.name)[0] or self.name}-{self.subtask}"
        return {name_fields(df.path.name)[2] or df.one("data-split") or "test": [self.group]}

    def splits_of(self, submission, data) -> list[str]:
        """The split of the one data file a submission answers (grading a run given without --split)."""
        self.request = Request(submission, Path(data))
        return list(self.present(Path(data)))

    def select_groups(self, requested: list[str]) -> list[str]:
        if not {self.group, str(self.subtask)} & set(requested):
            raise UsageError(f"{self.name}: the submission answers {self.group} only")
        return [self.group]

    def load(self, data, split, group, with_gold, problems) -> ItemSet:
        df, request, none_ok = self.df, self.request, self.subtask in self.none_subtasks
        if request.options.get("pool") and self.subtask != 2:  # given, so expected to count: never ignored
            raise UsageError(f"--pool: only subtask 2 ranks a shared candidate pool; {df.path.name} is {self.group} "
                             "data, whose examples list their own candidates")
        pool, pool_file = self._pool(df, none_ok) if self.subtask == 2 else (None, None)
        allowed = [pool or frozenset((*o, NONE) if none_ok else o) for o in df.options]
        gold, ids = self._gold(df, allowed, none_ok, bool(request.options.get("lenient"))) if with_gold else (None, df.ids)
        at = {e: i for i, e in enumerate(df.ids)}
        files = (df.path, *([request.keys] if request.keys else []), *([pool_file] if pool_file else []))
        return ItemSet(group, ids, [allowed[at[e]] if e in at else frozenset() for e in ids], gold, files=files,
                       longest=SUBTASK_2_LISTED if self.subtask == 2 else None)

    def _pool(self, df, none_ok: bool):
        """Subtask 2's pool (``--pool``, the one ``*pool*`` file beside the data, else the data's own candidates)
        and the file it came from."""
        path = side_file(self.request.options.get("pool"), df.path.parent, "pool")
        pool, note = shared_pool(path, RANKING, df.options, df.correct or (), 120_000 + none_ok, "subtask 2")
        self.notes.extend([note] if note else [])
        return pool | {NONE} if none_ok and note is None else pool, path

    def _gold(self, df, allowed, none_ok: bool, lenient: bool):
        """(correct ids per scored example, the scored examples' ids): the data's examples, or in lenient mode with
        ``--keys`` the ground truth's, upper-cased (what the official script scores)."""
        keys = read_answer_key(self.request.keys, RANKING) if self.request.keys is not None else None
        ids, given = answer_key(df.ids, df.correct, keys, self.request.keys, df.path, "example", keys and lenient)
        if keys is not None and lenient:
            return [[g.upper() for g in c] for c in given], ids
        out = []
        for e, c, a in zip(df.ids, given, allowed, strict=True):
            found = [g.upper() if lenient else g for g in c if g in a and g != NONE]  # lenient: as the official TSV
            if not found and not none_ok:
                raise UsageError(f"{df.path}: example {e} has no correct answer among its options")
            out.append(found or [NONE])
        return out, df.ids

    def item_values(self, where, gold) -> dict[str, float]:
        if not self.request.options.get("lenient"):
            return super().item_values(where, gold)
        from dialeval.metrics.ranking import dstc7_official_ap

        return {"map": dstc7_official_ap(where, len(gold)), "r@100": float(any(q is not None for q in where))}


DSTC8_CONTEXTS = {"all": "the official scorer: every example", "with-positive": "examples with a correct option",
                  "mixed": "the NOESIS II baseline's is_valid_query: examples with a correct option and a wrong one"}


def _is_zip(path: Path) -> bool:
    """A zip archive, recognised by its first bytes (a ``-`` or an unreadable file is left to the ranking reader)."""
    from dialeval.files.read import open_input

    if str(path) == "-":
        return False
    try:
        with open_input(path, what="a submission") as f:
            return f.file.read(4) == b"PK\x03\x04"
    except (UsageError, OSError):
        return False


class DSTC8(DSTC7):
    """DSTC8 Track 2 subtask 1: DSTC7's files and rules, and ``"NONE"`` may be ranked in every example.

    ``--contexts`` chooses the examples that count (module docstring): the baseline's ``subtask1/answer_selection/
    metrics.py`` skips a query without a positive or without a negative, so its numbers leave out every example
    whose correct answer is absent (NONE); the official scorer keeps them."""

    name = "dstc8"
    title = "DSTC8 Track 2 (NOESIS II) subtask 1 response selection, Ubuntu and Advising"
    data_name = "DSTC8 Track 2"
    group_descriptions = {f"{key}-1": f"{label}: the next utterance among 100 candidates, or NONE when none is "
                          "correct" for key, label in (("ubuntu", "Ubuntu IRC"), ("advising", "Advising"))}
    default_metrics = ("r@1", "r@10", "r@50", "mrr", "map", "noesis-score")
    none_subtasks = frozenset({1, 2, 3, 4, 5})
    # the name, kind and choices of Douban's --contexts (one flag); the default is the official scorer's
    options = (*DSTC7.options, Option("contexts", "dstc8: examples that count: all (the official scorer), mixed (the "
                                      "baseline's is_valid_query) or with-positive.", "choice",
                                      ("mixed", "with-positive", "all"), "all"))
    left_out: dict[str, str] = {}  # example id -> why --contexts leaves it out (set while loading)

    def _contexts(self) -> str:
        return self.request.options.get("contexts") or "all"

    def load(self, data, split, group, with_gold, problems) -> ItemSet:
        item_set = super().load(data, split, group, with_gold, problems)
        contexts = self._contexts()
        self.left_out = {}
        if contexts != "all" and item_set.gold is not None:
            for i, (iid, gold) in enumerate(zip(item_set.item_ids, item_set.gold, strict=True)):
                if NONE in gold:
                    self.left_out[iid] = "without a correct option"
                elif contexts == "mixed" and set(item_set.candidates_of(i)) - {NONE} <= set(gold):
                    self.left_out[iid] = "without a wrong option"
        return item_set

    def score_sets(self, request, splits, sets, identity, problems=None, others=()):
        ev = super().score_sets(request, splits, sets, identity, problems, others)
        contexts = self._contexts()
        if contexts != "all" and ev.table is not None:
            import numpy as np

            keep = ~np.isin(ev.table.item_id, list(self.left_out))
            why = ", ".join(f"{n:,} {w}" for w, n in Counter(self.left_out.values()).items())
            ev.notes.append(f"contexts {contexts} ({DSTC8_CONTEXTS[contexts]}): {int(keep.sum()):,} of "
                            f"{len(ev.table):,} examples scored" + (f"; {why} left out" if why else "; none left out"))
            ev.table = ev.table.take(keep)
        return ev

    def signature_fields(self, request, ev) -> dict:
        fields = super().signature_fields(request, ev)
        return fields if self._contexts() == "all" else {**fields, "contexts": self._contexts()}
