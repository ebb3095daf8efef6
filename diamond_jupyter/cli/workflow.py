"""`diamond workflow run|status|cancel|plan|approve|list`: the command line's face for
workflows (`retry`, asked for, says how steps and workflows run again)."""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from ..option_types import list_limit
from .common import EXIT_CODES, seconds
from .handover import hand_over
from .jobs import say_trouble


def _fed(args: argparse.Namespace, **kw: Any):
    from .common import federation

    return federation(args, **kw)


def _once(args: argparse.Namespace, call: Callable[[Any], Awaitable[Any]], *,
          hand: bool = True) -> Any:
    """`call(fed)` on an engine opened for one short command (no recovery at start), then
    closed; `hand`: held work it found is handed to a background `diamond resume`."""
    async def go():
        fed = _fed(args)
        try:
            await fed.start(recover=False)
            return await call(fed)
        finally:
            await fed.close()
            if hand:
                hand_over(fed, args)
    return asyncio.run(go())


SUMMED_FROM = 20  # a workflow of more steps has its steps counted by state above the rows


def step_counts(view: Any) -> str:
    """`200 steps: 150 COMPLETED, 48 PENDING, 2 FAILED`: a workflow's steps counted by
    state, the states in the order their first step comes."""
    from collections import Counter

    counts = Counter(s.state.value for s in view.steps)
    return f"{len(view.steps)} steps: " + ", ".join(f"{n} {state}"
                                                   for state, n in counts.items())


NO_RETRY = ("there is no `diamond workflow retry`: a step runs again on its own as many "
            "times as its `retries: N` says (up to 10; on_failure: resubmit-elsewhere moves "
            "it to another site); a workflow that ended FAILED is run again with `diamond "
            "workflow run FILE`, a new workflow whose every step is submitted again")


def _no_retry(args: argparse.Namespace) -> int:
    from ..model import BadInput

    raise BadInput(NO_RETRY)


def _out(args: argparse.Namespace, view: Any) -> None:
    if args.json:
        print(json.dumps(view.contract(), indent=2))
        return
    from ..model import one_line

    # names and reasons are the sites' and the jobs' text: each written out on its line
    reason = f" ({one_line(view.reason)})" if view.reason else ""
    print(f"{one_line(view.id)}\t{view.state.value}\t{one_line(view.name)}{reason}")
    if len(view.steps) > SUMMED_FROM:  # more than a screen: how many in each state, first
        print(f"  {step_counts(view)}")
    rows = [(one_line(s.name), s.state.value, one_line(s.site or "-"), one_line(s.job or "-"),
             f"  ({one_line(s.reason)})" if s.reason and s.state.value != "COMPLETED" else "")
            for s in view.steps]
    # columns as wide as their longest cell: long step or site names keep the table straight
    name_w = max([16, *(len(r[0]) for r in rows)])
    site_w = max([8, *(len(r[2]) for r in rows)])
    job_w = max([1, *(len(r[3]) for r in rows)])
    for name, state, site, job, reason in rows:
        print(f"  {name:<{name_w}} {state:<10} {site:<{site_w}} {job:<{job_w}}{reason}".rstrip())


def _run(args: argparse.Namespace) -> int:
    fed = _fed(args, min_poll_s=1.0, poll_interval_s=args.poll)
    # bad input: exit 2 before any site is asked; read once (a pipe, `<(./make_wf.py)`, can
    # be read only once, and a file changed meanwhile is not run unchecked)
    wf = fed.load_workflow(Path(args.file))

    async def go():
        try:
            await fed.start(recover=False, resume_held=args.wait)
            view = await fed.run_workflow(wf, origin={"face": "cli"})
            args.started = view.id  # what a Ctrl-C while waiting names
            if args.wait:
                view = await fed.wait_workflow(view.id, timeout=args.timeout,
                                               on_trouble=say_trouble)
            return view
        finally:
            await fed.close()  # without --wait: handed to a background `diamond resume`
            hand_over(fed, args)
    view = asyncio.run(go())
    _out(args, view)
    if args.wait:
        return 0 if view.state.value == "COMPLETED" else 1
    return 0


def _status(args: argparse.Namespace) -> int:
    _out(args, _once(args, lambda fed: fed.workflow_status(args.id, refresh=True)))
    return 0


def _cancel(args: argparse.Namespace) -> int:
    _out(args, _once(args, lambda fed: fed.cancel_workflow(args.id)))
    return 0


def _show_plan(plan: dict[str, Any]) -> None:
    """A workflow's approval plan on the terminal: per step its sites and the batch script
    rendered for each (with its sha256), what waits for approval and why, the plan's hash."""
    from ..model import one_line, visible
    from ..workflow.model import site_list

    print(visible(f"workflow {plan.get('workflow_id')} ({plan.get('name')}): "
                  f"{len(plan.get('steps') or [])} steps"))
    for st in plan.get("steps") or []:
        why = (plan.get("awaiting_approval") or {}).get(st["name"])
        print(visible(f"step {st['name']}: site {site_list(st['site'])}, may run on "
                      f"{', '.join(st['may_run_on']) or 'no site'}"
                      + (f"; waits for approval: {why}" if why else "")))
        for c in st.get("rendered") or []:
            if "refused" in c:
                print(visible(f"  on {c['site']}: cannot run ({one_line(c['refused'])})"))
                continue
            print(visible(f"  on {c['site']} ({c['scheduler']}), script sha256 "
                          f"{c['script_sha256']}:"))
            for line in c["script"].splitlines():
                print(visible(f"    | {line}"))
        for line in st.get("engine_lines") or []:
            print(visible(f"  the engine may add: {line}"))
    for warning in plan.get("warnings") or []:
        print(visible(f"warning: {warning}"))
    print(f"plan sha256: {plan['plan_sha256']}")
    print(f"approve exactly this plan: diamond workflow approve {plan.get('workflow_id')} "
          f"--plan-hash {plan['plan_sha256']}")


def _plan(args: argparse.Namespace) -> int:
    plan = _once(args, lambda fed: fed.workflow_approval_plan(args.id))
    if args.json:
        print(json.dumps(plan, indent=2))
    else:
        _show_plan(plan)
    return 0


def _approve(args: argparse.Namespace) -> int:
    import sys

    from ..model import BadInput

    digest = args.plan_hash
    if digest is None:  # only a person at a terminal, shown the plan here, approves it
        if not sys.stdin.isatty():
            raise BadInput(f"give --plan-hash H, the sha256 `diamond workflow plan {args.id}` "
                           "prints: a plan no one was shown is not approved")
        plan = _once(args, lambda fed: fed.workflow_approval_plan(args.id), hand=False)
        _show_plan(plan)
        try:
            said = input("approve this plan? [y/N] ")
        except EOFError:  # the terminal closed: nothing approved
            said = ""
        if said.strip().lower() not in ("y", "yes"):
            print("not approved", file=sys.stderr)
            return 1
        digest = plan["plan_sha256"]

    _out(args, _once(args, lambda fed: fed.approve_workflow_shown(args.id, digest)))
    return 0


def _list(args: argparse.Namespace) -> int:
    views = _fed(args).workflows(limit=args.limit)
    if args.json:
        print(json.dumps([v.contract() for v in views], indent=2))
    else:
        from ..model import one_line

        for v in views:  # tab-separated: a tab or newline in a name is written out
            print(f"{one_line(v.id)}\t{v.state.value}\t{one_line(v.name)}\t{len(v.steps)} steps")
    return 0


def add_workflow_command(sub: Any, common: Any) -> None:
    wf = sub.add_parser("workflow", help="run a workflow: a DAG of job steps across sites",
                        epilog=EXIT_CODES)
    wsub = wf.add_subparsers(dest="workflow_command", required=True)
    p = wsub.add_parser("run", help="run a workflow file (YAML); prints its id")
    common(p)
    p.add_argument("file", help="the workflow file (YAML: name, steps)")
    p.add_argument("--wait", action="store_true",
                   help="drive it here until it ends; exit 0 when COMPLETED, else 1")
    p.add_argument("--timeout", type=seconds, help="with --wait: give up after this many s")
    p.add_argument("--poll", type=seconds, default=30.0, help="safety-net poll interval (s)")
    p.set_defaults(fn=_run)
    id_help = "a workflow id (as printed by run)"
    for name, fn, help in (("status", _status, "a workflow's state and its steps'"),
                           ("cancel", _cancel, "cancel a workflow: every step's job")):
        p = wsub.add_parser(name, help=help)
        common(p)
        p.add_argument("id", help=id_help)
        p.set_defaults(fn=fn)
    p = wsub.add_parser("plan", help="what a workflow would run, to approve again: per step "
                        "its sites and the batch script rendered for each, and the plan's "
                        "sha256")
    common(p)
    p.add_argument("id", help=id_help)
    p.set_defaults(fn=_plan)
    p = wsub.add_parser("approve", help="approve a workflow's plan (as `workflow plan` shows "
                        "it); its steps waiting for approval go on")
    common(p)
    p.add_argument("id", help=id_help)
    p.add_argument("--plan-hash", metavar="H", help="the plan's sha256 as `workflow plan` "
                   "printed it: refused if the plan changed since (without it: shown here "
                   "and asked, at a terminal only)")
    p.set_defaults(fn=_approve)
    p = wsub.add_parser("retry", help="not a command: says how a step or a workflow runs "
                        "again", description=NO_RETRY)
    common(p)  # --json and --config on every subcommand (DESIGN.md), even this one
    p.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    p.set_defaults(fn=_no_retry)
    p = wsub.add_parser("list", help="workflows in the store, newest first")
    common(p)
    p.add_argument("--limit", type=list_limit(), default=50,
                   help="at most this many (default 50)")
    p.set_defaults(fn=_list)
