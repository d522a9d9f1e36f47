"""DSTC7 Track 1 / DSTC8 Track 2 (NOESIS): numbers against hand computations, the strict rules, ``--lenient``
against the official ``evaluations/metrics.py`` definitions (an oracle written here from the reference page's
description), the issue's example commands, and the stored reference runs re-scored bit for bit.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from dialeval.api import score, validate
from dialeval.baselines.dstc7 import BASELINES, REFERENCE_RUNS, rank_file, write_samples
from dialeval.core.errors import UsageError

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "submissions" / "samples"
STORED = REPO / "submissions" / "baselines"


def example(eid, options, correct, scenario=1, split="dev"):
    return {"data-split": split, "example-id": eid, "messages-so-far": [{"speaker": "participant_1", "utterance": "hi"}],
            "options-for-correct-answers": [{"candidate-id": c, "utterance": f"u {c}"} for c in correct],
            "options-for-next": [{"candidate-id": c, "utterance": f"u {c}"} for c in options], "scenario": scenario}


def ranking(eid, ids, confidences=None):
    conf = confidences or [round(1 - j / 1000, 3) for j in range(len(ids))]
    return {"example-id": eid, "candidate-ranking": [{"candidate-id": c, "confidence": s} for c, s in zip(ids, conf)]}


def write(path: Path, obj) -> Path:
    path.write_text(json.dumps(obj))
    return path


def run(tmp_path, data_name, examples, sub_name, items, **kw):
    data = write(tmp_path / data_name, examples)
    sub = write(tmp_path / sub_name, items)
    return score(sub, benchmark=kw.pop("benchmark", "dstc7"), data=data, **kw)


def codes(report, severity=None):
    return sorted({p.code for p in report.problems if p.code and (severity is None or p.severity == severity)})


OPTS = [f"C{i:02d}" for i in range(12)]


def test_paraphrases_missing_and_truncated_rankings_equal_hand_computations(tmp_path):
    data = [example(1, OPTS[:5], ["C01", "C03"], 3), example(2, OPTS[:5], ["C04"], 3),
            example(3, OPTS[:5], ["C00", "C02"], 3), example(4, OPTS[:5], ["C00"], 3)]
    items = [ranking(1, ["C03", "C00", "C01", "C02", "C04"]),  # correct at 1 and 3
             ranking(2, ["C00", "C01"]),  # truncated: the correct id is not listed
             ranking(3, ["C04", "C02", "C01", "C00", "C03"])]  # correct at 2 and 4; example 4 missing
    r = run(tmp_path, "advising_dev_subtask_3.json", data, "Advising_subtask_3.json", items)
    assert r.valid and codes(r, "warning") == ["missing-dialog", "short-ranking"]
    assert list(r.table.gold_rank) == [1, 0, 2, 0]
    assert r.value("r@1") == 1 / 4 and r.value("r@10") == 2 / 4
    assert r.value("mrr") == pytest.approx((1 + 1 / 2) / 4)
    # textbook AP: example 1 (1/1 + 2/3) / 2, example 3 (1/2 + 2/4) / 2
    assert r.value("map") == pytest.approx(((1 + 2 / 3) / 2 + (1 / 2 + 2 / 4) / 2) / 4)
    assert r.value("noesis-score") == pytest.approx((r.value("r@10") + r.value("mrr")) / 2)


def test_listed_order_is_the_ranking_at_the_cut_off_whatever_the_confidences(tmp_path):
    opts = OPTS + [f"D{i:02d}" for i in range(40)]
    data = [example(7, opts, ["D00"]), example(8, opts, ["C10"])]
    tied = [0.5] * len(opts)  # every confidence tied: the list decides, the correct id is 11th
    order7 = [c for c in opts if c != "D00"][:10] + ["D00"] + [c for c in opts if c != "D00"][10:]
    order8 = list(opts)  # C10 is 11th
    rising = [j / 100 for j in range(len(opts))]
    r = run(tmp_path, "ubuntu_dev_subtask_1.json", data, "Ubuntu_subtask_1.json",
            [ranking(7, order7, tied), ranking(8, order8, rising)])
    assert r.valid and list(r.table.gold_rank) == [11, 11]
    assert r.value("r@10") == 0.0 and r.value("r@50") == 1.0 and r.value("mrr") == pytest.approx(1 / 11)
    warned = [p for p in r.problems if p.code == "confidence-order"]
    assert len(warned) == 1 and warned[0].pointer == "/1/candidate-ranking"


def test_none_is_correct_exactly_when_the_answer_is_absent_subtask_4(tmp_path):
    data = [example(1, ["A", "B", "C"], ["Z"], 4),  # the answer Z is not among the options: NONE is correct
            example(2, ["A", "B", "C"], ["B"], 4)]
    items = [ranking(1, ["A", "NONE", "B", "C"]), ranking(2, ["NONE", "B", "A", "C"])]
    r = run(tmp_path, "ubuntu_dev_subtask_4.json", data, "Ubuntu_subtask_4.json", items)
    assert r.valid and list(r.table.gold_rank) == [2, 2] and list(r.table.n_candidates) == [3, 3]  # NONE is no option
    # NONE in subtask 1 is an id outside the example: an error
    r1 = run(tmp_path, "ubuntu_dev_subtask_1.json", [example(1, ["A", "B"], ["A"])], "Ubuntu_subtask_1.json",
             [ranking(1, ["NONE", "A", "B"])])
    assert not r1.valid and codes(r1, "error") == ["unknown-candidate"]
    # DSTC8: "NONE" applies to every example
    r8 = run(tmp_path, "task-1.ubuntu.dev.json", data, "run.json", items, benchmark="dstc8")
    assert r8.valid and list(r8.table.gold_rank) == [2, 2]


def test_a_ranking_of_every_option_is_complete_whether_or_not_it_lists_none(tmp_path):
    """``NONE`` is no option of the data (``options-for-next`` never lists it): a DSTC8 example of 100 options is
    completely ranked by those 100 ids, with or without the string ``"NONE"``; leaving an option out is warned
    about even when ``NONE`` brings the list back to 100 ids."""
    opts = [f"O{i:011d}" for i in range(100)]  # 12-character ids, as released
    data = [example(1, opts, [opts[7]]), example(2, opts, ["ABSENTANSWER"])]  # example 2: NONE is correct
    for items in ([ranking(1, opts), ranking(2, opts[::-1])],  # every option, no NONE
                  [ranking(1, [*opts, "NONE"]), ranking(2, ["NONE", *opts])]):  # every option and NONE
        r = run(tmp_path, "task-1.ubuntu.dev.json", data, "run.json", items, benchmark="dstc8")
        assert r.valid and codes(r, "warning") == []
    short = run(tmp_path, "task-1.ubuntu.dev.json", data, "run.json",
                [ranking(1, opts), ranking(2, ["NONE", *opts[1:]])], benchmark="dstc8")  # 100 ids, option 0 left out
    assert short.valid and [(p.code, p.pointer) for p in short.problems] == [("short-ranking", "/1/candidate-ranking")]
    assert "lists 99 of 100 candidates" in short.problems[0].message
    # the sample's examples list 10 options each: a ranking of the 10 is complete too (DSTC7 subtask 4 alike)
    sample = json.loads((SAMPLES / "dstc8" / "task-1.ubuntu.dev.json").read_text())
    whole = [ranking(e["example-id"], [o["candidate-id"] for o in e["options-for-next"]]) for e in sample]
    r8 = run(tmp_path, "task-1.ubuntu.dev.json", sample, "run.json", whole, benchmark="dstc8")
    r4 = run(tmp_path, "ubuntu_dev_subtask_4.json", sample, "Ubuntu_subtask_4.json", whole)
    assert r8.valid and r4.valid and codes(r8, "warning") == codes(r4, "warning") == []
    cut = [ranking(e["example-id"], ["NONE", *[o["candidate-id"] for o in e["options-for-next"]][1:]]) for e in sample]
    r = run(tmp_path, "task-1.ubuntu.dev.json", sample, "run.json", cut, benchmark="dstc8")
    assert [p.code for p in r.problems] == ["short-ranking"] * len(sample)  # NONE stands in for no option


def test_a_dstc8_example_of_100_options_counts_100_candidates_not_none(tmp_path, cli):
    """Before: the per-item output (and the registry's rank table) said 101 candidates for a DSTC8 example of 100
    options, counting the answer NONE. Now n_candidates is the example's options; NONE ranked after all of them
    has gold rank 101, one past the count."""
    opts = [f"O{i:011d}" for i in range(100)]
    data = [example(7001, opts, [opts[3]]), example(7002, opts, ["ABSENTANSWER"])]  # 7002: NONE is correct
    (tmp_path / "task-1.ubuntu.dev.json").write_text(json.dumps(data))
    (tmp_path / "run.json").write_text(json.dumps([ranking(7001, opts), ranking(7002, [*opts, "NONE"])]))
    r = cli("score", "run.json", "--benchmark", "dstc8", "--data", "task-1.ubuntu.dev.json", "--per-item",
            "items.jsonl", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    rows = [json.loads(x) for x in (tmp_path / "items.jsonl").read_text().splitlines()]
    assert [(x["item_id"], x["n_candidates"], x["gold_rank"]) for x in rows] == [("7001", 100, 4), ("7002", 100, 101)]


def test_ids_match_by_value_and_strict_errors(tmp_path):
    data = [example(1100001, ["A", "B"], ["B"]), example("1100002", ["A", "B"], ["A"])]
    items = [ranking("1100001", ["B", "A"]), ranking(1100002, ["A", "B"])]
    r = run(tmp_path, "ubuntu_dev_subtask_1.json", data, "Ubuntu_subtask_1.json", items)
    assert r.valid and list(r.table.gold_rank) == [1, 1]
    bad = [ranking(1100001, ["B", "A"]), ranking(1100001, ["A", "A"]), ranking(1100002, ["A", "X"]),
           ranking(99, ["A"]), {"example-id": 1100002}, "not an object"]
    r = run(tmp_path, "ubuntu_dev_subtask_1.json", data, "Ubuntu_subtask_1.json", bad)
    assert not r.valid
    assert codes(r, "error") == ["duplicate-candidate", "duplicate-dialog", "item-not-object", "missing-key",
                                 "unknown-candidate", "unknown-dialog"]
    assert all(p.file == "Ubuntu_subtask_1.json" for p in r.problems)


def test_subtask_2_ranks_ids_of_the_pool(tmp_path):
    pool = [f"P{i}" for i in range(8)]
    data = [example(1, pool[:4], ["P1"], 2), example(2, pool[4:], ["P6"], 2)]
    ok = run(tmp_path, "ubuntu_dev_subtask_2.json", data, "Ubuntu_subtask_2.json",
             [ranking(1, ["P7", "P1"]), ranking(2, ["P0", "P2", "P6"])])
    assert ok.valid and list(ok.table.gold_rank) == [2, 3] and set(ok.table.n_candidates) == {8}
    bad = run(tmp_path, "ubuntu_dev_subtask_2.json", data, "Ubuntu_subtask_2.json", [ranking(1, ["P1", "Q9"])])
    assert codes(bad, "error") == ["unknown-candidate"]
    # a file that lists no candidates (the released pool is a file of its own): ids are not checked, and it is said
    bare = [dict(e, **{"options-for-next": []}) for e in data]
    r = run(tmp_path, "ubuntu_dev_subtask_2.json", bare, "Ubuntu_subtask_2.json", [ranking(1, ["Q9", "P1"])])
    assert r.valid and list(r.table.gold_rank) == [2, 0] and set(r.table.n_candidates) == {120_000}
    assert any("pool file is not read" in n for n in r.notes)


# ---- --lenient: the official script's definitions -----------------------------------------------------------
def official(predictions: list, truth_tsv: str) -> dict:
    """evaluations/metrics.py as the reference page describes it: predictions keyed by the example-id's JSON
    value (the last ranking wins), ground truth keyed by text with upper-cased ids; rank = first listed correct
    id; R@k over the ground truth's examples, R@100 = found anywhere; MAP = mean over the correct ids in order of
    (index + 1) / (first submitted position + 1)."""
    preds = {}
    for item in predictions:
        preds[item["example-id"]] = [c["candidate-id"] for c in item["candidate-ranking"]]
    truth = {}
    for line in truth_tsv.splitlines():
        eid, ids = line.split("\t")
        truth[eid] = [g.upper() for g in ids.split(",")]
    ranks, aps = [], []
    for eid, gold in truth.items():
        listed = preds.get(eid, [])
        ranks.append(next((j + 1 for j, c in enumerate(listed) if c in gold), 0))
        aps.append(sum((i + 1) / (listed.index(g) + 1) for i, g in enumerate(gold) if g in listed) / len(gold)
                   if eid in preds else 0.0)
    n = len(truth)
    out = {f"r@{k}": sum(1 for r in ranks if 0 < r <= k) / n for k in (1, 10, 50)}
    out["r@100"] = sum(1 for r in ranks if r > 0) / n
    out["mrr"] = sum(1 / r for r in ranks if r > 0) / n
    out["map"] = sum(aps) / n
    return out


def test_lenient_equals_the_official_definitions(tmp_path):
    rng = random.Random(5)
    ids = [f"ID{i:03d}" for i in range(160)]
    data, truth, items = [], [], []
    for e in range(30):
        opts = rng.sample(ids, 120)
        correct = rng.sample(opts, rng.choice((1, 1, 2, 3)))
        data.append(example(e + 1, opts, correct, 3))
        truth.append(f"{e + 1}\t{','.join(correct)}" + (",," if e % 6 == 0 else f",{correct[0]}" if e % 11 == 0 else ""))
        if e % 10 == 9:
            continue  # missing from the submission
        listed = rng.sample(opts, rng.choice((5, 100, 120)))
        if e % 7 == 0:
            listed = listed + listed[:3]  # ids listed twice
        if e % 5 == 0:
            listed = [c.lower() if c in correct else c for c in listed]  # only the gold is upper-cased
        items.append(ranking(str(e + 1), listed))
        if e % 8 == 0:
            items.append(ranking(str(e + 1), rng.sample(opts, 50)))  # ranked twice: the last one counts
    (tmp_path / "GROUND_TRUTH.tsv").write_text("\n".join(truth) + "\n")
    r = run(tmp_path, "advising_dev_subtask_3.json", data, "Advising_subtask_3.json", items,
            keys=tmp_path / "GROUND_TRUTH.tsv", lenient=True)
    assert r.valid and "mode:lenient" in r.signature.format()
    want = official(items, (tmp_path / "GROUND_TRUTH.tsv").read_text())
    for metric, value in want.items():
        assert r.value(metric) == pytest.approx(value, abs=1e-12), metric
    assert want["r@100"] > r.value("r@50")  # the quirk is exercised: correct ids listed past 100 count
    assert len(r.notes) >= 4 and not any(p.code == "official-quirk" for p in r.problems)


def test_lenient_reports_rather_than_reproduces_number_ids(tmp_path):
    data = [example(1, ["A", "B"], ["B"]), example(2, ["A", "B"], ["A"])]
    items = [ranking(1, ["B", "A"]), ranking(2, ["B", "A"])]
    r = run(tmp_path, "ubuntu_dev_subtask_1.json", data, "Ubuntu_subtask_1.json", items, lenient=True)
    assert official(items, "1\tB\n2\tA\n")["mrr"] == 0.0  # the official script matches none of them
    assert r.value("mrr") == 0.75  # matched by value here, and said so
    quirk = [p for p in r.problems if p.code == "official-quirk"]
    assert len(quirk) == 1 and "2 example-ids are JSON numbers" in quirk[0].message


def test_lenient_official_crash_is_an_error(tmp_path):
    data = [example(1, ["A", "B"], ["B"])]
    r = run(tmp_path, "ubuntu_dev_subtask_1.json", data, "Ubuntu_subtask_1.json",
            [{"example-id": "1", "candidate-ranking": [{"confidence": 1}]}], lenient=True)
    assert not r.valid and codes(r, "error") == ["official-crash"]


def test_strict_and_lenient_map_differ_where_the_official_one_is_not_average_precision(tmp_path):
    data = [example(1, ["A", "B", "C"], ["A", "B"], 3)]
    items = [ranking("1", ["B", "C", "A"])]
    strict = run(tmp_path, "advising_dev_subtask_3.json", data, "Advising_subtask_3.json", items)
    lenient = run(tmp_path, "advising_dev_subtask_3.json", data, "Advising_subtask_3.json", items, lenient=True)
    assert strict.value("map") == pytest.approx((1 / 1 + 2 / 3) / 2)
    assert lenient.value("map") == pytest.approx((1 / 3 + 2 / 1) / 2)  # A: (0+1)/(2+1), B: (1+1)/(0+1)


# ---- data, keys and the command line ------------------------------------------------------------------------
def test_test_file_needs_keys_and_keys_give_the_dev_numbers(tmp_path):
    d = SAMPLES / "dstc7"
    sub = STORED / "dstc7" / "tfidf" / "Ubuntu_subtask_1.json"
    with pytest.raises(UsageError, match="withheld"):
        score(sub, benchmark="dstc7", data=d / "ubuntu_test_subtask_1.json")
    assert validate(sub, benchmark="dstc7", data=d / "ubuntu_test_subtask_1.json").valid
    test = score(sub, benchmark="dstc7", data=d / "ubuntu_test_subtask_1.json", keys=d / "GROUND_TRUTH.tsv")
    dev = score(sub, benchmark="dstc7", data=d, split="dev")  # the folder: the file that fits, of split dev
    assert [r["value"] for r in test.records] == [r["value"] for r in dev.records]


def test_issue_examples_run_as_written(tmp_path, cli):
    for f in (SAMPLES / "dstc7").iterdir():
        (tmp_path / f.name).write_bytes(f.read_bytes())
    for name in ("Ubuntu_subtask_1.json", "Advising_subtask_3.json"):
        (tmp_path / name).write_bytes((STORED / "dstc7" / "tfidf" / name).read_bytes())
    r = cli("score", "Ubuntu_subtask_1.json", "--benchmark", "dstc7", "--data", "ubuntu_dev_subtask_1.json", "--json",
            cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert {x["metric"] for x in json.loads(r.stdout)["results"]} >= {"r@1", "r@10", "r@50", "r@100", "mrr", "map",
                                                                     "noesis-score"}
    r = cli("score", "Ubuntu_subtask_1.json", "--benchmark", "dstc7", "--data", "ubuntu_test_subtask_1.json", "--keys",
            "GROUND_TRUTH.tsv", cwd=tmp_path)
    assert r.returncode == 0 and "ubuntu-1" in r.stdout, r.stderr
    r = cli("score", "Advising_subtask_3.json", "--benchmark", "dstc7", "--data", "advising_dev_subtask_3.json",
            "--lenient", cwd=tmp_path)
    assert r.returncode == 0 and "lenient: MAP is evaluations/metrics.py's" in r.stdout, r.stderr
    assert "official-quirk" in r.stderr


# ---- the constructed samples and the reference runs ---------------------------------------------------------
@pytest.mark.parametrize("bench", sorted(REFERENCE_RUNS))
def test_samples_regenerate_bit_identical(bench, tmp_path):
    for p in write_samples(tmp_path / bench, bench):
        assert p.read_bytes() == (SAMPLES / bench / p.name).read_bytes(), p.name


@pytest.mark.parametrize("bench", sorted(REFERENCE_RUNS))
@pytest.mark.parametrize("baseline", BASELINES)
def test_reference_runs_regenerate_and_rescore_bit_identical(bench, baseline, tmp_path):
    for data, name, none_id in REFERENCE_RUNS[bench]:
        stored = STORED / bench / baseline / name
        fresh = rank_file(SAMPLES / bench / data, baseline, tmp_path / name, none_id=none_id)
        assert fresh.read_bytes() == stored.read_bytes()
        results = score(stored, benchmark=bench, data=SAMPLES / bench / data).to_json()["results"]
        want = json.loads(stored.with_suffix(".report.json").read_text())
        assert results == want
        assert [float(r["value"]).hex() for r in results] == [float(r["value"]).hex() for r in want]


def test_tfidf_beats_random_on_the_samples():
    for bench, runs in REFERENCE_RUNS.items():
        for data, name, _ in runs:
            mrr = {b: score(STORED / bench / b / name, benchmark=bench, data=SAMPLES / bench / data).value("mrr")
                   for b in BASELINES}
            assert mrr["tfidf"] > mrr["random"], (bench, name, mrr)


def test_releases_say_which_checksum_is_published(tmp_path, cli):
    from dialeval.files.releases import registry

    reg = registry(REPO / "evaluator" / "files" / "releases.json")
    parlai = reg.get("dstc7-ubuntu")  # ParlAI's packaging: its build.py publishes the sha256, fetch checks it
    assert parlai.benchmark == "dstc7" and [len(a.sha256) for a in parlai.archives] == [64]
    for name in ("dstc7", "dstc8"):  # the organisers' files: no archive URL, no checksum published
        assert reg.get(name).archives == () and "no checksum" in reg.get(name).obtain
    r = cli("score", "x.json", "--benchmark", "dstc8", "--data", "dstc8", cwd=tmp_path,
            env={"DIALEVAL_CACHE_DIR": str(tmp_path / "cache")})
    assert r.returncode == 2 and "no checksum" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_parlai_responses_tsv_is_a_ground_truth(tmp_path):
    data = [example(5, ["A", "B", "C"], ["C"], split="test")]
    (tmp_path / "ubuntu_responses_subtask_1.tsv").write_text("5\tC\tthe response text, with a comma\n")
    r = run(tmp_path, "ubuntu_test_subtask_1.json", data, "Ubuntu_subtask_1.json", [ranking(5, ["B", "C", "A"])],
            keys=tmp_path / "ubuntu_responses_subtask_1.tsv")
    assert r.valid and list(r.table.gold_rank) == [2]


def test_without_split_the_file_whose_examples_the_run_ranks_is_scored(tmp_path):
    write(tmp_path / "ubuntu_dev_subtask_1.json", [example(1, ["A", "B"], ["A"])])
    write(tmp_path / "ubuntu_test_subtask_1.json", [example(2, ["A", "B"], ["B"], split="test")])
    sub = write(tmp_path / "Ubuntu_subtask_1.json", [ranking(2, ["B", "A"])])
    r = score(sub, benchmark="dstc7", data=tmp_path)
    assert r.splits == ["test"] and list(r.table.gold_rank) == [1]
    write(tmp_path / "ubuntu_test_subtask_1.json", [example(1, ["A", "B"], ["B"], split="test")])  # the same ids
    with pytest.raises(UsageError, match="2 data files fit Ubuntu_subtask_1.json"):
        score(write(tmp_path / "Ubuntu_subtask_1.json", [ranking(1, ["B", "A"])]), benchmark="dstc7", data=tmp_path)


def test_subtask_5_is_scored_on_subtask_1_files(tmp_path):
    r = run(tmp_path, "ubuntu_dev_subtask_1.json", [example(1, ["A", "B", "C"], ["C"])], "Ubuntu_subtask_5.json",
            [ranking(1, ["A", "C", "B"])])
    assert r.valid and r.groups == ["ubuntu-5"] and r.value("mrr") == 0.5
    with pytest.raises(UsageError, match="0 data files fit Advising_subtask_3.json"):
        run(tmp_path, "ubuntu_dev_subtask_1.json", [example(1, ["A"], ["A"])], "Advising_subtask_3.json", [])


# ---- subtask 2: the 120,000-candidate pool file -------------------------------------------------------------
def test_subtask_2_checks_ranked_ids_against_the_pool_file_beside_the_data(tmp_path):
    pool = [f"P{i:011d}" for i in range(300)]
    (tmp_path / "ubuntu_subtask_2_candidate_pool.tsv").write_text("".join(f"{c}\tutterance {c}\n" for c in pool))
    data = [dict(example(e, [], [pool[e * 7]], 2), **{"options-for-next": []}) for e in range(1, 4)]
    items = [ranking(1, pool[:100]),  # the correct P...07 is 8th
             ranking(2, [pool[14], *pool[100:199]]),  # first
             ranking(3, pool[200:300])]  # the correct P...21 is not listed
    r = run(tmp_path, "ubuntu_dev_subtask_2.json", data, "Ubuntu_subtask_2.json", items)
    assert r.valid and list(r.table.gold_rank) == [8, 1, 0] and set(r.table.n_candidates) == {300}
    assert r.value("mrr") == pytest.approx((1 / 8 + 1) / 3) and not r.notes
    assert "ubuntu_subtask_2_candidate_pool.tsv" in r.data.files  # the pool is part of the data identity
    bad = run(tmp_path, "ubuntu_dev_subtask_2.json", data, "Ubuntu_subtask_2.json",
              [ranking(1, ["Q0000000000X", *pool[:99]])])
    assert codes(bad, "error") == ["unknown-candidate"]
    assert [p.pointer for p in bad.problems if p.code == "unknown-candidate"] == ["/0/candidate-ranking/0/candidate-id"]
    short = run(tmp_path, "ubuntu_dev_subtask_2.json", data, "Ubuntu_subtask_2.json", [ranking(1, pool[:10])])
    assert short.valid and "short-ranking" in codes(short, "warning")  # a ranking of fewer than 100 pool ids


def test_a_subtask_2_ranking_of_more_than_100_ids_is_an_error_and_lenient_reads_them_all(tmp_path):
    """submission.rst: a subtask 2 ranking lists the top 100 of the pool. The official script reads every listed id
    (a correct id at 150 earns 1/150 of MRR), so a longer list would beat the rule; strict refuses it."""
    pool = [f"P{i:011d}" for i in range(300)]
    (tmp_path / "candidate_pool.tsv").write_text("".join(f"{c}\tu\n" for c in pool))
    data = [dict(example(1, [], [pool[149]], 2), **{"options-for-next": []})]
    long = [ranking(1, pool[:150])]  # the correct id is 150th
    r = run(tmp_path, "ubuntu_dev_subtask_2.json", data, "Ubuntu_subtask_2.json", long)
    assert not r.valid and codes(r, "error") == ["long-ranking"]
    [p] = [p for p in r.problems if p.code == "long-ranking"]
    assert p.pointer == "/0/candidate-ranking" and "lists 150 ids: at most 100" in p.message
    assert pool[149] not in p.message
    lenient = run(tmp_path, "ubuntu_dev_subtask_2.json", data, "Ubuntu_subtask_2.json", long, lenient=True)
    assert lenient.valid and list(lenient.table.gold_rank) == [150]
    assert lenient.value("mrr") == pytest.approx(1 / 150) and lenient.value("r@100") == 1.0  # any listed position
    assert "official-quirk" in codes(lenient, "warning")
    ok = run(tmp_path, "ubuntu_dev_subtask_2.json", data, "Ubuntu_subtask_2.json", [ranking(1, pool[50:150])])
    assert ok.valid and list(ok.table.gold_rank) == [100]  # exactly 100: fine
    # subtask 1 has no such cap of its own: a ranking of all of an example's 120 options is valid
    opts = [f"C{i:03d}" for i in range(120)]
    r1 = run(tmp_path, "ubuntu_dev_subtask_1.json", [example(1, opts, ["C119"])], "Ubuntu_subtask_1.json",
             [ranking(1, opts)])
    assert r1.valid and list(r1.table.gold_rank) == [120]


def test_subtask_2_pool_option_takes_a_json_pool_and_the_gold_must_be_in_it(tmp_path):
    pool = [f"P{i}" for i in range(150)]
    write(tmp_path / "pool.json", [{"candidate-id": c, "utterance": "u"} for c in pool])
    data = [dict(example(1, [], ["P3"], 2), **{"options-for-next": []})]
    given = {"pool": str(tmp_path / "pool.json")}
    r = run(tmp_path, "ubuntu_dev_subtask_2.json", data, "Ubuntu_subtask_2.json", [ranking(1, pool[2:102])],
            options=given)
    assert r.valid and list(r.table.gold_rank) == [2] and set(r.table.n_candidates) == {150}
    outside = [dict(example(1, [], ["Z9"], 2), **{"options-for-next": []})]
    with pytest.raises(UsageError, match="has no correct answer among its options"):
        run(tmp_path, "ubuntu_dev_subtask_2.json", outside, "Ubuntu_subtask_2.json", [], options=given)
    (tmp_path / "other_pool.txt").write_text("P1\n")
    with pytest.raises(UsageError, match="2 pool files"):  # beside the data, two candidates: say so, never guess
        run(tmp_path, "ubuntu_dev_subtask_2.json", data, "Ubuntu_subtask_2.json", [])


def test_grading_takes_the_split_of_the_data_file_a_run_answers(tmp_path):
    from dialeval.leaderboard.grade import splits_held

    run_file = STORED / "dstc7" / "tfidf" / "Ubuntu_subtask_1.json"
    assert splits_held(run_file, "dstc7", SAMPLES / "dstc7" / "ubuntu_dev_subtask_1.json") == ["dev"]
    write(tmp_path / "ubuntu_dev_subtask_1.json", [example(1, ["A", "B"], ["A"])])
    write(tmp_path / "ubuntu_test_subtask_1.json", [example(2, ["A", "B"], ["B"], split="test")])
    assert splits_held(write(tmp_path / "Ubuntu_subtask_1.json", [ranking(2, ["B", "A"])]), "dstc7", tmp_path) == ["test"]


def test_dstc8_contexts_give_the_official_and_the_baselines_example_sets(tmp_path, cli):
    """response-selection.md, DSTC8: the official scorer counts every example (a NONE answer too); the NOESIS II
    baseline's is_valid_query skips a query without a positive or without a negative (``--contexts mixed``)."""
    data = [example(1, ["A", "B", "C"], ["Z"]),  # the answer is absent: NONE is correct, no positive option
            example(2, ["A", "B", "C"], ["B"]), example(3, ["A", "B", "C"], ["C"]),
            example(4, ["A", "B"], ["A", "B"])]  # every option correct: no negative
    items = [ranking(1, ["A", "NONE", "B", "C"]), ranking(2, ["A", "B", "C"]), ranking(3, ["A", "B", "C"]),
             ranking(4, ["B", "A"])]
    want = {"all": (1 / 2 + 1 / 2 + 1 / 3 + 1) / 4, "with-positive": (1 / 2 + 1 / 3 + 1) / 3, "mixed": (1 / 2 + 1 / 3) / 2}
    for contexts, mrr in want.items():
        r = run(tmp_path, "task-1.ubuntu.dev.json", data, "run.json", items, benchmark="dstc8",
                options={"contexts": contexts})
        assert r.valid and r.value("mrr") == pytest.approx(mrr), contexts
        assert ("contexts:" in r.signature.format()) == (contexts != "all")
    assert r.value("r@1") == 0.0 and "contexts:mixed" in r.signature.format()
    assert any("contexts mixed: 2 of 4 examples scored; 1 without a correct candidate, 1 without a wrong candidate left out" in n
               for n in r.notes)
    sub = write(tmp_path / "run.json", items)
    out = cli("score", sub, "--benchmark", "dstc8", "--data", tmp_path / "task-1.ubuntu.dev.json", "--contexts",
              "with-positive", "--json")
    assert out.returncode == 0, out.stderr
    assert {x["metric"]: x["value"] for x in json.loads(out.stdout)["results"]}["mrr"] == pytest.approx(
        want["with-positive"])
    out = cli("score", sub, "--benchmark", "dstc7", "--data", tmp_path / "task-1.ubuntu.dev.json", "--contexts", "all")
    assert out.returncode == 2 and "--contexts does not apply to benchmark dstc7" in out.stderr


def test_a_zip_of_subtask_files_is_scored_member_by_member(tmp_path, cli):
    """response-selection.md, DSTC7 submission.rst: a submission was one zip of <Ubuntu|Advising>_subtask_<n>.json.
    Each member is scored against its own data file, with the numbers it has alone; problems name the member; the
    report's submission is the zip (never the private folder it was unpacked in)."""
    import zipfile

    runs = sorted((STORED / "dstc7" / "tfidf").glob("*_subtask_[0-9].json"))
    assert len(runs) == 3
    z = tmp_path / "team.zip"
    with zipfile.ZipFile(z, "w") as zf:
        for f in runs:
            zf.write(f, f"team/{f.name}")
    r = score(z, benchmark="dstc7", data=SAMPLES / "dstc7", split="dev")
    assert r.valid and r.groups == ["advising-3", "ubuntu-1", "ubuntu-4"]
    for f in runs:
        alone = score(f, benchmark="dstc7", data=SAMPLES / "dstc7", split="dev")
        (group,) = alone.groups
        for rec in alone.records:
            if rec["group"] == group:
                assert r.value(rec["metric"], "dev", group) == rec["value"], (group, rec["metric"])
    doc = r.to_json()
    assert doc["submission"]["path"] == str(z) and doc["submission"]["kind"] == "archive"
    assert doc["data"]["files"] == ["advising_dev_subtask_3.json", "ubuntu_dev_subtask_1.json", "ubuntu_dev_subtask_4.json"]
    # a bad member is named by its own file name
    bad = tmp_path / "bad.zip"
    with zipfile.ZipFile(bad, "w") as zf:
        zf.write(runs[1], runs[1].name)
        zf.writestr("Ubuntu_subtask_4.json", json.dumps([{"example-id": 1}]))
    r = score(bad, benchmark="dstc7", data=SAMPLES / "dstc7", split="dev")
    assert not r.valid and {p.file for p in r.problems if p.severity == "error"} == {"Ubuntu_subtask_4.json"}
    out = cli("score", z, "--benchmark", "dstc7", "--data", SAMPLES / "dstc7", "--split", "dev")
    assert out.returncode == 0 and "ubuntu-4" in out.stdout and "/tmp" not in out.stdout.replace(str(tmp_path), "")
    empty = tmp_path / "empty.zip"
    with zipfile.ZipFile(empty, "w") as zf:
        zf.writestr("notes.txt", "no ranking here")
    with pytest.raises(UsageError, match="the zip holds no .json submission file"):
        score(empty, benchmark="dstc7", data=SAMPLES / "dstc7", split="dev")
    with pytest.raises(UsageError, match="score each file with its own --keys"):
        score(z, benchmark="dstc7", data=SAMPLES / "dstc7", split="test", keys=SAMPLES / "dstc7" / "GROUND_TRUTH.tsv")
