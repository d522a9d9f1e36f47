"""Best-effort rules for bAbI task 6 (DSTC2 converted to the bAbI format).

Task 6 is human-bot data with a noisy, non-deterministic bot (Bordes & Weston report 33.3 % for their rules), so
only the parts of its policy that are regular are coded: the greeting, the goodbye, phone / address / post code of
the restaurant under discussion, the slot questions (food, area, price) and the API call
(``api_call <food> <area> <price>`` with ``R_<slot>`` for "don't care"), "no restaurant serving X food" after an
empty result, and the next restaurant by rating. Everything else falls back to the similarity ranking.
"""

from __future__ import annotations

import re

GREETING_MARK = "cambridge restaurant system"
_SLOTS = ("cuisine", "location", "price")
_FACT = re.compile(r"^(\S+) R_(\w+) (\S+)$")
_QUESTIONS = {
    "cuisine": "What kind of food would you like?",
    "location": "What part of town do you have in mind?",
    "price": "Would you like something in the cheap , moderate , or expensive price range?",
}
_DONTCARE = ("any", "dont care", "don't care", "doesnt matter", "doesn't matter", "do not care")


def is_dstc2(utterances: list[str], candidate_texts) -> bool:
    """Task-6 data: its greeting (Cambridge restaurant system) or an API call with ``R_<slot>`` placeholders."""
    for u in utterances[:3]:
        if GREETING_MARK in u.lower():
            return True
    return any(GREETING_MARK in t.lower() for t in candidate_texts)


def _is_non_turn(u: str) -> bool:
    return _FACT.match(u) is not None or u == "api_call no result"


def next_texts(utterances: list[str], vocab: dict[str, str], greeting: str) -> list[str]:
    """Candidate texts for the bot's next turn, preferred first (empty: no rule applies)."""
    user = True
    facts: dict[str, dict[str, str]] = {}
    block: list[str] = []
    slots: dict[str, str] = {}
    asked: str | None = None
    api_done = False
    no_result = False
    proposed: list[str] = []
    last_user = ""
    last_bot = None
    for u in utterances:
        if _is_non_turn(u):
            if u == "api_call no result":
                no_result = True
                continue
            m = _FACT.match(u)
            name, attr, value = m.group(1), m.group(2), m.group(3)
            facts.setdefault(name, {})[attr] = value
            if name not in block:
                block.append(name)
            if attr in _SLOTS:
                vocab.setdefault(value, attr)
            continue
        if user:
            last_user = u.lower()
            toks = re.findall(r"[a-z']+", last_user)
            found = False
            for t in toks:
                s = vocab.get(t)
                if s in _SLOTS:
                    slots[s] = t
                    found = True
            if not found and asked and any(d in last_user for d in _DONTCARE):
                slots[asked] = "R_" + asked
        else:
            last_bot = u
            if u.startswith("api_call"):
                api_done = True
                no_result = False
                block = []
                for s, v in zip(_SLOTS, u.split()[1:]):
                    slots[s] = v
            else:
                for s, q in _QUESTIONS.items():
                    if u == q:
                        asked = s
                first = u.split(" ", 1)[0]
                if first in facts and first not in proposed:
                    proposed.append(first)
                elif " is " in u:
                    for tok in u.split():
                        if tok in facts and tok not in proposed:
                            proposed.append(tok)
        user = not user
    if last_bot is None:
        return [greeting] if greeting else []
    if any(w in last_user for w in ("bye", "thank")):
        return [" you are welcome", "you are welcome"]
    current = proposed[-1] if proposed else None
    if current:
        if "phone" in last_user:
            return [f"The phone number of {current} is {facts.get(current, {}).get('phone', current + '_phone')}"]
        if "address" in last_user:
            return [f"Sure , {current} is on {facts.get(current, {}).get('address', current + '_address')}"]
        if "post" in last_user or "code" in last_user:
            return [f"The post code of {current} is {facts.get(current, {}).get('post_code', current + '_post_code')}"]
    if no_result and slots.get("cuisine", "R_cuisine") != "R_cuisine":
        return [f"I'm sorry but there is no restaurant serving {slots['cuisine']} food"]
    if api_done and block:
        ranked = sorted(block, key=lambda n: -_rating(facts[n]))
        for n in ranked:
            if n not in proposed:
                f = facts[n]
                loc, price, food = f.get("location", ""), f.get("price", ""), f.get("cuisine", "")
                prices = f"{n} is a nice place in the {loc} of town and the prices are {price}"
                tasty = f"{n} is a nice place in the {loc} of town serving tasty {food} food"
                plain = f"{n} is a nice place in the {loc} of town"
                if slots.get("price", "R_price") != "R_price":
                    return [prices, tasty, plain]
                if slots.get("cuisine", "R_cuisine") != "R_cuisine":
                    return [tasty, prices, plain]
                return [plain, prices, tasty]
    if not api_done or not block:
        for s in _SLOTS:
            if s not in slots:
                return [_QUESTIONS[s]]
        return ["api_call " + " ".join(slots[s] for s in _SLOTS)]
    return []


def _rating(f: dict[str, str]) -> float:
    try:
        return float(f.get("rating", "0"))
    except ValueError:
        return 0.0
