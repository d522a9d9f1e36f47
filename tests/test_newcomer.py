"""Issue 27's newcomer stumbles, each as the command a new user typed: the wrong message before, the right one now."""

from __future__ import annotations

from pathlib import Path

from conftest import run_cli


def _empty_run(tmp_path: Path) -> Path:
    p = tmp_path / "run.json"
    p.write_text("[]")
    return p


def test_dstc6_task_range_is_the_tracks_five_tasks(tmp_path):
    r = run_cli("score", _empty_run(tmp_path), "--split", "tst4", "--task", "foo")
    assert r.returncode == 2
    assert r.stderr.strip() == "dialeval: error: --task: DSTC6 tasks are 1-5, got 'foo'"
    r = run_cli("score", _empty_run(tmp_path), "--split", "tst4", "--task", "6")
    assert r.returncode == 2 and "DSTC6 tasks are 1-5, got '6'" in r.stderr


def test_the_default_data_notice_is_not_said_above_a_usage_error(tmp_path):
    r = run_cli("score", _empty_run(tmp_path), "--split", "tst9")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    r = run_cli("score", _empty_run(tmp_path), "--split", "tst1")
    assert r.returncode == 0 and "using the embedded default dstc6 data" in r.stderr


def test_a_bad_path_from_the_environment_names_the_variable(tmp_path):
    r = run_cli("score", _empty_run(tmp_path), "--split", "tst1", env={"DIALEVAL_CHALLENGE": str(tmp_path / "nope")})
    assert r.returncode == 2
    assert r.stderr.startswith(f"dialeval: error: DIALEVAL_CHALLENGE={tmp_path / 'nope'}: no such folder"), r.stderr
    assert len(r.stderr.strip().splitlines()) == 1

