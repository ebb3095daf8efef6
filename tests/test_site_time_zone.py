"""A cluster's scheduler times without a zone (sacct's `2026-03-01T09:00:00`, squeue's and
scontrol's StartTime=...) are read in the zone its sites entry gives (`metadata.timezone`),
not the engine's; without one, in the engine's zone, as before."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from test_config_unseen2 import refused

from diamond_jupyter.config import SiteConfig, TransportConfig, load_config
from diamond_jupyter.model import BadInput
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


@pytest.mark.parametrize("written, want", [
    ("Europe/Berln", "'Europe/Berln' is not a time zone name this machine knows: did you "
                     "mean Europe/Berlin?"),
    ("europe/berlin", "did you mean Europe/Berlin?"),
    ("Mars/Olympus", "'Mars/Olympus' is not a time zone name this machine knows (accepted:"),
    ("9", "9 is not a time zone name"),
    ("''", "'' is not a time zone name"),
])
def test_a_zone_name_that_is_no_zone_is_refused_when_the_sites_file_is_read(
        tmp_path, written, want):
    """Before: `timezone: Europe/Berln` loaded, and the site's scheduler times were read in
    the engine's zone without a word (hours off)."""
    path = tmp_path / "sites.yaml"
    path.write_text(LOCAL + f"    metadata: {{timezone: {written}}}\n")
    with pytest.raises(BadInput) as e:
        load_config(path)
    msg = str(e.value)
    assert msg.startswith(f"sites file {path}: site 'tokyo' (sites[0]): metadata: timezone: ")
    assert want in msg and "an IANA time zone name such as Europe/Berlin" in msg, msg
    assert msg.endswith("(line 4)"), msg


def test_a_known_zone_or_none_loads(tmp_path):
    path = tmp_path / "sites.yaml"
    path.write_text(LOCAL + "    metadata: {timezone: Asia/Tokyo}\n")
    assert load_config(path).sites[0].metadata_zone() == ZoneInfo("Asia/Tokyo")
    path.write_text(LOCAL + "    metadata: {timezone: }\n")
    assert load_config(path).sites[0].metadata_zone() is None


def test_the_cli_exits_2_naming_the_zone_and_what_is_accepted(tmp_path):
    path = tmp_path / "sites.yaml"
    path.write_text(LOCAL + "    metadata:\n      timezone: Europe/Berln\n")
    env = {**os.environ, "DIAMOND_DATA_DIR": str(tmp_path / "data"), "HOME": str(tmp_path),
           "DIAMOND_CONFIG": str(path)}
    res = subprocess.run([sys.executable, "-m", "diamond_jupyter.cli", "sites"],
                         capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 2, (res.stdout, res.stderr)
    line = res.stderr.strip()
    assert line.startswith(f"diamond: sites file {path}: site 'tokyo' (sites[0]): metadata: "
                           "timezone: 'Europe/Berln' is not a time zone name"), line
    assert "Europe/Berlin" in line and line.endswith("(line 5)"), line


@pytest.mark.parametrize("key", ["tz", "time_zone", "timezon"])
def test_a_timezone_key_spelt_otherwise_is_refused(tmp_path, key):
    """`tz: Asia/Tokyo` was kept as a note that nothing reads."""
    msg = refused(tmp_path, LOCAL + f"    metadata: {{{key}: Asia/Tokyo}}\n")
    assert f"metadata: {key}: did you mean timezone? " in msg, msg
