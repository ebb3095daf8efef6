"""Every POST the sidebar's buttons send is labelled JSON, in a real JupyterLab and chromium,
without the test bed: the server refuses a body labelled another type (415), and `fetch`
labels a string body text/plain unless told.

What the sidebar shows (a site asking for a one-time code, a running and a finished job, two
plans waiting for approval, a pending login prompt) is answered at the wire level (the
routes' shapes), because no site here can be in those states without the test bed. The POSTs
themselves go on to the real server, which has no sites file: it checks the body's type
before anything else, then answers that it is not configured (or not found), never 415."""

from __future__ import annotations

import json
from collections.abc import Callable
from urllib.parse import unquote

import pytest
from conftest import load_lab, start_lab, stop_lab
from playwright.sync_api import expect
from test_sidebar import open_sidebar

SITE = "alpha"
NOW = "2026-01-01T12:00:00+00:00"
PROMPT_ID = "p-1"


def _site() -> dict:
    return {"name": SITE, "scheduler": "slurm", "reachable": False,
            "error": f"{SITE} asks for a one-time code: log in",
            "queue_error": None, "nodes_total": None, "nodes_free": None, "cpus_total": None,
            "cpus_free": None, "gpus_total": None, "gpus_free": None, "pending": None,
            "running": None, "my_jobs": None, "typical_start_s": None, "partitions": [],
            "metadata": {}}


def _job(native: str, name: str, state: str) -> dict:
    done = state == "COMPLETED"
    return {"id": f"{SITE}:{native}", "site": SITE, "native_id": native, "name": name,
            "state": state, "submitted_at": NOW, "started_at": NOW,
            "ended_at": NOW if done else None, "exit_code": 0 if done else None,
            "reason": None, "placement": None, "origin": None}


def _task(task_id: str) -> dict:
    return {"id": task_id, "state": "awaiting_approval", "prompt": f"run {task_id}",
            "data": {"pending": {"tool": "submit", "plan": "submit `echo hi` to alpha",
                                 "input": {"script": "echo hi", "site": SITE}}},
            "waiting_on": [], "created_at": NOW, "updated_at": NOW}


STATE = {"sites": [_site()],
         "jobs": [_job("101", "long-run", "RUNNING"), _job("100", "finished", "COMPLETED")],
         "jobs_total": 2, "tasks": [_task("t-approve"), _task("t-reject")], "transfers": [],
         "events": [], "last_seq": 7, "error": None}
PROMPTS = {"prompts": [{"id": PROMPT_ID, "site": SITE, "title": "", "instructions": "",
                        "prompts": [{"text": "Verification code:", "echo": False}]}]}


def _answer_gets(page) -> None:
    """The sidebar's GETs from the records above; every other request reaches the server."""
    answers = {"state": STATE, "logins": PROMPTS, "workflows": {"workflows": []},
               "events": {"emissions": [], "last_seq": 7, "more": False}}

    def handle(route) -> None:
        path = route.request.url.split("/diamond/api/", 1)[1].split("?", 1)[0]
        if route.request.method == "GET" and path in answers:
            route.fulfill(status=200, content_type="application/json",
                          body=json.dumps(answers[path]))
        else:
            route.continue_()

    page.route("**/diamond/api/**", handle)


@pytest.fixture(scope="module")
def bare_lab(tmp_path_factory):
    """`jupyter lab` with the extension and no sites file."""
    proc, info = start_lab(tmp_path_factory.mktemp("post-types"), diamond_config=None)
    try:
        yield info
    finally:
        stop_lab(proc)


@pytest.fixture()
def page(bare_lab, browser):
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    p = context.new_page()
    errors: list[str] = []
    p.on("pageerror", lambda err: errors.append(err.message))
    _answer_gets(p)
    p.diamond_errors = errors  # type: ignore[attr-defined]
    try:
        yield p
    finally:
        context.close()


def _post(page, path: str, act: Callable[[], None]) -> tuple[str | None, bytes | None, int]:
    """Do `act`, which makes the sidebar POST to diamond/api/`path`: that request's
    Content-Type, its body, and the real server's status."""
    with page.expect_response(lambda r: r.request.method == "POST"
                              and unquote(r.url.split("?")[0]).endswith(f"/diamond/api/{path}"),
                              timeout=30_000) as got:
        act()
    response = got.value
    request = response.request
    return request.header_value("content-type"), request.post_data_buffer, response.status


def _json_or_nothing(kind: str | None, body: bytes | None, status: int, what: str) -> None:
    assert status != 415, f"{what}: the server refused the body's type {kind!r}"
    if body:
        assert (kind or "").split(";")[0].strip() == "application/json", (what, kind)
        json.loads(body)  # and it is JSON
    else:
        assert kind is None or kind.startswith("application/json"), (what, kind)


def test_every_button_posts_json(page, bare_lab):
    login_post = f"logins/{PROMPT_ID}"
    # the prompt the server holds opens its dialog on load; answering it POSTs the code
    with page.expect_response(lambda r: "/diamond/api/logins" in r.url):
        load_lab(page, bare_lab)
    dialog = page.locator(f'[data-diamond-login="{SITE}"]')
    expect(dialog).to_be_visible(timeout=30_000)
    dialog.locator("input").fill("123456")
    kind, body, status = _post(page, login_post,
                               lambda: dialog.get_by_role("button", name="Log in").click())
    _json_or_nothing(kind, body, status, "the login answer")
    assert json.loads(body or b"{}") == {"answers": ["123456"]}
    expect(dialog).to_have_count(0)

    panel = open_sidebar(page)
    row = panel.locator(f'[data-diamond-site="{SITE}"]')
    kind, body, status = _post(
        page, f"sites/{SITE}/login",
        lambda: row.locator(f'[data-diamond-login-button="{SITE}"]').click())
    _json_or_nothing(kind, body, status, "Log in")

    running = panel.locator(f'[data-diamond-job="{SITE}:101"]')

    def cancel() -> None:
        running.get_by_role("button", name="Cancel long-run").click()
        page.locator(".jp-Dialog").get_by_role("button", name="Cancel job").click()

    kind, body, status = _post(page, f"jobs/{SITE}:101/cancel", cancel)
    _json_or_nothing(kind, body, status, "Cancel")

    finished = panel.locator(f'[data-diamond-job="{SITE}:100"]')
    kind, body, status = _post(
        page, f"jobs/{SITE}:100/fetch",
        lambda: finished.get_by_role("button", name="Fetch results of finished").click())
    _json_or_nothing(kind, body, status, "Fetch")

    for task_id, decision in (("t-approve", "Approve"), ("t-reject", "Reject")):
        card = panel.locator(f'[data-diamond-task="{task_id}"]')
        kind, body, status = _post(
            page, f"tasks/{task_id}/{decision.lower()}",
            lambda card=card, task_id=task_id, decision=decision: card.get_by_role(
                "button", name=f"{decision} the plan of {task_id}").click())
        _json_or_nothing(kind, body, status, decision)
    ours = [e for e in page.diamond_errors if "diamond" in e.lower()]
    assert not ours, ours


def test_the_server_refuses_a_body_labelled_text(page, bare_lab):
    """(guard) the check above could fail: the same POST labelled text/plain, as `fetch`
    labels a string body unless told, is refused with 415 by this server."""
    load_lab(page, bare_lab)
    status = page.evaluate(
        """async ([url, token]) => (await fetch(url, {method: 'POST', body: '{}',
             headers: {Authorization: 'token ' + token}})).status""",
        [f"{bare_lab['url']}/diamond/api/jobs/{SITE}:101/cancel", bare_lab["token"]])
    assert status == 415
