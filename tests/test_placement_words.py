"""Placement reasons speak the site's own scheduler's words: the same refusal of the same
job reads "partition ... MaxTime" at a Slurm site, "queue ... resources_max.walltime" at a
PBS one, "RUNLIMIT" at LSF, "h_rt" at Grid Engine, "TLIMIT" at flux; nodes are vnodes
(PBS Pro) or hosts (LSF, Grid Engine); CPUs are ncpus, processors, slots or cores."""

from __future__ import annotations

import pytest
from test_placement_cases import NOW, _node, only, reasons, run
from test_placement_cases13 import has_note, selene

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.model import Partition, SiteSnapshot
from diamond_jupyter.placement_fit import words_of

H = 3600
KINDS = [("slurm", None), ("pbs", None), ("pbs", "torque"), ("lsf", None), ("sge", None),
         ("flux", None)]


def twin(kind: str, flavor: str | None, queues=(("q", 1),), state: str = "UP"):
    """One site of `kind`: x1-x2 of 16 CPUs and 64000 MB in every queue of `queues`
    ((name, hours of its time limit)), the first the default."""
    nodes = [_node(f"x{i}", 16, 64000, [q for q, _ in queues]) for i in (1, 2)]
    parts = [Partition(name=q, default=i == 0, max_time_s=h * H, state=state,
                       nodes=["x1", "x2"]) for i, (q, h) in enumerate(queues)]
    return (SiteConfig(name="s", scheduler=kind, flavor=flavor),
            SiteSnapshot(site="s", taken_at=NOW, nodes=nodes, partitions=parts))


# what each kind says, in the order of KINDS
TOO_LONG = ["walltime 2:00:00 above partition q MaxTime 1:00:00",
            "walltime 2:00:00 above queue q resources_max.walltime 1:00:00",
            "walltime 2:00:00 above queue q resources_max.walltime 1:00:00",
            "walltime 2:00:00 above queue q RUNLIMIT 1:00:00",
            "walltime 2:00:00 above queue q h_rt 1:00:00",
            "walltime 2:00:00 above queue q TLIMIT 1:00:00"]
TOO_MANY = ["needs 3 nodes, largest partition has 2", "needs 3 vnodes, largest queue has 2",
            "needs 3 nodes, largest queue has 2", "needs 3 hosts, largest queue has 2",
            "needs 3 hosts, largest queue has 2", "needs 3 nodes, largest queue has 2"]
TOO_WIDE = [
    "needs 32 CPUs per node (4 tasks x 8 CPUs), largest node has 16",
    "needs 32 ncpus per vnode (4 MPI processes x 8 ncpus), largest vnode has 16",
    "needs 32 processors per node (4 processes x 8 processors), largest node has 16",
    "needs 32 slots per host (4 tasks x 8 slots), largest host has 16",
    "needs 32 slots per host (4 tasks x 8 slots), largest host has 16",
    "needs 32 cores per node (4 tasks x 8 cores), largest node has 16"]
TOO_BIG = [f"needs 102400 MB memory per {n}, largest {n} has 64000 MB"
           for n in ("node", "vnode", "node", "host", "host", "node")]
DOWN = ["partition 'q' is DOWN"] + ["queue 'q' is DOWN"] * 5
NOT_FOUND = ["partition 'nosuch' not found (site has: q)"] + \
    ["queue 'nosuch' not found (site has: q)"] * 5
EVERYWHERE = [f"walltime 3:00:00 above every {part}'s {cap} here (the longest: r, 2:00:00)"
              for part, cap in (("partition", "MaxTime"),
                                ("queue", "resources_max.walltime"),
                                ("queue", "resources_max.walltime"), ("queue", "RUNLIMIT"),
                                ("queue", "h_rt"), ("queue", "TLIMIT"))]


@pytest.mark.parametrize("i", range(len(KINDS)), ids=[f"{k}-{f}" for k, f in KINDS])
def test_the_same_refusals_in_each_schedulers_words(i):
    kind, flavor = KINDS[i]
    site = twin(kind, flavor)
    assert reasons(run("#SBATCH -t 2:00:00", site), "s") == TOO_LONG[i]
    assert reasons(run("#SBATCH -N 3 -t 0:30:00", site), "s") == TOO_MANY[i]
    assert reasons(run("#SBATCH -N 1 --ntasks-per-node=4 -c 8 -t 0:30:00", site),
                   "s") == TOO_WIDE[i]
    assert reasons(run("#SBATCH -N 1 --mem=100G -t 0:30:00", site), "s") == TOO_BIG[i]
    assert reasons(run("#SBATCH -p nosuch -t 0:30:00", site), "s") == NOT_FOUND[i]
    assert reasons(run("#SBATCH -t 0:30:00", twin(kind, flavor, state="DOWN")),
                   "s") == DOWN[i]
    assert reasons(run("#SBATCH -t 3:00:00", twin(kind, flavor, (("q", 1), ("r", 2)))),
                   "s") == EVERYWHERE[i]
    # the same job fits every kind once it asks what the site has
    only(run("#SBATCH -N 2 -n 32 -t 0:30:00", site), "s", "q")


def test_no_reason_of_another_kind_says_slurms_words():
    for kind, flavor in KINDS[1:]:
        for script in ("#SBATCH -t 2:00:00", "#SBATCH -N 3 -t 0:30:00",
                       "#SBATCH -N 1 --ntasks-per-node=4 -c 8 -t 0:30:00"):
            said = reasons(run(script, twin(kind, flavor)), "s")
            assert "partition" not in said and "MaxTime" not in said, (kind, said)


def test_a_pbs_front_on_slurm_and_an_unknown_kind_speak_slurms():
    assert words_of("pbs", "slurm") == words_of("slurm")
    assert words_of("pbs", "pro") == words_of("pbs")
    assert words_of("pbs", "torque").cpus == "processors"


def test_a_flux_site_without_queues_is_the_site():
    nodes = [_node(f"f{i}", 16, 64000, []) for i in range(2)]
    nodes[1].state = "down"
    site = (SiteConfig(name="s", scheduler="flux"),
            SiteSnapshot(site="s", taken_at=NOW, nodes=nodes))
    assert reasons(run("#SBATCH -N 2 -t 0:30:00", site), "s") == \
        "needs 2 nodes, the site has only 1 usable (others down f1)"


def test_pbs_place_pack_says_its_select_not_tasks():
    # PBS Pro: two chunks of 40 packed on one host of 16 CPUs: said as the select asks
    site = twin("pbs", None)
    assert reasons(run("#PBS -l select=2:ncpus=40\n#PBS -l place=pack\n"
                       "#PBS -l walltime=0:30:00", site), "s") == \
        "needs 80 ncpus per vnode (select=2:ncpus=40, place=pack), largest vnode has 16"


def test_def_mem_per_cpu_of_an_exclusive_job_is_for_every_cpu_of_its_nodes():
    # selene's batch: DefMemPerCPU 2000, nodes of 64 CPUs. 4 tasks share a node: 4 CPUs'
    # worth; --exclusive: the job holds all 64 CPUs, and DefMemPerCPU for each
    v = only(run("#SBATCH -N 1 -n 4 -t 1:00:00", selene()), "selene", "batch")
    assert "partition batch: no memory asked, it gets DefMemPerCPU 2000 MB x 4 CPUs = " \
        "8000 MB a node" in v.notes
    v = only(run("#SBATCH --exclusive -N 1 -n 4 -t 1:00:00", selene()), "selene", "batch")
    assert "partition batch: no memory asked, it gets DefMemPerCPU 2000 MB x every CPU of " \
        "each of its nodes (it has them whole): 128000 MB on a node of 64" in v.notes
    assert not has_note(v, "x 4 CPUs")
