"""Every route the extension registers refuses requests without credentials, and the
`diamond` resource is checked by the server's Authorizer (JupyterHub RBAC)."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import quote

import pytest
from jupyter_server.auth.authorizer import Authorizer
from server_conftest import diamond_config

from diamond_jupyter.server.routes import routes

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")
pytestmark = pytest.mark.testbed

SAMPLE = {"name": "alpha", "job_id": "alpha:100000", "workflow_id": "wf-0000",
          "prompt_id": "1-0123456789ab", "transfer_id": "0123456789abcdef"}


def diamond_rules(router: Any) -> list[Any]:
    """Every (nested) tornado rule whose path pattern contains /diamond/."""
    found = []
    for rule in getattr(router, "rules", []):
        if hasattr(rule.target, "rules"):
            found += diamond_rules(rule.target)
        elif "/diamond/" in getattr(rule.matcher, "regex", re.compile("")).pattern:
            found.append(rule)
    return found


def concrete(rule: Any) -> str:
    """A request path for a rule: each named group filled with a sample value."""
    pattern = rule.matcher.regex.pattern.rstrip("$")  # (tornado's reverse() trips on %40)
    return re.sub(r"\(\?P<(\w+)>[^)]*\)", lambda m: quote(SAMPLE[m[1]], safe=""), pattern)


@pytest.fixture
def diamond_paths(jp_serverapp) -> list[str]:
    app = jp_serverapp.web_app
    rules = diamond_rules(app.default_router) + diamond_rules(app.wildcard_router)
    paths = sorted({concrete(r) for r in rules})
    assert len(paths) == len(routes()), paths  # every route we declare is registered
    return paths


async def test_every_route_refuses_requests_without_a_token(diamond_paths, http_server_client):
    for path in diamond_paths:
        for method in ("GET", "POST"):
            resp = await http_server_client.fetch(
                path, method=method, body=b"{}" if method == "POST" else None,
                raise_error=False)
            assert resp.code == 403, f"{method} {path} answered {resp.code} without a token"
            assert json.loads(resp.body)["reason"], (method, path)


async def test_a_wrong_token_is_refused_too(diamond_paths, http_server_client):
    for path in diamond_paths:
        resp = await http_server_client.fetch(path, headers={"Authorization": "token nope"},
                                              raise_error=False)
        assert resp.code == 403, (path, resp.code)


async def test_the_token_opens_the_state(api):
    assert (await api.get("state"))["error"] is None


class DenyDiamond(Authorizer):
    """A JupyterHub-like authorizer that grants everything except the diamond resource."""

    seen: list[tuple[str, str]] = []

    def is_authorized(self, handler, user, action, resource) -> bool:  # noqa: ARG002
        self.seen.append((action, resource))
        return resource != "diamond"


class TestRBAC:
    @pytest.fixture
    def jp_server_config(self, tb, tmp_path, data_dir):
        cfg = diamond_config(str(tb.config_path), str(tmp_path / "store.sqlite3"))
        cfg["ServerApp"]["authorizer_class"] = DenyDiamond
        return cfg

    async def test_routes_are_authorized_on_the_diamond_resource(
            self, diamond_paths, http_server_client, jp_auth_header):
        DenyDiamond.seen.clear()
        for path in diamond_paths:
            for method in ("GET", "POST"):
                resp = await http_server_client.fetch(
                    path, method=method, headers=jp_auth_header,
                    body=b"{}" if method == "POST" else None, raise_error=False)
                if resp.code == 405:  # the route has no such method (after authentication)
                    continue
                assert resp.code == 403, (method, path, resp.code)
        assert ("read", "diamond") in DenyDiamond.seen
        assert ("write", "diamond") in DenyDiamond.seen
