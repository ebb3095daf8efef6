"""`diamond mcp` as a subprocess speaking newline-delimited JSON-RPC over stdio: the skills
are listed with their input schemas, and a read-only tool runs against the real test bed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest

from diamond_jupyter.skills import SKILLS

pytestmark = pytest.mark.testbed


class Peer:
    def __init__(self, proc: subprocess.Popen) -> None:
        self.proc, self.next_id = proc, 1

    def send(self, method: str, params: dict[str, Any] | None = None, *,
             notify: bool = False) -> dict[str, Any] | None:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        if not notify:
            msg["id"] = self.next_id
            self.next_id += 1
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()
        if notify:
            return None
        while True:  # skip server-initiated notifications (logging, ...)
            line = self.proc.stdout.readline()
            assert line, f"server exited: {self.proc.stderr.read()[-2000:]}"
            reply = json.loads(line)
            if reply.get("id") == msg["id"]:
                assert "error" not in reply, reply
                return reply["result"]


@pytest.fixture
def peer(tb, data_dir):
    proc = subprocess.Popen([sys.executable, "-m", "diamond_jupyter.cli", "mcp", "--config",
                             str(tb.config_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ})
    p = Peer(proc)
    init = p.send("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                 "clientInfo": {"name": "diamond-test", "version": "0"}})
    assert init["serverInfo"]["name"] == "diamond"
    p.send("notifications/initialized", notify=True)
    yield p
    proc.stdin.close()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def test_tools_are_the_skills_with_their_schemas(peer):
    tools = {t["name"]: t for t in peer.send("tools/list")["tools"]}
    assert set(tools) == set(SKILLS)
    for name, skill in SKILLS.items():
        schema = tools[name]["inputSchema"]
        assert set(schema.get("properties", {})) == set(skill.input.model_fields), name
        want = skill.input.model_json_schema().get("required", [])
        assert sorted(schema.get("required", [])) == sorted(want), name
        assert tools[name]["description"] == skill.description
    assert "spec" in tools["submit"]["inputSchema"]["properties"]
    assert tools["wait_for"]["inputSchema"]["required"] == ["job_id"]


def test_discover_resources_on_the_test_bed(peer, tb):
    res = peer.send("tools/call", {"name": "discover_resources", "arguments": {}})
    assert not res.get("isError"), res
    data = res.get("structuredContent") or json.loads(res["content"][0]["text"])
    sites = {s["name"]: s for s in data["sites"]}
    assert set(sites) == set(tb.sites)
    assert all(s["reachable"] for s in sites.values())
    assert sites["gamma"]["gpus_total"] == 4 and sites["alpha"]["nodes"] == 4


def test_a_bad_call_is_a_tool_error_with_the_reason(peer):
    res = peer.send("tools/call", {"name": "describe_site", "arguments": {"site": "nowhere"}})
    assert res["isError"] and "unknown site 'nowhere'" in res["content"][0]["text"]
