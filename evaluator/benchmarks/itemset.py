"""The item-set skeleton: a benchmark declares its data, and the evaluate loop is written here once.

A benchmark whose data are read into :class:`~dialeval.benchmarks.items.ItemSet` s (bAbI, Movie Dialog,
Ubuntu, ...) subclasses :class:`ItemSetBenchmark` and declares what is its own. This module then chooses the
splits and groups, loads each (split, group) through the benchmark's reader, reads the submission with
:func:`~dialeval.benchmarks.items.score_items` (every submission form, tie policy, problem and the wrong-split
hint), hashes the data files used and returns the :class:`~dialeval.benchmarks.base.Evaluation`.

The split rule (every benchmark, :meth:`~dialeval.benchmarks.base.Benchmark.choose_splits`): ``--split`` names
the splits to score (``all``: every split the data holds). Without it, data holding one split is scored on it;
otherwise every split the submission covers (:meth:`ItemSetBenchmark.splits_of`) is scored, and a submission
whose splits cannot be told (a score matrix) needs ``--split``. A benchmark whose submission file answers one
split (``one_split``) refuses several. Grading asks the same ``splits_of`` which splits a run answers.

How to declare a new benchmark
------------------------------
1. A reader in ``formats/<name>.py`` that parses the released files (reading them through
   :mod:`dialeval.files.read` only) and names each problem with file and line.
2. A module ``benchmarks/<name>.py``::

       from dialeval.benchmarks.items import ItemSet
       from dialeval.benchmarks.itemset import ItemSetBenchmark
       from dialeval.formats.mine import read_mine     # -> rows with .context_id, .candidates, .gold


       class Mine(ItemSetBenchmark):
           name = "mine"                                  # registry key, first field of every signature
           title = "Mine: response selection, hits@k"
           group_label = "file"                           # what a group is called in tables
           split_names = ("dev", "test")                  # documented splits, in display order
           default_metrics = ("hits@1", "mrr")
           submission_formats = ("dstc6-result", "scores (JSON)")
           problem_codes = {"mine-odd": "(warning) what a code of this benchmark means"}
           options = ()                                   # Option(...) the command line turns into flags

           def present(self, data):                       # {split: [groups]} the data folder holds
               return {s: [f"{s}.txt"] for s in self.split_names if (data / f"{s}.txt").exists()}

           def load(self, data, split, group, with_gold, problems):  # the reader: one ItemSet per (split, group)
               path = data / group
               rows = read_mine(path, problems)
               return ItemSet(group, [f"{split}:{r.context_id}" for r in rows], [r.candidates for r in rows],
                              [frozenset(r.gold) for r in rows] if with_gold else None, files=(path,))

           def split_of_id(self, item_id):                # which split an item id names (for splits_of)
               return item_id.partition(":")[0]

3. One line in :data:`dialeval.benchmarks.registry.BUILTIN`: ``"mine": "dialeval.benchmarks.mine:Mine"``, and
   the module's name among the independent benchmarks of the import-linter contract in ``pyproject.toml``.

Optional declarations (defaults in :class:`ItemSetBenchmark` and its base): ``one_split`` (a submission file answers one
split), ``archive_members`` (a zip of submission files is scored member by member, one report), ``nested`` (1-in-N sizes, e.g. ``(2, 10)`` for R2@1 and R10@k), :meth:`select_groups` (what ``--task``
accepts), :meth:`loadable`, :meth:`other_split_ids` (the wrong-split hint), :meth:`splits_of`,
:meth:`translate` (rewrite a submission before it is read, e.g. texts to ids) and :meth:`signature_fields`
(options that change a number; ``ties`` by default). A benchmark whose data folder holds one file per split, that
file being the split's one group (Ubuntu v2's ``valid.csv``/``test.csv``, or ``Mine`` above), subclasses
:class:`SplitFileBenchmark` instead and declares ``split_file`` (``"{split}.txt"``) and ``layout_name`` in place of
``present``, ``splits`` and ``select_groups``. A benchmark whose submissions list each item's candidates
best first (DSTC7, DSTC8) declares their fields in ``listed`` (a :class:`~dialeval.formats.listed.ListedForm`):
:mod:`dialeval.benchmarks.listed` then reads them (strict, or with ``--lenient`` an official scorer's reading,
whose definitions ``lenient_notes`` lists), :meth:`item_values` adds value columns such as MAP, the signature
names the mode, and a hosted phase publishes its data files without their correct candidates (with the file named
by ``shared_word``, such as DSTC7's pool, as it is). While evaluating, ``self.request`` is the request (for a reader that depends on ``--keys`` or an
option) and ``self.notes`` the lines a reader adds under the numbers. Sample data is not declared here: it lives in
``submissions/samples/<name>/`` and the command line resolves it.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from dialeval.benchmarks.base import DEFAULT_TIES, TIE_POLICIES, Benchmark, Evaluation, Option, Request
from dialeval.core.errors import UsageError
from dialeval.files.identity import DataIdentity, data_identity
from dialeval.files.read import file_sha256
from dialeval.metrics import label as metric_label

if TYPE_CHECKING:
    from dialeval.benchmarks.items import ItemSet
    from dialeval.benchmarks.rankings import OtherSplitIds
    from dialeval.core.problems import Problem
    from dialeval.formats.listed import ListedForm

MATRIX_SUFFIXES = (".npy", ".csv")
"""Score matrices: rows follow the item sets' order, so they answer one split and hold no ids."""
PROTOCOLS = Option("protocols", "Score-based submissions: also print each default metric under every --ties policy "
                   "(and every --contexts choice, where a benchmark has that option) side by side.", scoring_only=True)
SCORED_FORMATS = ("scores", "npy", "csv")
"""Submission forms that carry scores (ties need a policy); a ranking has none."""


def protocol_lines(title: str, heads: list[str], names: list[str], rows) -> list[str]:
    """A side-by-side table as note lines: ``rows`` = ``[(protocol labels, {metric: value}, n), ...]``."""
    widths = [max(len(h), *(len(r[0][i]) for r in rows)) for i, h in enumerate(heads)]
    # A metric column is as wide as its name or a 4-decimal value, and every column is set off by a space:
    # HITS@10 is as wide as 0.1234, so cells written edge to edge would run together.
    cells = [max(len(m), 7) for m in names]
    lead = f"{title}: "

    def line(labels, values, n) -> str:
        return lead + " ".join([*(x.ljust(w) for x, w in zip(labels, widths, strict=True)),
                                *(v.rjust(w) for v, w in zip(values, cells, strict=True)), f"{n:>6}"])

    out = [line(heads, [metric_label(m) for m in names], "n")]
    lead = " " * len(lead)
    out += [line(labels, [f"{vals[m]:.4f}" for m in names], f"{n:,}") for labels, vals, n in rows]
    return out


class ItemSetBenchmark(Benchmark):
    """A benchmark read into item sets: subclasses declare (module docstring); :meth:`evaluate` is here."""

    options: ClassVar[tuple[Option, ...]] = (PROTOCOLS,)
    submission_suffixes: ClassVar[tuple[str, ...]] = (".json", *MATRIX_SUFFIXES)
    nested: ClassVar[tuple[int, ...]] = ()  # 1-in-N sizes whose ranks the table carries (R2@1: 2)
    listed: ClassVar[ListedForm | None] = None  # submissions are listed rankings of this form (benchmarks.listed)
    lenient_notes: ClassVar[tuple[str, ...]] = ()  # --lenient: the official scorer's definitions, under the numbers
    archive_members: ClassVar[bool] = False  # a zip of submission files is scored member by member (DSTC7's form)
    shared_word: ClassVar[str | None] = None  # listed: a file naming this word holds every item's candidates (a pool)

    # ---- what a benchmark declares ------------------------------------------------------------------
    def present(self, data: Path) -> dict[str, list[str]]:
        """``{split: [groups]}`` the data folder holds, splits in display order (a usage error if it is not
        this benchmark's data at all)."""
        raise NotImplementedError

    def load(self, data: Path, split: str, group: str, with_gold: bool, problems: list[Problem]) -> ItemSet:
        """The reader: the items of one (split, group), with their gold when ``with_gold``, and the data
        files they came from in ``ItemSet.files`` (the data identity); data warnings go to ``problems``."""
        raise NotImplementedError

    def public_files(self, files: dict[str, bytes], splits: list[str]) -> dict[str, bytes] | None:
        """Listed benchmarks: the data files without their correct candidates, and the shared candidates file
        (:func:`~dialeval.benchmarks.listed.public_listed`); others: the base's answer."""
        if self.listed is None:
            return super().public_files(files, splits)
        from dialeval.benchmarks.listed import public_listed

        return public_listed(files, self.listed, self.shared_word)

    def split_of_id(self, item_id: str) -> str | None:
        """The split an item id names (ids are split-specific), or None; used by :meth:`splits_of`, and to leave out
        a submission's items of the data's other splits (``other-split``, or the ``wrong-split`` error)."""
        return None

    def splits(self, data: Path) -> list[str]:
        return list(self.present(Path(data)))

    def select_groups(self, requested: list[str]) -> list[str]:
        """``--task`` values as this benchmark's group names (a usage error for a name it does not have)."""
        return [str(g) for g in requested]

    def loadable(self, data: Path, split: str, group: str) -> bool:
        """Whether a group outside ``--task`` can be read: its items are then known, and a submission's items of it
        are left out (neither checked nor scored, counted in one ``other-task`` warning), never errors."""
        return True

    def outside_ids(self, data: Path, split: str, group: str) -> list[str] | None:
        """The item ids of a group outside ``--task`` that is not :meth:`loadable` (Movie Dialog's task 4 without its
        candidate file), so that its items are left out too; None (the default): they are unknown items."""
        return None

    def other_split_ids(self, data: Path, split: str, groups: list[str]) -> OtherSplitIds | None:
        """The item ids of another split (holding ``groups``), for the one wrong-split hint; None: no hint
        (the default)."""
        return None

    def splits_of(self, submission: str | Path, data: Path) -> list[str] | None:
        """The splits a submission covers, or None when it cannot tell (a matrix, an unreadable file): by
        default the splits its item ids name (:meth:`split_of_id`)."""
        ids = submission_ids(submission)
        if ids is None:
            return None
        named = {self.split_of_id(i) for i in ids}
        return [s for s in self.split_names if s in named]

    def translate(self, request: Request, sets: list[ItemSet], problems: list[Problem], notes: list[str],
                  tmp: Path) -> Path | None:
        """A rewritten copy of the submission (written under ``tmp``) to read instead, or None (the default).
        The report's provenance stays the participant's file."""
        return None

    def signature_fields(self, request: Request, ev: Evaluation) -> dict:
        """The options that change a number, in signature order (``ev.notes`` may be extended)."""
        if self.listed is not None:  # a listed ranking has no scores to tie: its reading is what changes numbers
            contexts = request.options.get("contexts") or "all"
            return {"mode": "lenient" if request.options.get("lenient") else "strict",
                    **({"contexts": contexts} if contexts != "all" else {})}
        return {"ties": self.signed_ties(request, ev)}

    def signed_ties(self, request: Request, ev: Evaluation) -> str:
        """The ``ties`` field of a signature: the request's policy for a submission that carries scores, ``none`` for
        a ranking (a rank file or ranked list orders its candidates itself: no policy ever applied to it)."""
        fmt = ev.submission.get("format")
        return "none" if fmt is not None and fmt != "unknown" and fmt not in SCORED_FORMATS else request.ties

    def item_values(self, where: list[int | None], gold) -> dict[str, float]:
        """Listed rankings: an item's value columns from the 0-based first position of each correct id (None: not
        listed); textbook average precision by default."""
        from dialeval.metrics.ranking import average_precision

        return {"map": average_precision([q + 1 for q in where if q is not None], len(gold))}

    # ---- the evaluate loop, once ----------------------------------------------------------------------
    def evaluate(self, request: Request) -> Evaluation:
        if self.archive_members and _is_zip(Path(request.submission)):
            return self._evaluate_members(request)
        # what is asked, for readers whose loading depends on it (--keys, --lenient), and the notes they add
        self.request, self.notes, self.other_split_of = request, [], None
        data = Path(request.data)
        present = self.present(data)
        splits = self.choose_splits(request, list(present))
        wanted = self.select_groups(request.groups) if request.groups else None
        scored = {s: [g for g in present[s] if wanted is None or g in wanted] for s in splits}
        chosen = splits  # a split --task narrows away still has its items left out, not unknown (Ubuntu's files)
        if wanted is not None:  # groups narrow the splits to those holding one
            splits = [s for s in splits if scored[s]]
            if not splits:
                raise UsageError(f"{self.name}: split {', '.join(scored)} has no {self.group_label} "
                                 f"{', '.join(wanted)}")
        matrix = Path(request.submission).suffix.lower() in MATRIX_SUFFIXES
        if matrix and len(splits) > 1:
            raise UsageError(f"a score matrix answers one split: pass {' or '.join('--split ' + s for s in splits)}")
        problems: list[Problem] = []
        sets = []
        for s in chosen:
            for g in present[s]:
                own = g in scored[s]
                if not own and matrix:
                    continue  # a matrix has rows for the scored groups only
                if own or self.loadable(data, s, g):
                    item_set = self.load(data, s, g, request.scoring and own, problems)
                elif (ids := self.outside_ids(data, s, g)) is not None:
                    from dialeval.benchmarks.items import ItemSet

                    item_set = ItemSet(g, ids, (), None)  # ids alone: its items are left out unread
                else:
                    continue
                item_set.split, item_set.optional = s, not own
                sets.append(item_set)
        used = {s: list(dict.fromkeys(f for x in sets if x.split == s and not x.optional for f in x.files))
                for s in splits}
        identity = data_identity(list(dict.fromkeys(f for fs in used.values() for f in fs)),
                                 data if data.is_dir() else data.parent, splits=used)
        self.used_files = used
        others = [(o, ids) for o in present if o not in splits and (ids := self.other_split_ids(data, o, present[o]))]
        self.other_split_of = self._split_finder(data, {o: gs for o, gs in present.items() if o not in chosen})
        return self.score_sets(request, splits, sets, identity, problems, others)

    def _split_finder(self, data: Path, others: dict[str, list[str]]):
        """``other_split_of(item id)``: the split of ``others`` (the data's splits not scored) whose item it is, else
        None. A split's ids are read the first time an id names it (:meth:`split_of_id`), its groups' files only;
        a group that cannot be read is passed over (its data are not this run's)."""
        ids_of: dict[str, set[str]] = {}

        def other_split_of(item_id: str) -> str | None:
            split = self.split_of_id(item_id)
            if split not in others:
                return None
            if split not in ids_of:
                ids_of[split] = set()
                for g in others[split]:
                    try:
                        ids = (self.load(data, split, g, False, []).item_ids if self.loadable(data, split, g)
                               else self.outside_ids(data, split, g))
                    except UsageError:
                        continue
                    ids_of[split].update(ids or ())
            return split if item_id in ids_of[split] else None

        return other_split_of

    def score_sets(self, request: Request, splits: list[str], sets: list[ItemSet], identity: DataIdentity,
                   problems: list[Problem] | None = None, others=()) -> Evaluation:
        """Read the submission against loaded item sets (the part ``benchmarks/bench_*.py`` time alone)."""
        from dialeval.benchmarks.items import score_items

        problems = list(problems or [])
        notes: list[str] = list(getattr(self, "notes", ()))
        sub = Path(request.submission)
        if self.listed is not None:
            return self._score_listed(request, splits, sets, identity, problems, notes)
        with tempfile.TemporaryDirectory(prefix=f"dialeval-{self.name}-") as tmp:
            translated = self.translate(request, sets, problems, notes, Path(tmp))
            table, sub_problems, info = score_items(
                translated or sub, sets, benchmark=self.name, split=",".join(splits), ties=request.ties,
                scoring=request.scoring, nested=self.nested, other_splits=others, group_label=self.group_label,
                other_split_of=getattr(self, "other_split_of", None),
            )
            fmt = info.get("format")
            if request.ties != DEFAULT_TIES and fmt is not None and fmt not in SCORED_FORMATS:
                # a ranking has no scores to tie: the policy would be signed but change nothing (as for dstc6)
                raise UsageError(f"--ties {request.ties} does not apply to a {fmt} submission: a ranking orders the "
                                 "candidates it lists, so there are no ties to break")
            by_policy = {request.ties: table}
            if request.options.get("protocols") and table is not None and info.get("format") in SCORED_FORMATS:
                for ties in TIE_POLICIES:  # the same file under every policy (its problems are the same)
                    by_policy[ties] = by_policy.get(ties) or score_items(
                        translated or sub, sets, benchmark=self.name, split=",".join(splits), ties=ties,
                        scoring=True, nested=self.nested)[0]
        if translated is not None:  # provenance is the participant's file, not the translated copy
            info["path"], info["sha256"] = str(sub), file_sha256(sub)
        groups = list(dict.fromkeys(x.group for x in sets if not x.optional))
        ev = Evaluation(table=table, problems=problems + sub_problems, splits=splits, groups=groups, data=identity,
                        submission=info, signature_fields={}, notes=notes)
        ev.signature_fields = self.signature_fields(request, ev)
        if len(by_policy) > 1 and ev.valid:
            from dialeval.metrics import resolve

            metrics = resolve(self.metrics_for(ev))
            rows = [([ties], {m.name: m.compute(by_policy[ties]) for m in metrics}, len(table)) for ties in TIE_POLICIES]
            ev.notes.extend(protocol_lines("every tie policy", ["ties"], [m.name for m in metrics], rows))
        elif request.options.get("protocols") and table is not None:
            ev.notes.append(f"every tie policy: a {info.get('format')} submission ranks without scores, so no tie "
                            "policy changes its numbers")
        return ev


    def _score_listed(self, request, splits, sets, identity, problems, notes) -> Evaluation:
        from dialeval.benchmarks.listed import score_listed

        lenient = bool(request.options.get("lenient"))
        table, found, info = score_listed(Path(request.submission), sets, self.listed, benchmark=self.name,
                                          scoring=request.scoring, strict=not lenient, values=self.item_values)
        groups = list(dict.fromkeys(x.group for x in sets if not x.optional))
        ev = Evaluation(table=table, problems=problems + found, splits=splits, groups=groups, data=identity,
                        submission=info, signature_fields={}, notes=notes + list(self.lenient_notes if lenient else ()))
        contexts = request.options.get("contexts") or "all"
        if contexts != "all" and table is not None:  # a declared listed.CONTEXTS choice: the items it counts
            from dialeval.benchmarks.listed import kept_contexts

            ev.table, note = kept_contexts(table, [x for x in sets if not x.optional], contexts, self.listed)
            ev.notes.append(note)
        ev.signature_fields = self.signature_fields(request, ev)
        return ev

    def _evaluate_members(self, request: Request) -> Evaluation:
        """A zip of submission files (:attr:`archive_members`): each member evaluated as if given alone, against the
        data it answers, then one Evaluation of them all (the data identity over every data file any member used)."""
        from dataclasses import replace

        from dialeval.core.ranks import RankTable
        from dialeval.files.archive import safe_extract
        from dialeval.files.write import private_temp_dir, release_private_temp_dir

        sub = Path(request.submission)
        tmp = private_temp_dir("zip-")
        try:
            safe_extract(sub, tmp / "x", sub, zip_ok=True)
            members = sorted((p for p in (tmp / "x").rglob("*") if p.is_file() and p.suffix.lower() == ".json"),
                             key=lambda p: p.name)
            if not members:
                raise UsageError(f"{sub}: the zip holds no .json submission file")
            if request.keys is not None and len(members) > 1:
                raise UsageError(f"{sub}: --keys is one file's answer key, and the zip holds {len(members)} "
                                 "submission files: score each file with its own --keys")
            if any(_is_zip(m) for m in members):
                raise UsageError(f"{sub}: a zip inside the zip: put the submission files in one zip")
            runs, used, outside = [], {}, []
            for m in members:
                if request.groups:  # a member answering none of --task is left out, as other tasks' items are
                    self.request = replace(request, submission=m)
                    groups = [g for gs in self.present(Path(request.data)).values() for g in gs]
                    try:
                        self.select_groups(request.groups)
                    except UsageError:
                        outside.extend(groups)
                        continue
                runs.append(self.evaluate(replace(request, submission=m)))
                for split, files in self.used_files.items():
                    used.setdefault(split, []).extend(f for f in files if f not in used[split])
        finally:
            release_private_temp_dir(tmp)
        asked = ",".join(request.groups or ())
        if not runs:
            raise UsageError(f"{self.name}: no file of {sub.name} answers --task {asked} (its files answer "
                             f"{', '.join(sorted(set(outside)))})")
        if outside:
            from dialeval.core.problems import Problem

            n = len(members) - len(runs)
            runs[0].problems.append(Problem("other-task", "", f"{n:,} file{'' if n == 1 else 's'} of "
                                            f"{self.group_label}s other than {asked} left out (--task {asked}): neither "
                                            "checked nor scored", "warning", sub.name))
        data = Path(request.data)
        identity = data_identity(list(dict.fromkeys(f for fs in used.values() for f in fs)),
                                 data if data.is_dir() else data.parent, splits=used)
        tables = [r.table for r in runs if r.table is not None]
        info = {**runs[0].submission, "path": str(sub), "kind": "archive", "sha256": file_sha256(sub),
                "files": [m.name for m in members]}
        return Evaluation(table=RankTable.concat(tables) if len(tables) == len(runs) else None,
                          problems=[p for r in runs for p in r.problems],
                          splits=list(dict.fromkeys(s for r in runs for s in r.splits)),
                          groups=list(dict.fromkeys(g for r in runs for g in r.groups)), data=identity,
                          submission=info, signature_fields=runs[0].signature_fields,
                          notes=list(dict.fromkeys(n for r in runs for n in r.notes)))


class SplitFileBenchmark(ItemSetBenchmark):
    """An item-set benchmark whose data folder holds one file per split, named by :attr:`split_file` (Ubuntu v2's
    ``"{split}.csv"``), that file being the split's one group: the splits are the files the folder holds, and
    ``--task`` takes a file's name or its split's. A subclass declares ``split_file``, :attr:`layout_name` and
    ``load`` (its reader of one file)."""

    layout_name: ClassVar[str] = ""  # what the release's layout is called, for a folder holding none of its files

    def split_group(self, split: str) -> str:
        """The group of a split's items: the file they come from."""
        return str(self.split_file).format(split=split)

    def splits(self, data: Path) -> list[str]:
        data = Path(data)
        # any file by that name, so that a FIFO or device named test.csv is refused by name when read
        return [s for s in self.split_names
                if (data / self.split_group(s)).exists() and not (data / self.split_group(s)).is_dir()]

    def present(self, data: Path) -> dict[str, list[str]]:
        files = [self.split_group(s) for s in self.split_names]
        if not data.is_dir():
            raise UsageError(f"{data}: not a directory (expected one holding {' and/or '.join(files)})")
        available = self.splits(data)
        if not available:
            raise UsageError(f"{data}: no {' or '.join(files)} found ({self.layout_name} layout)")
        return {s: [self.split_group(s)] for s in available}

    def select_groups(self, requested: list[str]) -> list[str]:
        """Groups are the files; a split's name stands for its file."""
        files = {s: self.split_group(s) for s in self.split_names}
        known = {f: f for f in files.values()} | files
        unknown = sorted(set(requested) - set(known))
        if unknown:
            have = ", ".join(files[s] for s in self.splits(Path(self.request.data)))  # only files that exist
            raise UsageError(f"{self.name}: no group {unknown[0]!r} (groups are the files: {have})")
        return [known[g] for g in requested]


def _is_zip(path: Path) -> bool:
    """A zip archive, recognised by its first bytes (``-`` and an unreadable file are left to the submission reader)."""
    from dialeval.files.read import open_input

    if str(path) == "-":
        return False
    try:
        with open_input(path, what="a submission") as f:
            return f.file.read(4) == b"PK\x03\x04"
    except (UsageError, OSError):
        return False


_IDS_TYPE = None


def submission_ids(submission: str | Path) -> list[str] | None:
    """The item ids a JSON submission names (a DSTC6 result array's ``dialog_id`` s, a score document's item
    keys), decoded without the rankings; None for a matrix or a file that is not such JSON."""
    path = Path(submission)
    if path.suffix.lower() in MATRIX_SUFFIXES:
        return None
    import msgspec

    from dialeval.files.read import read_bytes

    global _IDS_TYPE
    if _IDS_TYPE is None:
        ranked = msgspec.defstruct("RankedId", [("dialog_id", str)])
        scores = msgspec.defstruct("ScoredIds", [("items", dict[str, msgspec.Raw])])
        _IDS_TYPE = list[ranked] | scores
    try:
        doc = msgspec.json.decode(read_bytes(path, what="a submission file"), type=_IDS_TYPE)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    return [d.dialog_id for d in doc] if isinstance(doc, list) else list(doc.items)
