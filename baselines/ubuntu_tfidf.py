"""TF-IDF baseline for Ubuntu v2 next-utterance classification (Lowe et al. 2015, "TF-IDF").

Each of a context's ten candidates (ground truth, Distractor_0 ... Distractor_8) is scored by the cosine
between TF-IDF vectors of the context and of the candidate:

    w(t, d)     = tf(t, d) · idf(t)                  tf = raw count of token t in text d
    idf(t)      = ln((1 + N) / (1 + df(t))) + 1      N = training documents (every context and every utterance
                                                     of train.csv), df(t) = documents containing t
    score(c, r) = w(c) · w(r) / (‖w(c)‖ ‖w(r)‖)      0 when either vector is empty

Tokens: lower-cased runs of two or more word characters (scikit-learn's default pattern); the turn markers
``__eou__``/``__eot__`` are dropped, and tokens never seen in training are dropped from both sides. The output
is a float32 score matrix, one row per context in file order, columns in file order, which
``dialeval score scores.npy --benchmark ubuntu --data DIR --split test --ties pessimistic`` reads.

Python::

    from dialeval.baselines.ubuntu_tfidf import UbuntuTfidf, run
    run("DATA_DIR", split="test", out="tfidf-test.npy")          # fit on DATA_DIR/train.csv, write scores
    model = UbuntuTfidf().fit(read_train("DATA_DIR/train.csv"))  # or step by step
    scores = model.score(read_eval("DATA_DIR/test.csv"))          # numpy (rows, 10)

Command line: ``python -m dialeval.baselines.ubuntu_tfidf DATA_DIR --split test --out tfidf-test.npy``.
(It is not in :mod:`dialeval.baselines.registry`: that registry's baselines rank DSTC6-style dialog items,
while this one reads the Ubuntu CSV files directly.)
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from dialeval.formats.ubuntu import EOT, EOU, EvalFile, TrainFile, read_eval, read_train

_TOKEN = re.compile(r"(?u)\b\w\w+\b")
_MARKERS = frozenset((EOU, EOT))


def tokens(text: str) -> list[str]:
    return [t for t in _TOKEN.findall(text.lower()) if t not in _MARKERS]


class UbuntuTfidf:
    """Fit an IDF table on train.csv; score contexts against their ten candidates by TF-IDF cosine."""

    def __init__(self) -> None:
        self.vocab: dict[str, int] = {}
        self.idf: np.ndarray | None = None

    def fit(self, train: TrainFile) -> UbuntuTfidf:
        docs = [*train.contexts, *train.utterances]
        vocab_set: set[str] = set()
        tokenised = [set(tokens(d)) for d in docs]
        for s in tokenised:
            vocab_set.update(s)
        self.vocab = {t: i for i, t in enumerate(sorted(vocab_set))}  # sorted: deterministic column order
        df = np.zeros(len(self.vocab), np.float64)
        for s in tokenised:
            for t in s:
                df[self.vocab[t]] += 1
        self.idf = np.log((1.0 + len(docs)) / (1.0 + df)) + 1.0
        return self

    def _matrix(self, texts: list[str]):
        """L2-normalised TF-IDF rows (scipy CSR), one per text."""
        import scipy.sparse as sp

        indptr = [0]
        indices: list[int] = []
        counts_out: list[float] = []
        for text in texts:
            counts: dict[int, int] = {}
            for t in tokens(text):
                j = self.vocab.get(t)
                if j is not None:
                    counts[j] = counts.get(j, 0) + 1
            for j in sorted(counts):
                indices.append(j)
                counts_out.append(float(counts[j]))
            indptr.append(len(indices))
        idx = np.asarray(indices, np.int64)
        w = np.asarray(counts_out, np.float64) * self.idf[idx]
        m = sp.csr_matrix((w, idx, np.asarray(indptr, np.int64)), shape=(len(texts), len(self.vocab)))
        norms = np.sqrt(np.asarray(m.multiply(m).sum(axis=1)).ravel())
        inv = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
        return (sp.diags(inv) @ m).tocsr()

    def score(self, data: EvalFile) -> np.ndarray:
        """(rows, 10) float32 cosine scores, candidates in file order (gt, d0 ... d8)."""
        if self.idf is None:
            raise RuntimeError("fit() first")
        n = len(data)
        width = len(data.candidates[0]) if n else 10
        ctx = self._matrix(data.contexts)
        cand = self._matrix([c for row in data.candidates for c in row])
        rows = np.repeat(np.arange(n), width)
        s = np.asarray(cand.multiply(ctx[rows]).sum(axis=1)).ravel()
        return s.reshape(n, width).astype(np.float32)


def run(data_dir: str | Path, split: str = "test", out: str | Path | None = None) -> Path:
    """Fit on ``data_dir/train.csv``, score ``data_dir/<split>.csv``, write the ``.npy`` matrix; return its path."""
    from dialeval.files.write import atomic_writer

    data_dir = Path(data_dir)
    model = UbuntuTfidf().fit(read_train(data_dir / "train.csv"))
    scores = model.score(read_eval(data_dir / f"{split}.csv", split))
    out = Path(out) if out is not None else Path(f"ubuntu-tfidf-{split}.npy")
    with atomic_writer(out, "wb") as fh:
        np.save(fh, scores)
    return out


def main(argv: list[str] | None = None) -> int:
    from dialeval.core.script import ArgumentParser, run_script

    ap = ArgumentParser(prog="python -m dialeval.baselines.ubuntu_tfidf", description=__doc__.split("\n")[0])
    ap.add_argument("data", help="directory with train.csv and valid.csv/test.csv")
    ap.add_argument("--split", default="test", choices=("valid", "test"))
    ap.add_argument("--out", default=None, help="output .npy (default ubuntu-tfidf-<split>.npy)")
    a = ap.parse_args(argv)
    from dialeval.core.errors import UsageError
    from dialeval.files.write import check_output, protect

    def body():
        if not (Path(a.data) / "train.csv").is_file():  # the IDF table is fitted on it: say so, not just "no such file"
            raise UsageError(f"{Path(a.data) / 'train.csv'}: no such file (this baseline fits its IDF table on the "
                             "data's train.csv)")
        for read in ("train.csv", f"{a.split}.csv"):  # --out onto a data file would replace the data with scores
            protect(Path(a.data) / read, "a data file")
        if a.out is not None:
            check_output(a.out)  # refused before the fit, not after it
        print(run(a.data, a.split, a.out))

    return run_script(body)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
