"""AirDialogue state scores (Wei et al., EMNLP 2018): name, flight and status, scaled and exact.

An agent ends a dialogue with a state ``(name, flights, status)``; the ground truth is computed from the
customer's constraints and the 30-flight knowledge base (KB). Per item:

* ``name`` (scaled): character-level F1 after normalisation (lower-case, ASCII punctuation removed, the words
  a/an/the removed, whitespace collapsed); each string is a multiset of characters, spaces included.
  Same as the toolkit's ``f1_score`` (SQuAD's normalisation applied to characters instead of words).
* ``name-exact``: ``tokens`` (default, the model code's ``compute_01_score``): mean of (first token equal,
  second token equal) after lower-casing and splitting on single spaces, each token trimmed; a missing token
  is a mismatch (the toolkit raises IndexError). ``whole``: 1 if the trimmed, lower-cased names are equal.
* ``flight`` (scaled): an empty gold scores 1 for an empty prediction and 0 otherwise; otherwise 0 for an
  empty prediction, several flights or a flight outside the KB; 1 for a gold flight; else
  ``1 - min(1, min_g d(p, g) / max_{f != g} d(f, g))`` over the gold flights g and KB flights f
  (``current``, the toolkit's ``generate_scaled_flight``), or ``1 - min_g min(1, d'(p, g) / max_f d'(f, g))``
  (``legacy``, the pre-2020 evaluator's distance d', asymmetric; see :func:`distance_legacy`).
* ``flight-exact``: 1 if the prediction is one of the gold flights, or both are empty.
* ``status``: exact string equality (scaled = exact).
* ``score`` = 0.2 name + 0.5 flight + 0.3 status; ``exact`` = the same weights over the exact components.

The flight distance is computed for all items at once with numpy over (item, gold flight) pairs × KB flights
(:func:`flight_scores`), so no Python loop runs per flight.
"""

from __future__ import annotations

import re
import string
from collections import Counter

import numpy as np

# The KB's columns and the prediction kinds are the reader's (formats); re-exported as this module's vocabulary.
from dialeval.formats.airdialogue import (  # noqa: F401
    AIRLINE_COST,
    CHUNK_CELLS,
    EMPTY,
    FEATURES,
    IN_KB,
    INVALID,
    MONTHS,
    STATUSES,
    KBArrays,
)

WEIGHTS = (0.2, 0.5, 0.3)  # name, flight, status (the paper's total, scaled and exact alike)
FLIGHT_DISTANCES = ("current", "legacy")
EXACT_NAMES = ("tokens", "whole")


# ---------------------------------------------------------------------------------------------- names
_PUNCT = str.maketrans("", "", string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_name(s: str) -> str:
    """Lower-case, delete ASCII punctuation, replace the words a/an/the by a space, collapse whitespace."""
    return " ".join(_ARTICLES.sub(" ", s.lower().translate(_PUNCT)).split())


def name_f1(pred: str, gold: str) -> float:
    """Character-level F1 of the normalised names: 2PR/(P+R) over character multisets (spaces count); the
    AirDialogue toolkit's ``f1_score`` on names (the paper's scaled name score).

    0 when no character is shared, even when both are empty (the toolkit's ``f1_score``).
    """
    p = normalize_name(pred)
    g = normalize_name(gold)
    same = sum((Counter(p) & Counter(g)).values())
    if same == 0:
        return 0.0
    precision = 1.0 * same / len(p)
    recall = 1.0 * same / len(g)
    return (2 * precision * recall) / (precision + recall)


def name_exact(pred: str, gold: str, mode: str = "tokens") -> float:
    """Exact name credit. ``tokens`` (the model code's ``compute_01_score``): (first token equal + second token
    equal) / 2 after ``lower().split(' ')`` and trimming each token, a missing token being a mismatch; ``whole``
    (the generator's correctness check): trimmed lower-cased equality."""
    if mode == "whole":
        return float(pred.strip().lower() == gold.strip().lower())
    pt = pred.lower().split(" ")
    gt = gold.lower().split(" ")
    hits = 0
    for i in (0, 1):
        if i < len(pt) and i < len(gt) and pt[i].strip() == gt[i].strip():
            hits += 1
    return hits / 2.0


def name_scores(preds: list[str], golds: list[str], exact_mode: str = "tokens") -> tuple[np.ndarray, np.ndarray]:
    """(character F1, exact credit) per item; repeated (prediction, gold) pairs are computed once."""
    f1_cache: dict[tuple[str, str], float] = {}
    ex_cache: dict[tuple[str, str], float] = {}
    f1 = np.empty(len(golds))
    ex = np.empty(len(golds))
    for i, key in enumerate(zip(preds, golds)):
        v = f1_cache.get(key)
        if v is None:
            v = f1_cache[key] = name_f1(*key)
            ex_cache[key] = name_exact(key[0], key[1], exact_mode)
        f1[i] = v
        ex[i] = ex_cache[key]
    return f1, ex


# -------------------------------------------------------------------------------------------- flights
def _gold_cols(kb: KBArrays, rows: np.ndarray, cols: np.ndarray) -> dict[str, np.ndarray]:
    """Features of one flight per row, shaped (P, 1) to broadcast against (P, K)."""
    return {f: getattr(kb, f)[rows, cols][:, None] for f in FEATURES}


def distance_current(kb: KBArrays, rows: np.ndarray, gold_cols: np.ndarray) -> np.ndarray:
    """d(f, g) for every KB flight f of ``rows`` against the flight in column ``gold_cols``: (P, K) array.

    The toolkit's ``flight_distance.distance_calculator`` (selfplay and human scoring since 2020): the mean of
    12 terms, symmetric in f and g. Airports, class: 1 if different; airline: 1 if the cost classes differ;
    months |Δ|/12 (no wrap); days |Δ|/31; hours |Δ|/24; connections |Δ|/2; price |Δ|/min(a, b) (1 if one
    of them is 0), each capped at 1. Terms are added in the toolkit's order so the floats agree bit for bit.
    """
    g = _gold_cols(kb, rows, gold_cols)
    f = {k: getattr(kb, k)[rows] for k in FEATURES}
    total = (f["a1"] != g["a1"]).astype(np.float64)
    total += f["a2"] != g["a2"]
    for k, upper in (("m1", 12), ("m2", 12), ("d1", 31), ("d2", 31), ("t1", 24), ("t2", 24)):
        total += np.minimum(np.abs(f[k] - g[k]) / upper, 1.0)
    total += f["cl"] != g["cl"]
    lo = np.minimum(f["pr"], g["pr"]).astype(np.float64)
    hi = np.maximum(f["pr"], g["pr"]).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        price = np.where(lo == 0, (hi != 0).astype(np.float64), np.abs(hi - lo) / lo)
    total += np.minimum(price, 1.0)
    total += np.minimum(np.abs(f["cn"] - g["cn"]) / 2, 1.0)
    total += f["al"] != g["al"]
    return total / 12.0


def _relative(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The legacy numeric term: |(a - b) / b| clipped to 1, relative to the gold value b; b = 0 gives 0 if a = 0
    else 1."""
    a = a.astype(np.float64)
    b = b.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        dev = np.where(b == 0, (a != 0).astype(np.float64), np.abs((a - b) / b))
    return np.minimum(dev, 1.0)


def distance_legacy(kb: KBArrays, rows: np.ndarray, gold_cols: np.ndarray) -> np.ndarray:
    """d'(f, g), the distance inside ``evaluator_main.py`` until 2020-07-12: (P, K) array.

    Mean of 12 terms: airports, months, days, class and airline cost class are categorical (1 if different);
    hours, price and connections are numeric, ``min(1, |(f - g) / g|)`` relative to the *gold* flight's
    value (asymmetric: 1 predicted vs 2 gold connections = 0.5, 2 vs 1 = 1; a gold 0 gives 0 if equal, else 1).
    """
    g = _gold_cols(kb, rows, gold_cols)
    f = {k: getattr(kb, k)[rows] for k in FEATURES}
    total = (f["a1"] != g["a1"]).astype(np.float64)
    for k in ("a2", "m1", "m2", "d1", "d2"):
        total += f[k] != g[k]
    total += _relative(f["t1"], g["t1"])
    total += _relative(f["t2"], g["t2"])
    total += f["cl"] != g["cl"]
    total += _relative(f["pr"], g["pr"])
    total += _relative(f["cn"], g["cn"])
    total += f["al"] != g["al"]
    return total / 12.0


def flight_scores(
    kb: KBArrays,
    gold_cols: list[list[int]],
    pred_kind: np.ndarray,
    pred_col: np.ndarray,
    distance: str = "current",
    chunk: int = 4096,
) -> tuple[np.ndarray, np.ndarray]:
    """(scaled flight score, exact flight score) per item: the toolkit's ``generate_scaled_flight`` and exact
    flight match (module docstring: 1 - min_g d(p, g) / max_{f != g} d(f, g), or 1 / 0 in the special cases).

    ``gold_cols[i]``: KB columns of item i's gold flights (empty list = no flight is correct);
    ``pred_kind``/``pred_col``: the prediction as :data:`EMPTY`, :data:`IN_KB` (with its column) or
    :data:`INVALID`. Distances are only computed for items whose prediction is a KB flight outside the gold
    set, in chunks of ``chunk`` (item, gold) pairs, fewer when the KB is wider than 32 flights
    (:data:`CHUNK_CELLS`), to bound memory.
    """
    if distance not in FLIGHT_DISTANCES:
        raise ValueError(f"flight distance must be one of {FLIGHT_DISTANCES}")
    n = len(gold_cols)
    pred_kind = np.asarray(pred_kind)
    pred_col = np.asarray(pred_col)
    n_gold = np.fromiter(map(len, gold_cols), np.int64, count=n)
    gold_empty = n_gold == 0
    # Membership of the predicted column in the gold set, without a per-item Python loop.
    owner = np.repeat(np.arange(n), n_gold)
    flat_gold = np.fromiter((c for cols in gold_cols for c in cols), np.int64, count=int(n_gold.sum()))
    hit_pair = (pred_kind[owner] == IN_KB) & (flat_gold == pred_col[owner])
    in_gold = np.zeros(n, bool)
    in_gold[owner[hit_pair]] = True

    exact = np.where(gold_empty, pred_kind == EMPTY, in_gold).astype(np.float64)
    scaled = exact.copy()  # 1 for the two full-credit cases, 0 for empty/invalid/mismatch so far
    need = (~gold_empty) & (pred_kind == IN_KB) & (~in_gold)
    if not need.any():
        return scaled, exact

    dist_fn = distance_current if distance == "current" else distance_legacy
    pair_need = need[owner]
    p_item = owner[pair_need]
    p_gold = flat_gold[pair_need]
    width = kb.number.shape[1] if kb.number.ndim == 2 else 1
    chunk = max(1, min(chunk, CHUNK_CELLS // max(1, width)))
    best = np.full(n, np.inf)  # min over gold flights of the (normalised) distance
    denom = np.zeros(n)  # current: max over (f != g) pairs of the item
    num = np.full(n, np.inf)  # current: min over g of d(p, g)
    for s in range(0, len(p_item), chunk):
        rows = p_item[s : s + chunk]
        gcols = p_gold[s : s + chunk]
        d = dist_fn(kb, rows, gcols)  # (P, K)
        d_pred = d[np.arange(len(rows)), pred_col[rows]]
        valid = kb.valid[rows]
        if distance == "current":
            # The toolkit's max skips the gold flight itself (the same flight number).
            mask = valid & (kb.number[rows] != kb.number[rows, gcols][:, None])
            d_max = np.where(mask, d, -np.inf).max(axis=1)
            np.maximum.at(denom, rows, d_max)
            np.minimum.at(num, rows, d_pred)
        else:
            d_max = np.where(valid, d, -np.inf).max(axis=1)
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = np.where(d_max > 0, np.minimum(1.0, d_pred * 1.0 / d_max), 0.0)
            np.minimum.at(best, rows, ratio)
    if distance == "current":
        with np.errstate(divide="ignore", invalid="ignore"):
            # max = 0 means every KB flight is identical to the gold (then d(p, g) = 0 too): full credit,
            # where the toolkit divides by zero.
            best = np.where(denom > 0, np.minimum(1, num * 1.0 / denom), 0.0)
    scaled[need] = 1 - best[need]
    return scaled, exact


def blockwise_flight_scores(blocks, n: int, distance: str = "current") -> tuple[np.ndarray, np.ndarray]:
    """:func:`flight_scores` of ``n`` items whose KB comes in blocks ``(first item, KBArrays, gold columns,
    prediction kinds, prediction columns)`` (:func:`~dialeval.formats.airdialogue_predictions.resolved_kb_blocks`):
    one block's distances exist at a time. Items no block reaches score 0."""
    scaled, exact = np.zeros(n), np.zeros(n)
    for start, kb, gcols, kind, col in blocks:
        stop = start + len(kb)
        scaled[start:stop], exact[start:stop] = flight_scores(kb, gcols, kind, col, distance)
        del kb
    return scaled, exact


def status_scores(preds, golds) -> np.ndarray:
    """1[pred == gold], the status strings compared case-sensitively (the paper's action / state score; scaled
    and exact alike)."""
    p = np.asarray(preds, dtype=object)
    g = np.asarray(golds, dtype=object)
    return (p == g).astype(np.float64)


def total(name, flight, status) -> np.ndarray:
    """The paper's total: 0.2 name + 0.5 flight + 0.3 status (same operation order as the toolkit)."""
    w_name, w_flight, w_status = WEIGHTS
    return np.asarray(name) * w_name + np.asarray(flight) * w_flight + np.asarray(status) * w_status


def combine(name, name_ex, flight, flight_ex, status) -> dict[str, np.ndarray]:
    """The seven per-item metrics from the components (totals with the paper's weights)."""
    return {
        "score": total(name, flight, status),
        "exact": total(name_ex, flight_ex, status),
        "name": name,
        "name-exact": name_ex,
        "flight": flight,
        "flight-exact": flight_ex,
        "status": status,
    }


def selfplay_mean4(values: dict[str, np.ndarray]) -> np.ndarray:
    """(score + name + flight + status) / 4 per item: the toolkit's ``--task selfplay`` printout, ``np.mean`` over
    its (total, name, flight, status) rows (= 0.3 name + 0.375 flight + 0.325 status); not the paper's total."""
    return (values["score"] + values["name"] + values["flight"] + values["status"]) / 4


def status_codes(statuses: list[str]) -> np.ndarray:
    """Each status's index in :data:`STATUSES` (-1 for another value), as a float64 value column."""
    code = {s: i for i, s in enumerate(STATUSES)}
    return np.fromiter((code.get(s, -1) for s in statuses), np.float64, count=len(statuses))


METRIC_DESCRIPTIONS = {
    "score": "AirDialogue scaled total: 0.2 name F1 + 0.5 scaled flight + 0.3 status (the paper's 'total')",
    "exact": "AirDialogue exact-match total: 0.2 exact name + 0.5 exact flight + 0.3 status",
    "name": "character-level F1 of the normalised customer name (toolkit f1_score)",
    "name-exact": "exact name credit (tokens: half per first/last name token; whole: whole-name equality)",
    "flight": "scaled flight: 1 - min distance to a gold flight / max distance over KB x gold",
    "flight-exact": "1 if the predicted flight is a gold flight (or both are empty)",
    "status": "1 if the predicted status equals the gold status",
    "bleu": "sentence BLEU per dialogue (sacrebleu), averaged",
    "selfplay-mean4": "(score + name + flight + status) / 4: the number the toolkit's --task selfplay prints "
                      "(= 0.3 name + 0.375 flight + 0.325 status), not the paper's total; --lenient only",
}
