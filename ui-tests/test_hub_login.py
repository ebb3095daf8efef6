"""Under a real JupyterHub (`scripts/hub.sh up --json`): alice logs in with her password,
opens the Diamond sidebar in her own server and submits from a notebook; the job runs as
her, appears in her sidebar and not in bob's API."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import pytest
from notebook_helpers import code_cell, python_notebook
from playwright.sync_api import expect
from test_jobs import run_cell
from test_sidebar import open_sidebar

pytestmark = pytest.mark.testbed
ROOT = Path(__file__).resolve().parent.parent
JOB_TIMEOUT = 180_000


def hub_sh(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHON": sys.executable, "DIAMOND_NO_VENV": "1"}
    return subprocess.run([str(ROOT / "scripts" / "hub.sh"), *args], capture_output=True,
                          text=True, env=env, timeout=900, check=False)


@pytest.fixture(scope="module")
def hub(testbed_config) -> Any:
    r = hub_sh("up", "--json")
    assert r.returncode == 0, r.stderr
    try:
        yield json.loads(r.stdout)
    finally:
        down = hub_sh("down")
        assert down.returncode == 0, down.stderr


def call(hub: dict, user: dict, method: str, path: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(f"{hub['url']}{path}", data=data, method=method,
                                 headers={"Authorization": f"token {user['token']}",
                                          "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as resp:
        text = resp.read().decode()
    return json.loads(text) if text else None


def notebook(name: str) -> dict:
    return python_notebook([
        code_cell("load", "%load_ext diamond_jupyter"),
        code_cell("submit", f"%%diamond submit --site alpha --name {name} --time 00:05:00\n"
                            "id -un")])


def login(page, hub: dict, user: dict) -> None:
    """The hub's login form, then the OAuth dance to the user's own JupyterLab."""
    page.goto(f"{hub['url']}/hub/login")
    page.locator("#username_input").fill(user["name"])
    page.locator("#password_input").fill(user["password"])
    page.locator("#login_submit").click()
    page.wait_for_url(f"**/user/{user['name']}/lab**", timeout=120_000)


def test_alice_logs_in_opens_the_sidebar_and_submits_from_a_notebook(hub, browser):
    alice, bob = hub["users"]
    assert (alice["name"], bob["name"]) == ("alice", "bob")
    name = f"hub-{uuid.uuid4().hex[:6]}"
    call(hub, alice, "PUT", "/user/alice/api/contents/hub.ipynb",
         {"type": "notebook", "format": "json", "content": notebook(name)})
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(err.message))
    try:
        login(page, hub, alice)
        page.goto(f"{hub['url']}/user/alice/lab/tree/hub.ipynb")
        page.wait_for_selector("#jupyterlab-splash", state="detached", timeout=120_000)
        panel = open_sidebar(page)
        expect(panel.locator('[data-diamond-status="live"]')).to_be_visible(timeout=60_000)
        expect(panel.locator('[data-diamond-site="alpha"]')).to_be_visible(timeout=60_000)
        cells = page.locator(".jp-Notebook .jp-Cell")
        expect(cells.first).to_be_visible(timeout=60_000)
        for i in range(2):
            run_cell(page, cells.nth(i))
            expect(cells.nth(i).locator(".jp-InputPrompt")).to_contain_text(
                f"[{i + 1}]", timeout=120_000)
        card = page.locator(".jp-Notebook .jp-OutputArea [data-diamond-card]", has_text=name)
        expect(card).to_have_attribute("data-diamond-state", "COMPLETED", timeout=JOB_TIMEOUT)
        expect(card.locator("[data-diamond-stdout]")).to_contain_text("alice",
                                                                      timeout=JOB_TIMEOUT)
        job_id = card.get_attribute("data-diamond-card")
        expect(panel.locator(f'[data-diamond-job="{job_id}"]')).to_be_visible(
            timeout=60_000)
        shots = Path(__file__).parent / "screenshots"
        shots.mkdir(exist_ok=True)
        page.screenshot(path=str(shots / "hub-alice.png"))
    finally:
        context.close()
    assert not errors, errors
    # bob, logged in in his own browser session: his sidebar is live, without alice's job
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    try:
        login(page, hub, bob)
        page.wait_for_selector("#jupyterlab-splash", state="detached", timeout=120_000)
        panel = open_sidebar(page)
        expect(panel.locator('[data-diamond-status="live"]')).to_be_visible(timeout=60_000)
        expect(panel.locator('[data-diamond-site="alpha"]')).to_be_visible(timeout=60_000)
        expect(panel.locator(f'[data-diamond-job="{job_id}"]')).to_have_count(0)
    finally:
        context.close()
    mine = call(hub, alice, "GET", "/user/alice/diamond/api/jobs?limit=500")
    assert job_id in [j["id"] for j in mine["jobs"]]
    theirs = call(hub, bob, "GET", "/user/bob/diamond/api/jobs?limit=500")
    assert job_id not in [j["id"] for j in theirs["jobs"]]
