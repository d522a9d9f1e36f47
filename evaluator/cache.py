"""The user cache directory, and a cache of test-file indexes.

Scoring needs only the ids of a test file (dialog ids, candidate ids, conversation ids), but parsing the
file builds every utterance string; on a full split that parse is the largest single cost after Python's
start-up. The compact index is therefore cached with :mod:`marshal`, keyed by the file's resolved path,
size, modification time and inode, so an edited or replaced file is never served stale. Only test files
(public) are cached, never answer keys. Any cache failure (read-only home, corrupt entry) falls back to
parsing; ``DIALEVAL_NO_CACHE=1`` turns the cache off.
"""

from __future__ import annotations

import hashlib
import marshal
import os
from pathlib import Path

CACHE_ENV = "DIALEVAL_CACHE_DIR"
NO_CACHE_ENV = "DIALEVAL_NO_CACHE"
INDEX_FORMAT = 2


def cache_root() -> Path:
    """``$DIALEVAL_CACHE_DIR``, else the platform's user cache directory for dialeval."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_cache_dir("dialeval"))


def _entry(path: Path) -> tuple[Path, str] | None:
    if os.environ.get(NO_CACHE_ENV):
        return None
    try:
        st = path.stat()
        real = str(path.resolve())
    except OSError:
        return None
    stamp = f"{INDEX_FORMAT}|{real}|{st.st_size}|{st.st_mtime_ns}|{st.st_ino}"
    name = hashlib.sha256(real.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return cache_root() / "index" / f"{name}.marshal", stamp


def load_index(path: Path):
    """The cached ``(dialog_ids, candidate_id_lists, conversation_ids)`` of a test file, or None."""
    entry = _entry(path)
    if entry is None:
        return None
    file, stamp = entry
    try:
        stored_stamp, payload = marshal.loads(file.read_bytes())
    except (OSError, ValueError, EOFError, TypeError):
        return None
    return payload if stored_stamp == stamp else None


def store_index(path: Path, payload) -> None:
    """Store an index (atomically; silently skipped when the cache is not writable)."""
    entry = _entry(path)
    if entry is None:
        return
    file, stamp = entry
    try:
        from dialeval.formats.jsonio import atomic_write_bytes

        atomic_write_bytes(file, marshal.dumps((stamp, payload)))
    except (OSError, ValueError):
        pass
