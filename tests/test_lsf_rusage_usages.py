"""An LSF usage string of several usages (`rusage[mem=4000, lic=1:duration=5]`): each
comma-separated usage has its own duration and decay. The memory was read only when the
string began with it (`rusage[lic=1:duration=5, mem=4000]` and `rusage[lic=1:mem=4000]`
asked for none: placement could send the job where it does not fit), and an LSF round trip
joined the other usages to the memory's with a colon, so their duration became the
memory's; alternatives (`rusage[mem=32GB || mem=16GB]`) asked for no memory at all. The
memory is now read from whichever usage holds it (of alternatives, the first's, the string
kept whole), and LSF gets every usage back with its own duration."""

from __future__ import annotations

import pytest

from diamond_jupyter.dialects.translate import get_script_dialect, request_totals, translate
from diamond_jupyter.model import BadInput


def _lsf(rusage: str) -> str:
    return f'#!/bin/bash\n#BSUB -n 4\n#BSUB -W 1:00\n#BSUB -R "rusage[{rusage}]"\n./a\n'


def _resreq(script: str) -> str:
    return next(x for x in script.splitlines() if x.startswith("#BSUB -R"))


@pytest.mark.parametrize(("rusage", "per_slot"), [
    ("licA=1:duration=5, mem=4000:duration=10", 4000),
    ("licA=1:mem=8GB:duration=10", 8192),
    ("swp=100, mem=2GB/task", 2048),
    ("mem=4000, licA=1:duration=5", 4000),
])
def test_the_memory_of_any_usage_is_read(rusage: str, per_slot: int) -> None:
    spec = get_script_dialect("lsf").parse_script(_lsf(rusage))
    assert spec.resources.memory_per_cpu_mb == per_slot
    assert request_totals(spec)["memory_mb"] == 4 * per_slot  # 4 slots


def test_a_hosts_memory_in_a_later_usage_is_per_host() -> None:
    spec = get_script_dialect("lsf").parse_script(_lsf("licA=1, mem=64GB/host:duration=30"))
    assert (spec.resources.memory_mb, spec.resources.memory_per_cpu_mb) == (64 * 1024, None)


@pytest.mark.parametrize(("rusage", "back"), [
    # the license keeps its own 5 minutes; the memory is reserved for the whole job
    ("mem=4000, licA=1:duration=5", "rusage[mem=4000MB, licA=1:duration=5]"),
    ("licA=1:duration=5, mem=4000:duration=10",
     "rusage[mem=4000MB:duration=10, licA=1:duration=5]"),
    ("mem=4000:decay=1:duration=20, licA=1, licB=2:duration=1",
     "rusage[mem=4000MB:decay=1:duration=20, licA=1, licB=2:duration=1]"),
    # one usage: its duration is the memory's and the license's alike
    ("licA=1:mem=4000:duration=10", "rusage[mem=4000MB:licA=1:duration=10]"),
])
def test_lsf_gets_each_usage_back_with_its_own_duration(rusage: str, back: str) -> None:
    script, warnings, _ = translate(_lsf(rusage), "lsf", "lsf")
    assert _resreq(script) == f'#BSUB -R "{back}"'
    assert warnings == []
    again = get_script_dialect("lsf").parse_script(script)
    assert again.resources.memory_per_cpu_mb == 4000


def test_elsewhere_the_memory_is_kept_and_the_other_usages_said_dropped() -> None:
    script, warnings, _ = translate(_lsf("licA=1:duration=5, mem=4000:duration=10"),
                                    "slurm", "lsf")
    assert "#SBATCH --mem-per-cpu=4000M" in script.splitlines()
    said = " ".join(warnings)
    assert "rusage[duration=10]" in said and "rusage[licA=1:duration=5]" in said


def test_a_bad_memory_in_a_later_usage_is_bad_input() -> None:
    with pytest.raises(BadInput, match=r"bad rusage mem.*(KB, MB or GB)"):
        get_script_dialect("lsf").parse_script(_lsf("licA=1, mem=lots"))


@pytest.mark.parametrize(("rusage", "per_slot", "per_host"), [
    ("mem=32GB:duration=10 || mem=16GB", 32 * 1024, None),
    ("ngpus_physical=4:mem=64GB || ngpus_physical=2:mem=32GB", 64 * 1024, None),
    ("licA=1, mem=8GB/host || mem=4GB/host", None, 8 * 1024),
])
def test_the_first_alternatives_memory_is_read_and_the_string_kept_whole(
        rusage: str, per_slot: int | None, per_host: int | None) -> None:
    # LSF tries the alternatives in order: the first is what the job asks first (its
    # memory was not read: the job asked for none)
    spec = get_script_dialect("lsf").parse_script(_lsf(rusage))
    assert (spec.resources.memory_per_cpu_mb, spec.resources.memory_mb) == (per_slot, per_host)
    assert [d.value for d in spec.unknown] == [f"rusage[{rusage}]"]
    script, warnings, _ = translate(_lsf(rusage), "lsf", "lsf")
    assert _resreq(script) == f'#BSUB -R "rusage[{rusage}]"'  # no other memory beside it
    assert not any(w.startswith(("approximated", "dropped")) for w in warnings), warnings
    slurm = translate(_lsf(rusage), "slurm", "lsf")[0].splitlines()
    assert ("#SBATCH --mem-per-cpu=32G" in slurm) == (per_slot == 32 * 1024)
    assert ("#SBATCH --mem=8G" in slurm) == (per_host == 8 * 1024)


def test_alternatives_without_memory_ask_none() -> None:
    spec = get_script_dialect("lsf").parse_script(_lsf("licA=1 || licB=1"))
    assert (spec.resources.memory_per_cpu_mb, spec.resources.memory_mb) == (None, None)
