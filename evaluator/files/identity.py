"""Which data produced the numbers: the data identity a report carries (a short content hash of the files used,
per split, and the published release they are), below ``results/`` so that reports name it without importing
the benchmarks."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from dialeval.core.errors import UsageError


@dataclass
class DataIdentity:
    """Which data produced the numbers: a short content hash of the test files and keys actually used."""

    digest: str  # 8 hex digits, blake2b over (name, content digest) of every file used, sorted
    location: str
    files: list[str]
    embedded_default: bool = False
    sample: bool = False  # dialeval's constructed sample data (a folder with sample.json)
    split_digests: dict[str, str] = field(default_factory=dict)  # the same hash over each split's files alone
    release: str | None = None  # the known release every file used matches, "modified", or None (unknown data)
    split_releases: dict[str, str | None] = field(default_factory=dict)  # the same per split
    modified: list[dict] = field(default_factory=list)  # files whose name is a release's but content is not
    # the simulator's parameters (generator, version, seed) when the data were simulated (simulator.json beside
    # the splits, or the embedded default), else None: the leaderboard says "simulated (seed …)" from it
    simulated: dict | None = None

    def label(self, split: str) -> str:
        """The signature's ``data`` field: ``tst1#3f9a2c1b`` (a split's own files) or ``all#…`` (every file used),
        led by the release the files are (``dstc6/tst1#…``) or ``modified/`` when a published file was changed."""
        release = self.split_releases.get(split, self.release) if split != "all" else self.release
        head = f"{release}/" if release else ""
        return f"{head}{split}#{self.split_digests.get(split, self.digest)}"

    def to_json(self) -> dict:
        return {"hash": self.digest, "location": self.location, "files": self.files,
                "splits": dict(self.split_digests), "embedded_default": self.embedded_default,
                "sample": self.sample, "release": self.release, "split_releases": dict(self.split_releases),
                "modified": list(self.modified), "simulated": self.simulated}

    def warnings(self) -> list[str]:
        """Which files differ from the published release and what that means for the numbers: a line per file,
        or one line when many do (every file of a split re-made: a different data set under published names)."""
        tail = "these numbers are not comparable with published ones"
        if len(self.modified) <= MAX_MODIFIED_LINES:
            return [f"data: {m['file']} differs from the published {m['release']} release (sha256 {m['sha256'][:12]}, "
                    f"published {m['expected'][:12]}): {tail}" for m in self.modified]
        names = ", ".join(m["file"] for m in self.modified[:2])
        releases = " / ".join(sorted({m["release"] for m in self.modified}))
        return [f"data: {len(self.modified)} files carry published {releases} names with other content ({names}, "
                f"...; all in the JSON report): not the published release; {tail}"]


MAX_MODIFIED_LINES = 3
SIMULATOR_MARK = "simulator.json"
"""Written by the dialog simulator beside the splits it generates: such data is simulated, never a release copy."""
SAMPLE_MARK = "sample.json"
"""In every folder of dialeval's sample data (``submissions/samples/<benchmark>/``): constructed data, never a
release copy, even where its files carry a release's names."""


def file_digest(path: Path) -> str:
    """Content digest of a data file (hex; the index cache's digest, computed once per process per file)."""
    from dialeval.files import cache

    d = cache.digest_of(path)
    if d is None:
        raise UsageError(f"{path}: cannot be read")
    return d


def data_identity(files: list[Path], location: Path | str, embedded_default: bool = False,
                  splits: dict[str, list[Path]] | None = None) -> DataIdentity:
    """Short hash (blake2b, 4 bytes) over the names and content digests of the data files actually used, and the
    known release they are (:mod:`dialeval.files.releases`); ``splits`` gives each split's own files.

    The content digest is the index cache's sha256, taken once per process per file (by the reader that parsed
    it, or here), which is also what the release registry lists: naming the release reads nothing again. The
    embedded default challenge is simulated: it is never matched against published releases.
    """
    digests = {p: file_digest(p) for p in files}
    for split_files in (splits or {}).values():
        for p in split_files:
            if p not in digests:
                digests[p] = file_digest(p)
    ident = DataIdentity(_short_hash(files, digests), location_label(location),
                         [p.name for p in sorted(files, key=_name)], embedded_default)
    if splits:
        ident.split_digests = {s: _short_hash(fs, digests) for s, fs in splits.items()}
    ident.sample = (Path(location) / SAMPLE_MARK).is_file()
    mark = Path(location) / SIMULATOR_MARK
    if mark.is_file():
        ident.simulated = simulator_params(mark)
    elif embedded_default:
        ident.simulated = {"generator": "dialeval-simulator"}
    if embedded_default or ident.sample or not digests or ident.simulated is not None:
        return ident
    from dialeval.files import cache
    from dialeval.files.releases import registry

    if cache.DIGEST != "sha256":  # the registry lists sha256: a different cache digest cannot name a release
        return ident
    reg = registry()
    whole = reg.identify((p.name, digests[p]) for p in files)
    ident.release = whole.release
    ident.modified = [{"file": c.name, "release": c.release, "sha256": c.sha256, "expected": c.expected}
                      for c in whole.modified]
    for s, fs in (splits or {}).items():
        ident.split_releases[s] = reg.identify((p.name, digests[p]) for p in fs).release
    return ident


RELEASES_FOLDER = "releases"
"""Fetched releases live in ``<cache root>/releases/<name>`` (``dialeval data fetch``)."""


def location_label(location: Path | str) -> str:
    """Where the data came from, as reports and the leaderboard record it: ``babi-dialog`` for a fetched release
    (``babi-dialog/sub`` for a folder inside it), ``sample:babi`` for dialeval's sample data, ``cache:NAME`` for
    other data in dialeval's cache (the embedded default challenge), else the path as given (a relative path stays
    relative). The cache and the installed package sit under a user's home or a machine's prefix: their absolute
    path would make the same run's report differ between users and machines, and expose a private folder; the
    content is identified by the hashes beside it."""
    from dialeval.core.resources import samples_dir
    from dialeval.files import cache

    given = Path(location)
    try:
        where = given.resolve()
    except (OSError, RuntimeError):  # a link loop: not one of ours, said as given
        return str(location)
    for prefix, root in (("", cache.cache_root() / RELEASES_FOLDER), ("sample:", samples_dir()),
                         ("cache:", cache.cache_root())):
        try:
            inside = where.relative_to(root.resolve())
        except (ValueError, OSError, RuntimeError):
            continue
        if inside.parts:
            return prefix + inside.as_posix()
    return str(location)


def simulator_params(mark: Path) -> dict:
    """The generator, its version and the seeds from a simulator.json (what a page needs to say how the data
    were made); ``{"generator": "dialeval-simulator"}`` when the file cannot be read as such."""
    import json

    from dialeval.files.read import decode_utf8, read_bytes

    try:
        params = json.loads(decode_utf8(read_bytes(mark, what="a simulator.json file", limit=64 * 1024), str(mark)))
    except (UsageError, ValueError):
        params = None
    if not isinstance(params, dict):
        return {"generator": "dialeval-simulator"}
    keep = {k: params[k] for k in ("generator", "version", "seed", "kb_seed")
            if isinstance(params.get(k), str | int) and not isinstance(params.get(k), bool)}
    return {"generator": "dialeval-simulator", **keep}


def _name(p: Path) -> str:
    return p.name


def texts_hash(sha256s: list[str]) -> str:
    """The short hash (blake2b, 4 bytes, as :class:`DataIdentity`'s) of text files given by their contents'
    sha256 alone, in any order: references read by line, whose names mean nothing (the same texts under another
    name are the same data) and whose order changes no number (a hypothesis takes the max or mean over them)."""
    h = hashlib.blake2b(digest_size=4)
    for d in sorted(sha256s):
        h.update(d.encode() + b"\0")
    return h.hexdigest()


def _short_hash(files: list[Path], digests: dict[Path, str]) -> str:
    h = hashlib.blake2b(digest_size=4)
    for p in sorted(files, key=_name):
        h.update(p.name.encode() + b"\0" + digests[p].encode() + b"\0")
    return h.hexdigest()
