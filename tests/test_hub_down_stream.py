"""A real JupyterHub (no test bed) that goes away while a user's event stream is open: the
hub is stopped and its proxy and the user's server left running, as an admin restarting
the hub leaves them. The stream rides out a short outage, is closed with a reason once the
hub has not answered for `HUB_DOWN_BOUNDS` token-check bounds, and opens again once the
hub is back. (Before, it stayed open, asked again each second, for as long as the hub was
down.) The hub and its one local site: `hub_helpers.RealHub`."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import pytest
from hub_helpers import RealHub, submit
from test_hub_unseen3 import access_token, closed_within, frame_naming, in_thread, open_stream

from diamond_jupyter.server.hub_stream import HUB_DOWN_BOUNDS, RECHECK_S, hub_down_reason

BOUND_S = 1  # alice's DiamondApp.hub_token_check_s here: a grace of HUB_DOWN_BOUNDS s
GRACE_S = HUB_DOWN_BOUNDS * BOUND_S
KEEP_RUNNING = "c.JupyterHub.cleanup_servers = False\nc.JupyterHub.cleanup_proxy = False\n"


class Hub(RealHub):
    users = ("alice",)

    def config(self, sites: Any) -> str:  # its stop leaves its proxy and servers running
        return super().config(sites) + KEEP_RUNNING

    def per_user(self) -> dict[str, dict[str, Any]]:
        return {"alice": {"args": [f"--DiamondApp.hub_token_check_s={BOUND_S}"]}}

    def back(self) -> None:
        """The hub started again on the same ports (its servers ask it there), its stop now
        ending its proxy and servers too."""
        written = (self.base / "jupyterhub_config.py").read_text()
        self.launch(written.replace(KEEP_RUNNING, ""))


@pytest.fixture(scope="module")
def hub(tmp_path_factory) -> Iterator[Hub]:
    with Hub(tmp_path_factory.mktemp("hubdown")).serving(["alice"]) as h:
        try:
            yield h
        finally:
            if h.proc is not None and h.proc.poll() is not None:  # left stopped by a test
                h.back()


def test_a_stream_is_closed_with_a_reason_once_the_hub_is_gone_past_the_grace(hub):
    token, _ = access_token(hub, "alice")
    path = hub.server_path("alice")

    async def scenario() -> None:
        conn = await open_stream(hub, path, token)
        job = await in_thread(submit, hub, "alice", name="beforedown")
        await frame_naming(conn, job["id"], 60)
        stopping = time.monotonic()  # the hub stops answering before its process ends
        await in_thread(hub.stop)
        assert hub.proc is not None and hub.proc.poll() is not None
        # the cached answer's bound, the grace, one recheck and a loaded machine's delay
        await closed_within(conn, BOUND_S + GRACE_S + RECHECK_S + 30)
        took = time.monotonic() - stopping
        assert (conn.close_code, conn.close_reason) == (1013, hub_down_reason(GRACE_S)), \
            (conn.close_code, conn.close_reason, took)
        assert took >= GRACE_S - RECHECK_S, f"closed {took:.1f} s after the hub's stop began"
        # the hub back: the same token opens a stream that delivers
        await in_thread(hub.back)
        again = await open_stream(hub, path, token)
        later = await in_thread(submit, hub, "alice", name="afterdown")
        await frame_naming(again, later["id"], 60)
        assert again.close_code is None
        again.close()
    asyncio.run(scenario())
