"""LSF's record of a job killed at its memory limit (`TERM_MEMLIMIT`, `bsub -M` or the
queue's MEMLIMIT) says "out of memory", as Slurm's OUT_OF_MEMORY does, in `bjobs -json` and
in `bhist -l` (outputs written from LSF's documented formats); LSF's own words follow. A
job ended for another reason keeps LSF's. The tests marked `fault` failed before."""

from __future__ import annotations

import json

import pytest

from diamond_jupyter.dialects import get_commands
from diamond_jupyter.dialects.reasons import scheduler_sentence
from diamond_jupyter.model import JobState

LSF = get_commands("lsf")
OOM = "out of memory: the job used more than the memory it was given"
MEMLIMIT = "TERM_MEMLIMIT: job killed after reaching LSF memory usage limit"


def _bjobs(reason: str, code: str = "137") -> list:
    return LSF.parse_status(json.dumps({"COMMAND": "bjobs", "JOBS": 1, "RECORDS": [
        {"JOBID": "901", "STAT": "EXIT", "EXIT_CODE": code, "EXIT_REASON": reason}]}))


def _bhist(completed: str) -> list:
    text = ("Job <4102>, Job Name <wc>, User <ana>, Project <default>, Command <./run.sh>\n"
            "Sat Dec  5 14:46:40: Submitted from host <login>, to Queue <normal>, CWD <$HOME>;"
            "\nSat Dec  5 14:46:43: Dispatched to <n19>;\n"
            "Sat Dec  5 14:46:43: Starting (Pid 258999);\n"
            "Sat Dec  5 16:34:13: Exited with exit code 1. The CPU time used is 3.0 seconds;\n"
            f"Sat Dec  5 16:34:13: Completed <exit>; {completed}\n"
            "------------------------------------------------------------------------------\n")
    return LSF.parse_accounting(text)


@pytest.mark.parametrize("reason", [MEMLIMIT, "TERM_MEMLIMIT"])
def test_fault_bjobs_says_a_job_killed_at_its_memory_limit_ran_out_of_memory(reason):
    [job] = _bjobs(reason)
    assert (job.state, job.exit_code, job.reason) == (JobState.FAILED, 137,
                                                      f"{OOM} ({reason})")


def test_fault_bhist_says_a_job_killed_at_its_memory_limit_ran_out_of_memory():
    [job] = _bhist(f"{MEMLIMIT};")
    assert (job.state, job.exit_code, job.reason) == (JobState.FAILED, 1, f"{OOM} ({MEMLIMIT})")


@pytest.mark.parametrize("reason,state", [
    ("TERM_RUNLIMIT: job killed after reaching LSF run time limit", JobState.TIMEOUT),
    ("TERM_OWNER: job killed by owner", JobState.CANCELLED),
    ("TERM_CPULIMIT: job killed after reaching LSF CPU usage limit", JobState.FAILED),
    ("TERM_SWAP: job killed after reaching LSF swap usage limit", JobState.FAILED)])
def test_other_endings_keep_lsfs_words(reason, state):
    for job in (*_bjobs(reason), *_bhist(f"{reason}.")):
        assert job.state == state and job.reason == reason and OOM not in job.reason, job


def test_fault_the_out_of_memory_reason_stays_a_scheduler_sentence():
    """An agent's model gets a reason as plain data only when it is one of the scheduler's
    (or the dialect's) own sentences: the new wording is one, with words added it is not."""
    for job in (*_bjobs(MEMLIMIT), *_bjobs("TERM_MEMLIMIT"), *_bhist(f"{MEMLIMIT};")):
        assert scheduler_sentence(job.reason), job.reason
    assert not scheduler_sentence(f"{OOM} ({MEMLIMIT}) and rm -rf ~")
