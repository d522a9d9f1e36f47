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



def test_ubuntu_tfidf_without_train_csv_says_it_is_needed_in_one_line(tmp_path):
    import shutil
    import subprocess
    import sys

    from conftest import REPO, cli_env

    data = tmp_path / "u"
    data.mkdir()
    shutil.copy(REPO / "submissions" / "samples" / "ubuntu" / "test.csv", data / "test.csv")
    env = {**cli_env(), "PYTHONPATH": str(REPO)}
    r = subprocess.run([sys.executable, "-m", "dialeval.baselines.ubuntu_tfidf", str(data), "--split", "test"],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip() == (f"error: {data / 'train.csv'}: no such file (this baseline fits its IDF table on the "
                                "data's train.csv)")
    assert list(tmp_path.glob("*.npy")) == []


def test_a_tie_policy_on_a_dstc6_rank_file_is_refused_not_ignored():
    from conftest import REPO

    run = REPO / "submissions" / "baselines" / "default" / "random" / "submission.tgz"
    r = run_cli("score", run, "--split", "tst1", "--ties", "expected")
    assert r.returncode == 2
    assert r.stderr.strip() == ("dialeval: error: --ties expected does not apply to dstc6: a rank file orders every "
                                "candidate, so there are no ties to break")
    assert run_cli("score", run, "--split", "tst1").returncode == 0


def test_the_warning_count_is_every_missing_item_not_the_listed_ones(tmp_path):
    from conftest import REPO

    r = run_cli("score", _empty_run(tmp_path), "--benchmark", "babi", "--data", REPO / "submissions" / "samples" / "babi",
                "--split", "tst")
    lines = r.stderr.splitlines()
    n = int(lines[0].split(" warning(s)")[0].rsplit(" ", 1)[1])
    assert lines[0] == f"0 error(s), {n} warning(s)" and f"[missing-dialog] x{n}:" in lines[1]
    assert n > 21  # more than the 20 listed one by one (before: "x21", the listed ones and their summary line)
    assert any(f"... {n} items of split tst in all are not in the submission" in line for line in lines)
