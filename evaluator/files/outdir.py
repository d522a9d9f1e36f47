"""Output folders that a command writes as a whole, and which folders it may replace (one rule for every command).

A command that writes a folder builds it beside the target and then swaps it in, so the old folder's files are
gone once the new one is in place. That is only safe when the old folder is one the same command made: the
command leaves a marker file in it. :func:`check_out_folder` allows an absent or empty folder, or one that holds
the command's marker (or, for folders made before markers existed, one of its ``legacy`` files) and nothing the
command would not write. Everything else is refused with one line (exit 2): the current folder or one holding
it, an input (``protect``) or a folder holding one, a folder holding other files (a cache, a runs folder, a
registry, a home folder). :func:`replace_folder` swaps the new folder in (``renameat2(RENAME_EXCHANGE)`` on
Linux: the target always exists; elsewhere two renames); :func:`new_folder_beside` makes the new folder readable
as the user's umask says (``mkdtemp`` creates 0700, which a web server running as another user cannot serve).
:func:`atomic_output_dir` puts the three together for a command with ``--force``.
"""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from dialeval.core.errors import UsageError


@dataclass(frozen=True)
class OutputFolder:
    """What one command writes as a whole: the marker it leaves, every name it writes at the top of the folder,
    and how a folder it made is called in messages."""

    marker: str  # a file the command writes into every folder it makes
    names: re.Pattern  # every top-level name the command writes (the marker included)
    made_by: str  # "an earlier site (a folder a build made)"
    legacy: tuple[str, ...] = ()  # files that mark a folder made before the marker existed
    note: str = "made by dialeval: --force replaces a folder holding this file\n"  # the marker's text

    def made_here(self, kids: list[str]) -> bool:
        """Whether a folder holding ``kids`` (its top-level names) is one this command made."""
        return all(self.names.match(k) for k in kids) and any(k == self.marker or k in self.legacy for k in kids)


def _same(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _holds(folder_st: os.stat_result, path: Path) -> bool:
    """Whether ``path`` (resolved) is the folder of ``folder_st`` or lies under it, by identity."""
    here = Path(os.path.realpath(path))
    for d in (here, *here.parents):
        try:
            if _same(os.stat(d), folder_st):
                return True
        except OSError:
            continue
    return False


def _why(e: OSError) -> str:
    return (e.strerror or "I/O error").lower()


def check_out_folder(out: str | Path, kind: OutputFolder, *, protect: dict[str, str | Path | None] | None = None,
                     option: str = "--out") -> list[str]:
    """Refuse (:class:`UsageError`, one line) an output folder that replacing could destroy anything else in;
    return its top-level names (empty: absent or empty, else an earlier output of ``kind``).

    ``protect`` maps a description ("the registry") to a path that must be neither ``out`` nor under it.
    """
    out = Path(out)
    shown = f"{option} {out}"
    if os.path.realpath(out) == os.path.realpath(os.sep):
        raise UsageError(f"{shown}: give a folder of its own (it is replaced as a whole), not {str(out)!r}")
    if os.path.islink(out):
        raise UsageError(f"{shown}: a symbolic link; give the folder itself")
    try:
        st = os.stat(out)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise UsageError(f"{shown}: cannot use it ({_why(e)})") from None
    if st is not None and not out.is_dir():
        raise UsageError(f"{shown}: is a file; give a folder")
    # a folder is swapped in by renaming: it needs a name of its own (checked last for an existing folder, so
    # "." over the registry says so)
    bad_name = UsageError(f"{shown}: give the folder by its own name (it is replaced as a whole), not {str(out)!r}")
    if st is None:
        if out.name in ("", ".", ".."):
            raise bad_name
        return []  # a new folder
    for what, path in (protect or {}).items():
        if path is not None and os.path.lexists(path) and _holds(st, Path(path)):
            raise UsageError(f"{shown}: holds {what}; the output folder is replaced as a whole, give another folder")
    if _holds(st, Path.cwd()):
        raise UsageError(f"{shown}: is the current folder or holds it; the output folder is replaced as a "
                         "whole, give a folder of its own")
    if out.name in ("", ".", ".."):
        raise bad_name
    try:
        kids = sorted(os.listdir(out))
    except OSError as e:
        raise UsageError(f"{shown}: cannot list it ({_why(e)})") from None
    if kids and not kind.made_here(kids):
        foreign = [k for k in kids if not kind.names.match(k)]
        what = f"holds {foreign[0][:60]!r}" if foreign else "holds files"
        raise UsageError(f"{shown}: {what} and is not {kind.made_by}; the output folder is replaced as a whole, "
                         "give a new or empty folder")
    return kids


def _umask() -> int:
    mask = os.umask(0o022)  # the only portable way to read it; set back at once
    os.umask(mask)
    return mask


def new_folder_beside(out: str | Path, prefix: str = ".site-") -> Path:
    """A new folder next to ``out`` (same file system: the swap is a rename), with the umask's permissions."""
    from dialeval.files.write import cannot_create

    out = Path(out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=prefix, dir=out.parent))
    except OSError as e:
        raise cannot_create(out, e) from None
    os.chmod(tmp, 0o777 & ~_umask())
    return tmp


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically with renameat2(RENAME_EXCHANGE) (Linux); False where it is unavailable."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    return fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0


def replace_folder(new: Path, out: Path) -> None:
    """Put the finished folder ``new`` in place of ``out`` (which must have passed :func:`check_out_folder`)."""
    new, out = Path(new), Path(out)
    if not os.path.lexists(out):
        os.replace(new, out)
        return
    if _exchange(new, out):
        shutil.rmtree(new, ignore_errors=True)  # now the old folder
        return
    old = Path(tempfile.mkdtemp(prefix=".old-", dir=out.parent))  # a unique name: never someone's folder
    os.replace(out, old)  # a folder may replace an empty folder
    os.replace(new, out)
    shutil.rmtree(old, ignore_errors=True)


@contextmanager
def atomic_output_dir(out_dir: str | Path, kind: OutputFolder, force: bool = False, *,
                      protect: dict[str, str | Path | None] | None = None) -> Iterator[Path]:
    """Yield a new folder beside ``out_dir``; on success it gets ``kind``'s marker and replaces ``out_dir`` in one
    swap, on error it vanishes (an interrupted run keeps the old folder).

    ``out_dir`` must pass :func:`check_out_folder`; an earlier output of ``kind`` is replaced only with ``force``.
    """
    out = Path(out_dir)
    if check_out_folder(out, kind, protect=protect) and not force:
        raise UsageError(f"--out {out}: is not empty (it is {kind.made_by}: use --force to replace it)")
    tmp = new_folder_beside(out, prefix=f".{out.name}.tmp-")
    try:
        yield tmp
        (tmp / kind.marker).write_text(kind.note, encoding="utf-8")
        replace_folder(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
