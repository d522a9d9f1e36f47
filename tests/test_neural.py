"""Neural baselines (supervised embeddings, MemN2N, MemN2N+match): install hint without torch, match features,
determinism, save/load, the DSTC6-format ``baseline run`` path, and (real data) a small task-1 configuration
that must beat TF-IDF. The full reproduction is ``benchmarks/reproduce_neural.py`` (slow test below)."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dialeval.baselines._torchutil import INSTALL_HINT, CandidateSet, Lexicon, Vocab, speakers
from dialeval.baselines.data import gold_ranks, load_babi_candidates, load_babi_items
from dialeval.baselines.embeddings import SupervisedEmbeddings  # torch itself is imported lazily
from dialeval.baselines.memn2n import MemN2N, MemN2NMatch
from dialeval.formats.dstc6 import Candidate, DialogItem, write_dataset
from dialeval.metrics.ranking import hit_rate_at_k

REPO = Path(__file__).resolve().parents[1]
BABI = Path(__file__).resolve().parents[2] / "shared" / "data" / "babi-dialog"
needs_babi = pytest.mark.skipif(not BABI.is_dir(), reason=f"real bAbI data not found at {BABI}")

needs_torch = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None, reason="torch not installed (pip install 'dialeval[neural]' -c constraints.txt)"
)

CANDS = [
    Candidate("0", "hello what can i help you with today"),
    Candidate("1", "where should it be"),
    Candidate("2", "api_call italian paris two cheap"),
    Candidate("3", "api_call thai tokyo two cheap"),
    Candidate("4", "here it is resto_tokyo_cheap_thai_1stars_phone"),
    Candidate("5", "here it is resto_rome_cheap_thai_2stars_phone"),
    Candidate("6", "you are welcome"),
]
BY_ID = {c.candidate_id: c for c in CANDS}


@pytest.fixture(autouse=True)
def one_thread(monkeypatch):
    """One torch thread: CI runs other jobs on the same cores, where 2 spinning threads measured 20x slower."""
    monkeypatch.setenv("DIALEVAL_TORCH_THREADS", "1")


def test_thread_count_defaults_to_the_cpu_count(monkeypatch):
    from dialeval.baselines._torchutil import torch_threads

    monkeypatch.delenv("DIALEVAL_TORCH_THREADS")
    assert torch_threads() == (os.cpu_count() or 1)
    monkeypatch.setenv("DIALEVAL_TORCH_THREADS", "3")
    assert torch_threads() == 3


def it(utterances, answer=None, conv=None):
    return DialogItem(f"d{abs(hash(tuple(utterances))) % 10**8}", list(utterances), CANDS,
                      BY_ID[answer] if answer else None, conv)


TRAIN = [
    it(["hello"], "0"),
    it(["good morning"], "0"),
    it(["hello", "hello what can i help you with today", "italian food please"], "1"),
    it(["hello", "hello what can i help you with today", "thai food"], "1"),
    it(["hello", "x", "italian food", "where should it be", "in paris for two cheap"], "2"),
    it(["thanks"], "6"),
    it(["thank you"], "6"),
]


def run_cli(*args, env_extra=None, pre=""):
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIALEVAL_")}
    env["DIALEVAL_TORCH_THREADS"] = "1"
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(env_extra or {})
    code = pre + "from dialeval.cli import run; run()"
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=300)


def _challenge(tmp_path: Path) -> Path:
    root = tmp_path / "chal"
    tst = [DialogItem(f"s{i}", u, CANDS) for i, u in enumerate([["hello"], ["thanks"], ["good morning"]])]
    write_dataset(root / "tst1" / "dialog-task1API-kb1_atmosphere-distr0.5-tst1000.json", tst)
    write_dataset(root / "trn" / "dialog-task1API-kb1_atmosphere-distr0.5-trn10000.json", TRAIN)
    return root


# ---------------------------------------------------------------------------------------------------------------
# without torch


@pytest.mark.parametrize("name", ["supervised-embeddings", "memn2n", "memn2n-match"])
def test_without_torch_says_how_to_install_and_exits_2(tmp_path, name):
    root = _challenge(tmp_path)
    # A None entry in sys.modules makes `import torch` raise ImportError, as on a machine without torch.
    proc = run_cli("baseline", "run", name, "--challenge", root, "--split", "tst1", "--out", tmp_path / "r.json",
                   pre="import sys; sys.modules['torch'] = None; ")
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert INSTALL_HINT in proc.stderr
    assert not (tmp_path / "r.json").exists()


def test_baseline_list_without_torch_says_not_installed_in_aligned_columns():
    proc = run_cli("baseline", "list", pre="import sys; sys.modules['torch'] = None; ")
    assert proc.returncode == 0, proc.stderr
    rows = {line.split()[0]: line for line in proc.stdout.splitlines()}
    for name in ("supervised-embeddings", "memn2n", "memn2n-match"):
        assert "not installed (needs torch)" in rows[name] and " available " not in rows[name]
    assert " available " in rows["tfidf"]
    assert len({re.match(r"\S+\s+", line).end() for line in rows.values()}) == 1  # one column, long names included


def test_factory_without_torch_raises_usage_error(monkeypatch):
    from dialeval.baselines.registry import create
    from dialeval.core.errors import UsageError

    monkeypatch.setitem(sys.modules, "torch", None)
    for name in ("supervised-embeddings", "memn2n", "memn2n-match"):
        with pytest.raises(UsageError, match=r"dialeval\[neural\]") as e:
            create(name)
        assert e.value.exit_code == 2


# ---------------------------------------------------------------------------------------------------------------
# features


def test_speakers_facts_and_alternation():
    utt = ["hi", "hello", "api please", "api_call a b c d", "r1 R_phone r1_phone", "r1 R_cuisine thai", "<SILENCE>"]
    assert speakers(utt) == [1, 2, 1, 2, 3, 3, 1]


def test_match_features_type_kb_entities_seen_in_the_dialog():
    lex = Lexicon()
    lex.add_fact("resto_rome_cheap_thai_2stars R_cuisine thai")
    lex.add_fact("resto_paris_cheap_thai_2stars R_location paris")
    lex.add_fact("resto_rome_cheap_thai_2stars R_price cheap")
    lex.add_fact("resto_rome_cheap_thai_2stars R_number two")
    # api_call slots: 'italian'/'paris'/'tokyo' are typed by the position where known cuisines/locations occur
    lex.add_api_slots([c.utterance for c in CANDS])
    assert lex.to_json()["italian"] == "cuisine" and lex.to_json()["tokyo"] == "location"
    cs = CandidateSet(CANDS, Vocab(["here", "it", "is"]))
    # An OOV restaurant: its phone is typed by the dialog's own fact line, not by any lexicon.
    item = it(["i want thai food in tokyo", "ok", "resto_tokyo_cheap_thai_1stars R_phone resto_tokyo_cheap_thai_1stars_phone",
               "what is the phone number"])
    pairs = {(int(c), t) for c, t in cs.match_pairs(item, lex)}
    cuisine, location, phone = 0, 1, 5
    assert (3, cuisine) in pairs and (3, location) in pairs  # api_call thai tokyo ...
    assert (2, cuisine) not in pairs  # italian never said
    assert (4, phone) in pairs and not any(c == 5 for c, _ in pairs)  # only the phone that appeared


# ---------------------------------------------------------------------------------------------------------------
# training on handmade data: determinism, save/load, DSTC6-format run


@needs_torch
@pytest.mark.parametrize("cls", [SupervisedEmbeddings, MemN2N, MemN2NMatch])
def test_same_seed_same_scores_and_save_load_roundtrip(tmp_path, cls):
    params = dict(embedding_size=16, epochs=30, grid=None, progress=False)
    if cls is not SupervisedEmbeddings:
        params.update(hops=2, lr=0.05)
    else:
        params.update(lr=0.1, negatives=5)
    a = cls(seed=3, **params).fit(TRAIN)
    b = cls(seed=3, **params).fit(TRAIN)
    sa, sb = a.score_group(CANDS, TRAIN), b.score_group(CANDS, TRAIN)
    assert np.array_equal(sa, sb)
    ranks = gold_ranks(a, TRAIN)
    assert hit_rate_at_k(ranks, 1) == 1.0  # a tiny training set is learned
    a.save(tmp_path / "m")
    meta = json.loads((tmp_path / "m" / "vocab.json").read_text())
    assert meta["vocabulary"][0] == "<pad>" and "hello" in meta["vocabulary"]
    c = cls.load(tmp_path / "m")
    assert np.array_equal(c.score_group(CANDS, TRAIN), sa)
    assert c.rank(TRAIN[0])[0] == "0"
    d = cls(seed=0, load_from=str(tmp_path / "m")).fit([])  # regenerating a submission needs no training data
    assert np.array_equal(d.score_group(CANDS, TRAIN), sa)


@needs_torch
def test_dev_grid_selects_a_configuration_and_records_every_epoch():
    m = MemN2N(seed=0, embedding_size=8, epochs=3, patience=5, grid=({"hops": 1}, {"hops": 2}), progress=False)
    m.fit(TRAIN, TRAIN[:4])
    d = m.describe()
    assert d["config"]["hops"] in (1, 2) and 1 <= d["config"]["epoch"] <= 3
    assert {tuple(s["config"].items()) for s in d["dev_selection"]} <= {(("hops", 1),), (("hops", 2),)}
    assert all(0.0 <= s["dev_per_response"] <= 1.0 for s in d["dev_selection"])
    assert d["examples_per_second"] > 0


@needs_torch
def test_baseline_run_on_a_dstc6_challenge(tmp_path):
    root = _challenge(tmp_path)
    out = tmp_path / "r.json"
    proc = run_cli("baseline", "run", "memn2n", "--challenge", root, "--split", "tst1", "--out", out, "--top-k", "3")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(out.read_text())
    assert [d["dialog_id"] for d in data] == ["s0", "s1", "s2"]
    assert all(len(d["lst_candidate_id"]) == 3 for d in data)


# ---------------------------------------------------------------------------------------------------------------
# real data


@needs_torch
@needs_babi
@pytest.mark.realdata
def test_small_memn2n_match_on_task1_beats_tfidf():
    from dialeval.baselines.tfidf import TfidfBaseline

    cands = load_babi_candidates(BABI, 1)
    trn = load_babi_items(BABI, 1, "trn", 100, cands)
    tst = load_babi_items(BABI, 1, "tst", 100, cands)
    oov = load_babi_items(BABI, 1, "tst-OOV", 100, cands)
    tfidf = TfidfBaseline().fit(trn)
    model = MemN2NMatch(seed=0, embedding_size=32, hops=1, epochs=3, grid=None, progress=False,
                        kb=str(BABI / "dialog-babi-kb-all.txt")).fit(trn)
    for items in (tst, oov):
        ours = hit_rate_at_k(gold_ranks(model, items), 1)
        base = hit_rate_at_k(gold_ranks(tfidf, items), 1)
        assert ours > base + 0.3, (ours, base)


@needs_torch
@pytest.mark.slow
@needs_babi
@pytest.mark.realdata
def test_full_neural_reproduction(tmp_path):
    records = tmp_path / "r.jsonl"
    proc = subprocess.run([sys.executable, str(REPO / "benchmarks" / "reproduce_neural.py"), "run", "--data", str(BABI),
                           "--records", str(records)], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    recs = {(r["model"], r["task"], r["split"]): r for r in map(json.loads, records.read_text().splitlines())}
    assert recs[("memn2n-match", 4, "tst")]["per_response"] == 100.0
    assert recs[("memn2n-match", 4, "tst-OOV")]["per_response"] == 100.0


def _device_checking_mode(torch):
    """A TorchFunctionMode that fails any op whose tensor operands sit on more than one device (0-dim CPU scalars
    excepted, which torch itself allows anywhere). On the meta device ``unique`` has no output shape (it depends on
    the data), so it is given its largest one: every element distinct."""
    from torch.overrides import TorchFunctionMode
    from torch.utils._pytree import tree_flatten

    class SameDevice(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            flat, _ = tree_flatten((args, kwargs or {}))
            devices = {t.device for t in flat if isinstance(t, torch.Tensor) and not (t.dim() == 0 and t.device.type == "cpu")}
            name = getattr(func, "__name__", str(func))
            assert len(devices) <= 1, f"{name} mixes devices {sorted(map(str, devices))}"
            if "unique" in name and devices == {torch.device("meta")}:
                x = args[0]
                return x.new_empty(x.numel()), torch.empty(x.shape, dtype=torch.long, device=x.device)
            return func(*args, **(kwargs or {}))

    return SameDevice()


@needs_torch
@pytest.mark.parametrize("cls", [SupervisedEmbeddings, MemN2N, MemN2NMatch])
def test_a_training_step_creates_every_tensor_on_the_models_device(cls):
    """The model on the meta device (a non-CPU device torch offers without hardware): a tensor made on the CPU inside
    the loss (the negative sampling did, and failed on every GPU) meets a meta tensor and the step fails."""
    import torch

    from dialeval.baselines._torchutil import (
        EncodedItems,
        UtteranceTable,
        build_vocab,
        match_tensor,
        training_candidates,
    )

    model = cls(seed=0, embedding_size=8, negatives=3, grid=None, progress=False) if cls is SupervisedEmbeddings else \
        cls(seed=0, embedding_size=8, hops=2, grid=None, progress=False)
    cands = training_candidates(TRAIN)
    model.vocab = build_vocab(TRAIN, cands)
    table = UtteranceTable(model.vocab, model.max_tokens)
    enc = EncodedItems(TRAIN, table, model.memory_size, {c.utterance: i for i, c in enumerate(cands)})
    idx = np.arange(len(TRAIN))
    batch = {k: v.to("meta") for k, v in model._batch(torch, enc, torch.from_numpy(table.array()), idx).items()}
    cset = CandidateSet(cands, model.vocab, model.max_tokens)
    cand_t = torch.from_numpy(cset.tokens).to("meta")
    answer = torch.from_numpy(enc.answer[idx]).to("meta")
    meta = torch.device("meta")
    match = match_tensor(torch, [cset.match_pairs(i, Lexicon()) for i in TRAIN], len(cands), meta) if model.match else None
    module = model.make_module(model.current_config(), len(model.vocab)).to(meta)
    with _device_checking_mode(torch):
        loss = module.loss(batch, cand_t, match, answer, torch.Generator().manual_seed(0))
        loss.backward()
        module.scores(batch, cand_t, match)
    assert loss.device.type == "meta"
