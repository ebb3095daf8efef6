"""How long a single-user server trusts the hub's answer for a token: JupyterHub's own
`HubOAuth` (its cache, as the hub's identity provider holds it) bounded by
`DiamondApp.hub_token_check_s`. The end to end check, a revoked token refused by diamond's
routes under a real hub, is in test_hub_unseen2.py."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest
from jupyter_server.auth.identity import IdentityProvider
from jupyterhub.services.auth import HubOAuth

from diamond_jupyter.server.admin import check_settings
from diamond_jupyter.server.app import DiamondApp, bound_hub_token_cache
from diamond_jupyter.server.hub_stream import (
    HubCheckedSubscribeWebsocket,
    hub_checked_stream_route,
)


def hub_identity(cache_max_age: int) -> SimpleNamespace:
    """What jupyterhub.singleuser's identity provider holds: a HubOAuth as `hub_auth`."""
    return SimpleNamespace(hub_auth=HubOAuth(api_token="t0k", cache_max_age=cache_max_age))


@pytest.mark.parametrize("hub_default,bound,expected", [
    (300, 5, 5),  # JupyterHub's five minutes, lowered
    (0, 5, 5),  # 0 is "forever" to JupyterHub
    (2, 5, 2),  # the admin's shorter cache is kept
    (300, 30, 30),
])
def test_the_cache_of_the_hubs_answers_is_bounded(hub_default, bound, expected):
    ident = hub_identity(hub_default)
    assert bound_hub_token_cache(ident, bound) == expected
    assert ident.hub_auth.cache_max_age == expected
    assert ident.hub_auth.cache.max_age == expected


def test_a_cached_answer_expires_within_the_bound():
    ident = hub_identity(300)
    ident.hub_auth.cache["token:abc"] = {"name": "bob"}  # made before the bound: remade
    bound_hub_token_cache(ident, 1)
    cache = ident.hub_auth.cache
    cache["token:abc"] = {"name": "bob"}
    assert cache.get("token:abc") == {"name": "bob"}
    deadline = time.monotonic() + 10
    while cache.get("token:abc") is not None:
        assert time.monotonic() < deadline, "the hub's answer was still trusted after 10 s"
        time.sleep(0.05)


def test_a_server_outside_jupyterhub_has_no_cache_to_bound():
    assert bound_hub_token_cache(IdentityProvider(), 5) is None


@pytest.mark.parametrize("value,accepted", [
    (0, "should not be less than 1"),
    (301, "should not be greater than 300"),
    ("soon", "expected an int"),
])
def test_an_out_of_range_bound_is_refused_naming_the_setting_and_where(value, accepted):
    argv = [f"--DiamondApp.hub_token_check_s={value}"]
    values, refused = check_settings(DiamondApp(), {"hub_token_check_s": value}, argv, [])
    assert values == {}
    why = refused["hub_token_check_s"]
    assert why.startswith(f"DiamondApp.hub_token_check_s = {value!r} in "), why
    assert "command line" in why and accepted in why, why


def test_the_event_stream_is_rechecked_only_under_jupyterhub():
    """Under the hub the server's /api/events/subscribe is replaced by one that asks the
    hub's cached answer again while open (end to end: test_hub_unseen3.py); elsewhere
    jupyter_server's own stream is left as it is."""
    assert hub_checked_stream_route(IdentityProvider()) == []
    assert hub_checked_stream_route(hub_identity(300)) == [
        (r"/api/events/subscribe", HubCheckedSubscribeWebsocket)]
