"""Every POST the sidebar's buttons send is labelled JSON, in a real JupyterLab and chromium,
without the test bed: the server refuses a body labelled another type (415), and `fetch`
labels a string body text/plain unless told.

What the sidebar shows (a site asking for a one-time code, a running and a finished job, two
plans waiting for approval, a pending login prompt) is answered at the wire level (the
routes' shapes), because no site here can be in those states without the test bed. The POSTs
themselves go on to the real server, which has no sites file: it checks the body's type
before anything else, then answers that it is not configured (or not found), never 415.

An approval names the plan shown (its `plan_sha256`, as the server gives it); the server's
refusal of it is shown on the task's card."""

from __future__ import annotations

import json
from collections.abc import Callable
from urllib.parse import unquote

import pytest
from playwright.sync_api import expect
from test_sidebar import open_sidebar

from conftest import load_lab, start_lab, stop_lab
from diamond_jupyter.federation_plan import plan_sha256

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


def _plan(task_id: str) -> str:
    return f"submit `echo {task_id}` to alpha"


def _task(task_id: str, *, with_sha: bool = True) -> dict:
    """A task awaiting its plan, as GET /state gives it (`data.pending` with the plan's
    sha256; `with_sha` False: as an older server gave it)."""
    pending = {"tool": "submit", "plan": _plan(task_id),
               "input": {"script": f"echo {task_id}", "site": SITE}}
    if with_sha:
        pending["plan_sha256"] = plan_sha256(pending["plan"])
    return {"id": task_id, "state": "awaiting_approval", "prompt": f"run {task_id}",
            "data": {"pending": pending}, "waiting_on": [], "created_at": NOW,
            "updated_at": NOW}


STATE = {"sites": [_site()],
         "jobs": [_job("101", "long-run", "RUNNING"), _job("100", "finished", "COMPLETED")],
         "jobs_total": 2,
         "tasks": [_task("t-approve"), _task("t-reject"), _task("t-old", with_sha=False)],
         "transfers": [], "events": [], "last_seq": 7, "error": None}
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


def _no_login_prompt(page) -> None:
    """GET logins answered with no prompt (its dialog would cover the sidebar)."""
    def none(route) -> None:
        route.fulfill(status=200, content_type="application/json",
                      body=json.dumps({"prompts": []}))

    page.route(lambda url: url.split("?", 1)[0].endswith("/diamond/api/logins"), none)


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
        # an approval names the plan shown; a rejection runs nothing and names none
        assert json.loads(body or b"{}") == (
            {"plan_sha256": plan_sha256(_plan(task_id))} if decision == "Approve" else {})
    ours = [e for e in page.diamond_errors if "diamond" in e.lower()]
    assert not ours, ours


# What the server answers an approval it refuses (server/base.py's error body; the
# messages are agent/tasks.py's).
REFUSALS = {
    "plan changed": (400, {"reason": "bad-input", "message": (
        f"task t-approve now awaits another plan than the one approved (its plan_sha256 is "
        f"now {plan_sha256('submit `echo other` to alpha')}): show it again before "
        "approving; nothing was approved")}),
    "no longer waiting": (400, {"reason": "bad-input",
                                "message": "task t-approve is running, not awaiting approval"}),
}


@pytest.mark.parametrize("refused", sorted(REFUSALS))
def test_a_refused_approval_is_shown_on_the_card(page, bare_lab, refused):
    """The server refuses an approval of a plan the task no longer awaits: the sidebar
    shows its message on the task's card (and the buttons stay), not only in a toast."""
    status, answer = REFUSALS[refused]
    sent: list[bytes | None] = []

    def refuse(route) -> None:
        sent.append(route.request.post_data_buffer)
        route.fulfill(status=status, content_type="application/json", body=json.dumps(answer))

    page.route(lambda url: url.split("?", 1)[0].endswith("/diamond/api/tasks/t-approve/approve"),
               refuse)
    _no_login_prompt(page)
    load_lab(page, bare_lab)
    panel = open_sidebar(page)
    card = panel.locator('[data-diamond-task="t-approve"]')
    card.get_by_role("button", name="Approve the plan of t-approve").click()
    shown = card.locator('[data-diamond-task-refusal="t-approve"]')
    expect(shown).to_have_text(f"Could not approve t-approve: {answer['message']}",
                               timeout=30_000)
    assert [json.loads(b or b"{}") for b in sent] == [{"plan_sha256": plan_sha256(
        _plan("t-approve"))}]
    expect(card.get_by_role("button", name="Approve the plan of t-approve")).to_be_enabled()


def test_a_plan_shown_without_its_sha256_is_not_approved(page, bare_lab):
    """A plan from a server that gave no sha256 with it is not approved by task id alone:
    nothing is posted, and the card says how to approve it instead."""
    posted: list[str] = []
    page.on("request", lambda r: posted.append(r.url) if r.method == "POST"
            and "/diamond/api/tasks/" in r.url else None)
    _no_login_prompt(page)
    load_lab(page, bare_lab)
    panel = open_sidebar(page)
    card = panel.locator('[data-diamond-task="t-old"]')
    card.get_by_role("button", name="Approve the plan of t-old").click()
    expect(card.locator('[data-diamond-task-refusal="t-old"]')).to_contain_text(
        "Not approved: the plan shown for t-old came without its sha256", timeout=30_000)
    expect(card.get_by_role("button", name="Approve the plan of t-old")).to_be_enabled()
    assert posted == []


def test_the_server_refuses_a_body_labelled_text(page, bare_lab):
    """(guard) the check above could fail: a POST that carries a body (an approval), labelled
    text/plain as `fetch` labels a string body unless told, is refused with 415 by this
    server. (A route that reads no body, such as a cancel, takes `{}` of any type.)"""
    load_lab(page, bare_lab)
    status = page.evaluate(
        """async ([url, token]) => (await fetch(url, {method: 'POST',
             body: '{"plan_sha256": "0"}',
             headers: {Authorization: 'token ' + token}})).status""",
        [f"{bare_lab['url']}/diamond/api/tasks/t-approve/approve", bare_lab["token"]])
    assert status == 415
