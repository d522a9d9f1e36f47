"""An organizer's and a researcher's hostile or careless commands (grade, registry, leaderboard, rank, compare,
simulate, convert, data): each as typed, the wrong outcome before, the right one now."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest
from conftest import REPO, run_cli

SAMPLE = REPO / "submissions" / "samples" / "dstc6"
RUN = SAMPLE / "example-run.json"


def _runs(tmp_path: Path, teams: dict[str, object]) -> Path:
    """A runs folder of single-file runs on the dstc6 sample: entry name -> team.json (a dict, or raw bytes)."""
    runs = tmp_path / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    for name, team in teams.items():
        shutil.copy(RUN, runs / f"{name}.json")
        raw = team if isinstance(team, bytes) else json.dumps(team).encode()
        (runs / f"{name}.team.json").write_bytes(raw)
    return runs


def _grade(tmp_path: Path, runs: Path, *more) -> tuple[int, dict, str]:
    r = run_cli("grade", runs, "--data", "sample:dstc6", "--registry", tmp_path / "reg", "--json", *more)
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr, r.stderr
    out = json.loads(r.stdout) if r.stdout.strip() else {"runs": []}
    return r.returncode, {o["entry"]: o for o in out["runs"]}, r.stderr


def test_team_text_that_looks_like_markup_is_printed_as_written(tmp_path):
    # before: team "A [/] B" stopped `grade` with "internal error: MarkupError" (exit 3) after recording the run, and
    # every rejected run's problem lost its code: "[bad-rank] ..." was read as a style and printed as " ..."
    runs = _runs(tmp_path, {"a": {"team": "A [/] B", "system": "[bold]x"}})
    bad = json.loads(RUN.read_text())
    bad[0]["lst_candidate_id"][0]["rank"] = 0
    (runs / "b.json").write_text(json.dumps(bad))
    (runs / "b.team.json").write_text(json.dumps({"team": "B"}))
    r = run_cli("grade", runs, "--data", "sample:dstc6", "--registry", tmp_path / "reg", env={"COLUMNS": "400"})
    assert r.returncode == 1, r.stderr
    assert "A [/] B" in r.stdout and "[bold]x" in r.stdout
    assert "[rank-out-of-range]" in r.stdout


def test_a_team_json_with_a_lone_surrogate_escape_is_refused_in_one_line(tmp_path):
    # before: {"team": "\ud800"} passed the schema, then SQLite could not store it: "internal error:
    # UnicodeEncodeError" (exit 3)
    runs = _runs(tmp_path, {"a": b'{"team": "x\\ud800"}', "b": {"team": "B"}})
    code, out, _ = _grade(tmp_path, runs)
    assert code == 1
    assert out["a.json"]["status"] == "skipped" and "unpaired surrogate (\\ud800)" in out["a.json"]["message"]
    assert out["b.json"]["status"] == "valid"


def test_every_problem_of_a_team_json_is_said_at_once(tmp_path):
    # before: only the first ("baseline" must be true or false); the team fixed it and met the next one
    runs = _runs(tmp_path, {"a": {"team": 5, "system": [1], "url": "javascript:alert(1)", "baseline": "yes",
                                  "submitted_at": "yesterday", "extra": 1}})
    _, out, _ = _grade(tmp_path, runs)
    message = out["a.json"]["message"]
    for said in ('"team" must be', '"system" must be', '"url" must be', '"baseline" must be',
                 '"submitted_at" must be', "unknown key 'extra'"):
        assert said in message, message
    assert "\n" not in message


def test_a_team_json_naming_a_key_twice_is_refused_not_read_as_the_last(tmp_path):
    # before: {"team": "A", "team": "B"} was graded as team B
    runs = _runs(tmp_path, {"a": b'{"team": "A", "team": "B"}'})
    _, out, _ = _grade(tmp_path, runs)
    assert out["a.json"]["status"] == "skipped" and '"team" is given twice' in out["a.json"]["message"]


def test_a_team_json_that_is_a_link_or_a_fifo_is_refused_like_the_submission(tmp_path):
    # before: team.json as a symbolic link was read through it (the submission beside it is refused as a link),
    # and a FIFO named like a submission was called "not a submission (a folder, .tgz ...)" or recorded as a
    # rejected run of the team
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps({"team": "Other team"}))
    runs = tmp_path / "runs"
    (runs / "linked").mkdir(parents=True)
    shutil.copy(RUN, runs / "linked" / "submission.json")
    (runs / "linked" / "team.json").symlink_to(elsewhere)
    (runs / "fifo").mkdir()
    (runs / "fifo" / "team.json").write_text(json.dumps({"team": "F"}))
    os.mkfifo(runs / "fifo" / "submission.json")
    os.mkfifo(runs / "top.json")
    _, out, _ = _grade(tmp_path, runs)
    assert out["linked"]["status"] == "skipped" and "symbolic link" in out["linked"]["message"]
    assert out["fifo"]["status"] == "skipped" and out["fifo"]["run_id"] is None
    assert "not a regular file (a FIFO)" in out["fifo"]["message"]
    assert "not a regular file (a FIFO)" in out["top.json"]["message"]


def test_team_names_differing_only_in_case_spacing_or_unicode_form_are_one_team(tmp_path):
    # before: "Café" (NFC), "Cafe\u0301" (NFD), "CAFÉ" and "Café " were four teams that read alike on the site, and
    # a team renaming itself so escaped its quota
    runs = _runs(tmp_path, {"a": {"team": "Café"}, "b": {"team": "Cafe\u0301"}, "c": {"team": "CAFÉ"},
                            "d": {"team": "Café "}, "e": {"team": "Cafe"}})
    code, out, _ = _grade(tmp_path, runs)
    assert code == 1
    assert [out[f"{k}.json"]["status"] for k in "abcde"] == ["valid", "skipped", "skipped", "skipped", "valid"]
    assert "entry a.json's team 'Café' spelt differently" in out["b.json"]["message"]
    # a later grade meets the registered spelling
    runs2 = _runs(tmp_path / "later", {"f": {"team": "café"}, "g": {"team": "Café"}})
    _, out, _ = _grade(tmp_path, runs2)
    assert out["f.json"]["status"] == "skipped" and "the registered team 'Café'" in out["f.json"]["message"]
    assert out["g.json"]["status"] == "unchanged"  # the registered spelling, the same bytes as a.json: run 1
    with sqlite3.connect(tmp_path / "reg" / "registry.sqlite") as db:
        assert sorted(n for (n,) in db.execute("SELECT name FROM teams")) == ["Cafe", "Café"]


def test_a_registry_locked_by_another_process_is_a_usage_error_not_an_internal_one(tmp_path, monkeypatch):
    # before: after the 30 s busy timeout, "internal error: OperationalError: database is locked" (exit 3)
    from dialeval.core.errors import UsageError
    from dialeval.leaderboard import registry
    from dialeval.leaderboard.grade import grade

    runs = _runs(tmp_path, {"a": {"team": "A"}})
    code, _, _ = _grade(tmp_path, _runs(tmp_path / "first", {"z": {"team": "Z"}}))
    assert code == 0
    monkeypatch.setattr(registry, "BUSY_SECONDS", 0.5)
    holder = sqlite3.connect(tmp_path / "reg" / "registry.sqlite", isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(UsageError, match=r"registry.sqlite: locked by another process for over 0.5 s"):
            grade(runs, "dstc6", SAMPLE, tmp_path / "reg", progress=False)
    finally:
        holder.execute("ROLLBACK")
        holder.close()


@pytest.mark.parametrize("args", [
    ["rank", "--registry", "{reg}", "--seed", "-5"],
    ["compare", "1", "1", "--registry", "{reg}", "--seed", "-5"],
    ["baseline", "run", "random", "--challenge", "sample:dstc6", "--split", "tst1", "--out", "{tmp}/r.json",
     "--seed", "-1"],
    ["airdialogue", "simulate", "--out", "{tmp}/air", "--n", "3", "--seed", "-1"],
])
def test_a_negative_seed_is_a_usage_error(tmp_path, args):
    # before: rank, baseline run and airdialogue simulate: "internal error: ValueError: expected non-negative
    # integer" (exit 3); compare: numpy's words, exit 2
    code, _, _ = _grade(tmp_path, _runs(tmp_path, {"a": {"team": "A"}}))
    assert code == 0
    r = run_cli(*[a.format(reg=tmp_path / "reg", tmp=tmp_path) for a in args])
    assert (r.returncode, r.stderr) == (2, "dialeval: error: --seed: must be at least 0, got " + args[-1] + "\n")


def test_exports_to_standard_output_hold_the_data_alone(tmp_path):
    # before: `registry export --out -` and `airdialogue baseline ... --out -` ended the JSONL on stdout with
    # "wrote - (N runs)"; `convert dstc6-to-babi --out -` also wrote a file named "--candidates.txt"
    _grade(tmp_path, _runs(tmp_path, {"a": {"team": "A"}}))
    r = run_cli("registry", "export", "--registry", tmp_path / "reg", "--out", "-")
    assert r.returncode == 0 and r.stderr == "wrote - (1 runs)\n"
    assert [json.loads(line)["team"] for line in r.stdout.splitlines()] == ["A"]
    air = tmp_path / "air"
    assert run_cli("airdialogue", "simulate", "--out", air, "--n", "3").returncode == 0
    r = run_cli("airdialogue", "baseline", "random", "--data", air, "--split", "dev", "--out", "-")
    assert r.returncode == 0 and r.stderr == "wrote -\n"
    assert [json.loads(line)["id"] for line in r.stdout.splitlines()] == [0, 1, 2]
    dataset = next(p for p in (SAMPLE / "tst1").glob("*.json") if not p.name.endswith(".answers.json"))
    answers = dataset.with_name(dataset.stem + ".answers.json")
    r = run_cli("convert", "dstc6-to-babi", "--dataset", dataset, "--answers", answers, "--out", "-", cwd=tmp_path)
    assert (r.returncode, r.stderr) == (2, "dialeval: error: --out -: give --candidates-out too (its default is "
                                           "named after --out)\n")
    r = run_cli("convert", "dstc6-to-babi", "--dataset", dataset, "--answers", answers, "--out", "-",
                "--candidates-out", "c.txt", cwd=tmp_path)
    assert r.returncode == 0 and not r.stdout.splitlines()[-1].startswith("wrote")
    assert r.stderr.startswith("wrote - (")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["air", "c.txt", "reg", "runs"]


@pytest.mark.parametrize("args", [
    ["leaderboard", "build", "--registry", "{reg}"],
    ["simulate", "--train", "1", "--test", "1"],
    ["airdialogue", "simulate", "--n", "3"],
    ["data", "sample", "babi"],
    ["convert", "babi-to-dstc6", "--data", "sample:babi", "--task", "5", "--split", "tst"],
    ["baseline", "run", "random", "--challenge", "sample:dstc6", "--split", "tst1"],
    ["reproduce", "babi", "--data", "sample:babi", "--models", "random", "--tasks", "1"],
])
def test_a_folder_output_given_as_standard_output_is_refused_not_made_a_folder_named_dash(tmp_path, args):
    # before: each wrote a folder named "-" and said "wrote -/..." (exit 0)
    (tmp_path / "reg").mkdir()
    r = run_cli(*[a.format(reg=tmp_path / "reg") for a in args], "--out", "-", cwd=tmp_path)
    assert (r.returncode, r.stderr) == (2, "dialeval: error: --out -: this output is a folder of files, which "
                                           "standard output cannot take; for a folder named '-', write ./-\n")
    assert not (tmp_path / "-").exists()


def test_the_site_is_never_built_inside_the_registrys_folder_or_a_runs_folder(tmp_path):
    # before: both were built (exit 0): the public site beside the contacts and gold ranks, and a "site" entry
    # that the next grade of the runs folder reported as a broken run
    runs = _runs(tmp_path, {"a": {"team": "A"}})
    _grade(tmp_path, runs)
    for out, said in ((tmp_path / "reg" / "site", "inside the registry's folder"),
                      (runs / "site", "inside a runs folder")):
        r = run_cli("leaderboard", "build", "--registry", tmp_path / "reg", "--out", out)
        assert r.returncode == 2 and said in r.stderr and len(r.stderr.splitlines()) == 1, r.stderr
        assert not out.exists()
    assert run_cli("leaderboard", "build", "--registry", tmp_path / "reg", "--out", tmp_path / "site").returncode == 0


def test_an_export_is_never_written_among_the_runs_or_inside_the_registrys_folder(tmp_path):
    # before: `registry export --out runs/archive.jsonl` wrote it (exit 0) and the next grade listed it as a broken
    # entry ("not a submission", exit 1); into a run's own folder it changed that run's files; into the registry's
    # folder it sat beside the database
    runs = _runs(tmp_path, {"a": {"team": "A"}, "b": {"team": "B"}})
    (runs / "c").mkdir()
    shutil.copy(RUN, runs / "c" / "submission.json")
    (runs / "c" / "team.json").write_text(json.dumps({"team": "C"}))
    assert _grade(tmp_path, runs)[0] == 0
    listed = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))
    for out, said in ((runs / "archive.jsonl", "inside a runs folder (runs holds team runs)"),
                      (runs / "c" / "records.csv", "inside a runs folder (runs holds team runs)"),
                      (tmp_path / "reg" / "archive.jsonl", "inside the registry's folder"),
                      (runs, "is a directory, not a file"), (tmp_path / "reg", "is a directory, not a file")):
        r = run_cli("registry", "export", "--registry", tmp_path / "reg", "--out", out)
        assert r.returncode == 2 and said in r.stderr and r.stderr.count("\n") == 1, r.stderr
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")) == listed  # nothing written
    r = run_cli("registry", "export", "--registry", tmp_path / "reg", "--out", tmp_path / "archive.jsonl")
    assert r.returncode == 0 and len((tmp_path / "archive.jsonl").read_text().splitlines()) == 3
    assert _grade(tmp_path, runs)[0] == 0  # the runs folder still grades clean


def _without_privilege(tmp_path: Path) -> list[str]:
    """The command prefix that runs dialeval the way file permissions apply to it: nothing for an ordinary user;
    as root (which reads and writes past any permission), root without its capabilities (``setpriv`` clearing
    the bounding set: the kernel then checks root's access like any owner's, and the interpreter under /root stays
    reachable). Skips, saying why, where that cannot be done."""
    import subprocess
    import sys

    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root and setpriv (util-linux) is missing: cannot run dialeval without root's "
                    "permission override")
    prefix = [setpriv, "--inh-caps=-all", "--bounding-set=-all"]
    probe = tmp_path / "read-only-probe"
    probe.write_text("")
    probe.chmod(0o444)
    r = subprocess.run([*prefix, sys.executable, "-c", f"open({str(probe)!r}, 'a')"], capture_output=True, text=True)
    if r.returncode == 0 or "PermissionError" not in r.stderr:
        pytest.skip(f"cannot drop root's permission override here (setpriv: {r.stderr.strip()[-120:] or 'no effect'})")
    return prefix


def test_a_read_only_registry_is_read_by_reading_commands_and_refused_in_one_line_by_writing_ones(tmp_path):
    # before: as a user who may not write it, rank, export, check and leaderboard build all failed with SQLite's
    # "unusable registry database (attempt to write a readonly database)", and grade or import said the same
    import subprocess
    import sys

    prefix = _without_privilege(tmp_path)
    runs = _runs(tmp_path, {"a": {"team": "A"}, "b": {"team": "B"}})
    assert _grade(tmp_path, runs)[0] == 0
    reg = tmp_path / "reg"
    db = reg / "registry.sqlite"

    def dialeval(*args):
        cmd = [*prefix, sys.executable, "-c", "from dialeval.cli import run; run()", *map(str, args)]
        env = dict(os.environ, DIALEVAL_NO_PROGRESS="1", PYTHONPATH=str(REPO))
        return subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)

    def one_line(r, code, said):
        assert (r.returncode, r.stderr.count("\n")) == (code, 1) and said in r.stderr, (r.returncode, r.stderr)
        assert "Traceback" not in r.stderr and "readonly database" not in r.stderr  # SQLite's words

    writing = (("grade", runs, "--data", "sample:dstc6", "--registry", reg),
               ("registry", "import", REPO / "submissions" / "reported" / "dstc6-2017.csv", "--registry", reg,
                "--board", "dstc6-2017"))
    try:
        for file_mode, folder_mode, why in ((0o444, 0o555, "no permission to write the file"),
                                            (0o644, 0o555, "no permission to write its folder")):
            db.chmod(file_mode)
            reg.chmod(folder_mode)
            before = db.read_bytes()
            r = dialeval("rank", "--registry", reg, "--json")
            assert r.returncode == 0 and {row["team"] for row in json.loads(r.stdout)["runs"]} == {"A", "B"}, r.stderr
            r = dialeval("registry", "export", "--registry", reg, "--out", tmp_path / "archive.jsonl")
            assert r.returncode == 0 and len((tmp_path / "archive.jsonl").read_text().splitlines()) == 2, r.stderr
            assert dialeval("registry", "check", "--registry", reg).returncode == 0
            r = dialeval("leaderboard", "build", "--registry", reg, "--out", tmp_path / "site")
            assert r.returncode == 0 and (tmp_path / "site" / "index.html").is_file(), r.stderr
            for args in writing:
                one_line(dialeval(*args), 2, f"registry.sqlite: read-only here ({why}")
            assert db.read_bytes() == before and sorted(p.name for p in reg.iterdir()) == ["registry.sqlite"]
        db.chmod(0o000)  # a registry this user may not even read
        for args in (("rank", "--registry", reg), ("registry", "export", "--registry", reg, "--out",
                                                    tmp_path / "again.jsonl"), writing[0]):
            one_line(dialeval(*args), 2, "registry.sqlite: permission denied")
        assert not (tmp_path / "again.jsonl").exists()
    finally:
        reg.chmod(0o755)
        db.chmod(0o600)


def test_ctrl_c_is_one_line_and_leaves_nothing_behind(tmp_path):
    # before: click printed an empty line, then "dialeval: aborted"
    import signal
    import subprocess
    import sys
    import time

    from conftest import cli_env

    env = {**cli_env(), "PYTHONPATH": str(REPO)}
    p = subprocess.Popen([sys.executable, "-c", "from dialeval.cli import run; run()", "simulate", "--out", "sim",
                          "--train", "20000", "--test", "2000"], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    time.sleep(3)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert (p.returncode, out, err) == (130, "", "dialeval: interrupted\n")
    assert list(tmp_path.iterdir()) == []


def test_reported_results_refuse_percentages_and_a_team_spelt_two_ways(tmp_path):
    # before: P@1 of 49.5 (a percentage) or -0.5 was imported as such, and "CAFÉ" beside "Café" was a second team;
    # a team already registered under another spelling stopped the import half-way, after earlier teams were written
    f = tmp_path / "reported.csv"
    f.write_text("team,split,task,source,p@1,mrr\nCafé,tst1,1,paper,49.5,0.5\nCAFÉ,tst1,2,paper,0.5,-0.1\n"
                 "Other,tst1,1,paper,0.4,0.5\n")
    r = run_cli("registry", "import", f, "--registry", tmp_path / "reg", "--board", "b")
    assert r.returncode == 1
    assert r.stderr.splitlines() == [
        f"{f}:2:5: column p@1: 49.5 is outside 0..1 (p@1 is a proportion; a percentage is divided by 100)",
        f"{f}:3: team 'CAFÉ' is 'Café' ({f}:2) spelt differently (case, spacing or Unicode form); spell it one way",
        f"{f}:3:6: column mrr: -0.1 is outside 0..1 (mrr is a proportion; a percentage is divided by 100)",
        f"dialeval: error: {f}: 3 problems, nothing imported"]
    f.write_text("team,split,task,source,p@1\nCafé,tst1,1,paper,0.5\n")
    assert run_cli("registry", "import", f, "--registry", tmp_path / "reg", "--board", "b").returncode == 0
    f.write_text("team,split,task,source,p@1\nAnother,tst1,1,paper,0.5\ncafe\u0301,tst1,1,paper,0.5\n")
    r = run_cli("registry", "import", f, "--registry", tmp_path / "reg", "--board", "b")
    assert r.returncode == 1 and "the registered team 'Café' spelt differently" in r.stderr, r.stderr
    with sqlite3.connect(tmp_path / "reg" / "registry.sqlite") as db:
        assert [n for (n,) in db.execute("SELECT name FROM teams")] == ["Café"]  # "Another" was not written


def test_data_verify_on_a_folder_without_regular_files_is_not_a_clean_pass(tmp_path):
    # before: an empty table, "0 matching, 0 modified, 0 unknown", exit 0 (a folder of links reads as verified)
    (tmp_path / "copy").mkdir()
    (tmp_path / "copy" / "dialog-babi-task1-API-calls-tst.txt").symlink_to(RUN)
    for folder in (tmp_path / "copy", tmp_path / "empty"):
        folder.mkdir(exist_ok=True)
        r = run_cli("data", "verify", folder)
        assert (r.returncode, r.stdout, r.stderr) == (2, "", f"dialeval: error: {folder}: holds no regular file to "
                                                             "check (links and special files are not followed)\n")


def test_rank_on_an_embedding_metric_says_what_to_run_not_a_python_call(tmp_path):
    # before: "metric embedding-average needs the response texts: compute them with
    # dialeval.metrics.embedding.score_pairs and store result.table_values() in the table"
    _grade(tmp_path, _runs(tmp_path, {"a": {"team": "A"}}))
    for given in ("embedding-average", "Vector-Extrema"):
        r = run_cli("rank", "--registry", tmp_path / "reg", "--metric", given)
        assert r.returncode == 2 and "score_pairs" not in r.stderr, r.stderr
        assert r.stderr == (f"dialeval: error: --metric {given}: the registry keeps no response texts, so runs are "
                            "not ranked on an embedding metric; compare two runs' files with `dialeval compare "
                            f"A.json B.json --metric {given}`\n")


def test_stats_on_a_split_folder_points_at_the_challenge_folder():
    # before: "submissions/samples/dstc6/tst1: no dialog-task*.json dataset files in its split folders" (it holds them)
    r = run_cli("stats", SAMPLE / "tst1")
    assert (r.returncode, r.stderr) == (2, f"dialeval: error: {SAMPLE / 'tst1'}: a split folder (it holds the dataset "
                                           "files); give the challenge folder above it (dstc6), whose split folders "
                                           "hold them\n")
    assert run_cli("stats", SAMPLE).returncode == 0


def test_the_registry_is_never_written_inside_the_runs_folder(tmp_path):
    # before: `grade runs --registry runs` wrote runs/registry.sqlite (exit 0); every later grade listed it as a
    # broken entry ("registry.sqlite: not a submission") and exited 1
    runs = _runs(tmp_path, {"a": {"team": "A"}})
    for reg in (runs, runs / "db"):
        r = run_cli("grade", runs, "--data", "sample:dstc6", "--registry", reg)
        assert (r.returncode, r.stderr) == (2, f"dialeval: error: --registry {reg}: inside the runs folder {runs}, "
                                               "where the next grade would take it for a team's run; keep the "
                                               "registry elsewhere\n")
    assert sorted(p.name for p in runs.iterdir()) == ["a.json", "a.team.json"]


def test_a_damaged_registry_row_is_found_by_check_and_one_line_elsewhere(tmp_path):
    # before: a runs row whose splits are not JSON, or a record whose value is text, made `registry check` itself,
    # rank, compare, export and leaderboard build stop with "internal error: JSONDecodeError" / "ValueError:
    # Unknown format code 'f'" (exit 3); a damaged per-item blob was said with zlib's words
    _grade(tmp_path, _runs(tmp_path, {"a": {"team": "A"}, "b": {"team": "B", "system": "other"}}))
    reg = tmp_path / "reg"
    with sqlite3.connect(reg / "registry.sqlite") as db:
        db.execute("UPDATE runs SET splits = 'not json' WHERE run_id = 1")
        db.execute("UPDATE records SET value = 'abc' WHERE run_id = 2")
        db.execute("UPDATE run_items SET blob = x'00112233' WHERE run_id = 2")
    r = run_cli("registry", "check", "--registry", reg)
    assert r.returncode == 1, r.stderr
    assert r.stdout.splitlines() == [f"{reg / 'registry.sqlite'}: run 2: a score record's value or count is not a number",
                                     f"{reg / 'registry.sqlite'}: run 1: its splits are damaged (not a JSON list of names)",
                                     f"{reg / 'registry.sqlite'}: run 2: per-item data does not match its digest"]
    for args in (["rank"], ["registry", "export", "--out", tmp_path / "x.jsonl"],
                 ["leaderboard", "build", "--out", tmp_path / "site"], ["compare", "2", "1"]):
        r = run_cli(*args, "--registry", reg)
        assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, (args, r.stderr)
        assert "damaged" in r.stderr and "run `dialeval registry check`" in r.stderr, r.stderr
    with sqlite3.connect(reg / "registry.sqlite") as db:
        db.execute("UPDATE runs SET splits = '[\"tst1\"]' WHERE run_id = 1")
        db.execute("UPDATE records SET value = 0.5 WHERE run_id = 2")
    r = run_cli("compare", "2", "1", "--registry", reg)
    assert r.stderr == f"dialeval: error: {reg / 'registry.sqlite'}: per-item data of run 2 is damaged; run " \
                       "`dialeval registry check`\n"


def test_deeply_nested_organizer_files_are_refused_in_one_line(tmp_path):
    # before: "internal error: nested too deeply" (exit 3) for a challenge.toml or a reported-results JSON nested
    # thousands deep, and for such a team.json (which now skips its entry)
    toml = tmp_path / "challenge.toml"
    toml.write_text("a = " + "[" * 5000 + "]" * 5000 + "\n")
    reported = tmp_path / "reported.json"
    reported.write_text("[" * 30000 + "]" * 30000)
    runs = _runs(tmp_path, {"a": b'{"team": ' + b"[" * 30000 + b"]" * 30000 + b"}"})
    r = run_cli("grade", runs, "--data", "sample:dstc6", "--registry", tmp_path / "reg", "--challenge-file", toml)
    assert (r.returncode, r.stderr) == (2, f"dialeval: error: {toml}: nested too deeply (a challenge.toml is tables "
                                           "of plain values)\n")
    r = run_cli("registry", "import", reported, "--registry", tmp_path / "reg", "--board", "b")
    assert (r.returncode, r.stderr) == (2, f"dialeval: error: {reported}: nested too deeply (expected a JSON list of "
                                           "flat objects)\n")
    _, out, _ = _grade(tmp_path, runs)
    assert out["a.json"]["message"] == f"{runs / 'a.team.json'}: nested too deeply (a team.json is one flat object)"


def test_two_boards_whose_names_make_the_same_file_name_keep_their_own_pages(tmp_path):
    # before: boards "a/b" and "a-b" were both written to board-a-b.html (and .csv, .json): the second replaced the
    # first, and the index linked both names to the one page
    _grade(tmp_path, _runs(tmp_path / "one", {"a": {"team": "First"}}), "--board", "a/b")
    _grade(tmp_path, _runs(tmp_path / "two", {"a": {"team": "Second"}}), "--board", "a-b")
    site = tmp_path / "site"
    assert run_cli("leaderboard", "build", "--registry", tmp_path / "reg", "--out", site).returncode == 0
    pages = sorted(p.name for p in site.glob("board-*.json"))
    assert len(pages) == 2 and "board-a-b.json" in pages, pages
    teams = {json.loads((site / p).read_text())["board"]: (site / p).read_text() for p in pages}
    assert "First" in teams["a/b"] and "Second" not in teams["a/b"]
    assert "Second" in teams["a-b"] and "First" not in teams["a-b"]


def test_a_date_time_out_of_range_in_utc_is_refused_in_one_line(tmp_path):
    # before: "internal error: OverflowError: date value out of range" (exit 3) for --now, a team.json's
    # submitted_at or a challenge.toml date whose offset takes it before year 1 in UTC
    early = "0001-01-01T00:00:00+14:00"
    runs = _runs(tmp_path, {"a": {"team": "A", "submitted_at": early}})
    _, out, _ = _grade(tmp_path, runs)
    assert out["a.json"]["message"].endswith('team.json: "submitted_at" must be an RFC 3339 date-time such as '
                                             "2017-09-15T12:00:00Z")
    r = run_cli("grade", runs, "--data", "sample:dstc6", "--registry", tmp_path / "reg", "--now", early)
    assert (r.returncode, r.stderr) == (2, f"dialeval: error: --now: '{early}' is out of range in UTC (years 1 to "
                                           "9999)\n")
    toml = tmp_path / "challenge.toml"
    toml.write_text(f'title = "t"\noverview = "o"\n[[phases]]\nname = "a"\nstart = {early}\nend = 2020-01-01\n')
    r = run_cli("grade", runs, "--data", "sample:dstc6", "--registry", tmp_path / "reg", "--challenge-file", toml)
    assert (r.returncode, r.stderr) == (2, f"dialeval: error: {toml}: a date-time is out of range in UTC (years 1 "
                                           "to 9999)\n")


def test_a_board_holds_one_benchmark(tmp_path):
    # before: a douban run graded (or a douban paper's numbers imported) into a board of dstc6 runs was ranked
    # beside them on "p@1" ("covers 9 of 19 items: not banded"), exit 0
    _grade(tmp_path, _runs(tmp_path, {"a": {"team": "A"}}), "--board", "b")
    douban = tmp_path / "douban"
    douban.mkdir()
    shutil.copy(REPO / "submissions" / "samples" / "douban" / "example-scores.txt", douban / "d.txt")
    (douban / "d.team.json").write_text('{"team": "D"}')
    said = "dialeval: error: board 'b' holds dstc6 runs, and these are douban: one board ranks one benchmark; give " \
           "another --board\n"
    r = run_cli("grade", douban, "--benchmark", "douban", "--data", "sample:douban", "--registry", tmp_path / "reg",
                "--board", "b")
    assert (r.returncode, r.stderr) == (2, said)
    reported = tmp_path / "reported.csv"
    reported.write_text("team,split,task,source,r10@1\nX,test,all,paper,0.5\n")
    r = run_cli("registry", "import", reported, "--benchmark", "douban", "--registry", tmp_path / "reg", "--board", "b")
    assert (r.returncode, r.stderr) == (2, said)
    with sqlite3.connect(tmp_path / "reg" / "registry.sqlite") as db:
        assert db.execute("SELECT DISTINCT benchmark FROM runs").fetchall() == [("dstc6",)]
    r = run_cli("grade", douban, "--benchmark", "douban", "--data", "sample:douban", "--registry", tmp_path / "reg",
                "--board", "c")
    assert r.returncode == 0, r.stderr


def test_reported_team_names_follow_team_jsons_rules(tmp_path):
    # before: a reported team named with an escape sequence, a newline or 5,000 letters was imported as such (a
    # team.json with it is refused), and a --team-prefix holding control characters was put before every team
    import csv

    f = tmp_path / "reported.csv"
    with f.open("w", newline="") as out:
        w = csv.writer(out)
        w.writerow(["team", "split", "task", "source", "p@1"])
        w.writerows([["evil\x1b[31m", "tst1", "1", "paper", "0.5"], ["L" * 500, "tst1", "1", "paper", "0.5"]])
    r = run_cli("registry", "import", f, "--registry", tmp_path / "reg", "--board", "b")
    assert r.returncode == 1
    assert r.stderr.splitlines() == [f"{f}:2: team must be a name without control characters (at most 120)",
                                     f"{f}:3: team must be a name without control characters (at most 120)",
                                     f"dialeval: error: {f}: 2 problems, nothing imported"]
    r = run_cli("registry", "import", REPO / "submissions" / "reported" / "dstc6-2017.csv", "--registry",
                tmp_path / "reg", "--board", "b", "--team-prefix", "\x1b]0;x\x07")
    assert (r.returncode, r.stderr) == (2, 'dialeval: error: --team-prefix "\\x1b]0;x\\x07" holds control or '
                                           "invisible characters; give plain text\n")
    assert not (tmp_path / "reg").exists()


def test_comparing_runs_of_two_benchmarks_says_so(tmp_path):
    # before: "the two runs share no scored item", which hid why
    _grade(tmp_path, _runs(tmp_path, {"a": {"team": "A"}}), "--board", "b")
    douban = tmp_path / "douban"
    douban.mkdir()
    shutil.copy(REPO / "submissions" / "samples" / "douban" / "example-scores.txt", douban / "d.txt")
    (douban / "d.team.json").write_text('{"team": "D"}')
    assert run_cli("grade", douban, "--benchmark", "douban", "--data", "sample:douban", "--registry", tmp_path / "reg",
                   "--board", "c").returncode == 0
    r = run_cli("compare", "1", "2", "--registry", tmp_path / "reg")
    assert (r.returncode, r.stderr) == (2, "dialeval: error: run 1 (A / primary) is a dstc6 run and run 2 (D / "
                                           "primary) a douban run: compare runs of one benchmark\n")


def test_simulate_names_a_wrong_task_as_given_not_as_a_python_list(tmp_path):
    # before: "tasks must be among 1-5, got [1, 7]"
    r = run_cli("simulate", "--out", tmp_path / "sim", "--tasks", "7,1", "--train", "1", "--test", "1")
    assert (r.returncode, r.stderr) == (2, "dialeval: error: --tasks: must be among 1-5, got 1,7\n")
    assert not (tmp_path / "sim").exists()


def test_names_that_are_not_utf8_never_stop_the_grader(tmp_path):
    # before: an entry named b"bad\xffname", or a file named b"x\xff.json" inside a team's folder, stopped grade with
    # "internal error: UnicodeEncodeError ... surrogates not allowed" (exit 3), runs recorded before it kept
    runs = tmp_path / "runs"
    bad_entry = os.fsdecode(b"bad\xffname")
    for name in (bad_entry, "team"):
        (runs / name / "tst1").mkdir(parents=True)
        (runs / name / "team.json").write_text(json.dumps({"team": f"T {len(name)}"}))
        for key in (SAMPLE / "tst1").glob("*.answers.json"):
            shutil.copy(key, runs / name / "tst1" / key.name)
    (runs / "team" / "tst1" / os.fsdecode(b"x\xff.json")).write_text("[]")
    code, out, _ = _grade(tmp_path, runs)
    assert code == 1
    assert out[bad_entry]["status"] == "skipped"
    assert out[bad_entry]["message"] == f"{runs / bad_entry}: its name is not UTF-8 text; rename it"
    assert out["team"]["status"] == "rejected" and os.fsdecode(b"tst1/x\xff.json") in out["team"]["message"]
    r = run_cli("registry", "export", "--registry", tmp_path / "reg", "--out", "-")
    assert r.returncode == 0 and "x\\\\udcff.json" in r.stdout


def _interrupt_on_call(monkeypatch, module, name: str, at: int) -> None:
    """Make ``module.name`` raise KeyboardInterrupt (Ctrl-C) on its ``at``-th call."""
    real = getattr(module, name)
    calls = []

    def wrapped(*args, **kwargs):
        calls.append(1)
        if len(calls) == at:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, wrapped)


def reached_the_baseline(result) -> bool:
    return "1. challenge:" in result.output  # the demo got as far as the baseline runs


def test_an_interrupted_baseline_run_or_demo_leaves_no_partial_submission(tmp_path, monkeypatch):
    # before: Ctrl-C while the baseline ranked task 3 left out/tst1 with tasks 1-2's files, and an interrupted
    # `dialeval demo` left dialeval-demo/submission with the splits done so far: a submission that looks whole
    from click.testing import CliRunner

    from dialeval.baselines import data as baseline_data
    from dialeval.baselines import run as baseline_run
    from dialeval.baselines.run import run_baseline
    from dialeval.commands.demo import demo_cmd

    _interrupt_on_call(monkeypatch, baseline_data, "top_k_ids", 2)
    with pytest.raises(KeyboardInterrupt):
        run_baseline("random", SAMPLE, "tst1", tmp_path / "out")
    assert not (tmp_path / "out").exists()
    monkeypatch.undo()
    _interrupt_on_call(monkeypatch, baseline_run, "run_baseline", 2)
    result = CliRunner().invoke(demo_cmd, ["--out", str(tmp_path / "demo"), "--no-organizer"])
    assert result.exit_code != 0 and reached_the_baseline(result)  # click turns Ctrl-C into an abort
    assert not (tmp_path / "demo").exists()


def test_a_registry_in_a_folder_named_with_uri_characters_is_read_read_only(tmp_path):
    # a read-only registry is opened by an SQLite URI (file:PATH?mode=ro): an unescaped '?', '#' or '%' in PATH
    # would be read as the URI's parameters, its fragment or an escape (another file, or "unable to open"); a
    # folder name that is not UTF-8 (bytes a Linux file name may hold) could not be escaped as text at all
    # (UnicodeEncodeError: exit 3), and a path given as //folder named a URI authority ("invalid uri authority")
    from dialeval.leaderboard.registry import Registry

    runs = _runs(tmp_path, {"a": {"team": "A"}, "b": {"team": "B"}})
    for name in ("reg?mode=rw#top 100%25", os.fsdecode(b"reg-\xff-latin1"), "reg%2F..%2Fother"):
        reg = tmp_path / name
        r = run_cli("grade", runs, "--data", "sample:dstc6", "--registry", reg)
        assert r.returncode == 0, r.stderr
        before = (reg / "registry.sqlite").read_bytes()
        for given in (reg, f"/{reg}", os.path.relpath(reg)):
            with Registry(given, create=False, readonly=True) as db:
                assert db.readonly and sorted((row.team, row.status) for row in db.runs()) == [("A", "valid"),
                                                                                              ("B", "valid")]
                assert db.meta()["schema_version"]
        assert (reg / "registry.sqlite").read_bytes() == before


# ==== the second organiser sweep: the commands of the README's organiser sections as written, then careless ====
# variants (misnamed split folders, a challenge.toml given to the wrong option, data that are not there, a
# scoring program run with Codabench's folder layout); the embedded default challenge that `dialeval demo` grades
DEMO_TOML = REPO / "leaderboard" / "default-challenge.toml"
STEM = "dialog-task1API-kb1_atmosphere-distr0.5-tst200"


@pytest.fixture(scope="module")
def default_data() -> Path:
    from dialeval.simulator.default import ensure_default_challenge

    return ensure_default_challenge()


def _team(folder: Path, team: str, system: str = "s") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "team.json").write_text(json.dumps({"team": team, "system": system}))
    return folder


def _split_run(default_data: Path, dest: Path, split: str = "tst1") -> Path:
    """A perfect run of a split of the embedded default (its answer keys are result files in the official layout)."""
    dest.mkdir(parents=True)
    for key in sorted((default_data / split).glob("*.answers.json")):
        shutil.copy(key, dest / key.name)
    return dest


# ---- the shipped demo challenge ---------------------------------------------------------------------------
def test_the_demo_challenge_names_the_seed_its_data_are_simulated_with(default_data):
    # before: its overview (the site's challenge page) said "seed 1", while the board beside it (and simulator.json)
    # said seed 2017
    from dialeval.leaderboard.challenge import load

    seed = json.loads((default_data.parent / default_data.name / "simulator.json").read_text())["seed"]
    overview = load(DEMO_TOML).overview
    assert f"simulator (seed {seed})" in " ".join(overview.split())


# ---- challenge.toml phases ------------------------------------------------------------------------------------
def _phases_toml(tmp_path: Path, first_end: str, second_start: str) -> Path:
    text = DEMO_TOML.read_text()
    text = text[:text.index("[[phases]]")] + (
        f'[[phases]]\nname = "dev"\nstart = 2017-09-01T00:00:00Z\nend = {first_end}\nsplits = ["tst1"]\n\n'
        f'[[phases]]\nname = "final"\nstart = {second_start}\nend = 2017-09-15T00:00:00Z\nsplits = ["tst2"]\n')
    path = tmp_path / "challenge.toml"
    path.write_text(text)
    return path


def test_a_phase_starting_at_the_previous_phases_end_says_the_end_is_inclusive_and_what_to_write(tmp_path):
    # before: "/phases/1: starts (2017-09-10T00:00:00Z) before phase 'dev' ends (2017-09-10T00:00:00Z)": the two
    # times printed equal, the natural hand-over refused with no word on why
    runs = _team(tmp_path / "runs" / "a", "A").parent
    toml = _phases_toml(tmp_path, "2017-09-10T00:00:00Z", "2017-09-10T00:00:00Z")
    r = run_cli("grade", runs, "--registry", tmp_path / "reg", "--challenge-file", toml)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip().splitlines()[-1] == (
        f"dialeval: error: {toml}: /phases/1: starts when phase 'dev' ends (2017-09-10T00:00:00Z), and a phase's end "
        "is its last moment (a run graded then would be in both); start it at 2017-09-10T00:00:01Z")
    assert not (tmp_path / "reg").exists()
    # what it says to write is accepted
    ok = _phases_toml(tmp_path, "2017-09-10T00:00:00Z", "2017-09-10T00:00:01Z")
    from dialeval.leaderboard.challenge import load

    assert [p.name for p in load(ok).phases] == ["dev", "final"]


# ---- grade -----------------------------------------------------------------------------------------------------
def test_grade_given_the_challenge_toml_as_challenge_points_at_challenge_file(tmp_path):
    # before: "--challenge challenge.toml: is a file, not a folder", with no word that the file has its own option
    runs = _team(tmp_path / "runs" / "a", "A").parent
    r = run_cli("grade", runs, "--registry", tmp_path / "reg", "--challenge", DEMO_TOML)
    assert r.returncode == 2
    assert r.stderr.strip() == (f"dialeval: error: --challenge {DEMO_TOML}: is a file, not a folder (a challenge.toml "
                                "is given with --challenge-file; --challenge names the data folder)")


def test_a_run_whose_split_folder_is_misnamed_is_rejected_for_its_folders_not_for_the_training_splits_key(
        tmp_path, default_data):
    # before: a run holding tst9/ (or trn/) was scored on every folder of the data, the training dialogs' trn/
    # included, and recorded as "[unreadable-submission] answer key /root/.cache/dialeval/.../trn/...answers.json
    # not found": the organiser's cache path, and a split no run can be scored on; `validate` listed trn too
    runs = tmp_path / "runs"
    _split_run(default_data, _team(runs / "t9", "T9") / "submission" / "tst9")
    r = run_cli("grade", runs, "--registry", tmp_path / "reg", "--board", "b", "--json")
    assert r.returncode == 1, r.stderr
    (entry,) = json.loads(r.stdout)["runs"]
    assert entry["status"] == "rejected"
    assert entry["message"].startswith("[no-result-file] the folder has tst9/ not tst1/ (expected tst1/")
    assert "trn" not in entry["message"] and str(default_data) not in entry["message"]
    v = run_cli("validate", runs / "t9" / "submission")
    assert v.returncode == 1
    assert "split tst1, tst2, tst3, tst4;" in v.stdout and "trn" not in v.stdout
    s = run_cli("score", runs / "t9" / "submission", "--split", "trn")
    assert s.returncode == 2
    assert s.stderr.strip().endswith("--split: 'trn' is not a split of the challenge (it has: tst1, tst2, tst3, tst4)")


# ---- bundles ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["codabench", "evalai"])
def test_a_bundle_of_data_that_is_not_there_says_so(tmp_path, kind):
    # before: "../nope: no reference data for phase 'test' (splits )", for a mistyped path and an empty folder
    r = run_cli("bundle", kind, "--out", tmp_path / "b.zip", "--data", tmp_path / "nope")
    assert r.returncode == 2
    assert r.stderr.strip() == f"dialeval: error: {tmp_path / 'nope'}: no such data file or folder"
    (tmp_path / "empty").mkdir()
    r = run_cli("bundle", kind, "--out", tmp_path / "b.zip", "--data", tmp_path / "empty")
    assert r.returncode == 2
    assert r.stderr.strip() == (f"dialeval: error: {tmp_path / 'empty'}: holds no dstc6 test data (no split found); "
                                "is it the benchmark's data?")
    assert not (tmp_path / "b.zip").exists()


def test_a_bundle_given_a_run_file_as_its_data_is_refused(tmp_path, default_data):
    # before: `bundle evalai --data <a result file>` wrote a challenge with no dataset split (dataset_splits: [])
    # and the file as the phase's annotations, exit 0
    run = default_data / "tst1" / f"{STEM}.answers.json"
    for kind in ("codabench", "evalai"):
        r = run_cli("bundle", kind, "--out", tmp_path / f"{kind}.zip", "--data", run)
        assert r.returncode == 2, r.stdout
        assert "holds no dstc6 test data (no split found)" in r.stderr
        assert not (tmp_path / f"{kind}.zip").exists()


def test_a_bundle_of_the_dstc6_sample_holds_no_training_split(tmp_path):
    # before: `bundle codabench --data sample:dstc6` made the training dialogs (trn/) a split of the phase: in
    # its reference data and its public data, though no run can be scored there (no answer key)
    import zipfile

    r = run_cli("bundle", "codabench", "--out", tmp_path / "c.zip", "--data", "sample:dstc6")
    assert r.returncode == 0, r.stderr
    names = zipfile.ZipFile(tmp_path / "c.zip").namelist()
    assert any(n.startswith("reference_data_0/tst1/") for n in names)
    assert not [n for n in names if "/trn/" in n]


def test_codabench_scoring_refuses_a_run_of_some_of_the_phases_splits(tmp_path, default_data):
    # before: the scoring program, run as Codabench runs it (the participant's zip unpacked in input/res, the phase's
    # reference data in input/ref), scored a tst1-only run on tst1 alone: p@1 1.0 on the one leaderboard, above
    # runs scored on all four splits (`rank` leaves such a run unbanded)
    import zipfile

    r = run_cli("bundle", "codabench", "--out", tmp_path / "competition.zip")
    assert r.returncode == 0, r.stderr
    with zipfile.ZipFile(tmp_path / "competition.zip") as z:
        assert "/app/input/res /app/input/ref /app/output" in z.read("scoring_program_0/metadata.yaml").decode()
        for name in z.namelist():
            if name.startswith("reference_data_0/"):
                z.extract(name, tmp_path)
    app = tmp_path / "app"
    (app / "input").mkdir(parents=True)
    (tmp_path / "reference_data_0").rename(app / "input" / "ref")

    def codabench(*splits) -> tuple:
        res, out = app / "input" / "res", app / "output"
        shutil.rmtree(res, ignore_errors=True)
        shutil.rmtree(out, ignore_errors=True)
        for split in splits:
            _split_run(default_data, res / split, split)
        run = run_cli("bundle", "codabench-score", res, app / "input" / "ref", out, "--benchmark", "dstc6")
        return run, sorted(p.name for p in out.iterdir()) if out.is_dir() else []

    run, written = codabench("tst1")
    assert run.returncode == 1 and written == []
    assert run.stderr.strip() == ("dialeval: error: invalid submission, not scored: it answers tst1 but not tst2, "
                                  "tst3, tst4; this phase is scored on tst1, tst2, tst3, tst4 together (one "
                                  "leaderboard number), so send result files for every one of them")
    run, written = codabench("tst1", "tst2", "tst3", "tst4")
    assert run.returncode == 0, run.stderr
    assert written == ["detailed_results.html", "scores.json"]
    assert json.loads((app / "output" / "scores.json").read_text())["p@1"] == 1.0


# ---- reported results ------------------------------------------------------------------------------------------
def test_reported_results_refuse_a_split_or_task_the_benchmark_does_not_have(tmp_path):
    # before: rows on split "tst9" or "TST1" and task 9 were imported (exit 0) as numbers no ranking ever shows:
    # `rank` said "0 of 2 report p@1 on all"
    csv = tmp_path / "reported.csv"
    csv.write_text("team,split,task,source,p@1\nB,tst9,1,paper,0.5\nC,TST1,9,paper,0.5\nD,all,all,paper,0.4\n")
    r = run_cli("registry", "import", csv, "--registry", tmp_path / "reg", "--board", "paper")
    assert r.returncode == 1
    assert r.stderr.splitlines() == [
        f"{csv}:2:2: column split: 'tst9' is not a split of dstc6 (one of: tst1, tst2, tst3, tst4)",
        f"{csv}:3:2: column split: 'TST1' is not a split of dstc6 (one of: tst1, tst2, tst3, tst4) (did you mean "
        "'tst1'?)",
        f"{csv}:3:3: column task: '9' is not a task of dstc6 (one of: 1, 2, 3, 4, 5)",
        f"dialeval: error: {csv}: 3 problems, nothing imported"]
    assert not (tmp_path / "reg" / "registry.sqlite").exists()
    ok = run_cli("registry", "import", REPO / "submissions" / "reported" / "dstc6-2017.csv", "--registry",
                 tmp_path / "reg", "--board", "dstc6-2017")
    assert ok.returncode == 0 and "imported 10 reported run(s)" in ok.stdout, ok.stderr


def test_grade_given_the_folder_above_the_runs_points_at_the_runs_folder(tmp_path):
    # before: `grade dialeval-demo/organizer` (the folder holding challenge.toml, registry/, runs/, site/) skipped
    # its runs/ with "runs/team.json: missing (every run needs a team.json)", as if runs/ were one team's run
    runs = _runs(tmp_path / "organizer", {"a": {"team": "A"}})
    r = run_cli("grade", tmp_path / "organizer", "--data", "sample:dstc6", "--registry", tmp_path / "reg", "--json")
    assert r.returncode == 1, r.stderr
    (entry,) = json.loads(r.stdout)["runs"]
    assert entry["status"] == "skipped"
    assert entry["message"] == (f"{runs}: a folder of team runs, not a run (its entries have team.json files); "
                                f"grade {runs} itself")
    # a run folder is still a run, and a folder without any team.json keeps its own message
    assert _grade(tmp_path, runs)[1]["a.json"]["status"] == "valid"
    (tmp_path / "other" / "x").mkdir(parents=True)
    (tmp_path / "other" / "x" / "submission.json").write_text("[]")
    assert _grade(tmp_path, tmp_path / "other")[1]["x"]["message"].endswith("x/team.json: missing (every run needs a "
                                                                           "team.json)")


def test_compare_on_a_split_the_runs_do_not_cover_says_which_splits_they_do(tmp_path):
    # before: `compare 1 2 --split tst9` said "no scored items in scope tst9", where rank and grade name the
    # splits there are
    runs = _runs(tmp_path, {"a": {"team": "A"}, "b": {"team": "B"}})
    assert _grade(tmp_path, runs)[0] == 0
    r = run_cli("compare", "1", "2", "--registry", tmp_path / "reg", "--split", "tst9")
    assert r.returncode == 2
    assert r.stderr.strip() == "dialeval: error: --split: 'tst9' is not a split both runs cover (A: tst1; B: tst1)"
    assert run_cli("compare", "1", "2", "--registry", tmp_path / "reg", "--split", "tst1").returncode == 0


def test_the_codabench_scoring_program_never_writes_into_the_submission_or_the_reference_data(tmp_path):
    # before: `bundle codabench-score RES REF REF/out` (or OUT = REF, OUT = RES) wrote scores.json and
    # detailed_results.html among the answer keys or the run, exit 0: an output written onto an input
    res, ref = tmp_path / "input" / "res", tmp_path / "input" / "ref"
    res.mkdir(parents=True)
    shutil.copy(RUN, res / RUN.name)
    shutil.copytree(SAMPLE / "tst1", ref / "tst1")
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    for out, what, where in ((ref / "out", "the reference data", ref), (ref, "the reference data", ref),
                             (res, "the submission", res)):
        r = run_cli("bundle", "codabench-score", res, ref, out)
        assert r.returncode == 2, r.stdout
        assert r.stderr.strip() == f"dialeval: error: {out}: inside {what} ({where}); write the scores elsewhere"
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before
    r = run_cli("bundle", "codabench-score", res, ref, tmp_path / "output")
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (tmp_path / "output").iterdir()) == ["detailed_results.html", "scores.json"]
