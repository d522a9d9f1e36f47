"""Hostile inputs on the DSTC6 path, run as a user would (``dialeval score``), each fully judged by
:mod:`hostile`: exit code, one-line messages, no Python wording or private path, no gold id in any output,
memory and time bounded.

* **One content, one answer.** The same submission as a folder, a ``.tgz`` and a ``.tgz`` on standard input
  gets the same exit code and the same problems (``--json``), including the empty and the misnamed cases.
* **Archives** that are garbage, empty files, or hold links, devices, FIFOs, absolute or ``..`` paths.
* **Special files** (FIFOs, ``/dev/zero``) as the submission, a member of a submission folder, a test file
  or an answer key: refused in under a second.
* **Outputs onto inputs**: ``--out`` / ``--per-item`` onto the submission, a test file, an answer key (also
  through a link, and in a data folder of over 100,000 files), the registry; refused before any work.
* **Huge JSON**, over the size limit and under it; the truncation note (a problem without a code);
  ``--task`` given as a benchmark's string group.
"""

from __future__ import annotations

import io
import json
import os
import tarfile
from pathlib import Path

import pytest
from conftest import make_challenge, write_json
from hostile import Hostile, fifo

CH_ARGS = ("--split", "tst1")


@pytest.fixture(autouse=True)
def _cwd(tmp_path, monkeypatch):
    """Every case runs in its test's folder and names its files relatively: a message that echoes a path then
    shows no private temporary folder (the harness refuses ``/tmp/pytest-...`` on stderr)."""
    monkeypatch.chdir(tmp_path)
    original = Hostile.check

    def check(self, cwd=None):
        return original(self, cwd or tmp_path)

    monkeypatch.setattr(Hostile, "check", check)


def R(p) -> str:
    """``p`` relative to the current (the test's) folder."""
    return os.path.relpath(p)


@pytest.fixture
def world(tmp_path):
    """A tiny challenge in the test's folder and the gold ids (the secrets)."""
    ch = make_challenge(tmp_path / "ch")
    secrets = sorted(set(ch.gold.values()))
    return tmp_path, ch, secrets


def _score(ch, sub, *more) -> list:
    return ["score", R(sub) if str(sub) not in ("-", "/dev/zero") else str(sub), "--challenge", R(ch.root),
            *CH_ARGS, *more]


def _tgz(path: Path, files: dict[str, bytes], specials=()) -> Path:
    with tarfile.open(path, "w:gz") as tf:
        for name, data in files.items():
            ti = tarfile.TarInfo(name)
            ti.size = len(data)
            tf.addfile(ti, io.BytesIO(data))
        for name, kind, link in specials:
            ti = tarfile.TarInfo(name)
            ti.type = kind
            ti.linkname = link
            if kind in (tarfile.CHRTYPE, tarfile.BLKTYPE):
                ti.devmajor, ti.devminor = 1, 5  # /dev/zero
            tf.addfile(ti)
    return path


def _folder(path: Path, files: dict[str, bytes]) -> Path:
    path.mkdir(parents=True)
    for name, data in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_bytes(data)
    return path


# ---- one content, one answer: folder, .tgz and standard input -------------------------------------------------
def _contents(ch) -> dict[str, tuple[dict[str, bytes], int, str | None]]:
    perfect = {f"tst1/{ch.answers_name(t)}": json.dumps(ch.perfect([t])).encode() for t in ch.tasks}
    return {
        "only-unknown-file": ({"tst1/foo.json": b"[]"}, 1, "unknown-file"),
        "empty": ({}, 1, "no-result-file"),
        "other-split-folder": ({"tst9/" + ch.answers_name(1): b"[]"}, 1, "no-result-file"),
        "wrapped-in-a-folder": ({f"submission/{k}": v for k, v in perfect.items()}, 0, None),
        "one-task-of-three": ({f"tst1/{ch.answers_name(1)}": perfect[f"tst1/{ch.answers_name(1)}"]}, 0, None),
        "not-json-member": ({f"tst1/{ch.answers_name(1)}": b"\xef\xbb\xbf[]"}, 1, "bad-encoding"),
        "hidden-and-debris-only": ({"__MACOSX/tst1/._x.answers.json": b"junk", ".hidden/tst1/a.json": b"[]"}, 1,
                                   "no-result-file"),
    }


@pytest.mark.parametrize("case", ["only-unknown-file", "empty", "other-split-folder", "wrapped-in-a-folder",
                                  "one-task-of-three", "not-json-member", "hidden-and-debris-only"])
def test_folder_tgz_and_stdin_agree(case, world, tmp_path):
    root, ch, secrets = world
    files, code, problem = _contents(ch)[case]
    folder = _folder(tmp_path / "sub", files)
    tgz = _tgz(tmp_path / "sub.tgz", files)
    split = () if case in ("empty", "other-split-folder") else CH_ARGS  # the default split choice too
    outs = []
    for form, args, stdin in (("folder", [R(folder)], None), ("tgz", [R(tgz)], None),
                              ("stdin", ["-"], tgz.read_bytes())):
        cmd = ["score", *args, "--challenge", R(ch.root), *split, "--json"]
        out = Hostile(f"{case} as {form}", cmd, code, inputs=[folder], secrets=secrets, stdin=stdin,
                      max_lines=None).check()
        report = json.loads(out.stdout)
        outs.append((report["valid"], report["counts"], report["problems"], report["splits"]))
        if problem is not None:
            assert problem in {p["code"] for p in report["problems"]}, out.stdout[:2000]
    assert outs[0] == outs[1] == outs[2], outs


def test_empty_folder_is_the_submissions_fault_on_screen(world, tmp_path):
    root, ch, secrets = world
    (tmp_path / "empty").mkdir()
    Hostile("empty folder", _score(ch, tmp_path / "empty"), 1, secrets=secrets, max_lines=None,
            message=r"error \[no-result-file\] x1").check()


# ---- archives ------------------------------------------------------------------------------------------------------
def _archive_cases(ch, d: Path):
    good = {f"tst1/{ch.answers_name(1)}": json.dumps(ch.perfect([1])).encode()}
    d.mkdir(exist_ok=True)
    (d / "zero.tgz").write_bytes(b"")
    (d / "garbage.tgz").write_bytes(b"\x1f\x8b" + os.urandom(4096))
    (d / "not-gzip.tgz").write_bytes(b"definitely not an archive\n" * 100)
    member = f"tst1/{ch.answers_name(2)}"
    return [
        ("zero-byte .tgz", d / "zero.tgz", 2, "archive"),
        ("garbage .tgz", d / "garbage.tgz", 2, "archive"),
        ("text named .tgz", d / "not-gzip.tgz", 2, "archive"),
        ("symlink member", _tgz(d / "sym.tgz", good, [(member, tarfile.SYMTYPE, "/etc/passwd")]), 2, "link"),
        ("hard-link member", _tgz(d / "hard.tgz", good, [(member, tarfile.LNKTYPE, f"tst1/{ch.answers_name(1)}")]),
         2, "link"),
        ("character-device member", _tgz(d / "chr.tgz", good, [(member, tarfile.CHRTYPE, "")]), 2, "device"),
        ("FIFO member", _tgz(d / "fifo.tgz", good, [(member, tarfile.FIFOTYPE, "")]), 2, "FIFO"),
        ("absolute path", _tgz(d / "abs.tgz", {"/tmp/tst1/x.answers.json": b"[]", **good}), 2, "absolute"),
        ("dot-dot path", _tgz(d / "dots.tgz", {"tst1/../../x.answers.json": b"[]", **good}), 2, "outside"),
    ]


def test_hostile_archives(world, tmp_path):
    root, ch, secrets = world
    for name, path, code, words in _archive_cases(ch, tmp_path / "arch"):
        Hostile(name, _score(ch, path), code, inputs=[path], secrets=secrets, message=words, seconds=10).check()
        if path.stat().st_size == 0:  # nothing on standard input is an empty result file, not an archive
            Hostile(f"{name} on stdin", _score(ch, "-"), 1, secrets=secrets, stdin=b"", message="empty-file",
                    max_lines=None, seconds=10).check()
        elif name != "text named .tgz":  # text on standard input is read as a result file (not JSON: exit 1)
            Hostile(f"{name} on stdin", _score(ch, "-"), code, secrets=secrets, stdin=path.read_bytes(),
                    message=words, seconds=10).check()


# ---- special files: refused at once -------------------------------------------------------------------------
def test_fifos_and_devices_are_refused_at_once(world, tmp_path):
    root, ch, secrets = world
    fast = {"seconds": 1.0, "rss": 100 * 1024 * 1024 + 60 * 1024 * 1024}  # the interpreter's own ~60 MB + 100 MB
    Hostile("FIFO as the submission", _score(ch, fifo(tmp_path / "sub.json")), 2, secrets=secrets,
            message="FIFO", **fast).check()
    Hostile("/dev/zero as the submission", _score(ch, "/dev/zero"), 2, secrets=secrets,
            message="character device", **fast).check()
    folder = tmp_path / "folder"
    fifo(folder / "tst1" / ch.answers_name(1))
    Hostile("FIFO in a submission folder", _score(ch, folder), 2, secrets=secrets, message="FIFO", **fast).check()
    sub = write_json(tmp_path / "run.json", ch.perfect())
    for what, name in (("test file", ch.file_name(2)), ("answer key", ch.answers_name(2))):
        data = make_challenge(tmp_path / f"ch-{what.replace(' ', '-')}")
        (data.split_dir / name).unlink()
        fifo(data.split_dir / name)
        Hostile(f"FIFO as a {what}", ["score", R(sub), "--challenge", R(data.root), *CH_ARGS], 2,
                secrets=secrets + sorted(data.gold.values()), message="FIFO", **fast).check()
        zero = make_challenge(tmp_path / f"zero-{what.replace(' ', '-')}")
        (zero.split_dir / name).unlink()
        (zero.split_dir / name).symlink_to("/dev/zero")
        Hostile(f"/dev/zero as a {what}", ["score", R(sub), "--challenge", R(zero.root), *CH_ARGS], 2,
                secrets=secrets + sorted(zero.gold.values()), message="character device", **fast).check()
    keys = make_challenge(tmp_path / "ch-keys", keys_dir=tmp_path / "keys")
    (tmp_path / "keys" / keys.answers_name(3)).unlink()
    fifo(tmp_path / "keys" / keys.answers_name(3))
    Hostile("FIFO as an answer key under --keys",
            ["score", R(sub), "--challenge", R(keys.root), "--keys", R(tmp_path / "keys"), *CH_ARGS], 2,
            secrets=secrets + sorted(keys.gold.values()), message="FIFO", **fast).check()


# ---- outputs onto inputs ----------------------------------------------------------------------------------------
def test_outputs_onto_inputs_are_refused_before_any_work(world, tmp_path):
    root, ch, secrets = world
    data = make_challenge(tmp_path / "ch")
    gold = sorted(data.gold.values())
    sub = write_json(tmp_path / "run.json", data.perfect())
    test_file = data.split_dir / data.file_name(1)
    key = data.split_dir / data.answers_name(2)
    (tmp_path / "link.json").symlink_to(test_file)
    base = ["score", R(sub), "--challenge", R(data.root), *CH_ARGS]
    cases = [
        ("--out onto the submission", [*base, "--out", R(sub)], "the submission"),
        ("--out onto a test file", [*base, "--out", R(test_file)], "challenge"),
        ("--out onto a test file through a link", [*base, "--out", R(tmp_path / "link.json")], "challenge"),
        ("--per-item onto an answer key", [*base, "--per-item", R(key)], "challenge"),
        ("--csv --out onto an answer key", [*base, "--csv", "--out", R(key)], "challenge"),
        ("validate --out onto a test file", ["validate", *base[1:], "--out", R(test_file)], "challenge"),
    ]
    for name, args, words in cases:
        Hostile(name, args, 2, secrets=gold, message=words, unchanged=[sub, test_file, key], seconds=5).check()


def test_out_onto_a_file_of_a_data_folder_with_over_100000_files(tmp_path):
    """The case that replaced Ubuntu's test.csv: a data folder too large to list. Protection is by the
    folder's identity, so the file count does not matter (the old walk stopped after 100,000 files; here
    they are all listed before the split's folder)."""
    data = make_challenge(tmp_path / "ch")
    junk = data.root
    for k in range(2):  # hard links: five times faster to make than files (and 65,000 links per file at most)
        os.close(os.open(junk / f"src{k}", os.O_CREAT | os.O_WRONLY, 0o644))
    for i in range(100_050):
        os.link(junk / f"src{i % 2}", junk / f"n{i:06d}.txt")
    sub = write_json(tmp_path / "run.json", data.perfect())
    test_file = data.split_dir / data.file_name(3)
    Hostile("--out onto a test file among 100,050 other files",
            ["score", R(sub), "--challenge", R(data.root), *CH_ARGS, "--json", "--out", R(test_file)], 2,
            secrets=sorted(data.gold.values()), message="challenge", unchanged=[test_file], seconds=10).check()


def test_protection_never_lists_a_folder(tmp_path, monkeypatch):
    """In-process: protecting a folder and checking a target inside it never walks the folder."""
    from dialeval.core.errors import UsageError
    from dialeval.files import write

    d = tmp_path / "data" / "deep" / "er"
    d.mkdir(parents=True)
    target = d / "test.csv"
    target.write_text("x")
    for i in range(2000):
        (tmp_path / "data" / f"f{i}").write_text("")

    def no_walk(*a, **k):
        raise AssertionError("a protected folder was listed")

    monkeypatch.setattr(os, "walk", no_walk)
    monkeypatch.setattr(os, "scandir", no_walk)
    monkeypatch.setattr(Path, "iterdir", no_walk)
    try:
        write.protect(tmp_path / "data", "a file of the data")
        with pytest.raises(UsageError, match="a file of the data"):
            write.check_output(target)
        with pytest.raises(UsageError, match="a file of the data"):
            write.atomic_write_text(target, "report")
        write.check_output(tmp_path / "elsewhere.json")  # outside: fine
    finally:
        write.unprotect_all()
    assert target.read_text() == "x"


def test_organizer_outputs_onto_the_registry(tmp_path):
    from dialeval.leaderboard.registry import Registry

    reg = tmp_path / "reg"
    with Registry(reg):
        pass
    db = reg / "registry.sqlite"
    Hostile("registry export onto the database", ["registry", "export", "--registry", R(reg), "--out", R(db)],
            2, message="registry", unchanged=[db], seconds=10).check()
    Hostile("leaderboard build into the registry's folder",
            ["leaderboard", "build", "--registry", R(reg), "--out", R(reg)], 2, message="registry",
            unchanged=[db], seconds=10).check()
    Hostile("leaderboard build over a folder above the registry",
            ["leaderboard", "build", "--registry", R(reg), "--out", "."], 2, message="registry",
            unchanged=[db], seconds=10).check()
    other = tmp_path / "mine"
    other.mkdir()
    (other / "notes.txt").write_text("keep me")
    Hostile("leaderboard build over a folder that is not a site",
            ["leaderboard", "build", "--registry", R(reg), "--out", R(other)], 2, message="not an earlier site",
            unchanged=[db, other / "notes.txt"], seconds=10).check()


# ---- huge JSON ---------------------------------------------------------------------------------------------------
def test_huge_json(world, tmp_path):
    root, ch, secrets = world
    big = tmp_path / "big.json"
    item = json.dumps({"dialog_id": "not-a-dialog", "lst_candidate_id": [{"candidate_id": "c", "rank": 1}]})
    with open(big, "w") as f:  # 21.5 MB: 250,000 items of a dialog the split does not have
        f.write("[" + ",".join([item] * 250_000) + "]")
    # An invalid file is explained from its generic JSON objects (about 7x its text for items this small);
    # its 250,000 problems are capped per code (twenty each, then one code-less note), so neither the list
    # nor the --json report grows with the file: 206 MB either way (before the cap: 274 MB, 488 MB with --json).
    for more in ((), ("--json",)):
        out = Hostile(f"21.5 MB of unknown dialogs {' '.join(more)}".strip(), _score(ch, big, *more), 1,
                      inputs=[big], secrets=secrets, max_lines=None, message=r"unknown-dialog", seconds=30).check()
        if more:
            report = json.loads(out.stdout)
            assert [p["code"] for p in report["problems"]].count("unknown-dialog") == 20
            assert report["not_listed"] == ["... 249,980 more problems not listed (unknown-dialog 249,980)"]
    Hostile("over DIALEVAL_MAX_JSON_BYTES", _score(ch, big), 2, inputs=[big], secrets=secrets,
            env={"DIALEVAL_MAX_JSON_BYTES": "1000000"}, message="larger than the limit", seconds=5).check()
    trunc = tmp_path / "trunc.json"
    trunc.write_bytes(big.read_bytes()[: 20_000_000])
    Hostile("20 MB truncated", _score(ch, trunc), 1, inputs=[trunc], secrets=secrets, max_lines=None,
            message="truncated-json", seconds=15).check()
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    Hostile("nested 100,000 deep", _score(ch, deep), 1, inputs=[deep], secrets=secrets, max_lines=None,
            message="json-too-deep", seconds=10).check()



def test_huge_json_of_bad_ranking_entries(world, tmp_path):
    """Hundreds of thousands of problems from one file (each item ranks 50 entries with a number as candidate id
    and a string as rank): every code is capped at twenty listed problems plus one note, in strict and
    --lenient mode, on screen and with --json. Before the cap: 597 MB, 2.4 GB with --json (--lenient
    --json: 1.2 GB)."""
    root, ch, secrets = world
    bad = tmp_path / "bad-entries.json"
    entry = json.dumps({"candidate_id": 7, "rank": "r"})
    item = '{"dialog_id": "x", "lst_candidate_id": [' + ",".join([entry] * 50) + "]}"
    with open(bad, "w") as f:  # 21.5 MB: 14,000 items, 700,000 bad entries, 1.4 million problems
        f.write("[" + ",".join([item] * (21_500_000 // len(item))) + "]")
    for more in ((), ("--json",), ("--lenient", "--json")):
        out = Hostile(f"21.5 MB of bad ranking entries {' '.join(more)}".strip(), _score(ch, bad, *more), 1,
                      inputs=[bad], secrets=secrets, max_lines=None,
                      message="official-crash" if "--lenient" in more else "rank-not-integer", seconds=30).check()
        if "--json" in more:
            report = json.loads(out.stdout)
            codes = [p["code"] for p in report["problems"]]
            assert max(codes.count(c) for c in set(codes)) == 20 and len(report["not_listed"]) == 1, codes
            assert "more problems not listed" in report["not_listed"][0]
        else:
            assert len(out.stderr) < 20_000  # twenty lines per code at most, and the note

TINY_ITEMS = {  # an array of millions of tiny items: the item, and the problems each one makes
    "{}": {"missing-key": 2},
    "[]": {"item-not-object": 1},
    "0": {"item-not-object": 1},
    '{"dialog_id":1}': {"wrong-type": 1, "missing-key": 1},
    '{"dialog_id":"x"}': {"unknown-dialog": 1, "missing-key": 1},
}


def tiny_items(path: Path, item: str, size: int) -> int:
    """Write ``[item,item,...]`` of about ``size`` bytes; the number of items."""
    n = size // (len(item) + 1)
    path.write_text("[" + ",".join([item] * n) + "]")
    return n


def not_listed_note(n: int, per_item: dict) -> str:
    """The one code-less line that counts what twenty listed problems per code leave out."""
    dropped = {c: k * n - 20 for c, k in per_item.items()}
    return (f"... {sum(dropped.values()):,} more problems not listed ("
            + ", ".join(f"{c} {d:,}" for c, d in sorted(dropped.items())) + ")")


@pytest.mark.parametrize("item", list(TINY_ITEMS))
def test_huge_array_of_tiny_items(world, tmp_path, item):
    """Millions of tiny items (seven million ``{}`` in 21.5 MB): the file's generic JSON objects would take 64
    bytes of dict per 3 bytes of text (551 MB, 43 s), and the problems the per-code cap drops were built
    anyway. A large array is checked one item at a time and a dropped problem is only counted: the same
    twenty problems per code and the same note, within 3x + 200 MB (78 MB), in time linear in the items.
    ``{}`` is 21.5 MB; the other shapes 10 MB (enough for the generic objects to break the bound)."""
    root, ch, secrets = world
    big = tmp_path / "tiny-items.json"
    size = 21_500_000 if item == "{}" else 10_000_000
    n = tiny_items(big, item, size)
    more = ("--json",) if item in ("{}", '{"dialog_id":"x"}') else ()
    args = _score(ch, big, *more) if more else ["validate", R(big), "--challenge", R(ch.root), *CH_ARGS]
    out = Hostile(f"{size / 1e6:g} MB of {n:,} items {item} {' '.join(more)}".strip(), args, 1, inputs=[big],
                  secrets=secrets, max_lines=None, message=sorted(TINY_ITEMS[item])[0],
                  seconds=15 if item == "{}" else 8).check()
    if more:
        report = json.loads(out.stdout)
        codes = [p["code"] for p in report["problems"] if p["severity"] == "error"]  # and a nothing-ranked warning
        assert {c: codes.count(c) for c in set(codes)} == {c: 20 for c in TINY_ITEMS[item]}, codes
        assert report["not_listed"] == [not_listed_note(n, TINY_ITEMS[item])]
    else:
        assert not_listed_note(n, TINY_ITEMS[item]) in out.stderr


def test_huge_array_of_tiny_items_lenient(world, tmp_path):
    """--lenient reads a large array one item at a time too: 10 MB of ``[]`` (3.3 million official-crash
    errors, twenty listed)."""
    root, ch, secrets = world
    big = tmp_path / "tiny-lenient.json"
    n = tiny_items(big, "[]", 10_000_000)
    out = Hostile("10 MB of items [] --lenient --json", _score(ch, big, "--lenient", "--json"), 1, inputs=[big],
                  secrets=secrets, max_lines=None, message="official-crash", seconds=8).check()
    assert json.loads(out.stdout)["not_listed"] == [not_listed_note(n, {"official-crash": 1})]


# ---- the truncation note: a problem without a code -------------------------------------------------------------
def test_codeless_problems_are_notes(capsys):
    from dialeval.commands.score import _print_problems
    from dialeval.core.problems import Problem
    from dialeval.core.schemacheck import validator
    from dialeval.core.signature import Signature
    from dialeval.results.report import ScoreReport

    problems = [Problem("score-not-number", "", f"row {i}: not a number", "error", "x.csv") for i in range(1, 4)]
    problems.append(Problem("", "", "... 22 more problems not listed", "error", "x.csv"))
    problems.append(Problem("missing-dialog", "", "dialog d is not ranked", "warning"))
    rep = ScoreReport(Signature("ubuntu"), {"path": "x.csv", "kind": "file", "sha256": "0" * 64}, ["test"], [],
                      False, problems)
    assert len(rep.errors) == 3 and len(rep.warnings) == 1
    doc = rep.to_json()
    assert doc["counts"] == {"errors": 3, "warnings": 1}
    assert all(p["code"] for p in doc["problems"]) and len(doc["problems"]) == 4
    assert doc["not_listed"] == ["... 22 more problems not listed"]
    assert not list(validator("score-report").iter_errors(doc))
    _print_problems(problems, 5, "dstc6")
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "3 error(s), 1 warning(s)"
    assert "  x.csv: ... 22 more problems not listed" in err
    assert not any("[]" in line for line in err)


# ---- --task as a benchmark's string group ------------------------------------------------------------------------
def test_task_names_reach_the_benchmark(tmp_path):
    import numpy as np
    from test_ubuntu import row, write_eval

    data = tmp_path / "ubuntu"
    data.mkdir()
    write_eval(data / "test.csv", [row(i) for i in range(1, 5)])
    scores = np.tile(np.arange(10, 0, -1, dtype=float), (4, 1))
    np.save(tmp_path / "s.npy", scores)
    out = Hostile("--task test.csv on ubuntu", ["score", "s.npy", "--benchmark", "ubuntu", "--data",
                                               R(data), "--split", "test", "--task", "test.csv", "--json"], 0,
                  seconds=20).check()
    assert {r["group"] for r in json.loads(out.stdout)["results"]} >= {"test.csv"}
    Hostile("--task nonsense on ubuntu", ["score", "s.npy", "--benchmark", "ubuntu", "--data",
                                         R(data), "--split", "test", "--task", "nope.csv"], 2,
            message="--task|group", seconds=20).check()
