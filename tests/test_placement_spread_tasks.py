"""Placement of a job of N tasks with no node count (Slurm `-n N` without `-N` or
`--ntasks-per-node`, Grid Engine `-pe NAME N` of a `$fill_up` rule): the scheduler puts its
tasks wherever room is, so many on one node and the rest on others, and the placer plans
the start when enough task slots are free across the partition's usable nodes, not when
one node has all N CPUs free. A node count, `--ntasks-per-node` or `$pe_slots` keep the
exact shape.

vega's nodes and partitions are test_placement_cases28's: a01-a04 48 CPUs, b01-b02 128
CPUs in batch (at most 4 nodes a job); every case's docstring works its answer out from
them. The Grid Engine cell is the recorded one (dn1 5 of 8 slots free, dn2 3)."""

from __future__ import annotations

import re

import pytest
from test_placement_cases import NOW
from test_placement_cases28 import (
    _KINDS,
    _node,
    notes,
    placed,
    running,
    slurm,
    starts_in,
    vega,
    waiting,
)
from test_placement_cases29 import _cell


def _site(free: dict[str, int], *queued: str):
    """vega's batch nodes each busy with one of bob's jobs to +6 h (a-nodes) or +8 h
    (b-nodes), leaving the CPUs `free` names (none elsewhere); `queued`: squeue lines."""
    jobs, held = [], {}
    for i, n in enumerate(("a01", "a02", "a03", "a04", "b01", "b02")):
        used = _KINDS[n[0]][0] - free.get(n, 0)
        jobs.append(running(f"20{i}", n, used, 6 if n[0] == "a" else 8))
        held[n] = (used, 0)
    return vega(*jobs, *queued, held=held)


def _spread_note(p) -> list[str]:
    return [n for n in notes(p) if " tasks over " in n]


def test_eight_tasks_start_now_over_the_five_and_three_cpus_two_nodes_have_free():
    """a01 has 5 CPUs free, a02 3, the rest of batch is full to +6 h: 8 one-CPU tasks fit
    now, 5 on a01 and 3 on a02; no single node has 8 free before a01's job ends at +6 h."""
    p, said = placed("#SBATCH -p batch -n 8 -t 2:00:00", _site({"a01": 5, "a02": 3}))
    assert starts_in(p) == 0, said
    assert _spread_note(p) == ["spread: 8 tasks over a01 (5) and a02 (3), partition batch, "
                               "at +0:00:00 (no node count asked: its tasks go wherever room "
                               "is)"]
    assert "\n  vega: spread: 8 tasks over a01 (5) and a02 (3), partition batch" in said


@pytest.mark.parametrize("shape", ["-N 1 -n 8", "-n 8 --ntasks-per-node=8", "-c 8"])
def test_a_node_count_or_tasks_a_node_keep_all_eight_cpus_on_one_node(shape):
    """-N 1, --ntasks-per-node=8, or one task of 8 CPUs: the 8 CPUs on one node, which no
    node has free before +6 h (a01-a04's jobs end), whatever is free over two nodes."""
    p, said = placed(f"#SBATCH -p batch {shape} -t 2:00:00", _site({"a01": 5, "a02": 3}))
    assert starts_in(p) == 6, said
    assert _spread_note(p) == [], said


def test_nine_tasks_wait_for_the_first_node_that_frees_and_take_it():
    """8 CPUs free in all now: 9 tasks wait until +6 h, when a01-a04's jobs end; each of
    them then holds all 9: on one node, nothing more to say of where they go."""
    p, said = placed("#SBATCH -p batch -n 9 -t 2:00:00", _site({"a01": 5, "a02": 3}))
    assert starts_in(p) == 6, said
    assert _spread_note(p) == [], said


def test_a_waiting_job_ahead_takes_four_of_the_cpus_until_it_ends():
    """carol's job 300 (one node, 4 CPUs, 4 h), waiting for resources ahead of the new job,
    starts now on a01 (a02's 3 are too few for it): 1 + 3 CPUs are left, too few for 8
    tasks. At +4 h it ends and a01's 5 and a02's 3 take them, ending by +6 h, before a
    node has 8 free anyway."""
    site = _site({"a01": 5, "a02": 3}, waiting("300", "Resources", cpus=4))
    p, said = placed("#SBATCH -p batch -n 8 -t 2:00:00", site)
    assert starts_in(p) == 4, said
    assert "8 tasks over a01 (5) and a02 (3), partition batch, at +4:00:00" in said


def test_the_partition_s_node_limit_bounds_the_nodes_the_tasks_take():
    """a01-a04 and b01 have 2 CPUs free each; batch gives a job at most 4 nodes (MaxNodes):
    8 tasks take a01-a04 now (most room first, the lowest on ties); 10 would need 5 nodes,
    so they wait until +6 h, when a01's job ends and a01 alone holds them."""
    free = {"a01": 2, "a02": 2, "a03": 2, "a04": 2, "b01": 2}
    p, said = placed("#SBATCH -p batch -n 8 -t 2:00:00", _site(free))
    assert starts_in(p) == 0, said
    assert "8 tasks over a01 (2), a02 (2), a03 (2) and a04 (2), partition batch, " \
        "at +0:00:00" in said
    p, said = placed("#SBATCH -p batch -n 10 -t 2:00:00", _site(free))
    assert starts_in(p) == 6, said
    assert _spread_note(p) == [], said


def test_tasks_of_two_cpus_count_whole_tasks_on_each_node():
    """-n 4 -c 2 on a01 (5 free: 2 tasks, 1 CPU left over) and a02 (3 free: 1 task): 3
    tasks fit now, not 4, though 8 CPUs are free; they wait until +6 h."""
    p, said = placed("#SBATCH -p batch -n 4 -c 2 -t 2:00:00", _site({"a01": 5, "a02": 3}))
    assert starts_in(p) == 6, said
    p, said = placed("#SBATCH -p batch -n 3 -c 2 -t 2:00:00", _site({"a01": 5, "a02": 3}))
    assert starts_in(p) == 0, said
    assert "3 tasks over a01 (2) and a02 (1), partition batch, at +0:00:00" in said


@pytest.mark.parametrize("pe, now, over", [
    ("mpi 8", True, "spread: 8 tasks over dn1 (5) and dn2 (3), queue all.q, at +0:00:00"),
    ("smp 8", False, None),  # $pe_slots: all 8 on one host, which none has free
    ("mpi 9", False, "spread: 9 tasks over "),  # 5 + 3 slots free: one too few
])
def test_grid_engine_fill_up_slots_over_both_busy_hosts(pe, now, over):
    """The recorded cell: dn1 5 of 8 slots free, dn2 3. $fill_up (mpi) puts 8 slots there
    now, 5 and 3; $pe_slots (smp) needs 8 on one host; 9 wait for the running jobs."""
    p, said = placed(f"#$ -pe {pe}\n#$ -l h_rt=1:00:00", _cell())
    v = p.verdict("sge")
    assert v.feasible, said
    assert (v.estimated_start == NOW) is now, said
    spread = [n for n in v.notes if " tasks over " in n]
    assert (spread[0].startswith(over) if over else not spread), said



def test_memory_per_node_is_asked_in_full_on_every_node_the_tasks_take():
    """--mem is per node (Slurm), however few of the tasks a node holds: a01 (5 CPUs free,
    106,000 MB) may take tasks of -n 8 --mem=104000, a02 (3 free, 102,000 MB) may not, so
    they wait for a01's job to end at +6 h. --mem-per-cpu=13000 asks 13,000 MB a task:
    both nodes hold theirs now."""
    site = _site({"a01": 5, "a02": 3})
    p, said = placed("#SBATCH -p batch -n 8 --mem=104000 -t 2:00:00", site)
    assert starts_in(p) == 6, said
    assert _spread_note(p) == [], said
    p, said = placed("#SBATCH -p batch -n 8 --mem-per-cpu=13000 -t 2:00:00", site)
    assert starts_in(p) == 0, said
    assert "8 tasks over a01 (5) and a02 (3)" in said


def test_memory_per_cpu_bounds_the_tasks_each_node_holds_now():
    """--mem-per-cpu=30000: each node holds as many one-CPU tasks as 30,000 MB fit in its
    free memory. a01 (5 CPUs free, 106,000 MB free) and a02 (3 free, 102,000 MB) hold 3
    each: 6 tasks start now 3 and 3, not 5 on a01 and 1 on a02. With a02's memory nearly
    all held (1 CPU free, 98,000 MB) only 3 + 1 fit now: they wait for a01's job to end at
    +6 h, when a01 holds all 6 (192,000 MB)."""
    p, said = placed("#SBATCH -p batch -n 6 --mem-per-cpu=30000 -t 2:00:00",
                     _site({"a01": 5, "a02": 3}))
    assert starts_in(p) == 0, said
    assert "6 tasks over a01 (3) and a02 (3), partition batch, at +0:00:00" in said
    p, said = placed("#SBATCH -p batch -n 6 --mem-per-cpu=30000 -t 2:00:00",
                     _site({"a01": 5, "a02": 1}))
    assert starts_in(p) == 6, said
    assert _spread_note(p) == [], said


def test_a_nodes_whole_memory_bounds_its_tasks_once_it_is_free():
    """20 tasks of 30,000 MB: when a01-a04's jobs end at +6 h each holds 6 of them
    (192,000 MB, though 48 CPUs): 6, 6, 6 and 2 over the four nodes batch allows a job, not
    all 20 on a01. With the a-nodes excluded, b01 and b02 (512,000 MB: 17 tasks each, though
    128 CPUs) take them when their jobs end at +8 h: 17 on b01 and 3 on b02."""
    p, said = placed("#SBATCH -p batch -n 20 --mem-per-cpu=30000 -t 2:00:00", _site({}))
    assert starts_in(p) == 6, said
    assert "20 tasks over a01 (6), a02 (6), a03 (6) and a04 (2), partition batch, " \
        "at +6:00:00" in said
    p, said = placed("#SBATCH -p batch -n 20 --mem-per-cpu=30000 -t 2:00:00 "
                     "--exclude=a01,a02,a03,a04", _site({}))
    assert starts_in(p) == 8, said
    assert "20 tasks over b01 (17) and b02 (3), partition batch, at +8:00:00" in said
    assert "memory unknown" not in said


def test_grid_engine_hosts_with_no_memory_count_say_memory_unknown():
    """The recorded cell has no h_vmem consumable: how much memory its hosts have free is
    not known, so -l h_vmem=1G per slot puts 8 slots over dn1 (5) and dn2 (3) by their free
    slots alone, and says so; a job asking no memory says nothing of it."""
    p, said = placed("#$ -pe mpi 8\n#$ -l h_rt=1:00:00,h_vmem=1G", _cell())
    spread = [n for n in p.verdict("sge").notes if " tasks over " in n]
    assert spread == ["spread: 8 tasks over dn1 (5) and dn2 (3), queue all.q, at +0:00:00 "
                      "(no node count asked: its tasks go wherever room is; memory unknown "
                      "on dn1, dn2: its tasks there counted by CPUs alone)"], said
    p, said = placed("#$ -pe mpi 8\n#$ -l h_rt=1:00:00", _cell())
    assert "memory unknown" not in said


def test_grid_engine_h_vmem_left_on_each_host_bounds_its_slots():
    """The recorded cell with h_vmem a host consumable of 16,000 MB a host: dn1 (5 slots
    free) has 4,000 MB of it left, dn2 (3 free) 6,000 MB. 6 slots of -l h_vmem=1G (1,024
    MB a slot) go 3 on dn1 (its h_vmem) and 3 on dn2 (its slots), not 5 and 1."""
    cfg, snap = _cell()
    left = {"dn1": 4000, "dn2": 6000}
    nodes = [n.model_copy(update={
        "memory_mb": 16000, "memory_allocated": 16000 - left[n.name],
        "consumables_left": {"h_vmem": left[n.name] * 2.0 ** 20},
        "consumables_total": {"h_vmem": 16000 * 2.0 ** 20}}) for n in snap.nodes]
    site = (cfg, snap.model_copy(update={"nodes": nodes}))
    p, said = placed("#$ -pe mpi 6\n#$ -l h_rt=1:00:00,h_vmem=1G", site)
    assert p.verdict("sge").estimated_start == NOW, said
    assert "spread: 6 tasks over dn1 (3) and dn2 (3), queue all.q, at +0:00:00 (no node " \
        "count asked: its tasks go wherever room is)" in said


def _b_nodes_busy(*queued: str):
    """vega with b01 and b02 (512,000 MB) each wholly held by one of bob's jobs to +8 h,
    a01-a04 (48 CPUs, 192,000 MB) idle."""
    return vega(running("201", "b01", 128, 8), running("202", "b02", 128, 8), *queued,
                held={"b01": (128, 0), "b02": (128, 0)})


def test_nodes_that_hold_one_task_but_not_all_take_part_under_memory_per_cpu():
    """-n 8 --mem-per-cpu=30000 asks 240,000 MB were all 8 on one node, which only the
    b-nodes have (512,000 MB); each idle a-node (192,000 MB) holds 6 of them: the tasks
    start now over a01 (6) and a02 (2), not at +8 h when a b-node frees."""
    p, said = placed("#SBATCH -p batch -n 8 --mem-per-cpu=30000 -t 2:00:00", _b_nodes_busy())
    assert starts_in(p) == 0, said
    assert "8 tasks over a01 (6) and a02 (2), partition batch, at +0:00:00" in said
    p, said = placed("#SBATCH -p shared -n 8 --mem-per-cpu=30000 -t 2:00:00", _b_nodes_busy())
    assert starts_in(p) == 0, said  # shared holds a-nodes only: no node holds all 8


def test_a_task_no_node_holds_is_refused_per_task_in_explain():
    """--mem-per-cpu=200000: not one task fits a 192,000 MB a-node, so partition shared
    (a-nodes only) cannot run it, and explain says so of one task; batch's b-nodes hold
    two each: the job runs there."""
    p, said = placed("#SBATCH -p shared -n 2 --mem-per-cpu=200000 -t 2:00:00", vega())
    v = p.verdict("vega")
    assert not v.feasible, said
    assert "needs 200000 MB memory per task (its tasks go over any nodes), largest node has " \
        "192000 MB" in said
    p, said = placed("#SBATCH -p batch -n 2 --mem-per-cpu=200000 -t 2:00:00", vega())
    assert starts_in(p) == 0, said
    assert "2 tasks over " not in said  # b01 holds both


def _alloc_unknown(site, host: str, cpus_used: int):
    """`site` with `host` (`cpus_used` of its CPUs allocated) read from a scontrol line
    without AllocMem: its memory given, not what its jobs hold."""
    cfg, snap = site
    line = re.sub(r" AllocMem=[0-9]+", "", _node(host, cpus_used, 0, "MIXED"))
    nodes = [slurm.parse_nodes(line)[0] if n.name == host else n for n in snap.nodes]
    return cfg, snap.model_copy(update={"nodes": nodes})


def test_allocated_memory_unknown_is_said_not_taken_as_all_free():
    """a01's line has RealMemory (192,000 MB) but no AllocMem: what its job holds is unknown,
    so its tasks of 30,000 MB are counted by its 5 free CPUs and its whole memory (6 tasks),
    and the spread note says so; a02's known 102,000 MB free hold 3."""
    site = _alloc_unknown(_site({"a01": 5, "a02": 3}), "a01", 43)
    assert [n.memory_allocated_unknown for n in site[1].nodes if n.name in ("a01", "a02")] \
        == [True, False]
    p, said = placed("#SBATCH -p batch -n 6 --mem-per-cpu=30000 -t 2:00:00", site)
    assert starts_in(p) == 0, said
    assert "6 tasks over a01 (5) and a02 (1), partition batch, at +0:00:00 (no node count " \
        "asked: its tasks go wherever room is; allocated memory unknown on a01: its tasks " \
        "there counted by CPUs and the node's whole memory)" in said
    p, said = placed("#SBATCH -p batch -n 6 --mem-per-cpu=30000 -t 2:00:00",
                     _site({"a01": 5, "a02": 3}))
    assert "allocated memory unknown" not in said and "a01 (3) and a02 (3)" in said


def test_sinfo_nodes_give_memory_but_not_what_is_allocated():
    """sinfo's %m is a node's memory; it prints nothing of what its jobs hold."""
    nodes = slurm.parse_sinfo_nodes("a01|mixed|48|192000|(null)|anode|batch*|43/5/0/48|"
                                    "2-00:00:00|1\n")
    assert [(n.memory_mb, n.memory_allocated_unknown) for n in nodes] == [(192000, True)]
