"""A background discovery stuck in a command ends when its engine closes, or its loop does.

A long-lived engine discovers every site as it starts (`start(discover_sites=True)`). The
MCP server hung as its stdin closed: a discovery's local command was being started as the
event loop's close cancelled every task, and Python 3.11's `create_subprocess_exec`,
cancelled while it connects the pipes, waits forever (CPython gh-103847). The engine's
close also left the discovery it cancelled running. Now a local command is started by
`transports.child.Child` (a pidfd for its exit, no child watcher) and `Federation.close`
waits for each discovery it cancels.

The site `stuck` is a Slurm site on the local transport whose `scontrol` writes its pid and
then never answers (`sleep`): a transport command that hangs. No test bed."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from test_adversarial_inputs18b import McpPeer

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.discovery_site import STOP_WAIT_S
from diamond_jupyter.federation import Federation
from diamond_jupyter.store import Store

WAIT_S = 30.0  # a guard: what is awaited here comes within a second or two


def _stuck_sites(tmp_path: Path) -> Path:
    """A sites file of the one site `stuck`, its store beside it."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    for name in ("scontrol", "squeue", "sacctmgr", "sshare", "sprio", "sinfo", "sacct"):
        body = f"echo $$ >> '{tmp_path}/started'\nexec sleep 3600" if name == "scontrol" \
            else "exit 0"
        (bin_ / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_ / name).chmod(0o755)
    site = SiteConfig(name="stuck", workdir=str(tmp_path / "stuck"),
                      preamble=f"export PATH='{bin_}':$PATH", transport={"kind": "local"})
    sites = tmp_path / "sites.yaml"
    sites.write_text(yaml.safe_dump({"sites": [site.model_dump(mode="json")],
                                     "store": str(tmp_path / "store.sqlite")}))
    return sites


def _stuck_pid(tmp_path: Path) -> int:
    """The pid of the stuck command, once it runs (waited for)."""
    started, end = tmp_path / "started", time.monotonic() + WAIT_S
    while not (started.exists() and started.read_text().strip()):
        assert time.monotonic() < end, "the discovery's command never started"
        time.sleep(0.05)
    return int(started.read_text().split()[0])


def _ended(pid: int) -> bool:
    """Whether process `pid` is gone (a zombie left to a parent that does not reap is gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
    return "\nState:\tZ" in status


async def test_close_during_a_discovery_stuck_in_a_command_ends_it_leaving_nothing(tmp_path):
    sites = _stuck_sites(tmp_path)
    fed = Federation(sites, store=Store(tmp_path / "store.sqlite"))
    threads = set(threading.enumerate())
    await asyncio.wait_for(fed.start(recover=False, discover_sites=True), WAIT_S)
    pid = await asyncio.to_thread(_stuck_pid, tmp_path)
    began = time.monotonic()
    await asyncio.wait_for(fed.close(), WAIT_S)
    took = time.monotonic() - began
    assert took < STOP_WAIT_S, took  # stopped, not waited out and left behind
    me = asyncio.current_task()
    assert [t for t in asyncio.all_tasks() if t is not me] == []
    assert _ended(pid)
    # no thread is left busy: the loop's own executor (what `to_thread` used) ends at once
    await asyncio.wait_for(asyncio.get_running_loop().shutdown_default_executor(), 5.0)
    assert [t.name for t in set(threading.enumerate()) - threads if t.is_alive()] == []
    assert fed.sites["stuck"].discovery.cached() is None  # nothing was found: unknown


def test_a_loop_closed_while_local_commands_start_ends_at_once():
    """Each moment of a command's start (the loop's close cancels every task at once): the
    loop's close ends within its bound and the command is killed. Before, the first moments
    hung forever (CPython gh-103847)."""
    code = """
import asyncio, time
from diamond_jupyter.transports.local import LocalTransport
for turns in range(8):
    pids = []
    async def main():
        transport = LocalTransport("here", "/tmp")
        asyncio.ensure_future(transport.run(["sh", "-c", "echo $$; exec sleep 3600"]))
        for _ in range(turns):
            await asyncio.sleep(0)
    began = time.monotonic()
    asyncio.run(main())
    print(turns, round(time.monotonic() - began, 3), flush=True)
"""
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert res.returncode == 0, res.stderr[-2000:]
    took = {int(t): float(s) for t, s in (line.split() for line in res.stdout.splitlines())}
    assert sorted(took) == list(range(8)) and max(took.values()) < 5.0, took
    assert "Traceback" not in res.stderr, res.stderr[-2000:]


@pytest.fixture
def stuck_mcp(tmp_path) -> Iterator[tuple[McpPeer, Path]]:
    sites = _stuck_sites(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIAMOND_")}
    proc = subprocess.Popen([sys.executable, "-m", "diamond_jupyter.cli", "mcp", "--config",
                             str(sites)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                            env={**env, "HOME": str(tmp_path),
                                 "DIAMOND_DATA_DIR": str(tmp_path / "data"),
                                 "DIAMOND_HANDOVER": "0"})
    try:
        yield McpPeer(proc), tmp_path
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_an_mcp_server_whose_site_discovery_never_answers_exits_when_stdin_closes(stuck_mcp):
    """`diamond mcp` (its engine discovering at start again): the client goes, the server
    exits at once and the site's stuck command with it. (A guard: the hang needed the close
    to fall inside a command's start, which the test above reaches each moment of.)"""
    peer, tmp_path = stuck_mcp
    init = peer.send("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "discovery-stop", "version": "0"}})
    assert init["result"]["serverInfo"]["name"] == "diamond", init
    peer.notify("notifications/initialized")
    # the first tool call starts the engine, which begins discovering `stuck` behind it
    reply = peer.send("tools/call", {"name": "status", "arguments": {"job_id": "stuck:1"}})
    assert reply["result"]["isError"], reply
    pid = _stuck_pid(tmp_path)
    assert not _ended(pid)
    began = time.monotonic()
    _, err = peer.proc.communicate(timeout=WAIT_S)  # stdin closed, the rest read
    took = time.monotonic() - began
    assert peer.proc.returncode == 0 and "Traceback" not in err, \
        (peer.proc.returncode, err[-3000:])
    assert took < STOP_WAIT_S, took  # the engine did not wait a discovery out
    assert _ended(pid)
