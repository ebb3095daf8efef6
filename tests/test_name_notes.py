"""A job's name changed on its way to a scheduler is said, never changed silently: blanks and
length (the engine's own limits), and what each scheduler refuses (Grid Engine's / : @ \\ * ?
and a leading digit, PBS's leading '-', LSF's brackets). The notes travel with the submitted
job (its `name_notes`, the job's warnings event, an approval plan's warnings) and
`diamond submit` prints each on stderr."""

from __future__ import annotations

import pytest
from test_wait_unreachable import Site as FakeSlurm

from diamond_jupyter.cli.main import main
from diamond_jupyter.config import SiteConfig, TransportConfig
from diamond_jupyter.model import JobSpec
from diamond_jupyter.sites import NAME_KEPT, Site
from diamond_jupyter.store import Store


def _site(scheduler: str) -> Site:
    return Site(SiteConfig(name="s1", scheduler=scheduler, workdir="/w",
                           transport=TransportConfig(kind="local")))


@pytest.mark.parametrize("scheduler,name,held", [
    ("sge", "data/run:1", "data_run_1"),
    ("sge", "2d-fit", "j2d-fit"),
    ("sge", "who@where?", "who_where_"),
    ("pbs", "-x", "j-x"),
    ("pbs", "3d-sim", "j3d-sim"),  # qsub -N: the first character alphabetic
    ("pbs", "_scratch", "j_scratch"),
    ("pbs", ".hidden", "j.hidden"),
    ("pbs", "run\tb", "run_b"),  # no white space (the engine makes blanks `_`, not tabs)
    ("lsf", "fit[3]", "fit_3_"),
])
def test_a_name_the_scheduler_refuses_is_noted_with_the_name_it_gets(scheduler, name, held):
    spec = _site(scheduler).prepare(JobSpec(name=name, command="true"), "c0ffee000001")
    assert spec.metadata["name_notes"] == [
        f"job name {name!r} is {held!r} in s1's queue (a name {scheduler} accepts)"]


@pytest.mark.parametrize("scheduler", ["slurm", "pbs", "lsf", "flux", "sge"])
def test_a_long_name_with_blanks_is_noted_on_every_scheduler(scheduler):
    name = "a very long job name that goes on and on past the limit"
    spec = _site(scheduler).prepare(JobSpec(name=name, command="true"), "c0ffee000001")
    kept = name.replace(" ", "_")[:NAME_KEPT]
    assert spec.name == kept
    assert spec.metadata["name_notes"][0] == (
        f"job name {name!r} is submitted to s1 as {kept!r} (blanks become '_', at most "
        f"{NAME_KEPT} characters are kept)")


@pytest.mark.parametrize("scheduler", ["slurm", "pbs", "lsf", "flux", "sge"])
def test_a_name_that_fits_gets_no_note(scheduler):
    spec = _site(scheduler).prepare(JobSpec(name="fit-2.run_b", command="true"),
                                    "c0ffee000001")
    assert "name_notes" not in spec.metadata and spec.name == "fit-2.run_b"


def test_submit_prints_the_name_change_and_stores_it_with_the_job(tmp_path, monkeypatch,
                                                                  capsys):
    site = FakeSlurm(tmp_path, monkeypatch)
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/bash\n#SBATCH -J 'my first job'\necho hi\n")
    code = main(["submit", "--site", "alpha", str(script), "--config", str(site.config)])
    got = capsys.readouterr()
    assert code == 0 and got.out.strip() == "alpha:77", got.err
    note = ("job name 'my first job' is submitted to alpha as 'my_first_job' (blanks become "
            "'_', at most 40 characters are kept)")
    assert f"diamond: {note}" in got.err.splitlines()
    store = Store(site.store_path)
    assert store.get_job("alpha:77").name == "my_first_job"
    warned = store.events_since(0, kinds=["job.warnings"], job_id="alpha:77")
    assert warned and note in warned[0].data["warnings"]


@pytest.mark.parametrize("name,held", [
    ("3d-sim", "j3d-sim"), ("_tmp", "j_tmp"), ("+v2", "j+v2"), ("-x", "j-x"),
    ("pre proc", "pre_proc"), ("Émile", "jÉmile"), ("fit-2.run_b", "fit-2.run_b"),
])
def test_pbs_renders_the_name_qsub_takes_and_says_so(name, held):
    """Torque's and PBS's qsub -N take printable characters without white space, the first
    alphabetic: `#PBS -N 3d-sim` or a translated Slurm name `pre proc` was written as given
    and refused at submission ("illegal -N value"). The rendered name is the one the
    dialect's job_name gives (what a lookup by name asks for), the change reported."""
    from diamond_jupyter.dialects.pbs_script import pbs_script

    out = pbs_script.render_script(JobSpec(name=name, command="true"))
    assert f"#PBS -N {held}" in out.script.splitlines()
    assert pbs_script.job_name(name) == held
    changed = [w for w in out.warnings if w.startswith("approximated: job name")]
    assert changed == ([] if held == name else [
        f"approximated: job name {name!r} as {held!r} (qsub takes a name without blanks "
        "that starts with a letter)"])
