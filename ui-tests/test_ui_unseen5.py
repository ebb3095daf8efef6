"""The sidebar in more everyday cases no other UI test shows, in a real JupyterLab and
chromium, without the test bed: twenty sites in JupyterLab's narrowest sidebar, a job name of
360 characters, a name of emoji built of several code points cut on the timeline, a focused
row's ring, times in a browser in another zone (an offset of 5:45), muted text in the dark
theme, a job's output holding ANSI colour codes and a terminal hyperlink beside HTML, the
tab put to sleep and woken hours later, two JupyterLab tabs of one user, and a site that
goes away and comes back.

As in `test_ui_unseen4.py`, the sidebar's GETs are answered at the wire level from the
records below (the routes' shapes) and the event socket is served by the test; the server is
a real `jupyter lab` (no sites file)."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from urllib.parse import unquote
from zoneinfo import ZoneInfo

from playwright.sync_api import Page, expect
from sidebar_lab import (
    CONTRAST_JS,
    fresh_scrolled_sidebar,  # noqa: F401 (the autouse `_fresh_sidebar` fixture)
    job_bars,
    job_row,
    live_sidebar,
    narrowest_sidebar,
    new_lab_page,
    sidebar_panel,
    site_row,
    themed_sidebar,
    timeline_page,  # noqa: F401 (the `page` fixture)
    wider_than,
)
from test_sidebar import expect_focused
from wire_helpers import WireBase, healthy_site

from conftest import confirm, load_lab

NOW = datetime.now(timezone.utc).replace(microsecond=0)
SITES = [f"site-{i:02d}" for i in range(20)]
LAST_SEQ = 500
LONG_NAME = "spectral-decomposition-" * 15 + "final"  # 350 characters, no space
LONG_ID = "site-00:101"
# a scientist and a test tube: one glyph each, of 3 and 2 UTF-16 code units (a ZWJ sequence
# and an astral character), so a cut by code units leaves half of one
EMOJI_NAME = "👩‍🔬🧪" * 12 + "-fold"
EMOJI_ID = "site-01:102"
ANSI_ID = "site-02:103"
ANSI_STDOUT = ("\x1b[1;31mERROR\x1b[0m step 3 of <b>5</b> failed\n"
               "\x1b[32mok\x1b[0m retried\n"
               "\x1b]8;;https://example.org/x\x07see the manual\x1b]8;;\x07\n")
ANSI_SHOWN = "ERROR step 3 of <b>5</b> failed\nok retried\nsee the manual"
QUEUED_ID = "site-03:104"
QUEUED_AT = NOW - timedelta(minutes=7, seconds=13)
GOES_AWAY = "site-04"
DOWN = {**healthy_site(GOES_AWAY), "reachable": False, "nodes_free": None,
        "nodes_total": None, "cpus_free": None, "cpus_total": None,
        "error": f"ssh: connect to host {GOES_AWAY} port 22: No route to host"}
ZONE = "Asia/Kathmandu"  # UTC+5:45: no whole-hour shift hides a mistake


def _iso(t: datetime) -> str:
    return t.isoformat()


def _job(job_id: str, name: str, state: str = "RUNNING", *,
         submitted: datetime | None = None) -> dict:
    site, native = job_id.split(":")
    submitted = submitted or NOW - timedelta(minutes=20)
    started = None if state == "PENDING" else submitted + timedelta(minutes=1)
    ended = started + timedelta(minutes=3) if state in ("COMPLETED", "FAILED") else None
    return {"id": job_id, "site": site, "native_id": native, "name": name, "state": state,
            "submitted_at": _iso(submitted), "started_at": started and _iso(started),
            "ended_at": ended and _iso(ended),
            "exit_code": {"COMPLETED": 0, "FAILED": 1}.get(state),
            "reason": "Priority" if state == "PENDING" else None,
            "placement": None, "origin": None}


JOBS = [_job(LONG_ID, LONG_NAME), _job(EMOJI_ID, EMOJI_NAME),
        _job(ANSI_ID, "ansi-output", "FAILED"),
        _job(QUEUED_ID, "waits-in-zone", "PENDING", submitted=QUEUED_AT)]
# every job finished: nothing on the timeline moves by itself
FINISHED = [_job("site-00:201", "done-before-sleep", "COMPLETED",
                 submitted=NOW - timedelta(minutes=30))]


def _state(jobs: list[dict]) -> dict:
    return {"sites": [healthy_site(s) for s in SITES], "jobs": jobs, "jobs_total": len(jobs),
            "tasks": [], "transfers": [], "events": [], "last_seq": LAST_SEQ, "error": None}


class Wire(WireBase):
    """The records' answers to the sidebar's GETs, a job's logs (ANSI_ID's hold escape
    codes) and a cancel (answered, then its job-state event sent to every socket, as the
    server does); the event sockets served by the test."""

    first_seq = LAST_SEQ

    def __init__(self, page: Page, jobs: list[dict], shared: Wire | None = None) -> None:
        super().__init__(page)
        self.jobs = jobs
        self.cancelled: list[str] = []
        if shared is not None:  # another tab of the same server: one store, one event bus
            self.sockets, self.emitted, self.cancelled = (
                shared.sockets, shared.emitted, shared.cancelled)

    def _answer(self, route) -> None:
        path, query = self.request_of(route)
        parts = path.split("/")
        if route.request.method == "POST" and parts[0] == "jobs" and parts[-1] == "cancel":
            job_id = unquote(parts[1])
            self.cancelled.append(job_id)
            job = {**next(j for j in self.jobs if j["id"] == job_id), "state": "CANCELLED"}
            self.fulfill_json(route, job)
            self.job_state(job_id, "CANCELLED")
            return
        if route.request.method != "GET":
            route.continue_()
            return
        if path == "state":
            body = {**_state(self.jobs), "last_seq": self.last_seq}
        elif path == "events":
            body = self.replay_body(int(query.get("since", 0)))
        elif path == "jobs":
            body = {"jobs": [], "total": len(self.jobs)}
        elif parts[0] == "jobs" and len(parts) == 3 and parts[2] == "logs":
            job_id = unquote(parts[1])
            body = {"stdout": ANSI_STDOUT if job_id == ANSI_ID else "", "stderr": ""}
        elif parts[0] == "jobs" and len(parts) == 2:
            job_id = unquote(parts[1])
            body = {**next(j for j in self.jobs if j["id"] == job_id), "depends_on": []}
        else:
            self.answer_idle(route, path)
            return
        self.fulfill_json(route, body)

    def job_state(self, job_id: str, state: str, *, live: bool = True) -> dict:
        return self.send("job-state", {"kind": "job.state", "job_id": job_id, "state": state,
                                       "previous": None,
                                       "at": _iso(datetime.now(timezone.utc))}, live=live)

    def site_snapshot(self, site: dict) -> dict:
        return self.send("site-snapshot", {"kind": "site.snapshot", **site})


def _new_page(browser, server, *, jobs: list[dict] = JOBS, shared: Wire | None = None,
              before_load=None, **kwargs) -> Page:
    def wire(page: Page) -> None:
        if before_load:
            before_load(page)
        page.diamond_wire = Wire(page, jobs, shared)  # type: ignore[attr-defined]

    return new_lab_page(browser, server, before_load=wire, **kwargs)


# -- a very long name, an emoji name -----------------------------------------------------------

def test_a_350_character_job_name_is_cut_in_its_row_and_whole_in_its_title(page):
    name = job_row(page, LONG_ID).locator(".jp-diamond-job-name")
    expect(name).to_have_text(LONG_NAME)
    cut = name.evaluate("e => e.scrollWidth > e.clientWidth")
    assert cut, "the long name was not cut with an ellipsis"
    # the whole name is there on hover, not only the job's id (shown below it already)
    expect(name).to_have_attribute("title", re.compile(re.escape(LONG_NAME)))
    assert wider_than(page) == []


def test_an_emoji_name_is_cut_on_the_timeline_between_whole_glyphs(page):
    label = sidebar_panel(page).locator(
        f'[data-diamond-job-bar="{EMOJI_ID}"] text.jp-diamond-gantt-label')
    expect(label).to_have_text(re.compile("…$"))
    glyphs = label.evaluate("""(e, name) => {
        const cut = e.textContent.slice(0, -1);
        const seg = new Intl.Segmenter(undefined, {granularity: 'grapheme'});
        const prefixes = [''];
        for (const s of seg.segment(name)) prefixes.push(prefixes.at(-1) + s.segment);
        return [cut, prefixes.includes(cut), [...seg.segment(cut)].length];
    }""", EMOJI_NAME)
    cut, whole, count = glyphs
    assert whole, f"the label {cut!r} ends inside a glyph of {EMOJI_NAME!r}"
    assert count >= 3, glyphs


def test_wide_glyphs_in_a_timeline_label_stay_left_of_the_bars(page):
    """Emoji (and CJK) glyphs are twice as wide as Latin letters: the cut label still ends
    before the chart's bars begin."""
    chart = sidebar_panel(page).locator('[data-diamond-timeline="site-01"] svg')
    edges = chart.evaluate("""svg => {
        const label = svg.querySelector('text.jp-diamond-gantt-label').getBBox();
        const bars = Math.min(...[...svg.querySelectorAll('rect')].map(r => r.getBBox().x));
        return [label.x + label.width, bars];
    }""")
    assert edges[0] <= edges[1], edges


# -- keyboard ----------------------------------------------------------------------------------

def test_the_row_reached_by_keyboard_shows_a_visible_focus_ring(page):
    first = sidebar_panel(page).locator("li[data-diamond-job]").first
    first.focus()
    page.keyboard.press("ArrowDown")
    second = sidebar_panel(page).locator("li[data-diamond-job]").nth(1)
    expect_focused(page, second, "the second row, one ArrowDown on")
    ring = second.evaluate(CONTRAST_JS + """e => {
        const s = getComputedStyle(e);
        return [e.matches(':focus-visible'), s.outlineStyle, parseFloat(s.outlineWidth),
                ratio(s.outlineColor, behind(e))];
    }""")
    visible, style, width, contrast = ring
    assert visible and style != "none" and width >= 1, ring
    assert contrast >= 3, ring  # WCAG 1.4.11: the ring stands out from the panel


# -- a job's output ----------------------------------------------------------------------------

def test_ansi_codes_and_markup_in_a_jobs_output_are_shown_as_the_text_written(page):
    row = job_row(page, ANSI_ID)
    row.get_by_role("button", name="Show logs of ansi-output").click()
    out = page.locator(f'[data-diamond-logs="{ANSI_ID}"]').get_by_label("standard output")
    expect(out).to_have_text(ANSI_SHOWN)
    assert out.locator("*").count() == 0  # no <b>, no link made of the escape sequence


def test_the_reload_button_of_two_open_logs_names_its_job(page):
    for job_id, name in ((ANSI_ID, "ansi-output"), (LONG_ID, LONG_NAME)):
        view = page.locator(f'[data-diamond-logs="{job_id}"]')
        if not view.count():
            job_row(page, job_id).get_by_role("button", name=f"Show logs of {name}").click()
        expect(view.get_by_role("button", name=f"Reload logs of {job_id}")).to_be_visible()


# -- twenty sites in the narrowest sidebar ----------------------------------------------------

def test_twenty_sites_in_the_narrowest_sidebar_stay_inside_it(bare_lab, browser):
    p = _new_page(browser, bare_lab, width=1000, height=700)
    try:
        panel = live_sidebar(p)
        expect(panel.locator("li[data-diamond-site]")).to_have_count(len(SITES))
        narrowest_sidebar(p)
        assert wider_than(p) == []
        last = site_row(p, SITES[-1])
        last.scroll_into_view_if_needed()
        expect(last.locator(".jp-diamond-site-name")).to_be_in_viewport()
        toggle = last.get_by_role("button", name=f"Show partitions of {SITES[-1]}")
        toggle.focus()
        p.keyboard.press("Enter")
        expect(last.locator('[data-diamond-partition="batch"]')).to_be_visible()
        assert wider_than(p) == []
        assert p.diamond_errors == []
    finally:
        p.context.close()


# -- another time zone -------------------------------------------------------------------------

def _clock(at: datetime) -> str:
    """`at` as the en-US hour and minute the sidebar writes ("04:07")."""
    return f"{(at.hour % 12) or 12:02d}:{at.minute:02d}"


def test_a_browser_in_another_zone_shows_one_local_time_in_row_bar_and_details(
        bare_lab, browser):
    local = QUEUED_AT.astimezone(ZoneInfo(ZONE))
    assert _clock(local) != _clock(QUEUED_AT)

    p = _new_page(browser, bare_lab, timezone_id=ZONE, locale="en-US")
    try:
        panel = live_sidebar(p)
        row = job_row(p, QUEUED_ID)
        expect(row.locator(".jp-diamond-job-meta")).to_contain_text(f"queued {local:%b} "
                                                                    f"{local.day}")
        expect(row.locator(".jp-diamond-job-meta")).to_contain_text(_clock(local))
        bar = panel.locator(f'[data-diamond-job-bar="{QUEUED_ID}"]')
        expect(bar).to_have_attribute("aria-label", re.compile(re.escape(_clock(local))))
        bar.focus()
        tip = panel.locator(f'[data-diamond-tooltip="{QUEUED_ID}"]')
        expect(tip).to_contain_text(f"{_clock(local)}:{local.second:02d}")
        for text in (row.inner_text(), bar.get_attribute("aria-label"), tip.inner_text()):
            assert _clock(QUEUED_AT) not in text, text
        assert p.diamond_errors == []
    finally:
        p.context.close()


# -- the dark theme ----------------------------------------------------------------------------

# blend a translucent foreground over what is behind it before the ratio
BLEND_JS = CONTRAST_JS + """
const over = (fg, bg) => { const f = rgb(fg), b = rgb(bg), a = f.length > 3 ? f[3] : 1;
    return 'rgb(' + [0, 1, 2].map(i => f[i] * a + b[i] * (1 - a)).join(',') + ')'; };
"""


def test_muted_text_and_timeline_labels_are_readable_in_the_dark_theme(bare_lab, browser):
    """In JupyterLab Dark the secondary text (sites' schedulers, jobs' ids and times, the
    timeline's labels and axis) is at least 4.5:1 against the panel (WCAG 1.4.3)."""
    with themed_sidebar(browser, bare_lab, _new_page) as (p, panel):
        expect(job_bars(p).first).to_be_attached()
        texts = panel.locator(".jp-diamond-muted, .jp-diamond-gantt-label, "
                              ".jp-diamond-gantt-axis")
        ratios = texts.evaluate_all(BLEND_JS + """els => els
            .filter(e => e.getClientRects().length && e.textContent.trim())
            .map(e => { const s = getComputedStyle(e);
                const bg = behind(e instanceof SVGElement ? e.ownerSVGElement : e);
                const fg = e instanceof SVGElement ? s.fill : s.color;
                return [e.getAttribute('class'), e.textContent.slice(0, 20),
                        ratio(over(fg, bg), bg)]; })""")
        assert len(ratios) > 10, ratios
        low = sorted({(c, round(r, 2)) for c, _, r in ratios if r < 4.5})
        assert not low, low


# -- the tab put to sleep and woken ------------------------------------------------------------

# The page's visibility under the test's hand, as the browser sets it for a tab in the
# background: `window.__diamondSleep(true)` hides the page, `(false)` shows it again.
VISIBILITY_JS = """
let hidden = false;
Object.defineProperty(Document.prototype, 'hidden', {configurable: true, get: () => hidden});
Object.defineProperty(Document.prototype, 'visibilityState',
                      {configurable: true, get: () => hidden ? 'hidden' : 'visible'});
window.__diamondSleep = h => { hidden = h; document.dispatchEvent(new Event('visibilitychange')); };
"""


def _minutes(label: str) -> int:
    """Minutes since midnight of the timeline's "now 04:07 PM" (to the minute)."""
    hour, minute, half = re.search("([0-9]+):([0-9]+)(?::[0-9]+)? ?([AP]M)", label).groups()
    return (int(hour) % 12 + (12 if half == "PM" else 0)) * 60 + int(minute)


def test_a_tab_woken_hours_later_shows_the_new_now_and_what_happened_meanwhile(
        bare_lab, browser):
    def asleep_later(pg: Page) -> None:
        pg.add_init_script(VISIBILITY_JS)
        pg.clock.install()

    p = _new_page(browser, bare_lab, jobs=FINISHED, before_load=asleep_later,
                  locale="en-US")
    wire = p.diamond_wire
    try:
        panel = live_sidebar(p)
        axis = panel.locator("text.jp-diamond-gantt-axis", has_text="now")
        expect(axis).to_have_count(1)
        before = axis.text_content()
        p.evaluate("() => window.__diamondSleep(true)")
        p.clock.fast_forward("03:00:00")
        p.evaluate("() => window.__diamondSleep(false)")
        # nothing happened meanwhile: the wake alone redraws the axis
        expect(axis).not_to_have_text(before, timeout=10_000)
        assert (_minutes(axis.text_content()) - _minutes(before)) % 1440 in (180, 181), (
            before, axis.text_content())
        p.evaluate("() => window.__diamondSleep(true)")
        # stored on the server while the tab slept: its socket delivered nothing
        wire.send("site-snapshot", {"kind": "site.snapshot", **DOWN}, live=False)
        p.clock.fast_forward("01:00:00")
        p.evaluate("() => window.__diamondSleep(false)")
        expect(site_row(p, GOES_AWAY)).to_have_class(re.compile("jp-diamond-site-unreachable"))
        assert p.diamond_errors == []
    finally:
        p.context.close()


# -- two JupyterLab tabs of one user -----------------------------------------------------------

def test_two_tabs_of_one_user_are_both_live_and_a_cancel_in_one_shows_in_both(
        bare_lab, browser):
    first = _new_page(browser, bare_lab)
    second_page = first.context.new_page()
    second_page.diamond_errors = []  # type: ignore[attr-defined]
    second_page.on("pageerror", lambda err: second_page.diamond_errors.append(err.message))
    wire = first.diamond_wire
    second_page.diamond_wire = Wire(second_page, JOBS, shared=wire)  # type: ignore[attr-defined]
    try:
        load_lab(second_page, bare_lab)
        for tab in (first, second_page):
            live_sidebar(tab)
        row = job_row(first, QUEUED_ID)
        dialog = confirm(first, row.get_by_role("button", name=re.compile("^Cancel")),
                         "Cancel")
        dialog.locator("button.jp-mod-accept").click()
        for tab in (first, second_page):
            expect(job_row(tab, QUEUED_ID)).to_have_attribute("data-diamond-state",
                                                               "CANCELLED")
        assert wire.cancelled == [QUEUED_ID]
        assert first.diamond_errors == [] and second_page.diamond_errors == []
    finally:
        first.context.close()


# -- a site that goes away and comes back ------------------------------------------------------

def test_a_site_that_goes_away_and_comes_back_is_shown_healthy_again(page):
    wire = page.diamond_wire
    row = site_row(page, GOES_AWAY)
    wire.site_snapshot(DOWN)
    expect(row).to_have_class(re.compile("jp-diamond-site-unreachable"))
    expect(row.locator(".jp-diamond-error-text")).to_have_text(DOWN["error"])
    wire.site_snapshot(healthy_site(GOES_AWAY))
    expect(row).to_have_class(re.compile("jp-diamond-site-reachable"))
    expect(row.locator(".jp-diamond-error-text")).to_have_count(0)
    expect(row.locator(".jp-diamond-reach")).to_have_text("")
    expect(row.locator('[data-diamond-stat="nodes"]')).to_contain_text("4/16")
