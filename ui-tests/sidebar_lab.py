"""Pages on a real `jupyter lab` with the Diamond sidebar open, as the browser tests start
them: a lab on a local fake site's sites file, a page on it whose uncaught errors fail the
test, and the no-test-bed tests' shared page, its sidebar live."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from playwright.sync_api import Locator, Page, expect
from test_sidebar import open_sidebar, show_shared_page

from conftest import _labextension_installed, api, load_lab, start_lab, stop_lab


@contextmanager
def lab_on(tmp: Path, sites: Path, store: Path) -> Iterator[dict]:
    """A real `jupyter lab` in `tmp` on the `sites` file and the `store`: its url and token;
    stopped on leaving."""
    if not _labextension_installed():
        pytest.fail("diamond-jupyter is not in `jupyter labextension list`")
    proc, server = start_lab(tmp, diamond_config=sites, store=store)
    try:
        yield server
    finally:
        stop_lab(proc)


def new_lab_page(browser, server: dict, *, path: str = "lab", width: int = 1400,
                 height: int = 900, scale: float = 1,
                 before_load: Callable[[Page], None] | None = None,
                 timezone_id: str | None = None, locale: str | None = None) -> Page:
    """A page in a context of its own with JupyterLab loaded at `path`; `page.diamond_errors`
    collects its uncaught errors (`page.diamond_error_stacks` their stacks, in order).
    `before_load` runs first (routes set after could miss the page's first requests);
    `timezone_id`, `locale`: the browser's zone and language (default: the machine's)."""
    context = browser.new_context(viewport={"width": width, "height": height},
                                  device_scale_factor=scale, timezone_id=timezone_id,
                                  locale=locale)
    page = context.new_page()
    errors: list[str] = []
    stacks: list[str] = []

    def caught(err) -> None:
        errors.append(err.message)
        stacks.append(err.stack or "")

    page.on("pageerror", caught)
    page.diamond_errors = errors  # type: ignore[attr-defined]
    page.diamond_error_stacks = stacks  # type: ignore[attr-defined]
    if before_load:
        before_load(page)
    load_lab(page, server, path)
    return page


@contextmanager
def error_free_page(browser, server: dict, path: str = "lab") -> Iterator[Page]:
    """A page on `server` with JupyterLab loaded at `path`. On leaving without a failure,
    the page must have thrown no error; it is closed either way."""
    page = new_lab_page(browser, server, path=path)
    try:
        yield page
        assert page.diamond_errors == [], page.diamond_errors  # type: ignore[attr-defined]
    finally:
        page.context.close()


@contextmanager
def sidebar_page(browser, server: dict) -> Iterator[tuple[Page, Locator]]:
    """`error_free_page` at /lab and its Diamond sidebar, shown."""
    with error_free_page(browser, server) as page:
        yield page, open_sidebar(page)


def live_sidebar(page: Page) -> Locator:
    """The Diamond sidebar, shown, once its event socket is live."""
    panel = open_sidebar(page)
    expect(panel.locator('[data-diamond-status="live"]')).to_be_visible(timeout=30_000)
    return panel


@contextmanager
def shared_live_page(page: Page) -> Iterator[Page]:
    """`page` with its sidebar live and its update counters (`window.__diamondStats`) set
    up, for a module's tests to share; closed on leaving."""
    try:
        live_sidebar(page)
        page.wait_for_function("() => window.__diamondStats !== undefined")
        yield page
    finally:
        page.context.close()


@pytest.fixture(scope="module", name="page")
def module_page(bare_lab, browser, request) -> Iterator[Page]:
    """The page a module's tests share: the module's `_new_page(browser, server)` on the
    bare lab, its sidebar live; closed after the module. A module takes it, and
    `fresh_sidebar`, by importing them (as `page` and `_fresh_sidebar`)."""
    with shared_live_page(request.module._new_page(browser, bare_lab)) as p:
        yield p


@pytest.fixture(name="_fresh_sidebar", autouse=True)
def fresh_sidebar(request) -> None:
    """Each test on the shared page starts from its Diamond panel shown, nothing focused."""
    show_shared_page(request)


@pytest.fixture(scope="module", name="page")
def timeline_page(bare_lab, browser, request) -> Iterator[Page]:
    """`module_page` once the sidebar's timelines have drawn their first bar. A module takes
    it as `page`, with `fresh_scrolled_sidebar`, by importing them."""
    with shared_live_page(request.module._new_page(browser, bare_lab)) as p:
        expect(job_bars(p).first).to_be_attached(timeout=30_000)
        yield p


@pytest.fixture(name="_fresh_sidebar", autouse=True)
def fresh_scrolled_sidebar(request) -> None:
    """`fresh_sidebar`, the panel also scrolled back to its top."""
    show_shared_page(request, scroll_to_top=True)


THEMES_SETTINGS = "lab/api/settings/@jupyterlab/apputils-extension:themes"


@contextmanager
def themed_sidebar(browser, server: dict, new_page: Callable[..., Page],
                   theme: str = "JupyterLab Dark") -> Iterator[tuple[Page, Locator]]:
    """`theme` set in `server`'s settings, then a page `new_page(browser, server)` and its
    sidebar, live and drawn in that theme. On leaving the page is closed and the server is
    back in JupyterLab Light (the theme the other tests expect)."""
    api(server, "PUT", THEMES_SETTINGS, {"raw": json.dumps({"theme": theme})})
    page = None
    try:
        page = new_page(browser, server)
        panel = live_sidebar(page)
        page.wait_for_function("light => document.body.dataset.jpThemeLight === String(light)",
                               arg=theme.endswith("Light"))
        yield page, panel
    finally:
        if page is not None:
            page.context.close()
        api(server, "PUT", THEMES_SETTINGS, {"raw": json.dumps({"theme": "JupyterLab Light"})})


def narrowest_sidebar(page: Page) -> None:
    """Drag the handle between the sidebar and the main area as far left as it goes
    (JupyterLab keeps a side panel at least 250 px wide), until the sidebar is that narrow."""
    handle = page.locator("#jp-main-split-panel > .lm-SplitPanel-handle:visible").first
    box = handle.bounding_box()
    assert box, "no split handle beside the sidebar"
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + 200)
    page.mouse.down()
    page.mouse.move(box["x"] - 400, box["y"] + 200, steps=5)
    page.mouse.move(260, box["y"] + 200, steps=5)
    page.mouse.up()
    page.wait_for_function("() => document.getElementById('diamond-sidebar').clientWidth <= 260")


def sidebar_panel(page: Page) -> Locator:
    return page.locator("#diamond-sidebar")


def job_row(page: Page, job_id: str) -> Locator:
    return sidebar_panel(page).locator(f'li[data-diamond-job="{job_id}"]')


def site_row(page: Page, name: str) -> Locator:
    return sidebar_panel(page).locator(f'[data-diamond-site="{name}"]')


def job_bars(page: Page) -> Locator:
    """Every job's bar on the sidebar's timelines."""
    return sidebar_panel(page).locator("[data-diamond-job-bar]")


def wider_than(page: Page, selector: str = "#diamond-sidebar") -> list[str]:
    """The elements inside #diamond-sidebar (a workflow's graph aside) whose right edge
    reaches past `selector`'s: what overflows, for an assertion's message."""
    return page.evaluate("""(selector) => {
        const right = document.querySelector(selector).getBoundingClientRect().right;
        return Array.from(document.querySelectorAll('#diamond-sidebar *'))
            .filter(e => e.getClientRects().length &&
                    e.getBoundingClientRect().right > right + 1 &&
                    !e.closest('.jp-diamond-dag'))
            .slice(0, 8).map(e => e.tagName + '.' + e.getAttribute('class') + ' ' +
                             (e.textContent || '').slice(0, 40));
    }""", selector)


# The WCAG contrast ratio of two CSS colours (rgb()/rgba() strings), and the colour behind
# an element (its nearest ancestor with an opaque background): a prefix for evaluate_all.
CONTRAST_JS = """
const rgb = s => (s.match(/[\\d.]+/g) || []).map(Number);
const lum = c => { const [r, g, b] = c.slice(0, 3).map(v => { v /= 255;
    return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
const ratio = (x, y) => { const [a, b] = [lum(rgb(x)), lum(rgb(y))];
    return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05); };
const behind = e => { for (let n = e.parentElement; n; n = n.parentElement) {
    const c = getComputedStyle(n).backgroundColor, v = rgb(c);
    if (v.length === 3 || v[3] > 0.9) return c; } return 'rgb(255, 255, 255)'; };
"""
