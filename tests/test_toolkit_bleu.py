"""The AirDialogue toolkit's BLEU as a named variant (audit row A12): ``--bleu-variant toolkit``.

Hand-computed values pin the arithmetic (no smoothing, a short segment adds no possible n-gram); the ':' split
and NLTK's tokens are checked on simulated AirDialogue dialogues through the command line. ``nltk.word_tokenize``
needs NLTK's punkt_tab model, which is NLTK data, not part of the package: the tests give it an untrained model
(its four files, empty) through NLTK_DATA, so they run the real tokeniser on any machine.
"""

from __future__ import annotations

import json
import math
import sys

import pytest
from conftest import REPO, run_cli

from dialeval.core.errors import UsageError
from dialeval.metrics.bleu import corpus_bleu, nltk_word_tokenize, toolkit_bleu, toolkit_turn

SAMPLE = REPO / "submissions" / "samples" / "airdialogue"


def test_toolkit_bleu_by_hand():
    ref = "the cat sat on the mat".split()
    hyp = "the cat sat on mat".split()
    # clipped matches / possible: 1-grams 5/5, 2-grams 3/4, 3-grams 2/3, 4-grams 1/2; c = 5 < r = 6
    want = 100 * math.exp(1 - 6 / 5) * (1 * 3 / 4 * 2 / 3 * 1 / 2) ** 0.25
    assert toolkit_bleu([ref], [hyp]) == pytest.approx(want, abs=1e-12)
    assert round(want, 3) == 57.893
    assert toolkit_bleu([ref], [ref]) == 100.0
    # a hypothesis longer than the reference: no brevity penalty; "the" is clipped to its two reference counts
    assert toolkit_bleu([ref], ["the the the cat sat on the mat".split()]) == pytest.approx(
        100 * (6 / 8 * 5 / 7 * 4 / 6 * 3 / 5) ** 0.25, abs=1e-12)


def test_no_smoothing_a_missing_order_gives_zero():
    # no 4-gram in common (3-grams: "sat on the"... none either): unsmoothed BLEU is exactly 0
    assert toolkit_bleu(["the cat sat on the mat".split()], ["the dog sat on a mat".split()]) == 0.0
    # fewer than four tokens: no possible 4-gram, precision 0, BLEU 0 (sacrebleu's effective order would not be)
    assert toolkit_bleu([["ok", "thanks"]], [["ok", "thanks"]]) == 0.0
    # where the toolkit divides by zero (empty hypothesis or reference): 0
    assert toolkit_bleu([["a", "b", "c", "d"]], [[]]) == 0.0 and toolkit_bleu([[]], [["a"]]) == 0.0


def test_corpus_sums_before_dividing_and_short_lines_add_nothing():
    refs, hyps = ["a b c d e", "ok"], ["a b c d e", "ok"]
    # 1-grams 6/6; 2-grams 4/4; 3-grams 3/3; 4-grams 2/2: the one-token line adds no possible 2-, 3-, 4-gram
    assert corpus_bleu(hyps, refs, variant="toolkit") == (100.0, "toolkit,tok:space,smooth:none")
    # lines split on single spaces: "".split(" ") is one empty token, matched by an empty reference line
    score, _ = corpus_bleu(["a b c d", ""], ["a b c d", ""], variant="toolkit")
    assert score == 100.0


@pytest.mark.needs("nltk")
def test_nltk_corpus_bleu_is_not_the_toolkits_arithmetic():
    """Why NLTK serves only the tokens: its corpus_bleu counts a short line's missing n-grams as possible ones."""
    from nltk.translate.bleu_score import corpus_bleu as nltk_corpus_bleu

    refs, hyps = [["a", "b", "c", "d", "e"], ["ok"]], [["a", "b", "c", "d", "e"], ["ok"]]
    assert toolkit_bleu(refs, hyps) == 100.0
    assert 100 * nltk_corpus_bleu([[r] for r in refs], hyps) < 90


def test_the_colon_split():
    assert toolkit_turn("agent: 6:00 works for me") == "6 00 works for me"
    assert toolkit_turn("customer:  Hello.") == "Hello."
    assert toolkit_turn("no speaker here") == ""  # the toolkit keeps only what follows a ':'


def test_without_nltk_the_variant_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "nltk", None)  # `import nltk` fails, as without the extra
    with pytest.raises(UsageError, match=r"tokenises with NLTK: pip install 'dialeval\[toolkit-bleu\]'"):
        nltk_word_tokenize()


@pytest.fixture
def punkt_tab(tmp_path):
    """An NLTK data folder holding an untrained punkt_tab model (its four files, empty)."""
    model = tmp_path / "nltk_data" / "tokenizers" / "punkt_tab" / "english"
    model.mkdir(parents=True)
    for name in ("collocations.tab", "sent_starters.txt", "abbrev_types.txt", "ortho_context.tab"):
        (model / name).write_text("")
    return tmp_path / "nltk_data"


@pytest.fixture
def air(tmp_path):
    d = tmp_path / "air"
    assert run_cli("airdialogue", "simulate", "--out", d, "--n", "12", "--seed", "5").returncode == 0
    return d


def _predictions(air, path, edit):
    data = [json.loads(x) for x in (air / "dev_data.json").read_text().splitlines()]
    lines = [{"action": x["expected_action"] | {"flight": x["expected_action"]["flight"][:1]},
              "dialogue": edit(i, x["dialogue"])} for i, x in enumerate(data)]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path, data


def _bleu_per_item(air, preds, tmp_path, variant, env=None):
    out = tmp_path / f"items-{variant}.jsonl"
    r = run_cli("score", preds, "--benchmark", "airdialogue", "--data", air, "--split", "dev", "--metrics",
                "score,bleu", "--bleu-variant", variant, "--per-item", out, "--json", env=env)
    assert r.returncode == 0, r.stderr
    sig = next(rec["signature"] for rec in json.loads(r.stdout)["results"] if rec["metric"] == "bleu")
    return [json.loads(x)["bleu"] for x in out.read_text().splitlines()], sig


@pytest.mark.needs("nltk", "sacrebleu")
def test_selfplay_toolkit_variant_on_simulated_dialogues(air, punkt_tab, tmp_path):
    """The toolkit's ':' split makes "6:00" and "6 00" the same words, so a dialogue that writes the time either way
    scores 100 there; sacrebleu's tokens differ. A truncated dialogue shows the brevity penalty in both."""
    def edit(i, turns):
        if i % 2:
            return turns[:3]
        return [t + " 6 00" if k == 1 else t for k, t in enumerate(turns)]

    preds, data = _predictions(air, tmp_path / "preds.jsonl", edit)
    gold_6_00 = [json.loads(x) for x in (air / "dev_data.json").read_text().splitlines()]
    for x in gold_6_00:  # the reference writes the time with a colon
        x["dialogue"][1] += " 6:00"
    (air / "dev_data.json").write_text("".join(json.dumps(x) + "\n" for x in gold_6_00))
    env = {"NLTK_DATA": str(punkt_tab)}
    toolkit, sig = _bleu_per_item(air, preds, tmp_path, "toolkit", env)
    sacre, sacre_sig = _bleu_per_item(air, preds, tmp_path, "sacrebleu", env)
    assert toolkit[0::2] == [100.0] * 6 and all(b < 100 for b in sacre[0::2])
    assert all(0 < b < 60 for b in toolkit[1::2])
    assert sig.split("|bleu:")[1].startswith("toolkit,tok:nltk-word_tokenize,nltk:") and ",punkt:" in sig
    assert ",smooth:none" in sig and "bleu:sacrebleu," in sacre_sig


@pytest.mark.needs("nltk")
def test_selfplay_toolkit_variant_without_the_punkt_model_is_one_usage_line(air, tmp_path):
    import nltk

    try:  # a machine with NLTK's model installed in a default place cannot show its absence
        nltk.data.find("tokenizers/punkt_tab/english/")
        pytest.skip("NLTK's punkt_tab model is installed here")
    except LookupError:
        pass
    preds, _ = _predictions(air, tmp_path / "preds.jsonl", lambda i, t: t)
    r = run_cli("score", preds, "--benchmark", "airdialogue", "--data", air, "--split", "dev", "--bleu-variant",
                "toolkit", env={"NLTK_DATA": str(tmp_path / "none")})
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == ("dialeval: error: the AirDialogue toolkit's BLEU tokenises with nltk.word_tokenize, which "
                        "needs NLTK's punkt_tab model: python -m nltk.downloader punkt_tab (or set NLTK_DATA to where "
                        "it is)\n")


def test_a_bleu_variant_without_dialogues_is_refused_not_ignored(tmp_path):
    r = run_cli("score", SAMPLE / "example-run.jsonl", "--benchmark", "airdialogue", "--data", SAMPLE, "--split",
                "dev", "--bleu-variant", "sacrebleu")
    assert r.returncode == 2 and "no BLEU is computed here" in r.stderr, r.stderr


def test_infer_bleu_toolkit_variant_on_the_sample(tmp_path):
    r = run_cli("airdialogue", "infer-bleu", SAMPLE / "example-hyps.txt", "--data", SAMPLE, "--bleu-variant",
                "toolkit", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert "|bleu:toolkit,tok:space,smooth:none|" in doc["signature"]
    hyps = (SAMPLE / "example-hyps.txt").read_text().splitlines()
    assert doc["n"] == len(hyps) and 0 < doc["bleu"] <= 100
    r = run_cli("airdialogue", "infer-bleu", SAMPLE / "example-hyps.txt", "--data", SAMPLE, "--bleu-variant",
                "toolkit", "--tokenize", "13a")
    assert r.returncode == 2 and "--tokenize chooses sacrebleu's tokenizer" in r.stderr


def test_the_benchmark_list_names_the_bleu_variants():
    text = run_cli("benchmarks").stdout
    assert "--bleu-variant=sacrebleu|toolkit" in text and "--flight-distance=current|legacy" in text
