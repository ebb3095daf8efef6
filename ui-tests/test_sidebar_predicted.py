"""A queued job's predicted start on the sidebar: "starts ≈ … (90%: < …)" from the server's
job JSON (the placement's calibrated estimate; "(scheduler's estimate)" where that is all
there is), on the real test bed."""

from __future__ import annotations

import asyncio
import re
from concurrent.futures import ThreadPoolExecutor

from playwright.sync_api import expect
from test_sidebar import open_sidebar

from conftest import api, load_lab, start_lab, stop_lab
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import JobSpec, Resources
from diamond_jupyter.store import Store

PREDICTED = re.compile(r"starts ≈ \d+(\.\d)? (s|min|h)( \(90%: < \d+(\.\d)? (s|min|h)\)"
                       r"| \(scheduler's estimate\))?$")


async def _submit_held(config, store) -> str:
    async with Federation(config, store=Store(store)) as fed:  # placed: --site auto
        job = await fed.submit(JobSpec(name="predicted", script="sleep 5\n",
                                       resources=Resources(walltime_s=300)), "auto", hold=True)
        return job.id


async def _cancel(config, store, job_id: str) -> None:
    async with Federation(config, store=Store(store)) as fed:
        await fed.cancel(job_id)


def _run(coro):
    """The engine's coroutine on a thread of its own (Playwright's sync API holds a loop)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def test_a_queued_job_shows_its_predicted_start(tmp_path_factory, testbed_config, browser):
    tmp = tmp_path_factory.mktemp("predicted")
    store = tmp / "store.sqlite"
    proc, server = start_lab(tmp, diamond_config=testbed_config, store=store)
    job_id = None
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    try:
        job_id = _run(_submit_held(testbed_config, store))  # held: it stays queued
        rest = api(server, "GET", f"diamond/api/jobs/{job_id}")
        assert rest["state"] == "PENDING" and rest["predicted_start"]["text"].startswith("≈ ")
        page = context.new_page()
        load_lab(page, server)
        panel = open_sidebar(page)
        row = panel.locator(f'[data-diamond-job="{job_id}"]')
        expect(row).to_have_attribute("data-diamond-state", "PENDING", timeout=30_000)
        expect(row.locator("[data-diamond-predicted]")).to_have_text(PREDICTED)
    finally:
        if job_id is not None:
            _run(_cancel(testbed_config, store, job_id))
        context.close()
        stop_lab(proc)
