"""Reference baseline submissions on the embedded default challenge (submissions/baselines/default/).

Scoring the stored archives must give the stored reports bit for bit (every value at full precision,
through the API and through ``dialeval score --json`` / ``--csv``), and regenerating a submission must
give bit-identical files and scores: a change to the simulator, a baseline or a metric shows up here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialeval.baselines.reference import REFERENCE_BASELINES, build_reference, stored_report

STORED = Path(__file__).resolve().parents[1] / "submissions" / "baselines" / "default"


@pytest.fixture(scope="module")
def default_challenge(tmp_path_factory):
    import os

    os.environ.setdefault("DIALEVAL_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    from dialeval.simulator.default import ensure_default_challenge

    return ensure_default_challenge()


@pytest.fixture(scope="module")
def rescored(default_challenge):
    """Every stored archive scored again, now: the reports the stored ones are compared with."""
    from dialeval.api import score

    return {name: score(STORED / name / "submission.tgz", "all", default_challenge, options={"embedded_default": True})
            for name in REFERENCE_BASELINES}


def _stored(name: str) -> dict:
    return json.loads((STORED / name / "report.json").read_text())


@pytest.mark.parametrize("name", REFERENCE_BASELINES)
def test_stored_archive_scores_to_stored_report(name, rescored):
    stored = _stored(name)
    fresh = stored_report(rescored[name])
    assert fresh == stored
    # bit for bit: the float values themselves, not a rounding of them
    assert [r["value"].hex() for r in fresh["results"]] == [float(r["value"]).hex() for r in stored["results"]]
    assert json.dumps(fresh, indent=2) + "\n" == (STORED / name / "report.json").read_text()


@pytest.mark.parametrize("name", ["random", "nearest-neighbor"])
def test_command_line_rescores_the_stored_report(name, default_challenge, tmp_path):
    """``dialeval score --json`` and ``--csv`` of the stored archive carry the stored values at full precision."""
    import csv
    import io
    import os
    import subprocess
    import sys

    env = dict(os.environ, DIALEVAL_NO_PROGRESS="1")
    base = [sys.executable, "-m", "dialeval", "score", str(STORED / name / "submission.tgz"), "--challenge",
            str(default_challenge), "--split", "all"]
    r = subprocess.run([*base, "--json"], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    stored = _stored(name)
    assert json.loads(r.stdout)["results"] == stored["results"]
    r = subprocess.run([*base, "--csv"], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert [float(row["value"]) for row in rows] == [rec["value"] for rec in stored["results"]]
    assert any(len(row["value"].split(".")[-1]) > 6 for row in rows)  # not rounded to 6 decimals


@pytest.mark.parametrize("name", ["random", "rule-based", "tfidf"])
def test_regenerated_submission_is_bit_identical(name, default_challenge, tmp_path):
    stored = _stored(name)
    fresh = build_reference(name, default_challenge, tmp_path / name)
    assert fresh["submission_sha256"] == stored["submission_sha256"]
    assert fresh["results"] == stored["results"]


def test_reference_numbers_make_sense(rescored):
    def p1(name):
        return rescored[name].value("p@1", "all", average="micro")

    assert p1("rule-based") == 1.0
    assert 0.08 < p1("random") < 0.2  # 7-10 candidates: expected about 0.14
    assert p1("random") < p1("nearest-neighbor") < p1("rule-based")
    for name in REFERENCE_BASELINES:  # the stored numbers are the ones scored now
        assert p1(name) == next(r["value"] for r in _stored(name)["results"]
                                if r["split"] == "all" and r["metric"] == "p@1" and r["average"] == "micro")


def test_an_installed_demo_remakes_the_runs_the_wheel_leaves_out(default_challenge, tmp_path, monkeypatch):
    """The wheel ships no reference runs (3 MB only `dialeval demo` reads): without a checkout's stored ones,
    demo_runs makes them once into the cache, byte-identical to the stored archives, and then reuses them."""
    from dialeval.baselines import reference
    from dialeval.core import resources

    names = ("random", "nearest-neighbor")
    # a checkout or pip's wheel: the stored runs, where they are installed (tox installs a wheel, not the checkout)
    stored = reference.demo_runs(default_challenge, names)
    assert stored == resources.reference_runs_dir()
    for name in names:
        assert (stored / name / "submission.tgz").read_bytes() == (STORED / name / "submission.tgz").read_bytes()
    monkeypatch.setenv("DIALEVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(resources, "reference_runs_dir", lambda: tmp_path / "installed-wheel-has-none")
    made = reference.demo_runs(default_challenge, names)
    assert made.is_relative_to(tmp_path / "cache")
    for name in names:
        assert (made / name / "submission.tgz").read_bytes() == (STORED / name / "submission.tgz").read_bytes()

    def no_rebuild(*args, **kwargs):
        raise AssertionError("rebuilt a cached run")

    monkeypatch.setattr(reference, "build_submission", no_rebuild)
    assert reference.demo_runs(default_challenge, names) == made
