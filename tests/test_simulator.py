"""Tests of the dialog simulator: determinism, well-formed files, keys, realism vs the real tst1, the default cache.

Also a small rule-based oracle written from the simulator's language tables: it replays each item's context and
predicts the bot's next utterance; it must be right on every item (P@1 = 1.0), which is what "every gold is
unambiguous given the context" means.
"""

from __future__ import annotations

import json
import multiprocessing
import re
import shutil
import uuid
from pathlib import Path

import pytest

from dialeval.formats.dstc6 import ANSWERS_SUFFIX, Challenge, parse_dataset_name
from dialeval.simulator import generate_challenge
from dialeval.simulator import language as L
from dialeval.simulator.kb import KB_ATTRS, build_kb, kb_text, read_kb, write_kb
from dialeval.simulator.tasks import TaskSimulator, fast_uuid4, is_test_request

SHARED = Path(__file__).resolve().parents[2] / "shared"
REAL_DSTC6 = SHARED / "data" / "dstc6"


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("sim") / "chal"
    generate_challenge(out, seed=7, n_train=40, n_test=60)
    return out


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _gold(path: Path) -> dict[str, str]:
    key = json.loads(path.with_name(path.name[: -len(".json")] + ANSWERS_SUFFIX).read_text())
    return {k["dialog_id"]: k["lst_candidate_id"][0]["candidate_id"] for k in key}


def _datasets(root: Path):
    for p in sorted(root.glob("*/*.json")):
        task = parse_dataset_name(p.name)
        if task is not None:
            yield p, task


# --- determinism ------------------------------------------------------------------------------------------------
def test_same_seed_is_byte_identical_and_seeds_differ(tmp_path, small):
    again = tmp_path / "again"
    generate_challenge(again, seed=7, n_train=40, n_test=60)
    assert _files(small) == _files(again)
    other = tmp_path / "other"
    generate_challenge(other, seed=8, n_train=40, n_test=60)
    a, b = _files(small), _files(other)
    assert a.keys() == b.keys()
    differing = [k for k in a if k.endswith(".json") and a[k] != b[k] and k != "simulator.json"]
    assert len(differing) == len([k for k in a if k.endswith(".json")]) - 1  # every data file differs


def test_subset_of_splits_gives_the_same_files(tmp_path, small):
    part = tmp_path / "part"
    generate_challenge(part, seed=7, n_train=40, n_test=60, splits="tst2")
    full = _files(small)
    for name, data in _files(part).items():
        if name.startswith("tst2/"):
            assert full[name] == data


def test_fast_uuid4_matches_uuid_module():
    import random

    r1, r2 = random.Random(5), random.Random(5)
    for _ in range(200):
        assert fast_uuid4(r1) == str(uuid.UUID(int=r2.getrandbits(128), version=4))


# --- well-formedness and answer keys ----------------------------------------------------------------------------
def test_files_are_well_formed(small):
    from dialeval.benchmarks.dstc6.validate import validate_dataset_json

    names = {p.name for p in small.iterdir()}
    assert {"trn", "tst1", "tst2", "tst3", "tst4", "extendedkb1.txt", "extendedkb2.txt"} <= names
    n_files = 0
    for path, _task in _datasets(small):
        n_files += 1
        data = json.loads(path.read_text())
        assert not [p for p in validate_dataset_json(data) if p.severity == "error"], path
        train = path.parent.name == "trn"
        gold = None if train else _gold(path)
        ids = [it["dialog_id"] for it in data]
        assert len(set(ids)) == len(ids)
        for it in data:
            assert list(it)[:3] == ["dialog_id", "candidates", "utterances"]
            cands = it["candidates"]
            assert 7 <= len(cands) <= 10
            cids = [c["candidate_id"] for c in cands]
            assert len(set(cids)) == len(cids)
            assert all(uuid.UUID(c).version == 4 for c in cids + [it["dialog_id"]])
            gid = it["answer"]["candidate_id"] if train else gold[it["dialog_id"]]
            gtext = [c["utterance"] for c in cands if c["candidate_id"] == gid]
            assert len(gtext) == 1
            assert [c["utterance"] for c in cands].count(gtext[0]) == 1, "gold text duplicated"
            assert ("answer" in it) == train
    assert n_files == 25


def test_answer_keys_score_one(small, tmp_path):
    from dialeval.api import score

    sub = tmp_path / "sub"
    for split in ("tst1", "tst2", "tst3", "tst4"):
        (sub / split).mkdir(parents=True)
        for k in (small / split).glob(f"*{ANSWERS_SUFFIX}"):
            shutil.copy(k, sub / split / k.name)
    report = score(sub, split="all", challenge=small)
    for split in ("tst1", "tst2", "tst3", "tst4"):
        for task in (1, 2, 3, 4, 5):
            assert report.value("p@1", split, task) == pytest.approx(1.0)


def test_challenge_layout_readable(small):
    ch = Challenge(small)
    assert ch.splits == ["trn", "tst1", "tst2", "tst3", "tst4"]
    assert sorted(ch.split("tst3").files) == [1, 2, 3, 4, 5]


def test_duplicate_distractor_texts_occur(small):
    dup = 0
    for path, _task in _datasets(small):
        for it in json.loads(path.read_text()):
            texts = [c["utterance"] for c in it["candidates"]]
            dup += len(set(texts)) < len(texts)
    assert dup > 0


# --- knowledge bases --------------------------------------------------------------------------------------------
def test_kb_shape_and_roundtrip(tmp_path):
    from collections import Counter

    kb1, kb2 = build_kb("kb1"), build_kb("kb2")
    for kb in (kb1, kb2):
        assert len(kb.restaurants) == 5400
        ratings = Counter(r.rating for r in kb.restaurants)
        assert sorted(ratings) == list(range(1, 73)) and set(ratings.values()) == {75}
        for combo, rs in kb.index.items():
            assert len({r.rating for r in rs}) == len(rs), combo
    assert not {r.name for r in kb1.restaurants} & {r.name for r in kb2.restaurants}
    assert {r.location for r in kb1.restaurants} == {"bombay", "london", "madrid", "paris", "rome"}
    assert {r.cuisine for r in kb2.restaurants} == {"cantonese", "japanese", "korean", "thai", "vietnamese"}
    text = kb_text(kb1)
    first = text.splitlines()[:9]
    assert [ln.split("\t")[0].split(" ")[2] for ln in first] == [f"R_{a}" for a in KB_ATTRS]
    assert first[0].startswith("1 ") and len(text.splitlines()) == 48600
    write_kb(tmp_path / "extendedkb1.txt", kb1)
    back = read_kb(tmp_path / "extendedkb1.txt")
    assert kb_text(back) == text


@pytest.mark.realdata
def test_real_kb_is_readable():
    if not REAL_DSTC6.is_dir():
        pytest.skip(f"real data not found at {REAL_DSTC6}")
    kb = read_kb(REAL_DSTC6 / "extendedkb1.txt")
    assert len(kb.restaurants) == 5400
    ours = {r.name for r in build_kb("kb1").restaurants} | {r.name for r in build_kb("kb2").restaurants}
    assert not ours & {r.name for r in kb.restaurants}, "restaurant names must be generated, not copied"


# --- train / test requests --------------------------------------------------------------------------------------
def test_train_and_test_never_share_a_request():
    import random

    kb = build_kb("kb1")
    for task in (1, 2, 3, 4, 5):
        for part, restr in (("train", False), ("test", False), ("test", True)):
            sim = TaskSimulator(task, kb, restr, random.Random(task), part)
            for _ in range(60):
                assert is_test_request(sim.conversation().request) == (part == "test")


# --- unambiguous golds: a rule-based oracle ---------------------------------------------------------------------
def _template_re(t: str) -> re.Pattern:
    out, seen = "", set()
    for part in re.split(r"(\{[a-z]\})", t):
        m = re.fullmatch(r"\{([a-z])\}", part)
        if not m:
            out += re.escape(part)
        elif m.group(1) in seen:
            out += f"(?P={m.group(1)})"
        else:
            seen.add(m.group(1))
            out += f"(?P<{m.group(1)}>.+?)"
    return re.compile(out + "$")


HESITATION_RES = [_template_re(t) for t in L.HESITATIONS + L.UPDATE_HESITATIONS]
TWO_VALUE_RES = [_template_re(t) for t in L.TWO_VALUE_ANSWERS]
FACT_RE = re.compile(r"^(\S+) r_(\w+) (\S+)$")


class Oracle:
    """Replays a context like the simulator's bot would, using only the context and the language tables."""

    def __init__(self, kb_name: str, restrictions: bool, task: int):
        kb = build_kb(kb_name)
        self.slot_of = {v: s for s, vals in kb.values.items() for v in vals}
        self.slots = ["cuisine", "location", "number", "price", "atmosphere"] + (["restrictions"] if restrictions else [])
        self.task = task

    def _values(self, text: str) -> list[str]:
        return [w for w in re.findall(r"[a-z]+", text) if w in self.slot_of and self.slot_of[w] in self.slots]

    def predict(self, utts: list[str]) -> str:
        goal: dict[str, str] = {}
        facts: dict[str, int] = {}
        proposals: list[str] = []
        phase, pending_info, booked, out = "start", None, None, None
        user_turn = True
        for u in utts:
            m = FACT_RE.match(u)
            if m:
                if m.group(2) == "rating":
                    facts[m.group(1)] = int(m.group(3))
                continue
            if not user_turn:
                user_turn = True
                continue
            user_turn = False
            hesitating = u not in L.UNANSWERABLE and any(r.match(u) for r in HESITATION_RES)
            if phase == "start":
                phase, out = "request", L.HELLO
            elif phase == "request":
                names = [n for n in facts if n in u.split()]
                if self.task == 4 and names:
                    booked, phase, out = names[0], "info", L.BOOK
                else:
                    for v in self._values(u):
                        goal[self.slot_of[v]] = v
                    phase, out = "slots", L.ON_IT
            elif phase == "slots":
                if hesitating:
                    out = L.READY
                    continue
                if u != L.SILENCE:
                    two = [r.match(u) for r in TWO_VALUE_RES]
                    two = [x for x in two if x]
                    v = two[0].group("v") if two else self._values(u)[0]
                    goal[self.slot_of[v]] = v
                missing = [s for s in L.ASK_ORDER if s in self.slots and s not in goal]
                if missing:
                    out = L.ASK[missing[0]]
                else:
                    phase, out = "looking", L.LOOKING
            elif phase in ("looking", "looking2"):
                if self.task == 3:
                    phase, out = "options", self._propose(facts, proposals)
                else:
                    phase = "called" if phase == "looking" else "results"
                    out = "api_call " + " ".join(goal[s] for s in self.slots)
                    facts = {}
            elif phase == "called":
                if hesitating:
                    out = L.READY
                elif u in L.NO_MORE:
                    phase, out = "looking2", L.LOOKING
                else:
                    v = self._values(u)[0]
                    goal[self.slot_of[v]] = v
                    out = L.UPDATE
            elif phase in ("results", "another"):
                phase, out = "options", self._propose(facts, proposals)
            elif phase == "options":
                if u in L.UNANSWERABLE:
                    out = L.SORRY
                elif u in L.ASK_FIRST:
                    out = L.OPTION_WAS + proposals[0]
                elif u in L.ASK_PREVIOUS:
                    out = L.OPTION_WAS + proposals[-2]
                elif u in L.REJECT:
                    phase, out = "another", L.ANOTHER
                else:
                    assert u in L.ACCEPT + L.ACCEPT_LAST, u
                    booked, phase, out = proposals[-1], "info", L.BOOK
            elif phase == "info":
                kind = next((k for k, ts in L.INFO_HESITATIONS.items() if u in ts), None)
                if kind:
                    pending_info, out = kind, L.READY
                    continue
                if u in L.INFO_CONFIRM:
                    kind = pending_info
                else:
                    kind = next((k for k in ("phone", "address") if u in L.ASK_INFO[k] + L.INFO_FRIEND[k]), None)
                if kind:
                    out = L.HERE + booked + "_" + kind
                else:
                    assert u in L.THANKS, u
                    phase, out = "closing", L.ANYTHING
            elif phase == "closing":
                assert u in L.BYE
                out = L.WELCOME
        return out

    @staticmethod
    def _propose(facts: dict[str, int], proposals: list[str]) -> str:
        best = max((n for n in facts if n not in proposals), key=lambda n: facts[n])
        proposals.append(best)
        return L.PROPOSE + best


@pytest.mark.parametrize("full", [False, True])
def test_rule_oracle_reaches_p_at_1_of_one(tmp_path, full):
    out = tmp_path / "c"
    generate_challenge(out, seed=11, n_train=30, n_test=80 if not full else 15, full_conversations=full)
    specs = {"trn": ("kb1", False), "tst1": ("kb1", False), "tst2": ("kb2", False), "tst3": ("kb1", True),
             "tst4": ("kb2", True)}
    checked = 0
    for path, task in _datasets(out):
        kb, restr = specs[path.parent.name]
        oracle = Oracle(kb, restr, task)
        data = json.loads(path.read_text())
        gold = None if path.parent.name == "trn" else _gold(path)
        for it in data:
            gid = it["answer"]["candidate_id"] if gold is None else gold[it["dialog_id"]]
            gtext = next(c["utterance"] for c in it["candidates"] if c["candidate_id"] == gid)
            assert oracle.predict(it["utterances"]) == gtext, (path.name, it["utterances"][-6:])
            checked += 1
    assert checked > 1000


def test_full_conversation_mode_fields_and_fb(tmp_path):
    from dialeval.formats.fbdialog import read_candidates, read_conversations

    out = tmp_path / "c"
    generate_challenge(out, seed=3, n_train=0, n_test=5, full_conversations=True, splits="tst1", tasks=[5])
    path = next(out.glob("tst1/*tst5.json"))
    items = json.loads(path.read_text())
    convs = {}
    for it in items:
        convs.setdefault(it["conversation_id"], []).append(it["turn"])
    assert len(convs) == 5
    assert all(turns == list(range(1, len(turns) + 1)) for turns in convs.values())
    fb = out / "fb" / "tst1" / (path.name[: -len(".json")] + ".txt")
    fb_convs = read_conversations(fb)
    assert len(fb_convs) == 5
    turns = [t for c in fb_convs for t in c.turns()]
    assert [ctx for ctx, _g, _n in turns] == [it["utterances"] for it in items]
    cands = set(read_candidates(fb.with_name(fb.stem + "-candidates.txt")))
    assert all(g in cands for _c, g, _n in turns)


# --- realism vs the real tst1 -----------------------------------------------------------------------------------
@pytest.mark.realdata
def test_realism_against_real_tst1(tmp_path):
    if not (REAL_DSTC6 / "tst1").is_dir():
        pytest.skip(f"real DSTC6 data not found at {REAL_DSTC6}")
    from dialeval.simulator.stats import challenge_stats

    real = {s.task: s for s in challenge_stats(REAL_DSTC6, ["tst1"])}
    out = tmp_path / "c"
    generate_challenge(out, seed=1, n_train=0, n_test=600, splits="tst1")
    for s in challenge_stats(out, ["tst1"]):
        r = real[s.task]
        assert abs(s.utterances_mean / r.utterances_mean - 1) <= 0.25, (s.task, s.utterances_mean, r.utterances_mean)
        assert 7 <= s.candidates_min and s.candidates_max <= 10
        assert s.candidates_mode == r.candidates_mode
        assert 0.40 <= s.context_distractor_share <= 0.70, (s.task, s.context_distractor_share)


def test_dstc6_writer_rewrites_real_files_byte_for_byte(tmp_path):
    """Reading a real DSTC6 test file and writing it back gives its exact bytes (key order included: a candidate
    is written utterance first, as the release has it); the simulator's files use the same key order."""
    if not (REAL_DSTC6 / "tst1").is_dir():
        pytest.skip(f"real DSTC6 data not found at {REAL_DSTC6}")
    from dialeval.formats.dstc6 import read_dataset, write_dataset

    real = sorted(p for p in (REAL_DSTC6 / "tst1").glob("*.json") if not p.name.endswith(ANSWERS_SUFFIX))
    assert len(real) == 5
    for path in real:
        write_dataset(tmp_path / path.name, read_dataset(path))
        assert (tmp_path / path.name).read_bytes() == path.read_bytes(), path.name
    release_order = list(json.loads(real[0].read_text())[0]["candidates"][0])
    out = tmp_path / "sim"
    generate_challenge(out, seed=3, n_train=2, n_test=2, splits="trn,tst1", tasks=[1])
    for path, _task in _datasets(out):
        for it in json.loads(path.read_text()):
            assert {tuple(c) for c in it["candidates"]} == {tuple(release_order)}, path.name
            if "answer" in it:
                assert list(it["answer"]) == release_order


# --- default challenge cache ------------------------------------------------------------------------------------
def _ensure_in_process(cache: str, q) -> None:
    import os

    os.environ["DIALEVAL_CACHE_DIR"] = cache
    from dialeval.simulator.default import ensure_default_challenge

    q.put(str(ensure_default_challenge()))


def test_default_challenge_concurrent_generation(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    q = ctx.Queue()
    procs = [ctx.Process(target=_ensure_in_process, args=(str(tmp_path), q)) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    paths = {q.get(timeout=5), q.get(timeout=5)}
    assert len(paths) == 1
    final = Path(paths.pop())
    assert (final / ".complete").is_file()
    dirs = [p.name for p in tmp_path.iterdir() if p.is_dir()]
    assert dirs == [final.name], dirs
    assert sorted(Challenge(final).splits) == ["trn", "tst1", "tst2", "tst3", "tst4"]
    items = json.loads(next((final / "tst1").glob("dialog-task1*tst200.json")).read_text())
    assert len(items) == 200


def test_default_challenge_ignores_half_written_attempts(tmp_path, monkeypatch):
    from dialeval.simulator import default

    monkeypatch.setenv("DIALEVAL_CACHE_DIR", str(tmp_path))
    name = default.default_challenge_name()
    stale = tmp_path / f".{name}.tmp-crashed"
    (stale / "tst1").mkdir(parents=True)
    (stale / "tst1" / "half.json").write_text("[{")
    broken = tmp_path / name  # ours (the base marker) but a part died half-written: no completion marker
    (broken / "tst1").mkdir(parents=True)
    (broken / default.BASE_MARKER).write_text("")
    (broken / "tst1" / "half.json").write_text("[{")
    path = default.ensure_default_challenge()
    assert path == broken and (path / ".complete").is_file() and not (path / "tst1" / "half.json").exists()
    assert (path / "tst1").is_dir()
    assert not stale.exists()
    assert default.ensure_default_challenge() == path  # cached: no regeneration


def test_default_challenge_builds_only_the_parts_asked_for(tmp_path, monkeypatch):
    """The first command reading one split generates that split only (the first run after install stays short);
    adding the rest later gives byte for byte the challenge a one-shot generation writes."""
    from dialeval.simulator import default
    from dialeval.simulator.generate import generate_challenge

    monkeypatch.setenv("DIALEVAL_CACHE_DIR", str(tmp_path / "cache"))
    path = default.ensure_default_challenge(parts=["tst4"])
    assert sorted(p.name for p in path.iterdir() if p.is_dir()) == ["tst4"]
    assert not (path / ".complete").exists()
    first = {p.relative_to(path): p.read_bytes() for p in (path / "tst4").iterdir()}
    assert default.ensure_default_challenge() == path
    assert (path / ".complete").is_file()
    assert {p.relative_to(path): p.read_bytes() for p in (path / "tst4").iterdir()} == first
    p = default.DEFAULT_PARAMS
    whole = generate_challenge(tmp_path / "whole", seed=p["seed"], n_train=p["n_train"], n_test=p["n_test"],
                               candidates=tuple(p["candidates"]), context_distractors=p["context_distractors"])
    expected = sorted(f.relative_to(whole) for f in whole.rglob("*") if f.is_file())
    got = sorted(f.relative_to(path) for f in path.rglob("*")
                 if f.is_file() and not f.name.startswith(".") and f.parts[len(path.parts)] != "airdialogue")
    assert got == expected
    assert all((path / f).read_bytes() == (whole / f).read_bytes() for f in expected)


def test_score_on_the_embedded_default_builds_only_its_split(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from dialeval.cli import main
    from dialeval.simulator import default

    monkeypatch.setenv("DIALEVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("DIALEVAL_CHALLENGE", raising=False)
    path = tmp_path / "cache" / default.default_challenge_name()
    res = CliRunner().invoke(main, ["score", str(tmp_path / "nothing.json"), "--split", "tst2"])
    assert res.exit_code in (1, 2), res.output
    assert sorted(p.name for p in path.iterdir() if p.is_dir()) == ["tst2"]


# --- CLI --------------------------------------------------------------------------------------------------------
def test_cli_simulate_and_stats(tmp_path):
    from click.testing import CliRunner

    from dialeval.simulator.cli import simulate_cmd, stats_cmd

    runner = CliRunner()
    out = tmp_path / "c"
    res = runner.invoke(simulate_cmd, ["--out", str(out), "--seed", "2", "--train", "10", "--test", "10",
                                       "--splits", "tst1,tst2", "--candidates", "8"], standalone_mode=False)
    assert res.exception is None and res.return_value == 0, res.output
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == ["tst1", "tst2"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp dir left
    res = runner.invoke(stats_cmd, [str(out), "--json"], standalone_mode=False)
    rows = json.loads(res.output)
    assert len(rows) == 10 and all(r["candidates_min"] == r["candidates_max"] == 8 for r in rows)
    # refuses a non-empty --out, accepts it with --force
    from dialeval.core.errors import UsageError

    res = runner.invoke(simulate_cmd, ["--out", str(out), "--test", "5"], standalone_mode=False)
    assert isinstance(res.exception, UsageError)
    res = runner.invoke(simulate_cmd, ["--out", str(out), "--test", "5", "--train", "0", "--splits", "tst4",
                                       "--force"], standalone_mode=False)
    assert res.exception is None
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == ["tst4"]


@pytest.mark.parametrize("args", [["--candidates", "9-3"], ["--splits", "tst9"], ["--context-distractors", "2"],
                                  ["--test", "0"], ["--tasks", "1,x"]])
def test_cli_bad_input_is_a_one_line_usage_error(tmp_path, args):
    import subprocess
    import sys

    cmd = [sys.executable, "-c", "from dialeval.cli import run; run()", "simulate", "--out", str(tmp_path / "o")]
    res = subprocess.run(cmd + args, capture_output=True, text=True)
    assert res.returncode == 2, res.stderr
    assert "Traceback" not in res.stderr
    assert not (tmp_path / "o").exists()


def test_files_pass_the_published_schemas(small):
    """Every generated dataset file and answer key is valid under the published JSON Schemas."""
    from dialeval.core.schemacheck import schema_problems

    checked = 0
    for path in sorted(small.rglob("dialog-task*.json")):
        data = json.loads(path.read_text())
        name = "dstc6-result" if path.name.endswith(".answers.json") else "dstc6-dataset"
        assert schema_problems(data, name, path.name) == [], path
        checked += 1
    assert checked >= 25  # 5 training files + 4 splits x (5 test files + 5 keys)


def test_full_conversations_write_a_babi_folder_that_scores(tmp_path, cli):
    """Issue 27 item 1: the bAbI files `simulate --full-conversations` writes are scored as written (babi/ in the
    release's layout: trn, tst, tst-OOV and one shared candidate file), an oracle run at accuracy 1."""
    out = tmp_path / "conv"
    r = cli("simulate", "--out", out, "--seed", "1", "--train", "2", "--test", "3", "--full-conversations",
                "--splits", "trn,tst1,tst2", "--tasks", "1,5")
    assert r.returncode == 0, r.stderr
    babi = out / "babi"
    assert sorted(p.name for p in babi.iterdir()) == [
        "dialog-babi-candidates.txt",
        "dialog-babi-task1-API-calls-trn.txt", "dialog-babi-task1-API-calls-tst-OOV.txt",
        "dialog-babi-task1-API-calls-tst.txt",
        "dialog-babi-task5-full-dialogs-trn.txt", "dialog-babi-task5-full-dialogs-tst-OOV.txt",
        "dialog-babi-task5-full-dialogs-tst.txt"]
    cands = [line.split(" ", 1)[1] for line in (babi / "dialog-babi-candidates.txt").read_text().splitlines()]
    cand_id = {c: str(n) for n, c in enumerate(cands, 1)}
    run = []
    for prefix in ("dialog-babi-task1-API-calls", "dialog-babi-task5-full-dialogs"):
        conv = 0
        for line in (babi / f"{prefix}-tst.txt").read_text().splitlines():
            lid, _, rest = line.partition(" ")
            conv += lid == "1"
            if "\t" in rest:
                gold = cand_id[rest.split("\t", 1)[1]]
                run.append({"dialog_id": f"{prefix}-tst:{conv}:{lid}",
                            "lst_candidate_id": [{"candidate_id": gold, "rank": 1}]})
    (tmp_path / "run.json").write_text(json.dumps(run))
    r = cli("score", tmp_path / "run.json", "--benchmark", "babi", "--data", babi, "--split", "tst", "--json")
    assert r.returncode == 0, r.stderr
    values = [rec["value"] for rec in json.loads(r.stdout)["results"] if rec["metric"] == "per-response-accuracy"]
    assert values and all(v == 1.0 for v in values), values
