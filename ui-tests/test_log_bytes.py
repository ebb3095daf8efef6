"""A job's output holding terminal escapes, NUL bytes, invalid UTF-8 and markup, opened from
its sidebar card (Logs): shown as text in the log view, no element made from it, no script
run (sweep 18b of hostile inputs).

No test bed: the site is a local fake Slurm (`tests/test_cli_newuser.NewUser`'s: sbatch
answers 4242, the queue is empty), the server a real `jupyter lab` with the labextension."""

from __future__ import annotations

import sys
from pathlib import Path

from playwright.sync_api import expect
from sidebar_lab import lab_on, sidebar_page

from conftest import api

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

# what a job may print: colours, a window title, a NUL, bytes no UTF-8, and markup that
# would set a flag if it were ever made into elements
OUTPUT = (b"\x1b[31mred\x1b[0m \x1b]0;title\x07 a\x00nul bad\xff\xfebytes "
          b"<img src=x onerror=window.__diamondLog=1><b>bold</b>\n")


def test_job_output_with_escapes_nul_and_bad_bytes_is_shown_as_text(tmp_path_factory,
                                                                     browser):
    from test_cli_newuser import NewUser

    tmp = tmp_path_factory.mktemp("logbytes")
    user = NewUser(tmp)
    sites = user.write("only-alpha.yaml", f"sites:\n{user.alpha}")
    with lab_on(tmp, sites, tmp / "store.sqlite3") as server:
        job = api(server, "POST", "diamond/api/jobs", {
            "site": "alpha", "name": "odd-output", "script": "#!/bin/sh\necho hi\n"})
        out = Path(job["stdout_path"])
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(OUTPUT)
        try:
            with sidebar_page(browser, server) as (page, panel):
                card = panel.locator(f'[data-diamond-job="{job["id"]}"]')
                expect(card).to_be_visible(timeout=60_000)
                card.get_by_role("button", name="Show logs of odd-output").click()
                view = page.locator(f'[data-diamond-logs="{job["id"]}"]')
                stdout = view.get_by_label("standard output")
                expect(stdout).to_contain_text(
                    "<img src=x onerror=window.__diamondLog=1><b>bold</b>", timeout=30_000)
                text = stdout.inner_text()
                assert "red" in text and "nul" in text and "bytes" in text, text
                assert view.locator("img, b").count() == 0  # the output's markup is no element
                assert page.evaluate("() => window.__diamondLog") is None
        finally:
            out.unlink(missing_ok=True)
