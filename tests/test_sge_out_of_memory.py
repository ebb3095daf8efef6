"""Grid Engine's record (`qacct -j`) of a job killed at its memory limit says "out of
memory", as Slurm's OUT_OF_MEMORY does: a job whose peak memory (`maxvmem`) reached the
`h_vmem` it asked for (per slot: times its slots) and that was killed (`exit_status 137`),
or that qmaster ended at a limit (`failed 37`, h_rt, h_cpu or h_vmem) before its run time
was up. Records written from accounting(5)'s documented fields; what the record does not
show (no maxvmem, no h_vmem, a peak below the limit, a run to its h_rt) keeps its
reading. The tests marked `fault` failed before."""

from __future__ import annotations

import pytest

from diamond_jupyter.dialects import get_commands
from diamond_jupyter.model import JobState

SGE = get_commands("sge")
OOM = "out of memory: the job used more than the memory it was given"


def _qacct(*, failed: str = "0", status: str = "137", maxvmem: str | None = "4.012G",
           category: str = "-u ann -l h_rt=7200,h_vmem=4G -q all.q", slots: int = 1,
           wallclock: str = "1800.250") -> list:
    lines = ["=" * 62, "qname        all.q", "hostname     n01", "owner        ann",
             "jobname      big", "jobnumber    5001", "taskid       undefined",
             "qsub_time    Sat Dec  5 08:00:00 2026", "start_time   Sat Dec  5 08:01:00 2026",
             "end_time     Sat Dec  5 08:31:00 2026", f"slots        {slots}",
             f"failed       {failed}", f"exit_status  {status}",
             f"ru_wallclock {wallclock}", f"category     {category}"]
    if maxvmem is not None:
        lines.append(f"maxvmem      {maxvmem}")
    return SGE.parse_accounting("\n".join(lines) + "\n")


def test_fault_a_job_killed_past_its_h_vmem_ran_out_of_memory():
    [job] = _qacct()
    assert (job.state, job.exit_code, job.reason) == (
        JobState.FAILED, 137, f"{OOM} (maxvmem 4.012G, h_vmem 4G)")


def test_fault_qmasters_limit_before_h_rt_with_the_peak_at_h_vmem_is_memory_not_time():
    [job] = _qacct(failed="37  : qmaster enforced h_rt, h_cpu, or h_vmem limit")
    assert (job.state, job.reason) == (JobState.FAILED, f"{OOM} (maxvmem 4.012G, h_vmem 4G)")


def test_fault_h_vmem_is_a_slots_limit():
    [job] = _qacct(slots=4, maxvmem="16.5G")
    assert job.reason == f"{OOM} (maxvmem 16.5G, h_vmem 4G a slot, 4 slots)", job


@pytest.mark.parametrize("record,state,reason", [
    (dict(maxvmem="3.2G"), JobState.FAILED, "killed by signal 9"),       # below its limit
    (dict(slots=4, maxvmem="6G"), JobState.FAILED, "killed by signal 9"),  # below 4 × 4G
    (dict(maxvmem=None), JobState.FAILED, "killed by signal 9"),         # not recorded
    (dict(category="-u ann -l h_rt=7200"), JobState.FAILED, "killed by signal 9"),
    (dict(status="1"), JobState.FAILED, "exit code 1"),                  # its own exit
    (dict(failed="37  : qmaster enforced h_rt, h_cpu, or h_vmem limit",
          wallclock="7200.100"), JobState.TIMEOUT,
     "time or memory limit (qmaster enforced h_rt, h_cpu, or h_vmem limit)"),
])
def test_what_the_record_does_not_show_keeps_its_reading(record, state, reason):
    [job] = _qacct(**record)
    assert (job.state, job.reason) == (state, reason), job
