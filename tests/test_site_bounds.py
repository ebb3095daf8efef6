"""An explicit Slurm site asked for more than any of its nodes or partitions can ever give
(100000 CPUs on a node, more nodes or GPUs than it has, a run time past every MaxTime) is
refused before anything reaches sbatch, naming the largest node (or the longest partition)
and what would be accepted; a site whose nodes are not known takes the job as before. The
site is a local one answering with recorded real `scontrol` outputs (nodes c1, c2: 8 CPUs;
g1: 16 CPUs, 2 GPUs; partitions debug 1 h, long 2 days, gpu unlimited)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import yaml
from everyday_setup import run_cli
from local_slurm import RECORDED, recorded_sites_file
from sweep_helpers import fake_slurm_commands

from diamond_jupyter.dialects import get_script_dialect
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import BadInput, JobSpec, Resources
from diamond_jupyter.store import Store


def _sites(tmp_path: Path) -> Path:
    """The recorded site `rec`, its sbatch recording each call in tmp_path/calls."""
    (tmp_path / "queue.txt").write_text("")
    sites = recorded_sites_file(tmp_path, RECORDED / "scontrol_node.txt", tmp_path / "queue.txt")
    for prog, body in {"sbatch": f'echo "sbatch $*" >> {tmp_path}/calls\necho 4242\n',
                       "sacct": "exit 0\n"}.items():
        (tmp_path / "bin" / prog).write_text("#!/bin/sh\n" + body)
        (tmp_path / "bin" / prog).chmod(0o755)
    entry = yaml.safe_load(sites.read_text())
    entry["store"] = str(tmp_path / "store.sqlite3")
    sites.write_text(yaml.safe_dump(entry))
    return sites


def _sbatch_calls(tmp_path: Path) -> list[str]:
    calls = tmp_path / "calls"
    return calls.read_text().splitlines() if calls.exists() else []


@pytest.fixture
async def rec(tmp_path) -> AsyncIterator[Federation]:
    fed = Federation(_sites(tmp_path), store=Store(tmp_path / "store.sqlite3"),
                     poll_interval_s=3600, min_poll_s=3600)
    await fed.start(recover=False)
    yield fed
    await fed.close()


def _script(*directives: str) -> JobSpec:
    text = "#!/bin/bash\n" + "".join(f"#SBATCH {d}\n" for d in directives) + "hostname\n"
    return get_script_dialect("slurm").parse_script(text)


@pytest.mark.parametrize("directives,said", [
    (["--cpus-per-task=100000"], "needs 100000 CPUs on one node, the largest node (g1) has "
     "16: ask at most 16 per node"),
    (["--ntasks-per-node=17"], "needs 17 CPUs on one node, the largest node (g1) has 16"),
    (["--nodes=100000"], "needs 100000 nodes, the site has 3 (largest node g1: 16 CPUs, "
     "2 GPUs, 64000 MB): ask at most 3"),
    (["--ntasks=100000"], "needs 6250 nodes, the site has 3 (largest node g1: "),
    (["--gpus=100000"], "asks 100000 GPUs, the site has 2 in all on 3 nodes (largest node "
     "g1: 16 CPUs, 2 GPUs, 64000 MB): ask at most 2"),
    (["-p long", "-t 9999-00:00:00"], "asks 9999-00:00:00 of run time, partition long "
     "allows at most 2-00:00:00 (MaxTime): ask at most 2-00:00:00"),
    (["-p long,debug", "-t 3-00:00:00"], "asks 3-00:00:00 of run time, the longest "
     "partition it names, long, allows at most 2-00:00:00 (MaxTime)"),
])
async def test_fault_a_script_asking_more_than_the_site_ever_gives_is_refused_unsent(
        rec, tmp_path, directives, said):
    """Each of these reached sbatch, which alone said no (or queued it forever)."""
    with pytest.raises(BadInput) as e:
        await rec.submit(_script(*directives), "rec")
    assert str(e.value).startswith(f"site rec cannot run this job: {said}"), e.value
    assert _sbatch_calls(tmp_path) == [] and rec.jobs() == []


async def test_fault_the_same_asked_as_options_is_refused_and_the_plan_too(rec, tmp_path):
    spec = JobSpec(command="hostname", resources=Resources(nodes=4, walltime_s=600))
    with pytest.raises(BadInput, match="needs 4 nodes, the site has 3 "):
        await rec.submit(spec, "rec")
    with pytest.raises(BadInput, match="needs 4 nodes, the site has 3 "):
        await rec.plan_submit(spec, "rec")
    assert _sbatch_calls(tmp_path) == []


@pytest.mark.parametrize("directives", [
    ["-p gpu", "-t 9999-00:00:00"],  # gpu has no MaxTime
    ["-t 9999-00:00:00"],  # no partition named: gpu's is one it may get
    ["--nodes=3"], ["--gpus=2"], ["--cpus-per-task=16"], ["--ntasks=40"],
    # a partition the site does not list (a hidden one) may hold larger nodes: not judged
    ["-p secret", "--nodes=8", "-t 9999-00:00:00"],
])
async def test_a_request_some_node_and_partition_can_give_is_submitted(rec, tmp_path,
                                                                       directives):
    job = await rec.submit(_script(*directives), "rec")
    assert job.native_id == "4242" and len(_sbatch_calls(tmp_path)) == 1


async def test_force_submits_what_the_site_would_refuse(rec, tmp_path):
    job = await rec.submit(_script("--nodes=100000"), "rec", force=True)
    assert job.native_id == "4242" and len(_sbatch_calls(tmp_path)) == 1


async def test_a_site_whose_nodes_are_unknown_takes_the_job_as_before(tmp_path):
    """Its scontrol answers nothing: nothing is known to refuse by."""
    sites = tmp_path / "sites.yaml"
    sites.write_text(yaml.safe_dump({"sites": [{
        "name": "here", "transport": {"kind": "local"}, "workdir": str(tmp_path / "work"),
        "commands": fake_slurm_commands(tmp_path / "fake")}]}))
    fed = Federation(sites, store=Store(tmp_path / "store.sqlite3"), poll_interval_s=3600,
                     min_poll_s=3600)
    await fed.start(recover=False)
    try:
        job = await fed.submit(_script("--nodes=100000", "-t 9999-00:00:00"), "here")
    finally:
        await fed.close()
    assert job.native_id == "4242"
    assert any(c.startswith("sbatch") for c in (tmp_path / "fake" / "calls").read_text()
               .splitlines())


@pytest.mark.parametrize("option,said", [
    (["--gpus", "100000"], "needs 100000 GPUs per node, largest node has 2"),
    (["--memory", "99999999T"], "memory per node, largest node has 64000 MB"),
    (["--nodes", "9"], "needs 9 nodes, the site has 3"),
])
def test_fault_the_cli_exits_2_with_one_line_and_sends_nothing(tmp_path, option, said):
    sites = _sites(tmp_path)
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/bash\nhostname\n")
    res = run_cli("submit", "--config", str(sites), "--site", "rec", *option, str(script),
                  env={"DIAMOND_DATA_DIR": str(tmp_path / "data")})
    assert res.returncode == 2, (res.stdout, res.stderr)
    assert res.stderr.count("\n") == 1 and said in res.stderr, res.stderr
    assert _sbatch_calls(tmp_path) == []
