"""The sidebar and the dashboard in more cases a user meets that no other UI test shows, in a
real JupyterLab and chromium, without the test bed: a chain of three dependent jobs (one never
satisfiable), a workflow of thirty steps, a job name in Arabic, a job id holding a slash and a
percent sign (its Logs and Cancel requests), a cancel the server refuses, a thousand events in
a second, the job filters by keyboard only, forced colours, a server restart (the socket gone,
/state answering 503, then 200), a site whose clock runs ten minutes ahead (the sidebar's
timeline and the dashboard's usage chart) and a 250 px sidebar with its timeline.

As in `test_ui_unseen.py`, the sidebar's GETs (and its Logs and Cancel requests) are answered
at the wire level from the records below (the routes' shapes) and the event socket is served
by the test; the server itself is real (no sites file)."""

from __future__ import annotations

import re
import time
from datetime import datetime, timedelta, timezone
from urllib.parse import unquote

from dashboard_helpers import big_dashboard, open_from_palette, serve_recorded, usage_series
from playwright.sync_api import Page, expect
from sidebar_lab import (
    fresh_sidebar,  # noqa: F401 (the autouse `_fresh_sidebar` fixture)
    job_row,
    live_sidebar,
    module_page,  # noqa: F401 (the `page` fixture)
    narrowest_sidebar,
    new_lab_page,
    sidebar_panel,
    wider_than,
)
from test_sidebar import expect_focused
from wire_helpers import WireBase, healthy_site

NOW = datetime.now(timezone.utc)
SKEW = timedelta(minutes=10)  # beta's clock runs this far ahead
LAST_SEQ = 700
FIRST_ID, SECOND_ID, THIRD_ID = "alpha:301", "alpha:302", "alpha:303"
RTL_NAME = "محاكاة المناخ (تشغيل 3)"
RTL_ID = "alpha:310"
ODD_ID = "alpha:a/b%20c"  # what a site's scheduler may call a job: a slash, a percent sign
ODD_PATH = "alpha%3Aa%2Fb%2520c"  # its one path segment, encoded once
REFUSED_ID = "alpha:320"
REFUSAL = "alpha's scancel refused alpha:320: Job/step already completing or completed"
BURST_ID = "alpha:330"
SKEWED_ID = "beta:400"
WORKFLOW_ID = "wf-thirty"
STEPS = ["prepare", *(f"member-{i:02d}" for i in range(28)), "ensemble-mean"]


def _iso(t: datetime) -> str:
    return t.isoformat()


def _job(job_id: str, name: str, state: str, *, minutes_ago: float, ran: bool = True,
         ended: bool = False, reason: str | None = None, skew: timedelta = timedelta()) -> dict:
    site, native = job_id.split(":", 1)
    submitted = NOW + skew - timedelta(minutes=minutes_ago)
    started = submitted + timedelta(minutes=1) if ran else None
    return {"id": job_id, "site": site, "native_id": native, "name": name, "state": state,
            "submitted_at": _iso(submitted), "started_at": _iso(started) if started else None,
            "ended_at": _iso(started + timedelta(minutes=1)) if ended and started else None,
            "exit_code": {"COMPLETED": 0, "FAILED": 3}.get(state), "reason": reason,
            "placement": None, "origin": None}


JOBS = [
    _job(FIRST_ID, "first-stage", "FAILED", minutes_ago=30, ended=True),
    _job(SECOND_ID, "second-stage", "PENDING", minutes_ago=29, ran=False,
         reason="DependencyNeverSatisfied"),
    _job(THIRD_ID, "third-stage", "PENDING", minutes_ago=28, ran=False, reason="Dependency"),
    _job(RTL_ID, RTL_NAME, "RUNNING", minutes_ago=12),
    _job(ODD_ID, "odd-id", "RUNNING", minutes_ago=11),
    _job(REFUSED_ID, "ending-already", "RUNNING", minutes_ago=10),
    _job(BURST_ID, "chatty", "PENDING", minutes_ago=9, ran=False, reason="Priority"),
    # submitted 5 minutes ago by beta's clock, which runs 10 minutes ahead
    _job(SKEWED_ID, "on-a-fast-clock", "RUNNING", minutes_ago=5, skew=SKEW),
]
DEPENDS = {
    SECOND_ID: [{"job": FIRST_ID, "type": "afterok", "satisfied": False, "never": True,
                 "state": "FAILED"}],
    THIRD_ID: [{"job": SECOND_ID, "type": "afterok", "satisfied": False, "never": False,
                "state": "PENDING"}],
}
WORKFLOW = {"id": WORKFLOW_ID, "name": "thirty-member-ensemble", "state": "RUNNING",
            "steps": [{"name": name, "site": "alpha",
                       "job": f"alpha:{500 + i}" if i < 15 else None,
                       "state": "COMPLETED" if i == 0 else "RUNNING" if i < 15 else "PENDING",
                       "needs": [] if i == 0 else ["prepare"] if i < 29 else STEPS[1:29]}
                      for i, name in enumerate(STEPS)]}
STATE = {"sites": [healthy_site("alpha"), healthy_site("beta")], "jobs": JOBS,
         "jobs_total": len(JOBS), "tasks": [], "transfers": [], "events": [],
         "last_seq": LAST_SEQ, "error": None}


class Wire(WireBase):
    """The records' answers to the sidebar's GETs, each job's details (its `depends_on`), its
    logs and its cancel; the raw paths of the Logs and Cancel requests kept in `asked`.
    While `state_status` is not 200, GET state answers that status (counted in
    `refused_states`), as a server restarting behind a proxy does."""

    first_seq = LAST_SEQ

    def __init__(self, page: Page) -> None:
        super().__init__(page)
        self.jobs = {j["id"]: dict(j) for j in JOBS}
        self.asked: list[tuple[str, str]] = []
        self.state_status = 200
        self.refused_states = 0

    def _answer(self, route) -> None:
        path, query = self.request_of(route)
        method = route.request.method
        parts = path.split("/")
        if parts[0] == "jobs" and len(parts) == 3 and parts[2] in ("logs", "cancel"):
            self.asked.append((method, path))
            job_id = unquote(parts[1])
            if parts[2] == "logs":
                self.fulfill_json(route, {"stdout": f"output of {job_id}\n", "stderr": ""})
            elif job_id == REFUSED_ID:
                self.fulfill_json(route, {"message": REFUSAL}, status=409)
            else:
                self.jobs[job_id]["state"] = "CANCELLED"
                self.fulfill_json(route, self.jobs[job_id])
            return
        if method != "GET":
            route.continue_()
            return
        if path == "state":
            if self.state_status != 200:
                self.refused_states += 1
                self.fulfill_json(route, {"message": "Service Unavailable"},
                                  status=self.state_status)
                return
            body = {**STATE, "jobs": list(self.jobs.values()), "last_seq": self.last_seq}
        elif path == "events":
            body = self.replay_body(int(query.get("since", 0)))
        elif path == "jobs":
            body = {"jobs": [], "total": len(JOBS)}
        elif parts[0] == "jobs" and len(parts) == 2:
            job_id = unquote(parts[1])
            body = {**self.jobs[job_id], "depends_on": DEPENDS.get(job_id, [])}
        elif path == "workflows":
            body = {"workflows": [WORKFLOW]}
        else:
            self.answer_idle(route, path)
            return
        self.fulfill_json(route, body)

    def job_state(self, job_id: str, state: str, at: datetime, *, live: bool = True) -> dict:
        return self.send("job-state", {"kind": "job.state", "job_id": job_id, "state": state,
                                       "previous": None, "at": _iso(at)}, live=live)


def _new_page(browser, server, *, width: int = 1400) -> Page:
    def wire(page: Page) -> None:
        page.diamond_wire = Wire(page)  # type: ignore[attr-defined]

    return new_lab_page(browser, server, width=width, before_load=wire)


def _open_details(page: Page, job_id: str):
    row = job_row(page, job_id)
    row.locator(".jp-diamond-job-name").click()
    details = row.locator("[data-diamond-job-details]")
    expect(details).to_be_visible()
    return details


# -- dependencies and workflows -------------------------------------------------------------

def test_a_chain_of_three_jobs_shows_what_each_waits_for(page):
    """third waits on second (waiting), second on first, which failed: never satisfied."""
    third = _open_details(page, THIRD_ID)
    dep = third.locator(f'[data-diamond-dependency="{SECOND_ID}"]')
    expect(dep).to_have_attribute("data-diamond-dependency-state", "waiting")
    expect(dep).to_have_text(f"afterok {SECOND_ID} PENDING: waiting")
    second = _open_details(page, SECOND_ID)
    never = second.locator(f'[data-diamond-dependency="{FIRST_ID}"]')
    expect(never).to_have_attribute("data-diamond-dependency-state", "never")
    expect(never).to_have_text(f"afterok {FIRST_ID} FAILED: never satisfied")
    expect(never).to_have_class(re.compile("jp-diamond-error-text"))
    first = _open_details(page, FIRST_ID)
    expect(first.locator("[data-diamond-depends-on]")).to_have_count(0)


def test_a_workflow_of_thirty_steps_shows_each_step_in_its_layer(page):
    card = sidebar_panel(page).locator(f'[data-diamond-workflow="{WORKFLOW_ID}"]')
    expect(card).to_have_attribute("data-diamond-state", "RUNNING")
    steps = card.locator("[data-diamond-step]")
    expect(steps).to_have_count(30)
    layers = card.locator(".jp-diamond-dag-layer")
    expect(layers).to_have_count(3)
    expect(layers.nth(0).locator("[data-diamond-step]")).to_have_count(1)
    expect(layers.nth(1).locator("[data-diamond-step]")).to_have_count(28)
    expect(layers.nth(2).locator("[data-diamond-step]")).to_have_text(
        re.compile("ensemble-mean.*PENDING"))
    expect(card.locator('[data-diamond-step="member-13"]')).to_contain_text("alpha:514")
    expect(card.locator('[data-diamond-step="member-27"]')).to_have_attribute(
        "data-diamond-state", "PENDING")
    # the DAG scrolls within its card; the sidebar itself does not widen
    assert not wider_than(page, "#diamond-sidebar"), wider_than(page, "#diamond-sidebar")


# -- names and ids as sites give them ---------------------------------------------------------

def test_a_right_to_left_job_name_reads_right_to_left_whole(page):
    name = job_row(page, RTL_ID).locator(".jp-diamond-job-name")
    expect(name).to_have_text(RTL_NAME)
    # its own direction: the parenthesis closes at its left end, not mirrored onto the
    # badge's side, and the row's site and id stay in their places
    assert name.evaluate("e => getComputedStyle(e).direction") == "rtl"
    assert name.evaluate("e => getComputedStyle(e).unicodeBidi") in ("isolate", "plaintext")
    box, site = name.bounding_box(), job_row(page, RTL_ID).locator(
        ".jp-diamond-job-main > .jp-diamond-muted").bounding_box()
    assert box and site and box["x"] + box["width"] <= site["x"] + 1, (box, site)


def test_a_job_id_with_a_slash_and_percent_is_one_path_segment_for_its_logs(page):
    wire = page.diamond_wire
    row = job_row(page, ODD_ID)
    expect(row.locator(".jp-diamond-job-meta")).to_contain_text(ODD_ID)
    row.get_by_role("button", name="Show logs of odd-id").click()
    logs = page.locator(f'[data-diamond-logs="{ODD_ID}"]')
    expect(logs).to_contain_text(f"output of {ODD_ID}")
    assert ("GET", f"jobs/{ODD_PATH}/logs") in wire.asked, wire.asked


def test_a_job_id_with_a_slash_and_percent_is_one_path_segment_for_its_cancel(page):
    wire = page.diamond_wire
    row = job_row(page, ODD_ID)
    row.get_by_role("button", name="Cancel odd-id").click()
    dialog = page.locator(".jp-Dialog")
    expect(dialog).to_contain_text(ODD_ID)
    dialog.get_by_role("button", name="Cancel job").click()
    expect(row).to_have_attribute("data-diamond-state", "CANCELLED")
    assert ("POST", f"jobs/{ODD_PATH}/cancel") in wire.asked, wire.asked


def test_a_cancel_the_server_refuses_says_why_and_leaves_the_row(page):
    row = job_row(page, REFUSED_ID)
    row.get_by_role("button", name="Cancel ending-already").click()
    page.locator(".jp-Dialog").get_by_role("button", name="Cancel job").click()
    toast = page.locator(".jp-Notification-Toast-error, .Toastify__toast").filter(
        has_text="Could not cancel ending-already")
    expect(toast.first).to_contain_text(REFUSAL)
    expect(row).to_have_attribute("data-diamond-state", "RUNNING")
    expect(row.locator(".jp-diamond-badge")).to_have_text("RUNNING")
    assert ("POST", f"jobs/{REFUSED_ID.replace(':', '%3A')}/cancel") in page.diamond_wire.asked


# -- many events, the keyboard, forced colours --------------------------------------------------

def test_a_thousand_events_in_a_second_leave_the_page_responsive(page):
    wire = page.diamond_wire
    received = page.evaluate("() => window.__diamondStats.received")
    start = datetime.now(timezone.utc)
    t0 = time.monotonic()
    for i in range(999):
        wire.job_state(BURST_ID, "RUNNING" if i % 2 else "PENDING",
                       start + timedelta(milliseconds=i))
    wire.job_state(BURST_ID, "COMPLETED", start + timedelta(seconds=1))
    sent_in = time.monotonic() - t0
    # a click right after the burst is answered while the events are applied
    toggle = sidebar_panel(page).locator('[data-diamond-section="sites"] h3 button')
    clicked = time.monotonic()
    toggle.click(timeout=5_000)
    expect(toggle).to_have_attribute("aria-expanded", "false", timeout=5_000)
    answered_in = time.monotonic() - clicked
    toggle.click()
    expect(job_row(page, BURST_ID)).to_have_attribute("data-diamond-state", "COMPLETED")
    page.wait_for_function(f"() => window.__diamondStats.received >= {received + 1000}")
    assert answered_in < 5, (sent_in, answered_in)
    assert not page.diamond_errors, page.diamond_errors


def test_the_job_filters_by_keyboard_only(page):
    jobs = sidebar_panel(page).locator('[data-diamond-section="jobs"]')
    header = jobs.locator("h3 button")
    header.focus()
    expect_focused(page, header, "the Jobs header")
    site = jobs.get_by_role("combobox", name="Site")
    page.keyboard.press("Tab")
    expect_focused(page, site, "the Site filter, one Tab after the Jobs header")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    expect(site).to_have_value("beta")
    count = jobs.locator("[data-diamond-jobs-count]")
    expect(count).to_have_text(f"1 shown of {len(JOBS)} jobs")
    expect(jobs.locator("li[data-diamond-job]")).to_have_count(1)
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    search = jobs.get_by_role("searchbox", name="Filter jobs by name or id")
    expect_focused(page, search, "the name filter, two Tabs after the Site filter")
    page.keyboard.type("stage")
    expect(jobs).to_contain_text("No loaded job matches these filters.")
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Shift+Tab")
    expect_focused(page, site, "the Site filter, two Shift+Tabs back")
    page.keyboard.press("ArrowUp")
    page.keyboard.press("ArrowUp")
    expect(site).to_have_value("")
    expect(count).to_have_text(f"3 shown of {len(JOBS)} jobs")
    search.focus()
    page.keyboard.press("Control+a")
    page.keyboard.press("Backspace")
    expect(jobs.locator("li[data-diamond-job]")).to_have_count(len(JOBS))


def test_forced_colors_keep_each_state_visible(page):
    """With the system's colours forced (Windows high contrast), the state stays in the
    badge's text and the timeline's bars still differ by state."""
    page.emulate_media(forced_colors="active")
    try:
        badge = job_row(page, RTL_ID).locator(".jp-diamond-badge")
        expect(badge).to_have_text("RUNNING")
        ink, paper = badge.evaluate(
            "e => [getComputedStyle(e).color, getComputedStyle(e).backgroundColor]")
        assert ink != paper, (ink, paper)
        fills = page.evaluate("""() => {
            const out = {};
            for (const g of document.querySelectorAll('#diamond-sidebar [data-diamond-job-bar]')) {
                const seg = g.querySelector('rect.jp-diamond-seg') || g.querySelector('rect');
                out[g.getAttribute('data-diamond-state')] = getComputedStyle(seg).fill;
            }
            return out;
        }""")
        assert {"RUNNING", "FAILED"} <= set(fills), fills
        assert fills["RUNNING"] != fills["FAILED"], fills
    finally:
        page.emulate_media(forced_colors="none")


# -- the server restarting ------------------------------------------------------------------

def test_a_server_restart_503_then_200_keeps_the_rows_and_catches_up(bare_lab, browser):
    p = _new_page(browser, bare_lab)
    try:
        panel = live_sidebar(p)
        wire = p.diamond_wire
        wire.state_status = 503
        chip = panel.locator("[data-diamond-status]")
        with p.expect_response(lambda r: "/diamond/api/state" in r.url and r.status == 503,
                               timeout=60_000):
            wire.drop()
            expect(chip).not_to_have_attribute("data-diamond-status", "live")
            # while it restarts, a job ended: /state says so once it answers again
            wire.jobs[RTL_ID]["state"] = "COMPLETED"
            wire.job_state(RTL_ID, "COMPLETED", datetime.now(timezone.utc), live=False)
        assert wire.refused_states
        # what was shown stays shown, said to be out of date
        expect(job_row(p, ODD_ID)).to_have_attribute("data-diamond-state", "RUNNING")
        wire.state_status = 200
        expect(chip).to_have_attribute("data-diamond-status", "live", timeout=60_000)
        expect(job_row(p, RTL_ID)).to_have_attribute("data-diamond-state", "COMPLETED")
        expect(panel.locator('[data-diamond-message="error"]')).to_have_count(0)
        assert not p.diamond_errors, p.diamond_errors
    finally:
        p.context.close()


# -- a site's clock ahead of the browser's ----------------------------------------------------

def test_a_job_timed_by_a_fast_clock_stays_inside_the_timeline(page):
    row = job_row(page, SKEWED_ID)
    expect(row).to_have_attribute("data-diamond-state", "RUNNING")
    assert not re.search(r"-\d", row.inner_text()), row.inner_text()
    bar = sidebar_panel(page).locator(f'[data-diamond-job-bar="{SKEWED_ID}"]')
    expect(bar).to_have_count(1)
    inside = bar.evaluate("""g => {
        const svg = g.ownerSVGElement.getBoundingClientRect();
        return Array.from(g.querySelectorAll('rect')).map(r => {
            const b = r.getBoundingClientRect();
            return [b.left >= svg.left - 1, b.right <= svg.right + 1, b.width > 0];
        });
    }""")
    assert inside and all(all(x) for x in inside), inside


def test_dashboard_usage_of_a_site_ten_minutes_ahead_stays_inside_its_chart(bare_lab, browser):
    p = _new_page(browser, bare_lab)
    try:
        live_sidebar(p)
        serve_recorded(p, big_dashboard(["alpha", "beta"], 40))
        fast = usage_series("beta", 6, now=NOW + SKEW)
        p.route("**/diamond/api/sites/beta/usage*",
                lambda route: WireBase.fulfill_json(route, fast))
        open_from_palette(p)
        chart = p.locator('[data-diamond-util-chart="beta"]')
        expect(chart.locator("svg")).to_be_visible()
        expect(chart.locator('[data-diamond-series="busy_cpus"]')).to_have_attribute(
            "data-diamond-latest", str(fast["points"][-1]["busy_cpus"]))
        past_edge = chart.evaluate("""c => {
            const svg = c.querySelector('svg');
            const width = svg.viewBox.baseVal.width;
            const xs = [];
            for (const p of svg.querySelectorAll('path')) {
                for (const m of p.getAttribute('d').matchAll(/[ML]([-\\d.]+),/g)) {
                    xs.push(parseFloat(m[1]));
                }
            }
            return xs.filter(x => x > width - 4 + 0.05);
        }""")
        assert not past_edge, past_edge[:5]
    finally:
        p.context.close()


# -- a narrow sidebar with its timeline ---------------------------------------------------------

def test_a_250px_sidebar_keeps_the_timeline_inside(bare_lab, browser):
    p = _new_page(browser, bare_lab, width=900)
    try:
        panel = live_sidebar(p)
        narrowest_sidebar(p)
        timeline = panel.locator('[data-diamond-section="timeline"]')
        timeline.scroll_into_view_if_needed()
        bars = timeline.locator("[data-diamond-job-bar]")
        expect(bars.first).to_be_visible()
        right = p.evaluate(
            "() => document.getElementById('diamond-sidebar').getBoundingClientRect().right")
        edges = [b.bounding_box() for b in bars.all()]
        assert all(e and e["x"] + e["width"] <= right + 1 for e in edges), (right, edges)
        assert not wider_than(p, "#diamond-sidebar"), wider_than(p, "#diamond-sidebar")
    finally:
        p.context.close()
