"""Placement cases, thirty-second sweep: what real Slurm and Grid Engine queues do that the
predictions missed before, read from what the snapshot's one batch of commands prints.
On vega (test_placement_cases28, whose docstring lists its nodes and partitions): a
partition's own ResumeTimeout and SuspendTimeout (power saving's bound on a boot, in place
of the site's; slurmrestd's per-partition `timeouts` too); the waiting jobs of an
OverSubscribe=EXCLUSIVE partition taking whole nodes; SelectType=select/linear (whole
nodes to every job); SchedulerParameters bf_job_part_count_reserve, bf_max_job_user_part
and bf_max_job_test; waiting jobs ahead that start nowhere for now (PartitionDown,
PartitionInactive, DeadLine, Reservation). On the recorded Grid Engine cell
(test_placement_cases28's): the scheduler's runs (schedule_interval, flush_submit_sec,
flush_finish_sec).
NOW is Sunday 2026-03-01 09:00 UTC. Each case's docstring works its answer out from vega's
numbers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_placement_cases import NOW
from test_placement_cases25 import qos
from test_placement_cases28 import (
    Site,
    _grid_engine,
    notes,
    partitions,
    placed,
    running,
    starts_in,
    vega,
    waiting,
    whole,
)
from test_slurmrest_gaps import _n, _partition_v41
from test_slurmrest_gaps import recorded as rest_recorded
from test_slurmrest_gaps import snapshot as rest_snapshot

from diamond_jupyter.calibration import RunSample, SiteCalibration
from diamond_jupyter.dialects.sge_commands import SgeCommands, scheduler_runs
from diamond_jupyter.dialects.slurm_commands import SlurmCommands
from diamond_jupyter.federation import Federation
from diamond_jupyter.placement import place
from diamond_jupyter.placement_fit import timeouts_by_node, timeouts_of
from diamond_jupyter.placement_slurm_sched import (
    LINEAR_WHOLE,
    slurm_config_view,
    unreserved_jobs,
)


def own_timeouts(**by_partition: tuple[str, str]) -> str:
    """vega's partitions with each named one's (ResumeTimeout, SuspendTimeout) as
    `scontrol show partition` prints them (seconds, or GLOBAL)."""
    lines = partitions().splitlines(keepends=True)
    for name, (resume, suspend) in by_partition.items():
        lines = [line.replace("ResumeTimeout=GLOBAL", f"ResumeTimeout={resume}")
                 .replace("SuspendTimeout=GLOBAL", f"SuspendTimeout={suspend}")
                 if line.startswith(f"PartitionName={name} ") else line for line in lines]
    return "".join(lines)


# ---- a partition's own power-saving timeouts ------------------------------------------------

BIGMEM_ASLEEP = {"l01": "IDLE+DRAIN", "l02": "IDLE+POWERED_DOWN"}


def test_a_partitions_own_resume_and_suspend_timeouts_are_read():
    _, snap = vega(parts=own_timeouts(bigmem=("900", "120")))
    parts = {p.name: p for p in snap.partitions}
    assert (parts["bigmem"].resume_timeout_s, parts["bigmem"].suspend_timeout_s) == (900, 120)
    assert (parts["batch"].resume_timeout_s, parts["batch"].suspend_timeout_s) == (None, None)


@pytest.mark.parametrize(("resume", "config", "seconds", "whose"), [
    ("900", "", 900, "their partition's own ResumeTimeout"),
    ("900", "ResumeTimeout = 600 sec\n", 900, "their partition's own ResumeTimeout"),
    ("GLOBAL", "ResumeTimeout = 600 sec\n", 600, "the site's ResumeTimeout"),
    ("GLOBAL", "", 60, "Slurm's default ResumeTimeout")])
def test_a_powered_down_node_boots_within_its_partitions_own_resume_timeout(
        resume: str, config: str, seconds: int, whose: str):
    """1500 GB fits only l01-l02; l01 drains and l02 is powered down: the job starts once
    l02 boots, bounded by bigmem's own ResumeTimeout where it sets one (before: the
    site's, or Slurm's 60 s, whatever the partition said)."""
    site = vega(parts=own_timeouts(bigmem=(resume, "GLOBAL")), states=BIGMEM_ASLEEP,
                config=config)
    p, said = placed("#SBATCH --mem=1500G -t 2:00:00", site)
    assert (p.verdict("vega").partition, round(starts_in(p) * 3600)) == ("bigmem", seconds), said
    assert any(f"l02 powered down: Slurm boots the nodes it gives the job first, planned to "
               f"take {seconds} s ({whose})" in n for n in notes(p)), said



def test_a_partitions_own_zero_timeout_is_its_own_not_the_sites():
    """Review asked whether a partition's `ResumeTimeout=0` means "the site's". It does not:
    scontrol prints a partition that sets none as GLOBAL (NO_VAL16 inside slurmctld), and
    slurmctld gives a partition's nodes its own value, 0 too, taking the site's only where
    no partition of the node set one. So bigmem's 0 s bounds l02's boot, not the site's
    600 s."""
    site = vega(parts=own_timeouts(bigmem=("0", "0")), states=BIGMEM_ASLEEP,
                config="ResumeTimeout = 600 sec\n")
    parts = {p.name: p for p in site[1].partitions}
    assert (parts["bigmem"].resume_timeout_s, parts["bigmem"].suspend_timeout_s) == (0, 0)
    p, said = placed("#SBATCH --mem=1500G -t 2:00:00", site)
    assert round(starts_in(p) * 3600) == 0, said
    assert any("within 0 s (their partition's own ResumeTimeout)" in n for n in notes(p)), said

def test_a_node_powering_down_waits_for_its_partitions_own_suspend_and_resume_timeouts():
    """l02 is being powered down: no job there until it is off, within bigmem's own
    SuspendTimeout (120 s), and booted again, within its own ResumeTimeout (300 s):
    420 s."""
    site = vega(parts=own_timeouts(bigmem=("300", "120")),
                states={**BIGMEM_ASLEEP, "l02": "IDLE+POWERING_DOWN"})
    p, said = placed("#SBATCH --mem=1500G -t 2:00:00", site)
    assert round(starts_in(p) * 3600) == 420, said
    assert any("within 120 s (their partition's own SuspendTimeout), and booted again, "
               "within 300 s (their partition's own ResumeTimeout)" in n for n in notes(p))


def test_a_node_of_two_partitions_boots_within_the_longer_of_their_timeouts():
    """b01-b02 are in batch (GLOBAL: the site's 600 s) and standby (its own 120 s): a node
    of both is bounded by the longer, the site's; a-nodes in shared (its own 1800 s) by
    shared's. Only where a partition's own is the longest is it said as the partition's."""
    parts = own_timeouts(standby=("120", "GLOBAL"), shared=("1800", "GLOBAL"))
    _, snap = vega(parts=parts, config="ResumeTimeout = 600 sec\n")
    by_node = timeouts_by_node(snap.partitions, snap.node_timeouts)
    assert "ResumeTimeout" not in by_node["b01"] or by_node["b01"]["ResumeTimeout"] == 600
    assert "PartitionResumeTimeout" not in by_node["b01"]
    assert by_node["a01"]["ResumeTimeout"] == by_node["a01"]["PartitionResumeTimeout"] == 1800
    assert timeouts_of(by_node, ["b01", "a01"], snap.node_timeouts)["ResumeTimeout"] == 1800
    assert timeouts_of(by_node, ["l01"], snap.node_timeouts) is snap.node_timeouts
    states = {n: "IDLE+POWERED_DOWN" for n in ("b01", "b02")}
    p, said = placed("#SBATCH -p batch -c 96 -t 2:00:00",
                     vega(parts=parts, states=states, config="ResumeTimeout = 600 sec\n"))
    assert round(starts_in(p) * 3600) == 600, said


# ---- whole nodes: OverSubscribe=EXCLUSIVE's waiting jobs, SelectType=select/linear ------------

# b01-b02 full to +8 h; four 4-CPU jobs of carol wait in batch (4 h each) ahead of the job
B_FULL_FOUR_WAITING = [running("102", "b01", 128, 8), running("103", "b02", 128, 8),
                       *(waiting(f"70{i}", "Priority", cpus=4) for i in range(4))]
B_HELD = whole("b01", "b02")


@pytest.mark.parametrize(("oversubscribe", "at_h"), [("NO", 0), ("EXCLUSIVE", 4)])
def test_jobs_waiting_in_an_exclusive_partition_take_their_nodes_whole(oversubscribe: str,
                                                                       at_h: int):
    """Four 4-CPU jobs wait ahead in batch; a01-a04 are idle. Sharing nodes, all four fit
    on a01 and the job starts now beside them; where batch is OverSubscribe=EXCLUSIVE each
    takes a node whole, a01-a04 for their 4 h, and the job starts at +4 h (before: each
    waiting job was planned on 4 CPUs, and the job started now)."""
    site = vega(*B_FULL_FOUR_WAITING, held=B_HELD,
                parts=partitions(batch=dict(oversubscribe=oversubscribe)))
    p, said = placed("#SBATCH -p batch -c 4 -t 1:00:00", site)
    assert starts_in(p) == at_h, said


def test_select_type_is_read():
    assert SlurmCommands.parse_select_type("SelectType              = select/linear\n") == \
        "select/linear"
    assert SlurmCommands.parse_select_type("SelectType = select/cons_tres\n") == \
        "select/cons_tres"
    assert SlurmCommands.parse_select_type("ClusterName = vega\n") is None
    assert SlurmCommands.parse_select_type("SelectType = (null)\n") is None


@pytest.mark.parametrize(("select", "at_h"), [("select/cons_tres", 0), ("select/linear", 4)])
def test_select_linear_gives_the_waiting_jobs_whole_nodes(select: str, at_h: int):
    """The same queue under select/linear: every job, each waiting one too, takes whole
    nodes: a01-a04 go to the four for 4 h, and the job starts at +4 h (cons_tres: now)."""
    site = vega(*B_FULL_FOUR_WAITING, held=B_HELD, config=f"SelectType = {select}\n")
    p, said = placed("#SBATCH -p batch -c 4 -t 1:00:00", site)
    assert starts_in(p) == at_h, said
    linear = [n for n in notes(p) if "SelectType=select/linear" in n]
    assert len(linear) == (select == "select/linear"), said
    assert not any("(OverSubscribe=EXCLUSIVE)" in n for n in notes(p)), said


def test_under_select_linear_a_node_running_any_job_is_not_shared():
    """bigmem's l01 runs a 4-CPU job to +5 h and l02 an 8-CPU one to +3 h (CPUAlloc as a
    site of select/cons_tres would print it): under select/linear neither takes another
    job, and a 2-CPU bigmem job waits for l02's end at +3 h; shared (OverSubscribe=FORCE)
    still puts jobs beside others there."""
    jobs = [running("801", "l01", 4, 5, partition="bigmem"),
            running("802", "l02", 8, 3, partition="bigmem")]
    held = {"l01": (4, 0), "l02": (8, 0)}
    for select, at_h in (("select/cons_tres", 0), ("select/linear", 3)):
        p, said = placed("#SBATCH -p bigmem -c 2 -t 1:00:00",
                         vega(*jobs, held=held, config=f"SelectType = {select}\n"))
        assert starts_in(p) == at_h, (select, said)
    _, snap = vega(config="SelectType = select/linear\n")
    view, _ = slurm_config_view(Federation.parse("#!/bin/bash\n./a\n"), snap, None)
    modes = {p.name: p.oversubscribe for p in view.partitions}
    assert (modes["shared"], modes["batch"]) == ("FORCE:4", LINEAR_WHOLE)


# ---- bf_job_part_count_reserve ----------------------------------------------------------------

@pytest.mark.parametrize(("params", "at_h"), [("bf_window=1440", 7),
                                              ("bf_window=1440,bf_job_part_count_reserve=1", 3),
                                              ("bf_window=1440,bf_job_part_count_reserve=2", 7)])
def test_bf_job_part_count_reserve_keeps_slots_for_only_the_first_waiting_jobs(params: str,
                                                                               at_h: int):
    """a01-a02 are free at +3 h, a03-a04 now, b01-b02 at +8 h. In batch, 405 waits first
    for a b-node (1 h: planned at +8 h), then 406 for 4 whole nodes (planned on a01-a04
    from +3 h to +7 h). The job asks 4 whole nodes for 1 h: behind 406, +7 h. With
    bf_job_part_count_reserve=1 only 405 keeps a slot: the job takes a01-a04 at +3 h (406,
    keeping none, starts only where it delays no one); with 2, both keep theirs (+7 h)."""
    jobs = [running("800", "a01", 48, 3), running("801", "a02", 48, 3),
            running("102", "b01", 128, 8), running("103", "b02", 128, 8),
            waiting("405", "Priority", cpus=128, limit_h=1),
            waiting("406", "Priority", cpus=192, count=4)]
    site = vega(*jobs, held=whole("a01", "a02", "b01", "b02"),
                config=f"SchedulerParameters = {params}\n")
    assert site[1].bf_job_part_count_reserve == (None if "count" not in params
                                                 else int(params[-1]))
    p, said = placed("#SBATCH -p batch -N 4 --exclusive -t 1:00:00", site)
    assert starts_in(p) == at_h, said
    passed = [n for n in notes(p) if "bf_job_part_count_reserve" in n]
    assert bool(passed) == (at_h == 3), said
    if passed:
        assert "(after the first 1 waiting job of partition batch, " \
            "bf_job_part_count_reserve=1)" in passed[0], said


def test_a_waiting_job_that_keeps_no_slot_is_not_one_of_the_first_n_of_its_partition():
    """Review: with bf_job_part_count_reserve=1, 404 (QOS scav, NoReserve) waits first in
    batch, then 405 and 406. Slurm's backfill counts a job toward the first N as it reserves
    its slot, and a NoReserve job reserves none: 405 keeps its slot, 406 keeps none. Before,
    404 took the one place and 405 was said to keep no slot too."""
    jobs = [waiting("404", "Priority", cpus=48), waiting("405", "Priority", cpus=128),
            waiting("406", "Priority", cpus=192, count=4)]
    _, snap = vega(*jobs, qos=qos("normal") + qos("scav", Flags="NoReserve"),
                   queue_qos="404|scav|proj|OK\n405|normal|proj|OK\n406|normal|proj|OK\n",
                   config="SchedulerParameters = bf_job_part_count_reserve=1\n")
    assert unreserved_jobs(snap, NOW) == {
        "404": "QOS scav NoReserve",
        "406": "after the first 1 waiting job of partition batch, bf_job_part_count_reserve=1"}



def test_the_first_n_waiting_jobs_of_a_partition_are_taken_by_priority():
    """Review: slurmrestd lists the jobs by job id; Slurm's backfill takes the waiting jobs
    by priority. 900021 (priority 30) is the first of batch with bf_job_part_count_reserve
    =1: 900020 (10) and 900022 (20) keep no slot. Before, 900020 (listed first) kept it."""
    data = rest_recorded("jobs.json")
    held = next(j for j in data["jobs"] if j["job_state"] == "PENDING")
    data["jobs"] += [{**held, "job_id": 900020 + k, "priority": prio,
                      "state_reason": "Priority"} for k, prio in enumerate((10, 30, 20))]
    snap = rest_snapshot(data).model_copy(update={"bf_job_part_count_reserve": 1})
    assert [j.native_id for j in snap.jobs if j.reason == "Priority"] == \
        ["900020", "900021", "900022"]  # as slurmrestd lists them
    after = "after the first 1 waiting job of partition batch, bf_job_part_count_reserve=1"
    assert unreserved_jobs(snap, NOW) == {"900020": after, "900022": after}

# ---- bf_max_job_user_part ---------------------------------------------------------------------

@pytest.mark.parametrize(("owners", "cap", "at_h"), [
    (("alice", "alice", "alice"), "5", 0), (("alice", "alice", "alice"), "2", 12),
    (("alice", "carol", "carol"), "2", 0), (("alice", "alice", "carol"), "2", 8)])
def test_bf_max_job_user_part_passes_the_job_over_while_the_user_has_that_many_waiting_there(
        owners: tuple[str, ...], cap: str, at_h: int):
    """a01 is free; three jobs wait in batch for b01-b02 whole (free at +8 h, then each 4 h
    later). The 4-CPU job fits a01 now. With bf_max_job_user_part=2 the backfill tests only
    two of a user's waiting jobs in one partition: with all three alice's it tests the job
    once only one of hers waits, at +12 h (before: now); with one of hers, now; with two,
    once the first has started, +8 h."""
    jobs = [running(f"10{i}", n, 48 if n[0] == "a" else 128, 6 if n[0] == "a" else 8)
            for i, n in enumerate(("a02", "a03", "a04", "b01", "b02"))]
    jobs += [waiting(f"60{i}", "Resources", cpus=256, count=2, user=u)
             for i, u in enumerate(owners)]
    site = vega(*jobs, held=whole("a02", "a03", "a04", "b01", "b02"),
                config=f"SchedulerParameters = bf_max_job_user_part={cap}\n")
    assert site[1].bf_max_job_user_part == int(cap)
    p, said = placed("#SBATCH -p batch -c 4 -t 1:00:00", site)
    assert starts_in(p) == at_h, said
    mine = owners.count("alice")
    assert any(n.startswith(f"partition batch: Slurm's backfill tests at most {cap} waiting "
                            "jobs of a user in a partition (bf_max_job_user_part) and "
                            f"{mine} of yours wait ahead of it in batch") for n in notes(p)) \
        == (at_h > 0), said


# ---- Grid Engine: the scheduler's runs -----------------------------------------------------

def test_the_grid_engine_scheduler_runs_are_read():
    assert scheduler_runs("schedule_interval                 0:2:0\nflush_submit_sec 0\n"
                          "flush_finish_sec 45\n") == (120, 45)
    assert scheduler_runs("schedule_interval 0:0:15\nflush_submit_sec 300\n") == (15, 15)
    assert scheduler_runs("algorithm default\n") == (None, None)
    # the recorded cell's `qconf -ssconf`: a run every second, and 1 s after each event
    sconf = (Path(__file__).parent / "fixtures/outputs/sge/qconf_ssconf.txt").read_text()
    snap = SgeCommands().parse_snapshot("sge", {"sconf": sconf})
    assert (snap.sge_submit_run_s, snap.sge_finish_run_s) == (1, 1)


def _cell_running_every(submit_s: int | None, finish_s: int | None) -> Site:
    cfg, snap = _grid_engine()
    return cfg, snap.model_copy(update={"sge_submit_run_s": submit_s,
                                        "sge_finish_run_s": finish_s})


@pytest.mark.parametrize(("submit_s", "after_s"), [(1, 0), (20, 0), (120, 120)])
def test_a_grid_engine_job_that_fits_now_starts_at_the_schedulers_first_run(submit_s: int,
                                                                           after_s: int):
    """dn1 has 5 slots free: 4 start now, at the scheduler's first run after the submit:
    within a second on the recorded cell, 2 minutes where schedule_interval is 0:2:0 and
    no flush_submit_sec hurries it (before: now). A run within 30 s is a start now."""
    p, said = placed("#$ -pe smp 4\n#$ -l h_rt=1:00:00", _cell_running_every(submit_s, 45))
    v = p.verdict("sge")
    assert (v.estimated_start - NOW).total_seconds() == after_s, said
    assert (v.verdict == "READY") is (after_s == 0), said
    assert any(n.startswith("Grid Engine dispatches jobs only at its scheduler's runs: the "
                            "first after its submit") for n in v.notes) is (after_s > 0), said


def test_a_grid_engine_job_asked_now_y_is_scheduled_at_once_whatever_the_interval():
    p, said = placed("#$ -pe smp 4\n#$ -now y\n#$ -l h_rt=1:00:00",
                     _cell_running_every(120, 120))
    assert p.verdict("sge").verdict == "READY", said


def test_a_grid_engine_job_waiting_for_an_end_starts_at_the_run_after_it():
    """6 slots on one host wait for a running job's end; the run after it comes within
    flush_finish_sec's 90 s (schedule_interval 0:5:0), 90 s later than the end."""
    ends = [(placed("#$ -pe smp 6\n#$ -l h_rt=1:00:00", _cell_running_every(s, f))[0]
             .verdict("sge").estimated_start) for s, f in ((1, 1), (300, 90))]
    assert (ends[1] - ends[0]).total_seconds() == 90, ends


# ---- waiting jobs that start nowhere for now ------------------------------------------------

@pytest.mark.parametrize(("partition", "reason", "said"), [
    ("standby", "PartitionDown", "starts nowhere until an admin sets its partition UP"),
    ("standby", "PartitionInactive", "starts nowhere until an admin sets its partition UP"),
    ("batch", "DeadLine", "cannot end by its --deadline and is being cancelled"),
    ("batch", "Reservation", "waits for its reservation to begin and runs inside it")])
def test_a_waiting_job_of_a_down_partition_or_past_its_deadline_holds_back_no_job(
        partition: str, reason: str, said: str):
    """a01-a02 are free at +3 h, a03-a04 now, b01-b02 and the g-nodes (standby's too) at
    +8 h. Job 900 waits for 4 whole
    nodes ahead of the job (standby set to batch's PriorityTier, so neither passes the
    other). Waiting for resources it is planned on a01-a04 from +3 h and the job, 4 whole
    nodes for 1 h, after it, +7 h; with standby DOWN or INACTIVE (squeue: PartitionDown,
    PartitionInactive) 900 starts nowhere until an admin acts, and past its --deadline
    (DeadLine) Slurm cancels it, and waiting for its reservation to begin (Reservation) it
    runs only inside it, on nodes the reservation keeps from the job anyway: the job takes
    a01-a04 at +3 h (before: +7 h)."""
    state = {"PartitionDown": "DOWN", "PartitionInactive": "INACTIVE"}.get(reason, "UP")
    parts = partitions(standby=dict(tier=1, preempt="OFF", state=state))
    base = [running("800", "a01", 48, 3), running("801", "a02", 48, 3),
            running("102", "b01", 128, 8), running("103", "b02", 128, 8),
            *(running(f"61{i}", g, 64, 8, partition="gpu", gpus=2 if g == "g03" else 4)
              for i, g in enumerate(("g01", "g02", "g03")))]
    job = "#SBATCH -p batch -N 4 --exclusive -t 1:00:00"
    for why, at_h in (("Resources", 7), (reason, 3)):
        site = vega(*base, waiting("900", why, cpus=192, count=4, partition=partition),
                    held=whole("a01", "a02", "b01", "b02", "g01", "g02", "g03"),
                    parts=parts if why == reason
                    else partitions(standby=dict(tier=1, preempt="OFF")))
        p, text = placed(job, site)
        assert starts_in(p) == at_h, (why, text)
    assert f"partition batch: job 900 {said} ({reason}): it holds back no job" in notes(p), \
        text


# ---- bf_max_job_test --------------------------------------------------------------------------

@pytest.mark.parametrize(("where", "cap", "at_h"), [
    (("batch", "batch", "batch"), "5", 0), (("batch", "batch", "batch"), "2", 12),
    (("batch", "bigmem", "batch"), "3", 8), (("batch", "bigmem", "batch"), "4", 0)])
def test_bf_max_job_test_passes_the_job_over_while_that_many_wait_ahead_anywhere(
        where: tuple[str, ...], cap: str, at_h: int):
    """a01 is free; b01-b02 and l01-l02 are full to +8 h. Three jobs wait ahead: in batch
    each for b01-b02 whole (4 h), in bigmem for one l-node. The 4-CPU job fits a01 now.
    With bf_max_job_test=2 the backfill tests only the first two waiting jobs of the site:
    the job once only one waits ahead, +12 h (before: now); with 3, the three of two
    partitions pass it over until the first starts, +8 h (bf_max_job_part would count only
    batch's two); with 4 or 5 it is tested now."""
    jobs = [running(f"10{i}", n, 48 if n[0] == "a" else 128, 6 if n[0] == "a" else 8,
                    partition="bigmem" if n[0] == "l" else "batch")
            for i, n in enumerate(("a02", "a03", "a04", "b01", "b02", "l01", "l02"))]
    jobs += [waiting(f"60{i}", "Resources", cpus=256 if w == "batch" else 128,
                     count=2 if w == "batch" else 1, partition=w)
             for i, w in enumerate(where)]
    site = vega(*jobs, held=whole("a02", "a03", "a04", "b01", "b02", "l01", "l02"),
                config=f"SchedulerParameters = bf_max_job_test={cap}\n")
    assert site[1].bf_max_job_test == int(cap)
    p, said = placed("#SBATCH -p batch -c 4 -t 1:00:00", site)
    assert starts_in(p) == at_h, said
    assert any(n.startswith(f"partition batch: Slurm's backfill tests at most {cap} waiting "
                            "jobs of the site (bf_max_job_test) and 3 wait ahead of it")
               for n in notes(p)) == (at_h > 0), said


def test_slurmrestd_partitions_that_set_their_timeouts_apart_keep_each_its_own():
    """slurmrestd serves each partition's `timeouts`: alike in every partition they are
    the site's (test_slurmrest_gaps); set apart, each partition keeps its own (before:
    neither, and Slurm's defaults bounded every boot)."""
    apart = json.dumps({"partitions": [_partition_v41("a", _n(600), _n(0, set_=False)),
                                       _partition_v41("b", _n(300), _n(0xFFFE))]})
    snap = rest_snapshot(rest_recorded("jobs.json"), apart, "v0.0.41")
    assert snap.node_timeouts is None
    assert [(p.name, p.resume_timeout_s, p.suspend_timeout_s) for p in snap.partitions] == [
        ("a", 600, None), ("b", 300, None)]
    alike = json.dumps({"partitions": [_partition_v41("a", _n(600), _n(45)),
                                       _partition_v41("b", _n(600), _n(45))]})
    snap = rest_snapshot(rest_recorded("jobs.json"), alike, "v0.0.41")
    assert {(p.resume_timeout_s, p.suspend_timeout_s) for p in snap.partitions} == {
        (None, None)}


def test_a_calibrated_grid_engine_start_at_the_schedulers_run_keeps_its_bound_after_it():
    """A calibrated start has a 90% bound; planned at the scheduler's first run, 2 minutes
    on, the bound is never before it."""
    cal = {"sge": SiteCalibration([RunSample("all.q", 4, 600.0, 300.0, k) for k in range(40)])}
    spec = Federation.parse("#!/bin/bash\n#$ -pe smp 4\n#$ -l h_rt=1:00:00\n./app\n")
    v = place(spec, [_cell_running_every(120, 120)], now=NOW, calibration=cal).verdict("sge")
    assert (v.estimated_start - NOW).total_seconds() == 120, v
    assert v.start_bound is not None and v.start_bound >= v.estimated_start, v
