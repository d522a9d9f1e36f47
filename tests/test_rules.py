"""Rule-based baseline: handmade dialogs for each policy rule, plus the real-data accuracy it must reach.

Targets (reference/targets.md): the bot of bAbI tasks 1-5 and DSTC6 Track 1 is deterministic, so hand-written
rules solve it: P@1 = 1.0 on every DSTC6 tst1 task and 100 % per-response accuracy on bAbI T1-T5 tst and
tst-OOV. Real-data tests skip when ``../shared/data`` is absent; the full bAbI run is ``slow`` (CI runs a
deterministic subset: the first conversations of each file).
"""

from __future__ import annotations

import random
import re
import time
from pathlib import Path

import pytest

from dialeval.baselines._dialogstate import BUILTIN_VALUES, Vocabulary, find_mentions, resolve_values, tokens
from dialeval.baselines.rules import RuleBased
from dialeval.formats.dstc6 import (
    Candidate,
    DialogItem,
    gold_from_answer_key_json,
    load_json,
    read_dataset,
)

SHARED = Path(__file__).resolve().parents[2] / "shared"
TST1 = SHARED / "data" / "dstc6" / "tst1"
BABI = SHARED / "data" / "babi-dialog"

KB1_ONLY = {s: tuple(v for v in vs if v not in ("cantonese", "japanese", "korean", "thai", "vietnamese", "bangkok",
                                                "beijing", "hanoi", "seoul", "tokyo"))
            for s, vs in BUILTIN_VALUES.items()}


def kb1_vocabulary() -> Vocabulary:
    """What ``fit`` would know after kb1-only training data: no kb2 cuisine or location."""
    return Vocabulary({v: s for s, vs in KB1_ONLY.items() for v in vs})


def p_at_1(model, items, gold: dict[str, str]) -> float:
    """Share of items whose rank-1 candidate is the gold id (gold: dialog id -> candidate id)."""
    if not items:
        return 0.0
    return sum(model.rank(it)[0] == gold[it.dialog_id] for it in items) / len(items)


def item(utterances: list[str], texts: list[str], gold: str) -> tuple[DialogItem, str]:
    """A DSTC6-style item with ids ``c0..``; the candidate list is shuffled so order cannot matter."""
    rng = random.Random(len(utterances) * 31 + len(texts))
    texts = list(texts)
    rng.shuffle(texts)
    cands = [Candidate(f"c{i}", t) for i, t in enumerate(texts)]
    gid = next(c.candidate_id for c in cands if c.utterance == gold)
    return DialogItem("d", list(utterances), cands), gid


def best(model, utterances, texts, gold) -> bool:
    it, gid = item(utterances, texts, gold)
    ranked = model.rank(it)
    assert sorted(ranked) == sorted(c.candidate_id for c in it.candidates)
    return ranked[0] == gid


def facts(name: str, rating: int, loc="seoul", price="cheap", cuisine="korean", number="four", atm="casual",
          restr="vegan", prefix="r_") -> list[str]:
    attrs = [("location", loc), ("price", price), ("rating", str(rating)), ("phone", f"{name}_phone"),
             ("cuisine", cuisine), ("atmosphere", atm), ("restrictions", restr), ("number", number),
             ("address", f"{name}_address")]
    return [f"{name} {prefix}{a} {v}" for a, v in attrs]


OPENING = ["hello", "hello what can i help you with today"]
DISTRACT = ["i'm on it", "where should it be", "which price range are you looking for", "whenever you're ready",
            "are you looking for a specific atmosphere", "ok let me look into some options for you",
            "sure is there anything else to update", "any preference on a type of cuisine"]


# ---------------------------------------------------------------------------------------------------------------
# Handmade dialogs


def test_greeting_then_request_then_first_missing_slot_in_order():
    m = RuleBased()
    assert best(m, ["hi"], ["hello what can i help you with today", "hi", "i'm on it"],
                "hello what can i help you with today")
    ctx = OPENING + ["can you book a table for two in seoul", "i'm on it", "<silence>"]
    # DSTC6 asks atmosphere first, then cuisine, location, party size, price.
    assert best(m, ctx, DISTRACT + ["api_call korean seoul two cheap casual"], "are you looking for a specific atmosphere")
    ctx2 = ctx + ["are you looking for a specific atmosphere", "i am looking for a romantic atmosphere"]
    assert best(m, ctx2, DISTRACT, "any preference on a type of cuisine")


def test_hesitation_waits_and_correction_picks_the_settled_value():
    m = RuleBased(vocabulary=kb1_vocabulary())
    ctx = OPENING + ["can you book a table for two with korean food with a casual atmosphere in a cheap price range",
                     "i'm on it", "<silence>", "where should it be", "i could perhaps do tokyo or seoul, but it's not ideal"]
    assert best(m, ctx, DISTRACT, "whenever you're ready")
    ctx += ["whenever you're ready", "let's try seoul, tokyo is out of the way for me", "ok let me look into some options for you",
            "<silence>"]
    calls = ["api_call korean seoul two cheap casual", "api_call korean tokyo two cheap casual",
             "api_call thai seoul two cheap casual"]
    assert best(m, ctx, DISTRACT + calls, "api_call korean seoul two cheap casual")


@pytest.mark.parametrize(
    ("utterance", "slot", "value"),
    [
        ("i want thai food but my friend insists on korean so let's do that", "cuisine", "korean"),
        ("i want thai food please, my friend doesn't like korean", "cuisine", "thai"),
        ("tokyo is very tempting but i'm afraid i have to stick to hanoi today", "location", "hanoi"),
        ("find me one in hanoi, tokyo will be too complicated", "location", "hanoi"),
        ("let's do cheap price range, and keep expensive price range for another day", "price", "cheap"),
        ("i want cheap price range, but my friend wants a moderate range so let's do that", "price", "moderate"),
        ("i think i had thai last time, so let's do vietnamese food", "cuisine", "vietnamese"),
        ("let's go with cantonese food, i will keep thai for next time", "cuisine", "cantonese"),
        ("i was thinking bangkok but my friend prefers beijing so let's do that", "location", "beijing"),
        ("business, since romantic does not suit us this time", "atmosphere", "business"),
        ("my friend talked me out of seoul, let's go with hanoi", "location", "hanoi"),
        ("not seoul this time, hanoi please", "location", "hanoi"),
    ],
)
def test_mind_changes_resolve_to_the_chosen_value(utterance, slot, value):
    v = Vocabulary.builtin()
    toks = tokens(utterance)
    assert resolve_values(toks, find_mentions(toks, v, utterance))[slot] == value


def test_slot_update_then_no_then_updated_api_call():
    m = RuleBased()
    base = OPENING + ["can you book a table for two in seoul with korean food with a casual atmosphere in a cheap price range",
                      "i'm on it", "<silence>", "ok let me look into some options for you", "<silence>",
                      "api_call korean seoul two cheap casual"]
    ctx = base + ["instead could it be in tokyo"]
    assert best(m, ctx, DISTRACT + ["instead could it be in tokyo"], "sure is there anything else to update")
    ctx += ["sure is there anything else to update", "actually i would prefer for six people",
            "sure is there anything else to update", "no"]
    assert best(m, ctx, DISTRACT, "ok let me look into some options for you")
    ctx += ["ok let me look into some options for you", "<silence>"]
    calls = ["api_call korean seoul two cheap casual", "api_call korean tokyo two cheap casual",
             "api_call korean tokyo six cheap casual", "api_call korean seoul six cheap casual"]
    assert best(m, ctx, DISTRACT + calls, "api_call korean tokyo six cheap casual")


def test_options_by_rating_and_rejection_order():
    m = RuleBased()
    kb = facts("aa_x", 40) + facts("bb_x", 75) + facts("cc_x", 60) + facts("dd_x", 10)
    ctx = kb + OPENING + ["may i have a table with korean food in seoul for four in a cheap price range with a casual atmosphere",
                          "i'm on it", "<silence>", "ok let me look into some options for you", "<silence>"]
    opts = [f"what do you think of this option: {n}" for n in ("aa_x", "bb_x", "cc_x", "dd_x")]
    assert best(m, ctx, opts + DISTRACT, opts[1])
    ctx += [opts[1], "no i don't like it", "sure let me find another option for you", "<silence>"]
    assert best(m, ctx, opts + DISTRACT, opts[2])
    ctx += [opts[2], "do you have something else", "sure let me find another option for you", "<silence>"]
    assert best(m, ctx, opts + DISTRACT, opts[0])
    # "the first one" repeats the first proposal; "the previous one" the one before the last.
    ctx += [opts[0], "what was the first one you suggested"]
    assert best(m, ctx, opts + ["the option was bb_x", "the option was cc_x", "the option was aa_x"], "the option was bb_x")
    ctx2 = ctx[:-1] + ["sorry what was the previous option again"]
    assert best(m, ctx2, opts + ["the option was bb_x", "the option was cc_x", "the option was aa_x"], "the option was cc_x")
    ctx += ["the option was bb_x", "is this place dog-friendly"]
    assert best(m, ctx, DISTRACT + ["i am sorry, i don't have an answer to that question"],
                "i am sorry, i don't have an answer to that question")


def test_phone_address_and_both_for_the_booked_restaurant():
    m = RuleBased()
    kb = facts("aa_x", 40) + facts("bb_x", 75)
    infos = ["here it is aa_x_phone", "here it is aa_x_address", "here it is bb_x_phone", "here it is bb_x_address"]
    ctx = kb + OPENING + ["can you book a table at aa_x"]
    assert best(m, ctx, infos + DISTRACT + ["great let me do the reservation"], "great let me do the reservation")
    ctx += ["great let me do the reservation", "may i have the phone number of the restaurant"]
    assert best(m, ctx, infos + DISTRACT, "here it is aa_x_phone")
    ctx += ["here it is aa_x_phone", "wait, i am asking my friend if we need the address"]
    assert best(m, ctx, infos + DISTRACT, "whenever you're ready")
    ctx += ["whenever you're ready", "yes we need it, what is it please"]
    assert best(m, ctx, infos + DISTRACT, "here it is aa_x_address")
    ctx += ["here it is aa_x_address", "you rock"]
    assert best(m, ctx, DISTRACT + ["is there anything i can help you with", "you're welcome"],
                "is there anything i can help you with")
    ctx += ["is there anything i can help you with", "no thanks"]
    assert best(m, ctx, DISTRACT + ["is there anything i can help you with", "you're welcome"], "you're welcome")


def test_accepting_the_repeated_option_books_it():
    m = RuleBased()
    kb = facts("aa_x", 40) + facts("bb_x", 75)
    ctx = (OPENING + ["may i have a table with korean food in seoul for four in a cheap price range with a casual atmosphere",
                      "i'm on it", "<silence>", "ok let me look into some options for you", "<silence>",
                      "api_call korean seoul four cheap casual"] + kb
           + ["<silence>", "what do you think of this option: bb_x", "no this does not work for me",
              "sure let me find another option for you", "<silence>", "what do you think of this option: aa_x",
              "what was the first one you suggested", "the option was bb_x", "you know what, let's do that one",
              "great let me do the reservation", "do you have its address"])
    assert best(m, ctx, ["here it is aa_x_address", "here it is bb_x_address"] + DISTRACT, "here it is bb_x_address")


def test_kb2_entities_unseen_in_training_and_fit_on_kb1():
    train = [DialogItem("t", OPENING + ["may i have a table with french food in paris for two in a cheap price range "
                                        "with a casual atmosphere", "i'm on it", "<silence>",
                                        "ok let me look into some options for you", "<silence>"], [],
                        answer=Candidate("a", "api_call french paris two cheap casual"))]
    m = RuleBased(vocabulary=kb1_vocabulary()).fit(train)
    ctx = OPENING + ["can you book a table with vietnamese cuisine in hanoi for six in a moderate price range",
                     "i'm on it", "<silence>", "are you looking for a specific atmosphere",
                     "i am looking for a business atmosphere", "ok let me look into some options for you", "<silence>"]
    calls = ["api_call vietnamese hanoi six moderate business", "api_call vietnamese tokyo six moderate business",
             "api_call thai hanoi six moderate business", "api_call vietnamese hanoi six cheap business"]
    assert best(m, ctx, calls + DISTRACT, "api_call vietnamese hanoi six moderate business")


def test_restriction_slot_is_asked_last_and_goes_last_in_the_call():
    m = RuleBased()
    ask = "do you have any dietary restrictions"
    ctx = OPENING + ["can you book a table with thai food in bangkok for two in a cheap price range with a romantic atmosphere",
                     "i'm on it", "<silence>"]
    assert best(m, ctx, DISTRACT + [ask], ask)
    ctx += [ask, "i am vegan"]
    assert best(m, ctx, DISTRACT + [ask], "ok let me look into some options for you")
    ctx += ["ok let me look into some options for you", "<silence>"]
    calls = ["api_call thai bangkok two cheap romantic vegan", "api_call thai bangkok two cheap romantic vegetarian",
             "api_call thai bangkok two cheap romantic glutenfree"]
    assert best(m, ctx, calls + DISTRACT, "api_call thai bangkok two cheap romantic vegan")
    # Without restrictions in play (tst1/tst2) the same request goes straight to the search.
    assert best(m, ctx[:-4], DISTRACT, "ok let me look into some options for you")


def test_fit_learns_an_unseen_wording_for_a_known_act():
    # Without fit, an unseen wording that names the topic is still found by its keywords ...
    ctx = OPENING + ["can you book a table with thai food in bangkok for two in a cheap price range with a romantic atmosphere",
                     "i'm on it", "<silence>"]
    assert best(RuleBased(), ctx, DISTRACT + ["any dietary needs in your group"], "any dietary needs in your group")
    # ... one that does not is still found as the only candidate matching no known bot act ...
    ask = "anything your group cannot eat"
    ctx = OPENING + ["can you book a table with thai food in bangkok for two in a cheap price range with a romantic atmosphere",
                     "i'm on it", "<silence>"]
    calls = ["api_call thai bangkok two cheap romantic vegan"]
    train = []
    for _k in range(6):
        it, _ = item(ctx, DISTRACT + calls + [ask], ask)
        it.answer = next(c for c in it.candidates if c.utterance == ask)
        train.append(it)
    assert best(RuleBased(), ctx, DISTRACT + calls + [ask], ask)
    # ... and is learned from training answers.
    m = RuleBased().fit(train)
    assert m.wording == {"ask_restrictions": ask}
    assert best(m, ctx, DISTRACT + calls + [ask], ask)


def test_babi_wording_and_arity():
    m = RuleBased()
    ctx = ["hi", "hello what can i help you with today", "can you book a table for two in paris with british food",
           "i'm on it", "<SILENCE>"]
    cands = ["which price range are looking for", "api_call british paris two cheap", "where should it be",
             "sure let me find an other option for you"]
    assert best(m, ctx, cands, "which price range are looking for")


def test_ranking_is_deterministic_and_ignores_candidate_order():
    m = RuleBased()
    ctx = OPENING + ["can you book a table for two in seoul", "i'm on it", "<silence>"]
    texts = DISTRACT + ["can you book a table for two in seoul", "api_call korean seoul two cheap casual"]
    cands = [Candidate(f"id{i:02d}", t) for i, t in enumerate(texts)]
    a = m.rank(DialogItem("d", ctx, cands))
    b = m.rank(DialogItem("d", ctx, list(reversed(cands))))
    assert a == b and len(a) == len(set(a)) == len(cands)
    # A copy of the user's own turn (an adversarial distractor) is ranked last-ish, below the bot questions.
    assert a.index("id08") > a.index("id01")


def test_rank_is_fast_on_a_dstc6_sized_item():
    m = RuleBased()
    kb = [f for k in range(8) for f in facts(f"r{k}_x", 10 * k)]
    ctx = kb + OPENING + ["may i have a table with korean food in seoul for four in a cheap price range with a casual "
                          "atmosphere", "i'm on it", "<silence>", "ok let me look into some options for you", "<silence>"]
    it, _ = item(ctx, DISTRACT + ["what do you think of this option: r7_x"], "what do you think of this option: r7_x")
    m.rank(it)
    t0 = time.perf_counter()
    for _ in range(200):
        m.rank(it)
    assert (time.perf_counter() - t0) / 200 < 0.005  # ~0.2 ms here; generous bound for slow CI machines


# ---------------------------------------------------------------------------------------------------------------
# Real data


def _tst1_files() -> list[Path]:
    return sorted(p for p in TST1.glob("dialog-task*.json") if not p.name.endswith(".answers.json"))


def _load_tst1(task: int):
    if not TST1.is_dir():
        pytest.skip(f"real DSTC6 tst1 not found at {TST1}")
    path = next((p for p in _tst1_files() if p.name.startswith(f"dialog-task{task}")), None)
    if path is None:
        pytest.skip(f"no tst1 file for task {task} in {TST1}")
    gold = gold_from_answer_key_json(load_json(path.with_name(path.name[: -len(".json")] + ".answers.json")))
    return read_dataset(path), gold


@pytest.mark.realdata
@pytest.mark.parametrize("task", [1, 2, 3, 4, 5])
def test_real_tst1_is_solved(task):
    items, gold = _load_tst1(task)
    assert p_at_1(RuleBased(), items, gold) == 1.0


_KB1_TO_KB2 = {"british": "cantonese", "french": "japanese", "indian": "korean", "italian": "thai",
               "spanish": "vietnamese", "bombay": "bangkok", "london": "beijing", "madrid": "hanoi", "paris": "seoul",
               "rome": "tokyo"}
_KB_RE = re.compile(r"\b(" + "|".join(_KB1_TO_KB2) + r")\b")


def _to_kb2(text: str) -> str:
    return _KB_RE.sub(lambda m: _KB1_TO_KB2[m.group(1)], text)


@pytest.mark.realdata
@pytest.mark.parametrize("task", [1, 2, 5])
def test_real_tst1_rewritten_to_kb2_with_a_kb1_only_vocabulary(task):
    """tst2-like check: kb1 cuisines/locations renamed to kb2 ones the model was never told about."""
    items, gold = _load_tst1(task)
    moved = [DialogItem(it.dialog_id, [_to_kb2(u) for u in it.utterances],
                        [Candidate(c.candidate_id, _to_kb2(c.utterance)) for c in it.candidates]) for it in items]
    assert p_at_1(RuleBased(vocabulary=kb1_vocabulary()), moved, gold) == 1.0


def _babi_accuracy(task: int, split: str, max_conversations: int | None) -> float:
    from dialeval.baselines.data import load_babi_candidates, load_babi_items

    if not BABI.is_dir():
        pytest.skip(f"bAbI dialog data not found at {BABI}")
    cands = load_babi_candidates(BABI, task)
    items = load_babi_items(BABI, task, split, max_conversations=max_conversations, candidates=cands)
    m = RuleBased()
    return sum(m.rank(it)[0] == it.answer.candidate_id for it in items) / len(items)


@pytest.mark.realdata
@pytest.mark.parametrize("split", ["tst", "tst-OOV"])
@pytest.mark.parametrize("task", [1, 2, 3, 4, 5])
def test_babi_subset_is_solved(task, split):
    """The first 40 conversations of each file (CI-sized); the full files are the slow test below."""
    assert _babi_accuracy(task, split, 40) == 1.0


@pytest.mark.slow
@pytest.mark.realdata
@pytest.mark.parametrize("split", ["tst", "tst-OOV"])
@pytest.mark.parametrize("task", [1, 2, 3, 4, 5])
def test_babi_full_is_solved(task, split):
    assert _babi_accuracy(task, split, None) == 1.0


# ---------------------------------------------------------------------------------------------------------------
# The project's simulator (DSTC6-style data with a richer user language, all four test variants)


@pytest.fixture(scope="module")
def simulated(tmp_path_factory) -> Path:
    try:
        from dialeval.simulator.generate import generate_challenge
    except ImportError as e:  # the simulator is developed in parallel
        pytest.skip(f"simulator not available: {e}")
    out = tmp_path_factory.mktemp("sim")
    generate_challenge(out, seed=11, n_train=0, n_test=150)
    return out


@pytest.mark.parametrize("split", ["tst1", "tst2", "tst3", "tst4"])
def test_simulated_challenge_is_solved(simulated, split):
    from dialeval.formats.dstc6 import Challenge

    sp = Challenge(simulated).split(split)
    m = RuleBased()
    for task, tf in sorted(sp.files.items()):
        gold = gold_from_answer_key_json(load_json(sp.key_path(task)))
        assert p_at_1(m, read_dataset(tf.path), gold) == 1.0, f"{split} task {task}"


def test_unseen_restrictions_wording_is_found_from_the_file_name(tmp_path):
    """Real tst3/tst4 ask for dietary restrictions in a wording no training file shows: the file name says the
    slot is required, and the unseen question is the candidate that matches no known bot act."""
    pytest.importorskip("simulator")
    from dialeval.api import score
    from dialeval.baselines.run import run_baseline
    from dialeval.simulator import generate_challenge

    out = tmp_path / "sim"
    generate_challenge(out, seed=4, n_train=0, n_test=120, splits="tst3", tasks=[1, 5])
    for f in (out / "tst3").glob("*.json"):
        f.write_text(f.read_text().replace("do you have any dietary restrictions", "any special food needs for your group"))
    run_baseline("rule-based", out, "tst3", tmp_path / "sub")
    report = score(tmp_path / "sub", "tst3", out)
    assert report.value("p@1", "tst3", 1) == 1.0 and report.value("p@1", "tst3", 5) == 1.0

    # The file name is the only evidence: under a base-slots name the same items are missed.
    model = RuleBased()
    model.prepare_file("dialog-task1API-kb1_atmosphere-distr0.5-tst120.json")
    assert model.restrictions is None
    model.prepare_file("dialog-task1API-kb1_atmosphere_restrictions-distr0.5-tst120.json")
    assert model.restrictions is True
    model.prepare_file("dialog-task1API-kb2_atmosphere-distr0.5-tst120.json")
    assert model.restrictions is None
    assert RuleBased(restrictions=False).restrictions is False
