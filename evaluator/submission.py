"""Reading a submission: one result JSON, a directory in the official layout, or a ``.tgz`` of one.

Official layout: ``<root>/<split>/<test file stem>.answers.json`` (five files per split). A directory
that holds ``*.answers.json`` files directly is taken as one split's folder. Archives are unpacked into a
private temporary directory after every member has been checked: regular files and folders only (no links,
devices or FIFOs), relative paths without ``..``, and a total size and member count under fixed limits, so
a hostile archive is refused before anything is written.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from dialeval.errors import UsageError
from dialeval.formats.dstc6 import ANSWERS_SUFFIX
from dialeval.formats.jsonio import load_json_file, read_bytes_checked

MAX_ARCHIVE_BYTES = int(os.environ.get("DIALEVAL_MAX_ARCHIVE_BYTES", str(1024**3)))
MAX_ARCHIVE_MEMBERS = 10_000


@dataclass
class SubmittedFile:
    """One result file of a submission. ``split``/``stem`` are known for the directory layout only."""

    name: str  # shown in messages, relative to the submission
    path: Path
    split: str | None = None
    stem: str | None = None  # test-file stem this answers ("dialog-task1API-...-tst1000")

    def load(self):
        return load_json_file(self.path)

    def read_bytes(self) -> bytes:
        return read_bytes_checked(self.path)


@dataclass
class Submission:
    source: Path
    kind: str  # "file" | "directory" | "archive"
    files: list[SubmittedFile]
    _tmp: str | None = None

    def close(self) -> None:
        if self._tmp:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def splits(self) -> list[str]:
        return sorted({f.split for f in self.files if f.split})


def open_submission(path: str | Path) -> Submission:
    """Open a submission of any supported kind (use as a context manager to clean up archives)."""
    p = Path(path)
    if not p.exists():
        raise UsageError(f"{p}: no such file or directory")
    if p.is_dir():
        return Submission(p, "directory", _scan_directory(p))
    name = p.name.lower()
    if name.endswith((".tgz", ".tar.gz", ".tar")):
        tmp = tempfile.mkdtemp(prefix="dialeval-sub-")
        try:
            _safe_extract(p, Path(tmp))
            root = Path(tmp)
            # An archive of a folder ("submission/tst1/...") is accepted like one of its contents.
            entries = [e for e in root.iterdir() if not e.name.startswith(".")]
            if len(entries) == 1 and entries[0].is_dir() and not _has_answers(entries[0]):
                root = entries[0]
            files = _scan_directory(root, display_root=root)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return Submission(p, "archive", files, tmp)
    if not p.is_file():
        raise UsageError(f"{p}: not a regular file")
    return Submission(p, "file", [SubmittedFile(p.name, p)])


def _has_answers(d: Path) -> bool:
    return any(f.name.endswith(ANSWERS_SUFFIX) for f in d.iterdir() if f.is_file())


def _scan_directory(root: Path, display_root: Path | None = None) -> list[SubmittedFile]:
    display_root = display_root or root
    files: list[SubmittedFile] = []
    if _has_answers(root):
        for f in sorted(root.iterdir()):
            if f.is_file() and f.name.endswith(".json"):
                files.append(_submitted(f, display_root, None))
    for sub in sorted(p for p in root.iterdir() if p.is_dir()):
        for f in sorted(sub.iterdir()):
            if f.is_file() and f.name.endswith(".json"):
                files.append(_submitted(f, display_root, sub.name))
    if not files:
        raise UsageError(f"{root}: no result files (expected <split>/<test file stem>.answers.json)")
    return files


def _submitted(f: Path, display_root: Path, split: str | None) -> SubmittedFile:
    stem = f.name[: -len(ANSWERS_SUFFIX)] if f.name.endswith(ANSWERS_SUFFIX) else None
    return SubmittedFile(str(f.relative_to(display_root)), f, split, stem)


def _safe_extract(archive: Path, dest: Path) -> None:
    """Check every member first, then extract; refuse the whole archive on the first bad member."""
    import tarfile  # only archives need it (keeps plain-file scoring start-up short)

    try:
        tf = tarfile.open(archive, "r:*")
    except (tarfile.TarError, OSError, EOFError) as e:
        raise UsageError(f"{archive}: not a readable tar/tgz archive ({_one_line(e)})") from None
    with tf:
        total = 0
        members = []
        try:
            for count, m in enumerate(tf, 1):
                if count > MAX_ARCHIVE_MEMBERS:
                    raise UsageError(f"{archive}: more than {MAX_ARCHIVE_MEMBERS} members; refusing to unpack")
                _check_member(archive, m)
                total += m.size
                if total > MAX_ARCHIVE_BYTES:
                    raise UsageError(
                        f"{archive}: expands past {MAX_ARCHIVE_BYTES} bytes (set DIALEVAL_MAX_ARCHIVE_BYTES to allow more)"
                    )
                members.append(m)
        except (tarfile.TarError, EOFError, OSError) as e:
            raise UsageError(f"{archive}: corrupt archive ({_one_line(e)})") from None
        try:
            for m in members:
                if m.isdir():
                    (dest / m.name).mkdir(parents=True, exist_ok=True)
                    continue
                target = dest / m.name
                target.parent.mkdir(parents=True, exist_ok=True)
                src = tf.extractfile(m)
                if src is None:  # pragma: no cover - regular files always have data
                    continue
                with src, open(target, "wb") as out:
                    shutil.copyfileobj(src, out)
        except (tarfile.TarError, EOFError, OSError) as e:
            raise UsageError(f"{archive}: corrupt archive ({_one_line(e)})") from None


def _one_line(e: BaseException) -> str:
    """tarfile's 'r:*' errors span several lines (one per compression tried): keep messages to one line."""
    return " ".join(str(e).split())


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
