"""Ubuntu v2: CSV readers, the fixture writer, the benchmark (known answers, bad input), the TF-IDF baseline,
and hits@k / MRR / R_N@k against ranx on random runs with unique scores."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest

from dialeval import metrics
from dialeval.benchmarks.base import Request
from dialeval.benchmarks.registry import get
from dialeval.core.errors import UsageError
from dialeval.formats.ubuntu import (
    CANDIDATE_IDS,
    EVAL_HEADER,
    read_eval,
    read_train,
    turns,
)
from dialeval.simulator.ubuntu import write_fixture

HEADER = ",".join(EVAL_HEADER)


def write_eval(path: Path, rows: list[list[str]], header: str = HEADER) -> Path:
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write(header + "\r\n")
        w = csv.writer(fh, lineterminator="\r\n")
        w.writerows(rows)
    return path


def row(i: int, same_as_gt: int | None = None) -> list[str]:
    gt = f"try sudo apt-get install foo{i} __eou__"
    ds = [gt if j == same_as_gt else f"no idea, sorry {i}-{j} __eou__" for j in range(9)]
    return [f'my "foo{i}" is broken, help __eou__ __eot__ which version? __eou__ __eot__', gt, *ds]


@pytest.fixture
def data(tmp_path):
    d = tmp_path / "ubuntu"
    d.mkdir()
    write_eval(d / "test.csv", [row(i, same_as_gt=3 if i == 2 else None) for i in range(1, 5)])
    write_eval(d / "valid.csv", [row(i) for i in range(1, 3)])
    return d


def evaluate(data, sub, split="test", ties="pessimistic", scoring=True):
    ev = get("ubuntu").evaluate(Request(sub, data, split=split, ties=ties, scoring=scoring))
    return ev


def values(ev):
    b = get("ubuntu")
    return {m.name: m.compute(ev.table) for m in metrics.resolve(b.metrics_for(ev))}


# ---- reader and fixture ------------------------------------------------------------------------------


def test_reader_keeps_texts_and_quoting(data):
    e = read_eval(data / "test.csv")
    assert len(e) == 4 and e.split == "test"
    assert e.item_ids() == ["test:1", "test:2", "test:3", "test:4"]
    assert e.contexts[0] == 'my "foo1" is broken, help __eou__ __eot__ which version? __eou__ __eot__'
    assert e.candidates[1][0] == e.candidates[1][4]  # Distractor_3 repeats the ground truth text
    assert turns(e.contexts[0]) == ['my "foo1" is broken, help __eou__', "which version? __eou__"]
    assert CANDIDATE_IDS == ("gt", "d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8")


def test_wrong_header_names_file_and_line(tmp_path):
    p = write_eval(tmp_path / "test.csv", [row(1)], header=HEADER.replace("Distractor_8", "Distractor_9"))
    with pytest.raises(UsageError, match=r"test\.csv:1: header is .*expected Context,Ground Truth Utterance"):
        read_eval(p)


def test_wrong_column_count_names_the_line_after_multiline_fields(tmp_path):
    r1 = row(1)
    r1[0] = "first line\nsecond line __eou__ __eot__"  # a quoted field over two physical lines
    p = write_eval(tmp_path / "test.csv", [r1, row(2)[:10]])
    with pytest.raises(UsageError, match=r"test\.csv:4: 10 columns, expected 11"):
        read_eval(p)


def test_train_labels(tmp_path):
    p = tmp_path / "train.csv"
    p.write_text("Context,Utterance,Label\r\nhi __eou__ __eot__,hello __eou__,1.0\r\na __eou__ __eot__,b __eou__,0\r\n")
    t = read_train(p)
    assert t.labels == [1, 0] and t.utterances == ["hello __eou__", "b __eou__"]
    p.write_text("Context,Utterance,Label\r\nhi __eou__ __eot__,hello __eou__,yes\r\n")
    with pytest.raises(UsageError, match=r"train\.csv:2: label 'yes' is not 1\.0, 0\.0, 1 or 0"):
        read_train(p)
    p.write_text("Context,Utterance\r\n")
    with pytest.raises(UsageError, match=r"train\.csv:1: header"):
        read_train(p)


def test_fixture_is_deterministic_and_in_the_exact_layout(tmp_path):
    a = write_fixture(tmp_path / "a", seed=7, n_train=60, n_valid=30, n_test=40, same_text_rate=0.1)
    b = write_fixture(tmp_path / "b", seed=7, n_train=60, n_valid=30, n_test=40, same_text_rate=0.1)
    c = write_fixture(tmp_path / "c", seed=8, n_train=60, n_valid=30, n_test=40, same_text_rate=0.1)
    for name in ("train", "valid", "test"):
        assert a[name].read_bytes() == b[name].read_bytes()
        assert a[name].read_bytes() != c[name].read_bytes()
    raw = a["test"].read_bytes()
    assert raw.startswith((HEADER + "\r\n").encode())
    assert b'"' in raw  # minimal quoting: fields with commas or quotes are quoted
    e = read_eval(a["test"])
    assert len(e) == 40
    assert all(c.endswith(" __eot__") for c in e.contexts)
    assert all(t.endswith(" __eou__") for c in e.contexts for t in turns(c))
    assert all(x.endswith(" __eou__") and "__eot__" not in x for r in e.candidates for x in r)
    assert any(r[0] in r[1:] for r in e.candidates)  # a distractor equal to the ground truth
    t = read_train(a["train"])
    assert set(t.labels) == {0, 1}
    assert a["train"].read_text(encoding="utf-8").splitlines()[1].endswith((",1.0", ",0.0"))


# ---- the benchmark: known answers --------------------------------------------------------------------


def test_registry_splits_and_metrics(data):
    b = get("ubuntu")
    assert b.name == "ubuntu" and b.splits(data) == ["valid", "test"]
    assert b.default_metrics == ("r2@1", "r10@1", "r10@2", "r10@5")


def test_npy_known_answers(data, tmp_path):
    # ranks of gt among 10: 1, 2 (d0 above), 5, 10; among the first 2: 1, 2, 1, 2
    m = np.array(
        [
            [9, 1, 2, 3, 4, 5, 6, 7, 8, 0],
            [8, 9, 1, 2, 3, 4, 5, 6, 7, 0],
            [5, 1, 9, 8, 7, 6, 0, 0, 0, 0],
            [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
        ],
        dtype=np.float32,
    )
    np.save(tmp_path / "s.npy", m)
    ev = evaluate(data, tmp_path / "s.npy")
    assert ev.valid and ev.problems == []
    assert ev.table.item_id.tolist() == ["test:1", "test:2", "test:3", "test:4"]
    assert ev.table.gold_rank.tolist() == [1, 2, 5, 10]
    assert ev.table.nested[2][0].tolist() == [1, 2, 1, 2]
    assert values(ev) == {"r2@1": 0.5, "r10@1": 0.25, "r10@2": 0.5, "r10@5": 0.75}
    assert ev.signature_fields == {"ties": "pessimistic", "text": "lower"}
    assert ev.splits == ["test"] and ev.groups == ["test.csv"]
    assert ev.submission["format"] == "npy"
    assert ev.data.files == ["test.csv"] and len(ev.data.digest) == 8
    assert ev.table.nested[5][0].tolist() == [1, 2, 4, 5]  # among gt, d0 ... d3
    assert metrics.get("r5@1").compute(ev.table) == 0.25


def test_headerless_csv_and_json_forms_agree_with_npy(data, tmp_path):
    rng = np.random.default_rng(3)
    m = rng.random((4, 10))
    m[1, :] = 0.25  # a fully tied row
    np.save(tmp_path / "s.npy", m)
    (tmp_path / "s.csv").write_text("\n".join(",".join(repr(float(x)) for x in r) for r in m) + "\n")
    doc = {"format": "scores", "items": {f"test:{i + 1}": dict(zip(CANDIDATE_IDS, r.tolist(), strict=True)) for i, r in enumerate(m)}}
    (tmp_path / "s.json").write_text(json.dumps(doc))
    ranked = [
        {"dialog_id": f"test:{i + 1}", "lst_candidate_id": [{"candidate_id": CANDIDATE_IDS[j], "rank": k + 1}
                                                            for k, j in enumerate(np.argsort(-r, kind="stable"))]}
        for i, r in enumerate(m)
    ]
    (tmp_path / "r.json").write_text(json.dumps(ranked))
    for ties in ("pessimistic", "optimistic", "expected"):
        got = {name: values(evaluate(data, tmp_path / name, ties=ties)) for name in ("s.npy", "s.csv", "s.json")}
        assert got["s.npy"] == got["s.csv"] == got["s.json"]
    # the tied row under each policy: pessimistic rank 10, optimistic 1, expected 1 with 9 ties
    assert evaluate(data, tmp_path / "s.npy", ties="pessimistic").table.gold_rank[1] == 10
    ev = evaluate(data, tmp_path / "s.npy", ties="expected")
    assert (ev.table.gold_rank[1], ev.table.ties[1]) == (1, 9)
    assert ev.signature_fields["ties"] == "expected"
    # a rank submission of the stable order is the optimistic reading of that tie (gt listed first)
    assert values(evaluate(data, tmp_path / "r.json")) == values(evaluate(data, tmp_path / "s.npy", ties="optimistic"))


def test_json_may_cover_both_splits(data, tmp_path):
    doc = {"format": "scores", "items": {f"{s}:{i}": {"gt": 1, "d0": 0} for s, n in (("valid", 2), ("test", 4)) for i in range(1, n + 1)}}
    (tmp_path / "s.json").write_text(json.dumps(doc))
    ev = evaluate(data, tmp_path / "s.json", split="all")
    assert ev.splits == ["valid", "test"]
    assert ev.table.split.tolist() == ["valid"] * 2 + ["test"] * 4
    assert ev.table.group.tolist() == ["valid.csv"] * 2 + ["test.csv"] * 4
    assert ev.data.files == ["test.csv", "valid.csv"] and set(ev.data.split_digests) == {"valid", "test"}
    assert [p.code for p in ev.problems] == ["unscored-candidate"]
    assert ev.table.gold_rank.tolist() == [1] * 6


def test_signature_says_raw_text_when_a_capital_appears(data, tmp_path):
    """releases.md: v2 circulates as raw text and as tokenized, stemmed and lemmatized text (lower-cased by the
    stemmer); the signature says ``text:raw`` when a text holds a capital, ``text:lower`` when it cannot tell."""
    np.save(tmp_path / "s.npy", np.ones((4, 10)))
    raw = tmp_path / "raw"
    raw.mkdir()
    write_eval(raw / "test.csv", [row(i) if i != 3 else [row(i)[0], "try Ubuntu's updater __eou__", *row(i)[2:]]
                                  for i in range(1, 5)])
    assert evaluate(data, tmp_path / "s.npy").signature_fields["text"] == "lower"
    assert evaluate(raw, tmp_path / "s.npy").signature_fields["text"] == "raw"
    assert evaluate(data, tmp_path / "s.npy").signature_fields["text"] == "lower"  # nothing carried over


def test_narrow_matrix_scores_first_n_only(data, tmp_path):
    np.save(tmp_path / "s.npy", np.array([[1, 0], [0, 1], [1, 0], [1, 1]], dtype=np.int64))
    ev = evaluate(data, tmp_path / "s.npy", ties="expected")
    assert ev.valid and [p.code for p in ev.problems] == ["wrong-shape"] and ev.problems[0].severity == "warning"
    assert get("ubuntu").metrics_for(ev) == ["r2@1"]
    assert values(ev) == {"r2@1": (1 + 0 + 1 + 0.5) / 4}
    assert ev.signature_fields == {"ties": "expected", "text": "lower", "nc": 2}
    with pytest.raises(UsageError, match="r10@1 needs ranks among the first 10"):
        metrics.get("r10@1").compute(ev.table)


def test_data_identity_follows_the_file(data, tmp_path):
    np.save(tmp_path / "s.npy", np.zeros((4, 10)))
    before = evaluate(data, tmp_path / "s.npy").data.digest
    write_eval(data / "test.csv", [row(i) for i in range(11, 15)])
    assert evaluate(data, tmp_path / "s.npy").data.digest != before


def test_validation_only(data, tmp_path):
    np.save(tmp_path / "s.npy", np.zeros((4, 10)))
    ev = evaluate(data, tmp_path / "s.npy", scoring=False)
    assert ev.table is None and ev.valid


# ---- bad input: one clear problem each -----------------------------------------------------------------


def only_problem(ev):
    errors = [p for p in ev.problems if p.severity == "error"]
    assert len(errors) == 1, [p.format() for p in ev.problems]
    assert "Traceback" not in errors[0].format()
    return errors[0]


def test_bad_csv_score_row_length(data, tmp_path):
    (tmp_path / "s.csv").write_text("1,2,3,4,5,6,7,8,9,10\n1,2,3\n" + "1,2,3,4,5,6,7,8,9,10\n" * 2)
    p = only_problem(evaluate(data, tmp_path / "s.csv"))
    assert p.format() == "s.csv#/1: error [wrong-shape] line 2: 3 scores, but line 1 has 10"


def test_bad_csv_wrong_number_of_rows_or_columns(data, tmp_path):
    (tmp_path / "s.csv").write_text("1,2,3,4,5,6,7,8,9,10\n" * 3)
    assert only_problem(evaluate(data, tmp_path / "s.csv")).message == "3 lines, but the split has 4 items (one line per item, in order)"
    (tmp_path / "s.csv").write_text("1,2,3,4,5,6,7,8,9,10,11\n" * 4)
    assert only_problem(evaluate(data, tmp_path / "s.csv")).message == "11 scores per line, but each item has 10 candidates"


@pytest.mark.parametrize("bad,shown", [(np.nan, "nan"), (np.inf, "inf"), (-np.inf, "-inf")])
def test_bad_npy_non_finite(data, tmp_path, bad, shown):
    m = np.zeros((4, 10))
    m[2, 7] = bad
    np.save(tmp_path / "s.npy", m)
    p = only_problem(evaluate(data, tmp_path / "s.npy"))
    assert p.format() == f"s.npy#/2/7: error [score-not-finite] row 3, column 8: score {shown} is not a finite number"


def test_bad_csv_nan_names_the_line(data, tmp_path):
    (tmp_path / "s.csv").write_text("0,0,0,0,0,0,0,0,0,0\n" * 3 + "0,nan,0,0,0,0,0,0,0,0\n")
    assert only_problem(evaluate(data, tmp_path / "s.csv")).format().startswith("s.csv#/3/1: error [score-not-finite] line 4, column 2")


@pytest.mark.parametrize(
    "array,code",
    [(np.zeros((4, 10), bool), "wrong-dtype"), (np.zeros((4, 10), "U3"), "wrong-dtype"), (np.zeros(40), "wrong-shape"),
     (np.zeros((5, 10)), "wrong-shape"), (np.zeros((4, 1)), "wrong-shape")],
)
def test_bad_npy_shape_or_dtype(data, tmp_path, array, code):
    np.save(tmp_path / "s.npy", array)
    assert only_problem(evaluate(data, tmp_path / "s.npy")).code == code


def test_unknown_item_ids(data, tmp_path):
    doc = {"format": "scores", "items": {f"test:{i}": {"gt": 1, "d0": 0} for i in (1, 2, 3, 4, 5)}}
    (tmp_path / "s.json").write_text(json.dumps(doc))
    p = only_problem(evaluate(data, tmp_path / "s.json"))
    assert p.format() == 's.json#/items/test:5: error [unknown-dialog] item "test:5" is not an item of this split'
    ranked = [{"dialog_id": "valid:1", "lst_candidate_id": [{"candidate_id": "gt", "rank": 1}]}]
    (tmp_path / "r.json").write_text(json.dumps(ranked))
    p = only_problem(evaluate(data, tmp_path / "r.json"))
    # an id of the data's other split: left out unchecked, and with nothing of split test the one wrong-split error
    assert p.format() == ("submission: error [wrong-split] 1 of the 1 item ids that are not in split test belong to "
                          "split valid: score with --split valid")
    ranked.append({"dialog_id": "test:1", "lst_candidate_id": [{"candidate_id": "gt", "rank": 1}]})
    (tmp_path / "r.json").write_text(json.dumps(ranked))
    ev = evaluate(data, tmp_path / "r.json")
    assert ev.valid and [p.code for p in ev.problems if p.code != "missing-dialog"] == ["other-split"]
    assert ev.table.gold_rank.tolist()[0] == 1


def test_usage_errors(data, tmp_path):
    np.save(tmp_path / "s.npy", np.zeros((4, 10)))
    with pytest.raises(UsageError, match="a score matrix answers one split"):
        evaluate(data, tmp_path / "s.npy", split="all")
    with pytest.raises(UsageError, match="no split 'tst1'"):
        evaluate(data, tmp_path / "s.npy", split="tst1")
    with pytest.raises(UsageError, match="no valid.csv or test.csv"):
        evaluate(tmp_path, tmp_path / "s.npy")
    (data / "test.csv").write_text("Context,Utterance,Label\r\n")
    with pytest.raises(UsageError, match=r"test\.csv:1: header"):
        evaluate(data, tmp_path / "s.npy")


# ---- cross-check with ranx ---------------------------------------------------------------------------


def test_hits_mrr_and_recall_in_n_equal_ranx(tmp_path):
    ranx = pytest.importorskip("ranx")
    n = 300
    d = tmp_path / "d"
    d.mkdir()
    write_eval(d / "test.csv", [row(i) for i in range(1, n + 1)])
    rng = np.random.default_rng(11)
    m = rng.permutation(n * 10).reshape(n, 10).astype(np.float64) / 7.0  # unique scores
    np.save(tmp_path / "s.npy", m)
    ev = evaluate(d, tmp_path / "s.npy", ties="expected")
    qrels = ranx.Qrels({f"test:{i + 1}": {"gt": 1} for i in range(n)})
    run10 = ranx.Run({f"test:{i + 1}": dict(zip(CANDIDATE_IDS, r.tolist(), strict=True)) for i, r in enumerate(m)})
    run2 = ranx.Run({f"test:{i + 1}": dict(zip(CANDIDATE_IDS[:2], r[:2].tolist(), strict=True)) for i, r in enumerate(m)})
    want = ranx.evaluate(qrels, run10, ["hits@1", "hits@2", "hits@5", "mrr"])
    want2 = ranx.evaluate(qrels, run2, ["hits@1", "mrr"])
    for name, ours in (("hits@1", "r10@1"), ("hits@2", "r10@2"), ("hits@5", "r10@5")):
        assert math.isclose(metrics.get(ours).compute(ev.table), want[name], abs_tol=1e-12)
        assert math.isclose(metrics.get(name).compute(ev.table), want[name], abs_tol=1e-12)
    assert math.isclose(metrics.get("mrr").compute(ev.table), want["mrr"], abs_tol=1e-12)
    assert math.isclose(metrics.get("r2@1").compute(ev.table), want2["hits@1"], abs_tol=1e-12)


# ---- the TF-IDF baseline -----------------------------------------------------------------------------


def test_tfidf_baseline_end_to_end(tmp_path):
    from dialeval.baselines.ubuntu_tfidf import UbuntuTfidf, run

    paths = write_fixture(tmp_path / "d", seed=2, n_train=400, n_valid=20, n_test=200)
    out = run(tmp_path / "d", "test", tmp_path / "tfidf.npy")
    m = np.load(out)
    assert m.shape == (200, 10) and m.dtype == np.float32
    assert np.array_equal(m, UbuntuTfidf().fit(read_train(paths["train"])).score(read_eval(paths["test"])))
    assert run(tmp_path / "d", "test", tmp_path / "again.npy").read_bytes() == out.read_bytes()
    v = values(evaluate(tmp_path / "d", out, ties="pessimistic"))
    # chance: r2@1 0.5, r10@1 0.1, r10@2 0.2, r10@5 0.5; topical overlap puts the baseline well above it
    assert v["r10@1"] > 0.15 and v["r10@2"] > 0.3 and v["r10@5"] > 0.6 and v["r2@1"] > 0.55
    # a distractor with the ground truth's text scores the same: the pessimistic policy counts it against
    e = read_eval(paths["test"])
    dup = [i for i, r in enumerate(e.candidates) if r[0] in r[1:]]
    assert dup and all((m[i, 1:] == m[i, 0]).any() for i in dup)
