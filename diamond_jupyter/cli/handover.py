"""The hand-over every short command makes after closing its engine: held work (a staging, a
transfer or a workflow no live engine drives) is given to one background `diamond resume`."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from typing import Any

from ..model import DiamondError, visible

HANDOVER_ENV = "DIAMOND_HANDOVER"  # "0": a short command leaves held work for a server


def hand_over(fed: Any, args: argparse.Namespace) -> int | None:
    """After a short command closed its engine: when held work has no live engine, start a
    detached `diamond resume` on the same sites file and store (its pid), else None. It
    never blocks the command; two that race are safe (each item is claimed in the store)."""
    if os.environ.get(HANDOVER_ENV, "1") == "0":
        return None
    try:
        held = fed.held_work()
    except DiamondError:  # an unreadable store: the command's own error says so
        return None
    if not held:
        return None
    argv = [sys.executable, "-m", "diamond_jupyter.cli", "resume"]
    if getattr(args, "config", None):
        argv += ["--config", str(args.config)]
    log_path = fed.store.path.with_name(fed.store.path.name + ".resume.log")
    try:
        fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)  # its own
        with os.fdopen(fd, "a") as log:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=log, start_new_session=True)
    except OSError as e:
        print(visible(f"diamond: held work ({count_held(held)}) has no engine and could not be "
                      f"handed over ({e}); `diamond resume` drives it"), file=sys.stderr)
        return None
    print(visible(f"diamond: held work ({count_held(held)}) had no engine: handed to "
                  f"`diamond resume` (pid {proc.pid}, log {log_path})"), file=sys.stderr)
    return proc.pid


def count_held(held: dict[str, list[str]]) -> str:
    return ", ".join(f"{len(ids)} {kind}" for kind, ids in held.items())
