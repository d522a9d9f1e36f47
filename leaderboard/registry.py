"""The registry: an SQLite database of teams, graded runs, score records and (private) per-item gold ranks.

One file, ``<registry dir>/registry.sqlite``, written only through :class:`Registry`:

* **WAL mode** (readers never block the writer; a crash leaves the last committed state) with
  ``synchronous=NORMAL`` (durable against a killed process; WAL keeps the file consistent even on power loss),
  ``foreign_keys=ON`` and a 30 s busy timeout, so two graders at once queue instead of failing.
* **One transaction per graded run** (``BEGIN IMMEDIATE`` … ``COMMIT``): a run, its problems, records and
  per-item ranks appear together or not at all. A kill at any point loses at most the run being written.
* **Identity**: ``PRAGMA application_id`` marks the file as a dialeval registry, ``PRAGMA user_version`` is
  the schema version; :data:`MIGRATIONS` (derived from the schema's one definition, :data:`TABLES`) upgrades
  older files in one transaction; a newer or foreign file is refused with one line.
* **Re-grading is idempotent**: ``runs.grading_key`` (submission sha256 + team + system + benchmark + data
  fingerprint + options) is unique; grading an unchanged submission again finds it and writes nothing.
* **Per-item ranks are private**: table ``run_items`` (gold rank, candidates, ties per item) and
  ``item_sets`` (split, group, item id, conversation id — shared by every run scored on the same items) hold
  what significance tests need. They are never exported to the public site. Blobs are zlib-compressed JSON
  and raw little-endian numeric arrays (``allow_pickle`` never: a foreign file cannot run code).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import stat
import struct
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from dialeval.core.errors import UsageError

if TYPE_CHECKING:
    from dialeval.core.ranks import RankTable

FILE_NAME = "registry.sqlite"
APPLICATION_ID = 0x44457631  # "DEv1": marks a dialeval registry (PRAGMA application_id)
SCHEMA_VERSION = 5
SQLITE_MAGIC = b"SQLite format 3\x00"
BUSY_SECONDS = 30.0  # how long a write waits for another process's lock before giving up (one line, exit 2)


@dataclass(frozen=True)
class Column:
    """One column as the schema declares it now, the version that added it, and (where a later version changed its
    declaration, which SQLite can do only by rebuilding the table) the declaration it had before that version."""

    name: str
    decl: str
    since: int = 1
    was: tuple[int, str] | None = None  # (version, declaration before that version)

    def declared(self, version: int) -> str:
        return self.was[1] if self.was and version < self.was[0] else self.decl


@dataclass(frozen=True)
class Table:
    name: str
    columns: tuple[Column, ...]
    constraints: tuple[str, ...] = ()  # table constraints after the columns
    indexes: tuple[str, ...] = ()  # "name ON table(columns)", made with the table (and again after a rebuild)
    since: int = 1

    def create(self, version: int, name: str | None = None) -> str:
        """``CREATE TABLE`` as the table was at schema ``version``."""
        parts = [f"{c.name} {c.declared(version)}" for c in self.columns if c.since <= version]
        return f"CREATE TABLE {name or self.name} ({', '.join([*parts, *self.constraints])})"


# The schema, defined once: every table's columns in order (a column a version added by ALTER comes after the
# older ones, where SQLite puts it), each with the version that added it. A new registry is made by replaying
# MIGRATIONS, which are derived from this: version 1 creates the tables as they were then; a later version adds its
# tables and columns, and rebuilds a table whose column declaration it changed.
TABLES: tuple[Table, ...] = (
    Table("meta", (Column("key", "TEXT PRIMARY KEY"), Column("value", "TEXT NOT NULL"))),
    Table("teams", (
        Column("team_id", "INTEGER PRIMARY KEY"),
        Column("name", "TEXT NOT NULL UNIQUE"),
        Column("url", "TEXT"), Column("contact", "TEXT"), Column("description", "TEXT"),
        Column("created_at", "TEXT NOT NULL"))),
    Table("runs", (
        Column("run_id", "INTEGER PRIMARY KEY"),
        Column("team_id", "INTEGER NOT NULL REFERENCES teams(team_id)"),
        Column("system", "TEXT NOT NULL"),
        Column("description", "TEXT"),
        Column("kind", "TEXT NOT NULL CHECK (kind IN ('submission', 'baseline', 'reported'))"),
        Column("source_name", "TEXT"),
        Column("sha256", "TEXT"),
        Column("grading_key", "TEXT UNIQUE"),
        # version 5: NULL for a team.json without it (absent, no longer the file's modification time, which made
        # the registry's bytes depend on file times)
        Column("submitted_at", "TEXT", was=(5, "TEXT NOT NULL")),
        Column("graded_at", "TEXT NOT NULL"),
        Column("benchmark", "TEXT NOT NULL"),
        Column("board", "TEXT NOT NULL"),
        Column("data_digest", "TEXT"), Column("data_location", "TEXT"), Column("data_json", "TEXT"),
        Column("splits", "TEXT NOT NULL"),
        Column("metrics", "TEXT NOT NULL"),
        Column("version", "TEXT NOT NULL"),
        Column("status", "TEXT NOT NULL CHECK (status IN ('valid', 'rejected'))"),
        Column("n_errors", "INTEGER NOT NULL DEFAULT 0"),
        Column("n_warnings", "INTEGER NOT NULL DEFAULT 0"),
        Column("reported_source", "TEXT"),
        # version 2: a run's own URL and a published note (e.g. the band an overview gave a reported result)
        Column("url", "TEXT", 2), Column("note", "TEXT", 2),
        # version 3: the run's paper and code links (team.json "paper", "code"), shown in the ranking
        Column("paper_url", "TEXT", 3), Column("code_url", "TEXT", 3),
        # version 4: the run a team chose (where the board's challenge.toml counts chosen runs)
        Column("chosen", "INTEGER NOT NULL DEFAULT 0", 4)),
        indexes=("runs_board ON runs(board, status)",)),
    Table("problems", (
        Column("run_id", "INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE"),
        Column("seq", "INTEGER NOT NULL"),
        Column("severity", "TEXT NOT NULL"), Column("code", "TEXT NOT NULL"), Column("file", "TEXT"),
        Column("pointer", "TEXT"), Column("message", "TEXT NOT NULL")),
        constraints=("PRIMARY KEY (run_id, seq)",)),
    Table("records", (
        Column("run_id", "INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE"),
        Column("split", "TEXT NOT NULL"), Column("grp", "TEXT NOT NULL"), Column("subset", "TEXT"),
        Column("metric", "TEXT NOT NULL"), Column("average", "TEXT"), Column("value", "REAL"),
        Column("n", "INTEGER"), Column("signature", "TEXT NOT NULL")),
        indexes=("records_run ON records(run_id)",)),
    Table("item_sets", (
        Column("set_id", "INTEGER PRIMARY KEY"), Column("digest", "TEXT NOT NULL UNIQUE"),
        Column("n", "INTEGER NOT NULL"), Column("blob", "BLOB NOT NULL"))),
    Table("run_items", (
        Column("run_id", "INTEGER PRIMARY KEY REFERENCES runs(run_id) ON DELETE CASCADE"),
        Column("set_id", "INTEGER NOT NULL REFERENCES item_sets(set_id)"),
        Column("blob", "BLOB NOT NULL"), Column("digest", "TEXT NOT NULL"))),
    # version 4: a board's challenge.toml (phases, quotas, counting rule, pages)
    Table("challenges", (
        Column("board", "TEXT PRIMARY KEY"), Column("source", "TEXT NOT NULL"), Column("sha256", "TEXT NOT NULL"),
        Column("stored_at", "TEXT NOT NULL")), since=4),
)


def _migration(version: int) -> list[str]:
    """The statements that take a registry from ``version - 1`` to ``version``, derived from :data:`TABLES`."""
    out: list[str] = []
    for t in TABLES:
        if t.since > version:
            continue
        if t.since == version:
            out += [t.create(version), *(f"CREATE INDEX {i}" for i in t.indexes)]
        elif any(c.was and c.was[0] == version for c in t.columns):
            # SQLite changes a column's declaration only by rebuilding the table (same columns, same order;
            # foreign keys are off while migrating, so the drop cascades to nothing)
            kept = ", ".join(c.name for c in t.columns if c.since < version)
            out += [t.create(version, f"{t.name}_v{version}"),
                    f"INSERT INTO {t.name}_v{version} ({kept}) SELECT {kept} FROM {t.name}",
                    f"DROP TABLE {t.name}", f"ALTER TABLE {t.name}_v{version} RENAME TO {t.name}",
                    *(f"CREATE INDEX {i}" for i in t.indexes)]
        else:
            out += [f"ALTER TABLE {t.name} ADD COLUMN {c.name} {c.declared(version)}"
                    for c in t.columns if c.since == version]
    return out


MIGRATIONS: dict[int, list[str]] = {v: _migration(v) for v in range(1, SCHEMA_VERSION + 1)}
"""Schema version -> the statements that reach it from the one before (version 1: from an empty file)."""

# Rejections that are not submissions the scorer saw: they use no quota (a team is not charged for a run the
# challenge refused before scoring it).
UNSCORED_CODES = ("over-quota", "outside-phases")


class RegistryError(UsageError):
    """A registry that cannot be used (corrupt, foreign, newer): one line, exit 2."""


def now_utc() -> str:
    """The registry's clock: ``DIALEVAL_NOW`` when set (the clock grade and the site already honour, so a pinned
    run writes byte-identical registries), else the system clock."""
    from dialeval.leaderboard.challenge import now

    return now()


# ---- per-item blobs (no pickle) ---------------------------------------------------------------------------
_DTYPES = {"<i4", "<i2", "<f8"}


def _pack_arrays(arrays: dict) -> bytes:
    """Raw little-endian arrays behind a JSON header {name: [dtype, length, offset, bytes]}, zlib-compressed."""
    import numpy as np

    header, chunks, offset = {}, [], 0
    for name, arr in arrays.items():
        a = np.asarray(arr)
        dt = "<f8" if a.dtype.kind == "f" else ("<i2" if name == "turn" else "<i4")
        b = np.ascontiguousarray(a.astype(dt)).tobytes()
        header[name] = [dt, int(len(a)), offset, len(b)]
        chunks.append(b)
        offset += len(b)
    head = json.dumps(header, sort_keys=True).encode()
    return zlib.compress(struct.pack("<I", len(head)) + head + b"".join(chunks), 1)


def _unpack_arrays(blob: bytes) -> dict:
    import numpy as np

    raw = zlib.decompress(blob)
    (hl,) = struct.unpack_from("<I", raw, 0)
    header = json.loads(raw[4:4 + hl])
    body = memoryview(raw)[4 + hl:]
    out = {}
    for name, (dt, n, offset, length) in header.items():
        if dt not in _DTYPES:
            raise ValueError(f"unexpected array type {dt!r}")
        a = np.frombuffer(body[offset:offset + length], dtype=dt)
        if len(a) != n:
            raise ValueError("array length mismatch")
        out[name] = a
    return out


ITEM_COLUMNS = ("split", "group", "item_id", "conversation_id")


def item_set_digest(table: RankTable) -> str:
    """Identity of a table's items (benchmark, split, group, item id, conversation id, in row order)."""
    h = hashlib.blake2b(digest_size=16)
    h.update((str(table.benchmark[0]) if len(table) else "").encode() + b"\0")
    for c in ITEM_COLUMNS:
        h.update("\x1f".join(map(str, getattr(table, c).tolist())).encode("utf-8", "surrogatepass") + b"\0")
    return h.hexdigest()


def item_set_payload(table: RankTable) -> bytes:
    """The item columns as zlib-compressed JSON (stored once per distinct item set)."""
    cols = {c: [str(x) for x in getattr(table, c).tolist()] for c in ITEM_COLUMNS}
    cols["benchmark"] = str(table.benchmark[0]) if len(table) else ""
    return zlib.compress(json.dumps(cols, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass"), 1)


def encode_table(table: RankTable) -> tuple[bytes, str]:
    """(compressed numeric blob, blob digest) for one run's rank table."""
    arrays = {"turn": table.turn, "n_candidates": table.n_candidates, "gold_rank": table.gold_rank, "ties": table.ties}
    for k, (r, t) in table.nested.items():
        arrays[f"nested:{k}:rank"] = r
        arrays[f"nested:{k}:ties"] = t
    for k, v in table.values.items():
        arrays[f"value:{k}"] = v
    blob = _pack_arrays(arrays)
    return blob, hashlib.blake2b(blob, digest_size=16).hexdigest()


def decode_table(item_set: bytes, blob: bytes) -> RankTable:
    import numpy as np

    from dialeval.core.ranks import RankTable

    cols = json.loads(zlib.decompress(item_set))
    arrs = _unpack_arrays(blob)
    n = len(cols["item_id"])
    nested, values = {}, {}
    for name, a in arrs.items():
        if len(a) != n:
            raise ValueError("per-item arrays do not match the item set")
        if name.startswith("nested:") and name.endswith(":rank"):
            k = int(name.split(":")[1])
            nested[k] = (a.astype(np.int32), arrs[f"nested:{k}:ties"].astype(np.int32))
        elif name.startswith("value:"):
            values[name[len("value:"):]] = a.astype(np.float64)
    obj = lambda xs: np.asarray(xs, dtype=object)  # noqa: E731
    return RankTable(
        benchmark=np.full(n, cols.get("benchmark", ""), dtype=object), split=obj(cols["split"]),
        group=obj(cols["group"]), item_id=obj(cols["item_id"]), conversation_id=obj(cols["conversation_id"]),
        turn=arrs["turn"].astype(np.int16), n_candidates=arrs["n_candidates"].astype(np.int32),
        gold_rank=arrs["gold_rank"].astype(np.int32), ties=arrs["ties"].astype(np.int32), nested=nested, values=values,
    )


# ---- the registry ---------------------------------------------------------------------------------------
@dataclass
class RunRow:
    run_id: int
    team: str
    team_url: str | None
    system: str
    description: str | None
    kind: str
    status: str
    benchmark: str
    board: str
    submitted_at: str | None  # team.json's word; None where it gave none
    graded_at: str
    sha256: str | None
    data_digest: str | None
    splits: list[str]
    metrics: list[str]
    version: str
    n_errors: int
    n_warnings: int
    reported_source: str | None
    source_name: str | None
    note: str | None = None
    paper_url: str | None = None
    code_url: str | None = None
    chosen: bool = False

    def label(self) -> str:
        return f"{self.team} / {self.system}"


def team_key(name: str) -> str:
    """A team name as a reader tells names apart: Unicode compatibility form (NFKC), case folded, format
    characters (zero-width spaces, joiners) dropped, runs of spaces made one. Two teams with one key are one team."""
    import unicodedata

    folded = unicodedata.normalize("NFKC", name).casefold()
    return " ".join("".join(ch for ch in folded if unicodedata.category(ch) != "Cf").split())


def registry_path(registry_dir: str | Path) -> Path:
    p = Path(registry_dir)
    return p if p.suffix == ".sqlite" else p / FILE_NAME


class Registry:
    """Open (creating or migrating) the registry at ``<dir>/registry.sqlite``. Use as a context manager."""

    def __init__(self, registry_dir: str | Path, create: bool = True, readonly: bool = False,
                 now: str | None = None, reading: bool = False):
        """``now``: the time every timestamp this connection writes carries (the registry's creation, a new
        team, a kept challenge, a run's default ``graded_at``); default :func:`now_utc` at each write.
        ``reading``: the caller only reads (rank, compare, export, check, a site build), so a registry this
        process may not write (a read-only file, folder or mount; another user's) is opened read-only; a caller
        that writes is refused such a registry in one line before anything is written."""
        self.path = registry_path(registry_dir)
        self.readonly = readonly
        self.now = now
        if not self.path.exists():
            if not create or readonly:
                raise RegistryError(f"{self.path}: no registry here (grade runs into it first)")
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise RegistryError(f"{self.path.parent}: cannot create the registry folder ({e.strerror})") from None
            # created 0600 before SQLite opens it (SQLite gives its -wal and -shm files the same mode): it holds
            # contacts and per-item gold ranks; a concurrent grader that created it first wins, harmlessly
            try:
                os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            except FileExistsError:
                pass
            except OSError as e:
                raise RegistryError(f"{self.path}: cannot create the registry ({e.strerror})") from None
        else:
            from dialeval.files.read import open_input

            try:  # a FIFO or a device is refused before it is opened for reading
                with open_input(self.path, what="an SQLite registry file") as f:
                    head = f.file.read(16)
            except (UsageError, OSError) as e:
                raise RegistryError(str(e) if isinstance(e, UsageError) else f"{self.path}: cannot read") from None
            if head and head != SQLITE_MAGIC:
                raise RegistryError(f"{self.path}: not a dialeval registry (not an SQLite database)")
            blocked = None if readonly else _cannot_write(self.path)
            if blocked and not reading:
                raise RegistryError(f"{self.path}: read-only here ({blocked}); this command writes the registry: "
                                    "give one you may write (nothing was written)")
            self.readonly = readonly = readonly or blocked is not None
            if not readonly:
                _make_private(self.path)
        try:
            if readonly:
                from urllib.parse import quote

                # SQLite reads a WAL database only where it may make the -shm file beside it, unless told the
                # file is immutable: said where the folder is not ours to write (no grader of ours can be
                # writing it; one of its owner's that is would go unseen until it ends)
                frozen = "&immutable=1" if not _writable(self.path.parent) else ""
                # the path's bytes escaped (a name need not be UTF-8; '?', '#' and '%' are URI syntax), absolute
                # after an empty authority ("file:" + "//folder" would name a host)
                uri = f"file://{quote(os.fsencode(self.path.absolute()))}?mode=ro{frozen}"
            else:
                uri = str(self.path)
            self.db = sqlite3.connect(uri, timeout=BUSY_SECONDS, isolation_level=None, uri=readonly)
            self.db.execute(f"PRAGMA busy_timeout = {int(BUSY_SECONDS * 1000)}")
            self._init_waiting(BUSY_SECONDS)
        except sqlite3.DatabaseError as e:
            with contextlib.suppress(Exception):
                self.db.close()
            raise RegistryError(f"{self.path}: unusable registry database ({_sql_msg(e)})") from None

    def _now(self) -> str:
        return self.now or now_utc()

    # -- lifecycle --
    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.db.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _init_waiting(self, seconds: float) -> None:
        """:meth:`_init`, retried while another process holds the file: SQLite answers "locked" at once, without
        its busy handler, when two connections race to switch a new file to WAL or to start its first write
        transaction, so the busy timeout alone does not make two graders at once queue. ``_init`` is idempotent
        (the migration re-reads the version inside its transaction)."""
        deadline = time.monotonic() + seconds
        pause = 0.01
        while True:
            try:
                return self._init()
            except sqlite3.OperationalError as e:
                if "locked" not in str(e):
                    raise
                if time.monotonic() > deadline:
                    raise self._locked() from None
            time.sleep(pause)
            pause = min(0.25, pause * 2)

    def _init(self) -> None:
        db = self.db
        app = db.execute("PRAGMA application_id").fetchone()[0]
        version = db.execute("PRAGMA user_version").fetchone()[0]
        tables = db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        if app == 0 and version == 0 and tables == 0:
            app = None  # a new, empty file
        elif app != APPLICATION_ID:
            raise RegistryError(f"{self.path}: not a dialeval registry (an SQLite database of another application)")
        if version > SCHEMA_VERSION:
            raise RegistryError(f"{self.path}: made by a newer dialeval (schema {version}, this one reads up to "
                                f"{SCHEMA_VERSION}); upgrade dialeval")
        if not self.readonly:
            db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = NORMAL")
        db.execute("PRAGMA foreign_keys = ON")
        if version < SCHEMA_VERSION:
            if self.readonly:
                raise RegistryError(f"{self.path}: schema {version} needs migrating; open it read-write once")
            self.migrate(version, new=app is None)

    def migrate(self, current: int, new: bool = False) -> None:
        """Apply every migration after ``current`` in one transaction (a concurrent opener waits, then sees it)."""
        db = self.db
        db.execute("PRAGMA foreign_keys = OFF")  # a table rebuild (version 5) must not cascade; on again below
        db.execute("BEGIN IMMEDIATE")
        try:
            current = db.execute("PRAGMA user_version").fetchone()[0]  # another process may have migrated
            for v in range(current + 1, SCHEMA_VERSION + 1):
                for stmt in MIGRATIONS[v]:
                    db.execute(stmt)
            if current < SCHEMA_VERSION:
                db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                db.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
                if new:
                    db.execute("INSERT OR REPLACE INTO meta VALUES ('created_at', ?)", (self._now(),))
            if db.execute("PRAGMA foreign_key_check").fetchone() is not None:
                raise RegistryError(f"{self.path}: migrating broke a reference between tables; left unchanged")
            db.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(Exception):
                db.execute("ROLLBACK")
            raise
        finally:
            db.execute("PRAGMA foreign_keys = ON")

    def _locked(self) -> RegistryError:
        return RegistryError(f"{self.path}: locked by another process for over {BUSY_SECONDS:g} s (another grader, or "
                             "an open SQLite session); nothing is half-written, try again when it is done")

    @contextlib.contextmanager
    def transaction(self):
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as e:  # the busy timeout ran out: one line, exit 2, not an internal error
            if "locked" in str(e) or "busy" in str(e):
                raise self._locked() from None
            raise
        try:
            yield self.db
        except BaseException:
            with contextlib.suppress(Exception):
                self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    # -- writing --
    def find_by_key(self, grading_key: str) -> int | None:
        row = self.db.execute("SELECT run_id FROM runs WHERE grading_key = ?", (grading_key,)).fetchone()
        return row[0] if row else None

    def team_spelling(self, name: str) -> str | None:
        """The registered team's name that ``name`` is (itself, or spelt differently only in case, spacing or
        Unicode form: NFC "é" against NFD "e\u0301", "Team A" against "team  a"), or None for a new team. Names
        that differ only so look alike on the site, and would split one team's quota or let a team pass for
        another."""
        if self.db.execute("SELECT 1 FROM teams WHERE name = ?", (name,)).fetchone():
            return name
        key = team_key(name)
        for (other,) in self.db.execute("SELECT name FROM teams ORDER BY team_id"):
            if team_key(other) == key:
                return other
        return None

    def _team_id(self, db, team: dict) -> int:
        name = team["team"]
        row = db.execute("SELECT team_id FROM teams WHERE name = ?", (name,)).fetchone()
        if row is None and (other := self.team_spelling(name)) is not None:
            raise RegistryError(f"team {name!r} is the registered team {other!r} spelt differently (case, spacing or "
                                "Unicode form); give the name exactly as registered, or another name")
        if row:
            db.execute("UPDATE teams SET url = coalesce(?, url), contact = coalesce(?, contact), "
                       "description = coalesce(?, description) WHERE team_id = ?",
                       (team.get("url"), team.get("contact"), team.get("team_description"), row[0]))
            return row[0]
        cur = db.execute("INSERT INTO teams (name, url, contact, description, created_at) VALUES (?, ?, ?, ?, ?)",
                         (name, team.get("url"), team.get("contact"), team.get("team_description"), self._now()))
        return cur.lastrowid

    def record_run(self, *, team: dict, graded, grading_key: str | None, kind: str, board: str,
                   submitted_at: str | None, source_name: str | None, sha256: str | None,
                   reported_source: str | None = None, note: str | None = None, chosen: bool = False,
                   quota: Quota | None = None, graded_at: str | None = None) -> tuple[int, bool]:
        """Write one graded run in one transaction. Returns (run id, created); created False = already there.

        ``graded_at``: when the grader first saw the run (default: now); the quota's day is its UTC day.
        ``quota``: checked again inside the transaction (another grader may have recorded a run of the team
        meanwhile); a run over it is recorded as rejected, its scores dropped.
        """
        graded_at = graded_at or self._now()
        from collections import Counter

        set_digest = blob = blob_digest = None
        if graded.valid and graded.table is not None and len(graded.table):  # encoded before the write lock
            blob, blob_digest = encode_table(graded.table)
            set_digest = item_set_digest(graded.table)
        with self.transaction() as db:
            if grading_key is not None:
                existing = self.find_by_key(grading_key)
                if existing is not None:
                    return existing, False
            if quota is not None and kind == "submission":
                over = quota.refusal(self, board, team["team"], graded_at)
                if over is not None:
                    graded = over_quota(graded, over)
                    blob = None
            problems = graded.problems
            # a problem without a code is a note ("... more not listed"): kept, never counted
            sev = Counter(p.get("severity", "error") for p in problems if p.get("code"))
            status = "valid" if graded.valid else "rejected"
            team_id = self._team_id(db, team)
            cur = db.execute(
                "INSERT INTO runs (team_id, system, description, kind, source_name, sha256, grading_key, submitted_at,"
                " graded_at, benchmark, board, data_digest, data_location, data_json, splits, metrics, version,"
                " status, n_errors, n_warnings, reported_source, url, note, paper_url, code_url, chosen)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (team_id, team.get("system") or "", team.get("description"), kind, _storable(source_name), sha256,
                 grading_key,
                 submitted_at, graded_at, graded.benchmark, board, graded.data_digest, graded.data_location,
                 json.dumps(graded.data_json, sort_keys=True), json.dumps(graded.splits), json.dumps(graded.metrics),
                 graded.version, status, sev.get("error", 0), sev.get("warning", 0), reported_source,
                 team.get("url"), note, team.get("paper"), team.get("code"), int(bool(chosen))),
            )
            run_id = cur.lastrowid
            db.executemany(
                "INSERT INTO problems VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(run_id, i, p.get("severity", "error"), _storable(p.get("code", "")), _storable(p.get("file")),
                  _storable(p.get("pointer")), _storable(p.get("message", ""))) for i, p in enumerate(problems)],
            )
            db.executemany(
                "INSERT INTO records VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(run_id, r["split"], str(r["group"]), r.get("subset"), r["metric"], r.get("average"), r["value"],
                  r.get("n"), r["signature"]) for r in graded.records],
            )
            if blob is not None:
                row = db.execute("SELECT set_id FROM item_sets WHERE digest = ?", (set_digest,)).fetchone()
                if row:
                    set_id = row[0]
                else:  # the first run on these items stores them; later runs only point at them
                    set_id = db.execute("INSERT INTO item_sets (digest, n, blob) VALUES (?, ?, ?)",
                                        (set_digest, len(graded.table), item_set_payload(graded.table))).lastrowid
                db.execute("INSERT INTO run_items VALUES (?, ?, ?, ?)", (run_id, set_id, blob, blob_digest))
        return run_id, True

    # -- reading --
    _RUN_SQL = ("SELECT r.run_id, t.name, coalesce(r.url, t.url), r.system, r.description, r.kind, r.status, r.benchmark,"
                " r.board, r.submitted_at, r.graded_at, r.sha256, r.data_digest, r.splits, r.metrics, r.version,"
                " r.n_errors, r.n_warnings, r.reported_source, r.source_name, r.note, r.paper_url, r.code_url, r.chosen"
                " FROM runs r JOIN teams t USING (team_id)")

    def runs(self, board: str | None = None, status: str | None = None, kind: str | None = None) -> list[RunRow]:
        sql, args, where = self._RUN_SQL, [], []
        for col, val in (("r.board", board), ("r.status", status), ("r.kind", kind)):
            if val is not None:
                where.append(f"{col} = ?")
                args.append(val)
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY r.graded_at, r.run_id"  # when a grader saw them; submitted_at is the team's word
        return [self._row(r) for r in self.db.execute(sql, args)]

    def run(self, run_id: int) -> RunRow:
        r = self.db.execute(self._RUN_SQL + " WHERE r.run_id = ?", (int(run_id),)).fetchone()
        if r is None:
            raise UsageError(f"no run {run_id} in {self.path}")
        return self._row(r)

    def _row(self, r) -> RunRow:
        splits, metrics = (_name_list(r[i]) for i in (13, 14))
        if splits is None or metrics is None:  # a hand-edited or damaged row: one line, not a JSON traceback
            raise RegistryError(f"{self.path}: run {r[0]}'s {'splits' if splits is None else 'metrics'} are damaged "
                                "(not a JSON list of names); run `dialeval registry check`")
        return RunRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12],
                      splits, metrics, r[15], r[16], r[17], r[18], r[19], r[20], r[21], r[22], bool(r[23]))

    def check_board_benchmark(self, board: str, benchmark: str) -> None:
        """Refuse a run of ``benchmark`` on a board that holds another benchmark's runs: one board ranks runs on
        one metric over one set of items (a douban P@1 beside a dstc6 P@1 means nothing)."""
        row = self.db.execute("SELECT benchmark FROM runs WHERE board = ? AND benchmark != ? LIMIT 1",
                              (board, benchmark)).fetchone()
        if row is not None:
            raise RegistryError(f"board {board!r} holds {row[0]} runs, and these are {benchmark}: one board ranks one "
                                "benchmark; give another --board")

    def boards(self) -> list[str]:
        return [r[0] for r in self.db.execute("SELECT DISTINCT board FROM runs ORDER BY board")]

    def records(self, run_id: int | None = None, board: str | None = None) -> list[dict]:
        sql = ("SELECT rec.run_id, rec.split, rec.grp, rec.subset, rec.metric, rec.average, rec.value, rec.n,"
               " rec.signature, r.benchmark FROM records rec JOIN runs r USING (run_id)")
        args: list = []
        if run_id is not None:
            sql += " WHERE rec.run_id = ?"
            args.append(int(run_id))
        elif board is not None:
            sql += " WHERE r.board = ?"
            args.append(board)
        sql += " ORDER BY rec.run_id, rec.rowid"
        out = []
        for r in self.db.execute(sql, args):
            if not (r[6] is None or isinstance(r[6], (int, float))) or not (r[7] is None or isinstance(r[7], int)):
                raise RegistryError(f"{self.path}: a score record of run {r[0]} is damaged (its value or count is not "
                                    "a number); run `dialeval registry check`")
            out.append({"run_id": r[0], "benchmark": r[9], "split": r[1], "group": r[2], "subset": r[3],
                        "metric": r[4], "average": r[5], "value": r[6], "n": r[7], "signature": r[8]})
        return out

    def problems(self, run_id: int) -> list[dict]:
        rows = self.db.execute("SELECT severity, code, file, pointer, message FROM problems WHERE run_id = ? ORDER BY seq",
                               (int(run_id),))
        return [{"severity": r[0], "code": r[1], "file": r[2], "pointer": r[3], "message": r[4]} for r in rows]

    def table(self, run_id: int) -> RankTable | None:
        """The run's per-item rank table (private: reveals the answer key through the gold ranks)."""
        row = self.db.execute("SELECT s.blob, ri.blob FROM run_items ri JOIN item_sets s USING (set_id) WHERE ri.run_id = ?",
                              (int(run_id),)).fetchone()
        if row is None:
            return None
        try:
            return decode_table(row[0], row[1])
        except (ValueError, KeyError, zlib.error, struct.error, json.JSONDecodeError):  # zlib's words say nothing more
            raise RegistryError(f"{self.path}: per-item data of run {run_id} is damaged; run `dialeval registry "
                                "check`") from None

    def data_identity(self, run_id: int) -> dict:
        """The data identity the run was scored on (DataIdentity.to_json(): release, simulated, ...); {} if none."""
        row = self.db.execute("SELECT data_json FROM runs WHERE run_id = ?", (int(run_id),)).fetchone()
        try:
            data = json.loads(row[0]) if row and row[0] else {}
        except json.JSONDecodeError:
            return {}
        return data if isinstance(data, dict) else {}

    # -- a board's challenge and its quotas --
    def set_challenge(self, board: str, source: str) -> bool:
        """Keep ``board``'s challenge.toml text (replacing an earlier one); True when it changed."""
        digest = hashlib.sha256(source.encode("utf-8")).hexdigest()
        with self.transaction() as db:
            row = db.execute("SELECT sha256 FROM challenges WHERE board = ?", (board,)).fetchone()
            if row and row[0] == digest:
                return False
            db.execute("INSERT OR REPLACE INTO challenges VALUES (?, ?, ?, ?)", (board, source, digest, self._now()))
        return True

    def challenge_source(self, board: str) -> str | None:
        row = self.db.execute("SELECT source FROM challenges WHERE board = ?", (board,)).fetchone()
        return row[0] if row else None

    def quota_used(self, board: str, team: str, day: str) -> tuple[int, int]:
        """(runs first seen by a grader on the UTC day ``day`` (YYYY-MM-DD), runs in all) the team has sent to
        ``board``: every recorded submission but those refused unscored. A run's day is its ``graded_at`` (when a
        grader first saw it), never team.json's ``submitted_at`` (the team's word). Recorded runs stay recorded,
        whatever happens to the runs folder."""
        marks = ", ".join("?" for _ in UNSCORED_CODES)
        sql = ("SELECT count(*), coalesce(sum(substr(r.graded_at, 1, 10) = ?), 0) FROM runs r JOIN teams t "
               "USING (team_id) WHERE r.board = ? AND t.name = ? AND r.kind = 'submission' AND r.run_id NOT IN "
               f"(SELECT run_id FROM problems WHERE code IN ({marks}))")
        total, today = self.db.execute(sql, (day, board, team, *UNSCORED_CODES)).fetchone()
        return int(today), int(total)

    def submission_counts(self, board: str) -> dict[str, int]:
        """Runs each team sent to ``board`` (valid and rejected; baselines and reported results are not sent)."""
        rows = self.db.execute("SELECT t.name, count(*) FROM runs r JOIN teams t USING (team_id) WHERE r.board = ? "
                               "AND r.kind = 'submission' GROUP BY t.name", (board,))
        return {name: n for name, n in rows}

    def team_contact(self, name: str) -> str | None:
        row = self.db.execute("SELECT contact FROM teams WHERE name = ?", (name,)).fetchone()
        return row[0] if row else None

    def meta(self) -> dict:
        return dict(self.db.execute("SELECT key, value FROM meta"))

    # -- checking --
    def check(self) -> list[str]:
        """Problems found, one line each (empty = healthy): SQLite integrity, foreign keys, and dialeval invariants."""
        out: list[str] = []
        db = self.db
        try:
            res = [r[0] for r in db.execute("PRAGMA integrity_check")]
            if res != ["ok"]:
                out.extend(f"integrity: {r}" for r in res[:20])
                return out
            for r in db.execute("PRAGMA foreign_key_check"):
                out.append(f"foreign key: table {r[0]} row {r[1]} refers to a missing {r[2]} row")
            for (run_id,) in db.execute("SELECT run_id FROM runs WHERE status = 'valid' AND kind != 'reported' "
                                        "AND run_id NOT IN (SELECT run_id FROM run_items)"):
                out.append(f"run {run_id}: valid but has no per-item ranks")
            for (run_id,) in db.execute("SELECT run_id FROM runs WHERE status = 'valid' "
                                        "AND run_id NOT IN (SELECT run_id FROM records)"):
                out.append(f"run {run_id}: valid but has no score records")
            for (run_id,) in db.execute("SELECT DISTINCT run_id FROM records WHERE typeof(value) NOT IN "
                                        "('real', 'integer', 'null') OR typeof(n) NOT IN ('integer', 'null')"):
                out.append(f"run {run_id}: a score record's value or count is not a number")
            for run_id, splits, metrics in db.execute("SELECT run_id, splits, metrics FROM runs"):
                for what, text in (("splits", splits), ("metrics", metrics)):
                    if _name_list(text) is None:
                        out.append(f"run {run_id}: its {what} are damaged (not a JSON list of names)")
            for (run_id,) in db.execute("SELECT run_id FROM runs WHERE status = 'rejected' AND "
                                        "run_id NOT IN (SELECT run_id FROM problems WHERE severity = 'error')"):
                out.append(f"run {run_id}: rejected without an error")
            for run_id, blob, digest, n in db.execute(
                    "SELECT ri.run_id, ri.blob, ri.digest, s.n FROM run_items ri JOIN item_sets s USING (set_id)"):
                if hashlib.blake2b(blob, digest_size=16).hexdigest() != digest:
                    out.append(f"run {run_id}: per-item data does not match its digest")
                    continue
                try:
                    arrays = _unpack_arrays(blob)
                    if any(len(a) != n for a in arrays.values()):
                        out.append(f"run {run_id}: per-item data does not match its item set")
                except (ValueError, zlib.error, struct.error, json.JSONDecodeError):
                    out.append(f"run {run_id}: per-item data cannot be decoded")
        except sqlite3.DatabaseError as e:
            out.append(f"database: {_sql_msg(e)}")
        return out


@dataclass
class Quota:
    """Per-team limits on one board: runs per UTC day on which a grader first saw them, and runs in all (None: no
    limit)."""

    per_day: int | None = None
    total: int | None = None

    def refusal(self, reg: Registry, board: str, team: str, seen_at: str) -> str | None:
        """Why one more run of ``team`` first seen at ``seen_at`` is over the quota, or None."""
        day = seen_at[:10]
        today, total = reg.quota_used(board, team, day)
        return self.why(today, total, day)

    def why(self, today: int, total: int, day: str) -> str | None:
        """Why a run is refused when the team has already sent ``today`` runs on ``day`` and ``total`` in all."""
        if self.total is not None and total >= self.total:
            return f"over the quota: the team has sent {total} of its {self.total} runs; not scored"
        if self.per_day is not None and today >= self.per_day:
            return f"over the quota: the team has sent {today} of its {self.per_day} runs for {day} (UTC); not scored"
        return None


def over_quota(graded, message: str, code: str = "over-quota"):
    """``graded`` as a rejected run holding one problem and nothing scored (its records and per-item ranks dropped)."""
    from dataclasses import replace

    problem = {"severity": "error", "code": code, "file": None, "pointer": "", "message": message}
    return replace(graded, valid=False, problems=[problem], records=[], table=None)


def _writable(path: Path) -> bool:
    """Whether this process may write ``path`` (as the kernel decides it: permissions, a read-only mount, the
    capabilities root runs with)."""
    if os.access in os.supports_effective_ids:
        return os.access(path, os.W_OK, effective_ids=True)
    return os.access(path, os.W_OK)


def _cannot_write(path: Path) -> str | None:
    """Why this process cannot write the registry file ``path`` (SQLite also makes its -wal and -shm files in the
    file's folder), or None when it can."""
    if not _writable(path):
        return "no permission to write the file"
    if not _writable(path.parent):
        return "no permission to write its folder, where SQLite keeps its -wal and -shm files"
    return None


def _make_private(path: Path) -> None:
    """Tighten a registry an older dialeval created world-readable (0644) to 0600, with its -wal/-shm files;
    only the owner's files (another user's registry is theirs to protect)."""
    for p in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        try:
            st = os.stat(p)
            if st.st_mode & 0o077 and (not hasattr(os, "getuid") or st.st_uid == os.getuid()):
                os.chmod(p, stat.S_IMODE(st.st_mode) & 0o700)
        except OSError:
            continue


def _storable(text):
    """Text SQLite can store: a file name that is not UTF-8 (``x\udcff.json`` in a team's archive, as Python reads
    it) keeps its odd bytes as ``\udcff`` escapes, never fails the run's transaction."""
    if isinstance(text, str) and any("\ud800" <= ch <= "\udfff" for ch in text):
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def _name_list(text) -> list[str] | None:
    """A runs row's JSON list of names (splits, metrics), or None when the column is damaged."""
    try:
        value = json.loads(text)
    except (TypeError, ValueError, RecursionError):
        return None
    return value if isinstance(value, list) and all(isinstance(v, str) for v in value) else None


def _sql_msg(e: BaseException) -> str:
    return " ".join(str(e).split())[:200] or type(e).__name__
