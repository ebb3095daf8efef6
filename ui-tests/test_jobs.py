"""A job's life in the sidebar, on the real Slurm test bed: submitted from a notebook
cell (%%diamond), seen PENDING -> RUNNING -> COMPLETED, drawn on the timeline, announced
by a notification; another cancelled from the sidebar; screenshots in both themes."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path

import pytest
from notebook_helpers import code_cell, python_notebook
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from playwright.sync_api import expect
from test_sidebar import expect_focused, open_sidebar, show_shared_page

from conftest import api, confirm, load_lab, publish

pytestmark = pytest.mark.testbed

HERE = Path(__file__).parent
SCREENSHOTS = HERE / "screenshots"
JOB_TIMEOUT = 120_000


@pytest.fixture(autouse=True)
def _fresh_sidebar(request):
    show_shared_page(request, "lab_page")


# Records every state each job card shows (renders are coalesced per frame; the
# activity feed keeps the transitions in between).
RECORD_STATES = """() => {
  window.__seenStates = {};
  const note = el => {
    const id = el.getAttribute('data-diamond-job');
    const st = el.getAttribute('data-diamond-state');
    const seen = (window.__seenStates[id] = window.__seenStates[id] || []);
    if (seen[seen.length - 1] !== st) seen.push(st);
  };
  const root = document.querySelector('#diamond-sidebar');
  root.querySelectorAll('[data-diamond-job]').forEach(note);
  new MutationObserver(ms => ms.forEach(m => {
    const t = m.target;
    if (t.nodeType === 1 && t.hasAttribute('data-diamond-job')) note(t);
    m.addedNodes.forEach(n => {
      if (n.nodeType !== 1) return;
      if (n.hasAttribute('data-diamond-job')) note(n);
      n.querySelectorAll('[data-diamond-job]').forEach(note);
    });
  })).observe(root, {subtree: true, childList: true, attributes: true,
                     attributeFilter: ['data-diamond-state']});
}"""

# test_submit's three asserts on a finished job's transitions, as a page condition to wait for.
WENT_THROUGH_RUNNING = """id => {
  const seen = window.__seenStates[id] || [];
  const feed = document.querySelector('#diamond-sidebar [data-diamond-section="activity"]');
  const activity = feed ? feed.innerText : '';
  return (seen.includes('RUNNING') || activity.includes('→ RUNNING'))
    && seen.includes('COMPLETED') && seen.indexOf('COMPLETED') === seen.length - 1
    && (seen.includes('PENDING') || activity.includes('PENDING → RUNNING'));
}"""


def notebook(name: str) -> dict:
    return python_notebook([
        code_cell("load", "%load_ext diamond_jupyter"),
        code_cell("submit", f"%%diamond submit --site auto --name {name}\nsleep 3; echo hi")])


def card(page, job_id: str, state: str | None = None):
    sel = f'#diamond-sidebar [data-diamond-job="{job_id}"]'
    return page.locator(sel + (f'[data-diamond-state="{state}"]' if state else ""))


def run_cell(page, cell, attempts: int = 4) -> None:
    """Shift+Enter on a cell until JupyterLab takes it (the prompt leaves "[ ]"): on a busy
    machine the first key press can land before the notebook has focus."""
    prompt = cell.locator(".jp-InputPrompt")
    for _ in range(attempts):
        dialog = page.locator(".jp-Dialog")
        if dialog.count():  # e.g. JupyterLab's kernel chooser on a slow start: accept it,
            print("dialog:", dialog.first.inner_text())  # as a user would
            dialog.first.locator(".jp-mod-accept").first.click()
            expect(dialog).to_have_count(0, timeout=15_000)
        cell.locator(".jp-InputArea-editor").click()
        page.keyboard.press("Shift+Enter")
        try:
            expect(prompt).to_contain_text(re.compile(r"\[(\*|\d+)\]"), timeout=15_000)
            return
        except AssertionError:
            continue
    raise AssertionError(f"the cell never started: prompt {prompt.inner_text()!r}")


def test_submit_from_a_notebook_cell(lab_server, lab_page):
    page, name = lab_page, f"ui-hello-{uuid.uuid4().hex[:6]}"
    api(lab_server, "PUT", "api/contents/submit.ipynb",
        {"type": "notebook", "format": "json", "content": notebook(name)})
    # Open the notebook, run both cells with the keyboard.
    page.goto(f"{lab_server['url']}/lab/tree/submit.ipynb?token={lab_server['token']}")
    page.wait_for_selector("#jupyterlab-splash", state="detached", timeout=60_000)
    panel = open_sidebar(page)
    page.evaluate(RECORD_STATES)
    expect(panel.locator('[data-diamond-status="live"]')).to_be_visible(timeout=30_000)
    expect(page.locator(".jp-Notebook .jp-Cell").first).to_be_visible(timeout=60_000)
    cells = page.locator(".jp-Notebook .jp-Cell")
    for i in range(2):
        run_cell(page, cells.nth(i))
        expect(cells.nth(i).locator(".jp-InputPrompt")).to_contain_text(
            f"[{i + 1}]", timeout=60_000)

    job = panel.locator("[data-diamond-job]", has_text=name).first
    expect(job).to_be_visible(timeout=JOB_TIMEOUT)
    job_id = job.get_attribute("data-diamond-job")
    site = job_id.split(":")[0]
    assert site in ("alpha", "beta", "gamma", "delta"), job_id  # placed by --site auto
    expect(card(page, job_id, "COMPLETED")).to_be_visible(timeout=JOB_TIMEOUT)

    # The cell's live card went from queued to completed after the cell had finished,
    # and shows the output: the picture in the README.
    out = cells.nth(1).locator(".jp-OutputArea")
    expect(out).to_contain_text("COMPLETED", timeout=JOB_TIMEOUT)
    expect(out).to_contain_text("hi")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)  # (the README's card: test_jobcard.py)
    cells.nth(1).screenshot(path=str(SCREENSHOTS / "job-card-auto.png"))

    try:  # the activity feed may draw its line a frame after the card: wait, then assert
        page.wait_for_function(WENT_THROUGH_RUNNING, arg=job_id, timeout=30_000)
    except PlaywrightTimeoutError:
        pass  # the asserts below say what was seen
    seen = page.evaluate("id => window.__seenStates[id] || []", job_id)
    activity = panel.locator('[data-diamond-section="activity"]').inner_text()
    assert "RUNNING" in seen or "→ RUNNING" in activity, (seen, activity)
    assert seen.index("COMPLETED") == len(seen) - 1, seen
    assert ("PENDING" in seen) or ("PENDING → RUNNING" in activity), (seen, activity)

    # On its site's timeline, coloured as completed; focus/hover shows times + placement.
    bar = panel.locator(f'[data-diamond-timeline="{site}"] [data-diamond-job-bar="{job_id}"]')
    expect(bar).to_have_attribute("data-diamond-state", "COMPLETED")
    expect(panel.locator(f'[data-diamond-timeline="{site}"] [data-diamond-now]')).to_be_attached()
    bar.focus()  # keyboard: the same details as on hover
    tip = panel.locator(f'[data-diamond-tooltip="{job_id}"]')
    expect(tip).to_contain_text("queued")
    expect(tip).to_contain_text("ended")
    expect(tip).to_contain_text(re.compile(r"\d\d:\d\d:\d\d"))  # to the second
    # The window fits the jobs shown: a few seconds' run is a bar, not a 1 px sliver.
    run = bar.locator(".jp-diamond-seg-completed")
    chart = panel.locator(f'[data-diamond-timeline="{site}"] svg')
    assert run.bounding_box()["width"] > 0.05 * chart.bounding_box()["width"]
    expect(bar.locator("title")).to_contain_text(name)  # the full name, whatever fits
    legend = panel.locator("[data-diamond-legend]")
    for state in ("PENDING", "RUNNING", "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT"):
        expect(legend.locator(f'[data-diamond-legend-state="{state}"]')).to_be_visible()

    # The end is announced by a toast with a link to the card.
    toast = page.locator(".Toastify__toast", has_text=name).filter(has_text="completed")
    expect(toast).to_be_visible(timeout=30_000)
    expect(toast.get_by_role("button", name="Show job")).to_be_visible()

    # "Cell" goes back to the notebook cell that submitted it.
    page.locator(".jp-Notebook .jp-Cell").first.click()
    card(page, job_id).get_by_role("button", name=f"Go to the cell that submitted {name}").click()
    active = page.locator(".jp-Notebook .jp-Cell.jp-mod-active")
    expect(active).to_contain_text("%%diamond submit")


def test_cancel_from_the_sidebar(lab_server, lab_page):
    page, name = lab_page, f"ui-sleep-{uuid.uuid4().hex[:6]}"
    job = api(lab_server, "POST", "diamond/api/jobs",
              {"script": "sleep 300", "site": "alpha", "name": name,
               "origin": {"path": "submit.ipynb", "cell_id": "submit"}})
    panel = open_sidebar(page)
    row = card(page, job["id"])
    expect(row).to_be_visible(timeout=JOB_TIMEOUT)
    dialog = confirm(page, row.get_by_role("button", name=f"Cancel {name}"), "Cancel job?")
    dialog.get_by_role("button", name="Cancel job").click()
    expect(card(page, job["id"], "CANCELLED")).to_be_visible(timeout=JOB_TIMEOUT)
    expect(row.get_by_role("button", name=f"Cancel {name}")).to_have_count(0)
    toast = page.locator(".Toastify__toast", has_text=name).filter(has_text="cancelled")
    expect(toast).to_be_visible(timeout=30_000)
    assert api(lab_server, "GET", f"diamond/api/jobs/{job['id']}")["state"] == "CANCELLED"
    expect(panel.locator('[data-diamond-status="live"]')).to_have_count(1)


def test_a_job_that_can_never_start_says_so(lab_server, lab_page):
    """gamma's short partition allows 30 minutes: a job asking for an hour there pends
    forever (PartitionTimeLimit); its row says so as soon as the server sees the reason.
    diamond's own check refuses such a job before submitting (session 38): `force` sends it
    all the same, as a user may, and as a job whose partition limit was lowered stands."""
    page, name = lab_page, f"ui-stuck-{uuid.uuid4().hex[:6]}"
    job = api(lab_server, "POST", "diamond/api/jobs",
              {"script": "#!/bin/bash\n#SBATCH -p short\n#SBATCH -t 01:00:00\ntrue\n",
               "site": "gamma", "name": name, "force": True})
    try:
        open_sidebar(page)
        row = card(page, job["id"])
        attention = row.locator('[data-diamond-attention="stuck"]')
        expect(attention).to_contain_text("PartitionTimeLimit", timeout=JOB_TIMEOUT)
        expect(attention).to_contain_text("can never start here")
    finally:
        api(lab_server, "POST", f"diamond/api/jobs/{job['id']}/cancel", {})


def test_filters_and_keyboard(lab_page):
    page = lab_page
    panel = open_sidebar(page)
    jobs = panel.locator("[data-diamond-job]")
    expect(jobs.first).to_be_visible()
    panel.get_by_label("State", exact=True).select_option("CANCELLED")
    expect(panel.locator('[data-diamond-job]:not([data-diamond-state="CANCELLED"])')
           ).to_have_count(0)
    expect(panel.locator('[data-diamond-job][data-diamond-state="CANCELLED"]').first
           ).to_be_visible()
    panel.get_by_label("State", exact=True).select_option("")
    panel.get_by_label("Filter jobs by name or id").fill("no-such-job-xyz")
    expect(panel.locator("[data-diamond-job]")).to_have_count(0)
    panel.get_by_label("Filter jobs by name or id").fill("")
    # A site row expands to its partitions from the keyboard.
    toggle = panel.get_by_role("button", name="Show partitions of alpha", exact=True)
    toggle.focus()
    expect_focused(page, toggle, "alpha's partitions toggle")
    page.keyboard.press("Enter")
    expect(panel.locator('[data-diamond-site="alpha"] [data-diamond-partition]').first
           ).to_be_visible()
    # ... and to what discovery found there: the site's own Lmod modules, its architecture
    detail = panel.locator('[data-diamond-site="alpha"] [data-diamond-site-detail="alpha"]')
    expect(detail.locator('[data-diamond-detail="software"]')).to_contain_text(
        "openmpi/4.1.5-tq4bzvh", timeout=30_000)
    expect(detail.locator('[data-diamond-detail="architectures"]')).to_contain_text("x86_64")
    expect(detail.locator('[data-diamond-detail="container_runtimes"]')).to_contain_text(
        "apptainer")
    expect(detail.locator("[data-diamond-node-type]")).to_have_count(1)
    hide = panel.get_by_role("button", name="Hide partitions of alpha", exact=True)
    expect_focused(page, hide, "alpha's toggle, its partitions shown")
    page.keyboard.press("Enter")
    expect(panel.locator('[data-diamond-site="alpha"] [data-diamond-partition]')).to_have_count(0)
    # The timeline zooms from the keyboard.
    zoom_out = panel.get_by_role("button", name="Zoom out")
    zoom = panel.locator("[data-diamond-zoom]")
    before = zoom.get_attribute("data-diamond-zoom")
    zoom_out.focus()
    expect_focused(page, zoom_out, "the timeline's Zoom out")
    page.keyboard.press("Enter")
    expect(zoom).not_to_have_attribute("data-diamond-zoom", before or "")
    after = zoom.get_attribute("data-diamond-zoom")
    # the first level fits the window to the jobs shown; the next ones are fixed spans
    assert (before == "fit" and after.isdigit()) or int(after) > int(before), (before, after)


def _screenshot(page, lab_server, theme: str, name: str) -> None:
    api(lab_server, "PUT", "lab/api/settings/@jupyterlab/apputils-extension:themes",
        {"raw": json.dumps({"theme": theme})})
    load_lab(page, lab_server)
    panel = open_sidebar(page)
    expect(panel.locator('[data-diamond-status="live"]')).to_be_visible(timeout=30_000)
    expect(panel.locator("[data-diamond-job]").first).to_be_visible()
    page.wait_for_function(
        "t => document.body.dataset.jpThemeName === t", arg=theme, timeout=30_000)
    page.locator(".Toastify__toast").evaluate_all("ts => ts.forEach(t => t.remove())")
    SCREENSHOTS.mkdir(exist_ok=True)
    out = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(out))
    publish(out)


def test_screenshots_light_and_dark(lab_server, lab_page):
    page = lab_page
    _screenshot(page, lab_server, "JupyterLab Dark", "sidebar-dark")
    _screenshot(page, lab_server, "JupyterLab Light", "sidebar-light")
    ours = [e for e in page.diamond_errors if "diamond" in e.lower()]
    assert not ours, "uncaught errors from the diamond extension:\n" + "\n".join(ours)
