"""A notebook output forged to look like a job card (a shared notebook's saved output, which
no kernel of this server wrote): its name, output tails and error holding markup are shown
as text, no element made from them and no script run; its Cancel button goes through the
confirmation and then the server, which refuses the job id it names, and nothing reaches
the site (sweep 19 follow-up of hostile inputs).

No test bed: the site is a local fake Slurm (`tests/test_cli_newuser.NewUser`'s, which
notes each command it is given), the server a real `jupyter lab` with the labextension."""

from __future__ import annotations

import sys
from pathlib import Path

from notebook_helpers import code_cell, python_notebook
from playwright.sync_api import Page, expect
from sidebar_lab import error_free_page, lab_on

from conftest import api, confirm

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

JOB_MIME = "application/vnd.diamond.job+json"
NAME = "<img src=x onerror=window.__forgedCard=1>"
FORGED_ID = "alpha:4242;touch${IFS}PWNED"


def _forged_notebook() -> dict:
    """One cell whose saved output claims to be a running job's card, beside HTML that
    would set a flag if it were run."""
    card = {"version": 1, "time_limit_s": 300, "files": ["../../etc/passwd"],
            "stdout_tail": "<script>window.__forgedCard=2</script><b>out</b>",
            "stderr_tail": None, "error": "<img src=y onerror=window.__forgedCard=3>oops",
            "job": {"id": FORGED_ID, "site": "alpha", "native_id": "4242", "name": NAME,
                    "state": "RUNNING", "submitted_at": "2026-01-01T00:00:00Z",
                    "started_at": "2026-01-01T00:00:05Z"}}
    output = {"output_type": "display_data", "metadata": {},
              "data": {JOB_MIME: card, "text/html": f"<p>{NAME}</p>",
                       "text/plain": "a job card"}}
    return python_notebook([code_cell("forged", "# shared with you", [output],
                                      execution_count=1)])


def test_a_forged_job_card_is_text_and_its_cancel_is_refused_by_the_server(
        tmp_path_factory, browser):
    from test_cli_newuser import NewUser

    tmp = tmp_path_factory.mktemp("forgedcard")
    user = NewUser(tmp)
    sites = user.write("only-alpha.yaml", f"sites:\n{user.alpha}")
    with lab_on(tmp, sites, tmp / "store.sqlite3") as server:
        api(server, "PUT", "api/contents/forged.ipynb",
            {"type": "notebook", "format": "json", "content": _forged_notebook()})
        with error_free_page(browser, server, "lab/tree/forged.ipynb") as page:
            _the_card_is_text_and_its_cancel_refused(page, user.fake / "calls", tmp / "PWNED")


def _the_card_is_text_and_its_cancel_refused(page: Page, calls_file: Path,
                                             pwned: Path) -> None:
    """The forged card's record shown as text, not live; its Cancel asks first, the server
    refuses the id and nothing reaches the site (`calls_file`) or runs (`pwned`)."""
    card = page.locator(".jp-Notebook .jp-OutputArea [data-diamond-card]")
    expect(card).to_be_visible(timeout=60_000)
    # the card's record as text: the id, the name, the tails and the error
    assert card.get_attribute("data-diamond-card") == FORGED_ID
    expect(card.locator(".jp-diamond-card-name")).to_have_text(NAME)
    expect(card.locator("[data-diamond-stdout]")).to_contain_text(
        "<script>window.__forgedCard=2</script><b>out</b>")
    expect(card.locator(".jp-diamond-error-text")).to_have_text(
        "<img src=y onerror=window.__forgedCard=3>oops")
    expect(card).to_have_attribute("data-diamond-live", "false")  # not the server's
    outputs = page.locator(".jp-Notebook .jp-OutputArea")
    assert outputs.locator("img, script").count() == 0  # no element from its markup
    assert card.locator("[data-diamond-stdout] *").count() == 0

    # Cancel asks first, naming the job as text; the server then refuses the id
    dialog = confirm(page, card.get_by_role("button", name=f"Cancel {NAME}"),
                     "Cancel job?")
    expect(dialog).to_contain_text(f"Cancel {NAME} ({FORGED_ID}) on alpha?")
    assert dialog.locator("img").count() == 0
    dialog.get_by_role("button", name="Cancel job").click()
    toast = page.locator(".Toastify__toast", has_text=f"Could not cancel {NAME}")
    expect(toast).to_be_visible(timeout=30_000)
    calls = calls_file.read_text() if calls_file.exists() else ""
    assert "scancel" not in calls, calls  # nothing reached the site
    assert not pwned.exists()
    expect(card).to_have_attribute("data-diamond-state", "RUNNING")  # as saved
    assert page.evaluate("() => window.__forgedCard") is None
