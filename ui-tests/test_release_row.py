"""The sidebar's Release button on a held job's row, in JupyterLab with the labextension
(Chromium): two jobs submitted held through REST (`"hold": true`), one staging its input
from a data site that does not answer, one without staging. The row of each says it is held
(`data-diamond-release="held"`, a "Release NAME" button); released from the sidebar (POST
jobs/ID/release with the page's token and XSRF cookie), the staged one's release is kept
until its input is there (`kept`, "release kept: waiting for its input", nothing sent to
the scheduler), the other's is sent (`sent`, `scontrol release` run once).

No test bed: the site is a local fake Slurm (`tests/held_staging.HeldStaging`: its `squeue`
lists each job held by its user, `JobHeldUser`), the server a real `jupyter lab`."""

from __future__ import annotations

import json
import sys
import urllib.request
from pathlib import Path
from typing import Any

from playwright.sync_api import Locator, expect
from sidebar_lab import lab_on, sidebar_page

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

WAIT_MS = 60_000
FIRST_ID = 4301


def _numbered_sbatch(bed: Any) -> None:
    """`sbatch` queues each job held under the next number (4301, 4302, ...)."""
    import getpass

    from diamond_jupyter.sites import token_tag

    queue = bed.queue.queue
    sbatch = bed.queue.bin_dir / "sbatch"
    sbatch.write_text(
        f'#!/bin/sh\necho "sbatch $*" >> {bed.calls}\nfor last; do :; done\n'
        f'id=$(( {FIRST_ID} + $(wc -l < {queue}) ))\n'
        f'tok=$(grep -o "{token_tag("")}[0-9a-f]*" "$last" | head -n 1)\n'
        f'name=$(grep -o "job-name=[a-z]*" "$last" | head -n 1 | cut -d= -f2)\n'
        f'echo "$id|PENDING|N/A|N/A|2026-01-01T00:00:00|10:00|1|1|{getpass.getuser()}|'
        f'debug|N/A||JobHeldUser|$tok|$name" >> {queue}\necho $id\n')
    sbatch.chmod(0o755)


def _submit_held(server: dict, spec: dict[str, Any]) -> str:
    """POST jobs with `"hold": true`; the job's id."""
    req = urllib.request.Request(
        f"{server['url']}/diamond/api/jobs", method="POST",
        data=json.dumps({"spec": spec, "site": "here", "hold": True}).encode(),
        headers={"Authorization": f"token {server['token']}",
                 "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as reply:
        assert reply.status == 201
        return json.loads(reply.read())["id"]


def test_a_held_row_releases_from_the_sidebar_kept_while_its_input_copies(
        tmp_path_factory, browser):
    from held_staging import HeldStaging

    tmp = tmp_path_factory.mktemp("releaserow")
    bed = HeldStaging(tmp)
    _numbered_sbatch(bed)
    with lab_on(tmp, bed.sites_file(archive_reachable=False), bed.store) as server:
        staged_id = _submit_held(server, bed.spec().model_dump(mode="json"))
        plain_id = _submit_held(server, {"name": "plain", "command": "true",
                                         "working_directory": str(tmp / "wd")})
        assert (staged_id, plain_id) == (f"here:{FIRST_ID}", f"here:{FIRST_ID + 1}")
        with sidebar_page(browser, server) as (_, panel):
            _release_from_the_sidebar(bed, panel, staged_id, plain_id)


def _release_from_the_sidebar(bed: Any, panel: Locator, staged_id: str, plain_id: str) -> None:
    """Both rows held; the staged one's release kept while its input copies, the plain one's
    sent to the scheduler."""
    staged = panel.locator(f'[data-diamond-job="{staged_id}"]')
    plain = panel.locator(f'[data-diamond-job="{plain_id}"]')
    for row in (staged, plain):  # the scheduler's reason, JobHeldUser, polled
        expect(row).to_have_attribute("data-diamond-release", "held", timeout=WAIT_MS)
        expect(row).to_have_attribute("data-diamond-state", "PENDING")

    staged.get_by_role("button", name="Release staged").click()
    expect(staged).to_have_attribute("data-diamond-release", "kept", timeout=WAIT_MS)
    said = staged.locator("[data-diamond-release-message]")
    expect(said).to_have_text("release kept: waiting for its input")
    expect(said).to_have_attribute("title", f"release of {staged_id} kept: its stage-in "
                                   "(1 entry) is still copying; it is released when its "
                                   f"input has arrived (`diamond status {staged_id}`; a "
                                   "failed stage-in fails it instead)")
    expect(staged.get_by_role("button", name="Release staged")).to_have_count(0)
    assert bed.releases() == []  # nothing sent while its input copies

    plain.get_by_role("button", name="Release plain").click()
    expect(plain).to_have_attribute("data-diamond-release", "sent", timeout=WAIT_MS)
    expect(plain.locator("[data-diamond-release-message]")).to_have_text("release sent")
    assert bed.releases() == [f"scontrol release {FIRST_ID + 1}"]
    expect(staged).to_have_attribute("data-diamond-release", "kept")
