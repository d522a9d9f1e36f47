"""Knowledge bases shaped like the DSTC6 ones (``extendedkb1.txt`` / ``extendedkb2.txt``).

The real KBs have a rigid structure that the simulator reproduces, because the tasks depend on it:

* 5 locations x 3 prices x 5 cuisines x 3 atmospheres = 225 groups of 24 restaurants; each group holds 8
  "units" of 3 restaurants that share a party size (drawn at random) and differ only by the dietary restriction
  (glutenfree, vegan, vegetarian). Hence 5,400 restaurants, and any 5-slot request matches a multiple of 3.
* Ratings are integers 1..72, each used exactly 75 times, and distinct inside a group: sorting the results of an
  API call by rating (task 3) never meets a tie, so the bot's next proposal is always unambiguous.
* Names are random word compounds (``[the_]adj_adj_noun_noun``); phone and address are the name plus
  ``_phone`` / ``_address``. Our word lists are our own; the final noun comes from a per-KB list, so the two KBs
  can never share a restaurant, phone or address (tst2/tst4 are out-of-vocabulary by construction).

A KB is a pure function of ``(name, kb_seed)``: the same KB is rebuilt for every dialog seed, as in DSTC6 where the
KB files were fixed and only dialogs varied.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

from dialeval.core.errors import UsageError
from dialeval.files.write import atomic_write_text

PRICES = ("cheap", "moderate", "expensive")
ATMOSPHERES = ("business", "casual", "romantic")
RESTRICTIONS = ("glutenfree", "vegan", "vegetarian")
NUMBERS = ("two", "four", "six", "eight")

KB_VALUES: dict[str, dict[str, tuple[str, ...]]] = {
    "kb1": {
        "location": ("bombay", "london", "madrid", "paris", "rome"),
        "cuisine": ("british", "french", "indian", "italian", "spanish"),
    },
    "kb2": {
        "location": ("bangkok", "beijing", "hanoi", "seoul", "tokyo"),
        "cuisine": ("cantonese", "japanese", "korean", "thai", "vietnamese"),
    },
}

KB_ATTRS = ("location", "price", "rating", "phone", "cuisine", "atmosphere", "restrictions", "number", "address")
"""Attribute order of every restaurant in the real KB files and in the dialogs' fact lines."""

RATING_MAX = 72
UNITS_PER_GROUP = 8
DEFAULT_KB_SEED = 6

# Our own word lists (not taken from the real KBs). Adjectives are shared; the last noun is per KB so that the
# restaurant names of kb1 and kb2 are disjoint by construction.
ADJECTIVES = (
    "amber ancient bold bright brisk calm cheerful clever cosy crimson curious daring dusty eager early faint "
    "fearless fresh friendly gentle giddy golden grand humble icy jolly keen kind lazy little lively lucky mellow "
    "merry misty modest noble odd pale patient plucky polite proud quick quiet rapid rosy royal rustic shiny shy "
    "silver sleepy smooth snowy sober spicy steady stormy sunny swift tender tidy tiny velvet vivid warm wild wise "
    "witty young zesty"
).split()
NOUNS = (
    "acorn anchor apple arrow badger barrel basket beacon bell berry bridge brook candle canyon castle cedar cloud "
    "clover comet compass cottage crane crown dawn desert dragon drum eagle ember falcon feather fern fiddle forest "
    "fountain garden glacier harbor hazel heron hill island ivy kettle lantern lark lemon lily maple meadow mill "
    "mirror moon needle oak orchard otter owl pebble pepper pine planet pond quill raven reef ribbon river robin "
    "saddle shell spoon spring star stone tulip valley violin willow"
).split()
LAST_NOUNS = {
    "kb1": "bistro cellar corner garden grill hearth kitchen larder oven pantry parlour table tavern terrace yard".split(),
    "kb2": "bowl chopstick dumpling hut lantern-house noodle pagoda pavilion rice steamer teahouse wok".split(),
}
LAST_NOUNS["kb2"] = [w.replace("-", "") for w in LAST_NOUNS["kb2"]]


@dataclass(slots=True)
class Restaurant:
    name: str
    location: str
    price: str
    rating: int
    cuisine: str
    atmosphere: str
    restrictions: str
    number: str
    facts: tuple[str, ...] = field(default=(), repr=False)

    @property
    def phone(self) -> str:
        return f"{self.name}_phone"

    @property
    def address(self) -> str:
        return f"{self.name}_address"

    def value(self, attr: str) -> str:
        if attr == "phone":
            return self.phone
        if attr == "address":
            return self.address
        if attr == "rating":
            return str(self.rating)
        return getattr(self, attr)

    def fact_lines(self) -> tuple[str, ...]:
        """The 9 dialog fact lines (``<name> r_<attr> <value>``), cached: they are reused by thousands of items."""
        if not self.facts:
            self.facts = tuple(f"{self.name} r_{a} {self.value(a)}" for a in KB_ATTRS)
        return self.facts


Combo = tuple[str, ...]
"""A request: (cuisine, location, number, price, atmosphere[, restrictions]) - the order of ``api_call``."""


@dataclass
class KnowledgeBase:
    """Restaurants plus the look-ups the tasks need (API-call results by request)."""

    name: str
    restaurants: list[Restaurant]
    by_name: dict[str, Restaurant] = field(init=False, repr=False)
    index: dict[Combo, list[Restaurant]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.by_name = {r.name: r for r in self.restaurants}
        self.index = {}
        for r in self.restaurants:
            base = (r.cuisine, r.location, r.number, r.price, r.atmosphere)
            self.index.setdefault(base, []).append(r)
            self.index.setdefault(base + (r.restrictions,), []).append(r)

    @property
    def values(self) -> dict[str, tuple[str, ...]]:
        """Slot -> possible values for this KB."""
        return slot_values(self.name)

    def matches(self, combo: Combo) -> list[Restaurant]:
        return self.index.get(tuple(combo), [])


def slot_values(kb: str) -> dict[str, tuple[str, ...]]:
    if kb not in KB_VALUES:
        raise UsageError(f"unknown knowledge base {kb!r} (expected kb1 or kb2)")
    v = KB_VALUES[kb]
    return {
        "cuisine": v["cuisine"],
        "location": v["location"],
        "number": NUMBERS,
        "price": PRICES,
        "atmosphere": ATMOSPHERES,
        "restrictions": RESTRICTIONS,
    }


def _names(kb: str, rng: random.Random, n: int) -> list[str]:
    last = LAST_NOUNS[kb]
    seen: set[str] = set()
    out: list[str] = []
    while len(out) < n:
        a1, a2 = rng.choice(ADJECTIVES), rng.choice(ADJECTIVES)
        if a1 == a2:
            continue
        parts = [a1, a2, rng.choice(NOUNS), rng.choice(last)]
        if rng.random() < 0.5:
            parts.insert(0, "the")
        name = "_".join(parts)
        if name not in seen:
            seen.add(name)
            out.append(name)
    return out


_KB_CACHE: dict[tuple[str, int], KnowledgeBase] = {}


def build_kb(kb: str, kb_seed: int = DEFAULT_KB_SEED) -> KnowledgeBase:
    """Build (and memoise) the KB ``kb1`` or ``kb2``; deterministic in ``kb_seed``."""
    key = (kb, kb_seed)
    if key in _KB_CACHE:
        return _KB_CACHE[key]
    values = slot_values(kb)
    rng = random.Random(f"dialeval-kb:{kb}:{kb_seed}")
    groups = [
        (loc, price, cui, atm)
        for loc in values["location"]
        for price in PRICES
        for cui in values["cuisine"]
        for atm in ATMOSPHERES
    ]
    # Three disjoint blocks of 24 ratings; each block serves 75 of the 225 groups, so every rating occurs 75 times.
    ratings = list(range(1, RATING_MAX + 1))
    rng.shuffle(ratings)
    per = UNITS_PER_GROUP * len(RESTRICTIONS)
    blocks = [ratings[i * per : (i + 1) * per] for i in range(RATING_MAX // per)]
    block_of = [i % len(blocks) for i in range(len(groups))]
    rng.shuffle(block_of)
    names = _names(kb, rng, len(groups) * per)
    restaurants: list[Restaurant] = []
    k = 0
    for g, (loc, price, cui, atm) in enumerate(groups):
        rs = list(blocks[block_of[g]])
        rng.shuffle(rs)
        j = 0
        for _unit in range(UNITS_PER_GROUP):
            number = rng.choice(NUMBERS)
            for restr in RESTRICTIONS:
                restaurants.append(Restaurant(names[k], loc, price, rs[j], cui, atm, restr, number))
                k += 1
                j += 1
    rng.shuffle(restaurants)
    kbo = KnowledgeBase(kb, restaurants)
    _KB_CACHE[key] = kbo
    return kbo


def kb_text(kb: KnowledgeBase) -> str:
    """The KB in the real file format: ``1 <name> R_<attr>\\t<value>``, 9 lines per restaurant."""
    lines = [f"1 {r.name} R_{a}\t{r.value(a)}" for r in kb.restaurants for a in KB_ATTRS]
    return "\n".join(lines) + "\n"


def write_kb(path: str | Path, kb: KnowledgeBase) -> None:
    atomic_write_text(path, kb_text(kb))


def read_kb(path: str | Path, name: str | None = None) -> KnowledgeBase:
    """Read a KB file (ours or the real ``extendedkb*.txt``); ``name`` defaults to the file's ``kbN`` suffix."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise UsageError(f"{path}: cannot read: {e.strerror or e}") from None
    attrs: dict[str, dict[str, str]] = {}
    for lineno, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        head, tab, value = raw.partition("\t")
        parts = head.split(" ")
        if not tab or len(parts) != 3 or not parts[2].startswith("R_"):
            raise UsageError(f"{path}:{lineno}: expected '1 <name> R_<attr>\\t<value>', got {raw[:60]!r}")
        attrs.setdefault(parts[1], {})[parts[2][2:]] = value
    rs = []
    for n, a in attrs.items():
        missing = [x for x in KB_ATTRS if x not in a]
        if missing:
            raise UsageError(f"{path}: restaurant {n} lacks {', '.join(missing)}")
        rs.append(
            Restaurant(n, a["location"], a["price"], int(a["rating"]), a["cuisine"], a["atmosphere"],
                       a["restrictions"], a["number"])
        )
    if name is None:
        stem = path.stem
        name = "kb2" if stem.endswith("2") else "kb1"
    return KnowledgeBase(name, rs)
