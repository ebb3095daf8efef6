"""What the no-test-bed browser tests' `Wire` classes share: the page's diamond requests
routed to the test, its event sockets to `/api/events/subscribe` served by it, emissions
numbered after the records' last seq and sent to the sockets still open."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlsplit

from playwright.sync_api import Page, Route

EVENTS = "https://diamond-jupyter.org/events/"


def healthy_site(name: str) -> dict:
    """GET state's record of a reachable Slurm site named `name`, a few of its nodes free."""
    return {"name": name, "scheduler": "slurm", "reachable": True, "error": None,
            "queue_error": None, "nodes_total": 16, "nodes_free": 4, "cpus_total": 512,
            "cpus_free": 128, "gpus_total": 0, "gpus_free": 0, "pending": 3, "running": 5,
            "my_jobs": 1, "typical_start_s": 60,
            "partitions": [{"name": "batch", "default": True, "max_time_s": 86400,
                            "total_nodes": 16}], "metadata": {}}


class WireBase:
    """Subclasses answer `_answer(route)`; `first_seq` is the store's last seq before any
    emission of the test."""

    first_seq = 0

    def __init__(self, page: Page, *, serve_sockets: bool = True) -> None:
        self.page = page
        self.sockets: list = []
        self.emitted: list[dict] = []
        page.route("**/diamond/api/**", self._answer)
        if serve_sockets:
            page.route_web_socket("**/api/events/subscribe*", self._serve_socket)

    def _serve_socket(self, ws) -> None:
        self.sockets.append(ws)

    def _answer(self, route: Route) -> None:
        raise NotImplementedError

    @staticmethod
    def request_of(route: Route) -> tuple[str, dict[str, str]]:
        """The path after /diamond/api/ (still URL-encoded) and the query's first values."""
        url = urlsplit(route.request.url)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        return url.path.split("/diamond/api/", 1)[1], query

    def answer_idle(self, route: Route, path: str) -> None:
        """GET logins and GET workflows answered with none of either (a prompt's dialog
        would cover the sidebar); any other request passed on to the real server."""
        idle = {"logins": {"prompts": []}, "workflows": {"workflows": []}}
        if path in idle:
            self.fulfill_json(route, idle[path])
        else:
            route.continue_()

    @staticmethod
    def fulfill_json(route: Route, body: object, status: int = 200) -> None:
        route.fulfill(status=status, content_type="application/json", body=json.dumps(body))

    @property
    def last_seq(self) -> int:
        return self.emitted[-1]["seq"] if self.emitted else self.first_seq

    def open_sockets(self) -> list:
        return [ws for ws in self.sockets if not getattr(ws, "diamond_closed", False)]

    def send(self, schema: str, payload: dict, *, live: bool = True) -> dict:
        """Store an emission of `schema` (its seq the next one) and, if `live`, send it."""
        emission = {"schema_id": EVENTS + schema, "seq": self.last_seq + 1, **payload}
        self.emitted.append(emission)
        if live:
            text = json.dumps(emission)
            for ws in self.open_sockets():
                ws.send(text)
        return emission

    def replay_body(self, since: int) -> dict:
        """GET events' answer: what was stored after `since`."""
        return {"emissions": [e for e in self.emitted if e["seq"] > since],
                "last_seq": self.last_seq, "more": False}

    def drop(self) -> None:
        """Close every open socket, as a server going away does."""
        for ws in self.open_sockets():
            ws.diamond_closed = True
            ws.close()
