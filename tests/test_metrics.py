"""Unit tests: ranking metrics over the rank-of-gold array, signatures, JSON-pointer escaping."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dialeval import __version__
from dialeval.core.problems import Problem, pointer, short
from dialeval.core.signature import Signature, format_tasks
from dialeval.metrics.ranking import (
    NOT_RANKED,
    hit_rate_at_k,
    hits_at_k,
    mrr,
    per_dialog_accuracy,
    rank_distribution,
    recall_at_k_in_n,
    reciprocal_ranks,
)

RANKS = np.array([1, 2, 3, 0, 5, 1, 10, 0])  # 0 = the gold was not ranked


def test_hit_rate_is_share_of_golds_in_top_k():
    assert hit_rate_at_k(RANKS, 1) == 2 / 8
    assert hit_rate_at_k(RANKS, 2) == 3 / 8
    assert hit_rate_at_k(RANKS, 5) == 5 / 8
    assert hit_rate_at_k(RANKS, 10) == 6 / 8  # the unranked golds never count, whatever k
    assert hits_at_k(RANKS, 2).tolist() == [1, 1, 0, 0, 0, 1, 0, 0]
    assert recall_at_k_in_n([1, 2, 2, 9], 2) == 0.75


def test_unranked_is_a_miss_and_counts_in_the_denominator():
    unranked = [NOT_RANKED] * 3 + [1]
    assert hit_rate_at_k(unranked, 5) == 0.25  # whatever k: an unranked gold is never in the top k
    assert hit_rate_at_k(unranked, 10_000) == 0.25
    assert mrr(unranked) == 0.25  # and adds 0 to the reciprocal-rank sum, not 1/NOT_RANKED


def test_mrr_with_unranked():
    assert reciprocal_ranks(RANKS).tolist() == pytest.approx([1, 0.5, 1 / 3, 0, 0.2, 1, 0.1, 0])
    assert mrr(RANKS) == pytest.approx((1 + 0.5 + 1 / 3 + 0.2 + 1 + 0.1) / 8)
    assert mrr([2] * 5) == 0.5


def test_empty_and_bad_shapes():
    assert math.isnan(hit_rate_at_k([], 1)) and math.isnan(mrr([]))
    assert math.isnan(per_dialog_accuracy([], []))
    with pytest.raises(ValueError):
        hit_rate_at_k(np.ones((2, 2), dtype=int), 1)


def test_per_dialog_accuracy_needs_every_turn_right():
    ranks = [1, 1, 2, 1, 1, 0, 1]
    conv = ["a", "a", "b", "b", "c", "d", "e"]
    # a: all hit@1; b: one miss; c: hit; d: unranked; e: hit  -> 3 of 5
    assert per_dialog_accuracy(ranks, conv) == pytest.approx(3 / 5)
    # order of the predictions does not matter
    perm = [6, 3, 0, 5, 2, 4, 1]
    assert per_dialog_accuracy([ranks[i] for i in perm], [conv[i] for i in perm]) == pytest.approx(3 / 5)
    # one prediction per conversation: per-dialog == per-response accuracy
    assert per_dialog_accuracy(RANKS, list(range(len(RANKS)))) == hit_rate_at_k(RANKS, 1)


def test_rank_distribution():
    assert rank_distribution(RANKS) == {"1": 2, "2": 1, "3": 1, "5": 1, "10": 1, "unranked": 2}
    assert rank_distribution([1, 1]) == {"1": 2, "unranked": 0}
    assert rank_distribution([]) == {"unranked": 0}
    assert rank_distribution([0, 0]) == {"unranked": 2}
    assert sum(rank_distribution(RANKS).values()) == len(RANKS)


# ---- signatures ------------------------------------------------------------------------------------------
def test_signature_format_and_parse_round_trip():
    sig = Signature("dstc6").with_fields(tasks=[1, 2, 3, 5], mode="strict", nc="all", gold="id")
    sig = sig.with_fields(split="tst4", task="all", metric="p@1", avg="micro")
    text = sig.format()
    assert text == f"dstc6|tasks:1-3,5|mode:strict|nc:all|gold:id|split:tst4|task:all|metric:p@1|avg:micro|v:{__version__}"
    back = Signature.parse(text)
    assert back == sig and back.format() == text
    assert Signature.parse("babi|split:tst|v:9.9.9") == Signature("babi", (("split", "tst"),), "9.9.9")


def test_signature_with_fields_keeps_positions_and_formats_values():
    sig = Signature("dstc6").with_fields(a=1, b=None, c=True).with_fields(a=2, d=False)
    assert sig.fields == (("a", "2"), ("b", "none"), ("c", "yes"), ("d", "no"))
    assert str(sig).endswith(f"|v:{__version__}")


@pytest.mark.parametrize("tasks,text", [([1, 2, 3, 4, 5], "1-5"), ([3], "3"), ([5, 1, 2], "1-2,5"), ([], "")])
def test_format_tasks(tasks, text):
    assert format_tasks(tasks) == text


# ---- problems --------------------------------------------------------------------------------------------
def test_pointer_escaping_rfc6901():
    assert pointer(17, "lst_candidate_id", 3, "rank") == "/17/lst_candidate_id/3/rank"
    assert pointer(0, "a/b", "m~n") == "/0/a~1b/m~0n"
    assert pointer("~1") == "/~01"  # '~' is escaped first, so '~1' does not turn into '/'
    assert pointer() == ""


def test_problem_location_and_json():
    p = Problem("duplicate-rank", "/3/lst_candidate_id/1/rank", "rank 2 is already given", file="tst1/x.json")
    assert p.where() == "tst1/x.json#/3/lst_candidate_id/1/rank"
    assert p.format().startswith("tst1/x.json#/3/lst_candidate_id/1/rank: error [duplicate-rank]")
    assert p.to_json() == {"severity": "error", "code": "duplicate-rank", "file": "tst1/x.json",
                           "pointer": "/3/lst_candidate_id/1/rank", "message": "rank 2 is already given"}
    assert Problem("not-a-list", "", "m", file="a.json").where() == "a.json"
    assert Problem("missing-dialog", "", "m", "warning").where() == "submission"


def test_short_keeps_attacker_values_to_one_short_line():
    s = short("x" * 10_000 + "\n")
    assert len(s) <= 60 and "\n" not in s and s.endswith("...")
    assert short("abc") == '"abc"' and short(1.5) == "1.5"


def test_hits_with_ties_on_some_rows_equal_the_formula_on_every_row():
    # only tied rows take the fractional path; every other row must get exactly the 0/1 the formula gives
    rng = np.random.default_rng(3)
    r = rng.integers(0, 12, 5000).astype(np.int32)
    t = np.where(rng.random(5000) < 0.05, rng.integers(1, 5, 5000), 0).astype(np.int32)
    for k in (1, 2, 5, 10):
        formula = np.where(r >= 1, np.clip((k - (r - 1.0)) / (t + 1.0), 0.0, 1.0), 0.0)
        got = hits_at_k(r, k, t)
        assert got.dtype == np.float64 and np.array_equal(got, formula)
        assert set(got[t == 0].tolist()) <= {0.0, 1.0}


def test_every_code_a_reader_emits_is_described_by_the_shared_list_or_its_benchmark():
    """A code literal in a registered benchmark's module (a package: every module in it) is in CODES or the
    problem_codes of a benchmark defined there, as is one in a reader of formats/ that only that benchmark's module
    imports; every other module of benchmarks/ and the shared readers (formats, files) use only shared codes; no benchmark redefines a shared code. The benchmarks come from the
    registry, so a new one is covered without a change here."""
    import importlib
    import re
    from pathlib import Path

    import dialeval
    from dialeval.benchmarks import registry
    from dialeval.core.problems import CODES, describe

    root = Path(dialeval.__file__).parent
    # a code given to a problem's maker, also as ``add(crash or "missing-key", ...)``, or to a cap's check
    literal = re.compile(r'(?:Problem|Fault|err|UnreadableInput|add|problem|full|room)\(\s*(?:[\w.]+,\s*|\w+ or\s+)?'
                         r'"([a-z][a-z0-9-]+)"')
    own_by_file: dict[Path, dict[str, str]] = {}
    for name in registry.names():
        bench = registry.get(name)
        own = dict(bench.problem_codes)
        assert not set(own) & set(CODES), f"{name} redefines shared codes"
        where = Path(importlib.import_module(type(bench).__module__).__file__)
        if where.parent != root / "benchmarks":  # a benchmark package (dstc6/): every module in it is its own
            where = where.parent
        for f in [where] if where.is_file() else sorted(where.glob("*.py")):
            own_by_file.setdefault(f, {}).update(own)
    # a reader only one benchmark module imports (formats/airdialogue_predictions.py: AirDialogue's submissions) is
    # that benchmark's own: its codes are the benchmark's; a reader two benchmarks import is shared
    readers = {f: set(re.findall(r"dialeval\.formats(?:\.| import )(\w+)", f.read_text()))
               for f in (root / "benchmarks").rglob("*.py")}
    for f, own in list(own_by_file.items()):
        for name in readers.get(f, ()):
            if sum(name in used for used in readers.values()) == 1:
                own_by_file.setdefault(root / "formats" / f"{name}.py", {}).update(own)
    for f, own in own_by_file.items():
        for code in literal.findall(f.read_text()):
            assert describe(code, own), f"{f.name}: code {code!r} is described nowhere"
    shared = [*(f for f in sorted((root / "benchmarks").glob("*.py")) if f not in own_by_file),
              *(f for f in sorted((root / "formats").glob("*.py")) if f not in own_by_file), root / "files" / "read.py"]
    for f in shared:
        for code in literal.findall(f.read_text()):
            assert code in CODES, f"{f.name}: shared reader emits {code!r}, which only a benchmark declares"
    assert {"no-result-file", "answer-not-candidate", "line-too-long"} <= {c for own in own_by_file.values() for c in own}
