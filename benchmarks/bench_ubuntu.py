"""Ubuntu v2 scoring at scale: 1,000,000 contexts x 10 scores from a .npy matrix, against ``numpy.load``.

Each phase runs in a fresh process (so its peak RSS is its own, measured from a reset VmHWM), and the phases
are interleaved ``--repeat`` times (the machine may be shared: medians, and the best run, are printed):

* ``numpy.load``: the baseline, reading the matrix alone;
* ``score``: everything the Ubuntu benchmark does once it knows the split has 1,000,000 rows
  (``Ubuntu.score_sets`` + ``dialeval.api.build_report``): open the .npy, check its header, shape, dtype
  and that every score is finite, the sha256 of the file (provenance), the rank of the ground truth among
  10 and the nested 1-in-2 / 1-in-5 under the tie policy, the rank table, and the report with the four
  default metrics (R2@1, R10@1, R10@2, R10@5) per file and for the split. Not timed: reading the organizer's
  ``test.csv`` (counting its rows, hashing it for the data identity), which does not depend on the submission;
* ``sha256``: ``hashlib.file_digest`` of the same file alone, the floor of any scorer that records the
  submission's sha256 (it cannot be split across cores).

Prints medians and best times, peak RSS, the ratio score / numpy.load (target <= 3x) and sha256 / numpy.load.

    python3 benchmarks/bench_ubuntu.py [--rows 1000000] [--dtype float32] [--repeat 7] [--ties expected]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, sys, time
phase, path, rows, ties = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
import hashlib
import numpy as np
from dialeval import api
from dialeval.benchmarks.base import Request
from dialeval.files.identity import DataIdentity
from dialeval.benchmarks.ubuntu import Ubuntu, item_set
import dialeval.benchmarks.items, dialeval.formats.scores, dialeval.metrics.ranking, dialeval.results.render  # noqa: F401
bench = Ubuntu()
identity = DataIdentity("00000000", "(not read)", ["test.csv"])
def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1])
base = status("VmRSS:")
with open("/proc/self/clear_refs", "w") as fh:  # reset the peak (VmHWM) to the current RSS
    fh.write("5")
t = time.perf_counter()
parts = {}
if phase == "load":
    m = np.load(path)
    result = float(m[0, 0])
elif phase == "sha256":
    with open(path, "rb") as fh:
        result = hashlib.file_digest(fh, "sha256").hexdigest()
else:
    request = Request(submission=path, data=None, split="test", scoring=True, ties=ties)
    ev = bench.score_sets(request, ["test"], [item_set("test", rows)], identity)
    parts["read+rank"] = time.perf_counter() - t
    report = api.build_report(bench, ev)
    parts["report"] = time.perf_counter() - t - parts["read+rank"]
    assert report.valid, report.problems[:3]
    result = [report.value(name, "test") for name in ("r2@1", "r10@1", "r10@2", "r10@5")]
dt = time.perf_counter() - t
peak = status("VmHWM:")
print(json.dumps({"seconds": dt, "peak_kib": peak, "before_kib": base, "result": result, "parts": parts}))
"""


def child(phase: str, path: Path, rows: int, ties: str) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, phase, str(path), str(rows), ties],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--dtype", default="float32", choices=("float32", "float64"))
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--ties", default="expected", choices=("expected", "pessimistic", "optimistic"))
    a = ap.parse_args()
    import numpy as np

    phases = ("load", "score", "sha256")
    runs: dict[str, list[dict]] = {p: [] for p in phases}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scores.npy"
        rng = np.random.default_rng(0)
        np.save(path, rng.random((a.rows, 10)).astype(a.dtype))
        size = path.stat().st_size
        child("load", path, a.rows, a.ties)  # warm the page cache: every phase then reads from memory
        for _ in range(a.repeat):
            for p in phases:
                runs[p].append(child(p, path, a.rows, a.ties))
    med = {p: statistics.median(r["seconds"] for r in runs[p]) for p in phases}
    best = {p: min(r["seconds"] for r in runs[p]) for p in phases}
    mib = 1024.0
    print(f"Ubuntu v2 scoring: {a.rows:,} contexts x 10 {a.dtype} scores ({size / 2**20:.0f} MiB .npy), "
          f"ties={a.ties}, {a.repeat} interleaved runs per phase")
    labels = {"load": "numpy.load", "score": "score + report", "sha256": "sha256 alone"}
    for p in phases:
        r = min(runs[p], key=lambda x: x["seconds"])
        peak = statistics.median(x["peak_kib"] for x in runs[p])
        grow = statistics.median(x["peak_kib"] - x["before_kib"] for x in runs[p])
        print(f"  {labels[p]:15s} median {med[p] * 1e3:7.1f} ms   best {best[p] * 1e3:7.1f} ms   "
              f"peak RSS {peak / mib:5.0f} MiB (+{grow / mib:.0f} during the phase)")
        if r["parts"]:
            print("    of which (median): " + ", ".join(
                f"{k} {statistics.median(x['parts'][k] for x in runs[p]) * 1e3:.1f} ms" for k in r["parts"]))
    print(f"  metrics: R2@1 R10@1 R10@2 R10@5 = {' '.join(f'{v:.4f}' for v in runs['score'][0]['result'])}")
    ratio = med["score"] / med["load"]
    print(f"  ratio score / numpy.load = {ratio:.2f}x median, {best['score'] / best['load']:.2f}x best "
          f"(target <= 3x): {'OK' if ratio <= 3 else 'ABOVE TARGET'}")
    print(f"  floor: sha256 of the file / numpy.load = {med['sha256'] / med['load']:.2f}x median "
          f"(the provenance hash alone, on its own thread while the scores are ranked)")


if __name__ == "__main__":
    main()
