"""Ubuntu v2 scoring at scale: 1,000,000 contexts x 10 scores from a .npy matrix.

Measures, each in a fresh process (so peak RSS is the phase's own), best of ``--repeat`` runs:

* baseline: ``numpy.load`` of the matrix alone;
* scoring: the Ubuntu reader on the same file (``score_items``: open, check shape/dtype/finiteness, ranks
  of the ground truth among 10 and the nested 1-in-2 / 1-in-5, the rank table) plus the four default
  metrics (R2@1, R10@1, R10@2, R10@5);
* for reference, building the split's item set (the ids ``test:1`` ... ``test:1000000``), which stands in
  for reading the organizer's test.csv and is not part of scoring a submission.

Prints times, peak RSS and the ratio scoring / numpy.load (target <= 3x). Run::

    python3 benchmarks/bench_ubuntu.py [--rows 1000000] [--dtype float64] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, sys, time
import numpy as np
phase, path, rows = sys.argv[1], sys.argv[2], int(sys.argv[3])
from dialeval import metrics
from dialeval.benchmarks.items import score_items
from dialeval.benchmarks.ubuntu import item_set
ms = metrics.resolve("r2@1,r10@1,r10@2,r10@5")
s = item_set("test", rows) if phase == "score" else None
def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1])
base = status("VmRSS:")
with open("/proc/self/clear_refs", "w") as fh:  # reset the peak (VmHWM) to the current RSS
    fh.write("5")
t = time.perf_counter()
if phase == "load":
    m = np.load(path)
    result = float(m[0, 0])
elif phase == "score":
    table, problems, info = score_items(path, [s], benchmark="ubuntu", split="test", ties="expected",
                                        scoring=True, nested=(2, 5, 10))
    assert not problems, problems[:3]
    result = [m.compute(table) for m in ms]
else:
    s = item_set("test", rows)
    result = len(s)
dt = time.perf_counter() - t
peak = status("VmHWM:")
print(json.dumps({"seconds": dt, "peak_kib": peak, "before_kib": base, "result": result}))
"""


def child(phase: str, path: Path, rows: int) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, phase, str(path), str(rows)], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def best(phase: str, path: Path, rows: int, repeat: int) -> dict:
    runs = [child(phase, path, rows) for _ in range(repeat)]
    return min(runs, key=lambda r: r["seconds"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--dtype", default="float64", choices=("float64", "float32"))
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    import numpy as np

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scores.npy"
        rng = np.random.default_rng(0)
        np.save(path, rng.random((a.rows, 10)).astype(a.dtype))
        size = path.stat().st_size
        child("load", path, a.rows)  # warm the page cache: both phases then read from memory
        load = best("load", path, a.rows, a.repeat)
        score = best("score", path, a.rows, a.repeat)
        ids = best("items", path, a.rows, 1)
    mib = 1024.0
    print(f"Ubuntu v2 scoring: {a.rows:,} contexts x 10 {a.dtype} scores ({size / 2**20:.0f} MiB .npy), best of {a.repeat}")
    print(f"  numpy.load           {load['seconds']:7.3f} s   peak RSS {load['peak_kib'] / mib:7.0f} MiB "
          f"(+{(load['peak_kib'] - load['before_kib']) / mib:.0f} during the phase)")
    print(f"  score + 4 metrics    {score['seconds']:7.3f} s   peak RSS {score['peak_kib'] / mib:7.0f} MiB "
          f"(+{(score['peak_kib'] - score['before_kib']) / mib:.0f} during the phase)")
    print(f"  (item set, excluded) {ids['seconds']:7.3f} s")
    print(f"  metrics: R2@1 R10@1 R10@2 R10@5 = {' '.join(f'{v:.4f}' for v in score['result'])}")
    ratio = score["seconds"] / load["seconds"]
    print(f"  ratio scoring / numpy.load = {ratio:.2f}x (target <= 3x): {'OK' if ratio <= 3 else 'ABOVE TARGET'}")


if __name__ == "__main__":
    main()
