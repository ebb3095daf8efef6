"""The sidebar and the dashboard in cases a user meets and no other UI test shows, in a real
JupyterLab and chromium, without the test bed: fourteen sites with long and unicode names
(one unreachable beside healthy ones), 5,000 jobs, markup in a job's name and reason and in
a site's error, keyboard-only use, both themes, a narrow sidebar, a timeline spanning days
with a job not started, and the event socket dropped and restored.

The sidebar's GETs (`state`, `events`, `jobs`, `logins`, `workflows`) and the dashboard's
are answered at the wire level from the records below (the routes' shapes), and the event
socket (`/api/events/subscribe`) is served by the test, which sends emissions and drops it:
no test bed holds 5,000 jobs or a site with these names. The server itself is real (no
sites file)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import datetime, timedelta, timezone

import pytest
from dashboard_helpers import axe_violations, big_dashboard, open_from_palette, serve_recorded
from playwright.sync_api import Locator, Page, expect
from sidebar_lab import (
    fresh_sidebar,  # noqa: F401 (the autouse `_fresh_sidebar` fixture)
    live_sidebar,
    module_page,  # noqa: F401 (the `page` fixture)
    narrowest_sidebar,
    new_lab_page,
    sidebar_panel,
    site_row,
    themed_sidebar,
)
from test_sidebar import expect_focused, open_sidebar
from wire_helpers import WireBase

NOW = datetime.now(timezone.utc)
HEALTHY = ["alpha", "βήτα-クラスター", "超级计算中心-東京", "données-école-polytechnique",
           "gamma", "delta", "epsilon", "zeta", "eta", "theta", "東京", "大阪",
           "a-very-long-cluster-name-that-goes-on-and-on-past-any-sidebar-width-0123456789"]
DOWN = "kappa-unreachable-Ünïcødé"
SITES = [*HEALTHY, DOWN]
JOBS_TOTAL = 5_000
LOADED = 500  # what GET /state gives (the latest STATE_JOBS)
MARKUP = '<img src=x onerror="window.__diamondPwned=1"><script>window.__diamondPwned=2</script>'
HOSTILE_ID = "alpha:666"
SPANNING_ID = "alpha:900"
UNSTARTED_ID = "alpha:901"
LAST_SEQ = 1_000
TWINS = ("東京", "大阪")


def _iso(t: datetime) -> str:
    return t.isoformat()


def _site(name: str) -> dict:
    down = name == DOWN
    return {"name": name, "scheduler": "slurm", "reachable": not down,
            "error": f"ssh: could not reach {name} {MARKUP}" if down else None,
            "queue_error": None, "nodes_total": None if down else 64,
            "nodes_free": None if down else 8, "cpus_total": None if down else 2048,
            "cpus_free": None if down else 256, "gpus_total": 0, "gpus_free": 0,
            "pending": None if down else 12, "running": None if down else 40,
            "my_jobs": None if down else 1, "typical_start_s": None if down else 600,
            "partitions": [{"name": "batch", "default": True, "max_time_s": 86400,
                            "total_nodes": 64}], "metadata": {}}


def _job(native: int, *, name: str | None = None, state: str = "COMPLETED",
         submitted: datetime | None = None, started: datetime | None = None,
         ended: datetime | None = None, reason: str | None = None,
         site: str = "alpha") -> dict:
    submitted = submitted or NOW - timedelta(minutes=native % 600 + 10)
    return {"id": f"{site}:{native}", "site": site, "native_id": str(native),
            "name": name or f"job-{native}", "state": state, "submitted_at": _iso(submitted),
            "started_at": _iso(started) if started else None,
            "ended_at": _iso(ended) if ended else None,
            "exit_code": 0 if state == "COMPLETED" else None, "reason": reason,
            "placement": None, "origin": None}


def _all_jobs() -> list[dict]:
    """Newest first: three jobs this test looks at, then ordinary finished ones."""
    special = [
        _job(666, name=MARKUP, state="PENDING", reason=f"Priority {MARKUP}",
             submitted=NOW - timedelta(minutes=1)),
        _job(900, name="three-day-simulation", state="RUNNING",
             submitted=NOW - timedelta(days=3, hours=2), started=NOW - timedelta(days=3)),
        _job(901, name="never-started", state="PENDING", reason="Resources",
             submitted=NOW - timedelta(minutes=3)),
        # same native id on two sites whose names are as long and both non-ASCII
        *(_job(7, name=f"run-on-{site}", state="COMPLETED", site=site,
               submitted=NOW - timedelta(minutes=4), started=NOW - timedelta(minutes=4),
               ended=NOW - timedelta(minutes=3)) for site in TWINS),
    ]
    rest = [_job(10_000 - i, submitted=NOW - timedelta(minutes=5 + i),
                 started=NOW - timedelta(minutes=4 + i), ended=NOW - timedelta(minutes=3 + i),
                 site=HEALTHY[i % len(HEALTHY)])
            for i in range(JOBS_TOTAL - len(special))]
    return special + rest


ALL_JOBS = _all_jobs()
STATE = {"sites": [_site(s) for s in SITES], "jobs": ALL_JOBS[:LOADED],
         "jobs_total": JOBS_TOTAL, "tasks": [], "transfers": [], "events": [],
         "last_seq": LAST_SEQ, "error": None}


class Wire(WireBase):
    """The page's diamond GETs answered from the records, and its event sockets served by
    the test: `emit` sends to the open sockets and keeps the emission for GET events."""

    first_seq = LAST_SEQ

    def __init__(self, page) -> None:
        super().__init__(page)
        self.replays: list[int] = []
        self.hold_replays = False  # GET events held (unanswered) until `release_replays`
        self.held: list = []

    def _answer(self, route) -> None:
        path, query = self.request_of(route)
        if route.request.method != "GET":
            route.continue_()
            return
        if path == "state":
            limit = int(query.get("limit", LOADED))
            body = {**STATE, "jobs": ALL_JOBS[:limit], "last_seq": self.last_seq}
        elif path == "events":
            since = int(query.get("since", 0))
            self.replays.append(since)
            if self.hold_replays:
                self.held.append((route, since))
                return
            body = self.replay_body(since)
        elif path == "jobs":
            offset, limit = int(query.get("offset", 0)), int(query.get("limit", 200))
            body = {"jobs": ALL_JOBS[offset:offset + limit], "total": JOBS_TOTAL}
        else:
            self.answer_idle(route, path)
            return
        self.fulfill_json(route, body)

    def release_replays(self) -> None:
        """Answer the held GET events with what is stored now, and hold no more."""
        self.hold_replays = False
        held, self.held = self.held, []
        for route, since in held:
            self.fulfill_json(route, self.replay_body(since))

    def emit(self, job_id: str, state: str, *, live: bool = True) -> dict:
        return self.send("job-state", {"kind": "job.state", "job_id": job_id, "state": state,
                                       "previous": None,
                                       "at": _iso(datetime.now(timezone.utc))}, live=live)


def _new_page(browser, server, width: int = 1400,
              before_load: Callable[[Page], None] | None = None) -> Page:
    """A page on `server` whose diamond requests the records answer; `before_load` sets more
    answers before JupyterLab loads (set after, the page's first requests could miss them)."""
    def wire_then(page: Page) -> None:
        page.diamond_wire = Wire(page)  # type: ignore[attr-defined]
        if before_load:
            before_load(page)

    return new_lab_page(browser, server, width=width, before_load=wire_then)


def _escape_hides_spanning_tooltip(page: Page, within: Locator, bar: Locator) -> Locator:
    """Focus on the three-day job's timeline `bar` shows its tooltip (in `within`); Escape
    hides it, the focus staying on the bar. The tooltip, for the checks that follow."""
    tooltip = within.locator(f'[data-diamond-tooltip="{SPANNING_ID}"]')
    bar.focus()
    expect_focused(page, bar, "the three-day job's bar, focused")
    expect(tooltip).to_be_visible()
    page.keyboard.press("Escape")
    expect(tooltip).to_have_count(0)
    expect_focused(page, bar, "after Escape hid its tooltip")
    return tooltip


def test_fourteen_sites_each_under_its_own_name(page):
    rows = sidebar_panel(page).locator("[data-diamond-site]")
    expect(rows).to_have_count(len(SITES))
    assert rows.evaluate_all("els => els.map(e => e.dataset.diamondSite)") == SITES
    for name in SITES:
        expect(site_row(page, name).locator(".jp-diamond-site-name")).to_have_text(name)
    count = sidebar_panel(page).locator('[data-diamond-section="sites"] .jp-diamond-count')
    expect(count).to_have_text(str(len(SITES)))


def test_unreachable_site_beside_healthy_ones(page):
    down = site_row(page, DOWN)
    expect(down).to_have_class("jp-diamond-site jp-diamond-site-unreachable")
    expect(down.get_by_role("img", name="unreachable")).to_be_visible()
    expect(down.locator(".jp-diamond-reach")).to_have_text("unreachable")
    expect(down.locator('[data-diamond-stat="cpus"] dd')).to_have_text("—")
    for name in HEALTHY:
        row = site_row(page, name)
        expect(row.get_by_role("img", name="reachable", exact=True)).to_be_visible()
        expect(row.locator('[data-diamond-stat="cpus"] dd')).to_have_text("256/2048")


def test_site_error_markup_is_text(page):
    error = site_row(page, DOWN).locator(".jp-diamond-error-text")
    expect(error).to_have_text(f"ssh: could not reach {DOWN} {MARKUP}")
    assert error.locator("img, script").count() == 0
    assert page.evaluate("() => window.__diamondPwned") is None


def test_five_thousand_jobs_paint_a_page_with_a_count(page):
    jobs = sidebar_panel(page).locator('[data-diamond-section="jobs"]')
    expect(jobs.locator(".jp-diamond-count")).to_have_text(str(JOBS_TOTAL))
    expect(jobs.locator("[data-diamond-jobs-count]")).to_have_text(
        f"{LOADED} shown of {JOBS_TOTAL} jobs")
    expect(jobs.locator("li[data-diamond-job]").first).to_be_visible()
    rendered = jobs.locator("li[data-diamond-job]").count()
    assert 0 < rendered <= 100, rendered  # a page of cards, not 500 (nor 5,000)
    stats = page.evaluate("() => ({first: window.__diamondStats.firstPaintMs})")
    assert stats["first"] is not None and stats["first"] < 10_000, stats


def test_five_thousand_jobs_page_on_by_keyboard(page):
    jobs = sidebar_panel(page).locator('[data-diamond-section="jobs"]')
    cards = jobs.locator("li[data-diamond-job]")
    before = cards.count()
    more = jobs.get_by_role("button", name="more", exact=False).filter(has_text="Show")
    more.focus()
    expect_focused(page, more, "Show more")
    page.keyboard.press("Enter")
    expect(cards).to_have_count(min(2 * before, LOADED))
    older = jobs.get_by_role("button", name="Load older jobs from the server")
    with page.expect_response(lambda r: "/diamond/api/jobs?" in r.url):
        older.focus()
        expect_focused(page, older, "Load older jobs")
        page.keyboard.press("Space")
    expect(jobs.locator("[data-diamond-jobs-count]")).to_have_text(
        f"{LOADED + 200} shown of {JOBS_TOTAL} jobs")
    # the last card is scrolled to and is the oldest loaded
    last = cards.last
    last.scroll_into_view_if_needed()
    expect(last).to_be_in_viewport()


def test_markup_in_job_name_and_reason_is_text(page):
    row = sidebar_panel(page).locator(f'[data-diamond-job="{HOSTILE_ID}"]')
    expect(row).to_have_attribute("data-diamond-state", "PENDING")
    expect(row.locator(".jp-diamond-job-name")).to_have_text(MARKUP)
    expect(row.locator("[data-diamond-reason]")).to_have_text(f"Priority {MARKUP}")
    bar = page.locator(f'[data-diamond-job-bar="{HOSTILE_ID}"]')
    expect(bar).to_have_count(1)
    assert sidebar_panel(page).locator("img[src='x'], script").count() == 0
    assert page.evaluate("() => window.__diamondPwned") is None


def test_contract_attributes_of_every_row(page):
    expect(page.locator("#diamond-sidebar")).to_have_count(1)
    pairs = sidebar_panel(page).locator("li[data-diamond-job]").evaluate_all(
        "els => els.map(e => [e.dataset.diamondJob, e.dataset.diamondState])")
    by_id = {j["id"]: j["state"] for j in ALL_JOBS}
    assert pairs and all(by_id[job] == state for job, state in pairs), pairs[:5]


def test_section_headers_toggle_by_enter_and_space(page):
    header = sidebar_panel(page).locator('[data-diamond-section="sites"] h3 button')
    header.focus()
    expect_focused(page, header, "the Sites header")
    page.keyboard.press("Enter")
    expect(header).to_have_attribute("aria-expanded", "false")
    expect(sidebar_panel(page).locator("[data-diamond-site]")).to_have_count(0)
    page.keyboard.press("Space")
    expect(header).to_have_attribute("aria-expanded", "true")
    expect(sidebar_panel(page).locator("[data-diamond-site]")).to_have_count(len(SITES))


def test_tab_order_follows_the_sidebar(page):
    """From the reload button, Tab reaches the first site's partitions toggle, then the jobs'
    controls, in the order they are shown (no control skipped or out of order)."""
    panel = sidebar_panel(page)
    reload_button = panel.get_by_role("button", name="Reload sites and jobs")
    reload_button.focus()
    expect_focused(page, reload_button, "the reload button")
    stops = [("the Sites header", panel.locator('[data-diamond-section="sites"] h3 button'))]
    stops += [(f"{site}'s partitions toggle",
               site_row(page, site).get_by_role("button", name=f"Show partitions of {site}"))
              for site in SITES[:5]]
    for n, (what, stop) in enumerate(stops, 1):
        page.keyboard.press("Tab")
        expect_focused(page, stop, f"Tab {n} from the reload button: {what}")
    # Enter on a site's toggle shows its partitions; Enter again hides them
    partitions = site_row(page, SITES[4]).locator("[data-diamond-partition=batch]")
    page.keyboard.press("Enter")
    expect(partitions).to_be_visible()
    hide = site_row(page, SITES[4]).get_by_role("button", name=f"Hide partitions of {SITES[4]}")
    expect_focused(page, hide, "the toggle, once its partitions are shown")
    page.keyboard.press("Enter")
    expect(partitions).to_have_count(0)


def test_job_rows_are_one_tab_stop_arrows_move_and_enter_or_space_opens_details(page):
    """The jobs list is one Tab stop (roving tabindex): Tab from the filter reaches the
    first row, arrows move between rows, Enter or Space on a row shows its details as a
    click does (again: hides them), and the contract attributes stay on each row. Before,
    no row took Tab and Enter on a row did nothing."""
    jobs = sidebar_panel(page).locator('[data-diamond-section="jobs"]')
    rows = jobs.locator("li[data-diamond-job]")
    # the first two rows as drawn now, then found by their ids wherever they are drawn
    expect(rows.nth(1)).to_be_attached()
    first, second = (jobs.locator(f'li[data-diamond-job="{job_id}"]') for job_id in
                     (rows.nth(i).get_attribute("data-diamond-job") for i in (0, 1)))
    search = jobs.get_by_role("searchbox", name="Filter jobs by name or id")
    search.focus()
    expect_focused(page, search, "the jobs filter")
    page.keyboard.press("Tab")
    expect_focused(page, first, "Tab from the filter: the first row")
    expect(jobs.locator('li[data-diamond-job][tabindex="0"]')).to_have_count(1)
    page.keyboard.press("ArrowDown")
    expect_focused(page, second, "ArrowDown: the second row")
    # the tab stop moved with the focus: one row takes Tab, the one last focused
    expect(jobs.locator('li[data-diamond-job][tabindex="0"]')).to_have_count(1)
    expect(second).to_have_attribute("tabindex", "0")
    details = second.locator("[data-diamond-job-details]")
    page.keyboard.press("Enter")
    expect(details).to_be_visible()
    expect(details).to_contain_text("queued")
    expect(second).to_have_attribute("data-diamond-state", re.compile(r"^[A-Z]+$"))
    expect_focused(page, second, "the second row, its details shown")
    page.keyboard.press("Space")
    expect(details).to_have_count(0)
    page.keyboard.press("ArrowUp")
    expect_focused(page, first, "ArrowUp: the first row")
    page.keyboard.press("End")
    expect_focused(page, rows.last, "End: the last row shown")
    page.keyboard.press("Home")
    expect_focused(page, first, "Home: the first row")
    # a click opens the same details; a button in the row does its own work, no details
    first.locator(".jp-diamond-job-meta").click()
    expect(first.locator("[data-diamond-job-details]")).to_be_visible()
    first.locator(".jp-diamond-job-meta").click()
    expect(first.locator("[data-diamond-job-details]")).to_have_count(0)


def test_escape_closes_the_cancel_dialog_and_cancels_nothing(page):
    posts: list[str] = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    row = sidebar_panel(page).locator(f'[data-diamond-job="{UNSTARTED_ID}"]')
    cancel = row.get_by_role("button", name="Cancel never-started")
    cancel.focus()
    expect_focused(page, cancel, "the row's Cancel button")
    page.keyboard.press("Enter")
    dialog = page.locator(".jp-Dialog")
    expect(dialog).to_be_visible()
    page.keyboard.press("Escape")
    expect(dialog).to_have_count(0)
    expect(row).to_have_attribute("data-diamond-state", "PENDING")
    assert not [u for u in posts if "/cancel" in u], posts


def test_timeline_spans_days_and_shows_an_unstarted_job(page):
    timeline = sidebar_panel(page).locator('[data-diamond-section="timeline"]')
    spanning = timeline.locator(f'[data-diamond-job-bar="{SPANNING_ID}"]')
    expect(spanning).to_have_attribute("data-diamond-state", "RUNNING")
    unstarted = timeline.locator(f'[data-diamond-job-bar="{UNSTARTED_ID}"]')
    expect(unstarted).to_have_attribute("data-diamond-state", "PENDING")
    # the unstarted job has its queued bar and no run bar
    expect(unstarted.locator("rect.jp-diamond-seg-queued")).to_have_count(1)
    expect(unstarted.locator("rect.jp-diamond-seg")).to_have_count(0)
    # fitted, the view spans the three days; the running bar reaches "now"
    zoom = timeline.locator("[data-diamond-span-ms]")
    expect(zoom).to_have_attribute("data-diamond-zoom", "fit")
    span = int(zoom.get_attribute("data-diamond-span-ms"))
    assert span >= 3 * 86_400_000, span
    # focus by keyboard shows its tooltip; Escape hides it (the focus stays), Tab away too
    tooltip = _escape_hides_spanning_tooltip(page, timeline, spanning)
    page.keyboard.press("Shift+Tab")
    expect(spanning).not_to_be_focused()
    page.keyboard.press("Tab")
    expect_focused(page, spanning, "Shift+Tab, then Tab back to the bar")
    expect(tooltip).to_be_visible()
    page.keyboard.press("Tab")
    expect(spanning).not_to_be_focused()
    expect(tooltip).to_have_count(0)


def test_sites_of_non_ascii_names_keep_their_own_controls(page):
    """Two sites whose names differ only in non-ASCII letters: each partitions toggle
    controls the table in its own row, and each job's Logs opens its own tab."""
    for site in TWINS:
        toggle = site_row(page, site).get_by_role("button", name=f"Show partitions of {site}")
        toggle.focus()
        expect_focused(page, toggle, f"{site}'s partitions toggle")
        page.keyboard.press("Enter")
        hide = site_row(page, site).get_by_role("button", name=f"Hide partitions of {site}")
        expect_focused(page, hide, f"{site}'s toggle, its partitions shown")
    for site in TWINS:
        toggle = site_row(page, site).get_by_role("button", name=f"Hide partitions of {site}")
        controlled = toggle.get_attribute("aria-controls")
        # the table it names is the one in its own row (and the only one of that id)
        expect(page.locator(f'[id="{controlled}"]')).to_have_count(1)
        expect(site_row(page, site).locator(f'[id="{controlled}"]')).to_be_visible()
    for site in TWINS:
        site_row(page, site).get_by_role("button", name=f"Hide partitions of {site}").click()
    for site in TWINS:
        row = sidebar_panel(page).locator(f'[data-diamond-job="{site}:7"]')
        row.get_by_role("button", name=f"Show logs of run-on-{site}").click()
        tab = page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current")
        expect(tab).to_contain_text(f"Logs: run-on-{site}")
    tabs = page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab", has_text="Logs: run-on-")
    expect(tabs).to_have_count(2)
    for _ in range(2):
        tabs.first.locator(".lm-TabBar-tabCloseIcon").click()
    expect(tabs).to_have_count(0)


def test_socket_dropped_then_restored_shows_stale_and_loses_nothing(page):
    wire = page.diamond_wire
    chip = sidebar_panel(page).locator("[data-diamond-status]")
    expect(chip).to_have_attribute("data-diamond-status", "live")
    page.wait_for_function("() => window.__diamondStats !== undefined")
    sockets_before = len(wire.sockets)
    assert wire.open_sockets(), "the page subscribed to no event socket"
    first = wire.emit(UNSTARTED_ID, "RUNNING")
    row = sidebar_panel(page).locator(f'[data-diamond-job="{UNSTARTED_ID}"]')
    expect(row).to_have_attribute("data-diamond-state", "RUNNING")
    wire.drop()
    expect(chip).not_to_have_attribute("data-diamond-status", "live")
    missed = wire.emit(UNSTARTED_ID, "COMPLETED", live=False)
    # the socket comes back (JupyterLab's event manager reconnects by itself) and the
    # sidebar catches up on what was stored meanwhile
    expect(chip).to_have_attribute("data-diamond-status", "live", timeout=60_000)
    assert len(wire.sockets) > sockets_before
    expect(row).to_have_attribute("data-diamond-state", "COMPLETED", timeout=30_000)
    assert any(since < missed["seq"] for since in wire.replays), wire.replays
    assert page.evaluate("s => window.__diamondStats.seen(s, s)", first["seq"]) == 1


def test_a_live_event_before_the_catch_up_replay_loses_no_activity_line(bare_lab, browser):
    """After a reconnect, a live event that comes before the replay of what was missed is
    held until the replay is in, then both apply in order, each once: no gap is seen (no
    reload of /state) and the missed event's activity line is there. Before, the live one
    was applied first, looked like a gap, and the replay's missed event was dropped."""
    p = _new_page(browser, bare_lab)
    try:
        panel = open_sidebar(p)
        chip = panel.locator("[data-diamond-status]")
        expect(chip).to_have_attribute("data-diamond-status", "live", timeout=30_000)
        p.wait_for_function("() => window.__diamondStats !== undefined")
        wire = p.diamond_wire
        missed_job, live_job = ALL_JOBS[5]["id"], ALL_JOBS[6]["id"]
        gaps = p.evaluate("() => window.__diamondStats.gaps")
        wire.drop()
        expect(chip).not_to_have_attribute("data-diamond-status", "live")
        missed = wire.emit(missed_job, "CANCELLED", live=False)
        wire.hold_replays = True
        with p.expect_request(lambda r: "/diamond/api/events?" in r.url):
            expect(chip).to_have_attribute("data-diamond-status", "live", timeout=60_000)
        live = wire.emit(live_job, "FAILED")  # on the new socket, the replay still held
        assert live["seq"] == missed["seq"] + 1
        p.wait_for_function("s => window.__diamondStats.seen(s, s) === 1", arg=live["seq"])
        with p.expect_response(lambda r: "/diamond/api/events?" in r.url):
            wire.release_replays()
        for job, state in ((missed_job, "CANCELLED"), (live_job, "FAILED")):
            expect(panel.locator(f'[data-diamond-job="{job}"]')).to_have_attribute(
                "data-diamond-state", state)
            line = panel.locator('[data-diamond-section="activity"] li',
                                 has_text=f"{job}: {state}")
            expect(line).to_have_count(1)
        assert p.evaluate("() => window.__diamondStats.gaps") == gaps
    finally:
        p.context.close()


def test_narrow_sidebar_keeps_each_state_in_view(bare_lab, browser):
    p = _new_page(browser, bare_lab, width=900)
    try:
        panel = live_sidebar(p)
        narrowest_sidebar(p)
        overflow = p.evaluate("""() => {
            const el = document.getElementById('diamond-sidebar');
            const body = el.querySelector('.jp-diamond-body');
            return {panel: [el.scrollWidth, el.clientWidth],
                    body: [body.scrollWidth, body.clientWidth]};
        }""")
        wide = p.evaluate("""() => {
            const el = document.getElementById('diamond-sidebar');
            const right = el.getBoundingClientRect().right;
            return Array.from(el.querySelectorAll('*'))
                .filter(e => e.getBoundingClientRect().right > right + 1)
                .slice(0, 8).map(e => e.parentElement.className + ' > ' + e.tagName +
                                      ' ' + e.textContent.slice(0, 40));
        }""")
        assert overflow["panel"][0] <= overflow["panel"][1] + 1, (overflow, wide)
        right = p.evaluate("() => document.getElementById('diamond-sidebar')"
                           ".getBoundingClientRect().right")
        for name in (SITES[-2], DOWN):
            dot = panel.locator(f'[data-diamond-site="{name}"] .jp-diamond-dot')
            box = dot.bounding_box()
            assert box and box["x"] + box["width"] <= right, (name, box, right)
        badge = panel.locator(f'[data-diamond-job="{HOSTILE_ID}"] .jp-diamond-badge')
        box = badge.bounding_box()
        assert box and box["x"] + box["width"] <= right, box
    finally:
        p.context.close()


@pytest.mark.parametrize("theme", ["JupyterLab Dark", "JupyterLab Light"])
def test_sidebar_in_both_themes_passes_axe(bare_lab, browser, theme):
    with themed_sidebar(browser, bare_lab, _new_page, theme) as (p, _):
        violations = axe_violations(p, "#diamond-sidebar")
        assert not violations, json.dumps(violations, indent=1)


def test_dashboard_of_fourteen_sites_with_an_unreachable_one(bare_lab, browser):
    data = big_dashboard(SITES, 1_300)
    down = next(s for s in data["sites"] if s["name"] == DOWN)
    down.update(reachable=False, error=f"ssh: could not reach {DOWN}", queue=[])
    data["sites"][0]["queue"][0]["name"] = MARKUP
    p = _new_page(browser, bare_lab, width=1600,
                  before_load=lambda page: serve_recorded(page, data))
    try:
        dash = open_from_palette(p)
        expect(dash).to_have_attribute("data-diamond-dashboard", "")
        for site in SITES:
            expect(dash.locator(f'[data-diamond-util-chart="{site}"]')).to_have_count(1)
        for site in HEALTHY:
            grid = dash.locator(f'[data-diamond-queue="{site}"]')
            expect(grid).to_have_count(1)
            expect(grid.locator("[data-diamond-queue-row]").first).to_be_attached()
        card = dash.locator(f'[data-diamond-dash-site="{DOWN}"]')
        down_dot = card.get_by_role("img", name="unreachable", exact=True)
        expect(down_dot).to_be_visible()
        up_dot = dash.locator(f'[data-diamond-dash-site="{SITES[0]}"]').get_by_role(
            "img", name="reachable", exact=True)
        colours = [d.evaluate("e => getComputedStyle(e).backgroundColor")
                   for d in (down_dot, up_dot)]
        assert colours[0] != colours[1], f"unreachable and reachable dots alike: {colours}"
        expect(card).to_contain_text(f"ssh: could not reach {DOWN}")
        first = dash.locator(f'[data-diamond-queue="{SITES[0]}"]')
        expect(first).to_contain_text(MARKUP)
        assert dash.locator("img[src='x'], script").count() == 0
        assert p.evaluate("() => window.__diamondPwned") is None
        # each card is labelled by its own heading, each grid's active row is its own
        # (the twins' names differ only in non-ASCII letters)
        owners = p.evaluate("""() => Array.from(
            document.querySelectorAll('[data-diamond-dash-site]')).map(s => [
                s.dataset.diamondDashSite,
                document.getElementById(s.getAttribute('aria-labelledby'))
                    ?.closest('[data-diamond-dash-site]')?.dataset.diamondDashSite])""")
        assert all(own == name for name, own in owners), owners
        for site in TWINS:
            grid = dash.locator(f'[data-diamond-queue="{site}"]')
            grid.focus()
            expect_focused(p, grid, f"{site}'s queue grid")
            p.keyboard.press("Home")
            expect(grid).to_have_attribute("aria-activedescendant", re.compile("."))
            owner = p.evaluate(
                "id => document.getElementById(id)?.closest('[data-diamond-queue]')"
                "?.dataset.diamondQueue", grid.get_attribute("aria-activedescendant"))
            assert owner == site, (site, owner)
        # the timeline's bar of the three-day job: focus shows its tooltip, Escape hides it
        _escape_hides_spanning_tooltip(
            p, dash, dash.locator(f'[data-diamond-gantt-job="{SPANNING_ID}"]'))
        # keyboard: the grid takes focus; arrows move the active row
        first.focus()
        expect_focused(p, first, f"{SITES[0]}'s queue grid")
        p.keyboard.press("ArrowDown")
        expect(first).to_have_attribute("aria-activedescendant", re.compile("."))
        active = first.get_attribute("aria-activedescendant")
        p.keyboard.press("ArrowDown")
        expect(first).not_to_have_attribute("aria-activedescendant", active)
    finally:
        p.context.close()
