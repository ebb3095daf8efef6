"""A workflow's DAG in the sidebar, on the real test bed: started through the REST API, its
steps drawn by layer and followed by the workflow events until every one is COMPLETED."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect
from test_sidebar import open_sidebar, show_sidebar_unfocused

from conftest import api

pytestmark = pytest.mark.testbed

SCREENSHOTS = Path(__file__).parent / "screenshots"
WORKFLOW = """name: ui-dag
steps:
  - {name: make, site: alpha, script: "#!/bin/bash\\nsleep 2; echo 7 > n.txt\\n"}
  - {name: use, site: beta, needs: [make], inputs: [{from: make, path: n.txt}],
     script: "#!/bin/bash\\ncat n.txt\\n"}
  - {name: also, site: alpha, needs: [make], script: "#!/bin/bash\\necho also\\n"}
"""


@pytest.fixture(autouse=True)
def _fresh_sidebar(request):
    """Each test on the shared page starts with no dialog up, the Diamond panel shown and
    nothing focused, whatever the test before left (a failed one included): one failure
    stays one."""
    if "lab_page" in request.fixturenames:
        show_sidebar_unfocused(request.getfixturevalue("lab_page"))


def test_the_sidebar_draws_and_follows_a_workflow(lab_server, lab_page):
    page = lab_page
    panel = open_sidebar(page)
    section = panel.locator('[data-diamond-section="workflows"]')
    expect(section).to_be_visible(timeout=30_000)
    wf = api(lab_server, "POST", "diamond/api/workflows", {"workflow": WORKFLOW})
    row = section.locator(f'[data-diamond-workflow="{wf["id"]}"]')
    expect(row).to_be_visible(timeout=30_000)  # a workflow event made the section read again
    for step in ("make", "use", "also"):
        expect(row.locator(f'[data-diamond-step="{step}"]')).to_be_visible()
    # the DAG's layers: make first, then use and also side by side in the next column
    layers = row.locator(".jp-diamond-dag-layer")
    expect(layers).to_have_count(2)
    expect(layers.nth(0).locator("[data-diamond-step]")).to_have_count(1)
    expect(layers.nth(1).locator("[data-diamond-step]")).to_have_count(2)
    expect(row).to_have_attribute("data-diamond-state", "COMPLETED", timeout=180_000)
    for step in ("make", "use", "also"):
        expect(row.locator(f'[data-diamond-step="{step}"]')).to_have_attribute(
            "data-diamond-state", "COMPLETED")
    expect(row.locator('[data-diamond-step="use"]')).to_contain_text("beta")
    row.screenshot(path=str(SCREENSHOTS / "sidebar-workflow.png"))
    ours = [e for e in page.diamond_errors if "diamond" in e.lower()]
    assert not ours, "uncaught errors from the diamond extension:\n" + "\n".join(ours)
