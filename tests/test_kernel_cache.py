"""The embedding kernels compile once: at package build, into the package; a first run loads them from dialeval's
cache folder (seeded from the package) and compiles nothing (issue 27: the first run after install spent ~7 s
compiling). ``benchmarks/bench_kernels_first_use.py`` times it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.needs("numba")

FIRST_USE = """
import json
from dialeval.formats.vectors import Vectors
from dialeval.metrics.embedding import score_pairs
from dialeval.metrics import embedding_kernels as k
v = Vectors.from_arrays(["a", "b", "c"], [[1.0, 2.0], [0.5, -1.0], [-2.0, 0.25]])
r = score_pairs(["a b c", "b a", "c"], [["c a"], ["a b c b"], ["b"]], "paper", v)
compiled = sorted(n for n in dir(k) if getattr(getattr(k, n), "stats", None) and getattr(k, n).stats.cache_misses)
print(json.dumps({"compiled": compiled, "loaded": sorted(n for n in dir(k) if getattr(getattr(k, n), "stats", None)
                  and getattr(k, n).stats.cache_hits), "path": k.pair_scores._cache._cache_path,
                  "values": {m: v.tolist() for m, v in r.per_pair.items()}}))
"""


def test_kernels_are_cached_in_dialevals_cache_folder(tmp_path):
    """numba's cache for the kernels is dialeval's folder (keyed by the kernels' source and numba's version),
    not the module's __pycache__ and not wherever NUMBA_CACHE_DIR points."""
    from dialeval.metrics.kernel_cache import source_digest

    env = {k: v for k, v in os.environ.items() if k != "DIALEVAL_KERNEL_CACHE"}
    env.update(DIALEVAL_CACHE_DIR=str(tmp_path / "cache"), NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    out = subprocess.run([sys.executable, "-c", "from dialeval.metrics import embedding_kernels as k; "
                          "print(k.pair_scores._cache._cache_path); print(k.split_chunk._cache._cache_path)"],
                         env=env, check=True, capture_output=True, text=True)
    folders = {Path(p) for p in out.stdout.split()}
    assert len(folders) == 1
    folder = folders.pop()
    assert folder.parent == tmp_path / "cache" / "kernels"
    assert folder.name.startswith(source_digest().hex()[:16] + "-numba")


def test_seed_fills_only_an_empty_folder(tmp_path):
    from dialeval.metrics.kernel_cache import seed

    prebuilt = tmp_path / "prebuilt"
    prebuilt.mkdir()
    (prebuilt / "embedding_kernels.f-10.py311.nbi").write_bytes(b"index")
    (prebuilt / "embedding_kernels.f-10.py311.1.nbc").write_bytes(b"code")
    (prebuilt / "notes.txt").write_text("not numba's")
    target = tmp_path / "cache" / "kernels"
    assert seed(target, prebuilt) == 2
    assert sorted(p.name for p in target.iterdir()) == ["embedding_kernels.f-10.py311.1.nbc",
                                                         "embedding_kernels.f-10.py311.nbi"]
    (prebuilt / "embedding_kernels.f-10.py311.nbi").write_bytes(b"newer")
    assert seed(target, prebuilt) == 0  # a folder that has an index keeps it (numba updates it itself)
    assert (target / "embedding_kernels.f-10.py311.nbi").read_bytes() == b"index"
    assert seed(tmp_path / "elsewhere", tmp_path / "no-prebuilt") == 0


def test_package_build_precompiles_so_the_first_run_compiles_nothing(tmp_path):
    """The real install step (setup.py build_py, as pip runs it) leaves machine code in the built package; a
    fresh process importing that package, with an empty dialeval cache, loads every kernel and compiles none,
    and its numbers are this process's."""
    from dialeval.formats.vectors import Vectors
    from dialeval.metrics.embedding import score_pairs

    lib = tmp_path / "lib"
    prebuilt = lib / "dialeval" / "metrics" / "_kernel_cache"
    prebuilt.mkdir(parents=True)  # a build folder kept from an earlier build, its kernels since moved to other lines
    (prebuilt / "embedding_kernels.split_chunk-1.py311.1.nbc").write_bytes(b"stale")
    env = {k: v for k, v in os.environ.items() if k not in ("DIALEVAL_KERNEL_CACHE", "PYTHONPATH")}
    subprocess.run([sys.executable, "setup.py", "-q", "build_py", "--build-lib", str(lib)], cwd=REPO, env=env,
                   check=True, capture_output=True)
    assert any(prebuilt.glob("embedding_kernels.pair_scores-*.nbi"))
    assert not (prebuilt / "embedding_kernels.split_chunk-1.py311.1.nbc").exists()  # never shipped beside the new
    # one machine code per kernel and argument types: the text kernels once (every buffer they split is read-only;
    # a writable one compiled them twice, 435 KB more in the wheel), pair_scores for float32 and float64 vectors,
    # the greedy tile once (its block index, started as the literal 0, also compiled a 100 KB copy for the constant 0),
    # the vocabulary's buffer growth once (the spelling ends, int64, grown with the literal 0: a 32 KB second one)
    kernels = ("split_chunk", "_split_run", "_space_len", "pair_scores", "_tile_max", "_grow", "_grow_rows")
    overloads = {k: len(list(prebuilt.glob(f"embedding_kernels.{k}-*.nbc"))) for k in kernels}
    assert overloads == {"split_chunk": 1, "_split_run": 1, "_space_len": 1, "pair_scores": 2, "_tile_max": 1,
                         "_grow": 1, "_grow_rows": 1}

    env.update(PYTHONPATH=str(lib), DIALEVAL_CACHE_DIR=str(tmp_path / "empty-cache"))
    out = subprocess.run([sys.executable, "-c", FIRST_USE], cwd=tmp_path, env=env, check=True,
                         capture_output=True, text=True)
    got = json.loads(out.stdout)
    assert got["compiled"] == []
    assert {"pair_scores", "split_chunk", "token_rows"} <= set(got["loaded"])
    assert Path(got["path"]).is_relative_to(tmp_path / "empty-cache" / "kernels")
    v = Vectors.from_arrays(["a", "b", "c"], [[1.0, 2.0], [0.5, -1.0], [-2.0, 0.25]])
    want = score_pairs(["a b c", "b a", "c"], [["c a"], ["a b c b"], ["b"]], "paper", v)
    for m, values in got["values"].items():
        np.testing.assert_array_equal(values, want.per_pair[m])
