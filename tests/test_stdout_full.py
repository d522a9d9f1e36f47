"""Standard output that cannot be written (``> /dev/full``) is named in the one-line error, exit 2."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import REPO, cli_env

pytestmark = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")


@pytest.fixture(scope="module")
def ubuntu_run(tmp_path_factory):
    from dialeval.simulator.ubuntu import write_fixture

    d = tmp_path_factory.mktemp("ubuntu")
    write_fixture(d / "data", seed=3, n_train=60, n_valid=20, n_test=40)
    np.save(d / "s.npy", np.zeros((40, 10), np.float32))
    return d


@pytest.mark.parametrize("extra", [
    ["score", "s.npy", "--benchmark", "ubuntu", "--data", "data", "--split", "test"],  # the table (text)
    ["score", "s.npy", "--benchmark", "ubuntu", "--data", "data", "--split", "test", "--json"],
    ["score", "s.npy", "--benchmark", "ubuntu", "--data", "data", "--split", "test", "--out", "-"],  # binary
    ["benchmarks"],
])
def test_a_full_standard_output_is_named(ubuntu_run, extra):
    env = cli_env()
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    with open("/dev/full", "w") as full:
        r = subprocess.run([sys.executable, "-c", "from dialeval.cli import run; run()", *extra], cwd=ubuntu_run,
                           env=env, stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
    assert r.returncode == 2
    assert r.stderr == "dialeval: error: standard output: no space left on device\n"
