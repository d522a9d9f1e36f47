"""Property: on every valid submission, strict scores equal the official DSTC6 scorer's, and --lenient too.

Random valid submissions (any subset of items, partial top-m rankings in random order, entries listed in
any order) are scored three ways: strict mode, lenient mode, and an independent re-implementation of the
official algorithm (``tests/test_malformed.py``). All three must agree on P@1, P@2 and P@5 per task file.
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_malformed import key_gold, mean, official_hits, official_slots

from dialeval.api import score


@st.composite
def valid_submissions(draw, ch):
    sub = []
    for it in ch.all_items():
        if not draw(st.booleans()) and draw(st.booleans()):
            continue  # about a quarter of the items are left out (misses)
        ids = [c.candidate_id for c in it.candidates]
        order = draw(st.permutations(ids))
        m = draw(st.integers(1, len(ids)))
        entries = [{"candidate_id": c, "rank": r} for r, c in enumerate(order[:m], 1)]
        entries = draw(st.permutations(entries))  # the order of entries does not matter
        sub.append({"dialog_id": it.dialog_id, "lst_candidate_id": list(entries)})
    return draw(st.permutations(sub))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_strict_equals_official_on_valid_submissions(data, tiny_shared, tmp_path):
    ch = tiny_shared
    sub = list(data.draw(valid_submissions(ch)))
    path = tmp_path / "sub.json"
    path.write_text(json.dumps(sub))
    strict = score(path, split="tst1", challenge=ch.root)
    lenient = score(path, split="tst1", challenge=ch.root, lenient=True)
    assert strict.valid and not strict.errors
    slots = official_slots(sub)
    for t in ch.tasks:
        key = ch.key_json(t)
        hits = official_hits({d: s for d, s in slots.items() if d in key_gold(key)}, key)
        for k in ("p@1", "p@2", "p@5"):
            want = round(mean(hits[k]), 6)
            assert strict.value(k, "tst1", t) == want
            assert lenient.value(k, "tst1", t) == want
