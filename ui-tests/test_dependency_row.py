"""The sidebar's job details say what a job waits for, in JupyterLab with the labextension
(Chromium): job alpha:11 waits (afterok) on alpha:10, which FAILED, so its details list
`[data-diamond-dependency="alpha:10"]` as never to be satisfied, in the words `diamond
status` uses; a job without dependencies shows no such list.

No test bed: the site is a local fake Slurm (`tests/test_job_dependencies.Bed`: its `squeue`
lists job 11 waiting, DependencyNeverSatisfied), the server a real `jupyter lab`."""

from __future__ import annotations

import sys
from pathlib import Path
from urllib.parse import unquote

from playwright.sync_api import expect
from sidebar_lab import lab_on, sidebar_page

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

WAIT_MS = 60_000


def _asks_job(url: str, job_id: str) -> bool:
    """Whether `url` is GET jobs/ID of `job_id` (its colon sent as is or escaped)."""
    return unquote(url.split("?")[0]).endswith(f"/diamond/api/jobs/{job_id}")


def test_a_rows_details_list_what_it_waits_for_and_one_never_satisfied(
        tmp_path_factory, browser):
    from test_job_dependencies import Bed

    tmp = tmp_path_factory.mktemp("deprow")
    bed = Bed(tmp)
    with (lab_on(tmp, bed.sites, bed.store_path) as server,
          sidebar_page(browser, server) as (page, panel)):
        waiting = panel.locator('[data-diamond-job="alpha:11"]')
        expect(waiting).to_have_attribute("data-diamond-state", "PENDING", timeout=WAIT_MS)
        waiting.locator(".jp-diamond-job-name").click()
        dep = waiting.locator('[data-diamond-depends-on] [data-diamond-dependency="alpha:10"]')
        expect(dep).to_have_attribute("data-diamond-dependency-state", "never",
                                      timeout=WAIT_MS)
        expect(dep).to_have_text("afterok alpha:10 FAILED: never satisfied")
        expect(waiting.locator("[data-diamond-dependency]")).to_have_count(1)

        alone = panel.locator('[data-diamond-job="alpha:12"]')
        with page.expect_response(lambda r: _asks_job(r.url, "alpha:12"),
                                  timeout=WAIT_MS) as answer:
            alone.locator(".jp-diamond-job-name").click()
        # its details asked (GET jobs/ID) and were told it waits for nothing: no list
        assert answer.value.ok and answer.value.json()["depends_on"] == []
        expect(alone.locator("[data-diamond-job-details]")).to_be_visible()
        expect(alone.locator("[data-diamond-depends-on]")).to_have_count(0)


def test_open_details_follow_the_job_waited_for_as_it_ends(tmp_path_factory, browser):
    """Job alpha:14 waits (afterok) on alpha:13, PENDING: its open details say waiting. Then
    13 ends COMPLETED (written to the store by another process, as the CLI would; 14 itself
    does not change): the details read again and say satisfied. They were read only when
    14 itself changed."""
    import getpass

    from test_job_dependencies import Bed, _job

    from diamond_jupyter.model import Dependency, JobState
    from diamond_jupyter.sites import token_tag
    from diamond_jupyter.store import Store

    tmp = tmp_path_factory.mktemp("deplive")
    bed = Bed(tmp)
    store = Store(bed.store_path)
    store.upsert_job(_job("13", later_s=10, token="up0013"))
    store.upsert_job(_job("14", deps=[Dependency(kind="afterok", job_ids=["13"])], later_s=11,
                          token="dn0014", reason="Dependency"))
    user = getpass.getuser()

    def line(native: str, reason: str, token: str) -> str:
        return (f"{native}|PENDING|N/A|N/A|2026-01-01T00:00:00|10:00|1|1|{user}|debug|N/A|"
                f"|{reason}|{token_tag(token)}|j{native}\n")

    kept = bed.queue.queue.read_text() + line("14", "Dependency", "dn0014")
    bed.queue.queue.write_text(kept + line("13", "Priority", "up0013"))
    with (lab_on(tmp, bed.sites, bed.store_path) as server,
          sidebar_page(browser, server) as (page, panel)):
        waiting = panel.locator('[data-diamond-job="alpha:14"]')
        expect(waiting).to_have_attribute("data-diamond-state", "PENDING", timeout=WAIT_MS)
        waiting.locator(".jp-diamond-job-name").click()
        dep = waiting.locator('[data-diamond-dependency="alpha:13"]')
        expect(dep).to_have_text("afterok alpha:13 PENDING: waiting", timeout=WAIT_MS)
        expect(dep).to_have_attribute("data-diamond-dependency-state", "waiting")

        store.apply_state("alpha:13", JobState.COMPLETED, exit_code=0, source="poll")
        bed.queue.queue.write_text(kept)  # gone from the queue, as an ended job is
        expect(panel.locator('[data-diamond-job="alpha:13"]')).to_have_attribute(
            "data-diamond-state", "COMPLETED", timeout=WAIT_MS)
        expect(dep).to_have_attribute("data-diamond-dependency-state", "satisfied",
                                      timeout=WAIT_MS)
        expect(dep).to_have_text("afterok alpha:13 COMPLETED: satisfied")
        expect(waiting).to_have_attribute("data-diamond-state", "PENDING")
