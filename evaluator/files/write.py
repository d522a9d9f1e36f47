"""Writing outputs safely: the one rule for every file or folder dialeval writes.

Writing (:func:`atomic_writer`) is atomic (temp file + rename), so an interrupted run never leaves a
half-written file, and safe for outputs a user names: ``-`` is standard output; a device or FIFO
(``/dev/stdout``) is written through instead of being replaced by a regular file; a symbolic link to a
file updates that file; an input of the run (:func:`protect`) is never overwritten; a missing parent
folder is a usage error unless the caller asks for it to be created (:func:`check_output` refuses a bad
target before any work). Temp files live in a private folder beside the target (:func:`private_dir`,
removed after use), and stale ones left by a killed run are swept on the next write.
"""

from __future__ import annotations

import errno
import io
import os
import shutil
import stat
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from dialeval.core.errors import UsageError

STALE_SECONDS = 24 * 3600  # temp files of a killed run older than this are removed


# ---- inputs an output must not overwrite -------------------------------------------------------------------
_PROTECTED: dict[tuple[int, int], str] = {}
"""Protected regular files by identity (st_dev, st_ino): the same file whatever path or link names it."""
_PROTECTED_DIRS: dict[tuple[int, int], str] = {}
"""Protected folders by identity: every file under them is protected. Checking a target costs one stat per
folder above it, whatever the number of files the folder holds (a data folder may hold hundreds of
thousands; listing them would cost time and, past any cap, leave files unprotected)."""


def protect(path: str | Path, what: str = "the submission") -> None:
    """Refuse, for the rest of the process, to write any output onto ``path`` (the same file, by identity).

    A directory protects every file under it (an output named like one of its result files is refused too),
    by the folder's own identity: nothing is listed. (A hard link to such a file from outside the folder
    has another parent and is not recognised; protect such a file by name.)
    """
    try:
        st = os.stat(path)
    except OSError:
        return
    if stat.S_ISDIR(st.st_mode):
        _PROTECTED_DIRS[(st.st_dev, st.st_ino)] = what
    elif stat.S_ISREG(st.st_mode):
        _PROTECTED[(st.st_dev, st.st_ino)] = what


def unprotect_all() -> None:
    _PROTECTED.clear()
    _PROTECTED_DIRS.clear()


def protected_as(path: str | Path, st: os.stat_result) -> str | None:
    """What protected input the existing file ``path`` (stat ``st``, links followed) is, or None."""
    what = _PROTECTED.get((st.st_dev, st.st_ino))
    if what or not _PROTECTED_DIRS:
        return what
    folder = Path(os.path.realpath(path)).parent  # the folders the file really sits in, links resolved
    for d in (folder, *folder.parents):
        try:
            ds = os.stat(d)
        except OSError:
            continue
        what = _PROTECTED_DIRS.get((ds.st_dev, ds.st_ino))
        if what:
            return what
    return None


def _write_target(path: Path) -> os.stat_result | None:
    """What a write to ``path`` would reach (links followed), or None when nothing is there yet; refused when it
    is an input of this run or a folder. One rule for :func:`check_output` (before any work) and
    :func:`atomic_writer` (again at write time: the file system may have changed meanwhile)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        raise UsageError(f"{path}: a parent of it is a file, not a folder") from None
    except OSError as e:
        raise UsageError(f"{path}: cannot write: {(e.strerror or 'I/O error').lower()}") from None
    what = protected_as(path, st)
    if what:
        raise UsageError(f"{path}: is {what}, an input of this run; refusing to overwrite it")
    if stat.S_ISDIR(st.st_mode):
        raise UsageError(f"{path}: is a directory; give a file name")
    return st


def refuse_shared_outputs(outputs: dict[str, str | Path | None]) -> None:
    """Refuse two outputs of one run that reach the same file (option name -> path; None and ``-`` skipped): the
    second write would silently replace the first. Compared as the file system sees them (``x`` and ``./x``, a
    link and its target, a hard link), not as spelled."""
    seen: dict[object, str] = {}
    for flag, path in outputs.items():
        if path is None or str(path) == "-":
            continue
        try:
            st = os.stat(path)
            keys = [(st.st_dev, st.st_ino), os.path.realpath(path)]
        except OSError:  # not there yet: its folder and name say where it will be
            keys = [os.path.realpath(path)]
        other = next((seen[k] for k in keys if k in seen), None)
        if other is not None:
            raise UsageError(f"{other} and {flag} name the same file ({path}); give each its own file")
        seen.update(dict.fromkeys(keys, flag))


def not_standard_output(ctx, param, value):
    """A click callback for an output that is a folder (or files named after it): ``-`` is refused, never made a
    folder named "-" (everywhere else ``-`` means standard output, and a command's "wrote -/..." would mislead)."""
    if value is not None and str(value) == "-":
        raise UsageError(f"{param.opts[0]} -: this output is a folder of files, which standard output cannot take; "
                         "for a folder named '-', write ./-")
    return value


def _stdout_closed() -> UsageError:
    """``-`` as an output of a command started with standard output closed (``>&-``: ``sys.stdout`` is None)."""
    return UsageError("-: standard output is closed; give a file name")


def check_output(path: str | Path, *, parents: bool = False) -> None:
    """Refuse an output target before any work: an input of the run, a folder, a missing parent folder.

    :func:`atomic_writer` checks the same again when it writes (the file system may change meanwhile).
    """
    if str(path) == "-":
        if sys.stdout is None:
            raise _stdout_closed()
        return
    path = Path(path)
    if _write_target(path) is not None:
        return
    _new_target_parent(path, parents)


def _new_target_parent(path: Path, parents: bool) -> bool:
    """For a target that does not exist yet: refuse a dangling link, a parent that is not a folder, and (unless
    ``parents``) a missing parent; True when the parent is missing and may be created."""
    if path.is_symlink():
        raise UsageError(f"{path}: is a symbolic link to a missing file; refusing to create its target")
    parent = path.parent
    if parent.is_dir():
        return False
    if parent.exists() or os.path.lexists(parent):
        raise UsageError(f"{path}: {parent} is not a folder")
    if not parents:
        raise UsageError(f"{path}: the folder {parent} does not exist (create it first)")
    return True


# ---- writing ---------------------------------------------------------------------------------------------
def _uid() -> str:
    return str(os.getuid()) if hasattr(os, "getuid") else "user"


def _owned(st: os.stat_result) -> bool:
    return not hasattr(os, "getuid") or st.st_uid == os.getuid()


def sweep_stale(folder: Path, pattern: str = "*") -> None:
    """Remove entries of ``folder`` matching ``pattern`` that this user owns and that are over a day old.

    Links are removed, never followed; anything else is left alone (another user's, or a live run's).
    """
    now = time.time()
    try:
        entries = list(folder.glob(pattern))
    except OSError:
        return
    for e in entries:
        try:
            st = os.lstat(e)
            if not _owned(st) or now - st.st_mtime < STALE_SECONDS:
                continue
            if stat.S_ISDIR(st.st_mode):
                shutil.rmtree(e, ignore_errors=True)
            else:
                os.unlink(e)
        except OSError:
            pass


def private_dir(parent: Path, name: str | None = None) -> Path | None:
    """``parent/<name>`` (default ``.dialeval-tmp-<uid>``), the one kind of private folder dialeval keeps its
    temporary files in: mode 0700, this user's, not a link, created if needed, entries of killed runs swept
    after a day; None when it cannot be had (the caller falls back to a fresh ``mkdtemp``)."""
    d = parent / (name or f".dialeval-tmp-{_uid()}")
    try:
        os.mkdir(d, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return None
    try:
        st = os.lstat(d)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or not _owned(st) or st.st_mode & 0o077:
        return None  # another user's, a link, or readable by others: never put a submission or a report there
    sweep_stale(d)
    return d


def private_temp_dir(prefix: str) -> Path:
    """A fresh folder under ``$TMPDIR/dialeval-<uid>/`` (see :func:`private_dir`), for unpacked submissions."""
    base = Path(tempfile.gettempdir())
    sweep_stale(base, "dialeval-sub-*")  # left by earlier versions
    for _ in range(5):  # a concurrent run may remove the (empty) root between its creation and mkdtemp
        root = private_dir(base, f"dialeval-{_uid()}")
        if root is None:
            break
        try:
            return Path(tempfile.mkdtemp(prefix=prefix, dir=root))
        except FileNotFoundError:
            continue
    return Path(tempfile.mkdtemp(prefix=f"dialeval-{prefix}"))


def release_private_temp_dir(tmp: Path) -> None:
    """Remove a :func:`private_temp_dir` folder, and its root when no other run is using it."""
    shutil.rmtree(tmp, ignore_errors=True)
    if tmp.parent.name == f"dialeval-{_uid()}":
        try:
            tmp.parent.rmdir()  # only when empty: other runs may be using it
        except OSError:
            pass


@contextmanager
def atomic_writer(path: str | Path, mode: str = "wb", *, parents: bool = True):
    """Open ``path`` for writing; the content appears there only if the block succeeds.

    ``-`` writes to standard output; an existing device, FIFO or socket (or a link to one) is written
    through; a link to a regular file updates the file it points to. ``parents=False`` (outputs a user
    named) makes a missing parent folder a usage error instead of creating it.
    """
    text = "b" not in mode
    if str(path) == "-":
        yield from _to_stdout(text)
        return
    path = Path(path)
    st = _write_target(path)
    if st is not None:
        if not stat.S_ISREG(st.st_mode):  # /dev/stdout, a FIFO, /dev/null: write through, never replace
            try:
                with open(path, mode, **({"encoding": "utf-8"} if text else {})) as f:
                    yield f
            except OSError as e:
                raise _write_failed(path, e) from None
            return
        if path.is_symlink():
            path = Path(os.path.realpath(path))
    elif _new_target_parent(path, parents):
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise cannot_create(path, e) from None
    parent = path.parent
    sweep_stale(parent, f".{path.name}.*.tmp")  # left beside the target by earlier versions
    try:
        fd, tmp, tmpdir = _mkstemp(parent, path.name)
    except OSError as e:
        raise cannot_create(path, e) from None
    try:
        # mkstemp creates 0600 files; give the result the permissions a plain open() would (0666 & ~umask).
        os.chmod(tmp, 0o666 & ~_umask())
        try:
            with os.fdopen(fd, mode, **({"encoding": "utf-8"} if text else {})) as f:
                yield f
        except OSError as e:
            raise _write_failed(path, e) from None
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    finally:
        if tmpdir is not None:
            try:
                os.rmdir(tmpdir)  # fails (and stays) while another run writes beside us
            except OSError:
                pass


FULL_DISK = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


def _write_failed(path: Path, e: OSError) -> Exception:
    """A full disk (or quota, or file-size limit) while writing ``path``: one line naming ``path``, never the
    temporary file written first; any other error is raised as it was."""
    if e.errno in FULL_DISK:
        return UsageError(f"{path}: cannot write: {(e.strerror or 'I/O error').lower()}")
    return e


def _mkstemp(parent: Path, name: str) -> tuple[int, str, Path | None]:
    for _ in range(5):  # another run may remove the private folder between our mkdir and mkstemp
        d = private_dir(parent)
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{name[:60]}.", suffix=".tmp", dir=d or parent)
            return fd, tmp, d
        except FileNotFoundError:
            if d is None:
                raise
    fd, tmp = tempfile.mkstemp(prefix=f".{name[:60]}.", suffix=".tmp", dir=parent)
    return fd, tmp, None


def _to_stdout(text: bool):
    if sys.stdout is None:
        raise _stdout_closed()
    sys.stdout.flush()
    buf = sys.stdout.buffer
    try:
        if not text:
            yield _NoClose(buf)
            buf.flush()
            return
        w = io.TextIOWrapper(buf, encoding="utf-8", newline="", write_through=True)
        try:
            yield w
            w.flush()
        finally:
            w.detach()
    except OSError as e:  # `> /dev/full`: the message names the stream, as it would a file
        e.filename = e.filename or "standard output"
        raise


class _NoClose(io.RawIOBase):
    """Standard output as a writable binary file that a ``with`` block does not close."""

    def __init__(self, buf):
        self._buf = buf

    def writable(self):
        return True

    def write(self, b):
        return self._buf.write(b)

    def close(self):
        self._buf.flush()


def atomic_write_bytes(path: str | Path, data: bytes, *, parents: bool = True) -> None:
    """Write ``data`` to ``path`` via :func:`atomic_writer`."""
    with atomic_writer(path, "wb", parents=parents) as f:
        f.write(data)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_text(path: str | Path, text: str, *, parents: bool = True) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), parents=parents)


# ---- output folders ---------------------------------------------------------------------------------------
def cannot_create(out: str | Path, e: OSError) -> UsageError:
    """Making output ``out`` (or the private temporary folder beside it that becomes ``out``) failed: one line that
    names ``out`` in dialeval's words, never the temporary name nor Python's ("[Errno 2] ...")."""
    if isinstance(e, (FileExistsError, NotADirectoryError)):  # mkdir(parents=True) met a file on the way
        return UsageError(f"{out}: a parent of it is a file, not a folder")
    return UsageError(f"{out}: cannot create it: {(e.strerror or 'I/O error').lower()}")


def make_temp_dir(parent: Path, prefix: str) -> Path:
    """A fresh temp dir in ``parent`` with the usual permissions (``mkdtemp`` makes it private, 0700, which
    would leak into the final directory once renamed)."""
    tmp = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o777 & ~umask)
    return tmp
