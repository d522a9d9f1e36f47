"""TF-IDF match (Bordes & Weston 2017, Table 2 "TF-IDF match").

Each candidate y is scored by the cosine between TF-IDF vectors of the input x and of y:

    w(t, d)   = tf(t, d) · idf(t)                          tf = raw count of token t in text d
    idf(t)    = ln((1 + N) / (1 + df(t))) + 1               N documents in the IDF corpus, df = documents with t
    score(x, y) = w(x) · w(y) / (‖w(x)‖ ‖w(y)‖)             (0 when either vector is empty)

The input x is either the last utterance (``input="last"``) or the whole history (``input="history"``: every
utterance of the context, facts included, as one bag of words); like the paper, the better one on dev is kept.
The IDF corpus is the training dialogs (each utterance once: the longest prefix per conversation plus its answer;
``idf_corpus="train"``) or the candidate set (``idf_corpus="candidates"``). Tokens never seen there are dropped
from both sides (``unseen="drop"``, the default: what a vectoriser fitted on the training data does) or get the
largest idf, ln(1 + N) + 1, on the candidate side (``unseen="max"``). With "max", the unseen OOV entities of the
bAbI OOV test sets dominate the cosine (T2-OOV: 14 % instead of the paper's 3.5 %), so "drop" is the default.
Query tokens outside the vocabulary are always dropped: ‖w(x)‖ is the same for every candidate, so that cannot
change a ranking.

Vectorised: candidate vectors are built once per candidate list (bAbI: one 4,212-row sparse matrix shared by
every item) and a block of items is scored with one sparse product.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from dialeval.baselines.base import Baseline
from dialeval.baselines.data import ScoringMixin, gold_ranks, tokenize
from dialeval.formats.dstc6 import Candidate, DialogItem
from dialeval.metrics.ranking import hit_rate_at_k

DEV_SELECTION_ITEMS = 5000
"""At most this many dev items (the first ones, deterministic) are scored per setting when selecting on dev."""


def training_documents(train: Sequence[DialogItem]) -> list[str]:
    """Every utterance of the training dialogs once: per conversation the longest prefix's utterances + its answer.

    Items without ``conversation_id`` (official DSTC6 files) are their own conversation.
    """
    longest: dict[object, DialogItem] = {}
    answers: list[str] = []
    for i, it in enumerate(train):
        key = it.conversation_id if it.conversation_id is not None else ("item", i)
        cur = longest.get(key)
        if cur is None or len(it.utterances) > len(cur.utterances):
            longest[key] = it
        if it.answer is not None and it.conversation_id is not None:
            answers.append(it.answer.utterance)
    docs: list[str] = []
    for it in longest.values():
        docs.extend(it.utterances)
        if it.conversation_id is None and it.answer is not None:
            docs.append(it.answer.utterance)
    docs.extend(answers)
    return docs


@dataclass
class TfidfSpace:
    """A growing vocabulary with IDF weights; turns texts into L2-normalised TF-IDF rows (scipy CSR)."""

    tokenization: str = "lower"
    vocab: dict[str, int] = field(default_factory=dict)
    idf: list[float] = field(default_factory=list)
    n_docs: int = 0
    _df: Counter = field(default_factory=Counter)

    def fit_idf(self, documents: Iterable[str]) -> TfidfSpace:
        """Document frequencies from ``documents``; idf(t) = ln((1+N)/(1+df(t))) + 1."""
        df: Counter = Counter()
        n = 0
        for d in documents:
            n += 1
            df.update(set(tokenize(d, self.tokenization)))
        self.n_docs, self._df = n, df
        self.vocab, self.idf = {}, []
        for t in sorted(df):
            self._add(t)
        return self

    def _add(self, token: str) -> int:
        j = self.vocab.get(token)
        if j is None:
            j = self.vocab[token] = len(self.idf)
            self.idf.append(math.log((1 + self.n_docs) / (1 + self._df.get(token, 0))) + 1.0)
        return j

    def vectors(self, token_lists: Sequence[Sequence[str]], grow: bool) -> sp.csr_matrix:
        """Rows = L2-normalised TF-IDF vectors; unknown tokens are added (``grow``) or dropped."""
        indptr = [0]
        indices: list[int] = []
        data: list[float] = []
        for toks in token_lists:
            counts: Counter = Counter()
            for t in toks:
                j = self._add(t) if grow else self.vocab.get(t)
                if j is not None:
                    counts[j] += 1
            cols = sorted(counts)
            vals = np.array([counts[j] * self.idf[j] for j in cols], dtype=np.float64)
            norm = float(np.sqrt((vals**2).sum())) if cols else 0.0
            indices.extend(cols)
            data.extend((vals / norm).tolist() if norm > 0 else vals.tolist())
            indptr.append(len(indices))
        return sp.csr_matrix(
            (np.array(data, dtype=np.float64), np.array(indices, dtype=np.int64), np.array(indptr, dtype=np.int64)),
            shape=(len(token_lists), max(len(self.idf), 1)),
        )

    def texts(self, texts: Sequence[str], grow: bool) -> sp.csr_matrix:
        return self.vectors([tokenize(t, self.tokenization) for t in texts], grow)


def cosine(a: sp.csr_matrix, b: sp.csr_matrix) -> np.ndarray:
    """Dense (rows of a) × (rows of b) cosine matrix for L2-normalised sparse rows (column counts aligned)."""
    width = max(a.shape[1], b.shape[1])
    a = sp.csr_matrix((a.data, a.indices, a.indptr), shape=(a.shape[0], width))
    b = sp.csr_matrix((b.data, b.indices, b.indptr), shape=(b.shape[0], width))
    return np.asarray((a @ b.T).toarray())


class CandidateCache:
    """Candidate matrices per candidate-list object (kept alive here so ``id()`` keys cannot be reused).

    ``grow``: tokens outside the IDF corpus get the largest idf (True) or are dropped (False, like a vectoriser
    fitted on the training data, e.g. scikit-learn's ``TfidfVectorizer.transform``).
    """

    def __init__(self, space: TfidfSpace, grow: bool = True):
        self.space = space
        self.grow = grow
        self._cache: dict[int, tuple[list[Candidate], sp.csr_matrix]] = {}

    def get(self, candidates: list[Candidate]) -> sp.csr_matrix:
        hit = self._cache.get(id(candidates))
        if hit is not None and hit[0] is candidates:
            return hit[1]
        m = self.space.texts([c.utterance for c in candidates], grow=self.grow)
        if len(candidates) >= 100:  # only shared lists are worth keeping (bAbI); DSTC6 lists are per item
            self._cache[id(candidates)] = (candidates, m)
        return m


@dataclass
class TfidfBaseline(ScoringMixin, Baseline):
    """TF-IDF-weighted cosine between the input (last utterance or history) and each candidate."""

    name: str = "tfidf"
    seed: int = 0
    input: str = "auto"  # "last", "history" or "auto" (= chosen on dev; history without dev)
    idf_corpus: str = "train"  # "train" or "candidates"
    tokenization: str = "lower"
    unseen: str = "drop"  # tokens outside the IDF corpus: "drop" (ignored) or "max" (largest idf)
    needs_training = True

    def __post_init__(self):
        if self.unseen not in ("drop", "max"):
            raise ValueError(f"unseen must be 'drop' or 'max', got {self.unseen!r}")
        self.space = TfidfSpace(self.tokenization)
        self._cands = CandidateCache(self.space, grow=self.unseen == "max")
        self.selection: dict[str, float] = {}

    def fit(self, train: Sequence[DialogItem], dev: Sequence[DialogItem] | None = None) -> TfidfBaseline:
        if self.idf_corpus == "train":
            docs = training_documents(train)
        elif self.idf_corpus == "candidates":
            seen: dict[str, None] = {}
            for group in {id(it.candidates): it.candidates for it in list(train) + list(dev or [])}.values():
                for c in group:
                    seen.setdefault(c.utterance, None)
            docs = list(seen)
        else:
            raise ValueError(f"unknown idf_corpus {self.idf_corpus!r}")
        self.space = TfidfSpace(self.tokenization).fit_idf(docs)
        self._cands = CandidateCache(self.space, grow=self.unseen == "max")
        self.chosen_input = "history" if self.input == "auto" else self.input
        if self.input == "auto" and dev:
            sample = list(dev)[:DEV_SELECTION_ITEMS]
            for option in ("history", "last"):
                self.chosen_input = option
                self.selection[option] = hit_rate_at_k(gold_ranks(self, sample), 1)
            self.chosen_input = max(("history", "last"), key=lambda o: (self.selection[o], o == "history"))
        return self

    def _query_tokens(self, item: DialogItem) -> list[str]:
        mode = getattr(self, "chosen_input", "history" if self.input == "auto" else self.input)
        texts = item.utterances[-1:] if mode == "last" else item.utterances
        toks: list[str] = []
        for t in texts:
            toks.extend(tokenize(t, self.tokenization))
        return toks

    def score_group(self, candidates: list[Candidate], items: Sequence[DialogItem]) -> np.ndarray:
        c = self._cands.get(candidates)
        q = self.space.vectors([self._query_tokens(it) for it in items], grow=False)
        return cosine(q, c)

    def describe(self) -> dict:
        return {
            "name": self.name,
            "seed": self.seed,
            "input": getattr(self, "chosen_input", self.input),
            "input_option": self.input,
            "dev_per_response": self.selection,
            "idf_corpus": self.idf_corpus,
            "tokenization": self.tokenization,
            "unseen": self.unseen,
            "idf": "ln((1+N)/(1+df))+1",
            "n_idf_documents": self.space.n_docs,
        }
