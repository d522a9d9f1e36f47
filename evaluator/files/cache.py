"""The user cache directory, and a cache of test-file indexes.

Scoring needs only the ids of a test file (dialog ids, candidate ids, conversation ids), but parsing the
file builds every utterance string; on a full split that parse is the largest single cost after Python's
start-up. The compact index is therefore cached, and nothing in the cache is trusted:

* entries are keyed by a digest of the test file's **content** (SHA-256, hashed in chunks: on this
  project's machines it is about twice as fast as BLAKE2b thanks to the CPU's SHA instructions, and a
  test file of a few MB hashes in milliseconds), so an edit that keeps the size and the modification
  time, or a new file on a reused inode, is never served stale;
* the digest itself is recorded per file version (path, size, modification time, inode and change time: a
  write or a new file changes the change time, which no user can set), so an unchanged test file is
  neither read nor hashed again (:func:`known_digest`; a DSTC6 split's 10 MB of test files cost more to
  read and hash than decoding the submission and keys);
* each entry carries a keyed BLAKE2b MAC (the key is a random per-cache secret, ``index/.key``, mode
  0600), so a corrupt, truncated or planted entry is detected, and is decoded as typed data (msgspec
  MessagePack: lists of strings, nothing executable);
* links inside the cache folder are never followed (entries and the key are opened with ``O_NOFOLLOW``,
  written via a temp file and a rename that replaces a link instead of writing through it), and a cache
  folder owned by another user is not used.

Any doubt — a mismatch, corruption, a read-only home — falls back to parsing the file. Only test files
(public) are cached, never answer keys. ``DIALEVAL_NO_CACHE=1`` turns the cache off.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import stat
import tempfile
import time
from pathlib import Path

CACHE_ENV = "DIALEVAL_CACHE_DIR"
NO_CACHE_ENV = "DIALEVAL_NO_CACHE"
INDEX_FORMAT = 3
DIGEST = "sha256"
_MAGIC = b"DVIDX3\n\0"
_MAC_SIZE = 32
_KEY_SIZE = 32
MAX_ENTRY_BYTES = 1 << 30
STALE_ENTRY_SECONDS = 30 * 24 * 3600  # entries of test files not stored again for a month are removed


def cache_root() -> Path:
    """``$DIALEVAL_CACHE_DIR``, else the platform's user cache directory for dialeval."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_cache_dir("dialeval"))


def content_digest(data: bytes) -> str:
    """The cache key of a test file's content."""
    return hashlib.new(DIGEST, data).hexdigest()


def file_content_digest(path: Path) -> str | None:
    """:func:`content_digest` of a regular file, read in chunks; None if it cannot be read."""
    from dialeval.core.errors import UsageError
    from dialeval.files.read import file_digest

    try:
        return file_digest(path, DIGEST)
    except UsageError:
        return None


_MEMO: dict[tuple, str] = {}


def _stat_key(path: Path) -> tuple | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (str(path), st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)


def note_digest(path: Path, digest: str) -> None:
    """Remember, for this process only, the digest of bytes just read from ``path`` (no second read to hash)."""
    key = _stat_key(path)
    if key is not None:
        _MEMO[key] = digest


def digest_of(path: Path) -> str | None:
    """:func:`file_content_digest`, computed once per process per unchanged file (data identity in signatures)."""
    key = _stat_key(path)
    if key is not None and key in _MEMO:
        return _MEMO[key]
    d = file_content_digest(path)
    if d is not None and key is not None:
        _MEMO[key] = d
    return d


_STAT_MAGIC = b"DVSTAT1\n"


def _stat_entry(key: tuple) -> tuple[str, bytes]:
    """The entry name and MAC'd text of a stat key (path, size, mtime, inode, ctime)."""
    text = repr(key).encode("utf-8", "surrogateescape")
    return hashlib.sha256(text).hexdigest()[:40] + ".stat", text


def known_digest(path: Path) -> str | None:
    """The content digest an earlier run recorded (:func:`remember_digest`) for this very file — the same path,
    size, modification time, inode and change time — or None; then the file need not be read to be hashed.

    A write to the file, or a new file on a reused inode, changes its change time (which no user can set), so an
    entry is never served for other content; entries carry the cache's MAC like the indexes."""
    key = _stat_key(path)
    if key is None:
        return None
    if key in _MEMO:
        return _MEMO[key]
    d = _index_dir(create=False)
    mk = mac_key(d, create=False) if d is not None else None
    if mk is None:
        return None
    name, text = _stat_entry(key)
    raw = read_private(d / name, 256)
    if raw is None or not raw.startswith(_STAT_MAGIC):
        return None
    stored_mac, digest = raw[len(_STAT_MAGIC):len(_STAT_MAGIC) + _MAC_SIZE], raw[len(_STAT_MAGIC) + _MAC_SIZE:]
    if not hmac.compare_digest(stored_mac, mac(mk, text + b"\0" + digest)):
        return None
    try:
        value = digest.decode("ascii")
    except UnicodeDecodeError:
        return None
    _MEMO[key] = value
    return value


def remember_digest(path: Path, digest: str, before: tuple | None) -> None:
    """Record ``digest`` of the bytes just read from ``path`` for this process and, when the file's stat key is
    still ``before`` (taken before reading: the bytes are this key's content), for later runs."""
    key = _stat_key(path)
    if key is None or key != before:
        return
    _MEMO[key] = digest
    d = _index_dir(create=True)
    mk = mac_key(d, create=True) if d is not None else None
    if mk is None:
        return
    name, text = _stat_entry(key)
    body = digest.encode("ascii")
    try:
        write_private(d, name, _STAT_MAGIC + mac(mk, text + b"\0" + body) + body)
    except OSError:
        pass


def stat_key(path: Path) -> tuple | None:
    """What :func:`remember_digest` compares: take it before reading the file."""
    return _stat_key(path)


def _owned(st: os.stat_result) -> bool:
    return not hasattr(os, "getuid") or st.st_uid == os.getuid()


def _index_dir(create: bool) -> Path | None:
    """``<cache root>/index``: a real folder (not a link) that this user owns, else None."""
    return private_dir("index", create)


def private_dir(name: str, create: bool) -> Path | None:
    """``<cache root>/<name>``: a real folder (not a link) that this user owns, else None (cache off or unusable)."""
    if os.environ.get(NO_CACHE_ENV):
        return None
    d = cache_root() / name
    try:
        st = os.lstat(d)
    except FileNotFoundError:
        if not create:
            return None
        try:
            d.parent.mkdir(parents=True, exist_ok=True)
            os.mkdir(d, 0o700)
            st = os.lstat(d)
        except OSError:
            return None
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or not _owned(st):
        return None
    return d


def read_private(path: Path, limit: int) -> bytes | None:
    """A cache entry's bytes, or None: through the one input layer without following a link (a planted link
    is a miss), refusing special files, other users' files and files over ``limit``. The caller still
    verifies the content (a MAC or a checksum) before using any of it."""
    from dialeval.core.errors import UsageError
    from dialeval.files.read import open_input

    try:
        with open_input(path, limit=limit, follow_links=False) as f:
            if not _owned(os.fstat(f.file.fileno())):
                return None
            return f.read(limit)
    except (UsageError, OSError):
        return None


def write_private(d: Path, name: str, data: bytes) -> None:
    """Write ``d/name`` via a temp file and a rename (a link at ``name`` is replaced, never written through)."""
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=d)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, d / name)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def mac_key(d: Path, create: bool) -> bytes | None:
    """The cache's MAC key: random, private to this user; a missing or damaged key is replaced."""
    key = read_private(d / ".key", _KEY_SIZE)
    if key is not None and len(key) == _KEY_SIZE:
        return key
    if not create:
        return None
    key = os.urandom(_KEY_SIZE)
    try:
        write_private(d, ".key", key)  # mkstemp files are 0600
    except OSError:
        return None
    return key


def mac(key: bytes, body: bytes) -> bytes:
    return hashlib.blake2b(body, key=key, digest_size=_MAC_SIZE).digest()


def _decoder():
    import msgspec

    return msgspec.msgpack.Decoder(tuple[int, str, tuple[list[str], list[list[str]], list[str]]])


def load_index(path: Path, digest: str | None = None):
    """The cached ``(dialog_ids, candidate_id_lists, conversation_ids)`` of a test file, or None.

    ``digest`` is :func:`content_digest` of the bytes the caller read (computed from the file if None).
    """
    d = _index_dir(create=False)
    if d is None:
        return None
    digest = digest or file_content_digest(Path(path))
    key = mac_key(d, create=False)
    if digest is None or key is None:
        return None
    raw = read_private(d / f"{digest}.idx", MAX_ENTRY_BYTES)
    if raw is None or not raw.startswith(_MAGIC) or len(raw) < len(_MAGIC) + _MAC_SIZE:
        return None
    stored_mac, body = raw[len(_MAGIC): len(_MAGIC) + _MAC_SIZE], raw[len(_MAGIC) + _MAC_SIZE:]
    if not hmac.compare_digest(stored_mac, mac(key, body)):
        return None
    try:
        fmt, stored_digest, payload = _decoder().decode(body)
    except Exception:  # any decoding failure is a cache miss, never an error
        return None
    if fmt != INDEX_FORMAT or stored_digest != digest:
        return None
    dialog_ids, candidates, conversations = payload
    if not (len(dialog_ids) == len(candidates) == len(conversations)):
        return None
    return payload


def store_index(path: Path, payload, digest: str | None = None) -> None:
    """Store an index (atomically; silently skipped when the cache is off or not writable).

    ``digest`` must be the digest of the bytes the index was parsed from (computed from the file if None).
    """
    d = _index_dir(create=True)
    if d is None:
        return
    digest = digest or file_content_digest(Path(path))
    key = mac_key(d, create=True)
    if digest is None or key is None:
        return
    try:
        import msgspec

        dialog_ids, candidates, conversations = payload
        body = msgspec.msgpack.encode((INDEX_FORMAT, digest, (list(dialog_ids), [list(c) for c in candidates],
                                                              list(conversations))))
        write_private(d, f"{digest}.idx", _MAGIC + mac(key, body) + body)
        _sweep(d)
    except (OSError, ValueError, TypeError):
        pass


def _sweep(d: Path) -> None:
    """Remove entries not stored for a month, temp files of killed runs, and old-format entries."""
    now = time.time()
    try:
        entries = list(os.scandir(d))
    except OSError:
        return
    for e in entries:
        try:
            st = e.stat(follow_symlinks=False)
            old = e.name.endswith(".marshal") or (e.name.startswith(".tmp-") and now - st.st_mtime > 24 * 3600) \
                or (e.name.endswith((".idx", ".stat")) and now - st.st_mtime > STALE_ENTRY_SECONDS)
            if old and not stat.S_ISDIR(st.st_mode):
                os.unlink(e.path)
        except OSError:
            pass
