"""Reading a submission: one result JSON, a directory in the official layout, a ``.tgz`` of one, or ``-``.

Official layout: ``<root>/<split>/<test file stem>.answers.json`` (five files per split). A directory
that holds ``*.answers.json`` files directly is taken as one split's folder. Only regular files are
read: a FIFO or a device given as the submission is refused before it is opened for reading, and links
inside a directory submission are refused (a link could point at the answer key). macOS debris
(``__MACOSX/``, AppleDouble ``._*`` files, ``.DS_Store``) and hidden folders are ignored.

Archives are read as one stream, member by member: each header is checked before its member is written
(regular files and folders only, relative paths without ``..``, no duplicate names, a total size and a
member count under fixed limits) and extracted with :mod:`tarfile`'s ``data`` filter as a second guard,
into a private temporary directory that is removed afterwards. Extended headers (pax, GNU long names)
are capped before :mod:`tarfile` reads their payloads into memory, and GNU sparse members are refused,
so a small archive cannot claim gigabytes of header. ``-`` reads the submission from standard input
(a result JSON, or a tar/tgz recognised by its first bytes) into the same private directory.
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from dialeval.core.errors import UsageError
from dialeval.files.read import env_bytes, file_kind, json_limit, open_input, read_bytes, too_large
from dialeval.formats.dstc6 import ANSWERS_SUFFIX
from dialeval.formats.jsonio import sweep_stale

ARCHIVE_LIMIT_ENV = "DIALEVAL_MAX_ARCHIVE_BYTES"
DEFAULT_MAX_ARCHIVE_BYTES = 1024**3
MAX_ARCHIVE_BYTES: int | None = None
"""Refuse archives that expand past this. None: ``$DIALEVAL_MAX_ARCHIVE_BYTES``, else 1 GiB."""
MAX_ARCHIVE_MEMBERS = 10_000
MAX_HEADER_BYTES = 64 * 1024
"""Largest pax or GNU long-name header payload read (real ones hold a path and a few numbers)."""
MAX_CHAINED_HEADERS = 8
"""Extended headers allowed in a row before a member (tarfile handles each chain by recursion)."""
ARCHIVE_SUFFIXES = (".tgz", ".tar.gz", ".tar")
IGNORED_NAMES = ("__MACOSX", ".DS_Store", "Thumbs.db")
STDIN = "-"


def archive_limit() -> int:
    if MAX_ARCHIVE_BYTES is not None:
        return MAX_ARCHIVE_BYTES
    return env_bytes(ARCHIVE_LIMIT_ENV, DEFAULT_MAX_ARCHIVE_BYTES)


@dataclass
class SubmittedFile:
    """One result file of a submission. ``split``/``stem`` are known for the directory layout only."""

    name: str  # shown in messages, relative to the submission (never a private temp path)
    path: Path
    split: str | None = None
    stem: str | None = None  # test-file stem this answers ("dialog-task1API-...-tst1000")

    def read_bytes(self) -> bytes:
        return read_bytes(self.path, what="a result JSON file", shown=self.name)


@dataclass
class Submission:
    source: Path  # the file to hash: the submission itself, or stdin's private copy
    kind: str  # "file" | "directory" | "archive"
    files: list[SubmittedFile]
    _tmp: str | None = None
    shown: str | None = None  # how messages name the submission ("-" for standard input)

    def close(self) -> None:
        if self._tmp:
            release_private_dir(Path(self._tmp))
            self._tmp = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def splits(self) -> list[str]:
        return sorted({f.split for f in self.files if f.split})


def open_submission(path: str | Path) -> Submission:
    """Open a submission of any supported kind (use as a context manager to clean up archives)."""
    if str(path) == STDIN:
        return _from_stdin()
    p = Path(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise UsageError(f"{p}: no such file or directory") from None
    except OSError as e:
        raise UsageError(f"{p}: cannot read: {e.strerror or e}") from None
    if stat.S_ISDIR(st.st_mode):
        return Submission(p, "directory", _scan_root(p, p))
    if not stat.S_ISREG(st.st_mode):
        raise UsageError(f"{p}: not a regular file ({file_kind(st.st_mode)}); give a result JSON, a directory "
                         "or a .tgz")
    if p.name.lower().endswith(ARCHIVE_SUFFIXES):
        return _open_archive(p, p)
    return Submission(p, "file", [SubmittedFile(p.name, p)])


def _open_archive(archive: Path, shown: Path, tmp: Path | None = None) -> Submission:
    tmp = tmp or make_private_dir("sub-")
    try:
        dest = tmp / "x"
        dest.mkdir()
        _safe_extract(archive, dest, shown)
        files = _scan_root(dest, shown)
    except BaseException:
        release_private_dir(tmp)
        raise
    return Submission(archive, "archive", files, str(tmp), str(shown))


# ---- private temporary folders --------------------------------------------------------------------------
def _uid() -> str:
    return str(os.getuid()) if hasattr(os, "getuid") else "user"


def make_private_dir(prefix: str) -> Path:
    """A fresh folder under ``$TMPDIR/dialeval-<uid>/`` (0700, ours); stale ones of killed runs are swept."""
    base = Path(tempfile.gettempdir())
    root = base / f"dialeval-{_uid()}"
    sweep_stale(base, "dialeval-sub-*")  # left by earlier versions
    try:
        os.mkdir(root, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return Path(tempfile.mkdtemp(prefix=f"dialeval-{prefix}"))
    st = os.lstat(root)
    if not stat.S_ISDIR(st.st_mode) or (hasattr(os, "getuid") and st.st_uid != os.getuid()) or st.st_mode & 0o077:
        # another user's (or a link): never put a submission there
        return Path(tempfile.mkdtemp(prefix=f"dialeval-{prefix}"))
    sweep_stale(root)
    for _ in range(5):  # a concurrent run may remove the (empty) root between mkdir and mkdtemp
        try:
            return Path(tempfile.mkdtemp(prefix=prefix, dir=root))
        except FileNotFoundError:
            os.makedirs(root, 0o700, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f"dialeval-{prefix}"))


def release_private_dir(tmp: Path) -> None:
    shutil.rmtree(tmp, ignore_errors=True)
    if tmp.parent.name == f"dialeval-{_uid()}":
        try:
            tmp.parent.rmdir()  # only when empty: other runs may be using it
        except OSError:
            pass


# ---- standard input -----------------------------------------------------------------------------------------
def _from_stdin() -> Submission:
    stream = sys.stdin.buffer if sys.stdin is not None else None
    if stream is None:
        raise UsageError("-: standard input is closed")
    if stream.isatty():
        raise UsageError("-: reads the submission from standard input, which is a terminal (pipe a file into it)")
    tmp = make_private_dir("stdin-")
    try:
        head = stream.read(512)
        is_archive = head.startswith((b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00")) or head[257:262] == b"ustar"
        limit = archive_limit() if is_archive else json_limit()
        target = tmp / ("stdin.tgz" if is_archive else "stdin.json")
        total = len(head)
        with open(target, "wb") as out:
            out.write(head)
            while True:
                block = stream.read(1 << 20)
                if not block:
                    break
                total += len(block)
                if total > limit:
                    env = ARCHIVE_LIMIT_ENV if is_archive else "DIALEVAL_MAX_JSON_BYTES"
                    raise UsageError(f"-: standard input is larger than the limit of {limit} bytes (set {env} to "
                                     "allow more)")
                out.write(block)
        if is_archive:
            return _open_archive(target, Path(STDIN), tmp)
    except BaseException:
        release_private_dir(tmp)
        raise
    return Submission(target, "file", [SubmittedFile("<stdin>", target)], str(tmp), STDIN)


# ---- directories ------------------------------------------------------------------------------------------
def _ignored(name: str) -> bool:
    """macOS and Windows debris, and hidden entries: never part of a submission."""
    return name in IGNORED_NAMES or name.startswith(".")


def _entries(d: Path, display_root: Path, shown: Path) -> list[os.DirEntry]:
    """The entries of ``d`` that count, sorted; a link among them refuses the whole submission."""
    try:
        with os.scandir(d) as it:
            entries = sorted((e for e in it if not _ignored(e.name)), key=lambda e: e.name)
    except OSError as e:
        raise UsageError(f"{shown}: cannot read folder {d.name}: {e.strerror or e}") from None
    for e in entries:
        if e.is_symlink():
            rel = Path(e.path).relative_to(display_root)
            raise UsageError(f"{shown}: {rel} is a symbolic link; links are not accepted in a submission")
    return entries


def _is_wrapper(d: Path, shown: Path) -> bool:
    """A folder holding folders and no JSON file (``submission/tst1/...``): a wrapper around the layout,
    not a split's folder (which holds the result files themselves)."""
    entries = _entries(d, d, shown)
    return (any(e.is_dir(follow_symlinks=False) for e in entries)
            and not any(e.name.endswith(".json") for e in entries))


def _scan_root(root: Path, shown: Path) -> list[SubmittedFile]:
    """The result files under a submission's root, the same for a folder and for an unpacked archive.

    One rule for both forms, so that the same content gets the same problems: a root whose only entry is a
    folder of folders (``submission/tst1/...``, what ``tar czf x.tgz submission`` packs) is unwrapped once,
    and names in messages are relative to the root used. No result file at all is not an error here: the
    benchmark reports it (``no-result-file``, the submission's fault) for each split it scores.
    """
    entries = _entries(root, root, shown)
    if len(entries) == 1 and entries[0].is_dir(follow_symlinks=False) and _is_wrapper(Path(entries[0].path), shown):
        root = Path(entries[0].path)
    return _scan_directory(root, root, shown)


def _scan_directory(root: Path, display_root: Path, shown: Path) -> list[SubmittedFile]:
    files: list[SubmittedFile] = []
    top = _entries(root, display_root, shown)
    if any(e.name.endswith(ANSWERS_SUFFIX) for e in top):
        for e in top:
            if e.name.endswith(".json"):
                files.append(_submitted(e, display_root, None, shown))
    for sub in top:
        if sub.is_dir(follow_symlinks=False):
            for e in _entries(Path(sub.path), display_root, shown):
                if e.name.endswith(".json"):
                    files.append(_submitted(e, display_root, sub.name, shown))
    return files


def _submitted(e: os.DirEntry, display_root: Path, split: str | None, shown: Path) -> SubmittedFile:
    f = Path(e.path)
    rel = str(f.relative_to(display_root))
    st = e.stat(follow_symlinks=False)
    if not stat.S_ISREG(st.st_mode):
        raise UsageError(f"{shown}: {rel} is not a regular file ({file_kind(st.st_mode)})")
    limit = json_limit()
    if st.st_size > limit:  # before anything reads or hashes it
        raise too_large(f"{shown}: {rel}", st.st_size, limit)
    stem = e.name[: -len(ANSWERS_SUFFIX)] if e.name.endswith(ANSWERS_SUFFIX) else None
    return SubmittedFile(rel, f, split, stem)


# ---- archives ---------------------------------------------------------------------------------------------
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


def _safe_extract(archive: Path, dest: Path, shown: Path | None = None, limit: int | None = None) -> None:
    """Stream the archive: check each member's header, then extract it; the first bad member refuses all.

    ``limit`` bounds the unpacked bytes (default :func:`archive_limit`; published data releases are larger)."""
    import tarfile  # only archives need it (keeps plain-file scoring start-up short)
    import zlib

    shown = shown or archive
    limit = archive_limit() if limit is None else limit
    with open_input(archive, what="a .tgz archive", shown=str(shown)) as inp:
        f = inp.file
        bad = (tarfile.TarError, EOFError, OSError, zlib.error, ValueError)
        try:
            # Headers and block padding add to the members' sizes; past that slack the stream is hostile.
            stream = _Capped(_decompressed(f, shown), limit + 64 * MAX_ARCHIVE_MEMBERS * 1024, shown)
            tf = tarfile.open(fileobj=stream, mode="r|", tarinfo=_safe_tarinfo(shown))
        except UsageError:
            raise
        except bad as e:
            raise UsageError(f"{shown}: not a readable tar/tgz archive ({_one_line(e)})") from None
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
                raise UsageError(f"{shown}: corrupt archive ({_one_line(e)})") from None


def _skipped_member(name: str) -> bool:
    """macOS tar's AppleDouble files (``._x``) and ``__MACOSX/``: metadata, never results."""
    parts = PurePosixPath(name).parts
    return any(p == "__MACOSX" for p in parts) or (bool(parts) and parts[-1].startswith("._"))


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
