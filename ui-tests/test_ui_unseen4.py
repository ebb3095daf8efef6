"""The sidebar in more cases a user meets that no other UI test shows, in a real JupyterLab
and chromium, without the test bed: two hundred running jobs on ten sites (the timeline's
bars, by scrolling and by Tab), a site whose name is 80 characters long, every control's
name as a screen reader reads it, a job whose output holds HTML and script, 200% zoom, the
timeline's bars in the dark theme, and the real server stopped and started again under the
open page.

As in `test_ui_unseen.py`, the sidebar's GETs are answered at the wire level from the records
below (the routes' shapes) and the event socket is served by the test, except in the restart
case, where the socket is the real server's; the server itself is real (no sites file)."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from urllib.parse import unquote

from playwright.sync_api import Page, expect
from sidebar_lab import (
    CONTRAST_JS,
    fresh_scrolled_sidebar,  # noqa: F401 (the autouse `_fresh_sidebar` fixture)
    job_bars,
    job_row,
    live_sidebar,
    new_lab_page,
    sidebar_panel,
    themed_sidebar,
    timeline_page,  # noqa: F401 (the `page` fixture)
    wider_than,
)
from test_sidebar import expect_focused
from wire_helpers import WireBase

from conftest import start_lab, stop_lab

NOW = datetime.now(timezone.utc)
LONG_SITE = "national-lab-exascale-" + "partition-federated-" * 2 + "cluster-0123456789"
SITES = sorted([*(f"site-{i}" for i in range(9)), LONG_SITE])
PER_SITE = 20  # running jobs on each of SITES: 200 in all
TIMELINE_ROWS = 15  # Timeline.tsx's MAX_ROWS: the latest rows a site's chart draws
MIXED = "zz-mixed"  # one job in each other state, for the timeline's colours
MIXED_STATES = ["PENDING", "COMPLETED", "FAILED", "TIMEOUT", "CANCELLED"]
HTML_ID = "site-0:9000"
HTML_NAME = "renders-html"
HTML_STDOUT = ('<h1 id="pwn">title</h1><script>window.__diamondPwned=1</script>\n'
               '<img src=x onerror="window.__diamondPwned=2">\n')
HTML_STDERR = ('</pre><a id="pwnlink" href="javascript:window.__diamondPwned=3">click</a>'
               '<iframe srcdoc="<script>parent.__diamondPwned=4</script>"></iframe>\n')
LAST_SEQ = 900


def _iso(t: datetime) -> str:
    return t.isoformat()


def _site(name: str) -> dict:
    return {"name": name, "scheduler": "slurm", "reachable": True, "error": None,
            "queue_error": None, "nodes_total": 32, "nodes_free": 2, "cpus_total": 1024,
            "cpus_free": 64, "gpus_total": 0, "gpus_free": 0, "pending": 0,
            "running": PER_SITE, "my_jobs": PER_SITE, "typical_start_s": 60,
            "partitions": [{"name": "batch", "default": True, "max_time_s": 86400,
                            "total_nodes": 32}], "metadata": {}}


def _job(site: str, native: int, name: str, state: str = "RUNNING", *,
         minutes_ago: float) -> dict:
    submitted = NOW - timedelta(minutes=minutes_ago)
    ran = state not in ("PENDING",)
    ended = state in ("COMPLETED", "FAILED", "TIMEOUT", "CANCELLED")
    started = submitted + timedelta(minutes=1) if ran else None
    return {"id": f"{site}:{native}", "site": site, "native_id": str(native), "name": name,
            "state": state, "submitted_at": _iso(submitted),
            "started_at": _iso(started) if started else None,
            "ended_at": _iso(started + timedelta(minutes=2)) if ended and started else None,
            "exit_code": {"COMPLETED": 0, "FAILED": 1}.get(state),
            "reason": "Priority" if state == "PENDING" else None,
            "placement": None, "origin": None}


def _jobs() -> list[dict]:
    """Newest first: the job with HTML in its output, then 200 running jobs, then one of
    each other state on MIXED."""
    running = [_job(site, 100 * s + i, f"run-{s}-{i:02d}", minutes_ago=1 + i * 3 + s * 0.1)
               for i in range(PER_SITE) for s, site in enumerate(SITES)]
    mixed = [_job(MIXED, 700 + k, f"mixed-{state.lower()}", state, minutes_ago=90 + k)
             for k, state in enumerate(MIXED_STATES)]
    html = _job("site-0", 9000, HTML_NAME, minutes_ago=0.5)
    return [html, *running, *mixed]


JOBS = _jobs()
STATE = {"sites": [_site(s) for s in [*SITES, MIXED]], "jobs": JOBS, "jobs_total": len(JOBS),
         "tasks": [], "transfers": [], "events": [], "last_seq": LAST_SEQ, "error": None}


class Wire(WireBase):
    """The records' answers to the sidebar's GETs and to a job's logs (HTML_ID's hold HTML
    and script); the event sockets served by the test when `serve_sockets`."""

    first_seq = LAST_SEQ

    def _answer(self, route) -> None:
        path, query = self.request_of(route)
        parts = path.split("/")
        if route.request.method != "GET":
            route.continue_()
            return
        if path == "state":
            body = {**STATE, "last_seq": self.last_seq}
        elif path == "events":
            body = self.replay_body(int(query.get("since", 0)))
        elif path == "jobs":
            body = {"jobs": [], "total": len(JOBS)}
        elif parts[0] == "jobs" and len(parts) == 3 and parts[2] == "logs":
            job_id = unquote(parts[1])
            body = ({"stdout": HTML_STDOUT, "stderr": HTML_STDERR} if job_id == HTML_ID
                    else {"stdout": f"output of {job_id}\n", "stderr": ""})
        elif parts[0] == "jobs" and len(parts) == 2:
            job_id = unquote(parts[1])
            body = {**next(j for j in JOBS if j["id"] == job_id), "depends_on": []}
        else:
            self.answer_idle(route, path)
            return
        self.fulfill_json(route, body)


def _new_page(browser, server, *, width: int = 1400, height: int = 900, scale: float = 1,
              serve_sockets: bool = True) -> Page:
    def wire(page: Page) -> None:
        page.diamond_wire = Wire(page, serve_sockets=serve_sockets)  # type: ignore[attr-defined]

    return new_lab_page(browser, server, width=width, height=height, scale=scale,
                        before_load=wire)


# -- two hundred running jobs on the timeline ---------------------------------------------

def test_two_hundred_running_jobs_draw_the_latest_rows_and_say_how_many_are_left_out(page):
    for site in SITES:
        chart = sidebar_panel(page).locator(f'[data-diamond-timeline="{site}"]')
        expect(chart.locator("[data-diamond-job-bar]")).to_have_count(TIMELINE_ROWS)
        shown = chart.locator("figcaption [data-diamond-timeline-shown]")
        total = PER_SITE + (1 if site == "site-0" else 0)
        expect(shown).to_have_attribute("data-diamond-timeline-total", str(total))
        expect(shown).to_have_text(f" (latest {TIMELINE_ROWS} of {total}; all in Jobs)")
        expect(chart.locator("svg")).to_have_attribute(
            "aria-label", f"Timeline of the latest {TIMELINE_ROWS} of {total} jobs on {site}")
    # a site whose every job is drawn says nothing more
    mixed = sidebar_panel(page).locator(f'[data-diamond-timeline="{MIXED}"]')
    expect(mixed.locator("[data-diamond-timeline-shown]")).to_have_count(0)


def test_every_timeline_bar_is_one_tab_stop_in_the_order_drawn(page):
    order = job_bars(page).evaluate_all("els => els.map(e => e.dataset.diamondJobBar)")
    assert len(order) == TIMELINE_ROWS * len(SITES) + len(MIXED_STATES), len(order)
    first = job_bars(page).first
    first.focus()
    expect_focused(page, first, "the first bar")
    for n, expected in enumerate(order[1:], start=1):
        page.keyboard.press("Tab")
        try:
            page.wait_for_function(
                "id => document.activeElement?.dataset?.diamondJobBar === id", arg=expected,
                timeout=5_000)
        except Exception as err:
            got = page.evaluate("() => document.activeElement?.outerHTML?.slice(0, 160)")
            raise AssertionError(f"Tab {n}: focus on {got!r}, not the bar {expected}") from err


def test_the_last_bar_reached_by_keyboard_is_scrolled_into_view_with_its_details(page):
    last = job_bars(page).last
    last_id = last.get_attribute("data-diamond-job-bar")
    before_last = job_bars(page).nth(-2)
    before_last.focus()
    page.keyboard.press("Tab")
    expect_focused(page, last, "the last bar, one Tab after the one before")
    expect(last).to_be_in_viewport()
    tip = sidebar_panel(page).locator(f'[data-diamond-tooltip="{last_id}"]')
    expect(tip).to_be_visible()
    tip.scroll_into_view_if_needed()
    expect(tip).to_be_in_viewport()
    sizes = sidebar_panel(page).evaluate("e => [e.scrollHeight, e.clientHeight, e.scrollWidth, "
                                  "e.clientWidth]")
    assert sizes[0] > sizes[1], sizes  # the panel scrolls to reach it
    assert sizes[2] <= sizes[3] + 1, (sizes, wider_than(page))


# -- a site whose name is 80 characters ---------------------------------------------------

def test_an_80_character_site_name_is_cut_in_its_row_and_whole_in_its_title(page):
    assert len(LONG_SITE) == 80, len(LONG_SITE)
    name = sidebar_panel(page).locator(f'[data-diamond-site="{LONG_SITE}"] .jp-diamond-site-name')
    expect(name).to_have_text(LONG_SITE)
    expect(name).to_have_attribute("title", LONG_SITE)
    cut = name.evaluate("e => e.scrollWidth > e.clientWidth")
    assert cut, "the name fits: the test's sidebar is wider than it should be"


def test_an_80_character_site_name_leaves_its_rows_controls_inside_the_sidebar(page):
    row = sidebar_panel(page).locator(f'[data-diamond-site="{LONG_SITE}"]')
    toggle = row.get_by_role("button", name=f"Show partitions of {LONG_SITE}")
    expect(toggle).to_be_visible()
    toggle.click()
    expect(row.locator('[data-diamond-partition="batch"]')).to_be_visible()
    row.get_by_role("button", name=f"Hide partitions of {LONG_SITE}").click()
    expect(row.locator('[data-diamond-partition="batch"]')).to_have_count(0)
    expect(row.get_by_role("img", name="reachable", exact=True)).to_be_visible()
    assert not wider_than(page), wider_than(page)


def test_an_80_character_site_name_captions_its_timeline_whole_inside_the_sidebar(page):
    chart = sidebar_panel(page).locator(f'[data-diamond-timeline="{LONG_SITE}"]')
    caption = chart.locator("figcaption")
    expect(caption).to_contain_text(LONG_SITE)
    caption.scroll_into_view_if_needed()
    right = sidebar_panel(page).evaluate("e => e.getBoundingClientRect().right")
    box = caption.bounding_box()
    assert box and box["x"] + box["width"] <= right + 1, (box, right)
    bar = chart.locator("[data-diamond-job-bar]").first
    expect(bar).to_have_attribute("aria-label", re.compile(r"^run-\d-\d\d: RUNNING, queued "))


# -- what a screen reader reads -----------------------------------------------------------

NAMES_JS = """() => {
    const text = e => (e?.textContent || '').replace(/\\s+/g, ' ').trim();
    const nameOf = e => {
        const label = e.getAttribute('aria-label');
        if (label && label.trim()) return label.trim();
        const by = e.getAttribute('aria-labelledby');
        if (by) {
            return by.split(/\\s+/).map(id => text(document.getElementById(id))).join(' ').trim();
        }
        if (e.labels && e.labels.length) return Array.from(e.labels).map(text).join(' ').trim();
        return text(e) || (e.getAttribute('title') || '').trim();
    };
    const controls = document.querySelectorAll(
        '#diamond-sidebar :is(button, [role=button], a[href], input, select, textarea, summary, ' +
        '[tabindex]:not([tabindex="-1"]))');
    return Array.from(controls).filter(e => e.getClientRects().length).map(e => [
        e.tagName.toLowerCase() + (e.getAttribute('role') ? `[${e.getAttribute('role')}]` : ''),
        nameOf(e), e.outerHTML.slice(0, 120)]);
}"""


def test_every_control_in_the_sidebar_has_a_name_a_screen_reader_reads(page):
    controls = page.evaluate(NAMES_JS)
    assert len(controls) > 150, len(controls)  # the bars, the rows and their buttons
    unnamed = [html for _, name, html in controls if not name]
    assert unnamed == [], unnamed[:10]
    # a name made only of a symbol ("+", "−", "×", "▸") says nothing when read out
    symbols = [(name, html) for _, name, html in controls if not re.search(r"\w", name)]
    assert symbols == [], symbols[:10]


def test_each_job_rows_buttons_name_the_job_they_act_on(page):
    rows = sidebar_panel(page).locator("li[data-diamond-job]")
    expect(rows.first).to_be_visible()
    checked = 0
    for row in rows.all()[:40]:
        name = row.locator(".jp-diamond-job-name").inner_text()
        labels = row.locator("button").evaluate_all(
            "els => els.map(e => e.getAttribute('aria-label') || e.textContent.trim())")
        actions = [x for x in labels if x.startswith(("Cancel", "Show logs"))]
        assert actions and all(x.endswith(name) for x in actions), (name, labels)
        checked += 1
    assert checked >= 20, checked


# -- a job whose output is HTML -------------------------------------------------------------

def _open_logs(page: Page, job_id: str, name: str):
    row = job_row(page, job_id)
    row.get_by_role("button", name=f"Show logs of {name}").click()
    logs = page.locator(f'[data-diamond-logs="{job_id}"]')
    expect(logs.get_by_label("standard output")).to_be_visible()
    return logs


def test_html_and_script_in_a_jobs_output_are_shown_as_the_text_it_wrote(page):
    logs = _open_logs(page, HTML_ID, HTML_NAME)
    out = logs.get_by_label("standard output")
    assert out.evaluate("e => e.textContent") == HTML_STDOUT
    assert logs.locator("h1, script, img").count() == 0
    assert page.locator("#pwn").count() == 0
    assert page.evaluate("() => window.__diamondPwned") is None


def test_output_that_closes_its_pre_opens_no_link_nor_frame(page):
    logs = _open_logs(page, HTML_ID, HTML_NAME)
    err = logs.get_by_label("standard error")
    expect(err).to_have_text(HTML_STDERR.strip())
    assert err.evaluate("e => e.tagName") == "PRE"
    assert logs.locator("a, iframe").count() == 0
    assert page.locator("#pwnlink, iframe[srcdoc]").count() == 0
    assert page.evaluate("() => window.__diamondPwned") is None


# -- 200% zoom ------------------------------------------------------------------------------

def test_zoom_200_percent_reaches_the_timelines_zoom_and_a_jobs_logs_by_keyboard(
        bare_lab, browser):
    """At 200% (half the CSS pixels, twice the device pixels): the timeline's Zoom out
    button and a job's Show logs are reached and used by the keyboard, and what they open
    is in view; nothing passes the sidebar's right edge."""
    p = _new_page(browser, bare_lab, width=700, height=450, scale=2)
    try:
        panel = live_sidebar(p)
        zoom_out = panel.get_by_role("button", name="Zoom out")
        zoom_out.focus()
        expect_focused(p, zoom_out, "Zoom out")
        expect(zoom_out).to_be_in_viewport()
        span = panel.locator("[data-diamond-zoom]")
        p.keyboard.press("Enter")
        expect(span).to_have_attribute("data-diamond-zoom", "5")
        logs_button = job_row(p, HTML_ID).get_by_role("button", name=f"Show logs of {HTML_NAME}")
        logs_button.focus()
        expect_focused(p, logs_button, "Show logs")
        expect(logs_button).to_be_in_viewport()
        p.keyboard.press("Enter")
        out = p.locator(f'[data-diamond-logs="{HTML_ID}"]').get_by_label("standard output")
        expect(out).to_be_visible()
        out.scroll_into_view_if_needed()
        expect(out).to_be_in_viewport()
        assert not wider_than(p), wider_than(p)
        assert not p.diamond_errors, p.diamond_errors
    finally:
        p.context.close()


# -- the dark theme ---------------------------------------------------------------------------

def test_the_timelines_bars_of_every_state_stand_out_from_the_dark_panel(bare_lab, browser):
    """In JupyterLab Dark each bar the timeline draws (the running part, and the queued part
    of a job still waiting) differs from the panel behind it by at least 3:1 (WCAG 1.4.11)."""
    with themed_sidebar(browser, bare_lab, _new_page) as (_, panel):
        chart = panel.locator(f'[data-diamond-timeline="{MIXED}"]')
        expect(chart.locator("[data-diamond-job-bar]")).to_have_count(len(MIXED_STATES))
        bars = panel.locator("[data-diamond-job-bar]")
        ratios = bars.evaluate_all(CONTRAST_JS + """els => els.map(g => {
            const seg = g.querySelector('rect.jp-diamond-seg') || g.querySelector('rect');
            return [g.dataset.diamondState, ratio(getComputedStyle(seg).fill,
                                                  behind(g.ownerSVGElement))];
        })""")
        seen = {state for state, _ in ratios}
        assert {"RUNNING", *MIXED_STATES} <= seen, seen
        low = sorted({(s, round(r, 2)) for s, r in ratios if r < 3})
        assert not low, low


# -- the real server stopped and started again ------------------------------------------------

def test_after_the_real_server_restarts_the_sidebar_is_live_again_with_the_same_jobs(
        tmp_path, browser):
    """Its own `jupyter lab` (the event socket is that server's): stopped under the open
    page, the sidebar says it is not live and keeps its rows; started again on the same port
    and token, the sidebar reconnects by itself and shows the same jobs."""
    proc, server = start_lab(tmp_path, diamond_config=None)
    p = None
    try:
        p = _new_page(browser, server, serve_sockets=False)
        panel = live_sidebar(p)
        rows = panel.locator("li[data-diamond-job]")
        expect(rows.first).to_be_visible()
        before = rows.evaluate_all("els => els.map(e => [e.dataset.diamondJob, "
                                   "e.dataset.diamondState])")
        chip = panel.locator("[data-diamond-status]")
        stop_lab(proc)
        expect(chip).not_to_have_attribute("data-diamond-status", "live", timeout=60_000)
        assert rows.evaluate_all("els => els.map(e => [e.dataset.diamondJob, "
                                 "e.dataset.diamondState])") == before
        port = int(server["url"].rsplit(":", 1)[1])
        proc, _ = start_lab(tmp_path, diamond_config=None, port=port, token=server["token"])
        expect(chip).to_have_attribute("data-diamond-status", "live", timeout=90_000)
        expect(rows.first).to_be_visible()
        after = rows.evaluate_all("els => els.map(e => [e.dataset.diamondJob, "
                                  "e.dataset.diamondState])")
        assert after == before
        # While the server is down, JupyterLab's own requests may reject unhandled with a bare
        # "Failed to fetch" (no frame of ours: the extension's requests fail as "Network
        # error: ..." and are handled); any error from the extension still fails the test.
        ours = [(m, st) for m, st in zip(p.diamond_errors, p.diamond_error_stacks,
                                             strict=True)
                if not (m == "Failed to fetch" and "diamond" not in st.lower())]
        assert not ours, ours
    finally:
        if p is not None:
            p.context.close()
        stop_lab(proc)
