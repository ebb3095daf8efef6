"""The sidebar in everyday cases no other UI test shows, in a real JupyterLab 4 and chromium,
without the test bed: the sites file edited after the Jupyter server read it, and a zoom of
the timeline with most of 40 sites' charts out of view, and the dashboard's queue filtered
with text that looks like a regular expression.

The server is a real `jupyter lab`: on a sites file written here (a local site whose
commands are not there: its row says so, which does not matter to these tests), or without
one, the page's requests to the diamond routes answered with 600 running jobs at the wire
level (`benchmarks.timeline_jobs`' wire)."""

from __future__ import annotations

from pathlib import Path

import yaml
from dashboard_helpers import big_dashboard, close_dashboard, serve_recorded
from playwright.sync_api import expect
from sidebar_lab import job_bars, lab_on, live_sidebar, new_lab_page, sidebar_page, site_row

from benchmarks.timeline_jobs import Wire, running_jobs


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


# Per commit that changed a chart (one MutationObserver callback each), the charts changed.
WATCH_CHARTS_JS = """() => {
    window.__chartsPerCommit = [];
    new MutationObserver(records => {
        const charts = new Set(records.map(r => (r.target.nodeType === 1 ? r.target
            : r.target.parentElement)?.closest('figure[data-diamond-timeline]'))
            .filter(Boolean).map(f => f.getAttribute('data-diamond-timeline')));
        if (charts.size) window.__chartsPerCommit.push([...charts]);
    }).observe(document.getElementById('diamond-sidebar'),
               {subtree: true, attributes: true, childList: true, characterData: true});
}"""
AXIS_STARTS_JS = """() => [...document.querySelectorAll(
    "#diamond-sidebar figure[data-diamond-timeline]")]
    .map(f => f.querySelector('text.jp-diamond-gantt-axis').textContent)"""


def test_a_zoom_redraws_charts_out_of_view_a_few_at_a_time(bare_lab, browser):
    """With 40 sites' charts, most far out of view, a zoom redraws the charts in view in its
    own frame and the others a few per commit while the page is idle: every chart shows the
    new window within seconds, yet no commit (one frame's work that a hover would wait for)
    redraws them all."""
    sites = [f"site-{i:02d}" for i in range(40)]
    page = new_lab_page(browser, bare_lab,
                        before_load=lambda p: Wire(p, sites, running_jobs(600, sites)))
    try:
        live_sidebar(page)
        expect(job_bars(page)).to_have_count(600, timeout=60_000)
        starts = page.evaluate(AXIS_STARTS_JS)
        page.evaluate(WATCH_CHARTS_JS)
        page.locator('#diamond-sidebar .jp-diamond-zoom button[aria-label="Zoom out"]').click()
        page.wait_for_function(f"""() => {{
            const now = ({AXIS_STARTS_JS})();
            const before = {starts!r};
            return now.every((text, i) => text !== before[i]);
        }}""", timeout=15_000)
        per_commit = page.evaluate("() => window.__chartsPerCommit")
        assert set().union(*map(set, per_commit)) == set(sites)
        largest = max(map(len, per_commit))
        assert len(per_commit) > 2 and largest < len(sites) / 2, per_commit
        assert page.diamond_errors == []
    finally:
        page.context.close()


# queue rows' names with characters a regular expression would read as operators
REGEX_LIKE = ["run[1]", "a.b", "x(.*)", "c+d", "back\\slash"]


def test_the_queue_filter_takes_regex_like_text_literally(bare_lab, browser):
    """The queue's filter matches its text as typed: brackets, dots, stars, pluses and a
    backslash match only the rows holding them, and none throws."""
    dashboard = big_dashboard(["q-site"], 40)
    queue = dashboard["sites"][0]["queue"]
    for row, name in zip(queue, REGEX_LIKE, strict=False):
        row["name"] = name

    def wire(p) -> None:
        Wire(p, ["q-site"], running_jobs(3, ["q-site"]))
        serve_recorded(p, dashboard)

    page = new_lab_page(browser, bare_lab, before_load=wire,
                        path="lab/workspaces/unseen7-queue")
    try:
        live_sidebar(page).locator("[data-diamond-open-dashboard]").click()
        q = page.locator('[data-diamond-queue="q-site"]')
        expect(q).to_have_attribute("data-diamond-rows", "40", timeout=30_000)
        box = page.get_by_role("searchbox", name="Filter the queue of q-site")
        for typed, name in [("[1]", "run[1]"), ("a.b", "a.b"), ("(.*)", "x(.*)"),
                            ("c+", "c+d"), ("k\\s", "back\\slash")]:
            box.fill(typed)
            expect(q).to_have_attribute("data-diamond-rows", "1")
            expect(q.locator("[data-diamond-queue-row]")).to_contain_text(name)
        for typed in ("[2]", "a.c", "\\\\", "job-.*"):  # what a regex would match
            box.fill(typed)
            expect(q).to_have_attribute("data-diamond-rows", "0")
        box.fill("")
        expect(q).to_have_attribute("data-diamond-rows", "40")
        close_dashboard(page)
        assert page.diamond_errors == []
    finally:
        page.context.close()
