"""A job array at a Flux site: flux batch has no arrays, and the separate jobs `flux submit
--cc` makes are not yet followed as one array's tasks, so a script with `#SBATCH
--array=1-8%2` (or a PBS `-J`) submitted there ran once, its array only said "dropped" among
the plan's warnings. Now placement refuses the Flux site for it with the reason, `diamond
submit --site` to it is refused (with --force too: it would run once, not once per index),
and the flux command is never run. `translate --to flux` still says the array dropped."""

from __future__ import annotations

import pytest
from one_site_engine import local_home_federation
from test_flux_logs_words import _fake_flux, flux_path  # noqa: F401 (a fixture)
from test_placement_cases import hera, only, reasons, run
from test_placement_lsf_fairshare_flux_requires import finch

from diamond_jupyter.dialects.flux_script import array_refusal
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import BadInput

ARRAY = ("job array 1-8%2: a Flux site runs a batch script once (flux batch has no arrays; "
         "the separate jobs of flux submit --cc are not followed as an array's tasks), so its "
         "8 tasks would run as one job; place it on a site with job arrays (Slurm, PBS, LSF, "
         "Grid Engine), or submit one job per index")


@pytest.mark.parametrize("script, said", [
    ("#SBATCH --array=1-8%2\n#SBATCH -t 10\n", ARRAY),
    ("#PBS -J 1-5:2\n#PBS -l walltime=00:10:00\n", ARRAY.replace("1-8%2", "1-5:2").replace(
        "its 8 tasks", "its 3 tasks")),
    ("#SBATCH -t 10\n", None),
])
def test_an_array_from_any_dialect_is_refused_for_flux(script, said):
    spec = Federation.parse("#!/bin/bash\n" + script + "echo $SLURM_ARRAY_TASK_ID\n")
    assert array_refusal(spec) == said


def test_flux_copies_keep_flux_batchs_own_refusal():
    spec = Federation.parse("#!/bin/bash\n#flux: --cc=1-4\n#flux: -n 1\nhostname\n")
    assert array_refusal(spec).startswith("line 2: --cc=1-4: flux batch cannot express copies")


def test_placement_refuses_the_flux_site_for_an_array_and_takes_it_elsewhere():
    p = run("#SBATCH --array=1-8%2\n#SBATCH -t 10\n#SBATCH -n 1", hera(), finch(None))
    assert reasons(p, "finch") == ARRAY
    only(p, "hera")
    plain = run("#SBATCH -t 10\n#SBATCH -n 1", finch(None))
    assert only(plain, "finch").feasible


@pytest.mark.usefixtures("flux_path")
@pytest.mark.parametrize("force", [False, True])
async def test_a_submit_to_the_flux_site_is_refused_and_runs_nothing(tmp_path, force):
    calls = tmp_path / "calls"
    _fake_flux(tmp_path, f'echo "$@" >> {calls}\necho f2Jc8CuU1\n')
    fed = local_home_federation(tmp_path, scheduler="flux")
    spec = fed.parse("#!/bin/bash\n#SBATCH --array=1-8%2\n#SBATCH -t 10\n"
                     "echo $SLURM_ARRAY_TASK_ID\n")
    try:
        with pytest.raises(BadInput) as e:
            await fed.submit(spec, site="here", force=force)
        assert ARRAY in str(e.value)
        assert "batch" not in calls.read_text().split()
        assert fed.store.list_jobs() == []
    finally:
        await fed.close()
