"""Hostile inputs to ``dialeval data`` and ``--data NAME`` (the harness: tests/hostile.py). No network: nothing here
fetches; a bad timeout setting is refused before any connection."""

from __future__ import annotations

import json
import os

import pytest
from hostile import Hostile, fifo

PUBLISHED = "dialog-babi-candidates.txt"  # a file name of the babi-dialog release


def cases(tmp):
    cache = tmp / "cache"
    env = {"DIALEVAL_CACHE_DIR": "cache"}  # relative: runs start in tmp (no private path shown)
    out = []

    out.append(Hostile("verify a FIFO", ["data", "verify", fifo(tmp / "pipe").name], 2, message="not a folder",
                       seconds=1.0, rss=100 * 1024 * 1024, env=env))
    out.append(Hostile("verify /dev/zero", ["data", "verify", "/dev/zero"], 2, message="not a folder", seconds=1.0,
                       rss=100 * 1024 * 1024, env=env))
    d = tmp / "specials"
    fifo(d / PUBLISHED)  # a published name on a FIFO: skipped, never opened
    (d / "README.txt").symlink_to("/dev/zero")  # a published name on a link to a device: skipped
    # Nothing left to check once the specials are skipped: one usage line, exit 2 (never an empty clean pass).
    out.append(Hostile("verify skips FIFOs and links named like published files", ["data", "verify", d.name], 2,
                       message="holds no regular file to check", seconds=2.0, env=env))
    big = tmp / "big"
    big.mkdir()
    with open(big / PUBLISHED, "wb") as f:  # sparse: 512 MB of zeros under a published name, hashed in chunks
        f.truncate(512 * 1024 * 1024)
    out.append(Hostile("verify a 512 MB file under a published name", ["data", "verify", big.name], 1,
                       message="MODIFIED", max_lines=None, seconds=20.0, rss=300 * 1024 * 1024, env=env))
    for label, target in (("FIFO", fifo(tmp / "registry-pipe")), ("device", "/dev/zero")):
        out.append(Hostile(f"registry is a {label}", ["data", "list"], 2, message="release registry .*not a regular",
                           seconds=1.0, rss=100 * 1024 * 1024, env={**env, "DIALEVAL_RELEASES": str(target) if target == "/dev/zero" else target.name}))
    bad = tmp / "bad-registry.json"
    bad.write_text('{"format": 1, "releases": [{"name": "../x", "benchmark": "babi", "marker": "m"}]}')
    out.append(Hostile("registry with a path-like release name", ["data", "list"], 2, message="bad release name",
                       env={**env, "DIALEVAL_RELEASES": bad.name}))
    out.append(Hostile("fetch timeout not a number", ["data", "fetch", "babi-dialog", "--to", "to"], 2,
                       message="DIALEVAL_FETCH_TIMEOUT='soon' is not a number of seconds",
                       env={**env, "DIALEVAL_FETCH_TIMEOUT": "soon"}))
    out.append(Hostile("fetch a name with control characters", ["data", "fetch", "x\x1b[2Jy"], 2,
                       message=r"no release named 'x\\x1b\[2Jy'", env=env))
    out.append(Hostile("--data names a release not fetched", ["score", "x.json", "--benchmark", "babi", "--data",
                                                            "babi-dialog"], 2,
                       message=r"^dialeval: error: release babi-dialog is not fetched yet: run `dialeval data fetch "
                               r"babi-dialog`$", env=env))
    # a planted manifest whose data folder points outside the release: never used
    planted = cache / "releases" / "babi-dialog"
    planted.mkdir(parents=True)
    from dialeval.files.releases import registry

    shas = [a.sha256 for a in registry().get("babi-dialog").archives]
    (planted / ".dialeval-release.json").write_text(json.dumps({"name": "babi-dialog", "data_dir": "../../../..",
                                                                 "archives": shas}))
    out.append(Hostile("planted manifest pointing outside", ["score", "x.json", "--benchmark", "babi", "--data",
                                                             "babi-dialog"], 2, message="not fetched yet", env=env))
    return out


def test_hostile_releases(tmp_path):
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this platform")
    failures = []
    for case in cases(tmp_path):
        try:
            case.check(cwd=tmp_path)
        except AssertionError as e:
            failures.append(str(e)[:1500])
    assert not failures, "\n\n".join(failures)
