"""Hostile ``.tgz`` submissions: refused with a one-line error (exit 2), nothing written outside the private
temp directory, and the temp directory removed afterwards. A well-formed archive scores like its directory.
"""

from __future__ import annotations

import gzip
import io
import json
import tarfile
import tempfile
from pathlib import Path

import pytest
from conftest import TinyChallenge, run_cli, write_json

import dialeval.files.archive as archive
from dialeval.api import score
from dialeval.core.errors import UsageError


def _file(tf: tarfile.TarFile, name: str, data: bytes) -> None:
    ti = tarfile.TarInfo(name)
    ti.size = len(data)
    tf.addfile(ti, io.BytesIO(data))


def _special(tf: tarfile.TarFile, name: str, kind: bytes, linkname: str = "") -> None:
    ti = tarfile.TarInfo(name)
    ti.type = kind
    ti.linkname = linkname
    if kind in (tarfile.CHRTYPE, tarfile.BLKTYPE):
        ti.devmajor, ti.devminor = 1, 3
    tf.addfile(ti)


def build_tgz(path: Path, ch: TinyChallenge, hostile=None, prefix: str = "", mode: str = "w:gz") -> Path:
    """A valid submission archive (``tst1/<stem>.answers.json`` x3), then whatever ``hostile`` adds."""
    with tarfile.open(path, mode) as tf:
        for t in ch.tasks:
            _file(tf, f"{prefix}tst1/{ch.answers_name(t)}", json.dumps(ch.perfect([t])).encode())
        if hostile:
            hostile(tf)
    return path


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    """A private TMPDIR, in-process and for subprocesses: archives are unpacked under it."""
    d = tmp_path / "tmpdir"
    d.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(d))
    return d


def _outside(tmp_path: Path) -> Path:
    d = tmp_path / "outside"
    d.mkdir(exist_ok=True)
    return d


HOSTILE = {
    "symlink": (lambda out: lambda tf: _special(tf, "tst1/link.answers.json", tarfile.SYMTYPE, "/etc/passwd"), "is a link"),
    "symlink-dir-then-file": (
        lambda out: lambda tf: (_special(tf, "evil", tarfile.SYMTYPE, str(out)), _file(tf, "evil/pwned.json", b"[]")),
        "is a link",
    ),
    "hardlink": (lambda out: lambda tf: _special(tf, "tst1/hard.json", tarfile.LNKTYPE, "/etc/passwd"), "is a link"),
    "absolute-path": (lambda out: lambda tf: _file(tf, str(out / "abs.json"), b"[]"), "absolute path"),
    "dotdot-path": (lambda out: lambda tf: _file(tf, "tst1/../../outside/dotdot.json", b"[]"), "outside the archive"),
    "backslash-path": (lambda out: lambda tf: _file(tf, "..\\outside\\bs.json", b"[]"), "outside the archive"),
    "drive-letter": (lambda out: lambda tf: _file(tf, "C:/outside/drive.json", b"[]"), "absolute path"),
    "char-device": (lambda out: lambda tf: _special(tf, "tst1/null", tarfile.CHRTYPE), "not a regular file"),
    "block-device": (lambda out: lambda tf: _special(tf, "tst1/sda", tarfile.BLKTYPE), "not a regular file"),
    "fifo": (lambda out: lambda tf: _special(tf, "tst1/fifo", tarfile.FIFOTYPE), "not a regular file"),
}


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_hostile_member_refused_in_process(kind, tmp_path, tiny, private_tmp):
    out = _outside(tmp_path)
    make, message = HOSTILE[kind]
    tgz = build_tgz(tmp_path / "sub.tgz", tiny, make(out))
    with pytest.raises(UsageError, match=message):
        score(tgz, split="tst1", challenge=tiny.root)
    assert list(out.iterdir()) == []  # nothing written outside
    assert list(private_tmp.iterdir()) == []  # the private temp dir is gone
    assert not (tmp_path / "sub.json").exists()


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_hostile_member_refused_by_cli(kind, tmp_path, tiny, private_tmp):
    out = _outside(tmp_path)
    make, message = HOSTILE[kind]
    tgz = build_tgz(tmp_path / "sub.tgz", tiny, make(out))
    r = run_cli("score", tgz, "--challenge", tiny.root, "--split", "tst1", env={"TMPDIR": str(private_tmp)})
    _assert_one_line_usage_error(r, message)
    assert list(out.iterdir()) == []
    assert list(private_tmp.iterdir()) == []


def _assert_one_line_usage_error(r, message: str) -> None:
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stdout + r.stderr
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dialeval: error: ") and message in lines[0], r.stderr


def test_archive_past_size_limit_refused(tmp_path, tiny, private_tmp, monkeypatch):
    tgz = build_tgz(tmp_path / "sub.tgz", tiny)
    total = sum(len(json.dumps(tiny.perfect([t]))) for t in tiny.tasks)
    monkeypatch.setattr(archive, "MAX_ARCHIVE_BYTES", total - 1)
    with pytest.raises(UsageError, match="expands past"):
        score(tgz, split="tst1", challenge=tiny.root)
    assert list(private_tmp.iterdir()) == []
    monkeypatch.setattr(archive, "MAX_ARCHIVE_BYTES", total)
    assert score(tgz, split="tst1", challenge=tiny.root).value("p@1") == 1.0
    assert list(private_tmp.iterdir()) == []  # cleaned up after a successful run too


def test_gzip_bomb_refused_by_cli(tmp_path, tiny, private_tmp):
    """A small archive whose one member expands to 64 MiB of zeros, against a 1 MiB limit."""
    tgz = tmp_path / "bomb.tgz"
    with tarfile.open(tgz, "w:gz") as tf:
        ti = tarfile.TarInfo("tst1/zeros.answers.json")
        ti.size = 64 << 20
        tf.addfile(ti, io.BytesIO(bytes(ti.size)))
    assert tgz.stat().st_size < 1 << 20
    r = run_cli("score", tgz, "--challenge", tiny.root, "--split", "tst1",
                env={"TMPDIR": str(private_tmp), "DIALEVAL_MAX_ARCHIVE_BYTES": str(1 << 20)})
    _assert_one_line_usage_error(r, "expands past")
    assert list(private_tmp.iterdir()) == []


def test_too_many_members_refused(tmp_path, tiny, private_tmp, monkeypatch):
    monkeypatch.setattr(archive, "MAX_ARCHIVE_MEMBERS", 2)
    tgz = build_tgz(tmp_path / "sub.tgz", tiny)
    with pytest.raises(UsageError, match="more than 2 members"):
        score(tgz, split="tst1", challenge=tiny.root)
    assert list(private_tmp.iterdir()) == []


@pytest.mark.parametrize("damage", ["truncated", "garbage", "bad-crc", "empty"])
def test_corrupt_archive_one_line_error(damage, tmp_path, tiny, private_tmp):
    good = build_tgz(tmp_path / "good.tgz", tiny).read_bytes()
    if damage == "truncated":
        bad = good[: len(good) // 2]
    elif damage == "garbage":
        bad = b"\x1f\x8b" + bytes(range(256)) * 4
    elif damage == "bad-crc":
        raw = bytearray(gzip.decompress(good))
        raw[600] ^= 0xFF  # inside the first member's data
        bad = bytearray(gzip.compress(bytes(raw)))
        bad[-8] ^= 0xFF  # CRC32 of the gzip trailer no longer matches
        bad = bytes(bad)
    else:
        bad = b""
    tgz = tmp_path / "bad.tgz"
    tgz.write_bytes(bad)
    r = run_cli("score", tgz, "--challenge", tiny.root, "--split", "tst1", env={"TMPDIR": str(private_tmp)})
    _assert_one_line_usage_error(r, "archive")
    assert list(private_tmp.iterdir()) == []


def test_valid_archive_scores_like_its_directory(tmp_path, tiny, private_tmp):
    d = tmp_path / "dir"
    for t in tiny.tasks:
        write_json(d / "tst1" / tiny.answers_name(t), tiny.perfect([t]))
    by_dir = score(d, split="tst1", challenge=tiny.root)
    for name, prefix in (("plain.tgz", ""), ("nested.tar.gz", "submission/"), ("plain.tar", "")):
        tgz = build_tgz(tmp_path / name, tiny, prefix=prefix, mode="w" if name.endswith(".tar") else "w:gz")
        rep = score(tgz, split="tst1", challenge=tiny.root)
        assert rep.submission["kind"] == "archive"
        assert rep.valid and rep.records == by_dir.records
        assert sorted(rep.submission["files"]) == sorted(f"tst1/{tiny.answers_name(t)}" for t in tiny.tasks)
    assert list(private_tmp.iterdir()) == []


def test_archive_problems_are_reported_with_member_names(tmp_path, tiny, private_tmp):
    def bad_member(tf):
        data = tiny.perfect([1])
        data[0]["lst_candidate_id"][1]["rank"] = 1
        _file(tf, f"tst1/{tiny.answers_name(1)}", json.dumps(data).encode())

    tgz = tmp_path / "sub.tgz"
    with tarfile.open(tgz, "w:gz") as tf:
        bad_member(tf)
    rep = score(tgz, split="tst1", challenge=tiny.root, tasks=[1])
    assert [(p.code, p.file, p.pointer) for p in rep.errors] == [
        ("duplicate-rank", f"tst1/{tiny.answers_name(1)}", "/0/lst_candidate_id/1/rank")
    ]
    assert not any(str(private_tmp) in p.message for p in rep.problems)  # no temp paths in messages
