"""Reference submissions of the SMN/DAM TSV benchmarks (submissions/baselines/samples/<benchmark>/<baseline>/).

The random and TF-IDF baselines run on each constructed sample must give the stored score files byte for byte,
and scoring a stored file must give the stored report bit for bit (through the API and ``dialeval score
--json``): a change to a reader, a metric, a tie rule or a baseline shows up here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sample_data import SAMPLES as ROOT

from dialeval.baselines.reference import stored_report
from dialeval.baselines.selection import BASELINES, run

STORED = Path(__file__).resolve().parents[1] / "submissions" / "baselines" / "samples"
CASES = [(b, n) for b in ("douban", "ecommerce", "ubuntu-v1") for n in BASELINES]


def test_the_sample_example_runs_are_the_stored_tfidf_scores():
    """(test_samples.py checks each sample is what tests/sample_data.py builds, its example run included)"""
    for b in ("douban", "ecommerce", "ubuntu-v1"):
        assert (ROOT / b / "example-scores.txt").read_bytes() == (STORED / b / "tfidf" / "scores.txt").read_bytes()


@pytest.mark.parametrize("bench,name", CASES)
def test_regenerated_scores_are_byte_identical(bench, name, tmp_path):
    fresh = run(name, ROOT / bench / "test.txt", tmp_path / "scores.txt")
    assert fresh.read_bytes() == (STORED / bench / name / "scores.txt").read_bytes()


@pytest.mark.parametrize("bench,name", CASES)
def test_stored_scores_rescore_to_the_stored_report(bench, name):
    from dialeval.api import score

    stored_text = (STORED / bench / name / "report.json").read_text()
    report = score(STORED / bench / name / "scores.txt", benchmark=bench, data=ROOT / bench / "test.txt",
                   ties="input-order")
    fresh = stored_report(report)
    assert json.dumps(fresh, indent=2) + "\n" == stored_text
    assert [r["value"].hex() for r in fresh["results"]] == [float(r["value"]).hex() for r in json.loads(stored_text)["results"]]


@pytest.mark.parametrize("bench", ["douban", "ecommerce"])
def test_the_command_line_rescores_the_stored_report(bench, cli):
    r = cli("score", STORED / bench / "tfidf" / "scores.txt", "--benchmark", bench, "--data",
            ROOT / bench / "test.txt", "--ties", "input-order", "--json")
    assert r.returncode == 0, r.stderr
    stored = json.loads((STORED / bench / "tfidf" / "report.json").read_text())
    assert json.loads(r.stdout)["results"] == stored["results"]
