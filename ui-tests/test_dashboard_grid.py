"""The dashboard's queue tables with 10,000 jobs, in a real JupyterLab and chromium, without
the test bed: the two dashboard routes are answered at the wire level with a large queue
(`dashboard_helpers.big_dashboard`, GET /diamond/api/dashboard's shape), because no test
bed queue is that long. Windowing, sorting, keyboard, highlighting, charts, the three ways
to open it, the layout restorer (whichever way it was opened), and axe-core in the light
and dark themes. A test that reloads opens the dashboard itself and waits until the
server's workspace keeps it: it relies on no earlier test."""

from __future__ import annotations

import pytest
from dashboard_helpers import (
    DASHBOARD,
    PREDICTED,
    axe_violations,
    big_dashboard,
    close_dashboard,
    open_from_palette,
    serve_recorded,
    set_theme,
    wait_until_workspace_keeps_dashboard,
)
from playwright.sync_api import expect
from test_sidebar import expect_focused, open_sidebar

from conftest import SCREENSHOTS, api, load_lab, publish, start_lab, stop_lab

SITES = ["alpha", "beta", "gamma"]
ROWS = 10_000


@pytest.fixture(scope="module")
def bare_lab(tmp_path_factory):
    """`jupyter lab` with the extension and no sites file (the routes are answered by the
    page's route handlers)."""
    proc, info = start_lab(tmp_path_factory.mktemp("dash-grid"), diamond_config=None)
    try:
        yield info
    finally:
        stop_lab(proc)


@pytest.fixture(scope="module")
def data():
    return big_dashboard(SITES, ROWS)


@pytest.fixture(scope="module")
def page(bare_lab, browser, data):
    context = browser.new_context(viewport={"width": 1600, "height": 1000})
    p = context.new_page()
    errors: list[str] = []
    p.on("pageerror", lambda err: errors.append(f"{err.message}\n{err.stack or ''}"))
    serve_recorded(p, data)
    load_lab(p, bare_lab)
    p.diamond_errors = errors  # type: ignore[attr-defined]
    try:
        yield p
    finally:
        context.close()


@pytest.fixture(autouse=True)
def _dashboard_shown_unfocused(request):
    """Each test on the shared page starts with no dialog up, the dashboard shown and nothing
    focused, whatever the test before left (a failed one included): one failure stays one."""
    if "page" not in request.fixturenames:
        return
    page = request.getfixturevalue("page")
    dialog = page.locator(".jp-Dialog")
    if dialog.count():
        dialog.locator("button.jp-mod-reject").first.click()
        expect(dialog).to_have_count(0)
    if not page.locator(DASHBOARD).is_visible():
        open_from_palette(page)
    page.evaluate("() => document.activeElement?.blur()")
    page.wait_for_function("() => [null, document.body].includes(document.activeElement)")


def _grid(page, site):
    return page.locator(f'[data-diamond-queue="{site}"]')


def test_ten_thousand_rows_render_windowed(page, data):
    dash = open_from_palette(page)
    for site in data["sites"]:
        grid = _grid(page, site["name"])
        expect(grid).to_have_attribute("data-diamond-rows", str(len(site["queue"])))
        expect(grid).to_have_attribute("aria-rowcount", str(len(site["queue"]) + 1))
        expect(grid.locator("[data-diamond-queue-row]").first).to_be_visible()
        rendered = grid.locator("[data-diamond-queue-row]").count()
        assert 0 < rendered <= 40, rendered  # a window, not 3,333 rows
    assert sum(len(s["queue"]) for s in data["sites"]) == ROWS
    # the paint is noted in the frame after the rows are in the DOM (a busy machine may
    # answer the attribute checks above before that frame: the whole suite once did)
    page.wait_for_function("() => window.__diamondDashboard && "
                           "window.__diamondDashboard.firstPaintMs !== null")
    stats = page.evaluate("() => window.__diamondDashboard")
    assert stats["rows"] == ROWS and stats["firstPaintMs"] is not None, stats
    # one usage chart per site, drawn from its series
    for site in SITES:
        chart = dash.locator(f'[data-diamond-util-chart="{site}"]')
        expect(chart).to_have_attribute("data-diamond-points", "72")
        expect(chart.locator('[data-diamond-series="busy_cpus"] path').first).to_be_attached()


def test_own_jobs_highlighted_and_predictions_worded(page, data):
    grid = _grid(page, "alpha")
    mine = grid.locator('[data-diamond-queue-row][data-diamond-mine="true"]').first
    expect(mine).to_be_visible()
    expect(mine).to_contain_text("(you)")
    other = grid.locator("[data-diamond-queue-row]:not([data-diamond-mine])").first
    bg = [r.evaluate("e => getComputedStyle(e).backgroundColor") for r in (mine, other)]
    assert bg[0] != bg[1], bg
    pending = grid.locator('[data-diamond-queue-row][data-diamond-state="PENDING"] '
                           "[data-diamond-predicted]")
    texts = pending.all_inner_texts()
    assert texts and all(PREDICTED.match(t) for t in texts), texts[:5]
    assert any("(90%: <" in t for t in texts) and any("scheduler" in t for t in texts), texts


def test_columns_sort_both_ways(page, data):
    grid = _grid(page, "beta")
    users = sorted((r["user"] for r in data["sites"][1]["queue"]), key=str.lower)
    header = grid.locator('[role="columnheader"]', has=page.locator('[data-diamond-sort="user"]'))
    grid.locator('[data-diamond-sort="user"]').click()
    expect(header).to_have_attribute("aria-sort", "ascending")
    first = grid.locator('[data-diamond-queue-row][aria-rowindex="2"] [role="gridcell"]').nth(1)
    expect(first).to_have_text(users[0] + (" (you)" if users[0] == data["user"] else ""))
    grid.locator('[data-diamond-sort="user"]').click()
    expect(header).to_have_attribute("aria-sort", "descending")
    expect(first).to_contain_text(users[-1])
    # numbers sort as numbers
    grid.locator('[data-diamond-sort="cpus"]').click()
    expect(grid.locator('[role="columnheader"]', has=page.locator('[data-diamond-sort="cpus"]'))
           ).to_have_attribute("aria-sort", "ascending")
    cpus = grid.locator('[data-diamond-queue-row] [role="gridcell"]:nth-child(6)')
    shown = [int(t) for t in cpus.all_inner_texts()]
    assert shown == sorted(shown), shown


def test_keyboard_moves_through_the_whole_queue(page, data):
    grid = _grid(page, "gamma")
    n = len(data["sites"][2]["queue"])
    grid.focus()
    expect_focused(page, grid, "gamma's queue grid")
    page.keyboard.press("ArrowDown")
    active = grid.locator('[data-diamond-queue-row][aria-selected="true"]')
    expect(active).to_have_attribute("aria-rowindex", "2")
    page.keyboard.press("End")
    expect(active).to_have_attribute("aria-rowindex", str(n + 1))
    expect(active).to_be_in_viewport()
    row_id = active.get_attribute("id")
    expect(grid).to_have_attribute("aria-activedescendant", row_id)
    page.keyboard.press("PageUp")
    expect(active).to_have_attribute("aria-rowindex", str(n + 1 - 11))
    page.keyboard.press("Home")
    expect(active).to_have_attribute("aria-rowindex", "2")
    # the header's sort buttons are reachable with Tab
    sort_by_state = grid.locator('[data-diamond-sort="state"]')
    sort_by_state.focus()
    expect_focused(page, sort_by_state, "the State column's sort button")
    page.keyboard.press("Enter")
    expect(grid.locator('[role="columnheader"]').nth(7)).to_have_attribute(
        "aria-sort", "ascending")


@pytest.mark.parametrize("theme", ["JupyterLab Light", "JupyterLab Dark"])
def test_axe_finds_nothing_in_either_theme(page, bare_lab, theme):
    # What the reload restores is set up here, whatever ran before: the dashboard open, and
    # kept in the server's workspace (saved some time after the change).
    open_from_palette(page)
    wait_until_workspace_keeps_dashboard(page, bare_lab, api)
    set_theme(page, bare_lab, theme, api)
    load_lab(page, bare_lab)  # the layout restorer reopens the dashboard
    page.wait_for_function("t => document.body.dataset.jpThemeName === t", arg=theme,
                           timeout=30_000)
    dash = page.locator(DASHBOARD)
    expect(dash).to_be_visible(timeout=30_000)
    expect(_grid(page, "alpha").locator("[data-diamond-queue-row]").first).to_be_visible()
    page.wait_for_function("() => window.__diamondDashboard && "
                           "window.__diamondDashboard.firstPaintMs !== null")
    violations = axe_violations(page)
    assert violations == [], violations
    SCREENSHOTS.mkdir(exist_ok=True)
    name = "dark" if "Dark" in theme else "light"
    out = SCREENSHOTS / f"dashboard-10k-{name}.png"
    page.screenshot(path=str(out))
    publish(out)


def _open_from(page, face: str) -> None:
    """Open the dashboard from the sidebar's button or from a new Launcher's card."""
    if face == "sidebar":
        panel = open_sidebar(page)
        panel.get_by_role("button", name="Open the dashboard").click()
    else:
        page.get_by_role("menuitem", name="File", exact=True).click()
        page.get_by_role("menuitem", name="New Launcher").click()
        card = page.locator(".jp-LauncherCard:visible", has=page.locator(
            ".jp-LauncherCard-label", has_text="Diamond dashboard"))
        expect(card).to_be_visible(timeout=30_000)
        card.click()
    expect(page.locator(DASHBOARD)).to_be_visible()


def test_opens_from_the_sidebar_and_the_launcher(page, bare_lab):
    if page.locator(DASHBOARD).count():
        close_dashboard(page)
    _open_from(page, "sidebar")
    close_dashboard(page)
    _open_from(page, "launcher")
    ours = [e for e in page.diamond_errors if "diamond" in e.lower()]
    assert not ours, "uncaught errors from the diamond extension:\n" + "\n".join(ours)


@pytest.mark.parametrize("face", ["sidebar", "launcher"])
def test_the_restorer_reopens_the_dashboard_opened_from(page, bare_lab, face):
    """However it was opened, the dashboard is tracked by the layout restorer: once the
    server's workspace keeps it, a reload reopens it as the current tab, queues drawn."""
    if page.locator(DASHBOARD).count():
        close_dashboard(page)
    wait_until_workspace_keeps_dashboard(page, bare_lab, api, keeps=False)
    _open_from(page, face)
    wait_until_workspace_keeps_dashboard(page, bare_lab, api)
    load_lab(page, bare_lab)
    tab = page.locator(".lm-DockPanel-tabBar li.lm-TabBar-tab.lm-mod-current"
                       '[data-id="diamond-dashboard"]')
    expect(tab).to_be_visible(timeout=30_000)
    expect(page.locator(DASHBOARD)).to_be_visible()
    expect(_grid(page, "alpha").locator("[data-diamond-queue-row]").first).to_be_visible()
