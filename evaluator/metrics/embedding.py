"""Embedding-based response metrics: embedding average, greedy matching, vector extrema (metrics.md §6).

For a hypothesis h and a reference r, each turned into the word vectors of its tokens:

``embedding-average`` (nlg-eval ``EmbeddingAverageCosineSimilarity``, Liu et al. 2016 "Embedding Average")
    cos(mean(h), mean(r)). Word vectors are not normalised first.
``vector-extrema`` (nlg-eval ``VectorExtremaCosineSimilarity``, Forgues et al. 2014)
    per dimension e_d = max_d if max_d > |min_d| else min_d (sign kept; a tie, max_d == |min_d|, takes the side
    the ``extrema_tie`` option names); score cos(e(h), e(r)).
``greedy-matching`` (nlg-eval ``GreedyMatchingScore``, Rus & Lintean 2012)
    G(a, b) = mean over tokens w of a of max over tokens w' of b of cos(w, w'); score (G(r, h) + G(h, r)) / 2.
    Token occurrences count (a repeated word counts twice).

cos(u, v) is u·v / (|u| |v|), and 0 when either vector is zero (never NaN). A corpus value is the mean over
hypotheses; with several references a hypothesis scores the max (or mean) over its references first.

Every choice on which public implementations disagree is an option (:class:`EmbeddingOptions`) recorded in the
signature; three presets fix them all:

============  ===========  ==========  ================================  ==================================
option        paper        hed-dlg     nlg-eval                          values
============  ===========  ==========  ================================  ==================================
tokenizer     whitespace   space       treebank                          whitespace (``str.split()``),
                                                                         space (``strip().split(" ")``),
                                                                         regex (``\\w+|[^\\w\\s]``), treebank
lowercase     no           no          no                                yes / no
oov           skip         skip        mean                              skip (drop the token), mean (the
                                                                         mean of every vector of the file),
                                                                         zero (a zero vector)
empty         skip         hed-dlg     skip                              skip, zero, error, hed-dlg
extrema_tie   max          max         nlg-eval                          max, min, nlg-eval (min, and a
                                                                         dimension whose min is exactly 0
                                                                         gives 0)
greedy        cosine       dot         cosine                            cosine, dot (raw dot product
                                                                         floored at 0: reproduction only)
multi_ref     max          max         max                               max, mean
============  ===========  ==========  ================================  ==================================

``paper`` (the default) is the published definitions. ``hed-dlg`` is what the Liu/Serban script
(``hed-dlg-truncated/Evaluation/embedding_metrics.py``) actually computes; ``nlg-eval`` is nlg-eval's behaviour
(its numbers, without its crash on an empty sentence: such a pair is skipped and counted).

A side is *empty* when no vector is left after tokenising and applying the OOV policy (an empty line, or
only unknown words under ``oov=skip``). Empty policies: ``skip`` leaves the pair out (counted in ``skipped``;
a hypothesis whose references are all left out is skipped); ``zero`` scores the pair 0; ``error`` stops with
the line number; ``hed-dlg`` copies the script: an empty reference skips the pair for average and extrema but
scores 0 for greedy, an empty hypothesis scores 0.

The treebank tokenizer is nlg-eval's ``nltk.word_tokenize`` re-implemented here from the documented Penn
Treebank conventions (NLTK is not a dependency, and ``word_tokenize`` needs the punkt model, which cannot be
downloaded offline): quotes become ````` / ``''``, punctuation and brackets are split off, commas and colons
inside numbers stay, clitics ('s 'm 'd 'll 're 've n't) are split, "cannot"/"gonna"/"wanna"/... are split in
two. Punkt's sentence splitting matters only for periods; it is approximated: a token ending in "." before
whitespace ends a sentence unless it looks like an abbreviation (a single letter, an inner period, or a
common title such as "mr."). See :func:`treebank_tokenize`.

Computation (no Python loop per text, token or pair on the hot path for the whitespace and space tokenizers):
compiled kernels (:mod:`dialeval.metrics.embedding_kernels`, numba; compiled when the package is built and
cached in dialeval's cache folder, see :mod:`dialeval.metrics.kernel_cache`). The corpus is joined by NUL and encoded
about 1 M characters at a time while worker threads split the previous chunks, find each token's end 8 bytes at
a time and number every distinct token through an exact hash table (:func:`corpus_token_parts`); token numbers
map to rows of a compact copy of the vectors used. Each
pair is scored in one pass: both sides' rows copied once while their sums, maxima and minima are taken, then
every token similarity in tiles of 4 x 4-12 tokens that keep only row and column maxima, in explicit SIMD
vectors (:func:`_pair_scores`), pairs split over the cores. Vectors are read in their own dtype (float32 widens exactly);
arithmetic is float64. Values equal a per-pair loop over the definitions to about 1e-15.
"""

from __future__ import annotations

import math
import os
import re
from contextlib import suppress
from dataclasses import asdict, dataclass, field, replace
from itertools import chain
from typing import TYPE_CHECKING

import numpy as np

from dialeval.core.errors import UsageError
from dialeval.core.signature import Signature
from dialeval.metrics import Metric, register

if TYPE_CHECKING:
    from dialeval.formats.vectors import Vectors

METRICS = ("embedding-average", "greedy-matching", "vector-extrema")
TOKENIZERS = ("whitespace", "space", "regex", "treebank")
OOV_POLICIES = ("skip", "mean", "zero")
EMPTY_POLICIES = ("skip", "zero", "error", "hed-dlg")
EXTREMA_TIES = ("max", "min", "nlg-eval")
GREEDY_SIMS = ("cosine", "dot")
MULTI_REF = ("max", "mean")
Z95 = 1.959963984540054  # two-sided 95 % normal quantile



# ---- options and presets ------------------------------------------------------------------------------
@dataclass(frozen=True)
class EmbeddingOptions:
    """Every choice that changes an embedding-metric number (see the module docstring for the values)."""

    preset: str = "paper"
    tokenizer: str = "whitespace"
    lowercase: bool = False
    oov: str = "skip"
    empty: str = "skip"
    extrema_tie: str = "max"
    greedy: str = "cosine"
    multi_ref: str = "max"

    def __post_init__(self):
        for name, allowed in (("tokenizer", TOKENIZERS), ("oov", OOV_POLICIES), ("empty", EMPTY_POLICIES),
                              ("extrema_tie", EXTREMA_TIES), ("greedy", GREEDY_SIMS), ("multi_ref", MULTI_REF)):
            if getattr(self, name) not in allowed:
                raise UsageError(f"embedding option {name}={getattr(self, name)!r} (choose from {', '.join(allowed)})")

    def to_json(self) -> dict:
        return asdict(self)

    def signature_fields(self, metric: str) -> dict[str, object]:
        """The options that change ``metric``'s number, as signature fields."""
        f: dict[str, object] = {"preset": self.preset, "tok": self.tokenizer, "lc": self.lowercase,
                                "oov": self.oov, "empty": self.empty}
        if metric == "vector-extrema":
            f["xtie"] = self.extrema_tie
        if metric == "greedy-matching":
            f["greedy"] = "cos" if self.greedy == "cosine" else "dot0"
        f["mref"] = self.multi_ref
        return f


PRESETS: dict[str, EmbeddingOptions] = {
    "paper": EmbeddingOptions("paper", "whitespace", False, "skip", "skip", "max", "cosine", "max"),
    "hed-dlg": EmbeddingOptions("hed-dlg", "space", False, "skip", "hed-dlg", "max", "dot", "max"),
    "nlg-eval": EmbeddingOptions("nlg-eval", "treebank", False, "mean", "skip", "nlg-eval", "cosine", "max"),
}
DEFAULT_PRESET = "paper"


def options_for(preset: str = DEFAULT_PRESET, **overrides) -> EmbeddingOptions:
    """A preset with some options overridden (``None`` values are ignored). The preset label becomes
    ``<preset>+custom`` when an override changes it, so a signature never names a preset it does not follow."""
    if preset not in PRESETS:
        raise UsageError(f"unknown embedding preset {preset!r} (choose from {', '.join(PRESETS)})")
    base = PRESETS[preset]
    changes = {k: v for k, v in overrides.items() if v is not None}
    out = replace(base, **changes)
    if any(getattr(base, k) != v for k, v in changes.items()):
        out = replace(out, preset=f"{preset}+custom")
    return out


# ---- tokenizers ---------------------------------------------------------------------------------------
_REGEX_TOKEN = re.compile(r"\w+|[^\w\s]")

# Treebank conventions, applied in this order to one sentence padded with spaces.
_TB_OPEN_QUOTES = [
    (re.compile(r"([«“‘„]|`+)"), r" \1 "),  # typographic opening quotes and backticks stand alone
    (re.compile(r'^"'), "``"),  # a straight double quote opening the text is an opening quote
    (re.compile(r"(``)"), r" \1 "),
    (re.compile(r"([ (\[{<])(\"|'')"), r"\1 `` "),  # ... and so is one after a space or an opening bracket
    (re.compile(r"(?i)(?<![\w'])(')(?!(?:re|ve|ll|m|t|s|d|n)\b)(\w)"), r"\1 \2"),  # an opening ' (not a clitic)
]
_TB_PUNCT = [
    (re.compile(r'([^.])(\.)([\])}>"\']*)\s*$'), r"\1 \2 \3 "),  # the sentence-final period
    (re.compile(r"([:,])([^\d])"), r" \1 \2"),  # commas/colons, except inside numbers (1,000 / 10:30)
    (re.compile(r"([:,])$"), r" \1 "),
    (re.compile(r"\.{2,}"), r" \g<0> "),  # ellipses
    (re.compile(r"[;@#$%&]"), r" \g<0> "),
    (re.compile(r"[?!]"), r" \g<0> "),
    (re.compile(r"([^'])' "), r"\1 ' "),  # a closing single quote
    (re.compile(r"\*"), r" \g<0> "),
    (re.compile(r"[\]\[(){}<>]"), r" \g<0> "),  # brackets
    (re.compile(r"--"), r" -- "),
]
_TB_CLOSE = [
    (re.compile(r"([»”’])"), r" \1 "),
    (re.compile(r"''"), " '' "),
    (re.compile(r'"'), " '' "),  # any other straight double quote closes
    (re.compile(r"([^' ])('[sSmMdD]|') "), r"\1 \2 "),  # clitics 's 'm 'd and a bare closing '
    (re.compile(r"([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) "), r"\1 \2 "),
]
# Words the Treebank writes as two tokens (can|not, gon|na, ...), and 'tis / 'twas.
_TB_SPLIT_WORDS = [re.compile(p, re.IGNORECASE) for p in (
    r"\b(can)(not)\b", r"\b(d)('ye)\b", r"\b(gim)(me)\b", r"\b(gon)(na)\b", r"\b(got)(ta)\b",
    r"\b(lem)(me)\b", r"\b(more)('n)\b", r"\b(wan)(na)(?=\s)", r" ('t)(is)\b", r" ('t)(was)\b",
)]
_ABBREVIATIONS = frozenset("mr mrs ms dr prof st jr sr vs etc inc ltd co corp mt no gen sen rep gov col lt sgt".split())
_CLOSERS = "\"')]}»”’"


def _sentence_breaks(text: str) -> list[str]:
    """Split ``text`` where a whitespace-delimited chunk ends a sentence with a period (punkt, approximated)."""
    chunks = text.split()
    out: list[list[str]] = [[]]
    for i, c in enumerate(chunks):
        out[-1].append(c)
        core = c.rstrip(_CLOSERS)
        if i + 1 < len(chunks) and core.endswith(".") and not core.endswith(".."):
            word = core[:-1]
            abbrev = (len(word) <= 1 or "." in word or word.lower().lstrip(_CLOSERS + "([{") in _ABBREVIATIONS)
            if not abbrev:
                out.append([])
    return [" ".join(s) for s in out if s]


def treebank_tokenize(text: str) -> list[str]:
    """Penn-Treebank-style word tokens, as ``nltk.word_tokenize`` gives them (see the module docstring).

    >>> treebank_tokenize('I can\\'t pay $3.50, "he said". Fine.')
    ['I', 'ca', "n't", 'pay', '$', '3.50', ',', '``', 'he', 'said', "''", '.', 'Fine', '.']
    """
    tokens: list[str] = []
    for sent in _sentence_breaks(text):
        s = sent
        for rx, rep in _TB_OPEN_QUOTES:
            s = rx.sub(rep, s)
        for rx, rep in _TB_PUNCT:
            s = rx.sub(rep, s)
        s = f" {s} "
        for rx, rep in _TB_CLOSE:
            s = rx.sub(rep, s)
        for rx in _TB_SPLIT_WORDS:
            s = rx.sub(r" \1 \2 ", s)
        tokens.extend(s.split())
    return tokens


def tokenizer_function(name: str, lowercase: bool = False):
    """``text -> list of tokens`` for a tokenizer name (lower-casing, when asked, comes first)."""
    if name == "whitespace":
        fn = str.split
    elif name == "space":
        def fn(t: str) -> list[str]:  # the hed-dlg script: strip(), split(" "); empty strings never have vectors
            return [w for w in t.strip().split(" ") if w]
    elif name == "regex":
        fn = _REGEX_TOKEN.findall
    elif name == "treebank":
        fn = treebank_tokenize
    else:
        raise UsageError(f"unknown tokenizer {name!r} (choose from {', '.join(TOKENIZERS)})")
    if lowercase:
        return lambda t: fn(t.lower())
    return fn


# ---- results ------------------------------------------------------------------------------------------
@dataclass
class Summary:
    """Corpus statistics of one metric: mean over scored hypotheses, sample std (ddof=1; 0 when n = 1),
    normal 95 % interval mean ± 1.96·std/√n, and the number of hypotheses skipped. ``value`` is None when
    nothing could be scored (never NaN)."""

    metric: str
    value: float | None
    n: int
    std: float | None
    ci95: tuple[float, float] | None
    skipped: int


@dataclass
class EmbeddingResult:
    """What :func:`score_pairs` returns.

    ``per_pair[metric]``: one float per hypothesis (after the multi-reference reduction), NaN where skipped;
    ``summaries[metric]``: :class:`Summary`; ``counts``: hypotheses, references, token occurrences, OOV token
    occurrences, empty hypotheses / references (no vector left); ``signatures[metric]``: the signature.
    """

    options: EmbeddingOptions
    per_pair: dict[str, np.ndarray]
    summaries: dict[str, Summary]
    counts: dict[str, int]
    signatures: dict[str, Signature]
    vectors: dict = field(default_factory=dict)

    def records(self, digits: int | None = None) -> list[dict]:
        """Tidy records, one per metric (``metric, value, n, std, ci95, skipped, signature``): full precision (a
        record is a record, not a display; tables round), or rounded to ``digits``."""
        out = []
        for m in METRICS:
            s = self.summaries[m]
            out.append({
                "metric": m,
                "value": _round(s.value, digits),
                "n": s.n,
                "std": _round(s.std, digits),
                "ci95": None if s.ci95 is None else [_round(s.ci95[0], digits), _round(s.ci95[1], digits)],
                "skipped": s.skipped,
                "signature": self.signatures[m].format(),
            })
        return out

    def table_values(self) -> dict[str, np.ndarray]:
        """Per-hypothesis arrays for a RankTable's ``values`` (items stay aligned): a skipped hypothesis is NaN,
        which the registry's metrics, reports and statistics read as "left out" (see
        :meth:`dialeval.metrics.Metric.compute_left_out`)."""
        return {m: v.copy() for m, v in self.per_pair.items()}


def _round(v: float | None, digits: int | None) -> float | None:
    return None if v is None else float(v) if digits is None else round(float(v), digits)


def summarize(metric: str, values: np.ndarray) -> Summary:
    ok = ~np.isnan(values)
    n = int(ok.sum())
    skipped = int(len(values) - n)
    if n == 0:
        return Summary(metric, None, 0, None, None, skipped)
    v = values[ok]
    mean = float(v.mean())
    std = float(v.std(ddof=1)) if n > 1 else 0.0
    half = Z95 * std / math.sqrt(n)
    return Summary(metric, mean, n, std, (mean - half, mean + half), skipped)


# ---- the computation ----------------------------------------------------------------------------------
def score_pairs(hyps: list[str], refs: list[list[str]], options: EmbeddingOptions | str | None = None,
                vectors: Vectors | str | None = None, *, ref_lines: list[list[int]] | None = None,
                first_line: int = 1, vectors_format: str = "auto") -> EmbeddingResult:
    """Score each hypothesis against its references with the three metrics.

    ``hyps[i]`` is one hypothesis text, ``refs[i]`` the non-empty list of its reference texts. ``options`` is an
    :class:`EmbeddingOptions` or a preset name (default ``paper``). ``vectors``: a :class:`dialeval.formats.vectors.Vectors`;
    by default the offline GloVe 6B 50d vectors; a path (or ``"default"``) loads that file in ``vectors_format``
    like ``dialeval embed --vectors``, only the words of these texts. Returns an
    :class:`EmbeddingResult`; raises :class:`UsageError` for malformed input (and for an empty side under
    ``empty="error"``, naming the line: ``ref_lines[i][j]`` gives reference j's own line number when references
    come from several files; ``first_line``: the line number of ``hyps[0]``, when the texts are a block of longer
    files).

    This is the function the registry's text metrics call, e.g. with the top-1 candidate's text of each item
    as ``hyps`` and ``[[gold text], ...]`` as ``refs``.
    """
    opts = options_for(options) if isinstance(options, str) else (options or PRESETS[DEFAULT_PRESET])
    if len(hyps) != len(refs):
        raise UsageError(f"{len(hyps)} hypotheses but {len(refs)} reference lists")
    one_each = None
    if set(map(type, refs)) <= {list, tuple}:
        with suppress(ValueError):  # one reference per hypothesis (the common case): one pass over the lists
            one_each = [r for (r,) in refs]
        if one_each is None:
            ref_counts = np.fromiter(map(len, refs), np.int64, len(refs))
        else:
            ref_counts = np.ones(len(refs), np.int64)
    else:
        ref_counts = np.fromiter((len(r) if isinstance(r, list | tuple) else -1 for r in refs), np.int64, len(refs))
    if len(ref_counts) and ref_counts.min() < 1:
        i = int(np.argmin(ref_counts))
        raise UsageError(f"hypothesis {i + 1} has no reference (each needs a non-empty list of texts)")

    # Sentence k: hypotheses first, then every reference in order (no de-duplication: hashing 200,000 texts
    # costs more than it saves, and every later step is linear in the tokens anyway).
    texts = [*hyps, *(chain.from_iterable(refs) if one_each is None else one_each)]
    n_refs = len(texts) - len(hyps)
    n_h = len(hyps)
    # With vectors given, the compiled split keeps its distinct tokens as bytes (_Vocabulary), not one str each
    spec = "default" if vectors is None else vectors if isinstance(vectors, str) else None
    words, parts = corpus_token_parts(texts, opts, strings=spec is not None)

    if spec is not None:
        from dialeval.formats.vectors import load_vectors

        vectors = load_vectors(spec, fmt=vectors_format, words=words, need_mean=opts.oov == "mean")
    # row in vectors.matrix, -1 when unknown
    word_rows = words.rows(vectors.key_to_index) if isinstance(words, _Vocabulary) else vectors.rows(words)
    # the rows these texts use, renumbered 0..n-1: the kernel's copy stays small whatever the vocabulary's size
    known_word = word_rows >= 0
    used, local = np.unique(word_rows[known_word], return_inverse=True)
    word_rows = np.full(len(words), -1, np.int32)
    word_rows[known_word] = local
    matrix = np.asarray(vectors.matrix[used] if len(used) else vectors.matrix[:0])
    oov_row = -1
    if opts.oov in ("mean", "zero"):
        extra = vectors.mean_vector() if opts.oov == "mean" else np.zeros(matrix.shape[1])
        matrix = np.vstack([matrix.astype(np.float64), np.asarray(extra, np.float64)[None, :]])
        oov_row = len(matrix) - 1
    if not np.issubdtype(matrix.dtype, np.floating) or matrix.dtype.itemsize > 8:
        matrix = matrix.astype(np.float64)
    if not np.isfinite(matrix).all():
        bad = int(np.flatnonzero(~np.isfinite(matrix).all(axis=1))[0])
        what = "the OOV mean vector" if bad == oov_row else f"the vector of {words[int(np.flatnonzero(word_rows == bad)[0])]!r}"
        raise UsageError(f"vectors: {what} holds NaN or infinity")
    rows, starts, lengths, n_tokens, n_oov = _token_rows(parts, word_rows, oov_row)

    ph = np.repeat(np.arange(n_h), ref_counts) if n_refs != n_h else np.arange(n_h)
    pr = np.arange(n_h, len(texts))
    empty_h = lengths[ph] == 0
    empty_r = lengths[pr] == 0
    both = ~(empty_h | empty_r)
    if opts.empty == "error" and not both.all():
        owner = np.repeat(np.arange(n_h), ref_counts)
        _empty_error(empty_h, empty_r, owner, ref_counts, ref_lines, first_line)
    token_pairs = lengths[ph] * lengths[pr]
    if len(token_pairs) and token_pairs.max() > MAX_TOKEN_PAIRS:
        _too_long_error(token_pairs, lengths, ph, pr, ref_counts, ref_lines, first_line)

    raw = _pair_scores(matrix, rows, starts, lengths, ph, pr, opts)
    if not all(np.isfinite(v).all() for v in raw.values()):  # finite vectors whose sums overflow float64
        raise UsageError("vectors: values too large to score (a sum or dot product overflows)")
    per_pair: dict[str, np.ndarray] = {}
    for m, scores in raw.items():
        s = np.where(both, scores, 0.0)
        if opts.empty == "skip":
            s[~both] = np.nan
        elif opts.empty == "hed-dlg" and m != "greedy-matching":
            s[empty_r] = np.nan  # the script skips a reference without vectors for average and extrema
        per_pair[m] = _reduce_refs(s, ref_counts, opts.multi_ref)

    counts = {
        "hypotheses": n_h,
        "references": n_refs,
        "tokens": int(n_tokens),
        "oov_tokens": n_oov,
        "empty_hypotheses": int(np.count_nonzero(lengths[:n_h] == 0)),
        "empty_references": int(np.count_nonzero(lengths[n_h:] == 0)),
    }
    vec_fields = vectors.signature_fields()
    sigs = {}
    for m in METRICS:
        of = opts.signature_fields(m)
        sigs[m] = Signature("embed").with_fields(metric=m, preset=of.pop("preset"), **vec_fields, **of)
    summaries = {m: summarize(m, per_pair[m]) for m in METRICS}
    return EmbeddingResult(opts, per_pair, summaries, counts, sigs, vectors.identity_json())


# ---- tokens to word ids -------------------------------------------------------------------------------
_CHUNK_CHARS = 1 << 20  # texts are joined and encoded ~1 M characters at a time: buffers stay in cache, workers start early


def corpus_tokens(texts: list[str], opts: EmbeddingOptions) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Tokenise every text: ``(words, token_word, lengths)`` with ``words`` the distinct tokens, ``token_word[t]``
    the index in ``words`` of token t (all tokens of all texts, in order) and ``lengths[k]`` the number of tokens
    of text k. See :func:`corpus_token_parts`, which scoring uses (the same tokens, in parts, not copied into
    one array)."""
    words, parts = corpus_token_parts(texts, opts)
    return (words, *_joined(parts))


TokenParts = list[tuple[np.ndarray, np.ndarray, "np.ndarray | None"]]


def corpus_token_parts(texts: list[str], opts: EmbeddingOptions, strings: bool = True) -> tuple[list[str], TokenParts]:
    """Tokenise every text: ``(words, parts)``, ``words`` the distinct tokens; each part covers the next texts
    as ``(token_word, lengths, word_map)``: ``lengths[k]`` tokens per text, ``token_word`` (int32) their numbers
    in ``words`` or, when ``word_map`` is not None, in the part's own vocabulary (``word_map[j]`` is then the
    index in ``words`` of number j).

    The whitespace and space tokenizers run compiled (:func:`dialeval.metrics.embedding_kernels.split_chunk`)
    over the UTF-8 of the texts joined by NUL, about 1 M characters at a time: while worker threads split
    chunks, this thread joins and encodes the next one. The split is exactly ``str.split()`` (every character for which
    ``str.isspace()`` holds, ASCII or not) or ``split(" ")`` with empty strings dropped. A corpus in which some
    text holds a NUL character takes the per-text path, like the regex and treebank tokenizers.

    ``strings=False``: the compiled split may give its distinct tokens as a :class:`_Vocabulary` (their bytes
    in a few arrays: a million distinct tokens cost a few MB, not one Python string each) instead of a list."""
    try:  # str methods and join refuse anything but str: the check costs nothing unless a text is not one
        if opts.lowercase:
            texts = list(map(str.lower, texts))
        if opts.tokenizer in ("whitespace", "space"):
            if opts.tokenizer == "space":
                texts = list(map(str.strip, texts))  # the hed-dlg script strips, then splits on " " only
            got = _split_parts(texts, opts.tokenizer == "whitespace", strings)
            if got is not None:
                return got
    except TypeError:
        _refuse_non_strings(texts)
        raise
    _refuse_non_strings(texts)  # the per-text tokenizers would take bytes for text
    toks = list(map(tokenizer_function(opts.tokenizer), texts))
    lengths = np.fromiter(map(len, toks), np.int64, len(toks))
    flat = list(chain.from_iterable(toks))
    words = list(dict.fromkeys(flat))
    word_id = dict(zip(words, range(len(words))))
    return words, [(np.fromiter(map(word_id.__getitem__, flat), np.int32, len(flat)), lengths, None)]


def _refuse_non_strings(texts: list) -> None:
    bad = next((type(t) for t in texts if not isinstance(t, str)), None)
    if bad is not None:
        raise UsageError(f"texts must be strings, not {bad.__name__}")


def _joined(parts: TokenParts) -> tuple[np.ndarray, np.ndarray]:
    """``(token_word, lengths)`` of all parts in one array each, numbers in the common vocabulary."""
    if not parts:
        return np.zeros(0, np.int32), np.zeros(0, np.int64)
    token_word = np.concatenate([tw if word_map is None else word_map.take(tw) for tw, _, word_map in parts])
    return token_word, np.concatenate([p[1] for p in parts])


def _split_compiled(texts: list[str], whitespace: bool):
    """:func:`_split_parts` joined: ``(words, token_word, lengths)``, or None."""
    got = _split_parts(texts, whitespace)
    return None if got is None else (got[0], *_joined(got[1]))


def _split_parts(texts: list[str], whitespace: bool, strings: bool = True) -> tuple[list[str], TokenParts] | None:
    """The compiled split (see :func:`corpus_token_parts`); None when some text holds a NUL character.

    Chunks take about ``_CHUNK_CHARS`` characters: the first one's number of texts comes from the mean length
    of the first texts, each next one's from the previous chunk's size (no pass over all texts first). Chunks
    alternate between up to two vocabularies, each fed in order by its own worker thread, while this thread
    joins and encodes the next chunk; the second vocabulary's spellings are then split once more with the
    first's state, which numbers them in it (that gives the second's chunks their ``word_map``)."""
    from concurrent.futures import ThreadPoolExecutor

    kernels = _kernels()
    classes = kernels.byte_classes(whitespace)
    n = len(texts)
    sample = texts[:256]
    per_chunk = max(1, int(_CHUNK_CHARS / (sum(map(len, sample)) / max(len(sample), 1) + 1)))
    n_vocab = 2 if n >= 4 * per_chunk and _threads() > 1 else 1
    vocabularies = [list(kernels.new_vocabulary()) for _ in range(n_vocab)]
    parts: list = []

    def split(c: int, buf: np.ndarray, n_texts: int) -> bool:  # a vocabulary's chunks run in order, one thread
        vocabulary = vocabularies[c % n_vocab]
        tw, lengths, ok, *state = kernels.split_chunk(buf, kernels.word_view(buf), n_texts, classes, *vocabulary)
        vocabulary[:4] = state
        parts[c] = (tw, lengths)
        return ok

    padding = "\0" * (kernels.PADDING - 1)  # after the separator NUL the join puts before it
    workers = [ThreadPoolExecutor(1) for _ in range(n_vocab)]
    try:
        pending = []
        a = 0
        while a < n:
            b = min(n, a + per_chunk)
            body = _utf8_joined(texts[a:b], padding)
            per_chunk = max(1, int((b - a) * _CHUNK_CHARS / len(body)))
            parts.append(None)
            c = len(parts) - 1
            pending.append(workers[c % n_vocab].submit(split, c, np.frombuffer(body, np.uint8), b - a))
            del body
            a = b
        if not all([f.result() for f in pending]):
            return None  # a text holds NUL, the separator
    finally:
        for w in workers:
            w.shutdown()
    first = vocabularies[0]
    word_maps = [None]
    for other in vocabularies[1:]:
        n_other = int(other[4][0])
        buf = _read_only(kernels.spelling_buffer(other[1], other[2], n_other))
        word_map, _, _, *state = kernels.split_chunk(buf, kernels.word_view(buf), n_other, classes, *first)
        first[:4] = state
        word_maps.append(word_map)
    n_words = int(first[4][0])
    parts = [(tw, lengths, word_maps[c % n_vocab]) for c, (tw, lengths) in enumerate(parts)]
    if not strings:
        return _Vocabulary(first, n_words, whitespace), parts
    # no spelling holds NUL: one decode and one split give them all
    joined = kernels.spelling_buffer(first[1], first[2], n_words)[:-kernels.PADDING].tobytes()
    words = joined.decode("utf-8", "surrogatepass").split("\0") if n_words else []
    return words, parts


class _Vocabulary:
    """The distinct tokens of a compiled split, kept as the split left them (their UTF-8 bytes, ends and hash
    table: about 40 bytes a token, against some 60 for a Python string and its list slot). ``len`` and
    ``[i]`` give the tokens as strings one at a time; :meth:`rows` maps them to vector rows without making
    any."""

    def __init__(self, state: list, n_words: int, whitespace: bool):
        self._state = state
        self._n = n_words
        self._whitespace = whitespace

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i: int) -> str:
        _, spellings, word_end = self._state[:3]
        start = int(word_end[i - 1]) if i else 0
        return spellings[start:int(word_end[i])].tobytes().decode("utf-8", "surrogatepass")

    def rows(self, key_to_index: dict[str, int]) -> np.ndarray:
        """Row of each token (``key_to_index[token]``), -1 for a token without one. The keys are split with
        this vocabulary's state, which numbers every key that is one of its tokens by that token's number
        (a new spelling gets a number past the tokens); a key that is not exactly one token of this split
        (empty, holding a separator or NUL) can equal no token and is left out first."""
        kernels = _kernels()
        if self._whitespace:
            keys = [k for k in key_to_index if k and "\0" not in k and k.split() == [k]]
        else:
            keys = [k for k in key_to_index if k and "\0" not in k and " " not in k]
        out = np.full(self._n, -1, np.int64)
        if not keys or not self._n:
            return out
        key_rows = np.fromiter(map(key_to_index.__getitem__, keys), np.int64, len(keys))
        body = np.frombuffer(_utf8_joined(keys, "\0" * (kernels.PADDING - 1)), np.uint8)
        # the keys' new spellings go into the same arrays (past the tokens, which keep their bytes and numbers)
        # or into grown copies this vocabulary never sees; only the counts are copied
        state = [*self._state[:4], self._state[4].copy()]
        number, _, _, *_ = kernels.split_chunk(body, kernels.word_view(body), len(keys),
                                               kernels.byte_classes(self._whitespace), *state)
        known = number < self._n
        out[number[known]] = key_rows[known]
        return out


def _utf8_joined(texts: list[str], padding: str) -> bytes:
    """The UTF-8 of ``texts`` joined by NUL, then a NUL and ``padding``; ``texts`` is the caller's own list
    (its items may be replaced). Each non-ASCII text (``str.isascii`` reads a flag) is replaced by its UTF-8
    bytes read as Latin-1 characters, so the joined string keeps one byte per character and its Latin-1
    encoding is a plain copy: a chunk joined as it is takes its widest character's width, and encoding it
    is then a real transcoding of every character (a third of the time on a corpus with one non-ASCII text
    in a hundred). surrogatepass: a lone surrogate is a character like any other (never whitespace), kept
    in its token."""
    ascii_text = list(map(str.isascii, texts))
    if not all(ascii_text):
        k = -1
        with suppress(ValueError):  # list.index: no other non-ASCII text
            while True:
                k = ascii_text.index(False, k + 1)
                texts[k] = texts[k].encode("utf-8", "surrogatepass").decode("latin-1")
    return "\0".join([*texts, padding]).encode("latin-1")


def _token_rows(parts: TokenParts, word_rows: np.ndarray, oov_row: int):
    """Every token's vector row, unknown words dropped (``oov_row`` -1) or sent to ``oov_row``:
    ``(rows, starts, lengths, n_tokens, n_oov)`` with text k's rows at ``rows[starts[k] : starts[k] + lengths[k]]``.
    Parts are written where their tokens would start in one array (a part's dropped tokens leave a gap at its
    end), on up to two threads (the kernel releases the GIL) when there are many tokens."""
    kernels = _kernels()
    sizes = np.array([len(p[0]) for p in parts], np.int64)
    at = np.concatenate([[0], np.cumsum(sizes)])
    rows = np.empty(int(at[-1]), np.int32)

    def one(k: int):
        token_word, lengths, word_map = parts[k]
        wr = word_rows if word_map is None else word_rows.take(word_map)
        return kernels.token_rows(token_word, wr, lengths, oov_row, rows, at[k])

    if at[-1] >= _PARALLEL_TOKENS and len(parts) > 1 and _threads() > 1:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(2) as pool:
            done = list(pool.map(one, range(len(parts))))
    else:
        done = [one(k) for k in range(len(parts))]
    if not done:
        z = np.zeros(0, np.int64)
        return rows, z, z, 0, 0
    lengths = np.concatenate([d[0] for d in done])
    starts = np.concatenate([at[k] + np.cumsum(d[0]) - d[0] for k, d in enumerate(done)])
    return rows, starts, lengths, int(at[-1]), int(sum(int(d[1]) for d in done))


_PARALLEL_TOKENS = 1 << 20  # tokens below which one thread maps them all to rows


# ---- pair scores --------------------------------------------------------------------------------------
_TIES = {"max": 0, "min": 1, "nlg-eval": 2}  # embedding_kernels.TIE_* (kept here so numba loads only when used)
_PARALLEL_WORK = 1 << 20  # token-pair similarities below which one thread scores everything


def _pair_scores(matrix: np.ndarray, rows: np.ndarray, starts: np.ndarray, lengths: np.ndarray, ph: np.ndarray,
                 pr: np.ndarray, opts: EmbeddingOptions) -> dict[str, np.ndarray]:
    """The three raw scores of every pair (0 where a side is empty), from the compiled kernel
    (:func:`dialeval.metrics.embedding_kernels.pair_scores`).

    The kernel reads the vectors in their own dtype (float32 widens exactly; all arithmetic is float64) from
    a copy whose rows are padded with zero columns to a multiple of 8 (whole SIMD vectors). Pairs are cut into
    contiguous ranges of about equal work (sum over pairs of h·r + h + r), four per available core, scored on
    threads (the kernel releases the GIL); each pair's numbers depend on that pair alone, so the split never
    changes a value."""
    kernels = _kernels()
    n_pairs = len(ph)
    out = {m: np.zeros(n_pairs) for m in METRICS}
    if not n_pairs:
        return out
    if matrix.dtype not in (np.float32, np.float64):
        matrix = matrix.astype(np.float64)
    n_rows, d = matrix.shape
    vec = np.zeros((n_rows, -(-max(d, 1) // 8) * 8), matrix.dtype)
    vec[:, :d] = matrix
    norms = np.sqrt(np.einsum("ij,ij->i", vec, vec, dtype=np.float64))
    inv_norm = np.zeros(len(vec))
    np.divide(1.0, norms, out=inv_norm, where=norms > 0)  # a zero vector has cosine 0 with everything
    lh, lr = lengths[ph], lengths[pr]
    work = np.cumsum(lh * lr + lh + lr)
    n_threads = _threads() if work[-1] >= _PARALLEL_WORK else 1
    # 4 ranges per thread, taken in turn by whichever thread is free: a thread slowed by other jobs on the
    # machine holds up the rest by a quarter of its share at most
    n_ranges = 4 * n_threads if n_threads > 1 else 1
    cuts = [0, *np.searchsorted(work, work[-1] * np.arange(1, n_ranges) / n_ranges).tolist(), n_pairs]
    args = (vec, inv_norm, d, rows, starts, lengths, ph, pr)
    tail = (_TIES[opts.extrema_tie], opts.greedy == "cosine", opts.greedy == "dot",
            out["embedding-average"], out["vector-extrema"], out["greedy-matching"])
    if n_threads == 1:
        kernels.pair_scores(*args, 0, n_pairs, *tail)
        return out
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(n_threads) as pool:
        for f in [pool.submit(kernels.pair_scores, *args, a, b, *tail) for a, b in zip(cuts[:-1], cuts[1:])]:
            f.result()
    return out


def _kernels():
    """The compiled kernels module; numba is in the ``embeddings`` extra, like gensim."""
    import importlib

    try:
        return importlib.import_module("dialeval.metrics.embedding_kernels")
    except ImportError:  # numba or llvmlite missing or broken
        from dialeval.formats.vectors import missing_extra

        raise missing_extra("numba", or_broken=True) from None
    except RuntimeError as e:  # no writable folder for the kernels' cache: neither dialeval's nor numba's own
        raise UsageError(f"the embedding kernels cannot be set up ({str(e).splitlines()[0][:200]}); point "
                         "DIALEVAL_CACHE_DIR (or numba's NUMBA_CACHE_DIR) at a writable folder") from None


def _read_only(buf: np.ndarray) -> np.ndarray:
    """``buf`` marked read-only, as every other text buffer split_chunk reads is (``np.frombuffer`` of bytes):
    numba compiles a kernel once per argument type, and writable is another type, so a writable spelling buffer
    would compile split_chunk (and the kernels it calls) a second time, and ship that copy in the wheel."""
    buf.flags.writeable = False
    return buf


def warm_kernels() -> None:
    """Compile (or load) every kernel signature scoring can call, on a few tiny texts: vectors in float32 and
    float64, texts split into one vocabulary or two (the second numbered from its spellings), tokens mapped to
    vector rows with and without an OOV row, vocabularies kept as bytes (vectors read from a file). The package
    build runs it (``setup.py``) so that no user run compiles; it needs numpy and numba only."""
    from dialeval.formats.vectors import Vectors

    kernels = _kernels()
    hyps, refs = ["a b c", "b", ""], [["c a"], ["a b c d"], ["a"]]
    for dtype in (np.float32, np.float64):
        vec = Vectors.from_arrays(["a", "b", "c"], np.array([[1, 2], [0.5, -1], [-2, 0.25]], dtype))
        for opts in (PRESETS["paper"], PRESETS["hed-dlg"], options_for("paper", oov="zero")):
            score_pairs(hyps, refs, opts, vec)
    words, _ = corpus_token_parts(["a b", "c"], PRESETS["paper"], strings=False)
    if isinstance(words, _Vocabulary):
        words.rows({"a": 0, "c": 1})
    # the second vocabulary's spellings, split again with the first's state (_split_parts on a large corpus)
    classes = kernels.byte_classes(True)
    state = list(kernels.new_vocabulary())
    buf = np.frombuffer(_utf8_joined(["a b", "c"], "\0" * (kernels.PADDING - 1)), np.uint8)
    _, _, _, *state[:4] = kernels.split_chunk(buf, kernels.word_view(buf), 2, classes, *state)
    n_words = int(state[4][0])
    spellings = _read_only(kernels.spelling_buffer(state[1], state[2], n_words))
    kernels.split_chunk(spellings, kernels.word_view(spellings), n_words, classes, *state)


def _threads() -> int:
    """Cores this process may run on (at most 8)."""
    try:
        return max(1, min(8, len(os.sched_getaffinity(0))))
    except AttributeError:  # not on Linux
        return max(1, min(8, os.cpu_count() or 1))


def _reduce_refs(s: np.ndarray, ref_counts: np.ndarray, how: str) -> np.ndarray:
    if len(s) == len(ref_counts):  # one reference each
        return s
    starts = np.concatenate([[0], np.cumsum(ref_counts)[:-1]])
    ok = ~np.isnan(s)
    n_ok = np.add.reduceat(ok.astype(np.int64), starts)
    if how == "max":
        red = np.maximum.reduceat(np.where(ok, s, -np.inf), starts)
    else:
        red = np.add.reduceat(np.where(ok, s, 0.0), starts) / np.maximum(n_ok, 1)
    return np.where(n_ok > 0, red, np.nan)


MAX_TOKEN_PAIRS = 10**8  # greedy matching compares every token of a pair with every other: about 0.1 s at 10^8


def _too_long_error(token_pairs, lengths, ph, pr, ref_counts, ref_lines, first_line: int = 1) -> None:
    """Refuse the first pair whose sides hold more than ``MAX_TOKEN_PAIRS`` token pairs (two lines of 10,000
    words with vectors each): scoring time stays bounded by the input's size (at most 10^4 comparisons per
    token) whatever a hostile file puts on one line."""
    bad = int(np.flatnonzero(token_pairs > MAX_TOKEN_PAIRS)[0])
    i = int(np.repeat(np.arange(len(ref_counts)), ref_counts)[bad])
    j = int(bad - (np.cumsum(ref_counts)[i] - ref_counts[i]))
    where = f"reference file {j + 1} line {ref_lines[i][j] if ref_lines else i + first_line}"
    raise UsageError(f"hypothesis line {i + first_line} and {where}: {int(lengths[ph[bad]]):,} x {int(lengths[pr[bad]]):,} "
                     f"words with vectors, over the {MAX_TOKEN_PAIRS:,} word pairs greedy matching compares for "
                     "one pair (split such lines)")


def _empty_error(empty_h, empty_r, owner, ref_counts, ref_lines, first_line: int = 1) -> None:
    bad = np.flatnonzero(empty_h | empty_r)[0]
    i = int(owner[bad])
    if empty_h[bad]:
        raise UsageError(f"hypothesis line {i + first_line} has no word with a vector (empty policy 'error')")
    j = int(bad - (np.cumsum(ref_counts)[i] - ref_counts[i]))
    where = f"reference file {j + 1} line {ref_lines[i][j] if ref_lines else i + first_line}"
    raise UsageError(f"{where} has no word with a vector (empty policy 'error')")


# ---- registry -----------------------------------------------------------------------------------------
def registry_options(preset: str = DEFAULT_PRESET) -> EmbeddingOptions:
    """Options for the registry's text metrics: the preset as it is, its empty-text rule included (the same
    rule ``dialeval embed`` applies; a skipped item is NaN in the table and left out of the mean)."""
    return options_for(preset)


def _text_metric(name: str, description: str) -> Metric:
    def per_unit(t):
        if name not in t.values:
            raise UsageError(f"metric {name} needs the response texts: compute them with "
                             "dialeval.metrics.embedding.score_pairs and store result.table_values() in the table")
        return t.values[name]

    return Metric(name, per_unit, description, needs="texts")


for _name, _desc in (
    ("embedding-average", "cosine of the mean word vectors of the top-1 response and the gold response"),
    ("greedy-matching", "mean of the best token cosines in both directions, top-1 response vs gold response"),
    ("vector-extrema", "cosine of the per-dimension extrema vectors of the top-1 response and the gold response"),
):
    register(_text_metric(_name, _desc))
