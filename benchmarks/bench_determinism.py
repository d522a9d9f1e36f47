"""The cost of torch's fixed-order kernels on the CPU (``deterministic=true``, the CPU default) against torch's
default kernels (``deterministic=false``), at 1 and 2 torch threads, and whether repeated trainings give the same
bits.

    python3 benchmarks/bench_determinism.py [--data ../shared/data/babi-dialog] [--task 4] [--conversations 200]
                                            [--epochs 2] [--repeat 3]

For supervised embeddings and MemN2N (the stored Table 2 settings of the task, one grid entry, ``--epochs``): one
``fit`` on the first ``--conversations`` training and dev conversations for each (threads, deterministic) pair,
the four pairs interleaved ``--repeat`` times in one process, so that the load of a shared machine falls on all of
them alike (after one untimed warm-up fit per thread count). Prints per pair the best and median training seconds
(``fit``'s ``train_seconds``: every epoch and its dev evaluation), the ratio fixed-order / torch's default at each
thread count, and how many distinct trained weight sets the repeats gave (1 = repeatable). The machine this was
written on is shared by several people's jobs: its seconds are noisy, hence the interleaving and both statistics.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODELS = ("supervised-embeddings", "memn2n")


def weights_digest(module) -> str:
    """SHA-256 of the trained parameters (names and bytes, in name order)."""
    h = hashlib.sha256()
    for name, t in sorted(module.state_dict().items()):
        h.update(name.encode())
        h.update(t.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()


def train_once(name: str, task: int, data_dir: Path, trn, dev, epochs: int, threads: int, deterministic: bool):
    from dialeval.baselines.registry import create
    from dialeval.baselines.reproduce import model_params

    os.environ["DIALEVAL_TORCH_THREADS"] = str(threads)  # setup_torch (in fit) sets torch's thread count from it
    params = model_params(name, task, data_dir, {"epochs": epochs, "grid": None, "progress": False,
                                                   "deterministic": deterministic})
    model = create(name, seed=0, **params).fit(trn, dev)
    return model.train_stats["train_seconds"], weights_digest(model.module)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "babi-dialog")
    ap.add_argument("--task", type=int, default=4)
    ap.add_argument("--conversations", type=int, default=200)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    from dialeval.baselines.reproduce import _load_task

    trn, dev, _ = _load_task(args.data, args.task, args.conversations)
    pairs = [(threads, det) for threads in (1, 2) for det in (False, True)]
    print(f"bAbI T{args.task}: {len(trn)} training items, {len(dev)} dev items, {args.epochs} epochs, "
          f"{args.repeat} interleaved repeats, {os.cpu_count()} CPUs (a shared machine: the seconds are noisy)")
    print("| model | threads | deterministic=false s (best / median) | deterministic=true s (best / median) "
          "| ratio true / false (best) | ratio (median) | distinct weight sets false / true |")
    print("|---|---|---|---|---|---|---|")
    for name in MODELS:
        seconds: dict = {p: [] for p in pairs}
        digests: dict = {p: set() for p in pairs}
        for threads, det in pairs[::2]:  # untimed: torch's first use of each thread count (kernels, thread pool)
            train_once(name, args.task, args.data, trn, dev, 1, threads, det)
        for _ in range(args.repeat):
            for threads, det in pairs:
                s, d = train_once(name, args.task, args.data, trn, dev, args.epochs, threads, det)
                seconds[(threads, det)].append(s)
                digests[(threads, det)].add(d)
        for threads in (1, 2):
            off, on = seconds[(threads, False)], seconds[(threads, True)]
            print(f"| {name} | {threads} | {min(off):.2f} / {statistics.median(off):.2f} "
                  f"| {min(on):.2f} / {statistics.median(on):.2f} | {min(on) / min(off):.2f} "
                  f"| {statistics.median(on) / statistics.median(off):.2f} "
                  f"| {len(digests[(threads, False)])} / {len(digests[(threads, True)])} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
