"""Hosting a challenge on Codabench or EvalAI, with dialeval as their scoring program.

Both platforms run submission queues, accounts and workers at scale; dialeval supplies the scoring and the
configuration, built from the benchmark's data and (optionally) the organizer's ``challenge.toml``:

* **Codabench** (competition bundle v2): ``competition.yaml`` (phases with dates and quotas, one task per
  phase, one leaderboard whose column keys are the metric names, its submission rule from ``counts``), the
  pages, a logo, per phase its public data (the test inputs without answers, where the benchmark's format
  separates them: :func:`public_data`), per task the reference data (what scoring the phase's splits reads:
  :func:`reference_files`) and a scoring program
  whose ``metadata.yaml`` command is ``dialeval bundle codabench-score /app/input/res /app/input/ref
  /app/output``: the worker runs it in the scoring image (the ``Dockerfile`` installs this very dialeval); it
  writes ``/app/output/scores.json`` (``{metric: value}``) and ``detailed_results.html``.
* **EvalAI**: ``challenge_config.yaml`` (phases, dataset splits named after dialeval's splits, one leaderboard
  whose labels are the metric names), the HTML templates, per phase an annotation archive (its test files and
  keys) and ``evaluation_script.zip`` whose ``evaluate(test_annotation_file, user_submission_file,
  phase_codename, **kwargs)`` returns ``{"result": [{split: {metric: value}}, ...], "submission_result": ...}``.

Both score through :func:`dialeval.api.score`, the path ``dialeval score`` takes, so the numbers are exactly
``dialeval score``'s. A submission that is not valid gives one line on stderr and no scores. Answer keys are
only ever in the reference data (Codabench) or the annotation archives (EvalAI), never in a page.
Bundles are deterministic: sorted entries, fixed timestamps and modes, no clock.

dialeval is not on PyPI: each bundle carries a wheel of the dialeval that made it
(:mod:`dialeval.leaderboard.own_wheel`), in every Codabench scoring program and in EvalAI's evaluation script,
and every install step installs that wheel (its dependencies come from PyPI), never a ``dialeval==`` download.
Participants install the same wheel: the Codabench bundle's ``starting_kit/`` (every phase's starting kit, which
Codabench offers on the competition page) holds it; for EvalAI, whose configuration has no such entry, README.txt
tells the organizer to publish it.

The keys written are the ones the platforms document (tests/test_bundle.py lists them with their sources).
"""

from __future__ import annotations

import functools
import gzip
import html
import io
import json
import os
import shlex
import struct
import sys
import tarfile
import textwrap
import zipfile
import zlib
from pathlib import Path

from dialeval import __version__
from dialeval.core.errors import DialevalError, SubmissionFault, UsageError

SCORES_FILE = "scores.json"
DETAILS_FILE = "detailed_results.html"
ZIP_TIME = (1980, 1, 1, 0, 0, 0)  # the earliest time a ZIP entry can carry: no clock in the bundle
SUBMISSION_RULES = {"latest": "Force_Last", "best-public": "Force_Best", "chosen": "Add_And_Delete"}
PRECISION = 4
"""Decimals the leaderboards show: Codabench's column ``precision`` and EvalAI's ``leaderboard_decimal_precision``
both default to 2, too coarse for P@1 over a few hundred items (0.962 and 0.958 would tie at 0.96)."""
PUBLIC_DATA = "public_data"
"""The Codabench bundle's folders (``public_data_N``, one per phase) that phases name as their ``public_data``:
the phase's test inputs without answers, which Codabench offers participants beside the starting kit."""
STARTING_KIT = "starting_kit"
"""The Codabench bundle's folder that every phase names as its ``starting_kit``: Codabench zips it and offers it
to participants on the competition page (Files), so it carries the wheel they install."""
WHEEL_CONTENTS = (
    "What the wheel holds (participants get it): dialeval's code and its package data: JSON schemas, the known "
    "releases' file checksums (files/releases.json), the leaderboard site's templates, static files and demo "
    "challenge.toml, and dialeval's own constructed sample data (dialeval/samples/<benchmark>/) with their answers: "
    "DSTC6's *.answers.json, DSTC7's GROUND_TRUTH.tsv, Douban's labelled test.txt, the other samples' inline answers "
    "(small made-up files, no challenge's data). It is made from the installed package alone: nothing of "
    "--data or --keys is added to it (only the reference data hold them; data given as sample:NAME are those same "
    "samples). A bundle of the embedded default challenge (no --data) is a demo: that challenge is simulated from a "
    "fixed seed, and the wheel's simulator remakes it, answers included.")
"""README.txt of both bundles says what the wheel handed to participants contains (the README's hosting section too)."""
EVALAI_NO_LIMIT = 100000
"""EvalAI's documented default for a phase's max_submissions_per_day, max_submissions_per_month and
max_submissions ("optional, default 100000"; each "a positive integer": EvalAI has no 0-means-unlimited, unlike
Codabench). The bundle writes it where challenge.toml sets no limit, so the config says what EvalAI enforces."""
EVALAI_LIMITS_NOTE = (f"# Submission limits are written for every phase: challenge.toml's [quota] where it sets one, else\n"
                      f"# {EVALAI_NO_LIMIT}, EvalAI's documented default for an omitted limit (it has no 0 = unlimited).\n")


# ---- scoring, as the platforms' workers call it -------------------------------------------------------------
def _submission_path(path: Path, split_names: list[str] | None = None) -> Path:
    """What to score: the platform unpacks a participant's archive into a folder. A folder holding one result
    file and nothing else is that file (a single-file run); a folder holding only one folder that is not a split
    (the participant zipped their run's folder) is that folder; anything else is scored as the folder."""
    if path.is_dir():
        kids = [k for k in path.iterdir() if not k.name.startswith((".", "__MACOSX")) and k.name != "metadata"]
        if len(kids) == 1 and kids[0].is_file():
            return kids[0]
        if len(kids) == 1 and kids[0].is_dir() and not kids[0].is_symlink() and kids[0].name not in (split_names or []):
            return _submission_path(kids[0], split_names)
    return path


def score(submission: str | Path, reference: str | Path, benchmark: str, splits: list[str] | None = None,
          data_file: str | None = None, keys_file: str | None = None):
    """Score ``submission`` against the reference data as ``dialeval score`` does; :class:`SubmissionFault`
    (one line) when it is not valid. ``data_file``, ``keys_file``: names inside the reference data of the data
    file and the keys file the bundle was made from (``--data FILE``, ``--keys FILE``), scored as those files."""
    from dialeval.api import score as api_score

    for name in (data_file, keys_file):
        if name is not None and (not name or name in (".", "..") or "/" in name or "\\" in name):
            raise UsageError(f"{name!r}: not a file name inside the reference data")
    data = Path(reference) / data_file if data_file else Path(reference)
    keys = Path(reference) / keys_file if keys_file else None
    sub = _submission_path(Path(submission), _split_names(benchmark, data))
    report = api_score(str(sub), ",".join(splits) if splits else None, benchmark=benchmark, data=str(data),
                       keys=str(keys) if keys else None)
    if not report.valid:
        errors = report.errors
        first = errors[0].format() if errors else "no result files"
        more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
        raise SubmissionFault(f"invalid submission, not scored: {first}{more}")
    return report


def headline(records: list[dict], metric: str, split: str | None = None) -> float | None:
    """One number per metric: over everything scored (``split`` None) or one split; the micro mean over the
    groups where there is one, else the only group's number."""
    rows = [r for r in records if r["metric"] == metric and r.get("subset") is None]
    if split is None:
        splits = {r["split"] for r in rows if r["split"] != "all"}
        split = "all" if any(r["split"] == "all" for r in rows) or len(splits) != 1 else splits.pop()
    rows = [r for r in rows if r["split"] == split]
    for avg in ("micro", "macro"):
        hit = [r for r in rows if r["group"] == "all" and r.get("average") == avg]
        if hit:
            return hit[0]["value"]
    return rows[0]["value"] if len(rows) == 1 else None


def scores_of(report, split: str | None = None) -> dict[str, float]:
    out = {}
    for m in report.metrics:
        v = headline(report.records, m, split)
        if v is not None:
            out[m] = v
    return out


def details_html(report, benchmark: str) -> str:
    """The participant's detailed results: per split and group, every metric (aggregates only, no item)."""
    e = html.escape
    metrics = list(report.metrics)
    rows = []
    for r in report.records:
        if r.get("subset") is None and r["metric"] == metrics[0] and (r.get("average") is None or r["group"] == "all"):
            cells = []
            for m in metrics:
                v = next((x["value"] for x in report.records if x["metric"] == m and x["split"] == r["split"]
                          and x["group"] == r["group"] and x.get("average") == r.get("average")
                          and x.get("subset") is None), None)
                cells.append("–" if v is None else f"{v:.4f}")
            label = r["group"] if r.get("average") is None else f"all ({r['average']})"
            rows.append(f"<tr><td>{e(r['split'])}</td><td>{e(str(label))}</td>"
                        + "".join(f"<td>{c}</td>" for c in cells) + f"<td>{r.get('n') or ''}</td></tr>")
    head = "".join(f"<th>{e(m)}</th>" for m in metrics)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>dialeval results</title></head>"
            f"<body><h1>dialeval {e(__version__)} · {e(benchmark)}</h1>\n<table border=\"1\"><thead><tr><th>split</th>"
            f"<th>group</th>{head}<th>n</th></tr></thead><tbody>\n" + "\n".join(rows) + "\n</tbody></table>\n"
            f"<p>signature: <code>{e(str(report.signature or ''))}</code></p></body></html>\n")


def hidden_html(benchmark: str, until: str) -> str:
    """A hidden phase's detailed results: that the submission was scored, and no number."""
    e = html.escape
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>dialeval results</title></head>"
            f"<body><h1>dialeval {e(__version__)} · {e(benchmark)}</h1>\n<p>Your submission is valid and was scored. "
            + ("This phase's scores stay hidden until the organizers reveal them." if until == "reveal" else
               f"This phase's scores stay hidden until it ends ({e(until)}).") + "</p></body></html>\n")


def codabench_score(res: str | Path, ref: str | Path, out: str | Path, benchmark: str,
                    splits: list[str] | None = None, hidden_until: str | None = None,
                    data_file: str | None = None, keys_file: str | None = None) -> dict[str, float]:
    """The scoring program: score ``res`` against ``ref``, write ``out/scores.json`` and ``out/detailed_results.html``.
    Nothing is written for an invalid submission (:class:`SubmissionFault`). ``hidden_until`` (a hidden phase's
    end): the detailed results, which Codabench shows the participant whatever the phase's settings, say only that
    the scores are hidden until then; ``scores.json`` still feeds the (hidden) leaderboard."""
    from dialeval.files.write import atomic_write_text, protect

    res, ref, out = Path(res), Path(ref), Path(out)
    for p, what in ((res, "the submission"), (ref, "the reference data")):
        if not p.exists():
            raise UsageError(f"{p}: missing ({what})")
        protect(p, what)
        inside = Path(os.path.realpath(out))
        if p.is_dir() and (inside == Path(os.path.realpath(p)) or Path(os.path.realpath(p)) in inside.parents):
            # scores.json among the answer keys (or the run) would be an output written onto an input
            raise UsageError(f"{out}: inside {what} ({p}); write the scores elsewhere")
    report = score(res, ref, benchmark, splits, data_file, keys_file)
    # the leaderboard's one number per metric is over the phase's splits (--split, or the split folders the reference
    # data hold: only the phase's): a run of some of them only would be ranked on its easy splits among runs of all
    # (`rank` leaves such a run unbanded)
    from dialeval.benchmarks import registry

    phase = splits or (_split_names(benchmark, ref) if registry.get(benchmark).split_folders else [])
    left_out = [s for s in phase if s not in report.splits]
    if left_out:
        raise SubmissionFault(f"invalid submission, not scored: it answers {', '.join(report.splits)} but not "
                                f"{', '.join(left_out)}; this phase is scored on {', '.join(phase)} together (one "
                                f"leaderboard number), so send result files for every one of them")
    values = scores_of(report)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / DETAILS_FILE, details_html(report, benchmark) if hidden_until is None
                      else hidden_html(benchmark, hidden_until))
    atomic_write_text(out / SCORES_FILE, json.dumps(values, indent=1, sort_keys=True) + "\n")
    return values


def evalai_evaluate(test_annotation_file, user_submission_file, phase_codename, *, benchmark: str,
                    phases: dict[str, list[str]] | None = None, data_file: str | None = None,
                    keys_file: str | None = None) -> dict:
    """EvalAI's ``evaluate``: the annotation file is the phase's reference data as a .tgz (unpacked with dialeval's
    hardened extraction into a private folder); the submission is a result file or a .tgz of a run.

    Returns ``{"result": [{split: {metric: value}}, ...], "submission_result": {split: {...}}}``. An invalid
    submission prints one line on stderr and raises :class:`SubmissionFault` (EvalAI marks it failed).
    """
    import tempfile

    from dialeval.files.archive import safe_extract

    splits = (phases or {}).get(phase_codename)
    try:
        with tempfile.TemporaryDirectory(prefix="dialeval-evalai-") as tmp:
            ref = Path(tmp) / "ref"
            safe_extract(Path(test_annotation_file), ref)
            report = score(user_submission_file, ref, benchmark, None, data_file, keys_file)
            result = [{s: scores_of(report, s)} for s in report.splits if not splits or s in splits]
            if not result:
                raise SubmissionFault(f"invalid submission, not scored: it answers none of phase "
                                        f"{phase_codename}'s splits ({', '.join(splits or [])})")
    except DialevalError as e:
        from dialeval.core.termsafe import safe

        print(safe(f"dialeval: {e}"), file=sys.stderr)
        raise SubmissionFault(str(e)) from None
    merged = {k: v for item in result for k, v in item.items()}
    return {"result": result, "submission_result": merged}


# ---- what both bundles hold ---------------------------------------------------------------------------------
def _default_challenge(benchmark: str, title: str):
    from dialeval.leaderboard.challenge import Challenge

    return Challenge(title=f"{title} (scored by dialeval)", benchmark=benchmark, source="",
                     overview=f"Submissions are scored with dialeval {__version__} on benchmark {benchmark}: {title}.")


def phases(ch, split_names: list[str]) -> list[dict]:
    """The challenge's phases (one open-ended "test" phase without any), each with its splits and quotas."""
    from dialeval.leaderboard.challenge import Phase

    items = ch.phases or [Phase("test", "2000-01-01T00:00:00Z", "", None, False, "")]
    out = []
    for i, p in enumerate(items):
        code = "".join(c if c.isalnum() else "-" for c in p.name.lower()).strip("-") or f"phase{i + 1}"
        out.append({"index": i, "name": p.name, "codename": code, "start": p.start, "end": p.end or None,
                    "splits": list(p.splits or split_names), "named": bool(p.splits), "hidden": p.hidden,
                    "description": p.description or f"Scored on {', '.join(p.splits or split_names) or 'every split'}."})
    return out


def reference_files(benchmark: str, data: Path, keys: Path | None, splits: list[str]) -> dict[str, Path]:
    """{path inside the reference data: file}: of the data folder (and of the keys folder), the files scoring the
    phase's ``splits`` reads (:meth:`~dialeval.benchmarks.base.Benchmark.scoring_files`: the splits' data files,
    answer keys and shared candidates, never a train file), and the folder's sample or simulator mark (which the
    report's data identity reads: the scored copy is named as the data it came from); every file where the
    benchmark cannot tell. A data (keys) file given as such, for the benchmarks whose release is single files,
    under its own name."""
    from dialeval.benchmarks import registry
    from dialeval.files.identity import SAMPLE_MARK, SIMULATOR_MARK

    bench = registry.get(benchmark)
    out: dict[str, Path] = {}
    for root in [r for r in (data, keys) if r is not None]:
        if root.is_file():
            out[root.name] = root
            continue
        picked = bench.scoring_files(root, splits) if root.is_dir() else []
        if picked:
            picked += [root / SAMPLE_MARK, root / SIMULATOR_MARK]
        for f in sorted(root.rglob("*")) if picked is None else sorted(set(picked)):
            if f.is_file() and not f.is_symlink() and not any(p.startswith(".") for p in f.relative_to(root).parts):
                out[f.relative_to(root).as_posix()] = f
    return out


def file_names(data: Path, keys: Path | None) -> tuple[str | None, str | None]:
    """The names, inside the reference data, of the data file and the keys file given as files (None for a
    folder): the scoring program reads them as ``dialeval score --data FILE --keys FILE`` would."""
    return (data.name if data.is_file() else None, keys.name if keys is not None and keys.is_file() else None)


def key_args(keys) -> list[tuple[str | None, Path]]:
    """``--keys`` as given (None, one path, or a list): each a keys file or folder, or ``SPLIT=FILE``, a keys file
    named as the answers of that split (a value that is an existing path is that path), as (split or None, path)."""
    out = []
    for v in [] if keys is None else [keys] if isinstance(keys, (str, Path)) else keys:
        if isinstance(v, tuple):
            out.append((v[0], Path(v[1])))
            continue
        split, eq, rest = str(v).partition("=")
        named = eq and split and rest and not any(c in split for c in "/\\") and not Path(v).exists()
        out.append((split, Path(rest)) if named else (None, Path(v)))
    return out


def phase_keys(benchmark: str, data: Path, keys: list[tuple[str | None, Path]], phase_list: list[dict]) -> list[Path | None]:
    """Each phase's answer key: one scoring reads one, so a keys file goes only to the phases on the split whose
    examples it answers (its ``SPLIT=``, else the benchmark's :meth:`~dialeval.benchmarks.base.Benchmark.key_splits`):
    DSTC7's test ground truth never reaches the dev phase, whose scoring it would break. A keys folder, or a file
    whose split the benchmark cannot tell, goes to every phase. Refused (usage error; the messages name files and
    splits, never an id of the key): a key answering none of the phases' splits, or several; two keys for one
    split, or for one phase."""
    from dialeval.benchmarks import registry

    bench = registry.get(benchmark)
    on = list(dict.fromkeys(s for p in phase_list for s in p["splits"]))
    claims: dict[str, list[Path]] = {}
    for split, key in dict.fromkeys(keys):  # the same key given twice is given once
        if split is not None and split not in on:
            raise UsageError(f"--keys {split}={key}: no phase is on split {split} (the phases' splits: {', '.join(on)})")
        if not key.exists():
            raise UsageError(f"--keys {key}: missing (no such file or folder)")
        got = bench.key_splits(data, key, [split] if split else on) if key.is_file() else None
        where = f"split {split}" if split else f"the phases' splits ({', '.join(on)})"
        if got is not None and not got:
            raise UsageError(f"--keys {key}: answers no example of {where}: the answer key of another split?")
        if got is not None and len(got) > 1:
            raise UsageError(f"--keys {key}: answers examples of {len(got)} splits ({', '.join(got)}), and a phase's "
                             f"scoring reads one key: name the split it is for, --keys SPLIT={key}")
        for s in got or ([split] if split else on):
            claims.setdefault(s, []).append(key)
    for s, given in claims.items():
        if len(given) > 1:
            raise UsageError(f"--keys: split {s} has {len(given)} answer keys ({given[0]}, {given[1]}); give one per split")
    out = []
    for p in phase_list:
        mine = list(dict.fromkeys(k for s in p["splits"] for k in claims.get(s, [])))
        if len(mine) > 1:
            raise UsageError(f"phase {p['name']!r}: its splits ({', '.join(p['splits'])}) have {len(mine)} answer keys "
                             f"and its scoring reads one: give it one split, or one key covering them")
        out.append(mine[0] if mine else None)
    return out


def _read(path: Path) -> bytes:
    from dialeval.files.read import read_bytes, text_limit

    return read_bytes(path, what="a data file", limit=text_limit())


def _split_names(benchmark: str, data: Path) -> list[str]:
    from dialeval.benchmarks import registry

    try:
        return list(registry.get(benchmark).splits(data))
    except (DialevalError, OSError, AttributeError, NotImplementedError):
        return []


def _paras_md(text: str) -> str:
    from dialeval.leaderboard.challenge import paragraphs

    return "\n\n".join(paragraphs(text))


def pages(ch, benchmark: str, metrics: list[str], phase_list: list[dict], fmt: str = "md",
          wheel_where: str = "") -> dict[str, str]:
    """The challenge's pages, as Markdown (Codabench) or HTML (EvalAI): overview, evaluation, phases, how to
    submit, terms. Public contacts only; nothing of the answer keys. ``wheel_where``: where participants download
    the dialeval wheel that the submit page tells them to install (dialeval is not on PyPI): Codabench serves it
    in each phase's starting kit; EvalAI has no such entry, so its organizers publish it and link it."""
    from dialeval.leaderboard.challenge import paragraphs, submit_commands
    from dialeval.leaderboard.own_wheel import wheel_name

    def para(text: str) -> str:
        if fmt == "md":
            return _paras_md(text)
        return "\n".join(f"<p>{html.escape(p)}</p>" for p in paragraphs(text))

    def items(lines: list[str]) -> str:
        if fmt == "md":
            return "\n".join(f"* {x}" for x in lines)
        return "<ul>\n" + "\n".join(f"<li>{html.escape(x)}</li>" for x in lines) + "\n</ul>"

    def code(lines: list[str]) -> str:
        if fmt == "md":
            return "```sh\n" + "\n".join(lines) + "\n```"
        return "<pre><code>" + html.escape("\n".join(lines)) + "</code></pre>"

    def h(text: str) -> str:
        return f"# {text}" if fmt == "md" else f"<h2>{html.escape(text)}</h2>"

    rule = {"best-public": "each team's best submission", "chosen": "the submission each team chooses"}.get(
        ch.counts, "each team's latest submission")
    quota = []
    if ch.per_day:
        quota.append(f"at most {ch.per_day} submissions per day")
    if ch.total:
        quota.append(f"at most {ch.total} in all")
    contacts = [", ".join(x for x in (c.name, c.role, c.email, c.url) if x) for c in ch.public_contacts()]
    phase_lines = [f"{p['name']}: {p['start']} to {p['end'] or 'open-ended'}, splits {', '.join(p['splits'])}"
                   + (" (scores hidden until the phase ends)" if p["hidden"] else "") for p in phase_list]
    out = {
        "overview": "\n\n".join(x for x in (h(ch.title), para(ch.overview),
                                            items([f"Contact: {c}" for c in contacts]) if contacts else "") if x),
        "evaluation": "\n\n".join([
            h("Evaluation"),
            para(f"Submissions are scored by dialeval {__version__} on benchmark {benchmark}. The leaderboard "
                 f"shows {', '.join(metrics)} over everything a submission answers (micro mean over the items); "
                 f"the detailed results give every split and task. The ranked entry is {rule}."),
            para(ch.rules) if ch.rules else ""]).strip(),
        "phases": "\n\n".join([h("Phases"), items(phase_lines),
                               items([f"Quota: {', '.join(quota)} per team."]) if quota else ""]).strip(),
        "submit": "\n\n".join(x for x in [h("How to submit"), para(ch.submit) if ch.submit else "",
                                            para("Check a submission with the scorer's exact version before sending "
                                                 f"it. dialeval is not on PyPI: the organizers publish that exact "
                                                 f"dialeval as the wheel {wheel_name()}"
                                                 f"{' (' + wheel_where + ')' if wheel_where else ''}; "
                                                 "download it into the folder where you run these (RUN: your run, "
                                                 "DATA: the test files):"),
                                            code(submit_commands(ch, __version__))] if x),
        "terms": "\n\n".join([h("Terms"), para(ch.licence or "See the rules."), para(ch.rules) if ch.rules else ""]),
    }
    return {k: v.strip() + "\n" for k, v in out.items()}


# ---- writing --------------------------------------------------------------------------------------------------
def _yaml(obj, indent: int = 0) -> str:
    """Block YAML of dicts, lists and scalars; strings double-quoted with JSON escapes (valid YAML)."""
    pad = " " * indent
    if isinstance(obj, dict):
        lines = []
        for k, v in obj.items():
            if isinstance(v, (dict, list)) and v:
                lines.append(f"{pad}{k}:\n{_yaml(v, indent + 2)}")
            else:
                lines.append(f"{pad}{k}: {_scalar(v)}")
        return "\n".join(lines)
    if isinstance(obj, list):
        lines = []
        for v in obj:
            if isinstance(v, dict) and v:
                body = _yaml(v, indent + 2)
                lines.append(f"{pad}- {body[indent + 2:]}")
            else:
                lines.append(f"{pad}- {_scalar(v)}")
        return "\n".join(lines)
    return pad + _scalar(obj)


def _scalar(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, (dict, list)):
        return "{}" if isinstance(v, dict) else "[]"
    return json.dumps(str(v), ensure_ascii=False)


def zip_bytes(entries: dict[str, bytes], keep_order: bool = False) -> bytes:
    """A deterministic ZIP: sorted names (or the entries' own order, ``keep_order``), one fixed time, mode 0644,
    deflated."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name in (entries if keep_order else sorted(entries)):
            info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            info.create_system = 3  # Unix: the mode above is read
            z.writestr(info, entries[name], compresslevel=6)
    return buf.getvalue()


@functools.lru_cache(maxsize=1)
def dialeval_wheel() -> bytes:
    """The running dialeval as a wheel (:mod:`dialeval.leaderboard.own_wheel`), zipped as deterministically as
    the bundles."""
    from dialeval.leaderboard.own_wheel import wheel_entries

    return zip_bytes(wheel_entries(), keep_order=True)


def tgz_bytes(entries: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for name in sorted(entries):
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(entries[name]), 0, 0o644
            tf.addfile(info, io.BytesIO(entries[name]))
    return gzip.compress(buf.getvalue(), mtime=0)


def logo_png(size: int = 64) -> bytes:
    """A plain square PNG (both platforms want a logo); the organizer replaces it in the editor."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    row = b"\x00" + bytes((59, 111, 182)) * size
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(row * size, 9)) + chunk(b"IEND", b""))


BASE_IMAGE = "python:3.12-slim"
"""The scoring image by default (Docker Hub's official Python image, what the Dockerfile builds on): the scoring
program installs the bundle's own dialeval wheel into it when it is not there (:func:`scoring_command`)."""


def dockerfile(wheel_path: str) -> str:
    """The scoring image: Docker Hub's Python with the bundle's own dialeval wheel (``wheel_path``, in the bundle)
    installed, its dependencies from PyPI at build time."""
    wheel = wheel_path.rpartition("/")[2]
    return ("# The scoring image: the exact dialeval that made this bundle (numbers depend on it), installed from the\n"
            "# wheel in the bundle (dialeval is not on PyPI); pip fetches its dependencies (numpy, scipy, pandas...).\n"
            f"FROM {BASE_IMAGE}\n"
            f"COPY {wheel_path} /tmp/{wheel}\n"
            f"RUN pip install --no-cache-dir /tmp/{wheel} && rm /tmp/{wheel}\n"
            "WORKDIR /app/program\n")


def scoring_command(args: str, version: str = __version__, image: str | None = None, build: str | None = None) -> str:
    """The metadata.yaml command: ``dialeval bundle codabench-score ARGS`` run by ``sh -c`` (Codabench's worker
    hands the command to Docker, which runs no shell), once the image is known to hold this very dialeval (the
    bundle wheel's ``build``, not just its version: never another build's numbers).

    * ``image`` given (built from the bundle's Dockerfile, dialeval preinstalled): nothing is installed, so the
      scoring works on a worker without network; an image holding another build or none stops with one line.
    * the default image (Docker Hub's Python image): the scoring program's own dialeval wheel
      (``/app/program/dialeval-VERSION-py3-none-any.whl``, never a download of dialeval) is installed with pip
      when the image holds another build or none (first alone, replacing a same-version build pip would keep,
      then again for its dependencies); pip fetches the dependencies from PyPI, which needs the network on the
      worker (Codabench's worker gives the container network unless its organizer set
      COMPETITION_CONTAINER_NETWORK_DISABLED); a failed install stops with one line saying so.
    """
    from dialeval.leaderboard.own_wheel import build_id, installed_build_check, wheel_name

    build = build or build_id()
    check = installed_build_check(build)
    if image is not None:
        missing = (f"dialeval: the scoring image {image} does not hold this bundle's dialeval {version} (build "
                   f"{build[:12]}): rebuild it from the bundle's Dockerfile and push it")
        return "sh -c " + shlex.quote(f'python3 -c "{check}" 2>/dev/null || {{ echo {shlex.quote(missing)} >&2; '
                                      f"exit 2; }} && exec dialeval bundle codabench-score {args}")
    failed = (f"dialeval: could not install the bundled dialeval {version} into the scoring image: its dependencies "
              "(numpy, scipy, pandas...) come from PyPI, does this worker reach it? For scoring without network, "
              "build the bundle's Dockerfile, push it and rebuild the bundle with --image NAME")
    pip = "python3 -m pip install -qq --no-cache-dir --disable-pip-version-check --root-user-action=ignore"
    wheel = f"/app/program/{wheel_name(version)}"
    install = f"{pip} --force-reinstall --no-deps {wheel} >/dev/null 2>&1 && {pip} {wheel} >/dev/null 2>&1"
    return "sh -c " + shlex.quote(f'python3 -c "{check}" 2>/dev/null || {{ {{ {install}; }} || {{ echo '
                                  f"{shlex.quote(failed)} >&2; exit 2; }}; }} && exec dialeval bundle codabench-score {args}")


def _prepare(benchmark: str, data: Path, keys: list[tuple[str | None, Path]], ch):
    from dialeval.leaderboard.scoring import benchmark_info

    info = benchmark_info(benchmark)
    if not data.exists():
        raise UsageError(f"{data}: no such data file or folder")
    names = _split_names(benchmark, data)
    if not names:  # a bundle of no split would score nothing (a wrong folder, or a run given as the data)
        raise UsageError(f"{data}: holds no {benchmark} test data (no split found); is it the benchmark's data?")
    if ch is None:
        ch = _default_challenge(benchmark, info["title"])
    elif ch.benchmark != benchmark:
        raise UsageError(f"--challenge: the challenge is on benchmark {ch.benchmark!r}, not {benchmark!r}")
    else:
        from dialeval.leaderboard.challenge import check_splits

        check_splits(ch, names, "--challenge")
    phase_list = phases(ch, names)
    for p, key in zip(phase_list, phase_keys(benchmark, data, keys, phase_list)):
        if data.is_file() and key is not None and key.name == data.name:
            raise UsageError(f"--keys {key}: the same file name as --data {data}; the reference data hold both by name")
        p["keys"] = key
    refs = []
    for p in phase_list:
        files = reference_files(benchmark, data, p["keys"], p["splits"])
        if not files:
            raise UsageError(f"{data}: no reference data for phase {p['name']!r} (splits {', '.join(p['splits'])})")
        refs.append({name: _read(f) for name, f in files.items()})
    return ch, info, phase_list, refs


def public_data(benchmark: str, data: Path, keys: Path | None, splits: list[str], ref: dict[str, bytes]):
    """A phase's public data, ``{path: bytes}``: the benchmark's test inputs without answers
    (:meth:`~dialeval.benchmarks.base.Benchmark.public_files`), made from the data files alone (a keys file or
    folder never reaches the benchmark); None where its format carries the answers inline. ``ref``: the phase's
    reference data, whose bytes are reused where a name is the same data file."""
    from dialeval.benchmarks import registry

    both = reference_files(benchmark, data, keys, splits)
    mine = reference_files(benchmark, data, None, splits)
    files = {name: ref[name] if both.get(name) == f else _read(f) for name, f in mine.items()}
    return registry.get(benchmark).public_files(files, splits) or None


def codabench_bundle(benchmark: str, data: str | Path, keys=None, ch=None,
                     image: str | None = None) -> dict[str, bytes]:
    """The entries of a Codabench v2 competition bundle (see the module docstring). ``keys``: see :func:`key_args`."""
    data = Path(data)
    ch, info, phase_list, refs = _prepare(benchmark, data, key_args(keys), ch)
    metrics = info["default_metrics"]
    image = image or BASE_IMAGE
    from dialeval.leaderboard.own_wheel import wheel_name

    wheel = dialeval_wheel()
    entries: dict[str, bytes] = {}
    page_md = pages(ch, benchmark, metrics, phase_list, "md",
                    wheel_where="on this competition's Files tab, in the starting kit")
    from dialeval.benchmarks import registry

    split_folders = registry.get(benchmark).split_folders
    for name, text in page_md.items():
        entries[f"pages/{name}.md"] = text.encode()
    tasks, comp_phases, published = [], [], False
    for p, ref in zip(phase_list, refs):
        i = p["index"]
        for name, body in ref.items():
            entries[f"reference_data_{i}/{name}"] = body
        public = public_data(benchmark, data, p["keys"], p["splits"], ref)
        for name, body in (public or {}).items():
            entries[f"{PUBLIC_DATA}_{i}/{name}"] = body
        published = published or bool(public)
        args = f"/app/input/res /app/input/ref /app/output --benchmark {benchmark}"
        for flag, name in zip(("--data-file", "--keys-file"), file_names(data, p["keys"])):
            if name:
                args += f" {flag} {shlex.quote(name)}"
        if not split_folders and p["named"]:  # split folders: the reference data hold only the phase's splits
            args += f" --split {','.join(p['splits'])}"
        if p["hidden"]:
            args += f" --hidden-until {p['end'] or 'reveal'}"
        entries[f"scoring_program_{i}/metadata.yaml"] = (
            f"# dialeval {__version__} scores /app/input/res against /app/input/ref into /app/output/{SCORES_FILE}\n"
            + _yaml({"command": scoring_command(args, image=None if image == BASE_IMAGE else image)})
            + "\n").encode()
        # each scoring program is mounted alone on the worker, so each carries the wheel
        entries[f"scoring_program_{i}/{wheel_name()}"] = wheel
        tasks.append({"index": i, "name": f"{ch.title[:80]}: {p['name']}", "description": p["description"],
                      "scoring_program": f"scoring_program_{i}", "reference_data": f"reference_data_{i}"})
        phase = {"index": i, "name": p["name"], "description": p["description"], "start": _utc_date(p["start"])}
        if p["end"]:
            phase["end"] = _utc_date(p["end"])
        # Always written: Codabench's v2 importer (src/apps/competitions/unpackers/v2.py) gives a phase that omits
        # them 5 a day and 100 in all. 0 is "no limit": the Phase fields are PositiveIntegerFields, and
        # Phase.can_user_make_submissions (src/apps/competitions/models.py) skips a limit that is falsy.
        phase["max_submissions_per_day"] = ch.per_day or 0
        phase["max_submissions"] = ch.total or 0
        if p["hidden"]:  # the phase's own switch: its submissions' outputs and scores kept from participants
            phase["hide_output"] = True
        if public:  # the test inputs without answers: Codabench offers the folder (zipped) beside the starting kit
            phase["public_data"] = f"{PUBLIC_DATA}_{i}"
        phase["starting_kit"] = STARTING_KIT
        phase["tasks"] = [i]
        comp_phases.append(phase)
    competition = {
        "version": 2,
        "title": ch.title,
        "description": _first_paragraph(ch)[:300],
        "image": "logo.png",
        "docker_image": image,
        "enable_detailed_results": True,
        "terms": "pages/terms.md",
        "pages": [{"title": t, "file": f"pages/{n}.md"} for n, t in (("overview", "Overview"), ("evaluation", "Evaluation"),
                                                                     ("phases", "Phases"), ("submit", "How to submit"))],
        "phases": comp_phases,
        "tasks": tasks,
        "leaderboards": [{
            "title": "Results", "key": "main", "submission_rule": SUBMISSION_RULES[ch.counts],
            # one leaderboard for every phase (Codabench attaches each phase to the first one), its hiding
            # undated: hidden while any phase must be (see _readme_codabench)
            "hidden": any(p["hidden"] for p in phase_list),
            "columns": [{"title": m, "key": m, "index": j, "sorting": _sorting(m), "precision": PRECISION}
                        for j, m in enumerate(metrics)],
        }],
    }
    entries["competition.yaml"] = (f"# Codabench competition bundle (v2) written by dialeval {__version__}\n"
                                   + _yaml(competition) + "\n").encode()
    entries[f"{STARTING_KIT}/{wheel_name()}"] = wheel
    entries[f"{STARTING_KIT}/README.md"] = starting_kit_readme(ch, published).encode()
    entries["logo.png"] = logo_png()
    entries["Dockerfile"] = dockerfile(f"scoring_program_0/{wheel_name()}").encode()
    entries["README.txt"] = _readme_codabench(image, phase_list, None if published else
                                              registry.get(benchmark).public_data_note).encode()
    return entries


def _sorting(metric: str) -> str:
    from dialeval.metrics import get

    try:
        return "desc" if get(metric).higher_is_better else "asc"
    except DialevalError:
        return "desc"


def _readme_codabench(image: str, phase_list: list[dict], no_public: str | None = None) -> str:
    """README.txt of the Codabench bundle; ``no_public``: why the phases have no public data (None: they have)."""
    from dialeval.leaderboard.own_wheel import wheel_name

    hidden = [p for p in phase_list if p["hidden"]]
    note = ""
    if hidden:
        names = ", ".join(f"{p['name']} (ends {p['end'] or 'never: reveal by hand'})" for p in hidden)
        note = (
            f"\nHidden phase(s): {names}. What the bundle sets, and what Codabench cannot do:\n"
            "* each hidden phase has hide_output: true (its submissions' outputs and scores are kept from "
            "participants),\n  and its scoring program writes detailed results without a number;\n"
            "* the leaderboard starts hidden: true. Codabench v2 gives every phase the bundle's first leaderboard\n"
            "  (src/apps/competitions/unpackers/base_unpacker.py, _save_competition), and Leaderboard.hidden is one\n"
            "  switch with no date (src/apps/leaderboards/models.py); a leaderboard per phase and visibility by phase\n"
            "  or by date are open requests (github.com/codalab/codabench issues 1396 and 1777). So:\n"
            "  - to show an earlier phase's scores, un-hide the leaderboard in the editor (Leaderboard tab) and hide\n"
            "    it again before the hidden phase starts;\n"
            "  - at the hidden phase's end, un-hide it: that is the reveal (what `leaderboard build --reveal` does on\n"
            "    a dialeval site).\n")
    built = image != BASE_IMAGE
    step1 = (f"1. The scoring image is {image}" + (":\n   build it from the Dockerfile here (it installs scoring_program_0's dialeval wheel)\n"
                                                  "   and push it:\n"
                                                  f"   docker build -t {image} . && docker push {image}\n"
                                                  "   dialeval is preinstalled there: the scoring program installs nothing, so the\n"
                                                  "   workers need no network.\n" if built else
                                                  f" (Docker Hub's Python image): each submission's scoring first installs\n"
                                                  f"   the dialeval wheel its scoring program carries, {wheel_name()} (the exact\n"
                                                  f"   dialeval that made this bundle; dialeval is not on PyPI), with pip, which fetches its\n"
                                                  f"   dependencies (numpy, scipy, pandas...) from PyPI (about a minute), so it needs the network:\n"
                                                  f"   Codabench's compute worker gives the container network by default, but a worker whose\n"
                                                  f"   organizer set COMPETITION_CONTAINER_NETWORK_DISABLED=True (or behind a proxy) has none.\n"
                                                  f"   For a bundle that scores offline, build the Dockerfile here, push it and rebuild the\n"
                                                  f"   bundle with --image NAME: that scoring program installs nothing.\n"))
    step3 = (f"3. Participants install the dialeval that scores them, and dialeval is not on PyPI: the file to\n"
             f"   publish is {STARTING_KIT}/{wheel_name()} (the same wheel as the scoring programs').\n"
             f"   Every phase in competition.yaml names {STARTING_KIT}/ as its starting_kit, so Codabench publishes it:\n"
             f"   it zips the folder and offers it to participants on the competition page (Files tab), with\n"
             f"   {STARTING_KIT}/README.md (pip install ./{wheel_name()}, then dialeval validate). Nothing else\n"
             f"   to publish; the pages' \"How to submit\" sends teams there. (A dialeval leaderboard site built\n"
             f"   by this same dialeval serves this wheel too, beside its challenge page.)\n")
    return (f"Codabench competition bundle written by dialeval {__version__}.\n\n" + step1 +
            "2. Upload this zip on Codabench (Benchmarks > Management > Upload).\n" + step3 + "\n"
            + textwrap.fill(WHEEL_CONTENTS, 110) + "\n\n"
            "Each task's reference_data_N holds what scoring that phase's splits reads (their test files and answer\n"
            "keys, never a train file): keep the bundle private.\n"
            + (f"Each phase's {PUBLIC_DATA}_N (its public_data) holds its test files without the answers; Codabench\n"
               "offers it to participants on the Files tab, beside the starting kit.\n" if no_public is None else
               textwrap.fill(f"No public data: the phases name none, because {no_public}. Participants take the "
                             "test inputs from the release itself.", 110) + "\n")
            + note)


def starting_kit_readme(ch, public: bool = False) -> str:
    """README.md of the Codabench starting kit: what the wheel beside it is and the commands to check a run;
    ``public``: the phases publish their test files (public data), which is DATA."""
    from dialeval.leaderboard.challenge import submit_commands
    from dialeval.leaderboard.own_wheel import wheel_name

    return (f"# Checking a run with dialeval {__version__}\n\n"
            f"{wheel_name()} is the exact dialeval that scores this competition (dialeval is not on PyPI).\n"
            "In the folder holding it (RUN: your run, DATA: the test files"
            + (", the phase's public data on the Files tab, unzipped" if public else "") + "):\n\n```sh\n"
            + "\n".join(submit_commands(ch, __version__)) + "\n```\n\n"
            "`dialeval validate` makes the checks the scoring program makes; a run it rejects is not scored.\n")


def evalai_bundle(benchmark: str, data: str | Path, keys=None, ch=None) -> dict[str, bytes]:
    """The entries of an EvalAI challenge configuration zip (see the module docstring). ``keys``: see
    :func:`key_args`."""
    data = Path(data)
    ch, info, phase_list, refs = _prepare(benchmark, data, key_args(keys), ch)
    metrics = info["default_metrics"]
    entries: dict[str, bytes] = {}
    published = False
    page_html = pages(ch, benchmark, metrics, phase_list, "html", wheel_where="linked from this page")
    templates = {"description": page_html["overview"], "evaluation_details": page_html["evaluation"] + page_html["phases"],
                 "terms_and_conditions": page_html["terms"], "submission_guidelines": page_html["submit"]}
    for name, text in templates.items():
        entries[f"templates/{name}.html"] = text.encode()
    split_names = list(dict.fromkeys(s for p in phase_list for s in p["splits"]))
    split_ids = {s: i + 1 for i, s in enumerate(split_names)}
    cfg_phases, phase_splits = [], []
    for p, ref in zip(phase_list, refs):
        pid = p["index"] + 1
        entries[f"annotations/{p['codename']}.tgz"] = tgz_bytes(ref)
        # EvalAI's configuration has no entry for files participants download: the organizer publishes these
        public = public_data(benchmark, data, p["keys"], p["splits"], ref)
        for name, body in (public or {}).items():
            entries[f"{PUBLIC_DATA}/{p['codename']}/{name}"] = body
        published = published or bool(public)
        entries[f"templates/challenge_phase_{pid}_description.html"] = (
            f"<p>{html.escape(p['description'])}</p>\n").encode()
        # is_submission_public with is_restricted_to_select_one_submission is refused by EvalAI's config check
        # (apps/challenges/challenge_config_utils.py, "is_submission_public_restricted")
        phase = {"id": pid, "name": p["name"], "description": f"templates/challenge_phase_{pid}_description.html",
                 "leaderboard_public": True, "is_public": True, "is_submission_public": ch.counts != "chosen",
                 "start_date": _utc_date(p["start"]), "end_date": _utc_date(p["end"] or "2099-12-31T23:59:59Z"),
                 "test_annotation_file": f"annotations/{p['codename']}.tgz", "codename": p["codename"],
                 "is_restricted_to_select_one_submission": ch.counts == "chosen",
                 "is_partial_submission_evaluation_enabled": False,
                 # EvalAI refuses an upload whose name ends otherwise (its default list lacks .tgz and .tar)
                 "allowed_submission_file_types": submission_file_types(benchmark),
                 # [] = anyone may submit (EvalAI checks a non-empty list only). is_active and challenge, which the
                 # yaml reference shows too, are EvalAI's own: is_active is computed from the dates (a read-only
                 # field of its upload serializer) and challenge is dropped on upload (the challenge being made)
                 "allowed_email_ids": []}
        # always explicit: where challenge.toml sets no limit, EvalAI's documented default (see EVALAI_NO_LIMIT)
        phase["max_submissions_per_day"] = ch.per_day or EVALAI_NO_LIMIT
        phase["max_submissions_per_month"] = EVALAI_NO_LIMIT  # challenge.toml has no monthly quota
        phase["max_submissions"] = ch.total or EVALAI_NO_LIMIT
        cfg_phases.append(phase)
        for s in p["splits"]:
            phase_splits.append({"challenge_phase_id": pid, "leaderboard_id": 1, "dataset_split_id": split_ids[s],
                                 "visibility": 1 if p["hidden"] else 3, "leaderboard_decimal_precision": PRECISION,
                                 "is_leaderboard_order_descending": _sorting(metrics[0]) == "desc",
                                 # False: EvalAI ranks each team's best submission; counts = latest wants the last
                                 "show_leaderboard_by_latest_submission": ch.counts == "latest"})
    config = {
        "title": ch.title,
        "short_description": _first_paragraph(ch)[:140],
        "description": "templates/description.html",
        "evaluation_details": "templates/evaluation_details.html",
        "terms_and_conditions": "templates/terms_and_conditions.html",
        "image": "logo.png",
        "submission_guidelines": "templates/submission_guidelines.html",
        "leaderboard_description": f"{', '.join(metrics)} by dialeval {__version__}",
        "evaluation_script": "evaluation_script.zip",
        "remote_evaluation": False,
        "start_date": _utc_date(phase_list[0]["start"]),
        "end_date": _utc_date(phase_list[-1]["end"] or "2099-12-31T23:59:59Z"),
        "published": False,
        "leaderboard": [{"id": 1, "schema": {"labels": metrics, "default_order_by": metrics[0]}}],
        "challenge_phases": cfg_phases,
        "dataset_splits": [{"id": split_ids[s], "name": s, "codename": s} for s in split_names],
        "challenge_phase_splits": phase_splits,
    }
    entries["challenge_config.yaml"] = (f"# EvalAI challenge configuration written by dialeval {__version__}\n"
                                        + EVALAI_LIMITS_NOTE + _yaml(config) + "\n").encode()
    from dialeval.leaderboard.own_wheel import wheel_name

    script = evaluation_script(benchmark, phase_list, file_names(data, None)[0])
    script[wheel_name()] = dialeval_wheel()
    entries["evaluation_script.zip"] = zip_bytes(script)
    entries["logo.png"] = logo_png()
    from dialeval.benchmarks import registry

    entries["README.txt"] = _readme_evalai(None if published else registry.get(benchmark).public_data_note).encode()
    return entries


def submission_file_types(benchmark: str) -> str:
    """EvalAI's ``allowed_submission_file_types``: the endings of the benchmark's single-file runs (Douban's
    ``.txt`` scores, Ubuntu's ``.csv``...) and of the tar archives a run folder is sent as."""
    from dialeval.benchmarks import registry

    endings = (*registry.get(benchmark).submission_suffixes, ".tgz", ".gz", ".tar")
    return ", ".join(dict.fromkeys(endings))


def _readme_evalai(no_public: str | None = None) -> str:
    """README.txt of the EvalAI zip; ``no_public``: why there is no public data (None: public_data/ holds it)."""
    from dialeval.leaderboard.own_wheel import wheel_name

    wheel = wheel_name()
    return (f"EvalAI challenge configuration written by dialeval {__version__}.\n\n"
            f"Scoring: when the worker lacks this build of dialeval {__version__}, the evaluation script installs the\n"
            f"wheel it carries ({wheel}, the exact dialeval that made this zip; dialeval is not on PyPI)\n"
            "with pip, which fetches its dependencies (numpy, scipy, pandas...) from PyPI.\n\n"
            f"Participants install that same wheel to check their runs, and EvalAI's challenge configuration has no\n"
            "entry that hands a file to participants, so publish it yourself before uploading this zip:\n"
            f"1. take it out of the evaluation script: unzip evaluation_script.zip {wheel}\n"
            "2. put it at a public URL: your challenge website, or a dialeval leaderboard site built by this same\n"
            "   dialeval (`dialeval leaderboard build`: its challenge page serves this wheel);\n"
            "3. link that URL in templates/submission_guidelines.html, whose \"How to submit\" names the file;\n"
            f"   participants download it and run: pip install ./{wheel}\n\n"
            + textwrap.fill(WHEEL_CONTENTS, 110) + "\n\n"
            + (f"{PUBLIC_DATA}/<phase codename>/ holds each phase's test files without the answers: publish them the\n"
               "same way (EvalAI has no entry for them either); participants give them to dialeval validate as DATA.\n"
               if no_public is None else
               textwrap.fill(f"No public data: because {no_public}, participants take the test inputs from the "
                             "release itself.", 110) + "\n")
            + "annotations/ holds what scoring each phase's splits reads (their test files and answer keys, never a\n"
            "train file): keep this zip private.\n")


def _first_paragraph(ch) -> str:
    from dialeval.leaderboard.challenge import paragraphs

    return (paragraphs(ch.overview) or [ch.title])[0]


def _utc_date(ts: str) -> str:
    """challenge.toml's RFC 3339 UTC time (``2017-09-01T00:00:00Z``) in the form both platforms document for
    their dates, ``YYYY-MM-DD HH:MM:SS`` in UTC."""
    return ts.replace("T", " ").replace("Z", "")


def evaluation_script(benchmark: str, phase_list: list[dict], data_file: str | None = None) -> dict[str, bytes]:
    """The files of EvalAI's evaluation script package: ``__init__.py`` (installs the wheel the caller adds beside
    it when the worker lacks this version) and ``main.py``. ``data_file``, and each phase's keys file (its
    ``keys``): see :func:`file_names`."""
    from dialeval.leaderboard.own_wheel import BUILD_FILE, build_id, wheel_name

    split_map = {p["codename"]: p["splits"] for p in phase_list}
    keys_map = {p["codename"]: p["keys"].name if p.get("keys") and p["keys"].is_file() else None for p in phase_list}
    init = (f'"""EvalAI evaluation script written by dialeval {__version__}: scores with that exact version."""\n'
            "import importlib.metadata\nimport subprocess\nimport sys\nfrom pathlib import Path\n\n"
            f'VERSION = "{__version__}"\n'
            f'WHEEL = Path(__file__).with_name("{wheel_name()}")  # the dialeval that wrote this script (not on PyPI)\n'
            f'BUILD = "{build_id()}"  # the wheel\'s {BUILD_FILE}: another build of VERSION is replaced\n'
            f"try:\n    INSTALLED = (importlib.metadata.distribution(\"dialeval\").read_text(\"{BUILD_FILE}\") or \"\").strip()\n"
            "except importlib.metadata.PackageNotFoundError:\n    INSTALLED = None\n"
            "if INSTALLED != BUILD:  # the worker installs the bundled scorer once: alone (replacing a same-version\n"
            "    # build, which pip would keep), then again for its dependencies (from PyPI)\n"
            "    PIP = [sys.executable, \"-m\", \"pip\", \"install\"]\n"
            "    subprocess.check_call(PIP + [\"--force-reinstall\", \"--no-deps\", str(WHEEL)])\n"
            "    subprocess.check_call(PIP + [str(WHEEL)])\n\n"
            "from .main import evaluate  # noqa: E402,F401\n")
    main = (f'"""evaluate() for EvalAI\'s worker: dialeval {__version__} on benchmark {benchmark}."""\n\n'
            f"BENCHMARK = {benchmark!r}\n"
            f"PHASE_SPLITS = {json.dumps(split_map, sort_keys=True)}\n"
            f"DATA_FILE = {data_file!r}  # the data file inside each annotation archive (None: the archive is the folder)\n"
            f"KEYS_FILES = {dict(sorted(keys_map.items()))!r}  # per phase, its answer keys file inside it\n"
            "# (None: the keys are in the data)\n\n\n"
            "def evaluate(test_annotation_file, user_submission_file, phase_codename, **kwargs):\n"
            "    from dialeval.leaderboard.hosting import evalai_evaluate\n\n"
            "    return evalai_evaluate(test_annotation_file, user_submission_file, phase_codename,\n"
            "                           benchmark=BENCHMARK, phases=PHASE_SPLITS, data_file=DATA_FILE,\n"
            "                           keys_file=KEYS_FILES.get(phase_codename))\n")
    return {"__init__.py": init.encode(), "main.py": main.encode()}


def write_bundle(entries: dict[str, bytes], out: str | Path) -> Path:
    """Write the bundle as one deterministic zip through the output-safety layer (never over an input)."""
    from dialeval.files.write import atomic_write_bytes

    atomic_write_bytes(out, zip_bytes(entries), parents=False)
    return Path(out)
