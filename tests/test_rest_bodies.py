"""REST bodies are read by the skills' input models: a bad one is a 400 whose message names
the field (through a real Jupyter server with the extension; a local site, no test bed)."""

from __future__ import annotations

import json
import re

import pytest
import sweep_helpers

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")


jp_server_config = sweep_helpers.one_local_site_server


CASES = [
    ("jobs", {"script": 42}, "script"),
    ("jobs", {"spec": "true"}, "spec"),
    ("jobs", {"script": "echo hi", "origin": "cell 3"}, "origin"),
    ("jobs", {}, "body"),
    ("place", {"script": "echo hi", "policy": 7}, "policy"),
    ("translate", {"script": "#SBATCH -N 1\necho\n"}, "to"),
    ("translate", {"script": "#SBATCH -N 1\necho\n", "to": "pbs", "from": ["slurm"]}, "from"),
    ("transfers", {"src": "here:a"}, "dst"),
    ("transfers", {"src": "here:a", "dst": "here:b", "recursive": "sometimes"}, "recursive"),
    ("tasks", {"prompt": "   "}, "prompt"),
    ("tasks", {"prompt": "hello", "approval": "always"}, "approval"),
]


async def test_a_bad_body_is_a_400_naming_the_field(api):
    for path, body, field in CASES:
        r = await api.call("POST", path, body, expect=400, validate=False)
        assert r.body["reason"] == "bad-input", (path, body, r.body)
        msg = r.body["message"]
        assert msg.split(":")[0] == field, (path, body, msg)
        assert "\n" not in msg, msg
    assert (await api.get("jobs"))["total"] == 0  # nothing was recorded


async def test_an_unknown_key_is_refused_not_ignored(api):
    r = await api.call("POST", "translate", {"script": "#SBATCH -N 2\necho\n", "to": "pbs",
                                             "colour": "blue"}, expect=400, validate=False)
    assert r.body["message"].startswith("unknown field 'colour' in the body (accepted: ")


def _post_routes(*, bodiless: bool = False) -> list[str]:
    """Every route that takes a POST with a body (`bodiless`: without one), its path
    arguments filled with a sample name."""
    from tornado.web import RequestHandler

    from diamond_jupyter.server.routes import routes

    return [re.sub(r"\(\?P<\w+>\[\^/\]\+\)", "x", path).removeprefix("/diamond/api/")
            for path, handler in routes() if handler.post is not RequestHandler.post
            and handler.takes_no_body == bodiless]


@pytest.fixture
def post_raw(http_server_client, jp_base_url, jp_auth_header):
    async def call(path: str, body: bytes, content_type: str | None):
        headers = dict(jp_auth_header) | ({"Content-Type": content_type} if content_type
                                          else {})
        return await http_server_client.fetch(
            jp_base_url.rstrip("/") + "/diamond/api/" + path, method="POST", body=body,
            headers=headers, raise_error=False)
    return call


# (a multipart form: test_adversarial_inputs14; Tornado refuses one it cannot parse itself)
@pytest.mark.parametrize("content_type", ["text/plain", "text/plain;charset=UTF-8",
                                          "application/xml"])
async def test_a_body_of_another_type_than_json_is_a_415_on_every_post_route(
        post_raw, api, content_type):
    """A JSON body labelled `text/plain` (a type any web page may send without asking) was
    read as JSON. Every POST route refuses a body of another type with 415, naming it and the
    type accepted; nothing is recorded."""
    posts = _post_routes()
    assert {"jobs", "place", "translate", "transfers", "tasks", "workflows",
            "jobs/x/fetch"} <= set(posts), posts
    body = b'{"script": "echo hi", "site": "here", "to": "pbs", "prompt": "hi"}'
    kind = content_type.split(";")[0]
    for path in posts:
        resp = await post_raw(path, body, content_type)
        assert resp.code == 415, (path, resp.code, resp.body)
        assert resp.headers["Content-Type"].split(";")[0] == "application/json"
        assert json.loads(resp.body) == {
            "reason": "unsupported-media-type",
            "message": f"the request body was sent as {kind}; this API reads JSON only: "
                       "send it with Content-Type: application/json"}, path
    for path in _post_routes(bodiless=True):  # (test_rest_bodiless): no body of any type
        resp = await post_raw(path, body, content_type)
        assert resp.code == 400 and b"takes no body" in resp.body, (path, resp.body)
    assert (await api.get("jobs"))["total"] == 0


@pytest.mark.parametrize("content_type", ["application/json", "application/json; charset=utf-8",
                                          "application/merge-patch+json", None,
                                          # curl -d and Tornado's client label JSON a form's
                                          "application/x-www-form-urlencoded"])
async def test_a_json_body_is_read_whatever_json_label_it_has(post_raw, content_type):
    """(guard) JSON, JSON under a `+json` type, an unlabelled body, and JSON labelled a form's
    (what `curl -d` sends) are read as before."""
    resp = await post_raw("translate", b'{"script": "#SBATCH -N 2\\necho\\n", "to": "pbs"}',
                          content_type)
    assert resp.code == 200 and b"#PBS" in resp.body, (resp.code, resp.body)


async def test_an_empty_body_of_any_type_is_no_body(post_raw):
    """(guard) A POST with nothing in it (a cancel from a form-less client) is not refused
    for its label: there is no body to misread."""
    resp = await post_raw("jobs/here%3A999/cancel", b"", "text/plain")
    assert resp.code == 404, (resp.code, resp.body)
