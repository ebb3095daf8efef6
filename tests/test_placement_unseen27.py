"""Placement cases, twenty-seventh sweep: more moments of real centers' logs (`trace_sites`),
a third log (LLNL's Thunder, whole nodes of four processors) and the limits a center
puts around them: QOS caps, held jobs, a user's own burst, maintenance, drained and
draining nodes, sites down or silent. Each case asserts the site chosen, the start, or
the refusal and its words, and its docstring works them out from the log's numbers.

The moments (seconds from each log's start; "ends" are by the time each job asked):
  T  Thunder at 5,184,000: 906 of 1002 nodes busy, nothing waiting (the log gives no wait
     times: each job starts when it is submitted); its jobs give no time limit, so each
     has the site's MaxTime, 24 h (this sweep's choice): 56046 (238 nodes) ends at
     +6:23:43, 56051 (256) +6:26:19, 56117 (4) +13:15:55, 56126 (384) +15:46:20.
  O  KTH SP2 at 4,055,850: nothing runs and 24 jobs wait (the machine was out: an
     outage in the log), the first 2624 (32 nodes, 33:20 h).
  H  HPC2N Seth at 69,120,000: 105 of 240 busy, 667 waiting while 135 are idle (Maui
     held them to users' limits): user 132's 482 one-CPU 5 h jobs (3 of theirs run, ending
     +3:56:22, +4:16:54, +4:16:54) and user 171's 147.
  B  HPC2N Seth at 98,899,200: 188 of 240 busy, 2486 waiting, 2414 of them one-CPU 81 h
     jobs user 171 submitted in the hour before.
  K  KTH SP2 at 2,289,600: 3 nodes idle, 70 waiting, 52 of them user 18's 5-minute jobs
     of 6-12 nodes; 1668 (6 nodes) ends at +0:04:48.
Beside them the moments A, S and F of the twenty-sixth sweep (KTH at 9,565,200: 37 idle
nodes; Seth at 6,361,200: 62 idle; KTH at 4,680,000: full)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from trace_sites import HPC2N, KTH, SETH, SP2, Machine, moment, trace_site

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import JobState, QosLimits, Reservation, SiteSnapshot
from diamond_jupyter.placement import Placement, SiteVerdict, place

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
THUNDER = "LLNL-Thunder-2007-1.1-cln.swf.gz"  # 1002 nodes of 4 processors (whole nodes)
THU = Machine("thu", 1002, 4, 1, 8000, 24 * 3600)
MOMENTS = {"T": (THUNDER, 5_184_000, THU), "O": (KTH, 4_055_850, SP2),
           "H": (HPC2N, 69_120_000, SETH), "B": (HPC2N, 98_899_200, SETH),
           "K": (KTH, 2_289_600, SP2), "A": (KTH, 9_565_200, SP2),
           "S": (HPC2N, 6_361_200, SETH), "F": (KTH, 4_680_000, SP2)}
EVERY_SP2_NODE = frozenset(f"sp{i:03d}" for i in range(1, 101))

Site = tuple[SiteConfig, SiteSnapshot]


def site(key: str, name: str | None = None, **more) -> Site:
    """Moment `key`'s site, named `name` (default `key`)."""
    log, at_s, machine = MOMENTS[key]
    return trace_site(name or key, log, at_s, machine, NOW, **more)


def changed(s: Site, **update) -> Site:
    return s[0], s[1].model_copy(update=update)


def placed(script: str, *sites: Site, **kw) -> Placement:
    """`#SBATCH` lines placed over `sites` at NOW."""
    return place(Federation.parse(f"#!/bin/bash\n{script}\n./app\n"), list(sites), now=NOW,
                 **kw)


def start(v: SiteVerdict | None) -> float:
    """v's predicted start, seconds after NOW."""
    assert v is not None and v.estimated_start is not None, v
    return (v.estimated_start - NOW).total_seconds()


def hms(h: int, m: int = 0, s: int = 0) -> float:
    return float(h * 3600 + m * 60 + s)


def maintenance(nodes: list[str], begins_h: float, ends_h: float) -> Reservation:
    return Reservation(name="upgrade", start=NOW + timedelta(hours=begins_h),
                       end=NOW + timedelta(hours=ends_h), nodes=nodes, users=["root"],
                       flags=["MAINT"], state="ACTIVE" if begins_h <= 0 else "INACTIVE")


def waiting_as(s: Site, reason: str, users: set[str] | None = None) -> Site:
    """`s` with its waiting jobs (of `users`, default all) given the pending `reason`."""
    return changed(s, jobs=[j.model_copy(update={"reason": reason})
                            if j.state == JobState.PENDING and (users is None or j.user in users)
                            else j for j in s[1].jobs])


# ---- the moments ----------------------------------------------------------------------------

def test_the_new_moments_hold_what_the_logs_show():
    """Busy nodes, waiting jobs and the first of them, as the logs have them."""
    for key, busy, waiting, first in (("T", 906, 0, None), ("O", 0, 24, ("2624", 32)),
                                      ("H", 105, 667, None), ("B", 188, 2486, None),
                                      ("K", 97, 70, ("1415", 16))):
        _, snap = site(key)
        assert sum(n.cpus_allocated > 0 for n in snap.nodes) == busy, key
        assert len(snap.pending) == waiting, key
        if first:
            assert (snap.pending[0].native_id, snap.pending[0].nodes) == first, key
    running, waiting = moment(THUNDER, 5_184_000)
    assert sorted(j.procs for j in running) == [16, 48, 48, 952, 1024, 1536] and not waiting
    _, waiting = moment(HPC2N, 98_899_200)
    assert sum(j.user == 171 and j.submit > 98_899_200 - 3600 for j in waiting) == 2414


# ---- Thunder: whole nodes of four ---------------------------------------------------------------

def test_six_hundred_thunder_nodes_wait_for_the_1536_processor_job():
    """96 idle; 56046's 238 at +6:23:43 and 56051's 256 at +6:26:19 make 590, 56117's 4 at
    +13:15:55 594: 600 nodes wait for 56126's 384 at +15:46:20. 590 start at +6:26:19, 97
    at +6:23:43, 96 now."""
    for nodes, at in ((600, hms(15, 46, 20)), (590, hms(6, 26, 19)), (97, hms(6, 23, 43)),
                      (96, 0.0)):
        assert start(placed(f"#SBATCH -N {nodes} -t 1:00:00", site("T")).verdict("T")) == at, \
            nodes


def test_sixty_four_tasks_take_sixteen_thunder_nodes_or_two_seth_nodes():
    """-n 64 starts now on both: 16 nodes of 4 CPUs on Thunder, 2 of 32 on Seth, which
    bills an eighth of the nodes and wins."""
    p = placed("#SBATCH -n 64 -t 1:00:00", site("T"), site("S"))
    assert p.choice == "S", p.explain()
    assert [start(p.verdict(s)) for s in ("S", "T")] == [0, 0]
    assert (p.verdict("S").billed_nodes, p.verdict("T").billed_nodes) == (2, 16)
    assert p.why_not("T") == "same finish within noise (+1:00:00 vs +1:00:00), costs more " \
        "(16.00 vs 2.00)"


def test_eight_tasks_a_node_never_fit_a_four_cpu_thunder_node():
    """--ntasks-per-node=8 asks 8 CPUs of each node: Thunder's have 4, Seth's 32."""
    p = placed("#SBATCH -N 16 --ntasks-per-node=8 -t 1:00:00", site("T"), site("S"))
    assert p.choice == "S" and start(p.verdict("S")) == 0, p.explain()
    assert p.verdict("T").reasons == ["needs 8 CPUs per node, largest node has 4"]
    assert "T    INCOMPATIBLE needs 8 CPUs per node, largest node has 4" in p.explain()


def test_nine_tasks_on_two_thunder_nodes_need_five_cpus_on_one():
    """-N 2 -n 8 fills two nodes of 4 and starts now; -n 9 puts 5 tasks on one of them."""
    assert start(placed("#SBATCH -N 2 -n 8 -t 1:00:00", site("T")).verdict("T")) == 0
    p = placed("#SBATCH -N 2 -n 9 -t 1:00:00", site("T"))
    assert p.choice is None
    assert p.verdict("T").reasons == ["needs 5 CPUs per node, largest node has 4"]


def test_more_memory_or_nodes_than_thunder_has():
    """A Thunder node has 8000 MB and there are 1002 of them: each refusal says what was
    asked and the most there is."""
    mem = placed("#SBATCH --mem=16G -t 1:00:00", site("T"))
    assert mem.verdict("T").reasons == [
        "needs 16384 MB memory per node, largest node has 8000 MB"]
    assert mem.needs == ["memory 16384 MB per node"]
    wide = placed("#SBATCH -N 1003 -t 1:00:00", site("T"))
    assert wide.verdict("T").reasons == ["needs 1003 nodes, largest partition has 1002"]
    assert wide.summary() == \
        "no site can run this job: T: needs 1003 nodes, largest partition has 1002"


def test_a_maintenance_ahead_lets_an_hour_in_and_holds_four_hours_until_it_ends():
    """Every Thunder node goes into maintenance from +2:00 to +8:00. 50 nodes for an hour
    end before it: now. For 4 h they would run into it: Slurm starts them at its end,
    +8:00:00 (before: 56046's nodes, its end at +6:23:43 inside the maintenance, counted
    free then, twice released, and the job started into the maintenance)."""
    held = changed(site("T"), reservations=[maintenance(["thu[001-999]", "thu[1000-1002]"],
                                                        2, 8)])
    assert start(placed("#SBATCH -N 50 -t 1:00:00", held).verdict("T")) == 0
    v = placed("#SBATCH -N 50 -t 4:00:00", held).verdict("T")
    assert (v.verdict, start(v)) == ("BUSY", hms(8)), v
    assert v.waits_for == [
        "reservation upgrade (MAINT) takes thu[001-999],thu[1000-1002] from 2026-03-02 11:00 "
        "to 2026-03-02 17:00: the job, of a time limit of 4:00:00, would run into it, so "
        "Slurm starts it there only after it ends"]


def test_a_running_job_inside_a_maintenance_frees_its_nodes_at_its_end_not_before():
    """A with every node in maintenance from +2:00 to +12:00: 7822's 8 nodes, its end at
    +5:21:12, stay in the maintenance; a 4 h job on one node starts at its end, +12:00:00,
    whether 7822 ends by its limit or has already passed it (before: at +5:21:12, or at
    +0:00:30 for a job past its limit)."""
    resv = [maintenance(["sp[001-100]"], 2, 12)]
    held = changed(site("A"), reservations=resv)
    assert start(placed("#SBATCH -N 1 -t 4:00:00", held).verdict("A")) == hms(12)
    overdue = [j.model_copy(update={"walltime_s": 60}) if j.native_id == "7822" else j
               for j in held[1].jobs]
    v = placed("#SBATCH -N 1 -t 4:00:00", changed(held, jobs=overdue)).verdict("A")
    assert start(v) == hms(12), v


# ---- an outage: every node out ----------------------------------------------------------------

def test_an_outage_with_every_node_down_refuses_and_names_the_nodes():
    """O with its 100 nodes down: 2 nodes can be had nowhere there; A starts them now."""
    p = placed("#SBATCH -N 2 -t 1:00:00", site("O", down=EVERY_SP2_NODE), site("A"))
    assert p.choice == "A" and start(p.verdict("A")) == 0, p.explain()
    why = "needs 2 nodes, partition batch has only 0 usable (others down sp[001-100])"
    assert p.verdict("O").reasons == [why] and p.why_not("O") == why


def test_two_sites_down_alike_share_one_explain_row():
    """O and a second copy of it, both out: one row names both, beside S's."""
    p = placed("#SBATCH -N 2 -t 1:00:00", site("O", down=EVERY_SP2_NODE),
               site("O", "P", down=EVERY_SP2_NODE), site("S"))
    assert p.choice == "S", p.explain()
    assert "2 sites INCOMPATIBLE needs 2 nodes, partition batch has only 0 usable (others " \
           "down sp[001-100]) (O, P)" in p.explain()


def test_an_outage_as_a_maintenance_names_its_nodes_as_a_hostlist():
    """O's outage as a maintenance on every node until +6:00: the 24 waiting jobs take the
    machine then (2624's 32, 2641's 9, then the jobs behind that fit beside 2821's 80-node
    slot, down to 2973's one); the first two nodes that none of them wants free when 2949
    (4 nodes) and 2950 (1), 8:20 h each, end: +14:20:00. The wait names the 100 nodes
    `sp[001-100]` (before: each of them, 100 names in a line)."""
    held = changed(site("O"), reservations=[maintenance(["sp[001-100]"], -1, 6)])
    p = placed("#SBATCH -N 2 -t 1:00:00", held, site("A"))
    assert p.choice == "A", p.explain()
    assert start(p.verdict("O")) == hms(14, 20)
    assert p.verdict("O").waits_for == [
        "reservation upgrade (MAINT) holds sp[001-100] in maintenance until 2026-03-02 15:00: "
        "it takes no job before then"]
    assert "  O waits: reservation upgrade (MAINT) holds sp[001-100] in maintenance" \
        in p.explain()


def test_a_partition_set_down_refuses_the_site():
    """A's only partition DOWN (scontrol update State=DOWN): nothing starts there."""
    cfg, snap = site("A")
    down = changed((cfg, snap), partitions=[q.model_copy(update={"state": "DOWN"})
                                            for q in snap.partitions])
    p = placed("#SBATCH -N 2 -t 1:00:00", down, site("S"))
    assert p.choice == "S", p.explain()
    assert p.verdict("A").reasons == ["partition 'batch' is DOWN"]


# ---- held jobs, bursts and a user's own queue -------------------------------------------------

@pytest.mark.parametrize("reason", ["JobHeldUser", "JobHeldAdmin"])
def test_held_jobs_leave_the_idle_nodes_to_a_new_job(reason):
    """H's 667 waiting jobs held (scontrol hold / an admin's): none of them starts by
    itself, so 8 nodes of the 135 idle start now. Read as waiting for priority, they
    would fill the machine for days."""
    v = placed("#SBATCH -N 8 -t 2:00:00", waiting_as(site("H"), reason)).verdict("H")
    assert (v.verdict, start(v)) == ("READY", 0)
    assert start(placed("#SBATCH -N 8 -t 2:00:00", site("H")).verdict("H")) > hms(72)


def test_a_users_own_older_jobs_under_a_per_user_limit_go_first():
    """H read as user 132 under QOS normal, MaxJobsPerUser=3: three of theirs run and 482
    more wait on that limit (the others' jobs held). A new job of theirs is the last of
    their line: 482 jobs of 5 h through 3 lanes free at +3:56:22, +4:16:54, +4:16:54,
    160 each, the two left on the first two; the third lane frees after its 160th,
    +4:16:54 + 800 h = +33-12:16:54 (before: at the first of the three ends, +3:56:22,
    ahead of all 482)."""
    cfg, snap = site("H", user="u132")
    jobs = [j.model_copy(update={"qos": "normal", "reason": (
        "QOSMaxJobsPerUserLimit" if j.user == "u132" else "JobHeldUser")
        if j.state == JobState.PENDING else j.reason}) for j in snap.jobs]
    limited = changed((cfg, snap), jobs=jobs,
                      qos={"normal": QosLimits(name="normal", max_jobs_per_user=3)})
    v = placed("#SBATCH -N 1 -q normal -t 1:00:00", limited).verdict("H")
    assert (v.verdict, start(v)) == ("BUSY", hms(33 * 24 + 12, 16, 54)), v
    assert v.waits_for == [
        "QOS normal's MaxJobsPerUser is 3 and 3 of your jobs run under it, 482 older jobs "
        "of yours waiting under it ahead: it starts when they have had their turns "
        "(QOSMaxJobsPerUserLimit)"]
    # another user's job under the same QOS: none of theirs runs, it starts now
    other = changed(limited, user="alice")
    assert start(placed("#SBATCH -N 1 -q normal -t 1:00:00", other).verdict("H")) == 0


def test_a_limit_reached_with_no_older_job_waits_for_the_first_end():
    """User 132 with none of theirs waiting: the new job takes the first of the three to
    end, +3:56:22, and the wait says so."""
    cfg, snap = site("H", user="u132")
    jobs = [j.model_copy(update={"qos": "normal", "reason": "JobHeldUser"})
            if j.state == JobState.PENDING else j.model_copy(update={"qos": "normal"})
            for j in snap.jobs]
    limited = changed((cfg, snap), jobs=jobs,
                      qos={"normal": QosLimits(name="normal", max_jobs_per_user=3)})
    v = placed("#SBATCH -N 1 -q normal -t 1:00:00", limited).verdict("H")
    assert start(v) == hms(3, 56, 22)
    assert v.waits_for == ["QOS normal's MaxJobsPerUser is 3 and 3 of your jobs run under "
                           "it: it waits until one of them ends (QOSMaxJobsPerUserLimit)"]


def test_a_burst_of_2414_long_jobs_sends_a_new_job_to_another_site():
    """B read as every waiting job waiting for priority: 2414 one-CPU 81 h jobs ahead of it
    pass through 240 nodes about ten deep: 8 nodes start more than 30 days out. A starts
    them now."""
    p = placed("#SBATCH -N 8 -t 2:00:00", site("B"), site("A"))
    assert p.choice == "A" and start(p.verdict("A")) == 0, p.explain()
    assert start(p.verdict("B")) > hms(30 * 24)
    assert p.why_not("B").startswith("finishes 36-") and "starts later" in p.why_not("B")


def test_a_view_read_before_the_burst_cannot_show_it_and_says_its_age():
    """B as read an hour before its moment, before user 171's burst: 72 jobs wait then, the
    job starts within days, not a month. The view's age is said, and the one job it saw
    come in the hour before it is replayed ahead: not READY, the bound past the start."""
    cfg, old = trace_site("B", HPC2N, 98_899_200 - 3600, SETH, NOW - timedelta(hours=1))
    assert len(old.pending) == 72
    p = placed("#SBATCH -N 8 -t 2:00:00", (cfg, old), stale_after_s=600)
    v = p.verdict("B")
    assert v.verdict == "BUSY" and hms(24) < start(v) < hms(30 * 24), p.explain()
    assert v.start_bound is not None and v.start_bound > v.estimated_start
    assert "  B view read 1:00:00 ago (read at 2026-03-02T08:00:00+00:00, not asked again " \
           "since)" in p.explain()
    assert "1 job was submitted in the 1:00:00 before (one every 1:00:00)" in p.explain()


def test_many_five_minute_jobs_let_four_minutes_through_not_five():
    """K: 3 idle nodes; 1668's 6 free at +0:04:48 and user 18's waiting 5-minute jobs (8 and
    10 nodes) take the 9 then. 3 nodes for 4 minutes end before: now. For 5 minutes they
    would hold 3 of those 9: the job waits past +0:04:48."""
    assert start(placed("#SBATCH -N 3 -t 0:04:00", site("K")).verdict("K")) == 0
    assert start(placed("#SBATCH -N 3 -t 0:05:00", site("K")).verdict("K")) > hms(0, 4, 48)
    assert start(placed("#SBATCH -N 1 -t 0:05:00", site("K")).verdict("K")) == 0


# ---- QOS limits ------------------------------------------------------------------------------

def with_qos(s: Site, qos: dict[str, QosLimits], running_under: str | None = None) -> Site:
    jobs = [j.model_copy(update={"qos": running_under}) if j.state == JobState.RUNNING
            and running_under else j for j in s[1].jobs]
    return changed(s, qos=qos, jobs=jobs)


def test_a_qos_group_cpu_limit_in_use_holds_a_job_off_idle_nodes():
    """A's running jobs, 1008 CPUs, all under QOS small, GrpTRES cpu=1024: 2 whole nodes
    (32 CPUs) wait for 7822's 128 at +5:21:12 though 37 nodes are idle; 2 CPUs fit now.
    Seth starts the 32 now."""
    small = with_qos(site("A"), {"small": QosLimits(name="small", grp_tres={"cpu": 1024})},
                     "small")
    p = placed("#SBATCH -N 2 --ntasks-per-node=16 -q small -t 1:00:00", small, site("S"))
    assert p.choice == "S", p.explain()
    assert start(p.verdict("A")) == hms(5, 21, 12)
    assert "  A waits: QOS small's GrpTRES cpu=1024 is in use: running jobs under it hold " \
           "1008 CPUs, the job needs 32: it waits until enough of them end (QOSGrpCpuLimit)" \
        in p.explain()
    assert start(placed("#SBATCH -N 2 -q small -t 1:00:00", small).verdict("A")) == 0


def test_a_qos_maxwall_refuses_two_days_there_only():
    """QOS normal's MaxWall 1 day on A; Seth has no such QOS and its batch allows 5 days."""
    capped = with_qos(site("A"), {"normal": QosLimits(name="normal", max_wall_s=86400)})
    p = placed("#SBATCH -N 1 -q normal -t 48:00:00", capped, site("S"))
    assert p.choice == "S", p.explain()
    assert p.verdict("A").reasons == [
        "walltime 2-00:00:00 above the job's QOS normal MaxWall 1-00:00:00"]
    assert start(placed("#SBATCH -N 1 -q normal -t 24:00:00", capped).verdict("A")) == 0


def test_a_gpu_qos_caps_a_job_at_eight_gpus():
    """A100 nodes of 4 GPUs under A's moment, QOS gpu MaxTRESPerJob gres/gpu=8: 2 nodes of
    4 start now on the idle ones; 3 are 12 GPUs."""
    a100 = Machine("ga", 100, 1, 64, 512000, 60 * 3600, gpus=4, gpu_type="a100")
    g = trace_site("G", KTH, 9_565_200, a100, NOW)
    g = changed(g, qos={"gpu": QosLimits(name="gpu", max_tres_per_job={"gres/gpu": 8})})
    assert start(placed("#SBATCH -N 2 --gpus-per-node=4 -q gpu -t 1:00:00", g)
                 .verdict("G")) == 0
    p = placed("#SBATCH -N 3 --gpus-per-node=4 -q gpu -t 1:00:00", g)
    assert p.verdict("G").reasons == [
        "needs 12 GPUs in all, the job's QOS gpu allows 8 (MaxTRESPerJob gres/gpu=8)"]


# ---- nodes out, sites silent -----------------------------------------------------------------

def test_drained_idle_nodes_push_the_start_to_the_first_end():
    """A's 37 idle nodes drained: 2 nodes wait for 7822's 8 at +5:21:12; Seth starts now."""
    cfg, snap = site("A")
    drained = changed((cfg, snap), nodes=[n.model_copy(update={"state": "drained"})
                                          if n.state == "idle" else n for n in snap.nodes])
    p = placed("#SBATCH -N 2 -t 1:00:00", drained, site("S"))
    assert p.choice == "S", p.explain()
    assert start(p.verdict("A")) == hms(5, 21, 12)
    assert p.why_not("A") == "finishes 5:21:12 later: starts later (+5:21:12 vs +0:00:00)"


def test_draining_nodes_of_a_running_job_are_not_freed_by_its_end():
    """A with 7822's 8 nodes draining: its end at +5:21:12 frees none of them. 40 nodes:
    37 idle, 7810's 1 at +6:05:56 (38), 7807's 16 at +9:23:17 (54); an hour there ends
    before 7627 takes 80 of the 86 free at +10:29:14."""
    cfg, snap = site("A")
    j7822 = next(j for j in snap.running if j.native_id == "7822")
    out = set((j7822.node_list or "").split(","))
    draining = changed((cfg, snap), nodes=[n.model_copy(update={"state": "draining"})
                                           if n.name in out else n for n in snap.nodes])
    assert start(placed("#SBATCH -N 40 -t 1:00:00", draining).verdict("A")) == hms(9, 23, 17)
    assert start(placed("#SBATCH -N 40 -t 1:00:00", site("A")).verdict("A")) == \
        hms(5, 21, 12)


def test_a_site_that_stopped_answering_says_how_old_its_view_is():
    """A last read 40 minutes ago, silent for 25: not ranked, its age and silence said."""
    lost = changed(site("A"), reachable=False, error="ssh: connection refused",
                   read_at=NOW - timedelta(minutes=40),
                   unreachable_since=NOW - timedelta(minutes=25))
    p = placed("#SBATCH -N 2 -t 1:00:00", lost, site("S"), stale_after_s=600)
    assert p.choice == "S" and p.unreachable() == ["A"], p.explain()
    assert p.verdict("A").reasons == ["site unreachable: ssh: connection refused"]
    assert "  A view read 0:40:00 ago (site unreachable since 2026-03-02T08:35:00+00:00)" \
        in p.explain()


# ---- runtimes against requested times ----------------------------------------------------------

@pytest.mark.parametrize(("share", "choice", "runtime_fast", "runtime_slow"), [
    (None, "F", hms(4), hms(4)),  # the walltime: 8 h at half speed, killed at 4 h
    (0.46, "F", hms(1, 50, 24), hms(3, 40, 48)),  # KTH's mean runtime / requested
    (0.09, "slow", hms(0, 21, 36), hms(0, 43, 12)),  # Thunder's
])
def test_the_share_of_their_walltime_jobs_use_turns_the_choice(share, choice, runtime_fast,
                                                               runtime_slow):
    """A 4 h one-node job: F (full, speed 1) starts it at +0:38:08; slow (Seth's moment at
    half speed) now. At the walltime it would be killed on slow; at KTH's 0.46 it ends
    there at +3:40:48, on F at +2:28:32; at Thunder's 0.09, +0:43:12 on slow against
    +0:59:44 on F: the faster start wins."""
    p = placed("#SBATCH -N 1 -t 4:00:00", site("F"), site("S", "slow", speed=0.5),
               own_share=share)
    assert p.choice == choice, p.explain()
    assert start(p.verdict("F")) == hms(0, 38, 8) and start(p.verdict("slow")) == 0
    assert (p.verdict("F").estimated_runtime_s, p.verdict("slow").estimated_runtime_s) == \
        (runtime_fast, runtime_slow)
    assert p.verdict("slow").may_time_out == (share is None)
    basis = "the walltime (nothing to learn from)" if share is None else \
        f"{share:.0%} of the walltime, as your recent jobs used of theirs"
    assert p.explain().splitlines()[0].endswith(f"; runtime: {basis}")
