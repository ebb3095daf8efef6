"""Schema history of the SQLite store.

`MIGRATIONS[i]` brings a database from schema version i to i + 1 (`PRAGMA user_version`).
Rules: never edit a migration that has shipped; append a new one. Each migration runs in one
transaction together with the `user_version` bump, so a crash leaves the old version intact.
A migration is a tuple of SQL statements or a function taking the connection.
Also here: how rows are encoded (UTC ISO text, redacted JSON) and decoded into models.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError
from pydantic_core import to_jsonable_python

from .model import DiamondError, Event, Job, JobSpec, JobState

log = logging.getLogger("diamond_jupyter.store")

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

MIGRATIONS: list[Migration] = [_V1, _V2, _V3]
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
    """Create the directory (0700) and the database file (0600) before SQLite does."""
    if not path.parent.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        os.chmod(path.parent, 0o700)
    try:  # O_EXCL: only a file we create gets its mode set; -wal/-shm inherit it
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        return
    os.close(fd)
    os.chmod(path, 0o600)


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
        conn.execute("COMMIT")
    finally:
        if durable:
            conn.execute("PRAGMA synchronous=NORMAL")


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
    conn = sqlite3.connect(str(path), timeout=timeout_s, isolation_level=None,
                           check_same_thread=False)
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
    except sqlite3.DatabaseError as e:
        conn.close()
        raise StoreError(f"cannot open store {path}: {e}") from e
    except BaseException:
        conn.close()
        raise
    return conn


def _migrate(path: Path, conn: sqlite3.Connection, version: int) -> None:
    if version >= SCHEMA_VERSION:
        return
    if version > 0:  # keep a copy of the old database next to it, once per old version
        dest = path.with_name(f"{path.name}.v{version}.bak")
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


# -- secrets -----------------------------------------------------------------------------

REDACTED = "***"
_SECRET_KEY = re.compile(
    r"token(?!iz)|secret|passw(?:or)?d|passphrase|(?:^|_)pass(?:_|$)|api_?key|private_?key|"
    r"access_?key|credential|authorization|cookie",
    re.I,
)
# Every pattern here runs in linear time on any text (job output and prompts are hostile):
# an assignment is found as `NAME=` (a whole word, one pass), its name checked apart, its
# value matched where it starts; a PEM block is found by its BEGIN and END lines, not by a
# lazy `.*?` that would rescan the text from every BEGIN.
_ASSIGN_NAME = re.compile(r"\b([A-Za-z0-9_]+)=")
_SECRET_NAME = re.compile(r"token|secret|passw(?:or)?d|api_?key|private_?key|access_?key", re.I)
_ASSIGN_VALUE = re.compile(r"(?!\d+\b)(?:\"[^\"]*\"|'[^']*'|[^\s;&|]+)")
_SECRET_VALUE = re.compile(
    r"sk-ant-[\w-]{10,}|sk-[A-Za-z0-9_-]{20,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}"
    r"|glpat-[\w-]{20,}|xox[abposr]-[\w-]{10,}|AKIA[0-9A-Z]{16}"
)
_PEM_BEGIN = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")
_PEM_END = re.compile(r"-----END [A-Z ]*PRIVATE KEY-----")


def _redact_assignments(text: str) -> str:
    """`NAME=value` -> `NAME=***` where NAME looks secret (a number is kept: TOKENS=3)."""
    out, last = [], 0
    for m in _ASSIGN_NAME.finditer(text):
        if m.start() < last or not _SECRET_NAME.search(m.group(1)):
            continue
        v = _ASSIGN_VALUE.match(text, m.end())
        if v is None:
            continue
        out += [text[last:m.end()], REDACTED]
        last = v.end()
    return "".join(out) + text[last:] if out else text


def _redact_pem(text: str) -> str:
    """Each BEGIN ... PRIVATE KEY ... END block -> ***; the text is scanned once."""
    out, last, pos = [], 0, 0
    while (b := _PEM_BEGIN.search(text, pos)) is not None:
        e = _PEM_END.search(text, b.end())
        if e is None:
            break  # no END after this BEGIN: none after any later BEGIN either
        out += [text[last:b.start()], REDACTED]
        last = pos = e.end()
    return "".join(out) + text[last:] if out else text


def redact(value: Any, _secret: bool = False) -> Any:
    """Copy of a JSON-like value with secrets replaced by "***".

    Strings under a secret-looking key (TOKEN, PASSWORD, SECRET, API_KEY...) are replaced
    whole; numbers are kept (token counts are not secrets). Other strings lose `NAME=value`
    assignments to secret-looking names and well-known key shapes (sk-..., ghp_..., AKIA...).
    """
    if isinstance(value, dict):
        return {str(k): redact(v, _secret or bool(_SECRET_KEY.search(str(k)))) for k, v in
                value.items()}
    if isinstance(value, (list, tuple)):
        return [redact(v, _secret) for v in value]
    if isinstance(value, str):
        if _secret:
            return REDACTED if value else value
        value = _redact_assignments(_redact_pem(value))
        return _SECRET_VALUE.sub(REDACTED, value)
    return value


# -- records and row encoding --------------------------------------------------------------

class TransferRecord(BaseModel):
    id: str
    submission_id: str | None = None  # Globus idempotency key
    kind: str  # globus, sftp, ...
    src: str
    dst: str
    state: str = "PENDING"
    bytes: int | None = None
    checksum: str | None = None
    error: str | None = None
    data: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime
    updated_at: datetime


class TaskStep(BaseModel):
    task_id: str
    n: int
    kind: str
    at: datetime
    data: dict[str, Any] = Field(default_factory=dict)


class TaskRecord(BaseModel):
    id: str
    state: str = "running"  # running, waiting, done, failed, cancelled (not enforced)
    prompt: str
    data: dict[str, Any] = Field(default_factory=dict)
    waiting_on: list[str] = Field(default_factory=list)  # job ids / transfer ids / event kinds
    created_at: datetime
    updated_at: datetime
    steps: list[TaskStep] = Field(default_factory=list)


def _ts(dt: datetime | None) -> str | None:
    """Fixed-width UTC ISO text, so that text order is time order."""
    if dt is None:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc).isoformat(timespec="microseconds")


def _dt(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text else None


def _js(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    return json.dumps(redact(to_jsonable_python(value)), separators=(",", ":"))


def _load(text: str | None, default: Any = None) -> Any:
    return json.loads(text) if text else default


def _row_to_job(row: sqlite3.Row) -> Job:
    spec = None
    if row["spec"]:
        try:
            spec = JobSpec.model_validate_json(row["spec"], context={"stored": True})
        except ValidationError as e:  # an old/foreign spec must not break listing (#519)
            log.warning("job %s: stored spec no longer validates (%s); kept on disk", row["id"], e)
    try:
        state = JobState(row["state"])
    except ValueError:
        state = JobState.UNKNOWN
    return Job(
        id=row["id"], site=row["site"], native_id=row["native_id"], name=row["name"],
        state=state, token=row["token"], submitted_at=_dt(row["submitted_at"]),
        started_at=_dt(row["started_at"]), ended_at=_dt(row["ended_at"]),
        exit_code=row["exit_code"], reason=row["reason"], workdir=row["workdir"],
        stdout_path=row["stdout_path"], stderr_path=row["stderr_path"], spec=spec,
        placement=_load(row["placement"]), origin=_load(row["origin"]),
        reused_by=row["reused_by"],
    )


def _row_to_event(row: sqlite3.Row) -> Event:
    return Event(seq=row["seq"], kind=row["kind"], at=_dt(row["at"]), job_id=row["job_id"],
                 site=row["site"], data=_load(row["data"], {}))


def _row_to_transfer(row: sqlite3.Row) -> TransferRecord:
    d = dict(row)
    d["data"] = _load(d["data"], {})
    return TransferRecord.model_validate(d)


def _row_to_task(row: sqlite3.Row) -> TaskRecord:
    d = dict(row)
    d["data"], d["waiting_on"] = _load(d["data"], {}), _load(d["waiting_on"], [])
    return TaskRecord.model_validate(d)
