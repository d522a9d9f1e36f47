"""JSON reading and writing shared by every format.

Reading uses msgspec (faster than the standard library, and parsing dominates scoring time); a parse error
is re-diagnosed with the standard library to report ``line:column``. The scorer's hot paths go further and
decode straight into typed structs (:mod:`dialeval.fastpath`). Writing is atomic (temp file + rename), so an interrupted run never
leaves a half-written file behind, and uses the standard library's default separators, which is the
layout of the official DSTC6 files.
"""

from __future__ import annotations

import json
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path

from dialeval.errors import UsageError

try:  # accelerator (a core dependency; the standard library still works without it)
    import msgspec as _msgspec
except ImportError:  # pragma: no cover - exercised when msgspec is absent
    _msgspec = None

MAX_JSON_BYTES = int(os.environ.get("DIALEVAL_MAX_JSON_BYTES", str(2 * 1024**3)))
"""Refuse files above this size before reading them (2 GiB; override with DIALEVAL_MAX_JSON_BYTES)."""


def parse_json_bytes(raw: bytes, name: str):
    """Parse JSON bytes; raise UsageError('name: not valid JSON at line L column C: ...')."""
    if _msgspec is not None:
        try:
            return _msgspec.json.decode(raw)
        except (_msgspec.MsgspecError, ValueError, RecursionError):
            pass  # fall through to the standard library for a line:column diagnosis
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise UsageError(f"{name}: not UTF-8 text (byte {e.start})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise UsageError(f"{name}: not valid JSON at line {e.lineno} column {e.colno}: {e.msg}") from None
    except ValueError as e:  # e.g. an integer literal past Python's digit limit
        raise UsageError(f"{name}: not a readable JSON document ({str(e).split(';')[0]})") from None
    except RecursionError:
        raise UsageError(f"{name}: JSON nested too deeply") from None


def read_bytes_checked(path: str | Path, max_bytes: int | None = None) -> bytes:
    """A file's bytes, with one-line errors for a missing, unreadable or oversized file."""
    path = Path(path)
    limit = MAX_JSON_BYTES if max_bytes is None else max_bytes
    try:
        size = path.stat().st_size
        if not path.is_file():
            raise UsageError(f"{path}: not a regular file")
        if size > limit:
            raise UsageError(f"{path}: {size} bytes is larger than the limit of {limit} bytes")
        return path.read_bytes()
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{path}: is a directory, expected a JSON file") from None
    except PermissionError:
        raise UsageError(f"{path}: permission denied") from None
    except OSError as e:
        raise UsageError(f"{path}: cannot read: {e.strerror or e}") from None


def load_json_file(path: str | Path, max_bytes: int | None = None):
    """Read and parse one JSON file with one-line errors for every failure."""
    return parse_json_bytes(read_bytes_checked(path, max_bytes), str(Path(path)))


@contextmanager
def atomic_writer(path: str | Path, mode: str = "wb"):
    """Open a temp file beside ``path`` for writing; rename it into place only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        # mkstemp creates 0600 files; give the result the permissions a plain open() would (0666 & ~umask).
        os.chmod(tmp, 0o666 & ~_umask())
        with os.fdopen(fd, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as f:
            yield f
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temp file in the same directory and an atomic rename."""
    with atomic_writer(path, "wb") as f:
        f.write(data)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_text(path: str | Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def dump_json_file(path: str | Path, obj) -> None:
    """Write ``obj`` like ``json.dump(obj, f)``: one line, default separators, no trailing newline."""
    atomic_write_text(path, json.dumps(obj, ensure_ascii=True))
