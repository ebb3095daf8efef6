"""A site's unreadable scheduler records reach the REST payloads the sidebar and dashboard
read (answers checked against openapi.yaml), and the site-snapshot event: `warnings` (the
first few, as the scheduler wrote them) and `warnings_total`.

The site is a local Slurm site whose `scontrol` prints recorded real outputs and whose
`squeue` prints a queue written here, with lines no reader can take (the wire level of a
scheduler; no test bed)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from local_slurm import recorded_sites_file

from diamond_jupyter.federation import Federation
from diamond_jupyter.server.events import SITE_SNAPSHOT
from diamond_jupyter.skills import SkillContext, run_skill
from diamond_jupyter.store import Store
from diamond_jupyter.summary import MAX_ROW_WARNINGS

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")

OUTPUTS = Path(__file__).parent / "fixtures" / "outputs" / "slurm"
# %i|%T|%S|%e|%V|%l|%D|%C|%u|%P|%b|%N|%r|%k|%j (SQUEUE_FIELDS)
RUNNING = "40|RUNNING|2026-01-01T10:30:00|N/A|2026-01-01T10:00:00|2:00:00|1|8|ann|debug|N/A|" \
          "c1|None|(null)|sim"
PENDING = "41|PENDING|N/A|N/A|2026-01-01T10:00:00|1:00:00|1|4|bob|debug|N/A||Priority|" \
          "(null)|big"
# a line before the first record (a line after one goes on that job's name); what a
# scheduler's or an admin's text may hold: markup, which a face shows as text
BAD = "squeue: error: <img src=x onerror=alert(1)> user 4711"
SAID = f"rec: slurm: cannot parse squeue line 1: 1 of 15 fields (got {BAD!r})"


def _write_queue(tmp_path: Path, *lines: str) -> None:
    (tmp_path / "queue.txt").write_text("\n".join(lines) + "\n")


@pytest.fixture
def sites_file(tmp_path) -> Path:
    _write_queue(tmp_path, BAD, RUNNING, PENDING)
    return recorded_sites_file(tmp_path, OUTPUTS / "scontrol_node.txt", tmp_path / "queue.txt")


@pytest.fixture
def jp_server_config(sites_file, tmp_path, data_dir):
    from server_conftest import diamond_config

    return diamond_config(str(sites_file), str(tmp_path / "store.sqlite3"))


async def test_the_sidebar_row_the_site_and_the_dashboard_say_the_record_left_out(api):
    (row,) = (await api.get("state", params={"max_age": 0}))["sites"]
    assert row["reachable"] and row["queue_error"] is None
    assert (row["warnings"], row["warnings_total"]) == ([SAID], 1)
    assert (row["running"], row["pending"]) == (1, 1)  # the rest of the queue stands

    site = (await api.get("sites/rec"))["snapshot"]
    assert (site["warnings"], site["warnings_total"]) == ([SAID], 1)

    (dash,) = (await api.get("dashboard"))["sites"]
    assert (dash["warnings"], dash["warnings_total"]) == ([SAID], 1)
    assert [r["id"] for r in dash["queue"]] == ["40", "41"]


async def test_a_record_readable_again_is_no_longer_said(api, tmp_path):
    (row,) = (await api.get("state", params={"max_age": 0}))["sites"]
    assert row["warnings_total"] == 1
    _write_queue(tmp_path, RUNNING, PENDING)
    (row,) = (await api.get("state", params={"max_age": 0}))["sites"]
    assert (row["warnings"], row["warnings_total"]) == ([], 0)
    (dash,) = (await api.get("dashboard"))["sites"]
    assert (dash["warnings"], dash["warnings_total"]) == ([], 0)


async def test_a_row_carries_the_first_warnings_and_the_snapshot_all(api, tmp_path):
    bad = [f"garbage {i}" for i in range(MAX_ROW_WARNINGS + 15)]
    _write_queue(tmp_path, *bad, RUNNING)
    (row,) = (await api.get("state", params={"max_age": 0}))["sites"]
    assert row["warnings_total"] == len(bad)
    assert len(row["warnings"]) == MAX_ROW_WARNINGS
    assert row["warnings"][0].startswith("rec: slurm: cannot parse squeue line 1: ")
    assert "'garbage 0'" in row["warnings"][0]
    snap = await api.get("sites/rec/snapshot")
    assert len(snap["warnings"]) == len(bad) and row["warnings"] == snap["warnings"][:10]
    (dash,) = (await api.get("dashboard"))["sites"]
    assert dash["warnings"] == row["warnings"] and dash["warnings_total"] == len(bad)


async def next_snapshot(ws: Any, site: str) -> dict:
    """The next site-snapshot event of `site` on the socket (others skipped)."""
    while True:
        raw = await asyncio.wait_for(ws.read_message(), 60)
        assert raw is not None, "the event socket closed"
        msg = json.loads(raw)
        if msg.get("schema_id") == SITE_SNAPSHOT and msg.get("name") == site:
            return msg


async def test_the_site_snapshot_event_carries_them(api, jp_ws_fetch, tmp_path):
    ws = await jp_ws_fetch("api", "events", "subscribe")
    try:
        await api.get("state", params={"max_age": 0})
        first = await next_snapshot(ws, "rec")
        assert (first["warnings"], first["warnings_total"]) == ([SAID], 1)
        _write_queue(tmp_path, RUNNING, PENDING)  # the row changes: a new event says it
        await api.get("state", params={"max_age": 0})
        again = await next_snapshot(ws, "rec")
        assert (again["warnings"], again["warnings_total"]) == ([], 0)
    finally:
        ws.close()


async def test_the_agents_site_rows_do_not_quote_the_records(sites_file, tmp_path):
    """A record left out may hold another user's text (a job's name): the screens show it
    as text, but the agent's discover_resources rows (SiteSummary) do not carry it."""
    fed = Federation(sites_file, store=Store(tmp_path / "own.sqlite3"))
    await fed.start(recover=False)
    try:
        assert (await fed.snapshot("rec", max_age_s=0)).warnings == [SAID]
        out = await run_skill(SkillContext(fed, approval="auto"), "discover_resources", {})
    finally:
        await fed.close()
    (row,) = out.sites
    assert (row.running, row.pending) == (1, 1)
    assert BAD not in out.model_dump_json()
