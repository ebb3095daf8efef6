"""Placement cases worked by hand, fifteenth sweep, from the fifteenth sweep of batch
scripts (tests/test_scripts_unseen15.py): hera (tests/test_placement_cases.py) with a
partition `long` of no MaxTime on c03-c04. A Slurm job that asks no time limit
(`--time=UNLIMITED`, `INFINITE`, `0`: sbatch sends INFINITE) is held by slurmctld in a
partition of a finite MaxTime (PartitionTimeLimit, job_mgr.c: a time limit above the
partition's) as long as it waits, so only `long` runs it; flux's
`--setattr=system.queue=NAME` names the queue; `--core-spec`/`--thread-spec` keep cores
of each node from the job; `--overcommit` asks CPUs as for one task a node; counted
constraint groups, a queue list and a hetjob's per-GPU CPUs. Each case: the job, the
verdict, the partition and the reason (or a note) that names the cause, worked out from
sbatch(1), slurm.conf(5) and flux-submit(1)."""

from __future__ import annotations

import pytest
from test_placement_cases import NOW, H, hera, run
from test_placement_cases5 import pbsq

from diamond_jupyter.model import Partition


def hera_long():
    """hera, and `long` (no MaxTime) over the 128-CPU nodes c03-c04."""
    cfg, snap = hera()
    for n in snap.nodes:
        if n.name in ("c03", "c04"):
            n.partitions.append("long")
    snap.partitions.append(Partition(name="long", max_time_s=None, nodes=["c[03-04]"]))
    return cfg, snap


_ENDLESS = ("asks no time limit, above partition {p} MaxTime {t} (slurmctld holds it: "
            "PartitionTimeLimit); give a --time within it")

# (the job's directives, verdict, partition, a reason or note that names the cause)
CASES = [
    # no time limit: every partition but long has a MaxTime (before: READY in cpu, with
    # its default time, where the job would wait for good)
    ("#SBATCH -n 1 --time=UNLIMITED", "READY", "long",
     "`--time=UNLIMITED` " + _ENDLESS.format(p="cpu", t="2-00:00:00")),
    ("#SBATCH -n 1 -t 0 -p cpu", "INCOMPATIBLE", None,
     "`--time=0` " + _ENDLESS.format(p="cpu", t="2-00:00:00")),
    ("#SBATCH -n 1 --time=INFINITE -p gpu --gres=gpu:1", "INCOMPATIBLE", None,
     "`--time=INFINITE` " + _ENDLESS.format(p="gpu", t="1-00:00:00")),
    ("#SBATCH -n 1 --time=INFINITE -p long", "READY", "long", None),
    ("#SBATCH -n 1 -p cpu,long -t UNLIMITED", "READY", "long", None),
    # three nodes with no time limit: long has two
    ("#SBATCH -N 3 -t UNLIMITED", "INCOMPATIBLE", None,
     "`--time=UNLIMITED` " + _ENDLESS.format(p="cpu", t="2-00:00:00")),
    # a hetjob component of its own (kept as written: --exclusive=user) asking none
    ("#SBATCH -t 1:00:00 -N 1 -p cpu\n#SBATCH hetjob\n"
     "#SBATCH -N 1 -p cpu --exclusive=user --time=UNLIMITED", "INCOMPATIBLE", None,
     "hetjob component 1: `--time=UNLIMITED` " + _ENDLESS.format(p="cpu", t="2-00:00:00")),
    ("#SBATCH -t 1:00:00 -N 1 -p cpu\n#SBATCH hetjob\n"
     "#SBATCH -N 1 -p cpu --exclusive=user --time=2:00:00", "READY", "cpu", None),
    # a time limit: the default partition as before
    ("#SBATCH -n 1 -t 1:00:00", "READY", "cpu", None),
    # flux's time limit 0 (none) is said dropped on the way to Slurm: the partition's default
    ("#flux: -n 1 --time-limit=0", "READY", "cpu", None),
    # flux --setattr=system.queue: the queue (before: kept unread, READY in cpu)
    ("#flux: -N 2 -n 2 -t 10m\n#flux: --setattr=system.queue=debug", "INCOMPATIBLE", None,
     "needs 2 nodes, partition debug allows at most 1"),
    ("#flux: -n 1 -t 10m\n#flux: --queue=cpu\n#flux: -S system.queue=gpu", "READY", "gpu",
     None),
    # counted groups: one node with avx2 and one with avx512, both in cpu (c01 and c03);
    # one with avx512 and one with an a100: no partition holds both kinds
    ("#SBATCH -N 2 -t 10 --constraint=[avx2*1&avx512*1]", "READY", "cpu", None),
    ("#SBATCH -N 2 -t 10 --constraint=[avx512*1&a100*1]", "INCOMPATIBLE", None,
     "constraint 'a100*1' needs 1 node with it, partition cpu has 0"),
    # --core-spec=N / --thread-spec=N: N cores (threads) of each node kept for the system,
    # the job given whole nodes (the option sets --exclusive): debug's 32-CPU nodes (one
    # thread a core) leave 28 (30) to the job (before: READY, 32 tasks on 28 CPUs)
    ("#SBATCH -N 1 -n 32 -t 10 --core-spec=4 -p debug", "INCOMPATIBLE", None,
     "partition debug: needs 32 CPUs per node, --core-spec=4 leaves the largest node 28 of "
     "its 32"),
    ("#SBATCH -N 1 -n 28 -t 10 -S 4 -p debug", "READY", "debug", None),
    ("#SBATCH -N 1 -n 32 -t 10 --thread-spec=2 -p debug", "INCOMPATIBLE", None,
     "--thread-spec=2 leaves the largest node 30 of its 32"),
    # --overcommit: CPUs allocated as for one task a node (sbatch -O), so 64 tasks of one
    # CPU share one 32-CPU debug node (before: INCOMPATIBLE, 64 CPUs asked); a task's CPUs
    # (-c 40) still have to fit a node
    ("#SBATCH -N 1 -n 64 -t 10 --overcommit -p debug", "READY", "debug", None),
    ("#SBATCH -n 64 -t 10 -O -p debug", "READY", "debug", None),
    ("#SBATCH -n 64 -c 40 -t 10 -O -p debug", "INCOMPATIBLE", None,
     "partition debug: needs 40 CPUs per node, largest node has 32"),
    # the sweep's scripts: 60 tasks a node with 4 cores kept (one thread a core): c03-c04
    # (128 CPUs) but not c01-c02 (32); cpu allows 4 nodes, only 2 are that large
    ("#SBATCH -N 4 --ntasks-per-node=60 --core-spec=4 --hint=nomultithread -t 6:00:00",
     "INCOMPATIBLE", None, "needs 4 nodes, partition cpu has only 2 that can run it"),
    ("#SBATCH -N 2 --ntasks-per-node=60 --core-spec=4 --hint=nomultithread -t 6:00:00",
     "READY", "cpu", None),
    # 256 light tasks on one node at 500 MB a CPU: one CPU and 500 MB asked (--overcommit)
    ("#SBATCH -N 1 -n 256 --overcommit --oversubscribe --mem-per-cpu=500M -t 30 -p debug",
     "READY", "debug", None),
    # LSF's queue list: the first that can run it
    ('#BSUB -n 1 -W 10\n#BSUB -q "debug gpu"', "READY", "debug", None),
    # a hetjob whose GPU workers ask 20 CPUs per GPU: 4 tasks of one GPU each take 80 CPUs
    # a node, the GPU nodes have 64; at 8 per GPU (32 a node) both components start now
    ("#SBATCH -t 1:00:00\n#SBATCH -N 1 -n 1 -c 32 -p cpu\n#SBATCH hetjob\n"
     "#SBATCH -N 2 --ntasks-per-node=4 --gpus-per-task=1 --cpus-per-gpu=20 -p gpu",
     "INCOMPATIBLE", None,
     "hetjob component 1: partition gpu: needs 80 CPUs per node (4 tasks x 20 CPUs), "
     "largest node has 64"),
    ("#SBATCH -t 1:00:00\n#SBATCH -N 1 -n 1 -c 32 -p cpu\n#SBATCH hetjob\n"
     "#SBATCH -N 2 --ntasks-per-node=4 --gpus-per-task=1 --cpus-per-gpu=8 -p gpu",
     "READY", "cpu", "hetjob component 1 runs in partition gpu"),
]


@pytest.mark.parametrize("job, verdict, partition, said", CASES, ids=[c[0] for c in CASES])
def test_hera_long(job, verdict, partition, said):
    v = run(job, hera_long()).verdict("hera")
    assert (v.verdict, v.partition) == (verdict, partition), v.reasons + v.notes
    assert v.estimated_start == (NOW if verdict == "READY" else None)
    if said:
        assert any(said in x for x in v.reasons + v.notes), v.reasons + v.notes


def test_no_time_limit_held_only_where_slurm_reads_the_option():
    """The rule is slurmctld's: a PBS site gets the script with --time said dropped (no
    form) and runs it with its queue's default, as its translation says."""
    v = run("#SBATCH -n 1 --time=UNLIMITED", pbsq()).verdict("pbsq")
    assert v.verdict == "READY" and not any("no time limit" in x for x in v.reasons + v.notes)
    # a partition whose MaxTime is UNLIMITED is never such a limit
    assert next(p for p in hera_long()[1].partitions if p.name == "long").max_time_s is None
    assert next(p for p in hera()[1].partitions if p.name == "cpu").max_time_s == 48 * H


# GPUs of several types in one option, kept as written: each type's count on one node.
# vega (tests/test_placement_cases14.py): g01 two A100s and two V100s, g02 four A100s; on
# hera no node has both (g01-g02 A100s, v01 V100s). Before, a `--gres` list was not read
# (READY in a partition of no GPUs) and a `--gpus` list was read as one GPU of type
# `a100:2,v100`
MIXED = [
    ("vega", "-p gpu -N 1 --gres=gpu:a100:2,gpu:v100:1", "READY", "gpu", None),
    ("vega", "-p gpu -N 1 --gpus-per-node=a100:1,v100:2", "READY", "gpu", None),
    ("vega", "-p gpu -N 1 --gres=gpu:a100:2,gpu:v100:3", "INCOMPATIBLE", None,
     "needs 3 GPUs of type 'v100' per node (beside its other types), largest node has 2 of "
     "them"),
    ("vega", "-p gpu -N 1 --gres=gpu:a100:3,gpu:v100:1", "INCOMPATIBLE", None,
     "no single node meets all the requirements together (3 GPUs a100 on g02; 1 GPU v100 "
     "on g01)"),
    ("hera", "-p cpu -n 1 --gres=gpu:a100:2,gpu:v100:1", "INCOMPATIBLE", None,
     "no GPUs on any node"),
    ("hera", "-p gpu -n 1 --gpus=a100:2,v100:1", "INCOMPATIBLE", None,
     "2 GPUs a100 on g01, g02; 1 GPU v100 on v01"),
]


@pytest.mark.parametrize("site, job, verdict, partition, said", MIXED,
                         ids=[f"{c[0]} {c[1]}" for c in MIXED])
def test_gpus_of_several_types_on_one_node(site, job, verdict, partition, said):
    from test_placement_cases14 import vega

    v = run(f"#SBATCH {job} -t 1:00:00", vega() if site == "vega" else hera()).verdict(site)
    assert (v.verdict, v.partition) == (verdict, partition), v.reasons + v.notes
    if said:
        assert any(said in x for x in v.reasons), v.reasons
