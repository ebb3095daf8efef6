"""Grid Engine quota limits of string and boolean complexes and of jobs with no project,
and a job of a running PBS Pro reservation, as placement reads them from outputs of the
real formats (`qconf -srqs`, `qconf -sc`, `qstat -f -xml -r`; `pbs_rstat -f`, `qstat -f -F
json`).

sge_resource_quota(5): a limit is a complex and a value of its type; Grid Engine holds a
job's request of a string or boolean complex to it as to a queue's (a job not asking it is
not bound); `projects *` is every job of a project, `!*` the jobs of none, and a job of no
project matches a filter that only excludes (`!p1`). PBS: `pbs_rstat -f` gives what a
running reservation holds, its queue's running jobs what they use of it; a job of the
reservation starts once there is room, inside its window. Before, the string and boolean
limits were said not counted (not a number), a job of no project matched no project filter,
and a running reservation's own jobs were not weighed against its end."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

from test_placement_cases import NOW, run
from test_placement_ge_rqs_resources import COMPLEXES, entry, rqs, site, smp
from test_placement_pbs_resv_ge_rqs import RSTAT, ok

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.dialects.pbs_commands import PbsCommands
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import JobState
from diamond_jupyter.placement_pbs_resv import pbs_reservations

H = 3600


def hours(h: float) -> datetime:
    return NOW + timedelta(hours=h)


# ---- Grid Engine: the job's requests of string and boolean complexes -------------------------

def test_the_jobs_string_and_boolean_requests_are_read_as_its_script_asks_them():
    from diamond_jupyter.placement_sge_limits import job_texts

    spec = Federation.parse("#!/bin/bash\n#$ -l arch=lx-amd64\n#$ -l ssd\n"
                            "#$ -l site=ber*|muc\n#$ -l scratch=10G\n#$ -l excl=true\n./a\n")
    # arch as the rendered script asks it, a BOOL asked bare as TRUE, the exclusive complex
    # by the name it was asked by; a number (scratch) is no text
    assert job_texts(spec) == {"arch": "lx-amd64", "ssd": "true", "site": "ber*|muc",
                               "excl": "true"}
    assert job_texts(Federation.parse("#!/bin/bash\n#$ -pe smp 2\n./a\n")) == {}


SSD = rqs("users {*} queues all.q to ssd=false")  # all.q's jobs may not ask SSD hosts


def test_a_boolean_limit_refuses_a_job_asking_otherwise_and_binds_none_that_does_not_ask():
    v = run(smp(2, "#$ -l ssd=true"), site(SSD)).verdict("delta")
    assert v.verdict == "RESTRICTED", (v.reasons, v.not_checked)
    assert v.reasons == ["resource quota set q rule 1 (users {*} queues all.q to ssd=false): "
                         "the job asks ssd=true, which the limit ssd=false does not admit: "
                         "Grid Engine never starts it under this rule"]
    # bare -l ssd asks TRUE: the same
    assert run(smp(2, "#$ -l ssd"), site(SSD)).verdict("delta").verdict == "RESTRICTED"
    # asking FALSE, or not asking it: bound by nothing, nothing left unchecked. Before: READY
    # with "ssd=false not counted here (not a number)"
    for extra in ("#$ -l ssd=false", ""):
        v = run(smp(2, extra), site(SSD)).verdict("delta")
        assert (v.verdict, v.reasons, v.not_checked) == ("READY", [], []), (extra, v.notes)


def test_a_string_limit_admits_the_requests_whose_pattern_matches_it():
    arch = rqs("users {*} to arch=lx-amd64")
    # lx-* matches lx-amd64; sol-*|lx-arm64 matches it in neither alternative
    v = run(smp(2, "#$ -l arch=lx-*"), site(arch)).verdict("delta")
    assert (v.verdict, v.not_checked) == ("READY", []), (v.reasons, v.not_checked)
    v = run(smp(2, "#$ -l arch=sol-*|lx-arm64"), site(arch)).verdict("delta")
    assert v.verdict == "RESTRICTED" and v.reasons == [
        "resource quota set q rule 1 (users {*} to arch=lx-amd64): the job asks "
        "arch=sol-*|lx-arm64, which the limit arch=lx-amd64 does not admit: Grid Engine "
        "never starts it under this rule"], v.reasons
    # an expression of & or ! is not read: said, naming the complex
    v = run(smp(2, "#$ -l site=!ber"), site(rqs("users {*} to site=muc"))).verdict("delta")
    assert v.verdict == "READY" and v.not_checked == [
        "resource quota set q rule 1 (users {*} to site=muc): site=muc not checked here (the "
        "job asks site=!ber, an expression not read here)"], v.not_checked


def test_a_boolean_limit_of_a_consumable_or_of_unread_complexes_is_said_not_checked():
    excl = COMPLEXES + "exclusive  excl  BOOL  EXCL  YES  YES  0  1000\n"
    v = run(smp(2, "#$ -l exclusive=true"), site(rqs("users {*} to exclusive=true"),
                                                complexes=excl)).verdict("delta")
    assert v.verdict == "READY" and v.not_checked == [
        "resource quota set q rule 1 (users {*} to exclusive=true): exclusive=true not checked "
        "here (a consumable of boolean value in qconf -sc, as an exclusive complex is: what "
        "the running jobs hold of it is not read)"], v.not_checked
    v = run(smp(2, "#$ -l ssd=true"), site(SSD, complexes="")).verdict("delta")
    assert v.verdict == "READY" and v.not_checked == [
        "resource quota set q rule 1 (users {*} queues all.q to ssd=false): ssd=false not "
        "checked here (the complexes, qconf -sc, not read: whether it is consumable is not "
        "known)"], v.not_checked


# ---- Grid Engine: a job of no project against a projects filter ------------------------------

def test_a_job_of_no_project_matches_a_rule_excluding_projects_not_one_naming_them():
    # `projects !p1`: every job but p1's, a job of no project included. Before: not bound
    v = run(smp(4), site(rqs("projects !p1 to slots=2"))).verdict("delta")
    assert v.verdict == "RESTRICTED" and v.reasons == [
        "resource quota set q rule 1 (projects !p1 to slots=2): the job's 4 slots are above "
        "its limit of 2"], v.reasons
    # p1's job is outside it
    v = run(smp(4, "#$ -P p1"), site(rqs("projects !p1 to slots=2"))).verdict("delta")
    assert (v.verdict, v.reasons) == ("READY", []), v.reasons
    # `projects {*}` / `projects *`: the jobs of a project, each apart or together; one of no
    # project falls through to the next rule (8 slots)
    for names in ("{*}", "*"):
        quota = rqs(f"projects {names} to slots=2", "users * to slots=8")
        v = run(smp(4), site(quota)).verdict("delta")
        assert (v.verdict, v.reasons) == ("READY", []), (names, v.reasons)
        v = run(smp(4, "#$ -P p2"), site(quota)).verdict("delta")
        assert v.verdict == "RESTRICTED", (names, v.reasons)
        assert "the job's 4 slots are above its limit of 2" in v.reasons[0]


def test_projects_not_star_counts_the_running_jobs_of_no_project():
    # bob's 6 slots of no project until +2 h and carol's 6 of p1: `projects !*` binds jobs of
    # no project together, to 8 slots: alice's 4 (no project) wait for bob's; p1's do not.
    # Before: neither bound nor counted, READY now
    quota = rqs("projects !* to slots=8")
    busy = {"all.q@s1": [entry("1", "bob", 6, 2)],
            "all.q@s2": [entry("2", "carol", 6, 3, project="p1")]}
    v = run(smp(4), site(quota, busy)).verdict("delta")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2)), (v.reasons, v.notes)
    assert ("queue all.q: resource quota set q rule 1 (projects !* to slots=8): its running "
            "jobs hold 6 of its 8 slots; the job's 4 fit once enough of them end") in v.notes
    v = run(smp(4, "#$ -P p1"), site(quota, busy)).verdict("delta")
    assert (v.verdict, v.estimated_start) == ("READY", NOW), (v.reasons, v.notes)


# ---- PBS: a job of a running reservation -------------------------------------------------------

pbs = PbsCommands(tz=timezone.utc)


def _running_resv(resv_jobs: dict[str, tuple[int, float, str | None]], end: int = 12):
    """A PBS Pro site of two 64-CPU hosts: n001 taken whole by bob's workq job, n002 holding
    reservation R123 (32 CPUs, RESV_RUNNING from 08:00 to `end`:00; NOW is 09:00) for alice.
    `resv_jobs`: the reservation queue's running jobs on n002, id -> (CPUs, hours since they
    started, walltime or None)."""
    jobs = {"7.pbs01": {
        "Job_Name": "big", "Job_Owner": "bob@login1", "job_state": "R", "queue": "workq",
        "exec_host": "n001/0*64", "stime": (NOW - timedelta(hours=1)).strftime(
            "%a %b %d %H:%M:%S %Y"),
        "Resource_List": {"ncpus": 64, "nodect": 1, "walltime": "9:00:00"}}}
    for jid, (cpus, ago, wall) in resv_jobs.items():
        jobs[jid] = {"Job_Name": "r", "Job_Owner": "alice@login1", "job_state": "R",
                     "queue": "R123", "exec_host": f"n002/0*{cpus}",
                     "exec_vnode": f"(n002:ncpus={cpus})",
                     "stime": (NOW - timedelta(hours=ago)).strftime("%a %b %d %H:%M:%S %Y"),
                     "Resource_List": {"ncpus": cpus, "nodect": 1,
                                       **({"walltime": wall} if wall else {})}}
    nodes = json.dumps({"nodes": {h: {"state": "free", "resources_available": {
        "host": h, "mem": "256gb", "ncpus": 64}, "resources_assigned": {"ncpus": 64 if h ==
                                                                          "n001" else 32}}
        for h in ("n001", "n002")}})
    queues = json.dumps({"Queue": {
        "workq": {"queue_type": "Execution", "enabled": "True", "started": "True"},
        "R123": {"queue_type": "Execution", "enabled": "True", "started": "True"}}})
    snap = pbs.parse_snapshot("pro", {
        "nodes": nodes, "queues": queues, "queue": json.dumps({"Jobs": jobs}),
        "server": json.dumps({"Server": {"pbs01": {"default_queue": "workq"}}}),
        "user": "alice\n", "group": "physics\n",
        "reservations": ok(RSTAT.format(state="RESV_RUNNING", users="alice", start="08",
                                        end=end))})
    return (SiteConfig(name="pro", scheduler="pbs", metadata={"architecture": "x86_64"}),
            snap.model_copy(update={"taken_at": NOW}))


def _job(cpus: int, wall: str) -> str:
    return f"#PBS -q R123\n#PBS -l select=1:ncpus={cpus}\n#PBS -l walltime={wall}"


# job 8 uses 24 of R123's 32 CPUs until 11:30 (started 08:30, 3 h)
EIGHT = {"8.pbs01": (24, 0.5, "3:00:00")}
USES = ("reservation R123 is running: its jobs (qstat, queue R123) use 24 of its 32 CPUs "
        "(pbs_rstat -f, resv_nodes)")


def test_a_job_that_fits_beside_the_reservations_jobs_starts_now_said_so():
    v = run(_job(8, "1:00:00"), _running_resv(EIGHT)).verdict("pro")
    assert (v.verdict, v.partition, v.estimated_start) == ("READY", "R123", NOW), v.reasons
    assert f"{USES}; the job's 8 CPUs fit beside them" in v.notes, v.notes


def test_a_job_waits_inside_the_reservation_for_one_of_its_jobs_to_end():
    cfg, snap = _running_resv(EIGHT)
    # what pbs_rstat -f holds for it, and its queue's running job as qstat reads it
    [r] = snap.pbs_reservations or []
    assert (r.state, r.nodes) == ("RESV_RUNNING", {"n002": {"ncpus": 32}})
    [j] = [j for j in snap.jobs if j.partition == "R123"]
    assert (j.state, j.node_list, j.cpus, j.started_at, j.walltime_s) == (
        JobState.RUNNING, "n002/0*24", 24, hours(-0.5), 3 * H)
    spec = Federation.parse(f"#!/bin/bash\n{_job(16, '0:30:00')}\n./a\n")
    view = pbs_reservations(spec, cfg, snap, NOW)
    assert view.refused == [] and view.wait is not None
    assert (view.wait.seconds, view.wait.why) == (
        2.5 * H, f"{USES}; the job's 16 CPUs fit once job 8.pbs01 ends at 2026-03-01 11:30")
    # inside it, n002 is what the reservation holds, its job's 24 CPUs (exec_host) taken
    n002 = next(n for n in view.snap.nodes if n.name == "n002")
    assert (n002.cpus, n002.cpus_allocated) == (32, 24)
    v = run(_job(16, "0:30:00"), (cfg, snap)).verdict("pro")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2.5)), v.reasons
    assert any(view.wait.why in n for n in v.notes), v.notes


def test_a_job_that_would_run_past_the_reservations_end_once_there_is_room_is_refused():
    # 16 CPUs fit at 11:30; 1 h from then passes 12:00. Before: BUSY at 11:30
    v = run(_job(16, "1:00:00"), _running_resv(EIGHT)).verdict("pro")
    assert v.verdict == "RESTRICTED" and v.reasons == [
        f"{USES}; the job's 16 CPUs fit once job 8.pbs01 ends at 2026-03-01 11:30, but "
        "walltime 1:00:00 would then run past its end at 2026-03-01 12:00: PBS ends a "
        "reservation's jobs when it ends; ask at most 0:30:00"], v.reasons


def test_a_reservation_whose_jobs_hold_it_to_its_end_refuses_a_job_needing_their_room():
    # job 8 has no walltime: it holds its 24 CPUs until the reservation ends
    v = run(_job(16, "0:30:00"), _running_resv({"8.pbs01": (24, 0.5, None)})).verdict("pro")
    assert v.verdict == "RESTRICTED" and v.reasons == [
        f"{USES}; none of them ends before its end at 2026-03-01 12:00 to leave room for "
        "the job's 16 CPUs: PBS ends a reservation's jobs when it ends"], v.reasons
