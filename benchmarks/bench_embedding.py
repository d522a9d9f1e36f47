"""Embedding metrics: score_pairs (compiled kernels) vs a straightforward per-pair numpy loop, peak RSS, load times.

    python3 benchmarks/bench_embedding.py [--pairs 100000] [--loop-pairs N] [--repeats 5]

Pairs of 10-20 tokens drawn (seeded) from the 20,000 most frequent words of the default vectors (GloVe 6B 50d)
plus 2 % unknown words; preset ``paper``. The loop implements the same definitions pair by pair with numpy
(gather vectors, mean + cosine, extrema + cosine, a normalised similarity matrix for greedy matching); both
must give the same values (max |difference| printed, required <= 1e-12). ``--loop-pairs`` times the loop on
the first N pairs only and scales (default: all pairs). score_pairs runs ``--repeats`` times, half
before and half after the loop (the machine's load drifts), and its median is compared; wall-clock and CPU
(process) time are both reported, CPU time being less sensitive to other jobs on the machine. Peak RSS is
read before and after scoring. Load times are measured in fresh processes: cold = empty dialeval cache (the
content hash is computed), warm = the cache from the cold run (verified, reused).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np


def make_pairs(n: int, seed: int = 0):
    import pyarrow.parquet as pq

    from dialeval.formats.vectors import default_files

    words = pq.read_table(default_files()[1]).column(0).to_pylist()[:20000]
    words = [w for w in words if w.isalpha()]
    rng = np.random.default_rng(seed)
    vocab = np.array(words + [f"unk{i}" for i in range(len(words) // 50)], dtype=object)

    def sents():
        lens = rng.integers(10, 21, size=n)
        toks = vocab[rng.integers(0, len(vocab), size=int(lens.sum()))]
        out, i = [], 0
        for k in lens.tolist():
            out.append(" ".join(toks[i:i + k]))
            i += k
        return out

    return sents(), sents()


def loop_scores(hyps, refs, vec):
    """Per pair, the definitions as written (preset paper: whitespace tokens, OOV skipped, cosine)."""
    kti, mat = vec.key_to_index, vec.matrix
    out = np.full((len(hyps), 3), np.nan)
    for i, (h, r) in enumerate(zip(hyps, refs)):
        X = np.array([mat[kti[w]] for w in h.split() if w in kti], dtype=np.float64)
        Y = np.array([mat[kti[w]] for w in r.split() if w in kti], dtype=np.float64)
        if len(X) == 0 or len(Y) == 0:
            continue
        a, b = X.mean(axis=0), Y.mean(axis=0)
        avg = a @ b / (np.linalg.norm(a) * np.linalg.norm(b))
        ex = []
        for M in (X, Y):
            mx, mn = M.max(axis=0), M.min(axis=0)
            ex.append(np.where(mx >= np.abs(mn), mx, mn))  # tie to max
        ext = ex[0] @ ex[1] / (np.linalg.norm(ex[0]) * np.linalg.norm(ex[1]))
        Xn = X / np.linalg.norm(X, axis=1, keepdims=True)
        Yn = Y / np.linalg.norm(Y, axis=1, keepdims=True)
        S = Xn @ Yn.T
        gr = (S.max(axis=1).mean() + S.max(axis=0).mean()) / 2
        out[i] = (avg, gr, ext)
    return out


LOAD_SNIPPET = """
import json, time, sys
t0 = time.perf_counter()
from dialeval.formats.vectors import load_vectors
words = json.loads(sys.stdin.read())
t1 = time.perf_counter()
v = load_vectors("default", words=words)
t2 = time.perf_counter()
print(json.dumps({"load": t2 - t1, "import": t1 - t0, "rows": len(v.key_to_index)}))
"""


def load_times(words) -> dict:
    out = {}
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "DIALEVAL_CACHE_DIR": cache}
        env.pop("DIALEVAL_NO_CACHE", None)
        for label in ("cold", "warm"):
            t = time.perf_counter()
            p = subprocess.run([sys.executable, "-c", LOAD_SNIPPET], input=json.dumps(words), env=env,
                               capture_output=True, text=True, check=True)
            wall = time.perf_counter() - t
            d = json.loads(p.stdout)
            out[label] = {"load_s": d["load"], "process_s": wall, "rows": d["rows"]}
    return out


def kernel_compile_time() -> float:
    """Seconds to compile the kernels from nothing (a fresh process, the kernels' cache folder empty): what the
    package build spends on them. An installed package seeds the folder from its precompiled copy instead
    (``bench_kernels_first_use.py`` times that); a source checkout has none, so this compiles."""
    snippet = ("import time; t = time.perf_counter(); from dialeval.metrics.embedding import score_pairs; "
               "from dialeval.formats.vectors import Vectors; v = Vectors.from_arrays(['a'], [[1.0, 2.0]]); "
               "score_pairs(['a b'], [['a']], 'paper', v); print(time.perf_counter() - t)")
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "DIALEVAL_KERNEL_CACHE": cache, "DIALEVAL_CACHE_DIR": cache}
        out = subprocess.run([sys.executable, "-c", snippet], env=env, capture_output=True, text=True, check=True)
    return float(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=100_000)
    ap.add_argument("--loop-pairs", type=int, default=None)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()

    from dialeval.formats.vectors import load_vectors
    from dialeval.metrics.embedding import METRICS, score_pairs

    hyps, refs = make_pairs(args.pairs)
    words = sorted({w for t in hyps + refs for w in t.split()})
    vec = load_vectors("default", words=words)
    print(f"{args.pairs:,} pairs, {len(words):,} distinct words, vectors {vec.identity.name} "
          f"({len(vec.key_to_index):,} rows loaded of {vec.identity.vocab_size:,})")

    ref_lists = [[r] for r in refs]
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    # warm-up, untimed: one whole run, so every kernel (some only run on large inputs: two vocabularies,
    # threads) is loaded from numba's cache, or compiled, before timing; compile time is reported on its own
    score_pairs(hyps, ref_lists, "paper", vec)

    def timed(fn):
        w, c = time.perf_counter(), time.process_time()
        out = fn()
        return out, time.perf_counter() - w, time.process_time() - c

    runs = []
    first_half = (args.repeats + 1) // 2
    for _ in range(first_half):
        res, wall, cpu = timed(lambda: score_pairs(hyps, ref_lists, "paper", vec))
        runs.append((wall, cpu))
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    got = np.stack([res.per_pair[m] for m in METRICS], axis=1)

    m = args.loop_pairs or args.pairs
    want, loop_wall, loop_cpu = timed(lambda: loop_scores(hyps[:m], refs[:m], vec))
    slow, slow_cpu = loop_wall * args.pairs / m, loop_cpu * args.pairs / m
    for _ in range(args.repeats - first_half):
        _, wall, cpu = timed(lambda: score_pairs(hyps, ref_lists, "paper", vec))
        runs.append((wall, cpu))
    fast, fast_cpu = (float(np.median([r[i] for r in runs])) for i in (0, 1))
    diff = float(np.nanmax(np.abs(got[:m] - want)))
    same_nan = bool((np.isnan(got[:m]) == np.isnan(want)).all())

    walls = ", ".join(f"{r[0]:.2f}" for r in runs)
    print(f"score_pairs (compiled) : {fast:8.3f} s wall, {fast_cpu:.3f} s CPU  (median of {len(runs)}: {walls})")
    print(f"per-pair numpy loop    : {slow:8.3f} s wall, {slow_cpu:.3f} s CPU  "
          f"({'measured' if m == args.pairs else f'scaled from {m:,}'})")
    print(f"speed-up               : {slow / fast:8.1f}x wall, {slow_cpu / fast_cpu:.1f}x CPU  (target >= 50x)")
    print(f"max |difference|       : {diff:.2e}  (skipped pairs identical: {same_nan})")
    print(f"peak RSS               : {rss_mb:8.0f} MB after scoring ({rss_before:.0f} MB before: corpus, vectors)")
    for k, v in load_times(words).items():
        print(f"default vectors {k:4s}   : load {v['load_s']:.3f} s, whole process {v['process_s']:.3f} s "
              f"({v['rows']:,} rows)")
    print(f"kernels, empty cache   : {kernel_compile_time():.2f} s in a fresh process (compiled unless the installed "
          f"package carries them precompiled; later runs load them)")
    for name, val in zip(METRICS, got.T):
        print(f"  {name:18s} mean {np.nanmean(val):.6f}")
    if diff > 1e-12 or not same_nan:
        sys.exit("values differ")


if __name__ == "__main__":
    main()
