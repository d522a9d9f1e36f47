"""Known releases: the registry, identity in signatures, ``dialeval data list/verify/fetch``, ``--data NAME``.

Every download goes to an ``http.server`` on 127.0.0.1 (port 0) started by a fixture, serving archives built here;
the registry is replaced through ``$DIALEVAL_RELEASES`` so that its URLs point there. Nothing leaves the machine.
"""

from __future__ import annotations

import hashlib
import http.server
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import threading
import time
from pathlib import Path

import pytest
from conftest import SHARED, cli_env

from dialeval.benchmarks.base import data_identity
from dialeval.core.errors import UsageError
from dialeval.core.signature import Signature
from dialeval.files.fetch import MANIFEST, fetch, installed
from dialeval.files.releases import RELEASES_ENV, registry

DATA = SHARED / "data"
TST1 = DATA / "dstc6" / "tst1"
BABI = DATA / "babi-dialog"
MOVIE = DATA / "movie-dialog"
REPO = Path(__file__).resolve().parents[1]


def needs(path: Path):
    return pytest.mark.skipif(not path.is_dir(), reason=f"real data not found at {path}")


# ---- the shipped registry --------------------------------------------------------------------------------------
def test_shipped_registry_lists_the_releases():
    reg = registry(REPO / "evaluator" / "files" / "releases.json")
    assert set(reg.names()) >= {"dstc6", "babi-dialog", "movie-dialog", "ubuntu-v2", "airdialogue", "douban", "convai2",
                                "ecommerce", "ubuntu-v1", "dstc7",
                                "dstc7-ubuntu", "dstc8"}
    assert len(reg.get("dstc6").files) == 40 and reg.get("dstc6").splits == ["tst1", "tst2", "tst3", "tst4"]
    assert len(reg.get("babi-dialog").files) == 29 and len(reg.get("movie-dialog").files) == 11
    # every archive has its published sha256, or the registry says none is published (and why)
    assert all(a.url.startswith("http") and (len(a.sha256) == 64 if a.sha256 else a.checksum.startswith("none published"))
               for r in reg.releases.values() for a in r.archives)
    assert reg.get("dstc6").archives == () and "organizers" in reg.get("dstc6").obtain
    assert reg.check("dialog-babi-task1-API-calls-tst.txt", "0" * 64).status == "modified"
    assert reg.check("not-a-release-file.txt", "0" * 64).status == "unknown"


def test_bad_registry_is_one_line(tmp_path, monkeypatch):
    bad = tmp_path / "r.json"
    bad.write_text(json.dumps({"format": 1, "releases": [{"name": "x", "benchmark": "babi", "marker": "../up"}]}))
    monkeypatch.setenv(RELEASES_ENV, str(bad))
    with pytest.raises(UsageError, match="relative path inside the release"):
        registry()


# ---- identity on the real files ----------------------------------------------------------------------------------
def _copy(files: list[Path], dest: Path) -> list[Path]:
    dest.mkdir(parents=True, exist_ok=True)
    out = []
    for f in files:
        shutil.copyfile(f, dest / f.name)
        out.append(dest / f.name)
    return out


def _flip_one_byte(path: Path) -> None:
    """Change one byte and keep the file well-formed: the first space becomes a newline."""
    raw = bytearray(path.read_bytes())
    raw[raw.index(b" ")] = ord("\n")
    path.write_bytes(bytes(raw))


@pytest.mark.realdata
@needs(TST1)
def test_real_dstc6_tst1_signs_the_release_then_modified(tmp_path):
    from dialeval.api import score

    sub = tmp_path / "sub" / "tst1"
    keys = sorted(TST1.glob("*.answers.json"))
    _copy(keys, sub)
    rep = score(sub.parent, challenge=TST1.parent)
    data = dict(Signature.parse(rep.records[0]["signature"]).fields)["data"]
    assert data.startswith("dstc6/tst1#") and rep.to_json()["data"]["release"] == "dstc6"
    assert rep.notes == [] and rep.value("p@1", "tst1") == 1.0

    copy = tmp_path / "copy"
    _copy(sorted(TST1.iterdir()), copy / "tst1")
    edited = copy / "tst1" / keys[2].name
    _flip_one_byte(edited)
    rep2 = score(sub.parent, challenge=copy)
    data2 = dict(Signature.parse(rep2.records[0]["signature"]).fields)["data"]
    assert data2.startswith("modified/tst1#") and data2.split("#")[1] != data.split("#")[1]
    doc = rep2.to_json()
    assert doc["data"]["release"] == "modified" and [m["file"] for m in doc["data"]["modified"]] == [edited.name]
    assert len(doc["notes"]) == 1 and edited.name in doc["notes"][0] and "not comparable" in doc["notes"][0]
    # the command line warns on stderr too, whatever the output format
    r = subprocess.run([sys.executable, "-m", "dialeval", "score", str(sub.parent), "--data", str(copy), "--json"],
                       capture_output=True, text=True, env=cli_env(), timeout=120)
    assert r.returncode == 0 and "modified/tst1#" in r.stdout
    assert f"dialeval: warning: data: {edited.name} differs from the published dstc6 release" in r.stderr
    # the table says MODIFIED once; the warning line is said once, on stderr only
    r = subprocess.run([sys.executable, "-m", "dialeval", "score", str(sub.parent), "--data", str(copy)],
                       capture_output=True, text=True, env=cli_env(), timeout=120)
    assert r.returncode == 0 and "MODIFIED copy of a published release" in r.stdout
    assert "differs from the published" not in r.stdout
    assert r.stderr.count(f"{edited.name} differs from the published dstc6 release") == 1


@pytest.mark.realdata
@pytest.mark.parametrize("folder, names, release", [
    (BABI, ["dialog-babi-task1-API-calls-tst.txt", "dialog-babi-candidates.txt"], "babi-dialog"),
    (MOVIE, ["task1_qa_dev.txt", "entities.txt"], "movie-dialog"),
    (MOVIE, ["task4_reddit_cand-valid.txt"], "movie-dialog"),
])
def test_real_babi_and_movie_files_are_the_release_then_modified(tmp_path, folder, names, release):
    if not folder.is_dir():
        pytest.skip(f"real data not found at {folder}")
    files = _copy([folder / n for n in names], tmp_path / "copy")
    ident = data_identity(files, tmp_path / "copy")
    assert ident.release == release and ident.label("dev") == f"{release}/dev#{ident.digest}"
    _flip_one_byte(files[0])
    ident2 = data_identity(files, tmp_path / "copy")
    assert ident2.release == "modified" and ident2.label("dev").startswith("modified/dev#")
    assert [m["file"] for m in ident2.modified] == [names[0]] and ident2.digest != ident.digest


def test_unknown_data_keeps_todays_form(tmp_path):
    f = tmp_path / "mine.txt"
    f.write_text("1 hello\tworld\n")
    ident = data_identity([f], tmp_path)
    assert ident.release is None and ident.label("tst") == f"tst#{ident.digest}" and ident.warnings() == []


def test_embedded_default_is_never_a_release(tmp_path):
    f = tmp_path / "dialog-babi-candidates.txt"  # a published name with other content
    f.write_text("1 hello\n")
    assert data_identity([f], tmp_path).release == "modified"
    assert data_identity([f], tmp_path, embedded_default=True).release is None


# ---- the loopback server -------------------------------------------------------------------------------------------
class Server:
    """Routes: ``ok`` (serve bytes), ``drop`` (first request: half the bytes, then the connection closes),
    ``stall`` (headers, then nothing until the test ends or 10 s pass); anything else is a 404."""

    def __init__(self):
        self.routes: dict[str, tuple[str, bytes]] = {}
        self.hits: dict[str, int] = {}
        self.stop = threading.Event()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def do_GET(self):
                kind, body = outer.routes.get(self.path, ("404", b""))
                n = outer.hits[self.path] = outer.hits.get(self.path, 0) + 1
                if kind == "404":
                    self.send_error(404, "Not Found")
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/gzip")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if kind == "stall":
                    self.wfile.flush()
                    outer.stop.wait(10)
                    return
                if kind == "drop" and n == 1:
                    self.wfile.write(body[: len(body) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                if kind == "slow":  # long enough for a second fetch to start and wait on the lock
                    for i in range(0, len(body), max(1, len(body) // 10)):
                        self.wfile.write(body[i:i + max(1, len(body) // 10)])
                        self.wfile.flush()
                        time.sleep(0.1)
                    return
                self.wfile.write(body)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.httpd.server_port}{path}"

    def close(self):
        self.stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    s = Server()
    yield s
    s.close()


def tgz(members: dict[str, bytes], hostile: str | None = None) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", format=tarfile.PAX_FORMAT) as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = 0
            tf.addfile(info, io.BytesIO(data))
        if hostile == "link":
            info = tarfile.TarInfo("toy/link.txt")
            info.type = tarfile.SYMTYPE
            info.linkname = "/etc/passwd"
            tf.addfile(info)
        elif hostile == "escape":
            info = tarfile.TarInfo("../escape.txt")
            info.size = 1
            tf.addfile(info, io.BytesIO(b"x"))
    return buf.getvalue()


TOY_FILES = {"toy/data/toy-tst.txt": b"1 hello\tworld\n", "toy/data/toy-candidates.txt": b"1 world\n"}


def toy_registry(tmp_path: Path, archives: list[dict], name: str = "toy", files=None, benchmark="babi",
                 data_dir="toy/data", marker="toy-candidates.txt") -> Path:
    files = TOY_FILES if files is None else files
    doc = {"format": 1, "releases": [{
        "name": name, "title": "a toy release", "benchmark": benchmark, "archives": archives, "data_dir": data_dir,
        "marker": marker,
        "files": [{"path": Path(p).name, "sha256": hashlib.sha256(b).hexdigest(), "split": "tst"}
                  for p, b in files.items()],
    }]}
    path = tmp_path / "registry.json"
    path.write_text(json.dumps(doc))
    return path


@pytest.fixture
def env(tmp_path, monkeypatch):
    """A private cache and a fast timeout for every test here."""
    monkeypatch.setenv("DIALEVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("DIALEVAL_FETCH_TIMEOUT", "1")
    return tmp_path


def _serve(server, tmp_path, monkeypatch, body: bytes, kind="ok", sha=None, path="/toy.tgz", **kw):
    server.routes[path] = (kind, body)
    reg = toy_registry(tmp_path, [{"url": server.url(path), "sha256": sha or hashlib.sha256(body).hexdigest(),
                                   "file": "toy.tgz"}], **kw)
    monkeypatch.setenv(RELEASES_ENV, str(reg))
    return registry().get(kw.get("name", "toy"))


def _left(root: Path) -> list[str]:
    """What a fetch left under ``root`` (the lock file aside)."""
    return sorted(p.name for p in root.iterdir() if not p.name.endswith(".lock")) if root.exists() else []


def test_good_archive_is_fetched_checked_and_placed(server, env, monkeypatch):
    rel = _serve(server, env, monkeypatch, tgz(TOY_FILES))
    root = env / "cache" / "releases"
    folder, downloaded = fetch(rel, root)
    assert downloaded and folder == root / "toy" / "toy" / "data"
    assert (folder / "toy-tst.txt").read_bytes() == TOY_FILES["toy/data/toy-tst.txt"]
    assert (root / "toy" / MANIFEST).is_file() and installed(rel, root) == folder
    assert _left(root) == ["toy"]  # no work folder, no download left beside it
    assert fetch(rel, root) == (folder, False) and server.hits["/toy.tgz"] == 1
    # the data folder is the release: identity names it
    ident = data_identity(sorted(folder.iterdir()), folder)
    assert ident.release == "toy"


def test_marker_found_when_the_layout_differs(server, env, monkeypatch):
    rel = _serve(server, env, monkeypatch, tgz(TOY_FILES), data_dir="elsewhere")
    folder, _ = fetch(rel, env / "r")
    assert folder == env / "r" / "toy" / "toy" / "data"


def test_wrong_hash_is_refused_and_nothing_is_left(server, env, monkeypatch):
    rel = _serve(server, env, monkeypatch, tgz(TOY_FILES), sha="ab" * 32)
    root = env / "r"
    with pytest.raises(UsageError, match="sha256 is not the published abababab.*refused, nothing was unpacked"):
        fetch(rel, root)
    assert _left(root) == [] and installed(rel, root) is None


def test_dropped_connection_then_the_next_fetch_succeeds(server, env, monkeypatch):
    body = tgz({**TOY_FILES, "toy/data/big.bin": os.urandom(200_000)})
    rel = _serve(server, env, monkeypatch, body, kind="drop")
    root = env / "r"
    with pytest.raises(UsageError, match="connection dropped before the whole archive arrived") as e:
        fetch(rel, root)
    assert "\n" not in str(e.value) and _left(root) == []
    folder, downloaded = fetch(rel, root)
    assert downloaded and (folder / "big.bin").stat().st_size == 200_000 and server.hits["/toy.tgz"] == 2


def test_404_is_one_line(server, env, monkeypatch):
    rel = _serve(server, env, monkeypatch, b"", kind="404")
    with pytest.raises(UsageError, match=r"failed: HTTP 404 Not Found$"):
        fetch(rel, env / "r")
    assert _left(env / "r") == []


def test_stalled_server_times_out_with_the_timeout_in_the_message(server, env, monkeypatch):
    rel = _serve(server, env, monkeypatch, tgz(TOY_FILES), kind="stall")
    t = time.monotonic()
    with pytest.raises(UsageError, match=r"no data for 1 s \(timed out; set DIALEVAL_FETCH_TIMEOUT"):
        fetch(rel, env / "r")
    assert time.monotonic() - t < 8 and _left(env / "r") == []


def test_refused_connection(env, monkeypatch):
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    reg = toy_registry(env, [{"url": f"http://127.0.0.1:{port}/x.tgz", "sha256": "ab" * 32, "file": "x.tgz"}])
    monkeypatch.setenv(RELEASES_ENV, str(reg))
    with pytest.raises(UsageError, match="cannot connect"):
        fetch(registry().get("toy"), env / "r")


@pytest.mark.parametrize("hostile, needle", [("link", "is a link"), ("escape", "points outside the archive")])
def test_hostile_members_are_refused_by_the_extractor(server, env, monkeypatch, hostile, needle):
    rel = _serve(server, env, monkeypatch, tgz(TOY_FILES, hostile=hostile))
    root = env / "r"
    with pytest.raises(UsageError, match=needle):
        fetch(rel, root)
    assert _left(root) == [] and not (env / "escape.txt").exists()


def test_killed_fetch_leaves_nothing_that_is_used(server, env, monkeypatch):
    rel = _serve(server, env, monkeypatch, tgz(TOY_FILES))
    root = env / "r"
    # what a fetch killed mid-way leaves: a work folder, and a release folder without its manifest
    (root / ".toy.partial-x1" / "tree").mkdir(parents=True)
    (root / "toy").mkdir()
    assert installed(rel, root) is None
    folder, downloaded = fetch(rel, root)
    assert downloaded and _left(root) == ["toy"] and installed(rel, root) == folder


def test_two_concurrent_fetches(server, env, monkeypatch):
    _serve(server, env, monkeypatch, tgz({**TOY_FILES, "toy/data/big.bin": b"x" * 100_000}), kind="slow")
    root = env / "r"
    e = {**cli_env(), "DIALEVAL_RELEASES": os.environ[RELEASES_ENV], "DIALEVAL_FETCH_TIMEOUT": "5"}
    cmd = [sys.executable, "-m", "dialeval", "data", "fetch", "toy", "--to", str(root)]
    procs = [subprocess.Popen(cmd, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    outs = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert outs[0][0] == outs[1][0] == f"{root / 'toy' / 'toy' / 'data'}\n"
    assert sorted("already fetched" in err for _, err in outs) == [False, True]
    assert server.hits["/toy.tgz"] == 1 and _left(root) == ["toy"]


def test_timeout_setting_is_checked(env, monkeypatch):
    from dialeval.files.fetch import fetch_timeout

    monkeypatch.setenv("DIALEVAL_FETCH_TIMEOUT", "soon")
    with pytest.raises(UsageError, match="not a number of seconds"):
        fetch_timeout()


def test_release_without_archive_says_how_to_get_it(env):
    reg = registry(REPO / "evaluator" / "files" / "releases.json")
    with pytest.raises(UsageError, match="no public archive.*DSTC6 organizers"):
        fetch(reg.get("dstc6"), env / "r")


# ---- the command line -------------------------------------------------------------------------------------------
def run(*args, env_extra=None):
    e = {**cli_env(), **(env_extra or {})}
    return subprocess.run([sys.executable, "-m", "dialeval", *map(str, args)], capture_output=True, text=True,
                          env=e, timeout=120)


def test_cli_fetch_list_and_data_name(server, env, monkeypatch):
    rel = _serve(server, env, monkeypatch, tgz(TOY_FILES))
    extra = {"DIALEVAL_RELEASES": os.environ[RELEASES_ENV], "DIALEVAL_CACHE_DIR": str(env / "cache"),
             "COLUMNS": "200"}
    r = run("score", "x.json", "--benchmark", "babi", "--data", "toy", env_extra=extra)
    assert r.returncode == 2 and r.stderr.strip() == ("dialeval: error: release toy is not fetched yet: run "
                                                      "`dialeval data fetch toy`")
    r = run("data", "list", env_extra=extra)
    assert r.returncode == 0 and "toy" in r.stdout and "public archive" in r.stdout
    r = run("data", "fetch", "toy", env_extra=extra)
    assert r.returncode == 0, r.stderr
    folder = Path(r.stdout.strip())
    assert folder == installed(rel, env / "cache" / "releases") and "checked and unpacked" in r.stderr
    r = run("data", "list", "--json", env_extra=extra)
    row = json.loads(r.stdout)["releases"][0]
    assert row["cached"] and row["present"] == str(folder) and row["size"] == 22
    # --data NAME now resolves: the benchmark reads the fetched folder (which holds no bAbI task file)
    r = run("validate", env / "missing.json", "--benchmark", "babi", "--data", "toy", env_extra=extra)
    assert r.returncode == 2 and r.stderr == "dialeval: error: babi: give --split (one of: none)\n"
    r = run("score", "x.json", "--data", "toy", env_extra=extra)  # the dstc6 default benchmark
    assert r.returncode == 2 and "--data toy is the babi release: add --benchmark babi" in r.stderr
    r = run("data", "fetch", "nope", env_extra=extra)
    assert r.returncode == 2 and "no release named 'nope'" in r.stderr


@pytest.mark.realdata
@needs(BABI)
def test_babi_dialog_resolves_after_a_loopback_fetch(server, env, monkeypatch):
    """The real registry entry, its archive rebuilt from the shared files and served on 127.0.0.1."""
    names = ["dialog-babi-task1-API-calls-tst.txt", "dialog-babi-candidates.txt", "dialog-babi-kb-all.txt"]
    body = tgz({f"dialog-bAbI-tasks/{n}": (BABI / n).read_bytes() for n in names})
    server.routes["/dialog_babi.tar.gz"] = ("ok", body)
    doc = json.loads((REPO / "evaluator" / "files" / "releases.json").read_text())
    babi = next(r for r in doc["releases"] if r["name"] == "babi-dialog")
    babi["archives"] = [{"url": server.url("/dialog_babi.tar.gz"), "sha256": hashlib.sha256(body).hexdigest(),
                         "file": "dialog_babi.tar.gz"}]
    doc["releases"] = [babi]
    reg = env / "babi-registry.json"
    reg.write_text(json.dumps(doc))
    extra = {"DIALEVAL_RELEASES": str(reg), "DIALEVAL_CACHE_DIR": str(env / "cache")}
    r = run("data", "fetch", "babi-dialog", env_extra=extra)
    assert r.returncode == 0, r.stderr
    folder = Path(r.stdout.strip())
    assert folder.name == "dialog-bAbI-tasks"
    from dialeval.benchmarks.babi import load_items

    s = load_items(folder, 1, "tst")
    sub = env / "sub.json"
    sub.write_text(json.dumps([{"dialog_id": i, "lst_candidate_id": [{"candidate_id": sorted(g)[0], "rank": 1}]}
                               for i, g in zip(s.item_ids, s.gold, strict=True)]))
    r = run("score", sub, "--benchmark", "babi", "--data", "babi-dialog", "--split", "tst", "--task", "1", "--json",
            env_extra=extra)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["data"]["release"] == "babi-dialog" and "|data:babi-dialog/tst#" in doc["results"][0]["signature"]
    assert doc["data"]["location"] == "babi-dialog/dialog-bAbI-tasks"  # the release, never the cache path
    r = run("data", "verify", folder, "--json", env_extra=extra)
    v = json.loads(r.stdout)
    assert r.returncode == 0 and v["counts"] == {"match": 3, "modified": 0, "unknown": 0}


@pytest.mark.realdata
@needs(BABI)
def test_verify_real_babi_and_a_modified_copy(tmp_path):
    r = run("data", "verify", BABI, "--json")
    v = json.loads(r.stdout)
    assert r.returncode == 0 and v["counts"] == {"match": 29, "modified": 0, "unknown": 0}
    assert v["releases"]["babi-dialog"] == {"match": 29, "modified": 0, "published_files": 29}
    copy = tmp_path / "copy"
    files = _copy([BABI / "dialog-babi-task2-API-refine-dev.txt", BABI / "README.txt"], copy)
    (copy / "notes.txt").write_text("mine\n")
    _flip_one_byte(files[0])
    r = run("data", "verify", copy)
    assert r.returncode == 1 and "MODIFIED (1 file(s) differ)" in r.stdout and "1 unknown" in r.stdout
    assert "dialog-babi-task2-API-refine-dev.txt differs from the published babi-dialog release" in r.stderr


def test_verify_checks_ubuntu_v2_row_counts_where_no_hash_is_published(tmp_path):
    """releases.md: no file hash is known for Ubuntu v2, but test.csv has 18,920 data rows and valid.csv 19,560
    (quoted multi-line fields count once); a copy of another size is said not to be that release (exit 1). A file of
    another layout under the same name is not counted."""
    from dialeval.simulator.ubuntu import write_fixture

    assert dict(registry(REPO / "evaluator" / "files" / "releases.json").get("ubuntu-v2").rows) == {
        "test.csv": 18920, "valid.csv": 19560}
    write_fixture(tmp_path / "data" / "ubuntu", n_train=5, n_valid=12, n_test=40)
    (tmp_path / "data" / "other").mkdir()
    (tmp_path / "data" / "other" / "test.csv").write_text("a,b\n1,2\n")
    r = run("data", "verify", tmp_path / "data", "--json")
    assert r.returncode == 1
    assert json.loads(r.stdout)["rows"] == [
        {"file": "ubuntu/test.csv", "release": "ubuntu-v2", "rows": 40, "published_rows": 18920},
        {"file": "ubuntu/valid.csv", "release": "ubuntu-v2", "rows": 12, "published_rows": 19560}]
    assert "ubuntu/test.csv has 40 data rows, the published ubuntu-v2 one 18,920" in r.stderr
    # a registry whose counts are this copy's: as published, exit 0
    doc = json.loads((REPO / "evaluator" / "files" / "releases.json").read_text())
    next(x for x in doc["releases"] if x["name"] == "ubuntu-v2")["rows"] = {"test.csv": 40, "valid.csv": 12}
    (tmp_path / "reg.json").write_text(json.dumps(doc))
    r = run("data", "verify", tmp_path / "data", env_extra={"DIALEVAL_RELEASES": str(tmp_path / "reg.json")})
    assert r.returncode == 0 and "ubuntu/test.csv has 40 data rows, as published" in r.stdout, r.stderr


@pytest.mark.realdata
@needs(TST1)
def test_identity_reads_no_data_file_twice(tmp_path, monkeypatch):
    """The release is named from the digests the DSTC6 reader took of the bytes it parsed: nothing is hashed again."""
    from dialeval.api import score
    from dialeval.files import cache

    sub = tmp_path / "sub" / "tst1"
    _copy(sorted(TST1.glob("*task1*.answers.json")), sub)
    copy = tmp_path / "data"
    _copy(sorted(TST1.iterdir()), copy / "tst1")  # fresh paths: no digest remembered from another test

    def no_second_read(path):
        raise AssertionError(f"{path} hashed again")

    monkeypatch.setattr(cache, "file_content_digest", no_second_read)
    monkeypatch.setenv("DIALEVAL_NO_CACHE", "1")
    rep = score(sub.parent, challenge=copy, tasks=[1])
    assert rep.to_json()["data"]["release"] == "dstc6"


@pytest.mark.parametrize("doc, message", [
    ([], 'a JSON object with "format": 1 is needed, not a JSON array'),
    ({"format": 1, "releases": {"babi": {}}}, "/releases must be an array, not a JSON object"),
    ({"format": 1, "releases": ["babi"]}, "/releases/0: the entry or one of its fields has the wrong JSON type"),
    ({"format": 1, "releases": [{"name": "a", "benchmark": "babi", "marker": "m", "files": [1]}]},
     "/releases/0: the entry or one of its fields has the wrong JSON type"),
])
def test_a_registry_of_the_wrong_shape_is_named_in_dialevals_words(tmp_path, doc, message):
    # before: "not a release registry ('list' object has no attribute 'get')", Python's own wording
    path = tmp_path / "registry.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(UsageError) as e:
        registry(path)
    assert str(e.value) == f"release registry {path}: not a release registry ({message})"
    assert "object" not in str(e.value).replace("JSON object", "")
