"""The sidebar's timeline with 1,000 running jobs: how long the page takes to paint them and
to answer a click while the timeline redraws every second.

A real `jupyter lab` (no sites file) and Debian's chromium; the sidebar's GETs are answered
at the wire level by the page (`ui-tests/wire_helpers`, the routes' shapes) with `--jobs`
RUNNING jobs spread over `--sites` sites (the timeline draws each site's latest 15 rows:
67 sites draw every one of 1,000 jobs, 10 sites 150 of them), beside a baseline of one job
per site. For each case, over `--loads` fresh page loads:

- first paint: from the sidebar's GET /state request to its jobs painted
  (`window.__diamondStats.firstPaintMs`, measured in the page);
- click to next frame: the timeline's "Zoom out" then "Zoom in" clicked in the page (every
  chart drawn again), from the click to the frame after it, `--clicks` times;
- long tasks: the page's tasks over 50 ms (PerformanceObserver `longtask`) during
  `--idle-s` seconds of the live timeline's once-a-second redraw, and the longest.

    python -m benchmarks.timeline_jobs --json [--jobs 1000] [--loads 3] [--clicks 20]
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from . import common

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "ui-tests"))
from wire_helpers import WireBase, healthy_site  # noqa: E402

from conftest import CHROMIUM, CHROMIUM_ARGS, load_lab, start_lab, stop_lab  # noqa: E402

BUDGET_MS = 100  # a click answered within a tenth of a second feels immediate


def running_jobs(n: int, sites: list[str]) -> list[dict[str, Any]]:
    """`n` RUNNING jobs round-robin over `sites`, newest first, one a minute."""
    now = datetime.now(timezone.utc)
    jobs = []
    for i in range(n):
        site = sites[i % len(sites)]
        submitted = now - timedelta(minutes=1 + i)
        jobs.append({"id": f"{site}:{i}", "site": site, "native_id": str(i),
                     "name": f"sim-{i:04d}", "state": "RUNNING",
                     "submitted_at": submitted.isoformat(),
                     "started_at": (submitted + timedelta(seconds=30)).isoformat(),
                     "ended_at": None, "exit_code": None, "reason": None,
                     "placement": None, "origin": None})
    return jobs


class Wire(WireBase):
    """GET state with the jobs; GET events with nothing new; the rest passed on."""

    def __init__(self, page: Any, sites: list[str], jobs: list[dict[str, Any]]) -> None:
        super().__init__(page)
        self.state = {"sites": [healthy_site(s) for s in sites], "jobs": jobs,
                      "jobs_total": len(jobs), "tasks": [], "transfers": [], "events": [],
                      "last_seq": 0, "error": None}

    def _answer(self, route: Any) -> None:
        path, query = self.request_of(route)
        if route.request.method == "GET" and path == "state":
            self.fulfill_json(route, self.state)
        elif route.request.method == "GET" and path == "events":
            self.fulfill_json(route, self.replay_body(int(query.get("since", 0))))
        else:
            self.answer_idle(route, path)


CLICK_JS = """async n => {
    const frame = () => new Promise(r => requestAnimationFrame(() => setTimeout(r)));
    const button = name => document.querySelector(
        `#diamond-sidebar .jp-diamond-zoom button[aria-label="${name}"]`);
    const times = [];
    for (let i = 0; i < n; i++) {
        for (const name of ['Zoom out', 'Zoom in']) {
            const t0 = performance.now();
            button(name).click();
            await frame();
            times.push(performance.now() - t0);
        }
    }
    return times;
}"""

LONG_TASKS_JS = """s => new Promise(done => {
    const seen = [];
    const obs = new PerformanceObserver(l => seen.push(...l.getEntries().map(e => e.duration)));
    obs.observe({type: 'longtask'});
    setTimeout(() => { obs.disconnect(); done(seen); }, s * 1000);
})"""


def measure(browser: Any, server: dict, sites: list[str], jobs: list[dict[str, Any]],
            args: Any) -> dict[str, Any]:
    paints: list[float] = []
    clicks: list[float] = []
    long_tasks: list[float] = []
    bars = 0
    for _ in range(args.loads):
        ctx = browser.new_context(viewport={"width": 1400, "height": 900})
        page = ctx.new_page()
        Wire(page, sites, jobs)
        load_lab(page, server)
        tab = page.locator('.jp-SideBar.jp-mod-left li[data-id="diamond-sidebar"]')
        if not page.locator("#diamond-sidebar").is_visible():
            tab.click()
        page.wait_for_function("() => window.__diamondStats && "
                               "window.__diamondStats.firstPaintMs !== null", timeout=60_000)
        paints.append(page.evaluate("() => window.__diamondStats.firstPaintMs"))
        page.wait_for_selector("#diamond-sidebar [data-diamond-job-bar]", state="attached",
                               timeout=60_000)
        bars = page.locator("#diamond-sidebar [data-diamond-job-bar]").count()
        clicks += page.evaluate(CLICK_JS, args.clicks)
        long_tasks += page.evaluate(LONG_TASKS_JS, args.idle_s)
        ctx.close()
    return {"jobs": len(jobs), "sites": len(sites), "bars_drawn": bars,
            "first_paint_ms": paints, "first_paint_ms_median": statistics.median(paints),
            "click_ms_median": statistics.median(clicks), "click_ms_p95": common.pct(clicks, 95),
            "click_ms_max": max(clicks), "long_tasks": len(long_tasks),
            "long_task_ms_max": max(long_tasks, default=0.0),
            "idle_s": args.idle_s * args.loads}


def main() -> None:
    p = common.parser(__doc__.splitlines()[0])
    p.add_argument("--jobs", type=int, default=1000)
    p.add_argument("--loads", type=int, default=3)
    p.add_argument("--clicks", type=int, default=20)
    p.add_argument("--idle-s", type=float, default=10.0)
    args = p.parse_args()
    from playwright.sync_api import sync_playwright

    tmp = Path(tempfile.mkdtemp(prefix="diamond-bench-timeline-"))
    proc, server = start_lab(tmp, diamond_config=None)
    cases: dict[str, Any] = {}
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            for n_sites in (10, 67):
                sites = [f"site-{i:02d}" for i in range(n_sites)]
                cases[f"baseline-{n_sites}"] = measure(browser, server, sites,
                                                      running_jobs(n_sites, sites), args)
                cases[f"{args.jobs}-on-{n_sites}"] = measure(
                    browser, server, sites, running_jobs(args.jobs, sites), args)
            browser.close()
    finally:
        stop_lab(proc)
    result = {"cases": cases, "budget_ms": BUDGET_MS,
              "within_budget": all(c["click_ms_p95"] <= BUDGET_MS for c in cases.values())}
    md = "## Sidebar timeline with many running jobs\n\n" + common.markdown_table(
        ["case", "jobs", "sites", "bars drawn", "first paint ms (median)",
         "click→frame ms (median)", "p95", "max", "long tasks", "longest ms", "idle s"],
        [[k, c["jobs"], c["sites"], c["bars_drawn"], c["first_paint_ms_median"],
          c["click_ms_median"], c["click_ms_p95"], c["click_ms_max"], c["long_tasks"],
          c["long_task_ms_max"], c["idle_s"]] for k, c in cases.items()])
    md += f"\nClick budget (p95): {BUDGET_MS} ms.\n"
    common.emit("timeline_jobs", args, result, md)


if __name__ == "__main__":
    main()
