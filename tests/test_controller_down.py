"""A Slurm controller (or slurmdbd) that does not answer for a while says nothing about the
jobs asked: the engine keeps them as last seen and asks again, where it took the failed
queries' empty output for "gone from the queue and from accounting" and failed a running
job after three polls. A real `Site` on the local transport whose squeue and sacct are
scripts written here; no test bed."""

from __future__ import annotations

import pytest
from one_site_engine import one_followed_job

from diamond_jupyter.config import SiteConfig, TransportConfig
from diamond_jupyter.dialects.flux_commands import FluxCommands
from diamond_jupyter.dialects.lsf_commands import LsfCommands
from diamond_jupyter.dialects.pbs_commands import PbsCommands
from diamond_jupyter.dialects.sge_commands import SgeCommands
from diamond_jupyter.dialects.slurm_commands import SlurmCommands
from diamond_jupyter.model import JobState, SiteError
from diamond_jupyter.sites import Site

DOWN_SQUEUE = ("echo 'slurm_load_jobs error: Unable to contact slurm controller (connect "
               "failure)' >&2; exit 1")
DOWN_SACCT = ("echo 'sacct: error: Problem talking to the database: Connection refused' >&2; "
              "exit 1")
ENDED = ("echo '500|COMPLETED|2026-01-01T00:00:01|2026-01-01T00:00:09|2026-01-01T00:00:00|"
         "10:00|1|1|me|debug|N/A|n1|None||sim'")


@pytest.mark.parametrize("stderr,unanswered", [
    ("slurm_load_jobs error: Unable to contact slurm controller (connect failure)", True),
    ("slurm_load_jobs error: Socket timed out on send/recv operation", True),
    ("sacct: error: Problem talking to the database: Connection refused", True),
    ("slurm_load_jobs error: Invalid job id specified", False),  # an answer: not queued
    ("", False),
])
def test_slurm_tells_an_unanswered_query_from_an_answer(stderr, unanswered):
    assert SlurmCommands.status_unanswered(1, stderr) is unanswered
    assert SlurmCommands.status_unanswered(0, stderr) is False


@pytest.mark.parametrize("commands,stderr,unanswered", [
    (PbsCommands, "Connection refused\nqstat: cannot connect to server pbs1 (errno=15010)",
     True),
    (PbsCommands, "qstat: Unknown Job Id 123.pbs1", False),
    (PbsCommands, "slurm_load_jobs error: Unable to contact slurm controller", True),  # wrappers
    (LsfCommands, "LSF is down. Please wait...", True),
    (LsfCommands, "Job <123> is not found", False),
    (SgeCommands, "error: unable to contact qmaster using port 6444 on host \"qm\"", True),
    (SgeCommands, "Following jobs do not exist: 123", False),
])
def test_each_scheduler_tells_an_unanswered_query_from_an_answer(commands, stderr, unanswered):
    assert commands.status_unanswered(2, stderr) is unanswered


async def test_a_running_job_is_not_lost_while_the_controller_does_not_answer(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()

    def scripts(squeue: str, sacct: str) -> None:
        for prog, body in (("squeue", squeue), ("sacct", sacct)):
            (bin_dir / prog).write_text(f"#!/bin/sh\n{body}\n")
            (bin_dir / prog).chmod(0o755)
    scripts(DOWN_SQUEUE, DOWN_SACCT)
    site = Site(SiteConfig(name="alpha", scheduler="slurm", workdir=str(tmp_path / "w"),
                           transport=TransportConfig(kind="local"),
                           commands={"squeue": str(bin_dir / "squeue"),
                                     "sacct": str(bin_dir / "sacct")}))
    async with one_followed_job(site, tmp_path / "store.sqlite", "500") as (store, mon):
        for _ in range(5):  # more than the misses that make a job lost
            with pytest.raises(SiteError, match="alpha: the scheduler did not answer "
                                                r"\(slurm_load_jobs error: Unable to contact"):
                await mon.poll_once()
            assert store.get_job("alpha:500").state == JobState.RUNNING
        assert mon.trouble is not None and "Unable to contact slurm controller" in mon.trouble
        scripts(ENDED, "true")  # the controller is back; the job ended meanwhile
        assert await mon.poll_once() == 1
        assert store.get_job("alpha:500").state == JobState.COMPLETED
        assert mon.trouble is None


# What flux-core's commands print when the broker does not answer (flux-core issues #4933,
# flux-docs #287, #6161: no broker socket, the upstream broker offline, ENOSYS while the
# instance starts or stops), as opposed to an answer about the jobs asked
FLUX_DOWN = [
    "flux-jobs: ERROR: Unable to connect to Flux: broker socket /run/flux/local was not found",
    "flux-jobs: ERROR: [Errno 2] Unable to connect to Flux: No such file or directory",
    "flux-jobs: ERROR: [Errno 111] Connection refused",
    "flux-jobs: ERROR: [Errno 113] Upstream Flux broker is offline. Try again later.",
    "flux-jobs: ERROR: [Errno 38] Function not implemented",
    "flux-jobs: ERROR: [Errno 104] Connection reset by peer",
    # the C commands (`flux job info`, `flux job urgency`): no broker connection at all
    "flux-job: flux_open: No such file or directory",
    "flux-job: flux_open: Permission denied",
]


@pytest.mark.parametrize("stderr", FLUX_DOWN)
def test_flux_tells_a_broker_that_does_not_answer(stderr):
    assert FluxCommands.status_unanswered(1, stderr) is True
    assert FluxCommands.status_unanswered(0, stderr) is False


@pytest.mark.parametrize("stderr", [
    "flux-jobs: ERROR: [Errno 2] unknown job id",  # an answer: the job is not known
    "flux-jobs: ERROR: invalid jobid: bogus",
    "",
])
def test_flux_answers_about_the_jobs_stay_answers(stderr):
    assert FluxCommands.status_unanswered(1, stderr) is False


@pytest.mark.parametrize("down", [FLUX_DOWN[0], FLUX_DOWN[3], FLUX_DOWN[4]])
async def test_a_running_flux_job_is_not_lost_while_the_broker_is_down(tmp_path, down):
    """`flux jobs` failing with the broker down read as an empty answer: the job was asked
    for again (the same `flux jobs`), then counted missing, and taken as lost."""
    flux = tmp_path / "flux"

    def script(body: str) -> None:
        flux.write_text(f"#!/bin/sh\n{body}\n")
        flux.chmod(0o755)
    script(f"echo '{down}' >&2; exit 1")
    site = Site(SiteConfig(name="fx", scheduler="flux", workdir=str(tmp_path / "w"),
                           transport=TransportConfig(kind="local"),
                           commands={"flux": str(flux)}))
    async with one_followed_job(site, tmp_path / "store.sqlite", "700") as (store, mon):
        for _ in range(5):  # more than the misses that make a job lost
            with pytest.raises(SiteError, match=r"fx: the scheduler did not answer \(flux-jobs"):
                await mon.poll_once()
            assert store.get_job("fx:700").state == JobState.RUNNING
        assert mon.trouble is not None and down.split(": ", 2)[-1][:20] in mon.trouble
        # the broker is back; the job ended meanwhile
        script("""echo '{"id": 700, "state": "INACTIVE", "result": "COMPLETED", """
               """"t_submit": 1.0, "t_run": 2.0, "t_inactive": 9.0, "returncode": 0, """
               """"waitstatus": 0, "name": "sim"}'""")
        assert await mon.poll_once() == 1
        assert store.get_job("fx:700").state == JobState.COMPLETED
        assert mon.trouble is None
