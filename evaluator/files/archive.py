"""Unpacking a tar archive that nobody trusts: one hardened extraction for submissions and data releases.

Zip archives (the response-selection corpora are published as zips) get the same checks from their central
directory before anything is written, and each member's bytes are capped at its declared size while they are
copied (:func:`_extract_zip`). Tar archives are read as one stream, member by member: each header is checked before its member is written
(regular files and folders only, relative paths without ``..``, no duplicate names, a total size and a member
count under fixed limits) and extracted with :mod:`tarfile`'s ``data`` filter as a second guard. Extended headers
(pax, GNU long names) are capped before :mod:`tarfile` reads their payloads into memory, and GNU sparse members
are refused, so a small archive cannot claim gigabytes of header.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from dialeval.core.errors import UsageError
from dialeval.files.read import env_bytes, open_input

ARCHIVE_SUFFIXES = (".tgz", ".tar.gz", ".tar")
ARCHIVE_LIMIT_ENV = "DIALEVAL_MAX_ARCHIVE_BYTES"
DEFAULT_MAX_ARCHIVE_BYTES = 1024**3
MAX_ARCHIVE_BYTES: int | None = None
"""Refuse archives that expand past this. None: ``$DIALEVAL_MAX_ARCHIVE_BYTES``, else 1 GiB."""
MAX_ARCHIVE_MEMBERS = 10_000
MAX_HEADER_BYTES = 64 * 1024
"""Largest pax or GNU long-name header payload read (real ones hold a path and a few numbers)."""
MAX_CHAINED_HEADERS = 8
"""Extended headers allowed in a row before a member (tarfile handles each chain by recursion)."""


def archive_limit() -> int:
    if MAX_ARCHIVE_BYTES is not None:
        return MAX_ARCHIVE_BYTES
    return env_bytes(ARCHIVE_LIMIT_ENV, DEFAULT_MAX_ARCHIVE_BYTES)


class _Capped:
    """A read-only stream that refuses to deliver more than ``limit`` bytes (headers and padding included)."""

    def __init__(self, raw, limit: int, shown: Path):
        self.raw, self.limit, self.shown, self.count = raw, limit, shown, 0

    def read(self, n: int = -1) -> bytes:
        if n is None or n < 0:
            n = self.limit + 1 - self.count
        data = self.raw.read(n)
        self.count += len(data)
        if self.count > self.limit:
            raise UsageError(f"{self.shown}: expands past {self.limit} bytes (set {ARCHIVE_LIMIT_ENV} to allow more)")
        return data


def _decompressed(f, shown: Path):
    """The tar stream inside ``f`` (gzip, bzip2, xz or none), recognised by its first bytes."""
    head = f.read(6)
    f.seek(0)
    if head.startswith(b"\x1f\x8b"):
        import gzip

        return gzip.GzipFile(fileobj=f, mode="rb")
    if head.startswith(b"BZh"):
        import bz2

        return bz2.BZ2File(f, "rb")
    if head.startswith(b"\xfd7zXZ\x00"):
        import lzma

        return lzma.LZMAFile(f, "rb")
    return f


def _safe_tarinfo(shown: Path):
    import tarfile

    class SafeTarInfo(tarfile.TarInfo):
        """TarInfo that checks an extended header's size before tarfile reads its payload into memory."""

        def _chain(self, tf) -> None:
            n = getattr(tf, "_dialeval_chain", 0) + 1
            tf._dialeval_chain = n
            if n > MAX_CHAINED_HEADERS:
                raise UsageError(f"{shown}: more than {MAX_CHAINED_HEADERS} extended headers in a row; "
                                 "refusing to unpack")
            if self.size > MAX_HEADER_BYTES:
                raise UsageError(f"{shown}: an extended (pax or long-name) header of {self.size} bytes, "
                                 f"over the limit of {MAX_HEADER_BYTES}; refusing to unpack")

        def _proc_gnulong(self, tf):
            self._chain(tf)
            return super()._proc_gnulong(tf)

        def _proc_pax(self, tf):
            self._chain(tf)
            return super()._proc_pax(tf)

        def _proc_builtin(self, tf):
            tf._dialeval_chain = 0
            return super()._proc_builtin(tf)

        def _proc_sparse(self, tf):
            raise UsageError(f"{shown}: member {self.name!r} is a GNU sparse file; "
                             "only regular files and folders are accepted")

        def _proc_gnusparse_00(self, next, pax_headers, buf):
            raise UsageError(f"{self.name!r}: GNU sparse members are not accepted")

        _proc_gnusparse_01 = _proc_gnusparse_10 = lambda self, *a: self._proc_gnusparse_00(None, None, None)

    return SafeTarInfo


def safe_extract(archive: Path, dest: Path, shown: Path | None = None, limit: int | None = None,
                 zip_ok: bool = False) -> None:
    """Stream the archive: check each member's header, then extract it; the first bad member refuses all.

    ``limit`` bounds the unpacked bytes (default :func:`archive_limit`; published data releases are larger);
    ``zip_ok``: a zip is unpacked too (data releases; a submission is a tar)."""
    import lzma
    import tarfile  # only archives need it (keeps plain-file scoring start-up short)
    import zlib

    shown = shown or archive
    limit = archive_limit() if limit is None else limit
    with open_input(archive, what="a .tgz archive", shown=str(shown)) as inp:
        f = inp.file
        if zip_ok and f.read(4) == b"PK\x03\x04":
            f.seek(0)
            return _extract_zip(f, dest, shown, limit)
        f.seek(0)
        bad = (tarfile.TarError, EOFError, OSError, zlib.error, lzma.LZMAError, ValueError)
        try:
            # Headers and block padding add to the members' sizes; past that slack the stream is hostile.
            stream = _Capped(_decompressed(f, shown), limit + 64 * MAX_ARCHIVE_MEMBERS * 1024, shown)
            tf = tarfile.open(fileobj=stream, mode="r|", tarinfo=_safe_tarinfo(shown))
        except UsageError:
            raise
        except bad as e:
            raise UsageError(f"{shown}: not a readable tar/tgz archive ({_damage(e)})") from None
        with tf:
            total = 0
            names: set[str] = set()
            try:
                for count, m in enumerate(tf, 1):
                    if count > MAX_ARCHIVE_MEMBERS:
                        raise UsageError(f"{shown}: more than {MAX_ARCHIVE_MEMBERS} members; refusing to unpack")
                    _check_member(shown, m)
                    key = m.name.rstrip("/")
                    if key in names and not m.isdir():
                        raise UsageError(f"{shown}: member {m.name!r} appears twice; refusing to unpack")
                    names.add(key)
                    total += m.size
                    if total > limit:
                        raise UsageError(f"{shown}: expands past {limit} bytes (set {ARCHIVE_LIMIT_ENV} to allow more)")
                    if _skipped_member(m.name):
                        continue
                    try:
                        tf.extract(m, dest, set_attrs=False, filter="data")
                    except tarfile.FilterError as e:
                        raise UsageError(f"{shown}: member {m.name!r} refused ({_one_line(e)})") from None
                # The end marker must end the archive: anything but zeros after it is damage (tarfile
                # stops quietly at an unreadable header). Reading to the end also checks the gzip CRC.
                while True:
                    rest = stream.read(1 << 20)
                    if not rest:
                        break
                    if rest.count(0) != len(rest):
                        raise UsageError(f"{shown}: corrupt archive (unreadable data after member {count})")
            except UsageError:
                raise
            except bad as e:
                raise UsageError(f"{shown}: corrupt archive ({_damage(e)})") from None


def _extract_zip(f, dest: Path, shown: Path, limit: int) -> None:
    """A zip archive: every member checked from the central directory first (no links, no special files, relative
    paths without ``..``, no duplicates, the member count and total size), then copied with its bytes capped."""
    import stat
    import zipfile
    import zlib

    try:
        zf = zipfile.ZipFile(f)
        infos = zf.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as e:
        raise UsageError(f"{shown}: not a readable zip archive ({_damage(e)})") from None
    if len(infos) > MAX_ARCHIVE_MEMBERS:
        raise UsageError(f"{shown}: more than {MAX_ARCHIVE_MEMBERS} members; refusing to unpack")
    names: set[str] = set()
    total = 0
    for i in infos:
        mode = i.external_attr >> 16
        kind = "dir" if i.is_dir() else "sym" if stat.S_ISLNK(mode) else \
            "file" if stat.S_IFMT(mode) in (0, stat.S_IFREG) else "other"  # no type bits: DOS-made, a file
        _check_member(shown, _ZipMember(i.filename.rstrip("/") or i.filename, kind, i.file_size))
        if i.filename in names:
            raise UsageError(f"{shown}: member {i.filename!r} appears twice; refusing to unpack")
        names.add(i.filename)
        total += i.file_size
        if total > limit:
            raise UsageError(f"{shown}: expands past {limit} bytes (set {ARCHIVE_LIMIT_ENV} to allow more)")
    with zf:
        for i in infos:
            target = dest / i.filename
            if i.is_dir() or _skipped_member(i.filename):
                if i.is_dir():
                    target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                with zf.open(i) as src, open(target, "xb") as out:
                    copied = 0
                    while chunk := src.read(1 << 20):
                        copied += len(chunk)
                        if copied > i.file_size:  # a member longer than its header says: a zip bomb
                            raise UsageError(f"{shown}: member {i.filename!r} is longer than it declares")
                        out.write(chunk)
            except UsageError:
                raise
            except (zipfile.BadZipFile, OSError, ValueError, RuntimeError, EOFError, zlib.error) as e:  # CRC, encryption
                raise UsageError(f"{shown}: corrupt archive at member {i.filename!r} ({_damage(e)})") from None


class _ZipMember:
    """A zip entry in the shape :func:`_check_member` reads (name, size, and its kind)."""

    def __init__(self, name: str, kind: str, size: int):
        self.name, self.kind, self.size = name, kind, size

    def issym(self) -> bool:
        return self.kind == "sym"

    def islnk(self) -> bool:
        return False

    def isfile(self) -> bool:
        return self.kind == "file"

    def isdir(self) -> bool:
        return self.kind == "dir"


def _skipped_member(name: str) -> bool:
    """macOS tar's AppleDouble files (``._x``) and ``__MACOSX/``: metadata, never results."""
    parts = PurePosixPath(name).parts
    return any(p == "__MACOSX" for p in parts) or (bool(parts) and parts[-1].startswith("._"))


def _damage(e: BaseException) -> str:
    """What is wrong with an archive that cannot be read, in our words: tarfile's, gzip's and zlib's own ("Compressed
    file ended before the end-of-stream marker was reached", "Error -3 while decompressing data") are theirs."""
    import tarfile

    if isinstance(e, EOFError):
        return "it ends early: truncated?"
    if isinstance(e, tarfile.ReadError):
        return "the file is empty" if "empty" in str(e) else "no tar member header where one should be"
    if "encrypted" in str(e):
        return "a member is encrypted"
    if "not a zip file" in str(e):
        return "no zip central directory at its end: truncated or not a zip"
    if "CRC" in str(e) or "length" in str(e).lower():
        return "its checksum does not match its content: damaged"
    return "its compressed data is damaged"


def _one_line(e: BaseException) -> str:
    """tarfile's 'r:*' errors span several lines (one per compression tried): keep messages to one line."""
    return " ".join(str(e).split())[:200]


def _check_member(archive: Path, m) -> None:
    name = m.name
    if m.issym() or m.islnk():
        raise UsageError(f"{archive}: member {name!r} is a link; links are not accepted")
    if not (m.isfile() or m.isdir()):
        raise UsageError(f"{archive}: member {name!r} is not a regular file or folder (device, FIFO, ...)")
    pp = PurePosixPath(name)
    if pp.is_absolute() or name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        raise UsageError(f"{archive}: member {name!r} has an absolute path")
    if ".." in pp.parts or "\\" in name:
        raise UsageError(f"{archive}: member {name!r} points outside the archive")
    if m.size < 0:
        raise UsageError(f"{archive}: member {name!r} has a negative size")
