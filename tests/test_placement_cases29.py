"""Placement cases, twenty-ninth sweep: vega (the Slurm 24.05 center of the twenty-eighth,
read whole from what its commands print) in situations no sweep met before: running jobs
past their time limit under OverTimeLimit (a partition's, the site's, UNLIMITED), the
user's own jobs against QOS MaxJobsPerUser and MaxSubmitJobsPerUser, a maintenance
reservation on part of a partition's nodes, licenses all in use, --exclude and --nodelist
across node sizes, --mem=0 and mixed nodes of two sizes, a hidden partition; then Grid
Engine parallel environments on the recorded cell's busy hosts.

vega (test_placement_cases28):
  a01-a04  48 CPUs  192000 MB               batch, shared, standby
  b01-b02 128 CPUs  512000 MB               batch, standby
  g01-g02  64 CPUs  256000 MB 4 A100        gpu, standby
  g03      64 CPUs  256000 MB 2 A100        gpu, standby
  l01-l02 128 CPUs 2048000 MB               bigmem
  batch    default, 2 days, at most 4 nodes a job; shared a01-a04 12 h OverSubscribe=FORCE:4
  gpu 1 day; standby 4 h, PriorityTier 0; bigmem 1 day, 1 node a job
Each case's docstring works its answer out from these numbers."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from test_placement_cases import NOW, at, reservation
from test_placement_cases5 import PE_TEXT
from test_placement_cases25 import qos
from test_placement_cases28 import (
    _KINDS,
    NODES,
    _grid_engine,
    _node,
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

from diamond_jupyter.dialects.sge_commands import SgeCommands
from diamond_jupyter.model import OVER_TIME_UNLIMITED

# b02 full to +8 h, l01-l02 full to +8 h (bigmem): a 96-CPU job has only b01 and b02
B02_L_FULL = [running("102", "b02", 128, 8),
              *(running(f"11{i}", n, 128, 8, partition="bigmem")
                for i, n in enumerate(("l01", "l02")))]
B02_L_HELD = whole("b02", "l01", "l02")


def overdue(**config: str):
    """b01's job 501 is 10 minutes past its 24 h limit (squeue still lists it RUNNING: its
    end time is behind NOW); the rest as B02_L_FULL. `config`: `scontrol show config`
    lines (name: value)."""
    text = "".join(f"{k} = {v}\n" for k, v in config.items())
    return running("501", "b01", 128, -1 / 6), text


def test_the_over_time_limits_and_kill_wait_are_read():
    """A partition's OverTimeLimit (minutes, UNLIMITED, NONE: the site's) and the site's
    OverTimeLimit and KillWait from `scontrol show config`."""
    parts = partitions(batch={"over_time": "60"}, gpu={"over_time": "UNLIMITED"})
    _, snap = vega(parts=parts, config="OverTimeLimit = 20 min\nKillWait = 45 sec\n")
    assert {p.name: p.over_time_s for p in snap.partitions if p.name in ("batch", "gpu",
                                                                         "shared")} == {
        "batch": 3600.0, "gpu": OVER_TIME_UNLIMITED, "shared": None}
    assert (snap.node_timeouts or {}) == {"OverTimeLimit": 1200.0, "KillWait": 45.0}
    _, snap = vega(config="OverTimeLimit = UNLIMITED\n")
    assert snap.node_timeouts == {"OverTimeLimit": OVER_TIME_UNLIMITED}


def test_slurmrestd_partitions_carry_their_over_time_limit():
    """v0.0.39 and later: `maximums.over_time_limit`, minutes wrapped as {set, infinite,
    number}: infinite is UNLIMITED, not set the site's."""
    parts = [_partition_v41(name, _n(60), _n(30)) for name in ("a", "b", "c", "d")]
    for part, limit in zip(parts, ({"set": True, "infinite": False, "number": 60},
                                   {"set": True, "infinite": True, "number": 0},
                                   {"set": False, "infinite": False, "number": 0}),
                           strict=False):
        part["maximums"]["over_time_limit"] = limit
    snap = rest_snapshot(rest_recorded("jobs.json"), json.dumps({"partitions": parts}),
                         "v0.0.41")
    assert [p.over_time_s for p in snap.partitions] == [3600.0, OVER_TIME_UNLIMITED, None,
                                                        None]


def test_a_job_past_its_limit_ends_within_kill_wait_where_no_over_time_is_allowed():
    """OverTimeLimit NONE (the partition's) and unset (the site's): Slurm kills 501 now; its
    end is planned KillWait (30 s by default) ahead, so 96 CPUs start on b01 then."""
    late, _ = overdue()
    p, said = placed("#SBATCH -c 96 -t 2:00:00", vega(late, *B02_L_FULL,
                                                     held={**B02_L_HELD, "b01": (128, 0)}))
    assert (p.verdict("vega").partition, round(starts_in(p) * 3600)) == ("batch", 30), said


def test_a_partitions_over_time_limit_lets_the_late_job_run_on_and_the_job_waits():
    """batch's OverTimeLimit=60: 501 may run 60 minutes past its limit, of which 10 are
    gone, plus KillWait: b01 frees at +50:30, not at +0:30 (before: +0:30, OverTimeLimit
    not read); the note says whose overrun it waits for."""
    late, _ = overdue()
    site = vega(late, *B02_L_FULL, held={**B02_L_HELD, "b01": (128, 0)},
                parts=partitions(batch={"over_time": "60"}, standby={"over_time": "60"}))
    p, said = placed("#SBATCH -c 96 -t 2:00:00", site)
    assert round(starts_in(p) * 3600) == 50 * 60 + 30, said
    assert any("job 501 is 10 min past its time limit; OverTimeLimit 60 min lets it run up "
               "to 50 min more" in n for n in notes(p)), said


def test_the_sites_over_time_limit_and_kill_wait_hold_where_the_partition_says_none():
    """Partition NONE, site OverTimeLimit = 20 min and KillWait = 60 sec: -10 min + 20 min +
    60 s: b01 frees at +11 min."""
    late, config = overdue(OverTimeLimit="20 min", KillWait="60 sec")
    site = vega(late, *B02_L_FULL, held={**B02_L_HELD, "b01": (128, 0)}, config=config)
    p, said = placed("#SBATCH -c 96 -t 2:00:00", site)
    assert round(starts_in(p) * 3600) == 11 * 60, said


def test_an_unlimited_over_time_limit_leaves_the_late_job_its_whole_limit_again():
    """OverTimeLimit=UNLIMITED on batch: Slurm cannot tell when 501 ends and plans it a
    whole time limit (24 h) from now; b02 frees first, at +8 h."""
    late, _ = overdue()
    site = vega(late, *B02_L_FULL, held={**B02_L_HELD, "b01": (128, 0)},
                parts=partitions(batch={"over_time": "UNLIMITED"},
                                 standby={"over_time": "UNLIMITED"}))
    p, said = placed("#SBATCH -c 96 -t 2:00:00", site)
    assert starts_in(p) == 8, said


# ---- nodes out of service until a time (ResumeAfterTime) -----------------------------------

def _out_until(states: dict[str, str], back_h: dict[str, float], *jobs: str,
               held: dict[str, tuple[int, int]] | None = None):
    """vega with `states`, and for the nodes of `back_h` the ResumeAfterTime (hours from
    NOW) and Reason an admin's `scontrol update NodeName=... State=DOWN|DRAIN Reason=...
    ResumeAfter=...` set."""
    held = held or {}
    lines = []
    for n in NODES:
        alloc, gpus = held.get(n, (0, 0))
        line = _node(n, alloc, gpus, states.get(n) or (
            "FUTURE" if n[0] == "f" else "ALLOCATED" if alloc == _KINDS[n[0]][0]
            else "MIXED" if alloc else "IDLE"))
        if n in states:
            line += " Reason=PSU swap [root@2026-03-01T08:00:00]"
        if n in back_h:
            line = line.replace("ResumeAfterTime=None", f"ResumeAfterTime={at(back_h[n])}")
        lines.append(line)
    return vega(*jobs, held=held, nodes="\n".join(lines) + "\n")


def test_a_node_down_until_its_resume_after_time_runs_the_job_then():
    """1500 GB fits only l01-l02: l01 is DOWN until +2 h (ResumeAfterTime), l02 drained for
    good: the job starts on l01 at +2 h, and the note says until when and why (before: both
    out, the job refused as if l01 never came back)."""
    site = _out_until({"l01": "DOWN", "l02": "IDLE+DRAIN"}, {"l01": 2})
    assert [n.resume_after for n in site[1].nodes if n.name == "l01"] == [NOW + timedelta(
        hours=2)]
    p, said = placed("#SBATCH --mem=1500G -t 2:00:00", site)
    assert (p.verdict("vega").partition, starts_in(p)) == ("bigmem", 2), said
    assert "partition bigmem: l01 is out of service (down, PSU swap) until 2026-03-01 11:00 " \
        "(its ResumeAfterTime): Slurm returns it to service then, and no job starts there " \
        "before" in notes(p), said
    p, said = placed("#SBATCH --mem=1500G -t 2:00:00",
                     _out_until({"l01": "DOWN", "l02": "IDLE+DRAIN"}, {}))
    assert p.choice is None, said


def test_a_resume_after_time_already_past_when_the_node_was_seen_down_is_not_trusted():
    """l01 read DOWN at NOW with a ResumeAfterTime 3 h before it: Slurm did not return it
    then, so nothing says it comes back: the job is refused as without the time, and no
    note says "until" a past hour (before: READY now on the DOWN node). Read DOWN at -2 h
    with the time at -1 h (a view that old), it is back by now: the job starts now."""
    down = {"l01": "DOWN", "l02": "IDLE+DRAIN"}
    p, said = placed("#SBATCH --mem=1500G -t 2:00:00", _out_until(down, {"l01": -3}))
    assert p.choice is None, said
    assert not [n for n in notes(p) if "ResumeAfterTime" in n], said
    cfg, snap = _out_until(down, {"l01": -1})
    old = (cfg, snap.model_copy(update={"taken_at": NOW - timedelta(hours=2)}))
    p, said = placed("#SBATCH --mem=1500G -t 2:00:00", old)
    assert (p.verdict("vega").partition, starts_in(p)) == ("bigmem", 0), said


def test_a_drained_node_back_in_an_hour_beats_its_busy_twin():
    """b01 drained until +1 h, b02 busy to +8 h: 96 CPUs in batch start at +1 h on b01."""
    site = _out_until({"b01": "IDLE+DRAIN"}, {"b01": 1}, running("102", "b02", 128, 8),
                      held=whole("b02"))
    p, said = placed("#SBATCH -p batch -c 96 -t 2:00:00", site)
    assert starts_in(p) == 1, said


# ---- the user's own jobs against a QOS's per-user counts -----------------------------------

def _alice_runs(*, limits: dict[str, str], pending: int = 0):
    """alice runs 501 on a01 (ends +2 h) and 502 on a02 (+5 h), 8 CPUs each, and has
    `pending` jobs waiting (Priority); bob runs 503 on a03 to +1 h. All under QOS normal."""
    jobs = [running("501", "a01", 8, 2, user="alice"), running("502", "a02", 8, 5,
                                                               user="alice"),
            running("503", "a03", 8, 1),
            *(waiting(f"60{i}", "Priority", cpus=400, count=4, user="alice")
              for i in range(pending))]
    ids = ["501", "502", "503", *(f"60{i}" for i in range(pending))]
    return vega(*jobs, held={"a01": (8, 0), "a02": (8, 0), "a03": (8, 0)},
                queue_qos="".join(f"{j}|normal|proj|OK|R|N/A|N/A|N/A|N/A|1|*|(null)|"
                                  "(null)|\n" for j in ids),
                qos=qos("normal", **limits))


def test_max_jobs_per_user_counts_only_the_users_own_jobs_and_waits_for_the_first_end():
    """MaxJobsPerUser=2: alice's 501 and 502 run (bob's 503 is not hers): nodes are idle,
    but her third waits for 501's end, +2 h; at 3 it starts now."""
    p, said = placed("#SBATCH -c 4 -t 1:00:00", _alice_runs(limits={"MaxJobsPerUser": "2"}))
    assert starts_in(p) == 2, said
    assert p.verdict("vega").waits_for == [
        "QOS normal's MaxJobsPerUser is 2 and 2 of your jobs run under it: it waits until "
        "one of them ends (QOSMaxJobsPerUserLimit)"], said
    p, said = placed("#SBATCH -c 4 -t 1:00:00", _alice_runs(limits={"MaxJobsPerUser": "3"}))
    assert starts_in(p) == 0, said


def test_max_submit_jobs_per_user_counts_her_waiting_jobs_too_and_refuses_the_submit():
    """MaxSubmitJobsPerUser=3: her 2 running and 1 waiting make 3: sbatch refuses a fourth
    (QOSMaxSubmitJobPerUserLimit), the fix to wait for one to end is said; with 2 queued
    the job is taken."""
    p, said = placed("#SBATCH -c 4 -t 1:00:00",
                     _alice_runs(limits={"MaxSubmitJobsPerUser": "3"}, pending=1))
    assert p.choice is None and p.verdict("vega").verdict == "RESTRICTED", said
    assert "QOS normal's MaxSubmitJobsPerUser is 3 and you have 3 jobs queued or running " \
        "under it: the submit is refused until one ends (QOSMaxSubmitJobPerUserLimit)" \
        in p.verdict("vega").reasons, said
    p, said = placed("#SBATCH -c 4 -t 1:00:00",
                     _alice_runs(limits={"MaxSubmitJobsPerUser": "3"}))
    assert p.choice == "vega", said


# ---- a maintenance reservation on part of a partition's nodes ------------------------------

MAINT = reservation("maint_a", "a[01-02]", 3, 7, "MAINT,IGNORE_JOBS,SPEC_NODES",
                    node_count=2, cores=96)


@pytest.mark.parametrize("script, at_h", [
    ("-N 2 -t 5:00:00", 0),   # a03-a04 are outside it
    ("-N 3 -t 2:00:00", 0),   # ends at +2 h, before it begins
    ("-N 3 -t 5:00:00", 7),   # a third node must be a01 or a02: after it, +7 h
    ("-N 3 -t 3:00:00", 0),   # ends just as it begins
])
def test_a_maintenance_of_two_of_the_partitions_nodes_bounds_only_jobs_needing_them(
        script, at_h):
    """maint_a holds a01-a02 from +3 h to +7 h; b01-b02 and the bigmem nodes run to +8 h.
    Jobs of 2 nodes take a03-a04 at once; 3 nodes need a01 or a02 and start now only if
    they end by +3 h."""
    site = vega(*(running(f"10{i}", n, 128, 8) for i, n in enumerate(("b01", "b02"))),
                held=whole("b01", "b02"), reservations=MAINT)
    p, said = placed(f"#SBATCH -p batch {script}", site)
    assert starts_in(p) == at_h, said
    if at_h:
        assert any("maint_a" in n for n in notes(p)), said


# ---- licenses all in use ------------------------------------------------------------------

def _licensed():
    """matlab: 4 in all, all used: 601 (a01, ends +2 h) and 602 (a02, +5 h) hold 2 each."""
    return vega(running("601", "a01", 8, 2), running("602", "a02", 8, 5),
                held={"a01": (8, 0), "a02": (8, 0)},
                licenses="LicenseName=matlab Total=4 Used=4 Free=0 Reserved=0 Remote=no\n",
                queue_qos="".join(f"{j}|normal|proj|OK|R|N/A|N/A|N/A|N/A|1|*|matlab:2|"
                                  "(null)|\n" for j in ("601", "602")))


@pytest.mark.parametrize("asked, at_h", [("matlab:2", 2), ("matlab:3", 5), ("matlab", 2)])
def test_licenses_all_in_use_wait_for_the_jobs_holding_them(asked, at_h):
    """Every node has room; 2 licenses come back at +2 h, 4 at +5 h."""
    p, said = placed(f"#SBATCH -c 4 -t 1:00:00 -L {asked}", _licensed())
    assert starts_in(p) == at_h, said


def test_more_licenses_than_the_site_has_are_refused_with_its_count():
    p, said = placed("#SBATCH -c 4 -t 1:00:00 -L matlab:5", _licensed())
    assert p.choice is None, said
    assert any("5 of license 'matlab' asked, the site has 4 in all" in r
               for r in p.verdict("vega").reasons), said


# ---- --exclude and --nodelist across node sizes --------------------------------------------

def test_excluding_the_big_batch_nodes_sends_96_cpus_to_bigmem():
    """-x b[01-02]: only l01-l02 have 96 CPUs; bigmem takes it now."""
    p, said = placed("#SBATCH -c 96 -t 2:00:00 -x b[01-02]")
    assert (p.verdict("vega").partition, starts_in(p)) == ("bigmem", 0), said


def test_a_nodelist_waits_for_its_busy_node_while_its_twin_is_idle():
    """-w b02 (busy to +8 h) while b01 is idle: the job waits for b02."""
    site = vega(running("102", "b02", 128, 8), held=whole("b02"))
    p, said = placed("#SBATCH -c 8 -t 2:00:00 -w b02", site)
    assert (p.verdict("vega").partition, starts_in(p)) == ("batch", 8), said


def test_a_nodelist_of_nodes_no_partition_holds_together_is_refused():
    """-w a01,g01: batch has a01 but not g01, gpu g01 but not a01, standby both (4 h)."""
    p, said = placed("#SBATCH -N 2 -t 8:00:00 -w a01,g01")
    assert p.choice is None, said
    p, said = placed("#SBATCH -N 2 -t 2:00:00 -w a01,g01")
    assert p.verdict("vega").partition == "standby", said


# ---- --mem=0 and mixed nodes of two sizes --------------------------------------------------

def test_mem_zero_takes_a_node_with_no_memory_in_use_of_whichever_size():
    """--mem=0 asks all of a node's memory: a01-a04 and b01 each run an 8-CPU job (a-nodes
    to +3 h, b01 to +6 h), b02 is idle: it runs on b02 now; with b02 busy to +8 h too, on
    the first a-node to empty, +3 h."""
    jobs = [*(running(f"20{i}", f"a0{i + 1}", 8, 3) for i in range(4)),
            running("205", "b01", 8, 6)]
    held = {**{f"a0{i + 1}": (8, 0) for i in range(4)}, "b01": (8, 0)}
    p, said = placed("#SBATCH -p batch -c 4 --mem=0 -t 1:00:00", vega(*jobs, held=held))
    assert starts_in(p) == 0, said
    site = vega(*jobs, running("206", "b02", 8, 8), held={**held, "b02": (8, 0)})
    p, said = placed("#SBATCH -p batch -c 4 --mem=0 -t 1:00:00", site)
    assert starts_in(p) == 3, said


@pytest.mark.parametrize("cpus, at_h", [(8, 0), (28, 0), (40, 4), (100, 4)])
def test_mixed_nodes_of_two_sizes_take_what_fits_their_free_cpus(cpus, at_h):
    """a01-a04 have 40 of 48 CPUs taken to +6 h, b01 100 of 128 to +4 h, b02 all to +8 h:
    8 CPUs fit an a-node now, 28 fit b01 now; 40 and 100 fit no node now and b01 first,
    empty at +4 h (the a-nodes hold 48 at most, free at +6 h)."""
    jobs = [*(running(f"30{i}", f"a0{i + 1}", 40, 6) for i in range(4)),
            running("305", "b01", 100, 4), running("306", "b02", 128, 8)]
    held = {**{f"a0{i + 1}": (40, 0) for i in range(4)}, "b01": (100, 0), "b02": (128, 0)}
    p, said = placed(f"#SBATCH -p batch -c {cpus} -t 1:00:00", vega(*jobs, held=held))
    assert starts_in(p) == at_h, said


# ---- a hidden partition ---------------------------------------------------------------------

def _with_hidden_debug():
    """debug: a01-a02, 1 h, Hidden=YES; batch, shared and standby full to +6 h."""
    parts = partitions(shared={"oversubscribe": "NO"}) + partitions().splitlines()[0].replace(
        "PartitionName=batch", "PartitionName=debug").replace(
        "Hidden=NO", "Hidden=YES").replace("Default=YES", "Default=NO").replace(
        "Nodes=a[01-04],b[01-02]", "Nodes=a[01-02]").replace(
        "MaxTime=2-00:00:00", "MaxTime=01:00:00").replace("PriorityTier=1", "PriorityTier=5")
    return parts


def test_a_hidden_partition_takes_only_a_job_that_names_it():
    """Every node is full, a-nodes to +6 h, the others to +8 h; debug (hidden,
    PriorityTier 5) shares a01-a02 with batch, but a job there must name it: unnamed it
    waits +6 h; named, it too waits for a01's end, as its nodes are batch's."""
    parts = {"a": "batch", "b": "batch", "g": "gpu", "l": "bigmem"}
    jobs = [running(f"1{i:02d}", n, _KINDS[n[0]][0], 6 if n[0] == "a" else 8,
                    partition=parts[n[0]], gpus=(2 if n == "g03" else 4) if n[0] == "g" else 0)
            for i, n in enumerate(NODES[:11])]
    site = vega(*jobs, held=whole(*NODES[:11]), parts=_with_hidden_debug())
    assert [p.hidden for p in site[1].partitions if p.name == "debug"] == [True]
    p, said = placed("#SBATCH -N 1 -t 0:30:00", site)
    assert p.verdict("vega").partition != "debug" and starts_in(p) == 6, said
    p, said = placed("#SBATCH -p debug -N 1 -t 0:30:00", site)
    assert (p.verdict("vega").partition, starts_in(p)) == ("debug", 6), said


# ---- Grid Engine parallel environments on busy hosts ----------------------------------------

def _cell():
    """The recorded cell: dn1 5 of 8 slots free, dn2 3 free; its queues offer PEs smp
    ($pe_slots) and mpi ($fill_up)."""
    cfg, snap = _grid_engine()
    rules = SgeCommands().parse_snapshot("sge", {"pe_rules": PE_TEXT}).pe_rules
    return cfg, snap.model_copy(update={"pe_rules": rules,
                                        "parallel_environments": list(rules or {})})


@pytest.mark.parametrize("pe, now", [("smp 4", True), ("smp 5", True), ("smp 6", False),
                                     ("mpi 9", False)])
def test_grid_engine_pe_slots_on_busy_hosts(pe, now):
    """$pe_slots needs all on one host: 5 fit dn1 now, 6 do not; $fill_up has 5 + 3 = 8
    slots free now over both hosts: 9 wait."""
    p, said = placed(f"#$ -pe {pe}\n#$ -l h_rt=1:00:00", _cell())
    v = p.verdict("sge")
    assert v.feasible, said
    assert (v.estimated_start == NOW) is now, said
