"""`~/` means the login's home everywhere: in the rendered --chdir/--output lines, the event
file the monitor follows, file listings and log tails. With the default workdir
(`~/.diamond`) some paths used to become `$HOME/~/.diamond`."""

from __future__ import annotations

import secrets

import pytest
import yaml

from diamond_jupyter.federation import Federation
from diamond_jupyter.model import BadInput, JobSpec, JobState
from diamond_jupyter.store import Store


@pytest.fixture
async def fed(tb, tmp_path):
    """The test bed's sites with the default workdir (`~/.diamond`, as a user would have)."""
    raw = yaml.safe_load(tb.config_path.read_text())
    for s in raw["sites"]:
        if s.get("transport", {}).get("kind") != "slurmrestd":  # REST needs an absolute one
            s.pop("workdir", None)
    cfg = tmp_path / "sites.yaml"
    cfg.write_text(yaml.safe_dump(raw))
    f = Federation(cfg, store=Store(tmp_path / "store.sqlite"), poll_interval_s=30,
                   min_poll_s=0.5)
    assert f.sites["alpha"].cfg.workdir == "~/.diamond"
    await f.start()
    yield f
    await f.close()


async def test_a_default_workdir_job_writes_where_the_engine_reads(fed):
    site = fed.sites["alpha"]
    job = await fed.submit(JobSpec(name="home", script="echo hi; echo data > r.txt\n"), "alpha")
    home = await site.home()
    jd = f"{home}/.diamond/jobs/{job.token}"
    assert (job.workdir, job.stdout_path) == (jd, f"{jd}/stdout.log")
    done = await fed.wait(job.id, timeout=120)
    assert done.state == JobState.COMPLETED
    # the end came from the job's own event line: the monitor follows the file it writes
    assert any(e.data.get("source") == "wrapper" for e in fed.store.events_since(0, job_id=job.id))
    assert (await fed.logs(job.id))["stdout"] == "hi\n"
    assert await fed.files(job.id) == [f"{jd}/r.txt", f"{jd}/stderr.log", f"{jd}/stdout.log"]
    script = (await site.transport.get_bytes(f"{jd}/job.sh")).decode()
    assert f"#SBATCH --chdir={jd}\n" in script and f"#SBATCH --output={jd}/stdout.log" in script
    assert await site.transport.stat(f"{home}/~/.diamond/jobs/{job.token}") is None


async def test_user_tilde_paths_are_the_home_on_the_site(fed, tmp_path):
    site = fed.sites["beta"]
    name = f"dmd-home-{secrets.token_hex(4)}"
    spec = JobSpec(script="echo out; echo data > r.txt\n", working_directory=f"~/{name}",
                   stdout=f"~/{name}/out.log")
    home = await site.home()
    await site.transport.run(["mkdir", "--", f"{home}/{name}"], check=True)
    try:
        job = await fed.submit(spec, "beta")
        assert job.workdir == f"{home}/{name}" and job.stdout_path == f"{home}/{name}/out.log"
        assert (await fed.wait(job.id, timeout=120)).state == JobState.COMPLETED
        assert (await fed.logs(job.id))["stdout"] == "out\n"
        assert f"{home}/{name}/r.txt" in await fed.files(job.id)
        got = await fed.fetch(job.id, tmp_path / "back")
        assert {p.name for p in got.paths} >= {"r.txt", "out.log"}
    finally:
        await site.transport.run(["rm", "-rf", "--", f"{home}/{name}"], check=False)


async def test_other_users_homes_are_refused(fed):
    with pytest.raises(BadInput, match="~user paths are not supported"):
        await fed.submit(JobSpec(script="true\n", working_directory="~root/x"), "alpha")


@pytest.mark.parametrize("workdir,expected", [("~/.diamond", "{home}/.diamond"),
                                              ("~", "{home}"), (".dmd", "{home}/.dmd"),
                                              ("/scratch/u/dmd", "/scratch/u/dmd")])
async def test_every_engine_path_is_absolute(workdir, expected):
    import os

    from diamond_jupyter.config import SiteConfig, TransportConfig
    from diamond_jupyter.sites import Site

    site = Site(SiteConfig(name="here", transport=TransportConfig(kind="local"),
                           workdir=workdir))
    home = await site.home()  # what a shell on the site calls ~
    assert home == os.path.expanduser("~")
    wd = expected.format(home=home)
    assert (site.workdir, site.event_file, site.job_dir("t")) == (
        wd, f"{wd}/events.log", f"{wd}/jobs/t")
    assert site.expand("~/x/y") == f"{home}/x/y" and site.expand("rel/x") == "rel/x"
    with pytest.raises(BadInput, match="~user paths are not supported"):
        site.expand("~root/x")
    await site.close()


# (the test bed's PBS door is Slurm's qsub wrapper, which sets no PBS_O_WORKDIR)
SUBMIT_DIR_VARS = {"alpha": "SLURM_SUBMIT_DIR", "delta": "SGE_O_WORKDIR"}


@pytest.mark.parametrize("site_name", sorted(SUBMIT_DIR_VARS))
async def test_the_submit_directory_is_the_jobs_working_directory(fed, site_name):
    """Scripts start with `cd $SLURM_SUBMIT_DIR` (or PBS's, Grid Engine's): that must be the
    job's working directory, where its inputs were put and its results are fetched from,
    not the login's home the submit command used to run in."""
    site = fed.sites[site_name]
    var = SUBMIT_DIR_VARS[site_name]
    home = await site.home()
    name = f"dmd-subdir-{secrets.token_hex(4)}"
    await site.transport.run(["mkdir", "--", f"{home}/{name}"], check=True)
    try:
        for wd in (f"~/{name}", None):  # a directory the user names, and the default one
            script = f'cd "${var}" || exit 3\npwd -P > where.txt\necho "${var}"\n'
            job = await fed.submit(JobSpec(script=script, working_directory=wd), site_name)
            assert (await fed.wait(job.id, timeout=120)).state == JobState.COMPLETED
            expect = f"{home}/{name}" if wd else job.workdir
            assert (await fed.logs(job.id))["stdout"] == f"{expect}\n"
            assert f"{expect}/where.txt" in await fed.files(job.id)
    finally:
        await site.transport.run(["rm", "-rf", "--", f"{home}/{name}"])
