"""Placement over a slurmrestd door (v0.0.41 replies in the data parser's documented
shapes, read by the REST dialect as a snapshot), in situations a user meets: limits nearly
used up (a QOS's or an account's TRES-minutes, submit counts), a limit slurmrestd does not
report (MaxArraySize, the backfill window, what a QOS has used of its GrpTRESMins: said
once, as not checked, never taken as no limit), a job asking no time limit against
TRES-minutes limits (its partition's DefaultTime, else MaxTime), reservations, drained
nodes and array throttles. Each case asserts the decision and what the explanation says."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from test_placement_cases import NOW, has_note, run

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.dialects import slurm_rest
from diamond_jupyter.model import SiteSnapshot

SITE = "orion"
VERSION = "v0.0.41"
T0 = int(NOW.timestamp())


def _n(value: Any) -> dict[str, Any]:
    """A number as v0.0.39 and later write it."""
    return {"set": True, "infinite": False, "number": value}


_NONE = {"set": False, "infinite": True, "number": 0}


def _tres(**counts: int) -> list[dict[str, Any]]:
    """A slurmdb TRES list: cpu=4 -> [{type: cpu, count: 4}]."""
    return [{"type": k, "name": "", "id": i, "count": v}
            for i, (k, v) in enumerate(counts.items(), 1)]


def node(name: str, state: tuple[str, ...] = ("IDLE",), alloc: int = 0) -> dict[str, Any]:
    return {"name": name, "state": list(state), "cpus": 32, "alloc_cpus": alloc,
            "real_memory": 128000, "alloc_memory": 0, "partitions": ["batch", "long"],
            "architecture": "x86_64", "gres": "", "gres_used": ""}


def partition(name: str, max_min: int, default_min: int | None = None,
               default: bool = False, state: str = "UP", qos: str = "") -> dict[str, Any]:
    return {"name": name, "nodes": {"configured": "n[01-04]", "total": 4},
            "cpus": {"total": 128}, "flags": ["default"] if default else [],
            "partition": {"state": [state]}, "qos": {"assigned": qos},
            "maximums": {"time": _n(max_min)},
            "defaults": {"time": _n(default_min) if default_min else _NONE}}


PARTITIONS = [partition("batch", 24 * 60, 60, default=True), partition("long", 7 * 24 * 60),
              partition("debug", 30, 10)]


def job(jid: int, *, user: str = "bob", state: str = "RUNNING", cpus: int = 32,
        nodes: int = 1, start_h: float = -1.0, limit_min: int = 240, qos: str = "normal",
        partition: str = "batch", account: str = "proj", reason: str = "None",
        on: str = "n01", array: str = "") -> dict[str, Any]:
    """One `GET jobs` entry: running since `start_h` hours from NOW, or waiting (`reason`)."""
    running = state == "RUNNING"
    return {"job_id": jid, "user_name": user, "account": account, "qos": qos,
            "partition": partition, "nodes": on if running else "",
            "node_count": _n(nodes), "cpus": _n(cpus), "tasks": _n(cpus),
            "job_state": [state], "name": f"job{jid}",
            "start_time": _n(T0 + int(start_h * 3600)) if running else _n(0),
            "submit_time": _n(T0 - 7200), "time_limit": _n(limit_min),
            "tres_alloc_str": f"cpu={cpus},mem={4000 * nodes},node={nodes}" if running else "",
            "comment": "", "state_reason": reason,
            "array_job_id": _n(jid if array else 0), "array_task_string": array,
            "het_job_id": _n(0)}


def qos_entry(name: str = "normal", flags: tuple[str, ...] = (), **limits: Any
              ) -> dict[str, Any]:
    """A slurmdb QOS with its limits at their data parser paths: run_mins
    (GrpTRESRunMins, max.tres.minutes.per.qos), grp_mins (GrpTRESMins,
    max.tres.minutes.total), grp_submit (GrpSubmitJobs, max.jobs.count)."""
    most: dict[str, Any] = {"tres": {"minutes": {"per": {}}}, "jobs": {}}
    if "run_mins" in limits:
        most["tres"]["minutes"]["per"]["qos"] = _tres(**limits["run_mins"])
    if "grp_mins" in limits:
        most["tres"]["minutes"]["total"] = _tres(**limits["grp_mins"])
    if "grp_submit" in limits:
        most["jobs"]["count"] = _n(limits["grp_submit"])
    return {"name": name, "flags": list(flags), "limits": {"max": most}}


def association(account: str, user: str = "", parent: str = "", *,
                grp_mins: dict[str, int] | None = None,
                run_mins: dict[str, int] | None = None,
                grp_submit: int | None = None) -> dict[str, Any]:
    """A slurmdb association: GrpTRESMins at max.tres.group.minutes, GrpTRESRunMins at
    max.tres.group.active, GrpSubmitJobs at max.jobs.per.submitted."""
    most: dict[str, Any] = {"tres": {"group": {}}, "jobs": {"per": {}}}
    if grp_mins:
        most["tres"]["group"]["minutes"] = _tres(**grp_mins)
    if run_mins:
        most["tres"]["group"]["active"] = _tres(**run_mins)
    if grp_submit is not None:
        most["jobs"]["per"]["submitted"] = _n(grp_submit)
    return {"account": account, "user": user, "parent_account": parent,
            "partition": None, "default": {"qos": "normal" if user else ""},
            "qos": ["normal", "long"] if user else [], "max": most}


def shares(used: dict[tuple[str, str], int], run_min: dict[tuple[str, str], int] | None = None
           ) -> dict[str, Any]:
    """`GET shares`: (account, user or '') -> cpu-minutes used (written as TRES-seconds,
    as slurmctld keeps them)."""
    rows = []
    for (account, user), minutes in used.items():
        run_s = (run_min or {}).get((account, user), 0) * 60
        rows.append({"name": user or account, "parent": account if user else "root",
                     "type": ["USER" if user else "ASSOCIATION"],
                     "tres": {"usage": [{"name": "cpu", "value": minutes * 60.0}],
                              "run_seconds": [{"name": "cpu", "value": _n(run_s)}]}})
    return {"errors": [], "shares": {"shares": rows, "total_shares": 1}}


def orion(*, jobs: tuple[dict[str, Any], ...] = (), nodes: list[dict[str, Any]] | None = None,
          partitions: list[dict[str, Any]] | None = None,
          qos: list[dict[str, Any]] | None = None,
          assoc: list[dict[str, Any]] | None = None, share: dict[str, Any] | None = None,
          share_failed: str | None = None,
          reservations: list[dict[str, Any]] | None = None
          ) -> tuple[SiteConfig, SiteSnapshot]:
    """The slurmrestd site orion as alice sees it: its replies read by the REST dialect
    (`share_failed`: why its `GET shares` call failed, as the site leaves it)."""
    mine = assoc or [association("proj", "alice", "proj")]
    outputs = {
        "queue": json.dumps({"jobs": list(jobs), "last_update": _n(T0)}),
        "nodes": json.dumps({"nodes": nodes or [node(f"n0{i}") for i in range(1, 5)]}),
        "partitions": json.dumps({"partitions": partitions or PARTITIONS}),
        "reservations": json.dumps({"reservations": reservations or []}),
        "qos": json.dumps({"errors": [], "qos": qos or [qos_entry(), qos_entry("long")]}),
        slurm_rest.ASSOCIATIONS: json.dumps([
            json.dumps({"errors": [], "associations": [a for a in mine if a["user"]]}),
            json.dumps({"errors": [], "associations": [a for a in mine if not a["user"]]})]),
        "user": "alice", slurm_rest.READ_AT: str(T0),
        slurm_rest.DIAG: json.dumps({"errors": [], "statistics": {"bf_cycle_counter": 9}})}
    if share is not None:
        outputs[slurm_rest.SHARES] = json.dumps(share)
    if share_failed is not None:
        outputs[slurm_rest.SHARES_UNREAD] = share_failed
    snap = slurm_rest.RestCommands(api_version=VERSION).parse_snapshot(SITE, outputs)
    return SiteConfig(name=SITE), snap.model_copy(update={"taken_at": NOW})


def explain(script: str, site: tuple[SiteConfig, SiteSnapshot]):
    p = run(script, site)
    v = p.verdict(SITE)
    assert v is not None, p.explain()
    return v, p.explain()


NO_ARRAY_SIZE = ("slurmrestd v0.0.41 does not report MaxArraySize (the array's largest index "
                 "must be below it)")
NO_BF_WINDOW = ("slurmrestd v0.0.41 does not report the backfill window, SchedulerParameters' "
                "bf_window")
NO_BF_WINDOW_LINE = NO_BF_WINDOW + " (a start past it keeps no backfill slot)"
BUSY_NODES = [node(f"n0{i}", ("ALLOCATED",), 32) for i in range(1, 5)]
BUSY_JOBS = tuple(job(100 + i, on=f"n0{i}", start_h=-1, limit_min=180) for i in range(1, 5))


# -- what slurmrestd does not report: said once, as not checked -----------------------------

def test_an_array_on_a_rest_site_runs_and_says_max_array_size_was_not_checked():
    v, said = explain("#SBATCH -p batch -c 4 -t 1:00:00 --array=0-99%4", orion())
    assert v.verdict == "READY" and v.partition == "batch", said
    assert v.not_checked == [NO_ARRAY_SIZE], said
    assert f"  orion not checked: {NO_ARRAY_SIZE}" in said.splitlines()


def test_a_single_job_hears_nothing_of_max_array_size():
    v, said = explain("#SBATCH -p batch -c 4 -t 1:00:00", orion())
    assert v.verdict == "READY", said
    assert v.not_checked == [] and "not checked" not in said, said


def test_where_max_array_size_is_reported_an_index_past_it_is_refused_not_noted():
    cfg, snap = orion()
    known = snap.model_copy(update={"max_array_size": 1001, "unreported": {}})
    v, said = explain("#SBATCH -p batch -c 1 -t 0:10:00 --array=0-2000", (cfg, known))
    assert not v.feasible and any("MaxArraySize=1001" in r for r in v.reasons), said
    assert v.not_checked == [], v.not_checked


def test_a_job_that_waits_on_a_rest_site_hears_the_backfill_window_was_not_checked():
    v, said = explain("#SBATCH -p batch -c 4 -t 1:00:00", orion(jobs=BUSY_JOBS, nodes=BUSY_NODES))
    assert v.verdict == "BUSY" and v.raw_start == NOW + timedelta(hours=2), said
    assert [n for n in v.not_checked if NO_BF_WINDOW in n] == v.not_checked, v.not_checked
    assert len(v.not_checked) == 1 and said.count(NO_BF_WINDOW) == 1, said


def test_a_refused_site_says_its_backfill_window_was_not_checked_as_a_waiting_one_does():
    # refused now (64 CPUs on 32-CPU nodes, the partition down): once that goes the job
    # may wait there, and a start past the window keeps no slot; said like MaxArraySize
    down = [partition("batch", 24 * 60, 60, default=True, state="DOWN"), *PARTITIONS[1:]]
    for script, site in (("#SBATCH -p batch -c 64 -t 0:10:00", orion()),
                         ("#SBATCH -p batch -c 4 -t 1:00:00", orion(partitions=down))):
        v, said = explain(script, site)
        assert not v.feasible and v.not_checked == [NO_BF_WINDOW_LINE], said
        assert said.count(NO_BF_WINDOW) == 1, said
        assert f"  orion not checked: {NO_BF_WINDOW_LINE}" in said.splitlines()


def test_a_job_that_starts_now_hears_nothing_of_the_backfill_window():
    v, said = explain("#SBATCH -p batch -c 4 -t 1:00:00", orion())
    assert v.verdict == "READY" and v.not_checked == [], v.not_checked


# a refused site says what it did not check too: once the refusal goes (a node back, a
# reservation made, a shorter time asked), those limits may refuse the job in turn
QOS_MINS_UNREAD = ("slurmrestd v0.0.41 does not report what QOS normal has used of its "
                   "GrpTRESMins cpu=1000: the job is checked against the whole limit only")


def test_a_site_refused_for_its_nodes_still_says_what_it_did_not_check():
    site = orion(qos=[qos_entry(grp_mins={"cpu": 1000}), qos_entry("long")])
    v, said = explain("#SBATCH -p batch -c 64 -t 0:10:00 --array=0-9", site)
    assert v.verdict == "INCOMPATIBLE" and any("64 CPUs" in r for r in v.reasons), said
    assert v.not_checked == [NO_ARRAY_SIZE, QOS_MINS_UNREAD, NO_BF_WINDOW_LINE], said
    assert [line for line in said.splitlines() if "not checked:" in line] == [
        f"  orion not checked: {NO_ARRAY_SIZE}", f"  orion not checked: {QOS_MINS_UNREAD}",
        f"  orion not checked: {NO_BF_WINDOW_LINE}"]


def test_a_site_refused_in_its_partition_still_says_the_qos_minutes_were_not_checked():
    # 2 h is above debug's MaxTime of 30 min; debug runs it under QOS normal too
    site = orion(qos=[qos_entry(grp_mins={"cpu": 1000}), qos_entry("long")])
    v, said = explain("#SBATCH -p debug -c 1 -t 2:00:00", site)
    assert not v.feasible and any("MaxTime" in r for r in v.reasons), said
    assert v.not_checked == [QOS_MINS_UNREAD, NO_BF_WINDOW_LINE], said
    assert f"  orion not checked: {QOS_MINS_UNREAD}" in said.splitlines()


def test_a_site_refused_for_a_reservation_not_found_still_says_max_array_size():
    v, said = explain("#SBATCH -p batch -c 1 -t 0:10:00 --array=0-9 --reservation=nosuch",
                      orion())
    assert v.verdict == "RESTRICTED" and "nosuch" in " ".join(v.reasons), said
    assert v.not_checked == [NO_ARRAY_SIZE, NO_BF_WINDOW_LINE], said
    assert f"  orion not checked: {NO_ARRAY_SIZE}" in said.splitlines()


def test_a_refused_site_whose_limits_are_all_reported_says_nothing_not_checked():
    # the account's GrpTRESMins with their use from GET shares, MaxArraySize known
    cfg, snap = orion(assoc=CHAIN, share=shares({("proj", "alice"): 0, ("proj", ""): 0}))
    known = snap.model_copy(update={"max_array_size": 1001, "unreported": {},
                                    "bf_window_s": 1440 * 60.0})
    v, said = explain("#SBATCH -p batch -c 64 -t 0:10:00 --array=0-9", (cfg, known))
    assert v.verdict == "INCOMPATIBLE", said
    assert v.not_checked == [] and "not checked" not in said, said


# -- a QOS's TRES-minutes and submit limits over slurmrestd ---------------------------------

def test_a_job_alone_past_the_qos_running_minutes_never_starts():
    site = orion(qos=[qos_entry(run_mins={"cpu": 2000}), qos_entry("long")])
    v, said = explain("#SBATCH -p batch -c 8 -t 5:00:00", site)
    assert v.verdict == "RESTRICTED", said
    assert v.reasons == ["needs 2400 cpu-minutes (8 CPUs for 300 min), QOS normal's "
                         "GrpTRESRunMins cpu=2000 allows less at once: it would never start "
                         "(QOSGrpCPURunMinutesLimit)"]


def test_qos_running_minutes_nearly_taken_make_the_job_wait_as_they_run_down():
    # bob's 8 CPUs have 150 min left (1200 cpu-minutes, counted from the queue: slurmrestd
    # reports no QOS's use); 960 more fit under 2000 once 160 of them have run, 20 min on
    site = orion(qos=[qos_entry(run_mins={"cpu": 2000}), qos_entry("long")],
                 jobs=(job(200, cpus=8, start_h=-0.5, limit_min=180),))
    v, said = explain("#SBATCH -p batch -c 8 -t 2:00:00", site)
    assert v.verdict == "BUSY" and v.raw_start == NOW + timedelta(minutes=20), said
    assert v.waits_for == ["QOS normal's GrpTRESRunMins cpu=2000: its running jobs have 1200 "
                           "cpu-minutes still to run, the job asks 960: it waits as they run "
                           "down (QOSGrpCPURunMinutesLimit)"]


def test_a_job_asking_no_time_limit_meets_the_qos_running_minutes_at_the_max_time():
    site = orion(qos=[qos_entry(), qos_entry("long", run_mins={"cpu": 5000})])
    v, said = explain("#SBATCH -p long --qos=long -c 1", site)
    assert v.verdict == "RESTRICTED", said
    assert v.reasons == ["needs 10080 cpu-minutes (1 CPU for 10080 min, partition long's "
                         "MaxTime: it asks no time limit), QOS long's GrpTRESRunMins cpu=5000 "
                         "allows less at once: it would never start (QOSGrpCPURunMinutesLimit)"]


def test_a_qos_grp_tres_mins_whose_use_is_not_reported_is_said_once_not_assumed_empty():
    # batch and long both run it under QOS normal: the note once
    site = orion(qos=[qos_entry(grp_mins={"cpu": 1000}), qos_entry("long")])
    v, said = explain("#SBATCH -c 4 -t 2:00:00", site)
    assert v.verdict == "READY", said
    note = ("slurmrestd v0.0.41 does not report what QOS normal has used of its GrpTRESMins "
            "cpu=1000: the job is checked against the whole limit only")
    assert v.not_checked == [note] and said.count(note) == 1, said


def test_a_job_past_the_whole_qos_grp_tres_mins_is_held_for_good():
    site = orion(qos=[qos_entry(grp_mins={"cpu": 1000}), qos_entry("long")])
    v, said = explain("#SBATCH -p batch -c 4 -t 5:00:00", site)
    assert v.verdict == "RESTRICTED", said
    assert v.reasons == ["needs 1200 cpu-minutes (4 CPUs for 300 min), more than QOS normal's "
                         "whole GrpTRESMins cpu=1000: Slurm holds it (QOSGrpCPUMinutesLimit) "
                         "for good"]


def test_with_deny_on_limit_sbatch_refuses_a_job_past_the_whole_qos_grp_tres_mins():
    site = orion(qos=[qos_entry(grp_mins={"cpu": 1000}, flags=("DENY_LIMIT",)),
                      qos_entry("long")])
    v, said = explain("#SBATCH -p batch -c 4 -t 5:00:00", site)
    assert v.verdict == "RESTRICTED", said
    assert "sbatch refuses it (DenyOnLimit; QOSGrpCPUMinutesLimit) for good" in v.reasons[0]


def test_a_qos_grp_submit_jobs_reached_refuses_the_submit_until_one_ends():
    queue = (job(301), job(302, state="PENDING", reason="Priority"),
             job(303, user="carol", state="PENDING", reason="Resources"))
    site = orion(qos=[qos_entry(grp_submit=3), qos_entry("long")], jobs=queue)
    v, said = explain("#SBATCH -p batch -c 4 -t 1:00:00", site)
    assert v.verdict == "RESTRICTED", said
    assert v.reasons == ["QOS normal's GrpSubmitJobs is 3 and 3 jobs are queued or running "
                         "under it: the submit is refused until one ends (QOSGrpSubmitJobsLimit)"]


def test_an_array_counts_each_task_against_the_qos_grp_submit_jobs():
    site = orion(qos=[qos_entry(grp_submit=5), qos_entry("long")],
                 jobs=(job(301), job(302, state="PENDING", reason="Priority")))
    v, said = explain("#SBATCH -p batch -c 4 -t 1:00:00 --array=1-4", site)
    assert v.verdict == "RESTRICTED", said
    assert v.reasons == ["QOS normal's GrpSubmitJobs is 5 and 2 jobs are queued or running "
                         "under it: the job array's 4 tasks count as 4 jobs: the submit is "
                         "refused until 1 of them ends (QOSGrpSubmitJobsLimit)"]
    assert v.not_checked == [NO_ARRAY_SIZE, NO_BF_WINDOW_LINE], v.not_checked


# -- an account's TRES-minutes over slurmrestd: their use from GET shares -------------------

CHAIN = [association("proj", "alice", grp_mins={"cpu": 20000}),
         association("proj", "", "root", grp_mins={"cpu": 100000})]


def test_an_account_nearly_out_of_cpu_minutes_holds_a_job_past_what_is_left():
    site = orion(assoc=CHAIN, share=shares({("proj", "alice"): 12000, ("proj", ""): 99500}))
    v, said = explain("#SBATCH -p batch -c 4 -t 3:00:00", site)
    assert v.verdict == "RESTRICTED", said
    assert v.reasons == ["needs 720 cpu-minutes (4 CPUs for 180 min), account proj's "
                         "association's GrpTRESMins cpu=100000 has 500 left (99500 used): "
                         "Slurm holds it (AssocGrpCPUMinutesLimit) until usage decays, or for "
                         "good if it does not"]


def test_a_job_within_what_the_account_has_left_runs_and_hears_nothing_of_it():
    site = orion(assoc=CHAIN, share=shares({("proj", "alice"): 12000, ("proj", ""): 99500}))
    v, said = explain("#SBATCH -p batch -c 4 -t 1:00:00", site)
    assert v.verdict == "READY", said
    assert v.not_checked == [] and not has_note(v, "GrpTRESMins"), v.notes


def test_a_job_asking_no_time_limit_in_long_is_held_at_its_max_time_of_cpu_minutes():
    site = orion(assoc=CHAIN, share=shares({("proj", "alice"): 12000, ("proj", ""): 50000}))
    v, said = explain("#SBATCH -p long -c 4", site)
    assert v.verdict == "RESTRICTED", said
    assert v.reasons == ["needs 40320 cpu-minutes (4 CPUs for 10080 min, partition long's "
                         "MaxTime: it asks no time limit), your association (user alice, "
                         "account proj)'s GrpTRESMins cpu=20000 has 8000 left (12000 used): "
                         "Slurm holds it (AssocGrpCPUMinutesLimit) until usage decays, or for "
                         "good if it does not"]


def test_a_job_asking_no_time_limit_in_batch_is_counted_at_its_default_time_and_runs():
    # batch's DefaultTime 1 h: 240 cpu-minutes, within the 8000 left
    site = orion(assoc=CHAIN, share=shares({("proj", "alice"): 12000, ("proj", ""): 50000}))
    v, said = explain("#SBATCH -p batch -c 4", site)
    assert v.verdict == "READY" and v.partition == "batch", said


def test_without_shares_each_account_limit_is_said_not_checked_once():
    v, said = explain("#SBATCH -p batch -c 4 -t 1:00:00", orion(assoc=CHAIN))
    assert v.verdict == "READY", said
    for whose, cap in (("your association (user alice, account proj)", 20000),
                       ("account proj's association", 100000)):
        assert v.not_checked.count(f"slurmrestd v0.0.41 does not report what {whose} has "
                                   f"used of its GrpTRESMins cpu={cap}: the job is checked "
                                   "against the whole limit only") == 1, v.not_checked
    assert len(v.not_checked) == 2, v.not_checked


def test_an_accounts_running_minutes_counted_from_the_queue_make_the_job_wait():
    # alice's 16 CPUs have 120 min left (1920 cpu-minutes); 960 more fit under 2500 once
    # 380 of them have run: 23 min 45 s on
    site = orion(assoc=[association("proj", "alice", run_mins={"cpu": 2500}),
                        association("proj", "", "root")],
                 jobs=(job(400, user="alice", cpus=16, start_h=-1, limit_min=180),))
    v, said = explain("#SBATCH -p batch -c 8 -t 2:00:00", site)
    assert v.verdict == "BUSY", said
    assert abs((v.raw_start - NOW).total_seconds() - 1425) < 2, said
    assert v.waits_for == ["your association (user alice, account proj)'s GrpTRESRunMins "
                           "cpu=2500: its running jobs have 1920 cpu-minutes still to run, the "
                           "job asks 960: it waits as they run down (AssocGrpCPURunMinutesLimit)"]


def test_an_accounts_submit_limit_nearly_reached_refuses_an_array_but_takes_a_smaller_one():
    queue = tuple(job(500 + i, user="carol", state="PENDING", reason="Priority", cpus=1)
                  for i in range(48))
    site = orion(assoc=[association("proj", "alice"),
                        association("proj", "", "root", grp_submit=50)], jobs=queue)
    v, said = explain("#SBATCH -p batch -c 1 -t 1:00:00 --array=0-3%2", site)
    assert v.verdict == "RESTRICTED", said
    assert v.reasons == ["account proj's association's GrpSubmitJobs is 50 and 48 of its jobs "
                         "are queued or running: the job array's 4 tasks count as 4 jobs: the "
                         "submit is refused until 2 of them end (AssocGrpSubmitJobsLimit)"]
    v, said = explain("#SBATCH -p batch -c 1 -t 1:00:00 --array=0-1", site)
    assert v.verdict == "READY", said


# -- reservations and drained nodes over slurmrestd -----------------------------------------

MAINT = [{"name": "maint", "start_time": _n(T0 + 2 * 3600), "end_time": _n(T0 + 6 * 3600),
          "node_list": "n[01-04]", "users": "root", "accounts": "", "groups": "",
          "flags": ["MAINT", "SPEC_NODES"]}]


def test_a_job_that_ends_before_the_maintenance_starts_now():
    v, said = explain("#SBATCH -p batch -c 4 -t 1:00:00", orion(reservations=MAINT))
    assert v.verdict == "READY" and v.raw_start == NOW, said


def test_a_job_that_would_run_into_the_maintenance_waits_until_it_ends():
    v, said = explain("#SBATCH -p batch -c 4 -t 3:00:00", orion(reservations=MAINT))
    assert v.verdict == "BUSY" and v.raw_start == NOW + timedelta(hours=6), said
    assert has_note(v, "reservation maint (MAINT,SPEC_NODES) takes n[01-04] from 2026-03-01 "
                       "11:00 to 2026-03-01 15:00: the job, of a time limit of 3:00:00, would "
                       "run into it, so Slurm starts it there only after it ends"), v.notes


COURSE = [{"name": "course", "start_time": _n(T0 - 3600), "end_time": _n(T0 + 5 * 3600),
           "node_list": "n[01-02]", "users": "alice", "accounts": "", "groups": "",
           "flags": ["SPEC_NODES"]}]
HALF_BUSY = [node("n01"), node("n02"), node("n03", ("ALLOCATED",), 32),
             node("n04", ("ALLOCATED",), 32)]
HALF_JOBS = (job(601, on="n03", limit_min=240), job(602, on="n04", limit_min=240))


def test_a_job_naming_its_reservation_starts_on_its_free_nodes_now():
    site = orion(reservations=COURSE, nodes=HALF_BUSY, jobs=HALF_JOBS)
    v, said = explain("#SBATCH -p batch -N 2 -c 32 -t 1:00:00 --reservation=course", site)
    assert v.verdict == "READY" and v.raw_start == NOW, said
    assert has_note(v, "reservation course ends at 2026-03-01 14:00: the job must start by "
                       "+4:00:00"), v.notes


def test_the_same_job_not_naming_it_waits_for_the_nodes_outside_it():
    site = orion(reservations=COURSE, nodes=HALF_BUSY, jobs=HALF_JOBS)
    v, said = explain("#SBATCH -p batch -N 2 -c 32 -t 1:00:00", site)
    assert v.verdict == "BUSY" and v.raw_start == NOW + timedelta(hours=3), said


DRAINED = [node("n01"), node("n02"), node("n03", ("IDLE", "DRAIN")),
           node("n04", ("DOWN", "DRAIN"))]


def test_more_nodes_than_are_left_undrained_never_fit():
    v, said = explain("#SBATCH -p batch -N 3 -c 32 -t 1:00:00", orion(nodes=DRAINED))
    assert not v.feasible, said
    assert v.reasons == ["needs 3 nodes, partition batch has only 2 usable (others drained "
                         "n03; down n04)"]


def test_a_job_fitting_the_undrained_nodes_starts_now():
    v, said = explain("#SBATCH -p batch -N 2 -c 32 -t 1:00:00", orion(nodes=DRAINED))
    assert v.verdict == "READY" and v.raw_start == NOW, said


def test_a_draining_node_with_free_cpus_takes_no_job_it_waits_for_a_busy_one():
    # n01 drains with 16 CPUs free, n03 and n04 drained idle: the job waits for n02's job
    # (to 13:00), not for n01's (to 10:00: a draining node takes nothing new)
    site = orion(nodes=[node("n01", ("MIXED", "DRAIN"), 16), node("n02", ("ALLOCATED",), 32),
                        node("n03", ("IDLE", "DRAIN")), node("n04", ("IDLE", "DRAIN"))],
                 jobs=(job(701, on="n01", cpus=16, limit_min=120),
                       job(702, on="n02", cpus=32, limit_min=300)))
    v, said = explain("#SBATCH -p batch -c 8 -t 1:00:00", site)
    assert v.verdict == "BUSY" and v.raw_start == NOW + timedelta(hours=4), said


def test_a_draining_partition_refuses_a_job_naming_it_and_another_takes_one_naming_none():
    parts = [partition("batch", 24 * 60, 60, default=True, state="DRAIN"),
             partition("long", 7 * 24 * 60), partition("debug", 30, 10)]
    v, said = explain("#SBATCH -p batch -c 4 -t 1:00:00", orion(partitions=parts))
    assert not v.feasible and v.reasons == ["partition 'batch' is DRAIN"], said
    v, said = explain("#SBATCH -c 4 -t 1:00:00", orion(partitions=parts))
    assert v.verdict == "READY" and v.partition == "long", said
    assert "partition 'batch' is DRAIN" in v.notes


# -- the shares reply as the dialect reads it -----------------------------------------------

def test_the_shares_reply_reads_as_sshare_prints_it_in_tres_minutes():
    got = slurm_rest.parse_shares(json.dumps(shares({("proj", "alice"): 61000,
                                                     ("proj", ""): 91500},
                                                    {("proj", "alice"): 3840})))
    assert got == {("proj", "alice"): ({"cpu": 61000}, {"cpu": 3840}),
                   ("proj", ""): ({"cpu": 91500}, {"cpu": 0})}


def test_a_shares_reply_of_errors_leaves_the_use_not_known_and_says_why():
    bad = {"errors": [{"error": "Access/permission denied", "error_number": 1}],
           "shares": {"shares": []}}
    cfg, snap = orion(assoc=CHAIN, share=bad)
    assert any("shares not read" in w and "GrpTRESMins is not known" in w
               for w in snap.warnings), snap.warnings
    assert not any(a.tres_mins_used_known for a in snap.associations or [])


def test_shares_refused_say_once_that_the_use_could_not_be_read_and_why():
    bad = {"errors": [{"error": "Access/permission denied", "error_number": 1}],
           "shares": {"shares": []}}
    cfg, snap = orion(assoc=CHAIN, share=bad)
    why = "slurmrestd: shares: Access/permission denied (1)"
    assert any(f"shares not read ({why})" in w for w in snap.warnings), snap.warnings
    v, said = explain("#SBATCH -c 4 -t 1:00:00", (cfg, snap))  # batch and long: once
    line = ("what your association (user alice, account proj) and account proj's "
            "association have used of their GrpTRESMins (cpu=20000; cpu=100000) could not be "
            f"read ({why}): the job is checked against each whole limit only")
    assert v.verdict == "READY" and v.not_checked == [line], v.not_checked
    assert said.count(line) == 1 and "does not report" not in said, said


def test_a_shares_call_that_failed_gives_its_reason_and_a_qos_still_is_not_reported():
    why = "orion: GET shares: HTTP 502 Bad Gateway"
    site = orion(assoc=CHAIN[:1], share_failed=why,
                 qos=[qos_entry(grp_mins={"cpu": 50000}), qos_entry("long")])
    v, said = explain("#SBATCH -p batch -c 4 -t 1:00:00", site)
    assert v.not_checked == [
        "slurmrestd v0.0.41 does not report what QOS normal has used of its GrpTRESMins "
        "cpu=50000: the job is checked against the whole limit only",
        "what your association (user alice, account proj) has used of its GrpTRESMins "
        f"cpu=20000 could not be read ({why}): the job is checked against the whole limit "
        "only"], said


def test_an_association_the_shares_reply_leaves_out_is_said_not_in_it():
    site = orion(assoc=CHAIN, share=shares({("proj", ""): 50000}))
    v, said = explain("#SBATCH -p batch -c 4 -t 1:00:00", site)
    assert v.verdict == "READY" and v.not_checked == [
        "what your association (user alice, account proj) has used of its GrpTRESMins "
        "cpu=20000 could not be read (not in slurmrestd's shares reply): the job is checked "
        "against the whole limit only"], said


def test_without_shares_a_job_past_the_whole_account_limit_is_still_held():
    # 32 CPUs for 12 h: 23040 cpu-minutes, past alice's whole GrpTRESMins cpu=20000,
    # whatever she has used
    v, said = explain("#SBATCH -p batch -c 32 -t 12:00:00", orion(assoc=CHAIN))
    assert v.verdict == "RESTRICTED", said
    assert v.reasons == ["needs 23040 cpu-minutes (32 CPUs for 720 min), more than your "
                         "association (user alice, account proj)'s whole GrpTRESMins "
                         "cpu=20000: Slurm holds it (AssocGrpCPUMinutesLimit) for good"]
