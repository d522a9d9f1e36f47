"""Compiled kernels of the embedding metrics (numba): the corpus split and the per-pair scores.

Why compiled: the per-pair work (about 15 x 15 token cosines of 50 dimensions) is too small for numpy to run
efficiently one call per pair, and batching pairs in numpy costs gathers and temporaries many times the
arithmetic (see ``benchmarks/bench_embedding.py``). numba compiles these loops once, caches the machine code
(``cache=True``) in a folder dialeval controls, seeded at install (:mod:`dialeval.metrics.kernel_cache`; numba
checks the cached code against a hash of this file, its own version, the CPU and the argument types and
recompiles on any change), and releases the GIL (``nogil=True``) so disjoint ranges of pairs run
on several threads. The innermost steps of the pair kernel are LLVM vector code written through numba
intrinsics (section "explicit SIMD"); they live in this file so that a cache keyed on it never outlives a
change to them.

Everything here is plain arithmetic on arrays that :mod:`dialeval.metrics.embedding` prepares and checks; no
function here raises on user input.

Import cost that is numba's, not ours (measured with ``python -X importtime``, numba 0.68, scipy 1.17): the
first kernel call, compiled or from the cache, makes numba's CPU target load its numpy support
(``numba.core.cpu.CPUContext.load_additional_registries`` imports ``numba.np.arraymath``, whose module level calls
``numba.np.linalg.ensure_blas()``, which imports ``scipy.linalg.cython_blas``): all of scipy.linalg, numpy.f2py
included through scipy's array API layer, about 0.3-0.4 s on a loaded 2-core machine (numpy.f2py 0.15 s of it).
Nothing here uses BLAS, but the import is numba's and unconditional; this module is itself imported only when a
text metric is computed, so other commands never pay it.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit
from numba.core import cgutils, types
from numba.extending import intrinsic

from dialeval.metrics.kernel_cache import install_locator

install_locator()  # before any @njit below: numba picks each function's cache folder when it is decorated

# Byte classes of the corpus split. A text is the UTF-8 of one string; texts are joined by NUL (the caller
# checks that no text holds one). TOKEN: part of a token; SEP: an ASCII separator; TEXT_END: the NUL between
# two texts; LEAD: may start a multi-byte whitespace character (only with the whitespace tokenizer).
TOKEN, SEP, TEXT_END, LEAD = 0, 1, 2, 3
# str.split() splits on these ASCII characters (str.isspace()); the non-ASCII ones are checked in _space_len.
_ASCII_SPACE = b"\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f "


def byte_classes(whitespace: bool) -> np.ndarray:
    """The 256-entry class table: ``whitespace`` for ``str.split()``, else ``split(" ")``."""
    table = np.full(256, TOKEN, np.uint8)
    table[0] = TEXT_END
    if whitespace:
        table[list(_ASCII_SPACE)] = SEP
        table[[0xC2, 0xE1, 0xE2, 0xE3]] = LEAD
    else:
        table[0x20] = SEP
    return table


@njit(cache=True, nogil=True)
def _space_len(buf, i, n):
    """Byte length of the non-ASCII whitespace character at ``buf[i]`` (a LEAD byte), 0 when there is none.

    U+0085, U+00A0 (C2 85, C2 A0); U+1680 (E1 9A 80); U+2000-U+200A, U+2028, U+2029, U+202F (E2 80 xx);
    U+205F (E2 81 9F); U+3000 (E3 80 80): every non-ASCII character for which str.isspace() is true."""
    c0 = buf[i]
    c1 = buf[i + 1] if i + 1 < n else 0
    if c0 == 0xC2:
        return 2 if (c1 == 0x85 or c1 == 0xA0) else 0
    c2 = buf[i + 2] if i + 2 < n else 0
    if c0 == 0xE1:
        return 3 if (c1 == 0x9A and c2 == 0x80) else 0
    if c0 == 0xE2:
        if c1 == 0x80 and ((0x80 <= c2 <= 0x8A) or c2 == 0xA8 or c2 == 0xA9 or c2 == 0xAF):
            return 3
        return 3 if (c1 == 0x81 and c2 == 0x9F) else 0
    if c0 == 0xE3:
        return 3 if (c1 == 0x80 and c2 == 0x80) else 0
    return 0


PADDING = 80  # NUL bytes after the last text: a 64-byte block's 8-byte reads from any position up to the
# end stay in the buffer


def word_view(buf: np.ndarray) -> np.ndarray:
    """Every 8-byte window of ``buf`` as a little-endian uint64, without a copy (byte strides)."""
    return np.ndarray((len(buf) - 7,), dtype="<u8", buffer=buf, strides=(1,))


def new_vocabulary():
    """The empty state :func:`split_chunk` numbers spellings in: the hash table (one uint64 per slot: the hash's
    low 32 bits as a tag, then the spelling's number + 1; 0 = free; 8 bytes a slot keep it cache-resident; the
    slot is the hash's top bits, see :func:`_slot_shift`), the
    spellings' bytes, each spelling's end in them and first 16 bytes (two words), and the counts (words, bytes in use)."""
    return (np.zeros(4096, np.uint64), np.empty(1 << 16, np.uint8), np.empty(1024, np.int64),
            np.empty((1024, 2), np.uint64), np.zeros(2, np.int64))


@njit(cache=True, nogil=True)
def split_chunk(buf, words, n_texts, classes, table, spellings, word_end, word_key, counts):
    """Split ``n_texts`` NUL-joined UTF-8 texts ``buf`` into tokens and number their spellings. ``buf`` ends
    with ``PADDING`` NUL bytes (not part of any text); ``words[i]`` is the 8 bytes at ``buf[i]`` as one
    little-endian uint64 (a view with byte strides, see :func:`word_view`).

    Returns ``(token_word, lengths, ok, table, spellings, word_end, word_key)``: ``token_word[t]`` (int32) is token t's
    spelling number, ``lengths[k]`` counts text k's tokens, ``ok`` is False (and nothing split) when some text
    holds NUL, the separator, then the vocabulary state (see
    :func:`new_vocabulary`; arrays are replaced when they grow, ``counts`` is updated in place). Numbers carry
    on across chunks fed the same state, in order of first occurrence; spelling w's bytes are
    ``spellings[word_end[w - 1] : word_end[w]]`` (0 for w = 0). Spellings are numbered through an open-addressing
    hash table whose hits are confirmed exactly (the first 8 bytes in the table, the rest against a compact copy
    of each spelling), so two spellings never share a number. :func:`_split_run` does the work and stops when a
    table or buffer must grow (growing here keeps reallocation out of its loop)."""
    token_word = np.empty(len(buf) // 2 + 1, np.int32)
    lengths = np.zeros(n_texts, np.int64)
    state = np.zeros(5, np.int64)  # position, text, tokens, words, spelling bytes in use
    state[3] = counts[0]
    state[4] = counts[1]
    while True:
        need = _split_run(buf, words, classes, token_word, lengths, table, spellings, word_end, word_key, state)
        if need == 0:
            break
        if need < 0:
            return token_word[:0], lengths[:0], False, table, spellings, word_end, word_key
        if need > len(spellings) - state[4]:
            spellings = _grow(spellings, state[4] + need)
        if state[3] == len(word_end):
            # grown as its bytes, with an int64 bound (the literal 0 is a type of its own): one _grow machine
            # code for both buffers, where int64 elements and the constant 0 compiled and cached a 32 KB second one
            word_end = _grow(word_end.view(np.uint8), np.int64(0)).view(np.int64)
            word_key = _grow_rows(word_key)
        if 3 * state[3] + 3 > len(table):
            table = _rehash(table, word_end, word_key, spellings)
    counts[0] = state[3]
    counts[1] = state[4]
    # a view: the untouched tail of token_word was never faulted in, so it costs address space, not memory
    return token_word[:state[2]], lengths, True, table, spellings, word_end, word_key


@njit(cache=True, nogil=True)
def _separator_bits(x, whitespace):
    """The separator bytes of ``x`` (8 bytes, little-endian) as 8 bits, or -1 when some byte needs the class
    table: whitespace: NUL and the ASCII bytes below 0x21 are exact only when each is NUL or a space, and a
    non-ASCII byte may start a whitespace character; space: NUL and the space, always exact."""
    low7 = x & _LOW7
    zero = ~((low7 + _LOW7) | x) & _HIGH  # bytes == 0, exact per byte (no carry crosses a byte)
    y = x ^ _SPACES
    space = ~(((y & _LOW7) + _LOW7) | y) & _HIGH  # bytes == 0x20
    if whitespace:
        below = ~((low7 + _BELOW_21) | x) & _HIGH  # ASCII bytes < 0x21
        if (below != (zero | space)) or (x & _HIGH) != 0:
            return np.int64(-1)
    return np.int64((((zero | space) >> np.uint64(7)) * _GATHER_BITS) >> np.uint64(56))


@njit(cache=True, nogil=True)
def _split_run(buf, words, classes, token_word, lengths, table, spellings, word_end, word_key, state):
    """The split from ``state`` on; 0 at the end, -1 when a text holds NUL, else the bytes a new spelling needs
    (room is short in ``spellings``, ``word_end`` or the table: kept at most 1/3 full, which keeps probe
    sequences short: at 2/3 the corpus split took 18 % longer) with ``state`` at that token's start.

    64 bytes at a time: a bit mask of separators (8 bytes per SWAR step, :func:`_separator_bits`; the class
    table byte by byte only for blocks with non-ASCII or unusual control bytes), then tokens from its
    transitions (one tzcnt per start and per end), NULs counted with popcnt."""
    n = len(buf) - PADDING
    mask = len(table) - 1
    shift = _slot_shift(len(table))
    whitespace = classes[0x09] == SEP
    p, text, n_tok, n_words, used = state[0], state[1], state[2], state[3], state[4]
    n_texts = len(lengths)
    prev_token = np.uint64(0)  # 1: the byte before p is a token byte (p is always a token start or 0 here)
    pending = np.int64(-1)  # the start of a token that runs into this block
    forced = 0  # leading bytes of this block that continue a multi-byte space of the previous one
    while p <= n:
        sep = np.uint64(0)
        nul = np.uint64(0)
        slow = False
        for q in range(8):
            bits = _separator_bits(words[p + 8 * q], whitespace)
            if bits < 0:
                slow = True
                break
            sep |= np.uint64(bits) << np.uint64(8 * q)
        if slow or forced:
            sep = np.uint64(0)
            j = forced
            for q in range(forced):
                sep |= np.uint64(1) << np.uint64(q)
            forced = 0
            while j < 64:
                cls = classes[buf[p + j]]
                if cls == SEP or cls == TEXT_END:
                    sep |= np.uint64(1) << np.uint64(j)
                    j += 1
                elif cls == LEAD:
                    s = _space_len(buf, p + j, n)
                    if s == 0:
                        j += 1
                        continue
                    for q in range(s):
                        if j + q < 64:
                            sep |= np.uint64(1) << np.uint64(j + q)
                    if j + s > 64:
                        forced = j + s - 64
                    j += s
                else:
                    j += 1
        for q in range(8):  # NULs: text ends (exact per byte)
            x = words[p + 8 * q]
            z = ~(((x & _LOW7) + _LOW7) | x) & _HIGH
            nul |= ((z >> np.uint64(7)) * _GATHER_BITS >> np.uint64(56)) << np.uint64(8 * q)
        rest = n - p  # position n (a NUL) ends the last token; bytes after it are padding
        if rest < 63:
            keep = (np.uint64(1) << np.uint64(rest + 1)) - np.uint64(1)
            sep = (sep & keep) | (np.uint64(1) << np.uint64(rest))
            nul &= keep >> np.uint64(1)
        elif rest == 63:
            nul &= ~(np.uint64(1) << np.uint64(63))
            sep |= np.uint64(1) << np.uint64(63)
        if text + _bit_count(nul) >= n_texts:  # more NULs than text breaks: some text holds one
            return -1
        tok = ~sep
        if rest < 64:
            tok &= (np.uint64(1) << np.uint64(rest)) - np.uint64(1)
        before = (tok << np.uint64(1)) | prev_token
        starts = tok & ~before
        ends = sep & before
        while True:
            if pending < 0:
                if starts == 0:
                    break
                s = _trailing_zeros(starts)
                starts &= starts - np.uint64(1)
                pending = p + s
            if ends == 0:
                break
            e = _trailing_zeros(ends)
            ends &= ends - np.uint64(1)
            start = pending
            pending = -1
            t_text = text + _bit_count(nul & ((np.uint64(1) << np.uint64(e)) - np.uint64(1)))
            size = p + e - start
            k0 = words[start] & _mask(min(size, 8))
            k1 = words[start + 8] & _mask(min(max(size - 8, 0), 8))
            h = _start_hash(k0, k1, size)
            for q in range(16, size, 8):  # tokens over 16 bytes (rare)
                h ^= h >> np.uint64(32)
                h = (h ^ (words[start + q] & _mask(min(size - q, 8)))) * np.uint64(0xC2B2AE3D27D4EB4F)
            tag = h & np.uint64(0xFFFFFFFF)
            slot = np.int64(h >> shift)
            w = -1
            while table[slot] != 0:
                en = table[slot]
                if en >> np.uint64(32) == tag:
                    v = np.int64(en & np.uint64(0xFFFFFFFF)) - 1
                    if word_key[v, 0] == k0 and word_key[v, 1] == k1:
                        if size <= 16:
                            w = v
                            break
                        s0 = word_end[v - 1] if v > 0 else 0
                        if word_end[v] - s0 == size:
                            same = True
                            for q in range(16, size):
                                if spellings[s0 + q] != buf[start + q]:
                                    same = False
                                    break
                            if same:
                                w = v
                                break
                slot = (slot + 1) & mask
            if w < 0:  # a new spelling
                if used + size > len(spellings) or n_words == len(word_end) or 3 * n_words + 3 > len(table):
                    state[0], state[1], state[2], state[3], state[4] = start, t_text, n_tok, n_words, used
                    return max(size, 1)
                for k in range(size):
                    spellings[used + k] = buf[start + k]
                used += size
                w = n_words
                word_end[w] = used
                word_key[w, 0] = k0
                word_key[w, 1] = k1
                table[slot] = (tag << np.uint64(32)) | np.uint64(w + 1)
                n_words += 1
            token_word[n_tok] = w
            n_tok += 1
            lengths[t_text] += 1
        text += _bit_count(nul)
        prev_token = tok >> np.uint64(63)
        p += 64
    state[0], state[1], state[2], state[3], state[4] = p, text, n_tok, n_words, used
    return 0


# SWAR constants: every byte 0x7F, 0x20, 0x5F (0x80 - 0x21), 0x80; _GATHER_BITS moves the bit 0 of each byte
# to bit 56 + (byte index) when multiplied (the 8 products never overlap, so no carry disturbs the top byte)
_LOW7 = np.uint64(0x7F7F7F7F7F7F7F7F)
_SPACES = np.uint64(0x2020202020202020)
_BELOW_21 = np.uint64(0x5F5F5F5F5F5F5F5F)
_HIGH = np.uint64(0x8080808080808080)
_GATHER_BITS = np.uint64(0x0102040810204080)


@intrinsic
def _trailing_zeros(typingctx, x):
    """The index of the lowest set bit of a uint64 (64 when none): one tzcnt."""

    def codegen(context, builder, signature, args):
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 0))

    return types.int64(types.uint64), codegen


@intrinsic
def _bit_count(typingctx, x):
    """The number of set bits of a uint64: one popcnt."""

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return types.int64(types.uint64), codegen


@njit(cache=True, nogil=True)
def _mask(m):
    """The low ``m`` bytes (0 <= m <= 8) of a uint64 set, without a branch."""
    return ((np.uint64(1) << np.uint64((8 * m) & 63)) - np.uint64(1)) | (np.uint64(0) - np.uint64(m >> 3))


@njit(cache=True, nogil=True)
def _start_hash(k0, k1, size):
    h = (k0 ^ np.uint64(size)) * np.uint64(0x9E3779B97F4A7C15)
    h ^= h >> np.uint64(32)
    return (h ^ k1) * np.uint64(0xC2B2AE3D27D4EB4F)


@njit(cache=True, nogil=True)
def _spelling_hash(data, start, size):
    """The hash :func:`_split_run` computes for the ``size`` bytes at ``data[start]`` (read byte by byte)."""
    h = _start_hash(_bytes_at(data, start, min(size, 8)), _bytes_at(data, start + 8, min(max(size - 8, 0), 8)), size)
    for q in range(16, size, 8):
        h ^= h >> np.uint64(32)
        h = (h ^ _bytes_at(data, start + q, min(size - q, 8))) * np.uint64(0xC2B2AE3D27D4EB4F)
    return h


@njit(cache=True, nogil=True)
def _slot_shift(size):
    """A hash's slot in a table of ``size`` (a power of 2) slots is its top log2(size) bits: the last
    multiplication mixes every input bit into them (its low bits see only the low bits of its operands, so
    they make the 32-bit tag, a filter before the exact comparison, not the slot)."""
    bits = 0
    while (1 << bits) < size:
        bits += 1
    return np.uint64(64 - bits)


@njit(cache=True, nogil=True)
def _bytes_at(data, start, n):
    """``n`` bytes (0 <= n <= 8) at ``data[start]`` as a little-endian uint64, zero-padded."""
    k = np.uint64(0)
    for q in range(n):
        k |= np.uint64(data[start + q]) << np.uint64(8 * q)
    return k


@njit(cache=True, nogil=True)
def _rehash(table, word_end, word_key, spellings):
    """The table at twice the size (each spelling's hash recomputed from its bytes, as :func:`_split_run` does)."""
    out = np.zeros(2 * len(table), np.uint64)
    mask = len(out) - 1
    shift = _slot_shift(len(out))
    for q in range(len(table)):
        e = table[q]
        if e != 0:
            v = np.int64(e & np.uint64(0xFFFFFFFF)) - 1
            s0 = word_end[v - 1] if v > 0 else 0
            h = _spelling_hash(spellings, s0, word_end[v] - s0)
            s = np.int64(h >> shift)
            while out[s] != 0:
                s = (s + 1) & mask
            out[s] = e
    return out


@njit(cache=True, nogil=True)
def _grow(a, at_least):
    """``a`` (bytes: other buffers are grown as a byte view) in a buffer twice as long (at least ``at_least``).
    Plain loops: slice assignment compiles slowly."""
    out = np.empty(max(2 * len(a), at_least), a.dtype)
    for i in range(len(a)):
        out[i] = a[i]
    return out


@njit(cache=True, nogil=True)
def _grow_rows(a):
    """The rows of ``a`` in an array of twice as many."""
    out = np.empty((2 * a.shape[0], a.shape[1]), a.dtype)
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            out[i, j] = a[i, j]
    return out


@njit(cache=True, nogil=True)
def token_rows(token_word, word_rows, lengths, unknown_row, out, at):
    """Write the vector row of every token (``word_rows[token_word[t]]``) to ``out`` from ``at`` on; a token
    whose word has no row (-1) becomes ``unknown_row``, or is dropped when that is -1. Returns
    ``(new_lengths, n_unknown, end)``: each text's tokens after that, the unknown tokens, and where writing
    stopped (texts are written in order, so text k starts at ``at`` + the sum of the new lengths before it)."""
    new_lengths = np.empty(len(lengths), np.int64)
    t = 0
    o = at
    n_unknown = 0
    for k in range(len(lengths)):
        first = o
        for _ in range(lengths[k]):
            r = word_rows[token_word[t]]
            t += 1
            if r < 0:
                n_unknown += 1
                r = unknown_row
                if r < 0:
                    continue
            out[o] = r
            o += 1
        new_lengths[k] = o - first
    return new_lengths, n_unknown, o


@njit(cache=True, nogil=True)
def spelling_buffer(spellings, word_end, n_words):
    """The first ``n_words`` spellings of a vocabulary as texts for :func:`split_chunk`, laid out like a chunk:
    joined by NUL, then ``PADDING`` NULs. Splitting it with another vocabulary's state numbers these spellings in that vocabulary
    (each spelling is one token: it came out of the same split)."""
    size = word_end[n_words - 1] if n_words else 0
    out = np.zeros(size + max(n_words - 1, 0) + PADDING, np.uint8)
    o = 0
    s0 = 0
    for w in range(n_words):
        for q in range(s0, word_end[w]):
            out[o] = spellings[q]
            o += 1
        s0 = word_end[w]
        o += 1  # the NUL after it
    return out


# Extrema ties (EmbeddingOptions.extrema_tie) as kernel codes.
TIE_MAX, TIE_MIN, TIE_NLG_EVAL = 0, 1, 2

# The fast-math flags of the pair kernel and everything it calls: sums may be reordered (the d-long sums
# vectorise) and multiply-adds fused, but never 'nnan' or 'ninf': the kernels use -inf and +inf as the start
# of running maxima and minima and as the mark of padding, which those flags would let LLVM fold away. Every
# function the kernel calls names these flags itself, because numba gives a callee without its own the
# caller's, and caches whichever version compiled first.
_FAST = {"nsz", "arcp", "contract", "reassoc"}


@njit(cache=True, nogil=True, fastmath=_FAST)
def _extremum(mx, mn, tie):
    """max if max > |min|, min if |min| > max; a tie per ``tie`` (nlg-eval: min, and 0 where min == 0)."""
    if tie == TIE_MAX:
        e = mn if -mn > mx else mx
    else:
        e = mx if mx > -mn else mn
        if tie == TIE_NLG_EVAL and mn == 0.0:
            e = 0.0
    return e


CHUNK_ROWS = 4096
"""Tokens of a pair's longer side gathered at a time for greedy matching (a multiple of 4): a pair's copies take
O(shorter side + this) rows, not O(longer side), so one line of a million words with vectors costs a few MB
here, whatever the vectors' dimension. The shorter side holds at most ``sqrt(MAX_TOKEN_PAIRS)`` tokens (the
pair's token pairs are bounded), and a pair up to this long on both sides is one chunk, as it always was."""


@njit(cache=True, nogil=True, fastmath=_FAST)
def pair_scores(vec, inv_norm, d, rows, starts, lengths, hyp_of_pair, ref_of_pair, first, last, tie, cosine,
                floor_zero, out_avg, out_ext, out_gre):
    """Scores of pairs ``first`` .. ``last - 1`` into the three output arrays (a pair with an empty side: 0).

    ``vec``: the vectors in their own dtype (float32 widens exactly; every sum is in float64), ``d`` true
    columns padded with zeros to a multiple of 8; ``inv_norm``: 1 / |row| (0 for a zero row). Text k's tokens
    are ``rows[starts[k] : starts[k] + lengths[k]]``. ``tie``: a ``TIE_*`` code; ``cosine``: greedy matching by
    cosine, else by the raw dot product, each best match floored at 0 when ``floor_zero``.

    Per pair: each side's rows are copied (:func:`_gather`, scaled to unit length for cosine) while their
    sum, maximum and minimum per dimension are taken; average is cos(sum h, sum r) (the cosine of the means),
    extrema :func:`_extremum` per dimension then the cosine; greedy matching takes every token similarity in
    tiles (:func:`_tile_max`) that keep only each row's and each column's maximum. The tiles' rows are the
    hypothesis's tokens, its columns the reference's, except when the reference is the longer side and over
    :data:`CHUNK_ROWS` tokens (then the roles swap: each similarity is the same fused sum over the same
    dimensions, and maxima do not depend on order). The rows' side is copied :data:`CHUNK_ROWS` tokens at a
    time, its sums carried from chunk to chunk in the same order, so the numbers never depend on the chunks.
    Memory: the shorter side's copies and one chunk's, and one best match (8 bytes) per token of the longer."""
    a_width = 4  # rows' side, one chunk
    a_len = 4  # rows' side, whole (its best matches)
    b_width = 4  # columns' side, whole
    for p in range(first, last):
        hl = lengths[hyp_of_pair[p]]
        rl = lengths[ref_of_pair[p]]
        if rl > CHUNK_ROWS and rl > hl:
            hl, rl = rl, hl
        a_width = max(a_width, min(hl, CHUNK_ROWS))
        a_len = max(a_len, hl)
        b_width = max(b_width, rl)
    a_width = (a_width + 3) // 4 * 4
    a_len = (a_len + 3) // 4 * 4
    b_width = (b_width + 3) // 4 * 4
    cols = vec.shape[1]
    a_vecs = np.empty((a_width, cols))
    b_vecs = np.empty((b_width, cols))
    b_blocks = np.empty((b_width // 4, cols, 4))  # b_blocks[b, k, l] = b_vecs[4b + l, k]
    best_a = np.empty(a_len)
    best_b = np.empty(b_width)
    stats = np.empty((2, 3, cols))  # [hypothesis, reference] x [sum, max, min]
    for p in range(first, last):
        h = hyp_of_pair[p]
        r = ref_of_pair[p]
        hl = lengths[h]
        rl = lengths[r]
        if hl == 0 or rl == 0:
            out_avg[p] = 0.0
            out_ext[p] = 0.0
            out_gre[p] = 0.0
            continue
        swap = rl > CHUNK_ROWS and rl > hl
        a, al, sa, b, bl, sb = (r, rl, 1, h, hl, 0) if swap else (h, hl, 0, r, rl, 1)

        # greedy: the columns' tokens in blocks of 4, the last one padded with zero vectors (they never win a
        # maximum, see _tile_max_intrinsic); the rows' tokens chunk by chunk, 4 at a time, the last group as it is
        bp = (bl + 3) // 4 * 4
        _gather(vec, inv_norm, rows, starts[b], bl, cosine, stats[sb], b_vecs, False)
        for j in range(bl, bp):
            b_vecs[j, :] = 0.0
        _blocks_of_four(b_vecs, bp, d, b_blocks)
        for i in range((al + 3) // 4 * 4):
            best_a[i] = -np.inf
        for j in range(bp):
            best_b[j] = -np.inf
        n_blocks = bp // 4
        for c0 in range(0, al, CHUNK_ROWS):
            n = min(CHUNK_ROWS, al - c0)
            _gather(vec, inv_norm, rows, starts[a] + c0, n, cosine, stats[sa], a_vecs, c0 > 0)
            best = best_a[c0:]
            for i in range(0, n, 4):
                n_rows = min(4, n - i)
                k = np.int64(0)  # not the literal 0: numba typed the call with it too and cached a second _tile_max
                while k < n_blocks:  # 12 column tokens at a time, 8 when 2 or 4 blocks remain, 4 for a last one
                    left = n_blocks - k
                    n_cols = 3 if (left == 3 or left >= 5) else (1 if left == 1 else 2)
                    _tile_max(a_vecs, i, n_rows, b_blocks, k, n_cols, d, bl, best, best_b)
                    k += n_cols
        best_h, best_r = (best_b, best_a) if swap else (best_a, best_b)
        g_h = 0.0
        for i in range(hl):
            g_h += max(best_h[i], 0.0) if floor_zero else best_h[i]
        g_r = 0.0
        for j in range(rl):
            g_r += max(best_r[j], 0.0) if floor_zero else best_r[j]
        out_gre[p] = (g_h / hl + g_r / rl) / 2

        dot = 0.0
        hh = 0.0
        rr = 0.0
        e_dot = 0.0
        e_hh = 0.0
        e_rr = 0.0
        for k in range(d):
            sh = stats[0, 0, k]
            sr = stats[1, 0, k]
            dot += sh * sr
            hh += sh * sh
            rr += sr * sr
            eh = _extremum(stats[0, 1, k], stats[0, 2, k], tie)
            er = _extremum(stats[1, 1, k], stats[1, 2, k], tie)
            e_dot += eh * er
            e_hh += eh * eh
            e_rr += er * er
        den = np.sqrt(hh * rr)
        out_avg[p] = dot / den if den > 0.0 else 0.0
        den = np.sqrt(e_hh * e_rr)
        out_ext[p] = e_dot / den if den > 0.0 else 0.0


# ---- explicit SIMD ------------------------------------------------------------------------------------
# The three steps below are written as LLVM vector code (numba intrinsics) rather than Python loops: LLVM's
# auto-vectoriser, as numba runs it, vectorises a dot product along its dimensions, which leaves one
# horizontal sum per token pair, and it cannot keep per-dimension running sums in registers across rows
# when the number of dimensions is only known at run time. Vectors of 8 (copies) or 4 (tiles) doubles are
# legalised by LLVM for whatever the CPU has (AVX-512, AVX2 or SSE2), so the code stays portable; lanes
# never mix values of different pairs, and every sum runs in a fixed order, so results are deterministic.
_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
_F64 = ir.DoubleType()
_GATHER_LANES = 8  # vec's columns are padded to a multiple of this
_GATHER_GROUP = 4  # 8-column groups per pass over a side's rows (12 running vectors stay in registers)
_TILE_LANES = 4  # reference tokens per vector in a tile


def _i64(v):
    return ir.Constant(_I64, v)


def _ir_loop(builder, start, stop, carried, body):
    """Emit ``for k in range(start, stop)`` with loop-carried values: ``body(k, values)`` emits one iteration
    and returns the next values. Returns the values after the loop (``carried`` when it runs zero times)."""
    before = builder.block
    head = builder.append_basic_block("loop")
    done = builder.append_basic_block("loop.done")
    builder.cbranch(builder.icmp_signed("<", start, stop), head, done)
    builder.position_at_end(head)
    k = builder.phi(start.type)
    k.add_incoming(start, before)
    phis = []
    for v in carried:
        phi = builder.phi(v.type)
        phi.add_incoming(v, before)
        phis.append(phi)
    nxt = body(k, phis)
    end = builder.block
    k1 = builder.add(k, ir.Constant(start.type, 1))
    k.add_incoming(k1, end)
    for phi, v in zip(phis, nxt):
        phi.add_incoming(v, end)
    builder.cbranch(builder.icmp_signed("<", k1, stop), head, done)
    builder.position_at_end(done)
    out = []
    for v0, v in zip(carried, nxt):
        phi = builder.phi(v0.type)
        phi.add_incoming(v0, before)
        phi.add_incoming(v, end)
        out.append(phi)
    return out


def _splat(builder, x, lanes):
    vty = ir.VectorType(x.type, lanes)
    v = builder.insert_element(ir.Constant(vty, ir.Undefined), x, ir.Constant(_I32, 0))
    return builder.shuffle_vector(v, ir.Constant(vty, ir.Undefined), ir.Constant(ir.VectorType(_I32, lanes), [0] * lanes))


def _vector_at(builder, pointer, vty):
    return builder.bitcast(pointer, vty.as_pointer())


def _larger(builder, a, b):
    """a if a > b else b: one max instruction (inputs are finite; maxnum's NaN handling costs three)."""
    return builder.select(builder.fcmp_ordered(">", a, b), a, b)


def _smaller(builder, a, b):
    return builder.select(builder.fcmp_ordered("<", a, b), a, b)


def _shuffle4(builder, a, b, mask):
    return builder.shuffle_vector(a, b, ir.Constant(ir.VectorType(_I32, 4), mask))


@intrinsic
def _gather(typingctx, vec, inv_norm, rows, start, n, cosine, stats, out, carry):
    """out[i] = vec[rows[start + i]] (as float64, times inv_norm of the row when ``cosine``) for i < n, and
    stats[0], stats[1], stats[2] = the sum, maximum and minimum over those rows of each column (unscaled);
    with ``carry``, the sums, maxima and minima go on from the values in ``stats`` (the rows before, in order:
    a side copied in chunks gets the very sums of one pass).

    Columns go 32 at a time (``_GATHER_GROUP`` vectors of 8): the 12 running sums, maxima and minima of a
    group stay in registers for all rows, the copies of a row are 4 vector stores."""
    sig = types.void(vec, inv_norm, rows, start, n, cosine, stats, out, carry)
    src_type = ir.FloatType() if vec.dtype == types.float32 else _F64
    row_bits = rows.dtype.bitwidth
    lanes = _GATHER_LANES

    def codegen(context, builder, signature, args):
        vec_, inv_, rows_, start_, n_, cosine_, stats_, out_, carry_ = args
        v_arr = context.make_array(signature.args[0])(context, builder, vec_)
        inv_arr = context.make_array(signature.args[1])(context, builder, inv_)
        rows_arr = context.make_array(signature.args[2])(context, builder, rows_)
        stats_arr = context.make_array(signature.args[6])(context, builder, stats_)
        out_arr = context.make_array(signature.args[7])(context, builder, out_)
        cols = builder.extract_value(v_arr.shape, 1)
        out_cols = builder.extract_value(out_arr.shape, 1)
        stats_cols = builder.extract_value(stats_arr.shape, 1)
        src_vty = ir.VectorType(src_type, lanes)
        vty = ir.VectorType(_F64, lanes)
        one = ir.Constant(_F64, 1.0)

        def one_pass(c0, n_vectors):  # columns c0 .. c0 + 8 * n_vectors - 1 of every row
            init = []
            for q in range(n_vectors):
                for s, start in enumerate((0.0, -np.inf, np.inf)):
                    at = builder.add(builder.mul(_i64(s), stats_cols), builder.add(c0, _i64(q * lanes)))
                    before = builder.load(_vector_at(builder, builder.gep(stats_arr.data, [at]), vty), align=8)
                    init.append(builder.select(carry_, before, ir.Constant(vty, [start] * lanes)))

            def row(i, acc):
                r = builder.load(builder.gep(rows_arr.data, [builder.add(start_, i)]))
                if row_bits < 64:
                    r = builder.sext(r, _I64)
                scale = _splat(builder, builder.select(cosine_, builder.load(builder.gep(inv_arr.data, [r])), one), lanes)
                src = builder.gep(v_arr.data, [builder.add(builder.mul(r, cols), c0)])
                dst = builder.gep(out_arr.data, [builder.add(builder.mul(i, out_cols), c0)])
                nxt = []
                for q in range(n_vectors):
                    x = builder.load(_vector_at(builder, builder.gep(src, [_i64(q * lanes)]), src_vty),
                                     align=4 if src_type != _F64 else 8)
                    if src_type != _F64:
                        x = builder.fpext(x, vty)
                    builder.store(builder.fmul(x, scale), _vector_at(builder, builder.gep(dst, [_i64(q * lanes)]), vty),
                                  align=8)
                    total, hi, lo = acc[3 * q: 3 * q + 3]
                    nxt += [builder.fadd(total, x), _larger(builder, x, hi), _smaller(builder, x, lo)]
                return nxt

            final = _ir_loop(builder, _i64(0), n_, init, row)
            for q in range(n_vectors):
                for s in range(3):
                    at = builder.add(builder.mul(_i64(s), stats_cols), builder.add(c0, _i64(q * lanes)))
                    builder.store(final[3 * q + s], _vector_at(builder, builder.gep(stats_arr.data, [at]), vty), align=8)

        n_vectors = builder.sdiv(cols, _i64(lanes))
        group = _GATHER_GROUP
        n_full = builder.sdiv(n_vectors, _i64(group))

        def full_pass(g, _):
            one_pass(builder.mul(g, _i64(group * lanes)), group)
            return []

        _ir_loop(builder, _i64(0), n_full, [], full_pass)
        c0 = builder.mul(n_full, _i64(group * lanes))
        end = builder.append_basic_block("gather.end")
        switch = builder.switch(builder.srem(n_vectors, _i64(group)), end)
        for m in range(1, group):  # the last 1 .. group - 1 vectors of columns
            block = builder.append_basic_block(f"gather.last{m}")
            switch.add_case(_i64(m), block)
            builder.position_at_end(block)
            one_pass(c0, m)
            builder.branch(end)
        builder.position_at_end(end)
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def _blocks_of_four(typingctx, src, n, d, out):
    """out[b, k, l] = src[4b + l, k] for 4b + l < n (a multiple of 4) and k < d rounded up to 4 (4 x 4
    transposes in registers: the tiles then read 4 reference tokens' k-th values as one vector)."""
    sig = types.void(src, n, d, out)

    def codegen(context, builder, signature, args):
        src_, n_, d_, out_ = args
        s_arr = context.make_array(signature.args[0])(context, builder, src_)
        o_arr = context.make_array(signature.args[3])(context, builder, out_)
        s_cols = builder.extract_value(s_arr.shape, 1)
        o_cols = builder.extract_value(o_arr.shape, 1)
        v4 = ir.VectorType(_F64, 4)
        n_groups = builder.sdiv(builder.add(d_, _i64(3)), _i64(4))

        def block(b, _):
            s_base = builder.gep(s_arr.data, [builder.mul(builder.mul(b, _i64(4)), s_cols)])
            o_base = builder.gep(o_arr.data, [builder.mul(builder.mul(b, o_cols), _i64(4))])

            def group(g, _):
                k = builder.mul(g, _i64(4))
                a = [builder.load(_vector_at(builder, builder.gep(s_base, [builder.add(builder.mul(_i64(row), s_cols), k)]),
                                             v4), align=8) for row in range(4)]
                t0 = _shuffle4(builder, a[0], a[1], [0, 4, 2, 6])
                t1 = _shuffle4(builder, a[0], a[1], [1, 5, 3, 7])
                t2 = _shuffle4(builder, a[2], a[3], [0, 4, 2, 6])
                t3 = _shuffle4(builder, a[2], a[3], [1, 5, 3, 7])
                cols_of_k = [_shuffle4(builder, t0, t2, [0, 1, 4, 5]), _shuffle4(builder, t1, t3, [0, 1, 4, 5]),
                             _shuffle4(builder, t0, t2, [2, 3, 6, 7]), _shuffle4(builder, t1, t3, [2, 3, 6, 7])]
                for q in range(4):
                    at = builder.gep(o_base, [builder.mul(builder.add(k, _i64(q)), _i64(4))])
                    builder.store(cols_of_k[q], _vector_at(builder, at, v4), align=8)
                return []

            _ir_loop(builder, _i64(0), n_groups, [], group)
            return []

        _ir_loop(builder, _i64(0), builder.sdiv(n_, _i64(4)), [], block)
        return context.get_dummy_value()

    return sig, codegen


def _tile_max_intrinsic(n_rows: int, n_blocks: int):
    """An intrinsic for tiles of ``n_rows`` hypothesis tokens x ``n_blocks`` blocks of 4 reference tokens."""
    lanes = _TILE_LANES

    @intrinsic
    def tile_max(typingctx, h_vecs, i0, r_blocks, b0, d, rl, best_h, best_r):
        """Similarities of hypothesis tokens i0 .. i0 + n_rows - 1 with reference tokens 4 b0 .. 4 (b0 +
        n_blocks) - 1 (dot products over the first ``d`` columns: n_rows x n_blocks vectors of 4 running sums,
        one fused multiply-add per vector and column), then best_h[i] = max(best_h[i], that row's maximum)
        and best_r[j] likewise per column (4 lanes of best_h are rewritten; those past the tile's rows keep
        their value). Columns j >= rl are padding: -inf is added to them before the row maxima, so they
        never win one (whatever the sign of the real similarities)."""
        sig = types.void(h_vecs, i0, r_blocks, b0, d, rl, best_h, best_r)

        def codegen(context, builder, signature, args):
            h_, i0_, rb_, b0_, d_, rl_, bh_, br_ = args
            h_arr = context.make_array(signature.args[0])(context, builder, h_)
            rb_arr = context.make_array(signature.args[2])(context, builder, rb_)
            bh_arr = context.make_array(signature.args[6])(context, builder, bh_)
            br_arr = context.make_array(signature.args[7])(context, builder, br_)
            vty = ir.VectorType(_F64, lanes)
            h_cols = builder.extract_value(h_arr.shape, 1)
            block_size = builder.mul(builder.extract_value(rb_arr.shape, 1), _i64(lanes))
            h_rows = [builder.gep(h_arr.data, [builder.mul(builder.add(i0_, _i64(i)), h_cols)]) for i in range(n_rows)]
            blocks = [builder.gep(rb_arr.data, [builder.mul(builder.add(b0_, _i64(b)), block_size)])
                      for b in range(n_blocks)]
            fma = cgutils.get_or_insert_function(builder.module, ir.FunctionType(vty, [vty] * 3),
                                                 "llvm.fmuladd.v4f64")
            zero = ir.Constant(vty, [0.0] * lanes)
            none = ir.Constant(vty, [-np.inf] * lanes)

            def column(k, acc):
                ys = [builder.load(_vector_at(builder, builder.gep(blocks[b], [builder.mul(k, _i64(lanes))]), vty),
                                   align=8) for b in range(n_blocks)]
                nxt = []
                for i in range(n_rows):
                    x = _splat(builder, builder.load(builder.gep(h_rows[i], [k])), lanes)
                    nxt += [builder.call(fma, [x, ys[b], acc[i * n_blocks + b]]) for b in range(n_blocks)]
                return nxt

            acc = _ir_loop(builder, _i64(0), d_, [zero] * (n_rows * n_blocks), column)
            lane_no = ir.Constant(ir.VectorType(_I64, lanes), list(range(lanes)))
            col_pad = []
            for b in range(n_blocks):
                j = builder.add(_splat(builder, builder.mul(builder.add(b0_, _i64(b)), _i64(lanes)), lanes), lane_no)
                col_pad.append(builder.select(builder.icmp_signed("<", j, _splat(builder, rl_, lanes)), zero, none))
            for b in range(n_blocks):  # each column's maximum over the rows (padding columns are never read)
                m = acc[b]
                for i in range(1, n_rows):
                    m = _larger(builder, m, acc[i * n_blocks + b])
                at = _vector_at(builder, builder.gep(br_arr.data, [builder.mul(builder.add(b0_, _i64(b)), _i64(lanes))]), vty)
                builder.store(_larger(builder, builder.load(at, align=8), m), at, align=8)
            per_row = []
            for i in range(4):  # each row's maximum over the blocks, lane-wise; then across lanes, 4 rows at once
                m = none
                for b in range(n_blocks if i < n_rows else 0):
                    v = builder.fadd(acc[i * n_blocks + b], col_pad[b])
                    m = v if b == 0 else _larger(builder, m, v)
                per_row.append(m)
            m01 = _larger(builder, _shuffle4(builder, per_row[0], per_row[1], [0, 4, 2, 6]),
                          _shuffle4(builder, per_row[0], per_row[1], [1, 5, 3, 7]))
            m23 = _larger(builder, _shuffle4(builder, per_row[2], per_row[3], [0, 4, 2, 6]),
                          _shuffle4(builder, per_row[2], per_row[3], [1, 5, 3, 7]))
            rows_max = _larger(builder, _shuffle4(builder, m01, m23, [0, 1, 4, 5]), _shuffle4(builder, m01, m23, [2, 3, 6, 7]))
            at = _vector_at(builder, builder.gep(bh_arr.data, [i0_]), vty)
            builder.store(_larger(builder, builder.load(at, align=8), rows_max), at, align=8)
            return context.get_dummy_value()

        return sig, codegen

    return tile_max


_tile_1x4, _tile_1x8, _tile_1x12 = (_tile_max_intrinsic(1, b) for b in (1, 2, 3))
_tile_2x4, _tile_2x8, _tile_2x12 = (_tile_max_intrinsic(2, b) for b in (1, 2, 3))
_tile_3x4, _tile_3x8, _tile_3x12 = (_tile_max_intrinsic(3, b) for b in (1, 2, 3))
_tile_4x4, _tile_4x8, _tile_4x12 = (_tile_max_intrinsic(4, b) for b in (1, 2, 3))


@njit(cache=True, nogil=True, fastmath=_FAST)
def _tile_max(h_vecs, i, n_rows, r_blocks, b, width, d, rl, best_h, best_r):
    """The tile of ``n_rows`` (1-4) hypothesis tokens from i x ``width`` (1-3) blocks of reference tokens from
    block b (see :func:`_tile_max_intrinsic`): the last group of rows computes only the rows it has."""
    if n_rows == 4:
        if width == 3:
            _tile_4x12(h_vecs, i, r_blocks, b, d, rl, best_h, best_r)
        elif width == 2:
            _tile_4x8(h_vecs, i, r_blocks, b, d, rl, best_h, best_r)
        else:
            _tile_4x4(h_vecs, i, r_blocks, b, d, rl, best_h, best_r)
    elif n_rows == 3:
        if width == 3:
            _tile_3x12(h_vecs, i, r_blocks, b, d, rl, best_h, best_r)
        elif width == 2:
            _tile_3x8(h_vecs, i, r_blocks, b, d, rl, best_h, best_r)
        else:
            _tile_3x4(h_vecs, i, r_blocks, b, d, rl, best_h, best_r)
    elif n_rows == 2:
        if width == 3:
            _tile_2x12(h_vecs, i, r_blocks, b, d, rl, best_h, best_r)
        elif width == 2:
            _tile_2x8(h_vecs, i, r_blocks, b, d, rl, best_h, best_r)
        else:
            _tile_2x4(h_vecs, i, r_blocks, b, d, rl, best_h, best_r)
    elif width == 3:
        _tile_1x12(h_vecs, i, r_blocks, b, d, rl, best_h, best_r)
    elif width == 2:
        _tile_1x8(h_vecs, i, r_blocks, b, d, rl, best_h, best_r)
    else:
        _tile_1x4(h_vecs, i, r_blocks, b, d, rl, best_h, best_r)
