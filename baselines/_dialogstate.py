"""Dialog-state tracking and policy for the rule-based baseline (bAbI dialog tasks 1-5 and DSTC6 Track 1).

The bot of these datasets is a deterministic program: its next utterance is a function of the dialog state (slots
filled so far, the last API call, the options proposed and rejected, the restaurant booked, a pending question).
This module rebuilds that state from a flat utterance list and predicts the bot's next *act*; ``dialeval.baselines.rules``
turns the act into text and matches it against the candidates.

Why it is structured this way:

* Speakers are not tagged. KB fact lines (``<name> r_<attr> <value>``) are not turns, so parity is computed on the
  non-fact lines only: the first non-fact line is the user, then user and bot alternate.
* Slot values are never hard-coded from one test set. A value's slot type comes from (in order) the vocabulary
  learned by ``fit`` and the documented kb1/kb2 value lists, the KB facts of the dialog (``r_cuisine thai``), the
  API calls in the context and among the candidates (position in ``api_call`` gives the type) and finally typed
  surface patterns (``with X food``, ``in X``) for a word never seen anywhere (an out-of-vocabulary KB).
* DSTC6 users hesitate and change their minds. An utterance is first tested for hesitation cues (the bot answers
  ``whenever you're ready`` and keeps waiting); otherwise every slot mentioned is resolved among its mentions by
  cue words around each mention ("X is out of the way" loses, "my friend insists on Y" wins), the later mention
  winning a tie, which is how a correction reads.
* Bot turns that do not move the dialog on (``whenever you're ready``, ``i am sorry, i don't have an answer ...``)
  are transparent: the mode is the one of the last substantive bot act.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

SLOTS = ("cuisine", "location", "number", "price", "atmosphere", "restrictions")
"""Slots in API-call order (bAbI uses the first four, DSTC6 five, DSTC6 tst3/tst4 all six)."""

ASK_ORDER = ("atmosphere", "cuisine", "location", "number", "price", "restrictions")
"""Order in which the bot asks for missing slots (bAbI has no atmosphere, so its order is cuisine..price)."""

BUILTIN_VALUES: dict[str, tuple[str, ...]] = {
    # kb1 and kb2 of DSTC6 (reference formats.md §1); bAbI's two KBs use the same ten cuisines and locations.
    "cuisine": (
        "british",
        "french",
        "indian",
        "italian",
        "spanish",
        "cantonese",
        "japanese",
        "korean",
        "thai",
        "vietnamese",
    ),
    "location": ("bombay", "london", "madrid", "paris", "rome", "bangkok", "beijing", "hanoi", "seoul", "tokyo"),
    "number": ("two", "four", "six", "eight"),
    "price": ("cheap", "moderate", "expensive"),
    "atmosphere": ("business", "casual", "romantic"),
    "restrictions": ("glutenfree", "vegan", "vegetarian"),
}
"""Documented value lists. More values are learned in ``fit`` and read from each dialog's facts and API calls."""

NUMBER_WORDS = ("two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")
"""English number words are party sizes whatever the KB (``one`` is excluded: "one moment", "the new one")."""

# Bot utterances, by act. The first wording is the DSTC6 one; bAbI's own wording (typos kept) follows.
BOT_TEXTS: dict[str, tuple[str, ...]] = {
    "greet": ("hello what can i help you with today",),
    "on_it": ("i'm on it",),
    "ask_atmosphere": ("are you looking for a specific atmosphere",),
    "ask_cuisine": ("any preference on a type of cuisine",),
    "ask_location": ("where should it be",),
    "ask_number": ("how many people would be in your party",),
    "ask_price": ("which price range are you looking for", "which price range are looking for"),
    "ask_restrictions": ("do you have any dietary restrictions",),
    "searching": ("ok let me look into some options for you",),
    "update_more": ("sure is there anything else to update",),
    "propose": ("what do you think of this option: {name}",),
    "another": ("sure let me find another option for you", "sure let me find an other option for you"),
    "book": ("great let me do the reservation",),
    "info": ("here it is {value}",),
    "wait": ("whenever you're ready",),
    "sorry": ("i am sorry, i don't have an answer to that question",),
    "repeat": ("the option was {name}",),
    "help_more": ("is there anything i can help you with",),
    "welcome": ("you're welcome",),
}

FACT_RE = re.compile(r"^(\S+) [rR]_(\w+) (\S+)$")
_TOKEN_RE = re.compile(r"[a-z0-9_'\-]+")


def is_fact(utterance: str) -> bool:
    """A KB fact line (``name r_attr value``), which is not a turn."""
    return FACT_RE.match(utterance) is not None


@lru_cache(maxsize=1 << 16)
def tokens(text: str) -> tuple[str, ...]:
    """Lower-case word tokens; apostrophes kept (``let's``), punctuation dropped; ``gluten free`` joined."""
    toks = _TOKEN_RE.findall(text.lower())
    out: list[str] = []
    i = 0
    while i < len(toks):
        t = toks[i]
        if t == "gluten" and i + 1 < len(toks) and toks[i + 1] == "free":
            out.append("glutenfree")
            i += 2
            continue
        if t == "gluten-free":
            t = "glutenfree"
        out.append(t)
        i += 1
    return tuple(out)


# ---------------------------------------------------------------------------------------------------------------
# Bot-utterance recognition (the context's bot turns and, for the dialect, the candidates)

_BOT_PATTERNS: list[tuple[str, re.Pattern]] = []
for _act, _texts in BOT_TEXTS.items():
    for _t in _texts:
        _rx = (
            re.escape(_t)
            .replace(re.escape("{name}"), r"(?P<name>\S+)")
            .replace(re.escape("{value}"), r"(?P<value>\S+)")
        )
        _BOT_PATTERNS.append((_act, re.compile("^" + _rx + "$")))
_BOT_EXACT = {t: a for a, ts in BOT_TEXTS.items() for t in ts if "{" not in t}


@lru_cache(maxsize=1 << 16)
def bot_act(text: str) -> tuple[str, str | None]:
    """(act, argument) of a bot utterance; ``("api_call", args)`` for API calls, ``("other", None)`` if unknown."""
    t = text.strip().lower()
    if t.startswith("api_call"):
        return "api_call", t[len("api_call") :].strip()
    a = _BOT_EXACT.get(t)
    if a is not None:
        return a, None
    for act, rx in _BOT_PATTERNS:
        m = rx.match(t)
        if m:
            return act, (m.groupdict().get("name") or m.groupdict().get("value"))
    if ("dietary" in t or "restriction" in t) and not is_fact(t):
        return "ask_restrictions", None
    return "other", None


# ---------------------------------------------------------------------------------------------------------------
# User-utterance understanding

HESITATION_CUES = (
    "let me think", "let's see", "not sure", "more time", "let me check", "would work", "i always forget",
    "something else entirely", "not ideal", "could perhaps", "aren't bad", "due for a change", "not always",
    "so many other options", "like variety", "always go there", "hard on the wallet", "more reasonable",
    "change sometimes", "nice last time", "not very fond", "leaning towards", "if she wants", "if we need",
    "asking my friend if", "perhaps.", "torn between", "hesitating", "need a moment", "give me a second",
    "give me a bit", "give me a minute", "checking with", "wondering", "whether", "maybe", "perhaps",
    "double check", "may want to change", "need to change something", "a good idea",
)
"""Phrases of non-committal user turns (the bot answers ``whenever you're ready`` and keeps waiting)."""

_HESITATION_RE = re.compile(
    r"\blet me (?:think|check|see|ask|double check|consult)\b"
    r"|\b(?:asking|ask|checking with|check with) (?:my friend|the others|her|them) (?:if|whether|about)\b"
    r"|\bif (?:we need|she wants|she would|she needs|my friend wants|they want)\b"
)
"""The same, as patterns: the user is still checking ("let me ask my friend if ...")."""

_NEG_AFTER = (
    "is out of the way",
    "will be too complicated",
    "is very tempting",
    "is tempting",
    "for another day",
    "price range for another day",
    "for next time",
    "last time",
    "is nice on the stomach",
)
_NEG_BEFORE = (
    "doesn't like",
    "don't like",
    "not like",
    "keep",
    "had",
    "thinking",
    "fond of",
    "got",
    "instead of",
    "not",
    "no",
)
_NEG_AFTER += ("was my first idea", "is a bit too far", "is too far", "last week", "does not suit", "doesn't suit",
               "is not", "isn't", "does not work", "doesn't work", "won't work", "is no good")
_NEG_BEFORE += ("out of", "about to say", "because", "since", "rather than")
_POS_BEFORE = (
    "insists on",
    "prefers",
    "wants",
    "wants a",
    "wants to do",
    "stick to",
    "let's do",
    "go with",
    "let's try",
    "one in",
    "prefer",
    "rather",
)

_TYPED_PATTERNS: tuple[tuple[str, re.Pattern], ...] = (
    ("cuisine", re.compile(r"\bwith ([a-z]+) (?:food|cuisine)\b")),
    ("cuisine", re.compile(r"\b([a-z]+) (?:food|cuisine)\b")),
    ("price", re.compile(r"\bin a ([a-z]+) price range\b")),
    ("price", re.compile(r"\b([a-z]+) price range\b")),
    ("price", re.compile(r"\blooking for a ([a-z]+) restaurant\b")),
    ("atmosphere", re.compile(r"\bwith a ([a-z]+) atmosphere\b")),
    ("atmosphere", re.compile(r"\b([a-z]+) atmosphere\b")),
    ("restrictions", re.compile(r"\b([a-z]+) (?:diet|dietary)\b")),
    ("location", re.compile(r"\bin ([a-z]+)(?: please)?$")),
    ("location", re.compile(r"\bin ([a-z]+) (?:for|with|in)\b")),
)
"""Surface patterns typing a word never seen in any vocabulary (an unseen KB's entity)."""

_STOP = frozenset(
    "a an the this that it my your our their some any another other one more less very much what which who".split()
    + "please food cuisine price range atmosphere people table restaurant i you we me be do go".split()
    + "in at on for with of to from by about into somewhere located serving place".split()
)


@dataclass
class Vocabulary:
    """value -> slot. Built from the documented lists, ``fit`` and each dialog's facts and API calls."""

    slot_of: dict[str, str] = field(default_factory=dict)

    @classmethod
    def builtin(cls) -> Vocabulary:
        v = cls()
        for slot, values in BUILTIN_VALUES.items():
            for x in values:
                v.slot_of[x] = slot
        return v

    def copy(self) -> Vocabulary:
        return Vocabulary(dict(self.slot_of))

    def add(self, value: str, slot: str) -> None:
        if value and value not in _STOP:
            self.slot_of.setdefault(value, slot)

    def add_api_call(self, args: str, slots: tuple[str, ...] | None = None) -> None:
        """Type the words of an API call by position (cuisine location number price atmosphere restrictions)."""
        for slot, value in zip(slots or SLOTS, args.split()):
            self.add(value, slot)


@lru_cache(maxsize=1 << 16)
def _typed_words(low: str) -> tuple[tuple[int, str, str], ...]:
    """(token index, slot, word) for every word a surface pattern types (``with X food``), vocabulary aside."""
    out = []
    for slot, rx in _TYPED_PATTERNS:
        for m in rx.finditer(low):
            w = m.group(1)
            if w not in _STOP:
                out.append((len(low[: m.start(1)].split()), slot, w))
    return tuple(out)


def find_mentions(toks: list[str], vocab: Vocabulary, text: str) -> list[tuple[int, str, str]]:
    """(token index, slot, value) for every slot value in the utterance; unseen words typed by pattern."""
    out = []
    slot_of = vocab.slot_of
    for i, t in enumerate(toks):
        s = slot_of.get(t)
        if s is not None:
            out.append((i, s, t))
    seen = {i for i, _, _ in out}
    for idx, slot, w in _typed_words(" ".join(toks)):
        if w in slot_of or idx in seen:
            continue
        seen.add(idx)
        out.append((idx, slot, w))
    for i, t in enumerate(toks):
        if t in NUMBER_WORDS and i not in seen and t not in slot_of:
            out.append((i, "number", t))
    out.sort()
    return out


def _ends_with(words: list[str], cues: tuple[str, ...]) -> bool:
    s = " ".join(words)
    return any(s == c or s.endswith(" " + c) for c in cues)


def _starts_with(words: list[str], cues: tuple[str, ...]) -> bool:
    s = " ".join(words)
    return any(s == c or s.startswith(c + " ") for c in cues)


def resolve_values(toks: list[str], mentions: list[tuple[int, str, str]]) -> dict[str, str]:
    """The value the user settles on per slot, when a slot is mentioned more than once.

    Each mention scores from the words around it: rejected (-2) when followed by "is out of the way" / "for
    another day" or preceded by "doesn't like" / "keep" / "had"; chosen (+1) when preceded by "insists on" /
    "let's try" / "stick to"; -1 when a "but" separates it from a later mention of the same slot ("i want X
    but my friend insists on Y"). Best score wins; a tie goes to the later mention (a correction).
    """
    by_slot: dict[str, list[tuple[int, str]]] = {}
    for i, s, v in mentions:
        by_slot.setdefault(s, []).append((i, v))
    out: dict[str, str] = {}
    for slot, ms in by_slot.items():
        if len({v for _, v in ms}) == 1:
            out[slot] = ms[-1][1]
            continue
        best = None
        for k, (i, v) in enumerate(ms):
            score = 0
            before = toks[max(0, i - 3) : i]
            after = toks[i + 1 : i + 6]
            if _starts_with(after, _NEG_AFTER) or _starts_with(after[1:], ("for another day", "for next time")):
                score -= 2
            if any(_ends_with(before[j:], _NEG_BEFORE) for j in range(len(before))):
                score -= 2
            elif any(_ends_with(before[j:], _POS_BEFORE) for j in range(len(before))):
                score += 1
            later = [j for j, _ in ms[k + 1 :]]
            if later and "but" in toks[i + 1 : later[0]]:
                score -= 1
            if best is None or score >= best[0]:
                best = (score, v)
        out[slot] = best[1]
    return out


@lru_cache(maxsize=1 << 16)
def is_hesitation(low: str) -> bool:
    return any(c in low for c in HESITATION_CUES) or _HESITATION_RE.search(low) is not None


# ---------------------------------------------------------------------------------------------------------------
# State


@dataclass
class State:
    """What the bot knows after the context (see the module docstring)."""

    slots: dict[str, str] = field(default_factory=dict)
    asked: str | None = None
    mode: str = "start"  # start, request, filling, searching, post_api, update, options, booked, closing, end
    api_calls: list[str] = field(default_factory=list)
    facts: dict[str, dict[str, str]] = field(default_factory=dict)  # every restaurant seen, attr -> value
    order: list[str] = field(default_factory=list)  # restaurants in first-seen order
    block: list[str] = field(default_factory=list)  # restaurants of the latest result block
    facts_before_dialog: bool = False  # task 3/4 layout: the KB facts precede the greeting
    facts_after_api: bool = False  # the latest API call has results in the context
    proposals: list[str] = field(default_factory=list)
    repeated: str | None = None
    booked: str | None = None
    pending_info: str | None = None  # "phone" / "address" the user is checking with a friend
    last_bot: str | None = None
    last_bot_act: str = "none"
    last_substantive_act: str = "none"  # last bot act other than wait / sorry
    last_user_toks: list[str] = field(default_factory=list)


def restaurant_names(utterances: list[str]) -> set[str]:
    return {m.group(1) for u in utterances if (m := FACT_RE.match(u))}


def _is_thanks(toks: list[str]) -> bool:
    return any(t in ("thank", "thanks", "rock", "awesome") for t in toks)


class Tracker:
    """Rebuilds the :class:`State` of one dialog prefix and predicts the next bot act."""

    def __init__(self, vocab: Vocabulary, required: tuple[str, ...]):
        self.vocab = vocab
        self.required = required

    # -- user side --------------------------------------------------------------------------------------------
    def understand(self, text: str) -> tuple[str, dict[str, str], list[str]]:
        """(intent, slot values, tokens) of a user utterance, independent of the dialog state."""
        low = text.strip().lower()
        toks = tokens(low)
        if low in ("<silence>", ""):
            return "silence", {}, toks
        if is_hesitation(low):
            return "hesitate", {}, toks
        mentions = find_mentions(toks, self.vocab, low)
        values = resolve_values(toks, mentions)
        return "inform", values, toks

    # -- whole dialog ------------------------------------------------------------------------------------------
    def track(self, utterances: list[str]) -> tuple[State, str, dict[str, str], list[str], str]:
        """Replay the context; returns (state, last user intent, its values, its tokens, its raw text)."""
        st = State()
        speaker_user = True
        seen_turn = False
        last = ("silence", {}, [], "")
        for u in utterances:
            m = FACT_RE.match(u)
            if m:
                name, attr, value = m.group(1), m.group(2).lower(), m.group(3)
                if name not in st.facts:
                    st.facts[name] = {}
                    st.order.append(name)
                    if not seen_turn:
                        st.facts_before_dialog = True
                if name not in st.block:
                    st.block.append(name)
                st.facts[name][attr] = value
                if attr in SLOTS:
                    self.vocab.add(value, attr)
                if st.last_bot_act == "api_call":
                    st.facts_after_api = True
                continue
            seen_turn = True
            if speaker_user:
                intent, values, toks = self.understand(u)
                self._user(st, intent, values, toks, u)
                st.last_user_toks = toks
                last = (intent, values, toks, u)
            else:
                self._bot(st, u)
            speaker_user = not speaker_user
        return st, last[0], last[1], last[2], last[3]

    def _user(self, st: State, intent: str, values: dict[str, str], toks: list[str], text: str) -> None:
        low = " ".join(toks)
        if intent == "hesitate":
            if "phone" in toks:
                st.pending_info = "phone"
            elif "address" in toks:
                st.pending_info = "address"
            return
        if intent != "inform":
            return
        # Booking by name (task 4): remember the restaurant.
        for t in toks:
            if t in st.facts and ("table" in toks or "reservation" in toks or "book" in toks):
                st.booked = t
        if st.mode in ("options", "booked", "closing") and not values:
            return
        if values:
            st.slots.update(values)
        elif st.mode == "filling" and st.asked and st.asked not in st.slots and low not in ("no", "yes"):
            # An answer to the question whose value we cannot type (unseen word): the slot is filled all the same.
            st.slots[st.asked] = "?"

    def _bot(self, st: State, text: str) -> None:
        act, arg = bot_act(text)
        st.last_bot = text
        st.last_bot_act = act
        if act in ("wait", "sorry"):
            return
        previous, st.last_substantive_act = st.last_substantive_act, act
        if act == "greet":
            st.mode = "request"
        elif act == "on_it":
            st.mode = "filling"
        elif act.startswith("ask_"):
            st.mode = "filling"
            st.asked = act[4:]
        elif act == "searching":
            st.mode = "searching"
        elif act == "api_call":
            st.mode = "post_api"
            st.api_calls.append(arg or "")
            st.facts_after_api = False
            st.block = []
            # The call is authoritative for the slots (keeps the state right even if a user turn was misread).
            for slot, value in zip(SLOTS, (arg or "").split()):
                if value != "?":
                    st.slots[slot] = value
                    self.vocab.add(value, slot)
        elif act == "update_more":
            st.mode = "update"
        elif act == "propose":
            st.mode = "options"
            st.proposals.append(arg)
        elif act == "another":
            st.mode = "options"
        elif act == "repeat":
            st.mode = "options"
            st.repeated = arg
        elif act == "book":
            st.mode = "booked"
            if previous in ("propose", "repeat", "another"):
                st.booked = self._accepted(st, previous, st.last_user_toks)
        elif act == "info":
            st.mode = "booked"
            st.pending_info = None
        elif act == "help_more":
            st.mode = "closing"
        elif act == "welcome":
            st.mode = "end"

    # -- policy -------------------------------------------------------------------------------------------------
    def next_act(self, utterances: list[str]) -> tuple[str, dict]:
        """The bot's next act and its arguments, e.g. ``("ask_price", {})`` or ``("propose", {"name": ...})``."""
        st, intent, values, toks, text = self.track(utterances)
        low = " ".join(toks)
        mode = st.mode
        if st.last_bot is None:
            return "greet", {}
        if intent == "hesitate":
            return "wait", {}
        if mode == "request":
            named = [t for t in toks if t in st.facts]
            if named or re.search(r"\b(?:at|table at) \S+_\S+", low):
                st.booked = named[0] if named else toks[-1]
                return "book", {}
            return "on_it", {}
        if mode == "filling":
            return self._next_question_or_search(st)
        if mode == "searching":
            if intent == "silence":
                if not st.api_calls and st.facts_before_dialog:
                    return self._propose(st)
                return "api_call", {"args": self._api_args(st)}
            return self._update_reply(st, intent, values, toks)
        if mode in ("post_api", "update"):
            if intent == "silence" and mode == "post_api":
                if st.facts_after_api or st.block:
                    return self._propose(st)
                return "api_call", {"args": self._api_args(st)}
            return self._update_reply(st, intent, values, toks)
        if mode == "options":
            return self._option_reply(st, intent, toks, low)
        if mode in ("booked", "closing", "end"):
            return self._after_booking(st, intent, toks, low)
        return "sorry", {}

    def _next_question_or_search(self, st: State) -> tuple[str, dict]:
        for slot in ASK_ORDER:
            if slot in self.required and slot not in st.slots:
                return "ask_" + slot, {}
        return "searching", {}

    def _api_args(self, st: State) -> list[str]:
        return [st.slots.get(s, "?") for s in SLOTS if s in self.required]

    def _update_reply(self, st: State, intent: str, values: dict, toks: list[str]) -> tuple[str, dict]:
        if intent == "silence":
            return "api_call", {"args": self._api_args(st)}
        if values:
            return "update_more", {}
        if st.mode == "post_api" and _is_thanks(toks):
            # bAbI task 2 ends with the (updated) call and a thank-you.
            return "welcome", {}
        low = " ".join(toks)
        if toks and toks[0] in ("no", "nope", "nothing") or low in ("that's it", "that is all", "that's all"):
            return "searching", {}
        # No new value and not "no more": the user is still making up their mind ("we may want to change something").
        return "wait", {}

    def _ranked(self, st: State) -> list[str]:
        """Restaurants of the latest result block, best rating first (first-seen order breaks a tie)."""
        names = st.block or st.order
        pos = {n: i for i, n in enumerate(names)}

        def rating(n: str) -> float:
            try:
                return float(st.facts[n].get("rating", "0"))
            except ValueError:
                return 0.0

        return sorted(names, key=lambda n: (-rating(n), pos[n]))

    def _propose(self, st: State) -> tuple[str, dict]:
        done = set(st.proposals)
        for n in self._ranked(st):
            if n not in done:
                return "propose", {"name": n}
        ranked = self._ranked(st)
        return "propose", {"name": ranked[-1] if ranked else None}

    def _option_reply(self, st: State, intent: str, toks: list[str], low: str) -> tuple[str, dict]:
        if intent == "silence":
            return self._propose(st)
        which = self._asks_earlier_option(toks, low)
        if which is not None:
            if which == "first" or len(st.proposals) < 2:
                name = st.proposals[0] if st.proposals else None
            else:
                name = st.proposals[-2]
            return "repeat", {"name": name}
        if self._is_reject(toks, low):
            return "another", {}
        if self._is_accept(toks, low):
            st.booked = self._accepted(st, st.last_substantive_act, toks)
            return "book", {}
        return "sorry", {}

    @staticmethod
    def _asks_earlier_option(toks: list[str], low: str) -> str | None:
        """"first" / "previous" when the user asks to hear an earlier proposal again, else None."""
        asks = ("repeat" in toks or "remind" in toks or "what was" in low or "which was" in low
                or "which one did you" in low or "again" in toks)
        earlier = ({"first", "previous", "before", "earlier", "suggested", "proposed", "option", "one"} & set(toks))
        if not (asks and earlier):
            return None
        return "first" if "first" in toks else "previous"

    @staticmethod
    def _accepted(st: State, previous_act: str, toks: list[str]) -> str | None:
        """The restaurant the user accepts: the repeated one when they point back at it right after "the option
        was X" ("that one", "that option", "that previous one"), else the current proposal ("this one", "the new
        one", "the last one", or any plain yes)."""
        low = " ".join(toks)
        back = any(c in low for c in ("that one", "that option", "that previous", "previous one", "first one",
                                      "the one before"))
        if previous_act == "repeat" and st.repeated and back and not ({"new", "last", "this"} & set(toks)):
            return st.repeated
        return st.proposals[-1] if st.proposals else None

    @staticmethod
    def _is_reject(toks: list[str], low: str) -> bool:
        return bool(
            (toks and toks[0] in ("no", "nope"))
            or "hmm no" in low
            or "don't like" in low
            or "do not like" in low
            or "does not work" in low
            or "doesn't work" in low
            or "something else" in low
            or "anything else" in low
            or "no good" in low
            or "not this" in low
            or "not what" in low
            or "not for us" in low
            or "next one" in low
            or "another" in toks
        )

    @staticmethod
    def _is_accept(toks: list[str], low: str) -> bool:
        cues = ("like it", "looks great", "perfect", "let's do it", "i love", "like that", "new one", "last one",
                "last option", "that one", "previous one", "sounds good", "sounds better", "sounds great", "yes",
                "great", "book it", "i want that", "go with", "why not", "works for me", "take this", "take it",
                "this one", "fine", "good to me", "let's take", "we'll take", "we will take")
        return any(c in low for c in cues)

    def _after_booking(self, st: State, intent: str, toks: list[str], low: str) -> tuple[str, dict]:
        if intent == "silence":
            return "sorry", {}
        want = None
        if "phone" in toks:
            want = "phone"
        elif "address" in toks:
            want = "address"
        elif st.pending_info and st.last_bot_act == "wait" and not _is_bye(toks, low):
            # "yes we need it, what is it please": the answer to the pending phone/address question.
            want = st.pending_info
        if want:
            name = st.booked or (st.proposals[-1] if st.proposals else None)
            if name is None and len(st.order) == 1:
                name = st.order[0]
            value = st.facts.get(name or "", {}).get(want) or (f"{name}_{want}" if name else None)
            return "info", {"value": value, "kind": want}
        if _is_bye(toks, low):
            return "welcome", {}
        if _is_thanks(toks) or "best" in toks or "great" in toks:
            return "help_more", {}
        if st.mode == "closing":
            return "welcome", {}
        return "sorry", {}


def _is_bye(toks: list[str], low: str) -> bool:
    """Closing the dialog ("no thanks", "nothing else, bye"); the bot answers ``you're welcome``."""
    return bool(toks) and (toks[0] in ("no", "nope", "nothing") or "bye" in toks or "goodbye" in toks)
