"""A csh body behind bash lines (`shell_lines_then`) is written to a file of its own per run.

Review: a PBS `#!/bin/tcsh` job translated into Slurm or LSF with a preamble (here an
`export` of a value holding a comma) wrote its body to one fixed `.diamond-step-body` in the
directory the job runs in: array tasks, or two jobs started there, overwrote each other's
copy while the other's shell still ran from it. Each run here is the real translation run
by bash and the real csh/tcsh.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from diamond_jupyter.dialects.translate import translate

HEAD = "#!/bin/{shell}\n#PBS -l walltime=1:00:00\n#PBS -J 1-2\n#PBS -v \"A='x,y'\"\n"
# the first job says it started, waits for a line on its input, then shows its own file
FIRST = 'echo started\nset go = "$<"\ncat $0\n'
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
    assert out == FIRST, out  # its own body, not the second job's
    assert not list(tmp_path.glob(".diamond-step-body*"))  # each removed at its end


@pytest.mark.parametrize("shell", [s for s in ("csh", "tcsh") if shutil.which(s)])
def test_the_job_ends_with_the_status_of_its_body(shell: str, tmp_path: Path):
    script, _, _ = translate(HEAD.format(shell=shell) + "exit 3\n", "slurm", "pbs")
    ran = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True,
                         text=True, timeout=60,
                         env={"PATH": os.environ["PATH"], "HOME": str(tmp_path)})
    assert ran.returncode == 3, ran.stderr
    assert not list(tmp_path.glob(".diamond-step-body*"))
