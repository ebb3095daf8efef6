"""The notebook card of a submit whose answer was lost, in JupyterLab with the labextension
(Chromium), its kernel gone: a card saved while its job was looked for says so while the
server still looks; a card whose intent the server closed since says "never submitted" and
that a new submit is safe; and, once the job shows in the site's queue, the server's search
finds it and the open card becomes that job (its id, PENDING) with no kernel to redraw it.

No test bed: the site is a local fake Slurm (`tests/local_slurm.LocalSlurmQueue`, whose
`squeue` prints the queue the test writes), the server a real `jupyter lab`. The store holds
what a `%%diamond submit` whose answer was lost leaves (its intent and job.submit-unsure
event, written through the engine's own store and Federation), the notebook the cards the
kernel saved for them (`jobcard.card_json`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from lookout_helpers import close_as_never_submitted, lost_submits
from notebook_helpers import code_cell, python_notebook
from playwright.sync_api import Page, expect
from sidebar_lab import error_free_page, lab_on

from conftest import api

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

WAIT_MS = 60_000


def _lost_submits(tmp: Path, site: Any) -> tuple[Path, Path, list[str], list[dict]]:
    """The sites file, the store, the tokens and the saved cards of two submits whose answer
    was lost: one still looked for, one closed since as never submitted (the kernel gone)."""
    from diamond_jupyter.kernel.jobcard import card_json

    sites, store_path, tokens, cards = lost_submits(
        tmp, site, ["still-looked-for", "closed-since"],
        lambda fed, job: card_json(job, {"lookout": fed.lookout(job.id)}))
    close_as_never_submitted(store_path, tokens[1], "the submit did not reach the scheduler")
    return sites, store_path, tokens, cards


def _notebook(cards: list[dict[str, Any]]) -> dict[str, Any]:
    def cell(i: int, card: dict[str, Any]) -> dict[str, Any]:
        return code_cell(f"lost{i}", "%%diamond submit --site alpha\ntrue", [
            {"output_type": "display_data", "metadata": {},
             "data": {"application/vnd.diamond.job+json": card,
                      "text/plain": card["job"]["id"]}}], execution_count=i)
    return python_notebook([cell(i, c) for i, c in enumerate(cards, 1)])


def test_the_card_of_a_lost_submit_says_looking_never_submitted_then_the_job_found(
        tmp_path_factory, browser):
    from local_slurm import LocalSlurmQueue

    tmp = tmp_path_factory.mktemp("lookoutcard")
    queue = LocalSlurmQueue(tmp)
    sites, store_path, tokens, cards = _lost_submits(tmp, queue.site)
    with lab_on(tmp, sites, store_path) as server:
        api(server, "PUT", "api/contents/lost.ipynb",
            {"type": "notebook", "format": "json", "content": _notebook(cards)})
        with error_free_page(browser, server, "lab/tree/lost.ipynb") as page:
            _follow_the_cards(page, queue, tokens[0])


def _follow_the_cards(page: Page, queue: Any, found_token: str) -> None:
    """The first card looked for, the second closed as never submitted; the first then
    found in the queue (as alpha:4270)."""
    outputs = page.locator(".jp-Notebook .jp-OutputArea")
    looked_for = outputs.nth(0).locator("[data-diamond-card]")
    closed = outputs.nth(1).locator("[data-diamond-card]")

    expect(looked_for).to_have_attribute("data-diamond-lookout", "looking",
                                         timeout=WAIT_MS)
    expect(looked_for).to_have_attribute("data-diamond-live", "true")
    expect(looked_for.locator("[data-diamond-lookout-message]")).to_contain_text(
        "looking for it in alpha's queue by its token")
    expect(closed).to_have_attribute("data-diamond-lookout", "never-submitted",
                                     timeout=WAIT_MS)
    expect(closed).to_have_attribute("data-diamond-state", "FAILED")
    expect(closed.locator("[data-diamond-lookout-message]")).to_contain_text(
        "a new submit is safe")

    queue.add("4270", found_token, "still-looked-for")  # the server's search finds it
    expect(looked_for).to_have_attribute("data-diamond-card", "alpha:4270",
                                         timeout=WAIT_MS)
    expect(looked_for).to_have_attribute("data-diamond-state", "PENDING")
    expect(looked_for).not_to_have_attribute("data-diamond-lookout", "looking")
    assert looked_for.locator("[data-diamond-lookout-message]").count() == 0
