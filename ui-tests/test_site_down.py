"""The sidebar notices a site that went away, on the real test bed: beta's sshd is killed
with every session it served (the server's pooled connection dies with them), and the
open sidebar marks beta unreachable by itself, then reachable again once sshd is back."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect
from test_sidebar import open_sidebar

pytestmark = pytest.mark.testbed

NOTICE = 40_000  # site rows are re-read every 15 s (3 heartbeats); a refused connect is fast


def test_sidebar_marks_a_dead_site_and_its_return(lab_page):
    from diamond_jupyter.testbed import control

    page = lab_page
    panel = open_sidebar(page)
    expect(panel.locator('[data-diamond-status="live"]')).to_be_visible(timeout=30_000)
    beta = panel.locator('[data-diamond-site="beta"]')
    expect(beta).to_have_class(re.compile("jp-diamond-site-reachable"),
                               timeout=30_000)

    def while_down() -> None:
        expect(beta).to_have_class(re.compile("jp-diamond-site-unreachable"),
                                   timeout=NOTICE)
        expect(beta).to_contain_text("unreachable")
        # Reload says the same (not the last good snapshot)
        panel.get_by_role("button", name="Reload sites and jobs").click()
        expect(beta).to_contain_text("unreachable", timeout=NOTICE)

    control.restart_sshd("beta", while_down=while_down)
    expect(beta).to_have_class(re.compile("jp-diamond-site-reachable"),
                               timeout=NOTICE)
    # the other sites never looked down
    expect(panel.locator('[data-diamond-site="alpha"]')).to_have_class(
        re.compile("jp-diamond-site-reachable"))
