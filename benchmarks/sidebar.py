"""The sidebar and the dashboard with a long history: first paint with 10,000 jobs, and 100
events per second for 30 s delivered to the page without losing one.

A real `jupyter lab` (the installed extension, the real test bed's sites) and Debian's
chromium. First paint = from the sidebar's GET /state request to the jobs list painted
(`window.__diamondStats.firstPaintMs`, measured in the page), over fresh page loads;
baseline: the same with an empty store. Events: a separate process applies 100 job
updates per second to the shared store; the server's store follower publishes them;
the page counts the distinct store seqs it received (`__diamondStats.seen`).

Dashboard (the main-area tab): GET /diamond/api/dashboard timed on the real route (the test
bed's queues), then first paint = from the dashboard's GET request to its queue tables
painted (`window.__diamondDashboard.firstPaintMs`) and navigation → painted, over full page
reloads (the layout restorer reopens it). Baseline: the real route with the empty store.
10,000 jobs: the big store plus a dashboard answer of `--queue-rows` queue rows over the
test bed's sites, answered at the wire level by the page (no test bed queue is that long;
`ui-tests/dashboard_helpers.big_dashboard`, the route's shape, served by the real Jupyter
server as a file); the usage routes are real.

    python -m benchmarks.sidebar --json [--jobs 10000 --rate 100 --seconds 30]
        [--queue-rows 10000] [--parts sidebar,events,dashboard]
"""

from __future__ import annotations

import multiprocessing as mp
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from . import common

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "ui-tests"))
from dashboard_helpers import big_dashboard, open_from_palette, serve_from_server  # noqa: E402

from conftest import CHROMIUM, CHROMIUM_ARGS, api, load_lab, start_lab, stop_lab  # noqa: E402

SITES = ("alpha", "beta", "gamma")
LIVE_SITE = "bench"  # not in the sites file: its RUNNING jobs are not monitored
LIVE_JOBS = 100
FINAL = ("COMPLETED", "COMPLETED", "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT")


def make_store(path: Path, n: int) -> list[str]:
    """`n` jobs through the Store's own API (intent, bind, states); returns the live ids."""
    from diamond_jupyter.model import JobState
    from diamond_jupyter.store import Store

    live: list[str] = []
    with Store(path) as st:
        for i in range(n):
            is_live = i >= n - LIVE_JOBS
            site = LIVE_SITE if is_live else SITES[i % len(SITES)]
            tok = f"bench{i:06d}"
            st.record_intent(site, tok, {"name": f"bench-{i:05d}", "script": "true"},
                             origin={"path": "history.ipynb", "cell_id": f"c{i % 50}"})
            job = st.bind_native_id(tok, str(1_000_000 + i))
            st.apply_state(job.id, JobState.RUNNING)
            if is_live:
                live.append(job.id)
            else:
                st.apply_state(job.id, FINAL[i % len(FINAL)], exit_code=0)
    return live


def writer(path: str, ids: list[str], rate: float, seconds: float, out: Any) -> None:
    """Apply `rate` updates per second (a new reason each: one job.updated event each)."""
    from diamond_jupyter.model import JobState
    from diamond_jupyter.store import Store

    seqs: list[int] = []
    last: dict[str, str] = {}
    with Store(path) as st:
        t0 = time.monotonic()
        total = int(rate * seconds)
        for k in range(total):
            due = t0 + k / rate
            if (d := due - time.monotonic()) > 0:
                time.sleep(d)
            jid, reason = ids[k % len(ids)], f"tick {k}"
            ev = st.apply_state(jid, JobState.RUNNING, reason=reason)
            if ev is not None and ev.seq is not None:
                seqs.append(ev.seq)
                last[jid] = reason
        elapsed = time.monotonic() - t0
    out.put({"seqs": seqs, "last": last, "elapsed_s": elapsed})


def state_timing(server: dict, n: int = 5) -> dict[str, float]:
    times, size = [], 0
    for _ in range(n):
        t = time.perf_counter()
        req = urllib.request.Request(f"{server['url']}/diamond/api/state?jobs=500&max_age=300",
                                     headers={"Authorization": f"token {server['token']}"})
        with urllib.request.urlopen(req, timeout=60) as r:
            size = len(r.read())
        times.append((time.perf_counter() - t) * 1000)
    return {"state_ms_median": statistics.median(times), "state_bytes": size}


def first_paints(browser: Any, server: dict, loads: int) -> dict[str, Any]:
    ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    page = ctx.new_page()
    load_lab(page, server)
    tab = page.locator('.jp-SideBar.jp-mod-left li[data-id="diamond-sidebar"]')
    if not page.locator("#diamond-sidebar").is_visible():
        tab.click()
    page.wait_for_selector('#diamond-sidebar [data-diamond-section="jobs"]', timeout=60_000)
    page.wait_for_timeout(1500)  # let the workspace save the open sidebar
    paints, navs = [], []
    for _ in range(loads):
        load_lab(page, server)
        page.wait_for_function("() => window.__diamondStats && "
                               "window.__diamondStats.firstPaintMs !== null", timeout=60_000)
        paints.append(page.evaluate("() => window.__diamondStats.firstPaintMs"))
        navs.append(page.evaluate(
            "() => performance.getEntriesByName('diamond-first-paint')[0].startTime"))
    # Panel open: hide the sidebar, then time the click until the job cards are shown.
    tab.click()
    page.wait_for_selector("#diamond-sidebar", state="hidden")
    t = time.perf_counter()
    tab.click()
    page.wait_for_selector("#diamond-sidebar [data-diamond-job], #diamond-sidebar "
                           '[data-diamond-section="jobs"] p', timeout=30_000)
    open_ms = (time.perf_counter() - t) * 1000
    shown = page.locator("#diamond-sidebar [data-diamond-job]").count()
    ctx.close()
    return {"paint_ms": paints, "paint_ms_median": statistics.median(paints),
            "paint_ms_max": max(paints), "nav_to_paint_ms_median": statistics.median(navs),
            "panel_open_ms": open_ms, "cards_in_dom": shown}


def dashboard_timing(server: dict, n: int = 5) -> dict[str, float]:
    """The real GET /diamond/api/dashboard (snapshots at most 15 s old, as the page asks)."""
    times, size = [], 0
    for _ in range(n):
        t = time.perf_counter()
        req = urllib.request.Request(f"{server['url']}/diamond/api/dashboard",
                                     headers={"Authorization": f"token {server['token']}"})
        with urllib.request.urlopen(req, timeout=120) as r:
            size = len(r.read())
        times.append((time.perf_counter() - t) * 1000)
    return {"dashboard_ms_median": statistics.median(times), "dashboard_bytes": size}


def dashboard_paints(browser: Any, server: dict, loads: int, rows: int) -> dict[str, Any]:
    """Open the dashboard, then reload the page `loads` times; with `rows` > 0 the page's
    GET /dashboard is answered with that many queue rows over the server's sites."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    page = ctx.new_page()
    body_bytes = None
    if rows:
        sites = [s["name"] for s in api(server, "GET", "diamond/api/dashboard")["sites"]]
        body_bytes = serve_from_server(page, server, big_dashboard(sites, rows))
    load_lab(page, server)
    t = time.perf_counter()
    open_from_palette(page)
    page.wait_for_function("() => window.__diamondDashboard && "
                           "window.__diamondDashboard.firstPaintMs !== null", timeout=60_000)
    open_ms = (time.perf_counter() - t) * 1000
    page.wait_for_timeout(1500)  # let the workspace save the open dashboard
    paints, navs = [], []
    for _ in range(loads):
        load_lab(page, server)
        page.wait_for_function("() => window.__diamondDashboard && "
                               "window.__diamondDashboard.firstPaintMs !== null",
                               timeout=60_000)
        paints.append(page.evaluate("() => window.__diamondDashboard.firstPaintMs"))
        navs.append(page.evaluate(
            "() => performance.getEntriesByName('diamond-dashboard-first-paint')[0].startTime"))
    stats = page.evaluate("() => ({...window.__diamondDashboard})")
    dom_rows = page.locator("[data-diamond-queue-row]").count()
    charts = page.locator("[data-diamond-util-chart]").count()
    ctx.close()
    return {"queue_rows": stats["rows"], "answer_bytes": body_bytes,
            "paint_ms": paints, "paint_ms_median": statistics.median(paints),
            "paint_ms_max": max(paints), "nav_to_paint_ms_median": statistics.median(navs),
            "open_ms": open_ms, "rows_in_dom": dom_rows, "charts": charts}


def event_storm(browser: Any, server: dict, store: Path, live: list[str], rate: float,
                seconds: float) -> dict[str, Any]:
    ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    page = ctx.new_page()
    load_lab(page, server)
    page.wait_for_function("() => window.__diamondStats && "
                           "window.__diamondStats.firstPaintMs !== null", timeout=60_000)
    page.wait_for_selector('#diamond-sidebar [data-diamond-status="live"]', timeout=60_000)
    before = page.evaluate("() => ({...window.__diamondStats})")
    q: Any = mp.get_context("spawn").Queue()
    proc = mp.get_context("spawn").Process(target=writer,
                                           args=(str(store), live, rate, seconds, q))
    proc.start()
    res = q.get(timeout=seconds * 4 + 60)
    proc.join()
    t_end = time.perf_counter()
    seqs = res["seqs"]
    lo, hi, n = min(seqs), max(seqs), len(seqs)
    page.wait_for_function(f"() => window.__diamondStats.seen({lo}, {hi}) >= {n}",
                           timeout=60_000, polling=100)
    lag_ms = (time.perf_counter() - t_end) * 1000
    page.wait_for_timeout(500)  # the last coalesced render
    after = page.evaluate("() => ({...window.__diamondStats})")
    seen = page.evaluate(f"() => window.__diamondStats.seen({lo}, {hi})")
    # What the page shows: each live job's card carries the last reason written for it.
    panel = page.locator("#diamond-sidebar")
    panel.get_by_label("Site", exact=True).select_option(LIVE_SITE)
    cards = page.evaluate("""() => Array.from(document.querySelectorAll(
        '#diamond-sidebar [data-diamond-job]')).map(el => [el.dataset.diamondJob,
        (el.querySelector('[data-diamond-reason]') || {}).textContent || null])""")
    wrong = [jid for jid, reason in cards if res["last"].get(jid) != reason]
    ctx.close()
    delta = {k: after[k] - before[k] for k in ("received", "applied", "duplicates", "gaps",
                                                "resyncs", "fetches", "renders")}
    return {"written": n, "write_rate_per_s": n / res["elapsed_s"], "seen": seen,
            "lost": n - seen, **{f"page_{k}": v for k, v in delta.items()},
            "cards_checked": len(cards), "cards_stale": len(wrong),
            "drain_after_last_write_ms": lag_ms}


def main() -> None:
    p = common.parser(__doc__.splitlines()[0])
    p.add_argument("--jobs", type=int, default=10_000)
    p.add_argument("--rate", type=float, default=100.0)
    p.add_argument("--seconds", type=float, default=30.0)
    p.add_argument("--loads", type=int, default=5)
    p.add_argument("--queue-rows", type=int, default=10_000)
    p.add_argument("--parts", default="sidebar,events,dashboard",
                   help="what to measure: sidebar, events, dashboard (comma-separated)")
    args = p.parse_args()
    parts = set(args.parts.split(","))
    config = Path(common.config_path(args.config))
    from playwright.sync_api import sync_playwright

    tmp = Path(tempfile.mkdtemp(prefix="diamond-bench-sidebar-"))
    t = time.perf_counter()
    store = tmp / "big.sqlite3"
    live = make_store(store, args.jobs)
    build_s = time.perf_counter() - t
    result: dict[str, Any] = {"jobs": args.jobs, "store_build_s": build_s}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for label, st in (("empty", tmp / "empty.sqlite3"), ("big", store)):
            proc, server = start_lab(tmp / label, diamond_config=config, store=st)
            try:
                api(server, "GET", "diamond/api/state")  # warm: snapshots, placement
                if "sidebar" in parts:
                    result[label] = {**state_timing(server), **first_paints(browser, server,
                                                                            args.loads)}
                if label == "big" and "events" in parts:
                    result["events"] = event_storm(browser, server, store, live, args.rate,
                                                   args.seconds)
                if "dashboard" in parts:
                    result[f"dashboard_{label}"] = {
                        **dashboard_timing(server),
                        **dashboard_paints(browser, server, args.loads,
                                           args.queue_rows if label == "big" else 0)}
            finally:
                stop_lab(proc)
        browser.close()
    result["budget_ms"] = 500
    md, checks = "", []
    big, empty, ev = result.get("big"), result.get("empty"), result.get("events")
    dash_empty, dash_big = result.get("dashboard_empty"), result.get("dashboard_big")
    if big and empty:
        result["paint_ratio_big_vs_empty"] = common.ratio(big["paint_ms_median"],
                                                          empty["paint_ms_median"], 1.0)
        checks.append(big["paint_ms_max"] <= 500)
        md += "## Sidebar: first paint and live updates\n\n" + common.markdown_table(
            ["store", "GET /state ms", "/state KB", "first paint ms (median)", "max",
             "nav→paint ms", "panel open ms", "cards in DOM"],
            [[k, r["state_ms_median"], r["state_bytes"] / 1024, r["paint_ms_median"],
              r["paint_ms_max"], r["nav_to_paint_ms_median"], r["panel_open_ms"],
              r["cards_in_dom"]] for k, r in (("empty", empty), (f"{args.jobs} jobs", big))])
        md += (f"\nFirst paint ratio {args.jobs} jobs / empty: "
               f"{result['paint_ratio_big_vs_empty']:.2f} (budget 500 ms).\n\n")
    if ev:
        checks += [ev["lost"] == 0, ev["cards_stale"] == 0]
        md += common.markdown_table(
            ["events written", "rate /s", "seen in page", "lost", "applied", "duplicates",
             "gaps", "/state reloads", "renders", "stale cards", "drain after last write ms"],
            [[ev["written"], ev["write_rate_per_s"], ev["seen"], ev["lost"],
              ev["page_applied"], ev["page_duplicates"], ev["page_gaps"],
              ev["page_fetches"], ev["page_renders"], ev["cards_stale"],
              ev["drain_after_last_write_ms"]]])
    if dash_empty and dash_big:
        checks.append(dash_big["paint_ms_max"] <= 500)
        md += ("\n## Dashboard: first paint on full page reloads\n\n" + common.markdown_table(
            ["case", "real GET /dashboard ms", "real answer KB", "queue rows",
             "answer painted KB", "first paint ms (median)", "max", "nav→paint ms",
             "open ms", "rows in DOM", "charts"],
            [[k, r["dashboard_ms_median"], r["dashboard_bytes"] / 1024, r["queue_rows"],
              (r["answer_bytes"] or r["dashboard_bytes"]) / 1024, r["paint_ms_median"],
              r["paint_ms_max"], r["nav_to_paint_ms_median"], r["open_ms"],
              r["rows_in_dom"], r["charts"]]
             for k, r in (("baseline: test bed queues, empty store", dash_empty),
                          (f"{dash_big['queue_rows']} queue rows, {args.jobs} jobs",
                           dash_big))]))
        md += "\nBudget 500 ms from the dashboard's request to its tables painted.\n"
    result["pass"] = all(checks)

    def plot(ax: Any) -> None:
        bars = []
        if big and empty:
            bars += [("sidebar\nempty", empty), (f"sidebar\n{args.jobs} jobs", big)]
        if dash_empty and dash_big:
            bars += [("dashboard\nbaseline", dash_empty),
                     (f"dashboard\n{dash_big['queue_rows']} rows", dash_big)]
        ax.bar([b[0] for b in bars], [b[1]["paint_ms_median"] for b in bars],
               color="#4a90d9")
        for i, (_, r) in enumerate(bars):
            ax.scatter([i] * len(r["paint_ms"]), r["paint_ms"], color="k", s=10, zorder=3)
        ax.axhline(500, color="r", ls="--", label="budget 500 ms")
        ax.set_ylabel("request → painted, full page reloads (ms)")
        ax.set_title("First paint" + (f"; {ev['written']} live events, {ev['lost']} lost"
                                      if ev else ""))
        ax.legend()

    common.emit("sidebar", args, result, md, plot)


if __name__ == "__main__":
    main()
