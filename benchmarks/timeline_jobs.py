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
- select to next frame: a bar of the timeline's first chart focused (as a click or Tab
  does; its details open in the tooltip), from the focus to the frame after it, with the
  tooltip showing that job, `--clicks` times on different bars;
- long tasks: the page's tasks over 50 ms (PerformanceObserver `longtask`) during
  `--idle-s` seconds of the live timeline's once-a-second redraw, and the longest.

With `--before DIR` (the labextension of an earlier build: `DIR/package.json` and
`DIR/static`), the cases of 1,000 jobs are also measured on a second server serving it,
each load on both servers in a shuffled order, and the ratios before/now of the medians
and means are written with a plot:

    python -m benchmarks.timeline_jobs --json [--jobs 1000] [--loads 3] [--clicks 20]
        [--before /tmp/before/diamond_jupyter/labextension]
"""

from __future__ import annotations

import random
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

SELECT_JS = """async n => {
    const frame = () => new Promise(r => requestAnimationFrame(() => setTimeout(r)));
    const chart = document.querySelector('#diamond-sidebar [data-diamond-timeline]');
    chart.scrollIntoView();
    await frame();
    const bars = [...chart.querySelectorAll('[data-diamond-job-bar]')];
    const times = [];
    for (let i = 0; i < n; i++) {
        const bar = bars[i % bars.length];
        const id = bar.getAttribute('data-diamond-job-bar');
        const t0 = performance.now();
        bar.focus({preventScroll: true});
        await frame();
        times.push(performance.now() - t0);
        const tip = document.querySelector('#diamond-sidebar [data-diamond-tooltip]');
        if (!tip || tip.getAttribute('data-diamond-tooltip') !== id) {
            throw new Error(`no details of ${id} after its bar was focused`);
        }
    }
    document.activeElement.blur();
    return times;
}"""

LONG_TASKS_JS = """s => new Promise(done => {
    const seen = [];
    const obs = new PerformanceObserver(l => seen.push(...l.getEntries().map(e => e.duration)));
    obs.observe({type: 'longtask'});
    setTimeout(() => { obs.disconnect(); done(seen); }, s * 1000);
})"""


def one_load(browser: Any, server: dict, sites: list[str], jobs: list[dict[str, Any]],
             args: Any) -> dict[str, Any]:
    """One fresh page load's first paint, zoom clicks, bar selections and long tasks."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    try:
        page = ctx.new_page()
        Wire(page, sites, jobs)
        load_lab(page, server)
        tab = page.locator('.jp-SideBar.jp-mod-left li[data-id="diamond-sidebar"]')
        if not page.locator("#diamond-sidebar").is_visible():
            tab.click()
        page.wait_for_function("() => window.__diamondStats && "
                               "window.__diamondStats.firstPaintMs !== null", timeout=60_000)
        paint = page.evaluate("() => window.__diamondStats.firstPaintMs")
        page.wait_for_selector("#diamond-sidebar [data-diamond-job-bar]", state="attached",
                               timeout=60_000)
        return {"paint": paint,
                "bars": page.locator("#diamond-sidebar [data-diamond-job-bar]").count(),
                "clicks": page.evaluate(CLICK_JS, args.clicks),
                "selects": page.evaluate(SELECT_JS, args.clicks),
                "long_tasks": page.evaluate(LONG_TASKS_JS, args.idle_s)}
    finally:
        ctx.close()


def summary(loads: list[dict[str, Any]], jobs: int, sites: int, args: Any) -> dict[str, Any]:
    paints = [x["paint"] for x in loads]
    clicks = [t for x in loads for t in x["clicks"]]
    selects = [t for x in loads for t in x["selects"]]
    long_tasks = [t for x in loads for t in x["long_tasks"]]
    return {"jobs": jobs, "sites": sites, "bars_drawn": loads[-1]["bars"],
            "first_paint_ms": paints, "first_paint_ms_median": statistics.median(paints),
            "click_ms_median": statistics.median(clicks), "click_ms_mean": statistics.fmean(clicks),
            "click_ms_p95": common.pct(clicks, 95), "click_ms_max": max(clicks),
            "select_ms_median": statistics.median(selects),
            "select_ms_mean": statistics.fmean(selects),
            "select_ms_p95": common.pct(selects, 95), "select_ms_max": max(selects),
            "long_tasks": len(long_tasks), "long_task_ms_max": max(long_tasks, default=0.0),
            "idle_s": args.idle_s * len(loads)}


def measure(browser: Any, servers: dict[str, dict], sites: list[str],
            jobs: list[dict[str, Any]], args: Any) -> dict[str, dict[str, Any]]:
    """Each build's summary over `--loads` loads, the builds taking turns in a shuffled
    order at each load (the machine's load falls on both alike)."""
    loads: dict[str, list[dict[str, Any]]] = {name: [] for name in servers}
    for _ in range(args.loads):
        for name in random.sample(list(servers), len(servers)):
            loads[name].append(one_load(browser, servers[name], sites, jobs, args))
    return {name: summary(runs, len(jobs), len(sites), args) for name, runs in loads.items()}


def compare(before: dict[str, Any], now: dict[str, Any]) -> dict[str, Any]:
    """Before over now of each measured median and mean (above 1: now is faster)."""
    keys = ("click_ms_median", "click_ms_mean", "select_ms_median", "select_ms_mean",
            "first_paint_ms_median")
    return {k: {"before": before[k], "now": now[k], "ratio": common.ratio(before[k], now[k])}
            for k in keys}


def plot(comparisons: dict[str, dict[str, Any]]) -> Any:
    def draw(ax: Any) -> None:
        labels, befores, nows = [], [], []
        for case, c in comparisons.items():
            for key, what in (("click_ms_median", "zoom click"), ("select_ms_median", "select")):
                labels.append(f"{case}\n{what}")
                befores.append(c[key]["before"])
                nows.append(c[key]["now"])
        xs = range(len(labels))
        ax.bar([x - 0.2 for x in xs], befores, 0.4, label="before")
        ax.bar([x + 0.2 for x in xs], nows, 0.4, label="now")
        ax.axhline(BUDGET_MS, color="grey", linestyle="--", label=f"{BUDGET_MS} ms budget")
        ax.set_xticks(list(xs), labels, fontsize=7)
        ax.set_ylabel("ms to the next frame (median)")
        ax.set_title("Sidebar timeline with 1,000 running jobs")
        ax.legend()
    return draw


def main() -> None:
    p = common.parser(__doc__.splitlines()[0])
    p.add_argument("--jobs", type=int, default=1000)
    p.add_argument("--loads", type=int, default=3)
    p.add_argument("--clicks", type=int, default=20)
    p.add_argument("--idle-s", type=float, default=10.0)
    p.add_argument("--before", type=Path, default=None,
                   help="an earlier build's labextension directory, measured beside this one")
    args = p.parse_args()
    if args.before is not None and not (args.before / "package.json").exists():
        p.error(f"--before {args.before}: no package.json there (give a built labextension "
                "directory, e.g. CHECKOUT/diamond_jupyter/labextension after `jlpm build`)")
    from playwright.sync_api import sync_playwright

    procs = []
    servers: dict[str, dict] = {}
    cases: dict[str, Any] = {}
    comparisons: dict[str, Any] = {}
    try:
        for name, ext in (("now", None), ("before", args.before)):
            if name == "now" or ext is not None:
                tmp = Path(tempfile.mkdtemp(prefix=f"diamond-bench-timeline-{name}-"))
                proc, servers[name] = start_lab(tmp, diamond_config=None, labextension=ext)
                procs.append(proc)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            for n_sites in (10, 67):
                sites = [f"site-{i:02d}" for i in range(n_sites)]
                cases[f"baseline-{n_sites}"] = measure(
                    browser, {"now": servers["now"]}, sites, running_jobs(n_sites, sites),
                    args)["now"]
                both = measure(browser, servers, sites, running_jobs(args.jobs, sites), args)
                case = f"{args.jobs}-on-{n_sites}"
                cases[case] = both["now"]
                if "before" in both:
                    cases[f"{case}-before"] = both["before"]
                    comparisons[case] = compare(both["before"], both["now"])
            browser.close()
    finally:
        for proc in procs:
            stop_lab(proc)
    now_cases = {k: c for k, c in cases.items() if not k.endswith("-before")}
    result = {"cases": cases, "comparisons": comparisons, "budget_ms": BUDGET_MS,
              "within_budget": all(c["click_ms_p95"] <= BUDGET_MS
                                   and c["select_ms_p95"] <= BUDGET_MS
                                   for c in now_cases.values())}
    md = "## Sidebar timeline with many running jobs\n\n" + common.markdown_table(
        ["case", "jobs", "sites", "bars drawn", "first paint ms (median)",
         "zoom click→frame ms (median)", "mean", "p95", "select→frame ms (median)", "mean",
         "p95", "long tasks", "longest ms", "idle s"],
        [[k, c["jobs"], c["sites"], c["bars_drawn"], c["first_paint_ms_median"],
          c["click_ms_median"], c["click_ms_mean"], c["click_ms_p95"], c["select_ms_median"],
          c["select_ms_mean"], c["select_ms_p95"], c["long_tasks"], c["long_task_ms_max"],
          c["idle_s"]] for k, c in cases.items()])
    md += f"\nClick budget (p95): {BUDGET_MS} ms.\n"
    if comparisons:
        md += "\n### Before / now (same run, loads interleaved)\n\n" + common.markdown_table(
            ["case", "measure", "before ms", "now ms", "ratio before/now"],
            [[case, k, v["before"], v["now"], v["ratio"]]
             for case, c in comparisons.items() for k, v in c.items()])
    common.emit("timeline_jobs", args, result, md, plot(comparisons) if comparisons else None)


if __name__ == "__main__":
    main()
