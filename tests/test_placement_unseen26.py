"""Placement cases, twenty-sixth sweep: sites loaded with real centers' queues. Each site is
a Slurm machine holding the jobs one moment of a Parallel Workloads Archive log shows
running (on the nodes they would take) and waiting (in the order they came), each with
the time limit its user asked (`trace_sites`); the jobs placed come from the shared
corpus of batch scripts (their partition and account lines, another center's names,
taken out). Each case asserts the site chosen and the predicted start, and its docstring
works the start out from the log's own numbers.

The moments (seconds from each log's start; "ends" are by the time each job asked):
  G  KTH SP2 at 3,798,000: 97 of 100 nodes busy, 24 jobs waiting, the first a 64-node
     one; 2785 (1 node) ends at +0:23:30, 2789 (1) +0:53:36, 2791 (1) +1:08:52, 2733
     (80) +1:29:14; six 4-node 20-minute jobs wait at the queue's end (2806 first).
  F  KTH SP2 at 4,680,000: every node busy, 8 waiting; 3513 (3 nodes) ends at +0:36:08;
     3523 (2 nodes, 2 min) and 3504 (1 node) are the only waiting jobs of 3 nodes or less.
  A  KTH SP2 at 9,565,200: 37 nodes idle, one job waiting: 7627, 80 nodes for 4 h. 7822
     (8) ends at +5:21:12, 7810 (1) +6:05:56, 7807 (16) +9:23:17, 7730 (32) +10:29:14
     (then 94 nodes are free: 7627 starts, until +14:29:14); 6 nodes stay busy for a day.
  C  KTH SP2 at 19,418,400: 16 idle; waiting 18110 (70 nodes, 8 h), 18124 (38, 12 h);
     ends +0:56:56 (9), +0:57:53 (9), +1:00:40 (5), +1:01:56 (8), +3:08:58 (38),
     +3:10:43 (15).
  D  KTH SP2 at 22,820,400: 10 idle; waiting 22859 (24 nodes, 6 h); 22833 (8) ends at
     +1:16:26, 22856 (40) +1:18:05.
  E  KTH SP2 at 29,246,400: 55 idle; waiting 28346 (64 nodes, 3:59); 28343 (8) ends at
     +1:34:14, 28339 (9) +4:20:11, then the rest after +7:04.
  S  HPC2N Seth at 6,361,200: 62 of 240 processors idle; waiting 16658 (98, 30 min);
     17229 (16) ends at +1:31:25, 16700 (64) +1:39:07, 16473 (36) +1:48:45.
KTH's SP2 had a processor a node: here a node of 16 CPUs and 64000 MB (`SP2`). Seth's
processors are made a node of 32 CPUs and 128000 MB each (`SETH`), so that each job's
nodes are its own."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from trace_sites import HPC2N, KTH, SETH, SP2, Machine, corpus, moment, trace_site

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import (
    Partition,
    Reservation,
    SiteSnapshot,
    SlurmPriority,
)
from diamond_jupyter.placement import Placement, SiteVerdict, place

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)  # each site's moment
MOMENTS = {"G": (KTH, 3_798_000, SP2), "F": (KTH, 4_680_000, SP2),
           "A": (KTH, 9_565_200, SP2), "C": (KTH, 19_418_400, SP2),
           "D": (KTH, 22_820_400, SP2), "E": (KTH, 29_246_400, SP2),
           "S": (HPC2N, 6_361_200, SETH)}


def site(key: str, **more) -> tuple[SiteConfig, SiteSnapshot]:
    """Moment `key`'s site, named `key`."""
    log, at_s, machine = MOMENTS[key]
    return trace_site(key, log, at_s, machine, NOW, **more)


def placed(script: str, *sites: tuple[SiteConfig, SiteSnapshot], **kw) -> Placement:
    """`script` (a whole script, or `#SBATCH` lines) placed over `sites` at NOW."""
    text = script if script.startswith("#!") else f"#!/bin/bash\n{script}\n./app\n"
    return place(Federation.parse(text), list(sites), now=NOW, **kw)


def start(v: SiteVerdict | None) -> float:
    """v's predicted start, seconds after NOW."""
    assert v is not None and v.estimated_start is not None, v
    return (v.estimated_start - NOW).total_seconds()


def hms(h: int, m: int = 0, s: int = 0) -> float:
    return float(h * 3600 + m * 60 + s)


# ---- the moments ----------------------------------------------------------------------------

def test_the_moments_hold_what_the_logs_show():
    """Each site's busy nodes are the log's running processors, its queue the log's waiting
    jobs, first come first; a job's nodes are its own."""
    for key, busy, waiting, first in (("A", 63, 1, ("7627", 80)), ("F", 100, 8, ("3278", 98)),
                                      ("G", 97, 24, ("2396", 64)), ("S", 178, 1, ("16658", 98))):
        _, snap = site(key)
        assert sum(n.cpus_allocated > 0 for n in snap.nodes) == busy, key
        assert len(snap.pending) == waiting, key
        assert (snap.pending[0].native_id, snap.pending[0].nodes) == first, key
        held = [h for j in snap.running for h in (j.node_list or "").split(",")]
        assert len(held) == len(set(held)) == busy, key
    running, waiting = moment(KTH, 9_565_200)
    assert sorted(j.number for j in running)[:2] == [7716, 7717] and len(waiting) == 1


# ---- backfill windows -----------------------------------------------------------------------

def test_a_short_mpi_job_backfills_where_37_nodes_wait_for_an_80_node_job():
    """0082-mpi.sh (2 nodes, 8 tasks each, 1 h): A has 37 idle nodes and its one waiting
    job, 80 nodes, cannot start before +10:29:14; an hour on 2 of them delays it not.
    F is full: 3513's 3 nodes free at +0:36:08 go first to 3523 (2 nodes, 2 min) and
    3504 (1 node), ahead in its queue; 3523's end at +0:38:08 gives the job its two."""
    p = placed(corpus("slurm/0082-mpi.sh"), site("F"), site("A"))
    assert p.choice == "A", p.explain()
    assert p.verdict("A").verdict == "READY" and start(p.verdict("A")) == 0
    assert start(p.verdict("F")) == hms(0, 38, 8)


def test_thirty_nodes_fit_the_window_for_two_hours_not_for_twelve():
    """On A, 30 of the 37 idle nodes for 2 h end before 7627's +10:29:14; for 12 h they
    would leave 94 - 30 = 64 of the 80 it needs then: the job waits for 7627's end,
    +14:29:14 (4 h after it starts), when 94 nodes are free."""
    assert start(placed("#SBATCH -N 30 -t 2:00:00", site("A")).verdict("A")) == 0
    assert start(placed("#SBATCH -N 30 -t 12:00:00", site("A")).verdict("A")) == \
        hms(14, 29, 14)


def test_a_queue_of_24_still_backfills_a_job_that_delays_none_of_it():
    """G: 24 jobs wait and 3 nodes are idle; none of the waiting jobs fits 3 nodes, and the
    first that could use them (2806, 4 nodes) must wait for 2785's node at +0:23:30. A
    20-minute job on one node is done before: Slurm's backfill starts it now, whatever
    the queue's length (before: only the first 20 waiting jobs were planned at each
    event, so a job further back started only once jobs ahead had: +1:49:14). An hour on
    that node would hold it when 2806 takes four, and then 2807 takes the same four at
    +0:43:30: the first node that none of them wants is 2789's, free at +0:53:36."""
    short = placed("#SBATCH -N 1 -t 0:20:00", site("G")).verdict("G")
    assert short.verdict == "READY" and start(short) == 0
    hour = placed("#SBATCH -N 1 -t 1:00:00", site("G")).verdict("G")
    assert hms(0, 53, 36) <= start(hour) <= hms(1, 3, 30), start(hour)


def test_fair_share_puts_the_job_behind_or_ahead_of_the_waiting_jobs():
    """F under multifactor priority, the fair share weighed 10000: the 8 waiting jobs have
    priorities 3000-3700. At a FairShare of 0.05 (500) the 10-minute 2-node job goes
    behind all of them: 3513's nodes free at +0:36:08 go to 3523 and 3504 first, and it
    starts at 3523's end, +0:38:08. At 0.9 (9000) it goes ahead of them all and takes two
    of those three nodes at once, +0:36:08."""
    cfg, snap = site("F")
    ranks = {j.native_id: 3000 + 100 * k for k, j in enumerate(snap.pending)}
    weights = {"age": 1000, "fairshare": 10000, "jobsize": 0, "partition": 0, "qos": 0,
               "assoc": 0}

    def under(share: float) -> tuple[SiteConfig, SiteSnapshot]:
        prio = SlurmPriority(plugin="priority/multifactor", weights=weights,
                             fair_share={"proj": share}, qos_priority={"normal": 0},
                             default_account="proj")
        return cfg, snap.model_copy(update={"priority": prio, "job_priorities": ranks})

    assert start(placed("#SBATCH -N 2 -t 0:10:00", under(0.05)).verdict("F")) == \
        hms(0, 38, 8)
    assert start(placed("#SBATCH -N 2 -t 0:10:00", under(0.9)).verdict("F")) == \
        hms(0, 36, 8)


def test_jobs_waiting_on_their_users_limits_leave_the_idle_nodes_to_a_new_job():
    """Seth at 17,280,000: 84 processors idle while 27 jobs wait (Maui held them to per-user
    limits: user 23's 11 waiting jobs beside 5 running). Read as waiting for priority, they
    would all start now and fill the machine: the new 8-node job starts at 110835's end
    (16 nodes for 599 s), +0:09:59. Read as waiting on a per-user limit
    (QOSMaxJobsPerUserLimit), each starts only when one of its user's running jobs ends,
    so the idle nodes are the new job's now."""
    cfg, snap = trace_site("seth", HPC2N, 17_280_000, SETH, NOW)
    assert (sum(not n.cpus_allocated for n in snap.nodes), len(snap.pending)) == (84, 27)
    assert start(placed("#SBATCH -N 8 -t 2:00:00", (cfg, snap)).verdict("seth")) == \
        hms(0, 9, 59)
    limited = [j.model_copy(update={"reason": "QOSMaxJobsPerUserLimit"}) if j in snap.pending
               else j for j in snap.jobs]
    held = (cfg, snap.model_copy(update={"jobs": limited}))
    v = placed("#SBATCH -N 8 -t 2:00:00", held).verdict("seth")
    assert v.verdict == "READY" and start(v) == 0


# ---- more nodes than are free ---------------------------------------------------------------

def test_forty_nodes_start_where_forty_are_free():
    """A has 37 idle: 7822's 8 at +5:21:12 make 45, and an hour there ends long before
    7627 can start. Seth has 62 idle and its waiting 98-processor job cannot start before
    +1:39:07: an hour on 40 of them delays it not."""
    p = placed("#SBATCH -N 40 -t 1:00:00", site("A"), site("S"))
    assert p.choice == "S" and start(p.verdict("S")) == 0, p.explain()
    assert start(p.verdict("A")) == hms(5, 21, 12)


def test_more_nodes_than_one_site_has_but_not_than_the_other():
    """101 nodes: A (100 nodes) can never run it. Seth has 240 but 62 idle: 16658 takes 98
    of the 142 free at +1:39:07 and runs 30 min; 16473's 36 at +1:48:45 leave 80, short
    of 101; 16658's end at +2:09:07 gives 178."""
    p = placed("#SBATCH -N 101 -t 1:00:00", site("A"), site("S"))
    assert p.choice == "S" and start(p.verdict("S")) == hms(2, 9, 7), p.explain()
    assert p.verdict("A").reasons == ["needs 101 nodes, largest partition has 100"]


def test_forty_nodes_for_twelve_hours_wait_for_each_sites_big_job_to_end():
    """12 h on 40 nodes would delay each site's waiting job. E: 28346 (64 nodes) starts
    at +4:20:11 when 72 are free, and runs 3:59 to +8:19:11, when 100 are free. A: 7627
    runs from +10:29:14 to +14:29:14. E finishes first."""
    p = placed("#SBATCH -N 40 -t 12:00:00", site("A"), site("E"))
    assert p.choice == "E", p.explain()
    assert start(p.verdict("E")) == hms(8, 19, 11)
    assert start(p.verdict("A")) == hms(14, 29, 14)


@pytest.mark.parametrize("hours", [3, 20])
def test_twenty_nodes_go_behind_the_big_job_their_site_frees_first(hours):
    """D: 10 idle, 18 at +1:16:26, 58 at +1:18:05, when 22859 takes 24: 34 are left.
    C: 16 idle, 47 by +1:01:56, but 18110 (70 nodes) has its slot at +3:08:58 (85 free),
    and 20 nodes then leave 65: the job waits until 18110 starts and 18145's 15 end at
    +3:10:43 (30 free). Run 20 h, it still delays no one there: 18124 (38 nodes) waits
    for 18110's end at +11:08:58, and 80 nodes are free then."""
    p = placed(f"#SBATCH -N 20 -t {hours}:00:00", site("C"), site("D"))
    assert p.choice == "D", p.explain()
    assert start(p.verdict("D")) == hms(1, 18, 5)
    assert start(p.verdict("C")) == hms(3, 10, 43)


def test_thirty_nodes_wait_where_the_idle_nodes_are_down():
    """Seth with seth200-seth240 down (all idle ones but 21): 30 nodes wait. 17229's 16 at
    +1:31:25 make 37, but an hour there would still hold them when 16658 takes 98 of the
    101 free at +1:39:07; 16473's 36 at +1:48:45 leave 39. A has 37 idle: it starts now."""
    out = frozenset(f"seth{i:03d}" for i in range(200, 241))
    p = placed("#SBATCH -N 30 -t 1:00:00", site("S", down=out), site("A"))
    assert p.choice == "A" and start(p.verdict("A")) == 0, p.explain()
    assert start(p.verdict("S")) == hms(1, 48, 45)
    ten = placed("#SBATCH -N 10 -t 1:00:00", site("S", down=out), site("A"))
    assert start(ten.verdict("S")) == 0 and ten.choice == "S"  # as soon, half the cost


# ---- node sizes and memory ------------------------------------------------------------------

def test_a_hundred_tasks_take_four_seth_nodes_or_seven_sp2_nodes():
    """0043-ior.slurm (100 tasks, 1 h) starts now on both; 100 tasks take 4 nodes of 32
    CPUs or 7 of 16: Seth is cheaper."""
    p = placed(corpus("slurm/0043-ior.slurm"), site("A"), site("S"))
    assert p.choice == "S", p.explain()
    assert [start(p.verdict(s)) for s in ("S", "A")] == [0, 0]
    assert (p.verdict("S").billed_nodes, p.verdict("A").billed_nodes) == (4, 7)


def test_memory_per_node_only_a_seth_node_has():
    """0022-rosetta_test.sh asks --mem 128000: an SP2 node has 64000 MB."""
    p = placed(corpus("slurm/0022-rosetta_test.sh", ("account",)), site("A"), site("S"))
    assert p.choice == "S" and start(p.verdict("S")) == 0, p.explain()
    assert p.verdict("A").reasons == [
        "needs 128000 MB memory per node, largest node has 64000 MB"]


def test_memory_per_cpu_counts_against_the_node_it_lands_on():
    """16 tasks on one node at 5000 MB a CPU need 80000 MB there: more than an SP2 node's
    64000 MB (4000 MB for each of its 16 CPUs), less than a Seth node's 128000. 0087 (2
    CPUs at 20000 MB a CPU: 40000 MB on its node) fits both."""
    p = placed("#SBATCH -N 1 -n 16 --mem-per-cpu=5000 -t 1:00:00", site("A"), site("S"))
    assert p.choice == "S", p.explain()
    assert p.verdict("A").reasons == ["needs 80000 MB memory per node, largest node has "
                                      "64000 MB"]
    q = placed(corpus("slurm/0087-category_selectivity_job.sh", ("partition",)),
               site("A"), site("S"))
    assert {v.site for v in q.ranked if v.feasible} == {"A", "S"}


# ---- GPUs -----------------------------------------------------------------------------------

A100 = Machine("ga", 100, 1, 64, 512000, 60 * 3600, gpus=4, gpu_type="a100")
V100 = Machine("gv", 240, 1, 32, 192000, 5 * 24 * 3600, gpus=2, gpu_type="v100")


def gpu_sites() -> list[tuple[SiteConfig, SiteSnapshot]]:
    """fast: A100 nodes under KTH's full moment F; slow: V100 nodes at half the speed
    under Seth's moment S (62 nodes idle)."""
    return [trace_site("fast", KTH, 4_680_000, A100, NOW),
            trace_site("slow", HPC2N, 6_361_200, V100, NOW, speed=0.5)]


def test_a_gpu_job_waits_for_the_full_fast_site_rather_than_time_out_on_the_slow_one():
    """0066-wae_run.sh: 1 GPU, 24 h. slow starts it now, but at half the speed it needs
    48 h: it is killed at its 24 h limit there (before: ranked by that kill, "finishing"
    at +24:00:00, slow won). fast is full: the job waits, and ends there."""
    p = placed(corpus("slurm/0066-wae_run.sh", ("partition",)), *gpu_sites())
    assert p.choice == "fast", p.explain()
    slow, fast = p.verdict("slow"), p.verdict("fast")
    assert start(slow) == 0 and slow.may_time_out and not fast.may_time_out
    assert "expected runtime 2-00:00:00 exceeds walltime 1-00:00:00: the job may time out" \
        in slow.notes
    assert 0 < start(fast) < hms(24)
    assert p.why_not("slow") == \
        "the job may time out there: its expected runtime exceeds its time limit"


def test_a_gpu_array_of_three_days_goes_where_the_time_limit_allows():
    """0071 (9 tasks of 1 GPU, 72 h): fast's partition stops at 60 h; slow starts it."""
    p = placed(corpus("slurm/0071-slurm_job_docker.sh", ("partition",)), *gpu_sites())
    assert p.choice == "slow" and start(p.verdict("slow")) == 0, p.explain()
    assert p.verdict("fast").reasons == [
        "walltime 3-00:00:00 above partition batch MaxTime 2-12:00:00"]


def test_an_a100_job_goes_to_the_only_a100_site_however_full():
    """0078-gmx (2 A100s, 15 min): only fast has A100s; full, it starts the job when the
    first node frees for it: 3513's three at +0:36:08, after 3523 and 3504 ahead."""
    p = placed(corpus("slurm/0078-gmx_slurm_prebuilt.sh"), *gpu_sites())
    assert p.choice == "fast", p.explain()
    assert p.verdict("slow").reasons == ["no GPU of type 'a100' (site has: v100)"]
    assert hms(0, 36, 8) <= start(p.verdict("fast")) <= hms(0, 38, 8)


# ---- arrays, reservations, partitions, sites out --------------------------------------------

def test_an_array_of_three_starts_where_three_nodes_are_idle():
    """0090 (3 tasks of a node, 20 min): D has 10 idle and its waiting 24-node job starts
    at +1:18:05; F is full until +0:36:08 (then +0:38:08 for two nodes)."""
    p = placed(corpus("slurm/0090-run_batch_make_gioj.sh"), site("F"), site("D"))
    assert p.choice == "D" and start(p.verdict("D")) == 0, p.explain()
    assert start(p.verdict("F")) == hms(0, 38, 8)
    assert "array of 3 tasks (START and FINISH are its first task's)" in p.needs


def test_a_reservation_ending_in_two_hours_holds_the_idle_nodes_until_then():
    """A with sp071-sp100 (30 of its 37 idle nodes) reserved for carol until +2:00:00: 7
    nodes start now, 30 at the reservation's end (an hour there still ends before 7627's
    slot)."""
    cfg, snap = site("A")
    course = Reservation(name="course", start=NOW - timedelta(hours=1),
                         end=NOW + timedelta(hours=2), nodes=["sp[071-100]"],
                         users=["carol"], state="ACTIVE")
    held = (cfg, snap.model_copy(update={"reservations": [course]}))
    assert start(placed("#SBATCH -N 7 -t 1:00:00", held).verdict("A")) == 0
    assert start(placed("#SBATCH -N 30 -t 1:00:00", held).verdict("A")) == hms(2)


def test_five_days_run_only_in_the_partition_that_allows_them():
    """0064-entapnf.sh (1 CPU, 120 h): A's batch stops at 60 h; its `long` partition
    (sp091-sp100, 7 days, idle) takes it now. Seth's batch allows 5 days: it starts there
    too, on a node it bills a 32nd of (A's a 16th)."""
    long = Partition(name="long", max_time_s=7 * 86400,
                     nodes=[f"sp{i:03d}" for i in range(91, 101)])
    p = placed(corpus("slurm/0064-entapnf.sh", ("account",)), site("A", extra=[long]))
    assert (p.verdict("A").partition, start(p.verdict("A"))) == ("long", 0), p.explain()
    plain = placed(corpus("slurm/0064-entapnf.sh", ("account",)), site("A"))
    assert plain.verdict("A").reasons == [
        "walltime 5-00:00:00 above partition batch MaxTime 2-12:00:00"]
    both = placed(corpus("slurm/0064-entapnf.sh", ("account",)), site("A", extra=[long]),
                  site("S"))
    assert both.choice == "S" and start(both.verdict("S")) == 0


def test_a_site_that_does_not_answer_beside_healthy_ones():
    lost = (SiteConfig(name="lost"),
            SiteSnapshot(site="lost", taken_at=NOW, reachable=False, error="ssh: timed out"))
    p = placed(corpus("slurm/0082-mpi.sh"), lost, site("F"), site("A"))
    assert p.choice == "A", p.explain()
    assert p.verdict("lost").verdict == "UNREACHABLE"
    assert p.verdict("lost").reasons == ["site unreachable: ssh: timed out"]


@pytest.mark.parametrize("stale_first", [True, False])
def test_a_view_read_three_hours_ago_loses_a_tie_to_a_fresh_one(stale_first):
    """D as the log shows it 3 h before its moment, read then, against E read now: both
    have 8 idle nodes for an hour at once. The old view's nothing-queued is 3 h old,
    longer than the job runs: the fresh view is the surer start, whichever is listed
    first (before: the first listed won)."""
    cfg, old = trace_site("D", KTH, 22_820_400 - 3 * 3600, SP2, NOW - timedelta(hours=3))
    sites = [(cfg, old), site("E")] if stale_first else [site("E"), (cfg, old)]
    p = placed("#SBATCH -N 8 -t 1:00:00", *sites, stale_after_s=600)
    assert p.choice == "E", p.explain()
    assert start(p.verdict("D")) == start(p.verdict("E")) == 0
    assert "D view read 3:00:00 ago" in p.explain()
    # the jobs the old view shows submitted in the 3 h before it put its 90% bound at 3 h
    # (`placement_stale`): it loses on the surer start
    assert p.why_not("D") == "same finish within noise (+1:00:00 vs +1:00:00), less sure " \
        "start (90%: < 3:00:00 vs < 0:00:00)"


def test_a_view_read_before_its_running_jobs_limits_passed_plans_them_ended():
    """D's moment read 2 h ago: 22833 (8 nodes), 22856 (40) and 22841 (13) have passed
    their limits since (at +1:16:26, +1:18:05 and +1:58:34 of the view), so they are
    planned ending now (30 s on, what an overdue job is given), and 22859, still waiting
    in the view, takes 24 of the 71 nodes then: 40 nodes start at +0:00:30, and the age
    of the view is said. (The log had 24-node jobs arrive since: a view that old cannot
    show them.)"""
    cfg, old = trace_site("D", KTH, 22_820_400, SP2, NOW - timedelta(hours=2))
    p = placed("#SBATCH -N 40 -t 1:00:00", (cfg, old), stale_after_s=600)
    assert start(p.verdict("D")) == 30, p.explain()
    assert "D view read 2:00:00 ago" in p.explain()
    assert start(placed("#SBATCH -N 48 -t 1:00:00", (cfg, old)).verdict("D")) > 30
