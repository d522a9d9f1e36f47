"""DSTC7 scoring at scale: a data file of 5,000 examples x 100 candidates and its submission, against ``json.load``.

Each phase runs in a fresh process (its peak RSS its own, from a reset VmHWM), interleaved ``--repeat`` times:

* ``json.load``: the baseline, the standard library parsing the data file and the submission;
* ``score``: ``dialeval.api.score`` of the submission against the data file (strict mode, or ``--lenient``):
  reading both files through the input layer, every check of the ranking, the data identity (sha256 of the data
  file) and the submission's sha256, the rank table and the report with the seven default metrics.

Prints medians, best times, peak RSS, the ratio score / json.load (target <= 2x) and the memory bound
(3x the two inputs + 200 MB).

    python3 benchmarks/bench_dstc7.py [--examples 5000] [--candidates 100] [--repeat 5] [--lenient]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import string
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, sys, time
phase, data, sub, lenient = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1"
from dialeval import api
import dialeval.benchmarks.dstc7, dialeval.formats.dstc7, dialeval.metrics.ranking, dialeval.results.render  # noqa
def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1])
with open("/proc/self/clear_refs", "w") as fh:  # reset the peak (VmHWM) to the current RSS
    fh.write("5")
t = time.perf_counter()
if phase == "json":
    with open(data, "rb") as fh:
        a = json.load(fh)
    with open(sub, "rb") as fh:
        b = json.load(fh)
    ok = len(a) == len(b)
else:
    report = api.score(sub, benchmark="dstc7", data=data, lenient=lenient)
    ok = report.valid
print(json.dumps({"seconds": time.perf_counter() - t, "peak_kb": status("VmHWM:"), "ok": ok}))
"""


def write_inputs(folder: Path, n: int, k: int, seed: int = 0) -> tuple[Path, Path]:
    """A data file in the released layout (``ubuntu_dev_subtask_1.json``) and a submission ranking every candidate."""
    rng = random.Random(seed)
    words = ["".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(2, 9))) for _ in range(3000)]

    def text(lo: int, hi: int) -> str:
        return " ".join(rng.choice(words) for _ in range(rng.randint(lo, hi)))

    def cid() -> str:
        return "".join(rng.choice(string.ascii_uppercase + string.digits) for _ in range(12))

    examples, run = [], []
    for e in range(n):
        options = [{"candidate-id": cid(), "utterance": text(4, 16)} for _ in range(k)]
        correct = [options[rng.randrange(k)]]
        examples.append({"data-split": "dev", "example-id": 1100001 + e,
                         "messages-so-far": [{"speaker": f"participant_{1 + t % 2}", "utterance": text(5, 20)}
                                             for t in range(rng.randint(3, 9))],
                         "options-for-correct-answers": correct, "options-for-next": options, "scenario": 1})
        order = [o["candidate-id"] for o in options]
        rng.shuffle(order)
        run.append({"example-id": 1100001 + e,
                    "candidate-ranking": [{"candidate-id": c, "confidence": round(1 - j / k, 4)}
                                          for j, c in enumerate(order)]})
    data, sub = folder / "ubuntu_dev_subtask_1.json", folder / "Ubuntu_subtask_1.json"
    data.write_text(json.dumps(examples, indent=4))
    sub.write_text(json.dumps(run, indent=4))
    return data, sub


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", type=int, default=5000)
    ap.add_argument("--candidates", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--lenient", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data, sub = write_inputs(Path(tmp), args.examples, args.candidates)
        sizes = data.stat().st_size, sub.stat().st_size
        runs: dict[str, list[dict]] = {"json": [], "score": []}
        for _ in range(args.repeat):
            for phase in runs:
                out = subprocess.run([sys.executable, "-c", CHILD, phase, str(data), str(sub), str(int(args.lenient))],
                                     capture_output=True, text=True, check=True)
                r = json.loads(out.stdout.strip().splitlines()[-1])
                assert r["ok"], r
                runs[phase].append(r)
    size = sum(sizes)
    print(f"inputs: data {sizes[0] / 1e6:.1f} MB + submission {sizes[1] / 1e6:.1f} MB "
          f"({args.examples} examples x {args.candidates} candidates), mode {'lenient' if args.lenient else 'strict'}")
    med = {p: statistics.median(r["seconds"] for r in rs) for p, rs in runs.items()}
    for phase, rs in runs.items():
        peak = max(r["peak_kb"] for r in rs) / 1024
        print(f"{phase:>6}: median {med[phase]:.3f} s, best {min(r['seconds'] for r in rs):.3f} s, "
              f"peak RSS {peak:.0f} MB")
    bound = (3 * size) / 2**20 + 200
    peak = max(r["peak_kb"] for r in runs["score"]) / 1024
    print(f"ratio score / json.load: {med['score'] / med['json']:.2f}x (target <= 2x)")
    print(f"score peak RSS {peak:.0f} MB, bound 3x inputs + 200 MB = {bound:.0f} MB: {'ok' if peak <= bound else 'OVER'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
