"""The sidebar on the real test bed: it notices a site that went away (beta's sshd killed
with every session it served, so the server's pooled connection dies with them) and marks
it unreachable by itself, then reachable again once sshd is back; a transfer's many
progress events make one line of the activity feed."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect
from test_sidebar import open_sidebar, show_shared_page

from conftest import api

pytestmark = pytest.mark.testbed

NOTICE = 40_000  # site rows are re-read every 15 s (3 heartbeats); a refused connect is fast


@pytest.fixture(autouse=True)
def _fresh_sidebar(request):
    show_shared_page(request, "lab_page")


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


def test_activity_shows_one_progress_line_per_transfer(lab_server, lab_page):
    page = lab_page
    panel = open_sidebar(page)
    expect(panel.locator('[data-diamond-status="live"]')).to_be_visible(timeout=30_000)
    (Path(lab_server["root"]) / "big.bin").write_bytes(os.urandom(24 << 20))
    rec = api(lab_server, "POST", "diamond/api/transfers",
              {"src": "big.bin", "dst": "alpha:ui-activity-big.bin", "wait": True}, timeout=300)
    assert rec["state"] == "SUCCEEDED", rec
    events = api(lab_server, "GET", "diamond/api/events?kinds=transfer.progress&limit=1000")
    progress = [e for e in events["events"] if e["data"].get("transfer_id") == rec["id"]]
    assert len(progress) >= 5, len(progress)  # the flood the feed must not show
    activity = panel.locator('[data-diamond-section="activity"]')
    # the transfer's end arrived (it comes after every progress event) ...
    expect(activity.locator('[data-diamond-event="transfer.state"]', has_text="SUCCEEDED")
           ).to_have_count(1, timeout=30_000)
    # ... and its progress is one line
    expect(activity.locator('[data-diamond-event="transfer.progress"]')).to_have_count(1)
