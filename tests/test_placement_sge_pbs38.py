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
    # (s2 reports lx-arm64: a host the request matches, which the limit still refuses)
    v = run(smp(2, "#$ -l arch=sol-*|lx-arm64"), site(arch, arches={"s2": "lx-arm64"})
            ).verdict("delta")
    assert v.verdict == "RESTRICTED" and v.reasons == [
        "resource quota set q rule 1 (users {*} to arch=lx-amd64): the job asks "
        "arch=sol-*|lx-arm64, which the limit arch=lx-amd64 does not admit: Grid Engine "
        "never starts it under this rule"], v.reasons
    # an expression of & or ! is read as Grid Engine reads it: !ber admits muc, ber
    # (any of them) does not; before, it was said not checked
    v = run(smp(2, "#$ -l site=!ber"), site(rqs("users {*} to site=muc"))).verdict("delta")
    assert (v.verdict, v.not_checked) == ("READY", []), (v.reasons, v.not_checked)
    v = run(smp(2, "#$ -l site=!ber&!m*"), site(rqs("users {*} to site=muc"))).verdict("delta")
    assert v.verdict == "RESTRICTED" and v.reasons == [
        "resource quota set q rule 1 (users {*} to site=muc): the job asks site=!ber&!m*, "
        "which the limit site=muc does not admit: Grid Engine never starts it under this "
        "rule"], v.reasons


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


# ---- Grid Engine: complexes named by their shortcuts -------------------------------------------

# `qconf -sc` where h_vmem's shortcut is mem, arch's a, slots' s and lic's l; ssd is FORCED
NAMED = """#name     shortcut   type     relop requestable consumable default  urgency
#------------------------------------------------------------------------
arch                a          RESTRING    ==    YES         NO         NONE     0
h_vmem              mem        MEMORY      <=    YES         YES        0        0
mem_free            mf         MEMORY      <=    YES         NO         0        0
lic                 l          INT         <=    YES         JOB        0        0
slots               s          INT         <=    YES         YES        1        1000
ssd                 fast       BOOL        ==    FORCED      NO         0        0
"""


def test_qconf_sc_is_read_with_every_complexs_shortcut_and_requestable_column():
    from diamond_jupyter.placement_sge_names import full_names, with_full_names

    _, snap = site("", complexes=NAMED, queue_conf={"all.q": "complex_values fast=TRUE\n"},
                   host_values={"s1": "<resourcevalue name='ssd' dominance='hf'>1.000000"
                                      "</resourcevalue><resourcevalue name='load_avg' "
                                      "dominance='hl'>0.5</resourcevalue>"})
    table = snap.sge_complex_names or {}
    assert (table["ssd"].shortcut, table["ssd"].requestable) == ("fast", "FORCED")
    assert (table["arch"].shortcut, table["arch"].requestable) == ("a", "YES")
    assert full_names(snap)["mem"] == "h_vmem" and full_names(snap)["h_vmem"] == "h_vmem"
    # a queue's complex_values by shortcut: its complex; a host's fixed values, not its load
    [q] = snap.partitions
    assert q.instance_complexes == {"s1": ["ssd"], "s2": ["ssd"]}
    assert [n.complex_values for n in snap.nodes] == [["ssd"], None]
    # the job's -l by shortcut: its memory, architecture; the others by their full names
    spec = Federation.parse("#!/bin/bash\n#$ -pe smp 2\n#$ -l mem=8G,a=lx-arm64\n"
                            "#$ -l l=1,fast\n./a\n")
    named = with_full_names(spec, snap)
    assert (named.resources.memory_per_cpu_mb, named.constraints.architecture) == (
        8192, "aarch64")
    assert [(d.option, d.value) for d in named.unknown] == [("-l lic", "lic=1"),
                                                            ("-l ssd", "ssd")]
    assert spec.resources.memory_per_cpu_mb is None  # the parsed job is left as it was


def test_a_job_asking_a_complex_by_shortcut_is_held_to_a_quota_naming_it_in_full():
    # -l a=lx-amd64 against arch=lx-arm64, -l mf=2G against mem_free=1G. Before: neither
    # bound (the job's `a` and `mf` matched no limit), READY
    v = run(smp(2, "#$ -l a=lx-amd64"), site(rqs("users {*} to arch=lx-arm64"),
                                             complexes=NAMED)).verdict("delta")
    assert v.verdict == "RESTRICTED" and v.reasons == [
        "resource quota set q rule 1 (users {*} to arch=lx-arm64): the job asks "
        "arch=lx-amd64, which the limit arch=lx-arm64 does not admit: Grid Engine never "
        "starts it under this rule"], v.reasons
    v = run(smp(2, "#$ -l mf=2G"), site(rqs("users {*} to mem_free=1G"),
                                        complexes=NAMED)).verdict("delta")
    assert v.verdict == "RESTRICTED" and v.reasons == [
        "resource quota set q rule 1 (users {*} to mem_free=1G): the job asks mem_free=2G, "
        "above its limit of 1G"], v.reasons


def test_a_quota_naming_a_complex_by_shortcut_binds_the_job_asking_it_in_full():
    # s=2 is slots, mem=16G h_vmem (4 x 8G = 32G), l=1 lic. Before: each said nothing
    for limit, extra, said in (
            ("s=2", "", "the job's 4 slots are above its limit of 2"),
            ("mem=16G", "#$ -l h_vmem=8G", "the job's 32G of h_vmem is above its limit of 16G"),
            ("l=1", "#$ -l lic=2", "the job's 2 of lic is above its limit of 1")):
        v = run(smp(4, extra), site(rqs(f"users {{*}} to {limit}"), complexes=NAMED)
                ).verdict("delta")
        assert v.verdict == "RESTRICTED" and v.reasons == [
            f"resource quota set q rule 1 (users {{*}} to {limit}): {said}"], (limit, v.reasons)
    # by shortcut on both sides: mem=64G admits 4 x 8G asked as -l mem=8G
    v = run(smp(4, "#$ -l mem=8G"), site(rqs("users {*} to mem=64G"), complexes=NAMED)
            ).verdict("delta")
    assert (v.verdict, v.reasons, v.not_checked) == ("READY", [], []), v.reasons


# ---- Grid Engine: FORCED complexes -------------------------------------------------------------

FORCED_SAID = ("queue all.q: its instances on s1, s2 set complex ssd (fast) in complex_values, "
               "requestable FORCED in qconf -sc: Grid Engine starts there only a job that "
               "requests it, which this job does not (ask -l ssd=VALUE)")


def test_a_queue_whose_complex_values_set_a_forced_complex_takes_only_jobs_asking_it():
    at = site("", complexes=NAMED, queue_conf={"all.q": "complex_values ssd=TRUE\n"})
    v = run(smp(2), at).verdict("delta")
    # Before: READY
    assert (v.verdict, v.reasons) == ("INCOMPATIBLE", [FORCED_SAID]), (v.verdict, v.reasons)
    # asked by name or by shortcut: it runs there
    for extra in ("#$ -l ssd=true", "#$ -l fast"):
        v = run(smp(2, extra), at).verdict("delta")
        assert (v.verdict, v.reasons) == ("READY", []), (extra, v.reasons)


def test_a_host_whose_complex_values_set_a_forced_complex_is_passed_over():
    # s1's own complex_values set ssd (qhost -F hf:ssd): the job waits for bob's job on s2
    # (all its 16 slots until +2 h), said so. Before: READY now on s1
    ssd = "<resourcevalue name='ssd' dominance='hf'>1.000000</resourcevalue>"
    bobs = {"all.q@s2": [entry("1", "bob", 16, 2)]}
    v = run(smp(2), site("", bobs, complexes=NAMED, host_values={"s1": ssd})).verdict("delta")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2)), (v.reasons, v.notes)
    assert ("queue all.q: passed over: its instance on s1 sets complex ssd (fast) in "
            "complex_values, requestable FORCED in qconf -sc: Grid Engine starts there only a "
            "job that requests it, which this job does not (ask -l ssd=VALUE)") in v.notes, \
        v.notes
    # on both: refused, naming it
    v = run(smp(2), site("", complexes=NAMED, host_values={"s1": ssd, "s2": ssd})
            ).verdict("delta")
    assert (v.verdict, v.reasons) == ("INCOMPATIBLE", [FORCED_SAID]), v.reasons


# ---- PBS: a job of a running reservation -------------------------------------------------------

pbs = PbsCommands(tz=timezone.utc)


def _running_resv(resv_jobs: dict[str, tuple[int, float, str | None]], end: int = 12,
                  queued: dict[str, tuple[int, str, str]] | None = None):
    """A PBS Pro site of two 64-CPU hosts: n001 taken whole by bob's workq job, n002 holding
    reservation R123 (32 CPUs, RESV_RUNNING from 08:00 to `end`:00; NOW is 09:00) for alice.
    `resv_jobs`: the reservation queue's running jobs on n002, id -> (CPUs, hours since they
    started, walltime or None); `queued`: its waiting ones, id -> (CPUs, walltime, job_state),
    submitted in that order before NOW."""
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
    for k, (jid, (cpus, wall, state)) in enumerate((queued or {}).items()):
        jobs[jid] = {"Job_Name": "q", "Job_Owner": "alice@login1", "job_state": state,
                     "queue": "R123", "qtime": (NOW - timedelta(minutes=30 - k)).strftime(
                         "%a %b %d %H:%M:%S %Y"),
                     "Resource_List": {"ncpus": cpus, "nodect": 1, "walltime": wall}}
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


# ---- PBS: jobs queued in a running reservation before the new one -----------------------------

def test_a_job_queued_before_it_takes_the_room_first_and_the_job_waits_for_its_end():
    # qstat's waiting jobs of R123: their CPUs, walltime, state (Q waiting, H held) and
    # submission (qtime), the order PBS takes them in
    _, snap = _running_resv(EIGHT, 16, {"9.pbs01": (16, "1:00:00", "Q"),
                                        "10.pbs01": (8, "1:00:00", "H")})
    nine, ten = sorted((j for j in snap.jobs if j.state == JobState.PENDING),
                       key=lambda j: j.submitted_at or NOW)
    assert (nine.native_id, nine.partition, nine.cpus, nine.walltime_s, nine.native_state,
            nine.submitted_at) == ("9.pbs01", "R123", 16, H, "Q", NOW - timedelta(minutes=30))
    assert (ten.native_id, ten.native_state) == ("10.pbs01", "H")
    # job 8 ends at 11:30; job 9 (16 CPUs, 1 h), queued before, starts then and holds 16 of
    # the 32 CPUs until 12:30: 24 CPUs fit only then. Before: BUSY until 11:30
    v = run(_job(24, "1:00:00"), _running_resv(EIGHT, 16, {"9.pbs01": (16, "1:00:00", "Q")})
            ).verdict("pro")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(3.5)), (v.reasons, v.notes)
    assert any(f"{USES}; queued there before it, PBS starts first job 9.pbs01 (16 CPUs, at "
               "2026-03-01 11:30); the job's 24 CPUs fit once job 9.pbs01 ends at "
               "2026-03-01 12:30" in n for n in v.notes), v.notes
    # the reservation ends at 13:00: from 12:30 its 1 h would run past the end. Before:
    # BUSY until 12:30 (the room read from 11:30, where it would end in time)
    v = run(_job(24, "1:00:00"), _running_resv(EIGHT, 13, {"9.pbs01": (16, "1:00:00", "Q")})
            ).verdict("pro")
    assert v.verdict == "RESTRICTED" and v.reasons == [
        f"{USES}; queued there before it, PBS starts first job 9.pbs01 (16 CPUs, at "
        "2026-03-01 11:30); the job's 24 CPUs fit once job 9.pbs01 ends at 2026-03-01 12:30, "
        "but walltime 1:00:00 would then run past its end at 2026-03-01 13:00: PBS ends a "
        "reservation's jobs when it ends; ask at most 0:30:00"], v.reasons
    # a held job (H) is not ahead of it: 11:30 as without it
    v = run(_job(24, "1:00:00"), _running_resv(EIGHT, 16, {"9.pbs01": (16, "1:00:00", "H")})
            ).verdict("pro")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2.5)), (v.reasons, v.notes)


def test_a_job_that_fits_now_but_would_take_the_room_of_one_queued_before_it_waits():
    # 8 CPUs are free now, but job 9 (32 CPUs) starts at 11:30, before the job's 3 h end:
    # it starts after job 9, at 12:30. Before: READY now, "fit beside them"
    queued = {"9.pbs01": (32, "1:00:00", "Q")}
    v = run(_job(8, "3:00:00"), _running_resv(EIGHT, 16, queued)).verdict("pro")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(3.5)), (v.reasons, v.notes)
    # of 2 h 30 min it ends as job 9 starts: it fits now beside them, said so
    v = run(_job(8, "2:30:00"), _running_resv(EIGHT, 16, queued)).verdict("pro")
    assert (v.verdict, v.estimated_start) == ("READY", NOW), (v.reasons, v.notes)
    assert any("PBS starts first job 9.pbs01 (32 CPUs, at 2026-03-01 11:30); the job's 8 "
               "CPUs fit beside them" in n for n in v.notes), v.notes
    # a queued job larger than the reservation never starts in it: not ahead of the job
    v = run(_job(8, "3:00:00"), _running_resv(EIGHT, 16, {"9.pbs01": (48, "1:00:00", "Q")})
            ).verdict("pro")
    assert (v.verdict, v.estimated_start) == ("READY", NOW), (v.reasons, v.notes)


# ---- Grid Engine: string and boolean values a host or queue sets in complex_values -------------

# ssd a BOOL any job may ask, site a CSTRING (matched in any case)
VALUED = NAMED.replace("FORCED", "YES   ") + (
    "site                st         CSTRING     ==    YES         NO         NONE     0\n")
NO_SSD = "<resourcevalue name='ssd' dominance='hf'>0.000000</resourcevalue>"


def test_complex_values_strings_and_booleans_are_read_for_queue_instances_and_hosts():
    _, snap = site("", complexes=VALUED, queue_conf={
        "all.q": "complex_values st=BER,fast=TRUE,[s2=st=muc,lic=4]\n"},
        host_values={"s1": NO_SSD + "<resourcevalue name='load_avg' dominance='hl'>0.5"
                                    "</resourcevalue>"})
    q = snap.partitions[0]
    # by full name, a host's own [s2=...] over the default
    assert q.instance_complex_values == {"s1": {"site": "BER", "ssd": "TRUE"},
                                         "s2": {"site": "muc", "lic": "4"}}
    s1 = next(n for n in snap.nodes if n.name == "s1")
    assert s1.complex_texts == {"ssd": "0.000000"}  # a load value (hl) is none of them
    assert (snap.sge_complex_names or {})["site"].type == "CSTRING"


def test_a_queue_whose_value_the_jobs_request_does_not_match_is_refused_naming_it():
    at = site("", complexes=VALUED, queue_conf={"all.q": "complex_values fast=FALSE\n"})
    v = run(smp(2, "#$ -l ssd=true"), at).verdict("delta")
    # Before: READY (only quota limits were compared)
    assert (v.verdict, v.reasons) == ("INCOMPATIBLE", [
        "queue all.q: its instances on s1, s2 set ssd=FALSE in the queue's complex_values, "
        "which the job's -l ssd=true does not match: Grid Engine starts there only a job "
        "whose request matches the value set"]), (v.verdict, v.reasons)
    # asking FALSE, or not asking it: it runs there
    for extra in ("#$ -l fast=false", ""):
        v = run(smp(2, extra), at).verdict("delta")
        assert (v.verdict, v.reasons) == ("READY", []), (extra, v.reasons)


def test_a_string_value_is_matched_with_the_requests_wildcards_alternatives_and_case():
    at = site("", complexes=VALUED, queue_conf={"all.q": "complex_values site=ber,"
                                                         "[s2=site=muc]\n"})
    # ber* matches s1's ber only: the job waits for nothing, s2 passed over and said so
    v = run(smp(2, "#$ -l site=BER*"), at).verdict("delta")
    assert v.verdict == "READY", (v.reasons, v.notes)
    assert ("queue all.q: passed over: its instance on s2 sets site=muc in the queue's "
            "complex_values, which the job's -l site=BER* does not match: Grid Engine starts "
            "there only a job whose request matches the value set") in v.notes, v.notes
    for asked in ("muc|ber", "*"):
        v = run(smp(2, f"#$ -l site={asked}"), at).verdict("delta")
        assert (v.verdict, v.notes) == ("READY", []), (asked, v.notes)
    v = run(smp(2, "#$ -l st=ham|fra"), at).verdict("delta")
    assert v.verdict == "INCOMPATIBLE" and "-l site=ham|fra" in v.reasons[0], v.reasons
    # an expression of ! is not compared: the job is not refused for it
    assert run(smp(2, "#$ -l site=!ber"), at).verdict("delta").verdict == "READY"


def test_a_host_whose_boolean_value_the_job_does_not_match_is_passed_over():
    # s1's complex_values set ssd=FALSE (qhost -F hf:ssd=0): the job asking SSD waits for
    # bob's job on s2 (all 16 slots until +2 h). Before: READY now on s1
    bobs = {"all.q@s2": [entry("1", "bob", 16, 2)]}
    v = run(smp(2, "#$ -l ssd"), site("", bobs, complexes=VALUED,
                                      host_values={"s1": NO_SSD})).verdict("delta")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2)), (v.reasons, v.notes)
    assert ("queue all.q: passed over: host s1 sets ssd=0.000000 in its complex_values, "
            "which the job's -l ssd=true does not match: Grid Engine starts there only a job "
            "whose request matches the value set") in v.notes, v.notes
    # a job not asking it, or asking FALSE, runs on s1 now
    for extra in ("", "#$ -l ssd=false"):
        v = run(smp(2, extra), site("", bobs, complexes=VALUED, host_values={"s1": NO_SSD})
                ).verdict("delta")
        assert (v.verdict, v.estimated_start) == ("READY", NOW), (extra, v.notes)
