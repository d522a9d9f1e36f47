"""Every registered benchmark through the one command line: `dialeval score SUB --benchmark NAME --data DIR`."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import REPO, SHARED, run_cli

from dialeval.core.signature import Signature


def _fields(rec: dict) -> dict:
    return dict(Signature.parse(rec["signature"]).fields)


@pytest.fixture(scope="module")
def ubuntu_dir(tmp_path_factory):
    from dialeval.simulator.ubuntu import write_fixture

    d = tmp_path_factory.mktemp("ubuntu")
    write_fixture(d, seed=3, n_train=60, n_valid=20, n_test=40)
    return d


def test_ubuntu_matrix_with_ties_through_the_cli(ubuntu_dir, tmp_path):
    # Row 0: the ground truth (column 0) ties with every distractor; rows 1..: the ground truth strictly best.
    scores = np.zeros((40, 10), np.float32)
    scores[1:, 0] = 1.0
    np.save(tmp_path / "s.npy", scores)
    out = {}
    for policy in ("pessimistic", "optimistic", "expected"):
        r = run_cli("score", tmp_path / "s.npy", "--benchmark", "ubuntu", "--data", ubuntu_dir, "--split", "test",
                    "--ties", policy, "--json")
        assert r.returncode == 0, r.stderr
        rep = json.loads(r.stdout)
        vals = {(x["group"], x["metric"]): x for x in rep["results"] if x["average"] is None}
        out[policy] = {m: v["value"] for (g, m), v in vals.items()}
        assert all(_fields(v)["ties"] == policy for v in vals.values())
    assert out["pessimistic"]["r10@1"] == pytest.approx(39 / 40)
    assert out["optimistic"]["r10@1"] == 1.0
    assert out["expected"]["r10@1"] == pytest.approx((39 + 1 / 10) / 40)
    assert out["expected"]["r2@1"] == pytest.approx((39 + 1 / 2) / 40)
    assert out["expected"]["r10@5"] == pytest.approx((39 + 5 / 10) / 40)


def test_ubuntu_bad_matrix_is_one_problem_line(ubuntu_dir, tmp_path):
    np.save(tmp_path / "bad.npy", np.zeros((40, 7), np.float32))
    r = run_cli("score", tmp_path / "bad.npy", "--benchmark", "ubuntu", "--data", ubuntu_dir, "--split", "test")
    assert r.returncode in (0, 1) and "Traceback" not in r.stderr
    bad = np.zeros((39, 10), np.float32)
    np.save(tmp_path / "short.npy", bad)
    r = run_cli("score", tmp_path / "short.npy", "--benchmark", "ubuntu", "--data", ubuntu_dir, "--split", "test")
    assert r.returncode == 1 and "wrong-shape" in r.stderr and "Traceback" not in r.stderr


def test_non_dstc6_benchmark_without_data_uses_its_sample(tmp_path):
    r = run_cli("score", "x.json", "--benchmark", "ubuntu")
    assert r.returncode == 2 and r.stderr.startswith("dialeval: error: x.json")  # a usage error: that line alone
    (tmp_path / "x.json").write_text("[]")
    r = run_cli("score", tmp_path / "x.json", "--benchmark", "ubuntu")
    notice = r.stderr.strip().splitlines()[-1]
    assert "no --data given: using dialeval's sample ubuntu data" in notice and "pass --data DIR" in notice


def test_unknown_benchmark_is_a_usage_error():
    r = run_cli("score", "x.json", "--benchmark", "nope", "--data", ".")
    assert r.returncode == 2 and "unknown benchmark" in r.stderr


@pytest.fixture(scope="module")
def airdialogue_dir(tmp_path_factory):
    from dialeval.simulator.airdialogue import write_airdialogue

    d = tmp_path_factory.mktemp("air")
    write_airdialogue(d, seed=5, n=300, split="dev")
    return d


def test_airdialogue_through_the_cli_with_variants_and_status_rows(airdialogue_dir, tmp_path):
    sub = tmp_path / "rule.jsonl"
    r = run_cli("airdialogue", "baseline", "rule-based", "--data", airdialogue_dir, "--out", sub)
    assert r.returncode == 0, r.stderr
    r = run_cli("score", sub, "--benchmark", "airdialogue", "--data", airdialogue_dir, "--split", "dev", "--json")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    main = {x["metric"]: x["value"] for x in rep["results"] if x["subset"] is None and x["group"] != "all"}
    assert main["score"] == 1.0 and main["exact"] == 1.0
    subsets = {x["subset"] for x in rep["results"] if x["subset"]}
    assert {"status=book", "status=no_flight"} <= subsets
    n_by_status = {x["subset"]: x["n"] for x in rep["results"] if x["subset"] and x["metric"] == "score"}
    assert sum(n_by_status.values()) == 300
    legacy = run_cli("score", sub, "--benchmark", "airdialogue", "--data", airdialogue_dir, "--split", "dev",
                     "--flight-distance", "legacy", "--exact-name", "whole", "--json")
    fields = _fields(json.loads(legacy.stdout)["results"][0])
    assert fields["flight-distance"] == "legacy" and fields["exact-name"] == "whole"


def test_airdialogue_embedded_default_is_announced(tmp_path):
    (tmp_path / "none.jsonl").write_text("{}\n")
    r = run_cli("score", tmp_path / "none.jsonl", "--benchmark", "airdialogue", "--split", "dev",
                env={"DIALEVAL_CACHE_DIR": str(tmp_path / "cache")})
    assert "embedded default airdialogue data" in r.stderr
    assert r.returncode == 1 and "Traceback" not in r.stderr


BABI = SHARED / "data" / "babi-dialog"


@pytest.mark.skipif(not BABI.is_dir(), reason=f"bAbI dialog data not found at {BABI}")
def test_babi_gold_submission_through_the_cli(tmp_path):
    from dialeval.benchmarks.babi import load_items

    s = load_items(BABI, 1, "tst")  # the benchmark's own item and candidate ids
    sub = [{"dialog_id": i, "lst_candidate_id": [{"candidate_id": sorted(g)[0], "rank": 1}]}
           for i, g in zip(s.item_ids, s.gold)]
    (tmp_path / "gold.json").write_text(json.dumps(sub))
    r = run_cli("score", tmp_path / "gold.json", "--benchmark", "babi", "--data", BABI, "--split", "tst",
                "--task", "1", "--json")
    assert r.returncode == 0, r.stderr
    vals = {x["metric"]: x["value"] for x in json.loads(r.stdout)["results"] if x["group"] == "1"}
    assert vals == {"per-response-accuracy": 1.0, "per-dialog-accuracy": 1.0}


def test_wrong_split_and_task_hints(tmp_path):
    """A tst2 file scored as tst1 names tst2 (still exit 1); a file ranking task 1 only hints at --task 1."""
    from conftest import make_challenge

    root = tmp_path / "challenge"
    make_challenge(root, split="tst1", seed=1)
    two = make_challenge(root, split="tst2", seed=2)
    sub = tmp_path / "t2.json"
    sub.write_text(json.dumps(two.perfect([1])))
    r = run_cli("score", sub, "--challenge", root, "--split", "tst1", "--json")
    assert r.returncode == 1
    hint = [p for p in json.loads(r.stdout)["problems"] if p["code"] == "wrong-split"]
    assert len(hint) == 1 and "belong to split tst2" in hint[0]["message"] and "--split tst2" in hint[0]["message"]
    assert not any(g in hint[0]["message"] for g in two.gold.values())  # never a gold id
    r = run_cli("score", sub, "--challenge", root, "--split", "tst2", "--json")
    assert r.returncode == 0
    hints = [p for p in json.loads(r.stdout)["problems"] if p["code"] == "task-hint"]
    assert len(hints) == 1 and "--task 1" in hints[0]["message"]
    r = run_cli("score", sub, "--challenge", root, "--split", "tst2", "--task", "1", "--json")
    assert r.returncode == 0 and not [p for p in json.loads(r.stdout)["problems"] if p["code"] == "task-hint"]


MOVIE = SHARED / "data" / "movie-dialog"


@pytest.mark.skipif(not MOVIE.is_dir(), reason=f"Movie Dialog data not found at {MOVIE}")
def test_movie_dialog_release_layout_with_task_folders(tmp_path):
    """The release keeps each task in its own folder (task1_qa/task1_qa_dev.txt): read like the flat layout."""
    import os

    from dialeval.api import evaluate

    nested = tmp_path / "movie"
    (nested / "task1_qa").mkdir(parents=True)
    os.symlink(MOVIE / "entities.txt", nested / "entities.txt")
    os.symlink(MOVIE / "task1_qa_dev.txt", nested / "task1_qa" / "task1_qa_dev.txt")
    sub = tmp_path / "empty.json"
    sub.write_text("[]")
    _, flat = evaluate(sub, benchmark="movie-dialog", data=MOVIE, split="dev", groups=["1"])
    _, ev = evaluate(sub, benchmark="movie-dialog", data=nested, split="dev", groups=["1"])
    assert len(ev.table) == len(flat.table) > 9000
    assert ev.table.item_id[:3].tolist() == flat.table.item_id[:3].tolist()


def test_hostile_single_file_submissions(ubuntu_dir, tmp_path):
    """A FIFO named .npy is refused before it is opened (never blocks); a rank of 10^12 is one problem, exit 1."""
    import os

    fifo = tmp_path / "s.npy"
    os.mkfifo(fifo)
    r = run_cli("score", fifo, "--benchmark", "ubuntu", "--data", ubuntu_dir, "--split", "test", timeout=60)
    assert r.returncode == 2 and "not a regular file" in r.stderr and "Traceback" not in r.stderr
    big = tmp_path / "big.json"
    big.write_text(json.dumps([{"dialog_id": "test:1", "lst_candidate_id": [{"candidate_id": "gt", "rank": 10**12}]}]))
    r = run_cli("score", big, "--benchmark", "ubuntu", "--data", ubuntu_dir, "--split", "test", "--json")
    assert r.returncode == 1, r.stderr
    assert [p["code"] for p in json.loads(r.stdout)["problems"] if p["severity"] == "error"] == ["rank-out-of-range"]


# ---- benchmark-declared options -----------------------------------------------------------------------------
@pytest.mark.parametrize("extra,flag", [(("--lenient",), "--lenient"), (("--keys", "."), "--keys"),
                                        (("--flight-distance", "legacy"), "--flight-distance"),
                                        (("--candidate-limit", "5"), "--candidate-limit")])
def test_an_option_of_another_benchmark_is_refused_not_ignored(ubuntu_dir, tmp_path, extra, flag):
    np.save(tmp_path / "s.npy", np.zeros((40, 10), np.float32))
    r = run_cli("score", tmp_path / "s.npy", "--benchmark", "ubuntu", "--data", ubuntu_dir, "--split", "test", *extra)
    assert r.returncode == 2, r.stderr
    line = r.stderr.strip().splitlines()[-1]
    assert f"{flag} does not apply to benchmark ubuntu" in line and "Traceback" not in r.stderr


def test_candidate_limit_without_lenient_is_refused_not_ignored():
    # before: `score ... --candidate-limit 5` in strict mode exited 0 and signed nc:all: the option did nothing
    run = REPO / "submissions" / "samples" / "dstc6" / "example-run.json"
    r = run_cli("score", run, "--data", "sample:dstc6", "--candidate-limit", "5")
    assert (r.returncode, r.stderr) == (2, "dialeval: error: --candidate-limit applies with --lenient only (the "
                                           "official scorer's slots per dialog); strict mode ranks every candidate\n")
    r = run_cli("score", run, "--data", "sample:dstc6", "--candidate-limit", "5", "--lenient")
    assert r.returncode == 0 and "|mode:lenient|nc:5|" in r.stdout, r.stderr


def test_the_api_checks_options_against_the_benchmark(ubuntu_dir, tmp_path):
    from dialeval.api import score
    from dialeval.core.errors import UsageError

    np.save(tmp_path / "s.npy", np.zeros((40, 10), np.float32))
    with pytest.raises(UsageError, match="--exact-name does not apply to benchmark ubuntu .*airdialogue"):
        score(tmp_path / "s.npy", "test", benchmark="ubuntu", data=ubuntu_dir, options={"exact_name": "whole"})
    with pytest.raises(UsageError, match="--flight-distance must be one of current, legacy"):
        score(tmp_path / "s.npy", "test", benchmark="airdialogue", data=ubuntu_dir,
              options={"flight_distance": "sideways"})


def test_the_command_line_lists_what_each_benchmark_declares():
    r = run_cli("benchmarks", "--json")
    rows = {b["name"]: b for b in json.loads(r.stdout)}
    assert rows["dstc6"]["options"] == ["--lenient", "--candidate-limit", "--keys"]  # answer keys in their own folder
    assert rows["airdialogue"]["options"] == ["--lenient", "--flight-distance", "--exact-name", "--bleu-variant"]
    assert rows["airdialogue"]["api_options"] == ["source", "bleu"]  # not flags: kept out of the options
    text = run_cli("benchmarks").stdout
    assert "(API only)" not in text and "  API options: source, bleu" in text
    assert rows["ubuntu"]["options"] == ["--protocols"]  # every item-set benchmark: tie policies side by side
    help_text = run_cli("score", "--help").stdout
    assert "--flight-distance" in help_text and "--candidate-limit" in help_text
    assert "--flight-distance" not in run_cli("validate", "--help").stdout  # scoring-only options stay off validate


# ---- only the chosen benchmark is imported ------------------------------------------------------------------
_MODULES_AFTER = (
    "import sys\nfrom dialeval.cli import run\n"
    "try:\n    run()\nexcept SystemExit:\n    pass\n"
    "print(sorted(m for m in sys.modules if m.startswith('dialeval.benchmarks.') or m == 'numpy'))"
)


def test_a_dstc6_run_imports_no_other_benchmark(tiny_shared, tmp_path):
    import subprocess
    import sys

    from conftest import ranking, write_json

    sub = write_json(tmp_path / "r.json", [ranking(it.dialog_id, [c.candidate_id for c in it.candidates])
                                           for t in tiny_shared.tasks for it in tiny_shared.items[t]])
    for cmd in ("validate", "score"):
        argv = [cmd, str(sub), "--challenge", str(tiny_shared.root), "--split", "tst1", "--json"]
        r = subprocess.run([sys.executable, "-c", _MODULES_AFTER, *argv], capture_output=True, text=True,
                           timeout=60)
        loaded = json.loads(r.stdout.strip().splitlines()[-1].replace("'", '"'))
        assert any(m.startswith("dialeval.benchmarks.dstc6") for m in loaded), r.stderr
        others = [m for m in loaded if m.startswith("dialeval.") and
                  m.split(".")[2] in ("airdialogue", "babi", "movie_dialog", "ubuntu")]
        assert others == [], f"{cmd} imported {others}"
        # validating needs no numbers: numpy (about 50 ms of a 0.2 s run) is imported only to score
        assert ("numpy" in loaded) == (cmd == "score"), loaded


@pytest.mark.parametrize("form", [("--benchmark", "ubuntu"), ("--benchmark=ubuntu",)])
def test_flags_follow_the_chosen_benchmark_in_either_form(ubuntu_dir, tmp_path, form):
    np.save(tmp_path / "s.npy", np.zeros((40, 10), np.float32))
    r = run_cli("validate", tmp_path / "s.npy", *form, "--data", ubuntu_dir, "--split", "test", "--candidate-limit=4")
    assert r.returncode == 2
    assert r.stderr.strip().splitlines()[-1] == ("dialeval: error: --candidate-limit does not apply to benchmark "
                                                 "ubuntu (it applies to: dstc6)")
    r = run_cli("validate", tmp_path / "s.npy", *form, "--data", ubuntu_dir, "--split", "test")
    assert r.returncode == 0, r.stderr


def test_help_lists_every_benchmarks_flags():
    r = run_cli("score", "--help")
    assert r.returncode == 0
    assert "2 usage or I/O error, 3 internal error" in " ".join(r.stdout.split())  # every exit code the README lists
    for flag in ("--lenient", "--candidate-limit", "--flight-distance", "--exact-name"):
        assert flag in r.stdout
    r = run_cli("validate", "--help")
    assert "--lenient" in r.stdout and "--flight-distance" not in r.stdout  # scoring-only options: score only


def test_the_top_level_help_points_at_the_benchmark_list_and_names_no_subset():
    # before: "... end-to-end dialog benchmarks (DSTC6, bAbI, Movie Dialog, Ubuntu v2, AirDialogue)": 5 of 11
    from dialeval.benchmarks import registry

    r = run_cli("--help")
    text = " ".join(r.stdout.split())
    assert r.returncode == 0 and "(`dialeval benchmarks` lists every one with its splits, metrics and options)" in text
    description = text.split("Options:")[0].lower()
    assert [n for n in registry.names() if n in description.replace("dialeval benchmarks", "")] == []


def test_the_data_option_help_names_no_benchmark():
    """--data's help is generic: a new benchmark needs no edit there (it used to list seven names by hand)."""
    from dialeval.benchmarks import registry
    from dialeval.commands.score import score_cmd, validate_cmd

    for cmd in (score_cmd, validate_cmd):
        help_text = next(p.help for p in cmd.params if p.name == "data")
        assert help_text and "sample:NAME" in help_text
        named = [n for n in registry.names() if n in help_text.lower()]
        assert named == [], named


def test_the_challenge_option_is_data_for_every_benchmark_and_its_help_says_so(tmp_path):
    """--challenge is resolve_data's other name for --data (any benchmark; a folder, release name or sample:NAME),
    kept from the DSTC6-only versions: its help must not call it a DSTC6 challenge directory, and it scores a
    non-DSTC6 benchmark exactly as --data does."""
    from pathlib import Path

    from dialeval.commands.score import score_cmd, validate_cmd

    for cmd in (score_cmd, validate_cmd):
        help_text = next(p.help for p in cmd.params if p.name == "challenge")
        assert help_text.startswith("Another name for --data") and "every benchmark" in help_text
        assert "DSTC6 challenge directory" not in help_text
    samples = Path(__file__).resolve().parents[1] / "submissions" / "samples" / "babi"
    run = samples / "example-run.json"
    by_data = run_cli("score", run, "--benchmark", "babi", "--data", samples, "--json")
    by_challenge = run_cli("score", run, "--benchmark", "babi", "--challenge", samples, "--json")
    assert by_data.returncode == by_challenge.returncode == 0, by_challenge.stderr
    assert json.loads(by_challenge.stdout)["results"] == json.loads(by_data.stdout)["results"]
