"""Logging in to a site whose SSH door asks for a one-time code, in a real JupyterLab: the
sites list offers "Log in" for the test bed's MFA door, the server's prompt opens a dialog
with a password field, and the code typed there logs in once; the row then turns reachable.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect
from test_sidebar import open_sidebar

from conftest import SCREENSHOTS, load_lab, start_lab, stop_lab

SITE = "alpha-mfa"


@pytest.fixture(scope="module")
def mfa_lab(tmp_path_factory, testbed_config):
    from diamond_jupyter import testbed

    info = testbed.up()
    assert info["mfa_config"], info["left_out"]
    proc, server = start_lab(tmp_path_factory.mktemp("mfa-lab"),
                             diamond_config=info["mfa_config"])
    try:
        yield server, testbed_config.parent
    finally:
        stop_lab(proc)


def test_log_in_through_the_dialog(mfa_lab, browser):
    from diamond_jupyter.testbed import mfa

    server, base = mfa_lab
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(err.message))
    try:
        load_lab(page, server)
        panel = open_sidebar(page)
        row = panel.locator(f'[data-diamond-site="{SITE}"]')
        expect(row).to_contain_text("one-time code", timeout=60_000)
        row.locator(f'[data-diamond-login-button="{SITE}"]').click()
        dialog = page.locator(f'[data-diamond-login="{SITE}"]')
        expect(dialog).to_be_visible(timeout=60_000)
        field = dialog.locator("input")
        expect(field).to_have_attribute("type", "password")
        expect(dialog).to_contain_text("Verification code:")
        code = mfa.totp_code(base)
        field.fill(code)
        dialog.screenshot(path=str(SCREENSHOTS / "mfa-login-dialog.png"))
        dialog.get_by_role("button", name="Log in").click()
        expect(dialog).to_have_count(0)
        expect(page.locator(".Toastify__toast", has_text=f"Logged in to {SITE}.")).to_be_visible(
            timeout=60_000)
        expect(row).to_have_class("jp-diamond-site jp-diamond-site-reachable",
                                  timeout=60_000)
        expect(row.locator(f'[data-diamond-login-button="{SITE}"]')).to_have_count(0)
        assert code not in page.content()  # nothing kept in the page
    finally:
        context.close()
    assert not [e for e in errors if "diamond" in e.lower()], errors
