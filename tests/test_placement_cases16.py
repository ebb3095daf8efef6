"""Placement cases worked by hand, sixteenth sweep, from the sixteenth sweep of batch
scripts (tests/test_scripts_unseen16.py), on the recorded sites of the earlier cases:
hera (Slurm: c01-c04, g01-g02, v01; tests/test_placement_cases.py), gridq (Grid Engine:
s1-s2 of 16 slots) and lsfq (LSF: h1-h4; tests/test_placement_cases5.py).

The hosts a job's nodes come from (flux `--requires=host:`, Grid Engine
`-l hostname=a|b`, `-l h=`) were read by placement on flux sites only: elsewhere a site
holding none of them was READY, though its script keeps them (translate, node_lists) and
its scheduler then never starts the job (Grid Engine: no queue instance matches, it
waits) or refuses it (bsub -m with a host it does not know; sbatch --nodelist likewise).
Now the job gets only those of the site's hosts, and a host named that the site does not
have is said (at an LSF site any one of them: bsub refuses the submission). Where the
translation drops them, said (PBS: one host per chunk; Slurm, unless the job asks as
many nodes as are named), nothing is held to them. And a Slurm script's `#PBS`/`#BSUB`
lines, which sbatch reads after its `#SBATCH` ones (unless --ignore-pbs), set its time
limit and partition (sbatch(1) --ignore-pbs; slurm_wrappers)."""

from __future__ import annotations

import pytest
from test_placement_cases import NOW, hera
from test_placement_cases5 import gridq, lsfq

from diamond_jupyter.federation import Federation
from diamond_jupyter.placement import place

_SITES = {"hera": hera, "gridq": gridq, "lsfq": lsfq}

# (site, dialect, the job's directives, verdict, partition, a reason that names the cause)
CASES = [
    # Grid Engine's own host list, at a Grid Engine site
    ("gridq", "sge", "#$ -l h_rt=600\n#$ -l hostname=s1|s2", "READY", "all.q", None),
    ("gridq", "sge", "#$ -l h_rt=600\n#$ -l hostname=s1|node9", "READY", "all.q", None),
    ("gridq", "sge", "#$ -l h_rt=600\n#$ -l hostname=node07|node08", "INCOMPATIBLE", None,
     "#$ -l hostname=node07|node08 names host(s) this site does not have: node07, node08"),
    # ... carried to LSF as -m: bsub refuses a host it does not know, even one of two
    ("lsfq", "sge", "#$ -l h_rt=600\n#$ -l hostname=h1|h2", "READY", "normal", None),
    ("lsfq", "sge", "#$ -l h_rt=600\n#$ -l hostname=h1|h9", "INCOMPATIBLE", None,
     "names host(s) this site does not have: h9 (bsub refuses -m naming a host it does "
     "not know)"),
    # flux's host terms, carried to LSF (-m) and Grid Engine (-l hostname=)
    ("lsfq", "flux", "#flux: -n 1 -t 10m\n#flux: --requires=host:h[1-2]", "READY", "normal",
     None),
    ("lsfq", "flux", "#flux: -n 1 -t 10m\n#flux: --requires=host:node[1-4]", "INCOMPATIBLE",
     None, "#flux: --requires=host:node[1-4] names host(s) this site does not have: node1, "
     "node2, node3, node4 (bsub refuses -m naming a host it does not know)"),
    ("gridq", "flux", "#flux: -n 1 -t 10m\n#flux: --requires=host:s2", "READY", "all.q", None),
    ("gridq", "flux", "#flux: -n 1 -t 10m\n#flux: --requires=host:node[1-4]", "INCOMPATIBLE",
     None, "names host(s) this site does not have: node1, node2, node3, node4"),
    # ... to Slurm as --nodelist only when the job asks as many nodes as are named
    ("hera", "flux", "#flux: -N 1 -n 1 -t 10m\n#flux: --requires=host:c01", "READY", "cpu",
     None),
    ("hera", "flux", "#flux: -N 1 -n 1 -t 10m\n#flux: --requires=host:c09", "INCOMPATIBLE",
     None, "#flux: --requires=host:c09 names host(s) this site does not have: c09"),
    ("hera", "flux", "#flux: -N 1 -n 64 -t 10m\n#flux: --requires=host:c01", "INCOMPATIBLE",
     None, "the hosts #flux: --requires=host:c01 names cannot run it: needs 64 CPUs per "
     "node, largest node has 32"),
    # one node of four named: dropped on the way to Slurm (said), so not held to them
    ("hera", "flux", "#flux: -n 1 -t 10m\n#flux: --requires=host:node[1-4]", "READY", "cpu",
     None),
    # a Slurm script's #PBS time limit is sbatch's too: above debug's 30 min
    ("hera", "slurm", "#SBATCH -n 1 -t 0:20:00 -p debug\n#PBS -l walltime=10:00:00",
     "INCOMPATIBLE", None, "walltime 10:00:00 above partition debug MaxTime 0:30:00"),
    ("hera", "slurm", "#SBATCH -n 1 -t 0:20:00 -p debug\n#SBATCH --ignore-pbs\n"
     "#PBS -l walltime=10:00:00", "READY", "debug", None),
    # #BSUB -q is the partition; with #BSUB lines, the #PBS ones are not read
    ("hera", "slurm", "#SBATCH -n 1 -t 0:20:00\n#BSUB -q gpu", "READY", "gpu", None),
    ("hera", "slurm", "#SBATCH -n 1 -t 0:20:00\n#BSUB -q debug\n#PBS -q gpu", "READY",
     "debug", None),
]


@pytest.mark.parametrize("site, dialect, job, verdict, partition, said", CASES,
                         ids=[f"{c[0]}:{c[2]}" for c in CASES])
def test_named_hosts_and_leftover_headers(site, dialect, job, verdict, partition, said):
    spec = Federation.parse(f"#!/bin/bash\n{job}\n./app\n", dialect)
    v = place(spec, [_SITES[site]()], now=NOW).ranked[0]
    assert (v.verdict, v.partition) == (verdict, partition), v.reasons + v.notes
    assert v.estimated_start == (NOW if verdict == "READY" else None)
    if said:
        assert any(said in x for x in v.reasons), v.reasons


def test_a_host_list_keeps_the_job_off_the_other_hosts():
    """`-l h=s2` on a Grid Engine site whose s2 is full: the job waits for s2, though s1 is
    free (before: READY now, on s1); `h=s1|s2` starts now."""
    cfg, snap = gridq()
    for n in snap.nodes:
        if n.name == "s2":
            n.cpus_allocated, n.state = 16, "alloc"

    def verdict(hosts: str):
        spec = Federation.parse(f"#!/bin/bash\n#$ -l h_rt=600\n#$ -pe smp 8\n#$ -l h={hosts}\n"
                                "./a\n", "sge")
        return place(spec, [(cfg, snap)], now=NOW).ranked[0]

    held = verdict("s2")
    assert held.verdict == "BUSY" and held.estimated_start > NOW
    assert verdict("s1|s2").estimated_start == NOW
