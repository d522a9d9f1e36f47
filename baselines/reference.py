"""Reference submissions: every baseline's run on the embedded default challenge, stored with its report.

``submissions/baselines/default/<baseline>/`` holds ``submission.tgz`` (the official layout, top-10 ranks,
packed deterministically: fixed member order, mtimes and owners, gzip header without a timestamp),
``report.json`` (the score report; its results records carry the signatures) and ``run.json`` (how it was
made). Tests regenerate the submissions and require bit-identical scores, and score the stored archives and
require the stored reports, so a change to the simulator, a baseline or a metric cannot go unnoticed.
"""

from __future__ import annotations

import gzip
import io
import json
import tarfile
import tempfile
from pathlib import Path

from dialeval.files.write import atomic_write_bytes, atomic_write_text

REFERENCE_BASELINES = ("random", "tfidf", "nearest-neighbor", "rule-based")
TOP_K = 10
SEED = 0


def pack_directory(src: Path) -> bytes:
    """A reproducible .tgz of ``src``'s files (sorted, mtime 0, uid/gid 0, no gzip timestamp)."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(p for p in src.rglob("*") if p.is_file()):
            data = path.read_bytes()
            info = tarfile.TarInfo(str(path.relative_to(src)))
            info.size = len(data)
            info.mtime = 0
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    return gzip.compress(raw.getvalue(), compresslevel=9, mtime=0)


def _test_splits(challenge: Path) -> list[str]:
    from dialeval.formats.dstc6 import Challenge

    return [s for s in Challenge(challenge).splits if s.startswith("tst")]


def build_submission(name: str, challenge: Path, out: Path, seed: int = SEED) -> None:
    """Run baseline ``name`` on every test split of ``challenge`` and write the packed run to ``out``."""
    from dialeval.baselines.run import run_baseline

    with tempfile.TemporaryDirectory(prefix="dialeval-ref-") as tmp:
        sub = Path(tmp) / "submission"
        for split in _test_splits(challenge):
            run_baseline(name, challenge, split, sub, seed=seed, top_k=TOP_K)
        atomic_write_bytes(out, pack_directory(sub))


def demo_runs(challenge: Path, names=REFERENCE_BASELINES) -> Path:
    """A folder of ``<baseline>/submission.tgz`` on the embedded default ``challenge``, for ``dialeval demo``.

    ``pip install`` and a source checkout have them stored (:func:`dialeval.core.resources.reference_runs_dir`);
    the wheel that bundles, starting kits and sites hand to workers and participants leaves them out (3 MB that
    only the demo reads, :mod:`dialeval.leaderboard.own_wheel`), so there the demo makes them once into the
    cache folder, byte-identical to the stored ones (tests/test_reference.py regenerates them bit for bit), and
    reuses them."""
    from dialeval import __version__
    from dialeval.core.resources import reference_runs_dir
    from dialeval.core.termsafe import progress
    from dialeval.files.cache import cache_root

    stored = reference_runs_dir()
    if all((stored / n / "submission.tgz").is_file() for n in names):
        return stored
    root = cache_root() / "reference-runs" / f"{__version__}-{challenge.name}"
    missing = [n for n in names if not (root / n / "submission.tgz").is_file()]
    with progress("reference baselines (once; cached)", total=len(missing)) as bar:
        for name in missing:
            bar.describe(f"reference baseline {name} (once; cached)")
            build_submission(name, challenge, root / name / "submission.tgz")
            bar.advance()
    return root


def build_reference(name: str, challenge: Path, out_dir: Path, seed: int = SEED, embedded_default: bool = True) -> dict:
    """Run baseline ``name`` on every test split of ``challenge``; write the archive and the report."""
    from dialeval.api import score

    splits = _test_splits(challenge)
    build_submission(name, challenge, out_dir / "submission.tgz", seed)
    report = score(out_dir / "submission.tgz", "all", challenge, options={"embedded_default": embedded_default})
    if not report.valid:
        raise RuntimeError(f"reference submission of {name} is invalid: {report.errors[0].format()}")
    stored = stored_report(report)
    atomic_write_text(out_dir / "report.json", json.dumps(stored, indent=2) + "\n")
    run = {"baseline": name, "seed": seed, "top_k": TOP_K, "splits": splits, "challenge": challenge.name,
           "command": f"dialeval baseline reference --out {out_dir.parent}"}
    atomic_write_text(out_dir / "run.json", json.dumps(run, indent=2) + "\n")
    return stored


def stored_report(report) -> dict:
    """The machine-independent part of a score report (no local paths)."""
    full = report.to_json()
    return {
        "signature": full["signature"],
        "data": {"hash": full["data"]["hash"], "embedded_default": full["data"]["embedded_default"]},
        "submission_sha256": full["submission"]["sha256"],
        "valid": full["valid"],
        "counts": full["counts"],
        "results": full["results"],
        "rank_distribution": full["rank_distribution"],
    }


def build_all(out_root: Path, challenge: Path, names=REFERENCE_BASELINES, seed: int = SEED) -> dict[str, dict]:
    """Rebuild every reference baseline on ``challenge`` (the embedded default: its caller resolves it)."""
    return {name: build_reference(name, challenge, out_root / name, seed) for name in names}
