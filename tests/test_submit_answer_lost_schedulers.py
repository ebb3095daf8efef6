"""A submit whose answer was lost after its request went out is told apart from one that
never left, on PBS, LSF, Grid Engine and Flux as on Slurm: each submit command's own words
for "sent, no answer" (the scheduler may have queued the job: its token decides) against
"could not connect" and a refusal (nothing was queued). No test bed."""

from __future__ import annotations

import getpass
import os
from pathlib import Path

import one_site_engine
import pytest
from one_site_engine import lost_spec

from diamond_jupyter.config import SiteConfig, TransportConfig
from diamond_jupyter.dialects.flux_commands import FluxCommands
from diamond_jupyter.dialects.lsf_commands import LsfCommands
from diamond_jupyter.dialects.pbs_commands import PbsCommands
from diamond_jupyter.dialects.sge_commands import SgeCommands
from diamond_jupyter.model import JobState, SiteError

# (dialect, what its submit command printed, whether the job may have been queued)
SAID = [
    (PbsCommands, "qsub: Batch protocol error", True),
    (PbsCommands, "qsub: End of File", True),
    (PbsCommands, "qsub: Premature end of message", True),
    (PbsCommands, "qsub: cannot connect to server pbs1 (errno=111)", False),
    (PbsCommands, "Connection refused\nqsub: cannot connect to server pbs1 (errno=15010)",
     False),
    (PbsCommands, "qsub: Unknown queue", False),
    (LsfCommands, "Timeout in contacting mbatchd. Job not submitted.", True),
    (LsfCommands, "Timeout on connect() call. Job not submitted.", False),
    (LsfCommands, "LSF is down. Please wait...", False),
    (LsfCommands, "Cannot connect to LSF. Please wait...", False),
    (LsfCommands, "No such queue. Job not submitted.", False),
    (SgeCommands, "Unable to run job: failed receiving gdi request response for mid=1 "
                  "(got syncron message receive timeout error).", True),
    (SgeCommands, "error: commlib error: got select error (Connection refused)\n"
                  "Unable to run job: unable to contact qmaster using port 6444 on host "
                  "\"sge1\".", False),
    (SgeCommands, "Unable to run job: failed sending gdi request.", False),
    (SgeCommands, "Unable to run job: Job was rejected because job requests unknown queue "
                  "\"nope\".", False),
    (FluxCommands, "flux-job: submit: Connection timed out", True),
    (FluxCommands, "flux-job: submit: Connection reset by peer", True),
    (FluxCommands, "flux-job: flux_open: No such file or directory", False),
    (FluxCommands, "Unable to connect to Flux: Connection refused", False),
    (FluxCommands, "flux-job: submit: unsatisfiable request", False),
]


@pytest.mark.parametrize("commands, stderr, unsure", SAID,
                         ids=[f"{c.name}-{i}" for i, (c, _, _) in enumerate(SAID)])
def test_which_failed_submits_may_have_queued_the_job(commands, stderr, unsure):
    assert commands.submit_unsure(1, stderr) is unsure
    assert commands.submit_unsure(0, stderr) is False  # a submit that succeeded lost nothing


# -- through the real submit path: a local site whose submit and lookup commands are fakes ---

ME = getpass.getuser()
NAME = r"[A-Za-z0-9_.-]*dmd-[0-9a-f]*"  # the job's name as the script carries it

# Each scheduler: the submit command's name, how the fake reads the script (a file argument
# or standard input), the lookup commands (what each prints once the job was taken, from the
# name the submit read into $name), what the submit prints when its answer is lost, and what
# it prints when it could not reach the server at all.
FAKES = {
    "pbs": dict(
        submit="qsub", lookup={
            "qselect": 'echo 77.srv',
            "qstat": ('case "$*" in *-B*) exit 1;; esac\n'
                      'printf \'{"Jobs":{"77.srv":{"Job_Name":"%s","job_state":"Q",'
                      f'"Job_Owner":"{ME}@login"}}}}}}\\n\' "$name"')},
        lost="qsub: Batch protocol error",
        not_sent="Connection refused\nqsub: cannot connect to server pbs1 (errno=15010)",
        native_id="77.srv"),
    "lsf": dict(
        submit="bsub", lookup={
            "bjobs": ('printf \'{"COMMAND":"bjobs","JOBS":1,"RECORDS":[{"JOBID":"77",'
                      f'"STAT":"PEND","USER":"{ME}","JOB_NAME":"%s"}}]}}\\n\' "$name"')},
        lost="Timeout in contacting mbatchd. Job not submitted.",
        not_sent="LSF is down. Please wait...", native_id="77"),
    "sge": dict(
        submit="qsub", lookup={
            "qstat": ('printf \'<?xml version="1.0"?><job_info><queue_info></queue_info>'
                      '<job_info><job_list state="pending"><JB_job_number>77</JB_job_number>'
                      f'<JB_name>%s</JB_name><JB_owner>{ME}</JB_owner><state>qw</state>'
                      '</job_list></job_info></job_info>\\n\' "$name"'),
            "qacct": "exit 1"},
        lost=("Unable to run job: failed receiving gdi request response for mid=1 (got "
              "syncron message receive timeout error)."),
        not_sent=('Unable to run job: unable to contact qmaster using port 6444 on host '
                  '"sge1".'), native_id="77"),
    "flux": dict(
        submit="flux", lookup={},
        lost="flux-job: submit: Connection timed out",
        not_sent="flux-batch: ERROR: Unable to connect to Flux: Connection refused",
        native_id="77"),
}


class FakeScheduler:
    """A local site of `scheduler` whose submit command notes each call, queues the job
    (its name read from the script) when told to, prints `stderr` and exits 1; its lookup
    commands show the job once queued."""

    def __init__(self, tmp_path: Path, scheduler: str) -> None:
        self.fake = FAKES[scheduler]
        self.bin = tmp_path / "bin"
        self.bin.mkdir()
        self.taken = tmp_path / "taken"  # the queued job's name, once queued
        self.calls = tmp_path / "submit-calls.txt"
        self.cfg = SiteConfig(name="alpha", scheduler=scheduler, workdir=str(tmp_path / "w"),
                              max_job_name=200 if scheduler == "pbs" else None,
                              transport=TransportConfig(kind="local"),
                              preamble=f'PATH={self.bin}:"$PATH"; export PATH')
        if scheduler == "flux":  # one command: `flux batch` submits, `flux jobs` looks up
            jobs = ('printf \'{"jobs":[{"id":77,"state":"SCHED","name":"%s",'
                    f'"userid":{os.getuid()},"ntasks":1}}]}}\\n\' "$name"')
            self._write("flux", f'case "$1" in batch) shift; {self._submit_body()};;\n'
                                f'jobs) {self._lookup_body(jobs)};;\nesac\n')
        else:
            self._write(self.fake["submit"], self._submit_body())
            for command, prints in self.fake["lookup"].items():
                self._write(command, self._lookup_body(prints))
        self.says(self.fake["lost"], takes_the_job=True)

    def _write(self, command: str, body: str) -> None:
        path = self.bin / command
        path.write_text(f"#!/bin/sh\n{body}\n")
        path.chmod(0o755)

    def _submit_body(self) -> str:
        src = '"$src"'
        read = (f'src={self.bin}/stdin; cat > "$src"' if self.fake["submit"] == "bsub"
                else 'for src; do :; done')
        return (f'echo "$*" >> {self.calls}\n{read}\n'
                f'[ -f {self.bin}/takes ] && grep -o "{NAME}" {src} | head -n 1 > {self.taken}\n'
                f'cat {self.bin}/says >&2; exit 1')

    def _lookup_body(self, prints: str) -> str:
        return f'[ -s {self.taken} ] || exit 0\nname=$(cat {self.taken})\n{prints}'

    def says(self, stderr: str, *, takes_the_job: bool) -> None:
        (self.bin / "says").write_text(stderr + "\n")
        takes = self.bin / "takes"
        takes.touch() if takes_the_job else takes.unlink(missing_ok=True)

    def submits(self) -> int:
        return len(self.calls.read_text().splitlines()) if self.calls.exists() else 0


@pytest.fixture(params=sorted(FAKES))
def scheduler(request, tmp_path) -> FakeScheduler:
    return FakeScheduler(tmp_path, request.param)


@pytest.fixture
def site_cfg(scheduler):
    return scheduler.cfg


fed = one_site_engine.answer_lost_fed


async def test_a_job_taken_whose_answer_was_lost_is_bound_by_its_token(tmp_path, scheduler,
                                                                       fed):
    job = await fed.submit(lost_spec(tmp_path), "alpha", force=True)
    assert job.native_id == scheduler.fake["native_id"], job
    assert not job.state.terminal
    assert scheduler.submits() == 1  # not submitted twice
    assert fed.store.intents_without_native_id() == []
    said = " ".join(scheduler.fake["lost"].split())
    assert fed.submit_notes(job.id) == [
        f"alpha: the scheduler's answer to the submit was lost ({said}); the job was found "
        "in the queue by its token"]


async def test_a_server_never_reached_is_a_site_failure_closed_at_once(tmp_path, scheduler,
                                                                       fed):
    scheduler.says(scheduler.fake["not_sent"], takes_the_job=False)
    with pytest.raises(SiteError, match="did not answer the submit.*nothing was submitted"):
        await fed.submit(lost_spec(tmp_path), "alpha", force=True)
    assert fed.store.intents_without_native_id() == []
    [job] = fed.store.list_jobs()
    assert job.state == JobState.FAILED and job.native_id is None
    assert scheduler.submits() == 1


def test_a_gdi_request_never_sent_is_grid_engine_not_answering():
    """qsub's "failed sending gdi request": nothing reached the qmaster, a site failure
    (not the job refused)."""
    assert SgeCommands.status_unanswered(1, "Unable to run job: failed sending gdi request.")
