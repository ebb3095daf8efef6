"""The sidebar and the dashboard in more everyday cases no other UI test shows, in a real
JupyterLab 4 and chromium, without the test bed: the sidebar collapsed and reopened, a job
renamed and one resubmitted, the browser zoomed to 200%, a site whose queue holds 5,000 jobs
(sorted and filtered), a job id copied from its row, forced colours (Windows' high contrast),
a job ending while its details are open, the sidebar docked on the right and JupyterLab's
simple mode.

The server is a real `jupyter lab` without a sites file; the page's requests to the
diamond routes get the records below (in those routes' shapes) and its event socket is the
test's, which sends the jobs' events."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

import pytest
from dashboard_helpers import DASHBOARD, big_dashboard, close_dashboard, serve_recorded
from playwright.sync_api import Page, expect
from sidebar_lab import (
    fresh_sidebar,  # noqa: F401 (the autouse `_fresh_sidebar` fixture)
    job_bars,
    job_row,
    live_sidebar,
    module_page,  # noqa: F401 (the `page` fixture)
    new_lab_page,
    sidebar_panel,
    wider_than,
)
from wire_helpers import WireBase, healthy_site

NOW = datetime.now(timezone.utc).replace(microsecond=0)
SITES = [f"site-{i:02d}" for i in range(12)]
LAST_SEQ = 700
QUEUE_SITE = "site-00"


def _job(job_id: str, name: str, state: str = "RUNNING", minutes_ago: int = 20) -> dict:
    site, native = job_id.split(":")
    submitted = NOW - timedelta(minutes=minutes_ago)
    started = None if state == "PENDING" else submitted + timedelta(minutes=1)
    ended = started + timedelta(minutes=3) if state in ("COMPLETED", "FAILED") else None
    return {"id": job_id, "site": site, "native_id": native, "name": name, "state": state,
            "submitted_at": submitted.isoformat(), "started_at": started and started.isoformat(),
            "ended_at": ended and ended.isoformat(),
            "exit_code": {"COMPLETED": 0, "FAILED": 1}.get(state), "reason": None,
            "placement": None, "origin": None}


RENAMED_ID = "site-01:301"
RESUBMITTED_ID = "site-02:302"
ENDING_ID = "site-03:303"
COPIED_ID = "site-04:304"
FAILED_ID = "site-05:305"
# a job on every site, and enough rows that the sidebar scrolls
JOBS = ([_job(RENAMED_ID, "first-name"), _job(RESUBMITTED_ID, "relax-step"),
         _job(ENDING_ID, "ends-while-open"), _job(COPIED_ID, "copy-my-id"),
         _job(FAILED_ID, "broke", "FAILED")]
        + [_job(f"{SITES[6 + i % 6]}:{400 + i}", f"filler-{i:02d}", minutes_ago=30 + i)
           for i in range(30)])


class Wire(WireBase):
    """The records' answers to the sidebar's GETs; the event sockets served by the test."""

    first_seq = LAST_SEQ

    def _answer(self, route) -> None:
        path, query = self.request_of(route)
        if route.request.method != "GET":
            route.continue_()
        elif path == "state":
            self.fulfill_json(route, {
                "sites": [healthy_site(s) for s in SITES], "jobs": JOBS,
                "jobs_total": len(JOBS), "tasks": [], "transfers": [], "events": [],
                "last_seq": self.last_seq, "error": None})
        elif path == "events":
            self.fulfill_json(route, self.replay_body(int(query.get("since", 0))))
        elif path == "jobs":
            self.fulfill_json(route, {"jobs": [], "total": len(JOBS)})
        else:
            self.answer_idle(route, path)

    def job_event(self, job_id: str, state: str, kind: str = "job.state", **fields) -> dict:
        return self.send("job-state", {"kind": kind, "job_id": job_id, "state": state,
                                       "previous": None,
                                       "at": datetime.now(timezone.utc).isoformat(), **fields})


def _new_page(browser, server, *, queue_rows: int = 0, **kwargs) -> Page:
    """A page on `server` with the sidebar's routes answered (and, with `queue_rows`, the
    dashboard's: that many rows on QUEUE_SITE), set before it loads (a dashboard the
    workspace restores asks at once)."""
    def wire(page: Page) -> None:
        page.diamond_wire = Wire(page)  # type: ignore[attr-defined]
        if queue_rows:
            serve_recorded(page, big_dashboard([QUEUE_SITE], queue_rows))

    return new_lab_page(browser, server, before_load=wire, **kwargs)


def _sidebar_tab(page: Page):
    return page.locator('.jp-SideBar li[data-id="diamond-sidebar"]')


def _bar(page: Page, job_id: str):
    return sidebar_panel(page).locator(f'[data-diamond-job-bar="{job_id}"]')


# -- collapsed and reopened --------------------------------------------------------------------

def test_the_sidebar_collapsed_and_reopened_keeps_its_scroll_and_the_open_details(page):
    panel = sidebar_panel(page)
    row = job_row(page, FAILED_ID)
    row.locator(".jp-diamond-job-main").click()
    expect(row).to_have_attribute("data-diamond-details-open", "")
    top = panel.evaluate("e => { e.scrollTop = 420; return e.scrollTop; }")
    assert top > 200, "the sidebar does not scroll: no scroll to keep"
    _sidebar_tab(page).click()
    expect(panel).to_be_hidden()
    _sidebar_tab(page).click()
    expect(panel).to_be_visible()
    page.wait_for_function("t => Math.abs(document.getElementById('diamond-sidebar').scrollTop"
                           " - t) <= 1", arg=top, timeout=5_000)
    expect(row).to_have_attribute("data-diamond-details-open", "")


# -- renamed, resubmitted ----------------------------------------------------------------------

def test_a_renamed_job_shows_its_new_name_in_its_row_and_on_its_bar(page):
    page.diamond_wire.job_event(RENAMED_ID, "RUNNING", name="second-name")
    row = job_row(page, RENAMED_ID)
    expect(row.locator(".jp-diamond-job-name")).to_have_text("second-name")
    bar = _bar(page, RENAMED_ID)
    expect(bar.locator("text")).to_have_text("second-name")
    expect(bar).to_have_attribute("aria-label", re.compile(r"^second-name: RUNNING"))
    assert "second-name (" in bar.locator("title").text_content()


def test_a_resubmitted_job_gets_its_own_row_and_bar_beside_the_first(page):
    new_id = "site-02:399"
    page.diamond_wire.job_event(RESUBMITTED_ID, "CANCELLED")
    page.diamond_wire.job_event(new_id, "PENDING", kind="job.submitted", site="site-02",
                                native_id="399", name="relax-step",
                                submitted_at=datetime.now(timezone.utc).isoformat())
    expect(job_row(page, new_id)).to_have_attribute("data-diamond-state", "PENDING")
    expect(job_row(page, RESUBMITTED_ID)).to_have_attribute("data-diamond-state", "CANCELLED")
    rows = sidebar_panel(page).locator("li[data-diamond-job]")
    assert rows.first.get_attribute("data-diamond-job") == new_id  # the newest on top
    chart = sidebar_panel(page).locator('[data-diamond-timeline="site-02"]')
    expect(chart.locator(f'[data-diamond-job-bar="{new_id}"]')).to_have_count(1)
    expect(chart.locator(f'[data-diamond-job-bar="{RESUBMITTED_ID}"]')).to_have_attribute(
        "data-diamond-state", "CANCELLED")


# -- a job ending while its details are open ---------------------------------------------------

def test_a_job_ending_while_its_details_are_open_updates_them_in_place(page):
    row = job_row(page, ENDING_ID)
    row.locator(".jp-diamond-job-main").click()
    details = row.locator("[data-diamond-job-details]")
    expect(details).to_be_visible()
    bar = _bar(page, ENDING_ID)
    bar.scroll_into_view_if_needed()
    bar.focus()
    tip = sidebar_panel(page).locator(f'[data-diamond-tooltip="{ENDING_ID}"]')
    expect(tip).to_be_visible()
    page.diamond_wire.job_event(ENDING_ID, "COMPLETED", previous="RUNNING",
                                ended_at=datetime.now(timezone.utc).isoformat(), exit_code=0)
    expect(row).to_have_attribute("data-diamond-state", "COMPLETED")
    expect(details).to_be_visible()  # still open, now saying how it ended
    expect(details).to_contain_text("COMPLETED")
    expect(tip).to_be_visible()
    expect(tip).to_contain_text("COMPLETED")
    expect(bar).to_have_attribute("data-diamond-state", "COMPLETED")
    expect(bar.locator("rect.jp-diamond-seg-completed")).to_have_count(1)


# -- a bar's details opened on a thousand-bar timeline ----------------------------------------

WATCH_TIMELINE_JS = """() => {
    const seen = [];
    const watch = new MutationObserver(records => seen.push(...records.map(r => {
        const el = r.target.nodeType === 1 ? r.target : r.target.parentElement;
        const bar = el.closest('[data-diamond-job-bar]');
        return bar ? 'bar ' + bar.getAttribute('data-diamond-job-bar') : 'axis';
    })));
    for (const svg of document.querySelectorAll('#diamond-sidebar [data-diamond-timeline] svg')) {
        watch.observe(svg, {subtree: true, childList: true, attributes: true,
                            characterData: true});
    }
    window.__diamondTimelineWatch = {watch, seen};
}"""


def test_opening_a_bars_details_draws_no_bar_again(page):
    """Focusing a bar (as a click or Tab does) shows its job's details and writes no bar of
    any chart again (a thousand bars made this a third of a second)."""
    for job_id in (FAILED_ID, ENDING_ID, COPIED_ID):
        bar = _bar(page, job_id)
        bar.scroll_into_view_if_needed()
        page.evaluate(WATCH_TIMELINE_JS)
        bar.focus()
        expect(sidebar_panel(page).locator(f'[data-diamond-tooltip="{job_id}"]')).to_be_visible()
        seen = page.evaluate("""() => {
            const {watch, seen} = window.__diamondTimelineWatch;
            watch.takeRecords();
            watch.disconnect();
            return seen;
        }""")
        if "axis" in seen:
            continue  # the timed redraw ("now" moved) fell in between: look again
        assert seen == [], seen
        return
    pytest.fail("the timeline redrew each time a bar was focused")


# -- copying a job id --------------------------------------------------------------------------

def test_a_job_id_selected_in_its_row_copies_without_toggling_the_row(page):
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    row = job_row(page, COPIED_ID)
    row.scroll_into_view_if_needed()
    id_text = row.locator(".jp-diamond-job-meta > span").first
    expect(id_text).to_have_text(COPIED_ID)
    box = id_text.bounding_box()
    assert box
    page.mouse.move(box["x"] + 1, box["y"] + box["height"] / 2)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] + 2, box["y"] + box["height"] / 2, steps=4)
    page.mouse.up()
    assert page.evaluate("() => String(getSelection())").strip() == COPIED_ID
    expect(row).not_to_have_attribute("data-diamond-details-open", "")
    # and a button copies it whole, in one click
    row.locator(".jp-diamond-job-main").click()
    row.locator("[data-diamond-copy-id]").click()
    assert page.evaluate("() => navigator.clipboard.readText()") == COPIED_ID
    expect(row.locator("[data-diamond-copy-id]")).to_have_attribute("data-diamond-copied", "")


# -- forced colours ----------------------------------------------------------------------------

def test_in_forced_colours_states_stay_told_apart_on_the_timeline_and_legend(page):
    expect(_bar(page, FAILED_ID)).to_be_attached()
    page.emulate_media(forced_colors="active")
    try:
        fills = page.evaluate("""() => {
            const out = {};
            for (const g of document.querySelectorAll('#diamond-sidebar [data-diamond-job-bar]')) {
                const seg = g.querySelector('rect.jp-diamond-seg');
                if (seg) out[g.getAttribute('data-diamond-state')] = getComputedStyle(seg).fill;
            }
            return out;
        }""")
        assert {"RUNNING", "FAILED"} <= set(fills), fills
        assert fills["RUNNING"] != fills["FAILED"], fills
        keys = sidebar_panel(page).locator("[data-diamond-legend-state] .jp-diamond-key")
        colours = keys.evaluate_all("ks => ks.map(k => getComputedStyle(k).backgroundColor)")
        assert len(set(colours)) == len(colours), colours
        # the bars' colours are the legend's
        legend = dict(zip(
            sidebar_panel(page).locator("[data-diamond-legend-state]").evaluate_all(
                "ls => ls.map(l => l.getAttribute('data-diamond-legend-state'))"),
            colours, strict=True))
        assert fills["RUNNING"] == legend["RUNNING"], (fills, legend)
    finally:
        page.emulate_media(forced_colors="none")


# -- browser zoom ------------------------------------------------------------------------------

def test_at_200_percent_browser_zoom_the_sidebar_fits_and_answers(bare_lab, browser):
    # a 1400x900 window zoomed to 200%: a 700x450 CSS viewport, two device pixels a CSS pixel
    p = _new_page(browser, bare_lab, width=700, height=450, scale=2)
    try:
        panel = live_sidebar(p)
        expect(job_bars(p).first).to_be_attached(timeout=30_000)
        assert wider_than(p) == []
        zoom_out = panel.get_by_role("button", name="Zoom out")
        zoom_out.scroll_into_view_if_needed()
        zoom_out.click()
        expect(panel.locator("[data-diamond-zoom]")).to_have_attribute("data-diamond-zoom", "5")
        row = job_row(p, FAILED_ID)
        row.scroll_into_view_if_needed()
        row.locator(".jp-diamond-job-main").click()
        expect(row.locator("[data-diamond-job-details]")).to_be_visible()
        assert wider_than(p) == []
        assert p.diamond_errors == []  # type: ignore[attr-defined]
    finally:
        p.context.close()


# -- docked on the right -----------------------------------------------------------------------

def test_the_sidebar_docked_on_the_right_works_and_fits(bare_lab, browser):
    p = _new_page(browser, bare_lab)
    try:
        live_sidebar(p)
        _sidebar_tab(p).click(button="right")
        p.get_by_role("menuitem", name="Switch Sidebar Side").click()
        tab = p.locator('.jp-SideBar.jp-mod-right li[data-id="diamond-sidebar"]')
        expect(tab).to_be_visible()
        panel = sidebar_panel(p)
        if not panel.is_visible():
            tab.click()
        expect(panel).to_be_visible()
        right = p.evaluate("() => document.querySelector('#jp-right-stack')"
                           ".getBoundingClientRect().left")
        assert panel.bounding_box()["x"] >= right - 1, "the panel is not in the right area"
        expect(job_bars(p).first).to_be_attached()
        assert wider_than(p) == []
        bar = _bar(p, FAILED_ID)
        bar.scroll_into_view_if_needed()
        bar.focus()
        tip = panel.locator(f'[data-diamond-tooltip="{FAILED_ID}"]')
        expect(tip).to_be_visible()
        box, pane = tip.bounding_box(), panel.bounding_box()
        assert pane["x"] - 1 <= box["x"], (box, pane)
        assert box["x"] + box["width"] <= pane["x"] + pane["width"] + 1, (box, pane)
        row = job_row(p, FAILED_ID)
        row.get_by_role("button", name="Show logs of broke").click()
        expect(p.locator(".lm-DockPanel-tabBar .lm-mod-current",
                         has_text="Logs: broke")).to_be_visible()
        panel.locator("[data-diamond-open-dashboard]").click()
        expect(p.locator(DASHBOARD)).to_be_visible(timeout=30_000)
        close_dashboard(p)
        assert p.diamond_errors == []  # type: ignore[attr-defined]
        # the shared server keeps the side in its settings: back to the left for the others
        tab.click(button="right")
        p.get_by_role("menuitem", name="Switch Sidebar Side").click()
        expect(_sidebar_tab(p).and_(p.locator(".jp-SideBar.jp-mod-left li"))).to_be_visible()
    finally:
        p.context.close()


# -- simple mode -------------------------------------------------------------------------------

def _toggle_simple_mode(p: Page, mode: str) -> None:
    p.get_by_role("menuitem", name="View", exact=True).click()
    p.locator(".lm-Menu-item", has_text="Appearance").hover()
    p.locator('.lm-Menu-item[data-command="application:toggle-mode"]').click()
    p.wait_for_function("m => document.getElementById('main').dataset.shellMode === m",
                        arg=mode)


def test_in_simple_mode_the_sidebar_opens_logs_and_the_dashboard(bare_lab, browser):
    # a workspace of its own: the shell's mode and the open dashboard are kept in it
    p = _new_page(browser, bare_lab, queue_rows=40, path="lab/workspaces/unseen6-simple")
    try:
        panel = live_sidebar(p)
        _toggle_simple_mode(p, "single-document")
        expect(panel).to_be_visible()
        job_row(p, FAILED_ID).get_by_role("button", name="Show logs of broke").click()
        # simple mode shows one main-area widget: the logs are the one shown
        expect(p.locator('#jp-main-dock-panel [id^="diamond-logs-"]')).to_be_visible()
        panel.locator("[data-diamond-open-dashboard]").click()
        expect(p.locator(DASHBOARD)).to_be_visible(timeout=30_000)
        expect(p.locator(f'[data-diamond-queue="{QUEUE_SITE}"]')).to_have_attribute(
            "data-diamond-rows", "40")
        expect(p.locator('#jp-main-dock-panel [id^="diamond-logs-"]')).to_be_hidden()
        assert p.diamond_errors == []  # type: ignore[attr-defined]
        # the shared server keeps the workspace: leave it as the other tests expect it
        _toggle_simple_mode(p, "multiple-document")
        close_dashboard(p)
    finally:
        p.context.close()


# -- a queue of 5,000 jobs: sorted, filtered ---------------------------------------------------

@pytest.fixture(scope="module")
def queue_page(bare_lab, browser):
    p = _new_page(browser, bare_lab, queue_rows=5000, path="lab/workspaces/unseen6-queue")
    try:
        live_sidebar(p)
        sidebar_panel(p).locator("[data-diamond-open-dashboard]").click()
        expect(p.locator(f'[data-diamond-queue="{QUEUE_SITE}"]')).to_have_attribute(
            "data-diamond-rows", "5000", timeout=30_000)
        yield p
        close_dashboard(p)  # the shared server's workspace would reopen it elsewhere
    finally:
        p.context.close()


def _queue(page: Page):
    return page.locator(f'[data-diamond-queue="{QUEUE_SITE}"]')


def _active_job_name(page: Page) -> str:
    return _queue(page).evaluate("""q => {
        const id = q.getAttribute('aria-activedescendant');
        const row = id && document.getElementById(id);
        return row ? row.querySelector('[role=gridcell]:nth-child(3)').textContent : '';
    }""")


def test_a_queue_of_5000_jobs_draws_only_what_is_in_view_and_reaches_its_end(queue_page):
    q = _queue(queue_page)
    drawn = q.locator("[data-diamond-queue-row]").count()
    assert 0 < drawn < 100, drawn
    q.focus()
    queue_page.keyboard.press("End")
    last = q.locator("[data-diamond-queue-row]").last
    expect(last).to_be_visible()
    expect(last).to_have_attribute("aria-rowindex", "5001")


def test_sorting_the_queue_keeps_the_selected_job_selected(queue_page):
    q = _queue(queue_page)
    q.focus()
    queue_page.keyboard.press("Home")
    for _ in range(5):
        queue_page.keyboard.press("ArrowDown")
    chosen = _active_job_name(queue_page)
    assert chosen.startswith("job-"), chosen
    q.locator('[data-diamond-sort="user"]').click()
    assert _active_job_name(queue_page) == chosen
    row = q.locator('[data-diamond-queue-row][aria-selected="true"]')
    expect(row).to_be_visible()  # brought into view where the sort put it
    expect(row).to_contain_text(chosen)


def test_filtering_the_queue_by_user_or_name_narrows_its_rows(queue_page):
    q = _queue(queue_page)
    box = queue_page.get_by_role("searchbox", name=f"Filter the queue of {QUEUE_SITE}")
    box.fill("job-4999")
    expect(q).to_have_attribute("data-diamond-rows", "1")
    expect(q.locator("[data-diamond-queue-row]")).to_have_count(1)
    expect(q.locator("[data-diamond-queue-row]")).to_contain_text("job-4999")
    box.fill("no such job anywhere")
    expect(q).to_have_attribute("data-diamond-rows", "0")
    expect(queue_page.locator(DASHBOARD)).to_contain_text("No job in the queue matches")
    box.fill("")
    expect(q).to_have_attribute("data-diamond-rows", "5000")
