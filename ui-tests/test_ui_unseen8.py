"""The sidebar and the dashboard in more everyday cases no other UI test shows, in a real
JupyterLab 4 and chromium, without the test bed: a workflow whose step moved sites and one
handed back (its site left the sites file), in the light and the dark theme; a Flux array's
tasks on the timeline; a job whose site left the sites file; the page reloaded while a
submit's answer was on its way; the server going away and coming back with a job submitted
meanwhile; the dashboard opened twice; the queue's filter and a job's copy-id button used
with the keyboard alone; the sidebar at its narrowest with long site names.

The server is a real `jupyter lab` without a sites file; the page's requests to the
diamond routes get the records below (in those routes' shapes) and its event socket is the
test's, which sends the jobs' events."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from dashboard_helpers import DASHBOARD, big_dashboard, close_dashboard, serve_recorded
from playwright.sync_api import Page, expect
from sidebar_lab import (
    CONTRAST_JS,
    fresh_sidebar,  # noqa: F401 (the autouse `_fresh_sidebar` fixture)
    job_row,
    live_sidebar,
    module_page,  # noqa: F401 (the `page` fixture)
    narrowest_sidebar,
    new_lab_page,
    sidebar_panel,
    themed_sidebar,
    wider_than,
)
from wire_helpers import WireBase, healthy_site

NOW = datetime.now(timezone.utc).replace(microsecond=0)
LAST_SEQ = 300
# long names without a space: they must wrap, not widen the sidebar
SITES = ["alpha", "beta", "national-energy-research-scientific-computing-perlmutter-gpu",
         "tiger"]
GONE_SITE = "gamma-decommissioned"  # a site the sites file no longer lists


def _job(job_id: str, name: str, state: str = "RUNNING", minutes_ago: int = 10) -> dict:
    site, native = job_id.rsplit(":", 1)
    submitted = NOW - timedelta(minutes=minutes_ago)
    started = None if state == "PENDING" else submitted + timedelta(minutes=1)
    return {"id": job_id, "site": site, "native_id": native, "name": name, "state": state,
            "submitted_at": submitted.isoformat(),
            "started_at": started and started.isoformat(), "ended_at": None,
            "exit_code": None, "reason": None, "placement": None, "origin": None}


GONE_JOB = f"{GONE_SITE}:77"
# a Flux array of 8 tasks (Flux runs one job per task): its folded state is RUNNING
ARRAY_JOB = "tiger:f3Zk7"
ARRAY_TASKS = {"total": 8, "states": {"COMPLETED": 1, "PENDING": 4, "RUNNING": 3}}
JOBS = [_job("alpha:11", "prep"), _job("beta:12", "simulate"),
        _job(f"{SITES[2]}:13", "long-site-run"), _job(GONE_JOB, "left-behind"),
        {**_job(ARRAY_JOB, "sweep"), "array_tasks": ARRAY_TASKS}]
MOVED_WHY = "moved from alpha to beta: expected to end sooner there"
HANDED_WHY = (f"its site {GONE_SITE} is not in this server's sites file: not followed from "
              f"here; it is followed again by a server whose sites file lists {GONE_SITE}; "
              "`diamond workflow cancel wf-8` cancels the steps it reaches and names the "
              "others")
WORKFLOW = {"id": "wf-8", "name": "moved-and-handed-back", "state": "RUNNING",
            "reason": f"handed back: steps wait on {GONE_SITE}, which this sites file lacks",
            "steps": [
                {"name": "prep", "site": "alpha", "job": "alpha:11", "state": "COMPLETED",
                 "needs": [], "attempt": 0, "reason": None},
                {"name": "simulate", "site": "beta", "job": "beta:12", "state": "RUNNING",
                 "needs": ["prep"], "attempt": 1, "reason": MOVED_WHY},
                {"name": "archive", "site": GONE_SITE, "job": GONE_JOB, "state": "RUNNING",
                 "needs": ["prep"], "attempt": 0, "reason": HANDED_WHY}]}


class Wire(WireBase):
    """The records' answers to the sidebar's GETs; the event sockets served by the test.
    `jobs` is what GET state lists now (a test adds to it as a server's store would)."""

    first_seq = LAST_SEQ

    def __init__(self, page: Page) -> None:
        super().__init__(page)
        self.jobs = [dict(j) for j in JOBS]
        self.state_seq: int | None = None  # GET state's last_seq, when not the latest

    def _answer(self, route) -> None:
        path, query = self.request_of(route)
        if route.request.method != "GET":
            route.continue_()
        elif path == "state":
            self.fulfill_json(route, {
                "sites": [{**healthy_site(s), "scheduler": "flux" if s == "tiger" else "slurm"}
                          for s in SITES], "jobs": self.jobs,
                "jobs_total": len(self.jobs), "tasks": [], "transfers": [], "events": [],
                "last_seq": self.last_seq if self.state_seq is None else self.state_seq,
                "error": None})
        elif path == "events":
            self.fulfill_json(route, self.replay_body(int(query.get("since", 0))))
        elif path == "jobs":
            self.fulfill_json(route, {"jobs": [], "total": len(self.jobs)})
        elif path == "workflows":
            self.fulfill_json(route, {"workflows": [WORKFLOW]})
        else:
            self.answer_idle(route, path)

    def submitted(self, job: dict, previous_id: str, *, live: bool = True,
                  listed: bool = True) -> dict:
        """The store's record of `job` found for the provisional row `previous_id`: emitted
        (sent on the open sockets if `live`) and, if `listed`, added to GET state's jobs."""
        if listed:
            self.jobs.insert(0, job)
        return self.send("job-state", {"kind": "job.submitted", "job_id": job["id"],
                                       "previous_id": previous_id, "state": job["state"],
                                       "previous": None, "at": job["submitted_at"],
                                       "site": job["site"], "name": job["name"]}, live=live)


def _new_page(browser, server, **kwargs) -> Page:
    """A page on `server` with the sidebar's routes (and the dashboard's) answered, set
    before it loads."""
    def wire(page: Page) -> None:
        page.diamond_wire = Wire(page)  # type: ignore[attr-defined]
        serve_recorded(page, big_dashboard(SITES[:2], 60))

    return new_lab_page(browser, server, before_load=wire, **kwargs)


def _rows_of(page: Page, job_id: str):
    return sidebar_panel(page).locator(f'li[data-diamond-job="{job_id}"]')


def _tab_to(page: Page, selector: str, presses: int = 80) -> None:
    """Press Tab (only) until the focus is on `selector`'s element; fail after `presses`."""
    for _ in range(presses):
        if page.evaluate("s => !!document.activeElement?.matches(s)", selector):
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"{presses} Tabs never reached {selector}; the focus is on "
                         + page.evaluate("() => document.activeElement?.outerHTML.slice(0, 120)"))


# -- a workflow's steps that moved or were handed back --------------------------------------

def _workflow_card(page: Page):
    return sidebar_panel(page).locator(f'[data-diamond-workflow="{WORKFLOW["id"]}"]')


def test_a_moved_step_and_a_handed_back_step_say_why_in_plain_view(page):
    """The DAG shows the step that moved with why it moved, and the one left to a server
    whose sites file lists its site with why: as text on the step (read by a keyboard user,
    a screen reader and on paper), not only in a tooltip a pointer must hover; the
    workflow's own reason is said above its graph; a step with no reason says none."""
    card = _workflow_card(page)
    card.scroll_into_view_if_needed()
    moved = card.locator('[data-diamond-step="simulate"]')
    expect(moved).to_contain_text("beta")
    expect(moved.locator("[data-diamond-step-reason]")).to_have_text(MOVED_WHY)
    expect(moved.locator("[data-diamond-step-reason]")).to_be_visible()
    handed = card.locator('[data-diamond-step="archive"]')
    expect(handed.locator("[data-diamond-step-reason]")).to_have_text(HANDED_WHY)
    expect(handed.locator("[data-diamond-step-reason]")).to_be_visible()
    expect(card.locator('[data-diamond-step="prep"] [data-diamond-step-reason]')).to_have_count(0)
    expect(card.locator("[data-diamond-workflow-reason]")).to_have_text(WORKFLOW["reason"])
    # the reasons, long and without a pointer's help, stay inside their step's box
    inside = handed.evaluate("""s => { const r = s.querySelector('[data-diamond-step-reason]')
        .getBoundingClientRect(), b = s.getBoundingClientRect();
        return r.left >= b.left - 1 && r.right <= b.right + 1 && r.bottom <= b.bottom + 1; }""")
    assert inside
    assert page.diamond_errors == []


def test_the_step_reasons_read_clearly_in_the_dark_theme(bare_lab, browser):
    """In JupyterLab Dark, a step's reason and the workflow's reason keep a contrast of at
    least 4.5:1 (WCAG AA) with what is behind them."""
    with themed_sidebar(browser, bare_lab, _new_page) as (p, panel):
        reasons = panel.locator("[data-diamond-step-reason], [data-diamond-workflow-reason]")
        expect(reasons).to_have_count(3, timeout=30_000)
        ratios = reasons.evaluate_all(CONTRAST_JS + """els => els.map(e =>
            [e.textContent.slice(0, 30), ratio(getComputedStyle(e).color, behind(e))])""")
        low = [(text, round(r, 2)) for text, r in ratios if r < 4.5]
        assert not low, low
        assert p.diamond_errors == []


# -- a Flux array's tasks ------------------------------------------------------------------

def test_a_flux_arrays_bar_is_a_counted_group_of_its_tasks(page):
    """The array's row on the timeline counts its 8 tasks (×8 by its name) and draws a
    band per state, each as thick as its share (4 pending, 3 running, 1 completed), rather
    than one RUNNING bar claiming all; its label and focus say the counts."""
    bar = sidebar_panel(page).locator(f'[data-diamond-job-bar="{ARRAY_JOB}"]')
    bar.scroll_into_view_if_needed()
    expect(bar).to_have_attribute("data-diamond-array-tasks", "8")
    expect(bar.locator("text")).to_have_text("sweep ×8")
    expect(bar).to_have_attribute(
        "aria-label", re.compile(r"^sweep: RUNNING \(8 tasks: 4 PENDING, 3 RUNNING, "
                                 r"1 COMPLETED\), queued "))
    bands = bar.locator("[data-diamond-array-state]")
    expect(bands).to_have_count(3)
    heights = {b.get_attribute("data-diamond-array-state"): float(b.get_attribute("height"))
               for b in bands.all()}
    assert heights.keys() == ARRAY_TASKS["states"].keys()
    unit = heights["COMPLETED"]
    assert unit > 0
    for state, n in ARRAY_TASKS["states"].items():
        assert abs(heights[state] - n * unit) < 0.01, heights
    # a job that is no array keeps its one bar
    plain = sidebar_panel(page).locator('[data-diamond-job-bar="alpha:11"]')
    expect(plain.locator("[data-diamond-array-state]")).to_have_count(0)
    expect(plain).not_to_have_attribute("data-diamond-array-tasks", re.compile("."))
    bar.focus()
    tip = sidebar_panel(page).locator(f'[data-diamond-tooltip="{ARRAY_JOB}"]')
    expect(tip.locator("[data-diamond-array-tasks-said]")).to_have_text(
        "8 tasks: 4 PENDING, 3 RUNNING, 1 COMPLETED")
    assert page.diamond_errors == []


def test_a_flux_arrays_counts_follow_a_task_ending_without_a_reload(page):
    """A task ends while the array runs on: the server's job.updated carries the array's
    counts then, and the row's bands and label follow it, with no page load nor state
    read between (GET state still says the old counts until the test records the new)."""
    bar = sidebar_panel(page).locator(f'[data-diamond-job-bar="{ARRAY_JOB}"]')
    bar.scroll_into_view_if_needed()
    expect(bar).to_have_attribute("aria-label", re.compile(r"\(8 tasks: 4 PENDING, 3 RUNNING"))
    page.evaluate("() => { window.__sameArrayPage = true; }")
    wire = page.diamond_wire
    ended = {"total": 8, "states": {"COMPLETED": 2, "PENDING": 4, "RUNNING": 2}}
    wire.send("job-state", {"kind": "job.updated", "job_id": ARRAY_JOB, "site": "tiger",
                            "state": "RUNNING", "previous": None, "at": NOW.isoformat(),
                            "array_tasks": ended})
    expect(bar).to_have_attribute(
        "aria-label", re.compile(r"^sweep: RUNNING \(8 tasks: 4 PENDING, 2 COMPLETED, "
                                 r"2 RUNNING\), queued "))
    heights = {b.get_attribute("data-diamond-array-state"): float(b.get_attribute("height"))
               for b in bar.locator("[data-diamond-array-state]").all()}
    assert heights.keys() == ended["states"].keys()
    assert abs(heights["COMPLETED"] - heights["RUNNING"]) < 0.01, heights
    assert abs(heights["PENDING"] - 2 * heights["RUNNING"]) < 0.01, heights
    assert page.evaluate("() => window.__sameArrayPage === true")  # not reloaded
    # the store's record now, as a later state read (a reconnect, a reload) gives it
    next(j for j in wire.jobs if j["id"] == ARRAY_JOB)["array_tasks"] = ended
    assert page.diamond_errors == []


# -- a job whose site left the sites file ---------------------------------------------------

def test_a_job_whose_site_left_the_sites_file_keeps_one_row_with_its_details(page):
    """The job stays in the list, once, its state and id shown; its details open."""
    rows = _rows_of(page, GONE_JOB)
    expect(rows).to_have_count(1)
    expect(rows).to_have_attribute("data-diamond-state", "RUNNING")
    rows.scroll_into_view_if_needed()
    rows.locator(".jp-diamond-job-main").click()
    expect(rows.locator("[data-diamond-job-details]")).to_be_visible()
    expect(rows.locator("[data-diamond-copy-id]")).to_have_attribute(
        "data-diamond-copy-id", GONE_JOB)
    rows.locator(".jp-diamond-job-main").click()
    assert page.diamond_errors == []


# -- a page reload while a submit's answer travels; a server gone and back -----------------

def test_a_reload_while_a_submit_is_answered_shows_the_job_once(bare_lab, browser):
    """A submit's answer was lost and its provisional row is listed; the page reloads while
    the job is found: the reloaded page's GET state still lists the provisional row (read
    before the find), and the replay of what came after brings the found job
    (`job.submitted` naming the provisional id). It shows the job once, by its real id, one
    row and one bar, the provisional row gone, nothing else doubled."""
    p = _new_page(browser, bare_lab)
    try:
        live_sidebar(p)
        wire = p.diamond_wire
        provisional = {**_job("alpha:pending-tok1", "submitted-during-reload", "PENDING", 0),
                       "native_id": ""}
        wire.jobs.insert(0, provisional)
        wire.state_seq = wire.last_seq
        job = _job("alpha:99", "submitted-during-reload", "PENDING", minutes_ago=0)
        wire.submitted(job, provisional["id"], live=False, listed=False)
        p.reload()
        live_sidebar(p)
        expect(_rows_of(p, job["id"])).to_have_count(1, timeout=30_000)
        expect(_rows_of(p, provisional["id"])).to_have_count(0)
        rows = sidebar_panel(p).locator("li[data-diamond-job]", has_text=job["name"])
        expect(rows).to_have_count(1)
        for bar_id, bars in ((job["id"], 1), (provisional["id"], 0)):
            expect(sidebar_panel(p).locator(f'[data-diamond-job-bar="{bar_id}"]')
                   ).to_have_count(bars)
        for other in JOBS:
            expect(_rows_of(p, other["id"])).to_have_count(1)
        assert p.diamond_errors == []
    finally:
        p.context.close()


def test_the_server_gone_and_back_reconnects_without_doubled_rows(page):
    """The event socket closes (the server restarts); a job is submitted meanwhile. The
    sidebar says it is not live, reconnects by itself, shows the new job, and every job
    still has exactly one row."""
    wire = page.diamond_wire
    chip = sidebar_panel(page).locator("[data-diamond-status]")
    expect(chip).to_have_attribute("data-diamond-status", "live")
    wire.drop()
    expect(chip).not_to_have_attribute("data-diamond-status", "live")
    job = _job("beta:120", "while-restarting", "PENDING", minutes_ago=0)
    wire.submitted(job, "beta:pending-tok2", live=False)
    expect(chip).to_have_attribute("data-diamond-status", "live", timeout=60_000)
    expect(_rows_of(page, job["id"])).to_have_count(1, timeout=30_000)
    ids = sidebar_panel(page).locator("li[data-diamond-job]").evaluate_all(
        "rows => rows.map(r => r.getAttribute('data-diamond-job'))")
    assert len(ids) == len(set(ids)), ids
    assert set(ids) >= {j["id"] for j in JOBS} | {job["id"]}, ids
    assert page.diamond_errors == []


# -- keyboard only -------------------------------------------------------------------------

def test_a_job_id_is_copied_with_the_keyboard_alone(page):
    """Tab reaches the job list, the arrows a row, Enter opens it, Tab its copy-id button,
    Enter copies the id: no pointer needed."""
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    target = JOBS[1]["id"]
    _tab_to(page, "#diamond-sidebar li[data-diamond-job]")
    for _ in range(len(JOBS) + 2):
        if page.evaluate("id => document.activeElement.getAttribute('data-diamond-job') === id",
                         target):
            break
        page.keyboard.press("ArrowDown")
    row = job_row(page, target)
    expect(row).to_be_focused()
    page.keyboard.press("Enter")
    expect(row).to_have_attribute("data-diamond-details-open", "")
    _tab_to(page, f'[data-diamond-copy-id="{target}"]', presses=5)
    page.keyboard.press("Enter")
    expect(row.locator("[data-diamond-copy-id]")).to_have_attribute("data-diamond-copied", "")
    assert page.evaluate("() => navigator.clipboard.readText()") == target
    row.focus()
    page.keyboard.press("Enter")
    expect(row).not_to_have_attribute("data-diamond-details-open", "")


def test_the_queue_filter_is_used_with_the_keyboard_alone(page):
    """From the dashboard, Tab reaches a queue's filter; typing filters its rows; Tab goes
    on to the queue, whose arrows move its active row among the filtered ones; the filter
    emptied with the keyboard brings every row back."""
    sidebar_panel(page).locator("[data-diamond-open-dashboard]").click()
    queue = page.locator('[data-diamond-queue="alpha"]')
    expect(queue).to_have_attribute("data-diamond-rows", "30", timeout=30_000)
    page.locator(DASHBOARD).focus()
    box = '[data-diamond-queue-filter="alpha"]'
    _tab_to(page, box)
    page.keyboard.type("job-1")
    # job-1, job-11, job-13 ... of alpha's (every other row of 60 over two sites)
    expect(queue).not_to_have_attribute("data-diamond-rows", "30")
    rows = int(queue.get_attribute("data-diamond-rows"))
    assert 0 < rows < 30
    for name in queue.locator("[data-diamond-queue-row]").all_text_contents():
        assert "job-1" in name, name
    page.keyboard.press("Tab")
    expect(queue).to_be_focused()
    page.keyboard.press("ArrowDown")
    active = queue.get_attribute("aria-activedescendant")
    assert active, "ArrowDown made no row active"
    expect(page.locator(f"#{active}")).to_contain_text("job-1")
    page.keyboard.press("Shift+Tab")
    expect(page.locator(box)).to_be_focused()
    page.keyboard.press("Control+a")
    page.keyboard.press("Backspace")
    expect(queue).to_have_attribute("data-diamond-rows", "30")
    close_dashboard(page)
    assert page.diamond_errors == []


def test_the_dashboard_opened_twice_is_one_tab(page):
    """Opening the dashboard again (the sidebar's button, then the command) shows the one
    already open rather than a second."""
    button = sidebar_panel(page).locator("[data-diamond-open-dashboard]")
    button.click()
    expect(page.locator(DASHBOARD)).to_have_count(1, timeout=30_000)
    button.click()
    page.evaluate("() => window.jupyterapp?.commands.execute('diamond:open-dashboard')")
    tabs = page.locator('.lm-DockPanel-tabBar li.lm-TabBar-tab[data-id="diamond-dashboard"]')
    expect(tabs).to_have_count(1)
    expect(page.locator(DASHBOARD)).to_have_count(1)
    expect(page.locator(DASHBOARD)).to_be_visible()
    close_dashboard(page)
    assert page.diamond_errors == []


def test_the_dashboard_printed_lists_every_queue_row_whole_within_the_page(page):
    """Printed (`@media print`, at a page's width), each queue lists all its rows, not only
    the scrolled window's, in their order; every cell's text is whole in place (a long name
    wraps rather than ending in '…' with the rest on hover); no row reaches past the
    dashboard's right edge. Back on screen, the window of rows returns."""
    viewport = page.viewport_size
    sidebar_panel(page).locator("[data-diamond-open-dashboard]").click()
    queue = page.locator(f'{DASHBOARD} [data-diamond-queue="{SITES[0]}"]')
    expect(queue.locator("[data-diamond-queue-row]").first).to_be_visible(timeout=30_000)
    total = int(queue.get_attribute("data-diamond-rows"))
    assert queue.locator("[data-diamond-queue-row]").count() < total  # a window on screen
    try:
        page.set_viewport_size({"width": 720, "height": viewport["height"]})
        page.emulate_media(media="print")
        expect(queue.locator("[data-diamond-queue-row]")).to_have_count(total)
        cut = page.evaluate(
            """sel => {
                const dash = document.querySelector(sel).getBoundingClientRect();
                const out = [];
                for (const row of document.querySelectorAll(sel + ' [data-diamond-queue-row]')) {
                    const r = row.getBoundingClientRect();
                    if (r.right > dash.right + 0.5) out.push(['row past the edge', row.id]);
                    for (const cell of row.children) {
                        if (cell.scrollWidth > cell.clientWidth + 1
                                || cell.scrollHeight > cell.clientHeight + 1) {
                            out.push(['cut', cell.textContent]);
                        }
                    }
                }
                return out;
            }""", DASHBOARD)
        assert cut == []
        indexes = [int(i) for i in queue.locator("[data-diamond-queue-row]").evaluate_all(
            "rows => rows.map(r => r.getAttribute('aria-rowindex'))")]
        assert indexes == list(range(2, total + 2))
        tops = queue.locator("[data-diamond-queue-row]").evaluate_all(
            "rows => rows.map(r => r.getBoundingClientRect().top)")
        assert tops == sorted(tops) and len(set(tops)) == total  # one under another
    finally:
        page.emulate_media(media="screen")
        page.set_viewport_size(viewport)
    expect(queue.locator("[data-diamond-queue-row]")).not_to_have_count(total)
    close_dashboard(page)
    assert page.diamond_errors == []


# -- narrow -------------------------------------------------------------------------------

def test_the_narrowest_sidebar_keeps_long_site_names_and_reasons_inside(bare_lab, browser):
    """At the narrowest JupyterLab allows (250 px), a 60-character site name without a
    space, the workflow's reasons and the rows wrap inside the sidebar: nothing reaches past
    its right edge (the workflow's graph, which scrolls sideways, aside)."""
    p = _new_page(browser, bare_lab)
    try:
        panel = live_sidebar(p)
        expect(panel.locator(f'[data-diamond-site="{SITES[2]}"]').first).to_be_visible()
        expect(panel.locator("[data-diamond-workflow-reason]")).to_be_visible(timeout=30_000)
        narrowest_sidebar(p)
        p.wait_for_function("() => document.getElementById('diamond-sidebar')"
                            ".scrollWidth <= document.getElementById('diamond-sidebar')"
                            ".clientWidth + 1", timeout=10_000)
        assert wider_than(p) == []
        assert p.diamond_errors == []
    finally:
        p.context.close()
