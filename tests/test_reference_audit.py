"""Claims of ``shared/reference/*.md`` that no other test pinned, checked against the reference text and real data.

Each test names the reference section it pins. Tests that read the reference documents or the real data skip when
``../shared`` is absent (an installed wheel, a fresh clone).
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
from collections import Counter
from pathlib import Path

import pytest
from conftest import SHARED

from dialeval.files.releases import registry

REFERENCE = SHARED / "reference"
DATA = SHARED / "data"
REPO = Path(__file__).resolve().parents[1]
TST1 = DATA / "dstc6" / "tst1"


def needs(path: Path):
    return pytest.mark.skipif(not path.exists(), reason=f"not found: {path}")


def _shipped():
    return registry(REPO / "evaluator" / "files" / "releases.json")


# ---- releases.md: every archive and file checksum ----------------------------------------------------------------
@needs(REFERENCE / "releases.md")
def test_the_shipped_registry_holds_every_checksum_of_releases_md():
    text = (REFERENCE / "releases.md").read_text(encoding="utf-8")
    reg = _shipped()
    archives = {(a.url, a.sha256) for r in reg.releases.values() for a in r.archives}
    rows = re.findall(r"^\| ([^|]+?) \| (http\S+)(?: \(a \.tgz\))? \| ([0-9a-f]{64}) \|$", text, re.M)
    assert len(rows) == 5
    for _, url, sha in rows:
        assert (url, sha) in archives, url
    # the file tables: the section heading names the release, each row its path and sha256
    release_of = {"DSTC6": "dstc6", "bAbI": "babi-dialog", "Movie": "movie-dialog"}
    files = {}
    for section in re.split(r"^### ", text, flags=re.M)[1:]:
        name = release_of[section.split()[0]]
        for path, sha in re.findall(r"^\| (\S+) \| ([0-9a-f]{64}) \|$", section, re.M):
            files[name, path] = sha
    assert len(files) == 40 + 29 + 11
    shipped = {(r.name, f.path): f.sha256 for r in reg.releases.values() for f in r.files}
    assert shipped == files
    # response-selection.md: ConvAI2's archive as ParlAI checks it
    convai2 = re.search(r"`convai2_fix_723.tgz`, sha256 `([0-9a-f]{64})`",
                        (REFERENCE / "response-selection.md").read_text(encoding="utf-8")).group(1)
    assert [a.sha256 for a in reg.get("convai2").archives] == [convai2]


@pytest.mark.realdata
@needs(DATA)
def test_every_shared_data_file_the_registry_names_is_the_published_release():
    """Every real file under ../shared/data whose name the registry knows hashes to the published sha256 (the KB
    files of DSTC6 have no published hash: unknown)."""
    reg = _shipped()
    seen = Counter()
    for path in sorted(p for p in DATA.rglob("*") if p.is_file()):
        check = reg.check(path.name, hashlib.sha256(path.read_bytes()).hexdigest())
        seen[check.status] += 1
        if path.name.startswith("extendedkb"):
            assert check.status == "unknown", path
        else:
            assert check.status == "match", (path, check)
    assert seen["match"] >= 40 and seen["modified"] == 0


# ---- targets.md: the DSTC6 overview's per-team tables -------------------------------------------------------------
@needs(REFERENCE / "dstc6-2017-team-results.csv")
def test_the_shipped_reported_results_are_the_reference_table():
    def rows(path: Path) -> list[tuple]:
        with path.open(encoding="utf-8", newline="") as f:
            return [(r["team"], r["split"], r["task"], float(r["p@1"]), float(r["p@2"]), float(r["p@5"]), r["source"])
                    for r in csv.DictReader(f)]

    shipped = rows(REPO / "submissions" / "reported" / "dstc6-2017.csv")
    assert shipped == rows(REFERENCE / "dstc6-2017-team-results.csv") and len(shipped) == 200
    assert {r[0] for r in shipped} == {str(t) for t in range(1, 11)}


# ---- formats.md §1: the real DSTC6 test files and answer keys ----------------------------------------------------
@pytest.mark.realdata
@needs(TST1)
def test_real_dstc6_test_files_have_the_documented_shape_and_keys_are_written_byte_for_byte(tmp_path):
    """1,000 items per file; 7 to 10 candidates (mostly 7); 126-559 items per file with one text under two ids,
    the gold text never among them; 36-character ids unique in a file; one JSON line without a newline, keys in the
    order dialog_id, candidates, utterances; answer keys of one rank-1 entry per item, 146 bytes each, which
    dialeval's result writer reproduces byte for byte."""
    from dialeval.formats.dstc6 import gold_from_answer_key_json, read_dataset, write_results

    files = sorted(p for p in TST1.glob("*.json") if not p.name.endswith(".answers.json"))
    assert len(files) == 5
    for path in files:
        raw = path.read_bytes()
        assert b"\n" not in raw and raw.startswith(b'[{"dialog_id": ')
        assert all(list(o) == ["dialog_id", "candidates", "utterances"] for o in json.loads(raw))
        items = read_dataset(path)
        key_path = path.with_name(path.name[: -len(".json")] + ".answers.json")
        key = json.loads(key_path.read_bytes())
        gold = gold_from_answer_key_json(key)
        assert len(items) == len(key) == len(gold) == 1000
        assert len(key_path.read_bytes()) == 146 * 1000
        assert all(len(e["lst_candidate_id"]) == 1 and e["lst_candidate_id"][0]["rank"] == 1 for e in key)
        sizes = Counter(len(it.candidates) for it in items)
        assert set(sizes) <= set(range(7, 11)) and sizes.most_common(1)[0][0] == 7
        ids = [it.dialog_id for it in items]
        assert len(set(ids)) == 1000 and {len(i) for i in ids} == {36}
        twice = 0
        for it in items:
            texts = Counter(c.utterance for c in it.candidates)
            by_id = {c.candidate_id: c.utterance for c in it.candidates}
            assert len(by_id) == len(it.candidates) and gold[it.dialog_id] in by_id
            assert texts[by_id[gold[it.dialog_id]]] == 1  # the gold text is never duplicated
            twice += any(n > 1 for n in texts.values())
        assert 126 <= twice <= 559, (path.name, twice)
        out = tmp_path / key_path.name
        write_results(out, [(e["dialog_id"], [e["lst_candidate_id"][0]["candidate_id"]]) for e in key])
        assert out.read_bytes() == key_path.read_bytes()


@pytest.mark.realdata
@needs(TST1)
def test_random_ranking_on_real_tst1_is_the_documented_chance(tmp_path):
    """targets.md: a random ranking of 7-10 candidates expects P@1 ≈ 0.14, P@2 ≈ 0.28, P@5 ≈ 0.70 (the mean of
    min(k, n) / n); dialeval's random baseline scores within three standard errors of that mean on each file."""
    from dialeval.api import score
    from dialeval.baselines.run import run_baseline
    from dialeval.formats.dstc6 import read_dataset

    written = run_baseline("random", TST1.parent, "tst1", tmp_path / "random", seed=3)
    assert len(written) == 5
    report = score(tmp_path / "random", split="tst1", challenge=TST1.parent)
    sizes = [len(it.candidates) for p in sorted(TST1.glob("*-tst1000.json")) for it in read_dataset(p)]
    for k, documented in ((1, 0.14), (2, 0.28), (5, 0.70)):
        chance = [min(k, n) / n for n in sizes]
        expected = sum(chance) / len(chance)
        assert round(expected, 2) == documented
        se = (sum(p * (1 - p) for p in chance) ** 0.5) / len(chance)
        assert abs(report.value(f"p@{k}", "tst1") - expected) < 3 * se, k


# ---- formats.md §1: the KB files ----------------------------------------------------------------------------------
@pytest.mark.realdata
@needs(DATA / "dstc6" / "extendedkb2.txt")
def test_real_kbs_have_the_documented_shape():
    from dialeval.simulator.kb import read_kb

    shared = {"price": {"cheap", "moderate", "expensive"}, "atmosphere": {"business", "casual", "romantic"},
              "restrictions": {"glutenfree", "vegan", "vegetarian"}, "number": {"two", "four", "six", "eight"}}
    own = {"kb1": ({"bombay", "london", "madrid", "paris", "rome"}, {"british", "french", "indian", "italian", "spanish"}),
           "kb2": ({"bangkok", "beijing", "hanoi", "seoul", "tokyo"},
                   {"cantonese", "japanese", "korean", "thai", "vietnamese"})}
    names = {}
    for kb, (locations, cuisines) in own.items():
        path = DATA / "dstc6" / f"extended{kb}.txt"
        lines = path.read_text(encoding="utf-8").splitlines()
        assert len(lines) == 48_600 and all(re.fullmatch(r"1 \S+ R_[a-z]+\t\S+", ln) for ln in lines)
        assert Counter(ln.split(" ")[2].split("\t")[0] for ln in lines) == {
            f"R_{a}": 5400 for a in ("location", "price", "rating", "phone", "cuisine", "atmosphere", "restrictions",
                                     "number", "address")}
        restaurants = read_kb(path).restaurants
        assert len(restaurants) == 5400
        assert {r.location for r in restaurants} == locations and {r.cuisine for r in restaurants} == cuisines
        for attr, values in shared.items():
            assert {getattr(r, attr) for r in restaurants} == values, attr
        assert all(isinstance(r.rating, int) for r in restaurants)
        assert all(r.phone == f"{r.name}_phone" and r.address == f"{r.name}_address" for r in restaurants)
        names[kb] = {r.name for r in restaurants}
    assert not names["kb1"] & names["kb2"]


# ---- formats.md §2-3: bAbI conversation counts, Movie Dialog entities with commas ---------------------------------
@pytest.mark.realdata
@needs(DATA / "babi-dialog")
def test_real_babi_conversation_counts():
    """1,000 conversations per split for tasks 1-5; task 6: 1,618 / 500 / 1,117 (trn / dev / tst)."""
    from dialeval.benchmarks.babi import load_items

    babi = DATA / "babi-dialog"
    for task in range(1, 7):
        splits = ("trn", "dev", "tst", "tst-OOV") if task < 6 else ("trn", "dev", "tst")
        counts = {s: len(set(load_items(babi, task, s, with_gold=False).conversation_ids)) for s in splits}
        want = dict.fromkeys(splits, 1000) if task < 6 else {"trn": 1618, "dev": 500, "tst": 1117}
        assert counts == want, task


@pytest.mark.realdata
@needs(DATA / "movie-dialog" / "entities.txt")
def test_real_movie_entities_with_a_comma():
    """244 entities contain a comma (``Girl, Interrupted``): answers are split against the entity list."""
    from dialeval.formats.movie import read_entities, split_answer

    ents = read_entities(DATA / "movie-dialog" / "entities.txt")
    with_comma = [t for t in ents.texts if "," in t]
    assert len(with_comma) == 244 and "Girl, Interrupted" in with_comma
    ids, unmatched = split_answer("Girl, Interrupted, Alien", ents)
    assert [ents.texts[ents.ids.index(i)] for i in ids] == ["Girl, Interrupted", "Alien"] and unmatched == 0


def test_dstc6_ids_are_opaque_strings_compared_exactly(tiny, tmp_path):
    """formats.md §1: ids are compared exactly (case-sensitive). An upper-cased dialog id or candidate id is unknown
    to the strict validator; the official scorer's emulation accepts it, and it matches no gold (a miss)."""
    from conftest import write_json

    from dialeval.api import score

    sub = tiny.perfect()
    sub[0]["dialog_id"] = sub[0]["dialog_id"].upper()
    sub[1]["lst_candidate_id"][0]["candidate_id"] = sub[1]["lst_candidate_id"][0]["candidate_id"].upper()
    assert sub[0]["dialog_id"] != tiny.perfect()[0]["dialog_id"]  # uuid4 ids hold hex letters
    path = write_json(tmp_path / "upper.json", sub)
    strict = score(path, split="tst1", challenge=tiny.root)
    assert not strict.valid
    assert {(p.code, p.pointer) for p in strict.problems if p.severity == "error"} == {
        ("unknown-dialog", "/0/dialog_id"), ("unknown-candidate", "/1/lst_candidate_id/0/candidate_id")}
    lenient = score(path, split="tst1", challenge=tiny.root, lenient=True)
    n = len(tiny.all_items())
    assert lenient.valid and lenient.value("p@1", "tst1") == (n - 2) / n


@needs(REFERENCE / "targets.md")
def test_published_and_derived_dstc6_bands_disagree_for_teams_6_7_8():
    """targets.md: the overview's bands put teams 1, 2 in solved, 3, 6, 9 in 0.9-1.0, 5 in 0.5-0.9 and 7, 8, 10 below
    0.5 (team 4, a double submission of team 1, in none); the fixed thresholds applied to the per-team tables' mean
    P@1 disagree for teams 6, 7 and 8 only."""
    from dialeval.leaderboard.reported import threshold_band

    with (REPO / "submissions" / "reported" / "dstc6-2017.csv").open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    published, p1 = {}, {}
    for r in rows:
        published.setdefault(int(r["team"]), set()).add(r["published_band"])
        p1.setdefault(int(r["team"]), []).append(float(r["p@1"]))
    assert {t: b.pop() for t, b in published.items() if len(b) == 1} == {
        1: "solved (P@1 = 1.0)", 2: "solved (P@1 = 1.0)", 3: "0.9 < P@1 < 1.0", 4: "", 5: "0.5 < P@1 < 0.9",
        6: "0.9 < P@1 < 1.0", 7: "P@1 < 0.5", 8: "P@1 < 0.5", 9: "0.9 < P@1 < 1.0", 10: "P@1 < 0.5"}
    assert all(len(v) == 20 for v in p1.values())
    derived = {t: threshold_band(sum(v) / len(v)) for t, v in p1.items()}
    wanted = {1: "solved", 2: "solved", 3: "0.9", 5: "0.5", 6: "0.9", 7: "P@1 < 0.5", 8: "P@1 < 0.5", 9: "0.9",
              10: "P@1 < 0.5"}
    assert {t for t, band in wanted.items() if not derived[t].startswith(band)} == {6, 7, 8}


# ---- tasks.md: the task rules the simulator follows ----------------------------------------------------------------
def test_simulated_tasks_follow_the_papers_rules():
    """tasks.md: task 1 states 0 to all slots (uniform) and the bot asks for each missing one; task 2 changes a slot 1
    to 4 times, the bot asking after each; task 3 shows at least 3 restaurants, the user accepts a proposal with
    probability 25 % and always the last; task 4 asks for the phone, the address or both (25 / 25 / 50 %); task 5's
    final call returns at least one restaurant. Seeded, so the frequencies are fixed numbers within the bounds."""
    import random

    from dialeval.simulator import language as L
    from dialeval.simulator.kb import build_kb
    from dialeval.simulator.tasks import SLOTS_BASE, TaskSimulator

    kb, n = build_kb("kb1"), 1200

    def conversations(task):
        sim = TaskSimulator(task, kb, False, random.Random(task), "test")
        return [sim.conversation() for _ in range(n)]

    def bots(c):
        return [c.utts[i] for i in c.bots]

    def shares(counts: Counter) -> dict:
        return {k: v / n for k, v in counts.items()}

    asks = set(L.ASK.values())
    stated = shares(Counter(len(SLOTS_BASE) - sum(b in asks for b in bots(c)) for c in conversations(1)))
    assert set(stated) == set(range(len(SLOTS_BASE) + 1)) and all(abs(s - 1 / 6) < 0.04 for s in stated.values())
    updates = shares(Counter(sum(b == L.UPDATE for b in bots(c)) for c in conversations(2)))
    assert set(updates) == {1, 2, 3, 4} and all(abs(s - 1 / 4) < 0.05 for s in updates.values())
    first, shown = 0, Counter()
    for c in conversations(3):
        (start, end), = c.facts
        shown[(end - start) // 9] += 1  # nine fact lines per restaurant
        b = bots(c)
        proposals = sum(x.startswith(L.PROPOSE) for x in b)
        assert b[-1] == L.BOOK and b.count(L.BOOK) == 1 and proposals <= (end - start) // 9
        first += proposals == 1 and (end - start) // 9 > 1
    assert min(shown) >= 3 and abs(first / (n - shown[1]) - 0.25) < 0.04
    asked = shares(Counter(frozenset(x.rsplit("_", 1)[1] for x in bots(c) if x.startswith(L.HERE))
                           for c in conversations(4)))
    assert abs(asked[frozenset({"phone"})] - 0.25) < 0.04 and abs(asked[frozenset({"address"})] - 0.25) < 0.04
    assert abs(asked[frozenset({"phone", "address"})] - 0.5) < 0.04
    for c in conversations(5)[:300]:
        call = [x for x in bots(c) if x.startswith("api_call ")][-1]
        assert kb.matches(tuple(call.split()[1:])), call


@pytest.mark.realdata
@needs(TST1)
def test_simulated_utterances_have_the_real_files_layout(tmp_path):
    """formats.md §1: no speaker tags; ``<silence>`` in lower case; KB fact lines ``<restaurant> r_<attr> <value>`` in
    lower case; in tasks 3 and 4 the fact lines come first, in task 5 after the ``api_call`` line. The simulator's
    tst1 has the real tst1's layout, task by task."""
    from dialeval.simulator import generate_challenge

    fact = re.compile(r"^\S+ r_[a-z]+ \S+$")

    def layout(folder: Path) -> dict[int, tuple]:
        out = {}
        for path in sorted(folder.glob("dialog-task*-tst*.json")):
            if path.name.endswith(".answers.json"):
                continue
            utts = [it["utterances"] for it in json.loads(path.read_text(encoding="utf-8"))]
            facts_first = {bool(fact.match(u[0])) for u in utts}
            first_fact = [next((i for i, x in enumerate(u) if fact.match(x)), None) for u in utts]
            after_call = {any(x.startswith("api_call ") for x in u[:i]) for u, i in zip(utts, first_fact) if i}
            shouting = any("<SILENCE>" in x or " R_" in x or x.startswith(("user:", "bot:")) for u in utts for x in u)
            out[int(path.name[len("dialog-task")])] = (facts_first, after_call, any("<silence>" in u for u in utts),
                                                       shouting)
        return out

    real = layout(TST1)
    assert real[3][0] == real[4][0] == {True} and real[5][:2] == ({False}, {True})
    assert not any(r[3] for r in real.values())
    generate_challenge(tmp_path / "c", seed=1, n_train=0, n_test=60, splits="tst1")
    assert layout(tmp_path / "c" / "tst1") == real


@pytest.mark.realdata
@needs(TST1)
def test_simulated_bot_wording_is_the_real_dstc6_wording():
    """tasks.md / formats.md §1: the bot has one wording per act, and DSTC6's differs from bAbI's in places ("which
    price range are you looking for"). Every bot act of the simulator is worded as the real tst1 golds are, and every
    real gold (names and api_call arguments aside) is one of them (tst1 asks no dietary restriction)."""
    from dialeval.formats.dstc6 import gold_from_answer_key_json, read_dataset
    from dialeval.simulator import language as L

    def act(text: str) -> str:
        for prefix in (L.PROPOSE, L.OPTION_WAS, L.HERE, "api_call "):
            if text.startswith(prefix):
                return prefix + ("<phone>" if text.endswith("_phone") else "<address>" if text.endswith("_address")
                                 else "<args>" if prefix == "api_call " else "<name>")
        return text

    real = set()
    for path in sorted(TST1.glob("*-tst1000.json")):
        gold = gold_from_answer_key_json(json.loads(path.with_name(path.stem + ".answers.json").read_bytes()))
        for it in read_dataset(path):
            real.add(act(next(c.utterance for c in it.candidates if c.candidate_id == gold[it.dialog_id])))
    fixed = {L.HELLO, L.ON_IT, L.LOOKING, L.READY, L.UPDATE, L.ANOTHER, L.BOOK, L.ANYTHING, L.WELCOME, L.SORRY}
    simulated = fixed | {v for k, v in L.ASK.items() if k != "restrictions"} | {
        L.PROPOSE + "<name>", L.OPTION_WAS + "<name>", L.HERE + "<phone>", L.HERE + "<address>", "api_call <args>"}
    assert real == simulated
    assert "which price range are you looking for" in real


# ---- targets.md: Bordes & Weston Table 2, every cell -------------------------------------------------------------
@needs(REFERENCE / "targets.md")
def test_the_embedded_babi_table_2_is_the_reference_table_cell_for_cell():
    """All 132 numbers (6 methods x 11 rows, per-response and per-dialog) the reproduction targets are measured
    against are targets.md's."""
    from dialeval.baselines.reproduce import PAPER_COLUMNS, PAPER_TABLE2

    text = (REFERENCE / "targets.md").read_text(encoding="utf-8")
    section = text.split("## bAbI dialog", 1)[1].split("\n## ", 1)[0]
    header = next(ln for ln in section.splitlines() if ln.startswith("| task |"))
    assert [c.strip() for c in header.strip("|").split("|")][1:] == ["rule-based", "TF-IDF match", "nearest neighbor",
                                                                      "supervised embeddings", "MemNN", "MemNN + match"]
    reference = {}
    for row in re.findall(r"^\| (T\d(?: OOV)?) \|(.+)\|$", section, re.M):
        task, split = int(row[0][1]), "tst-OOV" if row[0].endswith("OOV") else "tst"
        for column, cell in zip(PAPER_COLUMNS, row[1].split("|"), strict=True):
            resp, dial = re.fullmatch(r"\s*([\d.]+) \(([\d.]+)\)\s*", cell).groups()
            reference[column, task, split] = (float(resp), float(dial))
    assert len(reference) == 66 and PAPER_TABLE2 == reference


@needs(REFERENCE / "airdialogue.md")
def test_airdialogue_paper_totals_scaled_and_exact_follow_from_the_components():
    """airdialogue.md, Tables 9-10: every row's total, scaled and exact-match, is 0.2 name + 0.5 flight + 0.3 status
    of its components (to the paper's rounding) under dialeval's weights."""
    from dialeval.metrics.airdialogue import total

    text = " ".join((REFERENCE / "airdialogue.md").read_text(encoding="utf-8").split())  # rows wrap across lines
    cell = r"([\d.]+)\(([\d.]+)%\)"
    rows = re.findall(rf"{cell} {cell} {cell} ([\d.]+)\(([\d.]+)\)", text)
    assert len(rows) == 11
    for row in rows:
        name, name_x, flight, flight_x, status, status_x, tot, tot_x = map(float, row)
        assert float(total(name, flight, status)) == pytest.approx(tot, abs=0.005 + 1e-9), row
        assert float(total(name_x / 100, flight_x / 100, status_x / 100)) == pytest.approx(tot_x, abs=0.005 + 1e-9), row


# ---- response-selection.md: DSTC7/DSTC8 file names ----------------------------------------------------------------
@pytest.mark.parametrize("name, fields", [
    ("ubuntu_train_subtask_1.json", ("ubuntu", 1, "train")), ("ubuntu_dev_subtask_1.json", ("ubuntu", 1, "dev")),
    ("Ubuntu_st1_test", ("ubuntu", 1, "test")), ("Ubuntu_st1_ground_truth", ("ubuntu", 1, None)),
    ("Advising_st1_case1_test", ("advising", 1, "test")), ("Advising_st1_case2_test", ("advising", 1, "test")),
    ("Ubuntu_st2_test", ("ubuntu", 2, "test")), ("task-1.ubuntu.train.json", ("ubuntu", 1, "train")),
    ("task-1.ubuntu.dev.json", ("ubuntu", 1, "dev")), ("Ubuntu_subtask_1.json", ("ubuntu", 1, None)),
    ("Advising_subtask_3.json", ("advising", 3, None)),
])
def test_dstc7_and_dstc8_released_names_give_dataset_subtask_and_split(name, fields):
    """The organisers' file names (noesis-tf/README.md, datasets.rst, NOESIS-II subtask1/README.md) and the
    submission names (submission.rst) say the dataset, the subtask and the split they hold."""
    from dialeval.formats.dstc7 import name_fields

    assert name_fields(name) == fields
