"""With `hub.sh up --batch alpha`: the server in its Slurm job reaches its own cluster from
the compute node (local transport) and submits there; the job gets its own allocation,
not the server job's (the transport clears SLURM_* before sbatch)."""

from __future__ import annotations

import json
import time
from urllib.parse import quote

import pytest
from test_hub import call, token
from test_hub_batch import SITE, hub  # noqa: F401 - the module's batch hub

pytestmark = pytest.mark.testbed


def test_the_server_reaches_its_cluster_from_the_node_and_submits_there(hub):  # noqa: F811
    alice = token(hub, "alice")
    status, _, state = call(hub, "/user/alice/diamond/api/state", alice)
    assert status == 200 and state["error"] is None, state
    rows = {s["name"]: s for s in state["sites"]}
    assert SITE in rows and rows[SITE]["reachable"], rows
    # only what a compute node reaches: its own cluster (the admin default for this mode)
    assert {"beta", "gamma"}.isdisjoint(rows), sorted(rows)
    script = "#!/bin/bash\n#SBATCH -t 5\necho user=$(id -un) job=$SLURM_JOB_ID\n"
    status, _, job = call(hub, "/user/alice/diamond/api/jobs", alice, "POST",
                          {"script": script, "site": SITE})
    assert status == 201, job
    path = f"/user/alice/diamond/api/jobs/{quote(job['id'], safe='')}"
    deadline = time.monotonic() + 600
    while True:  # the job's end arrives as an event in the server; this reads its record
        status, _, got = call(hub, path, alice)
        assert status == 200, got
        if got["state"] in ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT"):
            break
        assert time.monotonic() < deadline, got
        time.sleep(1)
    assert got["state"] == "COMPLETED", got
    status, _, logs = call(hub, f"{path}/logs", alice)
    assert f"user=alice job={got['native_id']}" in json.dumps(logs), logs
