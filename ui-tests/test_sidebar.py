"""The Diamond sidebar loads in a real JupyterLab (first UI test).

Only requires the panel: with the server extension present it shows sites and
jobs, without it a clear 'server extension not available' message.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Locator, expect

from conftest import wait_for_main_area

SCREENSHOTS = Path(__file__).parent / "screenshots"


def open_sidebar(page):
    """Show the Diamond sidebar and return it. Its tab toggles the panel, and JupyterLab may
    still be restoring the saved layout (which opens or closes it) when a test first looks,
    so a click can land just after the panel was shown and hide it again: look, click only
    when hidden, and look again, a few times."""
    panel = page.locator("#diamond-sidebar")
    panel.wait_for(state="attached", timeout=30_000)
    tab = page.locator('.jp-SideBar.jp-mod-left li[data-id="diamond-sidebar"]')
    for _ in range(3):
        if panel.is_visible():
            return panel
        expect(tab).to_be_visible()
        tab.click()
        try:
            expect(panel).to_be_visible(timeout=10_000)
            return panel
        except AssertionError:
            continue  # toggled back by a late layout restore: the next click shows it
    expect(panel).to_be_visible()
    return panel


def show_sidebar_unfocused(page) -> Locator:
    """Undo what a test, a failed one too, may have left on a page the next test shares: a
    dialog up, a collapsed section, another side panel shown, the focus anywhere. Returns the
    Diamond panel, shown, with every section open and nothing focused."""
    dialog = page.locator(".jp-Dialog")
    if dialog.count():
        dialog.locator("button.jp-mod-reject").first.click()
        expect(dialog).to_have_count(0)
    wait_for_main_area(page)
    panel = open_sidebar(page)
    collapsed = panel.locator('h3 button[aria-expanded="false"]')
    for _ in range(collapsed.count()):
        collapsed.first.click()
    expect(collapsed).to_have_count(0)
    page.evaluate("() => document.activeElement?.blur()")
    page.wait_for_function("() => [null, document.body].includes(document.activeElement)")
    return panel


def expect_focused(page, target: Locator, where: str) -> None:
    """Wait until `target` has the focus; else fail naming `where` (the step of the test) and
    the element that has the focus instead, and the side panel shown."""
    try:
        expect(target).to_be_focused()
    except AssertionError as err:
        raise AssertionError(f"{where}: {focus_holder(page)}, not on {target}") from err


def focus_holder(page) -> str:
    """Where the focus is, and which left side panel is shown (for a failure's message)."""
    holder = page.evaluate("""() => { const e = document.activeElement;
        const tab = document.querySelector('.jp-SideBar.jp-mod-left .lm-mod-current');
        return [e ? e.outerHTML.slice(0, 200) : null, tab?.title ?? null]; }""")
    return f"the focus is on {holder[0]!r} (side panel shown: {holder[1]!r})"


def show_shared_page(request, fixture: str = "page", *, scroll_to_top: bool = False) -> None:
    """For a module's autouse fixture: when the test uses the module's shared page (the
    fixture named `fixture`), no dialog is up, its Diamond panel is shown with nothing
    focused (and scrolled to its top), whatever the test before left (a failed one
    included): one failure stays one."""
    if fixture in request.fixturenames:
        panel = show_sidebar_unfocused(request.getfixturevalue(fixture))
        if scroll_to_top:
            panel.evaluate("e => { e.scrollTop = 0; }")


@pytest.fixture(autouse=True)
def _fresh_sidebar(request):
    show_shared_page(request, "lab_page")


def test_sidebar_renders(lab_page):
    page = lab_page
    panel = open_sidebar(page)

    expect(panel.get_by_role("heading", name="Diamond", exact=True)).to_be_visible()

    data = panel.locator('[data-diamond-section="sites"]')
    unavailable = panel.locator('[data-diamond-message="unavailable"]')
    expect(data.or_(unavailable).first).to_be_visible(timeout=30_000)
    if unavailable.count():
        expect(unavailable).to_contain_text("Server extension not available")
    else:
        expect(panel.locator('[data-diamond-section="jobs"]')).to_be_visible()

    # Keyboard: the reload control is a real, labelled button.
    reload_button = panel.get_by_role("button", name="Reload sites and jobs")
    expect(reload_button).to_be_visible()
    reload_button.focus()
    page.keyboard.press("Enter")
    expect(data.or_(unavailable).first).to_be_visible(timeout=30_000)

    # (sidebar-light.png / sidebar-dark.png, with jobs, come from test_jobs.py)
    panel.screenshot(path=str(SCREENSHOTS / "sidebar-empty-panel.png"))

    ours = [e for e in page.diamond_errors if "diamond" in e.lower()]
    assert not ours, "uncaught errors from the diamond extension:\n" + "\n".join(ours)


def test_sidebar_tab_has_title(lab_page):
    tab = lab_page.locator('.jp-SideBar.jp-mod-left li[data-id="diamond-sidebar"]')
    expect(tab).to_have_attribute("title", "Diamond")
