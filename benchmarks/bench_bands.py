"""Significance at leaderboard size: banding 20 runs x 20,000 items, and comparing two 20k-item runs.

Run: ``python3 benchmarks/bench_bands.py [--runs 20] [--items 20000] [--repeat 3]``

Builds seeded DSTC6-shaped rank tables (tst1, five task files of ``items / 5``, 10 candidates, every item its
own conversation) for ``--runs`` systems of increasing quality, then in fresh child processes (so each peak RSS
is its own):

1. **bands**: per-unit MRR of every run (as ``rank_board`` takes them) and ``stats.bands(..., test="ar")``:
   the pairwise rule, Holm over 190 pairs, so 76,000 randomization resamples; **bands-p@1** the same for P@1
   on items in conversations of four (0/1 values in clusters: randomization is the test ``auto`` picks);
2. **compare**: ``compare_runs`` of the two best runs on the default DSTC6 metrics (p@1, p@2, p@5, mrr): paired
   bootstrap, randomization, McNemar and both runs' intervals, 1,000 resamples each.

Each prints the median wall time of ``--repeat`` runs (the first one pays the imports) and their CPU time (all
threads; on a shared machine the wall time also counts waiting for a core), the child's peak RSS
(imports and the two or twenty tables included), the time of an arithmetic floor measured in the same child
(bands: the resamples' matrix product, 76,000 x clusters x runs multiply-adds, in float64; compare: the
bootstrap's index draws for four procedures and four metrics), and a sha256 of every number produced, so that a
faster version can be checked to give the same bits (targets, issue 26: bands <= 5 s; compare <= 2 s and
<= 150 MB).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

CHILD = r"""
import hashlib, json, resource, sys, time
import numpy as np
what, runs, items, repeat = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
from dialeval.core.ranks import RankTable
from dialeval.metrics import get, resolve
from dialeval.results import stats

def table(quality, seed):
    rng = np.random.default_rng(seed)
    parts = []
    per = items // 5
    for task in range(1, 6):
        ranks = np.where(rng.random(per) < quality, 1, rng.integers(1, 11, per)).astype(np.int32)
        ids = [f"t{task}-{i:06d}" for i in range(per)]
        convs = [f"t{task}-{i // 4:06d}" for i in range(per)] if what == "bands-p@1" else None
        parts.append(RankTable.build(benchmark="dstc6", split="tst1", group=str(task), item_ids=ids,
                                     gold_rank=ranks, n_candidates=10, conversation_ids=convs))
    return RankTable.concat(parts)

keep = range(runs) if what.startswith("bands") else range(runs - 2, runs)
tables = [table(0.3 + 0.4 * k / max(1, runs - 1), 100 + k) for k in keep]
digest = hashlib.sha256()
times, cpus = [], []
for _ in range(repeat):
    t0, c0 = time.perf_counter(), time.process_time()
    if what.startswith("bands"):
        m = get("p@1" if what == "bands-p@1" else "mrr")
        units = [stats.unit_values(t, m) for t in tables]
        values = np.stack([u.values for u in units])
        b = stats.bands(values, units[0].clusters, None, m.name, test="ar")
        out = [b.order, b.band, b.p_adjusted.tolist(), b.p_raw.tolist(), b.signature]
    else:
        from dialeval.leaderboard.bands import compare_runs
        res = compare_runs(tables[-1], tables[-2], ["p@1", "p@2", "p@5", "mrr"])
        out = [r.to_json() for r in res]
    times.append(time.perf_counter() - t0)
    cpus.append(time.process_time() - c0)
digest.update(json.dumps(out, sort_keys=True).encode())
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # before the floor's own arrays
# the arithmetic floor, measured here
t0 = time.perf_counter()
if what.startswith("bands"):
    k, c = values.shape
    r = stats.band_resamples(k, tests=k * (k - 1) // 2)
    signs = np.ones((1000, c))
    for _ in range(-(-r // 1000)):
        signs @ values.T
else:
    rng = np.random.default_rng(0)
    for _ in range(4 * 4 * 10):  # four resampling procedures per metric, four metrics; 100 resamples at a time
        rng.integers(0, items, (100, items))
floor = time.perf_counter() - t0
print(json.dumps({"seconds": sorted(times)[len(times) // 2], "cpu": sorted(cpus)[len(cpus) // 2], "floor": floor,
                  "peak_mb": peak,
                  "sha256": digest.hexdigest()[:16]}))
"""


def child(what: str, runs: int, items: int, repeat: int) -> dict:
    r = subprocess.run([sys.executable, "-c", CHILD, what, str(runs), str(items), str(repeat)],
                       capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--items", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    targets = {"bands": "<= 5 s", "bands-p@1": "<= 5 s", "compare": "<= 2 s, <= 150 MB"}
    for what in ("bands", "bands-p@1", "compare"):
        r = child(what, args.runs, args.items, args.repeat)
        print(f"{what}: {r['seconds']:.2f} s (median of {args.repeat}; CPU {r['cpu']:.2f} s), peak RSS {r['peak_mb']:.0f} MB, "
              f"arithmetic floor {r['floor']:.2f} s ({r['seconds'] / r['floor']:.1f}x); numbers sha256 "
              f"{r['sha256']}; target {targets[what]}", flush=True)
    print(f"machine load (1 min): {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
