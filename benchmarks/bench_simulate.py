"""Benchmark: generate the standard DSTC6 size (5 x 10,000 train + 20 x 1,000 test items) and compare with
merely serialising the same items with ``json.dump``.

The ratio says how much the simulation itself costs on top of the unavoidable JSON writing (target <= 3x).

    .venv/bin/python benchmarks/bench_simulate.py [--train 10000] [--test 1000] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from dialeval.simulator import generate_challenge
from dialeval.simulator.kb import build_kb


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--train", type=int, default=10000)
    ap.add_argument("--test", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--runs", type=int, default=3, help="timed runs of each side (medians reported; default 3)")
    ap.add_argument("--profile", action="store_true", help="print the top functions by cumulative time")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "challenge"
        t0 = time.perf_counter()
        build_kb("kb1")
        build_kb("kb2")
        t_kb = time.perf_counter() - t0

        prof = cProfile.Profile() if args.profile else None
        gen_times = []
        for run in range(max(1, args.runs)):
            target = out if run == 0 else Path(tmp) / f"again{run}"
            t0 = time.perf_counter()
            if prof and run == 0:
                prof.enable()
            generate_challenge(target, seed=args.seed, n_train=args.train, n_test=args.test)
            if prof and run == 0:
                prof.disable()
            gen_times.append(time.perf_counter() - t0)
            if run:
                shutil.rmtree(target)
        t_gen = statistics.median(gen_times)

        files = sorted(p for p in out.glob("*/*.json"))
        datasets = [p for p in files if not p.name.endswith(".answers.json")]
        loaded = [json.loads(p.read_text()) for p in files]  # the same items, as plain JSON objects
        n_items = sum(len(d) for p, d in zip(files, loaded) if p in datasets)
        n_bytes = sum(p.stat().st_size for p in files)

        dump_times = []
        for _ in range(max(1, args.runs)):
            t0 = time.perf_counter()
            for i, obj in enumerate(loaded):
                with open(Path(tmp) / f"plain{i}.json", "w") as f:
                    json.dump(obj, f)
            dump_times.append(time.perf_counter() - t0)
        t_dump = statistics.median(dump_times)

    print(f"items generated        {n_items:,} in {len(datasets)} dataset files (+ answer keys), {n_bytes / 1e6:.1f} MB")
    print(f"KB build (both, once)  {t_kb:.2f} s")
    print(f"runs                   {len(gen_times)} (medians; generation {', '.join(f'{t:.2f}' for t in gen_times)} s)")
    print(f"generation wall time   {t_gen:.2f} s  ({n_items / t_gen:,.0f} items/s, includes writing files and KBs)")
    print(f"json.dump same items   {t_dump:.2f} s")
    print(f"ratio generate / dump  {t_gen / t_dump:.2f}x  (target <= 3x)")
    if prof:
        pstats.Stats(prof).sort_stats("cumulative").print_stats(25)


if __name__ == "__main__":
    main()
