"""The sidebar in more cases a user meets that no other UI test shows, in a real JupyterLab
and chromium, without the test bed: the page's event sockets counted with the sidebar and
the dashboard open, twenty sites, a site whose name holds markup, a job reason that is one
very long token, a timeline (the sidebar's and the dashboard's) across midnight in another
time zone, an event older than the job's state arriving after it, the state colours in the
dark theme, an approval done with the keyboard only (the plan's whole script shown, its
sha256 sent), a reconnect while a plan waits, and the browser zoomed to 200%.

As in `test_ui_unseen.py`, the sidebar's GETs are answered at the wire level from the records
below (the routes' shapes) and the event socket is served by the test; the server itself is
real (no sites file)."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone

import pytest
from dashboard_helpers import big_dashboard, open_from_palette, serve_recorded
from playwright.sync_api import Locator, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from sidebar_lab import (
    CONTRAST_JS,
    fresh_sidebar,  # noqa: F401 (the autouse `_fresh_sidebar` fixture)
    job_row,
    live_sidebar,
    module_page,  # noqa: F401 (the `page` fixture)
    new_lab_page,
    sidebar_panel,
    themed_sidebar,
)
from test_sidebar import expect_focused, focus_holder, open_sidebar
from wire_helpers import WireBase, healthy_site

from conftest import api

NOW = datetime.now(timezone.utc)
MARKUP_SITE = "<img src=x onerror=window.__diamondPwned=1>"
SITES = [f"site-{i:02d}" for i in range(19)] + [MARKUP_SITE]
LONG_TOKEN = "ReqNodeNotAvail,UnavailableNodes:" + "node" * 120 + "0123456789" * 8
LONG_ID, MARKUP_JOB_ID = "site-00:10", f"{MARKUP_SITE}:11"
STALE_ID, REQUEUE_ID, MIDNIGHT_ID = "site-01:20", "site-02:21", "site-03:22"
REPLAYED_ID = "site-05:23"
LATE_ID, CAUGHT_UP_ID, RELOADED_ID, FALLBACK_ID = "site-06:24", "site-07:25", "site-08:26", \
    "site-09:27"
TASK_ID = "task-approve-1"
SCRIPT = "#!/bin/bash\n#SBATCH --job-name=approved-run\n" + "".join(
    f"echo step-{i:03d}\n" for i in range(200)) + "echo the-last-line\n"
SCRIPT_SHA = "ab" * 32
PLAN_SHA = "cd" * 32
LAST_SEQ = 500


def _iso(t: datetime) -> str:
    return t.isoformat()


def _job(job_id: str, name: str, state: str, *, submitted: datetime,
         started: datetime | None = None, ended: datetime | None = None,
         reason: str | None = None) -> dict:
    site, native = job_id.rsplit(":", 1)
    return {"id": job_id, "site": site, "native_id": native, "name": name, "state": state,
            "submitted_at": _iso(submitted), "started_at": _iso(started) if started else None,
            "ended_at": _iso(ended) if ended else None,
            "exit_code": 0 if state == "COMPLETED" else None, "reason": reason,
            "placement": None, "origin": None}


def _jobs(now: datetime) -> list[dict]:
    """The records' jobs, their times counted back from `now`."""
    return [
        _job(LONG_ID, "long-reason", "PENDING", submitted=now - timedelta(minutes=2),
             reason=LONG_TOKEN),
        _job(MARKUP_JOB_ID, "on-the-markup-site", "RUNNING", submitted=now - timedelta(minutes=3),
             started=now - timedelta(minutes=2)),
        _job(STALE_ID, "stale-event", "RUNNING", submitted=now - timedelta(minutes=20),
             started=now - timedelta(minutes=10)),
        _job(REQUEUE_ID, "requeued", "RUNNING", submitted=now - timedelta(minutes=25),
             started=now - timedelta(minutes=15)),
        _job(MIDNIGHT_ID, "across-midnight", "RUNNING", submitted=now - timedelta(minutes=90),
             started=now - timedelta(minutes=80)),
        _job(REPLAYED_ID, "replayed", "PENDING", submitted=now - timedelta(minutes=4),
             reason="Priority"),
        *(_job(job_id, name, "RUNNING", submitted=now - timedelta(minutes=30),
               started=now - timedelta(minutes=20))
          for job_id, name in ((LATE_ID, "late-report"), (CAUGHT_UP_ID, "caught-up"),
                               (RELOADED_ID, "reloaded"), (FALLBACK_ID, "fallback-socket"))),
    ]


JOBS = _jobs(NOW)
PLAN = {"action": "submit", "site": "site-04", "scheduler": "slurm", "partition": "batch",
        "spec": {"name": "approved-run", "command": "bash run.sh", "nodes": 1},
        "data_movements": [], "script": SCRIPT, "script_sha256": SCRIPT_SHA}
TASK = {"id": TASK_ID, "state": "awaiting_approval", "prompt": "run the approved job",
        "data": {"pending": {"tool": "submit_job", "plan": PLAN, "plan_sha256": PLAN_SHA}},
        "waiting_on": [], "created_at": _iso(NOW - timedelta(minutes=1)),
        "updated_at": _iso(NOW - timedelta(minutes=1))}
STATE = {"sites": [healthy_site(s) for s in SITES], "jobs": JOBS, "jobs_total": len(JOBS),
         "tasks": [TASK], "transfers": [], "events": [], "last_seq": LAST_SEQ, "error": None}


class Wire(WireBase):
    """The page's diamond GETs answered from the records; its event sockets served by the
    test when `serve_sockets` (else they reach the real server). Approve and reject POSTs
    are answered too, their bodies kept in `decisions`; /state lists the stored events in
    `stored` (as the store keeps them, before LAST_SEQ); /state's jobs are `jobs` if given.
    """

    first_seq = LAST_SEQ

    def __init__(self, page: Page, *, serve_sockets: bool = True,
                 jobs: list[dict] | None = None) -> None:
        super().__init__(page, serve_sockets=serve_sockets)
        self.state = STATE if jobs is None else {**STATE, "jobs": jobs}
        self.stored: list[dict] = []
        self.decisions: list[tuple[str, dict]] = []

    def _answer(self, route) -> None:
        path, query = self.request_of(route)
        if route.request.method == "POST" and path.startswith("tasks/"):
            decision = path.rsplit("/", 1)[1]
            self.decisions.append((decision, json.loads(route.request.post_data or "{}")))
            state = "running" if decision == "approve" else "rejected"
            body = {**TASK, "state": state, "pending": None}
        elif route.request.method != "GET":
            route.continue_()
            return
        elif path == "state":
            body = {**self.state, "events": self.stored, "last_seq": self.last_seq}
        elif path == "events":
            body = self.replay_body(int(query.get("since", 0)))
        elif path == "jobs":
            body = {"jobs": [], "total": len(JOBS)}
        else:
            self.answer_idle(route, path)
            return
        self.fulfill_json(route, body)

    def emit(self, schema: str, payload: dict, *, live: bool = True) -> dict:
        return self.send(schema, payload, live=live)

    def job_state(self, job_id: str, state: str, at: datetime, *, live: bool = True) -> dict:
        return self.emit("job-state", {"kind": "job.state", "job_id": job_id, "state": state,
                                       "previous": None, "at": _iso(at)}, live=live)


def _new_page(browser, server, *, width: int = 1400, height: int = 900, scale: float = 1,
              serve_sockets: bool = True, before_load=None, at: datetime | None = None) -> Page:
    """A page on `server` whose diamond requests the records answer. With `at`, the page's
    clock stands still at that instant and the jobs' times count back from it."""
    def wire_then(page: Page) -> None:
        page.diamond_wire = Wire(  # type: ignore[attr-defined]
            page, serve_sockets=serve_sockets, jobs=None if at is None else _jobs(at))
        if at is not None:
            page.clock.set_fixed_time(at)
        if before_load:
            before_load(page)

    return new_lab_page(browser, server, width=width, height=height, scale=scale,
                        before_load=wire_then)


def _site_row(page: Page, name: str):
    return sidebar_panel(page).locator("[data-diamond-site]").filter(
        has=page.locator(".jp-diamond-site-name", has_text=re.compile(f"^{re.escape(name)}$")))


# -- one event socket per page ------------------------------------------------------------

def test_one_event_socket_per_page_with_sidebar_and_dashboard(bare_lab, browser):
    """The page holds one socket to /api/events/subscribe with the sidebar and the dashboard
    both open (JupyterLab's, shared); before, the sidebar opened a second one of its own."""
    sockets: list = []

    def count(page: Page) -> None:
        page.on("websocket", lambda ws: sockets.append(ws)
                if "/api/events/subscribe" in ws.url else None)

    p = _new_page(browser, bare_lab, serve_sockets=False, before_load=count)
    try:
        live_sidebar(p)
        open_from_palette(p)
        # the dashboard's first paint is in; any socket it or the sidebar opens is open now
        expect(p.locator("[data-diamond-dashboard]")).to_be_visible()
        p.wait_for_function("() => window.__diamondStats !== undefined")
        opened = [ws for ws in sockets if not ws.is_closed()]
        assert len(opened) == 1, [ws.url for ws in opened]
        assert not p.diamond_errors, p.diamond_errors
    finally:
        p.context.close()


def test_the_shared_socket_dropped_and_back_replays_what_was_missed(page):
    """The page's one socket closes: the chip leaves `live`; an event stored meanwhile is
    replayed once the socket is back (the reconnect is still seen on the shared socket)."""
    wire = page.diamond_wire
    chip = sidebar_panel(page).locator("[data-diamond-status]")
    assert len(wire.open_sockets()) == 1, len(wire.open_sockets())
    wire.drop()
    expect(chip).not_to_have_attribute("data-diamond-status", "live")
    wire.job_state(REPLAYED_ID, "RUNNING", datetime.now(timezone.utc), live=False)
    expect(chip).to_have_attribute("data-diamond-status", "live", timeout=60_000)
    expect(job_row(page, REPLAYED_ID)).to_have_attribute("data-diamond-state", "RUNNING")
    assert len(wire.open_sockets()) == 1, len(wire.open_sockets())


# -- twenty sites, markup in a site's name ------------------------------------------------

def test_twenty_sites_listed_in_order_with_their_count(page):
    rows = sidebar_panel(page).locator("[data-diamond-site]")
    expect(rows).to_have_count(len(SITES))
    names = rows.locator(".jp-diamond-site-name").all_text_contents()
    assert names == SITES, names
    count = sidebar_panel(page).locator('[data-diamond-section="sites"] .jp-diamond-count')
    expect(count).to_have_text(str(len(SITES)))


def test_the_twentieth_site_is_reached_by_scrolling_and_its_partitions_open(page):
    last = _site_row(page, SITES[-2])
    last.scroll_into_view_if_needed()
    expect(last).to_be_in_viewport()
    toggle = last.get_by_role("button", name=f"Show partitions of {SITES[-2]}")
    toggle.focus()
    expect_focused(page, toggle, f"{SITES[-2]}'s partitions toggle")
    page.keyboard.press("Enter")
    expect(last.locator("[data-diamond-partition=batch]")).to_be_visible()
    hide = last.get_by_role("button", name=f"Hide partitions of {SITES[-2]}")
    expect_focused(page, hide, "the toggle, once its partitions are shown")
    page.keyboard.press("Enter")
    expect(last.locator("[data-diamond-partition=batch]")).to_have_count(0)


def test_site_name_with_markup_is_text_in_its_row(page):
    row = _site_row(page, MARKUP_SITE)
    expect(row).to_have_count(1)
    expect(row).to_have_attribute("data-diamond-site", MARKUP_SITE)
    expect(row.locator(".jp-diamond-site-name")).to_have_text(MARKUP_SITE)
    assert sidebar_panel(page).locator("img[src='x']").count() == 0
    assert page.evaluate("() => window.__diamondPwned") is None


def test_site_name_with_markup_is_text_on_the_timeline_and_its_job(page):
    timeline = sidebar_panel(page).locator('[data-diamond-section="timeline"]')
    lane = timeline.locator("[data-diamond-timeline]").filter(
        has=page.locator(f'[data-diamond-job-bar="{MARKUP_JOB_ID}"]'))
    expect(lane).to_have_count(1)
    expect(lane).to_have_attribute("data-diamond-timeline", MARKUP_SITE)
    expect(lane).to_contain_text(MARKUP_SITE)
    row = job_row(page, MARKUP_JOB_ID)
    expect(row).to_have_attribute("data-diamond-state", "RUNNING")
    assert page.locator("img[src='x']").count() == 0
    assert page.evaluate("() => window.__diamondPwned") is None


def _wider_than_the_panel(page: Page) -> list[str]:
    """The text reaching past the sidebar's right edge, with its element (what overflows;
    text clipped by an element that hides its overflow is left out)."""
    return page.evaluate("""() => {
        const panel = document.getElementById('diamond-sidebar');
        const right = panel.getBoundingClientRect().right;
        const out = [];
        const walk = document.createTreeWalker(panel, NodeFilter.SHOW_TEXT);
        for (let n = walk.nextNode(); n; n = walk.nextNode()) {
            const range = document.createRange();
            range.selectNodeContents(n);
            const clip = n.parentElement.closest('[style*=overflow], .jp-diamond-site-name,'
                                                 + ' .jp-diamond-job-name');
            if (range.getBoundingClientRect().right > right + 1 && !clip)
                out.push(n.parentElement.tagName + ' ' + n.textContent.slice(0, 40));
        }
        return out.slice(0, 8);
    }""")


# -- a reason that is one very long token -------------------------------------------------

def test_long_unbroken_reason_stays_inside_the_sidebar(page):
    row = job_row(page, LONG_ID)
    reason = row.locator("[data-diamond-reason]")
    expect(reason).to_be_visible()
    right = sidebar_panel(page).evaluate("e => e.getBoundingClientRect().right")
    box = reason.bounding_box()
    assert box and box["x"] + box["width"] <= right + 1, (box, right)
    widths = sidebar_panel(page).evaluate("e => [e.scrollWidth, e.clientWidth]")
    assert widths[0] <= widths[1] + 1, (widths, _wider_than_the_panel(page))


def test_long_unbroken_reason_is_all_readable(page):
    """Wrapped, not clipped: every character of the token is in the row's text, and the
    reason's box is as wide as its text (nothing hidden behind an ellipsis)."""
    reason = job_row(page, LONG_ID).locator("[data-diamond-reason]")
    expect(reason).to_have_text(LONG_TOKEN)
    clipped = reason.evaluate("e => e.scrollWidth > e.clientWidth + 1")
    assert not clipped


# -- a stale event after a newer one ------------------------------------------------------

def test_stale_event_does_not_move_a_finished_job_back(page):
    """COMPLETED (now), then a RUNNING observed earlier arrives later (a slower poll): the
    row stays COMPLETED and its badge says so."""
    wire = page.diamond_wire
    now = datetime.now(timezone.utc)
    wire.job_state(STALE_ID, "COMPLETED", now)
    row = job_row(page, STALE_ID)
    expect(row).to_have_attribute("data-diamond-state", "COMPLETED")
    stale = wire.job_state(STALE_ID, "RUNNING", now - timedelta(minutes=1))
    page.wait_for_function("s => window.__diamondStats.seen(s, s) === 1", arg=stale["seq"])
    expect(row).to_have_attribute("data-diamond-state", "COMPLETED")
    expect(row.locator(".jp-diamond-badge")).to_have_text(re.compile("COMPLETED", re.I))


def test_a_newer_requeue_still_moves_a_job_back_to_the_queue(page):
    """The guard is on time, not on state order: a RUNNING job requeued later (a newer
    event) shows PENDING."""
    wire = page.diamond_wire
    wire.job_state(REQUEUE_ID, "PENDING", datetime.now(timezone.utc) + timedelta(seconds=1))
    expect(job_row(page, REQUEUE_ID)).to_have_attribute("data-diamond-state", "PENDING")


# -- a stale event in the activity feed -------------------------------------------------

def _activity(page: Page, job_id: str):
    """The activity lines about `job_id`, newest first."""
    return sidebar_panel(page).locator('[data-diamond-section="activity"] li',
                                has_text=f"{job_id}: ")


def _expect_late_running_after_completed(page: Page, job_id: str) -> None:
    """Two lines about the job: the newest says the late RUNNING report is late and that the
    job is already COMPLETED (muted, marked), the one below is the COMPLETED itself."""
    lines = _activity(page, job_id)
    expect(lines).to_have_count(2)
    late, done = lines.nth(0), lines.nth(1)
    expect(late).to_have_attribute("data-diamond-stale", "COMPLETED")
    expect(late).to_contain_text(
        f"{job_id}: RUNNING (reported late; the job is already COMPLETED)")
    expect(late).to_have_class(re.compile(r"\bjp-diamond-muted\b"))
    expect(done).not_to_have_attribute("data-diamond-stale", re.compile(".*"))
    expect(done).to_contain_text(f"{job_id}: COMPLETED")
    expect(job_row(page, job_id)).to_have_attribute("data-diamond-state", "COMPLETED")


def test_a_stale_event_is_shown_as_a_late_report_in_the_activity_feed(page):
    """COMPLETED, then a RUNNING observed a minute earlier arrives: its activity line says
    it is a late report of a job already COMPLETED. Before, the feed's newest line read
    "site-06:24: RUNNING", as if the finished job had started again."""
    wire = page.diamond_wire
    now = datetime.now(timezone.utc)
    wire.job_state(LATE_ID, "COMPLETED", now)
    expect(job_row(page, LATE_ID)).to_have_attribute("data-diamond-state", "COMPLETED")
    stale = wire.job_state(LATE_ID, "RUNNING", now - timedelta(minutes=1))
    page.wait_for_function("s => window.__diamondStats.seen(s, s) === 1", arg=stale["seq"])
    _expect_late_running_after_completed(page, LATE_ID)


def test_stale_event_missed_while_away_is_replayed_once_and_shown_late(page):
    """Both events stored while the socket was away: the catch-up replay after the reconnect
    shows each once, the late one as late; a live event after it adds one line."""
    wire = page.diamond_wire
    chip = sidebar_panel(page).locator("[data-diamond-status]")
    now = datetime.now(timezone.utc)
    wire.drop()
    expect(chip).not_to_have_attribute("data-diamond-status", "live")
    wire.job_state(CAUGHT_UP_ID, "COMPLETED", now, live=False)
    wire.job_state(CAUGHT_UP_ID, "RUNNING", now - timedelta(minutes=1), live=False)
    expect(chip).to_have_attribute("data-diamond-status", "live", timeout=60_000)
    _expect_late_running_after_completed(page, CAUGHT_UP_ID)
    after = wire.emit("activity", {"kind": "job.note", "job_id": CAUGHT_UP_ID,
                                   "site": CAUGHT_UP_ID.split(":")[0], "at": _iso(now),
                                   "data": {"message": "after the replay"}})
    page.wait_for_function("s => window.__diamondStats.seen(s, s) === 1", arg=after["seq"])
    expect(_activity(page, CAUGHT_UP_ID)).to_have_count(3)
    expect(_activity(page, CAUGHT_UP_ID).nth(0)).to_contain_text("after the replay")


def test_stale_event_in_the_stored_events_is_shown_late_after_a_reload(bare_lab, browser):
    """A page opened after both events were stored (/state lists them): the late one is
    marked as it was live, by sequence order, not by the job's final state."""
    now = datetime.now(timezone.utc)

    def stored(seq: int, state: str, at: datetime) -> dict:
        return {"seq": seq, "kind": "job.state", "at": _iso(at), "job_id": RELOADED_ID,
                "site": RELOADED_ID.split(":")[0], "data": {"state": state, "previous": None}}

    def store_both(page: Page) -> None:
        page.diamond_wire.stored.extend([
            stored(LAST_SEQ - 3, "RUNNING", now - timedelta(minutes=20)),
            stored(LAST_SEQ - 2, "COMPLETED", now),
            stored(LAST_SEQ - 1, "RUNNING", now - timedelta(minutes=1))])

    p = _new_page(browser, bare_lab, before_load=store_both)
    try:
        live_sidebar(p)
        lines = _activity(p, RELOADED_ID)
        expect(lines).to_have_count(3)
        expect(lines.nth(2)).to_contain_text(f"{RELOADED_ID}: RUNNING")
        expect(lines.nth(2)).not_to_have_attribute("data-diamond-stale", re.compile(".*"))
        expect(lines.nth(1)).to_contain_text(f"{RELOADED_ID}: COMPLETED")
        expect(lines.nth(0)).to_have_attribute("data-diamond-stale", "COMPLETED")
        expect(lines.nth(0)).to_contain_text("reported late; the job is already COMPLETED")
    finally:
        p.context.close()


# -- JupyterLab's event manager without the socket field: the fallback socket ------------

# Run before JupyterLab's code: the first object that sets `_socket` with a `_subscribe`
# method (JupyterLab's EventManager, in its constructor) gets that field kept out of sight:
# a proxy between EventManager.prototype and Object.prototype stores it aside and answers
# `'_socket' in manager` with false, as a JupyterLab that renamed the field would. The
# page's open event sockets are counted by `window.__openEventSockets()`.
HIDE_SOCKET_FIELD = """(() => {
    const aside = new WeakMap();
    Object.defineProperty(Object.prototype, '_socket', { configurable: true,
        set(value) {
            if (typeof this._subscribe !== 'function') {
                Object.defineProperty(this, '_socket', { value, writable: true,
                                                         enumerable: true, configurable: true });
                return;
            }
            delete Object.prototype._socket;
            const proto = Object.getPrototypeOf(this);
            Object.setPrototypeOf(proto, new Proxy(Object.getPrototypeOf(proto), {
                has: (t, k) => k !== '_socket' && Reflect.has(t, k),
                get: (t, k, r) => k === '_socket' ? aside.get(r) : Reflect.get(t, k, r),
                set: (t, k, v, r) => k === '_socket' ? (aside.set(r, v), true)
                                                      : Reflect.set(t, k, v, r)
            }));
            aside.set(this, value);
            window.__diamondSocketFieldHidden = true;
        }
    });
    const sockets = [];
    const Base = window.WebSocket;
    window.WebSocket = class extends Base {
        constructor(url, protocols) {
            super(url, protocols);
            if (String(url).includes('/api/events/subscribe')) sockets.push(this);
        }
    };
    window.__openEventSockets = () => sockets.filter(s => s.readyState === Base.OPEN).length;
})();"""


def test_without_the_socket_field_the_own_socket_still_replays_after_a_reconnect(
        bare_lab, browser):
    """JupyterLab's event manager without the `_socket` field the sidebar watches: the
    sidebar opens its own socket beside it, takes live events from it once each, and after
    that socket drops replays what was stored meanwhile."""
    p = _new_page(browser, bare_lab,
                  before_load=lambda page: page.add_init_script(HIDE_SOCKET_FIELD))
    try:
        panel = live_sidebar(p)
        p.wait_for_function("() => window.__diamondStats !== undefined")
        assert p.evaluate("() => window.__diamondSocketFieldHidden") is True
        wire = p.diamond_wire
        two_open = "() => window.__openEventSockets() === 2"  # JupyterLab's, the sidebar's
        p.wait_for_function(two_open)
        row = job_row(p, FALLBACK_ID)
        live = wire.job_state(FALLBACK_ID, "PENDING", datetime.now(timezone.utc))
        expect(row).to_have_attribute("data-diamond-state", "PENDING")
        p.wait_for_function("s => window.__diamondStats.seen(s, s) === 1", arg=live["seq"])
        assert p.evaluate("() => window.__diamondStats.received") == 1
        chip = panel.locator("[data-diamond-status]")
        wire.drop()
        expect(chip).not_to_have_attribute("data-diamond-status", "live")
        wire.job_state(FALLBACK_ID, "RUNNING", datetime.now(timezone.utc), live=False)
        expect(chip).to_have_attribute("data-diamond-status", "live", timeout=60_000)
        expect(row).to_have_attribute("data-diamond-state", "RUNNING")
        expect(_activity(p, FALLBACK_ID)).to_have_count(2)
        p.wait_for_function(two_open)
        assert not p.diamond_errors, p.diamond_errors
    finally:
        p.context.close()


# -- the plan waiting for approval, by keyboard -------------------------------------------

def _task(page: Page):
    return sidebar_panel(page).locator(f'[data-diamond-task="{TASK_ID}"]')


def test_the_plan_shows_the_whole_rendered_script(page):
    task = _task(page)
    expect(task).to_have_attribute("data-diamond-task-state", "awaiting_approval")
    script = task.locator(f'[data-diamond-plan-script="{TASK_ID}"]')
    expect(script).to_have_text(SCRIPT.rstrip("\n"), use_inner_text=True)
    # the last line can be scrolled to and seen (the pre scrolls, nothing is cut)
    seen = script.evaluate("""e => { e.scrollTop = e.scrollHeight;
        return e.scrollHeight <= e.clientHeight || e.scrollTop > 0 ||
               getComputedStyle(e).overflowY === 'visible'; }""")
    assert seen
    expect(task).to_contain_text(f"sha256 {SCRIPT_SHA[:16]}")


def _tab_to(page: Page, name: str, limit: int = 400) -> None:
    """Press Tab until the focused element's accessible name is `name`, each stop on the
    way in the sidebar (a focus that left it fails at once, saying where it went)."""
    for n in range(limit):
        try:  # the label read in the same look that finds the focus in the sidebar
            label = page.wait_for_function("""() => { const e = document.activeElement;
                return e?.closest('#diamond-sidebar') ? [e.getAttribute('aria-label')] : null;
            }""", timeout=5_000).json_value()[0]
        except PlaywrightTimeout:
            raise AssertionError(f"Tab {n} on the way to {name!r}: {focus_holder(page)}, "
                                 "out of the sidebar") from None
        if label == name:
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"Tab never reached {name!r}")


def _tab_to_plan_button(page: Page, verb: str) -> Locator:
    """The task awaiting approval in the live sidebar, with the keyboard's focus moved by Tab
    from the reload button to its "VERB the plan of" button."""
    panel = live_sidebar(page)
    task = panel.locator(f'[data-diamond-task="{TASK_ID}"]')
    expect(task).to_have_attribute("data-diamond-task-state", "awaiting_approval")
    reload_button = panel.get_by_role("button", name="Reload sites and jobs")
    reload_button.focus()
    expect_focused(page, reload_button, "the reload button")
    _tab_to(page, f"{verb} the plan of {TASK_ID}")
    return task


def test_approval_by_keyboard_sends_the_sha256_of_the_plan_shown(bare_lab, browser):
    p = _new_page(browser, bare_lab)
    try:
        task = _tab_to_plan_button(p, "Approve")
        p.keyboard.press("Enter")
        wire = p.diamond_wire
        expect(task).not_to_have_attribute("data-diamond-task-state", "awaiting_approval")
        assert wire.decisions == [("approve", {"plan_sha256": PLAN_SHA})], wire.decisions
        expect(task.get_by_role("button", name=f"Approve the plan of {TASK_ID}")).to_have_count(0)
    finally:
        p.context.close()


def test_reject_by_keyboard_sends_no_approval(bare_lab, browser):
    p = _new_page(browser, bare_lab)
    try:
        task = _tab_to_plan_button(p, "Reject")
        p.keyboard.press("Space")
        expect(task).to_have_attribute("data-diamond-task-state", "rejected")
        assert p.diamond_wire.decisions == [("reject", {})], p.diamond_wire.decisions
    finally:
        p.context.close()


def test_reconnect_during_an_approval_shows_the_decision_made_meanwhile(bare_lab, browser):
    """While the plan waits, the socket drops and the plan is approved elsewhere (another
    tab, `%diamond approve`): once back, the sidebar shows the task running and offers no
    Approve for a plan already decided."""
    p = _new_page(browser, bare_lab)
    try:
        panel = live_sidebar(p)
        task = panel.locator(f'[data-diamond-task="{TASK_ID}"]')
        approve = task.get_by_role("button", name=f"Approve the plan of {TASK_ID}")
        expect(approve).to_be_visible()
        wire = p.diamond_wire
        chip = panel.locator("[data-diamond-status]")
        wire.drop()
        expect(chip).not_to_have_attribute("data-diamond-status", "live")
        wire.emit("agent-step", {"kind": "agent.task", "task_id": TASK_ID, "state": "running",
                                 "at": _iso(datetime.now(timezone.utc)), "data": {}},
                  live=False)
        expect(chip).to_have_attribute("data-diamond-status", "live", timeout=60_000)
        expect(task).to_have_attribute("data-diamond-task-state", "running", timeout=30_000)
        expect(approve).to_have_count(0)
        assert wire.decisions == []
    finally:
        p.context.close()


# -- time zones, dark theme, zoom ---------------------------------------------------------

def _zone_just_past_midnight(at: datetime) -> str:
    """An Etc/GMT zone where the instant `at` is between 00:00 and 00:59 (so the 90 minutes
    before it cross midnight there)."""
    offset = (24 - at.astimezone(timezone.utc).hour) % 24
    if offset > 14:
        offset -= 24
    return f"Etc/GMT{-offset:+d}" if offset else "Etc/GMT"


# Instants the page's clock is pinned at, each read in the zone where it is just past
# midnight: a test shows the same page whatever the hour it runs at. 00:30 UTC on 1 March
# is midnight in UTC itself and a month's turn; 11:59 is the zone the farthest east (UTC+13).
PINNED = [datetime(2026, 3, 1, 0, 30, tzinfo=timezone.utc),
          datetime(2026, 3, 1, 11, 59, tzinfo=timezone.utc),
          datetime(2026, 3, 1, 23, 59, tzinfo=timezone.utc)]


def _day_in(page: Page, when: datetime, zone: str) -> str:
    """The day of `when` in `zone` as the page writes it (its locale's short month)."""
    return page.evaluate("([t, z]) => new Intl.DateTimeFormat(undefined, {timeZone: z, "
                         "month: 'short', day: 'numeric'}).format(new Date(t))",
                         [_iso(when), zone])


def _focus_until_tooltip_says(page: Page, bar, tooltip, text) -> None:
    """Focus `bar` until its `tooltip` contains `text`. On a busy machine JupyterLab may
    still be restoring its layout: it can take the focus, or hide the sidebar, just after
    the bar got it, which hides the tooltip (a user would focus the bar again). A tooltip
    missing while the bar keeps the focus fails at once."""
    for _ in range(3):
        open_sidebar(page)
        bar.focus()
        try:
            expect(tooltip).to_contain_text(text, timeout=10_000)
            return
        except AssertionError:
            if bar.evaluate("el => el === document.activeElement"):
                raise
    expect(tooltip).to_contain_text(text)


@pytest.mark.parametrize("at", PINNED, ids=lambda t: t.strftime("%H%MZ"))
def test_timeline_across_midnight_in_another_time_zone_shows_the_date(bare_lab, browser, at):
    """The sidebar's timeline in a zone where it is just past midnight, its job queued the
    evening before: the axis's start and the job's tooltip name that day."""
    zone = _zone_just_past_midnight(at)
    settings = "lab/api/settings/diamond-jupyter:plugin"
    api(bare_lab, "PUT", settings, {"raw": json.dumps({"timeZone": zone})})
    p = _new_page(browser, bare_lab, at=at)
    try:
        panel = live_sidebar(p)
        timeline = panel.locator('[data-diamond-section="timeline"]')
        bar = timeline.locator(f'[data-diamond-job-bar="{MIDNIGHT_ID}"]')
        expect(bar).to_have_count(1)
        assert p.evaluate("Date.now()") == at.timestamp() * 1000, "the page's clock is not pinned"
        day = _day_in(p, at - timedelta(minutes=90), zone)
        assert day != _day_in(p, at, zone), f"{at} in {zone} is not just past midnight"
        # the axis starts the day before "now" there: its start label names that day
        axis = timeline.locator(".jp-diamond-gantt-axis").first
        expect(axis).to_contain_text(day)
        tooltip = timeline.locator(f'[data-diamond-tooltip="{MIDNIGHT_ID}"]')
        _focus_until_tooltip_says(p, bar, tooltip, re.compile(rf"queued\s*{re.escape(day)}"))
    finally:
        p.context.close()
        api(bare_lab, "PUT", settings, {"raw": "{}"})


@pytest.mark.parametrize("at", [PINNED[0], PINNED[2]], ids=lambda t: t.strftime("%H%MZ"))
def test_dashboard_axes_across_midnight_name_the_day(bare_lab, browser, at):
    """The dashboard in a zone where it is just past midnight: the usage chart's start (six
    hours back) and the timeline's ticks before midnight name their day. Before, a span
    under a day showed bare times, yesterday's 23:00 beside today's 00:30."""
    zone = _zone_just_past_midnight(at)
    settings = "lab/api/settings/diamond-jupyter:plugin"
    api(bare_lab, "PUT", settings, {"raw": json.dumps({"timeZone": zone})})
    # answered before the page loads: an earlier test's dashboard, kept in the server's
    # workspace, is reopened (and asks for its queues) as the page starts
    p = _new_page(browser, bare_lab, width=1600, at=at, before_load=lambda page: serve_recorded(
        page, big_dashboard(SITES[:3], 30, now=at), now=at))
    try:
        live_sidebar(p)
        dash = open_from_palette(p)
        yesterday = _day_in(p, at - timedelta(hours=6), zone)
        assert yesterday != _day_in(p, at, zone), f"{at} in {zone} is not just past midnight"
        chart = dash.locator(f'[data-diamond-util-chart="{SITES[0]}"]')
        expect(chart.locator(".jp-diamond-chart-label", has_text=yesterday).first).to_be_attached()
        gantt = dash.locator(f'[data-diamond-gantt-job="{MIDNIGHT_ID}"]')
        expect(gantt).to_have_count(1)
        ticks = dash.locator(".jp-diamond-dgantt-lanes .jp-diamond-chart-label")
        expect(ticks.first).to_be_attached()
        assert any(yesterday in t for t in ticks.all_text_contents()), ticks.all_text_contents()
    finally:
        p.context.close()
        api(bare_lab, "PUT", settings, {"raw": "{}"})


def test_state_colours_stand_out_in_the_dark_theme(bare_lab, browser):
    """In JupyterLab Dark each state's legend key differs from the panel behind it by at
    least 3:1 (WCAG 1.4.11, graphics that carry meaning) and each job badge's text from
    the badge by at least 4.5:1. Before, running, failed, timeout and cancelled were the
    light theme's dark hues on a dark panel (2.1 to 2.9:1)."""
    with themed_sidebar(browser, bare_lab, _new_page) as (_, panel):
        keys = panel.locator("[data-diamond-legend-state] .jp-diamond-key")
        expect(keys).to_have_count(6)
        key_ratios = keys.evaluate_all(CONTRAST_JS + """els => els.map(e => [
            e.parentElement.dataset.diamondLegendState,
            ratio(getComputedStyle(e).backgroundColor, behind(e))])""")
        badges = panel.locator("li[data-diamond-job] .jp-diamond-badge")
        expect(badges.first).to_be_visible()
        badge_ratios = badges.evaluate_all(CONTRAST_JS + """els => els.map(e => [
            e.closest('[data-diamond-state]').dataset.diamondState,
            ratio(getComputedStyle(e).color, getComputedStyle(e).backgroundColor)])""")
        low = [(s, round(r, 2)) for s, r in key_ratios if r < 3]
        low += [(s, round(r, 2)) for s, r in badge_ratios if r < 4.5]
        assert len(key_ratios) == 6 and badge_ratios and not low, low


def test_zoom_200_percent_keeps_the_sidebar_usable(bare_lab, browser):
    """At 200% zoom (half the CSS pixels, twice the device pixels) the sidebar has no
    horizontal overflow, the long reason stays inside it and Approve is reached by Tab."""
    p = _new_page(browser, bare_lab, width=700, height=450, scale=2)
    try:
        panel = live_sidebar(p)
        widths = panel.evaluate("e => [e.scrollWidth, e.clientWidth]")
        assert widths[0] <= widths[1] + 1, (widths, _wider_than_the_panel(p))
        right = panel.evaluate("e => e.getBoundingClientRect().right")
        reason = panel.locator(f'li[data-diamond-job="{LONG_ID}"] [data-diamond-reason]')
        reason.scroll_into_view_if_needed()
        box = reason.bounding_box()
        assert box and box["x"] + box["width"] <= right + 1, (box, right)
        reload_button = panel.get_by_role("button", name="Reload sites and jobs")
        reload_button.focus()
        expect_focused(p, reload_button, "the reload button")
        _tab_to(p, f"Approve the plan of {TASK_ID}")
        approve = panel.get_by_role("button", name=f"Approve the plan of {TASK_ID}")
        expect_focused(p, approve, "Approve, reached by Tab")
        expect(approve).to_be_in_viewport()
        assert not p.diamond_errors, p.diamond_errors
    finally:
        p.context.close()
