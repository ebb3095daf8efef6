"""Follow-ups of the twenty-second sweep of scheduler outputs (each failed before).

1. Flux: a running job with no `duration` (0 or absent: it runs until the enclosing
   instance ends) but an `expiration` (flux-jobs(1): the epoch its allocation was marked
   to expire) showed no time limit; now the limit is expiration less `t_run` (the epoch it
   entered RUN). A set duration still wins; a job not started has none.
2. LSF: host type LINUXPPC64 (big-endian POWER) had no architecture; now ppc64, kept apart
   from LINUXPPC64LE (ppc64le).
"""

from __future__ import annotations

import json

import pytest

from diamond_jupyter.dialects.flux_commands import FluxCommands
from diamond_jupyter.dialects.lsf_commands import LsfCommands

flux = FluxCommands()
lsf = LsfCommands()
T_RUN = 1764999000


def flux_limit(**fields: object) -> int | None:
    [job] = flux.parse_status(json.dumps({"jobs": [{"id": 9, "state": "RUN", **fields}]}))
    return job.walltime_s


@pytest.mark.parametrize(("fields", "limit"), [
    ({"t_run": T_RUN, "expiration": T_RUN + 7200}, 7200),
    ({"t_run": T_RUN, "expiration": T_RUN + 7200, "duration": 0.0}, 7200),
    # R's starttime is a moment before the RUN event: the limit rounds to the second
    ({"t_run": T_RUN + 0.4, "expiration": T_RUN + 1800.0}, 1800),
    ({"t_run": T_RUN, "expiration": T_RUN + 7200, "duration": 3600}, 3600),
    ({"expiration": T_RUN + 7200}, None),
    ({"t_run": T_RUN, "expiration": T_RUN - 5}, None),
    ({"t_run": T_RUN, "expiration": True}, None),
])
def test_flux_time_limit_from_expiration(fields: dict, limit: int | None) -> None:
    assert flux_limit(**fields) == limit


@pytest.mark.parametrize(("host_type", "arch"), [
    ("LINUXPPC64", "ppc64"),
    ("LINUXPPC64LE", "ppc64le"),
    ("X86_64", "x86_64"),
    ("LINUX64", "ia64"),  # Itanium Linux (LSF's x86-64 Linux type is X86_64)
    ("LINUX_ARM64", "aarch64"),
])
def test_lsf_host_type_architecture(host_type: str, arch: str) -> None:
    bhosts = {"RECORDS": [{"HOST_NAME": "p1", "STATUS": "ok", "MAX": "8", "NJOBS": "0"}]}
    lshosts = {"RECORDS": [{"HOST_NAME": "p1", "type": host_type, "ncpus": "8"}]}
    [host] = lsf.parse_hosts(json.dumps(bhosts), json.dumps(lshosts))
    assert host.architecture == arch
