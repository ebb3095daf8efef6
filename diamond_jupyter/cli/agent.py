"""`diamond ask "TEXT"` (one agent task, run in-process until it ends) and `diamond mcp`."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import TYPE_CHECKING, Any

from ..model import BadInput, SiteError, check_request, one_line, visible
from ..option_types import count
from .common import seconds

if TYPE_CHECKING:
    from ..agent.config import LLMConfig

ASLEEP_FOR_A_PERSON = "awaiting_approval"


def _confirm(task: dict[str, Any]) -> bool:
    from ..federation_plan import describe_plan

    plan = (task.get("pending") or {}).get("plan") or {}
    print(f"the agent wants to {plan.get('action', 'act')} (exactly this runs if you approve):",
          file=sys.stderr)
    print(describe_plan(plan), file=sys.stderr)
    print("approve? [y/N] ", end="", file=sys.stderr, flush=True)
    return sys.stdin.readline().strip().lower() in ("y", "yes")


async def _ask(args: argparse.Namespace, llm: LLMConfig, text: str) -> dict[str, Any]:
    from ..agent.service import AgentService
    from ..agent.tasks import FINAL_STATES
    from ..federation import AGENT_KEY_VARS, Federation

    fed = Federation(args.config, min_poll_s=1.0, poll_interval_s=30.0,
                     private_vars={*AGENT_KEY_VARS, llm.api_key_env}, read_by="`diamond agent`")
    agent = AgentService(fed, llm)
    try:
        await fed.start(recover=False)
        await agent.start(rearm=False)
        task = await agent.ask(text, approval=args.approval, origin={"face": "cli"},
                               on_stuck=args.on_stuck)
        want = set(FINAL_STATES) | {ASLEEP_FOR_A_PERSON}
        while True:
            try:
                task = await agent.wait(task["id"], timeout=args.timeout, states=want)
            except asyncio.TimeoutError:
                raise SiteError(f"task {task['id']} still {fed.task(task['id'])['state']} "
                                f"after {args.timeout:.0f}s") from None
            if task["state"] != ASLEEP_FOR_A_PERSON or not sys.stdin.isatty():
                return task
            ok = await asyncio.to_thread(_confirm, task)
            shown = (task.get("pending") or {}).get("plan_sha256")  # only the plan shown
            await (agent.approve(task["id"], shown) if ok else agent.reject(task["id"]))
    finally:
        await agent.close()
        await fed.close()
        from .handover import hand_over

        hand_over(fed, args)  # a staging the agent started goes on after `ask` ends


def run_ask(args: argparse.Namespace) -> int:
    if not " ".join(args.text).strip():  # said before the LLM's setup: no setting helps it
        raise BadInput("ask: the request is empty: write what the agent should do, in quotes "
                       "(diamond ask \"run job.sh where it starts first\")")
    check_request(" ".join(args.text))
    from ..agent.config import LLMConfig
    from ..federation_plan import describe_plan

    llm = LLMConfig.from_env(provider=args.provider, model=args.model,
                             max_tokens=args.max_tokens, api_key_env=args.api_key_env)
    if (why := llm.missing()) is not None:  # bad input: one line, and JSON with --json
        raise BadInput(why)
    task = asyncio.run(_ask(args, llm, " ".join(args.text)))
    if args.json:
        print(json.dumps(task, indent=2, default=str))
    elif task["state"] == ASLEEP_FOR_A_PERSON:
        print(f"task {task['id']} awaits approval of:\n"
              + describe_plan((task.get("pending") or {}).get("plan")))
    else:
        print(visible(task.get("answer") or task.get("error") or task["state"]))
    if task["state"] == "failed":
        print(f"diamond: the task failed: {one_line(str(task.get('error')))}", file=sys.stderr)
        return 1
    return 0


def cmd_ask(args: argparse.Namespace) -> int:
    """Run an agent task in-process until it ends; print the answer."""
    return run_ask(args)


def cmd_mcp(args: argparse.Namespace) -> int:
    """Serve the skills over MCP (stdio)."""
    from ..federation import Federation
    from ..mcp_server import serve

    Federation.check_config(args.config)  # a missing sites file: said now, not per tool call
    serve(args.config, approval=args.approval, root=args.root)
    return 0


def add_agent_commands(sub, common) -> None:
    p = sub.add_parser("ask", help="ask the agent (an LLM over the skills) to do something")
    common(p)
    p.add_argument("text", nargs="+", help="the request, in plain words")
    p.add_argument("--approval", choices=("auto", "ask", "dry-run"), default="ask",
                   help="ask (default): show each submit/cancel/transfer/fetch plan and wait "
                   "for y/N; auto: act; dry-run: only plan")
    p.add_argument("--on-stuck", choices=("ask", "resubmit-elsewhere", "wait"), default="ask",
                   help="when a job the task waits on can never start where it is: ask "
                   "(default) before moving it elsewhere, resubmit-elsewhere (under --approval, "
                   "like a submit), or wait")
    p.add_argument("--provider", choices=("anthropic", "openai"),
                   help="the LLM provider (default: the one whose key is set)")
    p.add_argument("--model", help="the provider's model name (default per provider)")
    p.add_argument("--max-tokens", type=count(1), help="upper bound on tokens per reply")
    p.add_argument("--api-key-env", help="env var holding the key (default per provider)")
    p.add_argument("--timeout", type=seconds, help="give up waiting after this many seconds")
    p.set_defaults(fn=cmd_ask)
    p = sub.add_parser("mcp", help="serve the skills over the Model Context Protocol (stdio)")
    common(p)
    p.add_argument("--approval", choices=("auto", "dry-run"), default="auto",
                   help="dry-run: submit, cancel and transfer only return their plan")
    p.add_argument("--root", metavar="DIR", help="the workspace: local paths a tool call "
                   "names (transfers, fetches, stage paths, a workflow's script_file) must "
                   "be inside it (default: the current directory)")
    p.set_defaults(fn=cmd_mcp)
