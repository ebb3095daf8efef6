"""A submit whose answer was lost after its request went out is told apart from one that
never left, on PBS, LSF, Grid Engine and Flux as on Slurm: each submit command's own words
for "sent, no answer" (the scheduler may have queued the job: its token decides) against
"could not connect" and a refusal (nothing was queued). No test bed."""

from __future__ import annotations

import pytest

from diamond_jupyter.dialects.flux_commands import FluxCommands
from diamond_jupyter.dialects.lsf_commands import LsfCommands
from diamond_jupyter.dialects.pbs_commands import PbsCommands
from diamond_jupyter.dialects.sge_commands import SgeCommands

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
