"""Releases published without a checksum (Douban, E-commerce, Ubuntu v1: zip archives behind a link): the registry
says so, ``data fetch`` records the sha256 it saw and says it was not verified, and the zip is unpacked with the
same checks as a tar. Downloads go to a loopback server (``tests/test_releases.py``'s)."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from test_releases import Server

from dialeval.core.errors import UsageError
from dialeval.files.archive import safe_extract
from dialeval.files.fetch import MANIFEST, fetch, installed
from dialeval.files.releases import RELEASES_ENV, registry

TEST_TXT = "".join(f"{int(j == 0)}\tctx {c}\tresp {c}-{j}\n" for c in range(2) for j in range(10)).encode()


def zipped(members: dict[str, bytes], links: tuple[str, ...] = ()) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
        for name in links:
            info = zipfile.ZipInfo(name)
            info.external_attr = (0o120777 << 16)  # a symbolic link
            zf.writestr(info, "/etc/passwd")
    return buf.getvalue()


@pytest.fixture
def served(tmp_path, monkeypatch):
    server = Server()
    monkeypatch.setenv("DIALEVAL_FETCH_TIMEOUT", "5")

    def serve(body: bytes, checksum="none published: the README gives only the link"):
        server.routes["/corpus.zip?dl=1"] = ("ok", body)
        doc = {"format": 1, "releases": [{
            "name": "toy-douban", "benchmark": "douban", "data_dir": "Corpus", "marker": "test.txt",
            "splits": ["test"], "files": [],
            "archives": [{"url": server.url("/corpus.zip?dl=1"), "sha256": None, "checksum": checksum,
                          "file": "corpus.zip"}]}]}
        (tmp_path / "reg.json").write_text(json.dumps(doc))
        monkeypatch.setenv(RELEASES_ENV, str(tmp_path / "reg.json"))
        return registry().get("toy-douban")

    yield serve
    server.close()


def test_shipped_registry_says_no_checksum_is_published():
    reg = registry()
    for name, url in (("douban", "dropbox.com/s/eo5zegg1k83uqaj/DoubanConversaionCorpus.zip"),
                      ("ecommerce", "154J-neBo20ABtSmJDvm7DK0eTuieAuvw"), ("ubuntu-v1", "2fdn26rj6h9bpvl/ubuntu_data.zip")):
        rel = reg.get(name)
        assert rel.benchmark == name and len(rel.archives) == 1
        a = rel.archives[0]
        assert url in a.url and a.sha256 is None and a.checksum.startswith("none published")


def test_a_registry_must_say_why_a_sha256_is_missing(served):
    with pytest.raises(UsageError, match="sha256 null needs a checksum note"):
        served(b"", checksum="")


def test_fetch_records_the_sha256_it_saw_and_says_it_was_not_verified(tmp_path, served):
    import hashlib

    body = zipped({"Corpus/test.txt": TEST_TXT, "Corpus/dev.txt": TEST_TXT})
    rel = served(body)
    said = []
    folder, downloaded = fetch(rel, tmp_path / "releases", say=said.append)
    assert downloaded and folder == tmp_path / "releases" / "toy-douban" / "Corpus"
    assert (folder / "test.txt").read_bytes() == TEST_TXT
    seen = hashlib.sha256(body).hexdigest()
    assert any("NOT verified, no checksum is published" in s and seen in s for s in said)
    manifest = json.loads((tmp_path / "releases" / "toy-douban" / MANIFEST).read_text())
    assert manifest["verified"] is False and manifest["seen_sha256"] == {"corpus.zip": seen}
    assert installed(rel, tmp_path / "releases") == folder  # a second fetch finds the copy
    assert fetch(rel, tmp_path / "releases") == (folder, False)


@pytest.mark.parametrize("members,links,needle", [
    ({"Corpus/test.txt": TEST_TXT}, ("Corpus/link.txt",), "is a link"),
    ({"../escape.txt": b"x"}, (), "points outside the archive"),
    ({"/abs.txt": b"x"}, (), "absolute path"),
])
def test_hostile_zip_members_are_refused_before_anything_is_written(tmp_path, members, links, needle):
    (tmp_path / "a.zip").write_bytes(zipped(members, links))
    (tmp_path / "out").mkdir()
    with pytest.raises(UsageError, match=needle):
        safe_extract(tmp_path / "a.zip", tmp_path / "out", zip_ok=True)
    assert list((tmp_path / "out").iterdir()) == []


def test_a_zip_is_not_a_submission_archive(tmp_path):
    (tmp_path / "a.zip").write_bytes(zipped({"x.json": b"[]"}))
    with pytest.raises(UsageError, match="not a readable tar"):
        safe_extract(tmp_path / "a.zip", tmp_path)


def test_a_member_longer_than_it_declares_is_refused(tmp_path):
    raw = bytearray(zipped({"Corpus/test.txt": b"a" * 1000}))
    # shrink the declared uncompressed size in the central directory entry (a zip bomb's lie)
    cd = raw.rfind(b"PK\x01\x02")
    raw[cd + 24:cd + 28] = (10).to_bytes(4, "little")
    (tmp_path / "bomb.zip").write_bytes(bytes(raw))
    with pytest.raises(UsageError, match="longer than it declares|corrupt archive"):
        safe_extract(tmp_path / "bomb.zip", tmp_path / "out", zip_ok=True)
