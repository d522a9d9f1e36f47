"""Hostile and careless inputs (issue 8): bounded resources, safe outputs, honest exit codes, one clear line.

Every case runs on the tiny challenge (conftest.py). CLI cases check the exit code, that stderr is one
``dialeval: error:`` line for usage errors, that nothing is written outside the intended place, and
that no control character from a submitted id reaches the terminal.
"""

from __future__ import annotations

import io
import json
import os
import stat
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from pathlib import Path

import pytest
from conftest import REPO, cli_env, run_cli, write_json

import dialeval.benchmarks.dstc6.submission as submission
from dialeval.api import score
from dialeval.benchmarks.dstc6.challenge import load_task_index
from dialeval.core.errors import UnreadableJSON, UsageError
from dialeval.core.termsafe import safe
from dialeval.files import cache, read, write
from dialeval.formats import jsonio

DAY = 24 * 3600


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    d = tmp_path / "tmpdir"
    d.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(d))
    return d


@pytest.fixture(autouse=True)
def _no_protected_leftovers():
    yield
    write.unprotect_all()


def _member(tf: tarfile.TarFile, name: str, data: bytes) -> None:
    ti = tarfile.TarInfo(name)
    ti.size = len(data)
    tf.addfile(ti, io.BytesIO(data))


def _tgz(path: Path, ch, extra=None, fmt=tarfile.PAX_FORMAT, pax=None) -> Path:
    with tarfile.open(path, "w:gz", format=fmt, pax_headers=pax or {}) as tf:
        for t in ch.tasks:
            _member(tf, f"tst1/{ch.answers_name(t)}", json.dumps(ch.perfect([t])).encode())
        if extra:
            extra(tf)
    return path


def _one_line_error(r, code: int = 2, text: str = "") -> str:
    assert r.returncode == code, (r.returncode, r.stderr[-1000:])
    assert "Traceback" not in r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dialeval: error: "), r.stderr
    assert text in lines[0], lines[0]
    return lines[0]


def _cli(ch, *args, env=None):
    return run_cli(*args, "--challenge", ch.root, "--split", "tst1", env=env)


# ---- tar header bombs (item 2) -----------------------------------------------------------------------------
def test_oversize_pax_header_refused_before_it_is_read(tmp_path, tiny, private_tmp):
    """A pax header claiming 1 MiB (a real one holds a path): refused, not read into memory, not accepted."""
    tgz = _tgz(tmp_path / "sub.tgz", tiny, pax={"comment": "x" * (1 << 20)})
    with pytest.raises(UsageError, match="extended .* header of .* bytes"):
        score(tgz, split="tst1", data=tiny.root)
    assert list(private_tmp.iterdir()) == []


def test_oversize_gnu_long_name_refused(tmp_path, tiny, private_tmp):
    def long_name(tf):
        _member(tf, "tst1/" + "n" * (200 * 1024) + ".json", b"[]")

    tgz = _tgz(tmp_path / "sub.tgz", tiny, long_name, fmt=tarfile.GNU_FORMAT)
    r = _cli(tiny, "score", tgz, env={"TMPDIR": str(private_tmp)})
    _one_line_error(r, 2, "extended (pax or long-name) header")
    assert list(private_tmp.iterdir()) == []


def test_ordinary_long_names_still_work(tmp_path, tiny, private_tmp):
    """A folder name past 100 characters needs a pax or GNU header: such archives stay valid."""
    for fmt in (tarfile.PAX_FORMAT, tarfile.GNU_FORMAT):
        prefix = "submission-" + "x" * 150 + "/"
        path = tmp_path / f"long{fmt}.tgz"
        with tarfile.open(path, "w:gz", format=fmt) as tf:
            for t in tiny.tasks:
                _member(tf, f"{prefix}tst1/{tiny.answers_name(t)}", json.dumps(tiny.perfect([t])).encode())
        assert score(path, split="tst1", data=tiny.root).value("p@1") == 1.0
    assert list(private_tmp.iterdir()) == []


def test_chained_extended_headers_refused(tmp_path, tiny, private_tmp):
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tf:
        _member(tf, f"tst1/{tiny.answers_name(1)}", json.dumps(tiny.perfect([1])).encode())
    body = raw.getvalue()
    one = tarfile.TarInfo("x")._create_pax_generic_header({"comment": "c"}, tarfile.XGLTYPE, "utf-8")
    tgz = tmp_path / "chain.tar"
    tgz.write_bytes(one * 50 + body)
    with pytest.raises(UsageError, match="extended headers in a row"):
        score(tgz, split="tst1", data=tiny.root)


def test_sparse_member_refused(tmp_path, tiny, private_tmp):
    info = tarfile.TarInfo(f"tst1/{tiny.answers_name(1)}")
    info.type = tarfile.GNUTYPE_SPARSE
    info.size = 0
    tgz = tmp_path / "sparse.tar"
    tgz.write_bytes(info.tobuf(tarfile.GNU_FORMAT) + bytes(1024))
    with pytest.raises(UsageError, match="sparse"):
        score(tgz, split="tst1", data=tiny.root)


def test_garbage_after_the_end_marker_is_damage(tmp_path, tiny, private_tmp):
    import gzip

    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tf:
        _member(tf, f"tst1/{tiny.answers_name(1)}", json.dumps(tiny.perfect([1])).encode())
    tgz = tmp_path / "tail.tgz"
    tgz.write_bytes(gzip.compress(raw.getvalue() + b"\x01" * 600))
    with pytest.raises(UsageError, match="corrupt archive"):
        score(tgz, split="tst1", data=tiny.root)


def test_duplicate_member_refused(tmp_path, tiny, private_tmp):
    tgz = _tgz(tmp_path / "dup.tgz", tiny, lambda tf: _member(tf, f"tst1/{tiny.answers_name(1)}", b"[]"))
    with pytest.raises(UsageError, match="appears twice"):
        score(tgz, split="tst1", data=tiny.root)


def test_macos_debris_is_ignored_in_archives_and_folders(tmp_path, tiny, private_tmp):
    def debris(tf):
        _member(tf, f"tst1/._{tiny.answers_name(1)}", b"\x00\x05\x16\x07 AppleDouble")
        _member(tf, f"__MACOSX/tst1/._{tiny.answers_name(2)}", b"\x00\x05\x16\x07")

    tgz = _tgz(tmp_path / "mac.tgz", tiny, debris)
    rep = score(tgz, split="tst1", data=tiny.root)
    assert rep.valid and rep.value("p@1") == 1.0 and not rep.problems
    d = tmp_path / "dir"
    for t in tiny.tasks:
        write_json(d / "tst1" / tiny.answers_name(t), tiny.perfect([t]))
    (d / "tst1" / f"._{tiny.answers_name(1)}").write_bytes(b"\x00\x05\x16\x07")
    (d / "__MACOSX").mkdir()
    (d / ".DS_Store").write_bytes(b"\x00")
    rep = score(d, split="tst1", data=tiny.root)
    assert rep.valid and not rep.problems


# ---- special files and links (items 3, 5) ----------------------------------------------------------------------
@pytest.mark.parametrize("name", ["sub.tgz", "sub.json"])
def test_fifo_submission_refused_without_blocking(tmp_path, tiny, name):
    fifo = tmp_path / name
    os.mkfifo(fifo)
    r = _cli(tiny, "score", fifo)  # would block forever reading a FIFO nobody writes
    _one_line_error(r, 2, "FIFO")


def test_device_named_tgz_refused(tmp_path, tiny):
    link = tmp_path / "zero.tgz"
    link.symlink_to("/dev/zero")
    r = _cli(tiny, "score", link)
    _one_line_error(r, 2, "character device")


def test_symlink_to_answer_key_in_directory_refused(tmp_path, tiny):
    d = tmp_path / "dir" / "tst1"
    d.mkdir(parents=True)
    for t in tiny.tasks:
        (d / tiny.answers_name(t)).symlink_to(tiny.keys_dir / tiny.answers_name(t))
    with pytest.raises(UsageError, match="symbolic link"):
        score(tmp_path / "dir", split="tst1", data=tiny.root)
    (tmp_path / "dir2").mkdir()
    (tmp_path / "dir2" / "tst1").symlink_to(tiny.keys_dir)  # a linked split folder
    with pytest.raises(UsageError, match="symbolic link"):
        score(tmp_path / "dir2", split="tst1", data=tiny.root)


def test_oversize_result_file_refused_before_reading(tmp_path, tiny, monkeypatch):
    d = tmp_path / "dir"
    for t in tiny.tasks:
        write_json(d / "tst1" / tiny.answers_name(t), tiny.perfect([t]))
    monkeypatch.setattr(read, "JSON_LIMIT", 100)
    with pytest.raises(UsageError, match="larger than the limit of 100 bytes"):
        submission.open_submission(d)


def test_stdin_submission(tmp_path, tiny, private_tmp):
    good = json.dumps(tiny.perfect()).encode()
    cmd = [sys.executable, "-c", "from dialeval.cli import run; run()", "score", "-", "--challenge", str(tiny.root),
           "--split", "tst1", "--json"]
    env = cli_env() | {"TMPDIR": str(private_tmp), "PYTHONPATH": str(REPO)}
    r = subprocess.run(cmd, input=good, capture_output=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["valid"] and rep["submission"]["path"] == "-"
    assert list(private_tmp.iterdir()) == []
    tgz = _tgz(tmp_path / "sub.tgz", tiny).read_bytes()  # an archive, recognised by its first bytes
    r = subprocess.run(cmd, input=tgz, capture_output=True, env=env, timeout=120)
    assert r.returncode == 0 and json.loads(r.stdout)["valid"], r.stderr
    assert str(private_tmp) not in r.stdout.decode() + r.stderr.decode()
    assert list(private_tmp.iterdir()) == []


# ---- environment (item 12) ---------------------------------------------------------------------------------
@pytest.mark.parametrize("var,value,kind", [("DIALEVAL_MAX_JSON_BYTES", "abc", "json"),
                                            ("DIALEVAL_MAX_ARCHIVE_BYTES", "1e9", "tgz")])
def test_bad_size_variables_are_usage_errors(tmp_path, tiny, var, value, kind):
    sub = _tgz(tmp_path / "sub.tgz", tiny) if kind == "tgz" else write_json(tmp_path / "sub.json", tiny.perfect())
    r = _cli(tiny, "score", sub, env={var: value})
    _one_line_error(r, 2, var)


def test_debug_keeps_the_exit_code(tmp_path, tiny):
    r = run_cli("score", tmp_path / "missing.json", "--challenge", tiny.root, "--split", "tst1",
                env={"DIALEVAL_DEBUG": "1"})
    assert r.returncode == 2 and "Traceback" in r.stderr
    mod = tmp_path / "boommod.py"
    mod.write_text("import click\n@click.command()\ndef boom():\n    raise RuntimeError('bug')\n")
    code = (f"import sys; sys.path.insert(0, {str(tmp_path)!r}); import dialeval.cli as c; "
            "c.COMMANDS['boom'] = ('boommod', 'boom', 'x'); c.run()")
    for debug, traceback in (("", False), ("1", True)):
        env = cli_env() | {"PYTHONPATH": str(REPO), "DIALEVAL_DEBUG": debug}
        r = subprocess.run([sys.executable, "-c", code, "boom"], capture_output=True, text=True, env=env, timeout=60)
        assert r.returncode == 3 and ("Traceback" in r.stderr) == traceback, r.stderr
        assert "internal error: RuntimeError: bug" in r.stderr


def test_task_option_bounds():
    from dialeval.commands.score import _tasks

    assert _tasks(("1-3,5",)) == [1, 2, 3, 5]
    for bad in ("²", "1-20000000", "5-3", "0"):
        with pytest.raises(UsageError, match="--task"):
            _tasks((bad,))
    # not a number: a group name, passed on for the benchmark to judge (Ubuntu's groups are its files)
    assert _tasks(("1e3",)) == ["1e3"] and _tasks(("test.csv",)) == ["test.csv"]


def test_task_option_bounds_cli(tmp_path, tiny):
    sub = write_json(tmp_path / "sub.json", tiny.perfect())
    _one_line_error(_cli(tiny, "score", sub, "--task", "²"), 2, "--task")
    _one_line_error(_cli(tiny, "score", sub, "--task", "1-20000000"), 2, "--task")
    _one_line_error(_cli(tiny, "score", sub, "--task", "1e3"), 2, "--task")  # DSTC6 refuses a task name


# ---- rank bounds (item 1) -------------------------------------------------------------------------------------
def test_huge_rank_of_unknown_dialog_is_one_problem(tmp_path, tiny):
    sub = [{"dialog_id": "no-such-dialog", "lst_candidate_id": [{"candidate_id": "c", "rank": 10**12}]}]
    rep = score(write_json(tmp_path / "sub.json", sub), split="tst1", data=tiny.root)
    codes = sorted(p.code for p in rep.errors)
    assert codes == ["rank-out-of-range", "unknown-dialog"]
    assert "1..10" in next(p.message for p in rep.errors if p.code == "rank-out-of-range")


def test_rank_gaps_are_ranges(tmp_path, tiny):
    data = tiny.perfect()
    item = data[2]  # ten candidates
    item["lst_candidate_id"] = [dict(item["lst_candidate_id"][0], rank=1), dict(item["lst_candidate_id"][1], rank=3),
                                dict(item["lst_candidate_id"][2], rank=9)]
    rep = score(write_json(tmp_path / "sub.json", data), split="tst1", data=tiny.root)
    (gap,) = [p for p in rep.errors if p.code == "rank-gap"]
    assert "ranks 2, 4-8 are missing" in gap.message


# ---- outputs (items 4, 7) -----------------------------------------------------------------------------------------
def test_out_equal_to_submission_refused(tmp_path, tiny):
    sub = write_json(tmp_path / "sub.json", tiny.perfect())
    before = sub.read_bytes()
    for opt in ("--out", "--per-item"):
        r = run_cli("score", sub, "--challenge", tiny.root, "--split", "tst1", opt, sub)
        _one_line_error(r, 2, "the submission")
        assert sub.read_bytes() == before
    link = tmp_path / "link.json"
    link.symlink_to(sub)
    _one_line_error(run_cli("score", sub, "--challenge", tiny.root, "--split", "tst1", "--out", link), 2)
    assert sub.read_bytes() == before
    key = tiny.keys_dir / tiny.answers_name(1)
    key_before = key.read_bytes()
    _one_line_error(run_cli("score", sub, "--challenge", tiny.root, "--split", "tst1", "--out", key), 2, "challenge")
    assert key.read_bytes() == key_before


def test_out_dash_and_dev_stdout_write_to_stdout(tmp_path, tiny):
    sub = write_json(tmp_path / "sub.json", tiny.perfect())
    link = tmp_path / "stdout-link"  # like /dev/stdout (a link to the process's stdout), but ours to lose
    link.symlink_to("/dev/stdout")
    for target in ("-", link):
        r = run_cli("score", sub, "--challenge", tiny.root, "--split", "tst1", "--out", target, "--json")
        assert r.returncode == 0, r.stderr
        report, _ = json.JSONDecoder().raw_decode(r.stdout)  # (a link is a file name: the table follows)
        assert report["valid"]
    assert link.is_symlink() and os.readlink(link) == "/dev/stdout"  # written through, not replaced


def test_out_to_a_fifo_writes_through(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got = []

    def reader():
        with open(fifo, "rb") as f:
            got.append(f.read())

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    write.atomic_write_text(fifo, "hello")
    t.join(10)
    assert got == [b"hello"]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)  # still a FIFO, not replaced by a regular file


def test_missing_output_folder_is_a_usage_error(tmp_path, tiny):
    sub = write_json(tmp_path / "sub.json", tiny.perfect())
    r = run_cli("score", sub, "--challenge", tiny.root, "--split", "tst1", "--out", tmp_path / "nope" / "r.json")
    _one_line_error(r, 2, "does not exist")
    assert not (tmp_path / "nope").exists()


def test_csv_and_json_together_refused(tmp_path, tiny):
    sub = write_json(tmp_path / "sub.json", tiny.perfect())
    _one_line_error(_cli(tiny, "score", sub, "--csv", "--json"), 2, "--csv")


def test_csv_on_invalid_prints_problems_to_stderr(tmp_path, tiny):
    data = tiny.perfect()
    data[1]["lst_candidate_id"][3]["rank"] = 1
    r = _cli(tiny, "score", write_json(tmp_path / "sub.json", data), "--csv")
    assert r.returncode == 1
    assert "duplicate-rank" in r.stderr and "duplicate-rank" not in r.stdout


def test_temp_files_live_in_a_private_folder_and_stale_ones_go(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    private = out / f".dialeval-tmp-{os.getuid()}"
    private.mkdir(mode=0o700)
    stale, fresh = private / ".r.json.old.tmp", private / ".r.json.new.tmp"
    legacy = out / ".r.json.abc123.tmp"  # what a killed run of an earlier version left
    for f in (stale, fresh, legacy):
        f.write_text("partial")
    for f in (stale, legacy):
        os.utime(f, (time.time() - 2 * DAY,) * 2)
    write.atomic_write_text(out / "r.json", "{}")
    assert not stale.exists() and not legacy.exists() and fresh.exists()
    fresh.unlink()
    write.atomic_write_text(out / "r.json", "{}")
    assert sorted(p.name for p in out.iterdir()) == ["r.json"]  # the private folder is removed when empty


def test_stale_archive_folders_are_swept(tmp_path, tiny, private_tmp):
    root = private_tmp / f"dialeval-{os.getuid()}"
    root.mkdir(mode=0o700)
    old = root / "sub-killed"
    old.mkdir()
    legacy = private_tmp / "dialeval-sub-killed"
    legacy.mkdir()
    for d in (old, legacy):
        os.utime(d, (time.time() - 2 * DAY,) * 2)
    assert score(_tgz(tmp_path / "sub.tgz", tiny), split="tst1", data=tiny.root).valid
    assert list(private_tmp.iterdir()) == []


# ---- unreadable JSON is described (item 9, reading side) -------------------------------------------------------
@pytest.mark.parametrize("raw,code,words", [
    (b"", "empty-file", "empty"),
    (b"\xef\xbb\xbf[]", "bad-encoding", "UTF-8 BOM"),
    ("[]".encode("utf-16"), "bad-encoding", "UTF-16"),
    (b"\x1f\x8b\x08\x00rest", "wrong-file-type", "gzip-compressed"),
    (b"PK\x03\x04rest", "wrong-file-type", "ZIP archive"),
    (b'{"dialog_id": "a"}\n{"dialog_id": "b"}\n', "json-lines", "JSON Lines"),
    (b'[{"dialog_id": "a", "lst_candidate_id": [', "truncated-json", "truncated"),
    (b'[{"dialog_id": "x",\n  "lst_candidate_id" []}]', "not-json", "line 2 column 22"),
])
def test_unreadable_json_is_described(raw, code, words):
    with pytest.raises(UnreadableJSON) as e:
        jsonio.parse_json_bytes(raw, "run.json")
    assert e.value.code == code and words in str(e.value)
    assert "Expecting" not in str(e.value) and "\n" not in str(e.value)


# ---- terminal safety (item 8) --------------------------------------------------------------------------------------
def test_safe_escapes_controls():
    assert safe("a\x1b]0;title\x07b\rc\nd\u202ee\udc80") == "a\\x1b]0;title\\x07b\\rc\\nd\\u202ee\\udc80"
    assert safe("plain ids: 5b9a-é") == "plain ids: 5b9a-é"


def test_control_characters_never_reach_the_terminal(tmp_path, tiny):
    data = tiny.perfect()
    data[0]["dialog_id"] = "evil\x1b]0;pwned\x07\x1b[2J\r"
    sub = write_json(tmp_path / "sub.json", data)
    r = _cli(tiny, "score", sub)
    assert r.returncode == 1
    assert "\x1b" not in r.stderr + r.stdout and "\r" not in r.stderr + r.stdout
    assert "evil\\x1b]0;pwned" in r.stderr
    r = run_cli("score", tmp_path / "x\x1b[31m.json", "--challenge", tiny.root, "--split", "tst1")
    assert "\x1b" not in _one_line_error(r, 2, "x\\x1b[31m.json")


# ---- the index cache (item 6) ------------------------------------------------------------------------------------
@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("DIALEVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("DIALEVAL_NO_CACHE", raising=False)
    return tmp_path / "cache" / "index"


def test_cache_edit_keeping_size_and_mtime_is_not_served_stale(tiny, cache_dir):
    path = tiny.split_dir / tiny.file_name(1)
    first = load_task_index(1, path)
    st = path.stat()
    text = path.read_text()
    old_id = first.candidate_ids[0][0]
    new_id = "f" * len(old_id)
    path.write_text(text.replace(old_id, new_id))  # same size
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # same mtime
    assert path.stat().st_size == st.st_size
    assert load_task_index(1, path).candidate_ids[0][0] == new_id


def test_cache_corrupt_or_planted_entries_fall_back_to_parsing(tiny, cache_dir):
    import msgspec

    path = tiny.split_dir / tiny.file_name(1)
    truth = load_task_index(1, path)
    (entry,) = cache_dir.glob("*.idx")
    raw = entry.read_bytes()
    entry.write_bytes(raw[: len(raw) // 2])  # truncated
    assert cache.load_index(path) is None and load_task_index(1, path).candidate_ids == truth.candidate_ids
    # planted: a well-formed entry with an extra candidate, without the cache's key
    digest = cache.file_content_digest(path)
    cands = [list(c) for c in truth.candidate_ids]
    cands[0].append("fake-candidate")
    body = msgspec.msgpack.encode((cache.INDEX_FORMAT, digest, (truth.dialog_ids, cands, truth.conversation_ids)))
    entry.write_bytes(cache._MAGIC + bytes(32) + body)
    assert cache.load_index(path) is None
    assert "fake-candidate" not in load_task_index(1, path).candidate_ids[0]


def test_cache_never_follows_links(tiny, cache_dir, tmp_path):
    path = tiny.split_dir / tiny.file_name(1)
    load_task_index(1, path)
    (entry,) = cache_dir.glob("*.idx")
    elsewhere = tmp_path / "elsewhere.idx"
    elsewhere.write_bytes(entry.read_bytes())  # a valid entry, reached only through a link
    entry.unlink()
    entry.symlink_to(elsewhere)
    assert cache.load_index(path) is None
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    entry.unlink()
    entry.symlink_to(victim)
    load_task_index(1, path)  # stores the entry again: the link is replaced, the victim untouched
    assert victim.read_text() == "keep me" and not entry.is_symlink()


# ---- wrong split, empty submissions (item 11) --------------------------------------------------------------------
def test_folder_for_another_split_is_a_submission_problem(tmp_path, tiny):
    d = tmp_path / "dir"
    for t in tiny.tasks:
        write_json(d / "tst2" / tiny.answers_name(t), tiny.perfect([t]))
    rep = score(d, split="tst1", data=tiny.root)
    assert not rep.valid and [(p.code, p.message.split(" (")[0]) for p in rep.errors] == [
        ("no-result-file", "the folder has tst2/ not tst1/")]
    assert not [p for p in rep.warnings if p.code == "missing-dialog"]
    r = _cli(tiny, "score", d)
    assert r.returncode == 1 and "the folder has tst2/ not tst1/" in r.stderr


def test_empty_list_is_a_warning_not_silence(tmp_path, tiny):
    rep = score(write_json(tmp_path / "sub.json", []), split="tst1", data=tiny.root)
    assert rep.valid and [p.code for p in rep.warnings] == ["nothing-ranked"]
    assert rep.value("p@1") == 0.0


@pytest.mark.parametrize("bad", ["../x", "/etc", "tst9"])
def test_split_names_are_validated(tmp_path, tiny, bad):
    sub = write_json(tmp_path / "sub.json", tiny.perfect())
    r = run_cli("score", sub, "--challenge", tiny.root, "--split", bad)
    _one_line_error(r, 2, "is not a split of the challenge")


def test_broken_file_is_a_problem_in_json_and_csv_reports(tmp_path, tiny):
    sub = write_json(tmp_path / "run.json", b"\x1f\x8b\x08\x00" + bytes(30))
    r = _cli(tiny, "score", sub, "--json")
    assert r.returncode == 1
    (p,) = json.loads(r.stdout)["problems"]
    assert p["code"] == "wrong-file-type" and p["file"] == "run.json" and "gzip" in p["message"]
    r = _cli(tiny, "score", sub, "--csv")
    assert r.returncode == 1 and "wrong-file-type" in r.stderr


# ---- wording, help and progress (items 13, 14) ----------------------------------------------------------------------
def test_convert_refuses_to_overwrite_without_force(tmp_path, tiny):
    dataset = tiny.split_dir / tiny.file_name(1)
    key = tiny.keys_dir / tiny.answers_name(1)
    out = tmp_path / "conv.txt"
    out.write_text("precious")
    args = ("convert", "dstc6-to-babi", "--dataset", dataset, "--answers", key, "--out", out)
    _one_line_error(run_cli(*args), 2, "--force")
    assert out.read_text() == "precious"
    r = run_cli(*args, "--force")
    assert r.returncode == 0, r.stderr
    assert out.read_text() != "precious"
    _one_line_error(run_cli("convert", "dstc6-to-babi", "--dataset", dataset, "--answers", key, "--out", dataset,
                            "--force"), 2, "an input")


def test_stats_names_a_missing_split(tiny):
    _one_line_error(run_cli("stats", tiny.root, "--split", "tst2"), 2, "has no such split folder (it has: tst1)")


def test_progress_is_quiet_off_a_terminal(tmp_path):
    r = run_cli("simulate", "--out", tmp_path / "sim", "--train", "0", "--test", "3", "--splits", "tst1", "--tasks", "1")
    assert r.returncode == 0, r.stderr
    assert "\x1b" not in r.stderr and r.stderr == ""


@pytest.mark.parametrize("args,option,words", [(("demo", "--help"), "--seed", "Seed of the baseline"),
                                               (("baseline", "reference", "--help"), "--models", "baselines")])
def test_options_have_help(args, option, words):
    r = run_cli(*args)
    text = " ".join(r.stdout.split())
    assert option in text and words in text.split(option, 1)[1].split("--", 1)[0], r.stdout


def test_large_broken_files_are_diagnosed_from_a_syntax_scan(monkeypatch):
    """Past SYNTAX_FIRST_BYTES the syntax is checked before objects are built; the diagnosis is the same."""
    line = b'[' + b'{"dialog_id": "d\xc3\xa9", "lst_candidate_id": []}, ' * 2000
    monkeypatch.setattr(jsonio, "SYNTAX_FIRST_BYTES", 10)
    with pytest.raises(UnreadableJSON) as e:
        jsonio.parse_json_bytes(line, "big.json")
    assert e.value.code == "truncated-json"
    assert (e.value.line, e.value.column) == (1, len(line.rstrip().decode()) + 1)
    assert jsonio.parse_json_bytes(b"[NaN]", "x.json")[0] != 0  # NaN still read as Python reads it
