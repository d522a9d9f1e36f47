"""The README's main job: `dialeval demo` on the embedded default challenge, and scoring without --challenge."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from dialeval.cli import main


@pytest.fixture()
def isolated_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DIALEVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("DIALEVAL_CHALLENGE", raising=False)
    return tmp_path


def test_demo_runs_whole_chain(isolated_cache):
    out = isolated_cache / "demo"
    res = CliRunner().invoke(main, ["demo", "--out", str(out)], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    report = json.loads((out / "report.json").read_text())
    assert report["valid"] is True
    assert report["splits"] == ["tst1", "tst2", "tst3", "tst4"]
    # The rule-based baseline solves simulated data: any miss is a simulator or baseline bug.
    overall = [r for r in report["results"] if r["split"] == "all" and r["metric"] == "p@1"]
    assert {r["average"] for r in overall} == {"micro", "macro"}
    assert all(r["value"] == 1.0 for r in overall)
    for split in ("tst1", "tst4"):
        assert len(list((out / "submission" / split).glob("*.answers.json"))) == 5
    assert "report.json" in res.output and "submission" in res.output
    # the organizer half publishes the shipped challenge.toml as the board's challenge page
    page = (out / "organizer" / "site" / "challenge-demo.html").read_text()
    assert "challenge-demo.html" in res.output and "How to submit" in page and "organizer@example.org" not in page


def test_score_defaults_to_embedded_challenge(isolated_cache):
    from dialeval.simulator.default import ensure_default_challenge

    challenge = ensure_default_challenge()
    key = next((challenge / "tst4").glob("*task3*.answers.json"))
    res = CliRunner().invoke(main, ["score", str(key), "--split", "tst4", "--json"], catch_exceptions=False)
    # The key ranks only task 3's items: 4 other files' items are missing (warnings), task 3 is perfect.
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert "embedded default" in res.stderr  # said, not silent
    assert report["data"]["embedded_default"] is True
    p1 = {r["group"]: r["value"] for r in report["results"] if r["metric"] == "p@1" and r["average"] is None}
    assert p1["3"] == 1.0 and p1["1"] == 0.0
    assert report["counts"]["warnings"] >= 4 * 200


def test_unwritable_cache_is_a_one_line_error(tmp_path):
    import os
    import subprocess
    import sys

    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    env = {**os.environ, "DIALEVAL_CACHE_DIR": str(blocker / "cache")}
    env.pop("DIALEVAL_CHALLENGE", None)
    proc = subprocess.run([sys.executable, "-c", "from dialeval.cli import run; run()", "score", str(blocker),
                           "--split", "tst4"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "DIALEVAL_CACHE_DIR" in proc.stderr


def test_demo_refuses_a_site_folder_it_cannot_replace_before_writing_anything(tmp_path):
    import os
    import subprocess
    import sys

    out = tmp_path / "demo"
    site = out / "organizer" / "site"
    site.mkdir(parents=True)
    (site / "notes.txt").write_text("the organizer's own file")
    env = {**os.environ, "DIALEVAL_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.run([sys.executable, "-m", "dialeval", "demo", "--out", str(out)], capture_output=True,
                          text=True, env=env, cwd=tmp_path)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "organizer/site" in proc.stderr and "Traceback" not in proc.stderr
    assert sorted(p.name for p in out.rglob("*")) == ["notes.txt", "organizer", "site"]  # nothing else written
    from dialeval.core.errors import UsageError
    from dialeval.leaderboard.demo import organizer_demo

    with pytest.raises(UsageError):
        organizer_demo(tmp_path / "no-challenge-needed", out / "organizer")
    assert not (out / "organizer" / "runs").exists() and not (out / "organizer" / "registry").exists()


def test_an_unknown_baseline_is_said_before_any_step(tmp_path):
    # before: "1. challenge: ..." was printed (and the default challenge generated) above the usage error
    import os
    import subprocess
    import sys

    env = {**os.environ, "DIALEVAL_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.run([sys.executable, "-m", "dialeval", "demo", "--out", str(tmp_path / "d"), "--baseline",
                           "nope"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr.startswith("dialeval: error: unknown baseline 'nope' (known: random, ")
    assert not (tmp_path / "cache").exists() and not (tmp_path / "d").exists()


def test_report_is_the_same_bytes_whatever_the_cache_folder(tmp_path, monkeypatch):
    """The same run scored on the embedded default challenge from two users' cache folders writes the same
    report.json: the data is named by where it is in the cache (``cache:…``) and its hashes, never by the
    cache's absolute path (which differs per user and machine, and exposes a home folder)."""
    import shutil

    from dialeval.simulator.default import ensure_default_challenge

    monkeypatch.delenv("DIALEVAL_CHALLENGE", raising=False)
    monkeypatch.chdir(tmp_path)
    reports = []
    for user in ("alice", "bob"):
        monkeypatch.setenv("DIALEVAL_CACHE_DIR", str(tmp_path / user / ".cache" / "dialeval"))
        challenge = ensure_default_challenge(parts=["tst4"])
        shutil.copyfile(next((challenge / "tst4").glob("*task3*.answers.json")), "run.json")
        res = CliRunner().invoke(main, ["score", "run.json", "--split", "tst4", "--out", f"{user}.json"],
                                 catch_exceptions=False)
        assert res.exit_code == 0, res.output
        reports.append((tmp_path / f"{user}.json").read_bytes())
    assert reports[0] == reports[1]
    data = json.loads(reports[0])["data"]
    assert data["location"].startswith("cache:") and data["embedded_default"] is True
    assert "alice" not in reports[0].decode() and str(tmp_path) not in reports[0].decode()


def test_data_location_names_the_release_or_sample_and_keeps_a_given_path(tmp_path, monkeypatch):
    from dialeval.core.resources import samples_dir
    from dialeval.files.identity import location_label

    monkeypatch.setenv("DIALEVAL_CACHE_DIR", str(tmp_path / "cache"))
    release = tmp_path / "cache" / "releases" / "babi-dialog" / "dialog-bAbI-tasks"
    release.mkdir(parents=True)
    assert location_label(release) == "babi-dialog/dialog-bAbI-tasks"
    assert location_label(samples_dir() / "babi") == "sample:babi"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine").mkdir()
    assert location_label("mine") == "mine"  # as given: relative stays relative
    assert location_label(tmp_path / "mine") == str(tmp_path / "mine")


def test_a_folder_in_the_cache_that_dialeval_did_not_make_is_never_deleted(tmp_path):
    # before: a folder at the default challenge's place without dialeval's marker (the user's own, in a cache folder
    # they chose with DIALEVAL_CACHE_DIR) was deleted with everything in it ("half-written by something else than
    # us; start over"), and a file there stopped the command with an internal error
    from conftest import REPO, run_cli

    from dialeval.simulator.default import default_challenge_name

    cache = tmp_path / "cache"
    mine = cache / default_challenge_name()
    mine.mkdir(parents=True)
    (mine / "notes.txt").write_text("the user's own notes")
    run = REPO / "submissions" / "baselines" / "default" / "tfidf" / "submission.tgz"  # the stored tfidf run
    score = ("score", run, "--split", "tst4", "--json")
    env = {"DIALEVAL_CACHE_DIR": str(cache)}
    r = run_cli(*score, cwd=tmp_path, env=env)
    assert (r.returncode, r.stdout, r.stderr.count("\n")) == (2, "", 1), r.stderr
    assert r.stderr.startswith(f"dialeval: error: {mine}: in the cache folder but not made by dialeval")
    assert "nothing was deleted: move it away, set DIALEVAL_CACHE_DIR to another folder" in r.stderr
    assert sorted(p.name for p in mine.iterdir()) == ["notes.txt"]
    assert (mine / "notes.txt").read_text() == "the user's own notes"

    (mine / "notes.txt").rename(tmp_path / "notes.txt")  # moved away as told: the empty folder is used
    r = run_cli(*score, cwd=tmp_path, env=env)
    assert r.returncode == 0 and json.loads(r.stdout)["data"]["embedded_default"] is True, r.stderr
    assert (mine / ".base").is_file() and (mine / ".complete-tst4").is_file()

    other = tmp_path / "other-cache"
    other.mkdir()
    (other / default_challenge_name()).write_text("a file of the user's")  # a file in the way is refused too
    r = run_cli(*score, cwd=tmp_path, env={"DIALEVAL_CACHE_DIR": str(other)})
    assert (r.returncode, r.stderr.count("\n")) == (2, 1) and "not made by dialeval" in r.stderr, r.stderr
    assert (other / default_challenge_name()).read_text() == "a file of the user's"
