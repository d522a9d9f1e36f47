"""Douban, E-commerce and Ubuntu v1 (the SMN/DAM/MSN TSV form): every metric against hand computations under
every protocol (--contexts x --ties), DAM's scorer rebuilt from its description, and the issue's examples."""

from __future__ import annotations

import itertools
import json
import random
from fractions import Fraction as F
from pathlib import Path

import numpy as np
import pytest

from dialeval.api import score
from dialeval.core.errors import UsageError
from dialeval.metrics.selection import average_precision, context_metrics, precision_at_1, recall_at_k, reciprocal_rank

METRICS = ("map", "mrr", "p@1", "r10@1", "r10@2", "r10@5")


def write_data(path: Path, labels: list[list[int]], seed: int = 0) -> Path:
    """A data file: ten lines per context, each repeating its two-utterance context."""
    rng = random.Random(seed)
    lines = []
    for c, block in enumerate(labels):
        context = f"上下文 {c} 第一句\t上下文 {c} 第二句"
        for j, lab in enumerate(block):
            lines.append(f"{lab}\t{context}\t回复 {c}-{j} {rng.random():.3f}\n")
    path.write_text("".join(lines), encoding="utf-8")
    return path


def write_scores(path: Path, scores, labels=None) -> Path:
    flat = np.asarray(scores, float).reshape(-1)
    tail = [""] * len(flat) if labels is None else [f"\t{x}" for x in np.asarray(labels).reshape(-1)]
    path.write_text("".join(f"{v!r}{t}\n" for v, t in zip(flat.tolist(), tail)))
    return path


# Four contexts built so that each protocol moves the numbers:
#   C1: positives at 1 and 4; candidate 1 (positive) ties with candidate 2 (negative) at the top.
#   C2: no positive.  C3: ten positives.  C4: one positive (6) tied with 5 and 7 across the cut-off k = 2.
LABELS = [[1, 0, 0, 1, 0, 0, 0, 0, 0, 0], [0] * 10, [1] * 10, [0, 0, 0, 0, 0, 1, 0, 0, 0, 0]]
SCORES = [[0.9, 0.9, 0.8, 0.7] + [0.1] * 6, [0.5] * 10, [0.3, 0.2] * 5, [0.9, 0.1, 0.1, 0.1, 0.5, 0.5, 0.5, 0.1, 0.1, 0.1]]
# per context and tie policy: MAP, MRR, P@1, R10@1, R10@2, R10@5, worked out by hand (see the comments)
C1 = {  # pessimistic: positives at ranks 2 and 4; optimistic and input-order: 1 and 4
    "pessimistic": (F(1, 2), F(1, 2), 0, 0, F(1, 2), 1),  # AP = (1/2 + 2/4) / 2
    "optimistic": (F(3, 4), 1, 1, F(1, 2), F(1, 2), 1),  # AP = (1/1 + 2/4) / 2
    "input-order": (F(3, 4), 1, 1, F(1, 2), F(1, 2), 1),
    # expected: candidate 1 at rank 1 or 2: AP term (1 + 1/2) / 2, candidate 4: 2/4; RR (1 + 1/2) / 2
    "expected": (F(5, 8), F(3, 4), F(1, 2), F(1, 4), F(1, 2), 1),
}
C3 = {p: (1, 1, 1, F(1, 10), F(2, 10), F(5, 10)) for p in C1}
C4 = {  # one candidate above the block of three: the positive ranks 2, 3 or 4
    "pessimistic": (F(1, 4), F(1, 4), 0, 0, 0, 1),
    "optimistic": (F(1, 2), F(1, 2), 0, 0, 1, 1),
    "input-order": (F(1, 3), F(1, 3), 0, 0, 0, 1),
    "expected": (F(13, 36), F(13, 36), 0, 0, F(1, 3), 1),
}
ZERO = (0,) * 6


def hand(policy: str, contexts: str) -> dict[str, float]:
    rows = {"mixed": [C1, C4], "with-positive": [C1, C3, C4], "all": [C1, {policy: ZERO}, C3, C4]}[contexts]
    return {m: float(sum(F(r[policy][i]) for r in rows) / len(rows)) for i, m in enumerate(METRICS)}


@pytest.fixture
def files(tmp_path):
    return write_data(tmp_path / "test.txt", LABELS), write_scores(tmp_path / "scores.txt", SCORES)


@pytest.mark.parametrize("contexts", ["mixed", "with-positive", "all"])
@pytest.mark.parametrize("ties", ["pessimistic", "optimistic", "input-order", "expected"])
def test_every_metric_equals_the_hand_computation_under_every_protocol(files, ties, contexts):
    data, sub = files
    r = score(sub, benchmark="douban", data=data, ties=ties, options={"contexts": contexts})
    assert r.valid
    for m, want in hand(ties, contexts).items():
        assert r.value(m) == pytest.approx(want, abs=1e-12), m
    assert r.records[0]["n"] == {"mixed": 2, "with-positive": 3, "all": 4}[contexts]
    assert f"ties:{ties}|contexts:{contexts}" in r.signature.format()


def test_the_report_says_which_contexts_were_left_out_and_why(files):
    data, sub = files
    r = score(sub, benchmark="douban", data=data)
    assert "2 of 4 scored; 2 left out (1 without a positive, 1 without a negative)" in r.notes[0]


def test_expected_ties_are_the_mean_over_every_order_of_the_tied_candidates():
    rng = np.random.default_rng(4)
    for _ in range(60):
        s = rng.integers(0, 3, size=(1, 7)).astype(float)
        lab = rng.integers(0, 2, size=(1, 7)).astype(np.int8)
        got = context_metrics(s, lab, "expected", ks=(1, 2, 5))
        orders = [p for p in itertools.permutations(range(7)) if np.all(np.diff(s[0, list(p)]) <= 0)]
        for name, f in (("map", average_precision), ("mrr", reciprocal_rank), ("p@1", precision_at_1),
                        ("r7@2", lambda o: recall_at_k(o, 2)), ("r7@5", lambda o: recall_at_k(o, 5))):
            mean = np.mean([f(lab[:, list(p)])[0] for p in orders])
            assert got[name][0] == pytest.approx(mean, abs=1e-12), name


def dam_scorer(lines: list[str]) -> dict[str, float]:
    """DAM's Douban scorer as the reference page describes it (not its code): ``score<TAB>label`` lines in blocks
    of ten, contexts without a positive or without a negative skipped, a stable sort by score (ties keep the
    file's order), then MAP, MRR, P@1 and R10@k (positives in the top k / positives) averaged over contexts."""
    sums = dict.fromkeys(METRICS, 0.0)
    n = 0
    for start in range(0, len(lines), 10):
        block = [(float(s), int(lab)) for s, lab in (ln.split("\t") for ln in lines[start:start + 10])]
        positives = sum(lab for _, lab in block)
        if positives in (0, 10):
            continue
        ranked = [lab for _, lab in sorted(block, key=lambda x: x[0], reverse=True)]  # sorted() is stable
        n += 1
        hits, ap = 0, 0.0
        for i, lab in enumerate(ranked, 1):
            if lab:
                hits += 1
                ap += hits / i
        sums["map"] += ap / positives
        sums["mrr"] += 1 / (ranked.index(1) + 1)
        sums["p@1"] += ranked[0]
        for k in (1, 2, 5):
            sums[f"r10@{k}"] += sum(ranked[:k]) / positives
    return {m: v / n for m, v in sums.items()}


def test_input_order_with_mixed_contexts_is_dams_scorer(tmp_path):
    rng = random.Random(7)
    labels = [[int(rng.random() < q) for _ in range(10)] for q in [rng.choice([0, 0.1, 0.2, 0.5, 1]) for _ in range(300)]]
    data = write_data(tmp_path / "test.txt", labels)
    scores = [[round(rng.random(), 1) for _ in range(10)] for _ in labels]  # one decimal: many ties
    sub = write_scores(tmp_path / "dam.txt", scores, labels)
    r = score(sub, benchmark="douban", data=data, ties="input-order", options={"contexts": "mixed"})
    want = dam_scorer(sub.read_text().splitlines())
    for m in METRICS:
        assert r.value(m) == pytest.approx(want[m], abs=1e-12), m
    # and the policy matters on these scores: pessimistic is another number
    assert score(sub, benchmark="douban", data=data).value("map") < r.value("map")


def test_json_scores_keyed_by_context_id_give_the_same_numbers(files, tmp_path):
    data, sub = files
    doc = {"format": "scores", "items": {f"test:{c + 1}": {str(j + 1): v for j, v in enumerate(row)}
                                         for c, row in enumerate(SCORES)}}
    js = tmp_path / "scores.json"
    js.write_text(json.dumps(doc))
    a = score(js, benchmark="douban", data=data, ties="expected", options={"contexts": "all"})
    b = score(sub, benchmark="douban", data=data, ties="expected", options={"contexts": "all"})
    assert [x["value"] for x in a.records] == [x["value"] for x in b.records]
    del doc["items"]["test:1"]
    js.write_text(json.dumps(doc))
    r = score(js, benchmark="douban", data=data, options={"contexts": "all"})
    assert r.valid and [p.code for p in r.warnings] == ["missing-dialog"]
    assert r.value("map") == pytest.approx(float((0 + 0 + 1 + F(1, 4)) / 4))  # a missing context scores 0


def test_dam_labels_that_are_not_the_datas_mean_misaligned_files(files, tmp_path):
    data, _ = files
    shifted = [LABELS[1], LABELS[0], LABELS[2], LABELS[3]]
    r = score(write_scores(tmp_path / "dam.txt", SCORES, shifted), benchmark="douban", data=data)
    assert not r.valid and [p.code for p in r.errors] == ["labels-differ"]
    assert "line" not in r.errors[0].message  # which label differs would tell the gold


def test_problems_of_a_line_file_are_each_one_line(files, tmp_path):
    data, _ = files
    bad = tmp_path / "bad.txt"
    bad.write_text("0.5\n" * 20 + "nan\nx\n0.1\t0\n" + "0.2\n" * 17)
    r = score(bad, benchmark="douban", data=data)
    assert sorted(p.code for p in r.errors) == ["score-not-finite", "score-not-number", "wrong-shape"]
    short = tmp_path / "short.txt"
    short.write_text("0.5\n" * 39)
    r = score(short, benchmark="douban", data=data)
    assert [p.message for p in r.errors] == ["39 score lines, but the data has 40 lines (one score per data line, "
                                             "in the data's order)"]


def test_a_context_of_eleven_lines_is_a_data_error(tmp_path):
    data = write_data(tmp_path / "test.txt", [[1] + [0] * 9] * 3)
    lines = data.read_text(encoding="utf-8").splitlines(keepends=True)
    data.write_text("".join(lines[:10] + lines[9:10] + lines[10:29]), encoding="utf-8")  # 11 + 19 lines
    sub = write_scores(tmp_path / "s.txt", [0.1] * 30)
    with pytest.raises(UsageError, match=r"test.txt:11: its context differs from line 11's|test.txt:12: its context"):
        score(sub, benchmark="douban", data=data)


def test_ubuntu_v1_recall_in_two_uses_the_first_two_candidates(tmp_path):
    data = write_data(tmp_path / "test.txt", [[1] + [0] * 9] * 2)
    # context 1: gold above candidate 2 but below three later ones; context 2: gold tied with candidate 2
    sub = write_scores(tmp_path / "s.txt", [[0.5, 0.4, 0.9, 0.8, 0.7] + [0.0] * 5, [0.5, 0.5] + [0.0] * 8])
    for ties, r21 in (("pessimistic", 0.5), ("optimistic", 1.0), ("input-order", 1.0), ("expected", 0.75)):
        r = score(sub, benchmark="ubuntu-v1", data=data, ties=ties)
        assert r.metrics == ["r2@1", "r10@1", "r10@2", "r10@5"]
        assert r.value("r2@1") == r21 and r.value("r10@5") == 1.0


def test_the_issues_examples_work_as_written(files, cli):
    data, sub = files
    r = cli("score", "scores.txt", "--benchmark", "douban", "--data", "test.txt", "--contexts", "with-positive",
            "--ties", "input-order", cwd=data.parent)
    assert r.returncode == 0, r.stderr
    assert "douban|data:test#" in r.stdout and "ties:input-order|contexts:with-positive" in r.stdout
    assert "3 of 4 scored; 1 left out (1 without a positive)" in r.stdout
    r = cli("score", "scores.txt", "--benchmark", "ecommerce", "--data", "test.txt", "--json", cwd=data.parent)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["metrics"] == list(METRICS)
    assert {x["metric"]: x["value"] for x in doc["results"]}["map"] == pytest.approx(hand("pessimistic", "mixed")["map"])


def test_protocols_prints_every_context_and_tie_policy(files, cli):
    data, _ = files
    r = cli("score", "scores.txt", "--benchmark", "douban", "--data", "test.txt", "--protocols", cwd=data.parent)
    assert r.returncode == 0, r.stderr
    rows = [ln.split() for ln in r.stdout.splitlines() if ln.split()[:1] in (["mixed"], ["with-positive"], ["all"])]
    assert len(rows) == 12
    for contexts, ties, *nums, _n in rows:
        want = hand(ties, contexts)
        assert [float(x) for x in nums] == [round(want[m], 4) for m in METRICS]


def test_a_folder_of_splits_scores_the_split_the_submission_covers(tmp_path):
    write_data(tmp_path / "dev.txt", LABELS[:2] + LABELS[3:], seed=1)  # 3 contexts
    write_data(tmp_path / "test.txt", LABELS)  # 4 contexts
    lines = write_scores(tmp_path / "s.txt", SCORES)  # 40 lines: the test split's
    r = score(lines, benchmark="douban", data=tmp_path, options={"contexts": "all"})
    assert r.splits == ["test"] and r.value("map") == pytest.approx(hand("pessimistic", "all")["map"])
    doc = {"format": "scores", "items": {f"{s}:{c + 1}": {str(j + 1): v for j, v in enumerate(row)}
                                         for s, rows in (("dev", SCORES[:3]), ("test", SCORES)) for c, row in enumerate(rows)}}
    (tmp_path / "s.json").write_text(json.dumps(doc))
    r = score(tmp_path / "s.json", benchmark="douban", data=tmp_path)
    assert r.valid and r.splits == ["dev", "test"] and r.groups == ["dev.txt", "test.txt"]
    with pytest.raises(UsageError, match="give --split"):
        score(write_scores(tmp_path / "odd.txt", [[0.1] * 10] * 5), benchmark="douban", data=tmp_path)
