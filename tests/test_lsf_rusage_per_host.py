"""An LSF `rusage[mem=N/host]` (reserved once on each host of the job) sent back to LSF was
written per slot: the host's memory shared out among the slots (`-n 8` and no span:
`rusage[mem=1GB]`, an eighth of what each host reserved when the slots spread over hosts)
with an "approximated" line. LSF now gets `/host` back as written, its duration and other
usages with it; another scheduler still gets the memory per node."""

from __future__ import annotations

import pytest

from diamond_jupyter.dialects.translate import get_script_dialect, translate


def _lsf(rusage: str, span: str = "") -> str:
    extra = f'#BSUB -R "{span}"\n' if span else ""
    return f'#!/bin/bash\n#BSUB -n 8\n{extra}#BSUB -R "rusage[{rusage}]"\n./a\n'


def _resreq(script: str) -> str:
    return next(x for x in script.splitlines() if x.startswith("#BSUB -R"))


@pytest.mark.parametrize(("rusage", "span", "back"), [
    ("mem=8GB/host", "", "rusage[mem=8GB/host]"),
    ("mem=8GB/host", "span[ptile=4]", "span[ptile=4] rusage[mem=8GB/host]"),
    ("mem=6000/host:duration=10", "", "rusage[mem=6000MB/host:duration=10]"),
    ("licA=1, mem=2GB/host", "span[hosts=1]", "span[hosts=1] rusage[mem=2GB/host, licA=1]"),
])
def test_lsf_gets_the_hosts_memory_back_per_host(rusage: str, span: str, back: str) -> None:
    script, warnings, _ = translate(_lsf(rusage, span), "lsf", "lsf")
    assert _resreq(script) == f'#BSUB -R "{back}"'
    assert not [w for w in warnings if "memory" in w]
    first = get_script_dialect("lsf").parse_script(_lsf(rusage, span))
    again = get_script_dialect("lsf").parse_script(script)
    assert again.resources.memory_mb == first.resources.memory_mb
    assert again.resources.memory_per_cpu_mb is None


def test_a_changed_memory_is_written_per_slot_again() -> None:
    spec = get_script_dialect("lsf").parse_script(_lsf("mem=8GB/host", "span[ptile=4]"))
    spec.resources.memory_mb = 4096  # no longer what the usage string said
    script = get_script_dialect("lsf").render_script(spec).script
    assert "/host" not in script
    assert "rusage[mem=1GB]" in script


def test_slurm_still_gets_the_memory_per_node() -> None:
    script, _, _ = translate(_lsf("mem=8GB/host"), "slurm", "lsf")
    assert "#SBATCH --mem=8G" in script.splitlines()
