"""The SQLite file: schema history, opening and migrating it, write transactions, and the
connection every store part shares.

`MIGRATIONS[i]` brings a database from schema version i to i + 1 (`PRAGMA user_version`).
Rules: never edit a migration that has shipped; append a new one. Each migration runs in one
transaction together with the `user_version` bump, so a crash leaves the old version intact.
A migration is a tuple of SQL statements or a function taking the connection.
"""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import stat
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from .. import leases
from ..config import default_data_dir, file_in_the_way
from ..log_lines import one_line_logger
from ..model import BadInput, DiamondError
from ..private_files import directory_problem, others_problem
from .engines import Heartbeats
from .seal import Sealer

log = one_line_logger("diamond_jupyter.store")

# ids per `IN (...)` of one query (SQLite's default limit on variables is 32766)
IN_CHUNK = 500

Migration = Sequence[str] | Callable[[sqlite3.Connection], None]

# v1: jobs and events (frozen: tests recreate a v1 database from a copy of this).
_V1 = (
    """CREATE TABLE jobs (
        id TEXT PRIMARY KEY,
        site TEXT NOT NULL,
        native_id TEXT,
        name TEXT,
        state TEXT NOT NULL DEFAULT 'UNKNOWN',
        token TEXT UNIQUE,
        submitted_at TEXT,
        started_at TEXT,
        ended_at TEXT,
        exit_code INTEGER,
        reason TEXT,
        workdir TEXT,
        stdout_path TEXT,
        stderr_path TEXT,
        spec TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    )""",
    "CREATE INDEX jobs_site_state ON jobs(site, state)",
    """CREATE TABLE events (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        kind TEXT NOT NULL,
        at TEXT NOT NULL,
        job_id TEXT,
        site TEXT,
        data TEXT NOT NULL DEFAULT '{}'
    )""",
    "CREATE INDEX events_job ON events(job_id, seq)",
)

# v2: placement/origin on jobs, transfers, agent tasks and their steps.
_V2 = (
    "ALTER TABLE jobs ADD COLUMN placement TEXT",
    "ALTER TABLE jobs ADD COLUMN origin TEXT",
    "CREATE INDEX jobs_created ON jobs(created_at)",
    "CREATE INDEX events_kind ON events(kind, seq)",
    """CREATE TABLE transfers (
        id TEXT PRIMARY KEY,
        submission_id TEXT UNIQUE,
        kind TEXT NOT NULL,
        src TEXT NOT NULL,
        dst TEXT NOT NULL,
        state TEXT NOT NULL,
        bytes INTEGER,
        checksum TEXT,
        error TEXT,
        data TEXT NOT NULL DEFAULT '{}',
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    )""",
    "CREATE INDEX transfers_created ON transfers(created_at)",
    """CREATE TABLE tasks (
        id TEXT PRIMARY KEY,
        state TEXT NOT NULL,
        prompt TEXT NOT NULL,
        data TEXT NOT NULL DEFAULT '{}',
        waiting_on TEXT NOT NULL DEFAULT '[]',
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    )""",
    "CREATE INDEX tasks_state ON tasks(state, created_at)",
    """CREATE TABLE task_steps (
        task_id TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
        n INTEGER NOT NULL,
        kind TEXT NOT NULL,
        at TEXT NOT NULL,
        data TEXT NOT NULL DEFAULT '{}',
        PRIMARY KEY (task_id, n)
    )""",
)

# v3: a job whose native id the scheduler gave to a newer job names that job.
_V3 = ("ALTER TABLE jobs ADD COLUMN reused_by TEXT",)

# v4: workflows (a DAG of steps) and their steps; a step's job is found by its token.
_V4 = (
    """CREATE TABLE workflows (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        state TEXT NOT NULL,
        spec TEXT NOT NULL,
        reason TEXT,
        origin TEXT,
        data TEXT NOT NULL DEFAULT '{}',
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    )""",
    "CREATE INDEX workflows_state ON workflows(state, created_at)",
    """CREATE TABLE workflow_steps (
        workflow_id TEXT NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        phase TEXT NOT NULL,
        site TEXT,
        token TEXT,
        attempt INTEGER NOT NULL DEFAULT 0,
        reason TEXT,
        data TEXT NOT NULL DEFAULT '{}',
        updated_at TEXT NOT NULL,
        PRIMARY KEY (workflow_id, name)
    )""",
    "CREATE INDEX workflow_steps_token ON workflow_steps(token)",
)

# v5: hedged submissions (copies of one job on several sites, the first to start wins)
# and the scheduler's start estimates seen for pending jobs (wait calibration).
_V5 = (
    "ALTER TABLE jobs ADD COLUMN hedge_group TEXT",
    "CREATE INDEX jobs_hedge ON jobs(hedge_group)",
    """CREATE TABLE hedges (
        id TEXT PRIMARY KEY,
        winner TEXT,
        decided_at TEXT,
        data TEXT NOT NULL DEFAULT '{}',
        created_at TEXT NOT NULL
    )""",
    """CREATE TABLE wait_estimates (
        site TEXT NOT NULL,
        native_id TEXT NOT NULL,
        partition TEXT,
        cpus INTEGER,
        seen_at REAL NOT NULL,
        estimated_start REAL NOT NULL,
        started_at REAL,
        PRIMARY KEY (site, native_id, seen_at)
    )""",
    "CREATE INDEX wait_estimates_open ON wait_estimates(site, started_at)",
)

# v6: each site's usage over time (busy CPUs/GPUs, queue depth), one point per snapshot.
_V6 = (
    """CREATE TABLE usage (
        site TEXT NOT NULL,
        t REAL NOT NULL,
        busy_cpus INTEGER NOT NULL,
        busy_gpus INTEGER NOT NULL,
        pending INTEGER NOT NULL,
        running INTEGER NOT NULL,
        PRIMARY KEY (site, t)
    )""",
)

# v7: a spec that redaction changed is also kept sealed (store/seal.py), to run it again.
_V7 = (
    "ALTER TABLE jobs ADD COLUMN sealed_spec TEXT",
    "ALTER TABLE workflows ADD COLUMN sealed_spec TEXT",
)

# v8: an agent task's data (its tool calls' inputs, the plan awaiting approval) that
# redaction changed is also kept sealed: an approved call runs with what it was given.
_V8 = (
    "ALTER TABLE tasks ADD COLUMN sealed_data TEXT",
)

# v9: the local files a fetch wrote, so that fetching the same job again may replace them
# (and nothing else): the file as it was left (inode, size, mtime) and the job it came from.
# The path is kept as its sha256 (a job's file names are its own: free text never stored).
_V9 = (
    """CREATE TABLE fetched (
        path_sha256 TEXT PRIMARY KEY,
        job_id TEXT NOT NULL,
        inode INTEGER NOT NULL,
        size INTEGER NOT NULL,
        mtime_ns INTEGER NOT NULL,
        fetched_at TEXT NOT NULL
    )""",
)

# v10: the engines sharing the store and their heartbeats (see `leases`), in the store
# itself: they were files in a directory beside it (`STORE.engines/`, imported at open).
_V10 = (
    """CREATE TABLE engines (
        id TEXT PRIMARY KEY,
        beat_at REAL NOT NULL
    )""",
)


def _table_clock(table: str) -> tuple[str, ...]:
    """A clock of `table` (schema v11's of the jobs, v12's of the transfers): every row
    written takes the next tick as its `changed`, a deletion moves `deleted` on."""
    clock = f"{table}_clock"
    return (
        f"ALTER TABLE {table} ADD COLUMN changed INTEGER NOT NULL DEFAULT 0",
        f"UPDATE {table} SET changed = rowid",
        f"CREATE INDEX {table}_changed ON {table}(changed)",
        f"CREATE TABLE {clock} (n INTEGER NOT NULL, deleted INTEGER NOT NULL)",
        f"INSERT INTO {clock} (n, deleted) SELECT COALESCE(MAX(rowid), 0), 0 FROM {table}",
        f"""CREATE TRIGGER {clock}_insert AFTER INSERT ON {table} BEGIN
        UPDATE {clock} SET n = n + 1;
        UPDATE {table} SET changed = (SELECT n FROM {clock}) WHERE rowid = NEW.rowid;
    END""",
        f"""CREATE TRIGGER {clock}_update AFTER UPDATE ON {table}
    WHEN NEW.changed = OLD.changed BEGIN
        UPDATE {clock} SET n = n + 1;
        UPDATE {table} SET changed = (SELECT n FROM {clock}) WHERE rowid = NEW.rowid;
    END""",
        f"""CREATE TRIGGER {clock}_delete AFTER DELETE ON {table} BEGIN
        UPDATE {clock} SET n = n + 1, deleted = n + 1;
    END""",
    )


# v11: jobs by state (and site) in creation order: the newest jobs of a few states (a
# submit's estimates: the queued, the finished) are read from the index's end, not by
# sorting every stored job of those states (a long history made every submit slower).
# And a clock of the jobs table: every row written (by anyone: triggers) takes the next
# tick as its `changed`, a deletion moves `deleted` on, so a reader that keeps the newest
# jobs reads only the rows changed since (`store.windows`), not all of them again.
_V11 = (
    "CREATE INDEX jobs_state_created ON jobs(state, created_at)",
    "CREATE INDEX jobs_site_state_created ON jobs(site, state, created_at)",
    "DROP INDEX jobs_site_state",  # the new index's prefix
    *_table_clock("jobs"),
)

# v12: the transfers table's clock, as v11's of the jobs: a placement's bandwidth figures come
# from the newest transfers, kept between submits (`TransfersMixin.newest_transfers`) and
# brought up to date from the rows changed since, not read and decoded whole at each submit.
_V12 = _table_clock("transfers")

# v13: the jobs that wait on a dependency, by site (a partial index): after every job-state
# change the journal reads its site's (`JobsMixin.waiting_jobs`), which went through every
# job the site ever had; now only those rows, and none where no job waits. Its WHERE is
# `waiting_jobs`' own, term for term (SQLite uses a partial index only then).
_V13 = (
    "CREATE INDEX jobs_waiting ON jobs(site, created_at) WHERE native_id IS NOT NULL AND "
    "NOT state IN ('COMPLETED','FAILED','CANCELLED','TIMEOUT') AND "
    "json_array_length(spec, '$.dependencies') > 0",
)

# v14: the state of each task of a job array its scheduler listed on its own (JSON, task
# index to state): what a dependency on one task (`afterok:123_4`, aftercorr) is judged by.
_V14 = ("ALTER TABLE jobs ADD COLUMN tasks TEXT",)

MIGRATIONS: list[Migration] = [_V1, _V2, _V3, _V4, _V5, _V6, _V7, _V8, _V9, _V10, _V11,
                               _V12, _V13, _V14]
SCHEMA_VERSION = len(MIGRATIONS)


class StoreError(DiamondError):
    """The store file cannot be used (not a database, newer schema, ...)."""


def apply_migration(conn: sqlite3.Connection, migration: Migration) -> None:
    """Run one migration on a connection that is already inside a transaction."""
    if callable(migration):
        migration(conn)
    else:
        for statement in migration:
            conn.execute(statement)


def prepare_file(path: Path) -> None:
    """Create the directory (0700) and the database file (0600) before SQLite does; an
    existing file (or its -wal/-shm journal) must be the user's own, and only theirs to
    write: StoreError naming it otherwise (see `private_files`), or naming why it cannot be
    made (a directory given as the store, a file in its directory's place, no permission)."""
    if path.is_dir():  # SQLite's "unable to open database file" came out as a traceback
        raise StoreError(f"store {path} is a directory: give the store a file path, e.g. "
                         f"{path / 'store.sqlite3'}")
    # "[Errno 20] Not a directory: PATH" said no more
    if (blocker := file_in_the_way(path.parent)) is not None:
        raise StoreError(f"store {path} cannot be made: {blocker} is a file, not a directory")
    try:
        if not path.parent.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            os.chmod(path.parent, 0o700)
    except OSError as e:
        raise StoreError(cannot_be_made(path, path.parent, e)) from None
    problem = directory_problem(path.parent, "the store")
    for part in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        problem = problem or others_problem(part, "the store file")
    if problem:
        raise StoreError(problem)
    try:  # O_EXCL: only a file we create gets its mode set; -wal/-shm inherit it
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        return
    except OSError as e:  # e.g. a directory the user cannot write in
        raise StoreError(cannot_be_made(path, path.parent, e)) from None
    os.close(fd)
    os.chmod(path, 0o600)


NOT_WRITABLE = (errno.EACCES, errno.EPERM, errno.EROFS)


def cannot_be_made(path: Path, directory: Path, e: OSError) -> str:
    """Why the store PATH cannot be made in DIRECTORY: a home (or any directory on the way)
    that is not writable is named, with where else the store may go."""
    if e.errno not in NOT_WRITABLE:
        return f"store {path} cannot be made: {e.strerror} (in {directory})"
    there = next((p for p in (directory, *directory.parents) if p.exists()), directory)
    return (f"store {path} cannot be made: {there} is not writable ({e.strerror}); give the "
            f"store a writable place ($DIAMOND_DATA_DIR, the sites file's `store`, or "
            f"DiamondApp.store_path)")


BEAT_FILES_FRESH_S = 90.0  # leases.STALE_S: an older heartbeat file's engine is gone


def import_beat_files(path: Path, conn: sqlite3.Connection) -> None:
    """Bring the heartbeat files an older version kept beside the store (`STORE.engines/`, one
    empty file an engine, its mtime the beat) into the `engines` table, then remove them, so
    an engine of that version still running keeps its claims. Only the user's own directory
    that others cannot write is read (and emptied): one another user planted is left alone
    and believed in nothing. Files older than BEAT_FILES_FRESH_S are dropped (gone)."""
    beats = path.with_name(path.name + ".engines")
    try:
        st = os.lstat(beats)
    except OSError:
        return
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o022:
        return
    now, fresh = time.time(), []
    with suppress(OSError):
        for f in beats.iterdir():
            with suppress(OSError):
                fst = f.lstat()
                if stat.S_ISREG(fst.st_mode) and now - fst.st_mtime < BEAT_FILES_FRESH_S:
                    fresh.append((f.name, fst.st_mtime))
    if fresh:
        with transaction(conn) as c:
            c.executemany("INSERT INTO engines (id, beat_at) VALUES (?, ?) ON CONFLICT(id) "
                          "DO UPDATE SET beat_at = MAX(beat_at, excluded.beat_at)", fresh)
    with suppress(OSError):
        for f in beats.iterdir():
            with suppress(OSError):
                f.unlink()
        beats.rmdir()


@contextmanager
def transaction(conn: sqlite3.Connection, durable: bool = False) -> Iterator[sqlite3.Connection]:
    """One write transaction; the write lock is taken at BEGIN (waits in busy_timeout)."""
    if durable:
        conn.execute("PRAGMA synchronous=FULL")
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        try:
            conn.execute("COMMIT")
        except sqlite3.Error:  # e.g. the disk filled: SQLite may leave the transaction open
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
    finally:
        if durable:
            conn.execute("PRAGMA synchronous=NORMAL")


# SQLite's words for a store that cannot take a write, and what the user can do about each
_UNWRITABLE = {
    "database or disk is full": "its disk is full: free space there",
    "attempt to write a readonly database": "its file system or file is read-only: make it "
                                            "writable",
    "disk i/o error": "its disk answered an I/O error: check the disk",
}


def unwritable(path: Path, error: sqlite3.Error) -> StoreError | None:
    """The StoreError for a write SQLite refused because of the store's disk (a full or
    read-only file system), naming the store, the cause and what to do; None for others."""
    said = str(error).lower()
    for words, cause in _UNWRITABLE.items():
        if words in said:
            return StoreError(f"store {path} cannot be written: {cause}, or give another store "
                              "path (`store:` in the sites file, or $DIAMOND_DATA_DIR); this "
                              "change was not recorded")
    return None


def _check_version(path: Path, version: int) -> None:
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"store {path} has schema version {version}, newer than this diamond-jupyter "
            f"understands ({SCHEMA_VERSION}); upgrade diamond-jupyter or use another store "
            "path. The file was left untouched."
        )


def _retry_locked(fn: Callable[[], Any], timeout_s: float) -> Any:
    """Retry a setup statement that SQLite may answer "locked" without waiting."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return fn()
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def open_db(path: Path, timeout_s: float) -> sqlite3.Connection:
    """Open (creating if needed) and migrate the store; refuse a newer schema untouched."""
    prepare_file(path)
    try:
        conn = sqlite3.connect(str(path), timeout=timeout_s, isolation_level=None,
                               check_same_thread=False)
    except sqlite3.Error as e:
        raise StoreError(f"cannot open store {path}: {e}") from None
    try:
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {int(timeout_s * 1000)}")
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        _check_version(path, version)  # before anything writes to the file
        mode = _retry_locked(lambda: conn.execute("PRAGMA journal_mode=WAL").fetchone()[0],
                             timeout_s)
        if str(mode).lower() != "wal":
            log.warning("store %s: journal mode %s (WAL unavailable here)", path, mode)
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        _migrate(path, conn, version)
        import_beat_files(path, conn)
    except sqlite3.DatabaseError as e:
        conn.close()
        raise (unwritable(path, e) or StoreError(f"cannot open store {path}: {e}")) from None
    except BaseException:
        conn.close()
        raise
    return conn


def _migrate(path: Path, conn: sqlite3.Connection, version: int) -> None:
    if version >= SCHEMA_VERSION:
        return
    if version > 0:  # keep a copy of the old database next to it, once per old version
        dest = path.with_name(f"{path.name}.v{version}.bak")
        # a copy already there must be the user's own (one planted by another user would be
        # what the user restores); it is kept, not made again
        problem = others_problem(dest, "the store's migration copy")
        if problem:
            raise StoreError(f"{problem} (the store at {path} was not migrated)")
        if not dest.exists():
            prepare_file(dest)
            out = sqlite3.connect(str(dest))
            try:
                conn.backup(out)
            finally:
                out.close()
    for target in range(version + 1, SCHEMA_VERSION + 1):
        with transaction(conn) as c:  # one transaction per migration, version bump included
            current = c.execute("PRAGMA user_version").fetchone()[0]
            _check_version(path, current)
            if current >= target:  # another process migrated meanwhile
                continue
            apply_migration(c, MIGRATIONS[target - 1])
            c.execute(f"PRAGMA user_version = {target}")
            log.info("store %s: migrated to schema version %d", path, target)


def default_store_path() -> Path:
    return default_data_dir() / "diamond.sqlite3"


class Database:
    """SQLite store; one connection per process, guarded by a lock (thread-safe)."""

    def __init__(self, path: Path | str | None = None, *, timeout_s: float = 30.0) -> None:
        self.path = Path(path).expanduser() if path is not None else default_store_path()
        self.sealer = Sealer(self.path)
        self._timeout_s = timeout_s
        self._lock = threading.RLock()
        self._db: sqlite3.Connection | None = None
        self._pid = -1
        self._beats: Heartbeats | None = None
        self._conn()

    def _conn(self) -> sqlite3.Connection:
        if self._db is None or self._pid != os.getpid():  # closed, or inherited across fork()
            self._db, self._pid = open_db(self.path, self._timeout_s), os.getpid()
        return self._db

    @contextmanager
    def _write(self, durable: bool = False) -> Iterator[sqlite3.Connection]:
        try:
            with self._lock, transaction(self._conn(), durable) as c:
                yield c
        except sqlite3.Error as e:  # a full or read-only disk ended commands in a traceback
            if (refused := unwritable(self.path, e)) is None:
                raise
            raise refused from None

    def _check_fence(self, c: sqlite3.Connection, fence: leases.Fence | None) -> None:
        """Refuse (LeaseLost) a write carrying `fence` once the item's lease generation moved
        on: another engine took it over. Called inside the write's own transaction."""
        if fence is None:
            return
        table = {"transfer": "transfers", "workflow": "workflows",
                 "task": "tasks"}.get(fence.kind)
        if table is None:
            raise BadInput(f"no lease is kept on a {fence.kind!r} (known: "
                           f"{', '.join(leases.LEASE_KINDS)})")
        row = c.execute(f"SELECT data FROM {table} WHERE id = ?", (fence.item,)).fetchone()
        try:
            data = json.loads(row["data"]) if row is not None else {}
        except (TypeError, ValueError):
            data = {}
        data = data if isinstance(data, dict) else {}
        if row is None or leases.generation(data) != fence.generation:
            raise leases.LeaseLost(fence, leases.generation(data), data.get("owner"))

    def check_fence(self, fence: leases.Fence | None) -> None:
        """LeaseLost when `fence` is stale (before an action the store cannot see: a
        scheduler command, a copy's next bytes)."""
        with self._reader() as c:
            self._check_fence(c, fence)

    @contextmanager
    def _reader(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            yield self._conn()

    def _read(self, sql: str, args: Iterable[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            return self._conn().execute(sql, tuple(args)).fetchall()

    def close(self) -> None:
        with self._lock:
            if self._db is not None and self._pid == os.getpid():
                self._db.close()
            self._db = None

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def beats(self) -> Heartbeats:
        """The heartbeats of the engines sharing this store (see `leases`)."""
        if self._beats is None:
            self._beats = Heartbeats(self)
        return self._beats
