"""A later Slurm hetjob component's own `--partition` (and the first's account and QOS
said again): the whole job was kept as written (only the first component read; PBS, LSF,
Grid Engine and flux got the first component alone, the others' lines said dropped). Each
component is now read with its own partition: Slurm gets it back on that component, the
others the job's chunks or terms in the first's queue with a line saying the partition is
dropped (one queue per job); placement puts each component in its own partition."""

from __future__ import annotations

import sys
from pathlib import Path

from diamond_jupyter.dialects.translate import get_script_dialect
from diamond_jupyter.federation import Federation

sys.path.insert(0, str(Path(__file__).parent))

from test_placement_cases import hera, only, run  # noqa: E402

_HET = ("#!/bin/bash\n#SBATCH -p cpu -N 1 -n 4 -A proj -t 1:00:00\n#SBATCH hetjob\n"
        "#SBATCH {later}\nsrun ./a : ./b\n")


def _spec(later: str):
    return Federation.parse(_HET.format(later=later))


def test_a_later_components_own_partition_is_read_with_it():
    spec = _spec("-p gpu -N 2 -n 8 --gres=gpu:a100:4 -A proj")
    assert spec.unknown == []
    assert [(c.nodes, c.tasks, c.gpus_per_node, c.queue) for c in spec.components] == \
        [(1, 4, None, None), (2, 8, 4, "gpu")]
    assert spec.queue == "cpu"


def test_slurm_gets_each_components_partition_back():
    out = get_script_dialect("slurm").render_script(_spec("--partition=gpu -N 2 --gres=gpu:2"))
    lines = [x for x in out.script.splitlines() if x.startswith("#SBATCH")]
    het = lines.index("#SBATCH hetjob")
    assert "#SBATCH --partition=cpu" in lines[:het]
    assert lines[het + 1] == "#SBATCH --partition=gpu"
    back = get_script_dialect("slurm").parse_script(out.script)
    assert [c.queue for c in back.components] == [None, "gpu"]


def test_one_queue_schedulers_get_every_component_and_say_the_partition_is_dropped():
    spec = _spec("-p gpu -N 2 -n 8 --gres=gpu:4")
    pbs = get_script_dialect("pbs").render_script(spec)
    assert "#PBS -q cpu" in pbs.script
    assert "#PBS -l select=1:ncpus=4:mpiprocs=4+2:ncpus=4:mpiprocs=4:ngpus=4" in pbs.script
    assert "dropped: partition gpu of component 1 (PBS has one queue per job: the whole job " \
        "goes to cpu)" in pbs.warnings
    assert not any(w.startswith("dropped: #SBATCH") for w in pbs.warnings)
    lsf = get_script_dialect("lsf").render_script(spec)
    assert '#BSUB -R "4*{span[hosts=1]} + 8*{span[ptile=4] rusage[ngpus_physical=4]}"' \
        in lsf.script
    assert any(w.startswith("dropped: partition gpu of component 1 (LSF") for w in lsf.warnings)


def test_a_component_with_its_own_exclusivity_is_read_with_it():
    # its own --exclusive (the first's is not): read into the component since
    # tests/test_placement_cases12.py (was kept as written); --exclusive=user still is
    spec = _spec("-p gpu -N 2 --exclusive")
    assert [c.exclusive for c in spec.components] == [None, True]
    spec = _spec("-p gpu -N 2 --exclusive=user")
    assert spec.components == []
    assert "hetjob" in [d.option for d in spec.unknown]


def test_each_component_is_placed_in_its_own_partition():
    # the first in cpu, the later one on the gpu partition's a100 nodes: placed whole, each
    # in its own partition (in the first's, cpu, it would find no GPU at all)
    v = only(run("#SBATCH -p cpu -N 1 -n 4 -t 1:00:00\n#SBATCH hetjob\n"
                 "#SBATCH -p gpu -N 2 --gres=gpu:a100:4", hera()), "hera", "cpu")
    assert v.feasible
    assert any(n.startswith("hetjob component 1 runs in partition gpu") for n in v.notes)
    # three a100 nodes: the gpu partition has two
    p = run("#SBATCH -p cpu -N 1 -t 1:00:00\n#SBATCH hetjob\n#SBATCH -p gpu -N 3 "
            "--gres=gpu:a100:4", hera())
    v = p.verdict("hera")
    assert not v.feasible and any(r.startswith("hetjob component 1") for r in v.reasons)


def test_the_rest_request_says_a_components_partition_is_dropped():
    from diamond_jupyter.dialects.slurm_rest import job_description

    spec = _spec("-p gpu -N 2 -n 8 --gres=gpu:4")
    spec.working_directory = "/home/u/run"
    job, warnings = job_description(spec)
    assert job["partition"] == "cpu"
    assert any(w.startswith("dropped: partition gpu of component 1") for w in warnings)
