"""Random and TF-IDF reference submissions for ConvAI2: JSON scores for the 20 candidates of every turn of a file.

* ``random``: each candidate's score is uniform in [0, 1) from ``numpy.random.default_rng(seed)``, turn by turn in
  file order, rounded to 6 decimals.
* ``tfidf``: each candidate's score is the TF-IDF cosine between it and the turn's context (the persona lines,
  every earlier message and reply of the dialog, and the message), with :mod:`dialeval.baselines.ubuntu_tfidf`'s
  weighting and tokens, the IDF fitted on the file's own contexts and candidates (no training data, and the
  turn's own label is never read), rounded to 6 decimals.

Both write ``{"format": "scores", "items": {item id: {"1": score, ..., "20": score}}}``, which ``dialeval score
SUB --benchmark convai2 --data FILE`` reads. The stored ones, on the constructed sample
(``submissions/samples/convai2``), are ``submissions/baselines/samples/convai2/<name>/submission.json`` with the
``report.json`` they score to; ``tests/test_reference_convai2.py`` re-scores them bit for bit, and
``python -m dialeval.baselines.convai2 DATA_FILE --out submissions/baselines/samples/convai2`` rebuilds them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

BASELINES = ("random", "tfidf")
SEED = 0


def turns(path: str | Path):
    """``(item id, context text, the 20 candidates)`` per turn, in file order (the file is vetted first)."""
    from dialeval.formats.convai2 import read_turns
    from dialeval.formats.fbdialog import iter_lines

    stem, conv, context = read_turns(path).stem, 0, []
    for ln in iter_lines(path):
        if ln.conversation != conv:
            conv, context = ln.conversation, []
        if ln.bot is None:
            context.append(ln.user)
            continue
        label, _reward, cands = ln.bot.split("\t")
        yield f"{stem}:{conv}:{ln.lid}", " ".join([*context, ln.user]), cands.split("|")
        context += [ln.user, label]


@dataclass
class _Rows:
    contexts: list[str]
    candidates: list[list[str]]
    utterances: tuple = ()

    def __len__(self) -> int:
        return len(self.contexts)


def scores(name: str, path: str | Path, seed: int = SEED) -> dict:
    """The scores document of baseline ``name`` on the ConvAI2 file ``path``."""
    ids, contexts, cands = zip(*turns(path), strict=True)
    if name == "random":
        s = np.random.default_rng(seed).random((len(ids), 20))
    elif name == "tfidf":
        from dialeval.baselines.ubuntu_tfidf import UbuntuTfidf

        rows = _Rows(list(contexts), [list(c) for c in cands])
        model = UbuntuTfidf().fit(_Rows(rows.contexts, [], [c for cs in rows.candidates for c in cs]))
        s = model.score(rows).astype(np.float64)
    else:
        raise ValueError(f"unknown ConvAI2 baseline {name!r} (known: {', '.join(BASELINES)})")
    items = {iid: {str(j + 1): round(float(v), 6) for j, v in enumerate(row)} for iid, row in zip(ids, s, strict=True)}
    return {"format": "scores", "items": items}


def build(name: str, data_file: Path, out_dir: Path, seed: int = SEED) -> dict:
    """Write ``out_dir/submission.json`` and the ``report.json`` it scores to (machine-independent part)."""
    from dialeval.api import score
    from dialeval.baselines.reference import stored_report
    from dialeval.files.write import atomic_write_text

    atomic_write_text(out_dir / "submission.json", json.dumps(scores(name, data_file, seed), indent=1) + "\n")
    stored = stored_report(score(out_dir / "submission.json", benchmark="convai2", data=data_file))
    atomic_write_text(out_dir / "report.json", json.dumps(stored, indent=2) + "\n")
    return stored


def main(argv: list[str] | None = None) -> int:
    from dialeval.core.script import ArgumentParser, run_script

    ap = ArgumentParser(prog="python -m dialeval.baselines.convai2", description=__doc__.split("\n")[0])
    ap.add_argument("data", help="a ConvAI2 file, e.g. valid_self_original.txt")
    ap.add_argument("--out", required=True, help="folder to write <baseline>/submission.json and report.json into")
    ap.add_argument("--seed", type=int, default=SEED)
    a = ap.parse_args(argv)
    from dialeval.files.write import protect

    def body():
        protect(a.data, "the data file")  # an --out holding the data file never replaces it
        for name in BASELINES:
            build(name, Path(a.data), Path(a.out) / name, a.seed)
            print(Path(a.out) / name)

    return run_script(body)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
