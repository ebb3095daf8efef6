"""Slurm licenses in use: a job asking more of a license than are free now waits
(Reason=Licenses) until the running jobs holding them end, and is never READY now.

Before: only the totals were read (`scontrol show licenses -o`'s Total=), so a job asking
licenses that running jobs hold was placed READY now; the licenses each running job holds
(`squeue -O Licenses`) were not read, and the site's licenses were cached with its
partitions, not read again with the queue."""

from __future__ import annotations

from datetime import timedelta, timezone

import pytest
from test_placement_cases import NOW
from test_placement_cases14 import PARTITIONS, node_lines, running

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.dialects.slurm_commands import (
    QUEUE_JOB_FIELDS,
    SlurmCommands,
    parse_job_licenses,
)
from diamond_jupyter.federation import Federation
from diamond_jupyter.placement import place

slurm = SlurmCommands(tz=timezone.utc)

# fluent: all 4 in use (bob's job 7 holds 3 until +2 h, job 8 holds 1 until +3 h);
# matlab: 8 of 10 free; ansys: 2 in all, both held outside this cluster (no job here)
LICENSES = ("LicenseName=matlab Total=10 Used=2 Free=8 Reserved=0 Remote=no\n"
            "LicenseName=fluent Total=4 Used=4 Free=0 Reserved=0 Remote=no\n"
            "LicenseName=ansys Total=2 Used=2 Free=0 Reserved=0 Remote=no\n")
QUEUE = (running("7", "c01", 40, 2), running("8", "c02", 40, 3))


def held(jid: str, licenses: str) -> str:
    """A running job as `squeue -h -a -O QUEUE_JOB_FIELDS` prints it, each field ended by
    '|', its licenses last."""
    return f"{jid}|normal|proj|OK|R|cpu=40,node=1|N/A|N/A|N/A|1|*|{licenses}|"


HELD = held("7", "fluent:3") + "\n" + held("8", "fluent:1,matlab:2") + "\n"


def site(queue=QUEUE, queue_qos: str = HELD, licenses: str = LICENSES):
    outputs = {
        "partitions": PARTITIONS, "nodes": node_lines({"c01": 40, "c02": 40}, {}),
        "queue": "\n".join(queue), "queue_qos": queue_qos, "qos": "normal||||||||\n",
        "reservations": "No reservations in the system\n",
        "assoc": "user|alice\nalice|proj||normal|normal\n", "licenses": licenses}
    snap = slurm.parse_snapshot("vega", outputs).model_copy(update={"taken_at": NOW})
    return SiteConfig(name="vega", metadata={"architecture": "x86_64"}), snap


def verdict(asked: str, at=None):
    spec = Federation.parse(f"#!/bin/bash\n#SBATCH -n 1 -t 1:00:00 -L {asked}\n./app\n",
                            "slurm")
    return place(spec, [at or site()], now=NOW).ranked[0]


def said(v, text: str) -> bool:
    return any(text in x for x in v.reasons + v.notes)


def hours_to_start(v) -> float:
    return (v.estimated_start - NOW) / timedelta(hours=1)


def test_free_licenses_are_read_from_free_or_from_what_is_used_and_reserved():
    assert slurm.parse_licenses(LICENSES, free=True) == {"matlab": 8, "fluent": 0,
                                                         "ansys": 0}
    # a Slurm that prints no Free=: Total less Used and Reserved
    assert slurm.parse_licenses("LicenseName=matlab Total=10 Used=3 Reserved=2\n",
                                free=True) == {"matlab": 5}
    assert slurm.parse_licenses("LicenseName=matlab Total=10\n", free=True) is None
    assert slurm.parse_licenses("No licenses configured in Slurm.\n", free=True) == {}
    _, snap = site()
    assert snap.licenses_free == {"matlab": 8, "fluent": 0, "ansys": 0}
    assert snap.licenses == {"matlab": 10, "fluent": 4, "ansys": 2}


def test_each_jobs_licenses_are_read_from_its_squeue_line():
    assert QUEUE_JOB_FIELDS.endswith(",Licenses:0|,Dependency:0|")
    text = HELD + held("9", "(null)") + "\n" + held("10", "fluent:1|matlab:1") + "\n" \
        + "11|normal|proj|OK|R|cpu=1|\n"
    # 10 asked any one of two (which it holds is not said); 11: an older line, no field
    assert parse_job_licenses(text) == {"7": {"fluent": 3}, "8": {"fluent": 1, "matlab": 2},
                                        "9": {}}
    _, snap = site()
    assert {j.native_id: j.licenses for j in snap.jobs} == {
        "7": {"fluent": 3}, "8": {"fluent": 1, "matlab": 2}}


def test_the_licenses_are_read_again_with_every_queue():
    assert {"queue", "licenses"} <= SlurmCommands.live_outputs


CASES = [
    # (the job's -L, verdict, hours to its start, what is said)
    ("matlab:2", "READY", 0.0, None),
    # 3 fluent: job 7 (3 of them) ends at +2 h
    ("fluent:3", "BUSY", 2.0, "3 of license 'fluent' asked, 0 free now (4 in all): it waits "
     "until enough of the running jobs holding them (4) end (Reason=Licenses)"),
    # all 4: both jobs must end, the later at +3 h
    ("fluent:4", "BUSY", 3.0, "4 of license 'fluent' asked, 0 free now"),
    ("matlab:1,fluent:1", "BUSY", 2.0, "1 of license 'fluent' asked"),
    # any one of them: matlab is free now
    ("fluent:1|matlab:1", "READY", 0.0, None),
]


@pytest.mark.parametrize("asked, expect, start_h, text", CASES, ids=[c[0] for c in CASES])
def test_a_job_waits_for_licenses_until_the_jobs_holding_them_end(asked, expect, start_h,
                                                                  text):
    """Before: every one READY now."""
    v = verdict(asked)
    assert v.verdict == expect, v.reasons + v.notes
    assert hours_to_start(v) == pytest.approx(start_h, abs=0.05)
    if text:
        assert said(v, text), v.notes
        assert any(text in w for w in v.waits_for)
    else:
        assert not said(v, "Reason=Licenses")


def test_when_the_jobs_licenses_are_not_read_it_waits_at_least_for_the_first_to_end():
    v = verdict("fluent:1", site(queue_qos=""))
    assert v.verdict == "BUSY"
    assert hours_to_start(v) >= 2.0 - 0.05
    assert said(v, "1 of license 'fluent' asked, 0 free now (4 in all): it waits "
                   "(Reason=Licenses) at least until the first running job ends")


def test_licenses_no_job_here_holds_wait_for_an_unknown_time():
    v = verdict("ansys:1")
    assert v.verdict == "BUSY" and v.estimated_start is None
    assert said(v, "1 of license 'ansys' asked, 0 free now (2 in all): it waits "
                   "(Reason=Licenses) until they are released, which no running job here "
                   "is seen to hold (when is not known)")
    # with an idle queue too
    idle = verdict("fluent:1", site(queue=(), queue_qos=""))
    assert idle.verdict == "BUSY" and idle.estimated_start is None


def test_free_licenses_not_known_keep_the_totals_check_only():
    v = verdict("fluent:3", site(licenses="LicenseName=fluent Total=4\n"))
    assert v.verdict == "READY"
    assert said(v, "the licenses in use are not read here")
