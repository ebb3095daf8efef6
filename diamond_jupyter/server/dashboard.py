"""GET /diamond/api/dashboard (every site's whole queue with predicted starts) and
GET /diamond/api/sites/NAME/usage (a site's usage over time)."""

from __future__ import annotations

import getpass
import math

from jupyter_server.auth.decorator import authorized
from tornado.web import authenticated

from .base import ApiError, DiamondHandler, api


class DashboardHandler(DiamondHandler):
    @authenticated
    @authorized
    @api
    async def get(self) -> None:
        fed = await self.fed()
        max_age = self.int_arg("max_age", 15, hi=86400) or 0
        user = getattr(self.current_user, "username", None) or getpass.getuser()
        self.reply(await fed.dashboard(user=user, max_age_s=float(max_age)))


class UsageHandler(DiamondHandler):
    @authenticated
    @authorized
    @api
    async def get(self, name: str) -> None:
        fed = await self.fed_with_site(name)
        raw = self.get_query_argument("hours", "") or "6"
        try:  # digits 0-9 only: float() also reads '١' and '1_0'
            hours = float(raw) if raw.isascii() and "_" not in raw else math.nan
        except ValueError:
            hours = math.nan
        if not math.isfinite(hours):
            raise ApiError(400, "bad-input", f"hours must be a number of hours, not {raw!r}")
        self.reply(fed.usage(name, hours=hours))
