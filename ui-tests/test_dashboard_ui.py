"""The dashboard on the real test bed: background load (`diamond testbed load`) fills the
sites' queues with jobs that are not the user's; the user's own job (placed with
`--site auto`) is highlighted in its site's queue and on the timeline with its placement
reason; every site has a usage chart drawn from the snapshots the server keeps; axe-core
finds nothing in the light and dark themes; screenshots of both for the README.

The test bed has one cluster login: the load's jobs run as the same Unix user as the
user's job; "yours" means one of this user's diamond jobs, which the load's are not."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from dashboard_helpers import (
    DASHBOARD,
    axe_violations,
    set_theme,
    wait_until_workspace_keeps_dashboard,
)
from playwright.sync_api import expect
from test_sidebar import open_sidebar

from conftest import SCREENSHOTS, api, load_lab, publish, start_lab, stop_lab
from diamond_jupyter.testbed.load import cancel as cancel_load

ROOT = Path(__file__).resolve().parent.parent
BOUND_MS = 240_000  # generous: the machine is loaded on purpose during CI


def _screenshot(page, server, theme: str, name: str) -> None:
    # the open dashboard is in the server's workspace before the reload that restores it
    expect(page.locator(DASHBOARD)).to_be_visible()
    wait_until_workspace_keeps_dashboard(page, server, api)
    set_theme(page, server, theme, api)
    load_lab(page, server)  # the layout restorer reopens the dashboard
    page.wait_for_function("t => document.body.dataset.jpThemeName === t", arg=theme,
                           timeout=60_000)
    expect(page.locator(DASHBOARD)).to_be_visible(timeout=60_000)
    expect(page.locator("[data-diamond-queue-row]").first).to_be_visible(timeout=60_000)
    violations = axe_violations(page)
    assert violations == [], (theme, violations)
    page.locator(".Toastify__toast").evaluate_all("ts => ts.forEach(t => t.remove())")
    SCREENSHOTS.mkdir(exist_ok=True)
    out = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(out))
    timeline = SCREENSHOTS / f"{name}-timeline.png"
    page.locator("[data-diamond-gantt]").screenshot(path=str(timeline))
    publish(out, timeline)


def test_dashboard_on_the_test_bed(tmp_path_factory, testbed_config, browser):
    tmp = tmp_path_factory.mktemp("dashboard")
    load_log = (tmp / "load.log").open("w")
    load = subprocess.Popen(
        [sys.executable, "-m", "diamond_jupyter.cli", "testbed", "load", "--profile", "busy",
         "--seed", "5", "--duration", "20", "--time-scale", "2", "--json",
         "--config", str(testbed_config)],
        stdout=load_log, stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(
            [str(ROOT), os.environ.get("PYTHONPATH", "")])})
    proc, server = start_lab(tmp, diamond_config=testbed_config, store=tmp / "store.sqlite3")
    context = browser.new_context(viewport={"width": 1600, "height": 1200})
    job = None
    try:
        job = api(server, "POST", "diamond/api/jobs", {
            "site": "auto", "name": "dashboard-mine",
            "script": "#!/bin/bash\n#SBATCH -t 10\nsleep 600\n"}, timeout=240)
        site = job["site"]
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda err: errors.append(f"{err.message}\n{err.stack or ''}"))
        load_lab(page, server)
        panel = open_sidebar(page)
        panel.get_by_role("button", name="Open the dashboard").click()
        dash = page.locator(DASHBOARD)
        expect(dash).to_be_visible(timeout=60_000)

        # the user's job, highlighted, in its site's queue (the dashboard polls every 15 s)
        grid = dash.locator(f'[data-diamond-queue="{site}"]')
        expect(grid).to_have_attribute("data-diamond-mine-rows", "1", timeout=BOUND_MS)
        grid.locator('[data-diamond-sort="name"]').click()  # "dashboard-…" before "load-…"
        mine = grid.locator('[data-diamond-queue-row][data-diamond-mine="true"]')
        expect(mine).to_have_attribute("data-diamond-job-id", job["id"])
        expect(mine).to_contain_text("dashboard-mine")
        expect(mine).to_contain_text("(you)")
        other = grid.locator("[data-diamond-queue-row]:not([data-diamond-mine])").first
        bg = [r.evaluate("e => getComputedStyle(e).backgroundColor") for r in (mine, other)]
        assert bg[0] != bg[1], bg

        # the background load's jobs, queued and not the user's, in the queues
        loaded = dash.locator("[data-diamond-queue-row]:not([data-diamond-mine])",
                              has_text="load-")
        expect(loaded.first).to_be_visible(timeout=BOUND_MS)
        queued = dash.locator('[data-diamond-queue-row][data-diamond-state="PENDING"]'
                              ":not([data-diamond-mine])", has_text="load-")
        expect(queued.first).to_be_attached(timeout=BOUND_MS)

        # a usage chart per site, from the snapshots the server keeps
        sites = [s["name"] for s in api(server, "GET", "diamond/api/dashboard")["sites"]]
        assert site in sites
        for name in sites:
            chart = dash.locator(f'[data-diamond-util-chart="{name}"]')
            expect(chart).to_be_visible()
            expect(chart).not_to_have_attribute("data-diamond-points", "0", timeout=BOUND_MS)

        # the timeline: the user's job with its placement reason
        bar = dash.locator(f'[data-diamond-gantt-job="{job["id"]}"]')
        expect(bar).to_be_attached(timeout=60_000)
        expect(bar).to_have_attribute("aria-label", re.compile(f"on {re.escape(site)}: .*; .+"))
        bar.focus()
        tip = dash.locator(f'[data-diamond-tooltip="{job["id"]}"]')
        expect(tip).to_contain_text(f"Placed on {site}")

        _screenshot(page, server, "JupyterLab Light", "dashboard-light")
        _screenshot(page, server, "JupyterLab Dark", "dashboard-dark")
        ours = [e for e in errors if "diamond" in e.lower()]
        assert not ours, "uncaught errors from the diamond extension:\n" + "\n".join(ours)
    finally:
        context.close()
        if job is not None:
            try:
                api(server, "POST", f"diamond/api/jobs/{job['id']}/cancel", {})
            except OSError:
                pass
        stop_lab(proc)
        try:
            load.wait(timeout=120)
        except subprocess.TimeoutExpired:
            load.kill()
            load.wait()
        with ThreadPoolExecutor(1) as pool:  # Playwright's sync API holds this thread's loop
            pool.submit(asyncio.run, cancel_load(testbed_config)).result()
