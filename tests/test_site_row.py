"""One site row for every face: the sidebar (GET state through a real Jupyter server), the
agent's discover_resources skill, the CLI (`diamond sites --json`, a real subprocess) and the
in-process engine of the magics report the same capacity, counted with placement's
node-usability rule.

The site is a local Slurm site whose scheduler commands print recorded real outputs
(tests/fixtures/outputs/slurm) with some nodes made unusable: the wire level of a scheduler
this machine does not run outside the test bed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from local_slurm import recorded_sites_file

from diamond_jupyter.federation import Federation
from diamond_jupyter.kernel.inprocess import LocalEngine
from diamond_jupyter.placement_fit import node_usable
from diamond_jupyter.skills import SkillContext, run_skill
from diamond_jupyter.store import Store

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")

OUTPUTS = Path(__file__).parent / "fixtures" / "outputs" / "slurm"
ROOT = Path(__file__).resolve().parents[1]
# c1 not responding (the '*'), c2 draining, g1 usable, g2 (a copy of g1) reserved: only a
# job of its reservation may use it (Slurm: "not generally available"), so not counted.
# Free CPUs on usable nodes: g1 16-4.
STATES = {"c1": "MIXED*", "c2": "MIXED+DRAIN", "g1": "MIXED", "g2": "RESERVED"}
FREE_CPUS = 12


def _nodes_output() -> str:
    lines = (OUTPUTS / "scontrol_node.txt").read_text().splitlines()
    g1 = next(line for line in lines if line.startswith("NodeName=g1 "))
    lines.append(g1.replace("NodeName=g1 ", "NodeName=g2 ").replace("Port=", "Port=9"))
    out = []
    for line in lines:
        name = line.split()[0].removeprefix("NodeName=")
        out.append(line.replace(" State=MIXED ", f" State={STATES[name]} "))
    return "\n".join(out) + "\n"


@pytest.fixture
def sites_file(tmp_path) -> Path:
    """A sites file whose site runs the recorded outputs' `scontrol` and `squeue`."""
    (tmp_path / "nodes.txt").write_text(_nodes_output())
    return recorded_sites_file(tmp_path, tmp_path / "nodes.txt", OUTPUTS / "squeue_queue.txt")


@pytest.fixture
def jp_server_config(sites_file, tmp_path, data_dir):
    from server_conftest import diamond_config

    return diamond_config(str(sites_file), str(tmp_path / "store.sqlite3"))


async def test_every_face_reports_the_free_cpus_placement_uses(api, sites_file, tmp_path,
                                                               data_dir):
    fed = Federation(sites_file, store=Store(tmp_path / "own.sqlite3"))
    await fed.start(recover=False)
    try:
        snap = await fed.snapshot("rec", max_age_s=0)
        assert snap.reachable, snap.error
        assert {n.name: n.state.upper() for n in snap.nodes} == STATES  # the outputs parsed
        usable = [n for n in snap.nodes if node_usable(n)]
        assert [n.name for n in usable] == ["g1"]  # placement's rule
        assert sum(n.cpus - n.cpus_allocated for n in usable) == FREE_CPUS
        skill = (await run_skill(SkillContext(fed, approval="auto"), "discover_resources",
                                 {})).sites[0]
    finally:
        await fed.close()

    sidebar = (await api.get("state"))["sites"][0]
    env = {**os.environ, "DIAMOND_DATA_DIR": str(data_dir),
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    res = subprocess.run([sys.executable, "-m", "diamond_jupyter.cli", "sites", "--json",
                          "--config", str(sites_file)], capture_output=True, text=True,
                         env=env, timeout=120)
    assert res.returncode == 0, res.stderr
    cli = json.loads(res.stdout)[0]
    engine = LocalEngine(sites_file)
    try:
        magics = engine.call(engine.sites(), timeout=60)[0]
    finally:
        engine.close()

    faces = {"sidebar": sidebar, "skill": skill.model_dump(), "cli": cli, "magics": magics}
    for face, row in faces.items():
        assert row["name"] == "rec", face
        assert (row["cpus_free"], row["cpus_total"]) == (FREE_CPUS, 8 + 8 + 16 + 16), face
        assert (row["gpus_free"], row["gpus_total"]) == (skill.gpus_free, skill.gpus_total), \
            face
    assert sidebar["nodes_free"] == 0  # no usable node is idle
