"""An `srun --het-group=N` naming a component the heterogeneous job does not have (left by
the seventh sweep of workflow and sites files: not checked). sbatch takes the script; the
job waits in the queue, starts, and srun fails the step ("Attempt to run a job step with
het group value of 2, but the job allocation has maximum value of 1"). Now refused when the
script is read, naming the line, the component and how many the job has: a submit sends
nothing, `diamond translate` exits 2 with one line. Offsets within the job, lists and ranges
(`0,1`, `0-1`), `--pack-group` (its name before Slurm 20.02) and a value from a variable
are read as before. The tests marked `fault` failed before the fix."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from diamond_jupyter.federation import Federation
from diamond_jupyter.model import BadInput

_HET = ("#!/bin/bash\n#SBATCH -N 1 -n 2 -t 10:00\n#SBATCH hetjob\n#SBATCH -N 2 -n 8\n"
        "module load openmpi\n{step}\n")


@pytest.mark.parametrize("step,said", [
    ("srun --het-group=0 ./ocean : --het-group=2 ./atmos", "`--het-group=2` names component 2"),
    ("srun --het-group 0,2 ./coupled", "`--het-group 0,2` names component 2"),
    ("srun --het-group=1-3 ./coupled", "`--het-group=1-3` names component 3"),
    ("  srun -n 4 --pack-group=5 ./old &", "`--pack-group=5` names component 5"),
    ("time srun --het-group='2' ./x", "`--het-group='2'` names component 2"),
])
def test_fault_a_step_naming_a_component_the_job_lacks_is_refused(step, said):
    with pytest.raises(BadInput) as e:
        Federation.parse(_HET.format(step=step))
    assert str(e.value) == (
        f"line 6: {said}, but the heterogeneous job (line 3) has 2 components, numbered 0 "
        "to 1: srun would fail that step once the job runs; name a component the job has, "
        "or add one (`#SBATCH hetjob` and its options)")


@pytest.mark.parametrize("step", [
    "srun --het-group=0 ./ocean : --het-group=1 ./atmos",
    "srun --het-group=0,1 ./coupled", "srun --het-group 0-1 ./coupled",
    "srun --pack-group=1 ./old", 'srun --het-group="$G" ./x',
    "# srun --het-group=5 ./commented", "echo --het-group=7 is not an option of echo",
])
def test_steps_within_the_job_are_read_as_before(step):
    """(guard)"""
    spec = Federation.parse(_HET.format(step=step))
    assert len(spec.components) == 2 and step in (spec.script or "")


def test_fault_translate_exits_2_naming_the_line(tmp_path):
    script = tmp_path / "coupled.sbatch"
    script.write_text(_HET.format(step="srun --het-group=0 ./a : --het-group=2 ./b"))
    env = {**os.environ, "DIAMOND_DATA_DIR": str(tmp_path / "data"), "DIAMOND_ENGINE": "local",
           "DIAMOND_HANDOVER": "0"}
    res = subprocess.run([sys.executable, "-m", "diamond_jupyter.cli", "translate", "--to",
                          "pbs", str(script)], capture_output=True, text=True, env=env,
                         timeout=120, cwd=tmp_path)
    assert res.returncode == 2, res
    assert res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in res.stderr, lines
    assert lines[0].startswith("diamond: ") and \
        "line 6: `--het-group=2` names component 2" in lines[0], lines
