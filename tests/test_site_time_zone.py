"""A cluster's scheduler times without a zone (sacct's `2026-03-01T09:00:00`, squeue's and
scontrol's StartTime=...) are read in the zone its sites entry gives (`metadata.timezone`),
not the engine's; without one, in the engine's zone, as before."""

from __future__ import annotations

import time
from datetime import datetime, timezone
from pathlib import Path

import pytest
from test_config_unseen2 import loads, refused

from diamond_jupyter.config import SiteConfig, TransportConfig
from diamond_jupyter.sites import Site

ENGINE_ZONE = "America/New_York"  # the engine's; the site is in Tokyo (UTC+9, no DST)
SACCT = "77|COMPLETED|0:0|2026-03-01T09:00:00|2026-03-01T10:30:00|n1|sim|77\n"


@pytest.fixture
def engine_in_new_york(monkeypatch):
    monkeypatch.setenv("TZ", ENGINE_ZONE)
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def _site(tmp_path: Path, metadata: dict) -> Site:
    """A local Slurm site whose squeue lists nothing and whose sacct knows job 77."""
    commands = {}
    for prog, out in (("squeue", ""), ("sacct", SACCT)):
        (tmp_path / f"{prog}.out").write_text(out)
        path = tmp_path / prog
        path.write_text(f"#!/bin/sh\ncat {tmp_path / f'{prog}.out'}\n")
        path.chmod(0o755)
        commands[prog] = str(path)
    return Site(SiteConfig(name="tokyo", scheduler="slurm", workdir=str(tmp_path / "w"),
                           transport=TransportConfig(kind="local"), commands=commands,
                           metadata=metadata))


@pytest.mark.usefixtures("engine_in_new_york")
@pytest.mark.parametrize("metadata, start_utc", [
    ({"timezone": "Asia/Tokyo"}, datetime(2026, 3, 1, 0, 0, tzinfo=timezone.utc)),
    ({}, datetime(2026, 3, 1, 14, 0, tzinfo=timezone.utc)),  # New York's, EST (UTC-5)
])
async def test_accounting_times_are_read_in_the_sites_zone(tmp_path, metadata, start_utc):
    """Job 77 started at 09:00 and ended at 10:30 as sacct prints them: 00:00 UTC in Tokyo
    (before: 14:00 UTC, read as New York's 09:00, fourteen hours late)."""
    site = _site(tmp_path, metadata)
    try:
        [status] = await site.statuses(["77"])
    finally:
        await site.close()
    assert (status.native_id, status.started_at) == ("77", start_utc)
    assert status.ended_at is not None and status.ended_at - status.started_at == \
        (datetime(2026, 3, 1, 10, 30) - datetime(2026, 3, 1, 9, 0))


LOCAL = "sites:\n  - name: tokyo\n    transport: {kind: local}\n"


@pytest.mark.parametrize("entry", ["{timezone: Asia/Tokio}", "{timezone: +0900}",
                                   "{timezone: ''}"])
def test_a_timezone_that_names_no_zone_is_refused(tmp_path, entry):
    """A zone name this machine's zone database lacks (a typo, an offset) is refused with
    what would be accepted (before: ignored, the cluster's times silently read in the
    engine's zone, hours off)."""
    msg = refused(tmp_path, LOCAL + f"    metadata: {entry}\n")
    assert "metadata: timezone: " in msg and "is not a time zone name this machine knows " \
        "(an IANA name, e.g. timezone: Europe/Berlin, America/Chicago or UTC)" in msg, msg
    assert loads(tmp_path, LOCAL + "    metadata: {timezone: Asia/Tokyo}\n").site(
        "tokyo").metadata_zone().key == "Asia/Tokyo"


@pytest.mark.parametrize("key", ["tz", "time_zone", "timezon"])
def test_a_timezone_key_spelt_otherwise_is_refused(tmp_path, key):
    """`tz: Asia/Tokyo` was kept as a note that nothing reads."""
    msg = refused(tmp_path, LOCAL + f"    metadata: {{{key}: Asia/Tokyo}}\n")
    assert f"metadata: {key}: did you mean timezone? " in msg, msg
