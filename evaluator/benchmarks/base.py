"""The Benchmark protocol: what every benchmark reader provides, and what it returns.

A benchmark knows its data layout (``splits``), how to read a submission against a split's data into a
:class:`~dialeval.core.ranks.RankTable` plus :class:`~dialeval.core.problems.Problem` s (``evaluate``), which metrics
it reports by default, and the name its signatures start with. Everything after the RankTable (metrics,
statistics, reports, renderings, the leaderboard) is shared, so a new benchmark is one module here and
one line in :mod:`dialeval.benchmarks.registry`.

The core never knows where default data lives: ``Request.data`` is always given by the caller (the CLI
resolves ``--data``/``--challenge``, environment variables and the embedded default).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from dialeval.core.errors import UsageError, did_you_mean
from dialeval.files.identity import (  # noqa: F401 (re-exported: what every benchmark module uses)
    DataIdentity,
    data_identity,
    file_digest,
)
from dialeval.files.read import file_sha256  # noqa: F401 (re-exported: a submission's identity)

if TYPE_CHECKING:
    from dialeval.core.problems import Problem
    from dialeval.core.ranks import RankTable

TIE_POLICIES = ("pessimistic", "optimistic", "expected", "input-order")
"""The tie policies of score-based submissions (the rule itself: :func:`dialeval.formats.scores.fold_ties`);
``input-order`` keeps tied candidates in the data's candidate order (a stable sort, as DAM's scorer does)."""
DEFAULT_TIES = "pessimistic"
"""Score-based submissions: a gold tied with other candidates ranks after all of them unless told otherwise
(the only choice that can never overstate a system)."""


@dataclass(frozen=True)
class Option:
    """An option one benchmark takes: declared by the benchmark, read by the CLI and the API.

    Generic code names no benchmark's option: the command line adds a flag for every option a registered
    benchmark declares (``cli``), the API passes ``options`` through, and
    :func:`dialeval.benchmarks.registry.check_options` refuses an option the chosen benchmark does not declare
    (``--lenient`` on Ubuntu is a usage error, not silently ignored).
    """

    name: str  # key in Request.options, e.g. "candidate_limit"
    help: str
    kind: str = "flag"  # flag | int | choice | text
    choices: tuple[str, ...] = ()
    default: object = None  # what the benchmark uses when the option is absent (shown in --help)
    low: int | None = None  # int options: inclusive range
    high: int | None = None
    cli: bool = True  # False: API only (e.g. scoring the data file's own actions)
    scoring_only: bool = False  # `score` takes it, `validate` does not

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


GENERIC_OPTIONS = frozenset({"embedded_default"})
"""Request options every benchmark accepts (set by the command line, recorded in the report)."""


@dataclass
class Request:
    """What to evaluate. ``split`` None means the benchmark's default (every split the submission covers)."""

    submission: str | Path
    data: Path
    split: str | list[str] | None = None
    keys: Path | None = None
    groups: list[str] | None = None  # tasks / files to score (benchmark's own names), None = all
    scoring: bool = True  # False: validate only (answer keys are not needed or read)
    ties: str = DEFAULT_TIES
    options: dict = field(default_factory=dict)  # benchmark-specific (e.g. DSTC6 lenient, candidate_limit)


@dataclass
class Evaluation:
    """A benchmark's answer: the rank table (None when only validating), problems, and provenance."""

    table: RankTable | None
    problems: list[Problem]
    splits: list[str]
    groups: list[str]  # every group scored, in display order
    data: DataIdentity
    submission: dict  # path, kind, sha256, files
    signature_fields: dict  # options that change a number, benchmark-specific (mode, ties, nc, ...)
    notes: list[str] = field(default_factory=list)  # lines a reader must see under the numbers (e.g. text matching)
    request: Request | None = None  # what was asked (set by dialeval.api.evaluate; text metrics re-read from it)

    @property
    def valid(self) -> bool:
        return not any(p.severity == "error" for p in self.problems)


def one_split_refusal(benchmark: str, available: list[str]) -> UsageError:
    """THE message where a submission file answers one split but several are asked for: names the splits."""
    return UsageError(f"{benchmark}: a submission file answers one split, and the data hold {len(available)} "
                      f"({', '.join(available)}); give --split with one of them")


class Benchmark:
    """Base class of benchmark readers. Subclasses set the class attributes and implement ``evaluate``."""

    name: ClassVar[str]  # registry key and the first field of every signature
    title: ClassVar[str]
    group_label: ClassVar[str] = "task"  # what a group is called in tables ("task", "file", ...)
    split_names: ClassVar[tuple[str, ...]] = ()  # documented split names (the data may hold fewer)
    # splits a user may ask for that were never released -> why, and what to pass instead (said as the usage error)
    unreleased_splits: ClassVar[dict[str, str]] = {}
    # what the published data are called ("not the DSTC6 data"), and what each split and group means, in the
    # benchmark's own words: the leaderboard renders them for any benchmark (none: the names alone are shown)
    data_name: ClassVar[str] = ""
    split_descriptions: ClassVar[dict[str, str]] = {}
    group_names: ClassVar[dict[str, str]] = {}  # short names shown beside a group's number ("1" -> "API")
    group_descriptions: ClassVar[dict[str, str]] = {}
    default_metrics: ClassVar[tuple[str, ...]] = ("hits@1", "mrr")
    extra_metrics: ClassVar[tuple[str, ...]] = ()  # computed numbers it reports only when asked (AirDialogue's bleu)
    submission_formats: ClassVar[tuple[str, ...]] = ("dstc6-result",)
    submission_suffixes: ClassVar[tuple[str, ...]] = (".json",)  # how a single-file submission's name ends (grade
    #                                                              finds a run's file by it)
    options: ClassVar[tuple[Option, ...]] = ()  # benchmark-specific options (see :class:`Option`)
    # layouts of another tool's printout that ``score --print-as`` can give this benchmark's numbers in
    # (names of :data:`dialeval.results.printed.SCORE_LAYOUTS`)
    print_layouts: ClassVar[tuple[str, ...]] = ()
    separate_keys: ClassVar[bool] = False  # answer keys may sit in their own folder (``--keys``)
    reads_stdin: ClassVar[bool] = False  # a submission may be ``-`` (standard input)
    problem_codes: ClassVar[dict[str, str]] = {}  # this benchmark's own problem codes -> meaning
    one_split: ClassVar[bool] = False  # a submission file answers one split (several are refused)
    # a split's file in a data folder ("{split}.txt"), labels inline, or its files (AirDialogue's data and KB)
    split_file: ClassVar[str | tuple[str, ...] | None] = None
    split_folders: ClassVar[bool] = False  # each split is a folder of the data named after it (hosting ships those)
    # where the command line finds data when no --data is given (after the benchmark's sample data is looked up
    # by name): an environment variable naming a folder, and the sub-folder of the embedded simulated challenge
    data_env: ClassVar[str | None] = None
    embedded_folder: ClassVar[str | None] = None

    public_data_note: ClassVar[str] = "its data files carry the answers inline, so no copy of them hides the answers"
    """Why :meth:`public_files` gives nothing (hosting says so beside a bundle without public data)."""

    def scoring_files(self, data: Path, splits: list[str]) -> list[Path] | None:
        """The files under the folder ``data`` that scoring ``splits`` reads: the splits' data files, their answer keys
        and what they share (a candidate file, a pool), never another split's (train) files or a run left beside them.
        What a hosted phase's reference data holds, and what its public data is made from (:meth:`public_files`).
        Default: the ``split_file`` (or files) of each split where the benchmark declares it, every file of a split's
        folder where splits are folders (``split_folders``), else None (cannot tell: every file of ``data``). A file
        that is not there is left out (the caller keeps the regular ones)."""
        if self.split_file:
            names = (self.split_file,) if isinstance(self.split_file, str) else self.split_file
            return [data / name.format(split=s) for s in splits for name in names]
        if not self.split_folders:
            return None
        return [f for s in splits if (data / s).is_dir() for f in sorted((data / s).rglob("*"))]

    def key_splits(self, data: Path, keys: Path, splits: list[str]) -> list[str] | None:
        """Of ``splits``, those whose examples the answer key file ``keys`` (given apart with ``--keys``) answers:
        where a hosted challenge's phases get it (one key per split). None (the default): cannot tell, every phase
        gets it."""
        return None

    def public_files(self, files: dict[str, bytes], splits: list[str]) -> dict[str, bytes] | None:
        """What participants may download from a phase's data files (``{path inside the data: bytes}``: the files
        :meth:`scoring_files` gives for its ``splits``; the caller never passes the answer keys given apart with
        ``--keys``): the test inputs with nothing of the answers. None where the release's format carries the
        answers inline (:attr:`public_data_note` says why)."""
        return None

    def splits(self, data: Path) -> list[str]:
        """Split names present under ``data``."""
        raise NotImplementedError

    def splits_of(self, submission: str | Path, data: Path) -> list[str] | None:
        """The splits a submission covers, or None when it cannot tell (the default): what :meth:`choose_splits`
        scores without ``--split``, and what grading records for a run."""
        return None

    def choose_splits(self, request: Request, available: list[str]) -> list[str]:
        """THE split rule of every benchmark: ``--split`` names the splits (``all``: every one the data hold).
        Without it, data holding one split are scored on it; otherwise every split the submission covers
        (:meth:`splits_of`), and a submission whose splits cannot be told needs ``--split``. A benchmark whose
        submission file answers one split (``one_split``) refuses several (``all``: the one split it answers)."""
        if request.split is not None:
            names = self.check_split_names(request.split, available)
        elif len(available) == 1:
            names = list(available)
        else:
            covered = self.splits_of(request.submission, Path(request.data)) if available else None
            names = [s for s in available if s in (covered or ())]
            if not names:
                # ids read, none of them the data's: most often a run for another benchmark (--benchmark forgotten)
                why = ": none of the submission's item ids is one of the data's (another benchmark's run? give " \
                      "--benchmark)" if covered == [] else ""
                raise UsageError(f"{self.name}: give --split (one of: {', '.join(available) or 'none'}){why}")
        if self.one_split and len(names) > 1:
            if request.split in ("all", ["all"]):  # `--split all`: the one split the submission answers, if it says
                covered = self.splits_of(request.submission, Path(request.data))
                if covered is not None and len(mine := [s for s in names if s in covered]) == 1:
                    return mine
            raise one_split_refusal(self.name, available)
        return names

    def evaluate(self, request: Request) -> Evaluation:
        raise NotImplementedError

    def metrics_for(self, evaluation: Evaluation) -> list[str]:
        """Default metrics for this evaluation (e.g. per-dialog accuracy only where conversations exist)."""
        return list(self.default_metrics)

    def own_metric(self, name: str) -> str | None:
        """The registered name of metric ``name`` (any case, aliases) when this benchmark reports it, else None:
        its default and extra metrics, any other k of their families (p@10 where p@1 is one: the benchmark's own
        name for hits@k), and the text metrics where it gives response texts."""
        from dialeval import metrics

        try:
            metric = metrics.get(name)
        except UsageError:
            return None
        if metrics.family(metric.name) in {metrics.family(m) for m in (*self.default_metrics, *self.extra_metrics)}:
            return metric.name
        if metric.needs == "texts" and type(self).texts is not Benchmark.texts:
            return metric.name
        return None

    def texts(self, request: Request, evaluation: Evaluation) -> tuple[list[str], list[str]]:
        """``(top-1 response text, gold response text)`` per row of ``evaluation.table``, for text metrics.

        Read only when a metric needs texts (utterances are skipped otherwise). An item the submission does
        not rank has an empty response text.
        """
        raise UsageError(f"benchmark {self.name} does not provide response texts (no text metrics)")

    def subsets(self, table: RankTable) -> list[tuple[str, object]]:
        """Breakdowns inside one group's table: ``[(label, boolean mask), ...]`` (e.g. ``("turn=2", mask)``).

        Reported as extra rows under the group; none by default.
        """
        return []

    def breakdown(self, evaluation: Evaluation, metrics=None) -> list[dict]:
        """Records ``{key: value, metric, value, n}``: each value metric's mean over the items of each of
        :meth:`subsets`' breakdowns, a ``key=value`` label giving the record's first field (AirDialogue's
        ``status=book``: ``{"status": "book", ...}``); breakdowns without items are left out."""
        t = evaluation.table
        if t is None or not len(t):
            return []
        names = [m for m in (metrics or self.metrics_for(evaluation)) if m in t.values]
        out = []
        for label, mask in self.subsets(t):
            n = int(mask.sum())
            key, _, value = label.partition("=")
            out += [{key: value, "metric": m, "value": float(t.values[m][mask].mean()), "n": n} for m in names if n]
        return out

    def group_sort_key(self, group: str):
        return (0, int(group)) if group.isdigit() else (1, group)

    # ---- helpers shared by readers ------------------------------------------------------------------
    def check_split_names(self, requested: str | list[str] | None, available: list[str]) -> list[str]:
        """Requested split names, deduplicated, each a known split (``all`` or None = every available one)."""
        if requested is None or requested == "all" or requested == ["all"]:
            if not available:
                raise UsageError(f"{self.name}: no split found in the data directory")
            return list(available)
        names = parse_split_names(requested)
        for name in names:
            if name in self.unreleased_splits and name not in available:
                raise UsageError(f"{self.name}: no split {name!r}: {self.unreleased_splits[name]}")
        require_splits(names, available, f"{self.name}: no split {{name!r}} in the data (available: {{known}})")
        return names



def parse_split_names(requested: str | list | tuple) -> list[str]:
    """``--split`` as names: ``"tst1,tst2"`` or a list, stripped, empty parts dropped, deduplicated in order
    (``tst1,tst1`` would count every item twice). An empty result is a usage error."""
    parts = requested.split(",") if isinstance(requested, str) else [str(s) for s in requested]
    names = list(dict.fromkeys(p.strip() for p in parts if p.strip()))
    if not names:
        raise UsageError("--split is empty")
    return names


def require_splits(names: list[str], available: list[str], message: str) -> None:
    """Each name one of ``available`` (which also keeps ``../x`` and absolute paths out of path joins); else a
    usage error from ``message`` (``{name}``: the name, cut to 40 characters; ``{known}``: the split list)."""
    for n in names:
        if n not in available:
            shown = n if len(n) <= 40 else n[:40] + "..."
            raise UsageError(message.format(name=shown, known=", ".join(available) or "none") + did_you_mean(n, available))


def task_numbers(groups: list[str] | None, allowed, what: str) -> list[int] | None:
    """``--task`` values as sorted task numbers, each one of ``allowed``; None when no task is selected."""
    if not groups:
        return None
    out = set()
    for g in groups:
        s = str(g).strip()
        if not (s.isascii() and s.isdigit()) or int(s) not in allowed:
            raise UsageError(f"--task: {what} tasks are {min(allowed)}-{max(allowed)}, got {s[:20]!r}")
        out.add(int(s))
    return sorted(out)
