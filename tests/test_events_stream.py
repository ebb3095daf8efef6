"""The jupyter_events stream: a websocket client on /api/events/subscribe sees a submitted
job go PENDING -> RUNNING -> COMPLETED, and fresh site snapshots (real test bed)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
import yaml

from diamond_jupyter.server.events import (
    AGENT_STEP,
    JOB_ATTENTION,
    JOB_DEPENDENCY,
    JOB_STATE,
    LOGIN_PROMPT,
    PREFIX,
    SITE_SNAPSHOT,
    TRANSFER_PROGRESS,
    WORKFLOW,
    schema_paths,
)

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")
pytestmark = pytest.mark.testbed

TIMEOUT = 90.0


ACTIVITY = PREFIX + "activity"


async def next_message(ws: Any, schema_id: str, pred=lambda m: True) -> dict:
    """The next diamond message with this schema id that satisfies `pred` (others skipped:
    kernel and other extensions' events share the socket)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TIMEOUT
    while True:
        raw = await asyncio.wait_for(ws.read_message(), deadline - loop.time())
        assert raw is not None, "the event socket closed"
        msg = json.loads(raw)
        if msg.get("schema_id") == schema_id and pred(msg):
            return msg


def test_schemas_are_well_formed():
    ids = set()
    for path in schema_paths():
        doc = yaml.safe_load(path.read_text())
        assert doc["$id"].startswith(PREFIX) and isinstance(doc["version"], str)
        assert not any(p.startswith("__") for p in doc["properties"])
        ids.add(doc["$id"])
    assert ids == {JOB_STATE, SITE_SNAPSHOT, TRANSFER_PROGRESS, AGENT_STEP, ACTIVITY, WORKFLOW,
                   JOB_ATTENTION, JOB_DEPENDENCY, LOGIN_PROMPT}


async def test_schemas_are_registered_at_load(jp_serverapp):
    registered = set(jp_serverapp.event_logger.schemas.schema_ids)
    assert {JOB_STATE, SITE_SNAPSHOT, TRANSFER_PROGRESS, AGENT_STEP, ACTIVITY,
            WORKFLOW, JOB_ATTENTION, JOB_DEPENDENCY} <= registered


async def test_websocket_sees_a_job_go_pending_running_completed(api, jp_ws_fetch):
    ws = await jp_ws_fetch("api", "events", "subscribe")
    try:
        # A fresh snapshot is emitted as a site-snapshot: proves the socket is listening.
        await api.get("sites/alpha/snapshot", params={"max_age": 0})
        snap = await next_message(ws, SITE_SNAPSHOT, lambda m: m["name"] == "alpha")
        assert snap["nodes_total"] == 4 and snap["reachable"] is True

        job = await api.post("jobs", {"script": "#!/bin/bash\nsleep 1\necho done\n",
                                      "site": "alpha", "name": "streamed"}, expect=201)
        mine = lambda m: m["job_id"] == job["id"]  # noqa: E731
        seen: list[dict] = []
        while not seen or seen[-1]["state"] not in ("COMPLETED", "FAILED", "CANCELLED"):
            seen.append(await next_message(ws, JOB_STATE, mine))
    finally:
        ws.close()
    states = [m["state"] for m in seen if m["kind"] == "job.state"]
    assert states == ["PENDING", "RUNNING", "COMPLETED"], [(m["kind"], m["state"]) for m in seen]
    pending, running, done = (m for m in seen if m["kind"] == "job.state")
    assert pending["previous"] == "UNKNOWN" and running["previous"] == "PENDING"
    assert done["previous"] == "RUNNING" and done["exit_code"] == 0
    assert running["started_at"] and done["ended_at"] and done["submitted_at"]
    assert all(m["site"] == "alpha" and m["native_id"] == job["native_id"] for m in seen)
    assert all(m["name"].startswith("streamed") for m in seen)
    seqs = [m["seq"] for m in seen]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    # The store replays the same events to a client that reconnects.
    replay = await api.get("events", params={"since": seqs[0] - 1, "job_id": job["id"],
                                             "kinds": "job.state"})
    assert [e["data"]["state"] for e in replay["events"]] == states
    for m in seen:  # nothing secret or internal travels in a payload
        assert not any(k.startswith("__") for k in m)
        assert "token" not in m and "spec" not in m
    # ... and as the browser received them live, for a client that missed some.
    replay = await api.get("events", params={"since": seqs[0] - 1, "job_id": job["id"],
                                             "emissions": 1})
    live = {m["seq"]: m for m in seen}
    replayed = [e for e in replay["emissions"] if e["seq"] in live]
    assert [e["seq"] for e in replayed] == seqs
    for e in replayed:
        m = live[e["seq"]]
        assert (e["schema_id"], e["kind"], e["state"], e["job_id"]) == (
            JOB_STATE, m["kind"], m["state"], m["job_id"])


async def test_a_dead_site_is_told_unreachable(api, jp_ws_fetch):
    """beta's sshd is killed with its sessions: a fresh look marks it unreachable, the event
    stream says so, and the cached rows (what a Reload reads) do not show it up any more."""
    from diamond_jupyter.testbed import control

    await api.get("sites/beta/snapshot", params={"max_age": 0})  # pooled connection, cached
    ws = await jp_ws_fetch("api", "events", "subscribe")
    loop = asyncio.get_running_loop()
    seen: dict[str, Any] = {}

    async def look() -> None:
        snap = await api.get("sites/beta/snapshot", params={"max_age": 0})
        seen["snap"] = snap
        seen["event"] = await next_message(ws, SITE_SNAPSHOT,
                                           lambda m: m["name"] == "beta" and not m["reachable"])
        seen["state"] = await api.get("state", params={"max_age": 300})

    try:
        await asyncio.to_thread(control.restart_sshd, "beta", while_down=lambda: (
            asyncio.run_coroutine_threadsafe(look(), loop).result(TIMEOUT)))
    finally:
        ws.close()
    assert seen["snap"]["reachable"] is False and seen["snap"]["error"]
    assert seen["event"]["error"]
    beta = next(r for r in seen["state"]["sites"] if r["name"] == "beta")
    assert beta["reachable"] is False, beta
    back = await api.get("sites/beta/snapshot", params={"max_age": 0})
    assert back["reachable"] is True
