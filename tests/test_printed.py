"""``--print-as``: dialeval's numbers in another tool's printed layout (audit rows M17 and M41).

The DSTC6 cases score the real tst1 (../shared/data; they skip without it) with submissions built in tmp_path from
the real keys, and check the lines against an independent run of the official scorer's algorithm (per dialog an
array of 10 slots, ``gold in slots[:k]``, over the answer key).
"""

from __future__ import annotations

import json
import math
import random
import re

import numpy as np
import pytest
from conftest import REAL_CHALLENGE, ranking, run_cli, write_json

from dialeval.metrics.embedding import summarize
from dialeval.results.printed import embedding_lines, hed_dlg_spread, py2_str

OFFICIAL_LINE = re.compile(r"Precision @([125]): (\S+)")


def _official_precisions(sub: list[dict], key: list[dict], nb: int = 10) -> dict[int, float]:
    """The official scorer's computation, written from its published description (metrics.md §1)."""
    slots = {}
    for item in sub:
        arr = [None] * nb
        for e in item["lst_candidate_id"]:
            if int(e["rank"]) <= nb:
                arr[int(e["rank"]) - 1] = e["candidate_id"]
        slots[item["dialog_id"]] = arr
    gold = {it["dialog_id"]: next(e["candidate_id"] for e in it["lst_candidate_id"] if e["rank"] == 1) for it in key}
    return {k: sum(d in slots and g in slots[d][:k] for d, g in gold.items()) / len(gold) for k in (1, 2, 5)}


def _shuffled_run(tst1, out_dir, seed=6):
    """A seeded random ranking of every real tst1 item, in the official layout (``tst1/<stem>.answers.json``);
    returns, per task, (answer-file path, submission, key)."""
    rng = random.Random(seed)
    out = {}
    for f in sorted(tst1.glob("dialog-task*-tst1000.json")):
        task = int(f.name[len("dialog-task")])
        key_path = tst1 / f.name.replace(".json", ".answers.json")
        sub = []
        for it in json.loads(f.read_text()):
            ids = [c["candidate_id"] for c in it["candidates"]]
            rng.shuffle(ids)
            sub.append(ranking(it["dialog_id"], ids))
        path = write_json(out_dir / "tst1" / key_path.name, sub)
        out[task] = (path, sub, json.loads(key_path.read_text()))
    return out


def test_py2_str_writes_floats_as_the_python_2_scorer_printed_them():
    # Python 2.7: str(1/3.) == '0.333333333333', str(0.1 + 0.2) == '0.3', str(1.0) == '1.0', str(1e-05) == '1e-05'
    assert py2_str(1 / 3) == "0.333333333333"
    assert py2_str(2 / 3) == "0.666666666667"
    assert py2_str(0.1 + 0.2) == "0.3"
    assert py2_str(1.0) == "1.0" and py2_str(0.0) == "0.0"
    assert py2_str(0.487) == "0.487"
    assert py2_str(1e-05) == "1e-05"


@pytest.mark.realdata
def test_dstc6_official_layout_for_one_real_answer_file_is_exactly_three_lines(real_tst1, tmp_path):
    runs = _shuffled_run(real_tst1, tmp_path / "sub")
    path, sub, key = runs[3]
    r = run_cli("score", path, "--data", REAL_CHALLENGE, "--split", "tst1", "--task", "3",
                "--print-as", "dstc6-official")
    assert r.returncode == 0, r.stderr
    p = _official_precisions(sub, key)
    assert 0 < p[1] < p[2] < p[5] < 1  # a random ranking: the three numbers differ
    assert r.stdout == "".join(f"Precision @{k}: {p[k]!r}\n" for k in (1, 2, 5))  # k/1000: py2 str == repr
    sig = next(line for line in r.stderr.splitlines() if line.startswith("signature: "))
    assert "|print:dstc6-official|" in sig and "tasks:3|" in sig and "mode:strict" in sig


@pytest.mark.realdata
def test_dstc6_official_layout_for_the_real_split_heads_each_file(real_tst1, tmp_path):
    runs = _shuffled_run(real_tst1, tmp_path / "sub", seed=2017)
    r = run_cli("score", tmp_path / "sub", "--data", REAL_CHALLENGE, "--split", "tst1",
                "--print-as", "dstc6-official")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 5 * 4
    for task in range(1, 6):
        block = lines[(task - 1) * 4: task * 4]
        assert block[0] == f"==> tst1 task {task} <=="
        p = _official_precisions(*runs[task][1:])
        got = {int(m[1]): float(m[2]) for m in map(OFFICIAL_LINE.fullmatch, block[1:])}
        assert got == p
    # the same numbers as dialeval's own report (the layout changes nothing else)
    j = json.loads(run_cli("score", tmp_path / "sub", "--data", REAL_CHALLENGE, "--split", "tst1", "--json").stdout)
    own = {(rec["group"], rec["metric"]): rec["value"] for rec in j["results"] if rec["group"] != "all"}
    assert all(own[(str(t), f"p@{k}")] == _official_precisions(*runs[t][1:])[k] for t in range(1, 6) for k in (1, 2, 5))


@pytest.mark.realdata
def test_dstc6_official_layout_prints_lenient_numbers(real_tst1, tmp_path):
    """--lenient reproduces the scorer on a quirky file (ranks as strings, a rank past the 10 slots dropped):
    the official layout prints those numbers."""
    runs = _shuffled_run(real_tst1, tmp_path / "sub", seed=1)
    path, sub, key = runs[1]
    for item in sub:
        for e in item["lst_candidate_id"]:
            e["rank"] = str(e["rank"]) if e["rank"] < 3 else e["rank"] + 9  # "1", "2", then 12, 13, ...: dropped
    write_json(path, sub)
    r = run_cli("score", path, "--data", REAL_CHALLENGE, "--split", "tst1", "--task", "1", "--lenient",
                "--print-as", "dstc6-official")
    assert r.returncode == 0, r.stderr
    p = _official_precisions(sub, key)
    assert p[2] == p[5] < 1  # only two slots filled
    assert r.stdout == "".join(f"Precision @{k}: {p[k]!r}\n" for k in (1, 2, 5))
    assert "mode:lenient" in r.stderr and "print:dstc6-official" in r.stderr


@pytest.mark.parametrize("args, says", [
    (["--json"], "give --print-as or --json, not both"),
    (["--metrics", "mrr"], "prints p@1, p@2, p@5"),
    (["--benchmark", "ubuntu"], "not a layout of benchmark ubuntu"),
])
def test_print_as_misuse_is_one_usage_line(tiny_shared, args, says):
    sub = tiny_shared.split_dir / tiny_shared.answers_name(1)
    r = run_cli("score", sub, "--data", tiny_shared.root, "--print-as", "dstc6-official", *args)
    assert r.returncode == 2 and says in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert r.stdout == ""


# ---- embedding metrics: nlg-eval's and hed-dlg's printed lines (M41) ---------------------------------------
def test_hed_dlg_spread_is_1_96_population_std_over_n():
    v = np.array([0.2, 0.5, 0.9, 0.4])
    s = summarize("embedding-average", v)
    spread, std0 = hed_dlg_spread(s)
    assert std0 == pytest.approx(np.std(v))  # numpy's default ddof=0, as the script calls it
    assert spread == pytest.approx(1.96 * np.std(v) / 4)  # divided by n, not sqrt(n)
    half = s.ci95[1] - s.value  # dialeval's own interval: z * std(ddof=1) / sqrt(n)
    assert half == pytest.approx(1.959963984540054 * np.std(v, ddof=1) / math.sqrt(4))
    assert spread < half / 2


def test_embedding_lines_in_each_tools_layout():
    sums = {m: summarize(m, np.array(vals)) for m, vals in (
        ("embedding-average", [0.25, 0.75]), ("greedy-matching", [0.5, 0.5, np.nan]), ("vector-extrema", [0.1234567]))}
    assert embedding_lines(sums, "nlg-eval") == [
        "EmbeddingAverageCosineSimilarity: 0.500000", "EmbeddingAverageCosineSimilairty: 0.500000",
        "VectorExtremaCosineSimilarity: 0.123457", "GreedyMatchingScore: 0.500000"]
    # average: mean 0.5, std0 0.25, spread 1.96 * 0.25 / 2 = 0.245; greedy: the NaN pair is skipped (n = 2)
    assert embedding_lines(sums, "hed-dlg") == [
        "Embedding Average Score: 0.500000 +/- 0.245000 ( 0.250000 )",
        "Greedy Matching Score: 0.500000 +/- 0.000000 ( 0.000000 )",
        "Extrema Score: 0.123457 +/- 0.000000 ( 0.000000 )"]


def test_the_benchmark_list_names_each_print_layout():
    rows = {b["name"]: b for b in json.loads(run_cli("benchmarks", "--json").stdout)}
    assert rows["dstc6"]["print_as"] == ["dstc6-official"]
    assert rows["ubuntu"]["print_as"] == []
    text = run_cli("benchmarks").stdout
    assert "--print-as dstc6-official: the official DSTC6 Track 1 scorer's 'Precision @1:" in text
    tail = " ".join(text[text.index("embedding metrics (dialeval embed):"):].split())
    assert "--print-as nlg-eval: nlg-eval's lines" in tail and "1.96·std/n and std, std with ddof=0" in tail


@pytest.mark.needs("numba")
@pytest.mark.parametrize("tool", ["hed-dlg", "nlg-eval"])
def test_embed_prints_each_tools_lines_from_its_own_per_pair_values(tmp_path, tool):
    """Through the command: the lines on stdout follow from the per-pair values (``--per-pair``) by the tool's own
    arithmetic (numpy's std, ddof=0; 1.96; divided by n), the signatures on stderr name the layout."""
    vec = tmp_path / "vectors.txt"
    vec.write_text("the 0.1 0.9\nyou 0.8 0.2\ni 0.5 0.5\na 0.3 0.6\nfood -0.4 0.7\ngood 0.9 -0.1\n")
    hyps, refs = tmp_path / "hyps.txt", tmp_path / "refs.txt"
    hyps.write_text("i like the food\nyou a good\nthe the\ngood food you\nxyz\n")
    refs.write_text("a good food\nyou the\ni food\nthe a i\ngood\n")  # "xyz" has no vector: pair skipped (paper)
    r = run_cli("embed", "--hyp", hyps, "--ref", refs, "--vectors", vec, "--preset", tool, "--print-as", tool,
                "--per-pair", tmp_path / "pairs.jsonl")
    assert r.returncode == 0, r.stderr
    pairs = [json.loads(line) for line in (tmp_path / "pairs.jsonl").read_text().splitlines()]
    col = {m: np.array([p[m] for p in pairs if p[m] is not None]) for m in
           ("embedding-average", "greedy-matching", "vector-extrema")}
    if tool == "hed-dlg":
        want = [f"{name}: {v.mean():f} +/- {1.96 * np.std(v) / len(v):f} ( {np.std(v):f} )" for name, v in (
            ("Embedding Average Score", col["embedding-average"]), ("Greedy Matching Score", col["greedy-matching"]),
            ("Extrema Score", col["vector-extrema"]))]
    else:
        avg = f"{col['embedding-average'].mean():0.6f}"
        want = [f"EmbeddingAverageCosineSimilarity: {avg}", f"EmbeddingAverageCosineSimilairty: {avg}",
                f"VectorExtremaCosineSimilarity: {col['vector-extrema'].mean():0.6f}",
                f"GreedyMatchingScore: {col['greedy-matching'].mean():0.6f}"]
    assert r.stdout.splitlines() == want
    sigs = [line for line in r.stderr.splitlines() if line.startswith("embed|")]
    assert len(sigs) == 3 and all(f"|preset:{tool}|" in s and f"|print:{tool}|" in s for s in sigs)


def test_embed_print_as_beside_json_is_a_usage_error(tmp_path):
    (tmp_path / "h.txt").write_text("a\n")
    r = run_cli("embed", "--hyp", tmp_path / "h.txt", "--ref", tmp_path / "h.txt", "--json", "--print-as", "hed-dlg")
    assert r.returncode == 2 and "give --print-as or --json, not both" in r.stderr and r.stdout == ""
