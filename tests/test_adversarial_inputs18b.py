"""Sweep 18b of hostile inputs, through faces sweep 18 did not probe: the MCP face over its
real protocol (`diamond mcp` as a subprocess speaking newline-delimited JSON-RPC on stdio, on
`test_cli_newuser.NewUser`'s fake Slurm site).

The standard is the earlier sweeps': a hostile call is answered with an error naming what was
wrong and what would be accepted, never a traceback, and nothing reaches the scheduler. Tests
marked `fault` failed before this sweep's fixes; the others are guards."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sweep_helpers
from sweep_helpers import sbatch_calls

user = sweep_helpers.new_user


class McpPeer:
    """`diamond mcp` on the user's sites file, spoken to line by line."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.proc, self.next_id = proc, 1

    def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """The whole JSON-RPC reply (result or error) to one request."""
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        self.next_id += 1
        if params is not None:
            msg["params"] = params
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()
        while True:  # skip the server's notifications
            line = self.proc.stdout.readline()
            assert line, "the MCP server exited"
            reply = json.loads(line)
            if reply.get("id") == msg["id"]:
                return reply

    def notify(self, method: str) -> None:
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": method}) + "\n")
        self.proc.stdin.flush()

    def refusal(self, tool: str, arguments: Any) -> str:
        """The message a tools/call is refused with: a JSON-RPC error's, or the text of a
        result marked `isError` (how MCP reports a tool's own failure)."""
        reply = self.send("tools/call", {"name": tool, "arguments": arguments})
        if "error" in reply:
            return str(reply["error"]["message"])
        result = reply["result"]
        assert result.get("isError"), f"{tool} ran: {str(result)[:300]}"
        return "\n".join(c.get("text", "") for c in result["content"])


@pytest.fixture
def mcp_peer(user) -> Iterator[McpPeer]:
    proc = subprocess.Popen([sys.executable, "-m", "diamond_jupyter.cli", "mcp", "--config",
                             str(user.sites)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=user.root,
                            env=user.env(user.sites))
    peer = McpPeer(proc)
    init = peer.send("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "sweep-18b", "version": "0"}})
    assert init["result"]["serverInfo"]["name"] == "diamond", init
    peer.notify("notifications/initialized")
    yield peer
    proc.stdin.close()
    try:
        err = proc.stderr.read()
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "Traceback" not in err, err[-3000:]


# -- 1. MCP tool calls with hostile arguments, over the protocol ----------------------------

TOO_LONG = "echo " + "x" * (5 << 20)  # past the 4 MB a job script may hold (a 1 MB one may)


@pytest.mark.parametrize("tool,arguments,said", [
    ("submit", {"site": "gamma", "script": "echo hi"},
     "unknown site 'gamma' (known: alpha, ghost)"),
    ("describe_site", {"site": "nowhere"}, "unknown site 'nowhere'"),
    ("submit", {"site": "alpha", "script": TOO_LONG}, "more than the 4194304 a job script"),
    ("status", {"job_id": "alpha:1;rm -rf ~"}, "alpha:1;rm -rf ~"),
    ("cancel", {"job_id": "alpha:1;reboot"}, "alpha:1;reboot"),
    ("logs", {"job_id": "alpha:$(id)"}, "alpha:$(id)"),
    ("submit", {"site": "alpha", "script": "echo hi", "sudo": True},
     "unknown field 'sudo' in the arguments (accepted: "),
    ("submit", {"site": "alpha", "script": ["echo", "hi"]}, "script"),
    ("submit", {"site": 7, "script": "echo hi"}, "site"),
    ("submit", {"site": "alpha", "script": "echo hi", "hedge": "two"}, "hedge"),
    ("status", {}, "job_id"),
    ("no_such_tool", {}, "no_such_tool"),
])
def test_a_hostile_tool_call_is_an_error_naming_it_and_nothing_runs(mcp_peer, user, tool,
                                                                   arguments, said):
    msg = mcp_peer.refusal(tool, arguments)
    assert said in msg, msg
    assert "Traceback" not in msg and len(msg) < 2000, msg[:3000]
    assert sbatch_calls(user) == []


def test_arguments_that_are_no_object_are_an_error(mcp_peer, user):
    for arguments in (["alpha"], "alpha", 7):
        reply = mcp_peer.send("tools/call", {"name": "status", "arguments": arguments})
        text = json.dumps(reply)
        assert "error" in reply or reply["result"].get("isError"), text[:500]
        assert "Traceback" not in text, text[:3000]
    # the server still answers
    assert "unknown site 'nowhere'" in mcp_peer.refusal("describe_site", {"site": "nowhere"})


# -- 2. the agent: a hedged plan on a site that forbids copies --------------------------------



def _no_hedging_on_alpha(user) -> None:
    """alpha forbids hedged copies (`hedge: false`); beta, the same fake Slurm, allows them."""
    beta = user.alpha.replace("name: alpha", "name: beta")
    user.write("sites.yaml", f"sites:\n{user.alpha}    hedge: false\n{beta}"
                             f"store: {user.store_path}\n")


@pytest.mark.parametrize("site,said", [
    ("alpha", "not an explicit site 'alpha'; and alpha forbids hedged copies (hedge: false "
              "in its sites-file entry): submit it there without a hedge"),
    ("auto", "alpha: no nodes reported; the sites file forbids hedged copies there "
             "(hedge: false) | beta: no nodes reported"),
])
async def test_fault_a_hedged_plan_on_a_site_forbidding_copies_is_refused_before_approval(
        user, fake_llm, site, said):
    """The agent's plan asks `submit` with `hedge: 2` and alpha, whose sites-file entry says
    `hedge: false`, named (or left to placement): the call is refused to the model before
    any approval is asked, naming alpha and its policy; nothing reaches the scheduler."""
    from agents import engine_and_agent
    from fake_llm import text, tool_results, tool_use

    _no_hedging_on_alpha(user)
    seen: list[tuple[str, Any, bool]] = []

    def after(body):
        seen.extend(tool_results(body))
        return [text("refused, as it should be")]

    fake_llm.script([tool_use("submit", {"script": "#!/bin/sh\necho hi\n", "site": site,
                                         "hedge": 2})], after)
    async with engine_and_agent(user.sites, user.store_path) as (fed, service):
        task = await service.ask("run it twice", approval="ask")
        done = await service.wait(task["id"], settled=True, timeout=60)
        assert done["state"] == "done", done
        assert not fed.events_since(0, kinds=["agent.approval"])
        [(_, said_back, is_error)] = seen
        assert is_error and said in str(said_back), said_back
        assert sbatch_calls(user) == []


# -- 3. the agent: option values that start with a dash -----------------------------------

async def _approval_shown(user, fake_llm, args: dict[str, Any]) -> tuple[Any, Any, Any, str]:
    """The agent asked `submit` with `args` (approval "ask"): what the task awaiting approval
    shows, then (approved) the task's end; and the fed, closed. The task's id last."""
    from agents import engine_and_agent
    from fake_llm import text, tool_use

    fake_llm.script([tool_use("submit", args)], [text("done")])
    async with engine_and_agent(user.sites, user.store_path) as (fed, service):
        task = await service.ask("submit it", approval="ask")
        shown = await service.wait(task["id"], settled=True, timeout=60)
        if shown["state"] != "awaiting_approval":
            return shown, None, fed, task["id"]
        await service.approve(task["id"], shown["pending"]["plan_sha256"])
        done = await service.wait(task["id"], timeout=60)
        return shown, done, fed, task["id"]


@pytest.mark.parametrize("field,value,line", [
    ("name", "-rf", "#SBATCH --job-name=-rf\n"),
    ("name", "--delete", "#SBATCH --job-name=--delete\n"),
])
async def test_a_value_that_looks_like_an_option_is_shown_and_run_as_that_value(
        user, fake_llm, field, value, line):
    """(guard) A plan naming the job `-rf` (or an account `--uid=0`): the approval shows the
    value exactly, and what sbatch is given is the script shown, the value joined to its
    option (`--job-name=-rf`), never a word of its own an option parser could read."""
    spec = {"script": "echo hi\n", field: value}
    shown, done, fed, _ = await _approval_shown(user, fake_llm, {"spec": spec, "site": "alpha"})
    assert shown["state"] == "awaiting_approval", shown
    plan = shown["pending"]["plan"]
    assert plan["spec"][field] == value and line in plan["script"], plan
    assert done["state"] == "done", done
    [call] = sbatch_calls(user)
    assert value not in call.split(), call
    assert Path(call.split()[-1]).read_text() == plan["script"]


@pytest.mark.parametrize("workdir", ["--delete", "-rf"])
async def test_a_working_directory_that_looks_like_an_option_is_refused_before_approval(
        user, fake_llm, workdir):
    """(guard) A plan whose working directory is `--delete`: refused to the model before any
    approval, saying how to write it as a path; nothing submitted."""
    from fake_llm import tool_results

    shown, done, fed, _ = await _approval_shown(
        user, fake_llm, {"spec": {"script": "echo hi\n", "working_directory": workdir},
                         "site": "alpha"})
    assert shown["state"] == "done" and done is None, shown
    [(_, said, is_error)] = tool_results(fake_llm.requests[-1])
    assert is_error and (f"working_directory '{workdir}' starts with '-' (it would be read "
                         f"as an option); give a name or a path such as ./{workdir}"
                         ) in str(said), said
    assert sbatch_calls(user) == []


@pytest.mark.parametrize("field,value,said_is", [
    ("account", "--uid=0", "an account is a name"), ("queue", "-p", "a queue is a name"),
    ("qos", "--exclusive", "a QOS is a name")])
async def test_fault_a_name_that_looks_like_an_option_is_refused_as_a_name(
        user, fake_llm, field, value, said_is):
    """A plan whose account is `--uid=0`: refused before approval, as before, but the
    reason said "give a name or a path such as ./--uid=0", and an account is no path."""
    from fake_llm import tool_results

    shown, done, fed, _ = await _approval_shown(
        user, fake_llm, {"spec": {"script": "echo hi\n", field: value}, "site": "alpha"})
    assert shown["state"] == "done" and done is None, shown
    [(_, said, is_error)] = tool_results(fake_llm.requests[-1])
    assert is_error and (f"{field} '{value}' starts with '-' (it would be read as an option); "
                         f"{said_is}, and no scheduler's starts with '-'; give the "
                         "name") in str(said), said
    assert "./" not in str(said)
    assert sbatch_calls(user) == []
