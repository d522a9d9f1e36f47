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

Vectorisation: tokens of all distinct sentences are mapped to rows of the (subset) vector matrix once; sums,
maxima and minima per sentence come from ``np.add/maximum/minimum.reduceat`` over gathered rows (in chunks);
greedy matching groups the pairs by (hypothesis length, reference length) so that each group is one batched
matrix product without padding. Computation is in float64.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field, replace
from itertools import chain
from typing import TYPE_CHECKING

import numpy as np

from dialeval.errors import UsageError
from dialeval.metrics import Metric, register
from dialeval.signature import Signature

if TYPE_CHECKING:
    from dialeval.vectors import Vectors

METRICS = ("embedding-average", "greedy-matching", "vector-extrema")
TOKENIZERS = ("whitespace", "space", "regex", "treebank")
OOV_POLICIES = ("skip", "mean", "zero")
EMPTY_POLICIES = ("skip", "zero", "error", "hed-dlg")
EXTREMA_TIES = ("max", "min", "nlg-eval")
GREEDY_SIMS = ("cosine", "dot")
MULTI_REF = ("max", "mean")
Z95 = 1.959963984540054  # two-sided 95 % normal quantile

_CHUNK_TOKENS = 1 << 16  # rows gathered at once for sums/extrema (about 26 MB at 50 dims in float64)
_CHUNK_ELEMS = 1 << 22  # float64 elements per greedy batch (about 32 MB)


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

    def records(self, digits: int = 6) -> list[dict]:
        """Tidy records, one per metric (``metric, value, n, std, ci95, skipped, signature``), rounded."""
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
        """Per-hypothesis arrays for a RankTable's ``values`` (items must stay aligned): a skipped hypothesis
        scores 0 here. The registry metrics use options with ``empty="zero"``, so nothing is skipped there."""
        return {m: np.nan_to_num(v, nan=0.0) for m, v in self.per_pair.items()}


def _round(v: float | None, digits: int) -> float | None:
    return None if v is None else round(float(v), digits)


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
                vectors: Vectors | None = None, *, ref_lines: list[list[int]] | None = None) -> EmbeddingResult:
    """Score each hypothesis against its references with the three metrics.

    ``hyps[i]`` is one hypothesis text, ``refs[i]`` the non-empty list of its reference texts. ``options`` is an
    :class:`EmbeddingOptions` or a preset name (default ``paper``). ``vectors``: a :class:`dialeval.vectors.Vectors`;
    by default the offline GloVe 6B 50d vectors, loading only the words of these texts. Returns an
    :class:`EmbeddingResult`; raises :class:`UsageError` for malformed input (and for an empty side under
    ``empty="error"``, naming the line: ``ref_lines[i][j]`` gives reference j's own line number when references
    come from several files).

    This is the function the registry's text metrics call, e.g. with the top-1 candidate's text of each item
    as ``hyps`` and ``[[gold text], ...]`` as ``refs``.
    """
    opts = options_for(options) if isinstance(options, str) else (options or PRESETS[DEFAULT_PRESET])
    if len(hyps) != len(refs):
        raise UsageError(f"{len(hyps)} hypotheses but {len(refs)} reference lists")
    ref_counts = np.fromiter((len(r) if isinstance(r, list | tuple) else -1 for r in refs), np.int64, len(refs))
    if len(ref_counts) and ref_counts.min() < 1:
        i = int(np.argmin(ref_counts))
        raise UsageError(f"hypothesis {i + 1} has no reference (each needs a non-empty list of texts)")

    # Distinct sentences, each tokenised once.
    sid_of: dict[str, int] = {}
    hyp_sid = np.fromiter((sid_of.setdefault(h, len(sid_of)) for h in hyps), np.int64, len(hyps))
    flat_refs = list(chain.from_iterable(refs))
    ref_sid = np.fromiter((sid_of.setdefault(r, len(sid_of)) for r in flat_refs), np.int64, len(flat_refs))
    texts = list(sid_of)
    for t in (texts[:1] if texts and not isinstance(texts[0], str) else ()):
        raise UsageError(f"texts must be strings, not {type(t).__name__}")
    tok = tokenizer_function(opts.tokenizer, opts.lowercase)
    toks = [tok(t) for t in texts]
    lengths = np.fromiter(map(len, toks), np.int64, len(toks))
    flat_tokens = list(chain.from_iterable(toks))
    words = list(dict.fromkeys(flat_tokens))

    if vectors is None:
        from dialeval.vectors import load_vectors

        vectors = load_vectors("default", words=words, need_mean=opts.oov == "mean")
    word_rows = vectors.rows(words)  # row in vectors.matrix, -1 when unknown
    matrix = vectors.matrix.astype(np.float64, copy=False)
    oov_row = -1
    if opts.oov == "mean":
        matrix = np.vstack([matrix, vectors.mean_vector()[None, :].astype(np.float64)])
        oov_row = len(matrix) - 1
    elif opts.oov == "zero":
        matrix = np.vstack([matrix, np.zeros((1, matrix.shape[1]))])
        oov_row = len(matrix) - 1
    word_id = dict(zip(words, range(len(words))))
    tok_word = np.fromiter(map(word_id.__getitem__, flat_tokens), np.int64, len(flat_tokens))
    rows = word_rows[tok_word] if len(tok_word) else np.empty(0, np.int64)
    known = rows >= 0

    # Occurrence counts (a distinct sentence used k times counts k times).
    occ = np.bincount(np.concatenate([hyp_sid, ref_sid]), minlength=len(texts))
    tok_sent = np.repeat(np.arange(len(texts)), lengths)
    oov_per_sent = np.bincount(tok_sent[~known], minlength=len(texts))
    if opts.oov == "skip":
        rows = rows[known]
        lengths = np.bincount(tok_sent[known], minlength=len(texts)).astype(np.int64)
    else:
        rows = np.where(known, rows, oov_row)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)

    sums, maxs, mins = _sentence_reductions(matrix, rows, offsets, lengths)
    extrema = _extrema(maxs, mins, opts.extrema_tie)

    ph = np.repeat(hyp_sid, ref_counts)
    pr = ref_sid
    owner = np.repeat(np.arange(len(hyps)), ref_counts)
    empty_h = lengths[ph] == 0
    empty_r = lengths[pr] == 0
    both = ~(empty_h | empty_r)

    raw = {
        "embedding-average": _rowwise_cosine(sums[ph], sums[pr]),
        "vector-extrema": _rowwise_cosine(extrema[ph], extrema[pr]),
        "greedy-matching": _greedy(matrix, rows, offsets, lengths, ph, pr, both, opts.greedy),
    }
    if opts.empty == "error" and not both.all():
        _empty_error(empty_h, empty_r, owner, ref_counts, ref_lines)
    per_pair: dict[str, np.ndarray] = {}
    for m, scores in raw.items():
        s = np.where(both, scores, 0.0)
        if opts.empty == "skip":
            s[~both] = np.nan
        elif opts.empty == "hed-dlg" and m != "greedy-matching":
            s[empty_r] = np.nan  # the script skips a reference without vectors for average and extrema
        per_pair[m] = _reduce_refs(s, ref_counts, opts.multi_ref)

    counts = {
        "hypotheses": len(hyps),
        "references": len(flat_refs),
        "tokens": int((np.fromiter(map(len, toks), np.int64, len(toks)) * occ).sum()),
        "oov_tokens": int((oov_per_sent * occ).sum()),
        "empty_hypotheses": int((lengths[hyp_sid] == 0).sum()),
        "empty_references": int((lengths[ref_sid] == 0).sum()),
    }
    vec_fields = vectors.signature_fields()
    sigs = {}
    for m in METRICS:
        of = opts.signature_fields(m)
        sigs[m] = Signature("embed").with_fields(metric=m, preset=of.pop("preset"), **vec_fields, **of)
    summaries = {m: summarize(m, per_pair[m]) for m in METRICS}
    return EmbeddingResult(opts, per_pair, summaries, counts, sigs, vectors.identity_json())


def _sentence_reductions(matrix: np.ndarray, rows: np.ndarray, offsets: np.ndarray, lengths: np.ndarray):
    """Per sentence: sum, max and min of its token vectors (zeros for a sentence without tokens).

    Sentences are grouped by length, so each group is one dense (g, L, d) gather reduced over axis 1
    (``ufunc.reduceat`` over rows of a 2-D array is several times slower)."""
    ns, d = len(lengths), matrix.shape[1]
    # float32 vectors are gathered as float32 (half the memory traffic); widening to float64 is exact
    source = matrix.astype(np.float32) if np.array_equal(matrix.astype(np.float32), matrix) else matrix
    sums = np.zeros((ns, d))
    maxs = np.zeros((ns, d))
    mins = np.zeros((ns, d))
    order = np.argsort(lengths, kind="stable")
    sl = lengths[order]
    bounds = np.flatnonzero(np.diff(sl)) + 1
    for a, b in zip(np.concatenate([[0], bounds]).tolist(), np.concatenate([bounds, [ns]]).tolist()):
        n = int(sl[a])
        if n == 0:
            continue
        step = max(1, _CHUNK_ELEMS // (n * d))
        ar = np.arange(n)
        for c in range(a, b, step):
            sel = order[c:min(c + step, b)]
            block = source[rows[offsets[sel][:, None] + ar]]  # (g, n, d) in the vectors' own dtype
            sums[sel] = block.sum(axis=1, dtype=np.float64)  # each float32 widened exactly, summed in float64
            maxs[sel] = block.max(axis=1)  # max/min are exact in any float type
            mins[sel] = block.min(axis=1)
    return sums, maxs, mins


def _extrema(maxs: np.ndarray, mins: np.ndarray, tie: str) -> np.ndarray:
    """Per dimension: max if max > |min|, min if |min| > max; a tie goes to ``tie`` (nlg-eval: min, and a
    dimension whose min is exactly 0 gives 0)."""
    amin = np.abs(mins)
    if tie == "max":
        out = np.where(amin > maxs, mins, maxs)
    else:
        out = np.where(maxs > amin, maxs, mins)
    if tie == "nlg-eval":
        out[mins == 0] = 0.0
    return out


def _rowwise_cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    dot = np.einsum("ij,ij->i", a, b)
    den = np.sqrt(np.einsum("ij,ij->i", a, a) * np.einsum("ij,ij->i", b, b))
    out = np.zeros(len(dot))
    np.divide(dot, den, out=out, where=den > 0)
    return out


def _greedy(matrix, rows, offsets, lengths, ph, pr, both, sim: str) -> np.ndarray:
    """Greedy matching of every pair with both sides non-empty (others get 0), grouped by lengths."""
    out = np.zeros(len(ph))
    if sim == "cosine":
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        vecs = np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
    else:
        vecs = matrix
    d = vecs.shape[1]
    pairs = np.flatnonzero(both)
    if not len(pairs):
        return out
    lh, lr = lengths[ph[pairs]], lengths[pr[pairs]]
    key = lh * (int(lr.max()) + 1) + lr
    order = np.argsort(key, kind="stable")
    pairs, lh, lr, key = pairs[order], lh[order], lr[order], key[order]
    bounds = np.flatnonzero(np.diff(key)) + 1
    starts = np.concatenate([[0], bounds])
    ends = np.concatenate([bounds, [len(pairs)]])
    for a, b in zip(starts.tolist(), ends.tolist()):
        nh, nr = int(lh[a]), int(lr[a])
        step = max(1, _CHUNK_ELEMS // (nh * nr + (nh + nr) * d))
        ar_h, ar_r = np.arange(nh), np.arange(nr)
        for c in range(a, b, step):
            p = pairs[c:min(c + step, b)]  # never past this group: the next one has other lengths
            H = vecs[rows[offsets[ph[p]][:, None] + ar_h]]  # (g, nh, d)
            R = vecs[rows[offsets[pr[p]][:, None] + ar_r]]  # (g, nr, d)
            S = np.matmul(H, R.transpose(0, 2, 1))  # (g, nh, nr)
            best_h = S.max(axis=2)  # each hypothesis token's best reference token
            best_r = S.max(axis=1)
            if sim == "dot":  # the hed-dlg script's similarity row starts with a zero column
                np.maximum(best_h, 0.0, out=best_h)
                np.maximum(best_r, 0.0, out=best_r)
            out[p] = (best_h.mean(axis=1) + best_r.mean(axis=1)) / 2
    return out


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


def _empty_error(empty_h, empty_r, owner, ref_counts, ref_lines) -> None:
    bad = np.flatnonzero(empty_h | empty_r)[0]
    i = int(owner[bad])
    if empty_h[bad]:
        raise UsageError(f"hypothesis line {i + 1} has no word with a vector (empty policy 'error')")
    j = int(bad - (np.cumsum(ref_counts)[i] - ref_counts[i]))
    where = f"reference file {j + 1} line {ref_lines[i][j] if ref_lines else i + 1}"
    raise UsageError(f"{where} has no word with a vector (empty policy 'error')")


# ---- registry -----------------------------------------------------------------------------------------
def registry_options(preset: str = DEFAULT_PRESET) -> EmbeddingOptions:
    """Options for the registry's text metrics: the preset, with an empty side scoring 0 (items stay aligned)."""
    return options_for(preset, empty="zero")


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
