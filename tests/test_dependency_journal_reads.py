"""After every job-state change the journal looks for queued jobs of the site whose
dependency on that job turned (`dependency_events`). It first reads the site's waiting jobs
through their own partial index (schema v13, `jobs_waiting`), and reads nothing more when
there are none. These tests hold that the shortcut never drops a real turn: a dependent
another process records after earlier state changes, a dependent on disk when the engine
starts again, one in a store migrated from v12; and that the read takes only waiting rows.
Real stores on disk, a real second process; no test bed."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from datetime import timedelta
from pathlib import Path

from diamond_jupyter.journal import Journal
from diamond_jupyter.model import Dependency, Job, JobSpec, JobState, utcnow
from diamond_jupyter.store import Store

T0 = utcnow() - timedelta(hours=1)


def _job(native: str, state: JobState = JobState.PENDING, *, waits_on: str | None = None,
         later_s: int = 0) -> Job:
    deps = [Dependency(kind="afterok", job_ids=[waits_on])] if waits_on else []
    return Job(id=f"alpha:{native}", site="alpha", native_id=native, name=f"j{native}",
               state=state, submitted_at=T0 + timedelta(seconds=later_s),
               spec=JobSpec(command="true", dependencies=deps))


def _turns(store: Store) -> list[tuple[str | None, str]]:
    return [(e.job_id, e.data["outcome"])
            for e in store.events_since(0, kinds=["job.dependency"])]


async def test_a_dependent_another_process_records_later_is_turned(tmp_path: Path) -> None:
    """The journal has seen state changes with no job waiting (nothing read past the index);
    then another process records a job waiting on job 10: 10's end turns it."""
    path = tmp_path / "s.sqlite3"
    journal = Journal(Store(path), {})
    try:
        journal.store.upsert_job(_job("10", JobState.PENDING))
        journal.apply("alpha:10", JobState.RUNNING, source="poll")
        assert _turns(journal.store) == []
        dependent = _job("11", waits_on="10", later_s=1).model_dump_json()
        subprocess.run([sys.executable, "-c", textwrap.dedent(f"""
            from diamond_jupyter.model import Job
            from diamond_jupyter.store import Store
            Store({str(path)!r}).upsert_job(Job.model_validate_json({dependent!r}))
            """)], check=True, timeout=120)
        journal.apply("alpha:10", JobState.COMPLETED, exit_code=0, source="poll")
        assert _turns(journal.store) == [("alpha:11", "satisfied")]
    finally:
        await journal.stop()


async def test_a_dependent_on_disk_is_turned_after_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    first = Journal(Store(path), {})
    first.store.upsert_job(_job("10", JobState.RUNNING))
    first.store.upsert_job(_job("12", waits_on="10", later_s=2))
    await first.stop()
    first.store.close()
    journal = Journal(Store(path), {})
    try:
        journal.apply("alpha:10", JobState.FAILED, exit_code=3, source="poll")
        assert _turns(journal.store) == [("alpha:12", "never")]
    finally:
        await journal.stop()


async def test_a_dependent_in_a_store_from_before_the_index_is_turned(tmp_path: Path) -> None:
    """A v12 store (no `jobs_waiting` index) holding a waiting job: opened, it gains the
    index, with that job in it."""
    path = tmp_path / "s.sqlite3"
    old = Store(path)
    old.upsert_job(_job("10", JobState.RUNNING))
    old.upsert_job(_job("11", waits_on="10", later_s=1))
    old.close()
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("DROP INDEX jobs_waiting")
    conn.execute("ALTER TABLE jobs DROP COLUMN tasks")  # v14's, added after the index
    conn.execute("PRAGMA user_version = 12")
    conn.close()
    journal = Journal(Store(path), {})
    try:
        journal.apply("alpha:10", JobState.COMPLETED, exit_code=0, source="poll")
        assert _turns(journal.store) == [("alpha:11", "satisfied")]
    finally:
        await journal.stop()


async def test_a_state_change_with_no_job_waiting_reads_only_the_index(tmp_path: Path) -> None:
    """A site with a long history and no job waiting: the state change's dependency check is
    one read, of the waiting jobs' index, which holds only the waiting rows (a finished
    dependent, or a job with no dependency, is not in it)."""
    journal = Journal(Store(tmp_path / "s.sqlite3"), {})
    store = journal.store
    try:
        for n in range(40):
            store.upsert_job(_job(str(100 + n), JobState.COMPLETED, waits_on="1", later_s=n))
            store.upsert_job(_job(str(200 + n), JobState.PENDING, later_s=n))
        store.upsert_job(_job("10", JobState.PENDING))
        conn = store._conn()
        indexed = {r[0] for r in conn.execute("SELECT id FROM jobs INDEXED BY jobs_waiting "
                                              "WHERE native_id IS NOT NULL AND NOT state IN "
                                              "('COMPLETED','FAILED','CANCELLED','TIMEOUT') "
                                              "AND json_array_length(spec, '$.dependencies') "
                                              "> 0")}
        assert indexed == set()
        plan = " ".join(r[3] for r in conn.execute(
            "EXPLAIN QUERY PLAN SELECT * FROM jobs INDEXED BY jobs_waiting WHERE site = ? AND "
            "native_id IS NOT NULL AND NOT state IN ('COMPLETED','FAILED','CANCELLED',"
            "'TIMEOUT') AND json_array_length(spec, '$.dependencies') > 0", ("alpha",)))
        assert "USING INDEX jobs_waiting" in plan
        statements: list[str] = []
        conn.set_trace_callback(statements.append)
        try:
            ev = store.apply_state("alpha:10", JobState.RUNNING, source="poll")
            statements.clear()
            from diamond_jupyter.dependency_journal import dependency_events

            assert dependency_events(store, ev, lambda _: "slurm") == []
        finally:
            conn.set_trace_callback(None)
        assert len(statements) == 1 and "jobs_waiting" in statements[0]
        # with a dependent, the job itself and the jobs waited for are read too
        store.upsert_job(_job("11", waits_on="10", later_s=1))
        journal.apply("alpha:10", JobState.COMPLETED, exit_code=0, source="poll")
        assert _turns(store) == [("alpha:11", "satisfied")]
    finally:
        await journal.stop()
