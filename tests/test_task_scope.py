"""``--task`` and ``--split`` scope validation as well as scoring, on every benchmark that has several tasks (or
files, or splits) per run.

A submission's items of tasks not asked for are left out: neither checked nor scored, counted in one
``other-task`` warning; so are items of the data's other splits (one ``other-split`` warning), unless the
submission holds nothing of the split scored: then the one ``wrong-split`` error says which split to score. So a run whose task-2 items are malformed scores task 1 alone (exit 0) with exactly the
numbers of a file holding task 1's items only, and the signature still says ``task:1``. What makes the whole file
unreadable stays an error. Real data (DSTC6 tst1, bAbI) from ../shared/data; the other benchmarks on their sample
data or copies of it.
"""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import REAL_CHALLENGE, SHARED, make_challenge, ranking, run_cli, write_json

from dialeval.api import score

BABI = SHARED / "data" / "babi-dialog"
SAMPLES = __import__("pathlib").Path(__file__).resolve().parents[1] / "submissions" / "samples"


def _report(*args):
    r = run_cli("score", *args, "--json")
    assert r.returncode in (0, 1), r.stderr
    return r.returncode, json.loads(r.stdout)


def _numbers(rep, group):
    return {(x["metric"], x["average"]): x["value"] for x in rep["results"] if x["group"] == group}


def _other_task(rep) -> list[dict]:
    return [p for p in rep["problems"] if p["code"] == "other-task"]


# ---- DSTC6, real tst1 -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def dstc6_runs(real_tst1, tmp_path_factory):
    """Task 1 ranked well (gold second on every third item), task 2's items each naming an unknown candidate:
    (the file of both tasks, the file of task 1 alone, task 2's items)."""
    both, task1, task2 = [], [], []
    for task in (1, 2):
        test = next(real_tst1.glob(f"dialog-task{task}*-tst1000.json"))
        gold = {it["dialog_id"]: next(e["candidate_id"] for e in it["lst_candidate_id"] if e["rank"] == 1)
                for it in json.loads(test.with_name(test.name[:-5] + ".answers.json").read_text())}
        for n, it in enumerate(json.loads(test.read_text())):
            g, rest = gold[it["dialog_id"]], [c["candidate_id"] for c in it["candidates"]]
            rest.remove(g)
            item = ranking(it["dialog_id"], [g, *rest] if n % 3 else [rest[0], g, *rest[1:]])
            if task == 2:
                item["lst_candidate_id"][0]["candidate_id"] = "no-such-candidate"
            (task1 if task == 1 else task2).append(item)
            both.append(item)
    d = tmp_path_factory.mktemp("dstc6-scope")
    return write_json(d / "both.json", both), write_json(d / "task1.json", task1), task2


@pytest.mark.realdata
@pytest.mark.parametrize("mode", [[], ["--lenient"]])
def test_dstc6_task_1_of_a_file_whose_task_2_is_malformed(dstc6_runs, mode):
    both, task1, _ = dstc6_runs
    rc, rep = _report(both, "--challenge", REAL_CHALLENGE, "--split", "tst1", "--task", "1", *mode)
    rc1, only = _report(task1, "--challenge", REAL_CHALLENGE, "--split", "tst1", "--task", "1", *mode)
    assert (rc, rc1) == (0, 0) and rep["valid"] and rep["groups"] == ["1"]
    assert [p["severity"] for p in rep["problems"]] == ["warning"]  # nothing of task 2 is reported but the count
    assert _other_task(rep)[0]["message"] == ("1,000 items of tasks other than 1 left out (--task 1): neither "
                                              "checked nor scored")
    assert _numbers(rep, "1") == _numbers(only, "1") and _numbers(rep, "1")[("p@1", None)] == pytest.approx(0.666)
    assert all("|tasks:1|" in x["signature"] and "|task:" in x["signature"] for x in rep["results"])
    assert {x["signature"].split("|task:")[1].split("|")[0] for x in rep["results"] if x["group"] == "1"} == {"1"}
    # without --task task 2's items are checked: invalid, or (--lenient) accepted as the official scorer does
    rc_all, every = _report(both, "--challenge", REAL_CHALLENGE, "--split", "tst1", *mode)
    assert rc_all == (0 if mode else 1)
    assert any(p["code"] == ("official-quirk" if mode else "unknown-candidate") for p in every["problems"])


@pytest.mark.realdata
def test_dstc6_validate_task_1_and_item_level_faults_of_other_tasks(dstc6_runs, tmp_path):
    _, _, task2 = dstc6_runs
    good = json.loads(dstc6_runs[1].read_text())
    odd = [dict(x) for x in task2[:6]]
    odd[0] = {**odd[0], "extra": 1}                                            # unknown key
    odd[1] = {"dialog_id": odd[1]["dialog_id"]}                                # no lst_candidate_id
    odd[2]["lst_candidate_id"] = [{"candidate_id": "x", "rank": "first"}]      # rank not an integer
    odd[3]["lst_candidate_id"] = []                                            # empty ranking
    odd[4] = dict(odd[5])                                                      # the same task-2 dialog twice
    sub = write_json(tmp_path / "odd.json", good + odd)
    r = run_cli("validate", sub, "--challenge", REAL_CHALLENGE, "--split", "tst1", "--task", "1")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "6 items of tasks other than 1 left out" in r.stdout + r.stderr
    # what cannot be placed in a task, and a file that cannot be read, stay errors
    unplaced = write_json(tmp_path / "unplaced.json", [*good, 7, {"dialog_id": 3, "lst_candidate_id": [{"candidate_id": "a", "rank": 1}]}])
    rc, rep = _report(unplaced, "--challenge", REAL_CHALLENGE, "--split", "tst1", "--task", "1")
    assert rc == 1 and {p["code"] for p in rep["problems"] if p["severity"] == "error"} == {"item-not-object", "wrong-type"}
    broken = write_json(tmp_path / "broken.json", json.dumps(good + odd)[:-1].encode())
    assert _report(broken, "--challenge", REAL_CHALLENGE, "--split", "tst1", "--task", "1")[0] == 1


@pytest.mark.realdata
def test_dstc6_folder_names_the_files_of_other_tasks_once(dstc6_runs, real_tst1, tmp_path):
    both, task1, task2 = dstc6_runs
    stems = {t: next(real_tst1.glob(f"dialog-task{t}*-tst1000.json")).name[:-5] for t in (1, 2)}
    write_json(tmp_path / "run" / "tst1" / f"{stems[1]}.answers.json", json.loads(task1.read_text()))
    write_json(tmp_path / "run" / "tst1" / f"{stems[2]}.answers.json", task2)
    rc, rep = _report(tmp_path / "run", "--challenge", REAL_CHALLENGE, "--split", "tst1", "--task", "1")
    assert rc == 0 and [p["message"] for p in _other_task(rep)] == [
        "1 file of tasks other than 1 left out (--task 1): neither checked nor scored"]


# ---- bAbI, real data ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def babi_runs(tmp_path_factory):
    """bAbI tst: task 1 ranked (gold first on two items in three), task 2 naming candidate 99999 (no such line),
    as rankings and as JSON scores: {form: (file of both tasks, file of task 1)}."""
    if not (BABI / "dialog-babi-task2-API-refine-tst.txt").is_file():
        pytest.skip(f"real bAbI data not found at {BABI}")
    from dialeval.benchmarks.babi import load_items

    both, task1 = [], []
    for task in (1, 2):
        s = load_items(BABI, task, "tst")
        for n, (iid, gold) in enumerate(zip(s.item_ids, s.gold, strict=True)):
            g = min(gold)
            other = "1" if g != "1" else "2"
            item = ranking(iid, [g, other] if n % 3 else [other, g])
            if task == 2:
                item["lst_candidate_id"][0]["candidate_id"] = "99999"
            both.append(item)
            if task == 1:
                task1.append(item)

    def scores(items):
        return {"format": "scores", "items": {x["dialog_id"]: {e["candidate_id"]: 10 - e["rank"]
                                                                for e in x["lst_candidate_id"]} for x in items}}

    d = tmp_path_factory.mktemp("babi-scope")
    both_scores = scores(both)
    for iid in list(both_scores["items"])[-3:]:  # task 2: a score that is no number
        both_scores["items"][iid] = {"1": "high"}
    return {"ranked": (write_json(d / "both.json", both), write_json(d / "task1.json", task1)),
            "scores": (write_json(d / "both-scores.json", both_scores), write_json(d / "task1-scores.json", scores(task1)))}


@pytest.mark.realdata
@pytest.mark.parametrize("form", ["ranked", "scores"])
def test_babi_task_1_of_a_file_whose_task_2_is_malformed(babi_runs, form):
    both, task1 = babi_runs[form]
    args = ("--benchmark", "babi", "--data", BABI, "--split", "tst", "--task", "1")
    (rc, rep), (rc1, only) = _report(both, *args), _report(task1, *args)
    assert (rc, rc1) == (0, 0) and rep["groups"] == ["1"]
    assert [p["message"] for p in _other_task(rep)] == [
        "9,464 items of tasks other than 1 left out (--task 1): neither checked nor scored"]
    assert not [p for p in rep["problems"] if p["severity"] == "error"]
    assert _numbers(rep, "1") == _numbers(only, "1")
    assert _numbers(rep, "1")[("per-response-accuracy", None)] == pytest.approx(2 / 3, abs=1e-3)
    assert all("|task:1|" in x["signature"] for x in rep["results"] if x["group"] == "1")


# ---- Movie Dialog, Ubuntu, Douban: sample data ----------------------------------------------------------


def test_movie_dialog_other_tasks_neither_normalise_texts_nor_need_their_candidate_file(tmp_path):
    run = json.loads((SAMPLES / "movie-dialog" / "example-run.json").read_text())
    for x in run:
        if not x["dialog_id"].startswith("task1_"):  # tasks 2-4 give a text no candidate has
            x["lst_candidate_id"][0]["candidate_id"] = "a film nobody made"
    both = write_json(tmp_path / "both.json", run)
    task1 = write_json(tmp_path / "task1.json", [x for x in run if x["dialog_id"].startswith("task1_")])
    data = tmp_path / "movie"
    shutil.copytree(SAMPLES / "movie-dialog", data)
    (data / "task4_reddit_cand-valid.txt").unlink()  # the copy cannot load task 4: its items are still left out
    for d in (SAMPLES / "movie-dialog", data):
        ev = score(both, benchmark="movie-dialog", data=str(d), split="dev", tasks=["1"])
        alone = score(task1, benchmark="movie-dialog", data=str(d), split="dev", tasks=["1"])
        assert ev.valid and [p.code for p in ev.problems] == ["other-task"]
        assert "11 items of tasks other than 1" in ev.problems[0].message
        assert ev.records == alone.records and "gold:id" in ev.records[0]["signature"]


def test_ubuntu_and_douban_files_outside_task_are_left_out(tmp_path):
    ub = tmp_path / "ubuntu"
    ub.mkdir()
    shutil.copy(SAMPLES / "ubuntu" / "test.csv", ub / "test.csv")
    shutil.copy(SAMPLES / "ubuntu" / "test.csv", ub / "valid.csv")
    cands = ["gt", *(f"d{k}" for k in range(9))]
    test = {f"test:{r}": {c: float((r * 7 + j * 3) % 10) for j, c in enumerate(cands)} for r in range(1, 5)}
    bad = {f"valid:{r}": {"zz": "x"} for r in range(1, 5)}  # an unknown candidate with a score that is no number
    both = write_json(tmp_path / "u.json", {"format": "scores", "items": {**bad, **test}})
    alone = write_json(tmp_path / "u1.json", {"format": "scores", "items": test})
    ev = score(both, benchmark="ubuntu", data=str(ub), tasks=["test.csv"])
    assert ev.valid and [p.message for p in ev.problems] == [
        "4 items of files other than test.csv left out (--task test.csv): neither checked nor scored"]
    assert ev.records == score(alone, benchmark="ubuntu", data=str(ub), tasks=["test.csv"]).records

    db, n, both, alone, _ = _douban_dev_and_test(tmp_path)
    ev = score(both, benchmark="douban", data=str(db), tasks=["test.txt"])
    assert ev.valid and [p.code for p in ev.problems] == ["other-task"]
    assert ev.records == score(alone, benchmark="douban", data=str(db), tasks=["test.txt"]).records


# ---- --split: items of the data's other splits ----------------------------------------------------------


def test_dstc6_items_of_another_split_are_left_out_unless_nothing_is_of_the_split(tmp_path):
    root = tmp_path / "challenge"
    tst1, tst2 = make_challenge(root, split="tst1", seed=6), make_challenge(root, split="tst2", seed=7)

    def items(ch, bad=False):
        out = [ranking(it.dialog_id, [c.candidate_id for c in it.candidates]) for t in ch.tasks for it in ch.items[t]]
        for x in out if bad else ():
            x["lst_candidate_id"][0]["rank"] = "first"  # a rank that is no integer
        return out

    both = write_json(tmp_path / "both.json", items(tst1) + items(tst2, bad=True))
    alone = write_json(tmp_path / "tst1.json", items(tst1))
    rc, rep = _report(both, "--challenge", root, "--split", "tst1")
    assert rc == 0 and [(p["code"], p["message"]) for p in rep["problems"]] == [
        ("other-split", "12 items of split tst2 left out (split tst1 is scored): neither checked nor scored")]
    assert rep["results"] == _report(alone, "--challenge", root, "--split", "tst1")[1]["results"]
    # tst2's items alone, scored as tst1: the one wrong-split error, not one error per item
    rc, rep = _report(write_json(tmp_path / "tst2.json", items(tst2, bad=True)), "--challenge", root, "--split", "tst1")
    assert rc == 1 and [p["code"] for p in rep["problems"] if p["severity"] == "error"] == ["wrong-split"]
    assert rep["problems"][0]["message"] == ("12 of the 12 dialog ids that are not in split tst1 belong to split tst2: "
                                             "score with --split tst2")


@pytest.mark.realdata
def test_babi_dev_items_beside_tst_ones_are_left_out(babi_runs, tmp_path):
    from dialeval.benchmarks.babi import load_items

    dev = load_items(BABI, 1, "dev")
    odd = [{"dialog_id": i, "lst_candidate_id": [{"candidate_id": "99999", "rank": 1}]} for i in dev.item_ids]
    both = write_json(tmp_path / "both.json", json.loads(babi_runs["ranked"][1].read_text()) + odd)
    args = ("--benchmark", "babi", "--data", BABI, "--split", "tst", "--task", "1")
    rc, rep = _report(both, *args)
    assert rc == 0 and [p["message"] for p in rep["problems"]] == [
        f"{len(odd):,} items of split dev left out (split tst is scored): neither checked nor scored"]
    assert _numbers(rep, "1") == _numbers(_report(babi_runs["ranked"][1], *args)[1], "1")


def test_douban_json_scores_of_another_split_are_left_out(tmp_path):
    db, n, both, alone, bad = _douban_dev_and_test(tmp_path)
    ev = score(both, "test", benchmark="douban", data=str(db))
    assert ev.valid and [p.message for p in ev.problems] == [
        f"{n} items of split dev left out (split test is scored): neither checked nor scored"]
    assert ev.records == score(alone, "test", benchmark="douban", data=str(db)).records
    ev = score(write_json(tmp_path / "dev.json", {"format": "scores", "items": bad}), "test", benchmark="douban",
               data=str(db))
    assert not ev.valid and [p.code for p in ev.problems if p.severity == "error"] == ["wrong-split"]


def test_dstc7_zip_members_of_other_subtasks_are_left_out(tmp_path):
    """A DSTC7 zip holds one file per subtask; --task ubuntu-1 scores that member alone, even beside a broken one."""
    import zipfile

    from dialeval.core.errors import UsageError

    runs = {f.name: f for f in (SAMPLES.parent / "baselines" / "dstc7" / "tfidf").glob("*_subtask_[0-9].json")}
    z = tmp_path / "team.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.write(runs["Ubuntu_subtask_1.json"], "Ubuntu_subtask_1.json")
        zf.write(runs["Advising_subtask_3.json"], "Advising_subtask_3.json")
        zf.writestr("Ubuntu_subtask_4.json", json.dumps([{"example-id": 1}]))  # broken, and not asked for
    ev = score(z, "dev", benchmark="dstc7", data=SAMPLES / "dstc7", tasks=["ubuntu-1"])
    alone = score(runs["Ubuntu_subtask_1.json"], "dev", benchmark="dstc7", data=SAMPLES / "dstc7", tasks=["ubuntu-1"])
    assert ev.valid and ev.groups == ["ubuntu-1"] and [p.message for p in ev.problems] == [
        "2 files of subtasks other than ubuntu-1 left out (--task ubuntu-1): neither checked nor scored"]
    assert [r["value"] for r in ev.records] == [r["value"] for r in alone.records]
    with pytest.raises(UsageError, match=r"no file of team.zip answers --task ubuntu-2 \(its files answer advising-3, "):
        score(z, "dev", benchmark="dstc7", data=SAMPLES / "dstc7", tasks=["ubuntu-2"])


def test_dstc6_folder_result_files_of_other_splits_are_one_note(tmp_path):
    root = tmp_path / "challenge"
    chs = [make_challenge(root, split=s, seed=n) for n, s in enumerate(("tst1", "tst2", "tst3"), 6)]
    for ch in chs:
        for test in sorted(ch.split_dir.glob("dialog-task*.json")):
            if test.name.endswith(".answers.json"):
                continue
            task = int(test.name[len("dialog-task")])
            write_json(tmp_path / "run" / ch.split / test.name.replace(".json", ".answers.json"),
                       [ranking(it.dialog_id, [c.candidate_id for c in it.candidates]) for it in ch.items[task]])
    rc, rep = _report(tmp_path / "run", "--challenge", root, "--split", "tst2")
    assert rc == 0 and rep["problems"] == []
    assert rep["notes"][0] == "6 result files of splits tst1, tst3 left out (split tst2 is scored): not read"


def _douban_dev_and_test(tmp_path):
    """A Douban folder with dev.txt and test.txt (the sample's), JSON scores of every test item plus dev items that
    name a candidate that does not exist (``both``), of the test items alone (``alone``), and the dev items' scores (``bad``)."""
    db = tmp_path / "douban"
    db.mkdir()
    shutil.copy(SAMPLES / "douban" / "test.txt", db / "test.txt")
    shutil.copy(SAMPLES / "douban" / "test.txt", db / "dev.txt")
    n = sum(1 for _ in open(db / "test.txt")) // 10
    test = {f"test:{r}": {str(c): (c * r) % 7 + 0.5 for c in range(1, 11)} for r in range(1, n + 1)}
    bad = {f"dev:{r}": {"99": "x"} for r in range(1, n + 1)}
    both = write_json(tmp_path / "d.json", {"format": "scores", "items": {**bad, **test}})
    alone = write_json(tmp_path / "d1.json", {"format": "scores", "items": test})
    return db, n, both, alone, bad
