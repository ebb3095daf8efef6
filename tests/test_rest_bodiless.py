"""The REST routes whose POST reads only its path (a job's cancel and release, a transfer's
and a workflow's cancel, a site's login): a body sent to one was passed over without a word
while the routes that read one refuse a field they do not know. Now no body, `{}` or
whitespace is taken (whatever its Content-Type, or none); any other body is a 400 naming
the route and what was sent, and nothing is cancelled, released or logged in to.

Tests marked `fault` failed before."""

from __future__ import annotations

import json

import pytest
import sweep_helpers

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")
jp_server_config = sweep_helpers.one_local_site_server
rest = sweep_helpers.rest_caller

SCRIPT = "#!/bin/bash\n#SBATCH -n 1\necho hi\n"
JSON = {"Content-Type": "application/json"}


def _calls(tmp_path, prog: str) -> list[str]:
    calls = tmp_path / "here-slurm" / "calls"
    return [c for c in calls.read_text().splitlines() if c.startswith(prog)] \
        if calls.exists() else []


async def _submitted(rest, **fields) -> dict:
    code, job = await rest("POST", "jobs", json.dumps({"script": SCRIPT, "site": "here",
                                                       **fields}).encode(), headers=JSON)
    assert code == 201, job
    return job


def _refused(code: int, reply, route: str, sent: str) -> None:
    assert code == 400 and reply["reason"] == "bad-input", (code, reply)
    assert reply["message"].startswith(f"{route} takes no body, and was sent {sent!r}"), reply
    assert reply["message"].endswith("nothing was done: send no body (or {})"), reply


@pytest.mark.parametrize("body,headers,sent", [
    (b'{"force": true}', JSON, '{"force": true}'),
    (b'{"signal": "KILL"}', {}, '{"signal": "KILL"}'),
    (b"please", {"Content-Type": "text/plain"}, "please"),
    (b"[]", JSON, "[]"),
    (b"null", JSON, "null"),
])
async def test_fault_a_body_sent_to_cancel_is_refused_and_the_job_is_not_cancelled(
        rest, tmp_path, body, headers, sent):
    job = await _submitted(rest)
    code, reply = await rest("POST", f"jobs/{job['id']}/cancel", body, headers=headers)
    _refused(code, reply, f"POST jobs/{job['id']}/cancel", sent)
    assert _calls(tmp_path, "scancel") == []
    assert (await rest("GET", f"jobs/{job['id']}"))[1]["state"] != "CANCELLED"


@pytest.mark.parametrize("body,headers", [
    (None, {}), (b"", JSON), (b"{}", JSON), (b"{}", {}), (b"{ }\n", JSON),
    (b"\xef\xbb\xbf{}", {"Content-Type": "text/plain"}),
])
async def test_no_body_or_an_empty_object_cancels(rest, tmp_path, body, headers):
    job = await _submitted(rest)
    code, reply = await rest("POST", f"jobs/{job['id']}/cancel", body, headers=headers)
    assert code == 200 and reply["id"] == job["id"], (code, reply)
    assert _calls(tmp_path, "scancel") == ["scancel 4242"]


async def test_fault_a_body_sent_to_release_is_refused_and_the_job_stays_held(rest, tmp_path):
    job = await _submitted(rest, hold=True)
    code, reply = await rest("POST", f"jobs/{job['id']}/release", b'{"after": "10:00"}',
                             headers=JSON)
    _refused(code, reply, f"POST jobs/{job['id']}/release", '{"after": "10:00"}')
    assert not any("release" in c for c in _calls(tmp_path, "scontrol"))
    code, reply = await rest("POST", f"jobs/{job['id']}/release", b"{}", headers=JSON)
    assert code == 200, reply
    assert any("release" in c for c in _calls(tmp_path, "scontrol"))


async def test_fault_a_body_sent_to_a_workflow_cancel_is_refused_and_it_runs_on(rest, tmp_path):
    wf = {"name": "w", "steps": [{"name": "a", "site": "here", "script": SCRIPT}]}
    code, view = await rest("POST", "workflows", json.dumps({"workflow": wf}).encode(),
                            headers=JSON)
    assert code == 201, view
    code, reply = await rest("POST", f"workflows/{view['id']}/cancel", b'{"steps": ["a"]}',
                             headers=JSON)
    _refused(code, reply, f"POST workflows/{view['id']}/cancel", '{"steps": ["a"]}')
    assert (await rest("GET", f"workflows/{view['id']}"))[1]["state"] != "CANCELLED"
    code, reply = await rest("POST", f"workflows/{view['id']}/cancel")
    assert code == 200 and reply["state"] == "CANCELLED", reply


async def test_fault_a_body_sent_to_a_transfer_cancel_is_refused_before_its_lookup(rest):
    """(Before: 404 for the unknown transfer; the body was never looked at.)"""
    code, reply = await rest("POST", "transfers/t-none/cancel", b'{"reason": "slow"}',
                             headers=JSON)
    _refused(code, reply, "POST transfers/t-none/cancel", '{"reason": "slow"}')
    code, reply = await rest("POST", "transfers/t-none/cancel", b"{}", headers=JSON)
    assert code == 404, reply


async def test_fault_a_body_sent_to_a_site_login_is_refused(rest):
    code, reply = await rest("POST", "sites/here/login", b'{"code": "123456"}', headers=JSON)
    _refused(code, reply, "POST sites/here/login", '{"code": "123456"}')
    code, reply = await rest("POST", "sites/here/login", headers=JSON, body=b"")
    assert code == 200 and reply["site"] == "here", reply


async def test_a_long_body_is_named_by_its_start_and_size(rest):
    job = await _submitted(rest)
    body = json.dumps({"note": "x" * 5000}).encode()
    code, reply = await rest("POST", f"jobs/{job['id']}/cancel", body, headers=JSON)
    assert code == 400 and f"({len(body)} bytes)" in reply["message"], reply
    assert len(reply["message"]) < 300
