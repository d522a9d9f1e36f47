"""Known public releases of the benchmark data: the registry shipped as data (``releases.json``), and matching.

The registry names each release (``babi-dialog``, ``movie-dialog``, ``dstc6``, ``ubuntu-v2``, ``airdialogue``), its
benchmark, the archives it is published as (URL + sha256), the folder the benchmark reads once they are unpacked
(``data_dir``), and the sha256 and split of every file that matters for scoring where those are known (for files with
no published hash, their published row counts: ``rows``, Ubuntu v2's ``test.csv`` 18,920, ``valid.csv`` 19,560). A file is
recognised by its **name and content**: a known name with the published sha256 *matches*; a known name with other
content is *modified* (a truncated download, a re-tokenised copy, an edited answer key); any other name is
*unknown*. The sha256 compared is the one the index cache already keys entries by (:data:`cache.DIGEST`), so
identity costs no second read of a data file.

``$DIALEVAL_RELEASES`` (a path to a registry JSON of the same form) replaces the shipped registry: tests point it at
archives served on 127.0.0.1. No code here touches the network or knows where fetched data is kept.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from dialeval.core.errors import UsageError

RELEASES_ENV = "DIALEVAL_RELEASES"
REGISTRY_FORMAT = 1
MODIFIED = "modified"
"""The release field of a signature whose data has a known file name with other content."""
_SHIPPED = Path(__file__).with_name("releases.json")
_HEX = frozenset("0123456789abcdef")


@dataclass(frozen=True)
class Archive:
    url: str
    sha256: str | None  # None: no checksum is published (``checksum`` says so); a fetch records what it saw
    file: str  # the name it is saved under (a URL may end in a short link)
    into: str = "."  # where it is unpacked, relative to the release's top folder
    checksum: str = ""  # why there is no sha256 to check (the registry says so), "" when one is published


@dataclass(frozen=True)
class KnownFile:
    release: str
    path: str  # relative to the release's data folder, as published
    sha256: str
    split: str | None  # None: shared by every split (candidates, KB, entities, licence)

    @property
    def name(self) -> str:
        return PurePosixPath(self.path).name


@dataclass(frozen=True)
class Release:
    name: str
    title: str
    benchmark: str
    archives: tuple[Archive, ...]
    data_dir: str  # the folder ``--data`` points at, relative to the unpacked top folder
    marker: str  # a path inside data_dir whose presence says the data folder was found
    files: tuple[KnownFile, ...]
    declared_splits: tuple[str, ...] = ()
    obtain: str = ""  # how to get a release that has no public archive
    rows: tuple[tuple[str, int], ...] = ()  # (file, data rows) of files with no published hash (Ubuntu v2's CSVs)

    @property
    def splits(self) -> list[str]:
        seen = list(self.declared_splits)
        for f in self.files:
            if f.split and f.split not in seen:
                seen.append(f.split)
        return seen


@dataclass
class FileCheck:
    """One file against the registry: ``status`` is ``match``, ``modified`` or ``unknown``."""

    name: str
    sha256: str
    status: str
    release: str | None = None  # the release it matches, or whose file name it carries (modified)
    split: str | None = None
    expected: str | None = None  # the published sha256 (modified only)


@dataclass
class Identification:
    """What a set of data files is: ``release`` names the one release they all match, :data:`MODIFIED` when a
    known file name carries other content, None when the files are not (all) of a known release."""

    release: str | None
    checks: list[FileCheck] = field(default_factory=list)

    @property
    def modified(self) -> list[FileCheck]:
        return [c for c in self.checks if c.status == MODIFIED]


class Registry:
    def __init__(self, releases: Iterable[Release], source: str):
        self.releases: dict[str, Release] = {r.name: r for r in releases}
        self.source = source
        self._by_name: dict[str, list[KnownFile]] = {}
        for r in self.releases.values():
            for f in r.files:
                self._by_name.setdefault(f.name, []).append(f)

    def names(self) -> list[str]:
        return list(self.releases)

    def get(self, name: str) -> Release | None:
        return self.releases.get(name)

    def check(self, name: str, sha256: str) -> FileCheck:
        """One file by its base name and sha256 (hex)."""
        known = self._by_name.get(name)
        if not known:
            return FileCheck(name, sha256, "unknown")
        for f in known:
            if f.sha256 == sha256:
                return FileCheck(name, sha256, "match", f.release, f.split)
        f = known[0]
        return FileCheck(name, sha256, MODIFIED, f.release, f.split, f.sha256)

    def identify(self, files: Iterable[tuple[str, str]]) -> Identification:
        """The release a set of ``(base name, sha256)`` belongs to (see :class:`Identification`)."""
        checks = [self.check(n, d) for n, d in files]
        if any(c.status == MODIFIED for c in checks):
            return Identification(MODIFIED, checks)
        if checks and all(c.status == "match" for c in checks):
            owners = {c.release for c in checks}
            if len(owners) == 1:
                return Identification(owners.pop(), checks)
        return Identification(None, checks)


_LOADED: dict[tuple, Registry] = {}


def registry(path: str | Path | None = None) -> Registry:
    """The registry: ``path``, else ``$DIALEVAL_RELEASES``, else the one shipped with the package (memoised)."""
    chosen = Path(path) if path else Path(os.environ[RELEASES_ENV]) if os.environ.get(RELEASES_ENV) else _SHIPPED
    try:
        st = chosen.stat()
        key = (str(chosen), st.st_size, st.st_mtime_ns)
    except OSError:
        key = (str(chosen),)
    reg = _LOADED.get(key)
    if reg is None:
        reg = _LOADED[key] = _load(chosen)
    return reg


def _load(path: Path) -> Registry:
    from dialeval.files.read import read_bytes

    shown = f"release registry {path}"
    raw = read_bytes(path, shown=shown, limit=16 * 1024 * 1024)
    try:
        doc = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise UsageError(f"{shown}: not valid JSON") from None
    try:
        if not isinstance(doc, dict):  # an array, a string, a number: none is a registry
            raise ValueError(f"a JSON object with \"format\": {REGISTRY_FORMAT} is needed, not a JSON "
                             f"{_json_kind(doc)}")
        if doc.get("format") != REGISTRY_FORMAT:
            raise ValueError(f"format must be {REGISTRY_FORMAT}")
        if not isinstance(doc["releases"], list):
            raise ValueError(f"/releases must be an array, not a JSON {_json_kind(doc['releases'])}")
        releases = []
        for i, r in enumerate(doc["releases"]):
            try:
                releases.append(_release(r))
            except (TypeError, AttributeError):  # Python's own words ("'int' object is not subscriptable") say nothing
                raise ValueError(f"/releases/{i}: the entry or one of its fields has the wrong JSON type") from None
        return Registry(releases, str(path))
    except (ValueError, KeyError) as e:
        what = f"missing field {e}" if isinstance(e, KeyError) else str(e)
        raise UsageError(f"{shown}: not a release registry ({what[:200]})") from None


def _json_kind(value) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(type(value), "number")


def _sha(value) -> str:
    if not (isinstance(value, str) and len(value) == 64 and set(value) <= _HEX):
        raise ValueError(f"not a sha256 in hex: {str(value)[:80]!r}")
    return value


def _archive_sha(a: dict) -> str | None:
    """An archive's published sha256, or None where ``"sha256": null`` and a ``checksum`` note says none is published
    (a missing sha256 is an error: the registry must say which it is)."""
    if a["sha256"] is None:
        if not str(a.get("checksum", "")).strip():
            raise ValueError(f"archive {str(a.get('url'))[:80]!r}: sha256 null needs a checksum note saying why")
        return None
    return _sha(a["sha256"])


def _relative(value, what: str) -> str:
    """A relative path inside the release (the fetcher joins it to a folder it owns)."""
    p = PurePosixPath(str(value))
    if not isinstance(value, str) or not value or p.is_absolute() or ".." in p.parts or "\\" in value:
        raise ValueError(f"{what} must be a relative path inside the release, got {str(value)[:80]!r}")
    return value


def _release(r: dict) -> Release:
    name = r["name"]
    if not (isinstance(name, str) and name and all(c.isalnum() or c in "-_." for c in name) and name[0].isalnum()):
        raise ValueError(f"bad release name {str(name)[:40]!r}")
    archives = tuple(Archive(str(a["url"]), _archive_sha(a), _relative(a["file"], "file"),
                             _relative(a.get("into", "."), "into"), str(a.get("checksum", "")))
                     for a in r.get("archives", []))
    for a in archives:
        if not a.url.startswith(("http://", "https://")) or "/" in a.file:
            raise ValueError(f"{name}: archive {a.url[:80]!r} needs an http(s) URL and a plain file name")
    files = tuple(KnownFile(name, _relative(f["path"], "path"), _sha(f["sha256"]), f.get("split"))
                  for f in r.get("files", []))
    rows = tuple((_relative(k, "rows"), v) for k, v in r.get("rows", {}).items())
    if not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for _, v in rows):
        raise ValueError(f"{name}: rows must map file names to positive whole numbers")
    return Release(name, str(r.get("title", name)), str(r["benchmark"]), archives, _relative(r.get("data_dir", "."),
                   "data_dir"), _relative(r["marker"], "marker"), files, tuple(r.get("splits", ())),
                   str(r.get("obtain", "")), rows)
