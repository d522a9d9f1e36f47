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
    excepted, which torch itself allows anywhere)."""
    from torch.overrides import TorchFunctionMode
    from torch.utils._pytree import tree_flatten

    class SameDevice(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            flat, _ = tree_flatten((args, kwargs or {}))
            devices = {t.device for t in flat if isinstance(t, torch.Tensor) and not (t.dim() == 0 and t.device.type == "cpu")}
            name = getattr(func, "__name__", str(func))
            assert len(devices) <= 1, f"{name} mixes devices {sorted(map(str, devices))}"
            return func(*args, **(kwargs or {}))

    return SameDevice()


def _small_model_on_meta(torch, cls):
    """A small ``cls`` model with TRAIN encoded on the meta device, a non-CPU device torch offers without hardware
    (with match features, some pairs to scatter): (model, split, candidate tokens, module, a batch-3 config)."""
    from dialeval.baselines._torchutil import (
        DeviceSplit,
        DeviceTable,
        EncodedItems,
        UtteranceTable,
        build_vocab,
        training_candidates,
    )

    meta = torch.device("meta")
    model = cls(seed=0, embedding_size=8, negatives=3, grid=None, progress=False) if cls is SupervisedEmbeddings else \
        cls(seed=0, embedding_size=8, hops=2, grid=None, progress=False)
    cands = training_candidates(TRAIN)
    model.vocab = build_vocab(TRAIN, cands)
    table = UtteranceTable(model.vocab, model.max_tokens)
    enc = EncodedItems(TRAIN, table, model.memory_size, {c.utterance: i for i, c in enumerate(cands)})
    cset = CandidateSet(cands, model.vocab, model.max_tokens)
    lex = Lexicon()
    lex.add_api_slots([c.utterance for c in CANDS])
    lex.add_fact("r R_cuisine italian")
    pairs = [cset.match_pairs(i, lex) for i in TRAIN] if model.match else None
    if model.match:
        assert sum(map(len, pairs)) > 0  # the match-feature scatter is exercised too
    split = DeviceSplit(torch, enc, DeviceTable(torch, table.array(), meta), pairs)
    config = {**model.current_config(), "batch_size": 3}
    return model, split, torch.from_numpy(cset.tokens).to(meta), model.make_module(config, len(model.vocab)).to(meta), config


def _epoch_and_dev_on_meta(torch, model, module, config, split, cand_t, order):
    """One training epoch over ``order`` and the dev evaluation, failing on any op that mixes devices:
    (loss sum, finite flag, examples seen, dev hits)."""
    with _device_checking_mode(torch):
        total, finite, seen = model._train_epoch(torch, module, model.make_optimizer(torch, module, config), config,
                                                 split, order, cand_t, torch.Generator().manual_seed(0))
        hits = model._dev_hits(torch, module, split, cand_t, cand_t.shape[0])
    return total, finite, seen, hits


@needs_torch
@pytest.mark.parametrize("cls", [SupervisedEmbeddings, MemN2N, MemN2NMatch])
def test_training_and_dev_evaluation_run_on_the_models_device_without_reading_it_back(cls):
    """The device path of the trainer (what runs on a GPU) with the model on the meta device, a non-CPU device torch
    offers without hardware. Two failures are caught: a tensor made on the CPU meeting a model tensor (the negative
    sampling did, and failed on every GPU), and any read of a device value inside an epoch (a meta tensor has no
    value: float(), bool(), .item(), .cpu() and data-dependent shapes such as torch.unique all raise), which on a
    GPU is a host round trip per batch."""
    import torch

    from dialeval.baselines._torchutil import PROFILE_BATCH, training_profile

    meta = torch.device("meta")
    model, split, cand_t, module, config = _small_model_on_meta(torch, cls)
    total, finite, seen, hits = _epoch_and_dev_on_meta(torch, model, module, config, split, cand_t,
                                                       np.arange(len(TRAIN))[::-1])
    assert total.device == meta and finite.device == meta and hits.device == meta
    assert seen == len(TRAIN)
    # what fit trains with on this device: the device profile (one large batch here), still without reading back
    config, profile = training_profile(model.current_config(), meta, model.device_profile)
    assert profile["name"] == "device" and config["batch_size"] == PROFILE_BATCH > len(TRAIN)
    opt = model.make_optimizer(torch, module, config)
    with _device_checking_mode(torch):
        total, finite, seen = model._train_epoch(torch, module, opt, config, split, np.arange(len(TRAIN)), cand_t,
                                                 torch.Generator().manual_seed(0))
    assert total.device == meta and seen == len(TRAIN)
    assert all(p.device == meta for p in module.parameters())


@needs_torch
def test_host_side_batching_equals_torch_unique_and_the_dense_match_features():
    """The batch's distinct rows and inverse come from np.unique on the host; they must be torch.unique's (the CPU
    numbers were stored with those), and the CSR match scatter must give the per-item dense features."""
    import torch

    from dialeval.baselines._torchutil import (
        ENTITY_TYPES,
        DeviceSplit,
        DeviceTable,
        EncodedItems,
        UtteranceTable,
        build_vocab,
        training_candidates,
    )

    cands = training_candidates(TRAIN)
    vocab = build_vocab(TRAIN, cands)
    table = UtteranceTable(vocab, 40)
    enc = EncodedItems(TRAIN, table, 4, {c.utterance: i for i, c in enumerate(cands)})
    cset = CandidateSet(cands, vocab)
    lex = Lexicon()
    lex.add_fact("r R_cuisine italian")
    lex.add_fact("r R_location paris")
    pairs = [cset.match_pairs(i, lex) for i in TRAIN]
    split = DeviceSplit(torch, enc, DeviceTable(torch, table.array(), torch.device("cpu")), pairs)
    idx = np.array([1, 4, 5])
    batch, answer, match = split.batch(torch, idx, len(cands))
    ids = torch.from_numpy(np.concatenate([enc.query[idx], enc.memory[idx].ravel()]))
    uniq, inv = torch.unique(ids, return_inverse=True)
    rows = torch.from_numpy(table.array())[uniq]
    width = int((rows != 0).sum(1).max())
    assert torch.equal(batch["rows"], rows[:, :width])
    assert torch.equal(batch["query"], inv[:3]) and torch.equal(batch["memory"], inv[3:].view(3, -1))
    assert answer.tolist() == enc.answer[idx].tolist()
    dense = torch.zeros((3, len(cands), len(ENTITY_TYPES)))
    for b, i in enumerate(idx):
        for c, t in pairs[i]:
            dense[b, c, t] = 1.0
    assert dense.sum() > 0 and torch.equal(match, dense)


@needs_torch
def test_unseen_random_gives_unseen_words_fixed_untrained_vectors():
    """``unseen="random"``: a word never seen in training changes the scores (it is dropped by default), always by the
    same vector (seeded by the word, not by what was scored before), and training is untouched."""
    params = dict(embedding_size=8, epochs=3, grid=None, progress=False, lr=0.1, negatives=3)
    drop = SupervisedEmbeddings(seed=1, **params).fit(TRAIN)
    rnd = SupervisedEmbeddings(seed=1, unseen="random", **params).fit(TRAIN)
    known = [it(["hello"])]
    assert np.array_equal(drop.score_group(CANDS, known), rnd.score_group(CANDS, known))
    oov = [it(["hello zanzibar"])]
    assert not np.array_equal(drop.score_group(CANDS, oov), rnd.score_group(CANDS, oov))
    again = SupervisedEmbeddings(seed=1, unseen="random", **params).fit(TRAIN)
    again.score_group(CANDS, [it(["qwerty"])])  # another unseen word first
    assert np.array_equal(again.score_group(CANDS, oov), rnd.score_group(CANDS, oov))
    assert "zanzibar" in rnd.vocab.stoi and "zanzibar" not in drop.vocab.stoi


@needs_torch
def test_raw_input_bag_is_a_parameter():
    a = SupervisedEmbeddings(seed=0, embedding_size=8, epochs=1, grid=None, progress=False, input_scale="none").fit(TRAIN)
    b = SupervisedEmbeddings(seed=0, embedding_size=8, epochs=1, grid=None, progress=False).fit(TRAIN)
    long = [it(["hello", "hello what can i help you with today", "italian food please"])]
    assert not np.allclose(a.score_group(CANDS, long), b.score_group(CANDS, long))
    assert a.describe()["config"]["input_scale"] == "none"
    from dialeval.core.errors import UsageError

    with pytest.raises(UsageError, match="input_scale"):
        SupervisedEmbeddings(seed=0, epochs=1, grid=None, progress=False, input_scale="mean").fit(TRAIN)


# ---------------------------------------------------------------------------------------------------------------
# reproduce babi: the stored settings, --jobs, --time-limit


@pytest.mark.parametrize("stored_file", ["babi-neural.json", "babi-neural-gpu.json"])
def test_stored_settings_are_the_parameters_of_each_stored_row(stored_file):
    """TABLE2_SETTINGS must be what produced submissions/baselines/babi-neural.json (CPU) and babi-neural-gpu.json
    (the same table on a GPU): each stored row's configuration (epoch cap, patience, grid) is what the table gives
    for its (model, task)."""
    from dialeval.baselines.memn2n import GRID as MEMN2N_GRID
    from dialeval.baselines.reproduce import model_params

    stored = json.loads((REPO / "submissions/baselines" / stored_file).read_text())
    assert len(stored) == 33
    for r in stored:
        p = model_params(r["model"], r["task"], BABI)
        cfg = r["config"]["config"]
        assert cfg["epochs"] == p["epochs"] and cfg["patience"] == p["patience"], (r["model"], r["task"])
        grid = p.get("grid", MEMN2N_GRID if r["model"].startswith("memn2n") else r["config"]["grid"])
        assert [dict(g) for g in (grid or [])] == r["config"]["grid"], (r["model"], r["task"])


def test_gpu_record_tables_agree_with_the_stored_rows():
    """babi-neural-gpu.md's row table gives, for every row, the GPU number of babi-neural-gpu.json, the CPU number of
    babi-neural.json and their difference; its timing table gives each job's seconds from the same files."""
    base = REPO / "submissions/baselines"
    gpu = {(r["model"], r["task"], r["split"]): r for r in json.loads((base / "babi-neural-gpu.json").read_text())}
    cpu = {(r["model"], r["task"], r["split"]): r for r in json.loads((base / "babi-neural.json").read_text())}
    assert gpu.keys() == cpu.keys() and all(r["device"] == "cuda" for r in gpu.values())
    md = (base / "babi-neural-gpu.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (\S+) \| T(\d)( OOV)? \| ([\d.]+) \| ([\d.]+) \| ([+-][\d.]+) \|", md, re.M)
    assert len(rows) == 33
    for model, task, oov, g, c, d in rows:
        key = (model, int(task), "tst-OOV" if oov else "tst")
        assert (float(g), float(c)) == (gpu[key]["per_response"], cpu[key]["per_response"]), key
        assert float(d) == round(gpu[key]["per_response"] - cpu[key]["per_response"], 2), key
    jobs = re.findall(r"^\| (\S+) \| T(\d) \| ([\d.]+) \| ([\d.]+) \| [\d.]+ \| ([\d.]+) \| ([\d.]+) \|", md, re.M)
    assert len(jobs) == 18
    for model, task, g_fit, g_wall, c_fit, c_wall in jobs:
        g_row, c_row = gpu[(model, int(task), "tst")], cpu[(model, int(task), "tst")]
        assert float(g_fit) == round(g_row["train_seconds"], 1) and float(g_wall) == round(g_row["wall_seconds"], 1)
        assert float(c_fit) == round(c_row["train_seconds"], 1) and float(c_wall) == round(c_row["wall_seconds"], 1)


def test_the_gpu_profile_table_is_the_stored_settings_at_the_device_profile_and_the_notes_quote_it():
    """babi-neural-gpu-profile.json is the device tool's H200 run of the whole table at the device profile: 33 rows,
    every job on CUDA at batch 256 with the profile's learning rate and the stored epoch cap, patience and grid (the
    profile's own settings where TABLE2_SETTINGS gives them); babi-neural-gpu.md's section on it and the README
    quote its counts and differences as the records give them."""
    from dialeval.baselines.memn2n import GRID as MEMN2N_GRID
    from dialeval.baselines.reproduce import model_params

    base = REPO / "submissions/baselines"
    load = lambda name: {(r["model"], r["task"], r["split"]): r for r in json.loads((base / name).read_text())}  # noqa: E731
    gpu, cpu, cpu_profile = load("babi-neural-gpu-profile.json"), load("babi-neural.json"), load("babi-neural-profile-cpu.json")
    assert gpu.keys() == cpu.keys() == cpu_profile.keys() and len(gpu) == 33
    for (model, task, _), r in gpu.items():
        prof, cfg = r["config"]["training_profile"], r["config"]["config"]
        assert r["device"] == "cuda" and (prof["name"], prof["batch_size"], cfg["batch_size"]) == ("device", 256, 256)
        assert prof["lr_scale"] == (8.0 if model == "supervised-embeddings" else 1.0), (model, task)
        p = model_params(model, task, BABI)
        grid = p.get("grid", MEMN2N_GRID if model.startswith("memn2n") else r["config"]["grid"])
        assert [dict(g) for g in (grid or [])] == r["config"]["grid"], (model, task)  # the declared grid
        p.update(p.pop("profile_settings", {}))  # what the profile trained instead, where the table says so
        assert (cfg["epochs"], cfg["patience"]) == (p["epochs"], p["patience"]), (model, task)
        tried = [d["config"] for d in r["config"]["dev_selection"]]
        assert [c for i, c in enumerate(tried) if c not in tried[:i]] == [dict(g) for g in p.get("grid") or [{}]] or \
            not p.get("grid"), (model, task)
    missed = sorted(k for k, r in gpu.items() if not r["meets_target"])
    assert len(missed) == 6 and sum(r["meets_target"] for r in cpu.values()) == 27
    assert sum(r["meets_target"] for k, r in gpu.items() if k[0] == "supervised-embeddings") == 7
    diff = {k: round(gpu[k]["per_response"] - cpu_profile[k]["per_response"], 2) for k in gpu}
    assert sum(d == 0 for d in diff.values()) == 14 and min(diff.values()) == -4.27
    assert max(abs(d) for k, d in diff.items() if k != ("supervised-embeddings", 2, "tst")) < 2.8
    assert max(abs(gpu[k]["per_response"] - cpu[k]["per_response"]) for k in gpu) == pytest.approx(8.38)
    tst = [r for k, r in gpu.items() if k[2] == "tst"]
    assert round(sum(r["wall_seconds"] for r in tst)) == 1966 and round(sum(r["train_seconds"] for r in tst)) == 1939
    md = (base / "babi-neural-gpu.md").read_text(encoding="utf-8")
    section = " ".join(md[md.index("## The device profile on the GPU"):md.index("## How to run the device check")].split())
    for quoted in ("Rows: 27 of 33 within their targets", "**7 of 11**", "14 of 33 rows identical",
                   "83.33 against 87.60 (−4.27", "at most 8.38 points", "add up to 1,966 s (1,939 s training)"):
        assert quoted in section, quoted
    for (model, task, split) in missed:
        assert f"{gpu[(model, task, split)]['per_response']:.2f}" in section, (model, task, split)
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    assert "27 of 33 rows within their targets" in readme and "every row within 4.3 points" in readme


def test_the_gpu_determinism_records_show_what_the_default_was_chosen_on():
    """babi-neural-gpu-determinism.json: on the H200 two runs with the fixed-order kernels gave byte-identical scores
    and weights for both models; torch's default kernels did not for memn2n-match; the cost quoted in
    babi-neural-gpu.md and in deterministic_on's docstring is the records' training seconds."""
    from dialeval.baselines._torchutil import deterministic_on

    doc = json.loads((REPO / "submissions/baselines/babi-neural-gpu-determinism.json").read_text())
    jobs = {j["model"]: j for j in doc["jobs"]}
    assert set(jobs) == {"memn2n-match", "supervised-embeddings"}
    for model, job in jobs.items():
        on = [r for r in job["runs"] if r["deterministic"]]
        off = [r for r in job["runs"] if not r["deterministic"]]
        assert len(on) == len(off) == 2 and all(r["device"] == "cuda" for r in job["runs"])
        assert on[0]["scores_sha256"] == on[1]["scores_sha256"] and on[0]["weights_sha256"] == on[1]["weights_sha256"]
        assert all(r["determinism"]["nondeterministic_ops"] == [] for r in on)
        assert job["on_vs_on"]["scores_identical"] and job["off_vs_off"]["scores_identical"] == (model != "memn2n-match")
        assert (off[0]["scores_sha256"] == off[1]["scores_sha256"]) == (model != "memn2n-match")
    assert (round(jobs["memn2n-match"]["cost"], 2), round(jobs["supervised-embeddings"]["cost"], 2)) == (1.10, 1.06)
    assert "1.10x the training seconds for memn2n-match T4 and 1.06x" in " ".join(deterministic_on.__doc__.split())


def test_supervised_embedding_variants_are_dev_selected_and_quoted_in_the_closing_note():
    """babi-neural-se-variants.json holds the supervised-embeddings variants the closing note of babi-neural.md
    reports: each record ran with the setting its command states, its chosen epoch is the best dev epoch of its
    trajectory (never a test number), and its test number is the one the note quotes."""
    base = REPO / "submissions/baselines"
    md = (base / "babi-neural.md").read_text(encoding="utf-8")
    recs = json.loads((base / "babi-neural-se-variants.json").read_text())
    assert {r["variant"] for r in recs} == {"tied-60ep", "untied-60ep", "untied-120ep", "tied-low-lr-60ep"}
    for r in recs:
        cfg, cmd = r["config"]["config"], r["command"]
        assert f"--tasks {r['task']} " in cmd and f"--epochs {cfg['epochs']} --patience {cfg['patience']}" in cmd
        assert f"tied={str(cfg['tied']).lower()}" in cmd
        assert json.loads(re.search(r"grid=(\[.*?\])'", cmd).group(1)) == r["config"]["grid"]
        devs = [s["dev_per_response"] for s in r["dev_selection"]]
        assert r["config"]["dev_per_response"] == round(100 * max(devs), 2)
        assert f"{r['per_response']:.2f}" in md, (r["variant"], r["task"], r["split"])


@needs_torch
@needs_babi
@pytest.mark.realdata
def test_jobs_give_the_records_of_one_process_in_the_same_order(monkeypatch):
    from dialeval.baselines.reproduce import reproduce_babi

    monkeypatch.setenv("DIALEVAL_TORCH_THREADS", "2")  # one thread per worker with 2 jobs; one process: set below
    # memn2n-match T1 (the longer job) starts first and T4 finishes first; records still come task by task
    models, tasks, small = ["memn2n-match"], [4, 1], {"epochs": 2}
    par = reproduce_babi(BABI, models, tasks, max_conversations=1, jobs=2, params=small)
    monkeypatch.setenv("DIALEVAL_TORCH_THREADS", "1")
    seq = reproduce_babi(BABI, models, tasks, max_conversations=1, params=small)
    same = lambda r: {k: v for k, v in r.items() if not k.endswith("seconds")} | {  # noqa: E731
        "config": {k: v for k, v in r["config"].items() if not k.endswith("second") and not k.endswith("seconds")}}
    assert [same(r) for r in par] == [same(r) for r in seq]
    assert [(r["task"], r["split"]) for r in seq] == [(4, "tst"), (4, "tst-OOV"), (1, "tst"), (1, "tst-OOV")]
    assert all(r["device"] == "cpu" and r["params"] == small and r["wall_seconds"] > 0 for r in par)
    assert all(r["config"]["config"]["epochs"] == 2 for r in par)  # --param on top of the stored settings
    assert par[0]["config"]["grid"] == [{"hops": 1}, {"hops": 3}]  # the stored setting of memn2n-match T4


@needs_torch
@needs_babi
@pytest.mark.realdata
def test_time_limit_stops_jobs_lists_them_and_still_writes_the_table(tmp_path):
    proc = run_cli("reproduce", "babi", "--data", BABI, "--out", tmp_path, "--models", "memn2n", "--tasks", "1,4",
                   "--max-conversations", "2", "--time-limit", "1", "--check")
    assert proc.returncode == 1, proc.stderr
    assert "not finished within --time-limit: memn2n T1, memn2n T4" in proc.stderr
    md = (tmp_path / "babi-table2.md").read_text()
    assert "Not finished within the time limit (no rows): memn2n T1, memn2n T4." in md
    assert json.loads((tmp_path / "babi-table2.json").read_text()) == []


def test_param_must_be_json_and_a_parameter_of_the_model(tmp_path):
    for value, msg in (("epochs=ten", "not JSON"), ("nope=1", "has no parameter nope"), ("epochs", "KEY=JSON")):
        proc = run_cli("reproduce", "babi", "--data", tmp_path, "--out", tmp_path / "o", "--models", "tfidf",
                       "--param", value)
        assert proc.returncode == 2 and msg in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr


@needs_torch
@needs_babi
@pytest.mark.realdata
def test_a_failing_parallel_job_is_reported_the_others_go_on_and_the_exit_is_3(tmp_path):
    proc = run_cli("reproduce", "babi", "--data", BABI, "--out", tmp_path, "--models", "memn2n,supervised-embeddings",
                   "--tasks", "4", "--max-conversations", "1", "--jobs", "2", "--param", "batch_size=0")
    assert proc.returncode == 3, proc.stderr
    assert "Traceback" not in proc.stderr
    for m in ("memn2n", "supervised-embeddings"):  # the first failure did not stop the other job
        assert f"error: job {m} T4 failed: ValueError" in proc.stderr
        assert f"- failed (no rows): {m} T4: ValueError" in (tmp_path / "babi-table2.md").read_text()


def test_the_vocabulary_holds_the_training_items_candidate_lists_as_its_docstring_says():
    """Not training text only: every candidate a training item lists (on bAbI, the whole candidate file) is in."""
    from dialeval.baselines._torchutil import build_vocab, training_candidates

    only_offered = Candidate("99", "zanzibar bistro")  # offered to a training item, never its answer
    train = [DialogItem("d1", ["hello"], [*CANDS, only_offered], BY_ID["0"])]
    test_context = "quokka"  # a word of a test dialog only
    vocab = build_vocab(train, training_candidates(train))
    assert "zanzibar" in vocab.stoi and "bistro" in vocab.stoi and test_context not in vocab.stoi
    assert "training text only" not in (Vocab.__doc__ or "") and "candidate" in (Vocab.__doc__ or "")


@needs_babi
@pytest.mark.realdata
def test_the_neural_reproduction_script_writes_the_librarys_records(tmp_path):
    """benchmarks/reproduce_neural.py builds its records with dialeval.baselines.reproduce.split_record (the record
    `dialeval reproduce babi` writes, scored by the babi benchmark) plus its own four fields: run here with the
    TF-IDF baseline on task 1 (seconds, no torch), each record is the library's for the same numbers."""
    from dialeval.baselines.reproduce import record_signature, split_record

    records = tmp_path / "r.jsonl"
    proc = subprocess.run([sys.executable, str(REPO / "benchmarks" / "reproduce_neural.py"), "run", "--models", "tfidf",
                           "--tasks", "1", "--data", str(BABI), "--records", str(records)],
                          cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    recs = [json.loads(line) for line in records.read_text().splitlines()]
    assert [r["split"] for r in recs] == ["tst", "tst-OOV"]
    own = {"examples_per_second", "dev_selection", "seed", "torch_threads", "signature"}
    for r in recs:
        assert r["signature"] == record_signature(BABI, r)  # signed as `dialeval reproduce babi` signs a row
        lib = split_record(r["model"], r["task"], r["split"], [], r["per_response"], r["per_dialog"],
                           r["train_seconds"], r["infer_seconds"], r["config"])
        # the item counts come from the items, which the script does not write out; wall seconds from unrounded times
        lib.update(n_items=r["n_items"], n_conversations=r["n_conversations"], wall_seconds=r["wall_seconds"])
        assert {k: v for k, v in r.items() if k not in own} == lib and set(r) == set(lib) | own
        assert r["paper_per_response"] is not None and r["meets_target"] is not None and r["n_items"] > 0


# ---------------------------------------------------------------------------------------------------------------
# the device training profile: large batches and adapted learning rates off the CPU, the CPU setting unchanged


@needs_torch
def test_training_profile_is_applied_off_the_cpu_only_and_an_explicit_batch_wins():
    from torch import device as Device

    from dialeval.baselines._torchutil import BASE_BATCH, PROFILE_BATCH, training_profile

    adam = {"lr": 0.01, "optimizer": "adam", "batch_size": None}
    sgd = {"lr": 0.1, "optimizer": "sgd", "batch_size": None}
    k = PROFILE_BATCH / BASE_BATCH
    cfg, p = training_profile(adam, Device("cpu"))
    assert (cfg["batch_size"], cfg["lr"], p["name"]) == (BASE_BATCH, 0.01, "cpu")
    for dev in ("cuda", "meta", "mps"):
        cfg, p = training_profile(adam, Device(dev))
        assert (cfg["batch_size"], cfg["lr"], p["name"], p["lr_rule"]) == (PROFILE_BATCH, 0.01, "device", "none")
        assert p["base_lr"] == 0.01 and p["batch_size"] == PROFILE_BATCH and dev in p["why"]
        cfg, p = training_profile(sgd, Device(dev))
        assert (cfg["batch_size"], cfg["lr"], p["lr_rule"], p["lr_scale"]) == (PROFILE_BATCH, 0.1 * k, "linear", k)
    assert training_profile(sgd, Device("cpu"), forced=True)[0]["batch_size"] == PROFILE_BATCH
    assert training_profile(sgd, Device("cuda"), forced=False)[0] == {**sgd, "batch_size": BASE_BATCH}
    for forced in (None, True):  # a batch size the user set is used as given, with the learning rate as given
        cfg, p = training_profile({**adam, "batch_size": 64}, Device("cuda"), forced)
        assert (cfg["batch_size"], cfg["lr"], p["name"]) == (64, 0.01, "explicit")
    assert adam["batch_size"] is None and adam["lr"] == 0.01  # the caller's dict is not changed


@needs_torch
@pytest.mark.parametrize("cls", [SupervisedEmbeddings, MemN2N, MemN2NMatch])
def test_fit_records_the_profile_it_trained_with_and_the_cpu_default_is_batch_32(cls):
    """The CPU default trains exactly as ``batch_size=32`` did (the stored CPU numbers' setting, bit for bit);
    ``device_profile=true`` (what a GPU gets) trains at the profile's batch and learning rate, and says so in
    ``describe()`` (the reproduce records' ``config``), grid learning rates scaled too."""
    from dialeval.baselines._torchutil import BASE_BATCH, PROFILE_BATCH

    small = dict(embedding_size=8, epochs=3, progress=False)
    small.update(negatives=5, grid=({"lr": 0.05}, {"lr": 0.1})) if cls is SupervisedEmbeddings else \
        small.update(hops=1, grid=({"hops": 1}, {"hops": 1, "lr": 0.001}))
    default = cls(seed=2, **small).fit(TRAIN, TRAIN[:3])
    as_before = cls(seed=2, batch_size=32, **small).fit(TRAIN, TRAIN[:3])
    assert np.array_equal(default.score_group(CANDS, TRAIN), as_before.score_group(CANDS, TRAIN))
    d = default.describe()
    assert d["config"]["batch_size"] == BASE_BATCH and d["training_profile"]["name"] == "cpu"
    assert as_before.describe()["training_profile"]["name"] == "explicit"

    prof = cls(seed=2, device_profile=True, **small).fit(TRAIN, TRAIN[:3]).describe()
    p = prof["training_profile"]
    scale = PROFILE_BATCH / BASE_BATCH if cls is SupervisedEmbeddings else 1.0  # SGD: linear rule; Adam: as it is
    assert prof["config"]["batch_size"] == PROFILE_BATCH == p["batch_size"] and p["name"] == "device"
    assert p["base_lr"] in (0.05, 0.1, 0.01, 0.001) and prof["config"]["lr"] == pytest.approx(p["base_lr"] * scale)
    explicit = cls(seed=2, device_profile=True, batch_size=4, **small).fit(TRAIN, TRAIN[:3]).describe()
    assert explicit["config"]["batch_size"] == 4 and explicit["training_profile"]["name"] == "explicit"


@needs_torch
@pytest.mark.parametrize("cls", [SupervisedEmbeddings, MemN2NMatch])
def test_profile_settings_replace_grid_and_epochs_under_the_profile_only(cls):
    """``profile_settings`` (memn2n-match T2's lr 0.01 | 0.003 grid, <= 20 epochs at batch 256) is used only when the
    device profile is on: the CPU default trains exactly as without it, bit for bit, so the stored CPU rows stay."""
    from dialeval.core.errors import UsageError

    small = dict(embedding_size=8, epochs=3, patience=3, progress=False, grid=({"lr": 0.05},))
    small.update(negatives=5) if cls is SupervisedEmbeddings else small.update(hops=1)
    extra = {"grid": ({"lr": 0.02}, {"lr": 0.01}), "epochs": 2, "patience": 1}
    plain = cls(seed=1, **small).fit(TRAIN, TRAIN[:3])
    cpu = cls(seed=1, profile_settings=extra, **small).fit(TRAIN, TRAIN[:3])
    assert np.array_equal(plain.score_group(CANDS, TRAIN), cpu.score_group(CANDS, TRAIN))
    assert [s["config"] for s in cpu.selection] == [{"lr": 0.05}] * 3
    prof = cls(seed=1, device_profile=True, profile_settings=extra, **small).fit(TRAIN, TRAIN[:3])
    assert {(tuple(s["config"].items()), s["epoch"]) for s in prof.selection} <= {
        ((("lr", 0.02),), 1), ((("lr", 0.02),), 2), ((("lr", 0.01),), 1), ((("lr", 0.01),), 2)}
    assert {s["config"]["lr"] for s in prof.selection} == {0.02, 0.01}
    d = prof.describe()
    assert d["profile_settings"] == extra and d["config"]["epochs"] == 2 and d["config"]["patience"] == 1
    with pytest.raises(UsageError, match="profile_settings takes grid, epochs, patience; not lr"):
        cls(seed=1, device_profile=True, profile_settings={"lr": 0.1}, **small).fit(TRAIN, TRAIN[:3])


def test_memn2n_match_t2_has_profile_settings_and_the_other_rows_do_not():
    from dialeval.baselines.reproduce import TABLE2_SETTINGS, model_params

    assert model_params("memn2n-match", 2, BABI)["profile_settings"] == {
        "grid": ({"lr": 0.01}, {"lr": 0.003}), "epochs": 20, "patience": 4}
    assert [k for k, v in TABLE2_SETTINGS.items() if "profile_settings" in v] == [("memn2n-match", 2)]


@needs_torch
def test_sort_free_unique_and_negative_sampling_give_the_values_the_cpu_numbers_were_stored_with():
    """The host-side dedup without a sort (unique_inverse) equals np.unique, and the negative sampling built on it
    equals the torch.unique version it replaced, draw for draw from the same seeded generator."""
    import torch

    from dialeval.baselines._torchutil import unique_inverse
    from dialeval.baselines.embeddings import sample_negatives

    rng = np.random.default_rng(5)
    for size, n in ((1, 3), (7, 50), (4212, 25_856), (30_000, 64_256)):
        ids = rng.integers(0, size, n)
        uniq, inv = unique_inverse(ids, size)
        ref_u, ref_i = np.unique(ids, return_inverse=True)
        assert np.array_equal(uniq, ref_u) and np.array_equal(inv, ref_i.ravel())
    gold = torch.from_numpy(rng.integers(0, 4212, 256))
    a, b = torch.Generator().manual_seed(3), torch.Generator().manual_seed(3)
    for _ in range(3):
        uniq, inv = sample_negatives(torch, gold, 4212, 100, a)
        neg = torch.randint(0, 4212, (256, 100), generator=b)
        neg = torch.where(neg == gold[:, None], (neg + 1) % 4212, neg)
        ref_u, ref_i = torch.unique(torch.cat([gold, neg.reshape(-1)]), return_inverse=True)
        assert np.array_equal(uniq, ref_u.numpy()) and np.array_equal(inv, ref_i.numpy())
        assert not (uniq[inv[256:]].reshape(256, 100) == gold.numpy()[:, None]).any()  # never the gold


def test_the_report_shows_the_device_profile_beside_the_device():
    from dialeval.baselines.reproduce import render_markdown

    rec = {"model": "supervised-embeddings", "task": 4, "split": "tst", "per_response": 57.0, "per_dialog": 0.0,
           "paper_per_response": 57.2, "paper_per_dialog": 0.0, "train_seconds": 3.0, "infer_seconds": 0.5,
           "n_items": 10, "meets_target": True, "device": "cuda",
           "config": {"config": {"batch_size": 256, "lr": 0.8}, "training_profile": {
               "name": "device", "batch_size": 256, "lr": 0.8, "lr_rule": "linear", "lr_scale": 8.0}}}
    cpu = {**rec, "device": "cpu", "config": {"config": {"batch_size": 32}, "training_profile": {"name": "cpu"}}}
    md = render_markdown([rec], "dialeval reproduce babi", "abc")
    assert "| supervised-embeddings | T4 | tst | cuda (profile: batch 256, lr × 8) |" in md
    assert "| supervised-embeddings | T4 | tst | cpu |" in render_markdown([cpu], "dialeval reproduce babi", "abc")


def test_the_device_script_compares_profile_rows_with_the_stored_cpu_and_batch32_rows(tmp_path):
    """benchmarks/gpu_table2.py's comparison, fed the CPU-validated profile records (what the device run will
    write, apart from the device): every row gets its profile, the stored CPU and batch-32 GPU numbers and the
    difference; the tables are written. A crash here would cost a device session."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("gpu_table2", REPO / "benchmarks" / "gpu_table2.py")
    g = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(g)
    base = REPO / "submissions/baselines"
    load = lambda name: g.by_key(json.loads((base / name).read_text()))  # noqa: E731
    recs = json.loads((base / "babi-neural-profile-cpu.json").read_text())
    stored, gpu32 = load("babi-neural.json"), load("babi-neural-gpu.json")
    rows = g.compare_rows(recs, stored, gpu32, gpu32)  # the stored H200 rows stand in for this run's batch 32
    assert len(rows) == len(recs) >= 12
    for r, c in zip(recs, rows, strict=True):
        key = (r["model"], r["task"], r["split"])
        assert (c["profile"], c["batch_size"]) == ("device", 256)
        assert c["delta"] == round(r["per_response"] - stored[key]["per_response"], 2)
        assert c["batch32"] == c["stored_gpu32"] == gpu32[key]["per_response"]
    g.write_compare(tmp_path, rows)
    md = (tmp_path / "compare.md").read_text()
    assert md.count("\n") == len(rows) + 2 and "| memn2n-match | T4 | device 256, 0.01 | 100.00 | 100.0 |" in md
    assert (tmp_path / "timing.md").read_text().count("| device 256 |") == len({(r["model"], r["task"]) for r in recs})


def test_the_device_scripts_variants_train_at_batch_32_like_the_cpu_records_they_extend():
    """benchmarks/gpu_table2.py's supervised-embeddings variants extend CPU records made at batch 32 with the grid's
    own learning rates; on the GPU the device profile would otherwise train them at batch 256 with lr x 8, and their
    rows could not be set beside those records."""
    import importlib.util

    import torch

    from dialeval.baselines._torchutil import training_profile
    from dialeval.baselines.embeddings import SupervisedEmbeddings
    from dialeval.baselines.reproduce import parse_params

    spec = importlib.util.spec_from_file_location("gpu_table2", REPO / "benchmarks" / "gpu_table2.py")
    g = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(g)
    assert g.VARIANTS
    for name, params, _tasks in g.VARIANTS:
        model = SupervisedEmbeddings(**parse_params(params))
        config, profile = training_profile(model.current_config(), torch.device("cuda"), model.device_profile)
        assert (profile["name"], config["batch_size"], config["lr"]) == ("cpu", 32, model.lr), name


# ---------------------------------------------------------------------------------------------------------------
# deterministic=true: torch's fixed-order kernels (a GPU run, or a CPU run on several threads, repeatable bit for bit)


CPU_RECORD = {"requested": True, "device": "cpu", "torch_threads": 1, "nondeterministic_ops": []}


@needs_torch
@pytest.mark.parametrize("cls", [SupervisedEmbeddings, MemN2N, MemN2NMatch])
def test_fixed_order_kernels_give_torchs_default_bits_at_one_cpu_thread_and_say_so(cls):
    """At one CPU thread (the stored numbers' setting) the fixed-order kernels, the CPU default as well as
    ``deterministic=true``, train and score bit for bit as torch's default kernels (``deterministic=false``, what the
    stored CPU rows were made with), so those rows stay; ``describe()`` records what was on and why, torch's global
    flag is restored afterwards, and ``deterministic=false`` records nothing."""
    import torch

    small = dict(embedding_size=8, epochs=3, progress=False, grid=({"lr": 0.05}, {"lr": 0.1}))
    small.update(negatives=5) if cls is SupervisedEmbeddings else small.update(hops=2)
    off, default, det = (cls(seed=4, **small, **extra).fit(TRAIN, TRAIN[:3])
                         for extra in ({"deterministic": False}, {}, {"deterministic": True}))
    for m in (default, det):
        assert np.array_equal(off.score_group(CANDS, TRAIN), m.score_group(CANDS, TRAIN))
        assert off.selection == m.selection and off.config == m.config
    assert "deterministic" not in off.describe()
    assert default.describe()["deterministic"] == {**CPU_RECORD, "requested": False}
    assert det.describe()["deterministic"] == CPU_RECORD
    assert not torch.are_deterministic_algorithms_enabled()


@needs_torch
@needs_babi
@pytest.mark.realdata
def test_fixed_order_kernels_give_torchs_default_bits_on_real_babi_data_at_one_thread():
    """The same on real bAbI task 4 items (repeated memories and candidates: the indexing backward accumulates many
    rows into one, where a fixed-order kernel could sum in another order than torch's default)."""
    from dialeval.baselines.registry import create
    from dialeval.baselines.reproduce import _load_task, model_params

    trn, dev, tests = _load_task(BABI, 4, 5)
    for name in ("supervised-embeddings", "memn2n-match"):
        runs = [create(name, seed=0, **model_params(name, 4, BABI, {"epochs": 2, "progress": False, **extra}))
                .fit(trn, dev) for extra in ({"deterministic": False}, {})]
        cands = tests["tst"][0].candidates
        a, b = (m.score_group(cands, tests["tst"]) for m in runs)
        assert np.array_equal(a, b), name
        assert runs[0].selection == runs[1].selection, name
        assert runs[1].describe()["deterministic"]["requested"] is False  # the CPU default, not asked for


@needs_torch
@needs_babi
@pytest.mark.realdata
def test_two_default_runs_on_two_cpu_threads_give_the_same_weights_and_scores(monkeypatch):
    """Same inputs and seed, byte-identical outputs, on 2 torch threads too: there torch's default kernels are not
    repeatable (the indexing backward's accumulation; ``benchmarks/bench_determinism.py``: 3 runs, 3 weight sets),
    so the CPU default is the fixed-order kernels. Real bAbI T4, 20 conversations, one epoch."""
    import hashlib

    from dialeval.baselines.registry import create
    from dialeval.baselines.reproduce import _load_task, model_params

    monkeypatch.setenv("DIALEVAL_TORCH_THREADS", "2")
    trn, dev, tests = _load_task(BABI, 4, 20)
    cands = tests["tst"][0].candidates
    runs = []
    for _ in range(2):
        m = create("supervised-embeddings", seed=0, **model_params("supervised-embeddings", 4, BABI,
                                                                   {"epochs": 1, "grid": None, "progress": False}))
        m.fit(trn, dev)
        weights = hashlib.sha256(b"".join(v.numpy().tobytes() for _, v in sorted(m.module.state_dict().items())))
        runs.append((weights.hexdigest(), m.score_group(cands, tests["tst"]).tobytes(), m.describe()))
    assert runs[0][0] == runs[1][0]  # the trained weights
    assert runs[0][1] == runs[1][1]  # every test item x candidate score
    assert runs[0][2]["deterministic"] == {**CPU_RECORD, "requested": False, "torch_threads": 2}


@needs_torch
def test_fixed_order_kernels_are_the_default_off_the_cpu_too():
    """Unset, a model's deterministic setting means the fixed-order kernels on every device (the meta device stands in
    for a GPU, and CUDA needs none to check the decision): on the H200 torch's default kernels gave memn2n-match T4
    scores 5.3e-05 apart run to run, the fixed-order ones the same bits at 1.06-1.10x the training seconds."""
    import torch

    from dialeval.baselines._torchutil import deterministic_algorithms, deterministic_on

    for device in ("cpu", "meta", "cuda"):
        assert deterministic_on(None, torch.device(device)) and not deterministic_on(False, torch.device(device))
    with deterministic_algorithms(torch, torch.device("meta"), None) as rec:
        assert torch.are_deterministic_algorithms_enabled()
    assert rec == {"requested": False, "device": "meta", "nondeterministic_ops": []}
    assert not torch.are_deterministic_algorithms_enabled()


@needs_torch
@pytest.mark.parametrize("cls", [SupervisedEmbeddings, MemN2NMatch])
def test_deterministic_mode_off_the_cpu_sets_cublas_and_torchs_flag_for_the_block_only(monkeypatch, cls):
    """Off the CPU (the meta device stands in for a GPU): inside the block torch's deterministic flag is on (warn-only);
    a training epoch and the dev evaluation run under it on the model's device; an op without a deterministic kernel
    is recorded, not fatal; afterwards the flag is as it was. On CUDA, CUBLAS_WORKSPACE_CONFIG is set too (a value
    the user set is kept) and whether CUDA had started before is recorded."""
    import torch

    from dialeval.baselines._torchutil import CUBLAS_WORKSPACE, deterministic_algorithms

    meta = torch.device("meta")
    monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG", raising=False)
    with deterministic_algorithms(torch, meta, False) as off:
        assert not torch.are_deterministic_algorithms_enabled()
    assert off == {}
    with deterministic_algorithms(torch, meta, True) as rec:
        assert torch.are_deterministic_algorithms_enabled() and torch.is_deterministic_algorithms_warn_only_enabled()
        model, split, cand_t, module, config = _small_model_on_meta(torch, cls)
        total, _, seen, _ = _epoch_and_dev_on_meta(torch, model, module, config, split, cand_t, np.arange(len(TRAIN)))
        assert total.device == meta and seen == len(TRAIN)
        torch.zeros(3).put_(torch.tensor([0, 0]), torch.tensor([1.0, 2.0]))  # no deterministic kernel: warns
    assert not torch.are_deterministic_algorithms_enabled()
    assert rec == {"requested": True, "device": "meta",
                   "nondeterministic_ops": ["put_ does not have a deterministic implementation"]}
    assert "CUBLAS_WORKSPACE_CONFIG" not in os.environ  # cuBLAS is CUDA's
    # CUDA (no GPU needed: the block only reads whether CUDA has started and sets the variable)
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: False)
    with deterministic_algorithms(torch, torch.device("cuda"), True) as rec:
        assert os.environ["CUBLAS_WORKSPACE_CONFIG"] == CUBLAS_WORKSPACE == ":4096:8"
    assert rec == {"requested": True, "device": "cuda", "cuda_started_before": False,
                   "cublas_workspace_config": ":4096:8", "nondeterministic_ops": []}
    monkeypatch.setenv("CUBLAS_WORKSPACE_CONFIG", ":16:8")  # the other value torch accepts: the user's is kept
    with deterministic_algorithms(torch, torch.device("cuda"), True) as rec:
        pass
    assert rec["cublas_workspace_config"] == ":16:8"


@needs_torch
@needs_babi
@pytest.mark.realdata
def test_reproduce_takes_param_deterministic_and_records_it(tmp_path):
    proc = run_cli("reproduce", "babi", "--data", BABI, "--out", tmp_path, "--models", "memn2n", "--tasks", "4",
                   "--max-conversations", "1", "--param", "epochs=1", "--param", "deterministic=true")
    assert proc.returncode == 0, proc.stderr
    recs = json.loads((tmp_path / "babi-table2.json").read_text())
    assert [r["split"] for r in recs] == ["tst", "tst-OOV"]
    for r in recs:
        assert r["params"] == {"epochs": 1, "deterministic": True}
        assert r["config"]["deterministic"] == CPU_RECORD
    assert "--param deterministic=true" in (tmp_path / "babi-table2.md").read_text()


# ---------------------------------------------------------------------------------------------------------------
# reproduce babi keeps its finished rows when it is stopped from outside (a device session's time limit)


@needs_babi
@pytest.mark.realdata
@pytest.mark.parametrize("jobs", [1, 2])
def test_reproduce_reports_the_records_after_every_job(jobs):
    """``on_records`` gets the records so far, in the table's order, and the jobs left, after every job (one process or
    ``--jobs``): what the command rewrites its table from while the run goes on."""
    from dialeval.baselines.reproduce import reproduce_babi

    calls = []
    recs = reproduce_babi(BABI, ["tfidf"], [1, 4], max_conversations=1, jobs=jobs,
                          on_records=lambda r, left: calls.append(([(x["task"], x["split"]) for x in r], left)))
    assert len(calls) == 2
    first, left = calls[0]
    assert left == [("tfidf", 4) if first[0][0] == 1 else ("tfidf", 1)] and len(first) == 2
    assert calls[1] == ([(1, "tst"), (1, "tst-OOV"), (4, "tst"), (4, "tst-OOV")], [])
    assert [(r["task"], r["split"]) for r in recs] == calls[1][0]


def test_a_reproduce_run_killed_after_its_first_job_keeps_that_jobs_rows(tmp_path):
    """The command rewrites babi-table2.json / .md after each finished job: a run killed by the device tool's time
    limit (here: the process exits hard after the first of two jobs) leaves the finished rows, and the report says
    which jobs were not done."""
    pre = ("import os, dialeval.commands.baselines as b\n"
           "from dialeval.baselines.reproduce import split_record\n"
           "def fake(data_dir, models, tasks, *a, on_records=None, **k):\n"
           "    on_records([split_record('tfidf', 1, 'tst', [], 51.0, 0.0, 1.0, 0.5, {'device': 'cpu'})],\n"
           "               [('tfidf', 4)])\n"
           "    os._exit(137)\n"
           "b.reproduce_babi = fake\n")
    (tmp_path / "data").mkdir()
    proc = run_cli("reproduce", "babi", "--data", tmp_path / "data", "--out", tmp_path / "o", "--models", "tfidf",
                   "--tasks", "1,4", pre=pre)
    assert proc.returncode == 137
    recs = json.loads((tmp_path / "o" / "babi-table2.json").read_text())
    assert [(r["model"], r["task"], r["split"], r["per_response"]) for r in recs] == [("tfidf", 1, "tst", 51.0)]
    md = (tmp_path / "o" / "babi-table2.md").read_text()
    assert "| T1 | 51.0 (0.0)" in md
    assert "Not done when this was written, the run going on (no rows yet): tfidf T4." in md


# ---------------------------------------------------------------------------------------------------------------
# benchmarks/gpu_table2.py, the device check: what it writes for the commit, and a dry run end to end on the CPU


def _gpu_script():
    spec = importlib.util.spec_from_file_location("gpu_table2", REPO / "benchmarks" / "gpu_table2.py")
    g = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(g)
    return g


def test_the_device_scripts_commit_section_gives_every_job_against_the_stored_cpu_row_and_the_goal(tmp_path):
    """Fed the CPU-validated profile records (what the device run writes, apart from the device), the section to
    commit has one row per job with GPU and CPU seconds, tst and tst-OOV beside the stored CPU rows with their
    difference, the paper and the target; the goal is judged only on an H100; jobs without rows are named; the
    records file is the table's records unchanged."""
    g = _gpu_script()
    base = REPO / "submissions/baselines"
    recs = json.loads((base / "babi-neural-profile-cpu.json").read_text())
    stored = g.by_key(json.loads((base / "babi-neural.json").read_text()))
    rows = g.compare_rows(recs, stored, {}, g.by_key(json.loads((base / "babi-neural-gpu.json").read_text())))
    expected = [(m, t) for t in range(1, 7) for m in g.MODELS.split(",")]
    info = {"gpu": "NVIDIA H100 80GB HBM3", "nvidia_smi": "NVIDIA H100 80GB HBM3, 81559 MiB, 570.1", "cpus": 16,
            "torch": "2.11.0+cu130", "cuda": "13.0"}
    g.commit_files(tmp_path, recs, rows, info, 512.0, expected, "DEADLINE_S=480 JOBS=6 python3 benchmarks/gpu_table2.py",
                   True)
    assert json.loads((tmp_path / "commit" / "babi-neural-gpu-profile.json").read_text()) == recs
    md = (tmp_path / "commit" / "babi-neural-gpu-profile.md").read_text()
    assert "on NVIDIA H100 80GB HBM3" in md and "torch 2.11.0+cu130 (CUDA 13.0)" in md
    assert "in **512 s**" in md and "the whole table in ≤ 600 s on one H100: met;" in md
    assert f"targets missed: {sum(r['meets_target'] is False for r in recs)} of {len(recs)} rows" in md
    assert "`dialeval reproduce babi --jobs 6` on the full release" in md
    by = {(r["model"], r["task"], r["split"]): r for r in recs}
    lines = [ln for ln in md.splitlines() if re.match(r"\| T\d \| ", ln)]
    assert len(lines) == len({(r["model"], r["task"]) for r in recs})
    for ln in lines:
        cells = [c.strip() for c in ln.strip("|").split("|")]
        m, t = cells[1], int(cells[0][1])
        tst, cpu = by[(m, t, "tst")], stored[(m, t, "tst")]
        assert float(cells[2]) == round(tst["wall_seconds"], 1) and float(cells[4]) == round(cpu["wall_seconds"], 1)
        assert (float(cells[5]), float(cells[6])) == (tst["per_response"], cpu["per_response"])
        assert float(cells[7]) == round(tst["per_response"] - cpu["per_response"], 2)
        assert cells[9] == {True: "✓", False: "✗"}[tst["meets_target"]]
        if t == 6:
            assert cells[10:] == ["—"] * 5
        else:
            assert float(cells[10]) == by[(m, t, "tst-OOV")]["per_response"]
    missing = sorted(set(expected) - {(r["model"], r["task"]) for r in recs})
    assert all(f"{m} T{t}" in md for m, t in missing) and ("no rows" in md) == bool(missing)
    # not an H100, or a run stopped from outside: said so
    g.commit_files(tmp_path, recs[:4], rows[:4], {**info, "gpu": "NVIDIA H200"}, 100.0, expected, "x", False)
    md = (tmp_path / "commit" / "babi-neural-gpu-profile.md").read_text()
    assert "not measured: this is NVIDIA H200, not an H100" in md and "still going or was stopped" in md
    assert "memn2n-match T5" in md.split("no rows")[1]


@needs_torch
@needs_babi
@pytest.mark.realdata
def test_the_device_script_runs_end_to_end_on_the_cpu(tmp_path):
    """A dry run of the device check on this machine (one conversation, one epoch, one job, one determinism job):
    every step but the variants runs and writes its files (the table with the device profile, the determinism
    check, the batch-32 baseline, the files to commit); the deterministic runs repeat bit for bit (on the CPU's 2
    threads, where torch's default kernels need not). A crash here would cost the one device session."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIALEVAL_")}
    env.update(OUT=str(tmp_path / "out"), DATA=str(BABI), DEADLINE_S="300", JOBS="1", TASKS="4", MODELS="memn2n-match",
               MAX_CONVERSATIONS="1", PARAMS="epochs=1", DETERMINISM_JOBS="memn2n-match:4", VARIANTS="0")
    proc = subprocess.run([sys.executable, str(REPO / "benchmarks" / "gpu_table2.py")], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = tmp_path / "out"
    table = json.loads((out / "table" / "babi-table2.json").read_text())
    assert [(r["model"], r["task"], r["split"]) for r in table] == [("memn2n-match", 4, "tst"),
                                                                     ("memn2n-match", 4, "tst-OOV")]
    assert all(r["params"] == {"epochs": 1} and r["config"]["config"]["epochs"] == 1 for r in table)
    assert json.loads((out / "commit" / "babi-neural-gpu-profile.json").read_text()) == table
    batch32 = json.loads((out / "batch32" / "babi-table2.json").read_text())
    assert [r["params"] for r in batch32] == [{"epochs": 1, "device_profile": False}] * 2
    assert [c["batch32"] for c in json.loads((out / "compare.json").read_text())] == [r["per_response"] for r in batch32]
    md = (out / "commit" / "babi-neural-gpu-profile.md").read_text()
    assert re.search(r"^\| T4 \| memn2n-match \| [\d.]+ \| [\d.]+ \| 16\.3 \| [\d.]+ \| 100\.00 \|", md, re.M), md
    det = json.loads((out / "determinism.json").read_text())
    job = det["jobs"][0]
    assert [r["deterministic"] for r in job["runs"]] == [True, True, False, False]
    assert all(r["chosen"]["epochs"] == 1 for r in job["runs"])
    assert job["on_vs_on"]["scores_identical"] and job["on_vs_on"]["weights_identical"]
    assert job["on_vs_on"]["max_abs_score_difference"] == 0.0 and job["cost"] > 0
    assert all(bool(r["determinism"].get("requested")) == r["deterministic"] for r in job["runs"])
    assert "### Determinism" in md and "| memn2n-match T4 | 2 / 2 | yes | yes |" in md
    assert json.loads((out / "device.json").read_text())["torch"]
    assert "total" in (out / "summary.txt").read_text()


def test_the_device_scripts_determinism_check_starts_no_run_that_would_outlast_the_deadline(tmp_path):
    """A determinism run is started only when the time left exceeds 1.3 × its expected time + 10 s (expected: the
    job's wall seconds in the table + 20 s for the process's start); the check says why it stopped and writes it."""
    g = _gpu_script()
    written = []
    result = g.determinism_check({}, tmp_path, tmp_path, g.elapsed() + 45, written.append, {("memn2n-match", 4): 10.0})
    job = result["jobs"][0]
    assert job["runs"] == [] and job["stopped"].startswith("run 1 of 4 not started: ")
    assert "a run expected to take 30s" in job["stopped"] and len(result["jobs"]) == 1
    assert "stopped: run 1 of 4 not started" in "\n".join(g.determinism_lines(result))
