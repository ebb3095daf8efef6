"""A Flux job the kernel's OOM killer killed raises no exception: flux-shell's oom plugin only
logs "Memory cgroup out of memory: killed N task(s) on HOST." (flux-core src/shell/oom.c), and
where the job's stderr is a file (flux batch's always is) the shell writes its log lines there
as `flux-shell[RANK]: LEVEL: COMPONENT: MESSAGE` (src/shell/output/log.c). Such a job, which
`flux jobs` shows failed with exit 137 (SIGKILL), now ends "out of memory" as on the other
schedulers; a line the job printed itself counts only against that kill, and an ordinary
failure keeps its own ending. A local site whose `flux` answers with recorded-form output;
the stderr file read is a real file."""

from __future__ import annotations

import json

import pytest
from one_site_engine import local_home_federation
from test_flux_logs_words import _fake_flux, flux_path  # noqa: F401 (a fixture)

from diamond_jupyter.dialects.flux_commands import FluxCommands, shell_oom
from diamond_jupyter.dialects.outputs_common import OUT_OF_MEMORY
from diamond_jupyter.dialects.reasons import scheduler_sentence
from diamond_jupyter.model import JobSpec, JobState, JobStatus

FLUX = FluxCommands()
OOM_LINE = "flux-shell[0]: ERROR: oom: Memory cgroup out of memory: killed 1 task on node7."
SAID = f"{OUT_OF_MEMORY} (flux-shell oom: Memory cgroup out of memory: killed 1 task on node7.)"
JOB_ID = "81604378624"


def _record(returncode: int, exception: dict | None = None) -> dict:
    """`flux jobs --json`'s record of an inactive failed job (RFC 21 fields)."""
    return {"id": int(JOB_ID), "state": 64, "result": 2, "returncode": returncode,
            "waitstatus": returncode << 8, "t_run": 1765100000.0, "t_inactive": 1765100090.0,
            **({"exception": {"occurred": True, "severity": 0, **exception}}
               if exception else {})}


def _status(returncode: int, exception: dict | None = None) -> JobStatus:
    [job] = FLUX.parse_status(json.dumps({"jobs": [_record(returncode, exception)]}))
    return job


@pytest.mark.parametrize("text, words", [
    (f"step 1\n{OOM_LINE}\nflux-shell[0]: ERROR: oom: memory.peak = 3.9G\n",
     "Memory cgroup out of memory: killed 1 task on node7."),
    ("flux-shell[3]: ERROR: oom: Memory cgroup out of memory: killed 12 tasks on "
     "tioga12.llnl.gov.\n", "Memory cgroup out of memory: killed 12 tasks on tioga12.llnl.gov."),
    ("flux-shell: FATAL: oom: Memory cgroup out of memory: killed 2 tasks on n1.\n",
     "Memory cgroup out of memory: killed 2 tasks on n1."),
    # another plugin's, words added, or not a line of its own: not the oom plugin's line
    ("flux-shell[0]: ERROR: exec: Memory cgroup out of memory: killed 1 task on n1.\n", None),
    (f"echo {OOM_LINE}\n", None),
    (f"{OOM_LINE} and then some\n", None),
    ("slurmstepd: error: Detected 1 oom-kill event(s)\n", None),
    ("", None),
])
def test_the_oom_plugins_line_is_read_whole(text, words):
    assert shell_oom(text) == words


def test_a_killed_job_whose_stderr_holds_the_line_ends_out_of_memory():
    job = FLUX.with_log_ending(_status(137), f"computing\n{OOM_LINE}\n")
    assert (job.state, job.exit_code, job.reason) == (JobState.FAILED, 137, SAID)
    assert scheduler_sentence(job.reason)


@pytest.mark.parametrize("status", [
    _status(1),      # an ordinary failure: the line is the job's own text
    _status(143),    # SIGTERM (a cancel or a time limit's warning)
    _status(137, {"type": "oom", "note": ""}),  # said already, from the exception
])
def test_other_endings_keep_their_own(status):
    assert FLUX.log_ending_wanted(status) is False
    assert FLUX.with_log_ending(status, OOM_LINE + "\n") == status


def test_a_killed_job_without_the_line_is_not_said_out_of_memory():
    status = _status(137)
    assert FLUX.log_ending_wanted(status)
    assert FLUX.with_log_ending(status, "Killed\n") == status
    assert status.reason is None


@pytest.mark.usefixtures("flux_path")
@pytest.mark.parametrize("returncode, stderr, reason", [
    (137, f"starting\n{OOM_LINE}\nflux-shell[0]: ERROR: oom: memory.peak = 2G\n", SAID),
    (137, "starting\n", None),
    (1, f"{OOM_LINE}\n", None),  # what the job printed, on an ordinary failure
])
async def test_the_engine_reads_the_jobs_stderr_once_it_is_killed(tmp_path, returncode,
                                                                   stderr, reason):
    """The site's `flux jobs` answers the failed record; the engine reads the job's real
    stderr file and says how it ended (the file is read once, however often it polls)."""
    answer = tmp_path / "jobs.json"
    answer.write_text(json.dumps({"jobs": [_record(returncode)]}))
    _fake_flux(tmp_path, f'echo "$@" >> {tmp_path / "calls"}\ncat {answer}\n')
    fed = local_home_federation(tmp_path, scheduler="flux")
    err = tmp_path / "home" / "sim.err"
    err.write_text(stderr)
    try:
        fed.store.record_intent("here", "abc123abc123", JobSpec(
            name="sim", script="true\n", stdout=str(tmp_path / "home" / "sim.out"),
            stderr=str(err), source_dialect="flux"))
        job = fed.store.bind_native_id("abc123abc123", JOB_ID)
        fed.store.apply_state(job.id, JobState.RUNNING)
        site = fed.sites["here"]
        job = fed.store.get_job(job.id)
        [first] = await site.statuses([JOB_ID], following=[job])
        err.write_text("")  # a second poll reads what was read
        [again] = await site.statuses([JOB_ID], following=[job])
        assert (first.state, first.exit_code, first.reason) == (JobState.FAILED, returncode,
                                                                reason)
        assert again.reason == reason
        ended = await fed.journal.refresh(job.id)
        assert (ended.state, ended.reason) == (JobState.FAILED, reason)
    finally:
        await fed.close()
