"""A job array at a Flux site runs as one `flux batch` per task (test_flux_array_tasks.py),
so placement takes the Flux site for `#SBATCH --array=1-8%2` or a PBS `-J` like any other.
What it still refuses, and `diamond submit --site` too (with --force as well, never running
the flux command): an array of more tasks than it submits one by one, and a flux script's
own `--cc` (said as flux batch says it). `translate --to flux` still says the array dropped
(a script alone cannot say it: the engine submits the tasks)."""

from __future__ import annotations

import pytest
from one_site_engine import local_home_federation
from test_flux_logs_words import _fake_flux, flux_path  # noqa: F401 (a fixture)
from test_placement_cases import hera, only, reasons, run
from test_placement_lsf_fairshare_flux_requires import finch

from diamond_jupyter.dialects.flux_script import array_refusal
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import BadInput

TOO_MANY = ("job array 1-5000%2: 5000 tasks; a Flux site submits one job per task, at most "
            "1000: split the array")


@pytest.mark.parametrize("script, said", [
    ("#SBATCH --array=1-8%2\n#SBATCH -t 10\n", None),
    ("#PBS -J 1-5:2\n#PBS -l walltime=00:10:00\n", None),
    ("#SBATCH --array=1-5000%2\n", TOO_MANY),
    ("#SBATCH -t 10\n", None),
])
def test_only_an_array_too_large_to_submit_task_by_task_is_refused(script, said):
    spec = Federation.parse("#!/bin/bash\n" + script + "echo $SLURM_ARRAY_TASK_ID\n")
    assert array_refusal(spec) == said


def test_flux_copies_keep_flux_batchs_own_refusal():
    spec = Federation.parse("#!/bin/bash\n#flux: --cc=1-4\n#flux: -n 1\nhostname\n")
    assert array_refusal(spec).startswith("line 2: --cc=1-4: flux batch cannot express copies")


def test_placement_takes_the_flux_site_for_an_array_and_refuses_one_too_large():
    assert only(run("#SBATCH --array=1-8%2\n#SBATCH -t 10\n#SBATCH -n 1", finch(None)),
                "finch").feasible
    big = run("#SBATCH --array=1-5000%2\n#SBATCH -t 10\n#SBATCH -n 1", hera(), finch(None))
    assert reasons(big, "finch") == TOO_MANY
    only(big, "hera")


@pytest.mark.usefixtures("flux_path")
@pytest.mark.parametrize("force", [False, True])
async def test_a_submit_of_too_large_an_array_is_refused_and_runs_nothing(tmp_path, force):
    calls = tmp_path / "calls"
    _fake_flux(tmp_path, f'echo "$@" >> {calls}\necho f2Jc8CuU1\n')
    fed = local_home_federation(tmp_path, scheduler="flux")
    spec = fed.parse("#!/bin/bash\n#SBATCH --array=1-5000%2\n#SBATCH -t 10\n"
                     "echo $SLURM_ARRAY_TASK_ID\n")
    try:
        with pytest.raises(BadInput) as e:
            await fed.submit(spec, site="here", force=force)
        assert TOO_MANY in str(e.value)
        assert "batch" not in calls.read_text().split()
        assert fed.store.list_jobs() == []
    finally:
        await fed.close()
