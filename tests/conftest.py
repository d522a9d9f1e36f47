"""Shared fixtures: a tiny handmade DSTC6 challenge (built in tmp_path), the real data, and a CLI runner.

The tiny challenge has one split ``tst1`` with three task files of four items each (7-10 candidates per
item) and answer keys beside them, written with the project's own DSTC6 writers, so every test that uses
it runs without ``../shared``. Real-data tests use ``real_tst1`` and skip with a reason when the shared
data folder is absent.
"""

from __future__ import annotations

import copy
import functools
import json
import os
import random
import subprocess
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from dialeval.formats.dstc6 import (
    Candidate,
    DialogItem,
    answers_file_name,
    dataset_file_name,
    write_dataset,
    write_results,
)

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(__file__).resolve().parents[2] / "shared"
REAL_CHALLENGE = SHARED / "data" / "dstc6"
REAL_TST1 = REAL_CHALLENGE / "tst1"

CANDIDATE_COUNTS = (7, 8, 10, 9)  # per item position: the real files hold 7 to 10 candidates


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


@dataclass
class TinyChallenge:
    """A challenge directory ``root/tst1`` written to disk, with everything a test needs to know about it."""

    root: Path
    split: str
    tasks: list[int]
    items: dict[int, list[DialogItem]]  # task -> items in file order
    gold: dict[str, str]  # dialog id -> gold candidate id
    keys_dir: Path  # where the answer keys were written
    task_of: dict[str, int] = field(default_factory=dict)

    @property
    def split_dir(self) -> Path:
        return self.root / self.split

    def file_name(self, task: int) -> str:
        return dataset_file_name(task, "kb1", False)

    def answers_name(self, task: int) -> str:
        return answers_file_name(self.file_name(task))

    def stem(self, task: int) -> str:
        return self.file_name(task)[: -len(".json")]

    def all_items(self, tasks=None) -> list[DialogItem]:
        return [it for t in (tasks or self.tasks) for it in self.items[t]]

    def candidate_ids(self, dialog_id: str) -> list[str]:
        for it in self.items[self.task_of[dialog_id]]:
            if it.dialog_id == dialog_id:
                return [c.candidate_id for c in it.candidates]
        raise KeyError(dialog_id)

    def gold_first(self, dialog_id: str) -> list[str]:
        """Every candidate id of the item, the gold first, the rest in file order."""
        g = self.gold[dialog_id]
        return [g] + [c for c in self.candidate_ids(dialog_id) if c != g]

    def perfect(self, tasks=None) -> list[dict]:
        """A full, valid submission ranking every candidate with the gold at rank 1."""
        return [ranking(it.dialog_id, self.gold_first(it.dialog_id)) for it in self.all_items(tasks)]

    def key_json(self, task: int) -> list[dict]:
        return json.loads((self.keys_dir / self.answers_name(task)).read_text())

    def write_key(self, task: int, data: list) -> None:
        (self.keys_dir / self.answers_name(task)).write_text(json.dumps(data))


def ranking(dialog_id: str, ranked_ids: list[str]) -> dict:
    return {"dialog_id": dialog_id, "lst_candidate_id": [{"candidate_id": c, "rank": i} for i, c in enumerate(ranked_ids, 1)]}


def make_challenge(
    root: Path,
    tasks=(1, 2, 3),
    n_items: int = 4,
    seed: int = 6,
    keys_dir: Path | None = None,
    split: str = "tst1",
) -> TinyChallenge:
    """Write a tiny challenge: ``root/split`` with one test file per task and its answer key.

    Keys go beside the test files unless ``keys_dir`` is given (then the split folder holds none).
    Candidate counts cycle through 7, 8, 10, 9; the gold sits at a different position in each item.
    """
    rng = random.Random(seed)
    split_dir = root / split
    split_dir.mkdir(parents=True, exist_ok=True)
    kdir = keys_dir or split_dir
    kdir.mkdir(parents=True, exist_ok=True)
    items: dict[int, list[DialogItem]] = {}
    gold: dict[str, str] = {}
    task_of: dict[str, int] = {}
    for t in tasks:
        its = []
        for i in range(n_items):
            n = CANDIDATE_COUNTS[i % len(CANDIDATE_COUNTS)]
            cands = [Candidate(_uuid(rng), f"bot reply {t}.{i}.{j}") for j in range(n)]
            g = cands[(i * 3 + t) % n]
            it = DialogItem(_uuid(rng), ["hello", "hi how can i help you", f"i want food {t} {i}"], cands)
            its.append(it)
            gold[it.dialog_id] = g.candidate_id
            task_of[it.dialog_id] = t
        items[t] = its
        name = dataset_file_name(t, "kb1", False)
        write_dataset(split_dir / name, its)
        write_results(kdir / answers_file_name(name), [(it.dialog_id, [gold[it.dialog_id]]) for it in its])
    return TinyChallenge(root, split, list(tasks), items, gold, kdir, task_of)


@pytest.fixture
def tiny(tmp_path) -> TinyChallenge:
    """A fresh tiny challenge per test (tests may edit its keys)."""
    return make_challenge(tmp_path / "challenge")


@pytest.fixture(scope="module")
def tiny_shared(tmp_path_factory) -> TinyChallenge:
    """One tiny challenge per test module, for tests that only read it."""
    return make_challenge(tmp_path_factory.mktemp("challenge"))


@pytest.fixture(scope="session")
def real_tst1() -> Path:
    """The real DSTC6 tst1 folder (5 test files + keys); skips when ../shared/data is absent."""
    if not (REAL_TST1.is_dir() and any(REAL_TST1.glob("*.answers.json"))):
        pytest.skip(f"real DSTC6 data not found at {REAL_TST1}")
    return REAL_TST1


def write_json(path: Path, data) -> Path:
    """Write a submission: bytes as they are, anything else as JSON."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(json.dumps(data))
    return path


def deepcopy(x):
    return copy.deepcopy(x)


def cli_env() -> dict[str, str]:
    """The environment for CLI subprocesses: no DIALEVAL_* settings leak in from the caller, except the embedding
    kernels' folder: every run shares this session's (a test giving a run a fresh DIALEVAL_CACHE_DIR would
    otherwise compile the kernels in it, 7 s of CPU, as a source checkout has none precompiled)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIALEVAL_")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    kernels = _kernel_folder()
    if kernels:
        env["DIALEVAL_KERNEL_CACHE"] = kernels
    return env


@functools.cache
def _kernel_folder() -> str | None:
    try:
        from dialeval.metrics.kernel_cache import cache_dir

        return str(cache_dir())
    except ImportError:  # no numba: nothing to share
        return None


def run_cli(*args, cwd: Path | None = None, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run ``dialeval ARGS`` as a subprocess (the console-script entry point ``dialeval.cli:run``)."""
    cmd = [sys.executable, "-c", "from dialeval.cli import run; run()", *map(str, args)]
    e = cli_env()
    e["PYTHONPATH"] = str(REPO) + os.pathsep + e.get("PYTHONPATH", "")
    if env:
        e.update(env)
    return subprocess.run(cmd, cwd=cwd or REPO, env=e, capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def cli():
    return run_cli


# ---- optional extras ----------------------------------------------------------------------------------------
EXTRA_OF = {"numba": "embeddings", "sacrebleu": "bleu", "gensim": "embeddings", "torch": "neural", "nltk": "toolkit-bleu"}


def pytest_collection_modifyitems(config, items):
    """``@pytest.mark.needs("numba")``: skip, naming the extra, when an optional package is not installed.

    The closest mark wins, so a module marked ``needs("numba")`` can hold a test marked ``needs()`` that runs
    without it (the test that the missing package is reported as a missing extra)."""
    import importlib.util

    missing = {}
    for item in items:
        mark = item.get_closest_marker("needs")
        if mark is None:
            continue
        for module in mark.args:
            if module not in missing:
                missing[module] = importlib.util.find_spec(module) is None
            if missing[module]:
                extra = EXTRA_OF.get(module, module)
                item.add_marker(pytest.mark.skip(reason=f"needs {module}: pip install 'dialeval[{extra}]'"))
                break
