"""Placement gaps closed in session 38, each case failing before:

- a Slurm job of tasks and feature counts but no `-N` (`-n 64 -C '[a100*2&ib*1]'`) takes
  the larger of its tasks' fewest nodes and the counts' nodes, as Slurm gives it, and is
  judged on that many nodes in each partition (MaxNodes);
- a multifactor weight `scontrol show config` did not print, or printed as no weight, is
  said per factor in the site's not-checked lines, once a site;
- an SWF header MaxProcs of a fraction or of no number is said, naming the line and what
  sized the machine instead (before: taken as its leading digits, or left out unsaid).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from sweep_helpers import save_swf
from test_placement_cases24 import PARTITIONS, lyra, run
from test_placement_slurm_new_job_priority import CONFIG, FOUR, factors, selene
from test_swf_unseen16 import _jobs

from diamond_jupyter.testbed.trace import read_swf

# ---- feature counts without -N -------------------------------------------------------------


def test_counts_beyond_the_tasks_nodes_take_more_nodes_than_a_partition_allows():
    """64 tasks fit one 64-CPU node, but [a100*2&ib*1] takes 3 nodes of their own: gpu
    (MaxNodes 2) cannot run it, standby (A100 and ib nodes, no node cap) can. Before: gpu,
    planned on one node."""
    v = run("#SBATCH -n 64 -C '[a100*2&ib*1]' -t 1:00:00", lyra()).verdict("lyra")
    assert v.feasible and v.partition == "standby", v
    assert "needs 3 nodes (constraint '[a100*2&ib*1]' takes 3), partition gpu allows at " \
           "most 2" in v.notes, v.notes


def test_a_single_count_without_n_takes_its_nodes():
    """-C 'v100*3' of one task: 3 V100 nodes (legacy), more than bigmem's one a job."""
    v = run("#SBATCH -n 1 -C 'v100*3' -t 1:00:00", lyra()).verdict("lyra")
    assert v.feasible and v.partition == "legacy", v
    assert "needs 3 nodes (constraint 'v100*3' takes 3), partition bigmem allows at most 1" \
        in v.notes, v.notes


def test_a_node_range_reaching_the_counts_takes_them():
    """-N 1-4: Slurm raises the job to the counts' 3 nodes, within the range."""
    v = run("#SBATCH -n 4 -N 1-4 -C '[a100*2&ib*1]' -t 1:00:00", lyra()).verdict("lyra")
    assert v.feasible and v.partition == "standby", v
    assert "needs 3 nodes (constraint '[a100*2&ib*1]' takes 3), partition gpu allows at " \
           "most 2" in v.notes, v.notes


def test_memory_per_cpu_spreading_keeps_the_counts_nodes():
    """A partition giving DefMemPerCPU spreads tasks without a node count anew: the counts'
    3 nodes stay (gpu given DefMemPerCPU here still refuses for its MaxNodes 2)."""
    parts = PARTITIONS.replace("JobDefaults=DefMemPerGPU=64000 DefMemPerCPU=UNLIMITED",
                               "JobDefaults=(null) DefMemPerCPU=3900")
    assert parts != PARTITIONS
    v = run("#SBATCH -n 64 -C '[a100*2&ib*1]' -t 1:00:00",
            lyra(partitions=parts)).verdict("lyra")
    assert v.feasible and v.partition != "gpu", v
    assert any("partition gpu allows at most 2" in n for n in v.notes), v.notes


def test_counts_sharing_nodes_take_the_largest():
    """Without brackets the counts may share nodes: 'a100*2&ib*1' takes 2 (gpu allows)."""
    v = run("#SBATCH -n 4 -C 'a100*2&ib*1' -t 1:00:00", lyra()).verdict("lyra")
    assert v.feasible and v.partition == "gpu", v


# ---- priority weights not read -------------------------------------------------------------

@pytest.mark.parametrize("edit, said", [
    (("PriorityWeightQOS       = 1000\n", ""),
     "priority factor PriorityWeightQOS (not reported by scontrol show config)"),
    (("PriorityWeightAge       = 1000", "PriorityWeightAge       = lots"),
     "priority factor PriorityWeightAge (scontrol show config printed 'lots', not a weight)"),
])
def test_a_weight_not_read_is_said_per_factor_once(edit, said):
    config = CONFIG.replace(*edit)
    assert config != CONFIG
    p = run(FOUR, selene(factors(), config=config))
    v = p.verdict("selene")
    assert v.not_checked.count(said) == 1, v.not_checked
    assert f"selene not checked: {said}" in p.explain()
    # every weight read: nothing said
    assert not run(FOUR, selene(factors())).verdict("selene").not_checked


# ---- SWF MaxProcs of no whole count --------------------------------------------------------

@pytest.mark.parametrize("header, line, procs, instead", [
    ("; MaxProcs: 0.5\n", "line 1 ('; MaxProcs: 0.5') is no whole count", 16,
     "sized from its jobs instead, 16 processors: the most they held at once"),
    ("; MaxProcs: abc\n", "line 1 ('; MaxProcs: abc') is no whole count", 16,
     "sized from its jobs instead, 16 processors"),
    # before: read as MaxProcs 1, a machine of one processor
    ("; MaxNodes: 32\n; MaxProcs: 1.5\n", "line 2 ('; MaxProcs: 1.5') is no whole count",
     32, "sized by its MaxNodes: 32 processors"),
])
def test_a_maxprocs_of_no_whole_count_is_said_with_what_sized_the_machine(
        tmp_path: Path, header: str, line: str, procs: int, instead: str) -> None:
    """Jobs of 8 processors every 10 minutes, each running 20: two at once, 16 processors."""
    log = read_swf(save_swf(tmp_path / "odd.swf", header + _jobs(100)))
    [note] = [n for n in log.notes if "whole count" in n]
    assert note.startswith(f"the log's header {line} of processors or nodes, so it is not "
                           "read: ") and instead in note, note
    assert log.max_procs == procs


def test_a_whole_maxprocs_written_with_a_point_is_read(tmp_path: Path) -> None:
    log = read_swf(save_swf(tmp_path / "point.swf", "; MaxProcs: 128.0\n" + _jobs(100)))
    assert log.max_procs == 128 and not any("whole count" in n for n in log.notes)
