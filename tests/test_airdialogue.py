"""AirDialogue: metrics by hand, agreement with a per-flight reference, strict and lenient reading, simulator,
baselines, schemas, BLEU."""

from __future__ import annotations

import json
import random
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from dialeval.api import evaluate
from dialeval.baselines.airdialogue import write_reference_submissions, write_submission
from dialeval.benchmarks.airdialogue import AirDialogue
from dialeval.core.errors import UsageError
from dialeval.formats.airdialogue import read_kb_arrays
from dialeval.metrics import airdialogue as adm
from dialeval.simulator.airdialogue import generate, write_airdialogue

MONTHS = adm.MONTHS


# ----------------------------------------------------------------------------------------------- helpers
def flight(n, a1="HOU", a2="JFK", m1="Feb", m2="Feb", d1="22", d2="23", t1=2, t2=11, cl="economy", pr=100, cn=1,
           al="JetBlue"):
    return {"departure_airport": a1, "return_airport": a2, "departure_month": m1, "return_month": m2,
            "departure_day": d1, "return_day": d2, "departure_time_num": t1, "return_time_num": t2, "class": cl,
            "price": pr, "num_connections": cn, "airline": al, "flight_number": n}


def write_split(d: Path, items, split="dev"):
    """items: (kb flights, reservation, expected_action)."""
    d.mkdir(parents=True, exist_ok=True)
    with open(d / f"{split}_data.json", "w") as f:
        for _kb, _res, gold in items:
            f.write(json.dumps({"intent": {}, "expected_action": gold}) + "\n")
    with open(d / f"{split}_kb.json", "w") as f:
        for kb, res, _gold in items:
            f.write(json.dumps({"kb": kb, "reservation": res}) + "\n")


def write_preds(path: Path, lines):
    with open(path, "w") as f:
        for x in lines:
            f.write((x if isinstance(x, str) else json.dumps(x)) + "\n")
    return path


def score(path, data, **options):
    _, ev = evaluate(path, benchmark="airdialogue", data=data, split="dev", options=options)
    return ev


def act(name="Edward Evans", flight=(), status="book"):
    return {"action": {"name": name, "flight": list(flight), "status": status}}


G = flight(1000)  # the gold flight of the hand-computed items
P = flight(1001, m1="Mar", m2="Mar", d1="1", d2="2", t1=14, cl="business", pr=300, cn=0, al="Spirit")
F = flight(1002, a1="LAX", a2="SFO", m1="Dec", m2="Dec", d1="31", d2="31", t1=23, t2=0, cl="business", pr=1000, cn=2,
           al="UA")
D_PG = (0 + 0 + 1 / 12 + 1 / 12 + 21 / 31 + 21 / 31 + 12 / 24 + 0 + 1 + 1 + 1 / 2 + 0) / 12
D_FG = (1 + 1 + 10 / 12 + 10 / 12 + 9 / 31 + 8 / 31 + 21 / 24 + 11 / 24 + 1 + 1 + 1 / 2 + 1) / 12
# Legacy: months/days categorical; hours, price, connections relative to the gold value, capped at 1.
L_PG = (0 + 0 + 1 + 1 + 1 + 1 + 1 + 0 + 1 + 1 + 1 + 0) / 12  # hour 14 vs 2: 6 -> 1; price 300 vs 100: 2 -> 1; cn 0 vs 1: 1
L_FG = (1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1) / 12  # t2 0 vs 11: 1; cn 2 vs 1: 1


@pytest.fixture(scope="module")
def hand(tmp_path_factory):
    d = tmp_path_factory.mktemp("ad_hand")
    gold = {"name": "Edward Evans", "flight": [1000], "status": "book"}
    write_split(d, [([G, P, F], 0, gold)])
    return d


# --------------------------------------------------------------------------------------- names by hand
def test_name_f1_by_hand():
    # punctuation and articles go, word order is invisible
    assert adm.name_f1("The Evans, Edward.", "Edward Evans") == 1.0
    # "jon smith" (9 chars) vs "john smith" (10): 9 shared -> P = 1, R = 0.9
    assert adm.name_f1("Jon Smith", "John Smith") == pytest.approx(2 * 0.9 / 1.9, abs=1e-15)
    assert adm.name_f1("", "") == 0.0  # nothing shared, even when both are empty
    assert adm.name_f1("A", "") == 0.0  # "a" is an article
    # "<unk> <unk>" (the toolkit's fill-in) -> "unk unk": shares u, n, space with "sun lee" -> "sun lee"
    p, g = "unk unk", "sun lee"
    same = 3  # u, n and one space
    assert adm.name_f1("<unk> <unk>", "Sun Lee") == pytest.approx(2 * (same / len(p)) * (same / len(g))
                                                                 / (same / len(p) + same / len(g)))


def test_name_exact_by_hand():
    assert adm.name_exact("edward evans", "Edward Evans") == 1.0
    assert adm.name_exact("Edward Smith", "Edward Evans") == 0.5
    assert adm.name_exact("Edward", "Edward Evans") == 0.5  # a missing token is a mismatch (toolkit: IndexError)
    assert adm.name_exact("Evans Edward", "Edward Evans") == 0.0
    assert adm.name_exact(" Edward Evans", "Edward Evans") == 0.0  # split on single spaces: first token ''
    assert adm.name_exact(" Edward Evans ", "edward evans", "whole") == 1.0
    assert adm.name_exact("Edward Evans Jr", "Edward Evans", "whole") == 0.0
    assert adm.name_exact("Edward Evans Jr", "Edward Evans", "tokens") == 1.0


# -------------------------------------------------------------------------------------- flights by hand
def test_flight_distance_by_hand(hand):
    kb = read_kb_arrays(hand / "dev_kb.json")
    rows, g = np.array([0]), np.array([0])
    cur = adm.distance_current(kb, rows, g)[0]
    assert cur[0] == 0 and cur[1] == pytest.approx(D_PG, abs=1e-15) and cur[2] == pytest.approx(D_FG, abs=1e-15)
    leg = adm.distance_legacy(kb, rows, g)[0]
    assert leg[1] == pytest.approx(L_PG, abs=1e-15) and leg[2] == pytest.approx(L_FG, abs=1e-15)
    # asymmetry of the legacy distance: P measured against P as the gold
    back = adm.distance_legacy(kb, rows, np.array([1]))[0][0]
    # hour 2 vs 14: 12/14; price 100 vs 300: 2/3; connections 1 vs 0: gold 0 -> 1
    assert back == pytest.approx((4 + 12 / 14 + 0 + 1 + 2 / 3 + 1) / 12, abs=1e-15)


@pytest.mark.parametrize("distance,expected", [
    ("current", 1 - D_PG / max(D_PG, D_FG)),
    ("legacy", 1 - L_PG / max(L_PG, L_FG)),
])
def test_scaled_flight_by_hand(hand, tmp_path, distance, expected):
    ev = score(write_preds(tmp_path / "p.jsonl", [act(flight=[1001])]), hand, flight_distance=distance)
    v = ev.table.values
    assert v["flight"][0] == pytest.approx(expected, abs=1e-15)
    assert v["flight-exact"][0] == 0 and v["name"][0] == 1 and v["status"][0] == 1
    assert v["score"][0] == pytest.approx(0.2 + 0.5 * expected + 0.3, abs=1e-15)
    assert v["exact"][0] == pytest.approx(0.5, abs=1e-15)
    assert ev.signature_fields["flight-distance"] == distance


def test_airline_cost_class(tmp_path):
    # Spirit vs JetBlue: both low-cost -> 0; UA vs JetBlue -> 1 (only the airline differs)
    low = flight(1001, al="Spirit")
    normal = flight(1002, al="UA")
    far = flight(1003, a1="LAX")  # one airport different: d = 1/12
    d = tmp_path / "data"
    write_split(d, [([G, low, normal, far], 0, {"name": "A B", "flight": [1000], "status": "book"})] * 3)
    ev = score(write_preds(tmp_path / "p", [act("A B", [1001]), act("A B", [1002]), act("A B", [1003])]), d)
    f = ev.table.values["flight"]
    assert f[0] == 1.0  # distance 0 but not the gold: scaled 1, exact 0
    assert ev.table.values["flight-exact"][0] == 0.0
    assert f[1] == 0.0 and f[2] == 0.0  # 1/12 over a max of 1/12


def test_flight_special_cases(tmp_path):
    d = tmp_path / "data"
    empty_gold = {"name": "A B", "flight": [], "status": "no_flight"}
    two_gold = {"name": "A B", "flight": [1000, 1002], "status": "book"}
    one_gold = {"name": "A B", "flight": [1000], "status": "book"}
    write_split(d, [([G, P, F], 0, empty_gold), ([G, P, F], 0, empty_gold), ([G, P, F], 0, two_gold),
                    ([G, P, F], 0, two_gold), ([G, P, F], 0, one_gold), ([G, P, F], 0, one_gold),
                    ([G, P, F], 0, one_gold)])
    preds = [act("A B", [], "no_flight"), act("A B", [1000], "no_flight"), act("A B", [1002]), act("A B", [1001]),
             act("A B", [1000, 1001]), act("A B", [4242]), act("A B", [])]
    ev = score(write_preds(tmp_path / "p", preds), d)
    assert ev.valid, [p.format() for p in ev.problems]
    f, fx = ev.table.values["flight"], ev.table.values["flight-exact"]
    assert f[0] == 1 and fx[0] == 1  # empty gold, empty prediction
    assert f[1] == 0 and fx[1] == 0  # empty gold, a flight
    assert f[2] == 1 and fx[2] == 1  # one of several gold flights
    # several gold flights: min over gold of d(P, g), max over every (f != g) pair
    d_pf = (1 + 1 + 9 / 12 + 9 / 12 + 30 / 31 + 29 / 31 + 9 / 24 + 11 / 24 + 0 + min(1, 700 / 300) + 1 + 1) / 12
    assert f[3] == pytest.approx(1 - min(D_PG, d_pf) / max(D_PG, D_FG, d_pf), abs=1e-15)
    assert f[4] == 0 and fx[4] == 0  # several flights predicted: 0 even though one is gold
    assert f[5] == 0 and fx[5] == 0  # outside the KB
    assert f[6] == 0 and fx[6] == 0  # empty prediction for a non-empty gold


# ------------------------------------------------------------------ agreement with a per-flight reference
def _tok_kb(kb_line):
    """The toolkit's token form of a KB line (written from its documented format)."""
    out = ["<res_no_res>" if kb_line["reservation"] == 0 else "<res_has_res>"]
    keys = [("a1", "departure_airport"), ("a2", "return_airport"), ("m1", "departure_month"), ("m2", "return_month"),
            ("d1", "departure_day"), ("d2", "return_day"), ("tn1", "departure_time_num"),
            ("tn2", "return_time_num"), ("cl", "class"), ("pr", "price"), ("cn", "num_connections"),
            ("al", "airline"), ("fl", "flight_number")]
    for f in kb_line["kb"]:
        out.extend(f"<{t}_{f[k]}>" for t, k in keys)
    return out


def _val(tok):
    return tok.split("_", 1)[1][:-1]


def _ref_distance(a, b, legacy):
    """Reference d(a, b) (b = gold), one feature at a time, from the reference document's definitions."""
    cost = adm.AIRLINE_COST
    terms = []
    for i in range(12):
        x, y = _val(a[i]), _val(b[i])
        if i in (0, 1, 8):
            terms.append(float(x != y))
        elif i == 11:
            terms.append(float(cost[x] != cost[y]))
        elif legacy and i in (2, 3, 4, 5):
            terms.append(float(x != y))
        elif legacy:  # hours, price, connections relative to the gold value
            xv, yv = float(x), float(y)
            terms.append((0.0 if xv == 0 else 1.0) if yv == 0 else min(1.0, abs((xv - yv) / yv)))
        elif i in (2, 3):
            terms.append(abs(MONTHS.index(x) - MONTHS.index(y)) / 12)
        elif i == 9:
            lo, hi = sorted((float(x), float(y)))
            terms.append((0.0 if hi == 0 else 1.0) if lo == 0 else min(1.0, (hi - lo) / lo))
        else:
            upper = {4: 31, 5: 31, 6: 24, 7: 24, 10: 2}[i]
            terms.append(min(1.0, abs(float(x) - float(y)) / upper))
    total = 0.0
    for t in terms:
        total += t
    return total / 12.0


def _ref_flight(pred_tok, gold_toks, kb_tokens, legacy):
    flights = {kb_tokens[1 + 13 * j + 12]: kb_tokens[1 + 13 * j: 1 + 13 * j + 12] for j in range((len(kb_tokens) - 1) // 13)}
    if gold_toks == ["<fl_empty>"]:
        return float(pred_tok == "<fl_empty>")
    if "empty" in pred_tok or pred_tok not in flights:
        return 0.0
    if pred_tok in gold_toks:
        return 1.0
    if legacy:
        best = 1.0
        for g in gold_toks:
            ds = [_ref_distance(flights[f], flights[g], True) for f in flights]
            m = max(ds)
            best = min(best, min(1.0, _ref_distance(flights[pred_tok], flights[g], True) / m) if m else 0.0)
        return 1 - best
    all_d, pred_d = [], []
    for f in flights:
        for g in gold_toks:
            if f != g:
                dist = _ref_distance(flights[f], flights[g], False)
                all_d.append(dist)
                if f == pred_tok:
                    pred_d.append(dist)
    return 1 - min(1, min(pred_d) / max(all_d))


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    d = tmp_path_factory.mktemp("ad_sim")
    write_airdialogue(d, seed=7, n=400)
    return d


@pytest.mark.parametrize("distance", ["current", "legacy"])
def test_vectorised_equals_reference(sim, tmp_path, distance):
    data = [json.loads(x) for x in open(sim / "dev_data.json")]
    kbs = [json.loads(x) for x in open(sim / "dev_kb.json")]
    rng = random.Random(3)
    preds = []
    for kb in kbs:
        r = rng.random()
        fl = [] if r < 0.15 else [rng.choice(kb["kb"])["flight_number"]] if r < 0.9 else [9999]
        preds.append(act(rng.choice(["Mary Smith", "Smith, Mary", "mary", "The Lee"]), fl,
                         rng.choice(adm.STATUSES)))
    ev = score(write_preds(tmp_path / "p", preds), sim, flight_distance=distance)
    got = ev.table.values
    for i, (line, kb, p) in enumerate(zip(data, kbs, preds)):
        gold = line["expected_action"]
        gold_toks = [f"<fl_{x}>" for x in gold["flight"]] or ["<fl_empty>"]
        pf = p["action"]["flight"]
        pred_tok = "_".join(f"<fl_{x}>" for x in pf) if pf else "<fl_empty>"
        exp_flight = _ref_flight(pred_tok, gold_toks, _tok_kb(kb), distance == "legacy")
        exp_name = adm.name_f1(p["action"]["name"], gold["name"])
        exp_status = float(p["action"]["status"] == gold["status"])
        assert got["flight"][i] == pytest.approx(exp_flight, abs=1e-12), i
        assert got["score"][i] == pytest.approx(exp_name * 0.2 + exp_flight * 0.5 + exp_status * 0.3, abs=1e-12)
        exp_fx = float(pred_tok == "<fl_empty>") if gold_toks == ["<fl_empty>"] else float(pred_tok in gold_toks)
        assert got["flight-exact"][i] == exp_fx


# ------------------------------------------------------------------------------ whole-file checks
def test_perfect_and_wrong_status(sim, tmp_path):
    data = [json.loads(x) for x in open(sim / "dev_data.json")]
    perfect = [{"id": i, "action": {**d["expected_action"], "flight": d["expected_action"]["flight"][:1]}}
               for i, d in enumerate(data)]
    ev = score(write_preds(tmp_path / "p", perfect), sim)
    assert ev.valid
    for m in ("score", "exact", "name", "name-exact", "flight", "flight-exact", "status"):
        assert ev.table.values[m].mean() == 1.0, m
    other = {s: next(t for t in adm.STATUSES if t != s) for s in adm.STATUSES}
    wrong = [{"action": {**p["action"], "status": other[p["action"]["status"]]}} for p in perfect]
    ev = score(write_preds(tmp_path / "w", wrong), sim)
    v = ev.table.values
    assert (v["score"] == 0.7).all() and (v["exact"] == 0.7).all() and v["status"].sum() == 0
    assert round(float(v["score"].mean()), 12) == 0.7


def test_breakdown_by_gold_status(sim, tmp_path):
    sub = write_submission("rule-based", sim, "dev", tmp_path / "rb.jsonl")
    bench, ev = evaluate(sub, benchmark="airdialogue", data=sim, split="dev")
    recs = bench.breakdown(ev)
    data = [json.loads(x)["expected_action"]["status"] for x in open(sim / "dev_data.json")]
    by = {r["status"]: r["n"] for r in recs if r["metric"] == "score"}
    assert by == {s: data.count(s) for s in set(data)}
    assert all(r["value"] == 1.0 for r in recs)


def test_paper_totals_from_components():
    # Table 9/10 (scaled): name, flight, state -> total, reproduced with 0.2/0.5/0.3 within rounding
    rows = [(0.39, 0.11, 0.32, 0.23), (0.47, 0.36, 0.39, 0.39), (0.39, 0.08, 0.33, 0.22), (0.47, 0.35, 0.47, 0.41),
            (0.4, 0.07, 0.12, 0.15), (0.41, 0.13, 0.29, 0.23), (0.39, 0.08, 0.08, 0.14), (0.43, 0.11, 0.28, 0.22),
            (1.0, 0.92, 0.92, 0.94), (0.4, 0.1, 0.18, 0.18), (0.4, 0.09, 0.21, 0.19)]
    for name, fl, st, tot in rows:
        assert float(adm.total(name, fl, st)) == pytest.approx(tot, abs=0.005 + 1e-9)
    # the toolkit's self-play print (mean of total, name, flight, status) is a different weighting
    n, f, s = 0.41, 0.13, 0.29
    mean4 = (float(adm.total(n, f, s)) + n + f + s) / 4
    assert mean4 == pytest.approx(0.3 * n + 0.375 * f + 0.325 * s)


# ------------------------------------------------------------------------------------ strict reading
def test_strict_reports_every_problem_with_its_line(hand, tmp_path):
    d = tmp_path / "data"
    gold = {"name": "Edward Evans", "flight": [1000], "status": "book"}
    write_split(d, [([G, P, F], 0, gold)] * 8)
    lines = [
        act(),                                                         # 1 ok
        "",                                                            # 2 blank
        "{not json",                                                   # 3
        {"action": {"name": 3, "flight": 1000, "status": "booked"}},   # 4 wrong types, unknown status
        {"action": {"flight": [True]}},                                # 5 missing name/status, bool flight
        {"id": 9, **act()},                                            # 6 id mismatch
        [1, 2],                                                        # 7 not an object
    ]
    ev = score(write_preds(tmp_path / "p.jsonl", lines), d)
    assert not ev.valid and ev.table is None
    got = {(p.code, p.pointer) for p in ev.problems if p.severity == "error"}
    assert got == {
        ("blank-line", "/1"), ("not-json", "/2"), ("wrong-type", "/3/action/name"),
        ("wrong-type", "/3/action/flight"), ("unknown-status", "/3/action/status"),
        ("missing-key", "/4/action/name"), ("missing-key", "/4/action/status"), ("wrong-type", "/4/action/flight/0"),
        ("id-mismatch", "/5/id"), ("item-not-object", "/6"), ("line-count", "/7"),
    }
    by_ptr = {p.pointer: p for p in ev.problems}
    assert by_ptr["/1"].message.startswith("line 2:") and by_ptr["/1"].file == "p.jsonl"
    assert "1000" not in " ".join(p.message for p in ev.problems)  # never a gold flight


def test_strict_valid_wrong_answers_and_unknown_keys(hand, tmp_path):
    p = write_preds(tmp_path / "p", [{"id": 0, "extra": 1, "action": {"name": "x", "flight": [1, 2], "status":
                                                                     "cancel", "note": "?"}}])
    ev = score(p, hand)
    assert ev.valid
    assert sorted(x.code for x in ev.problems) == ["unknown-key", "unknown-key"]
    assert ev.table.values["flight"][0] == 0


# ----------------------------------------------------------------------------------- lenient reading
def test_lenient_fill_ins(tmp_path):
    d = tmp_path / "data"
    gold = {"name": "Sun Lee", "flight": [1000], "status": "book"}
    empty = {"name": "Sun Lee", "flight": [], "status": "no_flight"}
    write_split(d, [([G, P, F], 0, gold), ([G, P, F], 0, empty), ([G, P, F], 0, empty), ([G, P, F], 0, gold),
                    ([G, P, F], 0, gold), ([G, P, F], 0, gold)])
    lines = [
        {"action": {"flight": [1000], "status": "book"}},             # no name -> '<unk> <unk>'
        {"action": {"name": "Sun Lee", "status": "no_flight"}},       # no flight -> empty
        {},                                                           # no action -> <unk> everywhere
        {"action": {"name": "Sun Lee", "flight": ["1000"]}},          # no status -> 'unk'; string flight matches
        {"action": {"name": "Sun Lee", "flight": [1000], "status": "Book"}},  # unknown status: mismatch
        {"id": 7, "action": {"name": "Sun Lee", "flight": [1000], "status": "book"}},  # id ignored
        act(), act(),                                                 # extra lines: dropped
    ]
    p = write_preds(tmp_path / "p", lines)
    assert not score(p, d).valid
    ev = score(p, d, lenient=True)
    assert ev.valid and ev.signature_fields["mode"] == "lenient"
    v = ev.table.values
    unk = adm.name_f1("<unk> <unk>", "Sun Lee")
    assert v["score"].tolist() == pytest.approx([unk * 0.2 + 0.5 + 0.3, 1.0, unk * 0.2, 0.2 + 0.5, 0.2 + 0.5, 1.0])
    assert v["flight"][2] == 0  # '<unk>' matches nothing, not even an empty gold
    # the toolkit's self-play printout: the mean of the (total, name, flight, status) rows
    rows = np.stack([v["score"], v["name"], v["flight"], v["status"]], axis=1)
    assert v["selfplay-mean4"].mean() == pytest.approx(rows.mean(), abs=1e-15)
    quirks = [p for p in ev.problems if p.code == "official-quirk"]
    assert len(quirks) == 8 and all(p.severity == "warning" for p in quirks)
    # missing lines: the toolkit's zip() drops the data lines too
    ev = score(write_preds(tmp_path / "short", lines[:2]), d, lenient=True)
    assert len(ev.table) == 2 and any("drops them" in p.message for p in ev.problems)


def test_lenient_crashes(hand, tmp_path):
    for bad in ("", "[1]", {"action": {"name": None, "flight": [], "status": "book"}},
                {"action": {"name": "a b", "flight": 1000, "status": "book"}},
                {"action": {"name": "a b", "flight": [], "status": 3}}):
        ev = score(write_preds(tmp_path / "p", [bad]), hand, lenient=True)
        assert not ev.valid and [p.code for p in ev.problems if p.severity == "error"] == ["official-crash"], bad


def test_one_word_names_are_listed_by_lenient_only(tmp_path):
    """The toolkit's scorer takes a one-word name (character F1); its model code's exact score raises IndexError.
    --lenient lists each such predicted name; both modes score it, the missing word a mismatch."""
    d = tmp_path / "data"
    gold = {"name": "Sun Lee", "flight": [1000], "status": "book"}
    write_split(d, [([G, P, F], 0, gold)] * 3)
    p = write_preds(tmp_path / "p", [act("Sun", [1000]), act("", [1000]), act("Sun Lee", [1000])])
    strict, lenient = score(p, d), score(p, d, lenient=True)
    assert strict.valid and not strict.problems
    listed = [q for q in lenient.problems if "name without a space" in q.message]
    assert [q.pointer for q in listed] == ["/0/action/name", "/1/action/name"]
    for ev in (strict, lenient):
        assert ev.table.values["name-exact"].tolist() == [0.5, 0.0, 1.0]


def test_limits_on_data_and_predictions(tmp_path):
    """Gold past 64 bits and KBs past MAX_FLIGHTS are data errors; a predicted flight past 64 bits is a wrong
    answer; problems past PROBLEMS_PER_CODE are counted in the shared cap's one closing line."""
    from dialeval.formats import airdialogue as fmt
    from dialeval.formats import airdialogue_predictions as ap

    d = tmp_path / "data"
    write_split(d, [([G, P, F], 0, {"name": "A B", "flight": [2**64], "status": "book"})])
    with pytest.raises(UsageError, match="dev_data.json line 1: .*not a 64-bit integer"):
        score(write_preds(tmp_path / "p", [act()]), d)
    write_split(d, [([G] * (fmt.MAX_FLIGHTS + 1), 0, {"name": "A B", "flight": [1000], "status": "book"})])
    with pytest.raises(UsageError, match=f"dev_kb.json line 1: a KB of {fmt.MAX_FLIGHTS + 1} flights"):
        score(write_preds(tmp_path / "p", [act()]), d)
    write_split(d, [([G, P, F], 0, {"name": "A B", "flight": [1000], "status": "book"})] * 3)
    ev = score(write_preds(tmp_path / "p", [act(flight=[2**64 + 1000])] * 3), d)
    assert ev.valid and ev.table.values["flight"].tolist() == [0.0, 0.0, 0.0]
    ev = score(write_preds(tmp_path / "p", [""] * (ap.PROBLEMS_PER_CODE + 7)), d)
    blank = [q for q in ev.problems if q.code == "blank-line"]
    assert len(blank) == ap.PROBLEMS_PER_CODE
    assert [q.message for q in ev.problems if not q.code] == ["... 7 more problems not listed (blank-line 7)"]
    assert [q.file for q in ev.problems if not q.code] == [blank[0].file]


def test_data_errors_are_usage_errors(tmp_path):
    d = tmp_path / "data"
    write_split(d, [([G, P], 0, {"name": "A B", "flight": [1005], "status": "book"})])
    with pytest.raises(UsageError, match="dev_data.json line 1"):
        score(write_preds(tmp_path / "p", [act()]), d)
    (d / "dev_kb.json").write_text('{"kb": [], "reservation": 0}\n\n')
    with pytest.raises(UsageError, match="dev_kb.json line 2: blank"):
        score(write_preds(tmp_path / "p", [act()]), d)
    with pytest.raises(UsageError):
        score(tmp_path / "p", d, flight_distance="newest")


def test_human_source_and_correct_sample(sim, tmp_path):
    _, ev = evaluate(sim / "dev_data.json", benchmark="airdialogue", data=sim, split="dev",
                     options={"source": "human"})
    assert ev.valid and ev.table.values["score"].mean() == 1.0 and ev.signature_fields["source"] == "human"


# ---------------------------------------------------------------------------- simulator and baselines
def test_simulator_is_deterministic(tmp_path):
    a = write_airdialogue(tmp_path / "a", seed=5, n=50)
    b = write_airdialogue(tmp_path / "b", seed=5, n=50)
    c = write_airdialogue(tmp_path / "c", seed=6, n=50)
    for x, y, z in zip(a, b, c):
        assert x.read_bytes() == y.read_bytes() and x.read_bytes() != z.read_bytes()


def test_simulator_priors_and_ood():
    data, kbs = generate(3000, seed=1)
    goals = [d["intent"]["goal"] for d in data]
    assert 0.77 < goals.count("book") / 3000 < 0.83
    assert all(len(k["kb"]) == 30 for k in kbs)
    assert 0.07 < sum(k["reservation"] != 0 for k in kbs) / 3000 < 0.13
    ood, _ = generate(3000, seed=1, setting="ood")
    assert [d["intent"]["goal"] for d in ood].count("book") / 3000 < 0.5
    assert {d["expected_action"]["status"] for d in data} == set(adm.STATUSES)


def test_baselines_order_and_rule_based_is_perfect(sim, tmp_path):
    paths = write_reference_submissions(sim, "dev", tmp_path)
    scores = {p.stem.split("dev-")[1]: score(p, sim).table.values["score"].mean() for p in paths}
    assert scores["rule-based"] == 1.0
    assert scores["random"] < 0.8 and scores["cheapest-flight"] < 0.8
    again = write_reference_submissions(sim, "dev", tmp_path / "again")
    assert [p.read_bytes() for p in paths] == [p.read_bytes() for p in again]


def test_schemas_accept_simulated_lines(sim, tmp_path):
    import jsonschema

    root = Path(__file__).resolve().parents[1] / "schemas"
    sub = write_submission("random", sim, "dev", tmp_path / "r.jsonl")
    for schema, path in (("airdialogue-data", sim / "dev_data.json"), ("airdialogue-kb", sim / "dev_kb.json"),
                         ("airdialogue-prediction", sub)):
        v = jsonschema.Draft202012Validator(json.loads((root / f"{schema}.schema.json").read_text()))
        for line in open(path):
            v.validate(json.loads(line))
    bad = {"action": {"name": "a", "flight": [], "status": "booked"}}
    v = jsonschema.Draft202012Validator(json.loads((root / "airdialogue-prediction.schema.json").read_text()))
    assert not v.is_valid(bad)


# ------------------------------------------------------------------------------------------------ BLEU
@pytest.mark.needs("sacrebleu")
def test_selfplay_bleu(sim, tmp_path):
    data = [json.loads(x) for x in open(sim / "dev_data.json")][:20]
    d = tmp_path / "data"
    d.mkdir()
    (d / "dev_data.json").write_text("".join(json.dumps(x) + "\n" for x in data))
    (d / "dev_kb.json").write_text("".join(list(open(sim / "dev_kb.json"))[:20]))
    preds = [{"action": x["expected_action"] | {"flight": x["expected_action"]["flight"][:1]},
              "dialogue": x["dialogue"] if i % 2 else x["dialogue"][:3]} for i, x in enumerate(data)]
    bench, ev = evaluate(write_preds(tmp_path / "p", preds), benchmark="airdialogue", data=d, split="dev")
    b = ev.table.values["bleu"]
    assert np.allclose(b[1::2], 100, atol=1e-9) and (b[0::2] < 99).all()
    assert ev.signature_fields["bleu"].startswith("sacrebleu,nrefs:1,")
    assert "bleu" in bench.metrics_for(ev)


def test_benchmark_registered():
    from dialeval.benchmarks import registry

    assert isinstance(registry.get("airdialogue"), AirDialogue)


def test_ragged_kbs_and_blocks_match_item_by_item(tmp_path, monkeypatch):
    """KB lines of different lengths, scored in several blocks, give each item's value scored alone."""
    from dialeval.formats import airdialogue as fmt

    monkeypatch.setattr(fmt, "BLOCK", 2)
    gold = {"name": "A B", "flight": [1000], "status": "book"}
    items = [([G, P, F], 0, gold), ([G, P], 0, gold), ([G, F, P, flight(1003, pr=5000)], 0, gold), ([G, P, F], 0, gold),
             ([G, flight(1001, cn=2)], 0, gold)]
    preds = [act("A B", [1001]), act("A B", [1001]), act("A B", [1001]), act("A B", [10**30]), act("A B", [1001])]
    d = tmp_path / "all"
    write_split(d, items)
    together = score(write_preds(tmp_path / "p", preds), d).table.values["flight"]
    for i, (item, pred) in enumerate(zip(items, preds)):
        one = tmp_path / f"one{i}"
        write_split(one, [item])
        alone = score(write_preds(tmp_path / f"p{i}", [pred]), one).table.values["flight"][0]
        assert together[i] == alone, i
    assert together[3] == 0 and 0 < together[0] < 1


def test_gold_outside_kb_names_the_line_in_a_later_block(tmp_path, monkeypatch):
    from dialeval.formats import airdialogue as fmt

    monkeypatch.setattr(fmt, "BLOCK", 2)
    ok = ([G, P], 0, {"name": "A B", "flight": [1000], "status": "book"})
    bad = ([G, P], 0, {"name": "A B", "flight": [1007], "status": "book"})
    d = tmp_path / "d"
    write_split(d, [ok, ok, ok, bad])
    with pytest.raises(UsageError, match="dev_data.json line 4") as e:
        score(write_preds(tmp_path / "p", [act("A B", [1000])] * 4), d)
    assert "1007" not in str(e.value)


def test_lenient_human_counts_correct_samples(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    gold = {"name": "A B", "flight": [1000], "status": "book"}
    lines = [{"expected_action": gold, "action": {"name": "A B", "flight": [1001], "status": "book"},
              "correct_sample": True},
             {"expected_action": gold, "action": {"name": "A B", "flight": [1001], "status": "book"},
              "correct_sample": False}]
    (d / "dev_data.json").write_text("".join(json.dumps(x) + "\n" for x in lines))
    (d / "dev_kb.json").write_text("".join(json.dumps({"kb": [G, P, F], "reservation": 0}) + "\n" for _ in lines))
    _, strict = evaluate(d / "dev_data.json", benchmark="airdialogue", data=d, split="dev", options={"source": "human"})
    _, lenient = evaluate(d / "dev_data.json", benchmark="airdialogue", data=d, split="dev",
                          options={"source": "human", "lenient": True})
    s, le = strict.table.values["score"], lenient.table.values["score"]
    assert s[0] == s[1] < 1 and le[0] == 1.0 and le[1] == s[1]
    assert any("correct_sample" in p.message for p in lenient.problems)


@pytest.mark.needs("sacrebleu")
def test_cli_simulate_baseline_score_and_infer_bleu(tmp_path):
    from click.testing import CliRunner

    from dialeval.cli import main
    from dialeval.metrics.bleu import infer_items

    r = CliRunner()
    d = tmp_path / "sim"
    assert r.invoke(main, ["airdialogue", "simulate", "--out", str(d), "--n", "60", "--seed", "2"]).exit_code == 0
    sub = tmp_path / "rb.jsonl"
    assert r.invoke(main, ["airdialogue", "baseline", "rule-based", "--data", str(d), "--out", str(sub)]).exit_code == 0
    assert score(sub, d).table.values["exact"].mean() == 1.0
    dialogues = [json.loads(x)["dialogue"] for x in open(d / "dev_data.json")]
    refs = [t for _, _, t in infer_items(dialogues)]
    (tmp_path / "h.txt").write_text("".join(t + "\n" for t in refs))
    res = r.invoke(main, ["airdialogue", "infer-bleu", str(tmp_path / "h.txt"), "--data", str(d), "--json"])
    out = json.loads(res.output)
    assert out["bleu"] == pytest.approx(100) and out["n"] == len(refs) and "|bleu:sacrebleu," in out["signature"]
    assert re.match(r"airdialogue\|data:dev#[0-9a-f]{8}\|task:infer\|split:dev\|", out["signature"])  # the data's identity
    import hashlib

    assert out["predictions"] == {"file": str(tmp_path / "h.txt"),
                                  "sha256": hashlib.sha256((tmp_path / "h.txt").read_bytes()).hexdigest()}
    (tmp_path / "s.txt").write_text("hello\n")
    res = r.invoke(main, ["airdialogue", "infer-bleu", str(tmp_path / "s.txt"), "--data", str(d)],
                   standalone_mode=False)
    assert res.return_value == 1 and "line-count" in res.output


def test_lenient_equals_strict_on_valid_files(sim, tmp_path):
    sub = write_submission("random", sim, "dev", tmp_path / "r.jsonl", seed=4)
    strict, lenient = score(sub, sim), score(sub, sim, lenient=True)
    assert lenient.valid and not [p for p in lenient.problems if p.severity == "error"]
    for m in ("score", "exact", "name", "name-exact", "flight", "flight-exact", "status"):
        assert (strict.table.values[m] == lenient.table.values[m]).all(), m


def test_infer_bleu_without_sacrebleu_is_a_missing_extra_not_an_internal_error(monkeypatch, tmp_path):
    # before: exit 3, "internal error: ModuleNotFoundError: No module named 'sacrebleu'" after reading the data
    from click.testing import CliRunner
    from conftest import REPO

    from dialeval.cli import main

    monkeypatch.setitem(sys.modules, "sacrebleu", None)  # `import sacrebleu` fails, as without the extra
    monkeypatch.setitem(sys.modules, "sacrebleu.metrics", None)
    sample = REPO / "submissions" / "samples" / "airdialogue"
    res = CliRunner().invoke(main, ["airdialogue", "infer-bleu", str(sample / "example-hyps.txt"), "--data",
                                    str(sample), "--split", "dev"], standalone_mode=False)
    assert isinstance(res.exception, UsageError) and res.exception.exit_code == 2
    assert str(res.exception) == "BLEU needs sacrebleu: pip install 'dialeval[bleu]'"


@pytest.mark.needs("sacrebleu")
def test_infer_bleu_counts_in_the_right_number(tmp_path):
    from click.testing import CliRunner
    from conftest import REPO

    from dialeval.cli import main

    sample = REPO / "submissions" / "samples" / "airdialogue"
    (tmp_path / "one.txt").write_text("hello\n")
    res = CliRunner().invoke(main, ["airdialogue", "infer-bleu", str(tmp_path / "one.txt"), "--data", str(sample)],
                             standalone_mode=False)
    assert res.return_value == 1 and "error [line-count] 1 line, but the split has " in res.output, res.output
    assert "1 lines" not in res.output


def test_simulate_never_replaces_a_split_silently(tmp_path):
    # before: a second `airdialogue simulate --out air --n 2` replaced air's 200-context dev split, exit 0
    from conftest import run_cli

    d = tmp_path / "air"
    assert run_cli("airdialogue", "simulate", "--out", d, "--n", "5", "--seed", "1").returncode == 0
    before = (d / "dev_data.json").read_bytes()
    r = run_cli("airdialogue", "simulate", "--out", d, "--n", "2")
    assert (r.returncode, r.stderr) == (2, f"dialeval: error: {d / 'dev_data.json'}: exists; give --force to replace "
                                           "the dev split, or another --out\n")
    assert (d / "dev_data.json").read_bytes() == before
    assert run_cli("airdialogue", "simulate", "--out", d, "--n", "2", "--split", "test").returncode == 0  # beside it
    assert run_cli("airdialogue", "simulate", "--out", d, "--n", "2", "--force").returncode == 0
    assert len((d / "dev_data.json").read_text().splitlines()) == 2
    r = run_cli("airdialogue", "simulate", "--out", d, "--n", "2", "--split", "../escape")
    assert r.returncode == 2 and not (tmp_path / "escape_data.json").exists()


def test_selfplay_bleu_with_no_dialogue_to_compare_scores_zero(tmp_path):
    # before: a self-play run whose every dialogue is empty (or asked for bleu without dialogues) ended in an internal
    # error, exit 3: sacrebleu has no signature before its first evaluation, and no line had a pair to evaluate
    from conftest import REPO, run_cli

    sample = REPO / "submissions" / "samples" / "airdialogue"
    lines = [json.loads(x) | {"dialogue": []} for x in open(sample / "example-run.jsonl")]
    sub = write_preds(tmp_path / "empty-dialogues.jsonl", lines)
    r = run_cli("score", sub, "--benchmark", "airdialogue", "--data", sample, "--split", "dev", "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert "|bleu:sacrebleu,nrefs:1," in report["signature"]
    bleu = [x["value"] for x in report["results"] if x["metric"] == "bleu" and x["group"] == "state" and not x["subset"]]
    assert bleu == [0.0], report["results"]
    _, ev = evaluate(sample / "example-run.jsonl", benchmark="airdialogue", data=sample, split="dev",
                     options={"bleu": "yes"})  # no line has a dialogue
    assert ev.table.values["bleu"].tolist() == [0.0] * len(lines)
    assert ev.signature_fields["bleu"].startswith("sacrebleu,nrefs:1,")
