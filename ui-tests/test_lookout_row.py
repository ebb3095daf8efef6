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

import asyncio
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import yaml
from playwright.sync_api import expect
from test_sidebar import open_sidebar

from conftest import _labextension_installed, load_lab, start_lab, stop_lab
from diamond_jupyter.store import Store

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

SETTLE_S = 600  # the server keeps looking for both all through the test
WAIT_MS = 60_000
LOST = ("alpha: the scheduler's answer to the submit was lost (sbatch: error: Socket timed "
        "out on send/recv operation)")


def _lost_submits(tmp: Path, site: Any) -> tuple[Path, Path, list[str], list[str]]:
    """The sites file, the store, and the tokens and provisional ids of two submits whose
    answer was lost, looked for."""
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.federation_plan import new_token
    from diamond_jupyter.model import JobSpec, SubmitUnsure

    sites = tmp / "sites.yaml"
    sites.write_text(yaml.safe_dump({"sites": [site.cfg.model_dump(mode="json")],
                                     "unsure_submit_settle_s": SETTLE_S}))
    store_path = tmp / "store.sqlite3"

    async def submitted() -> tuple[list[str], list[str]]:
        fed = Federation(sites, store=Store(store_path))
        tokens, ids = [], []
        try:
            for name in ("to-be-found", "to-be-closed"):
                tokens.append(new_token())
                spec = JobSpec(name=name, command="true", working_directory=str(tmp))
                intent = fed.store.record_intent("alpha", tokens[-1], spec)
                ids.append(fed.start_looking_for(SubmitUnsure(LOST, intent.id, SETTLE_S)).id)
        finally:
            await fed.close()
            fed.store.close()
        return tokens, ids

    with ThreadPoolExecutor(1) as pool:  # Playwright's own loop runs in this thread
        tokens, ids = pool.submit(asyncio.run, submitted()).result()
    return sites, store_path, tokens, ids


def test_the_row_of_a_lost_submit_says_looking_then_the_job_found_or_never_submitted(
        tmp_path_factory, browser):
    if not _labextension_installed():
        pytest.fail("diamond-jupyter is not in `jupyter labextension list`")
    from local_slurm import LocalSlurmQueue

    tmp = tmp_path_factory.mktemp("lookoutrow")
    queue = LocalSlurmQueue(tmp)
    sites, store_path, tokens, ids = _lost_submits(tmp, queue.site)
    proc, server = start_lab(tmp, diamond_config=sites, store=store_path)
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda err: errors.append(err.message))
        load_lab(page, server)
        panel = open_sidebar(page)
        rows = [panel.locator(f'[data-diamond-job="{job_id}"]') for job_id in ids]
        for row in rows:  # from the server's state: both looked for
            expect(row).to_have_attribute("data-diamond-lookout", "looking", timeout=WAIT_MS)
            expect(row).to_have_attribute("data-diamond-state", "UNKNOWN")
            expect(row.locator(".jp-diamond-badge")).to_have_text("LOOKING")
            expect(row.locator("[data-diamond-lookout-message]")).to_contain_text(
                "looking for it in alpha's queue by its token")

        # another engine sharing the store closes the second as never submitted
        other = Store(store_path)
        try:
            other.mark_never_submitted(tokens[1], "no job carrying its token showed")
        finally:
            other.close()
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
        assert errors == [], errors
    finally:
        context.close()
        stop_lab(proc)
