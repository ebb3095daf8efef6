"""`diamond login SITE`: connect to a site now, answering its one-time code prompt (on the
terminal, or from DIAMOND_OTP), to check that a login works."""

from __future__ import annotations

import argparse
import asyncio

from .common import out, with_fed


def cmd_login(args: argparse.Namespace) -> int:
    async def go(fed):
        return await fed.login(args.site)
    res = asyncio.run(with_fed(args, go))
    out(args, res, f"{res['site']}: logged in")
    return 0


def add_login_command(add) -> None:
    p = add("login", cmd_login, "connect to a site now, answering its one-time code prompt "
                                "(on the terminal, or from DIAMOND_OTP)")
    p.add_argument("site", help="the site to log in to (as the sites file names it)")
