"""Slurm licenses that waiting jobs ahead of a new job will take: slurmctld starts jobs in
priority order, so a job ahead asking the same license takes it first, and the new job
starts no sooner than enough are left beside it.

Before: only the running jobs holding a license were counted (a job asking one license
that two free ones covered was READY now though a job ahead was about to take both)."""

from __future__ import annotations

import pytest
from test_placement_cases import at
from test_slurm_license_use import HELD, QUEUE, held, hours_to_start, said, site, verdict

from diamond_jupyter.dialects.slurm_commands import parse_job_licenses


def waiting(jid: str, limit_h: int, reason: str = "Licenses") -> str:
    """carol's job as `squeue` prints it: waiting in main, one CPU, `limit_h` hours."""
    return (f"{jid}|PENDING|N/A|N/A|{at(-1)}|{limit_h}:00:00|1|1|carol|main|N/A||{reason}|"
            f"(null)|job{jid}")


def asks(jid: str, licenses: str) -> str:
    return f"{jid}|normal|proj|OK|PD|cpu=1,node=1|N/A|N/A|N/A|1|*|{licenses}|"


def ahead(*jobs: tuple[str, int, str, str]):
    """vega with running jobs 7 (fluent:3, ends at +2 h) and 8 (fluent:1, matlab:2, +3 h)
    and the waiting `jobs` (id, limit in hours, licenses, reason) ahead of the new one."""
    return site(queue=QUEUE + tuple(waiting(j, h, r) for j, h, _, r in jobs),
                queue_qos=HELD + "".join(asks(j, lic) + "\n" for j, _, lic, _ in jobs))


def test_a_waiting_jobs_licenses_are_read_from_its_squeue_line():
    assert parse_job_licenses(asks("20", "fluent:3,matlab:1") + "\n") == {
        "20": {"fluent": 3, "matlab": 1}}
    _, snap = ahead(("20", 4, "fluent:3", "Licenses"))
    assert {j.native_id: j.licenses for j in snap.pending} == {"20": {"fluent": 3}}


CASES = [
    # (the jobs ahead, the new job's -L, hours to its start before and now)
    # job 20 takes 3 fluent at +2 h (job 7's), for 4 h: the 4th comes free at +3 h (job 8)
    ((("20", 4, "fluent:3", "Licenses"),), "fluent:1", 2.0, 3.0),
    # job 20 takes 8 matlab now for 1 h: 8 of 10 are free, 2 held by job 8 till +3 h
    ((("20", 1, "matlab:8", "Priority"),), "matlab:1", 0.0, 1.0),
    # two jobs ahead: 20 takes 2 fluent at +2 h for 1 h, 21 the other 2 at +3 h for 1 h
    ((("20", 1, "fluent:2", "Licenses"), ("21", 1, "fluent:3", "Licenses")),
     "fluent:2", 2.0, 4.0),
]


@pytest.mark.parametrize("jobs, asked, before_h, start_h", CASES,
                         ids=[c[1] + "-" + str(len(c[0])) for c in CASES])
def test_the_jobs_ahead_take_the_licenses_they_ask_first(jobs, asked, before_h, start_h):
    assert hours_to_start(verdict(asked)) == pytest.approx(before_h, abs=0.05)
    v = verdict(asked, ahead(*jobs))
    assert v.verdict == "BUSY", v.notes
    assert hours_to_start(v) == pytest.approx(start_h, abs=0.05), v.notes
    assert said(v, "waiting jobs ahead of it asking them have taken theirs (Reason=Licenses)")


def test_a_job_short_enough_to_end_before_the_job_ahead_takes_them_starts_now():
    # job 20 waits for 9 matlab until job 8 ends (+3 h); 2 taken for 1 h are back by then
    v = verdict("matlab:2", ahead(("20", 4, "matlab:9", "Licenses")))
    assert v.verdict == "READY" and hours_to_start(v) == pytest.approx(0.0, abs=0.01)


@pytest.mark.parametrize("reason", ["JobHeldUser", "Dependency", "BeginTime"])
def test_a_job_ahead_held_back_takes_nothing_first(reason):
    v = verdict("fluent:1", ahead(("20", 4, "fluent:3", reason)))
    assert hours_to_start(v) == pytest.approx(2.0, abs=0.05)
    assert not said(v, "waiting jobs ahead")


def test_a_job_ahead_asking_more_than_the_site_has_takes_nothing():
    v = verdict("matlab:1", ahead(("20", 4, "matlab:11", "Licenses")))
    assert v.verdict == "READY"


def test_jobs_ahead_without_licenses_change_nothing():
    v = verdict("fluent:3", site(queue=QUEUE + (waiting("20", 4, "Priority"),),
                                 queue_qos=HELD + held("20", "(null)") + "\n"))
    assert hours_to_start(v) == pytest.approx(2.0, abs=0.05)
