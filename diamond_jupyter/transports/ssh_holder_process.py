"""The holder process of a kept login (`diamond login SITE --persist`): it logs in through
the SSH transport, its prompts relayed to the command that started it, then serves the
socket `ssh_holder` names. Apart from `ssh_holder` so that the SSH transport, which asks
the holder, and the holder, which logs in through it, import each other in no cycle."""

from __future__ import annotations

import json
import math
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO

from ..config import TransportConfig
from ..model import BadInput, SiteError
from .base import AuthError, HostKeyError
from .ssh import SSHTransport
from .ssh_holder import _Holder, _send


def _relay(out: IO[str], inp: IO[str]) -> Callable[[str, str, list[tuple[str, bool]]],
                                                    list[str]]:
    """The holder's interactive handler: each prompt goes to the command that started it."""

    def ask(title: str, instructions: str, prompts: list[tuple[str, bool]]) -> list[str]:
        _send(out, {"ask": {"title": title, "instructions": instructions,
                            "prompts": [[p, e] for p, e in prompts]}})
        line = inp.readline()
        reply = json.loads(line) if line else {"cancel": "the login was abandoned"}
        if "answers" not in reply:
            raise SiteError(str(reply.get("cancel", "no answer")))
        return [str(a) for a in reply["answers"]]

    return ask


def main() -> int:
    """The holder process: log in (prompts relayed on stdin/stdout), say ready, then serve."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    req = json.loads(sys.stdin.readline())
    site, path = str(req["site"]), Path(req["socket"])
    try:
        transport = SSHTransport(TransportConfig(**req["transport"]), site=site,
                                 interactive_handler=_relay(sys.stdout, sys.stdin),
                                 reconnect_attempts=1, use_holder=False)
        conn = transport.connect_blocking()
        idle_s = math.inf if req["idle_s"] is None else float(req["idle_s"])
        holder = _Holder(conn, path, idle_s)
        srv = holder.listen()
    except AuthError as e:
        _send(sys.stdout, {"error": str(e), "kind": "auth", "interactive": e.interactive})
        return 1
    except HostKeyError as e:
        _send(sys.stdout, {"error": str(e), "kind": "hostkey"})
        return 1
    except BadInput as e:
        _send(sys.stdout, {"error": str(e), "kind": "bad-input"})
        return 1
    except Exception as e:
        _send(sys.stdout, {"error": f"{site}: {e}", "kind": "site"})
        return 1
    _send(sys.stdout, {"ready": True})
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1):  # the starting command no longer waits on us
        os.dup2(devnull, fd)
    try:
        holder.serve(srv)
    finally:
        holder.close(srv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
