"""Movie Dialog scoring at full candidate width: 10,000 items x 75,542 entity scores.

Generates synthetic data in a temporary folder (an entity list of 75,542 names, a task-1 test file of 10,000
questions with 1-4 entity answers, some entities containing commas) and a float32 score matrix (``.npy``,
about 3 GB), then scores it through the ``movie-dialog`` benchmark in a child process and prints wall time
and peak memory, beside ``numpy.load`` of the same file (the baseline, measured in the same run):

* ``peak RSS`` (VmHWM) counts the memory-mapped matrix pages it touched (the file's page cache);
* ``peak anon`` samples RssAnon (private memory: copies, Python objects) every 20 ms.

The scorer memory-maps the matrix and reads it in row chunks (:data:`dialeval.formats.scores.CHUNK_ELEMENTS`),
so no dense float64 copy of the matrix is made (``numpy.load`` itself holds one float32 copy).
A JSON score document at reduced size (``--json-items``, default 100 items x 75,542) is timed too.

    python3 benchmarks/bench_movie.py [--items 10000] [--json-items 100] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

N_ENTITIES = 75_542

CHILD = r"""
import json, sys, threading, time
peak = [0]
def anon():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) * 1024
    return 0
stop = False
def sample():
    while not stop:
        peak[0] = max(peak[0], anon())
        time.sleep(0.02)
threading.Thread(target=sample, daemon=True).start()
mode, data, sub = sys.argv[1:4]
t0 = time.perf_counter()
if mode == "score":
    from pathlib import Path
    from dialeval.benchmarks.base import Request
    from dialeval.benchmarks.movie_dialog import MovieDialog
    from dialeval.metrics import get
    ev = MovieDialog().evaluate(Request(Path(sub), Path(data), "test", groups=["1"]))
    assert ev.valid, [p.format() for p in ev.problems if p.severity == "error"][:3]
    out = {k: get(k).compute(ev.table) for k in ("hits@1", "hits@10", "hits@100")}
else:
    import numpy as np
    m = np.load(sub)
    out = {"sum": float(m[:, 0].sum())}
secs = time.perf_counter() - t0
stop = True
peak[0] = max(peak[0], anon())
hwm = 0
with open("/proc/self/status") as fh:
    for line in fh:
        if line.startswith("VmHWM:"):
            hwm = int(line.split()[1]) * 1024
print(json.dumps({"seconds": secs, "peak_rss": hwm, "peak_anon": peak[0], "result": out}))
"""


def make_data(root: Path, n_items: int, seed: int = 0) -> tuple[Path, np.ndarray, list[list[int]]]:
    rng = np.random.default_rng(seed)
    root.mkdir(parents=True, exist_ok=True)
    names = [f"Entity {i}" if i % 300 else f"Title {i}, Part Two" for i in range(N_ENTITIES)]  # ~250 with commas
    (root / "entities.txt").write_text("\n".join(names) + "\n", encoding="utf-8")
    golds: list[list[int]] = []
    lines = []
    for _ in range(n_items):
        k = int(rng.integers(1, 5))
        g = sorted(set(rng.integers(0, N_ENTITIES, k).tolist()))
        golds.append(g)
        lines.append("1 what movies did somebody act in?\t" + ", ".join(names[j] for j in g))
    (root / "task1_qa_test.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root, rng, golds


def write_matrix(path: Path, rng, golds: list[list[int]]) -> None:
    """float32 scores; each item's first gold gets a score placing it at a random rank 1..200."""
    n = len(golds)
    m = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(n, N_ENTITIES))
    step = 256
    for a in range(0, n, step):
        block = rng.random((min(step, n - a), N_ENTITIES), dtype=np.float32)
        for r in range(block.shape[0]):
            g = golds[a + r]
            block[r, g] = 0.0
            rank = int(rng.integers(1, 201))
            kth = np.partition(block[r], N_ENTITIES - rank)[N_ENTITIES - rank]  # the rank-th largest
            block[r, g[0]] = np.nextafter(kth, np.float32(2))  # just above it: the gold ranks exactly `rank`
        m[a : a + block.shape[0]] = block
    m.flush()
    del m


def write_json(path: Path, rng, golds: list[list[int]]) -> None:
    items = {}
    for i, g in enumerate(golds):
        v = rng.random(N_ENTITIES)
        v[g[0]] = 2.0 if i % 2 == 0 else 0.5
        items[f"task1_qa_test:{i + 1}:1"] = {f"e{j + 1}": round(float(x), 6) for j, x in enumerate(v)}
    path.write_text(json.dumps({"format": "scores", "items": items}))


def child(mode: str, data: Path, sub: Path) -> dict:
    proc = subprocess.run([sys.executable, "-c", CHILD, mode, str(data), str(sub)], capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(proc.stderr[-2000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def gb(x: float) -> str:
    return f"{x / 2**30:.2f} GiB"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=10_000)
    ap.add_argument("--json-items", type=int, default=100)
    ap.add_argument("--keep", type=Path, default=None, help="write the data here and keep it")
    args = ap.parse_args()
    tmp = args.keep or Path(tempfile.mkdtemp(prefix="bench-movie-"))
    try:
        t0 = time.perf_counter()
        data, rng, golds = make_data(tmp / "data", args.items)
        npy = tmp / "scores.npy"
        write_matrix(npy, rng, golds)
        print(f"generated {args.items} items x {N_ENTITIES} float32 scores ({gb(npy.stat().st_size)}) "
              f"in {time.perf_counter() - t0:.1f}s")
        base = child("load", data, npy)
        run = child("score", data, npy)
        print(f"numpy.load (baseline):  {base['seconds']:7.2f}s  peak RSS {gb(base['peak_rss'])}  "
              f"peak anon {gb(base['peak_anon'])}")
        print(f"movie-dialog .npy:      {run['seconds']:7.2f}s  peak RSS {gb(run['peak_rss'])}  "
              f"peak anon {gb(run['peak_anon'])}  {run['result']}")
        print(f"ratio to numpy.load: time {run['seconds'] / base['seconds']:.2f}x, "
              f"peak RSS {run['peak_rss'] / base['peak_rss']:.2f}x; "
              f"private memory / one float64 copy of the matrix: "
              f"{run['peak_anon'] / (8 * args.items * N_ENTITIES):.3f}")
        npy.unlink()
        if args.json_items:
            sub_golds = golds[: args.json_items]
            js = tmp / "scores.json"
            (data / "task1_qa_test.txt").write_text(
                "".join(ln + "\n" for ln in (data / "task1_qa_test.txt").read_text().splitlines()[: args.json_items]))
            write_json(js, rng, sub_golds)
            r = child("score", data, js)
            per_m = r["seconds"] / (args.json_items * N_ENTITIES) * 1e6
            print(f"movie-dialog JSON:      {r['seconds']:7.2f}s for {args.json_items} items x {N_ENTITIES} "
                  f"({gb(js.stat().st_size)}; {per_m:.2f}s per million scores)  peak RSS {gb(r['peak_rss'])}  "
                  f"{r['result']}")
    finally:
        if args.keep is None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
