"""A Slurm heterogeneous job checked whole: every component against the site, on selene
read from its Slurm outputs (tests/test_placement_cases13.py).

sbatch reads each component's options afresh and carries over only those Slurm's
heterogeneous jobs page lists as propagated (`--exclude`, `--time-min`, the account...):
a later component's own `--nodelist` is its hosts, and the first's `--nodelist`,
`--mincpus`, `--core-spec` and the like are the first's alone. Before, placement read no
later component's `--nodelist` (a job naming a host the site lacks was READY) and gave
every later component the first's (a job whose first component named a CPU node was
INCOMPATIBLE for its GPU component)."""

from __future__ import annotations

import pytest
from test_placement_cases import hours, only, reasons, run
from test_placement_cases13 import pending, running, selene

_HET = "#SBATCH -p batch -N 1 -n 8 -t 1:00:00 {first}\n#SBATCH hetjob\n#SBATCH -p gpu -N 1 {later}"


def _het(first: str = "", later: str = "--gres=gpu:a100:1") -> str:
    return _HET.format(first=first, later=later)


@pytest.mark.parametrize("later, why", [
    # a host selene does not have: sbatch refuses the job
    ("--gres=gpu:a100:1 --nodelist=zz99",
     "hetjob component 1: --nodelist names node(s) this site does not have: zz99"),
    # a node of another partition: slurmctld refuses it (its nodes are not the partition's)
    ("-n 4 --nodelist=n01",
     "hetjob component 1: partition gpu does not hold node(s) n01 named by --nodelist"),
    # g03's L40S are not the A100s the component asks
    ("--gres=gpu:a100:1 --nodelist=g03",
     "hetjob component 1: node(s) g03 named by --nodelist cannot run it"),
])
def test_a_later_components_own_hosts_are_checked(later, why):
    p = run(_het(later=later), selene())
    assert p.verdict("selene").verdict == "INCOMPATIBLE"
    assert reasons(p, "selene").startswith(why), reasons(p, "selene")


def test_a_later_component_waits_for_the_host_it_names():
    """g01's four A100s are bob's until +3 h; g03's L40S are free. A component asking one
    GPU of any type starts now on g03; one naming g01 waits for it, and the job with it."""
    site = selene(running("11", "bob", "g01", 8, 3, 6, "gpu", gpus=4), galloc={"g01": 4},
                  alloc={"g01": 8})
    v = only(run(_het(later="--gres=gpu:1"), site), "selene", "batch")
    assert (v.verdict, v.estimated_start) == ("READY", hours(0))
    v = only(run(_het(later="--gres=gpu:1 --nodelist=g01"), site), "selene", "batch")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(3)), v.notes
    assert "hetjob component 1 runs in partition gpu, can start +3:00:00: the job starts " \
        "when every component can" in v.notes


@pytest.mark.parametrize("first", [
    "--nodelist=n01",  # the first's host: a batch node, no GPUs
    "--mincpus=64",  # g03 has 32 CPUs: the first's minimum is not the GPU component's
    "--cores-per-socket=32",  # g03's sockets have 16 cores
])
def test_the_first_components_own_node_options_stay_with_it(first):
    """Before: each was carried to the GPU component, which no gpu node could then hold."""
    v = only(run(_het(first, later="--gres=gpu:l40s:1"), selene()), "selene", "batch")
    assert v.verdict == "READY", v.notes


def test_the_first_components_exclude_is_carried_as_sbatch_does():
    """`--exclude` is among the propagated options: the GPU component may not have g03,
    the only node of L40S."""
    p = run(_het("--exclude=g03", later="--gres=gpu:l40s:1"), selene())
    assert p.verdict("selene").verdict == "INCOMPATIBLE"
    assert reasons(p, "selene") == "hetjob component 1: --exclude g03 leaves it too few " \
        "nodes: no other node can run it, it needs 1"


# ---- at a PBS site: the components as the chunks it gets, not their superset shape --------

_PBS_HET = "#SBATCH -p workq -N 1 -n 4 -t 1:00:00\n#SBATCH hetjob\n#SBATCH -p workq {later}"


@pytest.mark.parametrize("later", ["-N 2 -n 2 --gres=gpu:1", "-N 1 -n 1 --gres=gpu:1"])
def test_a_pbs_site_places_each_component_as_its_chunk(later):
    """The PBS site of cpu1 (4 CPUs) and gpu1-gpu2 (2 CPUs and a V100 each) gets the job
    as `select=1:ncpus=4:mpiprocs=4+N:ncpus=1:mpiprocs=1:ngpus=1`, place=scatter: it fits.
    Before: placed as one shape of 4 CPUs and a GPU on every node, which no node has."""
    from test_placement_cases import pbs_site
    v = only(run(_PBS_HET.format(later=later), pbs_site()), "pbs", "workq")
    assert v.verdict == "READY"


def test_a_pbs_site_names_the_component_it_cannot_run():
    from test_placement_cases import pbs_site
    p = run(_PBS_HET.format(later="-N 1 -n 1 --gres=gpu:1 --nodelist=cpu1"), pbs_site())
    assert reasons(p, "pbs") == "hetjob component 1 (its chunk 1:ncpus=1:mpiprocs=1:ngpus=1:" \
        "host=cpu1): host cpu1 named by the chunk: no GPUs on any node"
    p = run(_PBS_HET.format(later="-N 3 -n 3 --gres=gpu:1"), pbs_site())
    assert reasons(p, "pbs").endswith(
        "hetjob component 1 (its chunk 3:ncpus=1:mpiprocs=1:ngpus=1) is the one left without "
        "a host")


def test_a_pbs_site_read_from_its_outputs_holds_the_components_together():
    """moira (p1-p3, 64 CPUs each, from its qstat/pbsnodes JSON): bob's job holds p2 for
    2 h. A component naming p2 waits for it, and the job with it; one naming p9, which
    moira lacks, never runs, said of that component."""
    from test_placement_cases11 import _pjob, moira
    site = moira(_pjob("7", "bob", 1, ends_h=2, limit_h=3, host="p2"))
    het = "#SBATCH -N 1 -n 64 -t 1:00:00\n#SBATCH hetjob\n#SBATCH -N 1 -n 8 {hosts}"
    v = only(run(het.format(hosts=""), site), "moira", "workq")
    assert (v.verdict, v.estimated_start) == ("READY", hours(0))
    v = only(run(het.format(hosts="--nodelist=p2"), site), "moira", "workq")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))
    p = run(het.format(hosts="--nodelist=p9"), site)
    assert reasons(p, "moira").startswith(
        "hetjob component 1 (its chunk 1:ncpus=8:mpiprocs=8:host=p9): host p9 named by the "
        "chunk (host=/vnode=) is not one of the site's nodes")


# ---- translated for a scheduler asked for one shape: a component's hosts said dropped ------

_HOSTS_HET = ("#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --cpus-per-task=4\n"
              "#SBATCH --time=1:00:00\n#SBATCH hetjob\n#SBATCH --nodes=2\n{later}\n"
              "#SBATCH --nodelist=b[1-2]\n./a\n")


@pytest.mark.parametrize("target, later", [
    ("flux", "#SBATCH --cpus-per-task=8"),
    ("sge", "#SBATCH --cpus-per-task=8"),
    # LSF's compound form cannot say GPUs per task: one shape there too
    ("lsf", "#SBATCH --ntasks=2 --gpus-per-task=1"),
])
def test_a_later_components_hosts_are_said_dropped_where_the_job_is_one_shape(target, later):
    """Before: the hosts of component 1 vanished unsaid (flux, Grid Engine, LSF of one
    shape), against "nothing is dropped silently"."""
    from diamond_jupyter.dialects.translate import translate
    script, warnings, _ = translate(_HOSTS_HET.format(later=later), target, "slurm")
    assert "b1" not in script and "b[1-2]" not in script
    assert f"dropped: --nodelist=b[1-2] of hetjob component 1 ({target} is asked for one " \
        "shape here: no hosts of one component)" in warnings, warnings


# ---- each component a job against the submit limits ---------------------------------------

_CAPPED = ("#SBATCH -p batch -N 1 -n 8 -t 1:00:00 --qos=capped\n#SBATCH hetjob\n"
           "#SBATCH -p batch -N 1 -n 2\n#SBATCH hetjob\n#SBATCH -p batch -N 1 -n 2 {third}")


def _alice_queued(n: int):
    """selene with `n` of alice's jobs waiting under QOS capped (MaxSubmitJobsPerUser 8)."""
    return selene(*[pending(str(80 + i), "alice", 1, 1) for i in range(n)],
                  qos_of={str(80 + i): "capped" for i in range(n)})


def test_each_component_counts_one_job_against_max_submit_jobs():
    """Three components under capped (sbatch carries --qos over), 6 of alice's jobs
    waiting: 9 > 8, sbatch refuses the job (each component a job: Slurm's heterogeneous
    jobs page). Before: READY, each component counted alone (6 + 1)."""
    p = run(_CAPPED.format(third=""), _alice_queued(6))
    assert p.verdict("selene").verdict == "RESTRICTED"
    assert reasons(p, "selene") == (
        "hetjob components 0, 1, 2: QOS capped's MaxSubmitJobsPerUser is 8 and you have 6 "
        "jobs queued or running under it: the heterogeneous job's 3 components count as 3 "
        "jobs: the submit is refused until 1 of them ends (QOSMaxSubmitJobPerUserLimit)")
    assert only(run(_CAPPED.format(third=""), _alice_queued(5)), "selene",
                "batch").verdict == "READY"


def test_a_component_under_another_qos_is_not_counted_there():
    """The third component's own QOS normal: two count under capped, 6 + 2 = 8."""
    v = only(run(_CAPPED.format(third="--qos=normal"), _alice_queued(6)), "selene", "batch")
    assert v.verdict == "READY", v.notes


# ---- the components' use in all against a QOS's group limits -------------------------------

_GPUQ = ("#SBATCH -p gpu -N 1 --qos=gpuq --gres=gpu:a100:{a} -t 1:00:00\n#SBATCH hetjob\n"
         "#SBATCH -p gpu -N 1 --gres=gpu:l40s:{b}")


def test_components_over_a_qos_group_limit_in_all_never_start():
    """QOS gpuq's GrpTRES gres/gpu=4 (sbatch carries --qos to the second component): 4
    A100s and 2 L40S each fit alone, but Slurm starts a hetjob's components only together,
    and 6 GPUs never fit under it. Before: READY, each component checked alone."""
    p = run(_GPUQ.format(a=4, b=2), selene())
    assert p.verdict("selene").verdict == "INCOMPATIBLE"
    assert reasons(p, "selene") == (
        "hetjob components 0, 1 ask 6 GPUs in all under QOS gpuq, which allows 4 (GrpTRES "
        "gres/gpu=4): each fits alone, but they start only together, so they never start")
    v = only(run(_GPUQ.format(a=2, b=2), selene()), "selene", "gpu")
    assert (v.verdict, v.estimated_start) == ("READY", hours(0))


# ---- components that never fit the site's nodes all at once -------------------------------

@pytest.mark.parametrize("job, why", [
    # both on n01 (64 CPUs): 48 + 32 CPUs never there at once
    ("#SBATCH -p batch -N 1 -n 48 -t 1:00:00 --nodelist=n01\n#SBATCH hetjob\n"
     "#SBATCH -p batch -N 1 -n 32 --nodelist=n01",
     "hetjob components 0, 1 ask 80 CPUs in all of the nodes they may use that are up "
     "(n01), which have 64: they start only together, so they never start"),
    # excl's two nodes, whole: 1 + 2 of them
    ("#SBATCH -p excl -N 1 -t 1:00:00\n#SBATCH hetjob\n#SBATCH -p excl -N 2",
     "hetjob components 0, 1 ask 3 whole nodes in all of the nodes they may use that are up "
     "(n05, n06), which have 2: they start only together, so they never start"),
])
def test_components_that_never_fit_at_once_are_incompatible(job, why):
    """Before: BUSY at the horizon (+30 days), said a lower bound."""
    p = run(job, selene())
    v = p.verdict("selene")
    assert v.verdict == "INCOMPATIBLE" and v.estimated_start is None
    assert reasons(p, "selene") == why
    assert not any("can start +30" in n for n in v.notes), v.notes


def test_components_sharing_a_node_they_fit_together_start_now():
    v = only(run("#SBATCH -p batch -N 1 -n 48 -t 1:00:00 --nodelist=n01\n#SBATCH hetjob\n"
                 "#SBATCH -p batch -N 1 -n 16 --nodelist=n01", selene()), "selene", "batch")
    assert (v.verdict, v.estimated_start) == ("READY", hours(0)), v.notes
