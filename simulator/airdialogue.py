"""AirDialogue-format context generator: customer intents, 30-flight KBs, reservations, ground-truth actions.

Follows the published generator's facts (Wei et al. 2018 and the toolkit's ``facts``): three candidate airports
per context, a return two days after departure, 30 flights whose dates scatter (σ = 12 h) around the customer's,
prices from a class- and connection-dependent normal rounded down to hundreds (at least 100), a reservation
with probability 0.1, and the priors below. The ground truth follows the release's rule: a flight matches when
airports, months and days are equal, its price is within ``max_price``, its connections within
``max_connections`` and every stated class, time-of-day and airline-cost constraint holds; the gold flights are
the matches at the lowest price; book → book|no_flight; change → no_reservation without a reservation, else
change|no_flight; cancel → cancel|no_reservation.

Settings: ``in-domain`` uses the paper's priors (goal book/change/cancel 0.8/0.1/0.1 ...); ``ood`` shifts every
prior (goals 0.4/0.3/0.3, reservations 0.5, stated time, class and airline constraints far more often), the
kind of context shift the paper's OOD evaluation uses. Dialogues are templated (agent and customer turns).

Everything is drawn from one ``numpy.random.Generator(PCG64(seed))`` in a fixed order: the same seed and
arguments give byte-identical files. The file layout is the release's: ``<split>_data.json`` (intent, action,
expected_action, correct_sample, dialogue) and ``<split>_kb.json`` (kb, reservation).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dialeval.formats.airdialogue import AIRLINE_COST, MONTHS, write_json_lines

GENERATOR_VERSION = "ad1"

FIRST_NAMES = ("James", "Mary", "Robert", "Patricia", "John", "Jennifer", "Michael", "Linda", "David", "Elizabeth",
               "William", "Barbara", "Richard", "Susan", "Joseph", "Jessica", "Thomas", "Sarah", "Charles", "Karen",
               "Daniel", "Nancy", "Matthew", "Lisa", "Anthony", "Betty", "Mark", "Sandra", "Donald", "Ashley",
               "Steven", "Kimberly", "Paul", "Emily", "Andrew", "Donna", "Joshua", "Michelle", "Kenneth", "Carol")
LAST_NAMES = ("Smith", "Johnson", "Williams", "Brown", "Jones", "Garcia", "Miller", "Davis", "Rodriguez", "Martinez",
              "Hernandez", "Lopez", "Gonzalez", "Wilson", "Anderson", "Thomas", "Taylor", "Moore", "Jackson", "Martin",
              "Lee", "Perez", "Thompson", "White", "Harris", "Sanchez", "Clark", "Ramirez", "Lewis", "Robinson",
              "Walker", "Young", "Allen", "King", "Wright", "Scott", "Torres", "Nguyen", "Hill", "Flores")
AIRPORTS = ("ATL", "LAX", "ORD", "DFW", "DEN", "JFK", "SFO", "SEA", "LAS", "MCO", "EWR", "CLT", "PHX", "IAH", "MIA",
            "BOS", "MSP", "DTW", "FLL", "PHL", "LGA", "BWI", "SLC", "SAN", "IAD", "DCA", "MDW", "TPA", "PDX", "HOU",
            "AUS", "OAK", "MSY", "DAL", "BNA", "SJC", "SMF", "SNA", "STL", "RDU")
AIRLINES = tuple(AIRLINE_COST)  # UA AA Delta Hawaiian (normal-cost), Southwest Frontier JetBlue Spirit (low-cost)
TIMES = ("morning", "afternoon", "evening", "all")
CLASS_LIMITS = ("all", "economy", "business")
PRICE_LIMITS = (200, 500, 1000, 5000)
GOALS = ("book", "change", "cancel")

PRIORS: dict[str, dict] = {
    "in-domain": {
        "time": (0.03, 0.04, 0.03, 0.9),
        "class_limit": (0.9, 0.07, 0.03),
        "connection": (0.07, 0.9, 0.03),  # max_connections 0 / 1 / 2 (2 = no constraint)
        "airline_pref": (0.05, 0.95),  # normal-cost / all
        "goal": (0.8, 0.1, 0.1),
        "reservation": 0.1,
        "flight_class": (0.9, 0.1),  # economy / business flights in the KB
        "flight_connection": (0.07, 0.9, 0.03),
    },
    "ood": {
        "time": (0.2, 0.2, 0.2, 0.4),
        "class_limit": (0.4, 0.3, 0.3),
        "connection": (0.3, 0.4, 0.3),
        "airline_pref": (0.4, 0.6),
        "goal": (0.4, 0.3, 0.3),
        "reservation": 0.5,
        "flight_class": (0.7, 0.3),
        "flight_connection": (0.3, 0.4, 0.3),
    },
}
SETTINGS = tuple(PRIORS)
N_AIRPORTS = 3
BOOK_WINDOW_DAYS = 2
N_FLIGHTS = 30
BASE_EPOCH = 1_300_000_000
PRICE_MEAN = {0: 300, 1: 1300}  # economy, business
LOW_COST_FRACTION = {0: 0.7, 1: 0.5}
PRICE_STD = (0.2, 0.4, 0.6)  # by number of connections


def day_segment(hour: int) -> str:
    """Time of day of an hour: morning 3-11, afternoon 12-19, evening 20-23 and 0-2."""
    if hour < 3 or hour > 19:
        return "evening"
    return "morning" if hour <= 11 else "afternoon"


def _dates(epochs: np.ndarray):
    """(month name, day string, hour) for UTC epochs (vectorised through numpy datetime64)."""
    dt = epochs.astype("datetime64[s]")
    months = dt.astype("datetime64[M]").astype(np.int64) % 12  # 0 = Jan
    days = (dt.astype("datetime64[D]") - dt.astype("datetime64[M]")).astype(np.int64) + 1
    hours = (dt.astype("datetime64[h]") - dt.astype("datetime64[D]")).astype(np.int64)
    return months, days, hours


def _choice(rng, n: int, p) -> np.ndarray:
    return rng.choice(len(p), size=n, p=np.asarray(p) / np.sum(p))


def generate(n: int, seed: int = 0, setting: str = "in-domain", dialogues: bool = True) -> tuple[list[dict], list[dict]]:
    """(data lines, KB lines) of ``n`` contexts."""
    if setting not in PRIORS:
        raise ValueError(f"setting must be one of {SETTINGS}")
    pr = PRIORS[setting]
    rng = np.random.Generator(np.random.PCG64(seed))
    # Customers.
    cand = np.argsort(rng.random((n, len(AIRPORTS))), axis=1)[:, :N_AIRPORTS]  # 3 distinct airports per context
    o = rng.integers(0, N_AIRPORTS, n)
    d = rng.integers(0, N_AIRPORTS, n)
    d = np.where(d == o, (d + 1) % N_AIRPORTS, d)
    dep = rng.integers(BASE_EPOCH, BASE_EPOCH + 3600 * 24 * 365, n, endpoint=True)
    ret = dep + 3600 * 24 * BOOK_WINDOW_DAYS
    first = rng.integers(0, len(FIRST_NAMES), n)
    last = rng.integers(0, len(LAST_NAMES), n)
    t_dep = _choice(rng, n, pr["time"])
    t_ret = _choice(rng, n, pr["time"])
    cls_lim = _choice(rng, n, pr["class_limit"])
    # Price limit: any for 'all', not the top one for economy, not the lowest one for business.
    lo = np.where(cls_lim == 2, 1, 0)
    hi = np.where(cls_lim == 1, len(PRICE_LIMITS) - 1, len(PRICE_LIMITS))
    price_lim = np.asarray(PRICE_LIMITS)[lo + (rng.random(n) * (hi - lo)).astype(np.int64)]
    max_conn = _choice(rng, n, pr["connection"])
    airline_pref = _choice(rng, n, pr["airline_pref"])
    goal = _choice(rng, n, pr["goal"])
    # KBs.
    K = N_FLIGHTS
    fo = rng.integers(0, N_AIRPORTS, (n, K))
    fd = rng.integers(0, N_AIRPORTS, (n, K))
    fd = np.where(fd == fo, (fd + 1) % N_AIRPORTS, fd)
    e1 = rng.normal(dep[:, None], 3600 * 12, (n, K))
    e2 = rng.normal(ret[:, None], 3600 * 12, (n, K))
    f_dep = np.floor(np.minimum(e1, e2)).astype(np.int64)
    f_ret = np.floor(np.maximum(e1, e2)).astype(np.int64)
    f_cls = _choice(rng, n * K, pr["flight_class"]).reshape(n, K)
    f_conn = _choice(rng, n * K, pr["flight_connection"]).reshape(n, K)
    base = np.where(f_cls == 0, PRICE_MEAN[0] * LOW_COST_FRACTION[0], PRICE_MEAN[1] * LOW_COST_FRACTION[1])
    raw = rng.normal(base, base * np.asarray(PRICE_STD)[f_conn])
    price = np.maximum(100, (raw.astype(np.int64) // 100) * 100)  # int() truncates toward zero, then hundreds
    price = np.where(raw < 0, 100, price)
    airline = rng.integers(0, len(AIRLINES), (n, K))
    has_res = rng.random(n) < pr["reservation"]
    res_idx = rng.integers(0, K, n)
    reservation = np.where(has_res, 1000 + res_idx, 0)
    # Dates of customers and flights.
    cm1, cd1, _ = _dates(dep)
    cm2, cd2, _ = _dates(ret)
    fm1, fd1, fh1 = _dates(f_dep)
    fm2, fd2, fh2 = _dates(f_ret)
    air = np.asarray(AIRPORTS)[cand]  # (n, 3)
    rows = np.arange(n)[:, None]
    f_air1 = air[rows, fo]
    f_air2 = air[rows, fd]
    c_air1 = air[np.arange(n), o]
    c_air2 = air[np.arange(n), d]
    # Ground truth, vectorised: which flights satisfy every stated constraint.
    seg = np.vectorize(day_segment, otypes=[object])
    s1, s2 = seg(fh1), seg(fh2)
    tnames = np.asarray(TIMES, dtype=object)
    ok = (f_air1 == c_air1[:, None]) & (f_air2 == c_air2[:, None])
    ok &= (fm1 == cm1[:, None]) & (fd1 == cd1[:, None]) & (fm2 == cm2[:, None]) & (fd2 == cd2[:, None])
    ok &= price <= price_lim[:, None]
    ok &= f_conn <= max_conn[:, None]
    ok &= (t_dep[:, None] == 3) | (s1 == tnames[t_dep][:, None])
    ok &= (t_ret[:, None] == 3) | (s2 == tnames[t_ret][:, None])
    ok &= (cls_lim[:, None] == 0) | (f_cls == (cls_lim[:, None] - 1))
    cost = np.vectorize(AIRLINE_COST.__getitem__)(np.asarray(AIRLINES))[airline]
    ok &= (airline_pref[:, None] == 1) | (cost == 0)
    masked = np.where(ok, price, np.iinfo(np.int64).max)
    cheapest = masked.min(axis=1)
    gold_mask = ok & (price == cheapest[:, None])
    pick = rng.random(n)  # which gold flight the simulated human agent submits

    data, kbs = [], []
    classes = ("economy", "business")
    for i in range(n):
        name = f"{FIRST_NAMES[first[i]]} {LAST_NAMES[last[i]]}"
        g = GOALS[goal[i]]
        intent = {"departure_airport": str(c_air1[i]), "return_airport": str(c_air2[i]),
                  "departure_month": MONTHS[cm1[i]], "departure_day": str(cd1[i]),
                  "return_month": MONTHS[cm2[i]], "return_day": str(cd2[i]), "name": name}
        if t_dep[i] != 3:
            intent["departure_time"] = TIMES[t_dep[i]]
        if t_ret[i] != 3:
            intent["return_time"] = TIMES[t_ret[i]]
        if cls_lim[i] != 0:
            intent["class"] = CLASS_LIMITS[cls_lim[i]]
        intent["max_price"] = int(price_lim[i])
        if max_conn[i] != 2:
            intent["max_connections"] = int(max_conn[i])
        if airline_pref[i] == 0:
            intent["airline_preference"] = "normal-cost"
        intent["goal"] = g
        gold_flights = [1000 + int(j) for j in np.flatnonzero(gold_mask[i])]
        res = int(reservation[i])
        if g == "book" or (g == "change" and res != 0):
            status = g if gold_flights else "no_flight"
        elif res == 0:
            status = "no_reservation"
        else:
            status = "cancel"
        flights = gold_flights if status in ("book", "change") else []
        expected = {"flight": flights, "name": name, "status": status}
        agent_flights = [flights[int(pick[i] * len(flights))]] if flights else []
        action = {"flight": agent_flights, "name": name, "status": status}
        kb = [{"departure_airport": str(f_air1[i, j]), "return_airport": str(f_air2[i, j]),
               "departure_month": MONTHS[fm1[i, j]], "return_month": MONTHS[fm2[i, j]],
               "departure_day": str(fd1[i, j]), "return_day": str(fd2[i, j]),
               "departure_time_num": int(fh1[i, j]), "return_time_num": int(fh2[i, j]),
               "class": classes[f_cls[i, j]], "price": int(price[i, j]), "num_connections": int(f_conn[i, j]),
               "airline": AIRLINES[airline[i, j]], "flight_number": 1000 + j} for j in range(K)]
        line = {"intent": intent, "action": action, "expected_action": expected, "correct_sample": True}
        if dialogues:
            line["dialogue"] = dialogue(intent, action, kb, i)
        data.append(line)
        kbs.append({"kb": kb, "reservation": res})
    return data, kbs


_GREET = ("Hello.", "Hi.", "Hello, good day.")
_ASK = ("How may I help you?", "How can I help you today?")


def _say_date(month: str, day: str) -> str:
    return f"{month} {day}"


def dialogue(intent: dict, action: dict, kb: list[dict], variant: int) -> list[str]:
    """A templated dialogue ending in ``action`` (wording varies deterministically with ``variant``)."""
    name, goal = intent["name"], intent["goal"]
    turns = [f"customer: {_GREET[variant % 3]}", f"agent: {_GREET[(variant + 1) % 3]} {_ASK[variant % 2]}"]
    want = {"book": "book a flight ticket", "change": "change my existing reservation",
            "cancel": "cancel my reservation"}[goal]
    turns.append(f"customer: I am {name}. I would like to {want}.")
    status = action["status"]
    if goal == "cancel" or goal == "change":
        turns.append("agent: Sure, let me check your reservation.")
        if status == "no_reservation":
            turns.append(f"agent: Sorry {name}, I could not find a reservation under your name.")
            turns.append("customer: Thank you anyway.")
            return turns
        if goal == "cancel":
            turns.append("agent: Your reservation has been cancelled.")
            turns.append("customer: Thank you for your help.")
            return turns
    turns.append("agent: Could you share your travel dates and airports?")
    trip = (f"customer: From {intent['departure_airport']} to {intent['return_airport']}, leaving "
            f"{_say_date(intent['departure_month'], intent['departure_day'])} and returning "
            f"{_say_date(intent['return_month'], intent['return_day'])}.")
    turns.append(trip)
    limits = [f"my budget is {intent['max_price']} dollars"]
    if "max_connections" in intent:
        limits.append("I need a direct flight" if intent["max_connections"] == 0 else "at most one connection")
    if "class" in intent:
        limits.append(f"I prefer {intent['class']} class")
    if "departure_time" in intent:
        limits.append(f"departing in the {intent['departure_time']}")
    if "return_time" in intent:
        limits.append(f"returning in the {intent['return_time']}")
    if "airline_preference" in intent:
        limits.append("on a normal-cost airline")
    turns.append("agent: Do you have any other preferences?")
    text = ", ".join(limits)
    turns.append("customer: " + text[:1].upper() + text[1:] + ".")
    if status == "no_flight":
        turns.append("agent: Sorry, there is no flight matching your request.")
        turns.append("customer: No problem, thank you.")
        return turns
    f = next(x for x in kb if x["flight_number"] == action["flight"][0])
    turns.append(f"agent: There is a {f['airline']} flight {f['flight_number']} with {f['num_connections']} "
                 f"connection(s), departing at {f['departure_time_num']}:00 for {f['price']} dollars. Shall I "
                 f"{'book' if goal == 'book' else 'change to'} it?")
    turns.append("customer: Yes, please go ahead.")
    turns.append("agent: Done, your ticket is confirmed.")
    return turns


def write_airdialogue(out_dir: str | Path, seed: int = 0, n: int = 1000, split: str = "dev",
                      setting: str = "in-domain", dialogues: bool = True) -> tuple[Path, Path]:
    """Write ``<split>_data.json`` and ``<split>_kb.json`` of ``n`` simulated contexts into ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    data, kbs = generate(n, seed, setting, dialogues)
    dp, kp = out / f"{split}_data.json", out / f"{split}_kb.json"
    write_json_lines(dp, data)
    write_json_lines(kp, kbs)
    return dp, kp

