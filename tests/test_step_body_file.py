"""A csh body behind bash lines (`shell_lines_then`) is written to a file of its own per run.

Review: a PBS `#!/bin/tcsh` job translated into Slurm or LSF with a preamble (here an
`export` of a value holding a comma) wrote its body to one fixed `.diamond-step-body` in the
directory the job runs in: array tasks, or two jobs started there, overwrote each other's
copy while the other's shell still ran from it. Each run here is the real translation run
by bash and the real csh/tcsh (and python3).

Review: that file was then run by a child of bash, so a signal Slurm sends to the batch shell
alone (`--signal=B:USR1@60`, for a checkpoint) killed bash and never reached the body; the
interpreter is `exec`ed again (on the file's descriptor, the file already removed).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from diamond_jupyter.dialects.translate import translate

HEAD = "#!/bin/{shell}\n#PBS -l walltime=1:00:00\n#PBS -J 1-2\n#PBS -v \"A='x,y'\"\n"
# the first job says it started, waits for a line on its input, then reads on in its body
FIRST = 'echo started\nset go = "$<"\necho first ran $A\n'
SECOND = "echo second ran $A\n"


@pytest.mark.parametrize("target", ["slurm", "lsf"])
@pytest.mark.parametrize("shell", [s for s in ("csh", "tcsh") if shutil.which(s)])
def test_two_jobs_in_one_directory_each_run_their_own_body(shell: str, target: str,
                                                           tmp_path: Path):
    first, _, _ = translate(HEAD.format(shell=shell) + FIRST, target, "pbs")
    second, _, _ = translate(HEAD.format(shell=shell) + SECOND, target, "pbs")
    assert first.startswith("#!/bin/bash\n") and "mktemp" in first, first
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)}  # PBS starts it in the home
    with subprocess.Popen(["bash", "-c", first], cwd=tmp_path, env=env, text=True,
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE) as running:
        assert running.stdout is not None and running.stdout.readline() == "started\n"
        # the second job starts and ends in the same directory while the first still runs
        ran = subprocess.run(["bash", "-c", second], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=60)
        assert (ran.returncode, ran.stdout) == (0, "second ran x,y\n"), ran.stderr
        out, err = running.communicate("go\n", timeout=60)
    assert running.returncode == 0, err
    assert out == "first ran x,y\n", out  # its own body, not the second job's
    assert not list(tmp_path.glob(".diamond-step-body*"))  # each removed at its end


@pytest.mark.parametrize("shell", [s for s in ("csh", "tcsh") if shutil.which(s)])
def test_the_job_ends_with_the_status_of_its_body(shell: str, tmp_path: Path):
    script, _, _ = translate(HEAD.format(shell=shell) + "exit 3\n", "slurm", "pbs")
    ran = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True,
                         text=True, timeout=60,
                         env={"PATH": os.environ["PATH"], "HOME": str(tmp_path)})
    assert ran.returncode == 3, ran.stderr
    assert not list(tmp_path.glob(".diamond-step-body*"))


def _signals_as_slurm_leaves_them() -> None:
    """The batch shell starts with SIGINT handled by default, as slurmstepd starts it; a test
    run in the background of a script (`./scripts/test.sh`) inherits SIGINT ignored, which a
    csh cannot catch again."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


# bodies that save a checkpoint on the signal sent to the batch shell, then end with 0; csh
# catches no signal but SIGINT (`onintr`), which Slurm's --signal=B:INT@60 sends as well
CSH_SAVES = ('onintr saved\necho ready\nset go = "$<"\necho not reached\nexit 1\n'
             "saved:\necho checkpoint $A\nexit 0\n")
PYTHON_SAVES = ("import os, signal, sys\n"
                "def saved(*_):\n    print('checkpoint', os.environ['A'])\n    sys.exit(0)\n"
                "signal.signal(signal.SIGUSR1, saved)\nprint('ready', flush=True)\n"
                "sys.stdin.read()\nprint('not reached')\nsys.exit(1)\n")
SAVING = [(f"/bin/{s}", CSH_SAVES, signal.SIGINT) for s in ("csh", "tcsh") if shutil.which(s)]
SAVING.append(("/usr/bin/env python3", PYTHON_SAVES, signal.SIGUSR1))


@pytest.mark.parametrize(("interpreter", "body", "sig"), SAVING,
                         ids=[s.split()[-1].rsplit("/", 1)[-1] for s, _, _ in SAVING])
def test_a_signal_to_the_batch_shell_reaches_the_bodys_own_handler(
        interpreter: str, body: str, sig: signal.Signals, tmp_path: Path):
    head = HEAD.replace("#!/bin/{shell}", f"#!{interpreter}")
    script, _, _ = translate(head + body, "slurm", "pbs")
    assert script.startswith("#!/bin/bash\n"), script
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)}
    with subprocess.Popen(["bash", "-c", script], cwd=tmp_path, env=env, text=True,
                          preexec_fn=_signals_as_slurm_leaves_them,
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE) as batch_shell:
        assert batch_shell.stdout is not None and batch_shell.stdout.readline() == "ready\n"
        # nothing is left to remove while it runs: a job killed now leaves no file
        assert not list(tmp_path.glob(".diamond-step-body*"))
        batch_shell.send_signal(sig)  # the batch shell's pid only, as Slurm's B: does
        out, err = batch_shell.communicate(timeout=60)
    assert (batch_shell.returncode, out) == (0, "checkpoint x,y\n"), err
