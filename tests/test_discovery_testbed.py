"""Discovery against the real test bed: Lmod module trees named as Spack (alpha), EasyBuild
(beta) and plainly (gamma), Slurm features and typed GPUs, runtimes on the login's PATH; and
jobs that load the modules at run time."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml

from diamond_jupyter.federation import Federation
from diamond_jupyter.model import JobSpec, JobState, Resources
from diamond_jupyter.store import Store
from diamond_jupyter.testbed.modules import SOFTWARE

pytestmark = pytest.mark.testbed

EXPECTED = {
    "alpha": (["x86_64"], [], ["apptainer"], ["openmpi"]),
    "beta": (["aarch64"], [], [], []),
    "gamma": (["x86_64"], ["a100"], ["apptainer"], []),
}


@pytest.fixture
async def fed(tb, tmp_path):
    f = Federation(tb.config_path, store=Store(tmp_path / "s.sqlite"), poll_interval_s=30,
                   min_poll_s=0.5)
    await f.start()
    yield f
    await f.close()


@pytest.mark.parametrize("site", ["alpha", "beta", "gamma"])
async def test_each_site_is_described_from_itself(fed, site):
    d = await fed.describe(site)
    c = d.capabilities
    archs, gpus, runtimes, mpi = EXPECTED[site]
    assert [m.full for m in c.software] == sorted(
        (p.module for p in SOFTWARE[site]), key=lambda m: (m.split("/")[0].lower(), m))
    assert c.sources["software"] == "discovered"  # the sites file no longer lists it
    assert (c.architectures, c.gpu_models, c.container_runtimes, c.mpi) == (
        archs, gpus, runtimes, mpi)
    assert c.module_system == "lmod" and d.module_system_version
    # Slurm's own name for the cluster (the test bed's ClusterName is the site's name)
    assert c.cluster_names == [site] and d.clusters[0].cluster_name == site
    assert c.mpi_paths is not None  # discovery looked for MPIs (launchers, oneAPI roots)
    snap = await fed.snapshot(site)
    [cluster] = d.clusters
    assert cluster.name == site and cluster.nodes == len(snap.nodes)
    assert {p.name for p in cluster.partitions} == {p.name for p in snap.partitions}
    assert sum(t.count for t in c.node_types) == len(snap.nodes)
    for p in cluster.partitions:  # every test-bed partition spans all of its nodes
        assert p.node_types == [t.name for t in c.node_types]


async def test_one_command_per_discovery_and_a_ttl(fed):
    site = fed.site("beta")
    before = site.discovery.runs
    first, second = await fed.describe("beta"), await fed.describe("beta")
    assert site.discovery.runs == before + 1  # the second answer came from the cache
    assert second.discovered_at == first.discovered_at and second.age_s >= 0
    again = await fed.describe("beta", refresh=True)
    assert site.discovery.runs == before + 2 and again.discovered_at > first.discovered_at


async def test_concurrent_callers_share_one_discovery(fed):
    site = fed.site("gamma")
    before = site.discovery.runs
    import asyncio
    got = await asyncio.gather(*(fed.describe("gamma", refresh=i == 0) for i in range(5)))
    assert site.discovery.runs == before + 1
    assert len({d.discovered_at for d in got}) == 1


@pytest.mark.parametrize("site,module,name,version", [
    ("alpha", "openmpi/4.1.5-tq4bzvh", "openmpi", "4.1.5"),
    ("beta", "GROMACS/2023.3-foss-2023a", "gromacs", "2023.3"),
    ("gamma", "pytorch/2.1", "pytorch", "2.1"),
])
async def test_a_job_loads_its_module_at_run_time(fed, site, module, name, version):
    var = "DIAMOND_SW_" + name.upper()
    spec = JobSpec(name="modules", script=(
        f"module load {module} || exit 7\n"
        f'[ "${var}" = "{version}" ] || exit 8\n'
        f"{name}-version\n"
        "echo loaded-ok\n"), resources=Resources(walltime_s=120))
    job = await fed.submit(spec, site)
    job = await fed.wait(job.id, timeout=300)
    out = await fed.logs(job.id)
    assert job.state == JobState.COMPLETED, (job, out)
    assert out["stdout"].splitlines()[-2:] == [f"{name} {version} {site}", "loaded-ok"]


async def test_a_job_reaches_the_runtime_stand_in(fed):
    spec = JobSpec(name="container", script=(
        "apptainer exec docker://alpine:3.19 sh -c 'echo in $APPTAINER_CONTAINER'\n"),
        resources=Resources(walltime_s=120))
    job = await fed.wait((await fed.submit(spec, "alpha")).id, timeout=300)
    assert job.state == JobState.COMPLETED
    assert (await fed.logs(job.id))["stdout"].strip() == "in docker://alpine:3.19"


def _config_with(tb, tmp_path, site: str, discovery: dict, metadata: dict):
    raw = yaml.safe_load(tb.config_path.read_text())
    for s in raw["sites"]:
        if s["name"] == site:
            s["discovery"] = discovery
            s["metadata"] = {**s.get("metadata", {}), **metadata}
    path = tmp_path / "sites.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


async def test_the_sites_file_adds_to_discovery_or_overrides_it(tb, tmp_path):
    add = _config_with(tb, tmp_path, "beta", {"ttl_s": 60},
                       {"software": ["lammps/2023"], "container_runtimes": ["podman"]})
    async with Federation(add, store=Store(tmp_path / "a.sqlite")) as f:
        c = (await f.describe("beta")).capabilities
        assert "lammps/2023" in c.module_names() and "GROMACS/2023.3-foss-2023a" in \
            c.module_names()
        assert c.container_runtimes == ["podman"]
        assert c.sources["software"] == "configured+discovered"
    over = _config_with(tb, tmp_path, "beta", {"override": True}, {"software": ["lammps"]})
    async with Federation(over, store=Store(tmp_path / "o.sqlite")) as f:
        c = (await f.describe("beta")).capabilities
        assert c.module_names() == ["lammps"] and c.sources["software"] == "configured"
        assert c.architectures == ["aarch64"]  # what the file does not give stays discovered


def test_diamond_describe(tb, data_dir):
    env = {**os.environ, "DIAMOND_CONFIG": str(tb.config_path), "DIAMOND_DATA_DIR": str(data_dir)}

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "diamond_jupyter.cli", *args],
                              capture_output=True, text=True, env=env, timeout=120)
    r = run("describe", "gamma", "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert [m["name"] for m in d["capabilities"]["software"]] == ["cuda", "python3", "pytorch"]
    assert d["capabilities"]["gpu_models"] == ["a100"]
    text = run("describe", "beta")
    assert text.returncode == 0, text.stderr
    assert "GROMACS/2023.3-foss-2023a" in text.stdout and "aarch64" in text.stdout
    assert "partition compute (default)" in text.stdout
    bad = run("describe", "nosuch")
    assert bad.returncode == 2 and "unknown site 'nosuch'" in bad.stderr


def test_up_restarts_what_runs_from_older_files(tb, capsys):
    """A bed started by an older version gets this version's files; only the daemons whose
    files changed restart (jobs and ids survive a slurmctld restart from its state)."""
    from diamond_jupyter import testbed
    from diamond_jupyter.cli.main import main as cli
    from diamond_jupyter.testbed.clusters import cluster
    from diamond_jupyter.testbed.configs import cluster_dir

    path = cluster_dir(testbed.base_dir(), cluster("beta")) / "etc" / "sshd_config"
    path.write_text(path.read_text().replace("SetEnv ", "#SetEnv "))
    info = testbed.up()
    assert info["started"] == ["beta sshd"] and "#SetEnv" not in path.read_text()
    assert testbed.status()["up"]
    # a session on the site has `module`, and the site's own tree
    assert cli(["testbed", "ssh", "beta", "--", "bash", "-c", "module -t avail 2>&1"]) == 0
    assert "GROMACS/2023.3-foss-2023a" in capsys.readouterr().out
