"""A script waiting on a job id (`--dependency=afterok:1234`, `-W depend=`, ...) names a job
of one cluster: it runs only on the site whose job that is. Without the test bed: three
local sites whose scheduler commands are fakes that record each call (alpha and beta, two
Slurm clusters; gamma, PBS), with queues the test gives. A job the store knows by the id
binds the script to its site (every other INCOMPATIBLE, saying why); an id the store does
not know is refused under `auto` and hedging before anything is sent; an explicit site is
the user's word; hedged copies and a move elsewhere are refused; the workflow engine's own
dependencies (no scheduler) are placed freely."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from everyday_setup import idle_snapshot, run_cli

from diamond_jupyter.federation import Federation
from diamond_jupyter.model import (
    BadInput,
    Dependency,
    Job,
    JobSpec,
    JobState,
    Resources,
)
from diamond_jupyter.store import Store

FAKE = """#!/bin/sh
prog=$(basename "$0")
echo "$prog $*" >> {dir}/calls
[ "$prog" = sbatch ] && echo 4242
[ "$prog" = qsub ] && echo 77.server
exit 0
"""
PROGRAMS = {"slurm": ("sbatch", "squeue", "sacct", "scancel", "scontrol", "sinfo", "sprio",
                      "sshare"),
            "pbs": ("qsub", "qstat", "qdel", "qrls", "qhold", "qalter", "pbsnodes", "qmgr",
                    "tracejob")}
SITES = {"alpha": "slurm", "beta": "slurm", "gamma": "pbs"}
WAITS_ON_1234 = "#!/bin/bash\n#SBATCH --dependency=afterok:1234\n#SBATCH -n 1\necho after\n"


def fake_site(root: Path, name: str, scheduler: str) -> dict:
    fake = root / f"fake-{name}"
    fake.mkdir()
    (fake / "sched").write_text(FAKE.format(dir=fake))
    (fake / "sched").chmod(0o755)
    for prog in PROGRAMS[scheduler]:
        (fake / prog).symlink_to(fake / "sched")
    return {"name": name, "scheduler": scheduler, "transport": {"kind": "local"},
            "commands": {p: str(fake / p) for p in PROGRAMS[scheduler]}}


def sites_file(root: Path, **settings: str) -> Path:
    """A sites file in `root` of the three fake sites (SITES) and the top-level `settings`."""
    sites = root / "sites.yaml"
    sites.write_text(yaml.safe_dump({"sites": [fake_site(root, n, s) for n, s in SITES.items()],
                                     **settings}))
    return sites


def submits(root: Path, name: str) -> list[str]:
    """The submit commands site `name`'s fake scheduler was given."""
    calls = root / f"fake-{name}" / "calls"
    lines = calls.read_text().splitlines() if calls.exists() else []
    return [c for c in lines if c.startswith(("sbatch", "qsub"))]


@pytest.fixture
async def fed(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    f = Federation(sites_file(tmp_path), store=Store(tmp_path / "store.sqlite3"))

    async def snapshots(*, only=None, **_kw):
        return {n: idle_snapshot(n) for n in (only or SITES)}

    async def calibration(**_kw):
        return {}
    f.snapshots = snapshots  # type: ignore[method-assign]
    f.calibration = calibration  # type: ignore[method-assign]
    await f.start()
    yield f
    await f.close()


def known(fed: Federation, site: str, native_id: str) -> Job:
    """A job of `site` the store holds under `native_id` (submitted earlier, say)."""
    fed.store.upsert_job(Job(id=f"{site}:{native_id}", site=site, native_id=native_id,
                             name="upstream"))
    fed.store.apply_state(f"{site}:{native_id}", JobState.RUNNING)
    return fed.store.get_job(f"{site}:{native_id}")


def nothing_sent(root: Path) -> None:
    assert [submits(root, n) for n in SITES] == [[], [], []]


async def test_a_known_upstream_binds_the_job_to_its_site(fed, tmp_path):
    known(fed, "beta", "1234")
    spec = fed.spec_from_text(WAITS_ON_1234)
    pl = await fed.place(spec)
    assert pl.choice == "beta"
    for other in ("alpha", "gamma"):  # another Slurm cluster, another scheduler
        v = pl.verdict(other)
        assert v is not None and v.verdict == "INCOMPATIBLE", v
        assert "afterok:1234" in v.reasons[0] and "site beta" in v.reasons[0], v.reasons
    job = await fed.submit(spec, "auto")
    assert job.site == "beta"
    assert submits(tmp_path, "alpha") == [] and submits(tmp_path, "gamma") == []
    sent = submits(tmp_path, "beta")
    assert len(sent) == 1
    script = Path(sent[0].split()[-1]).read_text()
    assert "--dependency=afterok:1234" in script


async def test_an_unknown_upstream_under_auto_is_refused_before_anything_is_sent(fed,
                                                                                 tmp_path):
    spec = fed.spec_from_text(WAITS_ON_1234)
    with pytest.raises(BadInput) as e:
        await fed.submit(spec, "auto")
    said = str(e.value)
    assert "afterok:1234" in said and "one slurm cluster" in said and "--site" in said, said
    nothing_sent(tmp_path)
    assert fed.jobs(limit=None) == []  # no intent recorded either
    with pytest.raises(BadInput, match="--site"):  # an approval's plan the same
        await fed.plan_submit(spec, "auto")


async def test_an_explicit_site_is_the_user_s_word(fed, tmp_path):
    spec = fed.spec_from_text(WAITS_ON_1234)  # no job 1234 known: alpha's, the user says
    job = await fed.submit(spec, "alpha")
    assert job.site == "alpha"
    script = Path(submits(tmp_path, "alpha")[0].split()[-1]).read_text()
    assert "--dependency=afterok:1234" in script
    known(fed, "beta", "1234")  # even where the store knows a 1234 at another site
    again = await fed.submit(spec, "alpha")
    assert again.site == "alpha" and len(submits(tmp_path, "alpha")) == 2
    assert submits(tmp_path, "beta") == []


async def test_an_id_known_at_two_clusters_is_refused_naming_both(fed, tmp_path):
    known(fed, "alpha", "1234")
    known(fed, "beta", "1234")
    with pytest.raises(BadInput) as e:
        await fed.submit(fed.spec_from_text(WAITS_ON_1234), "auto")
    assert "several sites (alpha, beta)" in str(e.value) and "--site" in str(e.value)
    nothing_sent(tmp_path)


async def test_a_pbs_id_with_its_server_binds_to_the_pbs_site(fed, tmp_path):
    known(fed, "gamma", "123.server")
    known(fed, "alpha", "123")  # a Slurm job of that number is not the PBS job
    spec = fed.spec_from_text("#!/bin/bash\n#PBS -W depend=afterok:123.server\n"
                              "#PBS -l select=1:ncpus=1\necho after\n")
    pl = await fed.place(spec)
    assert pl.choice == "gamma"
    assert {v.site for v in pl.ranked if v.verdict == "INCOMPATIBLE"} == {"alpha", "beta"}


@pytest.mark.parametrize("w_line", [
    "stagein=in.dat@gamma:/d/$PBS_JOBID/in.dat,depend=afterok:123.server",
    "depend=afterok:123.server,stageout=out.dat@gamma:/d/$PBS_JOBID/out.dat",
])
async def test_a_pbs_dependency_on_a_staging_line_binds_too(fed, w_line):
    """A depend= sharing its -W with a staging entry kept as written (a variable in its
    path) was kept with it, unread (the job placed as if it waited on nothing), or, written
    first, read with the staging kept as `depend=stageout=...`. Now read, the staging kept
    as written on its own."""
    known(fed, "gamma", "123.server")
    spec = fed.spec_from_text(f"#!/bin/bash\n#PBS -W {w_line}\n#PBS -l select=1:ncpus=1\n"
                              "echo after\n")
    staging = [a for a in w_line.split(",") if not a.startswith("depend=")]
    assert [d.value for d in spec.unknown if d.option == "-W"] == staging
    bound = fed.dependency_bound(spec)
    assert bound is not None and bound[0] == {"gamma"}, bound
    assert "afterok:123.server" in bound[1]
    pl = await fed.place(spec)
    assert pl.choice == "gamma"
    assert {v.site for v in pl.ranked if v.verdict == "INCOMPATIBLE"} == {"alpha", "beta"}


async def test_a_hedge_never_copies_such_a_job(fed, tmp_path):
    known(fed, "beta", "1234")
    spec = fed.spec_from_text(WAITS_ON_1234)
    with pytest.raises(BadInput) as e:
        await fed.submit(spec, "auto", hedge=2)
    said = str(e.value)
    assert said.startswith("hedge 2: ") and "site beta" in said and "without a hedge" in said
    nothing_sent(tmp_path)
    with pytest.raises(BadInput, match="without a hedge"):  # nor plans one
        await fed.plan_hedged(spec, 2)


async def test_a_move_elsewhere_never_takes_such_a_job_from_its_upstream_s_site(fed,
                                                                               tmp_path):
    known(fed, "beta", "1234")
    job = await fed.submit(fed.spec_from_text(WAITS_ON_1234), "auto")
    assert job.site == "beta"
    with pytest.raises(BadInput) as e:
        await fed.resubmit(job.id)
    said = str(e.value)
    assert "no other site can run it" in said and "afterok:1234" in said, said
    assert submits(tmp_path, "alpha") == [] and submits(tmp_path, "gamma") == []
    assert len(submits(tmp_path, "beta")) == 1
    assert not any(c.startswith("scancel") for c in
                   (tmp_path / "fake-beta" / "calls").read_text().splitlines())


async def test_the_engine_s_own_dependencies_are_placed_freely(fed):
    spec = JobSpec(command="echo after", resources=Resources(tasks=1),
                   dependencies=[Dependency(job_ids=["1234"])])  # no scheduler: the target's
    pl = await fed.place(spec)
    assert {v.site for v in pl.ranked if v.feasible} == set(SITES)
    assert fed.dependency_bound(spec) is None


def test_the_cli_refuses_auto_for_an_unknown_upstream_with_exit_2(tmp_path):
    """`diamond submit --site auto` (the CLI's engine in its own process): one line, exit 2,
    nothing sent to any site."""
    (tmp_path / "home").mkdir()
    sites = sites_file(tmp_path, store=str(tmp_path / "store.sqlite3"))
    script = tmp_path / "job.sh"
    script.write_text(WAITS_ON_1234)
    res = run_cli("submit", "--site", "auto", str(script), "--json", cwd=tmp_path,
                  env={"HOME": str(tmp_path / "home"), "DIAMOND_DATA_DIR": str(tmp_path / "data"),
                       "DIAMOND_CONFIG": str(sites)})
    assert res.returncode == 2, (res.stdout, res.stderr)
    reply = json.loads(res.stdout)
    assert reply["reason"] == "bad-input" and "--site" in reply["message"], reply
    assert "afterok:1234" in res.stderr.strip().splitlines()[-1]
    nothing_sent(tmp_path)
