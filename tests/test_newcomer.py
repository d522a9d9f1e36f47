"""Issue 27's newcomer stumbles, each as the command a new user typed: the wrong message before, the right one now."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import REPO, run_cli


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
    assert r.stderr.strip() == (f"dialeval: error: {data / 'train.csv'}: no such file (this baseline fits its IDF table on the "
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


@pytest.mark.parametrize("name", ["babi", "movie-dialog", "convai2"])
def test_a_tie_policy_on_an_item_ranking_is_refused_not_signed(name):
    # before: exit 0 and "ties:expected" in the signature, though a ranking has no ties and the numbers were the
    # default's (--protocols itself said "no tie policy changes its numbers")
    sample = REPO / "submissions" / "samples" / name
    args = ("--benchmark", name, "--data", f"sample:{name}")
    r = run_cli("score", sample / "example-run.json", *args, "--ties", "expected")
    assert (r.returncode, r.stderr) == (2, "dialeval: error: --ties expected does not apply to a dstc6-result "
                                           "submission: a ranking orders the candidates it lists, so there are no "
                                           "ties to break\n")
    assert run_cli("score", sample / "example-run.json", *args).returncode == 0


def test_the_warning_count_is_every_missing_item_not_the_listed_ones(tmp_path):
    from conftest import REPO

    r = run_cli("score", _empty_run(tmp_path), "--benchmark", "babi", "--data", REPO / "submissions" / "samples" / "babi",
                "--split", "tst")
    lines = r.stderr.splitlines()
    n = int(lines[0].split(" warning(s)")[0].rsplit(" ", 1)[1])
    assert lines[0] == f"0 error(s), {n} warning(s)" and f"[missing-dialog] x{n}:" in lines[1]
    assert n > 21  # more than the 20 listed one by one (before: "x21", the listed ones and their summary line)
    assert any(f"... {n} items of split tst in all are not in the submission" in line for line in lines)


# ---- confusing messages -----------------------------------------------------------------------------------
def test_an_empty_run_folder_is_called_empty(tmp_path):
    from dialeval.leaderboard.grade import TEAM_FILE, _submission_in

    (tmp_path / "run").mkdir()
    assert _submission_in(tmp_path / "run") == "is empty (no submission)"
    (tmp_path / "run" / TEAM_FILE).write_text("{}")
    assert _submission_in(tmp_path / "run") == "holds only team.json (no submission)"
    # before: one notes file beside team.json was "several candidate submissions"
    (tmp_path / "run" / "notes.txt").write_text("our system")
    assert _submission_in(tmp_path / "run") == ("holds no submission (only notes.txt: no result .json, archive or "
                                                "folder; name it submission.json, submission.tgz or submission/)")
    (tmp_path / "run" / "a.json").write_text("[]")
    (tmp_path / "run" / "b.json").write_text("[]")
    assert _submission_in(tmp_path / "run").startswith("holds several candidate submissions")


def test_a_csv_with_a_header_row_says_the_matrix_is_headerless(tmp_path):
    from conftest import REPO

    rows = ["c0,c1,c2,c3,c4,c5,c6,c7,c8,c9"] + [",".join(str(0.1 * j) for j in range(10))] * 4
    (tmp_path / "s.csv").write_text("\n".join(rows) + "\n")
    r = run_cli("score", tmp_path / "s.csv", "--benchmark", "ubuntu", "--data", REPO / "submissions/samples/ubuntu")
    assert r.returncode == 1
    assert "[score-not-number] x1:" in r.stderr and "looks like a header row: the CSV matrix is headerless" in r.stderr


def test_an_npy_given_to_dstc6_is_not_called_compressed(tmp_path):
    import numpy as np

    np.save(tmp_path / "s.npy", np.zeros((3, 10)))
    r = run_cli("score", tmp_path / "s.npy", "--split", "tst1")
    assert r.returncode == 1
    assert "compressed or an archive" not in r.stderr and "NumPy .npy" in r.stderr


def test_one_line_is_not_1_lines(tmp_path):
    (tmp_path / "p.jsonl").write_text("{}\n")
    r = run_cli("score", tmp_path / "p.jsonl", "--benchmark", "airdialogue", "--split", "dev",
                env={"DIALEVAL_CACHE_DIR": str(tmp_path / "cache")})
    assert r.returncode == 1 and "the submission has 1 line, the split has" in r.stderr


def test_stats_on_a_file_says_it_is_a_file(tmp_path):
    r = run_cli("stats", _empty_run(tmp_path))
    assert r.returncode == 2
    assert r.stderr.strip() == (f"dialeval: error: {tmp_path / 'run.json'}: is a file; stats describes a challenge "
                                "folder (split folders of DSTC6 dataset files), e.g. dialeval stats DIR")


def test_stats_takes_the_dstc6_sample_as_every_data_option_does(tmp_path):
    # before: "dialeval: error: sample:dstc6: no such challenge folder"
    r = run_cli("stats", "sample:dstc6", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[1].split()[:3] == ["trn", "1", "3"]
    r = run_cli("stats", "sample:babi", cwd=tmp_path)
    assert (r.returncode, r.stderr) == (2, "dialeval: error: sample:babi: stats describes DSTC6 challenges; "
                                           "sample:dstc6 is the DSTC6 sample\n")


def test_data_verify_on_only_unknown_files_is_not_a_clean_pass(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "notes.txt").write_text("mine\n")
    r = run_cli("data", "verify", tmp_path / "d")
    assert r.returncode == 2 and r.stdout == ""
    assert "none of its 1 file(s) is a file of a published release" in r.stderr
    assert run_cli("data", "verify", tmp_path / "d", "--all").returncode == 0  # asked to list them: listed


# ---- did you mean --------------------------------------------------------------------------------------------
def test_typos_of_metric_release_benchmark_sample_and_split_names_get_a_suggestion(tmp_path):
    run = _empty_run(tmp_path)
    cases = [
        (("--split", "tst1", "--metrics", "p@1,mrrr"), "unknown metric 'mrrr' (did you mean 'mrr'?)"),
        (("--benchmark", "babi", "--data", "babi-dialg"), "--data babi-dialg: no such folder or release (did you "
                                                          "mean 'babi-dialog'?)"),
        (("--benchmark", "bab"), "unknown benchmark 'bab' (did you mean 'babi'?)"),
        (("--benchmark", "ubuntu", "--data", "sample:ubunt"), "no sample data named 'ubunt' (did you mean 'ubuntu'?)"),
        (("--split", "tst11"), "(did you mean 'tst1'?)"),
        (("--benchmark", "DSTC6"), "unknown benchmark 'DSTC6' (did you mean 'dstc6'?)"),  # before: no suggestion
        (("--split", "TST1"), "(did you mean 'tst1'?)"),
    ]
    for args, said in cases:
        r = run_cli("score", run, *args, cwd=tmp_path)
        assert r.returncode == 2 and said in r.stderr and len(r.stderr.strip().splitlines()) == 1, (args, r.stderr)
    r = run_cli("score", run, "--split", "tst1", "--metrics", "zzz")
    assert "did you mean" not in r.stderr and "(known: " in r.stderr  # nothing close: the list instead


def test_a_negative_problem_count_is_a_usage_error(tmp_path):
    # before: --max-problems -1 listed nothing and said "... and 2 more" of a file with one problem
    r = run_cli("score", _empty_run(tmp_path), "--split", "tst1", "--max-problems", "-1")
    assert r.returncode == 2 and "--max-problems: must be at least 0, got -1" in r.stderr


def test_piped_tables_do_not_wrap_inside_a_word(tmp_path):
    r = run_cli("data", "list", env={"DIALEVAL_CACHE_DIR": str(tmp_path / "cache")})  # stdout is a pipe here
    assert r.returncode == 0
    rows = [line for line in r.stdout.splitlines() if line.startswith("│")]
    assert any("organizers only" in line for line in rows)  # before: "organiz" / "ers" on two lines
    assert all(line.split("│")[1].strip() for line in rows)  # no continuation rows: every row names a release
    r = run_cli("data", "list", env={"DIALEVAL_CACHE_DIR": str(tmp_path / "cache"), "COLUMNS": "90"})
    assert max(len(line) for line in r.stdout.splitlines() if line[:1] in "┏┃┡│└") <= 90  # a width asked for is kept
    # narrower than its longest words need: wider than asked rather than a word cut (test_tables.py)
    r = run_cli("data", "list", env={"DIALEVAL_CACHE_DIR": str(tmp_path / "cache"), "COLUMNS": "60"})
    assert "organizers" in r.stdout.split() and "organiz" not in r.stdout.split()


# ---- small things noticed after the first round (issue 27) ------------------------------------------------------
def test_score_vectors_without_an_embedding_metric_is_a_usage_error(tmp_path):
    vectors = tmp_path / "vectors.txt"
    vectors.write_text("the 0.1 0.9\n")
    r = run_cli("score", _empty_run(tmp_path), "--split", "tst1", "--vectors", vectors)
    assert r.returncode == 2, r.stderr  # before: exit 0, the file silently unused
    assert r.stderr.strip().splitlines() == [
        "dialeval: error: --vectors only changes the embedding metrics (embedding-average, greedy-matching, "
        "vector-extrema), and none is asked for: add one to --metrics (e.g. --metrics p@1,embedding-average)"]
    r = run_cli("score", _empty_run(tmp_path), "--split", "tst1", "--metrics", "p@1,mrr",
                "--embedding-preset", "hed-dlg", "--vectors-format", "glove-text")
    assert r.returncode == 2 and "--vectors-format and --embedding-preset only change" in r.stderr


@pytest.mark.needs("numba")
def test_embed_per_pair_to_stdout_keeps_stdout_for_the_pairs(tmp_path):
    (tmp_path / "h.txt").write_text("the cat\na dog\n")
    (tmp_path / "r.txt").write_text("the dog\na cat\n")
    (tmp_path / "v.txt").write_text("the 0.1 0.9\ncat 0.8 0.2\na 0.5 0.5\ndog 0.3 0.6\n")
    args = ("embed", "--hyp", "h.txt", "--ref", "r.txt", "--vectors", "v.txt", "--per-pair", "-")
    r = run_cli(*args, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    pairs = [json.loads(line) for line in r.stdout.splitlines()]  # before: the table followed the JSON lines
    assert [p["line"] for p in pairs] == [1, 2] and "embedding-average" in r.stderr
    assert not (tmp_path / "-").exists()
    r = run_cli(*args, "--json", cwd=tmp_path)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip().splitlines() == ["dialeval: error: --per-pair - and --json would both write to standard "
                                             "output: give --per-pair a file"]


def test_piped_score_footer_is_not_cut_mid_sentence(tmp_path):
    env = {"DIALEVAL_CACHE_DIR": str(tmp_path / "cache")}
    run = REPO / "submissions" / "samples" / "babi" / "example-run.json"
    r = run_cli("score", run, "--benchmark", "babi", "--data", "sample:babi", "--split", "tst", env=env)
    assert r.returncode == 0, r.stderr
    # before: "... (constructed), not a" / "published test set" on two lines (rich's 80 columns when piped)
    assert any(line.startswith("data: ") and line.endswith("not a published test set") for line in r.stdout.splitlines())
    r = run_cli("score", run, "--benchmark", "babi", "--data", "sample:babi", "--split", "tst",
                env={**env, "COLUMNS": "60"})
    footer = r.stdout[r.stdout.index("data: "):].splitlines()
    assert len(footer) > 1  # a width asked for is kept: the sentence wraps, between words only
    words = r.stdout.split()
    assert all(w in words for w in "dialeval's sample data (constructed), not a published test set".split())


def test_data_verify_on_a_copied_sample_compares_it_with_the_shipped_sample(tmp_path):
    env = {"DIALEVAL_CACHE_DIR": str(tmp_path / "cache")}
    assert run_cli("data", "sample", "babi", "--out", "babi", cwd=tmp_path, env=env).returncode == 0
    r = run_cli("data", "verify", "babi", cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    assert "modified" not in r.stdout + r.stderr  # before: 21 files "modified" against the bAbI release
    assert r.stdout.strip() == ("babi: dialeval's babi sample data (constructed, not a release), compared with the "
                                "shipped sample: 24 file(s) match, 0 changed, 0 not in it")
    with open(tmp_path / "babi" / "dialog-babi-candidates.txt", "a") as f:
        f.write("1 one more\n")
    r = run_cli("data", "verify", "babi", cwd=tmp_path, env=env)
    assert r.returncode == 0 and "dialog-babi-candidates.txt: changed" in r.stdout and "1 changed" in r.stdout


def test_data_verify_all_on_a_sample_lists_every_file(tmp_path):
    env = {"DIALEVAL_CACHE_DIR": str(tmp_path / "cache")}
    assert run_cli("data", "sample", "babi", "--out", "babi", cwd=tmp_path, env=env).returncode == 0
    (tmp_path / "babi" / "notes.txt").write_text("mine\n")
    plain = run_cli("data", "verify", "babi", cwd=tmp_path, env=env)
    r = run_cli("data", "verify", "babi", "--all", cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    # before: --all printed exactly what the plain command prints (only the file that is not in the sample)
    assert plain.stdout.splitlines()[0] == "notes.txt: unknown" and "matches" not in plain.stdout
    listed = dict(line.split(": ", 1) for line in r.stdout.splitlines()[:-1])
    assert len(listed) == 25 and listed["notes.txt"] == "unknown" and listed["dialog-babi-candidates.txt"] == "matches"
    assert r.stdout.splitlines()[-1].endswith("24 file(s) match, 0 changed, 1 not in it")
    # the sample as --data names it: before, "sample:babi: no such folder"
    r = run_cli("data", "verify", "sample:babi", "--all", cwd=tmp_path, env=env)
    assert r.returncode == 0 and r.stdout.count(": matches\n") == 24, r.stderr
    r = run_cli("data", "verify", "sample:bab", cwd=tmp_path, env=env)
    assert r.returncode == 2 and r.stderr.startswith("dialeval: error: no sample data named 'bab' (did you mean 'babi'?)")


def test_validate_and_the_json_report_count_every_missing_item_as_stderr_does(tmp_path):
    # before: stderr said "123 warning(s)" while validate's summary line and the JSON report's counts said 21
    # (the 20 listed items and the one line standing for the rest)
    from conftest import REPO

    sample = REPO / "submissions" / "samples" / "babi"
    args = ("--benchmark", "babi", "--data", sample, "--split", "tst")
    r = run_cli("validate", _empty_run(tmp_path), *args)
    n = int(r.stderr.splitlines()[0].split(" warning(s)")[0].rsplit(" ", 1)[1])
    assert n > 21 and r.returncode == 0
    assert f"valid (0 error(s), {n} warning(s); babi split tst; mode strict)" in r.stdout, r.stdout
    doc = json.loads(run_cli("validate", _empty_run(tmp_path), *args, "--json").stdout)
    assert doc["counts"] == {"errors": 0, "warnings": n}
    assert len(doc["problems"]) == 21  # the listing stays capped: 20 items and the summary line


def test_a_data_path_that_is_a_file_is_called_a_file_not_missing(tmp_path):
    # before: "challenge directory run.json does not exist" for a file that exists, and the variable not named
    run = _empty_run(tmp_path)
    r = run_cli("score", run, "--split", "tst1", env={"DIALEVAL_CHALLENGE": str(run)})
    assert r.returncode == 2
    assert r.stderr == (f"dialeval: error: DIALEVAL_CHALLENGE={run}: not a folder (the environment variable names "
                        "the dstc6 data; unset it or pass --data DIR)\n")
    r = run_cli("score", run, "--split", "tst1", "--data", run)
    assert (r.returncode, r.stderr) == (2, f"dialeval: error: challenge directory {run} is not a folder\n")
    r = run_cli("score", run, "--benchmark", "babi", "--data", run)
    assert (r.returncode, r.stderr) == (2, f"dialeval: error: bAbI data directory {run} is not a folder\n")
    r = run_cli("score", run, "--data", tmp_path / "nope", "--split", "tst1")
    assert r.stderr == f"dialeval: error: challenge directory {tmp_path / 'nope'} does not exist\n"


@pytest.mark.parametrize("args", [
    ["simulate", "--out", "{out}", "--train", "0", "--test", "2"],
    ["data", "sample", "babi", "--out", "{out}"],
    ["leaderboard", "build", "--registry", "{tmp}/reg", "--out", "{out}"],
])
def test_an_output_folder_that_cannot_be_made_is_named_never_its_temporary_twin(tmp_path, args):
    # before: "dialeval: error: No such file or directory: /proc/.x.tmp-dv5vvwk6" (Python's words, a private name)
    for out, why in ((Path("/proc/dialeval-newcomer"), "cannot create it: no such file or directory"),
                     (tmp_path / "a-file" / "x", "a parent of it is a file, not a folder")):
        (tmp_path / "a-file").write_text("")
        argv = [a.format(out=out, tmp=tmp_path) for a in args]
        if args[0] == "leaderboard":
            assert run_cli("registry", "import", REPO / "submissions" / "reported" / "dstc6-2017.csv", "--registry",
                           tmp_path / "reg", "--board", "b").returncode == 0
        r = run_cli(*argv, cwd=tmp_path)
        assert r.returncode == 2, r.stderr
        assert r.stderr.splitlines()[-1] in (f"dialeval: error: {out}: {why}",
                                             f"dialeval: error: --out {out}: cannot use it (not a directory)"), r.stderr
        assert ".tmp-" not in r.stderr and ".site-" not in r.stderr and "Errno" not in r.stderr


def test_an_output_file_on_a_full_disk_is_named_in_one_line(tmp_path):
    # before: "dialeval: error: No space left on device", without the file
    r = run_cli("score", REPO / "submissions" / "samples" / "dstc6" / "example-run.json", "--data", "sample:dstc6",
                "--out", "/dev/full")
    assert (r.returncode, r.stderr.splitlines()[-1]) == (2, "dialeval: error: /dev/full: cannot write: no space left "
                                                             "on device"), r.stderr


def test_the_convai2_baselines_module_says_one_line_not_a_traceback(tmp_path):
    import subprocess
    import sys

    from conftest import cli_env

    env = {**cli_env(), "PYTHONPATH": str(REPO)}
    data = REPO / "submissions" / "samples" / "convai2" / "valid_self_original.txt"
    for args, line in (([tmp_path / "nope.txt", "--out", tmp_path / "o"], f"dialeval: error: {tmp_path / 'nope.txt'}: no such file"),
                       ([data, "--out", tmp_path / "a-file" / "o"],
                        f"dialeval: error: {tmp_path / 'a-file' / 'o' / 'random' / 'submission.json'}: a parent of it is a file, "
                        "not a folder")):
        (tmp_path / "a-file").write_text("")
        r = subprocess.run([sys.executable, "-m", "dialeval.baselines.convai2", *map(str, args)], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=120)
        assert (r.returncode, r.stderr) == (2, line + "\n")


def test_the_dstc7_sample_writer_takes_help_and_never_writes_into_an_installed_package(tmp_path, monkeypatch, capsys):
    # before: `python -m dialeval.baselines.dstc7 --help` ignored its argument, exited 0 and wrote sample and run
    # files into site-packages/dialeval/submissions/
    from dialeval.baselines import dstc7

    with pytest.raises(SystemExit) as e:
        dstc7.main(["--help"])
    assert e.value.code == 0 and "Rewrite the DSTC7/DSTC8 sample data" in capsys.readouterr().out
    installed = tmp_path / "site-packages" / "dialeval" / "baselines" / "dstc7.py"
    installed.parent.mkdir(parents=True)
    monkeypatch.setattr(dstc7, "__file__", str(installed))
    assert dstc7.main([]) == 2
    assert "is an installed package, not a source checkout" in capsys.readouterr().err
    assert sorted(p.name for p in (tmp_path / "site-packages" / "dialeval").iterdir()) == ["baselines"]


def test_compare_takes_a_data_file_says_the_default_once_and_scores_files_on_the_split_given(tmp_path):
    douban = REPO / "submissions" / "samples" / "douban"
    tfidf = REPO / "submissions" / "baselines" / "samples" / "douban" / "tfidf" / "scores.txt"
    # before: "Invalid value for '--data': Directory '.../test.txt' is a file", though score takes the file
    r = run_cli("compare", douban / "example-scores.txt", tfidf, "--benchmark", "douban", "--data",
                douban / "test.txt")
    assert r.returncode == 0, r.stderr
    assert "scope: test (the answer-key items of the scope)" in r.stdout and "signature: douban|data:test#" in r.stdout
    # before: the embedded default's notice twice (once per file)
    run = REPO / "submissions" / "samples" / "dstc6" / "example-run.json"
    r = run_cli("compare", run, run, "--data", "sample:dstc6")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    empty = _empty_run(tmp_path)
    r = run_cli("compare", empty, empty, "--split", "tst1")
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("using the embedded default dstc6 data") == 1
    # before: "give --split for a single result file" although --split was given; and "(1 errors)"; and exit 2, as
    # for a usage error, where an invalid submission is the submission's fault: exit 1, as `score` and `grade` say
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'[{"dialog_id": "caf\xe9"}]')
    r = run_cli("compare", empty, bad, "--split", "tst1")
    assert (r.returncode, r.stderr.splitlines()[-1]) == (
        1, f"dialeval: error: {bad}: invalid submission (1 error); see `dialeval validate {bad} --split tst1`"), r.stderr
    assert run_cli("score", bad, "--split", "tst1").returncode == 1  # the same file, the same exit


def test_a_cache_folder_that_is_a_file_is_said_in_dialevals_words(tmp_path):
    # before: "... for the embedded default challenge (File exists); ...", Python's wording
    run = _empty_run(tmp_path)
    r = run_cli("score", run, "--split", "tst1", env={"DIALEVAL_CACHE_DIR": str(run)})
    assert (r.returncode, r.stderr) == (2, f"dialeval: error: cannot create the cache directory {run} for the embedded "
                                           "default challenge (a file is in the way); set DIALEVAL_CACHE_DIR to a "
                                           "writable folder, or pass --challenge DIR\n")


@pytest.mark.parametrize("args", [[], ["data"], ["baseline"], ["registry"]])
def test_a_command_group_typed_alone_shows_its_help_not_an_escaped_line(args):
    # before: `dialeval` alone printed "dialeval: error: Usage: dialeval [OPTIONS] COMMAND [ARGS]...\n\n  Validate..."
    # as one line with the newlines escaped
    r = run_cli(*args)
    assert r.returncode == 2
    lines = r.stderr.splitlines()
    assert lines[0].startswith("Usage: ") and lines[0].endswith(f"{' '.join(args)} [OPTIONS] COMMAND [ARGS]...".strip())
    assert "Commands:" in lines and "\\n" not in r.stderr and len(lines) > 5


def test_the_baseline_modules_never_write_their_scores_over_the_data(tmp_path):
    # before: `python -m dialeval.baselines.ubuntu_tfidf DIR --out DIR/test.csv` replaced the test set with an .npy,
    # and `python -m dialeval.baselines.selection tfidf test.txt --out test.txt` replaced the data with its scores
    import shutil
    import subprocess
    import sys

    from conftest import cli_env

    env = {**cli_env(), "PYTHONPATH": str(REPO)}
    ubuntu = tmp_path / "ubuntu"
    shutil.copytree(REPO / "submissions" / "samples" / "ubuntu", ubuntu)
    douban = tmp_path / "test.txt"
    shutil.copy(REPO / "submissions" / "samples" / "douban" / "test.txt", douban)
    convai2 = tmp_path / "c" / "random" / "submission.json"  # where the module writes its random run
    convai2.parent.mkdir(parents=True)
    shutil.copy(REPO / "submissions" / "samples" / "convai2" / "valid_self_original.txt", convai2)
    runs = [(["dialeval.baselines.ubuntu_tfidf", ubuntu, "--split", "test", "--out", ubuntu / "test.csv"],
             ubuntu / "test.csv", "a data file"),
            (["dialeval.baselines.ubuntu_tfidf", ubuntu, "--split", "test", "--out", ubuntu / "train.csv"],
             ubuntu / "train.csv", "a data file"),
            (["dialeval.baselines.selection", "tfidf", douban, "--out", douban], douban, "the data file"),
            (["dialeval.baselines.convai2", convai2, "--out", tmp_path / "c"], convai2, "the data file")]
    for args, data, what in runs:
        before = data.read_bytes()
        r = subprocess.run([sys.executable, "-m", *map(str, args)], cwd=tmp_path, env=env, capture_output=True,
                           text=True, timeout=120)
        assert (r.returncode, r.stderr) == (2, f"dialeval: error: {data}: is {what}, an input of this run; refusing to "
                                               "overwrite it\n"), args
        assert data.read_bytes() == before


@pytest.mark.parametrize("name", ["babi", "douban", "dstc8"])
def test_standard_input_for_a_benchmark_that_reads_none_is_said_as_such(name, tmp_path):
    # before: "dialeval: error: -: no such file", as if '-' were a file name
    import subprocess
    import sys

    from conftest import cli_env

    env = {**cli_env(), "PYTHONPATH": str(REPO)}
    r = subprocess.run([sys.executable, "-c", "from dialeval.cli import run; run()", "score", "-", "--benchmark", name,
                        "--data", f"sample:{name}"], input="[]", cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=120)
    assert (r.returncode, r.stderr) == (2, f"dialeval: error: -: standard input is read for dstc6 submissions only; "
                                           f"give the {name} submission as a file\n")


def test_counts_of_one_are_singular(tmp_path):
    # before: "one.csv: 1 lines, but the split has 4 items"
    one = tmp_path / "one.csv"
    one.write_text(",".join(str(k / 10) for k in range(10)) + "\n")
    r = run_cli("score", one, "--benchmark", "ubuntu", "--data", "sample:ubuntu", "--split", "test")
    assert r.returncode == 1 and "one.csv: 1 line, but the split has 4 items (one line per item, in order)" in r.stderr
    assert "1 lines" not in r.stderr


def test_one_movie_dialog_item_given_as_text_is_counted_in_the_singular(tmp_path):
    # before: "1 items give candidates that are neither ids nor exact candidate texts"
    run = json.loads((REPO / "submissions" / "samples" / "movie-dialog" / "example-run.json").read_text())
    run[0]["lst_candidate_id"][0]["candidate_id"] = "No Such Film"
    (tmp_path / "run.json").write_text(json.dumps(run))
    r = run_cli("score", tmp_path / "run.json", "--benchmark", "movie-dialog", "--data", "sample:movie-dialog")
    assert r.returncode == 1 and "1 item gives candidates that are neither ids nor exact" in r.stderr, r.stderr


@pytest.mark.needs("numba")
def test_embed_says_one_hypothesis_and_one_reference(tmp_path):
    # before: "1 hypotheses, 1 references; ..."
    (tmp_path / "h.txt").write_text("a table for two\n")
    (tmp_path / "r.txt").write_text("table for two please\n")
    r = run_cli("embed", "--hyp", tmp_path / "h.txt", "--ref", tmp_path / "r.txt")
    assert r.returncode == 0, r.stderr
    assert "1 hypothesis, 1 reference; " in r.stdout and "empty (no vector): 0 hypotheses, 0 references" in r.stdout
