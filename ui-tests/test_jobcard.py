"""The notebook job card on the real Slurm test bed: a record that survives a restart.

Cells submit four jobs (one completes, one fails, one is cancelled from its card, one is
still running when the Jupyter server stops). The cards follow them, show the stderr tail
of the failed one, elapsed time against the time limit, and fetch results as links that
open in JupyterLab. The server is then restarted on the same port and token while the last
job ends (the CLI records its end meanwhile, on the same store): the open sidebar and card
catch up without a reload, and the reopened notebook shows every card, live, with no
"model not found".
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from notebook_helpers import code_cell, python_notebook
from playwright.sync_api import expect
from test_jobs import run_cell
from test_sidebar import open_sidebar

from conftest import api, confirm, publish, start_lab, stop_lab

pytestmark = pytest.mark.testbed

HERE = Path(__file__).parent
SCREENSHOTS = HERE / "screenshots"
JOB_TIMEOUT = 120_000
CATCH_UP = 30_000  # the sidebar's heartbeat is 5 s; sites every 15 s


def _notebook(tag: str) -> dict:
    return python_notebook([
        code_cell("load", "%load_ext diamond_jupyter"),
        code_cell("ok", f"%%diamond submit --site alpha --name ok-{tag} --time 00:05:00\n"
                        "sleep 2; echo card-result > result.txt; echo card-stdout"),
        code_cell("bad", f"%%diamond submit --site alpha --name bad-{tag}\n"
                         "echo card-stderr-line >&2; exit 3"),
        code_cell("long", f"%%diamond submit --site alpha --name long-{tag}\nsleep 300"),
        code_cell("late", f"%%diamond submit --site alpha --name late-{tag}\nsleep 20"),
    ])


def _card(page, name: str):
    return page.locator(".jp-Notebook .jp-OutputArea [data-diamond-card]", has_text=name)


@pytest.fixture
def lab(tmp_path, testbed_config):
    """A `jupyter lab` this test may restart: same dir, store, port and token."""
    proc, info = start_lab(tmp_path, diamond_config=testbed_config)
    state = {"proc": proc, "info": info}
    yield state
    if state["proc"] is not None:
        stop_lab(state["proc"])


def test_card_record_actions_and_restart(lab, browser, tmp_path, testbed_config):
    info, tag = lab["info"], uuid.uuid4().hex[:6]
    api(info, "PUT", "api/contents/cards.ipynb",
        {"type": "notebook", "format": "json", "content": _notebook(tag)})
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(err.message))
    page.goto(f"{info['url']}/lab/tree/cards.ipynb?token={info['token']}")
    page.wait_for_selector("#jupyterlab-splash", state="detached", timeout=60_000)
    panel = open_sidebar(page)
    expect(panel.locator('[data-diamond-status="live"]')).to_be_visible(timeout=30_000)
    cells = page.locator(".jp-Notebook .jp-Cell")
    expect(cells.first).to_be_visible(timeout=60_000)
    for i in range(5):
        run_cell(page, cells.nth(i))
        expect(cells.nth(i).locator(".jp-InputPrompt")).to_contain_text(
            f"[{i + 1}]", timeout=60_000)

    ok, bad, long, late = (_card(page, f"{k}-{tag}") for k in ("ok", "bad", "long", "late"))
    # The completed job: outcome, stdout tail, elapsed time against its limit.
    expect(ok).to_have_attribute("data-diamond-state", "COMPLETED", timeout=JOB_TIMEOUT)
    expect(ok.locator("[data-diamond-stdout]")).to_contain_text("card-stdout",
                                                                timeout=JOB_TIMEOUT)
    expect(ok.locator("[data-diamond-elapsed]")).to_contain_text(
        re.compile(r"ran 0:00:\d\d of 0:05:00 limit"))
    # The failed one shows its stderr tail (the error was there, not on stdout).
    expect(bad).to_have_attribute("data-diamond-state", "FAILED", timeout=JOB_TIMEOUT)
    expect(bad.locator("[data-diamond-outcome]")).to_contain_text("exit code 3")
    expect(bad.locator("[data-diamond-stderr]")).to_contain_text("card-stderr-line",
                                                                 timeout=JOB_TIMEOUT)
    # Same colour for a state on the card and in the sidebar.
    ok_id = ok.get_attribute("data-diamond-card")
    colour = "el => getComputedStyle(el).backgroundColor"
    card_badge = ok.locator(".jp-diamond-badge").evaluate(colour)
    side_badge = panel.locator(f'[data-diamond-job="{ok_id}"] .jp-diamond-badge').evaluate(colour)
    assert card_badge == side_badge, (card_badge, side_badge)

    # Fetch: the result files become links that open in JupyterLab.
    ok.get_by_role("button", name=f"Fetch results of ok-{tag}").click()
    link = ok.locator('[data-diamond-file$="result.txt"]')
    expect(link).to_be_visible(timeout=JOB_TIMEOUT)
    link.click()
    tab = page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab", has_text="result.txt")
    expect(tab).to_be_visible(timeout=30_000)
    expect(page.locator(".jp-FileEditor, .jp-RenderedText").filter(has_text="card-result")
           .first).to_be_visible(timeout=30_000)
    page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab", has_text="cards.ipynb").click()

    # Cancel, with a confirmation.
    expect(long).to_have_attribute("data-diamond-state", re.compile("PENDING|RUNNING"))
    dialog = confirm(page, long.get_by_role("button", name=f"Cancel long-{tag}"),
                     "Cancel job?")
    dialog.get_by_role("button", name="Cancel job").click()
    expect(long).to_have_attribute("data-diamond-state", "CANCELLED", timeout=JOB_TIMEOUT)

    # The README's picture: the completed and the failed cards.
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.locator(".Toastify__toast").evaluate_all("ts => ts.forEach(t => t.remove())")
    cells.nth(1).screenshot(path=str(SCREENSHOTS / "job-card.png"))
    cells.nth(2).screenshot(path=str(SCREENSHOTS / "job-card-failed.png"))
    publish(SCREENSHOTS / "job-card.png", SCREENSHOTS / "job-card-failed.png")

    # Save, then restart the server while `late` runs; it ends while the server is down.
    expect(late).to_have_attribute("data-diamond-state", "RUNNING", timeout=JOB_TIMEOUT)
    late_id = late.get_attribute("data-diamond-card")
    mine = panel.locator('[data-diamond-site="alpha"] [data-diamond-stat="mine"] dd')
    expect(mine).to_have_text("1")  # only `late` is unfinished: counted live, not stale
    cells.nth(0).locator(".jp-InputPrompt").click()
    page.keyboard.press("Control+s")
    expect(page.locator(".lm-TabBar-tab.jp-mod-dirty", has_text="cards.ipynb")
           ).to_have_count(0, timeout=30_000)
    saved = api(info, "GET", "api/contents/cards.ipynb")["content"]
    assert not any("application/vnd.jupyter.widget-view+json" in o.get("data", {})
                   for c in saved["cells"] for o in c.get("outputs", []))
    stop_lab(lab["proc"])
    lab["proc"] = None
    env = dict(os.environ, DIAMOND_CONFIG=str(testbed_config),
               DIAMOND_DATA_DIR=str(tmp_path / "data"))
    diamond = [sys.executable, "-c", "import sys; from diamond_jupyter.cli import main; "
               "sys.exit(main())"]
    done = subprocess.run([*diamond, "wait", late_id, "--json"], env=env, text=True,
                          capture_output=True, timeout=180)
    assert '"COMPLETED"' in done.stdout, done.stdout + done.stderr
    lab["proc"], _ = start_lab(tmp_path, diamond_config=testbed_config,
                               port=int(info["url"].rsplit(":", 1)[1]), token=info["token"])

    # The open page catches up by itself: no Reload.
    side_late = panel.locator(f'[data-diamond-job="{late_id}"]')
    expect(side_late).to_have_attribute("data-diamond-state", "COMPLETED", timeout=CATCH_UP)
    expect(late).to_have_attribute("data-diamond-state", "COMPLETED", timeout=CATCH_UP)
    expect(mine).to_have_text("0")

    # Reopened: every card is there, from the saved record, then live; no widget errors.
    page.reload()
    page.wait_for_selector("#jupyterlab-splash", state="detached", timeout=60_000)
    expect(cells.first).to_be_visible(timeout=60_000)
    for name, state in ((f"ok-{tag}", "COMPLETED"), (f"bad-{tag}", "FAILED"),
                        (f"long-{tag}", "CANCELLED"), (f"late-{tag}", "COMPLETED")):
        expect(_card(page, name)).to_have_attribute("data-diamond-state", state,
                                                    timeout=60_000)
        expect(_card(page, name)).to_have_attribute("data-diamond-live", "true",
                                                    timeout=CATCH_UP)
    expect(bad.locator("[data-diamond-stderr]")).to_contain_text("card-stderr-line")
    body = page.locator(".jp-Notebook").inner_text()
    assert "model not found" not in body and "Error displaying widget" not in body
    ours = [e for e in errors if "diamond" in e.lower()]
    assert not ours, ours
    context.close()
