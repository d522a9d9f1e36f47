"""Random and TF-IDF baselines for the SMN/DAM TSV benchmarks (douban, ecommerce, ubuntu-v1): one score per data line.

* ``random``: a uniform number per line from ``numpy.random.default_rng(seed)``, in file order.
* ``tfidf``: the cosine between TF-IDF vectors of the context (its utterances joined) and of the response,
  ``w(t, d) = tf(t, d) * idf(t)``, ``idf(t) = ln((1 + N) / (1 + df(t))) + 1``, with N and df counted over every
  context and every response of the scored file itself (no labels are read; the corpora ship word-segmented
  text, so tokens are the space-separated words, lower-cased).

Scores are written with ``repr`` (every digit), so a re-run is byte-identical.
Command line: ``python -m dialeval.baselines.selection tfidf DATA.txt --out scores.txt``.
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import numpy as np

from dialeval.formats.douban import iter_contexts

BASELINES = ("random", "tfidf")


def _vector(tokens: list[str], idf: dict[str, float]) -> dict[str, float]:
    w = {t: c * idf[t] for t, c in Counter(tokens).items()}
    norm = math.sqrt(sum(x * x for x in w.values()))
    return {t: x / norm for t, x in w.items()} if norm else {}


def tfidf_scores(data: str | Path) -> list[float]:
    """TF-IDF cosine of each data line's response with its context, in file order."""
    contexts = [([t.lower() for u in utts for t in u.split()], [r.lower().split() for r in responses])
                for utts, responses, _ in iter_contexts(data)]
    docs = [ctx for ctx, _ in contexts] + [r for _, rs in contexts for r in rs]
    df = Counter(t for d in docs for t in set(d))
    idf = {t: math.log((1 + len(docs)) / (1 + n)) + 1 for t, n in df.items()}
    out = []
    for ctx, responses in contexts:
        c = _vector(ctx, idf)
        for r in responses:
            v = _vector(r, idf)
            out.append(sum(x * c.get(t, 0.0) for t, x in sorted(v.items())))
    return out


def random_scores(data: str | Path, seed: int = 0) -> list[float]:
    n = sum(len(labels) for _, _, labels in iter_contexts(data))
    return np.random.default_rng(seed).random(n).tolist()


def run(name: str, data: str | Path, out: str | Path, seed: int = 0) -> Path:
    """Write baseline ``name``'s scores for the data file ``data`` to ``out`` (one line per data line)."""
    from dialeval.files.write import atomic_write_text

    scores = tfidf_scores(data) if name == "tfidf" else random_scores(data, seed)
    atomic_write_text(out, "".join(f"{v!r}\n" for v in scores))
    return Path(out)


def build_reference(benchmark: str, name: str, sample: Path, out_dir: Path) -> dict:
    """Run baseline ``name`` on a sample's ``test.txt``; write ``scores.txt`` and the stored ``report.json``."""
    import json

    from dialeval.api import score
    from dialeval.baselines.reference import stored_report
    from dialeval.files.write import atomic_write_text

    scores = run(name, sample / "test.txt", out_dir / "scores.txt")
    stored = stored_report(score(scores, benchmark=benchmark, data=sample / "test.txt", ties="input-order"))
    atomic_write_text(out_dir / "report.json", json.dumps(stored, indent=2) + "\n")
    return stored


def main(argv: list[str] | None = None) -> int:
    from dialeval.core.script import ArgumentParser, run_script

    ap = ArgumentParser(prog="python -m dialeval.baselines.selection", description=__doc__.split("\n")[0])
    ap.add_argument("baseline", choices=BASELINES)
    ap.add_argument("data", help="a data file (label<TAB>utterances<TAB>response lines)")
    ap.add_argument("--out", required=True, help="the score file to write")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    from dialeval.files.write import check_output, protect

    def body():
        protect(a.data, "the data file")  # --out onto the data would replace it with scores
        check_output(a.out)  # refused before any work
        print(run(a.baseline, a.data, a.out, a.seed))

    return run_script(body)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
