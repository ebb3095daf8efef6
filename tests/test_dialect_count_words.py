"""A count of one in a dialect's notes and warnings takes its noun in the singular (before:
"1 GPUs per task", "1 tasks on 1 node", "4 node(s)"); counts above one keep the plural."""

from __future__ import annotations

import re

import pytest

from diamond_jupyter.dialects.translate import translate

_ONE_WITH_A_PLURAL = re.compile(r"\b1 (GPU|task|node|slot|CPU|core|chunk|shape)s\b|\(s\)")


def _script(*directives: str) -> str:
    return "#!/bin/bash\n" + "".join(f"{d}\n" for d in directives) + "./a.out\n"


@pytest.mark.parametrize(("source", "target", "text", "said"), [
    ("slurm", "sge", _script("#SBATCH -n 4", "#SBATCH --gpus-per-task=1", "#SBATCH -t 10"),
     "approximated: 1 GPU per task as 4 GPUs for the job (-l gpu is per job)"),
    ("slurm", "pbs", _script("#SBATCH -n 4", "#SBATCH --gpus-per-task=1", "#SBATCH -t 10"),
     "approximated: 1 GPU per task as GPUs per chunk"),
    ("slurm", "sge", _script("#SBATCH -N 2", "#SBATCH --gpus=2", "#SBATCH -t 10"),
     "line 3: --gpus=2 (job total) read as 1 GPU per node on 2 nodes"),
    ("lsf", "slurm", _script("#BSUB -n 1", '#BSUB -R "span[ptile=4]"', "#BSUB -W 10"),
     "line 3: span[ptile=4] with -n 1: every slot fits on one host: read as 1 task on 1 node"),
    ("flux", "slurm", _script("# flux: --nodes=1", "# flux: -t 10m"),
     "--nodes=1 without --nslots read as 1 slot, one per node, on whole nodes (flux implies "
     "--exclusive)"),
])
def test_a_count_of_one_is_worded_in_the_singular(source, target, text, said):
    _, warnings, spec = translate(text, target, source)
    notes = spec.metadata.get("parse_notes", [])
    assert said in warnings + notes, (warnings, notes)
    assert not [w for w in warnings + notes if _ONE_WITH_A_PLURAL.search(w)], warnings + notes


def test_counts_above_one_keep_the_plural():
    text = _script("#SBATCH -N 2", "#SBATCH --gpus-per-node=3", "#SBATCH -t 10")
    _, warnings, _ = translate(text, "sge", "slurm")
    assert "approximated: 3 GPUs per node on 2 nodes as 6 GPUs for the job (-l gpu is per " \
           "job)" in warnings, warnings
