"""Rule-based baseline: an explicit dialog-state tracker and policy (Bordes & Weston 2017, Table 2 "rule-based").

The bot of bAbI tasks 1-5 and of DSTC6 Track 1 is a deterministic program, so a hand-written copy of its policy
solves the tasks: :mod:`dialeval.baselines._dialogstate` replays the context (slot filling in the bot's question order,
hesitations, updates, API call, options by rating, booking, phone/address, courtesy turns) and predicts the bot's
next act. This module renders the act as text in the dataset's own wording and ranks the candidates:

1. a candidate whose text equals the predicted utterance (rank 1; the gold text is never duplicated, so an exact
   match is unambiguous when the prediction is right);
2. then every other candidate by similarity to the prediction, so ranks 2..n are meaningful for P@2/P@5:
   API calls by the number of slots in the right position, other texts by token Jaccard; candidates that copy a
   user turn or a fact line of the context (the datasets' adversarial distractors) are pushed down;
3. ties by candidate id (string order), never by candidate position: the order of the candidate list carries no
   information and must not leak into the ranking.

Nothing is read from the answer key or from candidate order. Entities come from the dialog (KB facts, API calls,
the candidates' API calls) plus the documented kb1/kb2 value lists and whatever ``fit`` sees in training data, so
the out-of-vocabulary KB of DSTC6 tst2/tst4 and the extra dietary-restrictions slot of tst3/tst4 need no change.

bAbI ranking is over the whole 4,212-line candidate file: exact matches come from a text -> ids index and the
fallback order is one sparse product per distinct predicted text (cached), not a Python loop per candidate.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from dialeval.baselines import _dstc2
from dialeval.baselines._dialogstate import (
    BOT_TEXTS,
    FACT_RE,
    SLOTS,
    Tracker,
    Vocabulary,
    bot_act,
    is_fact,
    tokens,
)
from dialeval.baselines.base import Baseline
from dialeval.formats.dstc6 import Candidate, DialogItem

LARGE_CANDIDATE_SET = 200
"""Candidate lists at least this long (bAbI's full file) get a cached index instead of per-item scoring."""

_ACT_KEYWORDS: dict[str, tuple[str, ...]] = {
    "ask_restrictions": ("dietary", "restriction", "restrictions", "diet"),
    "ask_atmosphere": ("atmosphere",),
    "ask_cuisine": ("cuisine",),
    "ask_price": ("price",),
    "ask_number": ("party", "people"),
    "ask_location": ("where",),
}
"""Words that identify an act's wording when the exact text is not among the candidates (an unseen template)."""


@dataclass
class _CandidateIndex:
    """What the ranking needs from one candidate list; built once per list for bAbI-size lists."""

    ids: list[str]
    texts: list[str]
    by_text: dict[str, list[int]]
    api_rows: list[tuple[int, list[str]]]
    arities: set[int]
    mentions_restrictions: bool
    order_by_id: np.ndarray  # positions sorted by candidate id (the tie-break)
    api_vocab: dict[str, str] = field(default_factory=dict)  # values typed by their position in API calls
    dstc2_greeting: str | None = None  # bAbI task 6 (DSTC2) candidate set: its greeting text
    dstc2_vocab: dict[str, str] = field(default_factory=dict)
    matrix: sp.csr_matrix | None = None  # candidate x token incidence (large lists only)
    vocab: dict[str, int] = field(default_factory=dict)
    sizes: np.ndarray | None = None
    ranking_cache: OrderedDict = field(default_factory=OrderedDict)


def _build_index(cands: Sequence[Candidate], with_matrix: bool) -> _CandidateIndex:
    ids = [c.candidate_id for c in cands]
    texts = [c.utterance for c in cands]
    by_text: dict[str, list[int]] = {}
    api_rows = []
    arities = set()
    restr = False
    for i, t in enumerate(texts):
        by_text.setdefault(t, []).append(i)
        if t.startswith("api_call"):
            args = t.split()[1:]
            api_rows.append((i, args))
            arities.add(len(args))
        elif bot_act(t)[0] == "ask_restrictions":
            restr = True
    order_by_id = np.array(sorted(range(len(ids)), key=lambda i: ids[i]), dtype=np.int64)
    idx = _CandidateIndex(ids, texts, by_text, api_rows, arities, restr, order_by_id)
    api_vocab = Vocabulary()
    for _, args in api_rows:
        api_vocab.add_api_call(" ".join(args))
    idx.api_vocab = api_vocab.slot_of
    idx.dstc2_greeting = next((t for t in texts if _dstc2.GREETING_MARK in t.lower()), None)
    if idx.dstc2_greeting is not None:
        for _, args in api_rows:
            if len(args) == 3:
                for slot, value in zip(("cuisine", "location", "price"), args):
                    if not value.startswith("R_"):
                        idx.dstc2_vocab.setdefault(value, slot)
    if with_matrix:
        vocab: dict[str, int] = {}
        rows, cols = [], []
        sizes = np.zeros(len(texts), dtype=np.float64)
        for i, t in enumerate(texts):
            toks = set(t.lower().split())
            sizes[i] = len(toks)
            for w in toks:
                rows.append(i)
                cols.append(vocab.setdefault(w, len(vocab)))
        data = np.ones(len(rows), dtype=np.float64)
        idx.matrix = sp.csr_matrix((data, (rows, cols)), shape=(len(texts), max(1, len(vocab))))
        idx.vocab = vocab
        idx.sizes = sizes
    return idx


def _is_unknown_bot_text(t: str) -> bool:
    """Not a fact line, not an API call, and no known bot act's wording."""
    return not is_fact(t) and not t.startswith("api_call") and bot_act(t)[0] == "other"


def _jaccard(a: set[str], b: set[str]) -> float:
    if not a or not b:
        return 0.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)


def _api_similarity(pred: list[str], args: list[str]) -> float:
    """Share of slots in the right position (an API call with the wrong arity is penalised by the length gap)."""
    n = max(len(pred), len(args), 1)
    return sum(1 for x, y in zip(pred, args) if x == y) / n


@dataclass
class RuleBased(Baseline):
    """Hand-written dialog state tracker + policy for bAbI tasks 1-5 and DSTC6 Track 1 (tasks 1-5).

    ``restrictions``: whether the dietary-restrictions slot is required (DSTC6 tst3/tst4); ``None`` decides per
    item from the evidence (a 6-slot API call or the restrictions question in the context or the candidates, or
    a restriction value in a user turn).
    """

    name: str = "rule-based"
    restrictions: bool | None = None
    _fixed_restrictions: bool | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self._fixed_restrictions = self.restrictions  # the caller's choice wins over file names
    vocabulary: Vocabulary = field(default_factory=Vocabulary.builtin)
    default_arity: int | None = None
    learn_wording: bool = True
    wording: dict[str, str] = field(default_factory=dict)
    dstc2_vocabulary: dict[str, str] = field(default_factory=dict)
    _large: dict[int, tuple[Sequence[Candidate], _CandidateIndex]] = field(default_factory=dict, repr=False)

    # -- learning ---------------------------------------------------------------------------------------------------
    def prepare_file(self, dataset_name: str) -> None:
        """DSTC6 file names say whether dietary restrictions are required (``..._atmosphere_restrictions-...``).

        That matters when the restrictions question's wording is unknown (real tst3/tst4: no training file
        has it): without the flag, nothing in an item tells that a sixth slot is still missing.
        """
        if self._fixed_restrictions is None:
            self.restrictions = True if "restrictions" in dataset_name else None

    def fit(self, train: Sequence[DialogItem], dev: Sequence[DialogItem] | None = None) -> RuleBased:
        """Learn slot vocabularies (API-call positions, KB facts) and the usual API-call arity; no answer lookup."""
        arities: dict[int, int] = {}
        for it in list(train) + list(dev or []):
            texts = list(it.utterances) + ([it.answer.utterance] if it.answer is not None else [])
            if _dstc2.is_dstc2(texts[:3], ()):
                self._fit_dstc2(texts)
                continue
            for u in texts:
                m = FACT_RE.match(u)
                if m:
                    attr = m.group(2).lower()
                    if attr in SLOTS:
                        self.vocabulary.add(m.group(3), attr)
                elif u.startswith("api_call"):
                    args = u.split()[1:]
                    self.vocabulary.add_api_call(" ".join(args))
                    arities[len(args)] = arities.get(len(args), 0) + 1
        if arities:
            self.default_arity = max(arities, key=lambda k: (arities[k], k))
        if self.learn_wording:
            self._learn_wording(list(train))
        return self

    def _fit_dstc2(self, texts: list[str]) -> None:
        """Task 6 vocabulary (food, area, price) from facts and API calls; ``R_<slot>`` means "don't care"."""
        for u in texts:
            m = FACT_RE.match(u)
            if m and m.group(2) in ("cuisine", "location", "price"):
                self.dstc2_vocabulary.setdefault(m.group(3), m.group(2))
            elif u.startswith("api_call") and u != "api_call no result":
                for slot, value in zip(("cuisine", "location", "price"), u.split()[1:]):
                    if not value.startswith("R_"):
                        self.dstc2_vocabulary.setdefault(value, slot)

    def _learn_wording(self, train: list[DialogItem]) -> None:
        """Adopt the training data's wording for an act whose built-in text never matches it.

        Only entity-free acts (questions, courtesy turns) are learned, and only when one answer text outside the
        built-in wordings is the gold of at least 90 % of the training items where the act is predicted: a wording
        the policy already matches is never replaced. bAbI-size candidate lists are skipped (bAbI's wording is
        built in).
        """
        seen: dict[str, dict[str, int]] = {}
        for it in train:
            if it.answer is None or len(it.candidates) >= LARGE_CANDIDATE_SET:
                continue
            act, args, texts = self.predict(it)
            if act in ("api_call", "propose", "info", "repeat") or not texts:
                continue
            if it.answer.utterance in texts:
                seen.setdefault(act, {}).setdefault("", 0)
                seen[act][""] += 1
            else:
                seen.setdefault(act, {}).setdefault(it.answer.utterance, 0)
                seen[act][it.answer.utterance] += 1
        for act, counts in seen.items():
            text, n = max(counts.items(), key=lambda kv: (kv[1], kv[0]))
            if text and n >= 0.9 * sum(counts.values()) and n >= 5:
                self.wording[act] = text

    # -- prediction -------------------------------------------------------------------------------------------------
    def _index(self, cands: Sequence[Candidate]) -> _CandidateIndex:
        if len(cands) < LARGE_CANDIDATE_SET:
            return _build_index(cands, with_matrix=False)
        hit = self._large.get(id(cands))
        if hit is not None and hit[0] is cands:
            return hit[1]
        idx = _build_index(cands, with_matrix=True)
        if len(self._large) > 8:
            self._large.clear()
        self._large[id(cands)] = (cands, idx)
        return idx

    def _required(self, utterances: list[str], idx: _CandidateIndex, vocab: Vocabulary) -> tuple[str, ...]:
        arities = set(idx.arities)
        restr = idx.mentions_restrictions
        upper = False
        speaker_user = True
        for u in utterances:
            if is_fact(u):
                upper = upper or " R_" in u
                continue
            if speaker_user:
                upper = upper or u == "<SILENCE>"
                if any(vocab.slot_of.get(t) == "restrictions" for t in tokens(u)):
                    restr = True
            else:
                if u.startswith("api_call"):
                    arities.add(len(u.split()) - 1)
                elif bot_act(u)[0] == "ask_restrictions":
                    restr = True
            speaker_user = not speaker_user
        if self.restrictions is not None:
            restr = self.restrictions
        if restr or (arities and max(arities) >= 6):
            n = 6
        elif arities:
            n = max(arities)
        elif upper:
            n = 4
        else:
            n = self.default_arity or 5
        return SLOTS[: max(4, min(n, 6))]

    def predict(self, item: DialogItem, idx: _CandidateIndex | None = None) -> tuple[str, dict, list[str]]:
        """(act, arguments, candidate texts in preference order) for the bot's next utterance."""
        idx = idx or self._index(item.candidates)
        if idx.dstc2_greeting is not None or _dstc2.is_dstc2(item.utterances, ()):
            vocab2 = dict(self.dstc2_vocabulary)
            for k, v in idx.dstc2_vocab.items():
                vocab2.setdefault(k, v)
            return "dstc2", {}, _dstc2.next_texts(item.utterances, vocab2, idx.dstc2_greeting or "")
        vocab = Vocabulary({**idx.api_vocab, **self.vocabulary.slot_of})
        required = self._required(item.utterances, idx, vocab)
        act, args = Tracker(vocab, required).next_act(item.utterances)
        return act, args, self._texts(act, args)

    def _texts(self, act: str, args: dict) -> list[str]:
        if act == "api_call":
            return ["api_call " + " ".join(args["args"])]
        out = [self.wording[act]] if act in self.wording else []
        for t in BOT_TEXTS.get(act, ()):
            if "{name}" in t:
                t = t.replace("{name}", str(args.get("name")))
            if "{value}" in t:
                t = t.replace("{value}", str(args.get("value")))
            out.append(t)
        return out

    def rank(self, item: DialogItem) -> list[str]:
        idx = self._index(item.candidates)
        act, _, texts = self.predict(item, idx)
        if idx.matrix is not None:
            return self._rank_large(idx, act, texts)
        return self._rank_small(item, idx, act, texts)

    def _primary(self, idx: _CandidateIndex, texts: list[str]) -> str:
        for t in texts:
            if t in idx.by_text:
                return t
        return texts[0] if texts else ""

    def _rank_small(self, item: DialogItem, idx: _CandidateIndex, act: str, texts: list[str]) -> list[str]:
        primary = self._primary(idx, texts)
        ptoks = set(primary.lower().split())
        papi = primary.split()[1:] if primary.startswith("api_call") else None
        context = set(item.utterances)
        keywords = _ACT_KEYWORDS.get(act, ())
        # A question whose wording is not among the candidates is asked in an unseen template (e.g. the
        # restrictions question of real tst3/tst4). Distractors are copies of the context or other known bot
        # utterances, so a candidate that is neither is most likely that template.
        novel_wording = act.startswith("ask_") and primary not in idx.by_text
        scores = []
        for t in idx.texts:
            if t == primary:
                s = 10.0
            elif t in texts:
                s = 9.0
            else:
                if papi is not None and t.startswith("api_call"):
                    s = 1.0 + _api_similarity(papi, t.split()[1:])
                else:
                    s = _jaccard(ptoks, set(t.lower().split()))
                if keywords and any(k in t for k in keywords) and t not in context:
                    s += 1.0
                if novel_wording and t not in context and _is_unknown_bot_text(t):
                    s += 2.0
                if t in context and bot_act(t)[0] == "other":
                    s -= 0.5
            scores.append(s)
        order = sorted(range(len(idx.ids)), key=lambda i: (-scores[i], idx.ids[i]))
        return [idx.ids[i] for i in order]

    def _rank_large(self, idx: _CandidateIndex, act: str, texts: list[str]) -> list[str]:
        primary = self._primary(idx, texts)
        key = (primary, tuple(texts))
        cached = idx.ranking_cache.get(key)
        if cached is not None:
            idx.ranking_cache.move_to_end(key)
            return list(cached)
        ptoks = set(primary.lower().split())
        cols = [idx.vocab[w] for w in ptoks if w in idx.vocab]
        if cols:
            q = np.zeros(idx.matrix.shape[1])
            q[cols] = 1.0
            inter = idx.matrix @ q
            scores = inter / np.maximum(idx.sizes + len(ptoks) - inter, 1.0)
        else:
            scores = np.zeros(len(idx.ids))
        if primary.startswith("api_call"):
            papi = primary.split()[1:]
            for i, args in idx.api_rows:
                scores[i] = 1.0 + _api_similarity(papi, args)
        for rank_bonus, t in enumerate(reversed(texts)):
            for i in idx.by_text.get(t, ()):
                scores[i] = 9.0 + rank_bonus
        for i in idx.by_text.get(primary, ()):
            scores[i] = 20.0
        # Stable sort of the id-ordered positions by score: ties keep id order.
        by_id = idx.order_by_id
        order = by_id[np.argsort(-scores[by_id], kind="stable")]
        ranked = [idx.ids[i] for i in order]
        idx.ranking_cache[key] = ranked
        if len(idx.ranking_cache) > 2048:
            idx.ranking_cache.popitem(last=False)
        return list(ranked)

    def describe(self) -> dict:
        return {
            "name": self.name,
            "seed": self.seed,
            "restrictions": self.restrictions,
            "default_arity": self.default_arity,
            "vocabulary_size": len(self.vocabulary.slot_of),
        }
