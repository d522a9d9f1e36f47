"""AirDialogue reference systems: predict the final state from the customer's intent and the KB.

They read the context (``intent`` of the data line, the line's KB and reservation), as an agent that heard the
whole dialogue would know it, and write a submission in the scorer's format, one JSON line per data line:
``{"id": i, "action": {"name": ..., "flight": [...], "status": ...}}``.

* ``random``: a status drawn uniformly from the five, a random KB flight for book/change, the customer's name.
* ``cheapest-flight``: books the cheapest flight of the KB for every customer (ties: lowest flight number).
* ``rule-based``: solves the constraints as the release's ground truth does (airports, dates, price, connections,
  class, time of day, airline cost; cheapest matches; the goal and the reservation decide the status). It scores
  1.0 on simulated data; on real data its errors measure label noise.
"""

from __future__ import annotations

import random as _random
from collections.abc import Iterator
from pathlib import Path

from dialeval.formats.airdialogue import AIRLINE_COST, decode_lines, split_paths, write_json_lines

STATUSES = ("book", "change", "cancel", "no_flight", "no_reservation")
BASELINES = ("random", "cheapest-flight", "rule-based")


def _segment(hour: int) -> str:
    if hour < 3 or hour > 19:
        return "evening"
    return "morning" if hour <= 11 else "afternoon"


def _clean_name(name: str) -> str:
    """The release's name standardisation: letters and spaces only, trimmed."""
    return "".join(c for c in name.strip() if c.isalpha() or c == " ")


def matching_flights(intent: dict, kb: list[dict]) -> list[int]:
    """Flight numbers of the cheapest flights satisfying every constraint the intent states."""
    cost_of = {"normal-cost": 0, "low-cost": 1}
    good = []
    for f in kb:
        if any(str(f[k]) != str(intent[k]) for k in ("departure_airport", "return_airport", "departure_month",
                                                     "return_month", "departure_day", "return_day")):
            continue
        if f["price"] > intent.get("max_price", float("inf")):
            continue
        if f["num_connections"] > intent.get("max_connections", 2):
            continue
        if "class" in intent and intent["class"] != "all" and f["class"] != intent["class"]:
            continue
        if intent.get("departure_time", "all") not in ("all", _segment(f["departure_time_num"])):
            continue
        if intent.get("return_time", "all") not in ("all", _segment(f["return_time_num"])):
            continue
        pref = intent.get("airline_preference", "all")
        if pref != "all" and AIRLINE_COST.get(f["airline"]) != cost_of.get(pref):
            continue
        good.append(f)
    if not good:
        return []
    best = min(f["price"] for f in good)
    return [f["flight_number"] for f in good if f["price"] == best]


def rule_based(intent: dict, kb_line: dict, rng=None) -> dict:
    goal = intent.get("goal", "book")
    reservation = kb_line.get("reservation", 0)
    name = _clean_name(intent.get("name", ""))
    if goal == "book" or (goal == "change" and reservation != 0):
        flights = matching_flights(intent, kb_line["kb"])
        # One flight: several flights score 0 even when all of them are gold (equally cheap) ones.
        return {"name": name, "flight": flights[:1], "status": goal if flights else "no_flight"}
    if reservation == 0:
        return {"name": name, "flight": [], "status": "no_reservation"}
    return {"name": name, "flight": [], "status": "cancel"}


def cheapest_flight(intent: dict, kb_line: dict, rng=None) -> dict:
    kb = kb_line["kb"]
    flights = [min(kb, key=lambda f: (f["price"], f["flight_number"]))["flight_number"]] if kb else []
    return {"name": _clean_name(intent.get("name", "")), "flight": flights, "status": "book"}


def random_action(intent: dict, kb_line: dict, rng=None) -> dict:
    status = rng.choice(STATUSES)
    kb = kb_line["kb"]
    flights = [rng.choice(kb)["flight_number"]] if status in ("book", "change") and kb else []
    return {"name": _clean_name(intent.get("name", "")), "flight": flights, "status": status}


PREDICTORS = {"random": random_action, "cheapest-flight": cheapest_flight, "rule-based": rule_based}


def predict(name: str, data_dir: str | Path, split: str, seed: int = 0) -> Iterator[dict]:
    """Submission lines of baseline ``name`` for a split (deterministic by ``seed``)."""
    if name not in PREDICTORS:
        raise ValueError(f"unknown AirDialogue baseline {name!r} (known: {', '.join(BASELINES)})")
    fn = PREDICTORS[name]
    rng = _random.Random(seed)
    data_path, kb_path = split_paths(Path(data_dir), split)
    kbs = decode_lines(kb_path, dict)
    for (i, (_, line)), (_, kb_line) in zip(enumerate(decode_lines(data_path, dict)), kbs):
        yield {"id": i, "action": fn(line.get("intent", {}), kb_line, rng)}


def write_submission(name: str, data_dir: str | Path, split: str, out: str | Path, seed: int = 0) -> Path:
    out = Path(out)
    write_json_lines(out, predict(name, data_dir, split, seed))
    return out


def write_reference_submissions(data_dir: str | Path, split: str, out_dir: str | Path, seed: int = 0) -> list[Path]:
    """``<out_dir>/airdialogue-<split>-<baseline>.jsonl`` for every baseline."""
    return [write_submission(b, data_dir, split, Path(out_dir) / f"airdialogue-{split}-{b}.jsonl", seed)
            for b in BASELINES]
