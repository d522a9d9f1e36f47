"""The test-file index cache: used when a file is unchanged, never stale, optional."""

from __future__ import annotations

import json
import os

from dialeval.benchmarks.dstc6.challenge import load_task_index
from dialeval.files import cache


def test_index_cache_hit_and_invalidation(tiny, tmp_path, monkeypatch):
    monkeypatch.setenv("DIALEVAL_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.delenv("DIALEVAL_NO_CACHE", raising=False)
    task = tiny.tasks[0]
    path = tiny.split_dir / tiny.file_name(task)
    first = load_task_index(task, path)
    assert cache.load_index(path) is not None  # stored
    again = load_task_index(task, path)
    assert again.dialog_ids == first.dialog_ids and again.candidate_ids == first.candidate_ids

    # Rewrite the file with one item dropped: the cached index must not be served.
    data = json.loads(path.read_text())
    path.write_text(json.dumps(data[1:]))
    os.utime(path, ns=(1, 1))
    changed = load_task_index(task, path)
    assert changed.dialog_ids == first.dialog_ids[1:]


def test_index_cache_can_be_disabled_and_survives_corruption(tiny, tmp_path, monkeypatch):
    monkeypatch.setenv("DIALEVAL_CACHE_DIR", str(tmp_path / "c"))
    task = tiny.tasks[0]
    path = tiny.split_dir / tiny.file_name(task)
    monkeypatch.setenv("DIALEVAL_NO_CACHE", "1")
    load_task_index(task, path)
    assert not (tmp_path / "c" / "index").exists()
    monkeypatch.delenv("DIALEVAL_NO_CACHE")
    load_task_index(task, path)
    for f in (tmp_path / "c" / "index").iterdir():
        f.write_bytes(b"garbage")
    assert cache.load_index(path) is None
    assert load_task_index(task, path).dialog_ids  # falls back to parsing
