"""`diamond login SITE`: connect to a site now, answering its one-time code prompt (on the
terminal, or from DIAMOND_OTP), to check that a login works. With `--persist DURATION` the
connection is kept by a holder process, and later commands use it with no new prompt until
it has been unused that long; `diamond logout SITE` (or `login --stop`) ends it. Without
`--persist`, the login is kept as the user's ssh_config keeps the host's ssh logins
(ControlMaster with ControlPersist `yes`, `no` or a time)."""

from __future__ import annotations

import argparse
import asyncio
import math

from ..model import time_value
from .common import out, with_fed

MAX_PERSIST_S = 7 * 86400


def duration(text: str) -> float:
    """An argparse type: a time as ssh_config's ControlPersist writes it (`600`, `10m`,
    `1h30m`: s, m, h, d, w), above 0 and at most a week; `yes` (until logout, math.inf) or
    `no` (0: nothing kept, whatever ssh_config says)."""
    word = text.strip().lower()
    if word in ("yes", "no"):
        return math.inf if word == "yes" else 0.0
    total = time_value(text)
    if total is None:
        raise argparse.ArgumentTypeError(f"expected a time such as 600, 10m or 1h30m "
                                         f"(units s, m, h, d, w), yes or no, not {text!r}")
    if not 0 < total <= MAX_PERSIST_S:
        raise argparse.ArgumentTypeError(f"expected a time above 0 and at most a week "
                                         f"(7d), not {text!r}")
    return float(total)


def cmd_login(args: argparse.Namespace) -> int:
    if args.stop:
        return cmd_logout(args)
    persist = None if not args.persist else args.persist  # `--persist no`: a plain login

    async def go(fed):
        return await fed.login(args.site, persist_s=persist, as_ssh_config=args.persist is None)
    res = asyncio.run(with_fed(args, go))
    text = f"{res['site']}: logged in"
    if "holder" in res:
        held = res["holder"]
        kept = "kept" if res["new_connection"] else "already kept"
        until = "until logged out" if held["idle_s"] is None else \
            f"until unused for {held['idle_s']:g} s"
        text += f"; the connection is {kept} for later commands {until}"
        text += f" (as {held['origin']}; " if held["origin"] else " ("
        text += f"`diamond logout {res['site']}` ends it)"
    if res.get("ssh_control_path"):
        text += (f"\n{res['site']}: ssh_config's ControlPath {res['ssh_control_path']} is "
                 "ssh's own; diamond keeps its logins in a holder of its own")
    out(args, res, text)
    return 0


def cmd_logout(args: argparse.Namespace) -> int:
    async def go(fed):
        return await fed.logout(args.site)
    res = asyncio.run(with_fed(args, go))
    out(args, res, f"{res['site']}: " + ("logged out (the kept connection is closed)"
                                         if res["stopped"] else "no kept connection"))
    return 0


def add_login_command(add) -> None:
    p = add("login", cmd_login, "connect to a site now, answering its one-time code prompt "
                                "(on the terminal, or from DIAMOND_OTP)")
    p.add_argument("site", help="the site to log in to (as the sites file names it)")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--persist", type=duration, metavar="DURATION",
                      help="keep the connection for later commands (no new prompt) until "
                           "unused this long: 600, 10m, 1h30m; yes: until logout; no: not "
                           "kept. Without it, as ssh_config's ControlPersist for the host")
    what.add_argument("--stop", action="store_true",
                      help="end the connection kept by --persist (as `diamond logout`)")
    p = add("logout", cmd_logout, "end the connection `diamond login --persist` kept")
    p.add_argument("site", help="the site (as the sites file names it)")
