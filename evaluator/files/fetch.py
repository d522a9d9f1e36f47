"""Fetching a published release: download, check the sha256, unpack through the hardened extractor, place atomically.

The steps, for a release of the registry (:mod:`dialeval.files.releases`) and a folder ``root`` chosen by the
caller (the command line passes the user cache; nothing here knows where that is):

1. Under a file lock ``root/.<name>.lock`` (a second fetch of the same release waits, then finds it installed),
   a private work folder ``root/.<name>.partial-*`` is made; work folders of killed fetches are removed first.
2. Each archive is downloaded by pooch into the work folder and its sha256 checked against the registry **before**
   anything is unpacked; a connection that drops, a stall (``$DIALEVAL_FETCH_TIMEOUT`` seconds, default 60), an
   HTTP error or a wrong hash is one line, and the work folder is removed.
3. Archives are unpacked by the same streaming extractor as submission archives (links, devices, absolute or
   ``..`` paths, oversize headers and members refused before anything is written).
4. The data folder is located (the registry's ``data_dir``, else the folder holding its ``marker`` file), a
   manifest naming the release and its archives' sha256 is written inside the tree, and the tree is renamed to
   ``root/<name>`` in one step. A copy without that manifest is never used, so a killed or partial fetch is
   never mistaken for the release.

It sits beside the benchmark readers because the hardened extractor is the DSTC6 submission reader's.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path, PurePosixPath

from dialeval.core.errors import UsageError
from dialeval.files.releases import Release

FETCH_TIMEOUT_ENV = "DIALEVAL_FETCH_TIMEOUT"
DEFAULT_FETCH_TIMEOUT = 60.0
MANIFEST = ".dialeval-release.json"
LOCK_WAIT_SECONDS = 6 * 3600  # another fetch of the same release may be downloading a large archive
MAX_UNPACKED_BYTES = 64 * 1024**3
"""Unpacked size refused past this (the largest release, Ubuntu v2, unpacks to a few GB)."""
MAX_MANIFEST_BYTES = 1 << 20
_MARKER_DEPTH = 4


def fetch_timeout() -> float:
    """Seconds without data before a download is abandoned: ``$DIALEVAL_FETCH_TIMEOUT``, else 60."""
    raw = os.environ.get(FETCH_TIMEOUT_ENV, "").strip()
    if not raw:
        return DEFAULT_FETCH_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 < value <= 86400:
        raise UsageError(f"{FETCH_TIMEOUT_ENV}={raw[:40]!r} is not a number of seconds (e.g. 60)")
    return value


def no_archive(release: Release) -> str:
    """The one line for a release that cannot be fetched (DSTC6: organizers only)."""
    how = f" ({release.obtain})" if release.obtain else ""
    return (f"release {release.name} has no public archive to fetch{how}: pass your copy's folder with --data DIR; "
            "`dialeval data verify DIR` checks it against the published files")


def installed(release: Release, root: str | Path) -> Path | None:
    """The data folder of a complete fetched copy of ``release`` under ``root``, else None.

    Complete means: ``root/<name>`` holds the manifest a finished fetch writes, naming this release and the
    archives (sha256) the registry lists now. Anything else (no folder, no manifest, other archives) is None.
    """
    from dialeval.files.read import read_bytes

    top = Path(root) / release.name
    manifest = top / MANIFEST
    if not manifest.is_file():
        return None
    try:
        doc = json.loads(read_bytes(manifest, limit=MAX_MANIFEST_BYTES, follow_links=False))
        data_dir = _inside(doc["data_dir"])
        ok = doc["name"] == release.name and sorted(doc["archives"]) == sorted(_listed(a) for a in release.archives)
    except (UsageError, ValueError, KeyError, TypeError):
        return None
    folder = top / data_dir
    return folder if ok and folder.is_dir() else None


def fetch(release: Release, root: str | Path, *, progress=None, timeout: float | None = None,
          say=None) -> tuple[Path, bool]:
    """Fetch ``release`` into ``root/<name>``: ``(data folder, True if downloaded now / False if already there)``.

    ``progress(total_bytes_or_0, archive_name)`` returns a progress object for pooch (``update``, ``reset``,
    ``close``, ``total``) or None; ``say(text)`` receives one-line status messages.
    """
    import filelock

    if not release.archives:
        raise UsageError(no_archive(release))
    timeout = fetch_timeout() if timeout is None else timeout  # a bad setting is refused before any network use
    root = Path(root)
    found = installed(release, root)
    if found is not None:
        return found, False
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"{root}: cannot create the folder ({(e.strerror or 'error').lower()})") from None
    lock = filelock.FileLock(str(root / f".{release.name}.lock"))
    try:
        lock.acquire(timeout=0)
    except filelock.Timeout:
        if say:
            say(f"waiting for another fetch of {release.name} to finish")
        try:
            lock.acquire(timeout=LOCK_WAIT_SECONDS)
        except filelock.Timeout:
            raise UsageError(f"another fetch of {release.name} holds {root / ('.' + release.name + '.lock')} "
                             f"for over {LOCK_WAIT_SECONDS // 3600} h") from None
    try:
        found = installed(release, root)  # the other fetch may have finished while we waited
        if found is not None:
            return found, False
        _sweep(root, release.name)
        work = Path(tempfile.mkdtemp(prefix=f".{release.name}.partial-", dir=root))
        try:
            folder = _fetch_into(release, work, progress, timeout, say)
            top = root / release.name
            if top.exists() or top.is_symlink():  # an incomplete copy (no manifest): set aside, then removed
                aside = Path(tempfile.mkdtemp(prefix=f".{release.name}.partial-", dir=root))
                os.replace(top, aside / "old")
            os.replace(work / "tree", top)
            return top / folder, True
        finally:
            shutil.rmtree(work, ignore_errors=True)
            _sweep(root, release.name)
    finally:
        lock.release()


def _fetch_into(release: Release, work: Path, progress, timeout: float, say) -> str:
    """Download, check and unpack every archive into ``work/tree``; returns the data folder (relative)."""
    from dialeval.files.archive import safe_extract

    downloads = work / "download"
    tree = work / "tree"
    downloads.mkdir()
    tree.mkdir()
    seen = {}
    for a in release.archives:
        if say:
            say(f"downloading {a.url} ({release.name})")
        path = _download(a.url, a.sha256, a.file, downloads, progress, timeout)
        if a.sha256 is None:  # nothing to check against: the hash seen is recorded, and said to be unchecked
            from dialeval.files.read import file_sha256

            seen[a.file] = file_sha256(path)
            if say:
                say(f"{a.file}: NOT verified, no checksum is published ({a.checksum}); sha256 seen {seen[a.file]}, "
                    "recorded in the fetched copy's manifest")
        dest = tree / _inside(a.into)
        dest.mkdir(parents=True, exist_ok=True)
        safe_extract(path, dest, Path(a.file), limit=MAX_UNPACKED_BYTES, zip_ok=True)
        path.unlink()
    folder = _locate(tree, release)
    (tree / MANIFEST).write_text(json.dumps({
        "name": release.name, "benchmark": release.benchmark, "data_dir": folder,
        "archives": [_listed(a) for a in release.archives], "urls": [a.url for a in release.archives],
        "verified": not seen, "seen_sha256": seen,
    }, indent=1) + "\n")
    return folder


def _listed(a) -> str:
    """An archive in a manifest: its published sha256, or the word saying none was published."""
    return a.sha256 or UNPUBLISHED


UNPUBLISHED = "unpublished"


def _download(url: str, sha256: str | None, fname: str, folder: Path, progress, timeout: float) -> Path:
    """One archive via pooch: streamed to a temporary file, hashed, and kept only if the sha256 matches."""
    import logging

    import pooch
    import requests

    pooch.get_logger().setLevel(logging.WARNING)  # our own one-line messages say what happens
    bar = progress(0, fname) if progress else False
    # 64 KiB chunks: pooch's 1 KiB default costs a write and a flush per KiB on multi-GB archives
    downloader = pooch.HTTPDownloader(progressbar=bar, timeout=timeout, chunk_size=1 << 16)
    try:
        out = pooch.retrieve(url, known_hash=f"sha256:{sha256}" if sha256 else None, fname=fname, path=folder, downloader=downloader)
    except requests.exceptions.HTTPError as e:
        status = e.response.status_code if e.response is not None else "error"
        reason = (e.response.reason if e.response is not None else "") or ""
        raise UsageError(f"download of {url} failed: HTTP {status} {reason}".rstrip()) from None
    except requests.exceptions.RequestException as e:
        if _timed_out(e):
            raise UsageError(f"download of {url} failed: no data for {timeout:g} s (timed out; set "
                             f"{FETCH_TIMEOUT_ENV} to wait longer)") from None
        if isinstance(e, requests.exceptions.ChunkedEncodingError):
            raise UsageError(f"download of {url} failed: the connection dropped before the whole archive "
                             "arrived (nothing was kept; run the fetch again)") from None
        raise UsageError(f"download of {url} failed: cannot connect ({_reason(e)})") from None
    except ValueError as e:
        if "hash" in str(e).lower():
            raise UsageError(f"download of {url}: the archive's sha256 is not the published {sha256[:16]}...; "
                             "refused, nothing was unpacked") from None
        raise
    finally:
        if bar:
            bar.close()
    return Path(out)


def _timed_out(e: BaseException) -> bool:
    import requests

    seen = 0
    while e is not None and seen < 8:  # requests wraps urllib3's read timeout in a ConnectionError
        if isinstance(e, requests.exceptions.Timeout) or type(e).__name__ in ("ReadTimeoutError", "TimeoutError",
                                                                                "ConnectTimeoutError"):
            return True
        inner = e.args[0] if e.args and isinstance(e.args[0], BaseException) else None
        e = inner or e.__cause__ or e.__context__
        seen += 1
    return False


def _reason(e: BaseException) -> str:
    """The innermost plain reason (``Connection refused``), without urllib3's object reprs."""
    text = " ".join(str(e).split())
    for word in ("Connection refused", "Name or service not known", "Connection reset", "Network is unreachable",
                 "No route to host", "Remote end closed connection"):
        if word.lower() in text.lower():
            return word.lower()
    return text[:160]


def _inside(rel) -> str:
    p = PurePosixPath(str(rel))
    if not isinstance(rel, str) or p.is_absolute() or ".." in p.parts or "\\" in rel:
        raise ValueError(f"not a relative path: {str(rel)[:80]!r}")
    return str(p)


def _locate(tree: Path, release: Release) -> str:
    """The data folder inside the unpacked tree: ``data_dir`` when its marker is there, else the folder holding
    the marker (the archives' inner layouts are derived, not published)."""
    if (tree / release.data_dir / release.marker).exists():
        return str(PurePosixPath(release.data_dir))
    marker = PurePosixPath(release.marker)
    for dirpath, dirnames, _files in os.walk(tree):
        rel = Path(dirpath).relative_to(tree)
        if len(rel.parts) >= _MARKER_DEPTH:
            dirnames[:] = []
        if (Path(dirpath) / marker).exists():
            return rel.as_posix() or "."
    raise UsageError(f"release {release.name}: the unpacked archive has no {release.marker} (expected under "
                     f"{release.data_dir}/); the registry's layout does not fit this archive")


def _sweep(root: Path, name: str) -> None:
    """Remove the work folders of fetches that were killed (only ever called with the release's lock held)."""
    try:
        entries = list(os.scandir(root))
    except OSError:
        return
    for e in entries:
        if e.name.startswith(f".{name}.partial-") and e.is_dir(follow_symlinks=False):
            shutil.rmtree(e.path, ignore_errors=True)
