"""Placement cases, thirty-first sweep: what real Slurm and Grid Engine sites do that the
predictions missed before, read from what the snapshot's one batch of commands prints.
On vega (test_placement_cases28): the flags of a job's QOS that lift its partition's
limits (PartitionTimeLimit, PartitionMaxNodes, PartitionMinNodes) or ask a reservation
(RequiresReservation); memory that is not consumable (SelectTypeParameters CR_Core);
EnforcePartLimits=ALL; the waiting jobs Slurm's backfill keeps no slot for (QOS NoReserve,
bf_min_prio_reserve, bf_min_age_reserve); bf_max_job_part; bf_resolution; --contiguous.
On a Grid Engine cell (test_placement_pbs_resv_ge_rqs): a queue's qtype and its projects /
xprojects.

vega (test_placement_cases28):
  a01-a04  48 CPUs  192000 MB               batch, shared, standby
  b01-b02 128 CPUs  512000 MB               batch, standby
  g01-g02  64 CPUs  256000 MB 4 A100        gpu, standby
  g03      64 CPUs  256000 MB 2 A100        gpu, standby
  l01-l02 128 CPUs 2048000 MB               bigmem
  batch default, 2 days, at most 4 nodes; shared a01-a04 12 h; gpu 1 day, at most 2
  nodes; standby 4 h; bigmem 1 day, 1 node
alice runs under QOS normal (her association's default). NOW is Sunday 2026-03-01 09:00
UTC. Each case's docstring works its answer out from these numbers."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from test_placement_cases import NOW, run
from test_placement_cases25 import qos
from test_placement_cases28 import (
    PRIORITY_CONFIG,
    notes,
    partitions,
    placed,
    running,
    starts_in,
    vega,
    waiting,
    whole,
)
from test_placement_pbs_resv_ge_rqs import _ge_entry, _ge_site, _smp

from diamond_jupyter.dialects.slurm_commands import SlurmCommands
from diamond_jupyter.testbed.clusters import base_dir, cluster
from diamond_jupyter.testbed.host import _ctl

# ---- what `scontrol show config` says ------------------------------------------------------

def test_the_scheduler_parameters_and_config_words_are_read():
    text = ("SchedulerParameters     = bf_window=2880,bf_max_job_part=50,bf_resolution=600,"
            "bf_min_prio_reserve=1000,bf_min_age_reserve=600,bf_continue\n"
            "SelectTypeParameters    = CR_CORE_MEMORY,CR_ONE_TASK_PER_CORE\n"
            "EnforcePartLimits       = ALL\n")
    _, snap = vega(config=text)
    assert (snap.bf_max_job_part, snap.bf_resolution_s, snap.bf_min_prio_reserve,
            snap.bf_min_age_reserve_s, snap.memory_consumable, snap.enforce_part_limits) == (
        50, 600, 1000, 600, True, "ALL")
    # not set, 0 or not a number: left out; an older config without the lines: not read
    assert SlurmCommands.parse_backfill_limits(
        "SchedulerParameters = bf_max_job_part=0,bf_resolution=x,bf_continue\n") == {}
    assert SlurmCommands.parse_config_words("SelectTypeParameters = CR_CPU\n"
                                            "EnforcePartLimits = YES\n") == (False, None)
    assert SlurmCommands.parse_config_words("ClusterName = vega\n") == (None, None)
    # a priority threshold of ten digits (priorities run to 2**32 - 1) is read too
    assert SlurmCommands.parse_backfill_limits(
        "SchedulerParameters = bf_min_prio_reserve=4000000000\n") == {
        "bf_min_prio_reserve": 4000000000}


# ---- the flags of the job's QOS -----------------------------------------------------------


def _normal(**more: str) -> str:
    return qos("normal", **more)


def test_partition_time_limit_lets_the_qos_run_past_the_partitions_max_time():
    """-t 3 days is past every partition's MaxTime (batch's is the longest, 2 days):
    refused (as before). QOS normal with Flags=PartitionTimeLimit, MaxWall 4 days: batch's
    MaxTime does not hold it, the job starts now in batch (before: refused, the flag not
    read); the note says why. With a MaxWall of 2 days 12 h the QOS's own limit refuses."""
    job = "#SBATCH -t 3-00:00:00"
    p, said = placed(job, vega())
    assert p.verdict("vega").estimated_start is None, said
    p, said = placed(job, vega(qos=_normal(Flags="PartitionTimeLimit", MaxWall="4-00:00:00")))
    v = p.verdict("vega")
    assert (v.partition, starts_in(p)) == ("batch", 0), said
    assert "partition batch: QOS normal has flag PartitionTimeLimit: the partition's " \
        "MaxTime 2-00:00:00 does not hold its jobs" in notes(p), said
    p, said = placed(job, vega(qos=_normal(Flags="PartitionTimeLimit", MaxWall="2-12:00:00")))
    assert p.verdict("vega").estimated_start is None, said
    assert any("MaxWall" in r for r in p.verdict("vega").reasons), said


def test_partition_max_nodes_lets_the_qos_take_more_nodes_than_the_partition_allows():
    """6 nodes of 48 CPUs for 8 h: batch (a01-a04, b01-b02) allows 4 a job, standby's 4 h
    is too short, shared has 4 nodes: refused. Flags=PartitionMaxNodes: batch takes all
    six, now (before: refused)."""
    job = "#SBATCH -N 6 -c 48 -t 8:00:00"
    p, said = placed(job, vega())
    assert p.verdict("vega").estimated_start is None, said
    p, said = placed(job, vega(qos=_normal(Flags="PartitionMaxNodes")))
    assert (p.verdict("vega").partition, starts_in(p)) == ("batch", 0), said
    assert "partition batch: QOS normal has flag PartitionMaxNodes: the partition's MaxNodes " \
        "4 does not hold its jobs" in notes(p), said


def test_partition_min_nodes_lets_the_qos_run_a_smaller_job():
    """batch with MinNodes=2 refuses a 1-node job naming it; Flags=PartitionMinNodes: the
    job starts now there (before: refused)."""
    parts = re.sub(r"(PartitionName=batch .*?)MinNodes=0", r"\1MinNodes=2", partitions())
    job = "#SBATCH -p batch -N 1 -t 1:00:00"
    p, said = placed(job, vega(parts=parts))
    assert any("at least 2" in r for r in p.verdict("vega").reasons), said
    p, said = placed(job, vega(parts=parts, qos=_normal(Flags="PartitionMinNodes")))
    assert (p.verdict("vega").partition, starts_in(p)) == ("batch", 0), said


def test_a_qos_that_requires_a_reservation_refuses_a_job_naming_none():
    """Flags=RequiresReservation on normal: sbatch refuses the job without --reservation
    (before: placed now); under QOS other (without the flag) it runs."""
    site = vega(qos=_normal(Flags="RequiresReservation") + qos("other"),
                assoc="user|alice\nalice|proj||normal|normal,other\n")
    p, said = placed("#SBATCH -t 1:00:00", site)
    v = p.verdict("vega")
    assert v.verdict == "RESTRICTED", said
    assert "QOS normal has flag RequiresReservation: sbatch refuses a job of it that names " \
        "no reservation (name one with --reservation)" in v.reasons, said
    p, said = placed("#SBATCH -t 1:00:00 --qos=other", site)
    assert starts_in(p) == 0, said


# ---- memory that is not a consumable resource ---------------------------------------------

def _memory_full(config: str):
    """batch's six nodes each run an 8-CPU job (ending at +6 h) that holds nearly all of
    the node's memory."""
    jobs = [running(f"30{i}", n, 8, 6) for i, n in enumerate(
        ("a01", "a02", "a03", "a04", "b01", "b02"))]
    site = vega(*jobs, held={n: (8, 0) for n in ("a01", "a02", "a03", "a04", "b01", "b02")},
                config=config)
    cfg, snap = site
    nodes = [n.model_copy(update={"memory_allocated": n.memory_mb - 10000})
             if n.name[0] in "ab" else n for n in snap.nodes]
    return cfg, snap.model_copy(update={"nodes": nodes})


@pytest.mark.parametrize("params, hours_", [("CR_CORE_MEMORY", 6), ("CR_CORE", 0),
                                            ("CR_CPU,CR_ONE_TASK_PER_CORE", 0)])
def test_memory_held_by_running_jobs_counts_only_where_memory_is_consumable(
        params: str, hours_: int):
    """The job asks 64000 MB on batch; each node has 10000 MB left as jobs hold it. Under
    CR_Core_Memory it waits for those jobs' end, +6 h; under CR_Core or CR_CPU Slurm does
    not count memory as a resource jobs hold, so the job starts now (before: +6 h)."""
    p, said = placed("#SBATCH -p batch -c 4 --mem=64000 -t 1:00:00",
                     _memory_full(f"SelectTypeParameters    = {params}\n"))
    assert starts_in(p) == hours_, said
    assert any("memory is not a consumable resource here" in n
               for n in notes(p)) == (hours_ == 0), said


# ---- EnforcePartLimits ----------------------------------------------------------------------

@pytest.mark.parametrize("enforce", ["ANY", "NO", "ALL"])
def test_enforce_part_limits_all_refuses_a_job_past_one_named_partitions_limit(enforce: str):
    """-p batch,gpu -N 3: gpu allows 2 nodes a job, batch 4. Under ANY (and NO) the job
    runs in batch, now; under ALL sbatch refuses it for gpu's MaxNodes (before: placed now
    in batch)."""
    p, said = placed("#SBATCH -p batch,gpu -N 3 -c 8 -t 2:00:00",
                     vega(config=f"EnforcePartLimits       = {enforce}\n"))
    v = p.verdict("vega")
    if enforce != "ALL":
        assert (v.partition, starts_in(p)) == ("batch", 0), said
        return
    # a job naming no partition goes to one that takes it (the engine names that one)
    p, said = placed("#SBATCH -N 3 -c 8 -t 2:00:00",
                     vega(config=f"EnforcePartLimits       = {enforce}\n"))
    assert (p.verdict("vega").partition, starts_in(p)) == ("batch", 0), said
    assert v.estimated_start is None, said
    assert v.reasons == [
        "EnforcePartLimits=ALL: sbatch refuses a job past the limits of any partition it "
        "names, though another could run it (partition gpu: its 3 nodes are more than "
        "MaxNodes 2); name only those whose limits it meets"], said


# ---- what Slurm's backfill keeps a slot for ----------------------------------------------

# a01-a04 end at +6 h, b01-b02 at +8 h (test_placement_cases28's CPU_FULL)
CPU_FULL = [running(f"10{i}", n, 48 if n[0] == "a" else 128, 6 if n[0] == "a" else 8)
            for i, n in enumerate(("a01", "a02", "a03", "a04", "b01", "b02"))]
ALL_CPUS = whole("a01", "a02", "a03", "a04", "b01", "b02")


def test_a_waiting_job_of_a_no_reserve_qos_keeps_no_slot_ahead_of_the_job():
    """500 (carol, QOS normal) waits for a01-a04 whole, 4 h, from +6 h: the 1-node job fits
    on a01-a04 at +6 h only by delaying it, so it starts at +8 h on b01. Under a QOS of
    flag NoReserve (scav) 500 keeps no slot: the job goes first, at +6 h (before: +8 h)."""
    jobs = [*CPU_FULL, waiting("500", "Resources", cpus=192, count=4)]
    job = "#SBATCH -p batch -c 48 -t 1:00:00"
    base = dict(held=ALL_CPUS, qos=qos("normal") + qos("scav", Flags="NoReserve"))
    p, said = placed(job, vega(*jobs, **base, queue_qos="500|normal|proj|OK\n"))
    assert starts_in(p) == 8, said
    p, said = placed(job, vega(*jobs, **base, queue_qos="500|scav|proj|OK\n"))
    assert starts_in(p) == 6, said
    assert "partition batch: Slurm's backfill keeps no slot for 1 waiting job ahead (QOS " \
        "scav NoReserve): they start only where they delay no job that keeps one, so the " \
        "job is planned before them" in notes(p), said


@pytest.mark.parametrize("age, hours_", [(3600, 8), (3 * 3600, 6)])
def test_bf_min_age_reserve_leaves_a_job_waiting_less_no_slot(age: int, hours_: int):
    """500 (as above) was submitted 2 h ago. bf_min_age_reserve=3600: it has waited long
    enough to keep its slot, the job starts at +8 h; 10800: it keeps none yet, the job goes
    first at +6 h (before: +8 h), and the job itself keeps none until it has waited that
    long (said)."""
    jobs = [*CPU_FULL, waiting("500", "Resources", cpus=192, count=4)]
    p, said = placed("#SBATCH -p batch -c 48 -t 1:00:00", vega(
        *jobs, held=ALL_CPUS, config=f"SchedulerParameters = bf_min_age_reserve={age}\n"))
    assert starts_in(p) == hours_, said
    assert any("(waiting less than bf_min_age_reserve 3:00:00)" in n
               for n in notes(p)) == (hours_ == 6), said
    assert any("the job keeps no slot in Slurm's backfill plan (none until it has waited "
               "bf_min_age_reserve" in n for n in notes(p)), said
    # a job that starts now needs no slot: not said
    p, said = placed("#SBATCH -p bigmem -c 4 -t 1:00:00", vega(
        *jobs, held=ALL_CPUS, config=f"SchedulerParameters = bf_min_age_reserve={age}\n"))
    assert starts_in(p) == 0 and not any("keeps no slot" in n for n in notes(p)), said


def test_bf_min_prio_reserve_leaves_a_lower_priority_waiting_job_no_slot():
    """test_placement_cases28's fair share case: at a share of 0.01 the job (~100) is
    behind 406 (sprio 5000, 4 whole nodes), +7 h. bf_min_prio_reserve=6000: 406 keeps no
    slot, the job goes first at +3 h (before: +7 h); it keeps none itself either, said."""
    jobs = [running("800", "a01", 48, 3), running("801", "a02", 48, 3), *CPU_FULL[4:],
            waiting("406", "Priority", cpus=192, count=4)]
    for params, at_h in (("bf_window=1440", 7), ("bf_window=1440,bf_min_prio_reserve=6000", 3)):
        site = vega(*jobs, held=whole("a01", "a02", "b01", "b02"),
                    config=PRIORITY_CONFIG + f"SchedulerParameters = {params}\n",
                    job_priorities="406|5000|batch\n",
                    priority_factors="#sshare\nproj|alice|0.010000|1.000000\n#qos\nnormal|0\n"
                                     "#default_account\nproj\n")
        p, said = placed("#SBATCH -p batch -N 4 --exclusive -t 1:00:00", site)
        assert starts_in(p) == at_h, (params, said)
        own = [n for n in notes(p) if "the job keeps no slot in Slurm's backfill plan" in n]
        assert bool(own) == (at_h == 3), said
        if own:
            assert "is below bf_min_prio_reserve 6000" in own[0], said


def test_bf_max_job_part_passes_the_job_over_while_its_partition_has_that_many_waiting():
    """a01 is free; three jobs wait in batch for b01-b02 whole (free at +8 h, then each 4 h
    later). The 4-CPU job fits a01 now; with bf_max_job_part=2 the backfill tests only two
    of batch's waiting jobs, the job among them once only one other waits: the second
    starts at +12 h (before: now)."""
    jobs = [*CPU_FULL[1:], *(waiting(f"60{i}", "Resources", cpus=256, count=2)
                             for i in range(3))]
    held = whole("a02", "a03", "a04", "b01", "b02")
    job = "#SBATCH -p batch -c 4 -t 1:00:00"
    p, said = placed(job, vega(*jobs, held=held, config="SchedulerParameters = "
                                                          "bf_max_job_part=5\n"))
    assert starts_in(p) == 0, said
    p, said = placed(job, vega(*jobs, held=held, config="SchedulerParameters = "
                                                          "bf_max_job_part=2\n"))
    assert starts_in(p) == 12, said
    assert any(n.startswith("partition batch: Slurm's backfill tests at most 2 waiting jobs "
                            "of a partition (bf_max_job_part) and 3 wait ahead of it in batch")
               for n in notes(p)), said


@pytest.mark.parametrize("priorities, at_h", [((5000, 5000, 5000), 12), ((5000, 10, 10), 0),
                                              ((5000, 5000, 10), 8)])
def test_bf_max_job_part_counts_only_the_jobs_of_a_higher_priority(priorities, at_h):
    """As above under multifactor (the job's priority ~100): the backfill tests batch's
    waiting jobs in priority order, so with two of the three below the job only one is
    tested before it and it starts now (before: every waiting job of batch was counted,
    +12 h); two above it pass it over until the first of them starts, +8 h (before:
    +12 h)."""
    jobs = [*CPU_FULL[1:], *(waiting(f"60{i}", "Resources", cpus=256, count=2)
                             for i in range(3))]
    p, said = placed("#SBATCH -p batch -c 4 -t 1:00:00", vega(
        *jobs, held=whole("a02", "a03", "a04", "b01", "b02"),
        config=PRIORITY_CONFIG + "SchedulerParameters = bf_max_job_part=2\n",
        job_priorities="".join(f"60{i}|{n}|batch\n" for i, n in enumerate(priorities)),
        priority_factors="#sshare\nproj|alice|0.010000|1.000000\n#qos\nnormal|0\n"))
    assert starts_in(p) == at_h, said
    ahead = sum(n > 100 for n in priorities)
    assert any(f"of a partition (bf_max_job_part) and {ahead} wait ahead of it in batch" in n
               for n in notes(p)) == (at_h > 0), said


@pytest.mark.parametrize("resolution, at_h", [(None, 5.25), ("900", 5.25), ("3600", 6)])
def test_bf_resolution_puts_a_backfill_start_on_its_grid(resolution: str | None,
                                                         at_h: float):
    """a01's job ends at 14:15 (+5 h 15 min), the rest at +6 h or later: the job starts
    then; with bf_resolution=3600 Slurm's plan keeps times on the hour, so 15:00, +6 h
    (before: +5 h 15 min); 900 s keeps 14:15."""
    jobs = [running("100", "a01", 48, 5.25), *CPU_FULL[1:]]
    config = f"SchedulerParameters = bf_resolution={resolution}\n" if resolution else ""
    p, said = placed("#SBATCH -p batch -c 48 -t 1:00:00",
                     vega(*jobs, held=ALL_CPUS, config=config))
    assert starts_in(p) == at_h, said
    assert any("bf_resolution=3600" in n for n in notes(p)) == (at_h == 6), said


# ---- Grid Engine: a queue's qtype, projects and xprojects --------------------------------

# s2 runs a 16-slot job of bob's for 3 h more; s1 is free
S2_BUSY = {"s2": [_ge_entry("7", "bob", 16, 3)]}


def test_a_queue_instance_whose_qtype_lacks_batch_never_runs_a_qsub_job():
    """all.q's qtype is BATCH INTERACTIVE but INTERACTIVE alone on s1: a batch job never
    goes there, so the 4-slot job waits for s2's job, +3 h (before: now on s1), and is told
    why; INTERACTIVE on every host: refused."""
    site = _ge_site(jobs=S2_BUSY, queue_conf="qtype BATCH INTERACTIVE,[s1=INTERACTIVE]\n")
    assert site[1].partitions[0].no_batch_hosts == ["s1"]
    v = run(_smp(4), site).verdict("delta")
    assert v.estimated_start == NOW + timedelta(hours=3), (v.reasons, v.notes)
    assert "queue all.q: its instances on s1 never run the job (takes no batch jobs (its " \
        "qtype, qconf -sq, is INTERACTIVE or NONE there): a qsub job is never scheduled " \
        "to it): passed over" in v.notes, v.notes
    v = run(_smp(4), _ge_site(queue_conf="qtype INTERACTIVE\n")).verdict("delta")
    assert v.estimated_start is None and any("all.q takes no batch jobs" in r
                                             for r in v.reasons), v.reasons
    v = run(_smp(4), _ge_site(queue_conf="qtype BATCH INTERACTIVE\n")).verdict("delta")
    assert v.estimated_start == NOW, v.reasons


@pytest.mark.parametrize("asks, conf, starts", [
    ("", "projects proj1\n", False),                     # names no project: refused
    ("#$ -P proj1\n", "projects proj1\n", True),
    ("#$ -P proj2\n", "projects NONE\nxprojects proj2\n", False),
    ("#$ -P proj1\n", "projects NONE\nxprojects proj2\n", True)])
def test_a_queues_projects_and_xprojects_decide_whose_jobs_it_runs(asks: str, conf: str,
                                                                   starts: bool):
    """all.q with `projects proj1` runs only proj1's jobs (a job of none is refused, told
    to give -P); `xprojects proj2` refuses proj2's (before: placed now, the lists not
    read)."""
    v = run(asks + _smp(4), _ge_site(queue_conf=conf)).verdict("delta")
    assert (v.estimated_start == NOW) == starts, (v.reasons, v.notes)
    if not starts:
        assert any(r.startswith("queue all.q ") and "projects" in r for r in v.reasons), \
            v.reasons
        assert any("give one with -P" in r for r in v.reasons) == (not asks), v.reasons


# ---- --contiguous -------------------------------------------------------------------------

def test_contiguous_nodes_wait_for_a_run_of_adjacent_nodes():
    """a01 and a03 are free, a02 and a04 busy until +6 h, b01-b02 until +8 h: two nodes
    start now on a01 and a03; --contiguous asks two adjacent in Slurm's node order (a01-a04,
    b01, b02 ...), the first such run free is a01-a02 or a02-a03 at +6 h (before: now)."""
    jobs = [running("100", "a02", 48, 6), running("101", "a04", 48, 6), *CPU_FULL[4:]]
    site = vega(*jobs, held=whole("a02", "a04", "b01", "b02"))
    p, said = placed("#SBATCH -p batch -N 2 -c 48 -t 1:00:00", site)
    assert starts_in(p) == 0, said
    p, said = placed("#SBATCH -p batch -N 2 -c 48 -t 1:00:00 --contiguous", site)
    assert starts_in(p) == 6, said
    assert "partition batch: --contiguous: its 2 nodes must be adjacent in Slurm's node " \
        "order (as scontrol show node lists them): 5 runs of them can run it, each planned " \
        "apart, the earliest taken" in notes(p), said


def test_contiguous_is_said_not_checked_where_scontrol_show_node_listed_no_nodes():
    """scontrol show node lists nothing: the nodes are made up from the partitions' lists,
    in no order Slurm keeps, so contiguity is not judged on them (before: runs of that
    made-up order were planned and said as Slurm's); --explain says it was not checked."""
    # batch's six nodes of 48 CPUs, as its own line counts them
    parts = "".join(line.replace("TotalCPUs=0 TotalNodes=0", "TotalCPUs=288 TotalNodes=6")
                    if line.startswith("PartitionName=batch ") else line
                    for line in partitions().splitlines(keepends=True))
    p, said = placed("#SBATCH -p batch -N 2 -c 48 -t 1:00:00 --contiguous",
                     vega(nodes="", parts=parts))
    assert starts_in(p) == 0, said
    v = p.verdict("vega")
    assert v is not None and "partition batch: --contiguous: not checked, scontrol show node " \
        "listed no nodes (Slurm's node order is not known): the start is planned as if any " \
        "of its nodes would do" in v.not_checked, said
    assert not any("must be adjacent" in n for n in notes(p)), said
    assert "not checked, scontrol show node listed no nodes" in said


# ---- the real test bed: what its scontrol prints of these --------------------------------

@pytest.mark.testbed
def test_the_test_beds_scontrol_show_config_is_read_for_memory_and_partition_limits(tb):
    """alpha (Slurm 22.05) runs SelectTypeParameters=CR_CPU: memory is no consumable there,
    as read; its EnforcePartLimits line (22.05 prints one, NO unless set) is read too, and
    its SchedulerParameters set none of the backfill limits read here."""
    config = _ctl(base_dir(), cluster("alpha"), "scontrol", "show", "config").stdout
    memory, enforce = SlurmCommands.parse_config_words(config)
    assert memory is False and enforce in ("NO", "ANY", "ALL"), config
    assert SlurmCommands.parse_backfill_limits(config) == {}, config


def test_contiguous_nodes_shared_by_force_start_now_only_on_a_run_of_adjacent_ones():
    """shared (a01-a04, OverSubscribe=FORCE:4), its nodes full until +6 h, starts two nodes
    now by sharing their CPUs. a02 and a04 down: a01 and a03 have that room but are not
    adjacent, so a --contiguous job does not start now (before: now, on a01 and a03); with
    only a02 down, a03-a04 is a run and it starts now on those two."""
    job = "#SBATCH -p shared -N 2 -c 48 -t 1:00:00"
    busy = {"held": whole("a01", "a02", "a03", "a04")}
    apart = vega(*CPU_FULL[:4], states={"a02": "DOWN", "a04": "DOWN"}, **busy)
    p, said = placed(job, apart)
    assert starts_in(p) == 0, said
    p, said = placed(job + " --contiguous", apart)
    assert starts_in(p) > 0, said
    assert "partition shared: --contiguous: its 2 nodes must be adjacent in Slurm's node " \
        "order (as scontrol show node lists them): no 2 of those it may use are adjacent " \
        "(down, drained or other partitions' nodes between them): it does not start there " \
        "until some are" in notes(p), said
    p, said = placed(job + " --contiguous", vega(*CPU_FULL[:4], states={"a02": "DOWN"},
                                                 **busy))
    assert starts_in(p) == 0, said
    assert any(n.startswith("partition shared: it starts now on a03, a04,") for n in notes(p)), \
        said
