"""The SQLite store, on real files: idempotent submission, crash safety, forward-only states,
concurrency across processes, migrations, file modes, redaction."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sqlite3
import stat
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diamond_jupyter.model import (
    BadInput,
    DiamondError,
    Environment,
    Event,
    Job,
    JobSpec,
    JobState,
    JobStatus,
)
from diamond_jupyter.store import (
    REDACTED,
    SCHEMA_VERSION,
    Store,
    StoreError,
    default_store_path,
    redact,
)

ROOT = Path(__file__).resolve().parents[1]
T0 = datetime(2025, 1, 1, 12, 0, tzinfo=timezone.utc)

# Frozen copy of schema version 1 (what an older diamond-jupyter wrote). Never edit.
V1_SQL = """
CREATE TABLE jobs (
    id TEXT PRIMARY KEY, site TEXT NOT NULL, native_id TEXT, name TEXT,
    state TEXT NOT NULL DEFAULT 'UNKNOWN', token TEXT UNIQUE, submitted_at TEXT,
    started_at TEXT, ended_at TEXT, exit_code INTEGER, reason TEXT, workdir TEXT,
    stdout_path TEXT, stderr_path TEXT, spec TEXT,
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL
);
CREATE INDEX jobs_site_state ON jobs(site, state);
CREATE TABLE events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL, at TEXT NOT NULL,
    job_id TEXT, site TEXT, data TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX events_job ON events(job_id, seq);
INSERT INTO jobs VALUES ('alpha:41', 'alpha', '41', 'old-job', 'COMPLETED', 'tok-old',
    '2024-05-01T10:00:00.000000+00:00', '2024-05-01T10:05:00.000000+00:00',
    '2024-05-01T11:00:00.000000+00:00', 0, NULL, '/home/u', 'o.txt', 'e.txt',
    '{"name":"old-job","command":"hostname"}',
    '2024-05-01T10:00:00.000000+00:00', '2024-05-01T11:00:00.000000+00:00');
INSERT INTO jobs (id, site, native_id, name, state, created_at, updated_at) VALUES
    ('beta:7', 'beta', '7', 'still-running', 'RUNNING',
     '2024-05-02T10:00:00.000000+00:00', '2024-05-02T10:00:00.000000+00:00');
INSERT INTO events (kind, at, job_id, site, data) VALUES
    ('job.state', '2024-05-01T11:00:00.000000+00:00', 'alpha:41', 'alpha',
     '{"state":"COMPLETED"}');
PRAGMA user_version = 1;
"""


@pytest.fixture
def store(tmp_path: Path) -> Store:
    s = Store(tmp_path / "s.sqlite3")
    yield s
    s.close()


def spec(name: str = "job", **env: str) -> JobSpec:
    return JobSpec(name=name, command="hostname", environment=Environment(variables=env))


def kinds(store: Store, job_id: str | None = None) -> list[str]:
    return [e.kind for e in store.events_since(0, job_id=job_id)]


def run_py(code: str, **kw) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


# -- files ---------------------------------------------------------------------------------------


def test_file_and_directory_modes(tmp_path: Path) -> None:
    path = tmp_path / "new" / "dir" / "diamond.sqlite3"
    with Store(path) as s:
        s.append_event(Event(kind="x"))
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
        wal = path.with_name(path.name + "-wal")
        assert wal.exists() and stat.S_IMODE(wal.stat().st_mode) == 0o600
        assert s._conn().execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert s._conn().execute("PRAGMA foreign_keys").fetchone()[0] == 1


def test_default_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DIAMOND_DATA_DIR", str(tmp_path / "data"))
    assert default_store_path() == tmp_path / "data" / "diamond.sqlite3"
    with Store() as s:
        assert s.path == default_store_path() and s.path.exists()


def test_not_a_database_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.sqlite3"
    bad.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="cannot open store"):
        Store(bad)


# -- idempotent submission -------------------------------------------------------------------


def test_intent_then_bind(store: Store) -> None:
    j = store.record_intent("alpha", "t1", spec("sim"), placement={"score": 1.5},
                            origin={"notebook": "a.ipynb", "cell": "c1"})
    assert (j.id, j.native_id, j.token) == ("alpha:pending-t1", None, "t1")
    assert j.state == JobState.UNKNOWN
    assert store.record_intent("alpha", "t1", spec("other")) == j  # idempotent: no second row
    assert store.count_jobs() == 1 and kinds(store) == ["job.submitting"]
    with pytest.raises(BadInput):
        store.record_intent("beta", "t1", spec())  # a token belongs to one site
    assert [x.id for x in store.intents_without_native_id()] == ["alpha:pending-t1"]
    assert store.unfinished_jobs() == []  # not bound yet: nothing for the monitor to poll

    b = store.bind_native_id("t1", "1234")
    assert (b.id, b.native_id, b.state) == ("alpha:1234", "1234", JobState.PENDING)
    assert b.submitted_at is not None and b.placement == {"score": 1.5}
    assert b.origin == {"notebook": "a.ipynb", "cell": "c1"} and b.spec.name == "sim"
    # events follow the job; the provisional id still resolves
    evs = store.events_since(0, job_id="alpha:1234")
    assert [e.kind for e in evs] == ["job.submitting", "job.submitted", "job.state"]
    assert evs[1].data == {"native_id": "1234", "previous_id": "alpha:pending-t1"}
    assert store.get_job("alpha:pending-t1").id == "alpha:1234"
    assert [e.seq for e in store.events_since(0, job_id="alpha:pending-t1")] == [e.seq for e in evs]
    assert store.job_by_token("t1").id == "alpha:1234"
    assert store.intents_without_native_id() == []
    assert [x.id for x in store.unfinished_jobs()] == ["alpha:1234"]

    assert store.bind_native_id("t1", "1234") == b  # idempotent
    assert len(store.events_since(0)) == 3
    with pytest.raises(DiamondError, match="duplicate submission"):
        store.bind_native_id("t1", "9999")
    with pytest.raises(BadInput):
        store.bind_native_id("nope", "1")


def test_bind_merges_a_job_the_monitor_saw_first(store: Store) -> None:
    store.record_intent("alpha", "t2", spec("race"))
    store.upsert_job(Job(id="alpha:77", site="alpha", native_id="77", state=JobState.RUNNING,
                         started_at=T0))
    j = store.bind_native_id("t2", "77")
    assert (j.id, j.state, j.started_at, j.token) == ("alpha:77", JobState.RUNNING, T0, "t2")
    assert j.spec.name == "race" and store.count_jobs() == 1


def test_a_reused_native_id_is_a_new_job(store: Store) -> None:
    """The scheduler gave 100000 to a new job (counter wrapped, cluster rebuilt): the submit
    still succeeds, the older job is kept under an explicit id, and nothing mixes them."""
    store.record_intent("alpha", "old", spec("first"))
    store.bind_native_id("old", "100000", submitted_at=T0)
    store.apply_state("alpha:100000", JobState.RUNNING, started_at=T0)
    store.create_task("watch the first job", task_id="w", state="waiting",
                      waiting_on=["alpha:100000"])
    old_events = [e.seq for e in store.events_since(0, job_id="alpha:100000")]

    store.record_intent("alpha", "new", spec("second"))
    new = store.bind_native_id("new", "100000")  # no error: the user gets the job id
    assert (new.id, new.token, new.state, new.reused_by) == (
        "alpha:100000", "new", JobState.PENDING, None)

    explicit = "alpha:100000@2025-01-01T12:00:00Z"
    old = store.get_job("old")  # the token still names the older job, as does its new id
    assert (old.id, old.native_id, old.state, old.reused_by) == (
        explicit, "100000", JobState.RUNNING, "alpha:100000")
    assert store.get_job(explicit) == old == store.get_job("alpha:pending-old")
    assert store.get_job("alpha:100000").token == "new"  # the plain id: the newest job
    assert store.get_job("alpha:pending-new").id == "alpha:100000"
    assert sorted(j.id for j in store.list_jobs()) == ["alpha:100000", explicit]
    assert sorted(j.id for j in store.unfinished_jobs()) == ["alpha:100000", explicit]
    # events went with their job; the rename is an event of the older job
    moved = store.events_since(0, job_id=explicit)
    assert [e.seq for e in moved][:-1] == old_events
    assert moved[-1].kind == "job.updated" and moved[-1].data["previous_id"] == "alpha:100000"
    assert moved[-1].data["reused_by"] == "alpha:100000" and "reused" in moved[-1].data["note"]
    assert [e.kind for e in store.events_since(0, job_id="alpha:100000")] == [
        "job.submitting", "job.submitted", "job.state"]
    assert store.get_task("w").waiting_on == [explicit]  # waits for the job it meant
    # the newer job's states never touch the older record, and the reverse
    store.apply_state("alpha:100000", JobState.COMPLETED, exit_code=0)
    assert store.get_job("old").state == JobState.RUNNING
    store.apply_state("old", JobState.FAILED, reason="lost")
    assert store.get_job("new").state == JobState.COMPLETED
    assert store.bind_native_id("new", "100000").id == "alpha:100000"  # still idempotent
    assert store.bind_native_id("old", "100000").id == explicit


def test_native_id_reused_many_times_keeps_every_job(store: Store) -> None:
    for i in range(4):  # same second each time: the explicit ids still differ
        store.record_intent("alpha", f"t{i}", spec(f"j{i}"))
        store.bind_native_id(f"t{i}", "7", submitted_at=T0)
    ids = [store.get_job(f"t{i}").id for i in range(4)]
    assert ids == ["alpha:7@2025-01-01T12:00:00Z", "alpha:7@2025-01-01T12:00:00Z-2",
                   "alpha:7@2025-01-01T12:00:00Z-3", "alpha:7"]
    assert [store.get_job(i).reused_by for i in ids] == ["alpha:7"] * 3 + [None]
    assert store.count_jobs() == 4


def test_a_job_recorded_before_the_intent_is_an_older_job(store: Store) -> None:
    store.upsert_job(Job(id="alpha:78", site="alpha", native_id="78", state=JobState.COMPLETED,
                         submitted_at=T0))  # e.g. imported, without a token
    store.record_intent("alpha", "t3", spec("later"))
    j = store.bind_native_id("t3", "78")
    assert (j.id, j.token, j.state) == ("alpha:78", "t3", JobState.PENDING)
    assert store.get_job("alpha:78@2025-01-01T12:00:00Z").state == JobState.COMPLETED


@given(st.lists(st.tuples(st.sampled_from(["1", "2", "3"]),
                          st.sampled_from([None, *JobState])), min_size=1, max_size=25))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_reused_ids_property(ops: list[tuple[str, JobState | None]]) -> None:
    """Any interleaving of submits onto a few reused native ids and observations of the
    plain ids: one job per submit, the plain id names the latest, none is overwritten."""
    with tempfile.TemporaryDirectory() as d, Store(Path(d) / "p.sqlite3") as s:
        latest: dict[str, str] = {}
        frozen: dict[str, Job] = {}  # retired jobs: nothing may change them any more
        for i, (native, state) in enumerate(ops):
            tok = f"tok{i}"
            s.record_intent("alpha", tok, spec())
            prev = latest.get(native)
            job = s.bind_native_id(tok, native, submitted_at=T0 + timedelta(seconds=i))
            assert job.id == f"alpha:{native}" and job.token == tok
            if prev is not None:
                frozen[prev] = s.get_job(prev)
                assert frozen[prev].reused_by == job.id and "@" in frozen[prev].id
            latest[native] = tok
            if state is not None:
                s.apply_state(f"alpha:{native}", state)
                assert s.get_job(tok).state.rank >= state.rank
            for t, before in frozen.items():
                assert s.get_job(t) == before
        jobs = s.list_jobs(limit=None)
        assert len(jobs) == len(ops) and len({j.id for j in jobs}) == len(ops)
        assert {j.token for j in jobs} == {f"tok{i}" for i in range(len(ops))}
        for native, tok in latest.items():
            assert s.get_job(f"alpha:{native}").token == tok
        for j in jobs:  # every job kept its own submit events
            assert [e.data["native_id"] for e in s.events_since(0, job_id=j.id)
                    if e.kind == "job.submitted"] == [j.native_id]


def test_crash_right_after_intent_commit(tmp_path: Path) -> None:
    path = tmp_path / "crash.sqlite3"
    code = f"""
import time
from diamond_jupyter.model import JobSpec
from diamond_jupyter.store import Store
s = Store({str(path)!r})
s.record_intent("alpha", "tok-crash", JobSpec(name="x", command="true"))
print("committed", flush=True)
c = s._conn()  # a write in flight when the kill comes: must vanish, lock must not stick
c.execute("BEGIN IMMEDIATE")
c.execute("INSERT INTO events (kind, at, data) VALUES ('uncommitted', 'now', '{{}}')")
print("in-flight", flush=True)
time.sleep(60)
"""
    p = run_py(code)
    assert p.stdout.readline().strip() == "committed"
    assert p.stdout.readline().strip() == "in-flight"
    os.kill(p.pid, signal.SIGKILL)
    assert p.wait(10) == -signal.SIGKILL
    p.stdout.close()
    p.stderr.close()

    with Store(path, timeout_s=5) as s:
        lost = s.intents_without_native_id()
        assert [j.token for j in lost] == ["tok-crash"]
        assert "uncommitted" not in kinds(s)
        # recovery: found in the queue → bind; a second lost intent → never submitted
        s.bind_native_id("tok-crash", "55")
        s.record_intent("alpha", "tok-lost", spec())
        assert s.intents_without_native_id(older_than_s=3600) == []
        ev = s.mark_never_submitted("tok-lost", "not in queue after restart")
        assert ev.data["state"] == "FAILED" and s.intents_without_native_id() == []
        assert s.get_job("alpha:pending-tok-lost").reason == "not in queue after restart"
        with pytest.raises(DiamondError):
            s.mark_never_submitted("tok-crash")
        # a slow submit that recovery wrongly closed still binds, and the job is reopened
        j = s.bind_native_id("tok-lost", "56")
        assert (j.id, j.state, j.reason, j.ended_at) == ("alpha:56", JobState.PENDING, None, None)
        last = s.events_since(0, job_id="alpha:56")[-1]
        assert last.kind == "job.state" and "reopened from FAILED" in last.data["source"]


# -- states ----------------------------------------------------------------------------------


def test_states_never_go_backwards(store: Store) -> None:
    store.upsert_job(Job(id="a:1", site="a", native_id="1"))
    assert store.apply_state("a:1", "PENDING", reason="Priority").kind == "job.state"
    assert store.apply_state("a:1", JobState.RUNNING, started_at=T0).data["previous"] == "PENDING"
    assert store.apply_state("a:1", JobState.PENDING, reason="Resources") is None  # stale
    j = store.get_job("a:1")
    assert (j.state, j.reason, j.started_at) == (JobState.RUNNING, None, T0)

    ev = store.apply_state("a:1", JobState.COMPLETED, native_state="COMPLETED")
    assert ev.kind == "job.state" and ev.data["native_state"] == "COMPLETED"
    assert store.apply_state("a:1", JobState.RUNNING) is None
    assert store.apply_state("a:1", JobState.COMPLETED) is None
    # a different terminal observation is ignored, but fills what is missing
    ended = T0 + timedelta(hours=1)
    ev = store.apply_state("a:1", JobState.FAILED, exit_code=3, ended_at=ended, reason="x")
    assert ev.kind == "job.updated" and ev.data["changed"] == ["ended_at", "exit_code"]
    j = store.get_job("a:1")
    assert (j.state, j.exit_code, j.ended_at, j.reason) == (JobState.COMPLETED, 3, ended, None)
    assert store.apply_state("a:1", JobState.FAILED, exit_code=9) is None  # first exit code kept
    assert kinds(store, "a:1") == ["job.created", "job.state", "job.state", "job.state",
                                   "job.updated"]
    with pytest.raises(BadInput):
        store.apply_state("a:1", "EXPLODED")


def test_one_event_per_real_change(store: Store) -> None:
    store.upsert_job(Job(id="a:2", site="a", native_id="2", state=JobState.PENDING))
    n = store.last_seq()
    for _ in range(5):
        assert store.apply_state("a:2", "PENDING") is None
    ev = store.apply_state("a:2", "PENDING", reason="Resources")  # queue reason changed
    assert ev.kind == "job.updated" and ev.data["reason"] == "Resources"
    assert store.apply_state("a:2", "PENDING", reason="Resources") is None
    st = JobStatus(native_id="2", state=JobState.RUNNING, started_at=T0, native_state="R")
    assert store.apply_status("a:2", st, source="squeue").data["source"] == "squeue"
    assert store.apply_status("a:2", st) is None
    assert store.last_seq() == n + 2
    # the state change and its event are one: every job.state event matches the row
    last = store.events_since(0, kinds=["job.state"], job_id="a:2")[-1]
    assert last.data["state"] == store.get_job("a:2").state.value == "RUNNING"


def test_event_and_state_written_atomically(store: Store, monkeypatch) -> None:
    store.upsert_job(Job(id="a:3", site="a", native_id="3"))
    n = store.last_seq()

    def boom(*a, **k):
        raise RuntimeError("disk full")

    monkeypatch.setattr(store, "_event", boom)
    with pytest.raises(RuntimeError):
        store.apply_state("a:3", "RUNNING")
    monkeypatch.undo()
    assert store.get_job("a:3").state == JobState.UNKNOWN and store.last_seq() == n


# -- concurrency -----------------------------------------------------------------------------


def test_four_processes_append_500_events_each(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"  # not created yet: the four also race to create and migrate it
    go = tmp_path / "go"
    code = """
import os, sys, time
from diamond_jupyter.model import Event
from diamond_jupyter.store import Store
w, path, go = int(sys.argv[1]), sys.argv[2], sys.argv[3]
while not os.path.exists(go):
    time.sleep(0.005)
s = Store(path)
for i in range(500):
    s.append_event(Event(kind="bench", data={"w": w, "i": i}))
"""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-c", code, str(w), str(path), str(go)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for w in range(4)]
    time.sleep(0.5)
    go.touch()
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        assert "locked" not in err
    with Store(path) as s:
        evs = s.events_since(0, kinds=["bench"], limit=None)
        seqs = [e.seq for e in evs]
        assert len(evs) == 2000 and len(set(seqs)) == 2000 and seqs == sorted(seqs)
        for w in range(4):  # each writer's events appear in its own order
            assert [e.data["i"] for e in evs if e.data["w"] == w] == list(range(500))
        assert s.last_seq() == seqs[-1]


def test_threads_share_one_store(store: Store) -> None:
    store.upsert_job(Job(id="a:9", site="a", native_id="9"))
    errors: list[BaseException] = []

    def work(t: int) -> None:
        try:
            for i in range(100):
                store.append_event(Event(kind="t", data={"t": t, "i": i}))
                store.apply_state("a:9", ["PENDING", "RUNNING", "COMPLETED"][(t + i) % 3])
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(store.events_since(0, kinds=["t"], limit=None)) == 800
    assert kinds(store, "a:9").count("job.state") <= 3  # at most PENDING, RUNNING, COMPLETED
    assert store.get_job("a:9").state == JobState.COMPLETED


# -- schema versions -------------------------------------------------------------------------


def test_migration_from_v1_keeps_data(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    db = sqlite3.connect(path)
    db.executescript(V1_SQL)
    db.close()
    with Store(path) as s:
        assert s._conn().execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        old = s.get_job("alpha:41")
        assert (old.name, old.state, old.exit_code, old.token) == (
            "old-job", JobState.COMPLETED, 0, "tok-old")
        assert old.spec.command == "hostname" and old.placement is None
        assert old.reused_by is None
        assert old.ended_at == datetime(2024, 5, 1, 11, tzinfo=timezone.utc)
        assert [e.data for e in s.events_since(0)] == [{"state": "COMPLETED"}]
        assert [j.id for j in s.unfinished_jobs()] == ["beta:7"]
        # new columns and tables work
        s.upsert_job(Job(id="beta:7", site="beta", native_id="7", placement={"why": "x"}))
        assert s.get_job("beta:7").placement == {"why": "x"}
        assert s.apply_state("beta:7", "COMPLETED").seq == 2  # seqs continue after old ones
        s.record_transfer("sftp", "a:/x", "b:/y", submission_id="sub")
        s.create_task("hello")
    assert Path(f"{path}.v1.bak").exists()  # the pre-migration copy
    bak = sqlite3.connect(f"{path}.v1.bak")
    assert bak.execute("PRAGMA user_version").fetchone()[0] == 1
    assert bak.execute("SELECT COUNT(*) FROM jobs").fetchone()[0] == 2
    bak.close()
    with Store(path) as s:  # reopening an up-to-date store changes nothing
        assert s.count_jobs() == 2


def test_newer_schema_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "future.sqlite3"
    db = sqlite3.connect(path)
    db.executescript("CREATE TABLE jobs (id TEXT); INSERT INTO jobs VALUES ('x:1');"
                     "PRAGMA user_version = 99;")
    db.close()
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(StoreError, match="schema version 99, newer"):
        Store(path)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    db = sqlite3.connect(path)
    assert db.execute("SELECT id FROM jobs").fetchall() == [("x:1",)]
    db.close()


# -- queries ---------------------------------------------------------------------------------


def test_pagination_and_filtering(store: Store) -> None:
    states = [JobState.PENDING, JobState.RUNNING, JobState.COMPLETED]
    for i in range(30):
        site = "alpha" if i % 2 else "beta"
        store.upsert_job(Job(id=f"{site}:{i}", site=site, native_id=str(i),
                             name=f"sim_{i:02d}" if i < 20 else f"post{i}", state=states[i % 3]))
    page1 = store.list_jobs(limit=10)
    page2 = store.list_jobs(limit=10, offset=10)
    assert [j.native_id for j in page1] == [str(i) for i in range(29, 19, -1)]
    assert [j.native_id for j in page2] == [str(i) for i in range(19, 9, -1)]
    assert [j.native_id for j in store.list_jobs(limit=3, order="asc")] == ["0", "1", "2"]
    assert len(store.list_jobs(limit=None)) == store.count_jobs() == 30
    assert store.count_jobs(site="alpha") == 15
    assert store.count_jobs(states=["RUNNING"]) == 10
    assert store.count_jobs(site="alpha", states=[JobState.PENDING, JobState.RUNNING]) == 10
    assert store.count_jobs(states=[]) == 0
    assert store.count_jobs(name_like="SIM_") == 20  # case-insensitive substring
    assert store.count_jobs(name_like="sim_1") == 10
    assert store.count_jobs(name_like="%") == 0  # wildcards are literal
    assert {j.name for j in store.list_jobs(name_like="post2", site="beta")} == {
        "post20", "post22", "post24", "post26", "post28"}
    assert len(store.unfinished_jobs()) == 20 and len(store.unfinished_jobs("alpha")) == 10
    with pytest.raises(BadInput):
        store.list_jobs(order="sideways")


def test_get_unknown_job(store: Store) -> None:
    with pytest.raises(BadInput, match=r"no job .alpha:404. in the store"):
        store.get_job("alpha:404")
    with pytest.raises(BadInput, match=r"malformed: expected SITE:NUMBER"):
        store.get_job("404")


def test_upsert_validates_and_merges(store: Store) -> None:
    with pytest.raises(BadInput):
        store.upsert_job(Job(id="alpha:1", site="beta", native_id="1"))
    with pytest.raises(BadInput):
        store.upsert_job(Job(id="alpha:1", site="alpha", native_id="2"))
    store.upsert_job(Job(id="alpha:1", site="alpha", native_id="1", name="n", workdir="/w"))
    j = store.upsert_job(Job(id="alpha:1", site="alpha", native_id="1", stdout_path="o"))
    assert (j.name, j.workdir, j.stdout_path) == ("n", "/w", "o")  # None does not erase
    store.record_intent("alpha", "tk", spec())
    with pytest.raises(BadInput, match="token"):
        store.upsert_job(Job(id="alpha:5", site="alpha", native_id="5", token="tk"))


def test_events_since_filters(store: Store) -> None:
    assert store.last_seq() == 0 and store.events_since(0) == []
    a = store.append_event(Event(kind="site.snapshot", site="alpha", at=T0, data={"n": 1}))
    b = store.append_event(Event(kind="job.state", job_id="alpha:1", site="alpha"))
    c = store.append_event(Event(kind="job.log", job_id="alpha:2"))
    assert (a.seq, b.seq, c.seq) == (1, 2, 3) and store.last_seq() == 3
    assert store.events_since(0)[0] == a and a.at == T0
    assert [e.seq for e in store.events_since(1)] == [2, 3]
    assert [e.seq for e in store.events_since(0, kinds=["job.*"])] == [2, 3]
    assert [e.seq for e in store.events_since(0, kinds=["site.snapshot", "job.log"])] == [1, 3]
    assert [e.seq for e in store.events_since(0, job_id="alpha:2")] == [3]
    assert [e.seq for e in store.events_since(0, limit=2)] == [1, 2]
    assert store.events_since(0, kinds=[]) == []


# -- secrets ---------------------------------------------------------------------------------


def test_secrets_are_redacted_everywhere(store: Store) -> None:
    secrets = {"ANTHROPIC_API_KEY": "sk-ant-api03-abcdefghijklmnop", "GITHUB_TOKEN": "gh-tok-1",
               "DB_PASSWORD": "hunter2", "MY_SECRET": "s3cr3t-value"}
    sp = spec("leaky", OMP_NUM_THREADS="8", **secrets)
    sp.script = "export API_TOKEN=plainvalue123\nrun --key sk-ant-api03-zzzzzzzzzzzzzzzz\n"
    j = store.record_intent("alpha", "tok-s", sp, origin={"password": "pw-in-origin"})
    stored = store.get_job(j.id).spec
    assert stored.environment.variables == {"OMP_NUM_THREADS": "8",
                                            **{k: REDACTED for k in secrets}}
    assert stored.script == "export API_TOKEN=***\nrun --key ***\n"
    assert store.get_job(j.id).origin == {"password": REDACTED}
    ev = store.append_event(Event(kind="agent.step", data={
        "usage": {"input_tokens": 1200, "output_tokens": 80}, "auth": {"access_token": "at-Qv7kZp"},
        "headers": {"Authorization": "Bearer bx-Wq4mLr"}}))
    assert ev.data["usage"] == {"input_tokens": 1200, "output_tokens": 80}  # counts kept
    assert ev.data["auth"] == {"access_token": REDACTED}
    assert ev.data["headers"] == {"Authorization": REDACTED}
    t = store.create_task("use key sk-ant-api03-qqqqqqqqqqqqqqqq please",
                          data={"token": "t0k-Jh8sNd"})
    assert "sk-ant" not in t.prompt and t.data == {"token": REDACTED}
    store.add_step(t.id, "tool", {"args": {"secret": "boo-secret"}})
    store.record_transfer("globus", "a", "b", data={"refresh_token": "rt-value"})
    store.close()
    raw = b"".join(p.read_bytes() for p in store.path.parent.glob("s.sqlite3*") if p.is_file())
    # values distinctive enough that no uuid or hex token in the file contains them by chance
    for value in [*secrets.values(), "plainvalue123", "pw-in-origin", "at-Qv7kZp", "bx-Wq4mLr",
                  "t0k-Jh8sNd", "sk-ant-api03", "boo-secret", "rt-value"]:
        assert value.encode() not in raw, value


def test_redact_helper() -> None:
    assert redact({"a": [{"Password": "x"}, "PGPASSWORD=y cmd"], "n": None}) == {
        "a": [{"Password": REDACTED}, f"PGPASSWORD={REDACTED} cmd"], "n": None}
    assert redact({"secrets": {"a": "1", "b": ["2", 3]}}) == {
        "secrets": {"a": REDACTED, "b": [REDACTED, 3]}}
    assert redact("--max_tokens=100 AKIAABCDEFGHIJKLMNOP") == f"--max_tokens=100 {REDACTED}"
    assert redact({"tokenizer": "gpt2", "empty_token": ""}) == {"tokenizer": "gpt2",
                                                                "empty_token": ""}


# -- transfers and tasks ---------------------------------------------------------------------


def test_transfers(store: Store) -> None:
    t = store.record_transfer("globus", "alpha:/data/in", "beta:/scratch/in",
                              submission_id="sub-1", data={"label": "inputs"})
    assert t.state == "PENDING" and t.submission_id == "sub-1"
    assert store.record_transfer("globus", "x", "y", submission_id="sub-1") == t  # idempotent
    u = store.update_transfer(t.id, state="ACTIVE", bytes=10, data={"task_id": "g-1"})
    assert (u.state, u.bytes, u.data) == ("ACTIVE", 10, {"label": "inputs", "task_id": "g-1"})
    u = store.update_transfer(t.id, state="SUCCEEDED", checksum="sha256:ab")
    assert (u.bytes, u.checksum) == (10, "sha256:ab")
    assert store.get_transfer(t.id) == u and store.transfer_by_submission_id("sub-1") == u
    store.record_transfer("sftp", "a", "b")
    assert len(store.list_transfers()) == 2
    assert [x.id for x in store.list_transfers(states=["SUCCEEDED"])] == [t.id]
    with pytest.raises(BadInput):
        store.get_transfer("nope")


def test_tasks_and_waiting(store: Store) -> None:
    store.record_intent("alpha", "tw", spec())
    t = store.create_task("run sim on the fastest site", task_id="task-1")
    assert (t.state, t.waiting_on, t.steps) == ("running", [], [])
    assert [store.add_step("task-1", k, {"k": k}).n for k in ("plan", "tool", "tool")] == [1, 2, 3]
    store.update_task("task-1", state="waiting", waiting_on=["alpha:pending-tw"],
                      data={"round": 1})
    assert [x.id for x in store.tasks_waiting()] == ["task-1"]
    assert [x.id for x in store.tasks_waiting(on="alpha:pending-tw")] == ["task-1"]
    store.bind_native_id("tw", "500")  # waiting_on follows the re-keyed job
    assert store.get_task("task-1").waiting_on == ["alpha:500"]
    assert [x.id for x in store.tasks_waiting(on="alpha:500")] == ["task-1"]
    assert store.tasks_waiting(on="alpha:501") == []
    got = store.get_task("task-1")
    assert [s.kind for s in got.steps] == ["plan", "tool", "tool"] and got.data == {"round": 1}
    store.update_task("task-1", state="done", waiting_on=[])
    assert store.tasks_waiting() == [] and store.list_tasks(states=["done"])[0].id == "task-1"
    with pytest.raises(BadInput):
        store.create_task("dup", task_id="task-1")
    with pytest.raises(BadInput):
        store.add_step("missing", "x")
    assert json.loads(json.dumps(got.model_dump(mode="json")))["id"] == "task-1"
