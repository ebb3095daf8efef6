"""Globus paths against the SDK's own test fixtures (`globus_sdk.testing`) plus registered
task-status responses: the submitted document, idempotent retries, events, cancel, tokens."""

from __future__ import annotations

import json
import os
import stat
import time

import globus_sdk
import pytest
import responses
from globus_sdk.testing import RegisteredResponse, get_last_request, load_response

from diamond_jupyter.config import FederationConfig, SiteConfig, TransportConfig
from diamond_jupyter.federation import Federation
from diamond_jupyter.store import Store
from diamond_jupyter.transfer.globus import map_path
from diamond_jupyter.transfer.globus_auth import GlobusAuth, token_path

SRC_COLL = "11111111-1111-1111-1111-111111111111"
DST_COLL = "22222222-2222-2222-2222-222222222222"
TASK = "00000000-0000-0000-0000-0000699934d5"  # the submit_transfer fixture's task id
SUB_ID = "00000000-0000-0000-34af-1252da510f05"  # the get_submission_id fixture's value
CLIENT = "33333333-3333-3333-3333-333333333333"


@pytest.fixture(autouse=True)
def mocked():
    responses.start()
    yield
    responses.stop()
    responses.reset()


@pytest.fixture
def tokens(data_dir, monkeypatch):
    monkeypatch.setenv("DIAMOND_GLOBUS_CLIENT_ID", CLIENT)
    monkeypatch.delenv("DIAMOND_GLOBUS_CLIENT_SECRET", raising=False)
    auth = GlobusAuth()
    auth._save_tokens("native", {"transfer.api.globus.org": {
        "access_token": "AT-old", "refresh_token": "RT-1", "scope": "transfer",
        "expires_at_seconds": int(time.time()) + 3600, "resource_server":
        "transfer.api.globus.org", "token_type": "Bearer"}})
    return auth


@pytest.fixture
async def fed(tmp_path, tokens):
    sites = [SiteConfig(name="hpc1", transport=TransportConfig(kind="local"),
                        globus_collection=SRC_COLL,
                        globus_path_map={"/home/u": "/~/", "/scratch": "/gpfs/scratch"}),
             SiteConfig(name="hpc2", transport=TransportConfig(kind="local"),
                        globus_collection=DST_COLL, globus_path_map={"/data/": "/"}),
             SiteConfig(name="plain", transport=TransportConfig(kind="local"))]
    f = Federation(FederationConfig(sites=sites), store=Store(tmp_path / "s.sqlite"))
    f.mover.globus_poll_s = 0.01
    f.mover.globus.retry_delay_s = 0
    yield f
    await f.close()


def task_doc(status: str, done: int, **kw) -> dict:
    return {"DATA_TYPE": "task", "task_id": TASK, "status": status, "type": "TRANSFER",
            "bytes_transferred": done, "files": 1, "files_transferred": int(status ==
            "SUCCEEDED"), "nice_status": kw.pop("nice_status", "OK"), **kw}


def register_task(*docs: dict, task: str = TASK) -> None:
    for doc in docs:  # responses serves same-URL registrations in order, repeating the last
        RegisteredResponse(service="transfer", path=f"/v0.10/task/{task}", json=doc).add()


def submits() -> list[dict]:
    return [json.loads(c.request.body) for c in responses.calls
            if c.request.method == "POST" and c.request.url.endswith("/v0.10/transfer")]


def test_path_mapping():
    cfg = SiteConfig(name="s", globus_collection=SRC_COLL,
                     globus_path_map={"/home/u": "/~/", "/scratch": "/gpfs/scratch"})
    assert map_path(cfg, "/home/u/in/x.dat") == "/~/in/x.dat"
    assert map_path(cfg, "/scratch/run1") == "/gpfs/scratch/run1"
    assert map_path(cfg, "/scratchy/a") == "/scratchy/a"  # a prefix is a whole component
    assert map_path(cfg, "~/a") == "/~/a" and map_path(cfg, "rel/a") == "/~/rel/a"


async def test_submit_document_progress_and_success(fed):
    load_response(globus_sdk.TransferClient.get_submission_id)
    load_response(globus_sdk.TransferClient.submit_transfer)
    register_task(task_doc("ACTIVE", 1000), task_doc("ACTIVE", 5000),
                  task_doc("SUCCEEDED", 8000))
    rec = await fed.transfer("hpc1:/home/u/in/x.dat", "hpc2:/data/run/x.dat")
    assert rec.kind == "globus" and rec.state == "SUCCEEDED" and rec.bytes == 8000
    assert rec.submission_id == SUB_ID and rec.data["task_id"] == TASK
    [doc] = submits()
    assert doc["source_endpoint"] == SRC_COLL and doc["destination_endpoint"] == DST_COLL
    assert doc["submission_id"] == SUB_ID and doc["verify_checksum"] is True
    item = doc["DATA"][0]
    assert (item["source_path"], item["destination_path"]) == ("/~/in/x.dat", "/run/x.dat")
    prog = [e.data["bytes_done"] for e in fed.store.events_since(0, kinds=["transfer.progress"])]
    assert prog == [1000, 5000, 8000]
    states = [e.data["state"] for e in fed.store.events_since(0, kinds=["transfer.state"])]
    assert states == ["ACTIVE", "SUCCEEDED"]
    assert get_last_request().headers["Authorization"] == "Bearer AT-old"
    blob = json.dumps([e.data for e in fed.store.events_since(0)] + [rec.data])
    assert "AT-old" not in blob and "RT-1" not in blob


async def test_retry_reuses_the_stored_submission_id(fed):
    load_response(globus_sdk.TransferClient.get_submission_id)
    RegisteredResponse(service="transfer", path="/v0.10/transfer", method="POST", status=503,
                       json={"code": "ServiceUnavailable", "message": "try later"}).add()
    load_response(globus_sdk.TransferClient.submit_transfer)
    register_task(task_doc("SUCCEEDED", 10))
    rec = await fed.transfer("hpc1:/scratch/a", "hpc2:/data/a", via="globus")
    assert rec.state == "SUCCEEDED"
    bodies = submits()
    assert len(bodies) == 2 and {b["submission_id"] for b in bodies} == {SUB_ID}
    ids = [c for c in responses.calls if c.request.url.endswith("/submission_id")]
    assert len(ids) == 1  # asked once, stored before the first submit


async def test_restart_resubmits_with_the_stored_id(fed):
    load_response(globus_sdk.TransferClient.get_submission_id)
    mgr = fed.mover
    s, d = "hpc1:/scratch/b", "hpc2:/data/b"
    from diamond_jupyter.transfer import parse_location

    rec = await mgr._globus_record(parse_location(s, fed.sites), parse_location(d, fed.sites),
                                   False, None, {"job_id": None})  # crash right after this
    assert fed.store.transfer_by_submission_id(SUB_ID).id == rec.id
    load_response(globus_sdk.TransferClient.submit_transfer)
    register_task(task_doc("SUCCEEDED", 3))
    assert await mgr.resume_pending() == [rec.id]
    done = await mgr.wait(rec.id)
    assert done.state == "SUCCEEDED" and submits()[0]["submission_id"] == SUB_ID


async def test_failed_task_fails_the_record(fed):
    load_response(globus_sdk.TransferClient.get_submission_id)
    load_response(globus_sdk.TransferClient.submit_transfer)
    register_task(task_doc("ACTIVE", 0), task_doc(
        "FAILED", 0, nice_status="PERMISSION_DENIED",
        fatal_error={"code": "PERMISSION_DENIED", "description": "permission denied on /run"}))
    rec = await fed.transfer("hpc1:/scratch/c", "hpc2:/data/run/c")
    assert rec.state == "FAILED" and rec.error == "permission denied on /run"


async def test_cancel(fed):
    cancel = load_response(globus_sdk.TransferClient.cancel_task)
    tid = cancel.metadata["task_id"]
    load_response(globus_sdk.TransferClient.get_submission_id)
    RegisteredResponse(service="transfer", path="/v0.10/transfer", method="POST", json={
        "DATA_TYPE": "transfer_result", "code": "Accepted", "task_id": tid,
        "submission_id": SUB_ID}).add()
    register_task(task_doc("ACTIVE", 1, task_id=tid), task=tid)
    rec = await fed.transfer("hpc1:/scratch/d", "hpc2:/data/d", wait=False)
    async for ev in fed.events(since=0):  # the follower saw the task: it was submitted
        if ev.kind == "transfer.progress":
            break
    assert fed.transfer_status(rec.id).data["task_id"] == tid
    done = await fed.cancel_transfer(rec.id)
    assert done.state == "CANCELLED"
    assert any(c.request.url.endswith(f"/task/{tid}/cancel") for c in responses.calls)


async def test_a_cancel_that_reaches_globus_after_the_task_succeeded_is_refused(
        fed, monkeypatch):
    """The task ends SUCCEEDED at Globus just before the user's cancel reaches it. Before,
    the cancel stopped the follower and recorded CANCELLED over data that had arrived; now
    it is refused (BadInput saying so) and the record follows Globus: SUCCEEDED."""
    from diamond_jupyter.model import BadInput

    load_response(globus_sdk.TransferClient.get_submission_id)
    load_response(globus_sdk.TransferClient.submit_transfer)
    ended: list[str] = []
    mover = fed.mover.globus

    def task(tid):
        return task_doc("SUCCEEDED", 3) if ended else task_doc("ACTIVE", 1)

    def cancel(tid):
        ended.append(tid)  # it ended as the cancel went out
        return "TaskComplete"
    monkeypatch.setattr(mover, "task", task)
    monkeypatch.setattr(mover, "cancel", cancel)
    rec = await fed.transfer("hpc1:/scratch/e", "hpc2:/data/e", wait=False)
    async for ev in fed.events(since=0):  # the follower saw the task
        if ev.kind == "transfer.progress":
            break
    with pytest.raises(BadInput, match="not cancelled: its Globus task .* had already ended "
                                       "SUCCEEDED"):
        await fed.cancel_transfer(rec.id)
    done = await fed.mover.wait(rec.id)
    assert done.state == "SUCCEEDED" and ended == [TASK]
    assert "cancel_requested" not in done.data


async def test_a_cancel_while_the_globus_submit_is_under_way_cancels_the_new_task(
        fed, monkeypatch):
    """The cancel comes before the task's id is known: it is accepted (CANCELLED), and the
    engine submitting tells Globus to cancel the task it gets; nothing is followed."""
    import threading

    load_response(globus_sdk.TransferClient.get_submission_id)
    mover = fed.mover.globus
    submitting, go, cancelled = threading.Event(), threading.Event(), []

    def submit(doc, sub_id, label):
        submitting.set()
        go.wait(30)
        return TASK
    monkeypatch.setattr(mover, "submit", submit)
    monkeypatch.setattr(mover, "cancel", lambda tid: cancelled.append(tid) or "Canceled")
    monkeypatch.setattr(mover, "task", lambda tid: pytest.fail("followed a cancelled task"))
    rec = await fed.transfer("hpc1:/scratch/f", "hpc2:/data/f", wait=False)
    import asyncio

    assert await asyncio.to_thread(submitting.wait, 30)
    got = await fed.cancel_transfer(rec.id)
    assert got.state == "CANCELLED"
    go.set()
    done = await fed.mover.wait(rec.id)
    assert done.state == "CANCELLED" and done.data["task_id"] == TASK
    assert cancelled == [TASK]


def test_sftp_is_the_default_without_collections_or_login(fed, tokens):
    from diamond_jupyter.transfer import parse_location

    loc = parse_location
    assert fed.mover.choose(loc("hpc1:/a", fed.sites), loc("plain:/b", fed.sites), None) \
        == "sftp"
    assert fed.mover.choose(loc("hpc1:/a", fed.sites), loc("hpc2:/b", fed.sites), None) \
        == "globus"
    tokens.logout()
    assert fed.mover.choose(loc("hpc1:/a", fed.sites), loc("hpc2:/b", fed.sites), None) \
        == "sftp"
    with pytest.raises(Exception, match="globus_collection"):
        fed.mover.choose(loc("hpc1:/a", fed.sites), loc("plain:/b", fed.sites), "globus")


# -- tokens ---------------------------------------------------------------------------------

def mode(p) -> int:
    return stat.S_IMODE(os.stat(p).st_mode)


def token_response(access: str, refresh: str = "RT-2") -> dict:
    return {"access_token": access, "refresh_token": refresh, "expires_in": 172800,
            "resource_server": "transfer.api.globus.org", "scope": "transfer",
            "token_type": "Bearer", "other_tokens": []}


def test_token_file_is_private(tokens):
    assert token_path() == tokens.path and mode(tokens.path) == 0o600
    assert tokens.status()["logged_in"] and "AT-old" not in json.dumps(tokens.status())


def test_expired_token_is_refreshed_and_saved(tokens):
    data = json.loads(tokens.path.read_text())
    data["by_resource"]["transfer.api.globus.org"]["expires_at_seconds"] = 1
    tokens.path.write_text(json.dumps(data))
    RegisteredResponse(service="auth", path="/v2/oauth2/token", method="POST",
                       json=token_response("AT-new")).add()
    load_response(globus_sdk.TransferClient.get_submission_id)
    tc = tokens.transfer_client()
    assert tc.get_submission_id()["value"] == SUB_ID
    assert get_last_request().headers["Authorization"] == "Bearer AT-new"
    refresh = [c for c in responses.calls if "/oauth2/token" in c.request.url][0]
    assert "grant_type=refresh_token" in refresh.request.body and "RT-1" in refresh.request.body
    saved = json.loads(tokens.path.read_text())["by_resource"]["transfer.api.globus.org"]
    assert saved["access_token"] == "AT-new" and mode(tokens.path) == 0o600


def test_native_login_url_then_code(tokens):
    tokens.logout()
    url = tokens.start_login()
    assert url.startswith("https://auth.globus.org/v2/oauth2/authorize")
    assert f"client_id={CLIENT}" in url and "code_challenge=" in url
    assert "access_type=offline" in url and mode(tokens.path) == 0o600
    RegisteredResponse(service="auth", path="/v2/oauth2/token", method="POST",
                       json=token_response("AT-login")).add()
    # a second object (another process) finishes with the stored verifier
    st = GlobusAuth().finish_login("the-code")
    assert st["logged_in"] and "pending" not in json.loads(tokens.path.read_text())
    body = [c for c in responses.calls if "/oauth2/token" in c.request.url][0].request.body
    assert "code=the-code" in body and "code_verifier=" in body
    assert mode(tokens.path) == 0o600


def test_client_credentials(tokens, monkeypatch):
    monkeypatch.setenv("DIAMOND_GLOBUS_CLIENT_SECRET", "s3cret")
    RegisteredResponse(service="auth", path="/v2/oauth2/token", method="POST",
                       json=token_response("AT-cc")).add()
    load_response(globus_sdk.TransferClient.get_submission_id)
    auth = GlobusAuth(path=tokens.path.with_name("cc.json"))
    auth.transfer_client().get_submission_id()
    assert get_last_request().headers["Authorization"] == "Bearer AT-cc"
    body = [c for c in responses.calls if "/oauth2/token" in c.request.url][0].request.body
    assert "grant_type=client_credentials" in body
    assert "s3cret" not in auth.path.read_text() and mode(auth.path) == 0o600


# -- lost contact with Globus, engine restarts -------------------------------------------------

def unreachable_then(*docs: dict, failures: int = 2) -> None:
    """GET task: a reset connection, then 503s, then `docs` (the same URL, in order)."""
    import requests

    url = f"https://transfer.api.globus.org/v0.10/task/{TASK}"
    responses.add(responses.GET, url, body=requests.ConnectionError("connection reset"))
    for _ in range(failures - 1):
        RegisteredResponse(service="transfer", path=f"/v0.10/task/{TASK}", status=503,
                           json={"code": "ServiceUnavailable", "message": "down"}).add()
    register_task(*docs)


async def test_lost_contact_with_globus_is_retried(fed):
    fed.config.transfers.backoff_s = 0
    load_response(globus_sdk.TransferClient.get_submission_id)
    load_response(globus_sdk.TransferClient.submit_transfer)
    unreachable_then(task_doc("ACTIVE", 10), task_doc("SUCCEEDED", 20), failures=3)
    rec = await fed.transfer("hpc1:/scratch/r", "hpc2:/data/r")
    assert rec.state == "SUCCEEDED" and rec.bytes == 20
    retries = [e.data for e in fed.store.events_since(0, kinds=["transfer.retry"])]
    assert [r["attempt"] for r in retries] == [2, 3, 4]
    assert "network error" in retries[0]["error"] and "503" in retries[1]["error"]
    assert len(submits()) == 1  # the task went on at Globus: followed, not resubmitted


async def test_globus_unreachable_until_the_tries_are_spent(fed):
    fed.config.transfers.attempts, fed.config.transfers.backoff_s = 3, 0
    load_response(globus_sdk.TransferClient.get_submission_id)
    load_response(globus_sdk.TransferClient.submit_transfer)
    unreachable_then(failures=3)
    rec = await fed.transfer("hpc1:/scratch/u", "hpc2:/data/u")
    assert rec.state == "FAILED"
    assert rec.error.startswith(f"lost contact with Globus about task {TASK}: gave up after 3 "
                                "attempts; last error: "), rec.error
    assert "503" in rec.error


async def test_engine_restart_follows_the_same_globus_task(fed, tmp_path):
    load_response(globus_sdk.TransferClient.get_submission_id)
    load_response(globus_sdk.TransferClient.submit_transfer)
    register_task(task_doc("ACTIVE", 100))
    rec = await fed.transfer("hpc1:/scratch/e", "hpc2:/data/e", wait=False)
    async for ev in fed.events(since=0):
        if ev.kind == "transfer.progress":
            break
    await fed.close()  # the engine stops; Globus goes on
    assert fed.store.get_transfer(rec.id).state == "ACTIVE"
    responses.reset()
    register_task(task_doc("ACTIVE", 500), task_doc("SUCCEEDED", 900))
    fed2 = Federation(fed.config, store=Store(fed.store.path))
    fed2.mover.globus_poll_s = 0.01
    try:
        await fed2.start()  # resumes following the stored task id
        done = await fed2.mover.wait(rec.id)
        assert done.state == "SUCCEEDED" and done.bytes == 900
        assert done.data["task_id"] == TASK and submits() == []  # not submitted again
        states = [e.data["state"] for e in fed2.store.events_since(0, kinds=["transfer.state"])]
        assert states == ["ACTIVE", "SUCCEEDED"]
    finally:
        await fed2.close()
