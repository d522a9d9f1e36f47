"""A researcher's commands (score their runs, compare two systems, export per-item values, read --help): each as
typed, the wrong outcome before, the right one now. Real data where it matters (../shared/data: bAbI tst), the
shipped samples elsewhere."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from conftest import REPO, SHARED, run_cli

SAMPLE_RUN = REPO / "submissions" / "samples" / "dstc6" / "example-run.json"
BABI = SHARED / "data" / "babi-dialog"
BABI_FILES = {1: "dialog-babi-task1-API-calls", 2: "dialog-babi-task2-API-refine"}


def _babi() -> Path:
    if not (BABI / "dialog-babi-task1-API-calls-tst.txt").is_file():
        pytest.skip(f"real bAbI data not found at {BABI}")
    return BABI


def _babi_turns(task: int) -> list[tuple[str, str]]:
    """(item id, gold candidate id) of every bot turn of a real bAbI tst file, as the babi benchmark names them."""
    cands: dict[str, str] = {}
    for i, line in enumerate((BABI / "dialog-babi-candidates.txt").read_text().splitlines(), 1):
        cands.setdefault(line.split(" ", 1)[1], str(i))
    stem = f"{BABI_FILES[task]}-tst"
    conv, out = 1, []
    for line in (BABI / f"{stem}.txt").read_text().splitlines():
        if not line.strip():
            conv += 1
            continue
        lid, rest = line.split(" ", 1)
        if "\t" in rest:
            out.append((f"{stem}:{conv}:{lid}", cands[rest.split("\t")[1]]))
    return out


def _babi_run(path: Path, tasks, hit_rate: float, seed: int) -> Path:
    """A top-2 ranking of the real bAbI tst items of ``tasks``: the gold first on about ``hit_rate`` of them."""
    rng = random.Random(seed)
    run = []
    for task in tasks:
        for iid, gold in _babi_turns(task):
            other = str(rng.randint(1, 4212))
            other = other if other != gold else "1" if gold != "1" else "2"
            order = [gold, other] if rng.random() < hit_rate else [other, gold]
            run.append({"dialog_id": iid, "lst_candidate_id": [{"candidate_id": c, "rank": k + 1}
                                                                for k, c in enumerate(order)]})
    path.write_text(json.dumps(run))
    return path


def _swapped(path: Path, items: int | None = None) -> Path:
    """The dstc6 sample run with its first two ranks swapped on every item (its first ``items`` items only)."""
    run = json.loads(SAMPLE_RUN.read_text())[:items]
    for it in run:
        first, second = it["lst_candidate_id"][:2]
        first["rank"], second["rank"] = 2, 1
    path.write_text(json.dumps(run))
    return path


# ---- help ------------------------------------------------------------------------------------------------------
def test_contexts_help_gives_each_benchmarks_own_default():
    # before: `score --benchmark douban --help` said "[default: all]" (DSTC8's), while Douban counts mixed contexts
    r = run_cli("score", "--benchmark", "douban", "--help")
    assert r.returncode == 0
    text = " ".join(r.stdout.split())  # click wraps the help: one line of words
    contexts = text[text.index("--contexts [mixed|with-positive|all]"):]
    contexts = contexts[:contexts.index("]", contexts.index("[default:")) + 1]
    assert contexts.endswith("[default: dstc8: all; douban, ecommerce, ubuntu-v1: mixed]"), contexts


# ---- compare ---------------------------------------------------------------------------------------------------
def test_compare_takes_challenge_as_another_name_for_data(tmp_path):
    # before: "unknown option --challenge", though the README gives --challenge as --data's other name everywhere
    b = _swapped(tmp_path / "b.json")
    r = run_cli("compare", SAMPLE_RUN, b, "--challenge", "sample:dstc6", "--metric", "p@1", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["results"][0]["diff"] == pytest.approx(0.8)


def test_compare_says_how_many_items_a_run_leaves_out(tmp_path):
    # before: a one-item run against the full sample run was compared on all 10 items (9 silently misses) under
    # "the items both runs have"; now the misses stay (the numbers are score's) and a line counts them
    b = _swapped(tmp_path / "one.json", items=1)
    r = run_cli("compare", SAMPLE_RUN, b, "--data", "sample:dstc6", "--metric", "p@1")
    assert r.returncode == 0, r.stderr
    assert "units: 10 " in r.stdout
    assert f"note: B: 9 of the 10 items scored are not in {b}: each counts as a miss" in r.stdout
    assert "note: A:" not in r.stdout
    out = json.loads(run_cli("compare", SAMPLE_RUN, b, "--data", "sample:dstc6", "--metric", "p@1",
                             "--json").stdout)
    assert out["missing"] == {"a": 0, "b": 9} and len(out["notes"]) == 1


def test_compare_task_scopes_runs_given_as_files(tmp_path):
    # before: no --task; a task-1 run against a task-1+2 run was compared on both tasks' 15,400 items, the task-1
    # run's 9,464 task-2 items as misses
    _babi()
    a = _babi_run(tmp_path / "a.json", (1, 2), 0.9, 1)
    b = _babi_run(tmp_path / "b.json", (1,), 0.8, 2)
    r = run_cli("compare", a, b, "--benchmark", "babi", "--data", BABI, "--task", "1", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    acc = next(x for x in out["results"] if x["metric"] == "per-response-accuracy")
    assert acc["n"] == len(_babi_turns(1)) and out["missing"] == {"a": 0, "b": 0}
    for run, value in ((a, acc["a"]), (b, acc["b"])):
        s = json.loads(run_cli("score", run, "--benchmark", "babi", "--data", BABI, "--task", "1", "--json").stdout)
        rec = next(x for x in s["results"] if x["metric"] == "per-response-accuracy" and x["group"] == "1")
        assert value == pytest.approx(rec["value"], abs=1e-6)
    assert "|tasks:1|" in acc["signature"]


def test_compare_ties_scores_score_based_files_under_the_policy(tmp_path):
    # before: no --ties; score-based runs were always compared under pessimistic ties, whatever `score --ties` gave
    _babi()
    runs = []
    for name, top in (("a", lambda k: 1.0 if k % 2 else 0.5), ("b", lambda k: 1.0)):  # a: half the golds tied; b: all
        items = {iid: {gold: 1.0, "1" if gold != "1" else "2": top(k)} for k, (iid, gold) in enumerate(_babi_turns(1))}
        runs.append(tmp_path / f"{name}.json")
        runs[-1].write_text(json.dumps({"format": "scores", "items": items}))
    r = run_cli("compare", *runs, "--benchmark", "babi", "--data", BABI, "--ties", "expected", "--task", "1",
                "--metric", "per-response-accuracy", "--json")
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)["results"][0]
    assert (res["a"], res["b"]) == (pytest.approx(0.75, abs=1e-6), pytest.approx(0.5, abs=1e-6))
    assert "|ties:expected|" in res["signature"]
    # a rank-based file has no ties: the error names it
    ranked = _babi_run(tmp_path / "ranked.json", (1,), 0.7, 3)
    r = run_cli("compare", runs[0], ranked, "--benchmark", "babi", "--data", BABI, "--ties", "expected")
    assert r.returncode == 2 and r.stderr.startswith(f"dialeval: error: {ranked}: --ties expected does not apply")


def test_compare_invalid_file_is_the_submissions_fault_and_its_hint_repeats_the_data(tmp_path):
    # before: exit 2, and "see `dialeval validate bad.json`", which validates on the embedded default instead
    bad = json.loads(SAMPLE_RUN.read_text())
    bad[0]["lst_candidate_id"][0]["rank"] = 0
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    r = run_cli("compare", SAMPLE_RUN, path, "--data", "sample:dstc6")
    assert r.returncode == 1, r.stderr
    assert f"see `dialeval validate {path} --data sample:dstc6`" in r.stderr
    v = run_cli("validate", path, "--data", "sample:dstc6")
    assert v.returncode == 1 and "rank-out-of-range" in v.stdout + v.stderr


def test_compare_names_the_file_a_usage_error_is_about(tmp_path):
    # before: "give --split for a single result file (...)", without saying which of the two runs
    other = tmp_path / "other.json"
    other.write_text(json.dumps([{"dialog_id": "not-an-item", "lst_candidate_id": [{"candidate_id": "x", "rank": 1}]}]))
    # on the embedded default (four test splits: the sample's one test split would make it tst1's invalid run)
    r = run_cli("compare", other, SAMPLE_RUN)
    assert r.returncode == 2
    assert r.stderr.strip().splitlines()[-1].startswith(f"dialeval: error: {other}: give --split"), r.stderr
    r = run_cli("compare", SAMPLE_RUN, other, "--data", "sample:dstc6", "--challenge", "sample:babi")
    assert r.stderr.strip() == "dialeval: error: give --data or --challenge, not both"


def test_compare_task_or_ties_with_registry_runs_is_a_usage_error(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "a.json").write_text(SAMPLE_RUN.read_text())
    (runs / "a.team.json").write_text('{"team": "A"}')
    _swapped(runs / "b.json")
    (runs / "b.team.json").write_text('{"team": "B"}')
    g = run_cli("grade", runs, "--data", "sample:dstc6", "--registry", tmp_path / "reg")
    assert g.returncode == 0, g.stderr
    for flag, value in (("--task", "1"), ("--ties", "expected")):
        r = run_cli("compare", "1", "2", "--registry", tmp_path / "reg", flag, value)
        assert r.returncode == 2 and f"{flag} applies to runs given as files" in r.stderr, r.stderr


def test_compare_counts_missing_contexts_and_examples_exactly(tmp_path):
    # Douban said one missing-dialog warning for all its missing contexts, and DSTC7 stopped counting missing
    # examples at 20 (a code-less line): a count of the missing items read from them was short
    labels = [line.split("\t", 1)[0] for line in (REPO / "submissions/samples/douban/test.txt").read_text().splitlines()]
    scores = {f"test:{c + 1}": {str(k + 1): float(labels[10 * c + k]) for k in range(10)} for c in range(3)}
    run = tmp_path / "three.json"
    run.write_text(json.dumps({"format": "scores", "items": scores}))
    r = run_cli("compare", REPO / "submissions/samples/douban/example-scores.txt", run, "--benchmark", "douban",
                "--data", "sample:douban", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["missing"] == {"a": 0, "b": 9}

    sample = json.loads((REPO / "submissions/samples/dstc7/ubuntu_dev_subtask_1.json").read_text())
    data = [dict(sample[i % len(sample)], **{"example-id": 5000 + i}) for i in range(30)]
    folder = tmp_path / "dstc7"
    folder.mkdir()
    (folder / "ubuntu_dev_subtask_1.json").write_text(json.dumps(data))
    ranked = [{"example-id": ex["example-id"], "candidate-ranking": [
        {"candidate-id": o["candidate-id"], "confidence": 1.0 / (k + 1)} for k, o in enumerate(ex["options-for-next"])]}
        for ex in data]
    full, one = folder / "full" / "Ubuntu_subtask_1.json", folder / "one" / "Ubuntu_subtask_1.json"
    for path, content in ((full, ranked), (one, ranked[:1])):
        path.parent.mkdir()
        path.write_text(json.dumps(content))
    r = run_cli("compare", full, one, "--benchmark", "dstc7", "--data", folder / "ubuntu_dev_subtask_1.json",
                "--metric", "r@1", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["missing"] == {"a": 0, "b": 29}


# ---- score -----------------------------------------------------------------------------------------------------
def test_score_per_item_on_standard_output_holds_the_lines_alone():
    # before: `--per-item -` printed the table (or the JSON report) and then the JSON lines on standard output
    r = run_cli("score", SAMPLE_RUN, "--data", "sample:dstc6", "--per-item", "-")
    assert r.returncode == 0, r.stderr
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    assert len(lines) == 10 and {"item_id", "gold_rank"} <= set(lines[0])
    assert "signature: dstc6|" in r.stderr  # the table went to standard error
    for more in (("--json",), ("--csv",), ("--out", "-")):
        r = run_cli("score", SAMPLE_RUN, "--data", "sample:dstc6", "--per-item", "-", *more)
        assert r.returncode == 2 and "would both write to standard output" in r.stderr, r.stderr


def test_an_itemset_run_of_some_tasks_is_pointed_at_task(tmp_path):
    # before: only DSTC6 said so; a bAbI run of task 1 alone got its other tasks' items as misses and no hint
    _babi()
    run = _babi_run(tmp_path / "t1.json", (1,), 0.9, 4)
    r = run_cli("score", run, "--benchmark", "babi", "--data", BABI, "--json")
    assert r.returncode == 0, r.stderr
    hints = [p for p in json.loads(r.stdout)["problems"] if p["code"] == "task-hint"]
    assert len(hints) == 1 and "--task 1 scores just those" in hints[0]["message"]
    r = run_cli("score", run, "--benchmark", "babi", "--data", BABI, "--task", "1", "--json")
    assert not [p for p in json.loads(r.stdout)["problems"] if p["code"] == "task-hint"]


def test_rank_and_compare_sign_a_one_split_board_alike(tmp_path):
    # before: `rank` signed split:all (and said "on all") for a board of tst1 runs, `compare` of the same runs split:tst1
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "a.json").write_text(SAMPLE_RUN.read_text())
    (runs / "a.team.json").write_text('{"team": "A"}')
    _swapped(runs / "b.json")
    (runs / "b.team.json").write_text('{"team": "B"}')
    assert run_cli("grade", runs, "--data", "sample:dstc6", "--registry", tmp_path / "reg").returncode == 0
    rank = json.loads(run_cli("rank", "--registry", tmp_path / "reg", "--metric", "p@1", "--json").stdout)
    comp = json.loads(run_cli("compare", "1", "2", "--registry", tmp_path / "reg", "--metric", "p@1",
                              "--json").stdout)
    assert rank["scope"] == comp["scope"] == "tst1"
    head = comp["results"][0]["signature"].split("|metric:")[0]
    assert head.endswith("|split:tst1") and rank["signature"].startswith(head + "|metric:p@1|"), rank["signature"]


@pytest.mark.needs("numba")
def test_compare_gives_each_metrics_units_when_they_differ(tmp_path):
    # before: "units: 3 (3 clusters)" for p@1 too, though only the embedding metric left items out (p@1 had 10)
    vectors = tmp_path / "vectors.txt"
    vectors.write_text("the 0.1 0.9\nyou 0.8 0.2\ni 0.5 0.5\na 0.3 0.6\n")
    b = _swapped(tmp_path / "b.json")
    r = run_cli("compare", SAMPLE_RUN, b, "--data", "sample:dstc6", "--metric", "embedding-average,p@1",
                "--vectors", vectors, "--json")
    assert r.returncode == 0, r.stderr
    n = {x["metric"]: (x["n"], x["clusters"]) for x in json.loads(r.stdout)["results"]}
    assert n["p@1"] == (10, 10) and n["embedding-average"][0] < 10
    r = run_cli("compare", SAMPLE_RUN, b, "--data", "sample:dstc6", "--metric", "embedding-average,p@1",
                "--vectors", vectors)
    ea = n["embedding-average"]
    assert f"units: {ea[0]} ({ea[1]} clusters) for embedding-average, 10 (10 clusters) for p@1;" in r.stdout, r.stdout


def test_baseline_run_on_the_babi_release_says_what_to_run(tmp_path):
    # before: "split 'tst' not found in challenge .../babi-dialog (available: none)"
    data = _babi()
    r = run_cli("baseline", "run", "rule-based", "--challenge", data, "--split", "tst", "--out", tmp_path / "x.json")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "holds bAbI dialog text files, not DSTC6 split folders" in r.stderr
    assert f"dialeval reproduce babi --data {data}" in r.stderr and "dialeval convert babi-to-dstc6" in r.stderr
    assert not (tmp_path / "x.json").exists()


def test_per_dialog_accuracy_records_count_conversations(tmp_path):
    # before: per-dialog accuracy's records gave n = 5,936 (task 1's bot turns) for its 1,000 conversations, though
    # the value is a share of conversations (and rank and compare count conversations)
    _babi()
    run = _babi_run(tmp_path / "run.json", (1, 2), 0.9, 5)
    r = run_cli("score", run, "--benchmark", "babi", "--data", BABI, "--task", "1,2", "--json")
    assert r.returncode == 0, r.stderr
    n = {(x["group"], x["average"], x["metric"]): x["n"] for x in json.loads(r.stdout)["results"]}
    assert n[("1", None, "per-dialog-accuracy")] == 1000 and n[("1", None, "per-response-accuracy")] == 5936
    assert n[("all", "micro", "per-dialog-accuracy")] == 2000
    assert n[("all", "micro", "per-response-accuracy")] == 5936 + 9464
    comp = json.loads(run_cli("compare", run, run, "--benchmark", "babi", "--data", BABI, "--task", "1,2",
                              "--metric", "per-dialog-accuracy", "--json").stdout)
    assert comp["results"][0]["n"] == n[("all", "micro", "per-dialog-accuracy")]


def test_a_reproduced_table_signs_its_rows_as_score_does(tmp_path):
    # before: babi-table2.json/.md rows carried no signature: no data identity, nothing to match a paper table's
    # number with `dialeval score`'s
    data = _babi()
    r = run_cli("reproduce", "babi", "--data", data, "--out", tmp_path / "t", "--models", "rule-based", "--tasks", "1")
    assert r.returncode == 0, r.stderr
    rows = json.loads((tmp_path / "t" / "babi-table2.json").read_text())
    run = _babi_run(tmp_path / "run.json", (1,), 1.0, 6)
    s = json.loads(run_cli("score", run, "--benchmark", "babi", "--data", data, "--task", "1", "--json").stdout)
    scored = next(x["signature"] for x in s["results"] if x["metric"] == "per-response-accuracy" and x["group"] == "1")
    row = next(x for x in rows if x["split"] == "tst")
    # the number signed as score signs it, then what made it: model, its settings' digest, seed
    assert row["signature"].startswith(scored.partition("|v:")[0] + "|model:rule-based|params:")
    assert "|data:babi-dialog/tst#" in scored and row["signature"].endswith("|seed:0|" + scored.rpartition("|")[2])
    assert f"- rule-based T1 tst: `{row['signature']}`" in (tmp_path / "t" / "babi-table2.md").read_text()
    # a row over the first conversations only says so
    r = run_cli("reproduce", "babi", "--data", data, "--out", tmp_path / "s", "--models", "rule-based", "--tasks", "1",
                "--max-conversations", "3")
    assert r.returncode == 0, r.stderr
    short = next(x for x in json.loads((tmp_path / "s" / "babi-table2.json").read_text()) if x["split"] == "tst")
    assert short["signature"] == row["signature"].replace("|model:", "|convs:3|model:")


def test_compare_counts_an_invalid_files_errors_as_validate_does(tmp_path):
    # before: "invalid submission (21 errors)" where validate says 20 (it counted the "... more not listed" note)
    run = json.loads(SAMPLE_RUN.read_text())
    run += [{"dialog_id": f"unknown-{i}", "lst_candidate_id": [{"candidate_id": "x", "rank": 1}]} for i in range(25)]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(run))
    v = run_cli("validate", bad, "--data", "sample:dstc6", "--json")
    errors = json.loads(v.stdout)["counts"]["errors"]
    r = run_cli("compare", SAMPLE_RUN, bad, "--data", "sample:dstc6")
    assert r.returncode == 1 and f"invalid submission ({errors} errors)" in r.stderr, (errors, r.stderr)


def test_stats_on_the_babi_release_says_it_describes_the_dstc6_layout():
    # before: ".../babi-dialog: no dialog-task*.json dataset files in its split folders"
    data = _babi()
    r = run_cli("stats", data)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "holds bAbI dialog text files, not DSTC6 split folders" in r.stderr
    assert f"dialeval convert babi-to-dstc6 --data {data}" in r.stderr


def test_compare_takes_the_benchmarks_own_options_for_files(tmp_path):
    # before: "unknown option --contexts": a Douban run could be compared only under mixed contexts, a DSTC6 one
    # only strictly, though score takes --contexts and --lenient
    douban = REPO / "submissions" / "samples" / "douban"
    tfidf = REPO / "submissions" / "baselines" / "samples" / "douban" / "tfidf" / "scores.txt"
    args = ("--benchmark", "douban", "--data", "sample:douban", "--metric", "map", "--json")
    for contexts in ("mixed", "with-positive"):
        r = run_cli("compare", douban / "example-scores.txt", tfidf, *args, "--contexts", contexts)
        assert r.returncode == 0, r.stderr
        res = json.loads(r.stdout)["results"][0]
        s = json.loads(run_cli("score", tfidf, "--benchmark", "douban", "--data", "sample:douban", "--contexts",
                               contexts, "--json").stdout)
        rec = next(x for x in s["results"] if x["metric"] == "map" and x["group"] != "all")
        assert (res["n"], res["b"]) == (rec["n"], pytest.approx(rec["value"], abs=1e-6))
        assert f"|contexts:{contexts}|" in res["signature"]
    r = run_cli("compare", douban / "example-scores.txt", tfidf, *args, "--protocols")
    assert r.returncode == 2 and "unknown option --protocols" in r.stderr
