"""The sidebar's row of a submit whose answer was lost, in JupyterLab with the labextension
(Chromium): while the server looks for its job by its token the row says LOOKING (not
UNKNOWN, `data-diamond-lookout="looking"`) with what is being done; it then turns, live, into
the job found (its id, PENDING, `data-diamond-lookout="found"`) or into NEVER SUBMITTED
(`data-diamond-lookout="never-submitted"`, FAILED, a new submit is safe).

No test bed: the site is a local fake Slurm (`tests/local_slurm.LocalSlurmQueue`, whose
`squeue` prints the queue the test writes), the server a real `jupyter lab`. The store holds
two submits whose answer was lost, each started as an engine starts it
(`Federation.start_looking_for`), that engine then closed; the server looks for them again
when it starts. One is then found in the queue; the other is closed as never submitted by
another engine sharing the store (as `diamond submit` closes one after its settle time)."""

from __future__ import annotations

import sys
from pathlib import Path

from lookout_helpers import close_as_never_submitted, lost_submits
from playwright.sync_api import expect
from sidebar_lab import lab_on, sidebar_page

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

WAIT_MS = 60_000


def test_the_row_of_a_lost_submit_says_looking_then_the_job_found_or_never_submitted(
        tmp_path_factory, browser):
    from local_slurm import LocalSlurmQueue

    tmp = tmp_path_factory.mktemp("lookoutrow")
    queue = LocalSlurmQueue(tmp)
    sites, store_path, tokens, ids = lost_submits(tmp, queue.site,
                                                  ["to-be-found", "to-be-closed"],
                                                  lambda fed, job: job.id)
    with lab_on(tmp, sites, store_path) as server, sidebar_page(browser, server) as (_, panel):
        rows = [panel.locator(f'[data-diamond-job="{job_id}"]') for job_id in ids]
        for row in rows:  # from the server's state: both looked for
            expect(row).to_have_attribute("data-diamond-lookout", "looking", timeout=WAIT_MS)
            expect(row).to_have_attribute("data-diamond-state", "UNKNOWN")
            expect(row.locator(".jp-diamond-badge")).to_have_text("LOOKING")
            expect(row.locator("[data-diamond-lookout-message]")).to_contain_text(
                "looking for it in alpha's queue by its token")

        # another engine sharing the store closes the second as never submitted
        close_as_never_submitted(store_path, tokens[1], "no job carrying its token showed")
        expect(rows[1]).to_have_attribute("data-diamond-lookout", "never-submitted",
                                          timeout=WAIT_MS)
        expect(rows[1]).to_have_attribute("data-diamond-state", "FAILED")
        expect(rows[1].locator(".jp-diamond-badge")).to_have_text("NEVER SUBMITTED")
        expect(rows[1].locator("[data-diamond-lookout-message]")).to_contain_text(
            "a new submit is safe")

        queue.add("4280", tokens[0], "to-be-found")  # the server's search finds the first
        found = panel.locator('[data-diamond-job="alpha:4280"]')
        expect(found).to_have_attribute("data-diamond-lookout", "found", timeout=WAIT_MS)
        expect(found).to_have_attribute("data-diamond-state", "PENDING")
        expect(found.locator(".jp-diamond-badge")).to_have_text("PENDING")
        expect(found.locator("[data-diamond-lookout-message]")).to_contain_text(
            "alpha had taken the job: found in its queue as alpha:4280")
        expect(rows[0]).to_have_count(0)  # the provisional row is the job found
