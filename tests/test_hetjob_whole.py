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
from test_placement_cases13 import running, selene

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
