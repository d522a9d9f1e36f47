"""ConvAI2 reference submissions (random, TF-IDF) on the constructed sample: stored under
submissions/baselines/samples/convai2/, they must re-score to their stored reports bit for bit (API and command line),
and rebuilding them must give the same bytes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialeval.baselines.convai2 import BASELINES, build
from dialeval.baselines.reference import stored_report

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "submissions" / "samples" / "convai2" / "valid_self_original.txt"
STORED = REPO / "submissions" / "baselines" / "samples" / "convai2"


@pytest.mark.parametrize("name", BASELINES)
def test_stored_submission_scores_to_the_stored_report(name):
    from dialeval.api import score

    text = (STORED / name / "report.json").read_text()
    fresh = stored_report(score(STORED / name / "submission.json", benchmark="convai2", data=DATA))
    assert json.dumps(fresh, indent=2) + "\n" == text
    stored = json.loads(text)
    assert [r["value"].hex() for r in fresh["results"]] == [float(r["value"]).hex() for r in stored["results"]]


@pytest.mark.parametrize("name", BASELINES)
def test_rebuilt_submission_is_bit_identical(name, tmp_path):
    build(name, DATA, tmp_path / name)
    for f in ("submission.json", "report.json"):
        assert (tmp_path / name / f).read_bytes() == (STORED / name / f).read_bytes(), f


def test_command_line_gives_the_stored_values(cli):
    r = cli("score", STORED / "tfidf" / "submission.json", "--benchmark", "convai2", "--data", DATA, "--json")
    assert r.returncode == 0, r.stderr
    stored = json.loads((STORED / "tfidf" / "report.json").read_text())
    assert json.loads(r.stdout)["results"] == stored["results"]
    # the TF-IDF baseline beats random on the sample: 3 of 9 turns at hits@1 against 0
    values = {x["metric"]: x["value"] for x in stored["results"]}
    assert values["hits@1"] == 3 / 9 and values["hits@10"] == 6 / 9
