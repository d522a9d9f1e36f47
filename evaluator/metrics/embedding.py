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

Vectorisation (no Python loop per text, token or pair on the hot path for the whitespace and space tokenizers):
the corpus is split at the byte level in chunks of about 4 MB (:func:`corpus_tokens`) and every token is numbered
by one hash-table pass; token numbers map to rows of the (subset) vector matrix with one ``take``. Pairs are
sorted by (hypothesis length, reference length) and cut into blocks of about 2^18 gathered numbers; a block
gathers each side's token vectors once, position-major ``(token, pair, dim)``, and gets sums, maxima and minima
by reductions over the token axis, and every greedy cosine from one batched matrix product of the raw vectors
scaled by inverse norms (:func:`_pair_scores`). Vectors are gathered in their own dtype (float32 widens exactly);
computation is in float64. Values equal a per-pair loop over the definitions to about 1e-15.
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

    # Sentence k: hypotheses first, then every reference in order (no de-duplication: hashing 200,000 texts
    # costs more than it saves, and every later step is linear in the tokens anyway).
    flat_refs = list(chain.from_iterable(refs))
    texts = [*hyps, *flat_refs]
    n_h = len(hyps)
    words, tok_word, raw_lengths = corpus_tokens(texts, opts)

    if vectors is None:
        from dialeval.vectors import load_vectors

        vectors = load_vectors("default", words=words, need_mean=opts.oov == "mean")
    word_rows = vectors.rows(words)  # row in vectors.matrix, -1 when unknown
    matrix = vectors.matrix
    oov_row = -1
    if opts.oov in ("mean", "zero"):
        extra = vectors.mean_vector() if opts.oov == "mean" else np.zeros(matrix.shape[1])
        matrix = np.vstack([matrix.astype(np.float64), np.asarray(extra, np.float64)[None, :]])
        oov_row = len(matrix) - 1
    if not np.issubdtype(matrix.dtype, np.floating) or matrix.dtype.itemsize > 8:
        matrix = matrix.astype(np.float64)
    rows = word_rows.astype(np.int32).take(tok_word)  # row of every token (int32: half the memory traffic)
    n_tokens = len(rows)
    n_oov = 0
    if n_tokens:
        known = rows >= 0
        n_oov = int(n_tokens - np.count_nonzero(known))
    if n_oov and opts.oov == "skip":
        lengths = raw_lengths.copy()
        nonempty = np.flatnonzero(raw_lengths)
        raw_starts = np.cumsum(raw_lengths) - raw_lengths
        lengths[nonempty] -= np.add.reduceat(~known, raw_starts[nonempty])  # OOV tokens per text
        rows = rows[known]
    elif n_oov:
        rows[~known] = oov_row
        lengths = raw_lengths
    else:
        lengths = raw_lengths
    lengths = lengths.astype(np.int64, copy=False)
    offsets = np.zeros(len(lengths) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    starts = offsets[:-1]

    ph = np.repeat(np.arange(n_h), ref_counts) if len(flat_refs) != n_h else np.arange(n_h)
    pr = np.arange(n_h, len(texts))
    empty_h = lengths[ph] == 0
    empty_r = lengths[pr] == 0
    both = ~(empty_h | empty_r)
    if opts.empty == "error" and not both.all():
        owner = np.repeat(np.arange(n_h), ref_counts)
        _empty_error(empty_h, empty_r, owner, ref_counts, ref_lines)

    raw = _pair_scores(matrix, rows, starts, lengths, ph, pr, both, opts)
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
        "references": len(flat_refs),
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
# str.split() splits on these ASCII bytes, and on the non-ASCII characters U+0085, U+00A0, U+1680, U+2000-U+200A,
# U+2028, U+2029, U+202F, U+205F and U+3000 (str.isspace()), whose UTF-8 forms start with C2, E1, E2 or E3.
_ASCII_SPACE = b"\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f "
_LEADS = b"\xc2\xe1\xe2\xe3"
# bytes.translate tables: separator -> 0, other -> 1 (whitespace: a possible lead of a non-ASCII space -> 2)
_WS_TABLE = bytes(0 if i in _ASCII_SPACE else 2 if i in _LEADS else 1 for i in range(256))
_SP_TABLE = bytes(0 if i == 0x20 else 1 for i in range(256))
_LOW_MASKS = np.array([(1 << (8 * k)) - 1 for k in range(8)] + [(1 << 64) - 1], dtype=np.uint64)
_LONG = 16  # tokens of at most this many bytes are keyed by their bytes (two uint64), longer ones by a dict


def corpus_tokens(texts: list[str], opts: EmbeddingOptions) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Tokenise every text: ``(words, token_word, lengths)`` with ``words`` the distinct tokens, ``token_word[t]``
    the index in ``words`` of token t (all tokens of all texts, in order) and ``lengths[k]`` the number of tokens
    of text k.

    The whitespace and space tokenizers run on the corpus at the byte level, in chunks of about 4 MB: the UTF-8
    texts joined by spaces, one ``bytes.translate`` marks separator bytes, one ``flatnonzero`` where a mark
    differs from the previous one finds every token's start and end; each token is keyed by its length and its
    bytes read as two little-endian integers (tokens over 16 bytes by a dict), and hash-table passes
    (``pandas.factorize``, per chunk, then over the chunks' distinct keys) number the keys, checked exactly
    against each number's first token. This splits exactly where ``str.split()`` / ``str.split(" ")`` splits
    each text; a corpus holding a non-ASCII whitespace character (or a lone surrogate) takes the per-text path,
    like the regex and treebank tokenizers."""
    kinds = set(map(type, texts))
    if not all(issubclass(k, str) for k in kinds):
        bad = next(t for t in texts if not isinstance(t, str))
        raise UsageError(f"texts must be strings, not {type(bad).__name__}")
    if opts.lowercase:
        texts = list(map(str.lower, texts))
    if opts.tokenizer in ("whitespace", "space"):
        if opts.tokenizer == "space":
            texts = list(map(str.strip, texts))  # the hed-dlg script strips, then splits on " " only
        got = _split_bytes(texts, opts.tokenizer == "whitespace")
        if got is not None:
            return got
    tok = tokenizer_function(opts.tokenizer)
    toks = list(map(tok, texts))
    lengths = np.fromiter(map(len, toks), np.int64, len(toks))
    flat = list(chain.from_iterable(toks))
    words = list(dict.fromkeys(flat))
    word_id = dict(zip(words, range(len(words))))
    return words, np.fromiter(map(word_id.__getitem__, flat), np.int64, len(flat)), lengths


_CHUNK_BYTES = 1 << 22  # texts are split in chunks of about 4 MB: every temporary is reused, never faulted in anew


def _split_bytes(texts: list[str], whitespace: bool):
    """The byte-level split (see :func:`corpus_tokens`); None when the per-text path must be taken.

    Chunk by chunk: tokens keyed and numbered within the chunk; then the chunks' distinct keys are numbered
    once more, together, which gives the corpus-wide word numbers (int32)."""
    nchars = np.fromiter(map(len, texts), np.int64, len(texts))
    ends = np.cumsum(nchars + 1)
    cuts = [0]
    while cuts[-1] < len(texts):  # whole texts, about _CHUNK_BYTES characters each
        cuts.append(max(cuts[-1] + 1, int(np.searchsorted(ends, ends[cuts[-1]] - nchars[cuts[-1]] + _CHUNK_BYTES))))
    long_ids: dict[bytes, int] = {}
    parts = []
    for a, b in zip(cuts[:-1], cuts[1:]):
        got = _split_chunk(texts[a:b], nchars[a:b], whitespace, long_ids)
        if got is None:
            return None
        parts.append(got)
    lengths = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, np.int64)
    if not parts or not any(len(p[1]) for p in parts):
        return [], np.zeros(0, np.int32), lengths
    # the chunks' distinct keys (hash, k0, k1, size, bytes), numbered together
    keys = [np.concatenate([p[2][i] for p in parts]) for i in range(4)]
    spelled = [w for p in parts for w in p[3]]
    import pandas as pd

    gcodes, guniq = pd.factorize(keys[0])
    first = _first_occurrence(gcodes, len(guniq))
    if not all(np.array_equal(k[first].take(gcodes), k) for k in keys[1:]):
        return None  # a hash collision between distinct tokens
    words = [spelled[i].decode("utf-8") for i in first.tolist()]
    gcodes = gcodes.astype(np.int32)
    offset = 0
    token_word = []
    for p in parts:
        u = len(p[3])
        token_word.append(gcodes[offset:offset + u].take(p[1]))
        offset += u
    return words, np.concatenate(token_word), lengths


def _first_occurrence(codes: np.ndarray, n_codes: int) -> np.ndarray:
    first = np.empty(n_codes, np.int64)
    first[codes[::-1]] = np.arange(len(codes) - 1, -1, -1)
    return first


def _split_chunk(texts: list[str], nchars: np.ndarray, whitespace: bool, long_ids: dict[bytes, int]):
    """One chunk: (lengths, token codes within the chunk, keys of the chunk's distinct tokens, their bytes)."""
    joined = " ".join(texts)
    try:
        body = joined.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: Python's own string handling
        return None
    text_start = np.zeros(len(texts), np.int64)  # in characters, then in bytes, after the leading separator
    if len(texts) > 1:
        np.cumsum(nchars[:-1] + 1, out=text_start[1:])
    if len(body) != len(joined):  # non-ASCII: offsets from each text's own UTF-8 length
        nbytes = np.fromiter(map(len, map(str.encode, texts)), np.int64, len(texts))
        if len(texts) > 1:
            np.cumsum(nbytes[:-1] + 1, out=text_start[1:])
    del joined
    text_start += 1
    # one separator before, and enough after for the 16-byte key reads of the last token
    buf = b"".join([b" ", body, b" " * (_LONG + 1)])
    del body
    marks = buf.translate(_WS_TABLE if whitespace else _SP_TABLE)
    if whitespace and marks.find(2) >= 0:  # a byte that may start a non-ASCII space: look closer
        kind = np.frombuffer(marks, np.uint8)
        if _has_unicode_space(np.frombuffer(buf, np.uint8), np.flatnonzero(kind == 2)):
            return None
        flags = kind.astype(bool)
    else:
        flags = np.frombuffer(marks, np.bool_)  # 0 or 1: a valid bool view (bool arrays have fast paths)
    edges = np.flatnonzero(flags[1:] != flags[:-1])  # token start - 1, token end - 1, alternately
    del flags, marks
    edges += 1
    start, end = edges[0::2], edges[1::2]
    n_tok = len(start)
    lengths = np.diff(np.append(np.searchsorted(start, text_start), n_tok))
    if n_tok == 0:
        empty = np.zeros(0, np.uint64)
        return lengths, np.zeros(0, np.int64), (empty, empty, empty, empty), []

    # key of a token of at most 16 bytes: its length and its bytes as two little-endian integers (zero-padded)
    size = (end - start).astype(np.uint64)
    win = np.ndarray((len(buf) - 7,), dtype="<u8", buffer=buf, strides=(1,))
    k0 = win[start]
    k0 &= _LOW_MASKS.take(np.minimum(size, 8))
    k1 = np.zeros(n_tok, np.uint64)
    over8 = np.flatnonzero(size > 8)
    if len(over8):
        k1[over8] = win[start[over8] + 8] & _LOW_MASKS.take(np.minimum(size[over8] - 8, 8))
        long_tok = over8[size[over8] > _LONG]
        if len(long_tok):  # rare (URLs, ...): numbered by a dict, in a key space of their own (length 255)
            k0[long_tok] = [long_ids.setdefault(buf[s:e], len(long_ids))
                            for s, e in zip(start[long_tok].tolist(), end[long_tok].tolist())]
            k1[long_tok] = 0
            size[long_tok] = 255
    h = size * np.uint64(0x165667B19E3779F9)
    h ^= k0 * np.uint64(0x9E3779B97F4A7C15)
    h ^= k1 * np.uint64(0xC2B2AE3D27D4EB4F)
    import pandas as pd

    codes, uniq = pd.factorize(h)
    first = _first_occurrence(codes, len(uniq))
    # a hash collision (two distinct tokens, one number) would show here: then take the per-text path
    for key in (k0, k1, size):
        if not np.array_equal(key[first].take(codes), key):
            return None
    spelled = [buf[s:e] for s, e in zip(start[first].tolist(), end[first].tolist())]
    return lengths, codes, (h[first], k0[first], k1[first], size[first]), spelled


def _has_unicode_space(data: np.ndarray, lead: np.ndarray) -> bool:
    """Whether a UTF-8 non-ASCII whitespace character starts at one of the ``lead`` positions of ``data``."""
    c0, c1, c2 = data[lead], data[lead + 1], data[lead + 2]
    hit = (c0 == 0xC2) & ((c1 == 0x85) | (c1 == 0xA0))
    hit |= (c0 == 0xE1) & (c1 == 0x9A) & (c2 == 0x80)
    hit |= (c0 == 0xE2) & (c1 == 0x80) & (((c2 >= 0x80) & (c2 <= 0x8A)) | (c2 == 0xA8) | (c2 == 0xA9) | (c2 == 0xAF))
    hit |= (c0 == 0xE2) & (c1 == 0x81) & (c2 == 0x9F)
    hit |= (c0 == 0xE3) & (c1 == 0x80) & (c2 == 0x80)
    return bool(hit.any())


# ---- pair scores --------------------------------------------------------------------------------------
_BLOCK = 1 << 18  # gathered elements per block: temporaries stay in cache and are reused by the allocator


def _pair_scores(matrix: np.ndarray, rows: np.ndarray, starts: np.ndarray, lengths: np.ndarray, ph: np.ndarray,
                 pr: np.ndarray, both: np.ndarray, opts: EmbeddingOptions) -> dict[str, np.ndarray]:
    """The three raw scores of every pair with both sides non-empty (others get 0).

    Pairs sorted by (hypothesis length, reference length) are cut into blocks. In a block each side's token
    vectors are gathered once, position-major: ``X[j, p]`` is token j of pair p's sentence, a sentence shorter
    than the block's widest repeating its last token (a repeat changes no maximum or minimum; sums and
    means leave the repeats out). Reductions over token positions then run over whole contiguous (pairs x dim)
    planes. Sums give the average; max and min the extrema; one batched matrix product of the raw vectors,
    scaled by the inverse norms, gives every cosine for greedy matching. The vectors' own dtype is gathered
    (float32 widens exactly) and everything is computed in float64."""
    n_pairs = len(ph)
    out = {m: np.zeros(n_pairs) for m in METRICS}
    pairs = np.flatnonzero(both)
    if not len(pairs):
        return out
    if matrix.dtype != np.float32:
        matrix = matrix.astype(np.float64, copy=False)
    m64 = matrix.astype(np.float64, copy=False)
    norms = np.sqrt(np.einsum("ij,ij->i", m64, m64))
    inv_norm = np.zeros(len(m64))
    np.divide(1.0, norms, out=inv_norm, where=norms > 0)  # a zero vector has cosine 0 with everything
    cosine = opts.greedy == "cosine"
    d = matrix.shape[1]

    lh, lr = lengths[ph[pairs]], lengths[pr[pairs]]
    order = np.lexsort((lr, lh))
    pairs, lh, lr = pairs[order], lh[order], lr[order]
    sh, sr = starts[ph[pairs]], starts[pr[pairs]]
    bounds = _block_bounds(lh, lr, d)
    avg, ext, gre = out["embedding-average"], out["vector-extrema"], out["greedy-matching"]

    def block(a: int, b: int) -> None:
        g = b - a
        h_len, r_len = lh[a:b], lr[a:b]
        hi = np.empty((2, g, d), matrix.dtype)  # per side: max and min over the tokens
        lo = np.empty((2, g, d), matrix.dtype)
        sentence = np.empty((2, 2, g, d))  # [mean, extrema] x [hypothesis, reference]
        mean = sentence[0]
        vecs, invs, pads = [], [], []
        for k, (s0, n) in enumerate(((sh[a:b], h_len), (sr[a:b], r_len))):
            width, shortest = int(n.max()), int(n.min())
            pos = np.arange(width)[:, None]
            idx = rows[s0 + (pos if shortest == width else np.minimum(pos, n - 1))]  # (width, g)
            x = np.take(matrix, idx, axis=0)  # (width, g, d)
            np.maximum.reduce(x, axis=0, out=hi[k])
            np.minimum.reduce(x, axis=0, out=lo[k])
            x = x.astype(np.float64, copy=False)
            pad = pos >= n if shortest < width else None  # (width, g): a repeated token
            np.add.reduce(x if pad is None else np.where(pad[:, :, None], 0.0, x), axis=0, out=mean[k])
            mean[k] /= n[:, None]
            vecs.append(x)
            invs.append(np.take(inv_norm, idx) if cosine else None)
            pads.append(pad)
        _extrema(hi, lo, opts.extrema_tie, out=sentence[1])
        cos = _rowwise_cosine(sentence[:, 0], sentence[:, 1])
        avg[pairs[a:b]] = cos[0]
        ext[pairs[a:b]] = cos[1]
        # sim[i, j, p] = similarity of token i of p's hypothesis and token j of p's reference; pairs innermost,
        # so both maxima below reduce over whole contiguous planes
        sim = np.matmul(vecs[0].transpose(1, 0, 2), vecs[1].transpose(1, 2, 0)).transpose(1, 2, 0)
        if cosine:
            sim = np.multiply(sim, invs[0][:, None, :], order="C")
            sim *= invs[1][None, :, :]
        else:
            sim = np.ascontiguousarray(sim)
        best_h = np.maximum.reduce(sim, axis=1)  # (wh, g): each hypothesis token's best reference token
        best_r = np.maximum.reduce(sim, axis=0)  # (wr, g)
        if not cosine:  # the hed-dlg script's similarity row starts with a zero column
            np.maximum(best_h, 0.0, out=best_h)
            np.maximum(best_r, 0.0, out=best_r)
        for best, pad in ((best_h, pads[0]), (best_r, pads[1])):
            if pad is not None:
                best[pad] = 0.0
        gre[pairs[a:b]] = (np.add.reduce(best_h, axis=0) / h_len + np.add.reduce(best_r, axis=0) / r_len) / 2

    for a, b in zip(bounds[:-1], bounds[1:]):
        block(a, b)
    return out


def _block_bounds(lh: np.ndarray, lr: np.ndarray, d: int) -> list[int]:
    """Cut pairs sorted by (hypothesis length, reference length) into blocks of about ``_BLOCK`` gathered
    elements. A block never spans two large groups of equal lengths (so it needs no padding); small groups
    are merged, padded to the block's widest."""
    n = len(lh)
    change = np.flatnonzero((np.diff(lh) != 0) | (np.diff(lr) != 0)) + 1
    group_start = np.concatenate([[0], change]).tolist()
    group_end = [*group_start[1:], n]
    bounds = [0]
    for a, b in zip(group_start, group_end):
        per = max(1, _BLOCK // ((int(lh[a]) + int(lr[a])) * d))
        if b - a >= 32 and bounds[-1] != a:  # a large group starts its own blocks
            bounds.append(a)
        while b - bounds[-1] > per:
            bounds.append(bounds[-1] + per)
        if b - a >= 32:
            bounds.append(b)
    if bounds[-1] != n:
        bounds.append(n)
    return bounds


def _extrema(maxs: np.ndarray, mins: np.ndarray, tie: str, out: np.ndarray | None = None) -> np.ndarray:
    """Per dimension: max if max > |min|, min if |min| > max; a tie goes to ``tie`` (nlg-eval: min, and a
    dimension whose min is exactly 0 gives 0). ``out`` may have a wider dtype (float32 widens exactly)."""
    if out is None:
        out = np.empty(np.broadcast_shapes(maxs.shape, mins.shape), np.result_type(maxs, mins))
    amin = np.abs(mins)
    if tie == "max":
        np.copyto(out, maxs)
        np.copyto(out, mins, where=amin > maxs)
    else:
        np.copyto(out, mins)
        np.copyto(out, maxs, where=maxs > amin)
    if tie == "nlg-eval":
        out[mins == 0] = 0.0
    return out


def _rowwise_cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """cos(a[..., k, :], b[..., k, :]) per row; 0 when either is the zero vector."""
    dot = np.einsum("...i,...i->...", a, b)
    den = np.sqrt(np.einsum("...i,...i->...", a, a) * np.einsum("...i,...i->...", b, b))
    out = np.zeros(dot.shape)
    np.divide(dot, den, out=out, where=den > 0)
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
