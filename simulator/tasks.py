"""Tasks 1-5: simulate whole conversations, then cut them into DSTC6 items.

A conversation is a flat list of utterances (user, bot and KB fact lines, the shape of a DSTC6 item's
``utterances``) plus the positions of the bot utterances. An item is a prefix ending just before a bot utterance
(the gold) with 7-10 candidates. The bot is a deterministic function of the context, so a perfect rule system
reaches P@1 = 1.0; distractors never repeat the gold's text (they may repeat each other, as in the real files).

Measured on the real tst1 files and reproduced here:

* which bot turns become items: tasks 1, 2 and 5 never predict the greeting reply nor ``i'm on it`` (the first two
  bot turns); tasks 3 and 4 predict any bot turn;
* task 2 requests state every slot and the conversation ends with the updated ``api_call``;
* task 3 and 5 results hold min(4, matches) restaurants in random order; the bot proposes them by rating;
* task 3 dialogs start with the fact lines and have no ``api_call``; task 4 starts with one restaurant's facts;
* candidates per item follow the real per-task distribution (mostly 7), gold at a uniform position.

Everything random flows from one ``random.Random``; ids are UUID4 built from it, so output is deterministic.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from dialeval.formats.dstc6 import Candidate, DialogItem
from dialeval.simulator import language as L
from dialeval.simulator.kb import Combo, KnowledgeBase, Restaurant

SLOTS_BASE = ("cuisine", "location", "number", "price", "atmosphere")
SLOTS_EXTRA = SLOTS_BASE + ("restrictions",)

REAL_CANDIDATE_DIST: dict[int, dict[int, float]] = {
    1: {7: 0.873, 8: 0.056, 9: 0.046, 10: 0.025},
    2: {7: 0.860, 8: 0.049, 9: 0.027, 10: 0.064},
    3: {7: 0.995, 8: 0.005},
    4: {7: 0.997, 8: 0.003},
    5: {7: 0.912, 8: 0.025, 9: 0.027, 10: 0.036},
}
"""Candidates per item in the real tst1 files (share of items), used when the range allows it."""

FIRST_ITEM_TURN = {1: 2, 2: 2, 3: 0, 4: 0, 5: 2}
"""Index of the first bot turn that becomes an item (0-based), per task."""

P_HESITATE = 0.3  # a slot answer or an update starts with a hesitation (bot: "whenever you're ready")
P_TWO_VALUES = 0.25  # a slot answer mentions a second value and says which one wins
P_FRIEND = 0.1  # a slot answer relays the friend's choice
P_SIDE = 0.35  # after a proposal, the user asks an unanswerable question or for an earlier option
P_ACCEPT = 0.25  # the user accepts a proposal (always accepts the last one)
TEST_SHARE_MOD = 5  # one request in 5 is reserved for the kb1 test splits


def is_test_request(combo: Combo) -> bool:
    """Whether a kb1 request (its 5 base slots) belongs to the test splits.

    A fixed hash of the slot combination, independent of the seed, so that train and test never share a user
    request whatever seeds are used; the dietary restriction is ignored so that tst3 requests are new as well.
    """
    return zlib.crc32(" ".join(combo[:5]).encode()) % TEST_SHARE_MOD == 0


def fast_uuid4(rng: random.Random) -> str:
    """``str(uuid.UUID(int=rng.getrandbits(128), version=4))`` without building a UUID object (3x faster)."""
    v = rng.getrandbits(128)
    v = (v & ~(0xF000 << 64) & ~(0xC000 << 48)) | (4 << 76) | (0x8000 << 48)
    h = f"{v:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


@dataclass(slots=True)
class Conversation:
    """A simulated conversation: utterances, positions of bot turns, and spans of KB fact lines."""

    utts: list[str] = field(default_factory=list)
    bots: list[int] = field(default_factory=list)
    facts: list[tuple[int, int]] = field(default_factory=list)
    request: Combo = ()

    def user(self, text: str) -> None:
        self.utts.append(text)

    def bot(self, text: str) -> None:
        self.bots.append(len(self.utts))
        self.utts.append(text)

    def add_facts(self, lines: list[str]) -> None:
        start = len(self.utts)
        self.utts.extend(lines)
        self.facts.append((start, len(self.utts)))


class TaskSimulator:
    """Simulates conversations of one task over one KB, for one side of the train/test request partition.

    ``partition`` is ``"train"`` (kb1 requests outside the test share), ``"test"`` (inside it) or ``None``
    (every request: kb2, which training never uses).
    """

    def __init__(self, task: int, kb: KnowledgeBase, restrictions: bool, rng: random.Random,
                 partition: str | None = None):
        if task not in REAL_CANDIDATE_DIST:
            raise ValueError(f"task must be 1-5, got {task}")
        self.task = task
        self.kb = kb
        self.rng = rng
        rand = rng.random
        # random.choice/sample/randint go through _randbelow (several calls each); one float per pick is 3x faster
        # and these picks dominate generation time.
        self._pick: Callable[[Sequence], Any] = lambda seq: seq[int(rand() * len(seq))]
        self.restrictions = restrictions
        self.slots = SLOTS_EXTRA if restrictions else SLOTS_BASE
        self.values = kb.values
        self.ask_order = [s for s in L.ASK_ORDER if s in self.slots]
        nslot = len(self.slots)
        allowed = [c for c in self._all_combos() if self._allowed(c, partition)]
        self.requests = allowed
        self.requests_3plus = [c for c in allowed if len(kb.matches(c)) >= 3]
        self.restaurants = [r for r in kb.restaurants if self._allowed(self._combo_of(r), partition)]
        self._nslot = nslot
        self._pool = self._bot_pool()

    def _sample(self, seq: Sequence, k: int) -> list:
        """k distinct elements in random order (partial Fisher-Yates with one float per draw)."""
        pool = list(seq)
        rand = self.rng.random
        n = len(pool)
        for i in range(k):
            j = i + int(rand() * (n - i))
            pool[i], pool[j] = pool[j], pool[i]
        return pool[:k]

    def _randint(self, a: int, b: int) -> int:
        return a + int(self.rng.random() * (b - a + 1))

    # --- helpers ------------------------------------------------------------------------------------------
    def _all_combos(self) -> list[Combo]:
        v = self.values
        out: list[Combo] = [
            (c, lo, n, p, a)
            for c in v["cuisine"]
            for lo in v["location"]
            for n in v["number"]
            for p in v["price"]
            for a in v["atmosphere"]
        ]
        if self.restrictions:
            out = [c + (r,) for c in out for r in v["restrictions"]]
        return out

    def _combo_of(self, r: Restaurant) -> Combo:
        base = (r.cuisine, r.location, r.number, r.price, r.atmosphere)
        return base + (r.restrictions,) if self.restrictions else base

    @staticmethod
    def _allowed(combo: Combo, partition: str | None) -> bool:
        if partition is None:
            return True
        return is_test_request(combo) == (partition == "test")

    def _goal_dict(self, combo: Combo) -> dict[str, str]:
        return dict(zip(self.slots, combo))

    def _combo(self, goal: dict[str, str]) -> Combo:
        return tuple(goal[s] for s in self.slots)

    @staticmethod
    def api_call(combo: Combo) -> str:
        return "api_call " + " ".join(combo)

    def _other(self, slot: str, v: str) -> str:
        vals = self.values[slot]
        while True:
            o = self._pick(vals)
            if o != v:
                return o

    def _phrase(self, slot: str, v: str) -> str:
        return self._pick(L.SLOT_PHRASES[slot]).format(v=v)

    def _update_phrase(self, slot: str, v: str) -> str:
        return self._pick(L.UPDATE_PHRASES[slot]).format(v=v)

    # --- conversation pieces ------------------------------------------------------------------------------
    def _opening(self, c: Conversation, goal: dict[str, str], stated: list[str]) -> None:
        c.user(self._pick(L.GREETINGS))
        c.bot(L.HELLO)
        text = self._pick(L.REQUEST_PREFIXES)
        if stated:
            text += " " + " ".join(self._phrase(s, goal[s]) for s in stated)
        c.user(text)
        c.bot(L.ON_IT)
        c.user(L.SILENCE)

    def _hesitation(self, slot: str) -> str:
        a = self._pick(self.values[slot])
        return self._pick(L.HESITATIONS).format(a=a, b=self._other(slot, a))

    def _answer(self, c: Conversation, slot: str, v: str) -> None:
        rng = self.rng
        if rng.random() < P_HESITATE:
            c.user(self._hesitation(slot))
            c.bot(L.READY)
        r = rng.random()
        if r < P_TWO_VALUES:
            c.user(self._pick(L.TWO_VALUE_ANSWERS).format(v=v, o=self._other(slot, v)))
        elif r < P_TWO_VALUES + P_FRIEND:
            c.user(self._pick(L.ONE_VALUE_FRIEND).format(v=v))
        else:
            c.user(self._pick(L.ANSWERS[slot]).format(v=v))

    def _fill_slots(self, c: Conversation, goal: dict[str, str], stated: list[str]) -> None:
        for slot in self.ask_order:
            if slot not in stated:
                c.bot(L.ASK[slot])
                self._answer(c, slot, goal[slot])
        c.bot(L.LOOKING)
        c.user(L.SILENCE)

    def _updates(self, c: Conversation, goal: dict[str, str], n: int) -> None:
        rng = self.rng
        for slot in self._sample(self.slots, n):
            new = self._other(slot, goal[slot])
            if rng.random() < P_HESITATE:
                other = self._other(slot, goal[slot])
                c.user(self._pick(L.UPDATE_HESITATIONS).format(p=self._update_phrase(slot, other)))
                c.bot(L.READY)
            goal[slot] = new
            c.user(self._pick(L.UPDATES).format(p=self._update_phrase(slot, new)))
            c.bot(L.UPDATE)
        c.user(self._pick(L.NO_MORE))
        c.bot(L.LOOKING)
        c.user(L.SILENCE)

    def _results(self, combo: Combo) -> list[Restaurant]:
        matches = self.kb.matches(combo)
        shown = self._sample(matches, min(4, len(matches)))
        return shown

    def _options(self, c: Conversation, shown: list[Restaurant]) -> Restaurant:
        rng = self.rng
        order = sorted(shown, key=lambda r: -r.rating)
        proposed: list[str] = []
        for i, r in enumerate(order):
            c.bot(L.PROPOSE + r.name)
            proposed.append(r.name)
            sides = 0
            while sides < 2 and rng.random() < P_SIDE:
                sides += 1
                if len(proposed) >= 2 and rng.random() < 0.5:
                    if rng.random() < 0.5:
                        c.user(self._pick(L.ASK_FIRST))
                        c.bot(L.OPTION_WAS + proposed[0])
                    else:
                        c.user(self._pick(L.ASK_PREVIOUS))
                        c.bot(L.OPTION_WAS + proposed[-2])
                else:
                    c.user(self._pick(L.UNANSWERABLE))
                    c.bot(L.SORRY)
            last = i == len(order) - 1
            if last or rng.random() < P_ACCEPT:
                c.user(self._pick(L.ACCEPT_LAST if last and rng.random() < 0.3 else L.ACCEPT))
                c.bot(L.BOOK)
                return r
            c.user(self._pick(L.REJECT))
            c.bot(L.ANOTHER)
            c.user(L.SILENCE)
        raise AssertionError("unreachable: the last option is always accepted")

    def _infos(self, c: Conversation, r: Restaurant) -> None:
        rng = self.rng
        x = rng.random()
        wanted = ["phone"] if x < 0.25 else ["address"] if x < 0.5 else self._sample(["phone", "address"], 2)
        for what in wanted:
            y = rng.random()
            if y < P_HESITATE:
                c.user(self._pick(L.INFO_HESITATIONS[what]))
                c.bot(L.READY)
                c.user(self._pick(L.INFO_CONFIRM))
            elif y < P_HESITATE + 0.1:
                c.user(self._pick(L.INFO_FRIEND[what]))
            else:
                c.user(self._pick(L.ASK_INFO[what]))
            c.bot(L.HERE + (r.phone if what == "phone" else r.address))

    # --- tasks ----------------------------------------------------------------------------------------------
    def _stated(self) -> list[str]:
        k = self._randint(0, self._nslot)
        return self._sample(self.slots, k)

    def task1(self) -> Conversation:
        c = Conversation()
        combo = self._pick(self.requests)
        c.request = combo
        goal = self._goal_dict(combo)
        stated = self._stated()
        self._opening(c, goal, stated)
        self._fill_slots(c, goal, stated)
        c.bot(self.api_call(combo))
        return c

    def task2(self) -> Conversation:
        c = Conversation()
        combo = self._pick(self.requests)
        c.request = combo
        goal = self._goal_dict(combo)
        self._opening(c, goal, self._sample(self.slots, self._nslot))
        self._fill_slots(c, goal, list(self.slots))
        c.bot(self.api_call(combo))
        self._updates(c, goal, self._randint(1, 4))
        c.bot(self.api_call(self._combo(goal)))
        return c

    def task3(self) -> Conversation:
        c = Conversation()
        combo = self._pick(self.requests_3plus)
        c.request = combo
        goal = self._goal_dict(combo)
        shown = self._results(combo)
        c.add_facts([f for r in shown for f in r.fact_lines()])
        self._opening(c, goal, self._sample(self.slots, self._nslot))
        self._fill_slots(c, goal, list(self.slots))
        self._options(c, shown)
        return c

    def task4(self) -> Conversation:
        c = Conversation()
        r = self._pick(self.restaurants)
        c.request = self._combo_of(r)
        c.add_facts(list(r.fact_lines()))
        c.user(self._pick(L.GREETINGS))
        c.bot(L.HELLO)
        c.user(self._pick(L.TABLE_AT).format(n=r.name))
        c.bot(L.BOOK)
        self._infos(c, r)
        return c

    def task5(self) -> Conversation:
        rng = self.rng
        combo = self._pick(self.requests)
        goal = self._goal_dict(combo)
        n_updates = self._randint(1, 5)
        for _ in range(100):  # the final request must match at least one restaurant
            state = rng.getstate()
            c = Conversation()
            c.request = combo
            g = dict(goal)
            stated = self._stated()
            self._opening(c, g, stated)
            self._fill_slots(c, g, stated)
            c.bot(self.api_call(combo))
            self._updates(c, g, n_updates)
            final = self._combo(g)
            if self.kb.matches(final):
                break
            rng.setstate(state)
            rng.random()  # move on: the retry must differ
        else:  # pragma: no cover - every KB has requests with matches
            raise RuntimeError("could not find a request with results")
        c.bot(self.api_call(final))
        shown = self._results(final)
        c.add_facts([f for r in shown for f in r.fact_lines()])
        c.user(L.SILENCE)
        chosen = self._options(c, shown)
        self._infos(c, chosen)
        c.user(self._pick(L.THANKS))
        c.bot(L.ANYTHING)
        c.user(self._pick(L.BYE))
        c.bot(L.WELCOME)
        return c

    def conversation(self) -> Conversation:
        return (self.task1, self.task2, self.task3, self.task4, self.task5)[self.task - 1]()

    # --- distractors ----------------------------------------------------------------------------------------
    def _random_api_call(self, rng: random.Random) -> str:
        v = self.values
        return self.api_call(tuple(self._pick(v[s]) for s in self.slots))

    def _random_name(self, rng: random.Random) -> str:
        return self._pick(self.kb.restaurants).name

    def _bot_pool(self) -> list[str | Callable[[random.Random], str]]:
        """Bot utterances of the task, the source of the non-context distractors (weights by repetition)."""
        api = self._random_api_call
        propose = lambda rng: L.PROPOSE + self._random_name(rng)  # noqa: E731
        was = lambda rng: L.OPTION_WAS + self._random_name(rng)  # noqa: E731
        phone = lambda rng: L.HERE + self._random_name(rng) + "_phone"  # noqa: E731
        address = lambda rng: L.HERE + self._random_name(rng) + "_address"  # noqa: E731
        asks = [L.ASK[s] for s in self.ask_order]
        t = self.task
        if t == 1:
            return asks + [L.LOOKING, L.READY, L.HELLO, L.ON_IT, api, api]
        if t == 2:
            return [L.UPDATE, L.LOOKING, L.READY, L.HELLO, L.ON_IT, api, api, api, api, api]
        if t == 3:
            return [propose, propose, propose, propose, was, L.ANOTHER, L.LOOKING, L.SORRY, L.BOOK, L.HELLO, L.ON_IT]
        if t == 4:
            return [phone, phone, phone, address, address, address, L.BOOK, L.HELLO, L.READY]
        return asks + [L.LOOKING, L.READY, L.UPDATE, api, api, propose, propose, was, L.ANOTHER, L.SORRY, L.BOOK,
                       phone, address, L.ANYTHING, L.WELCOME, L.HELLO, L.ON_IT]


@dataclass
class ItemOptions:
    """How items are cut from conversations: candidate counts and the share of context distractors."""

    candidates: tuple[int, int] = (7, 10)
    context_distractors: float = 0.5

    def count_table(self, task: int) -> tuple[list[int], list[float]]:
        lo, hi = self.candidates
        dist = {k: p for k, p in REAL_CANDIDATE_DIST[task].items() if lo <= k <= hi}
        if not dist:
            dist = {k: 1.0 for k in range(lo, hi + 1)}
        ks = sorted(dist)
        total = sum(dist.values())
        cum, acc = [], 0.0
        for k in ks:
            acc += dist[k] / total
            cum.append(acc)
        cum[-1] = 1.0
        return ks, cum


def make_item(sim: TaskSimulator, conv: Conversation, pos: int, opts_table: tuple[list[int], list[float]],
              p_ctx: float, train: bool, conversation_id: str | None = None, turn: int | None = None) -> DialogItem:
    """One DSTC6 item: the prefix before bot utterance ``pos`` and its candidates (gold at a random place)."""
    rng = sim.rng
    utts = conv.utts
    ctx = utts[:pos]
    gold = utts[pos]
    ks, cum = opts_table
    x = rng.random()
    n = ks[-1]
    for k, c in zip(ks, cum):
        if x < c:
            n = k
            break
    pool = sim._pool
    texts: list[str] = []
    rand = rng.random
    choice = sim._pick
    nctx = len(ctx)
    seen = None
    for _ in range(n - 1):
        t = None
        if rand() < p_ctx:
            for _try in range(8):
                u = ctx[int(rand() * nctx)]
                if u != gold and u != L.SILENCE:
                    t = u
                    break
        if t is None:
            if seen is None:
                seen = set(ctx)
            for _try in range(6):  # prefer texts absent from the context: the share then matches p_ctx
                e = choice(pool)
                t = e if type(e) is str else e(rng)
                if t != gold and t not in seen:
                    break
            while t == gold:
                e = choice(pool)
                t = e if type(e) is str else e(rng)
        texts.append(t)
    g = int(rand() * n)
    texts.insert(g, gold)
    cands = [Candidate(fast_uuid4(rng), t) for t in texts]
    return DialogItem(
        dialog_id=fast_uuid4(rng),
        utterances=ctx,
        candidates=cands,
        answer=cands[g] if train else None,
        conversation_id=conversation_id,
        turn=turn,
    )


def simulate_items(sim: TaskSimulator, n: int, opts: ItemOptions, train: bool, full_conversations: bool = False
                   ) -> tuple[list[DialogItem], list[str], list[Conversation]]:
    """``n`` items (one per conversation, at a random eligible bot turn), their gold ids, and the conversations.

    With ``full_conversations`` every bot turn of ``n`` conversations becomes an item, numbered by ``turn`` and
    grouped by ``conversation_id`` (for per-dialog accuracy).
    """
    rng = sim.rng
    table = opts.count_table(sim.task)
    first = FIRST_ITEM_TURN[sim.task]
    items: list[DialogItem] = []
    golds: list[str] = []
    convs: list[Conversation] = []
    p = opts.context_distractors
    for _ in range(n):
        conv = sim.conversation()
        convs.append(conv)
        if full_conversations:
            cid = fast_uuid4(rng)
            for t, pos in enumerate(conv.bots, 1):
                it = make_item(sim, conv, pos, table, p, train, cid, t)
                items.append(it)
                golds.append(next(c.candidate_id for c in it.candidates if c.utterance == conv.utts[pos]))
        else:
            bots = conv.bots
            pos = bots[first + int(rng.random() * (len(bots) - first))]
            it = make_item(sim, conv, pos, table, p, train)
            items.append(it)
            golds.append(next(c.candidate_id for c in it.candidates if c.utterance == conv.utts[pos]))
    return items, golds, convs
