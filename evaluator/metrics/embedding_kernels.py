"""Compiled kernels of the embedding metrics (numba): the corpus split and the per-pair scores.

Why compiled: the per-pair work (about 15 x 15 token cosines of 50 dimensions) is too small for numpy to run
efficiently one call per pair, and batching pairs in numpy costs gathers and temporaries many times the
arithmetic (see ``benchmarks/bench_embedding.py``). numba compiles these loops once, caches the machine code
beside this file (``cache=True``; numba checks the cached code against this file's timestamp and size and the
argument types and recompiles on any change), and releases the GIL (``nogil=True``) so disjoint ranges of pairs run
on several threads.

Everything here is plain arithmetic on arrays that :mod:`dialeval.metrics.embedding` prepares and checks; no
function here raises on user input.
"""

from __future__ import annotations

import numpy as np
from numba import njit

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


PADDING = 16  # NUL bytes after the last text: the 16-byte reads of the last token stay in the buffer


def word_view(buf: np.ndarray) -> np.ndarray:
    """Every 8-byte window of ``buf`` as a little-endian uint64, without a copy (byte strides)."""
    return np.ndarray((len(buf) - 7,), dtype="<u8", buffer=buf, strides=(1,))


def new_vocabulary():
    """The empty state :func:`split_chunk` numbers spellings in: the hash table (one uint64 per slot: the hash's
    high 32 bits, then the spelling's number + 1; 0 = free; 8 bytes a slot keep it cache-resident), the
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
            word_end = _grow(word_end, 0)
            word_key = _grow_rows(word_key)
        if 3 * state[3] + 3 > 2 * len(table):
            table = _rehash(table, word_end, word_key, spellings)
    counts[0] = state[3]
    counts[1] = state[4]
    # a view: the untouched tail of token_word was never faulted in, so it costs address space, not memory
    return token_word[:state[2]], lengths, True, table, spellings, word_end, word_key


@njit(cache=True, nogil=True)
def _split_run(buf, words, classes, token_word, lengths, table, spellings, word_end, word_key, state):
    """The split from ``state`` on; 0 at the end, -1 when a text holds NUL, else the bytes a new spelling needs
    (room is short in ``spellings``, ``word_end`` or the table: kept at most 2/3 full) with ``state`` at that
    token's start."""
    n = len(buf) - PADDING
    mask = len(table) - 1
    whitespace = classes[0x09] == SEP
    i, text, n_tok, n_words, used = state[0], state[1], state[2], state[3], state[4]
    while i < n:
        cls = classes[buf[i]]
        if cls == TEXT_END:
            text += 1
            i += 1
            if text == len(lengths):  # more NULs than text breaks: some text holds one
                return -1
            continue
        if cls == SEP:
            i += 1
            continue
        if cls == LEAD:
            s = _space_len(buf, i, n)
            if s:
                i += s
                continue
        start = i
        i += 1
        while True:  # the token's end, 8 bytes at a time: see _breaks
            f = _breaks(words[i], whitespace)
            if f == 0:
                i += 8
                continue
            i += _lowest_byte(f)
            cls = classes[buf[i]]
            if cls == TOKEN or (cls == LEAD and _space_len(buf, i, n) == 0):
                i += 1
                continue
            break
        size = i - start
        # the bytes as little-endian 8-byte words (unaligned loads through ``words``; the buffer has 16 bytes of
        # padding), masked to the token without branches: k0, k1 are the first two; the hash mixes them all
        k0 = words[start] & _mask(min(size, 8))
        k1 = words[start + 8] & _mask(min(max(size - 8, 0), 8))
        h = _start_hash(k0, k1, size)
        for q in range(16, size, 8):  # tokens over 16 bytes (rare)
            h ^= h >> np.uint64(32)
            h = (h ^ (words[start + q] & _mask(min(size - q, 8)))) * np.uint64(0xC2B2AE3D27D4EB4F)
        h = _finish(h)
        tag = h >> np.uint64(32)
        slot = np.int64(h & np.uint64(mask))
        w = -1
        while table[slot] != 0:
            e = table[slot]
            if e >> np.uint64(32) == tag:
                v = np.int64(e & np.uint64(0xFFFFFFFF)) - 1
                # no token byte is 0 (NUL separates texts), so k0 and k1 also fix the size of a token of at most
                # 16 bytes
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
            if used + size > len(spellings) or n_words == len(word_end) or 3 * n_words + 3 > 2 * len(table):
                state[0], state[1], state[2], state[3], state[4] = start, text, n_tok, n_words, used
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
        lengths[text] += 1
    state[0], state[1], state[2], state[3], state[4] = i, text, n_tok, n_words, used
    return 0


_ONES = np.uint64(0x0101010101010101)
_HIGH = np.uint64(0x8080808080808080)


@njit(cache=True, nogil=True)
def _breaks(x, whitespace):
    """The bytes of ``x`` (8 bytes, little-endian) that may end a token, as their high bits; the lowest one set
    is exact (a borrow only reaches bytes above a flagged one). whitespace: bytes below 0x21 (NUL, the ASCII
    spaces and other controls) and every non-ASCII byte; else NUL and the space."""
    if whitespace:
        return ((x - np.uint64(0x21) * _ONES) | x) & _HIGH
    y = x ^ (np.uint64(0x20) * _ONES)
    return (((x - _ONES) & ~x) | ((y - _ONES) & ~y)) & _HIGH


@njit(cache=True, nogil=True)
def _lowest_byte(f):
    """The index of the lowest byte whose high bit is set in ``f`` (not 0; only high bits set): the bytes below
    it become 0x01 each, and a multiplication sums them into the top byte."""
    below = ((f & (np.uint64(0) - f)) >> np.uint64(7)) - np.uint64(1)
    return np.int64(((below & _ONES) * _ONES) >> np.uint64(56))


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
    return _finish(h)


@njit(cache=True, nogil=True)
def _finish(h):
    """Every bit of ``h`` into every bit of the result (MurmurHash3's 64-bit finaliser): the table's slot comes
    from the low bits, which a multiplication alone fills from the first bytes only."""
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xFF51AFD7ED558CCD)
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xC4CEB9FE1A85EC53)
    h ^= h >> np.uint64(33)
    return h


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
    for q in range(len(table)):
        e = table[q]
        if e != 0:
            v = np.int64(e & np.uint64(0xFFFFFFFF)) - 1
            s0 = word_end[v - 1] if v > 0 else 0
            h = _spelling_hash(spellings, s0, word_end[v] - s0)
            s = np.int64(h & np.uint64(mask))
            while out[s] != 0:
                s = (s + 1) & mask
            out[s] = e
    return out


@njit(cache=True, nogil=True)
def _grow(a, at_least):
    """``a`` in a buffer twice as long (at least ``at_least``). Plain loops: slice assignment compiles slowly."""
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


@njit(cache=True, nogil=True)
def _extremum(mx, mn, tie):
    """max if max > |min|, min if |min| > max; a tie per ``tie`` (nlg-eval: min, and 0 where min == 0)."""
    if tie == TIE_MAX:
        e = mn if -mn > mx else mx
    else:
        e = mx if mx > -mn else mn
        if tie == TIE_NLG_EVAL and mn == 0.0:
            e = 0.0
    return e


@njit(cache=True, nogil=True, fastmath=True)
def pair_scores(vec, inv_norm, pad_row, rows, starts, lengths, hyp_of_pair, ref_of_pair, first, last, tie, cosine,
                floor_zero, out_avg, out_ext, out_gre):
    """Scores of pairs ``first`` .. ``last - 1`` into the three output arrays (a pair with an empty side: 0).

    ``vec``: the vectors in their own dtype (float32 widens exactly; every sum is in float64), columns padded
    with zeros to a multiple of 8, row ``pad_row`` all zeros; ``inv_norm``: 1 / |row| (0 for a zero row). Text
    k's tokens are ``rows[starts[k] : starts[k] + lengths[k]]``. ``tie``: a ``TIE_*`` code; ``cosine``: greedy
    matching by cosine, else by the raw dot product, each best match floored at 0 when ``floor_zero``.

    Average: cos(sum h, sum r), the cosine of the means. Extrema: :func:`_extremum` per dimension, then the
    cosine. Greedy: :func:`_greedy`."""
    d = vec.shape[1]
    width = 4
    for p in range(first, last):
        width = max(width, lengths[hyp_of_pair[p]], lengths[ref_of_pair[p]])
    width = (width + 3) // 4 * 4
    h_rows = np.empty(width, np.int64)
    r_rows = np.empty(width, np.int64)
    best_h = np.empty(width)
    best_r = np.empty(width)
    sim = np.empty((_BAND, _BAND))
    r_inv = np.empty(_BAND)
    stats = np.empty((2, 3, d))  # [hypothesis, reference] x [sum, max, min]
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
        _rows_of(rows, starts[h], hl, pad_row, h_rows)
        _rows_of(rows, starts[r], rl, pad_row, r_rows)
        _side_stats(vec, h_rows, hl, stats[0])
        _side_stats(vec, r_rows, rl, stats[1])
        dot = 0.0
        hh = 0.0
        rr = 0.0
        e_dot = 0.0
        e_hh = 0.0
        e_rr = 0.0
        for k in range(d):
            a = stats[0, 0, k]
            b = stats[1, 0, k]
            dot += a * b
            hh += a * a
            rr += b * b
            eh = _extremum(stats[0, 1, k], stats[0, 2, k], tie)
            er = _extremum(stats[1, 1, k], stats[1, 2, k], tie)
            e_dot += eh * er
            e_hh += eh * eh
            e_rr += er * er
        den = np.sqrt(hh * rr)
        out_avg[p] = dot / den if den > 0.0 else 0.0
        den = np.sqrt(e_hh * e_rr)
        out_ext[p] = e_dot / den if den > 0.0 else 0.0
        out_gre[p] = _greedy(vec, inv_norm, h_rows, hl, r_rows, rl, cosine, floor_zero, best_h, best_r, sim, r_inv)


_BAND = 64  # token similarities are computed in blocks of at most 64 x 64 (memory stays O(sentence length))


@njit(cache=True, nogil=True)
def _rows_of(rows, start, n, pad_row, out):
    """out[:n] = the text's token rows; then ``pad_row`` up to the next multiple of 4."""
    for i in range(n):
        out[i] = rows[start + i]
    for i in range(n, (n + 3) // 4 * 4):
        out[i] = pad_row


@njit(cache=True, nogil=True, fastmath=True)
def _side_stats(vec, side_rows, n, out):
    """out[0], out[1], out[2] = sum, max and min over the side's token vectors, per dimension (float64).

    Four rows at a time: one read-modify-write of ``out`` per four rows, not per row."""
    d = vec.shape[1]
    first = vec[side_rows[0]]
    for k in range(d):
        x = np.float64(first[k])
        out[0, k] = x
        out[1, k] = x
        out[2, k] = x
    i = 1
    while i + 3 < n:
        r1 = vec[side_rows[i]]
        r2 = vec[side_rows[i + 1]]
        r3 = vec[side_rows[i + 2]]
        r4 = vec[side_rows[i + 3]]
        for k in range(d):
            x1 = np.float64(r1[k])
            x2 = np.float64(r2[k])
            x3 = np.float64(r3[k])
            x4 = np.float64(r4[k])
            out[0, k] += (x1 + x2) + (x3 + x4)
            out[1, k] = max(out[1, k], max(max(x1, x2), max(x3, x4)))
            out[2, k] = min(out[2, k], min(min(x1, x2), min(x3, x4)))
        i += 4
    for j in range(i, n):
        row = vec[side_rows[j]]
        for k in range(d):
            x = np.float64(row[k])
            out[0, k] += x
            out[1, k] = max(out[1, k], x)
            out[2, k] = min(out[2, k], x)


@njit(cache=True, nogil=True, fastmath=True)
def _greedy(vec, inv_norm, h_rows, hl, r_rows, rl, cosine, floor_zero, best_h, best_r, sim, r_inv):
    """(G(r, h) + G(h, r)) / 2 for one pair; G(a, b) = mean over a's tokens of the best similarity in b.

    Similarities come in tiles of 4 x 4 tokens (sixteen dot products sharing eight row loads, in float64),
    within blocks of ``_BAND`` x ``_BAND``; one pass over a block scales it by the inverse norms (cosine) and
    updates the best matches from its row and column maxima. Tiles past a sentence's end read the zero row and are never read
    back."""
    d = vec.shape[1]
    for i in range(hl):
        best_h[i] = -np.inf
    for j in range(rl):
        best_r[j] = -np.inf
    for ib in range(0, hl, _BAND):
        ni = min(_BAND, hl - ib)
        for jb in range(0, rl, _BAND):
            nj = min(_BAND, rl - jb)
            for i in range(0, ni, 4):
                a0 = vec[h_rows[ib + i]]
                a1 = vec[h_rows[ib + i + 1]]
                a2 = vec[h_rows[ib + i + 2]]
                a3 = vec[h_rows[ib + i + 3]]
                for j in range(0, nj, 4):
                    b0 = vec[r_rows[jb + j]]
                    b1 = vec[r_rows[jb + j + 1]]
                    b2 = vec[r_rows[jb + j + 2]]
                    b3 = vec[r_rows[jb + j + 3]]
                    s00 = s01 = s02 = s03 = s10 = s11 = s12 = s13 = 0.0
                    s20 = s21 = s22 = s23 = s30 = s31 = s32 = s33 = 0.0
                    for k in range(d):
                        x0 = np.float64(a0[k])
                        x1 = np.float64(a1[k])
                        x2 = np.float64(a2[k])
                        x3 = np.float64(a3[k])
                        y0 = np.float64(b0[k])
                        y1 = np.float64(b1[k])
                        y2 = np.float64(b2[k])
                        y3 = np.float64(b3[k])
                        s00 += x0 * y0
                        s01 += x0 * y1
                        s02 += x0 * y2
                        s03 += x0 * y3
                        s10 += x1 * y0
                        s11 += x1 * y1
                        s12 += x1 * y2
                        s13 += x1 * y3
                        s20 += x2 * y0
                        s21 += x2 * y1
                        s22 += x2 * y2
                        s23 += x2 * y3
                        s30 += x3 * y0
                        s31 += x3 * y1
                        s32 += x3 * y2
                        s33 += x3 * y3
                    sim[i, j] = s00
                    sim[i, j + 1] = s01
                    sim[i, j + 2] = s02
                    sim[i, j + 3] = s03
                    sim[i + 1, j] = s10
                    sim[i + 1, j + 1] = s11
                    sim[i + 1, j + 2] = s12
                    sim[i + 1, j + 3] = s13
                    sim[i + 2, j] = s20
                    sim[i + 2, j + 1] = s21
                    sim[i + 2, j + 2] = s22
                    sim[i + 2, j + 3] = s23
                    sim[i + 3, j] = s30
                    sim[i + 3, j + 1] = s31
                    sim[i + 3, j + 2] = s32
                    sim[i + 3, j + 3] = s33
            # one pass: scale to cosines, then each row's maximum and every column's running maximum
            for j in range(nj):
                r_inv[j] = inv_norm[r_rows[jb + j]] if cosine else 1.0
            for i in range(ni):
                f = inv_norm[h_rows[ib + i]] if cosine else 1.0
                m = -np.inf
                for j in range(nj):
                    v = sim[i, j] * f * r_inv[j]
                    m = max(m, v)
                    best_r[jb + j] = max(best_r[jb + j], v)
                best_h[ib + i] = max(best_h[ib + i], m)
    g_h = 0.0
    for i in range(hl):
        g_h += max(best_h[i], 0.0) if floor_zero else best_h[i]
    g_r = 0.0
    for j in range(rl):
        g_r += max(best_r[j], 0.0) if floor_zero else best_r[j]
    return (g_h / hl + g_r / rl) / 2
