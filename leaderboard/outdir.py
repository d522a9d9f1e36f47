"""Folders that organizer commands write as a whole (the site), and what they may never replace.

A command that writes a folder builds it beside the target and then swaps it in, so the old folder's files
are gone once the new one is in place. That is only safe when the old folder is one the command made
itself: :func:`check_out_folder` allows an absent or empty folder, or one that holds the command's marker
file and nothing else the command would not write. Everything else is refused with one line (exit 2): the
current folder or one holding it, the registry's folder or one holding it, a folder holding other files
(a runs folder, a team's submission, a home folder). :func:`replace_folder` swaps the new folder in
(``renameat2(RENAME_EXCHANGE)`` on Linux: the target always exists; elsewhere two renames) and makes it
readable as the user's umask says (``mkdtemp`` creates 0700, which a web server running as another user
cannot serve).
"""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

from dialeval.core.errors import UsageError

SITE_MARKER = ".dialeval-site"
# Every name a site build writes at the top of its folder: a marked folder holding anything else is refused,
# so a file an organizer put there by hand is never deleted by the next build.
SITE_NAMES = re.compile(r"^(\.dialeval-site|index\.html|static|(board|challenge)-[^/]+\.(html|csv|json)|team-\d+\.html"
                        r"|dialeval-[^/]+-py3-none-any\.whl)$")  # the wheel a challenge page links


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


def check_out_folder(out: str | Path, *, marker: str = SITE_MARKER, names: re.Pattern = SITE_NAMES,
                     protect: dict[str, str | Path | None] | None = None, option: str = "--out") -> None:
    """Refuse (:class:`UsageError`, one line) an output folder that replacing could destroy inputs in.

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
        raise UsageError(f"{shown}: cannot use it ({(e.strerror or 'I/O error').lower()})") from None
    if st is not None and not out.is_dir():
        raise UsageError(f"{shown}: is a file; give a folder")
    # a folder is swapped in by renaming: it needs a name of its own (checked last for an existing folder, so
    # "." over the registry says so)
    bad_name = UsageError(f"{shown}: give the folder by its own name (it is replaced as a whole), not {str(out)!r}")
    if st is None:
        if out.name in ("", ".", ".."):
            raise bad_name
        return  # a new folder
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
        raise UsageError(f"{shown}: cannot list it ({(e.strerror or 'I/O error').lower()})") from None
    if not kids:
        return
    foreign = [k for k in kids if not names.match(k)]
    # a folder made by an earlier build: its marker, or (builds before the marker existed) an index.html,
    # and nothing else
    if foreign or not (marker in kids or "index.html" in kids):
        what = f"holds {foreign[0][:60]!r}" if foreign else "holds files"
        raise UsageError(f"{shown}: {what} and is not an earlier site (a folder a build made); the output folder "
                         "is replaced as a whole, give a new or empty folder")


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


def check_hidden_splits(hidden: list[str] | set[str], known: set[str], option: str = "--hidden-splits",
                        where: str = "the boards") -> None:
    """Every hidden split must be a split of the boards, spelled exactly: a typo would publish the real one."""
    for s in sorted(hidden):
        if s in known:
            continue
        near = [k for k in sorted(known) if k.lower() == s.lower()]
        hint = f"; did you mean {near[0]!r}?" if near else ""
        shown = s if len(s) <= 40 else s[:40] + "..."
        raise UsageError(f"{option}: {shown!r} is not a split of {where} ({'they have' if where == 'the boards' else 'it has'}: "
                         f"{', '.join(sorted(known)) or 'none'}){hint}; nothing was written")


def hidden_by_board(hidden: list[str] | set[str], board_splits: dict[str, set[str]],
                    option: str = "--hidden-splits") -> dict[str, set[str]]:
    """Each board's hidden splits, checked board by board (:class:`UsageError`, one line, before anything is
    written): ``SPLIT`` hides a split on every board and must be a split of each of them; ``BOARD:SPLIT`` hides
    it on that board only. A split that exists on one board but is misspelled for another would publish the
    other board's real split, so a bare name missing from any board is refused."""
    out: dict[str, set[str]] = {b: set() for b in board_splits}
    for entry in sorted(set(hidden)):
        board, sep, split = entry.rpartition(":")
        if sep and board:
            if board not in board_splits:
                shown = board if len(board) <= 40 else board[:40] + "..."
                raise UsageError(f"{option}: no board {shown!r} (have: {', '.join(sorted(board_splits))}); "
                                 "nothing was written")
            check_hidden_splits({split}, board_splits[board], option, where=f"board {board!r}")
            out[board].add(split)
            continue
        check_hidden_splits({entry}, {s for splits in board_splits.values() for s in splits}, option)
        for b, splits in sorted(board_splits.items()):
            if entry not in splits:
                raise UsageError(f"{option}: {entry!r} is not a split of board {b!r} (it has: "
                                 f"{', '.join(sorted(splits)) or 'none'}); write BOARD:SPLIT to hide a split on "
                                 "one board only; nothing was written")
            out[b].add(entry)
    return out
