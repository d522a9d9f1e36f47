"""ParlAI's answer normalisation and the token F1 built on it (ConvAI2's ``f1``, ParlAI's ``f1`` metric).

``normalize_answer(s)``: lower-case; every ASCII punctuation character (Python's ``string.punctuation``, ``_``
and ``'`` included) becomes a space; the words ``a``, ``an`` and ``the`` become a space; runs of white space
become one space, and the ends are stripped. ParlAI compares ranked candidates with labels, and computes F1,
after this normalisation (``parlai/core/metrics.py``, ``normalize_answer``).

``token_f1(guess, answers)``: with G the normalised guess's tokens and A an answer's (split on white space),
common = the size of the multiset intersection of G and A; F1 = 2PR / (P + R) with P = common / |G| and
R = common / |A|, 0 when common is 0 (so an empty guess scores 0); the score is the best over the answers.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence

import numpy as np

_PUNCTUATION = str.maketrans({c: " " for c in string.punctuation})
_ASCII_PUNCTUATION = bytes.maketrans(string.punctuation.encode(), b" " * len(string.punctuation))
_ARTICLES = re.compile(r"\b(?:a|an|the)\b")
_ARTICLE_WORDS = frozenset(("a", "an", "the"))


def normalize_answer(s: str) -> str:
    """Lower-case, ASCII punctuation and the articles a/an/the to spaces, white space collapsed (ParlAI's
    ``normalize_answer``, SQuAD's answer normalisation with punctuation replaced by a space)."""
    s = s.lower()
    s = s.encode("ascii").translate(_ASCII_PUNCTUATION).decode("ascii") if s.isascii() else s.translate(_PUNCTUATION)
    words = s.split()
    if all(map(str.isalnum, words)):  # words of regex word characters only: \b is between words, so drop them whole
        return " ".join([w for w in words if w not in _ARTICLE_WORDS])
    return " ".join(_ARTICLES.sub(" ", s).split())


def token_f1(guess: str, answers: Sequence[str]) -> float:
    """Best token F1 of ``guess`` against any of ``answers``, both normalised (ParlAI's ``f1``): max over answers A
    of 2PR / (P + R), P = |G ∩ A| / |G|, R = |G ∩ A| / |A| over token multisets, 0 when nothing is shared."""
    return counts_f1(Counter(normalize_answer(guess).split()), [Counter(normalize_answer(a).split()) for a in answers])


def counts_f1(g: Counter, answers: Sequence[Counter]) -> float:
    """:func:`token_f1` of token counts already normalised (a guess compared with many answers, or the reverse)."""
    best = 0.0
    for t in answers:
        common = sum(min(g[w], t[w]) for w in g.keys() & t.keys())  # the multiset intersection, without a Counter
        if common:
            p, r = common / sum(g.values()), common / sum(t.values())
            best = max(best, 2 * p * r / (p + r))
    return best


def f1_scores(guesses: Sequence[str], answers: Sequence[Sequence[str]]) -> np.ndarray:
    """Per-item :func:`token_f1` (a float array in item order)."""
    return np.fromiter((token_f1(g, a) for g, a in zip(guesses, answers, strict=True)), np.float64, len(guesses))
