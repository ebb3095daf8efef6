"""A Grid Engine array is followed task by task, as a Slurm array is: its reason counts the
tasks running, waiting and ended; it ends when its last task ends, FAILED with a failed
task's exit code (the task named). It was followed as one job: RUNNING with no count while
any task ran, and at its end the outcome of whichever qacct record was worst, ended when
that task ended.

`qstat -xml` lists an array as one `job_list` per running task and one for its waiting tasks,
whose `tasks` element is the ja-task-ID column of qstat(1): a task id, or the waiting ones as
`4,5` or `6-10:1` (first-last:step). A task that ends leaves qstat at once; `qacct -j JOB`
then prints one record per task (accounting(5)'s task_number, qacct's `taskid`). The outputs
below are written in the shape of the test bed's recordings (tests/fixtures/outputs/sge/)."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest

from diamond_jupyter.config import SiteConfig, TransportConfig
from diamond_jupyter.dialects.outputs_common import count_array_tasks, fold_array_tasks
from diamond_jupyter.dialects.sge_commands import SgeCommands, array_of, array_tasks
from diamond_jupyter.dialects.slurm_commands import array_of as slurm_array_of
from diamond_jupyter.dialects.slurm_commands import array_tasks as slurm_array_tasks
from diamond_jupyter.model import ArraySpec, Job, JobSpec, JobState, JobStatus
from diamond_jupyter.sites import Site
from diamond_jupyter.transports.base import CommandResult

UTC = timezone.utc
sge = SgeCommands(tz=UTC)


def _running(task: int, start: str) -> str:
    return f"""    <job_list state="running">
      <JB_job_number>31</JB_job_number>
      <JAT_prio>0.50000</JAT_prio>
      <JB_name>sweep.dmd-tok31</JB_name>
      <JB_owner>me</JB_owner>
      <state>r</state>
      <JAT_start_time>2026-12-04T12:00:{start}</JAT_start_time>
      <queue_name>all.q@dn{task}</queue_name>
      <slots>1</slots>
      <tasks>{task}</tasks>
    </job_list>
"""


def _waiting(tasks: str) -> str:
    return f"""    <job_list state="pending">
      <JB_job_number>31</JB_job_number>
      <JAT_prio>0.00000</JAT_prio>
      <JB_name>sweep.dmd-tok31</JB_name>
      <JB_owner>me</JB_owner>
      <state>qw</state>
      <JB_submission_time>2026-12-04T11:59:00</JB_submission_time>
      <queue_name></queue_name>
      <slots>1</slots>
      <tasks>{tasks}</tasks>
    </job_list>
"""


def qstat(running: str = "", waiting: str = "") -> str:
    return ("<?xml version='1.0'?>\n<job_info  xmlns:xsd=\"http://arc.liv.ac.uk/repos/darcs/"
            "sge/source/dist/util/resources/schemas/qstat/qstat.xsd\">\n  <queue_info>\n"
            f"{running}  </queue_info>\n  <job_info>\n{waiting}  </job_info>\n</job_info>\n")


def qacct_task(task: int, end_s: int, *, exit_status: int = 0, failed: str = "0") -> str:
    return f"""==============================================================
qname        all.q
hostname     dn{task}
group        me
owner        me
project      NONE
department   defaultdepartment
jobname      sweep.dmd-tok31
jobnumber    31
taskid       {task}
account      sge
priority     0
qsub_time    Fri Dec  4 11:59:00 2026
start_time   Fri Dec  4 12:00:00 2026
end_time     Fri Dec  4 12:00:{end_s:02d} 2026
granted_pe   NONE
slots        1
failed       {failed}
exit_status  {exit_status}
ru_wallclock {end_s}s
category     -l h_rt=600
"""


class Recorded:
    """A transport that answers qstat and qacct with the outputs set on it, counting each."""

    name = "g"

    def __init__(self) -> None:
        self.qstat = ""
        self.qacct = ""
        self.asked: list[str] = []

    async def run(self, argv: list[str], **kw: Any) -> CommandResult:
        what = "qacct" if "qacct" in " ".join(argv) else argv[0]
        self.asked.append(what)
        out = {"qstat": self.qstat, "qacct": self.qacct}.get(what, "")
        return CommandResult(list(argv), 0, out, "", 0.0)


def _site() -> tuple[Site, Recorded]:
    t = Recorded()
    cfg = SiteConfig(name="g", scheduler="sge", transport=TransportConfig(kind="local"))
    return Site(cfg, transport=t), t  # type: ignore[arg-type]


ARRAY = Job(id="g:31", site="g", native_id="31", name="sweep.dmd-tok31", token="tok31",
            state=JobState.RUNNING, spec=JobSpec(script="./sweep\n",
                                                 array=ArraySpec(expression="1-10")))


@pytest.mark.parametrize("native_id, array, tasks", [
    ("31.3", "31", 1), ("31.4,5", "31", 2), ("31.6-10:1", "31", 5), ("31.1-9:2", "31", 5),
    ("31.1,4-6:1,9", "31", 5), ("31", None, 1), ("31.", None, 1), (".3", None, 1),
    ("31.x", None, 1),
])
def test_grid_engine_names_a_task_records_array_and_its_task_count(native_id, array, tasks):
    assert (array_of(native_id), array_tasks(native_id)) == (array, tasks)


@pytest.mark.parametrize("expr, n", [
    ("7", 1), ("1-10", 10), ("1-10:3", 4), ("4,5", 2), ("1,3,5-7%2", 5), ("0-2", 3),
    ("5-1", None), ("1-10:0", None), ("a-b", None), ("", None), ("1-9999999999", None),
])
def test_array_expressions_count_their_tasks(expr, n):
    assert count_array_tasks(expr) == n


def test_qstat_shows_each_running_task_and_the_waiting_ones_as_one_record():
    text = qstat(_running(1, "10") + _running(2, "20"), _waiting("6-10:1"))
    seen = sge.parse_status(text)
    assert [(s.native_id, s.state) for s in seen] == [
        ("31.1", JobState.RUNNING), ("31.2", JobState.RUNNING), ("31.6-10:1", JobState.PENDING)]
    (arr,) = fold_array_tasks(seen, array_of, array_tasks)
    assert (arr.native_id, arr.state, arr.name) == ("31", JobState.RUNNING, "sweep.dmd-tok31")
    assert arr.reason == "array tasks: 2 running, 5 waiting"
    assert arr.started_at == datetime(2026, 12, 4, 12, 0, 10, tzinfo=UTC)


def test_qacct_keeps_each_tasks_record_and_the_array_fails_with_the_failed_ones_exit():
    text = "".join(qacct_task(t, 10 + t, exit_status=3 if t == 7 else 0) for t in range(1, 11))
    recs = sge.parse_accounting(text)
    assert [r.native_id for r in recs] == [f"31.{t}" for t in range(1, 11)]
    (arr,) = fold_array_tasks(recs, array_of, array_tasks)
    assert (arr.native_id, arr.state, arr.exit_code) == ("31", JobState.FAILED, 3)
    assert arr.ended_at == datetime(2026, 12, 4, 12, 0, 20, tzinfo=UTC)  # the last task's
    assert arr.reason == "array tasks: 9 completed, 1 not completed; task 31.7: exit code 3"
    ok = "".join(qacct_task(t, 10 + t) for t in range(1, 11))
    (arr,) = fold_array_tasks(sge.parse_accounting(ok), array_of, array_tasks)
    assert (arr.state, arr.exit_code, arr.reason) == (JobState.COMPLETED, 0,
                                                      "array tasks: 10 completed")


async def test_a_running_array_counts_its_ended_tasks_from_accounting_asked_once_per_end():
    site, t = _site()
    t.qstat = qstat(_running(4, "10") + _running(5, "20"), _waiting("6-10:1"))
    t.qacct = "".join(qacct_task(n, 5 + n) for n in (1, 2, 3))
    (arr,) = await site.statuses(["31"], following=[ARRAY])
    assert (arr.native_id, arr.state, arr.exit_code) == ("31", JobState.RUNNING, None)
    assert arr.reason == "array tasks: 2 running, 5 waiting, 3 completed"
    assert t.asked == ["qstat", "qacct"]
    (arr,) = await site.statuses(["31"], following=[ARRAY])  # no task left since: not asked
    assert arr.reason == "array tasks: 2 running, 5 waiting, 3 completed"
    assert t.asked == ["qstat", "qacct", "qstat"]
    # task 4 fails and task 6 starts: the count changed, accounting is asked again
    t.qstat = qstat(_running(5, "20") + _running(6, "30"), _waiting("7-10:1"))
    t.qacct += qacct_task(4, 40, exit_status=2)
    (arr,) = await site.statuses(["31"], following=[ARRAY])
    assert arr.state == JobState.RUNNING and t.asked[-2:] == ["qstat", "qacct"]
    assert arr.reason == "array tasks: 2 running, 4 waiting, 3 completed, 1 not completed"


async def test_an_array_that_left_the_queue_ends_with_its_last_task_failed_by_any(tmp_path):
    site, t = _site()
    t.qstat = qstat()  # every task has ended
    t.qacct = "".join(qacct_task(n, 10 + n, exit_status=2 if n == 4 else 0)
                      for n in range(1, 11))
    (arr,) = await site.statuses(["31"], following=[ARRAY])
    assert (arr.native_id, arr.state, arr.exit_code) == ("31", JobState.FAILED, 2)
    assert arr.ended_at == datetime(2026, 12, 4, 12, 0, 20, tzinfo=UTC)
    assert arr.reason == "array tasks: 9 completed, 1 not completed; task 31.4: exit code 2"


def test_a_slurm_range_of_waiting_tasks_counts_each_task():
    seen = [JobStatus(native_id="123_1", state=JobState.RUNNING),
            JobStatus(native_id="123_[3-9%2]", state=JobState.PENDING)]
    assert slurm_array_tasks("123_[3-9%2]") == 7 and slurm_array_of("123_[3-9%2]") == "123"
    (arr,) = fold_array_tasks(seen, slurm_array_of, slurm_array_tasks)
    assert arr.reason == "array tasks: 1 running, 7 waiting"


@pytest.mark.parametrize("scheduler, task_ids", [
    ("sge", ["31.1", "31.2", "31.3"]), ("slurm", ["31_1", "31_2", "31_3"])])
async def test_the_users_own_array_tasks_do_not_calibrate_the_queue(tmp_path, scheduler,
                                                                     task_ids):
    """Accounting lists an array's tasks apart: the user's own array (in the store as its
    array id) is the user's, not other users' work the queue is calibrated by."""
    import time
    from datetime import timedelta

    from diamond_jupyter.config import FederationConfig
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.model import Resources
    from diamond_jupyter.store import Store

    fed = Federation(FederationConfig(sites=[SiteConfig(
        name="g", scheduler=scheduler, transport=TransportConfig(kind="local"))]),
        store=Store(tmp_path / "s.sqlite"))
    now = datetime.now(UTC)
    try:
        def rec(nid: str, ran_s: int) -> JobStatus:
            return JobStatus(native_id=nid, state=JobState.COMPLETED, partition="all.q",
                             cpus=1, walltime_s=600, started_at=now - timedelta(seconds=700),
                             ended_at=now - timedelta(seconds=700 - ran_s))
        # other users' jobs ran 1% of their walltime; the user's own array's tasks 50%
        acct = [rec(str(i), 6) for i in range(1, 6)] + [rec(t, 300) for t in task_ids]
        fed.store.upsert_job(Job(
            id="g:31", site="g", native_id="31", state=JobState.COMPLETED,
            spec=JobSpec(script="./a\n", array=ArraySpec(expression="1-3"),
                         resources=Resources(walltime_s=600)),
            submitted_at=now, started_at=now - timedelta(seconds=700),
            ended_at=now - timedelta(seconds=400)))
        fed._calibrated["g"] = (time.monotonic(), acct)
        cal = (await fed.calibration(fetch=False))["g"]
        assert cal.samples == 5 and cal.exact(("*", "*")).mean == pytest.approx(0.01)
    finally:
        await fed.close()
