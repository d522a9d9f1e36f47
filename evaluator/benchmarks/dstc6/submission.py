"""Reading a submission: one result JSON, a directory in the official layout, a ``.tgz`` of one, or ``-``.

Official layout: ``<root>/<split>/<test file stem>.answers.json`` (five files per split). A directory
that holds ``*.answers.json`` files directly is taken as one split's folder. Only regular files are
read: a FIFO or a device given as the submission is refused before it is opened for reading, and links
inside a directory submission are refused (a link could point at the answer key). macOS debris
(``__MACOSX/``, AppleDouble ``._*`` files, ``.DS_Store``) and hidden folders are ignored.

Archives are unpacked by the one hardened extraction (:mod:`dialeval.files.archive`) into a private
temporary directory that is removed afterwards. ``-`` reads the submission from standard input
(a result JSON, or a tar/tgz recognised by its first bytes) into the same private directory.
"""

from __future__ import annotations

import os
import stat
import sys
from dataclasses import dataclass
from pathlib import Path

from dialeval.core.errors import UsageError
from dialeval.files.archive import ARCHIVE_LIMIT_ENV, ARCHIVE_SUFFIXES, archive_limit, safe_extract
from dialeval.files.read import file_kind, json_limit, read_bytes, too_large
from dialeval.files.write import private_temp_dir, release_private_temp_dir
from dialeval.formats.dstc6 import ANSWERS_SUFFIX

IGNORED_NAMES = ("__MACOSX", ".DS_Store", "Thumbs.db")
STDIN = "-"


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
            release_private_temp_dir(Path(self._tmp))
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
    tmp = tmp or private_temp_dir("sub-")
    try:
        dest = tmp / "x"
        dest.mkdir()
        safe_extract(archive, dest, shown)
        files = _scan_root(dest, shown)
    except BaseException:
        release_private_temp_dir(tmp)
        raise
    return Submission(archive, "archive", files, str(tmp), str(shown))


# ---- private temporary folders --------------------------------------------------------------------------
def _from_stdin() -> Submission:
    stream = sys.stdin.buffer if sys.stdin is not None else None
    if stream is None:
        raise UsageError("-: standard input is closed")
    if stream.isatty():
        raise UsageError("-: reads the submission from standard input, which is a terminal (pipe a file into it)")
    tmp = private_temp_dir("stdin-")
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
        release_private_temp_dir(tmp)
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
