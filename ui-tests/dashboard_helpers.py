"""Helpers of the dashboard's browser tests and benchmark: open it, check it with axe-core,
and (where the real queues cannot be that long) a large queue answer for the windowed tables.
"""

from __future__ import annotations

import json
import random
import re
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect

ROOT = Path(__file__).resolve().parent.parent
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
DASHBOARD = "[data-diamond-dashboard]"
# The layout restorer's name of the dashboard (its tracker's namespace and name, src/index.ts)
# and the workspace JupyterLab's /lab page saves to.
RESTORER_NAME = "diamond-dashboard:dashboard"
WORKSPACE = "default"
PREDICTED = re.compile(r"^≈ \d+(\.\d)? (s|min|h)( \(90%: < \d+(\.\d)? (s|min|h)\)| "
                       r"\(scheduler's estimate\))?$")


def open_from_palette(page) -> Any:
    """Open the dashboard with the command palette (`diamond:open-dashboard`). The modal
    palette closes when the shell moves the focus while starting up: then it is opened
    again (three tries)."""
    search = page.locator(".lm-CommandPalette-input")
    item = page.locator(".lm-CommandPalette-item", has_text="Open Diamond dashboard")
    for attempt in range(3):
        page.get_by_role("menuitem", name="View", exact=True).click()
        page.get_by_role("menuitem", name="Activate Command Palette").click()
        try:
            search.fill("Open Diamond dashboard", timeout=5_000)
            expect(item.first).to_be_visible(timeout=5_000)
            item.first.click(timeout=5_000)
            break
        except (AssertionError, PlaywrightTimeout):
            if attempt == 2:
                raise
    dash = page.locator(DASHBOARD)
    expect(dash).to_be_visible(timeout=30_000)
    return dash


def close_dashboard(page) -> None:
    tab = page.locator('.lm-DockPanel-tabBar li.lm-TabBar-tab[data-id="diamond-dashboard"]')
    tab.locator(".lm-TabBar-tabCloseIcon").click()
    expect(page.locator(DASHBOARD)).to_have_count(0)


def axe_violations(page, selector: str = DASHBOARD) -> list[dict]:
    """axe-core's WCAG 2 A/AA violations inside `selector` (contrast included)."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    return page.evaluate(
        """async sel => {
            const r = await axe.run(document.querySelector(sel),
                {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21aa']}});
            return r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
                nodes: v.nodes.slice(0, 5).map(n => n.target.join(' ') + ': ' +
                                                   (n.failureSummary || ''))}));
        }""", selector)


def workspace_keeps_dashboard(server: dict, api) -> tuple[bool, dict]:
    """Whether the server's copy of the workspace has the dashboard both tracked (what the
    restorer reopens) and in the main area's saved layout (where it goes); and that copy."""
    data = api(server, "GET", f"lab/api/workspaces/{WORKSPACE}")["data"]
    dock = ((data.get("layout-restorer:data") or {}).get("main") or {}).get("dock") or {}
    return RESTORER_NAME in data and RESTORER_NAME in json.dumps(dock), data


def wait_until_workspace_keeps_dashboard(page, server: dict, api, keeps: bool = True,
                                         timeout_s: float = 60) -> None:
    """Return once the server's workspace keeps the dashboard (or, with `keeps=False`, no
    longer does), so that a reload finds it so: JupyterLab saves the workspace some time
    after a change (debounced), and a reload restores only what was saved. Between looks at
    the server this waits on the page's workspace saves; a look follows each, and one every
    5 s (a save may land between a look and the wait)."""
    def is_workspace_save(response) -> bool:
        request = response.request
        return request.method == "PUT" and "/lab/api/workspaces/" in request.url

    deadline = time.monotonic() + timeout_s
    kept, data = workspace_keeps_dashboard(server, api)
    while kept != keeps:
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(
                f"the server's workspace {WORKSPACE!r} still "
                f"{'lacked' if keeps else 'kept'} the dashboard ({RESTORER_NAME}, tracked and "
                f"in the main area's layout) after {timeout_s:g} s: {data}")
        try:
            page.wait_for_event("response", predicate=is_workspace_save,
                                timeout=min(left, 5) * 1000)
        except PlaywrightTimeout:
            pass
        kept, data = workspace_keeps_dashboard(server, api)


def set_theme(page, server: dict, theme: str, api) -> None:
    api(server, "PUT", "lab/api/settings/@jupyterlab/apputils-extension:themes",
        {"raw": json.dumps({"theme": theme})})


def iso(t: datetime) -> str:
    return t.isoformat().replace("+00:00", "Z")


def big_dashboard(sites: list[str], rows: int, user: str = "me", mine_every: int = 997,
                  seed: int = 7, now: datetime | None = None) -> dict:
    """A dashboard answer with `rows` queue rows spread over `sites`: many users' jobs,
    pending and running, predictions from diamond or the scheduler; every `mine_every`-th
    row (and the fourth) is the user's; taken at `now` (else the wall clock's). Its shape is
    GET /diamond/api/dashboard's."""
    rnd = random.Random(seed)
    now = now or datetime.now(timezone.utc)
    out = []
    per = [rows // len(sites) + (1 if i < rows % len(sites) else 0) for i in range(len(sites))]
    k = 0
    for site, n in zip(sites, per, strict=True):
        queue = []
        for i in range(n):
            k += 1
            mine = i == 3 or k % mine_every == 0
            pending = rnd.random() < 0.7
            median = rnd.randint(30, 7200)
            src = rnd.choice(["calibrated", "calibrated", "scheduler"])
            queue.append({
                "id": str(100000 + k), "user": user if mine else f"user{rnd.randint(1, 300):03d}",
                "name": f"job-{k}", "partition": rnd.choice(["debug", "batch", "gpu"]),
                "nodes": rnd.randint(1, 4), "cpus": rnd.choice([1, 2, 4, 8, 16]),
                "gpus": rnd.choice([0, 0, 0, 1, 2]),
                "state": "PENDING" if pending else "RUNNING",
                "waited_s": rnd.randint(0, 20000),
                "running_s": None if pending else rnd.randint(0, 7200),
                "predicted_start": ({"median_s": median,
                                     "p90_s": median * 3 if src == "calibrated" else None,
                                     "source": src} if pending else None),
                "mine": mine, "job": f"{site}-{100000 + k}" if mine else None})
        out.append({"name": site, "scheduler": "slurm", "reachable": True, "error": None,
                    "taken_at": now.isoformat(),
                    "totals": {"nodes": 64, "cpus": 2048, "gpus": 32},
                    "busy": {"cpus": 1800, "gpus": 20}, "queue": queue})
    return {"generated": iso(now), "user": user, "sites": out}


def usage_series(site: str, hours: int, step_s: int = 300, now: datetime | None = None) -> dict:
    """`hours` of a site's usage points every `step_s`, the last at `now` (else the wall
    clock's)."""
    now = now or datetime.now(timezone.utc)
    n = hours * 3600 // step_s
    pts = []
    for i in range(n):
        t = now - timedelta(seconds=(n - 1 - i) * step_s)
        pts.append({"t": t.timestamp(), "busy_cpus": 1000 + (i * 37) % 1000,
                    "busy_gpus": (i * 7) % 32, "pending": 50 + (i * 13) % 400,
                    "running": 100 + i % 50})
    return {"site": site, "points": pts}


def serve_from_server(page, server: dict, dashboard: dict, name: str = "dashboard.json") -> int:
    """Have the real Jupyter server serve `dashboard` for the page's GET /dashboard: the
    answer is written under the server's root and the request is redirected to it (the bytes
    travel over HTTP from the server, as the route's would). Returns its size in bytes."""
    body = json.dumps(dashboard)
    (Path(server["root"]) / name).write_text(body)
    page.route("**/diamond/api/dashboard*",
               lambda route: route.continue_(url=f"{server['url']}/files/{name}"))
    return len(body.encode())


def serve_recorded(page, dashboard: dict, now: datetime | None = None) -> None:
    """Answer the dashboard's two routes from `dashboard` at the wire level (the page's
    requests never reach the server): for queues longer than a test bed's. The usage series
    end at `now` (else the wall clock's at each request)."""
    body = json.dumps(dashboard)
    page.route("**/diamond/api/dashboard*",
               lambda route: route.fulfill(status=200, body=body,
                                           content_type="application/json"))

    def usage(route) -> None:
        m = re.search(r"/sites/([^/]+)/usage\?hours=(\d+)", route.request.url)
        assert m, route.request.url
        route.fulfill(status=200, content_type="application/json",
                      body=json.dumps(usage_series(m.group(1), int(m.group(2)), now=now)))

    page.route("**/diamond/api/sites/*/usage*", usage)
