"""The sidebar in everyday cases no other UI test shows, in a real JupyterLab 4 and chromium,
without the test bed: the sites file edited after the Jupyter server read it.

The server is a real `jupyter lab` on a sites file written here (a local site whose
commands are not there: its row says so, which does not matter to these tests)."""

from __future__ import annotations

from pathlib import Path

import yaml
from playwright.sync_api import expect
from sidebar_lab import lab_on, sidebar_page, site_row


def _sites_file(path: Path, *names: str) -> bytes:
    """Write a sites file of local Slurm sites named `names` at `path`; its bytes."""
    path.write_text(yaml.safe_dump({"sites": [
        {"name": name, "scheduler": "slurm", "transport": {"kind": "local"}}
        for name in names]}))
    return path.read_bytes()


def test_a_sites_file_edited_after_the_read_is_said_in_the_sidebar(tmp_path_factory, browser):
    """A site added to the sites file after the server read it is not listed: the sidebar
    says the file changed and what to do (after a Reload, and by itself within a heartbeat's
    site refresh), and stops saying it once the file holds the bytes read again."""
    tmp = tmp_path_factory.mktemp("sites-edited")
    sites = tmp / "sites.yaml"
    read = _sites_file(sites, "first")
    with lab_on(tmp, sites, tmp / "store.sqlite") as server, \
            sidebar_page(browser, server) as (page, panel):
        note = panel.locator('[data-diamond-message="sites-file-changed"]')
        expect(site_row(page, "first")).to_be_visible(timeout=30_000)
        expect(note).to_have_count(0)

        _sites_file(sites, "first", "added-later")
        panel.get_by_role("button", name="Reload sites and jobs").click()
        expect(note).to_be_visible(timeout=30_000)
        expect(note).to_contain_text(f"the sites file {sites} changed since this Jupyter "
                                     "server read it")
        expect(note).to_contain_text("restart the Jupyter server to use the edited file")
        expect(note).to_have_attribute("role", "status")  # read out by a screen reader
        expect(site_row(page, "added-later")).to_have_count(0)  # the note is why

        sites.write_bytes(read)  # saved back as read: no Reload, the heartbeat clears it
        expect(note).to_have_count(0, timeout=45_000)
        expect(site_row(page, "first")).to_be_visible()

        sites.unlink()
        panel.get_by_role("button", name="Reload sites and jobs").click()
        expect(note).to_contain_text("was removed since this Jupyter server read it")
