"""Exit 1 is the submission's fault, said by one exception class (``core.errors.SubmissionFault``), never a usage
error. Before, two classes meant it: ``leaderboard.hosting.InvalidSubmission`` and ``commands.organizer.SubmissionFault``
(a subclass of ``UsageError``, so code catching usage errors caught it too), beside ``embed``'s private
``_NothingScored`` (another ``UsageError`` with exit 1). Every command path that raised one still exits 1 with the
same one line; the DSTC6 sample (the release's layout, constructed) is the data."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import run_cli

SAMPLE = Path(__file__).resolve().parents[1] / "submissions" / "samples" / "dstc6"
GOOD = SAMPLE / "example-run.json"


def test_one_class_means_the_submissions_fault():
    from dialeval.commands import embed, organizer
    from dialeval.core.errors import DialevalError, SubmissionFault, UsageError
    from dialeval.leaderboard import hosting, reported

    assert SubmissionFault.exit_code == 1 and issubclass(SubmissionFault, DialevalError)
    assert not issubclass(SubmissionFault, UsageError)  # a usage error is exit 2: the command's fault
    assert organizer.SubmissionFault is SubmissionFault and hosting.SubmissionFault is SubmissionFault
    assert not hasattr(hosting, "InvalidSubmission") and not hasattr(embed, "_NothingScored")
    assert issubclass(reported.InvalidReportedFile, SubmissionFault)


@pytest.fixture
def bad_run(tmp_path) -> Path:
    """The sample's run with one rank out of range: strict validation rejects it."""
    items = json.loads(GOOD.read_text())
    items[0]["lst_candidate_id"][0]["rank"] = 0
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(items))
    return p


def test_compare_with_an_invalid_file(tmp_path, bad_run):
    r = run_cli("compare", GOOD, "bad.json", "--data", "sample:dstc6", "--split", "tst1", cwd=tmp_path)
    assert (r.returncode, r.stderr) == (1, "dialeval: error: bad.json: invalid submission (1 error); see `dialeval "
                                           "validate bad.json --data sample:dstc6 --split tst1`\n")


def test_compare_with_a_rejected_registry_run(tmp_path):
    runs = tmp_path / "runs"
    for name, text in (("bad", '[{"dialog_id": 5}]'), ("good", GOOD.read_text())):
        (runs / name).mkdir(parents=True)
        (runs / name / "run.json").write_text(text)
        (runs / name / "team.json").write_text(json.dumps({"team": name.upper(), "system": name}))
    r = run_cli("grade", "runs", "--registry", "reg", "--board", "b", "--data", "sample:dstc6", cwd=tmp_path)
    assert r.returncode == 1 and "1 valid, 1 rejected" in r.stdout, r.stdout + r.stderr
    r = run_cli("compare", "1", "2", "--registry", "reg", cwd=tmp_path)
    assert (r.returncode, r.stderr) == (1, "dialeval: error: run 1 was rejected: nothing to compare\n")


def test_codabench_scoring_program_on_an_invalid_submission(tmp_path, bad_run):
    shutil.copytree(SAMPLE, tmp_path / "ref")
    r = run_cli("bundle", "codabench-score", "bad.json", "ref", "out", cwd=tmp_path)
    assert (r.returncode, r.stderr) == (1, "dialeval: error: invalid submission, not scored: bad.json#/0/lst_candidate_id/"
                                           "0/rank: error [rank-out-of-range] rank 0 is outside 1..7 (the item has 7 "
                                           "candidates)\n")
    assert not (tmp_path / "out").exists()  # nothing written


def test_evalai_evaluate_on_an_invalid_submission(tmp_path, bad_run, capsys):
    """EvalAI's worker calls the function: one line on stderr (naming the file, never its temporary folder), and the
    exception's text is that line's."""
    import tarfile

    from dialeval.core.errors import SubmissionFault
    from dialeval.leaderboard.hosting import evalai_evaluate

    ref = tmp_path / "ref.tgz"
    with tarfile.open(ref, "w:gz") as tf:
        tf.add(SAMPLE, arcname=".")
    with pytest.raises(SubmissionFault) as e:
        evalai_evaluate(str(ref), str(bad_run), "p1", benchmark="dstc6")
    line = "invalid submission, not scored: bad.json#/0/lst_candidate_id/0/rank: error [rank-out-of-range] rank 0 " \
           "is outside 1..7 (the item has 7 candidates)"
    assert (str(e.value), capsys.readouterr().err) == (line, f"dialeval: {line}\n")
    assert e.value.exit_code == 1


def test_embed_with_no_pair_scored(tmp_path):
    (tmp_path / "v.txt").write_text("hello 0.1 0.2\nworld 0.3 0.1\n")
    (tmp_path / "oov.txt").write_text("zz\nyy\n")
    r = run_cli("embed", "--hyp", "oov.txt", "--ref", "oov.txt", "--vectors", "v.txt", cwd=tmp_path)
    assert (r.returncode, r.stderr) == (1, "dialeval: error: no pair could be scored: every pair has a side without any "
                                           "word vector (4 of 4 tokens unknown; try --lowercase, another --tokenizer or "
                                           "other --vectors)\n")


def test_registry_import_of_an_invalid_reported_file(tmp_path):
    (tmp_path / "rep.csv").write_text("team,system,split,task,p@1\nA,x,tst1,1,2.5\n")
    r = run_cli("registry", "import", "rep.csv", "--registry", "reg", "--board", "r", cwd=tmp_path)
    assert (r.returncode, r.stderr) == (1, "rep.csv:2:5: column p@1: 2.5 is outside 0..1 (p@1 is a proportion; a "
                                           "percentage is divided by 100)\ndialeval: error: rep.csv: 1 problem, "
                                           "nothing imported\n")
