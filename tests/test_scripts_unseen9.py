"""Slurm heterogeneous jobs whose later components ask for their own GPUs (`--gres=gpu:
TYPE:N`): they were kept as written (only the first component read; every other scheduler
got the first component alone and a "dropped" line per option). Each component is now read
with its own GPUs and model, as a job of several shapes (`JobSpec.components`): PBS gets
chunks, LSF compound terms (each term's own `rusage[ngpus_physical=N:gmodel=X]`), Slurm the
components back. A `--gres` with other entries (`nvme:1`) kept the component as written
(read with it since tests/test_placement_cases12.py). On a Slurm site, a job of several
shapes read whole is placed component by component (it was placed as its largest shape on
every node)."""

from __future__ import annotations

import sys
from pathlib import Path

from diamond_jupyter.dialects.translate import get_script_dialect
from diamond_jupyter.federation import Federation
from tests.scripts_unseen_check import directive_lines

sys.path.insert(0, str(Path(__file__).parent))

from test_placement_cases import NOW, hera, only, run  # noqa: E402


def _het(first: str, later: str) -> str:
    return f"#!/bin/bash\n#SBATCH {first}\n#SBATCH -t 1:00:00\n#SBATCH hetjob\n" \
        f"#SBATCH {later}\nsrun ./app : ./app\n"


def test_a_later_component_with_its_own_gres_gpus_is_read():
    spec = Federation.parse(_het("-p gpu -N 1 -n 4", "-p gpu -N 2 -n 64 --gres=gpu:a100:4"))
    assert [(c.nodes, c.tasks, c.gpus_per_node, c.gpu_type) for c in spec.components] == \
        [(1, 4, None, None), (2, 64, 4, "a100")]
    assert not [d for d in spec.unknown if d.option in ("hetjob", "--gres")]
    pbs = get_script_dialect("pbs").render_script(spec)
    assert "#PBS -l select=1:ncpus=4:mpiprocs=4+2:ncpus=32:mpiprocs=32:ngpus=4" in pbs.script
    lsf = get_script_dialect("lsf").render_script(spec)
    assert '#BSUB -R "4*{span[hosts=1]} + 64*{span[ptile=32] ' \
        'rusage[ngpus_physical=4:gmodel=a100]}"' in lsf.script
    assert not any(w.startswith("dropped: #SBATCH") for w in pbs.warnings + lsf.warnings)


def test_each_component_keeps_its_own_gpu_model():
    spec = Federation.parse(_het("-p gpu -N 1 -n 4 --gres=gpu:v100:1",
                                 "-p gpu -N 2 --ntasks-per-node=8 --gres=gpu:a100:4"))
    assert [(c.gpus_per_node, c.gpu_type) for c in spec.components] == \
        [(1, "v100"), (4, "a100")]
    out = get_script_dialect("slurm").render_script(spec).script
    lines = directive_lines(out, "#SBATCH")
    het = lines.index("#SBATCH hetjob")
    assert "#SBATCH --gpus-per-node=v100:1" in lines[:het]
    assert "#SBATCH --gpus-per-node=a100:4" in lines[het:]
    back = get_script_dialect("slurm").parse_script(out)
    assert [(c.gpus_per_node, c.gpu_type) for c in back.components] == \
        [(1, "v100"), (4, "a100")]
    lsf = get_script_dialect("lsf").render_script(spec).script
    assert "4*{span[hosts=1] rusage[ngpus_physical=1:gmodel=v100]} + 16*{span[ptile=8] " \
        "rusage[ngpus_physical=4:gmodel=a100]}" in lsf


def test_a_gres_with_other_entries_is_read_with_the_component():
    # kept as written before tests/test_placement_cases12.py; now its GPUs and its own
    # nvme:1 are read, and written back as one --gres on its lines
    spec = Federation.parse(_het("-p gpu -N 1 -n 4", "-p gpu -N 2 --gres=gpu:a100:4,nvme:1"))
    assert [(c.gpus_per_node, c.gres) for c in spec.components] == [(None, None),
                                                                   (4, "nvme:1")]
    assert spec.unknown == []
    out = get_script_dialect("slurm").render_script(spec).script
    assert "#SBATCH --gres=gpu:a100:4,nvme:1" in out.split("#SBATCH hetjob")[1]


def test_a_hetjob_read_whole_is_placed_component_by_component_on_slurm():
    # one component of 100 CPUs (c03 or c04 only), one of 3 nodes of 8 CPUs: each fits the
    # cpu partition. Before, its largest shape on every node (3 nodes of 100 CPUs): the
    # cpu partition has 2 such nodes, INCOMPATIBLE
    v = only(run("#SBATCH -p cpu -N 1 -c 100 -t 1:00:00\n#SBATCH hetjob\n"
                 "#SBATCH -p cpu -N 3 -c 8", hera()), "hera", "cpu")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    assert any(n.startswith("hetjob component 1 runs in partition cpu") for n in v.notes)
