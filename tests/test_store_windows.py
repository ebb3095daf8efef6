"""A submit's estimates read the user's newest jobs and their queued ones (`Store.newest_jobs`):
kept between submits and brought up to date from the rows changed since (the jobs table's
clock), so a submit reads what changed, not every recent job again; the finished jobs are
read from the end of a state's index, not by sorting every finished job. Each test counts the
work (rows read, SQLite's steps), never the time."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from test_workflow_unrunnable import PLAIN, _fed

from diamond_jupyter.model import Job, JobSpec, JobState, Resources
from diamond_jupyter.store import NewestJobs, Store

ACTIVE = [JobState.PENDING, JobState.RUNNING]


def _submitted(store: Store, n: int, start: int = 0) -> list[str]:
    ids = []
    for i in range(start, start + n):
        job = store.record_intent("alpha", f"t{i}", JobSpec(name=f"j{i}", command="hostname"))
        ids.append(store.bind_native_id(job.token, str(100 + i)).id)
    return ids


def _same(store: Store, window: NewestJobs) -> None:
    """The window answers what a plain read of the same jobs answers."""
    states = None if window.states is None else sorted(window.states)
    got = store.newest_jobs(window)
    plain = store.list_jobs(states=states, limit=window.limit, read_only=True)
    assert [(j.id, j.state) for j in got] == [(j.id, j.state) for j in plain]


def test_a_window_reads_only_the_rows_changed_since(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    try:
        ids = _submitted(store, 8)
        newest, active = NewestJobs.of(None, 5), NewestJobs.of(ACTIVE, 5)
        _same(store, newest)
        _same(store, active)
        assert (newest.full_reads, active.full_reads) == (1, 1)
        read = newest.rows_read
        assert store.newest_jobs(newest) is store.newest_jobs(newest)  # nothing changed
        assert newest.rows_read == read
        _submitted(store, 1, start=8)  # one new job: its row alone is read
        _same(store, newest)
        assert newest.rows_read == read + 1 and newest.full_reads == 1
        store.apply_state(ids[-1], JobState.RUNNING)
        _same(store, active)
        assert active.full_reads == 1
        # a member of the full queued window ends: a job beyond it comes in (read whole)
        store.apply_state(ids[-1], JobState.COMPLETED, exit_code=0)
        _same(store, active)
        assert active.full_reads == 2
        _same(store, newest)  # still a member (any state): no whole read
        assert newest.full_reads == 1
        # a change none of its jobs had: the same answer, the same list (readers key on it)
        ended = NewestJobs.of([JobState.COMPLETED], 5)
        answer = store.newest_jobs(ended)
        _submitted(store, 1, start=9)
        assert store.newest_jobs(ended) is answer and [j.id for j in answer] == [ids[-1]]
    finally:
        store.close()


def test_a_window_sees_changes_made_by_another_hand(tmp_path: Path) -> None:
    """Another process (or a person with sqlite3) changes, dates back and deletes rows: the
    table's triggers move its clock all the same."""
    path = tmp_path / "s.sqlite"
    store = Store(path)
    try:
        ids = _submitted(store, 6)
        newest, active = NewestJobs.of(None, 4), NewestJobs.of(ACTIVE, 10)
        _same(store, newest)
        _same(store, active)
        with sqlite3.connect(path) as c:
            c.execute("UPDATE jobs SET state = 'FAILED', exit_code = 3 WHERE id = ?", (ids[5],))
        _same(store, newest)
        _same(store, active)
        assert store.newest_jobs(newest)[0].exit_code == 3
        with sqlite3.connect(path) as c:  # the newest job dated back: an older one comes in
            c.execute("UPDATE jobs SET created_at = '2000-01-01' WHERE id = ?", (ids[4],))
        _same(store, newest)
        assert ids[1] in [j.id for j in store.newest_jobs(newest)]
        with sqlite3.connect(path) as c:
            c.execute("DELETE FROM jobs WHERE id = ?", (ids[3],))
        _same(store, newest)
        _same(store, active)
        assert ids[3] not in [j.id for j in store.newest_jobs(active)]
    finally:
        store.close()


def test_a_window_read_from_another_store_is_read_whole(tmp_path: Path) -> None:
    one, two = Store(tmp_path / "1.sqlite"), Store(tmp_path / "2.sqlite")
    try:
        _submitted(one, 3)
        _submitted(two, 2, start=10)
        window = NewestJobs.of(None, 10)
        assert len(one.newest_jobs(window)) == 3
        assert [j.native_id for j in two.newest_jobs(window)] == ["111", "110"]
    finally:
        one.close()
        two.close()


def _history(store: Store, finished: int, queued: int) -> None:
    """`finished` completed jobs, then `queued` pending ones, written in one go."""
    spec = JobSpec(name="j", command="true", resources=Resources(walltime_s=600))
    text = spec.model_dump_json()
    rows = []
    for i in range(finished + queued):
        at = f"2026-01-01T00:00:{i // 1000:02d}.{i % 1000:03d}000+00:00"
        done = i < finished
        rows.append((f"alpha:{1000 + i}", "alpha", str(1000 + i), "j",
                     "COMPLETED" if done else "PENDING", f"h{i}", at, at if done else None,
                     at if done else None, text, at, at))
    with store._conn() as c:
        c.executemany("INSERT INTO jobs (id, site, native_id, name, state, token, submitted_at,"
                      " started_at, ended_at, spec, created_at, updated_at)"
                      " VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", rows)


def _placement_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, finished: int
                    ) -> tuple[int, int]:
    """(SQLite's virtual machine steps, in hundreds; rows decoded) of one placement after
    a first one, over a store of `finished` completed jobs and 50 queued ones."""
    import asyncio

    import diamond_jupyter.store.codec as codec
    import diamond_jupyter.store.jobs as jobs
    import diamond_jupyter.store.windows as windows

    tmp_path.mkdir()
    fed = _fed(tmp_path, monkeypatch)
    _history(fed.store, finished, 50)
    spec = fed.parse(PLAIN.encode().decode("unicode_escape"))
    decoded = [0]
    real = codec.row_to_job

    def counted(row: Any, shared: bool = False) -> Job:
        decoded[0] += 1
        return real(row, shared)
    monkeypatch.setattr(jobs, "row_to_job", counted)
    monkeypatch.setattr(windows, "row_to_job", counted)
    steps = [0]

    def step() -> int:
        steps[0] += 1
        return 0

    async def twice() -> None:
        try:
            await fed.place(spec, sites=["alpha"])
            _submitted(fed.store, 1, start=finished + 100)  # the submit in between
            decoded[0] = 0
            fed.store._conn().set_progress_handler(step, 100)
            await fed.place(spec, sites=["alpha"])
        finally:
            fed.store._conn().set_progress_handler(None, 100)
            await fed.close()
    asyncio.run(twice())
    return steps[0], decoded[0]


def test_a_placement_does_no_more_work_for_a_longer_history(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """600 or 3,000 finished jobs, one job submitted since the last placement: the same
    SQLite work and only that job's row decoded (before: every finished job sorted at every
    placement, 1,861 and 7,669 hundred steps; the newest 500 jobs, the queued and the
    finished ones decoded again, 1,050 rows at each)."""
    few_steps, few_rows = _placement_work(tmp_path / "few", monkeypatch, 600)
    many_steps, many_rows = _placement_work(tmp_path / "many", monkeypatch, 3000)
    assert many_steps <= few_steps + 20, (few_steps, many_steps)
    assert few_rows <= 10 and many_rows <= 10, (few_rows, many_rows)


async def test_a_workflow_reads_each_job_for_its_estimates_a_few_times(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """40 independent steps: the windows read the rows each submit changed (its job's few
    writes), about 10 rows a step, not every recent job at every submit (before: 40 x 40
    a window, growing with the square of the steps); each job's prediction sample is read
    once per row it had, not at every submit."""
    import diamond_jupyter.federation as federation

    bases: list[str] = []
    basis = federation.sample_basis

    def counted(job: Job) -> Any:
        bases.append(job.id)
        return basis(job)
    monkeypatch.setattr(federation, "sample_basis", counted)
    fed = _fed(tmp_path, monkeypatch)
    steps = 40
    text = "name: wide\nsteps:\n" + "".join(
        f"  - {{name: s{i:02d}, site: alpha, script: \"{PLAIN}\"}}\n" for i in range(steps))
    try:
        view = await fed.run_workflow(text, origin={"face": "test"})
        assert all(s.job for s in view.steps)
        assert fed.sbatch_calls.read_text().count("called") == steps
        newest, active = fed._newest, fed._active
        assert newest.rows_read + active.rows_read <= 12 * steps, (newest.rows_read,
                                                                  active.rows_read)
        assert newest.full_reads <= 2 and active.full_reads <= 2
        assert len(bases) <= 3 * steps, len(bases)
        assert [j.id for j in fed.store.newest_jobs(newest)] == [
            j.id for j in fed.store.list_jobs(limit=newest.limit)]
    finally:
        await fed.close()


def test_a_merge_moves_the_changed_rows_into_place_without_sorting_the_window(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Jobs submitted, ended, dated back and forth in a mixed order: after every change the
    kept windows answer what a plain read answers, and only whole reads sort."""
    import random

    from diamond_jupyter.store import windows

    sorts = []
    keep = windows.WindowsMixin._keep
    monkeypatch.setattr(windows.WindowsMixin, "_keep",
                        staticmethod(lambda w, m: (sorts.append(len(m)), keep(w, m))[1]))
    store = Store(tmp_path / "s.sqlite")
    rng = random.Random(12)
    try:
        ids = _submitted(store, 30)
        wide, narrow, active = (NewestJobs.of(None, 60), NewestJobs.of(None, 10),
                                NewestJobs.of(ACTIVE, 8))
        for w in (wide, narrow, active):
            _same(store, w)
        assert len(sorts) == 3
        for i in range(60):
            pick = rng.choice(ids)
            if i % 3 == 0:
                ids += _submitted(store, 1, start=100 + i)
            elif i % 3 == 1:
                store.apply_state(pick, rng.choice([JobState.RUNNING, JobState.COMPLETED]))
            else:
                with store._conn() as c:
                    c.execute("UPDATE jobs SET created_at = ? WHERE id = ?",
                              (f"2026-01-{rng.randint(1, 28):02d}", pick))
            for w in (wide, narrow, active):
                _same(store, w)
        assert wide.full_reads == 1  # never full, so every change merged
        assert len(sorts) == sum(w.full_reads for w in (wide, narrow, active))
    finally:
        store.close()


def test_a_workflow_record_finds_its_steps_in_a_copy_with_other_steps() -> None:
    from datetime import datetime

    from diamond_jupyter.model import BadInput
    from diamond_jupyter.store.workflows import StepRecord, WorkflowRecord

    now = datetime(2026, 1, 1)
    rec = WorkflowRecord(id="wf-1", name="w", spec={}, created_at=now, updated_at=now,
                         steps=[StepRecord(workflow_id="wf-1", name=f"s{i}") for i in range(500)])
    assert rec.step("s499").name == "s499" and rec.step("s0") is rec.steps[0]
    moved = rec.model_copy(update={"steps": [
        StepRecord(workflow_id="wf-1", name=s.name, phase="done") for s in reversed(rec.steps)]})
    assert moved.step("s499") is moved.steps[0] and moved.step("s499").phase == "done"
    assert rec.step("s499") is rec.steps[499] and rec.step("s499").phase == "waiting"
    assert moved == moved.model_copy()  # the remembered positions are not part of it
    with pytest.raises(BadInput, match="no step 's500'"):
        rec.step("s500")
