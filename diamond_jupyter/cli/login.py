"""`diamond login SITE`: connect to a site now, answering its one-time code prompt (on the
terminal, or from DIAMOND_OTP), to check that a login works. With `--persist DURATION` the
connection is kept by a holder process, and later commands use it with no new prompt until
it has been unused that long; `diamond logout SITE` (or `login --stop`) ends it."""

from __future__ import annotations

import argparse
import asyncio
import re

from .common import out, with_fed

_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
MAX_PERSIST_S = 7 * 86400


def duration(text: str) -> float:
    """An argparse type: a time as ssh_config's ControlPersist writes it (`600`, `10m`,
    `1h30m`: s, m, h, d, w), above 0 and at most a week."""
    parts = re.findall(r"(\d+)([smhdw]?)", text.strip().lower())
    if not parts or "".join(n + u for n, u in parts) != text.strip().lower():
        raise argparse.ArgumentTypeError(f"expected a time such as 600, 10m or 1h30m "
                                         f"(units s, m, h, d, w), not {text!r}")
    total = sum(int(n) * _UNITS[u] for n, u in parts)
    if not 0 < total <= MAX_PERSIST_S:
        raise argparse.ArgumentTypeError(f"expected a time above 0 and at most a week "
                                         f"(7d), not {text!r}")
    return float(total)


def cmd_login(args: argparse.Namespace) -> int:
    if args.stop:
        return cmd_logout(args)

    async def go(fed):
        return await fed.login(args.site, persist_s=args.persist)
    res = asyncio.run(with_fed(args, go))
    text = f"{res['site']}: logged in"
    if "holder" in res:
        kept = "kept" if res["new_connection"] else "already kept"
        text += (f"; the connection is {kept} for later commands until unused for "
                 f"{args.persist:g} s (`diamond logout {res['site']}` ends it)")
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
                           "unused this long: 600, 10m, 1h30m")
    what.add_argument("--stop", action="store_true",
                      help="end the connection kept by --persist (as `diamond logout`)")
    p = add("logout", cmd_logout, "end the connection `diamond login --persist` kept")
    p.add_argument("site", help="the site (as the sites file names it)")
