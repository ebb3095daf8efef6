"""PBS's record of a job its mom killed over a memory limit says "out of memory", as
Slurm's OUT_OF_MEMORY does: PBS Pro's Exit_status -27 (JOB_EXEC_KILL_MEM), -26 (vmem) and
-31 (hpmem), Torque's -10 (JOB_EXEC_OVERLIMIT_MEM), in `qstat -x -F json`, Torque's
`qstat -x` XML and `tracejob` alike; the other limits keep their words. Outputs written
from the documented formats. The tests marked `fault` failed before."""

from __future__ import annotations

import json

import pytest
from outputs_helpers import ended, pbs, torque

from diamond_jupyter.dialects.reasons import scheduler_sentence

OOM = "out of memory: the job used more than the memory it was given"


def _pro(exit_status: int) -> list:
    return ended(pbs.parse_status(json.dumps({"Jobs": {"9.pbs01": {
        "job_state": "F", "Exit_status": exit_status, "substate": 92,
        "Resource_List": {"walltime": "01:00:00", "mem": "4gb"},
        "resources_used": {"walltime": "00:10:00", "mem": "4194400kb"}}}}, indent=4)))


@pytest.mark.parametrize("exit_status,limit", [(-27, "mem"), (-26, "vmem"), (-31, "hpmem")])
def test_fault_pbs_pro_says_a_job_killed_over_its_memory_ran_out_of_memory(exit_status,
                                                                            limit):
    [(_, state, code, reason)] = _pro(exit_status)
    assert (state, code, reason) == (
        "FAILED", exit_status,
        f"{OOM} (killed by PBS over its {limit} limit, Exit_status {exit_status})")
    assert scheduler_sentence(reason), reason


def test_fault_torque_says_a_job_killed_over_its_memory_ran_out_of_memory():
    xml = ("<Data><Job><Job_Id>103.torque01</Job_Id><job_state>C</job_state>"
           "<exit_status>-10</exit_status></Job></Data>")
    [(_, state, code, reason)] = ended(torque.parse_status(xml))
    assert (state, code, reason) == (
        "FAILED", -10, f"{OOM} (killed by PBS over its memory limit, Exit_status -10)")


@pytest.mark.parametrize("exit_status,read", [
    (-29, ("TIMEOUT", -29, "killed by PBS: walltime exceeded")),
    (-28, ("FAILED", -28, "killed by PBS: resource limit (-28)")),  # cput
    (-25, ("FAILED", -25, "killed by PBS: resource limit (-25)")),  # ncpus
    (-10, ("FAILED", -10, "job never ran (Exit_status -10)")),      # PBS Pro's -10 is no limit
])
def test_other_limits_keep_their_words(exit_status, read):
    assert _pro(exit_status) == [("9.pbs01", *read)]
