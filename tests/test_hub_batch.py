"""The center way (`scripts/hub.sh up --batch alpha --json`): batchspawner submits each
user's single-user server as a Slurm job to the test bed's alpha; the server runs on a
compute node (alpha's network namespace, inside its allocation, as the user) and the hub
reaches it there through the proxy."""

from __future__ import annotations

import os
import pwd
import subprocess
from pathlib import Path

import pytest
from hub_helpers import hub_up

from diamond_jupyter.testbed.clusters import cluster
from diamond_jupyter.testbed.configs import cluster_dir

pytestmark = pytest.mark.testbed
SITE = "alpha"


def squeue(tb_base: Path, *args: str) -> str:
    c = cluster(SITE)
    env = {**os.environ, "SLURM_CONF": str(cluster_dir(tb_base, c) / "etc" / "slurm.conf")}
    r = subprocess.run(["nsenter", f"--net=/run/netns/{c.netns}", "squeue", "-h", *args],
                       capture_output=True, text=True, env=env, check=True)
    return r.stdout


@pytest.fixture(scope="module")
def hub(testbed_session):
    with hub_up("--batch", SITE) as info:
        yield info
    # the servers' jobs are gone with the hub (none pending or running)
    assert "diamond-hub-singleuser" not in squeue(testbed_session.base, "-t", "PD,R",
                                                  "-o", "%j %u")


def _server_pids() -> dict[str, int]:
    out = {}
    for p in Path("/proc").glob("[0-9]*"):
        try:
            cmd = (p / "cmdline").read_bytes()
            uid = p.stat().st_uid
        except OSError:
            continue
        if b"batchspawner.singleuser" in cmd:
            out[pwd.getpwuid(uid).pw_name] = int(p.name)
    return out


def test_each_server_is_a_slurm_job_on_a_compute_node(hub, testbed_session):
    assert hub["mode"] == "batch" and hub["batch_site"] == SITE
    jobs = squeue(testbed_session.base, "-n", "diamond-hub-singleuser", "-o", "%u %T %N")
    rows = sorted(line.split() for line in jobs.splitlines() if line.strip())
    assert [(u, s) for u, s, _node in rows] == [("alice", "RUNNING"), ("bob", "RUNNING")], jobs
    pids = _server_pids()
    assert set(pids) == {"alice", "bob"}, pids
    alpha_net = os.stat(f"/run/netns/{cluster(SITE).netns}").st_ino
    for name, pid in pids.items():
        assert os.stat(f"/proc/{pid}/ns/net").st_ino == alpha_net, name  # on alpha's network
        env = dict(kv.split(b"=", 1) for kv in
                   Path(f"/proc/{pid}/environ").read_bytes().split(b"\0") if b"=" in kv)
        assert env.get(b"SLURM_JOB_ID"), name  # inside its allocation
        assert env[b"USER"] == name.encode()

