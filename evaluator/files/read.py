"""The one input layer: every file dialeval reads is opened here, and nowhere else.

Submissions of every benchmark, data and answer-key files, score matrices, hypothesis and reference texts,
word vectors, team files and cache entries all come through :func:`open_input` (or one of the helpers
built on it), so every reader gets the same guards and the same wording:

* **Only regular files.** The path is opened without blocking and checked with ``fstat`` on the open
  descriptor before a byte is read, so a FIFO, a device (``/dev/zero``) or a socket is refused at once,
  and a file swapped for something else between a check and the open is still caught. ``-`` (standard
  input) is accepted only where a caller says so (``stdin=True``). ``follow_links=False`` refuses a
  symbolic link (cache entries, members of a submission folder).
* **Bounded reads.** A whole-file read is refused above its limit before anything is read, and a file
  that grows while it is read is cut at the limit. Line-oriented text is streamed, so memory follows the
  longest line, not the file.
* **What the bytes are.** :func:`sniff` recognises a byte-order mark, UTF-16, gzip, ZIP, bzip2, xz, zstd,
  tar, a NumPy ``.npy`` file and binary data (NUL bytes) from the first bytes, with the problem codes the
  DSTC6 path has always used (``bad-encoding``, ``wrong-file-type``, ``empty-file``).
* **One wording.** An OS error becomes one line: ``<file>: no such file``, ``<file>: permission denied``,
  ``<file>: not a regular file (a FIFO)``, ... (:func:`os_error`), never Python's own wording.

Two kinds of failure, so that every caller splits submission faults from usage faults the same way:
:class:`~dialeval.core.errors.UsageError` for the file as a file (missing, special, unreadable, too large:
exit 2), and :class:`~dialeval.core.errors.UnreadableInput` (a UsageError with a problem ``code``) for content
that is not what the format needs. A reader of a *submission* turns the latter into a
:class:`~dialeval.core.problems.Problem` (exit 1); a reader of organizer data lets it through (exit 2).
"""

from __future__ import annotations

import codecs
import hashlib
import io
import os
import stat
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from dialeval.core.errors import UnreadableInput, UsageError

STDIN = "-"

_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_BINARY = getattr(os, "O_BINARY", 0)


# ---- limits ---------------------------------------------------------------------------------------------
JSON_LIMIT_ENV = "DIALEVAL_MAX_JSON_BYTES"
DEFAULT_MAX_JSON_BYTES = 2 * 1024**3
TEXT_LIMIT_ENV = "DIALEVAL_MAX_TEXT_BYTES"
DEFAULT_MAX_TEXT_BYTES = 4 * 1024**3
"""Whole-file reads of text data (FB dialog files, entity lists, KBs): the largest public file is a few
hundred MB. Streamed files (CSV, JSON lines, hypothesis/reference texts, vectors) need no whole-file bound:
memory follows their longest line."""


def env_bytes(name: str, default: int) -> int:
    """A byte count from environment variable ``name`` (digits, ``_`` allowed); a bad value is a usage error."""
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return default
    s = raw.strip().replace("_", "")
    if not (s.isascii() and s.isdigit()) or int(s) < 1:
        shown = raw if len(raw) <= 40 else raw[:40] + "..."
        raise UsageError(f"{name}={shown!r} is not a size: give a whole number of bytes, e.g. {default}")
    return int(s)


JSON_LIMIT: int | None = None
"""Tests may set this; None: ``$DIALEVAL_MAX_JSON_BYTES``, else 2 GiB."""


def json_limit() -> int:
    """The largest JSON document read whole (submissions, test files, keys, team files)."""
    return JSON_LIMIT if JSON_LIMIT is not None else env_bytes(JSON_LIMIT_ENV, DEFAULT_MAX_JSON_BYTES)


def text_limit() -> int:
    """The largest text data file read whole."""
    return env_bytes(TEXT_LIMIT_ENV, DEFAULT_MAX_TEXT_BYTES)


def _limit_hint(limit: int) -> str:
    if limit == json_limit():
        return f" (set {JSON_LIMIT_ENV} to allow more)"
    if limit == text_limit():
        return f" (set {TEXT_LIMIT_ENV} to allow more)"
    return ""


# ---- one wording for every OS error ----------------------------------------------------------------------
def file_kind(mode: int) -> str:
    """A plain name for a file type (for messages)."""
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "not a regular file"


def os_error(name: str, e: OSError, what: str = "a file") -> UsageError:
    """The one-line message for an OS error on input ``name`` (``what`` it should have been)."""
    if isinstance(e, FileNotFoundError):
        return UsageError(f"{name}: no such file")
    if isinstance(e, IsADirectoryError):
        return UsageError(f"{name}: is a directory, expected {what}")
    if isinstance(e, NotADirectoryError):
        return UsageError(f"{name}: a parent of it is a file, not a folder")
    if isinstance(e, PermissionError):
        return UsageError(f"{name}: permission denied")
    import errno

    if e.errno == errno.ELOOP:
        return UsageError(f"{name}: is a symbolic link; refusing to follow it")
    if e.errno == errno.ENAMETOOLONG:
        return UsageError(f"{name}: the file name is too long")
    return UsageError(f"{name}: cannot read: {(e.strerror or 'I/O error').lower()}")


def memo_key(path: Path, missing: str | None = None) -> tuple[str, int, int]:
    """``(path, size, mtime_ns)``: the key a parsed file is memoised under, so an edited file is read again.

    A missing file is one usage line, ``missing`` saying what the file should have been; other OS errors take
    the shared wording (:func:`os_error`)."""
    try:
        st = path.stat()
    except FileNotFoundError as e:
        if missing is None:
            raise os_error(str(path), e) from None
        raise UsageError(f"{path}: no such file ({missing})") from None
    except OSError as e:
        raise os_error(str(path), e) from None
    return str(path), st.st_size, st.st_mtime_ns


def not_a_folder(path, what: str) -> UsageError:
    """``what`` (``challenge directory``) at ``path`` is needed as a folder and is not one: missing, or a file."""
    import os

    found = "is not a folder" if os.path.lexists(path) else "does not exist"
    return UsageError(f"{what} {path} {found}")


def not_regular(name: str, mode: int, what: str = "a file") -> UsageError:
    if stat.S_ISDIR(mode):
        return UsageError(f"{name}: is a directory, expected {what}")
    return UsageError(f"{name}: not a regular file ({file_kind(mode)}); expected {what}")


def too_large(name: str, size: int | None, limit: int) -> UsageError:
    size_text = f"{size} bytes is" if size is not None else "is"
    return UsageError(f"{name}: {size_text} larger than the limit of {limit} bytes{_limit_hint(limit)}")


# ---- opening -----------------------------------------------------------------------------------------------
@dataclass
class InputFile:
    """An open, checked input: ``file`` (binary, positioned at 0), its ``size`` and the ``name`` messages use."""

    file: BinaryIO
    size: int | None  # None for standard input
    name: str
    path: Path | None  # None for standard input

    def read(self, limit: int | None = None) -> bytes:
        """The rest of the file, at most ``limit`` bytes (a larger file is refused, never cut silently)."""
        return _bounded_read(self.file, self.size, limit, self.name)


def check_regular(path: str | Path, *, what: str = "a file", shown: str | None = None,
                  follow_links: bool = True) -> os.stat_result:
    """Stat ``path`` and refuse anything but a regular file; for libraries that must be handed a path.

    numpy's memory maps and gensim's loaders open files themselves; this is the check they get first.
    (A file swapped between this check and their open is the library's read; callers that can pass an open
    file do, through :func:`open_input`.)
    """
    name = shown or str(path)
    try:
        st = os.stat(path) if follow_links else os.lstat(path)
    except OSError as e:
        raise os_error(name, e, what) from None
    if not follow_links and stat.S_ISLNK(st.st_mode):
        raise UsageError(f"{name}: is a symbolic link; refusing to follow it")
    if not stat.S_ISREG(st.st_mode):
        raise not_regular(name, st.st_mode, what)
    return st


@contextmanager
def open_input(path: str | Path, *, what: str = "a file", shown: str | None = None, limit: int | None = None,
               stdin: bool = False, follow_links: bool = True) -> Iterator[InputFile]:
    """Open an input for reading in binary; every check happens before the first byte is read.

    ``limit`` refuses a larger file up front (None: no bound, for streamed reads); ``stdin`` lets ``-``
    mean standard input; ``follow_links=False`` refuses a symbolic link (the last path component).
    """
    if stdin and str(path) == STDIN:
        yield InputFile(sys.stdin.buffer, None, shown or "-", None)
        return
    p = Path(path)
    name = shown or str(p)
    flags = os.O_RDONLY | _NONBLOCK | _CLOEXEC | _BINARY | (0 if follow_links else _NOFOLLOW)
    try:
        fd = os.open(p, flags)
    except OSError as e:
        raise os_error(name, e, what) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise not_regular(name, st.st_mode, what)
        if limit is not None and st.st_size > limit:
            raise too_large(name, st.st_size, limit)
        if _NONBLOCK:  # regular files never block; reads after this are plain
            os.set_blocking(fd, True)
        f = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with f:
        yield InputFile(f, st.st_size, name, p)


def _bounded_read(f: BinaryIO, size: int | None, limit: int | None, name: str) -> bytes:
    try:
        if size is not None:
            # read(n) allocates n bytes up front: ask for the size stat gave, then look for growth
            data = f.read(size)
            more = f.read(1)
            if more:
                rest = f.read(-1 if limit is None else max(0, limit - len(data)))
                data = b"".join([data, more, rest])
        else:
            data = f.read(-1 if limit is None else limit + 1)
    except OSError as e:
        raise os_error(name, e) from None
    if limit is not None and len(data) > limit:
        raise too_large(name, None, limit)
    return data


def spool_stdin(dest: Path, *, what: str, limit: int | None = None) -> None:
    """Copy standard input into the new file ``dest`` (a private temporary file), for readers that read their
    input more than once; bounded like a file (``limit``: the text limit when None), a terminal refused."""
    limit = text_limit() if limit is None else limit
    if sys.stdin is None:
        raise UsageError("-: standard input is closed")
    if sys.stdin.isatty():
        raise UsageError(f"-: reads {what} from standard input, which is a terminal (pipe a file into it)")
    total = 0
    with open_input(STDIN, what=what, stdin=True) as f, open(dest, "xb") as out:
        while True:
            try:
                block = f.file.read(1 << 20)
            except OSError as e:
                raise os_error(STDIN, e, what) from None
            if not block:
                return
            total += len(block)
            if total > limit:
                raise too_large(STDIN, None, limit)
            out.write(block)


def read_bytes(path: str | Path, *, what: str = "a file", shown: str | None = None, limit: int | None = None,
               stdin: bool = False, follow_links: bool = True) -> bytes:
    """A whole input's bytes (``limit``: the JSON limit when None)."""
    limit = json_limit() if limit is None else limit
    with open_input(path, what=what, shown=shown, limit=limit, stdin=stdin, follow_links=follow_links) as f:
        return f.read(limit)


# ---- what the bytes are ----------------------------------------------------------------------------------------
_MAGIC = (
    (b"\x1f\x8b", "looks gzip-compressed: decompress it first"),
    (b"PK\x03\x04", "looks like a ZIP archive"),
    (b"PK\x05\x06", "looks like an empty ZIP archive"),
    (b"BZh", "looks bzip2-compressed: decompress it first"),
    (b"\xfd7zXZ\x00", "looks xz-compressed: decompress it first"),
    (b"\x28\xb5\x2f\xfd", "looks zstd-compressed: decompress it first"),
    (b"\x93NUMPY", "looks like a NumPy .npy file"),
    (b"\x80\x02", "looks like a Python pickle"),
    (b"\x80\x03", "looks like a Python pickle"),
    (b"\x80\x04", "looks like a Python pickle"),
    (b"\x80\x05", "looks like a Python pickle"),
)
SNIFF_BYTES = 512
"""How much of a file :func:`sniff` looks at."""


def sniff(head: bytes, *, expect: str = "UTF-8 text", bom_ok: bool = False, npy_ok: bool = False
          ) -> UnreadableInput | None:
    """What is wrong with a file that should hold ``expect``, judged from its first bytes; None if nothing.

    Compressed files and archives are ``wrong-file-type``; a byte-order mark (unless ``bom_ok``) and UTF-16
    are ``bad-encoding``; NUL bytes in the first :data:`SNIFF_BYTES` mean binary data (``wrong-file-type``).
    The returned error has no file name: callers raise it through :func:`named`.
    """
    head = head[:SNIFF_BYTES]
    for magic, words in _MAGIC:
        if head.startswith(magic) and not (npy_ok and magic == b"\x93NUMPY"):
            return UnreadableInput("", "wrong-file-type", f"{words}; expected {expect}")
    if len(head) > 262 and head[257:262] == b"ustar":
        return UnreadableInput("", "wrong-file-type", f"looks like a tar archive; expected {expect}")
    if head.startswith(b"\xef\xbb\xbf") and not bom_ok:
        return UnreadableInput("", "bad-encoding", "starts with a UTF-8 BOM (byte-order mark): save it as "
                               "UTF-8 without a BOM", 1, 1)
    if head.startswith((b"\xff\xfe", b"\xfe\xff")) or (len(head) >= 2 and (head[0] == 0) != (head[1] == 0)):
        return UnreadableInput("", "bad-encoding", f"looks UTF-16 encoded; expected {expect}", 1, 1)
    if b"\0" in head:
        line, col = line_col(head, head.index(b"\0"))
        return UnreadableInput("", "wrong-file-type", f"looks like binary data (a NUL byte at line {line} "
                               f"column {col}); expected {expect}", line, col)
    return None


def named(e: UnreadableInput, name: str) -> UnreadableInput:
    """``e`` with the file name in its message."""
    return UnreadableInput(name, e.code, e.reason, e.line, e.column)


def line_col(raw: bytes, pos: int) -> tuple[int, int]:
    """1-based line and column (in characters) of byte offset ``pos`` of UTF-8 bytes; no copy of a large input."""
    pos = max(0, min(pos, len(raw)))
    line_start = raw.rfind(b"\n", 0, pos) + 1
    col = 1
    view = memoryview(raw)
    for off in range(line_start, pos, 1 << 20):
        chunk = bytes(view[off:min(pos, off + (1 << 20))])
        col += len(chunk.translate(None, _UTF8_CONTINUATION))
    return raw.count(b"\n", 0, pos) + 1, col


_UTF8_CONTINUATION = bytes(range(0x80, 0xC0))


def first_bad_utf8(raw: bytes) -> int:
    """Offset of the first byte that is not valid UTF-8 (decoded in chunks: no full-size text copy)."""
    dec = codecs.getincrementaldecoder("utf-8")()
    step = 1 << 20
    for off in range(0, len(raw), step):
        held = len(dec.getstate()[0])  # the start of a sequence held back from the previous chunk
        try:
            dec.decode(raw[off:off + step], final=off + step >= len(raw))
        except UnicodeDecodeError as e:
            return max(0, off - held + e.start)
    return 0


def decode_utf8(raw: bytes, name: str, *, bom_ok: bool = True, expect: str = "UTF-8 text") -> str:
    """UTF-8 bytes as text (a leading BOM dropped when ``bom_ok``); any other encoding is ``bad-encoding``."""
    bad = sniff(raw, expect=expect, bom_ok=bom_ok)
    if bad is not None:
        raise named(bad, name)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        at = first_bad_utf8(raw)
        line, col = line_col(raw, at)
        raise UnreadableInput(name, "bad-encoding", f"not UTF-8 text (byte {at}, line {line} column {col})",
                              line, col) from None
    return text.removeprefix("\ufeff")


def read_text(path: str | Path, *, what: str = "a UTF-8 text file", shown: str | None = None,
              limit: int | None = None, bom_ok: bool = True, stdin: bool = False) -> str:
    """A whole UTF-8 text file (``limit``: the text limit when None); see :func:`decode_utf8`."""
    limit = text_limit() if limit is None else limit
    with open_input(path, what=what, shown=shown, limit=limit, stdin=stdin) as f:
        raw = f.read(limit)
        name = f.name
    return decode_utf8(raw, name, bom_ok=bom_ok)


def iter_byte_lines(path: str | Path, *, what: str = "a text file", shown: str | None = None,
                    stdin: bool = False, expect: str = "UTF-8 text", bom_ok: bool = False,
                    ) -> Iterator[tuple[int, bytes]]:
    """``(1-based line number, line)`` as bytes without ``\\n`` / ``\\r\\n``, streamed (memory: one line).

    The first bytes are sniffed (:func:`sniff`) before the first line is given out; a final newline does not
    make an extra line. A leading BOM is dropped when ``bom_ok``.
    """
    with open_input(path, what=what, shown=shown, stdin=stdin) as f:
        try:
            head = f.file.peek(SNIFF_BYTES)[:SNIFF_BYTES] if hasattr(f.file, "peek") else b""
        except OSError as e:
            raise os_error(f.name, e, what) from None
        bad = sniff(head, expect=expect, bom_ok=bom_ok)
        if bad is not None:
            raise named(bad, f.name)
        first = True
        lineno = 0
        try:
            for line in f.file:
                lineno += 1
                if first:
                    first = False
                    if bom_ok and line.startswith(b"\xef\xbb\xbf"):
                        line = line[3:]
                if line.endswith(b"\n"):
                    line = line[:-1]
                    if line.endswith(b"\r"):
                        line = line[:-1]
                yield lineno, line
        except OSError as e:
            raise os_error(f.name, e, what) from None


def iter_text_lines(path: str | Path, *, what: str = "a UTF-8 text file", shown: str | None = None,
                    stdin: bool = False, bom_ok: bool = True) -> Iterator[tuple[int, str]]:
    """Like :func:`iter_byte_lines`, each line decoded as UTF-8 (``bad-encoding`` names the line)."""
    name = shown or str(path)
    for lineno, raw in iter_byte_lines(path, what=what, shown=shown, stdin=stdin, bom_ok=bom_ok):
        try:
            yield lineno, raw.decode("utf-8")
        except UnicodeDecodeError:
            raise line_not_utf8(name, lineno, raw) from None


def organiser_fields(path: str | Path, *, what: str, maxsplit: int = -1) -> Iterator[tuple[int, list[str]]]:
    """``(line number, tab-separated fields)`` of each non-blank line of an organiser's text file (answer keys, a
    candidate pool): what makes it unreadable is a usage error (exit 2) naming the file."""
    try:
        for lineno, line in iter_text_lines(path, what=what):
            if line.strip():
                yield lineno, line.split("\t", maxsplit)
    except UnreadableInput as e:
        raise UsageError(f"{path}: {e.reason}") from None


def line_not_utf8(name: str, lineno: int, raw: bytes) -> UnreadableInput:
    """The ``bad-encoding`` error of line ``lineno`` of input ``name``, whose bytes ``raw`` are not UTF-8
    (for readers that decode lines of :func:`iter_byte_lines` a block at a time)."""
    try:
        raw.decode("utf-8")
        at = len(raw)
    except UnicodeDecodeError as e:
        at = e.start
    col = len(raw[:at].translate(None, _UTF8_CONTINUATION)) + 1
    return UnreadableInput(name, "bad-encoding", f"not UTF-8 text at line {lineno} column {col}", lineno, col)


# ---- identity -----------------------------------------------------------------------------------------------------
def file_sha256(path: str | Path, *, shown: str | None = None) -> str:
    """sha256 (hex) of a regular file, read in chunks: the identity of submissions and published files."""
    return file_digest(path, "sha256", shown=shown)


def file_digest(path: str | Path, algorithm: str, *, shown: str | None = None) -> str:
    """``hashlib`` digest (hex) of a regular file, read through :func:`open_input` in chunks."""
    with open_input(path, shown=shown) as f:
        try:
            return hashlib.file_digest(f.file, algorithm).hexdigest()
        except OSError as e:
            raise os_error(f.name, e) from None


# ---- streamed lines with a per-line bound (added for AirDialogue's JSON lines) ----------------------------------
def iter_bounded_lines(path: str | Path, max_line: int, *, what: str = "a text file", shown: str | None = None,
                       expect: str = "UTF-8 text", bom_ok: bool = False) -> Iterator[tuple[int, bytes | None, int]]:
    """``(1-based line number, line, length)`` like :func:`iter_byte_lines`, but a line longer than ``max_line``
    bytes (newline excluded) comes out as ``(n, None, length)`` and is never held whole: memory stays within
    ``max_line`` plus one MiB whatever the file's longest line. The caller says what an overlong line means
    (a submission's problem, a data error)."""
    with open_input(path, what=what, shown=shown) as f:
        # A 1 MiB buffer over the same descriptor (nothing has been read through the default 8 KB one yet):
        # lines of a few KB then cost one read() per hundred lines, not one or two each.
        buffered = io.BufferedReader(f.file.raw, 1 << 20)
        try:
            head = buffered.peek(SNIFF_BYTES)[:SNIFF_BYTES]
        except OSError as e:
            raise os_error(f.name, e, what) from None
        bad = sniff(head, expect=expect, bom_ok=bom_ok)
        if bad is not None:
            raise named(bad, f.name)
        readline = buffered.readline
        lineno = 0
        try:
            while True:
                line = readline(max_line + 2)  # + "\r\n": a line of exactly max_line bytes still fits
                if not line:
                    return
                lineno += 1
                if lineno == 1 and bom_ok and line.startswith(b"\xef\xbb\xbf"):
                    line = line[3:]
                length = len(line)
                if not line.endswith(b"\n"):
                    while length > max_line:  # skip the rest of an overlong line in bounded pieces
                        more = readline(1 << 20)
                        if not more:
                            break
                        length += len(more)
                        if more.endswith(b"\n"):
                            length -= 1
                            break
                else:
                    line = line[:-1]
                    length -= 1
                    if line.endswith(b"\r"):
                        line = line[:-1]
                        length -= 1
                yield lineno, (line if length <= max_line else None), length
        except OSError as e:
            raise os_error(f.name, e, what) from None


def entries_sha256(entries: Iterable[tuple[str, str | Path]]) -> str:
    """sha256 (hex) of a folder's files as ``name NUL content NUL`` in the order given: the identity of a
    submission folder (names are the caller's relative names; each file through :func:`open_input`, never a
    link, read in chunks)."""
    h = hashlib.sha256()
    for name, path in entries:
        h.update(name.encode("utf-8", "surrogateescape") + b"\0")
        with open_input(path, shown=name, follow_links=False) as inp:
            try:
                for block in iter(lambda fh=inp.file: fh.read(1 << 20), b""):
                    h.update(block)
            except OSError as e:
                raise os_error(inp.name, e) from None
        h.update(b"\0")
    return h.hexdigest()
