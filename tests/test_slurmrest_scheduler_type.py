"""A slurmrestd site's SchedulerType: no slurmrestd version (v0.0.38 to v0.0.41) serves
slurm.conf, so `scontrol show config`'s SchedulerType line has no REST counterpart; `GET
diag` (sdiag's statistics) has the backfill's counters, which only sched/backfill moves. A
site whose diag shows a backfill cycle is planned with backfill and says nothing; one whose
diag shows none (sched/builtin, or a backfill not run yet) or did not answer is still planned
with backfill, and `--explain` says that was assumed, wherever the job may wait."""

from __future__ import annotations

import json

import pytest
from stand_in_slurmrestd import StandInSlurmrestd
from test_placement_cases22 import BUSY_JOBS, BUSY_NODES, explain, orion

from diamond_jupyter.dialects import slurm_rest
from diamond_jupyter.model import UNREPORTED_SCHEDULER_TYPE

ASSUMED = "does not report SchedulerType: backfill (sched/backfill) is assumed for this site"


def _diag(**stats: object) -> str:
    return json.dumps({"meta": {}, "errors": [], "statistics": {
        "schedule_cycle_counter": 31, "bf_active": False, **stats}})


def _wrapped(n: int) -> dict:
    return {"set": True, "infinite": False, "number": n}  # v0.0.40 on


@pytest.mark.parametrize("reply", [
    _diag(bf_cycle_counter=4),  # v0.0.38/v0.0.39: plain numbers
    _diag(bf_cycle_counter=0, bf_backfilled_jobs=2),  # statistics reset since
    _diag(bf_cycle_counter=0, bf_when_last_cycle=_wrapped(1765100000)),  # v0.0.40 on
    _diag(bf_active=True),
])
def test_a_diag_with_the_backfill_at_work_says_backfill(reply):
    assert slurm_rest.backfill_seen(reply)


@pytest.mark.parametrize("reply", [
    _diag(bf_cycle_counter=0, bf_backfilled_jobs=0, bf_when_last_cycle=0),
    _diag(bf_cycle_counter=_wrapped(0), bf_when_last_cycle={"set": False, "number": 0}),
    '{"errors": [{"error": "Unable to contact slurmctld", "error_number": 1007}]}',
    "not json", "[]", '{"statistics": 5}', None,
])
def test_a_diag_without_backfill_counts_or_unreadable_says_nothing(reply):
    assert not slurm_rest.backfill_seen(reply)


def _snap(diag: dict[str, str]):
    outputs = {"queue": '{"jobs": []}', "nodes": '{"nodes": []}',
               "partitions": '{"partitions": []}', **diag}
    return slurm_rest.parse_snapshot("orion", outputs, api_version="v0.0.41")


def test_the_snapshot_says_why_scheduler_type_is_not_known():
    assert UNREPORTED_SCHEDULER_TYPE not in _snap({slurm_rest.DIAG: _diag(
        bf_cycle_counter=3)}).unreported
    assert _snap({slurm_rest.DIAG: _diag(bf_cycle_counter=0)}).unreported[
        UNREPORTED_SCHEDULER_TYPE] == "slurmrestd v0.0.41 (its diag shows no backfill cycle)"
    assert _snap({slurm_rest.DIAG_UNREAD: "GET diag failed: HTTP 500"}).unreported[
        UNREPORTED_SCHEDULER_TYPE] == "slurmrestd v0.0.41 (its diag: GET diag failed: HTTP 500)"


def _unknown_scheduler(site):
    cfg, snap = site
    return cfg, snap.model_copy(update={"unreported": {
        **snap.unreported, UNREPORTED_SCHEDULER_TYPE: "slurmrestd v0.0.41 (its diag shows "
        "no backfill cycle)"}})


def test_fault_a_job_that_waits_hears_backfill_was_assumed():
    v, said = explain("#SBATCH -p batch -c 4 -t 1:00:00",
                      _unknown_scheduler(orion(jobs=BUSY_JOBS, nodes=BUSY_NODES)))
    assert v.verdict == "BUSY", said
    line = [n for n in v.not_checked if ASSUMED in n]
    assert len(line) == 1 and "(its diag shows no backfill cycle)" in line[0], v.not_checked
    assert said.count(ASSUMED) == 1, said


def test_a_job_that_starts_at_once_hears_nothing_of_it():
    v, said = explain("#SBATCH -p batch -c 4 -t 1:00:00", _unknown_scheduler(orion()))
    assert v.verdict == "READY" and ASSUMED not in said, said


def test_a_site_whose_diag_shows_backfill_says_nothing():
    v, said = explain("#SBATCH -p batch -c 4 -t 1:00:00", orion(jobs=BUSY_JOBS, nodes=BUSY_NODES))
    assert v.verdict == "BUSY" and "SchedulerType" not in said, said


@pytest.mark.parametrize("diag,said", [
    (_diag(bf_cycle_counter=0), "(its diag shows no backfill cycle)"),
    ('{"errors": [{"error": "Unable to contact slurmctld", "error_number": 1007}]}',
     "(its diag: GET diag answered HTTP 200: Unable to contact slurmctld (1007))"),
])
async def test_fault_a_rest_site_asks_diag_with_its_capabilities(tmp_path, diag, said):
    replies = {"jobs": '{"jobs": []}', "nodes": '{"nodes": []}',
               "partitions": '{"partitions": []}', "reservations": '{"reservations": []}',
               "diag": diag}
    async with StandInSlurmrestd(replies) as rest:
        site = rest.site(tmp_path, api_version="v0.0.38")
        try:
            snap = await site.snapshot(max_age_s=0)
        finally:
            await site.close()
    assert snap.reachable, snap.error
    assert "diag" in rest.asked
    assert said in snap.unreported[UNREPORTED_SCHEDULER_TYPE], snap.unreported


async def test_a_rest_site_asks_diag_once_for_each_capabilities_lifetime(tmp_path):
    """diag's backfill counters change slowly: read with the accounting, once for each
    lifetime of the capabilities (60 s), however many queue refreshes come between, and
    also while slurmctld's reservations answer errors and are asked again at each refresh.
    Before, such errors asked diag at every refresh too."""
    failing = json.dumps({"reservations": [], "errors": [
        {"error": "Unable to contact slurmctld", "error_number": 1007}]})
    ok = '{"reservations": []}'
    replies = {"jobs": '{"jobs": []}', "nodes": '{"nodes": []}',
               "partitions": '{"partitions": []}',
               # one per read: fine, then (60 s later) failing three times, then fine
               "reservations": [ok, failing, failing, failing, ok]}
    async with StandInSlurmrestd(replies) as rest:
        site = rest.site(tmp_path, api_version="v0.0.41")
        try:
            for _ in range(4):  # the first reads everything; three refreshes the queue alone
                assert (await site.snapshot(max_age_s=0)).reachable
            assert (rest.asked.count("jobs"), rest.asked.count("diag")) == (4, 1), rest.asked
            site._caps_at = -1e9  # the capabilities' 60 s over: asked again, diag with them
            for _ in range(6):  # slurmctld's errors retried three times, then kept 60 s
                snap = await site.snapshot(max_age_s=0)
                assert snap.reachable and snap.unreported.get(UNREPORTED_SCHEDULER_TYPE) is None
        finally:
            await site.close()
    assert rest.asked.count("jobs") == 10
    assert rest.asked.count("reservations") == 5
    assert rest.asked.count("diag") == 2, rest.asked
