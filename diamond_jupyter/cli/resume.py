"""`diamond resume`, and the hand-over every short command makes: work no live engine drives
(a staging, a transfer or a workflow whose engine closed or died) is given to one background
`diamond resume`, which drives it to its end and exits, so nothing waits for a server."""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from .common import out, seconds
from .handover import count_held

CHECK_S = 2.0  # how often `diamond resume` looks whether its work has ended


def owned_unfinished(fed: Any) -> list[str]:
    """The unfinished stagings, transfers and workflows this engine drives."""
    me = fed.engine_id
    active = ["PENDING", "ACTIVE"]
    recs = [*fed.store.list_transfers(states=active, limit=None, kinds=["stage"]),
            *fed.store.list_transfers(states=active, limit=None)]
    ids = [r.id for r in recs if r.data.get("owner") == me]
    return ids + [w.id for w in fed.store.unfinished_workflows() if w.data.get("owner") == me]


async def drive_held(fed: Any, timeout_s: float | None = None,
                     check_s: float = CHECK_S) -> dict[str, list[str]]:
    """Take the held work and drive it until none this engine took is unfinished (work
    handed over meanwhile is taken too), or `timeout_s` passes; returns what was taken."""
    taken: dict[str, list[str]] = {}
    loop = asyncio.get_running_loop()
    deadline = None if timeout_s is None else loop.time() + timeout_s
    while True:
        for kind, ids in (await fed.resume_held()).items():
            taken.setdefault(kind, []).extend(i for i in ids if i not in taken.get(kind, []))
        if not owned_unfinished(fed) or (deadline is not None and loop.time() >= deadline):
            return taken
        await asyncio.sleep(check_s)


def cmd_resume(args: argparse.Namespace) -> int:
    from .common import federation

    async def go():
        fed = federation(args, min_poll_s=1.0, poll_interval_s=args.poll)
        try:
            await fed.start(recover=False, discover_sites=True)  # long-lived
            return await drive_held(fed, args.timeout)
        finally:
            await fed.close()
    taken = asyncio.run(go())
    out(args, taken, "nothing was held" if not taken else "drove " + count_held(taken))
    return 0


def add_resume_command(add: Any) -> None:
    p = add("resume", cmd_resume, "drive the held stagings, transfers and workflows no "
            "engine drives (their engine closed or died) until they end")
    p.add_argument("--timeout", type=seconds, help="stop after this many seconds (what is "
                   "left is handed back)")
    p.add_argument("--poll", type=seconds, default=30.0, help="safety-net poll interval (s)")
