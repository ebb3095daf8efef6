"""LSF GPUs asked inside a usage string of several parts (`rusage[... , ...]`: usages all
reserved; `rusage[... || ...]`: alternatives LSF tries in order) were not read at all: the
job needed no GPU, so placement could send it where there is none and every translation
lost them. The first alternative's GPUs are now read (per host, as in one usage), the
string kept whole for LSF (no -gpu beside it) and said dropped elsewhere."""

from __future__ import annotations

import pytest

from diamond_jupyter.dialects.translate import get_script_dialect, translate
from diamond_jupyter.needs import needs_of


def _lsf(resreq: str, n: int = 4) -> str:
    return f'#!/bin/bash\n#BSUB -n {n}\n#BSUB -R "span[hosts=1] {resreq}"\n#BSUB -W 60\n./app\n'


@pytest.mark.parametrize(("usage", "gpus", "model"), [
    ("rusage[mem=4GB:ngpus_physical=2:gmodel=A100 || mem=8GB:ngpus_physical=1]", 2, "A100"),
    ("rusage[ngpus_physical=4:duration=10, license_x=1]", 4, None),
    ("rusage[license_x=1, ngpus_physical=1:gmodel=V100]", 1, "V100"),
])
def test_the_first_alternatives_gpus_are_read(usage, gpus, model):
    spec = get_script_dialect("lsf").parse_script(_lsf(usage))
    r = spec.resources
    assert (r.gpus_per_node, r.gpu_type) == (gpus, model)
    assert needs_of(spec).gpus == gpus
    assert any("GPUs read" in n and "kept as written" in n
               for n in spec.metadata["parse_notes"])
    assert [d.option for d in spec.unknown] == ["-R rusage"]


def test_a_first_alternative_without_gpus_reads_none():
    spec = get_script_dialect("lsf").parse_script(
        _lsf("rusage[mem=8GB || mem=4GB:ngpus_physical=1]"))
    assert spec.resources.gpus_per_node is None


def test_lsf_gets_the_string_back_alone_and_the_others_the_gpus():
    text = _lsf("rusage[mem=4GB:ngpus_physical=2 || mem=8GB:ngpus_physical=1]")
    own, _, _ = translate(text, "lsf", "lsf")
    assert '#BSUB -R "span[hosts=1] rusage[mem=4GB:ngpus_physical=2 || ' \
        'mem=8GB:ngpus_physical=1]"' in own
    assert "-gpu" not in own  # the GPUs twice would be asked
    back = get_script_dialect("lsf").parse_script(own)
    assert back.resources.gpus_per_node == 2
    slurm, warnings, _ = translate(text, "slurm", "lsf")
    assert "#SBATCH --gpus-per-node=2" in slurm and "#SBATCH --nodes=1" in slurm
    assert any(w.startswith("dropped: #BSUB -R") and "||" in w for w in warnings)
    pbs, _, _ = translate(text, "pbs", "lsf")
    assert "ngpus=2" in pbs
