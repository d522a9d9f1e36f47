"""Reference baseline submissions on the embedded default challenge (submissions/baselines/default/).

Scoring the stored archives must give the stored reports, and regenerating a submission must give
bit-identical files and scores: a change to the simulator, a baseline or a metric shows up here.
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


@pytest.mark.parametrize("name", REFERENCE_BASELINES)
def test_stored_archive_scores_to_stored_report(name, default_challenge):
    from dialeval.api import score

    stored = json.loads((STORED / name / "report.json").read_text())
    report = score(STORED / name / "submission.tgz", "all", default_challenge, options={"embedded_default": True})
    assert stored_report(report) == stored


@pytest.mark.parametrize("name", ["random", "rule-based", "tfidf"])
def test_regenerated_submission_is_bit_identical(name, default_challenge, tmp_path):
    stored = json.loads((STORED / name / "report.json").read_text())
    fresh = build_reference(name, default_challenge, tmp_path / name)
    assert fresh["submission_sha256"] == stored["submission_sha256"]
    assert fresh["results"] == stored["results"]


def test_reference_numbers_make_sense():
    def p1(name):
        rep = json.loads((STORED / name / "report.json").read_text())
        return next(r["value"] for r in rep["results"]
                    if r["split"] == "all" and r["metric"] == "p@1" and r["average"] == "micro")

    assert p1("rule-based") == 1.0
    assert 0.08 < p1("random") < 0.2  # 7-10 candidates: expected about 0.14
    assert p1("random") < p1("nearest-neighbor") < p1("rule-based")
