"""SWF sweep 19's leftovers: the old `TimeZone:` header (SWF 2.0-2.1, deprecated in 2.2 for
TimeZoneString) read as the archive defines it, the seconds added to a Unix time to give
the log's local time, where nothing better places a StartTime; and `MaxRuntime: 0` said,
not dropped unsaid. Small logs written here; no test bed. The tests marked `fault` failed
before."""

from __future__ import annotations

from pathlib import Path

import pytest
from sweep_helpers import save_swf

from diamond_jupyter.testbed.clusters import cluster
from diamond_jupyter.testbed.trace import plan_replay, read_swf

ALPHA = cluster("alpha")
UNIX = 1199145600  # 2008-01-01 00:00:00 UTC
BASE = "; Version: 2.1\n; Computer: Test\n; MaxJobs: 10\n; MaxRecords: 10\n; MaxProcs: 32\n"


def _jobs(req: int = 3600) -> str:
    return "".join(f"{n} {600 * n} 30 1200 8 -1 -1 8 {req} -1 1 5 1 -1 1 1 -1 -1\n"
                   for n in range(1, 11))


def _read(tmp_path: Path, text: str):
    return read_swf(save_swf(tmp_path / "log.swf", text))


def _noted(log, *words: str) -> list[str]:
    return [n for n in log.notes if all(w in n for w in words)]


# ---- TimeZone ---------------------------------------------------------------------------

@pytest.mark.parametrize("zone,start", [
    ("3600", "Tue Jan  1 01:00:00 2008"),     # HPC2N's and KTH's: Stockholm, no abbreviation
    ("-18000", "Mon Dec 31 19:00:00 2007"),   # five hours west
    ("-21600", "Mon Dec 31 18:00:00 CST 2007"),  # CST names several offsets: TimeZone says
    ("0", "2008-01-01 00:00:00"),
])
def test_fault_a_start_time_is_placed_by_the_old_time_zone_line(tmp_path, zone, start):
    """It was left unknown ("no UnixStartTime nor a known TimeZoneString")."""
    log = _read(tmp_path, BASE + f"; TimeZone: {zone}\n; StartTime: {start}\n" + _jobs())
    assert log.unix_start == UNIX, log.notes
    assert _noted(log, "read with the header's TimeZone", f"{int(zone):+d} s from UTC",
                  "deprecated", "daylight saving"), log.notes
    assert not _noted(log, "not known"), log.notes


def test_a_better_zone_than_time_zone_is_read_first(tmp_path):
    """TimeZoneString, an offset abbreviation or UnixStartTime place the log exactly; the
    deprecated line is then not used, nor said."""
    for header in ("; TimeZoneString: Europe/Stockholm\n; StartTime: Tue Jan 01 01:00:00 2008\n",
                   "; StartTime: Tue Jan 01 01:00:00 CET 2008\n",
                   f"; UnixStartTime: {UNIX}\n; StartTime: Tue Jan 01 01:00:00 2008\n"):
        log = _read(tmp_path, BASE + "; TimeZone: 7200\n" + header + _jobs())
        assert log.unix_start == UNIX and not _noted(log, "TimeZone"), (header, log.notes)


@pytest.mark.parametrize("zone", ["Europe/Stockholm", "99999", "an hour east"])
def test_a_time_zone_of_no_offset_leaves_the_start_unknown_and_said(tmp_path, zone):
    log = _read(tmp_path, BASE + f"; TimeZone: {zone}\n; StartTime: Tue Jan 1 01:00:00 2008\n"
                + _jobs())
    assert log.unix_start is None and _noted(log, "StartTime", "not known"), log.notes


# ---- MaxRuntime: 0 ------------------------------------------------------------------------

def test_fault_a_max_runtime_of_0_is_said(tmp_path):
    """It was dropped unsaid, as if the header gave none."""
    log = _read(tmp_path, BASE + "; MaxRuntime: 0\n" + _jobs(req=-1))
    assert log.max_runtime is None
    [said] = _noted(log, "MaxRuntime 0", "line 6", "not read")
    assert "'; MaxRuntime: 0'" in said, said
    # the plan still gives each unasked job its partition's limit, and says so
    assert any("no requested time" in n for n in plan_replay(log, ALPHA, seed=1).notes)


def test_a_max_runtime_of_0_beside_a_real_one_is_not_said(tmp_path):
    """Logs joined: one header's 0 beside another's limit; the limit is read."""
    log = _read(tmp_path, BASE + "; MaxRuntime: 0\n; MaxRuntime: 7200\n" + _jobs())
    assert log.max_runtime == 7200 and not _noted(log, "MaxRuntime 0"), log.notes


@pytest.mark.parametrize("value", ["-1", "7200"])
def test_an_unknown_or_real_max_runtime_is_not_said(tmp_path, value):
    log = _read(tmp_path, BASE + f"; MaxRuntime: {value}\n" + _jobs())
    assert not _noted(log, "MaxRuntime 0"), log.notes
