"""A job array is followed as one job: running while any task runs, ended only when every
task has ended, failed when any task failed (its exit code, the task named). Slurm lists
each task apart (`123_4`, a pending range `123_[5-9]`) and gives each a job id of its own;
the engine folds them into the array's status, and a task's own end line does not end the
array."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from diamond_jupyter.dialects.outputs_common import fold_array_tasks
from diamond_jupyter.dialects.slurm_commands import SQUEUE_FIELDS, SlurmCommands, array_of
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import JobSpec, JobState, JobStatus
from diamond_jupyter.monitor import same_native
from diamond_jupyter.sites import _array_outcome

T0 = datetime(2026, 12, 4, 12, 0, tzinfo=timezone.utc)
slurm = SlurmCommands()


def _st(native_id: str, state: JobState, *, start: int | None = None, end: int | None = None,
        rc: int | None = None, reason: str | None = None) -> JobStatus:
    return JobStatus(native_id=native_id, state=state, name="sweep.dmd-tok",
                     started_at=T0 + timedelta(seconds=start) if start is not None else None,
                     ended_at=T0 + timedelta(seconds=end) if end is not None else None,
                     exit_code=rc, reason=reason)


@pytest.mark.parametrize("native_id, array", [
    ("123_4", "123"), ("123_[5-9]", "123"), ("123_[1,3,5-7%2]", "123"), ("123", None),
    ("123.batch", None), ("123_", None), ("_4", None), ("123_4_5", None), ("123+0", None),
])
def test_slurm_names_the_array_a_task_belongs_to(native_id, array):
    assert array_of(native_id) == array


def test_tasks_running_and_waiting_are_one_running_job():
    got = fold_array_tasks([
        _st("77", JobState.COMPLETED, start=0, end=5, rc=0),
        _st("123_1", JobState.COMPLETED, start=1, end=4, rc=0),
        _st("123_2", JobState.RUNNING, start=3),
        _st("123_[3-9]", JobState.PENDING, reason="Resources"),
    ], array_of)
    assert [g.native_id for g in got] == ["77", "123"]
    arr = got[1]
    assert arr.state == JobState.RUNNING and arr.started_at == T0 + timedelta(seconds=1)
    assert arr.exit_code is None and arr.ended_at is None
    assert arr.reason == "array tasks: 1 running, 1 waiting, 1 completed"
    assert arr.name == "sweep.dmd-tok"  # the token the engine recognises its job by


def test_tasks_only_waiting_are_a_pending_job_with_the_schedulers_reason():
    (arr,) = fold_array_tasks([_st("123_[1-4%2]", JobState.PENDING, reason="Priority")],
                              array_of)
    assert (arr.native_id, arr.state, arr.reason) == ("123", JobState.PENDING, "Priority")


def test_an_array_ends_when_its_last_task_ends_and_fails_if_any_task_failed():
    tasks = [_st("123_1", JobState.COMPLETED, start=0, end=10, rc=0),
             _st("123_2", JobState.FAILED, start=0, end=4, rc=3, reason="exit code 3"),
             _st("123_3", JobState.COMPLETED, start=2, end=30, rc=0)]
    (arr,) = fold_array_tasks(tasks, array_of)
    assert (arr.state, arr.exit_code) == (JobState.FAILED, 3)
    assert arr.ended_at == T0 + timedelta(seconds=30) and arr.started_at == T0
    assert arr.reason == "array tasks: 2 completed, 1 not completed; task 123_2: exit code 3"
    ok = [t.model_copy(update={"state": JobState.COMPLETED, "exit_code": 0}) for t in tasks]
    (arr,) = fold_array_tasks(ok, array_of)
    assert (arr.state, arr.exit_code, arr.reason) == (JobState.COMPLETED, 0,
                                                      "array tasks: 3 completed")


def test_an_ended_array_without_every_exit_code_asks_accounting():
    # squeue shows ended tasks for a while, without exit codes: the engine then reads
    # accounting (Site.statuses does so for a terminal status with no exit code)
    (arr,) = fold_array_tasks([_st("123_1", JobState.COMPLETED, end=3),
                               _st("123_2", JobState.COMPLETED, end=4, rc=0)], array_of)
    assert arr.state == JobState.COMPLETED and arr.exit_code is None


def test_squeue_and_sacct_lines_of_an_array_fold_to_its_id():
    def line(jid: str, state: str) -> str:
        return "|".join([jid, state, "2026-12-04T12:00:00", "N/A", "2026-12-04T11:59:00",
                         "1:00", "1", "1", "me", "debug", "N/A", "an1", "None",
                         "dmd:tok", "sweep.dmd-tok"])
    assert SQUEUE_FIELDS.count("|") == 15  # these lines: all but %M (read as before it)
    seen = SlurmCommands().parse_status("\n".join([
        line("123_1", "COMPLETED"), line("123_2", "RUNNING"), line("123_[3-4]", "PENDING")]))
    (arr,) = fold_array_tasks(seen, array_of)
    assert (arr.native_id, arr.state) == ("123", JobState.RUNNING)
    acct = slurm.parse_accounting(
        "123_1|COMPLETED|0:0|2026-12-04T12:00:00|2026-12-04T12:00:05|an1|sweep.dmd-tok|123_1\n"
        "123_1.batch|COMPLETED|0:0|2026-12-04T12:00:00|2026-12-04T12:00:05|an1|batch|"
        "123_1.batch\n"
        "123_2|FAILED|2:0|2026-12-04T12:00:00|2026-12-04T12:00:09|an2|sweep.dmd-tok|123_2\n"
        "123_2.batch|FAILED|2:0|2026-12-04T12:00:00|2026-12-04T12:00:09|an2|batch|"
        "123_2.batch\n")
    (arr,) = fold_array_tasks(acct, array_of)
    assert (arr.native_id, arr.state, arr.exit_code) == ("123", JobState.FAILED, 2)


def test_a_failure_the_queue_saw_outlives_an_accounting_that_missed_the_task():
    # Slurm's job-completion log keeps each task under its own id: `sacct -c -j 123` then
    # finds only the task that kept the array's id (here a success)
    queued = fold_array_tasks([_st("123_1", JobState.FAILED, end=2, reason="NonZeroExitCode"),
                               _st("123_2", JobState.COMPLETED, end=9)], array_of)
    acct = _st("123", JobState.COMPLETED, end=10, rc=0)
    got = _array_outcome(acct, queued, {"123"})
    assert (got.state, got.exit_code, got.ended_at) == (
        JobState.FAILED, None, T0 + timedelta(seconds=10))
    assert "task 123_1: NonZeroExitCode" in (got.reason or "")
    # accounting that has the failure, or a plain job, is taken as it is
    bad = _st("123", JobState.FAILED, end=10, rc=3)
    assert _array_outcome(bad, queued, {"123"}) is bad
    assert _array_outcome(acct, queued, set()) is acct


@pytest.mark.parametrize("line_id, job_id, same", [
    ("123[4].pbs1", "123[].pbs1", True),  # a PBS subjob is its array's
    ("123[4]", "123", True),  # an LSF element names its array
    ("124[4].pbs1", "123[].pbs1", False),
    ("123[].pbs1", "123[].pbs1", True),
])
def test_an_array_tasks_wrapper_line_is_its_arrays(line_id, job_id, same):
    assert same_native(line_id, job_id) is same


# -- on the test bed ---------------------------------------------------------------------------

@pytest.fixture
def fed(testbed_fed):
    return testbed_fed


def _ends(fed: Federation, job_id: str) -> list[str]:
    return [e.data.get("state") for e in fed.store.events_since(0, job_id=job_id)
            if e.kind == "job.state" and e.data.get("state") in ("COMPLETED", "FAILED")]


async def test_an_array_on_slurm_ends_with_its_last_task_and_fails_with_a_failed_one(fed):
    # task 1 ends at once with exit 3; task 2 runs on for a while: the array must not end
    # when task 1 does, and ends FAILED (exit 3) only after task 2 has written its file
    script = ("#!/bin/bash\n#SBATCH --array=1-2\n#SBATCH -t 5\n#SBATCH -o arr-%A_%a.out\n"
              'if [ "$SLURM_ARRAY_TASK_ID" = 1 ]; then exit 3; fi\n'
              "sleep 8\ndate +%s.%N > last-task-ended\n")
    job = await fed.submit(Federation.parse(script).model_copy(update={"name": "arr"}),
                           "alpha")
    assert job.spec is not None and job.spec.array is not None
    done = await fed.wait(job.id, timeout=180)
    assert done.state == JobState.FAILED and done.exit_code == 3, done
    assert "task" in (done.reason or "") and "_1" in (done.reason or ""), done.reason
    site = fed.sites["alpha"]
    raw = await site.transport.get_bytes(f"{done.workdir}/last-task-ended")
    last = datetime.fromtimestamp(float(raw.decode().strip()), tz=timezone.utc)
    assert done.ended_at is not None and done.ended_at >= last.replace(microsecond=0)
    assert _ends(fed, job.id) == ["FAILED"]  # one end, never a COMPLETED before it


async def test_an_array_whose_tasks_all_succeed_completes(fed):
    spec = JobSpec(name="arr-ok", script="#!/bin/bash\n#SBATCH --array=0-2\n#SBATCH -t 5\n"
                   "#SBATCH -o ok-%A_%a.out\necho task $SLURM_ARRAY_TASK_ID\n")
    job = await fed.submit(Federation.parse(spec.script).model_copy(
        update={"name": "arr-ok"}), "beta")
    done = await fed.wait(job.id, timeout=180)
    assert (done.state, done.exit_code) == (JobState.COMPLETED, 0), done
    assert _ends(fed, job.id) == ["COMPLETED"]
