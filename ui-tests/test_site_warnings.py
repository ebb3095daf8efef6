"""A site whose view left out a scheduler record it could not read shows a marker on its
sidebar row and on its dashboard card (`[data-diamond-site-warnings=SITE]`), the record in
the marker's title as text: markup in it is not run. When the record reads again, a fresh
snapshot's site-snapshot event takes the marker away without a Reload.

The site is a local Slurm site whose `scontrol` prints recorded real outputs and whose
`squeue` prints a queue written here (a line before the first record is the one left out);
the server is a real `jupyter lab` with this checkout's labextension."""

from __future__ import annotations

import stat
from pathlib import Path

import yaml
from dashboard_helpers import open_from_palette
from playwright.sync_api import Page, expect
from sidebar_lab import lab_on, new_lab_page
from test_sidebar import open_sidebar

from conftest import api

OUTPUTS = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "outputs" / "slurm"
RUNNING = "40|RUNNING|2026-01-01T10:30:00|N/A|2026-01-01T10:00:00|2:00:00|1|8|ann|debug|N/A|" \
          "c1|None|(null)|sim"
# markup that would set a flag if it were ever rendered as HTML
BAD = "squeue: error: <img src=x onerror=window.__diamondWarned=1> user 4711"


def _command(path: Path, body: str) -> None:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def _local_site(tmp: Path) -> tuple[Path, Path]:
    """(the sites file, the queue file its squeue prints)."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    queue = tmp / "queue.txt"
    queue.write_text(f"{BAD}\n{RUNNING}\n")
    _command(bin_dir / "scontrol", f'case "$*" in\n'
             f'  *partition*) cat {OUTPUTS / "scontrol_partition.txt"} ;;\n'
             f'  *node*) cat {OUTPUTS / "scontrol_node.txt"} ;;\n'
             f'  *) exit 1 ;;\nesac\n')
    _command(bin_dir / "squeue", f"cat {queue}\n")
    sites = tmp / "sites.yaml"
    sites.write_text(yaml.safe_dump({"sites": [{
        "name": "odd", "scheduler": "slurm", "transport": {"kind": "local"},
        "preamble": f'PATH={bin_dir}:"$PATH"; export PATH'}]}))
    return sites, queue


def test_a_site_with_a_record_left_out_shows_it_as_text(tmp_path_factory, browser):
    tmp = tmp_path_factory.mktemp("warnings")
    sites, queue = _local_site(tmp)
    with lab_on(tmp, sites, tmp / "store.sqlite") as server:
        (row,) = api(server, "GET", "diamond/api/state?max_age=0")["sites"]
        assert row["warnings_total"] == 1 and BAD in row["warnings"][0], row
        page = new_lab_page(browser, server)
        try:
            _the_warning_shown_then_cleared(server, page, queue)
            ours = [e for e in page.diamond_errors if "diamond" in e.lower()]
            assert not ours, ours
        finally:
            page.context.close()


def _the_warning_shown_then_cleared(server: dict, page: Page, queue: Path) -> None:
    """The sidebar's and the dashboard's marker of the record left out, as text; cleared
    once the record reads again."""
    panel = open_sidebar(page)
    site = panel.locator('[data-diamond-site="odd"]')
    marker = site.locator('[data-diamond-site-warnings="odd"]')
    expect(marker).to_be_visible(timeout=30_000)
    expect(marker).to_have_attribute("data-diamond-warnings-total", "1")
    expect(marker).to_have_attribute("aria-label", "1 scheduler record unreadable, left "
                                     "out of this view")
    title = marker.get_attribute("title") or ""
    assert BAD in title and "squeue line 1" in title, title
    assert site.locator("img").count() == 0  # the record's markup is no element
    assert page.evaluate("() => window.__diamondWarned") is None

    dash = open_from_palette(page)
    card = dash.locator('[data-diamond-dash-site="odd"]')
    dash_marker = card.locator('[data-diamond-site-warnings="odd"]')
    expect(dash_marker).to_be_visible(timeout=30_000)
    assert BAD in (dash_marker.get_attribute("title") or "")
    assert card.locator("h3 img").count() == 0
    assert page.evaluate("() => window.__diamondWarned") is None

    # the record reads again: a fresh snapshot's event clears the sidebar's marker
    queue.write_text(f"{RUNNING}\n")
    fresh = api(server, "GET", "diamond/api/sites/odd/snapshot?max_age=0")
    assert fresh["warnings"] == []
    expect(marker).to_have_count(0, timeout=30_000)
