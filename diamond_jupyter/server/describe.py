"""GET /diamond/api/sites/NAME/describe: what discovery found on a site."""

from __future__ import annotations

from jupyter_server.auth.decorator import authorized
from tornado.web import authenticated

from .base import DiamondHandler, api


class DescribeHandler(DiamondHandler):
    @authenticated
    @authorized
    @api
    async def get(self, name: str) -> None:
        fed = await self.fed_with_site(name)
        refresh = self.get_query_argument("refresh", "0") in ("1", "true", "yes")
        d = await fed.describe(name, refresh=refresh)
        self.reply(d.model_dump(mode="json"))
