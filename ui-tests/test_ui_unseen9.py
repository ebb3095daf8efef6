"""The sidebar in more everyday cases no other UI test shows, in a real JupyterLab 4 and
chromium, without the test bed: jobs on sites in other time zones on the timeline; a queued
job's calibrated predicted start and what it rests on; 32 sites; a workflow of 25 steps; a
job named with 200 characters; the page at a browser zoom of 200%; the sidebar closed and
opened again; the keyboard's path through a job's card; a job's state event arriving before
its submit's.

The server is a real `jupyter lab` without a sites file; the page's requests to the
diamond routes get the records below (in those routes' shapes) and its event socket is the
test's, which sends the jobs' events."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from typing import Any
from zoneinfo import ZoneInfo

from playwright.sync_api import Page, expect
from sidebar_lab import (
    fresh_sidebar,  # noqa: F401 (the autouse `_fresh_sidebar` fixture)
    job_row,
    live_sidebar,
    module_page,  # noqa: F401 (the `page` fixture)
    new_lab_page,
    sidebar_panel,
    site_row,
    wider_than,
)
from test_sidebar import open_sidebar
from wire_helpers import WireBase, healthy_site

LAST_SEQ = 500
ZONES = {"tokyo": "Asia/Tokyo", "denver": "America/Denver", "alpha": "UTC"}
# 30 sites besides the three above: the list scrolls inside the sidebar
MANY = [f"cluster-{i:02d}" for i in range(30)]
SITES = [*ZONES, *MANY]


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(microsecond=0)


def _at(now: datetime, minutes_ago: int, zone: str = "UTC") -> str:
    """`now` - `minutes_ago`, written with `zone`'s offset (as a site's local clock says it)."""
    return (now - timedelta(minutes=minutes_ago)).astimezone(ZoneInfo(zone)).isoformat()


def _job(now: datetime, job_id: str, name: str, state: str = "RUNNING", minutes_ago: int = 10,
         **more) -> dict:
    site, native = job_id.rsplit(":", 1)
    zone = ZONES.get(site, "UTC")
    return {"id": job_id, "site": site, "native_id": native, "name": name, "state": state,
            "submitted_at": _at(now, minutes_ago, zone),
            "started_at": None if state == "PENDING" else _at(now, minutes_ago - 4, zone),
            "ended_at": None, "exit_code": None, "reason": None, "placement": None,
            "origin": None, **more}


def _jobs(now: datetime) -> dict[str, Any]:
    """The records' jobs, their times counted from `now`: built when a page is served, not
    when the module is read (a whole suite reached this file 38 min after collecting it,
    when a start predicted 30 min ahead had passed)."""
    return {
        # the same instants on three sites' clocks: queued 30 min ago, running 26 min ago
        "same": [_job(now, f"{site}:{i}", f"same-{site}", minutes_ago=30)
                 for i, site in enumerate(ZONES, start=1)],
        "predicted": _job(now, "alpha:40", "queued-calibrated", "PENDING", minutes_ago=2,
                          predicted_start={
                              "at": (now + timedelta(minutes=30)).isoformat(),
                              "bound": (now + timedelta(minutes=90)).isoformat(),
                              "source": "calibrated", "text": "≈ 30 min (90%: < 1.5 h)"}),
        "unbounded": _job(now, "alpha:44", "queued-no-bound", "PENDING", minutes_ago=2,
                          predicted_start={
                              "at": (now + timedelta(minutes=30)).isoformat(), "bound": None,
                              "source": None, "text": "≈ 30 min"}),
        "long": _job(now, "cluster-03:41", LONG_NAME, minutes_ago=5),
        "card": _job(now, "cluster-05:42", "card", minutes_ago=8),
    }


def _all_jobs(now: datetime) -> list[dict]:
    j = _jobs(now)
    return [*j["same"], j["predicted"], j["unbounded"], j["long"], j["card"]]


LONG_NAME = "long-" + "".join(f"{i:03d}segment" for i in range(20))[:195]
_AT_READ = _jobs(_now())  # the jobs' ids and names, for the tests
SAME_INSTANTS = _AT_READ["same"]
PREDICTED, UNBOUNDED = _AT_READ["predicted"], _AT_READ["unbounded"]
LONG, CARD = _AT_READ["long"], _AT_READ["card"]
STEP_STATES = ["COMPLETED"] * 12 + ["RUNNING"] * 5 + ["PENDING"] * 8
WORKFLOW = {"id": "wf-25", "name": "twenty-five", "state": "RUNNING", "reason": None,
            "steps": [{"name": f"step-{i:02d}", "site": MANY[i % len(MANY)], "job": None,
                       "state": state, "needs": [] if i == 0 else [f"step-{(i - 1) // 3:02d}"],
                       "attempt": 0, "reason": None}
                      for i, state in enumerate(STEP_STATES)]}
# step states as a hostile or future server may name them: `__proto__` is a state like any
ODD_STATES = {"id": "wf-odd", "name": "odd-states", "state": "RUNNING", "reason": None,
              "steps": [{"name": f"odd-{i}", "site": "alpha", "job": None, "state": state,
                         "needs": [], "attempt": 0, "reason": None}
                        for i, state in enumerate(["__proto__", "RUNNING", "__proto__"])]}


class Wire(WireBase):
    """The records' answers to the sidebar's GETs; the event sockets served by the test."""

    first_seq = LAST_SEQ

    def __init__(self, page: Page) -> None:
        super().__init__(page)
        self.jobs = _all_jobs(_now())

    def _answer(self, route) -> None:
        path, query = self.request_of(route)
        if route.request.method != "GET":
            route.continue_()
        elif path == "state":
            self.fulfill_json(route, {
                "sites": [{**healthy_site(s), "metadata": {"timezone": ZONES.get(s, "UTC")}}
                          for s in SITES], "jobs": self.jobs,
                "jobs_total": len(self.jobs), "tasks": [], "transfers": [], "events": [],
                "last_seq": self.last_seq, "error": None})
        elif path == "events":
            self.fulfill_json(route, self.replay_body(int(query.get("since", 0))))
        elif path == "jobs":
            self.fulfill_json(route, {"jobs": [], "total": len(self.jobs)})
        elif path == "workflows":
            self.fulfill_json(route, {"workflows": [WORKFLOW, ODD_STATES]})
        else:
            self.answer_idle(route, path)


def _new_page(browser, server, **kwargs) -> Page:
    def wire(page: Page) -> None:
        page.diamond_wire = Wire(page)  # type: ignore[attr-defined]

    return new_lab_page(browser, server, before_load=wire, **kwargs)


def _bar(page: Page, job_id: str):
    return sidebar_panel(page).locator(f'[data-diamond-job-bar="{job_id}"]')


def _rows_of(page: Page, job_id: str):
    return sidebar_panel(page).locator(f'li[data-diamond-job="{job_id}"]')


def _no_overflow(page: Page) -> None:
    """Nothing in the sidebar reaches past its right edge, and it does not scroll sideways."""
    page.wait_for_function("() => { const s = document.getElementById('diamond-sidebar');"
                           " return s.scrollWidth <= s.clientWidth + 1; }", timeout=10_000)
    assert wider_than(page) == []


# -- time zones ---------------------------------------------------------------------------

def test_bars_of_sites_in_other_time_zones_stand_at_their_true_instants(page):
    """Three jobs queued and started at the same instants, their times written on three
    sites' clocks (+09:00, -07:00 or -06:00, Z): their bars begin and end at the same x on
    every site's chart, and their tooltips say the same times."""
    xs = {}
    for job in SAME_INSTANTS:
        bar = _bar(page, job["id"])
        bar.scroll_into_view_if_needed()
        expect(bar).to_have_attribute("data-diamond-state", "RUNNING")
        rects = bar.locator("rect")
        xs[job["site"]] = [(float(r.get_attribute("x")), float(r.get_attribute("width")))
                           for r in rects.all()]
    first = xs["alpha"]
    assert len(first) == 2, first  # queued, then running
    for placed in xs.values():
        assert all(abs(a - b) < 0.01 and abs(w - v) < 0.01
                   for (a, w), (b, v) in zip(placed, first, strict=True)), xs
    titles = {_bar(page, j["id"]).locator("title").text_content().split("\n", 1)[1]
              for j in SAME_INSTANTS}
    assert len(titles) == 1, titles
    assert page.diamond_errors == []


# -- a calibrated predicted start ---------------------------------------------------------

def test_a_queued_jobs_calibrated_start_and_its_basis_are_in_plain_view(page):
    """The queued job's row says when it should start with the 90% bound; its card, opened,
    says in text (not only on hover) that the estimate is calibrated."""
    row = job_row(page, PREDICTED["id"])
    row.scroll_into_view_if_needed()
    expect(row.locator("[data-diamond-predicted]")).to_have_text(
        re.compile(r"^starts ≈ (29|30) min \(90%: < 1\.5 h\)$"))
    row.locator(".jp-diamond-job-main").click()
    basis = row.locator("[data-diamond-predicted-basis]")
    expect(basis).to_be_visible()
    expect(basis).to_have_text("predicted start: calibrated estimate (90% upper bound)")
    row.locator(".jp-diamond-job-main").click()
    expect(basis).to_have_count(0)
    # a running job predicts nothing
    expect(job_row(page, CARD["id"]).locator("[data-diamond-predicted]")).to_have_count(0)
    assert page.diamond_errors == []


def test_a_start_predicted_without_a_bound_is_not_said_to_have_one(page):
    """Was "calibrated estimate (90% upper bound)" for a start of no known source and no
    bound: its card says an estimate, no bound, and its row no 90% figure."""
    row = job_row(page, UNBOUNDED["id"])
    row.scroll_into_view_if_needed()
    expect(row.locator("[data-diamond-predicted]")).to_have_text(
        re.compile(r"^starts ≈ (29|30) min$"))
    row.locator(".jp-diamond-job-main").click()
    basis = row.locator("[data-diamond-predicted-basis]")
    expect(basis).to_have_text("predicted start: estimate")
    row.locator(".jp-diamond-job-main").click()
    expect(basis).to_have_count(0)
    assert page.diamond_errors == []


# -- many sites, many steps, a long name --------------------------------------------------

def test_thirty_three_sites_scroll_inside_the_sidebar_without_breaking_it(page):
    """Every site has its row once; the last one is reached by scrolling the sidebar and
    shows whole; nothing reaches past the sidebar's edge."""
    panel = sidebar_panel(page)
    for site in SITES:
        expect(site_row(page, site)).to_have_count(1)
    last = site_row(page, MANY[-1])
    last.scroll_into_view_if_needed()
    expect(last).to_be_in_viewport()
    assert panel.evaluate("p => p.scrollHeight > p.clientHeight")  # it scrolls, not grows
    box, sidebar = last.bounding_box(), panel.bounding_box()
    assert box and sidebar and box["x"] + box["width"] <= sidebar["x"] + sidebar["width"] + 1
    _no_overflow(page)
    assert page.diamond_errors == []


def test_a_workflow_of_25_steps_counts_them_and_keeps_each_readable(page):
    """The workflow says in one line how many steps it has and how many are in each state;
    each of the 25 steps is drawn once with its name whole (not cut), no step box over
    another."""
    card = sidebar_panel(page).locator(f'[data-diamond-workflow="{WORKFLOW["id"]}"]')
    card.scroll_into_view_if_needed()
    expect(card.locator("[data-diamond-step-count]")).to_have_text(
        "25 steps: 12 COMPLETED, 8 PENDING, 5 RUNNING")
    steps = card.locator("[data-diamond-step]")
    expect(steps).to_have_count(25)
    found = card.evaluate("""c => {
        const boxes = [...c.querySelectorAll('[data-diamond-step]')];
        const cut = boxes.map(b => b.querySelector('strong'))
            .filter(n => n.scrollWidth > n.clientWidth + 1 || n.getClientRects().length === 0)
            .map(n => n.textContent);
        const rects = boxes.map(b => b.getBoundingClientRect());
        const over = [];
        rects.forEach((a, i) => rects.slice(i + 1).forEach((b, j) => {
            if (a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1
                && b.top < a.bottom - 1) over.push([i, i + 1 + j]); }));
        return {cut, over};
    }""")
    assert found == {"cut": [], "over": []}
    _no_overflow(page)
    assert page.diamond_errors == []


def test_a_step_state_named_proto_is_counted_like_any_other(page):
    """Was "3 steps: 1 RUNNING": the counts were a plain object, `__proto__` dropped."""
    card = sidebar_panel(page).locator(f'[data-diamond-workflow="{ODD_STATES["id"]}"]')
    card.scroll_into_view_if_needed()
    expect(card.locator("[data-diamond-step-count]")).to_have_text(
        "3 steps: 2 __proto__, 1 RUNNING")
    assert page.diamond_errors == []


def test_a_200_character_job_name_stays_inside_the_sidebar_and_whole_on_demand(page):
    """The row of a job named with 200 characters keeps inside the sidebar; its whole name
    is its title and its label for a screen reader; its bar's label is cut with '…'."""
    assert len(LONG_NAME) == 200
    row = job_row(page, LONG["id"])
    row.scroll_into_view_if_needed()
    expect(row.locator(".jp-diamond-job-name")).to_have_attribute("title", LONG_NAME)
    expect(row).to_have_attribute("aria-label", f"{LONG_NAME}, RUNNING on cluster-03")
    label = _bar(page, LONG["id"]).locator("text")
    expect(label).to_have_text(re.compile("^long-0[^…]*…$"))
    assert len(label.text_content()) < 60
    row.locator(".jp-diamond-job-main").click()
    expect(row.locator("[data-diamond-job-details]")).to_contain_text(LONG_NAME)
    _no_overflow(page)
    row.locator(".jp-diamond-job-main").click()
    assert page.diamond_errors == []


# -- the keyboard in a job's card ---------------------------------------------------------

def test_tab_walks_a_job_cards_controls_in_reading_order_and_back(page):
    """A job's card opened with Enter: Tab goes from the row through each of its buttons
    once, in the order they are read (top to bottom, left to right), then leaves the card;
    Shift+Tab walks back the same way."""
    row = job_row(page, CARD["id"])
    row.scroll_into_view_if_needed()
    row.focus()
    page.keyboard.press("Enter")
    expect(row).to_have_attribute("data-diamond-details-open", "")
    controls = row.locator("button:visible, a[href]:visible, [tabindex='0']:visible")
    expected = controls.evaluate_all("""els => els
        .map(e => { const r = e.getBoundingClientRect();
                    return [Math.round(r.top), Math.round(r.left), e.outerHTML.slice(0, 80)]; })
        .sort((a, b) => a[0] - b[0] || a[1] - b[1]).map(e => e[2])""")
    assert len(expected) >= 2, expected  # the copy-id button and the logs button at least
    here = "() => document.activeElement.outerHTML.slice(0, 80)"
    walked = []
    for _ in expected:
        page.keyboard.press("Tab")
        walked.append(page.evaluate(here))
    assert walked == expected
    page.keyboard.press("Tab")
    assert not row.evaluate("r => r.contains(document.activeElement)")
    back = []
    for _ in expected:
        page.keyboard.press("Shift+Tab")
        back.append(page.evaluate(here))
    assert back == expected[::-1]
    page.keyboard.press("Shift+Tab")
    expect(row).to_be_focused()
    page.keyboard.press("Enter")
    expect(row).not_to_have_attribute("data-diamond-details-open", "")
    assert page.diamond_errors == []


# -- events out of order; the sidebar closed and opened ------------------------------------

def test_a_state_event_before_its_submits_shows_one_row_in_the_later_state(page):
    """The job's RUNNING report comes before its submit's record (PENDING, naming the
    provisional row): one row, by the job's id, RUNNING, named; the provisional row gone."""
    wire = page.diamond_wire
    provisional = "tokyo:pending-tok9"
    wire.send("job-state", {"kind": "job.submitted", "job_id": provisional, "previous": None,
                            "state": "SUBMITTING", "at": _at(_now(), 1), "site": "tokyo",
                            "name": "raced"})
    expect(_rows_of(page, provisional)).to_have_count(1)
    job_id = "tokyo:901"
    # the store's record once both are in (a later state read lists it)
    wire.jobs.insert(0, _job(_now(), job_id, "raced", minutes_ago=1))
    wire.send("job-state", {"kind": "job.updated", "job_id": job_id, "site": "tokyo",
                            "state": "RUNNING", "previous": "PENDING",
                            "at": _at(_now(), 0, "Asia/Tokyo")})
    wire.send("job-state", {"kind": "job.submitted", "job_id": job_id,
                            "previous_id": provisional, "state": "PENDING", "previous": None,
                            "at": _at(_now(), 1, "Asia/Tokyo"), "site": "tokyo", "name": "raced"})
    rows = sidebar_panel(page).locator("li[data-diamond-job]", has_text="raced")
    expect(rows).to_have_count(1)
    expect(rows).to_have_attribute("data-diamond-job", job_id)
    expect(rows).to_have_attribute("data-diamond-state", "RUNNING")
    expect(_rows_of(page, provisional)).to_have_count(0)
    expect(_bar(page, job_id)).to_have_count(1)
    expect(_bar(page, provisional)).to_have_count(0)
    assert page.diamond_errors == []


def test_the_sidebar_closed_and_opened_again_keeps_one_stream_and_one_row_each(page):
    """Closed with its tab and opened again, the sidebar still listens on one socket: an
    event sent then changes its job's row once, adds one activity line, and no row is
    doubled."""
    wire = page.diamond_wire
    tab = page.locator('.jp-SideBar.jp-mod-left li[data-id="diamond-sidebar"]')
    panel = sidebar_panel(page)
    sockets = len(wire.open_sockets())
    ids_before = panel.locator("li[data-diamond-job]").evaluate_all(
        "rows => rows.map(r => r.getAttribute('data-diamond-job'))")
    tab.click()
    expect(panel).to_be_hidden()
    open_sidebar(page)
    expect(panel.locator('[data-diamond-status="live"]')).to_be_visible()
    assert len(wire.open_sockets()) == sockets
    emission = wire.send("job-state", {"kind": "job.updated", "job_id": CARD["id"],
                                       "site": CARD["site"], "state": "COMPLETED",
                                       "previous": "RUNNING", "at": _at(_now(), 0), "exit_code": 0})
    expect(job_row(page, CARD["id"])).to_have_attribute("data-diamond-state", "COMPLETED")
    lines = panel.locator('[data-diamond-event="job.updated"]', has_text=CARD["id"])
    expect(lines.first).to_be_attached()
    assert lines.count() == 1, emission
    ids = panel.locator("li[data-diamond-job]").evaluate_all(
        "rows => rows.map(r => r.getAttribute('data-diamond-job'))")
    assert len(ids) == len(set(ids)) and sorted(ids) == sorted(ids_before), ids
    assert page.diamond_errors == []


# -- a browser zoom of 200% -----------------------------------------------------------------

def test_the_sidebar_at_a_browser_zoom_of_200_percent(bare_lab, browser):
    """A 1400x900 window zoomed to 200% (700x450 CSS pixels at twice the density): the
    sidebar goes live, its sites, rows and timeline keep inside it, a job's card opens and
    its copy-id button is reachable on screen."""
    p = _new_page(browser, bare_lab, width=700, height=450, scale=2)
    try:
        panel = live_sidebar(p)
        expect(site_row(p, "tokyo")).to_be_visible()
        expect(_bar(p, SAME_INSTANTS[0]["id"])).to_be_attached(timeout=30_000)
        row = job_row(p, CARD["id"])
        row.scroll_into_view_if_needed()
        row.locator(".jp-diamond-job-main").click()
        copy = row.locator("[data-diamond-copy-id]")
        copy.scroll_into_view_if_needed()
        expect(copy).to_be_in_viewport()
        _no_overflow(p)
        assert panel.evaluate("p => p.clientWidth") >= 200
        assert p.diamond_errors == []
    finally:
        p.context.close()
