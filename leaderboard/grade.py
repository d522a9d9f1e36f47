"""Grade a folder of team runs into the registry: discover, validate team.json, score (in parallel), record.

A run folder ``RUNS`` holds one entry per submission:

* ``RUNS/<name>/team.json`` plus the submission in that folder: ``submission.tgz`` / ``submission.json`` /
  ``submission/`` if present, else its only ``.tgz``/``.tar.gz``/``.tar`` or only result ``.json``, else the
  folder itself in the official layout (``tst1/<stem>.answers.json`` ...);
* or ``RUNS/<name>.tgz`` (``.tar.gz``, ``.tar``, ``.json``) with ``RUNS/<name>.team.json`` beside it.

Each entry is scored strictly through :mod:`dialeval.leaderboard.scoring` (worker processes with ``jobs`` > 1)
and written by this process alone, one transaction per run, in entry-name order (runs refused by the challenge
first) whatever ``jobs`` is, so the same runs get the same run ids. Never in team.json's ``submitted_at`` order:
runs graded together share one ``graded_at``, so their run ids are the site's order among them (a team's latest
run, equal scores), and a team could date a run back to come first. An unchanged submission (same bytes, team, system,
benchmark, data and options) is found by its grading key and skipped; a changed one is a new run. Entries
whose ``team.json`` is unusable are reported (one line each) and not recorded: a run needs an owner.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import re
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from dialeval import __version__
from dialeval.core.errors import DialevalError, UsageError

ARCHIVE_SUFFIXES = (".tgz", ".tar.gz", ".tar")
TEAM_FILE = "team.json"
MAX_TEAM_BYTES = 64 * 1024


@dataclass
class Entry:
    name: str  # entry name inside RUNS (shown to the organizer)
    submission: Path | None
    team: dict | None
    error: str | None = None  # why the entry cannot be graded (one line)
    sha256: str | None = None
    submitted_at: str | None = None


@dataclass
class Outcome:
    entry: str
    team: str
    system: str
    status: str  # "valid", "rejected", "unchanged", "skipped", "outside" (holds none of --split: not recorded)
    run_id: int | None = None
    headline: float | None = None  # the board's main metric (micro over everything scored)
    message: str = ""
    n_errors: int = 0
    run_status: str = ""  # the recorded run's status ("valid"/"rejected"), also for unchanged entries


@dataclass
class GradeSummary:
    outcomes: list[Outcome] = field(default_factory=list)
    metric: str = ""
    registry: Path | None = None
    challenge: str = ""  # "given" (--challenge-file), "kept" (the board's, from an earlier grade) or "" (none)

    def count(self, status: str) -> int:
        return sum(1 for o in self.outcomes if o.status == status)

    @property
    def exit_code(self) -> int:
        # an unchanged entry whose recorded run was rejected still fails: the exit code does not depend on
        # whether this grader or an earlier (or concurrent) one did the work
        return 1 if any(o.status == "skipped" or o.run_status == "rejected" for o in self.outcomes) else 0


# ---- team.json ----------------------------------------------------------------------------------------
_FIELD_HELP = {
    "team": "a non-empty name without control characters (at most 120)",
    "system": "a non-empty name without control characters (at most 120)",
    "description": "text of at most 4000 characters",
    "url": "an http:// or https:// address",
    "paper": "an http:// or https:// address",
    "code": "an http:// or https:// address",
    "contact": "text of at most 320 characters",
    "submitted_at": "an RFC 3339 date-time such as 2017-09-15T12:00:00Z",
    "baseline": "true or false",
    "chosen": "true or false",
}


def read_team(path: Path) -> dict:
    """team.json as a dict with defaults, or :class:`UsageError` with one line saying everything that is wrong."""
    from dialeval.files.read import decode_utf8, read_bytes

    if not os.path.lexists(path):
        raise UsageError(f"{path}: missing (every run needs a team.json)")
    # the input layer: a FIFO or a device is refused before it is opened for reading, the size is bounded, and a
    # link is refused as the submission's is (it could point anywhere, even at a file of another team)
    raw = read_bytes(path, what="a team.json file", limit=MAX_TEAM_BYTES, follow_links=False)
    repeated: list[str] = []

    def no_repeats(pairs):  # {"team": "A", "team": "B"}: which one the team meant is anyone's guess
        keys = [k for k, _ in pairs]
        repeated.extend(k for i, k in enumerate(keys) if k in keys[:i] and k not in repeated)
        return dict(pairs)

    try:
        data = json.loads(decode_utf8(raw, str(path), expect="UTF-8 JSON"), object_pairs_hook=no_repeats)
    except json.JSONDecodeError as e:
        raise UsageError(f"{path}: not valid JSON (line {e.lineno}, column {e.colno})") from None
    except RecursionError:
        raise UsageError(f"{path}: nested too deeply (a team.json is one flat object)") from None
    if not isinstance(data, dict):
        raise UsageError(f"{path}: must be a JSON object with at least \"team\"")
    from dialeval.core.schemacheck import validator

    problems: list[str] = [f"\"{k[:40]}\" is given twice" for k in repeated]
    wrong: set[str] = set()
    for e in sorted(validator("team").iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path]):
        if e.validator == "additionalProperties":
            for extra in sorted(set(data) - set(_FIELD_HELP)):
                problems.append(f"unknown key {extra[:40]!r} (known: {', '.join(_FIELD_HELP)})")
        elif e.validator == "required":
            problems.append("\"team\" is required")
        else:
            key = str(e.absolute_path[0]) if e.absolute_path else "team"
            if key not in wrong:
                wrong.add(key)
                problems.append(f"\"{key}\" must be {_FIELD_HELP.get(key, 'valid')}")
    for key, value in data.items():  # "\ud800" escapes are valid JSON but no text: no database or page takes them
        if key in _FIELD_HELP and key not in wrong and isinstance(value, str) and _SURROGATE.search(value):
            problems.append(f"\"{key}\" holds an unpaired surrogate (\\u{ord(_SURROGATE.search(value)[0]):04x}); "
                            "give valid Unicode text")
    if "submitted_at" in data and "submitted_at" not in wrong and isinstance(data["submitted_at"], str):
        try:
            ts = _dt.datetime.fromisoformat(data["submitted_at"].replace("Z", "+00:00"))
            if ts.tzinfo is None:
                ts = ts.replace(tzinfo=_dt.UTC)
            data["submitted_at"] = _iso(ts)
        except (ValueError, OverflowError):  # OverflowError: an offset past year 1 or 9999 in UTC
            problems.append(f"\"submitted_at\" must be {_FIELD_HELP['submitted_at']}")
    if problems:  # every problem at once, in one line: the team fixes its file once
        raise UsageError(f"{path}: " + "; ".join(problems))
    data.setdefault("system", "primary")
    return data


_SURROGATE = re.compile("[\ud800-\udfff]")


def _iso(ts: _dt.datetime) -> str:
    return ts.astimezone(_dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


# ---- discovery ----------------------------------------------------------------------------------------
def _is_archive(p: Path) -> bool:
    return p.name.lower().endswith(ARCHIVE_SUFFIXES)


def _submission_in(folder: Path, suffixes: tuple[str, ...] = (".json",)) -> Path | str:
    for name in ("submission.tgz", "submission.tar.gz", "submission.tar", *(f"submission{s}" for s in suffixes),
                 "submission"):
        if (folder / name).exists() or (folder / name).is_symlink():
            return folder / name
    kids = [k for k in folder.iterdir() if not k.name.startswith(".") and k.name != TEAM_FILE]
    archives = [k for k in kids if _is_archive(k)]
    jsons = [k for k in kids if k.name.lower().endswith(suffixes) and k.is_file()]  # a file the benchmark reads
    dirs = [k for k in kids if k.is_dir()]
    if len(archives) == 1 and not jsons and not dirs:
        return archives[0]
    if len(jsons) == 1 and not archives and not dirs:
        return jsons[0]
    if dirs and not archives and not jsons:
        return folder
    if not kids:
        return "holds only team.json (no submission)" if (folder / TEAM_FILE).exists() else "is empty (no submission)"
    if not (archives or jsons or dirs):  # files, none of them a result JSON, an archive or a folder of results
        shown = ", ".join(sorted(k.name for k in kids)[:3]) + (", ..." if len(kids) > 3 else "")
        return (f"holds no submission (only {shown}: no result {' or '.join(suffixes)}, archive or folder; name it "
                f"submission{suffixes[0]}, submission.tgz or submission/)")
    return "holds several candidate submissions (name one submission.tgz, submission.json or submission/)"


def _split_names(benchmark: str, data: Path) -> list[str]:
    from dialeval.benchmarks import registry

    try:
        return list(registry.get(benchmark).splits(data))
    except (DialevalError, OSError, AttributeError, NotImplementedError):
        return []


def _check_split_option(split, names: list[str]) -> str | None:
    """``--split`` as a comma list of the data's splits (None for every split); a typo is exit 2 before any
    work, since it would otherwise leave every run out."""
    if split is None:
        return None
    wanted = list(dict.fromkeys(s.strip() for s in str(split).split(",") if s.strip()))
    if not wanted or wanted == ["all"]:
        return None
    for s in wanted:
        if names and s not in names:
            shown = s if len(s) <= 40 else s[:40] + "..."
            raise UsageError(f"--split: {shown!r} is not a split of the data (it has: {', '.join(names)})")
    return ",".join(wanted)


def _misplaced(folder: Path, split_names: list[str]) -> str | None:
    """A hint for a run whose split folders sit lower than the top (``team/sub/tst1/...``): move it up."""
    if not split_names or any((folder / s).is_dir() for s in split_names):
        return None
    for depth in (2, 3):
        for s in split_names:
            for hit in sorted(folder.glob("/".join(["*"] * (depth - 1) + [s]))):
                if hit.is_dir() and not any(part.startswith(".") for part in hit.relative_to(folder).parts):
                    rel = hit.relative_to(folder).as_posix()
                    return (f"{folder}: no split folder ({', '.join(split_names)}) at the top; found {rel}/…: "
                            f"move it up ({folder.name}/{s}/…)")
    return None


def discover(runs_dir: Path, split_names: list[str] | None = None, suffixes: tuple[str, ...] = (".json",)
             ) -> list[Entry]:
    """Every entry of ``runs_dir`` in name order, with its team and submission (or the reason it has none).

    ``split_names``: the data's splits, to give a hint for a run whose split folders sit one level too low;
    ``suffixes``: how the benchmark's single-file submissions end (``Benchmark.submission_suffixes``: score files
    and matrices besides result JSON).
    """
    if not runs_dir.is_dir():
        raise UsageError(f"{runs_dir}: not a folder of team runs")
    entries: list[Entry] = []
    for p in sorted(runs_dir.iterdir(), key=lambda q: q.name):
        name = p.name
        if name.startswith(".") or name.endswith(".team.json"):
            continue
        if p.is_symlink():
            entries.append(Entry(name, None, None, f"{p}: a symbolic link; give the submission itself"))
            continue
        if _SURROGATE.search(name):  # bytes that are not UTF-8: no registry or page can hold the name
            entries.append(Entry(name, None, None, f"{p}: its name is not UTF-8 text; rename it"))
            continue
        special = _special(p)
        if special:
            entries.append(Entry(name, None, None, special))
            continue
        if p.is_dir():
            team_path = p / TEAM_FILE
            if not os.path.lexists(team_path) and _holds_runs(p):  # the organiser gave the folder above the runs
                entries.append(Entry(name, None, None, f"{p}: a folder of team runs, not a run (its entries have "
                                                       f"team.json files); grade {p} itself"))
                continue
            sub = _submission_in(p, suffixes)
        elif p.is_file() and (_is_archive(p) or name.lower().endswith(suffixes)):
            stem = name
            for suf in (*ARCHIVE_SUFFIXES, *suffixes):
                if stem.lower().endswith(suf):
                    stem = stem[: -len(suf)]
                    break
            team_path = runs_dir / f"{stem}.team.json"
            sub = p
        else:
            kinds = ", ".join(("a folder", ".tgz", ".tar", *suffixes[:-1])) + f" or {suffixes[-1]}"
            entries.append(Entry(name, None, None, f"{p}: not a submission ({kinds})"))
            continue
        if isinstance(sub, str):
            entries.append(Entry(name, None, None, f"{p}: {sub}"))
            continue
        hint = _misplaced(sub, split_names or []) if sub == p else None
        if hint:
            try:  # name the team in the report when its team.json is in place
                team = read_team(team_path)
            except UsageError:
                team = None
            entries.append(Entry(name, None, team, hint))
            continue
        try:
            team = read_team(team_path)
        except UsageError as e:
            entries.append(Entry(name, None, None, str(e)))
            continue
        if sub.is_symlink():
            entries.append(Entry(name, None, team, f"{sub}: a symbolic link; give the submission itself"))
            continue
        special = _special(sub)
        if special:  # a FIFO named submission.tgz: skipped like a link, never recorded as the team's rejected run
            entries.append(Entry(name, None, team, special))
            continue
        entries.append(Entry(name, sub, team))
    return entries


def _holds_runs(folder: Path) -> bool:
    """Whether ``folder`` holds team runs: an entry with its own team.json (``NAME/team.json``, ``NAME.team.json``)."""
    try:
        return any(q.name.endswith(".team.json") or (q.is_dir() and not q.is_symlink() and (q / TEAM_FILE).is_file())
                   for q in folder.iterdir())
    except OSError:
        return False


def _special(p: Path) -> str | None:
    """Why ``p`` (not a link) is no submission when it is a FIFO, device or socket, else None."""
    import stat

    from dialeval.files.read import file_kind

    try:
        mode = p.stat().st_mode
    except OSError:
        return None  # gone meanwhile: the reader says so
    if stat.S_ISDIR(mode) or stat.S_ISREG(mode):
        return None
    return f"{p}: not a regular file ({file_kind(mode)}); give the submission itself"


def submission_sha256(path: Path) -> str:
    """sha256 of a file, or of a folder's relative file names and contents in sorted order (team.json excluded)."""
    from dialeval.files.read import entries_sha256, file_sha256

    if path.is_file():
        return file_sha256(path)
    files = sorted(q for q in path.rglob("*") if q.is_file() and not q.is_symlink())
    return entries_sha256((rel, f) for f in files if (rel := f.relative_to(path).as_posix()) != TEAM_FILE)


def data_fingerprint(*folders: Path | None) -> str:
    """Content hash of every file under the data (and keys) folders, or of the data (keys) file itself for the
    benchmarks whose release is single files: part of the grading key."""
    from dialeval.files.identity import file_digest

    h = hashlib.blake2b(digest_size=16)
    for folder in folders:
        if folder is None:
            h.update(b"-\0")
            continue
        folder = Path(folder)
        if folder.is_file():
            h.update(folder.name.encode() + b"\0" + file_digest(folder).encode() + b"\0")
            continue
        if not folder.is_dir():
            raise UsageError(f"{folder}: no such data file or folder")
        for f in sorted(q for q in folder.rglob("*") if q.is_file()):
            h.update(f.relative_to(folder).as_posix().encode() + b"\0" + file_digest(f).encode() + b"\0")
    return h.hexdigest()


def grading_key(entry: Entry, benchmark: str, fingerprint: str, options: dict) -> str:
    payload = json.dumps([entry.sha256, entry.team["team"], entry.team["system"], benchmark, fingerprint,
                          options, __version__], sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


# ---- grading ------------------------------------------------------------------------------------------
def splits_held(submission: str | Path, benchmark: str, data: str | Path) -> list[str] | None:
    """The splits a submission answers, as its benchmark tells them (``Benchmark.splits_of``: e.g. a folder's
    split folders, or for a single file the split its ids belong to, so a single-file run needs no --split).
    None when it cannot tell (then the scorer decides, and reports what is wrong with the submission)."""
    from dialeval.benchmarks import registry

    try:
        return registry.get(benchmark).splits_of(submission, Path(data))
    except DialevalError:
        return None


def _score_job(args):
    """Worker: score one submission; never raises (usage faults become a rejected result)."""
    submission, benchmark, data, keys, split = args
    from dialeval.leaderboard.scoring import score_submission

    try:
        held = None
        if split is not None or not Path(submission).is_dir() and not _is_archive(Path(submission)):
            held = splits_held(submission, benchmark, data)
        if held is not None:
            if split is None:  # a single file: the splits its ids belong to (a folder: every split it holds)
                split = ",".join(held) if held else None
            else:  # --split restricts, it does not add: only the named splits this run answers
                wanted = [s.strip() for s in str(split).split(",") if s.strip()]
                mine = [s for s in held if s in wanted]
                if not mine:
                    return "outside", (f"answers {', '.join(held)}, none of --split {split}: not graded"
                                       if held else f"answers none of --split {split}: not graded")
                split = ",".join(mine)
        return "ok", score_submission(submission, benchmark, data, keys, split)
    except DialevalError as e:
        return "unreadable", str(e)
    except MemoryError:
        return "unreadable", "out of memory while reading the submission"


def _worker_init(grader: int) -> None:
    """Make a worker exit when its grader dies (SIGKILL gives the grader no chance to stop its pool, and an
    orphaned worker would score on, holding memory, for minutes)."""
    import threading

    if sys.platform.startswith("linux"):
        try:  # the kernel kills this worker the moment its parent dies (PR_SET_PDEATHSIG = 1)
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass
    if os.getppid() != grader:  # the grader died before the request above was in place
        os._exit(1)
    # elsewhere (and as a second line on Linux): notice the new parent within a second
    threading.Thread(target=_watch_grader, args=(grader,), daemon=True, name="watch-grader").start()


def _watch_grader(grader: int) -> None:
    while True:
        time.sleep(0.5)
        if os.getppid() != grader:
            os._exit(1)


def _unreadable(benchmark: str, message: str, code: str = "unreadable-submission"):
    from dialeval.leaderboard.scoring import Graded

    problem = {"severity": "error", "code": code, "file": None, "pointer": "", "message": message}
    return Graded(False, [problem], [], None, benchmark, [], [], [], None, None)


def headline(records: list[dict], metric: str) -> float | None:
    """The board's main number for a run: the metric over everything scored (micro across splits, else the split's)."""
    rows = [r for r in records if r["metric"] == metric and r.get("subset") is None]
    for pred in (lambda r: r["split"] == "all" and r.get("average") == "micro",
                 lambda r: r["group"] == "all" and r.get("average") == "micro"):
        hit = [r for r in rows if pred(r)]
        if len(hit) == 1:
            return hit[0]["value"]
    if len(rows) == 1:
        return rows[0]["value"]
    return None


def grade(runs_dir: str | Path, benchmark: str, data: str | Path, registry_dir: str | Path,
          keys: str | Path | None = None, jobs: int = 1, split=None, board: str | None = None,
          kind: str | None = None, progress: bool = True, metric: str | None = None,
          challenge=None, now: str | None = None) -> GradeSummary:
    """Grade every entry of ``runs_dir`` into the registry; see the module docstring.

    ``challenge`` (a :class:`dialeval.leaderboard.challenge.Challenge`; default: the one kept with the board by an
    earlier grade) is kept with the board and enforced: a team's run first seen by a grader outside every phase,
    or over the quota (counted from the registry, so deleting a run from the runs folder gives nothing back), is
    recorded as rejected and never scored; a run inside a phase that names splits is graded on those splits only.
    ``now``: when this grader sees the runs (RFC 3339; default ``DIALEVAL_NOW``, else the clock), recorded as each
    new run's ``graded_at``; the phase and the quota day are judged at it, never at team.json's ``submitted_at``.
    """
    from dialeval.leaderboard.registry import Quota, Registry, team_key
    from dialeval.leaderboard.scoring import benchmark_info

    runs_dir, data = Path(runs_dir), Path(data)
    info = benchmark_info(benchmark)
    metric = metric or info["default_metrics"][0]
    if jobs < 1:
        raise UsageError("--jobs must be at least 1")
    # Phases and quotas judge a run at the time this grader first sees it (recorded as the run's graded_at),
    # never at team.json's submitted_at: that is the team's own word, and a backdated run would slip into a
    # closed phase or dodge the per-day limit. submitted_at is kept as information only.
    from dialeval.leaderboard.challenge import now as now_of

    seen_at = now_of(now)  # a bad --now is refused before anything is written
    from dialeval.leaderboard.registry import registry_path

    where = Path(os.path.realpath(registry_path(registry_dir)))
    if runs_dir.is_dir() and Path(os.path.realpath(runs_dir)) in where.parents:
        # the database (and its folder) would be the next grade's entries: "registry.sqlite: not a submission"
        raise UsageError(f"--registry {registry_dir}: inside the runs folder {runs_dir}, where the next grade would "
                         "take it for a team's run; keep the registry elsewhere")
    seen_day = seen_at[:10]
    names = _split_names(benchmark, data)
    split = _check_split_option(split, names)
    from dialeval.benchmarks import registry as benchmarks

    entries = discover(runs_dir, names, benchmarks.get(benchmark).submission_suffixes)
    fingerprint = data_fingerprint(data, Path(keys) if keys else None)
    if challenge is not None:  # checked before the registry is opened (or created)
        _check_challenge(challenge, benchmark, names, "--challenge-file")
        board = board or challenge.board
    board = board or default_board(benchmark, fingerprint)
    # The grading key names the submission, not this grader's --split: one submission is recorded once
    # (a run graded earlier, with or without --split, is "unchanged"); {"split": None} keeps older keys valid.
    options = {"split": None}
    summary = GradeSummary(metric=metric)
    with Registry(registry_dir, now=seen_at) as reg:  # teams, the kept challenge: first seen by this grader too
        summary.registry = reg.path
        reg.check_board_benchmark(board, benchmark)
        if challenge is None:  # the board's kept challenge.toml still holds: leaving the option out dodges nothing
            from dialeval.leaderboard.challenge import parse

            kept = reg.challenge_source(board)
            where = f"the challenge.toml kept for board {board}"
            challenge = parse(kept, where) if kept else None
            if challenge is not None:
                _check_challenge(challenge, benchmark, names, where)
            summary.challenge = "kept" if kept else ""
        else:
            summary.challenge = "given"
            reg.set_challenge(board, challenge.source)
        quota = Quota(challenge.per_day, challenge.total) if challenge and (challenge.per_day or challenge.total) else None
        seen_phase = challenge.phase_at(seen_at) if challenge is not None and challenge.phases else None
        todo: list[tuple[Entry, str]] = []
        spelled: dict[str, tuple[str, str]] = {}  # team_key -> (first spelling met here, its entry)
        for e in entries:
            if e.error is None:  # one team, one spelling: "Team A", "team a" and an NFD "é" would be three teams
                name = e.team["team"]
                registered = reg.team_spelling(name)
                first, where = spelled.setdefault(team_key(name), (registered or name, e.name))
                if first != name:
                    whose = f"the registered team {registered!r}" if registered else f"entry {where}'s team {first!r}"
                    e.error = (f"{e.name}: team {name!r} is {whose} spelt differently (case, spacing or Unicode "
                               "form); give the name exactly as registered, or another name")
            if e.error:
                t = e.team or {}
                summary.outcomes.append(Outcome(e.name, t.get("team", "?"), t.get("system", "?"), "skipped",
                                                message=e.error))
                continue
            e.sha256 = submission_sha256(e.submission)
            e.submitted_at = e.team.get("submitted_at")  # absent stays absent: a file time would make bytes vary
            key = grading_key(e, benchmark, fingerprint, options)
            existing = reg.find_by_key(key)
            if existing is not None:
                summary.outcomes.append(Outcome(e.name, e.team["team"], e.team["system"], "unchanged", existing,
                                                headline(reg.records(existing), metric), f"already graded as run {existing}",
                                                run_status=reg.run(existing).status))
                continue
            todo.append((e, key))
        # the challenge decides before any scoring, in entry-name order (the runs folder's, which the organizer
        # names; discover() sorted it): the first use the quota first, and record() gives them run ids in that order.
        # Never by submitted_at: the team writes it, and these runs share one graded_at, so their run ids decide
        # which of a team's runs is its latest and which of two equal scores is listed first.
        refused: dict[str, tuple[str, str]] = {}  # entry name -> (code, why), recorded unscored
        phase_splits: dict[str, str] = {}
        pending: dict[str, list[str]] = {}  # team -> submission days of runs this grader will score
        for e, _ in todo:
            if (kind or ("baseline" if e.team.get("baseline") else "submission")) != "submission" or challenge is None:
                continue
            if challenge.phases:
                phase = seen_phase
                if phase is None:
                    refused[e.name] = ("outside-phases", f"first seen by the grader at {seen_at}, outside every phase "
                                       f"of the challenge ({challenge.phases[0].start} to {challenge.phases[-1].end}); "
                                       "not scored")
                    continue
                if phase.splits and not set(names) <= set(phase.splits):
                    wanted = phase.splits if split is None else [s for s in split.split(",") if s in phase.splits]
                    phase_splits[e.name] = ",".join(wanted)
            if quota is not None:
                days = pending.setdefault(e.team["team"], [])
                today, total = reg.quota_used(board, e.team["team"], seen_day)
                today += days.count(seen_day)
                total += len(days)
                over = quota.why(today, total, seen_day)
                if over:
                    refused[e.name] = ("over-quota", over)
                    continue
                days.append(seen_day)

        def record(e: Entry, key: str, result) -> None:
            status, graded = result
            if status == "outside":  # --split named none of this run's splits: nothing to record
                summary.outcomes.append(Outcome(e.name, e.team["team"], e.team["system"], "outside", message=graded))
                return
            if status == "refused":
                graded = _unreadable(benchmark, graded[1], code=graded[0])
            elif status != "ok":
                graded = _unreadable(benchmark, graded)
            run_kind = kind or ("baseline" if e.team.get("baseline") else "submission")
            run_id, created = reg.record_run(team=e.team, graded=graded, grading_key=key, kind=run_kind, board=board,
                                             submitted_at=e.submitted_at, source_name=e.name, sha256=e.sha256,
                                             chosen=bool(e.team.get("chosen")), graded_at=seen_at,
                                             quota=None if status == "refused" else quota)
            errors = [p for p in graded.problems if p.get("severity") == "error" and p.get("code")]  # notes: no code
            if not created:
                summary.outcomes.append(Outcome(e.name, e.team["team"], e.team["system"], "unchanged", run_id,
                                                headline(reg.records(run_id), metric), "graded meanwhile by another grader",
                                                run_status=reg.run(run_id).status))
                return
            msg = "" if graded.valid else _first_problem(errors)
            summary.outcomes.append(Outcome(e.name, e.team["team"], e.team["system"],
                                            "valid" if graded.valid else "rejected", run_id,
                                            headline(graded.records, metric), msg, len(errors),
                                            run_status="valid" if graded.valid else "rejected"))

        for e, key in [t for t in todo if t[0].name in refused]:
            record(e, key, ("refused", refused[e.name]))
        todo = [t for t in todo if t[0].name not in refused]
        for e, _ in [t for t in todo if phase_splits.get(t[0].name) == ""]:  # --split and the phase share none
            summary.outcomes.append(Outcome(e.name, e.team["team"], e.team["system"], "outside",
                                            message=f"its phase scores none of --split {split}: not graded"))
        todo = [t for t in todo if phase_splits.get(t[0].name) != ""]
        jobs_args = [(str(e.submission), benchmark, str(data), str(keys) if keys else None,
                      phase_splits.get(e.name, split)) for e, _ in todo]
        with _progress(progress, len(todo)) as advance:
            if jobs == 1 or len(todo) <= 1:
                for (e, key), args in zip(todo, jobs_args):
                    record(e, key, _score_job(args))
                    advance(e.name)
            else:
                import multiprocessing
                from concurrent.futures import ProcessPoolExecutor

                # spawn: workers start clean (no copied locks or threads from the progress bar)
                ctx = multiprocessing.get_context("spawn")
                with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=_worker_init,
                                         initargs=(os.getpid(),)) as pool:
                    futures = [pool.submit(_score_job, a) for a in jobs_args]
                    # workers score in parallel, but runs are recorded in entry-name order (as with --jobs 1),
                    # not as they finish: run ids and the in-transaction quota check must not depend on timing
                    for (e, key), fut in zip(todo, futures):
                        record(e, key, fut.result())
                        advance(e.name)
    order = {e.name: i for i, e in enumerate(entries)}
    summary.outcomes.sort(key=lambda o: order.get(o.entry, 0))
    return summary


def _check_challenge(challenge, benchmark: str, names: list[str], where: str) -> None:
    from dialeval.leaderboard.challenge import check_splits

    if challenge.benchmark != benchmark:
        raise UsageError(f"{where}: the challenge is on benchmark {challenge.benchmark!r}, the runs are graded on "
                         f"{benchmark!r}")
    check_splits(challenge, names, where)


def default_board(benchmark: str, fingerprint: str) -> str:
    return f"{benchmark}-{fingerprint[:8]}"


def _first_problem(errors: list[dict]) -> str:
    if not errors:
        return ""
    p = errors[0]
    where = p.get("file") or ""
    if p.get("pointer"):
        where = f"{where}#{p['pointer']}"
    more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{where + ': ' if where else ''}[{p.get('code')}] {p.get('message')}{more}"


class _progress:
    """A rich progress bar on a terminal (stderr), nothing otherwise; ``advance(label)`` after each run."""

    def __init__(self, enabled: bool, total: int):
        self.enabled = enabled and total > 0 and os.environ.get("DIALEVAL_NO_PROGRESS") is None
        self.total = total
        self._p = None

    def __enter__(self):
        if not self.enabled:
            return lambda label: None
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        console = Console(stderr=True)
        if not console.is_terminal:
            self.enabled = False
            return lambda label: None
        self._p = Progress(TextColumn("grading"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                           TextColumn("{task.description}"), console=console, transient=True)
        self._p.start()
        task = self._p.add_task("", total=self.total)
        return lambda label: self._p.update(task, advance=1, description=label[:40])

    def __exit__(self, *exc):
        if self._p is not None:
            self._p.stop()
