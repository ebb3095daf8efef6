"""A Slurm hetjob component's own --time and --reservation: any later component with one
was kept as written and only the first read (the job's time the first's, each component
placed with none of it). Each component's time limit (sbatch does not carry --time over)
and reservation (sbatch carries it to the components after it) are now read into the
component, written back for Slurm on its own lines, placed with it, and said where a
scheduler takes one of each per job (the time limit there the longest)."""

from __future__ import annotations

import sys
from pathlib import Path

from diamond_jupyter.dialects.translate import get_script_dialect, translate
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import Reservation

sys.path.insert(0, str(Path(__file__).parent))

from test_placement_cases import NOW, hera, only, place  # noqa: E402

_HET = ("#!/bin/bash\n#SBATCH -p cpu -N 1 -n 4 -t 1:00:00 --reservation=resA\n"
        "#SBATCH hetjob\n#SBATCH -p gpu -N 1 -n 1 {later}\n"
        "#SBATCH hetjob\n#SBATCH -p cpu -N 1 -n 2\nsrun ./a : ./b : ./c\n")


def _sbatch_parts(script: str) -> list[list[str]]:
    """Each component's #SBATCH lines."""
    parts: list[list[str]] = [[]]
    for line in script.splitlines():
        if line == "#SBATCH hetjob":
            parts.append([])
        elif line.startswith("#SBATCH"):
            parts[-1].append(line)
    return parts


def test_each_components_time_and_reservation_are_read_with_it() -> None:
    spec = Federation.parse(_HET.format(later="-t 4:00:00 --reservation=resB"))
    assert len(spec.components) == 3
    assert [c.walltime_s for c in spec.components] == [3600, 4 * 3600, None]
    # sbatch carries the reservation over to the component after it
    assert [c.reservation for c in spec.components] == [None, "resB", "resB"]
    assert spec.resources.walltime_s == 4 * 3600  # the job's: the longest
    assert spec.reservation == "resA"
    assert not spec.unknown


def test_slurm_gets_each_components_own_time_and_reservation_back() -> None:
    text = _HET.format(later="-t 4:00:00 --reservation=resB")
    script, warnings, _ = translate(text, "slurm", "slurm")
    first, second, third = _sbatch_parts(script)
    assert "#SBATCH --time=01:00:00" in first and "#SBATCH --reservation=resA" in first
    assert "#SBATCH --time=04:00:00" in second and "#SBATCH --reservation=resB" in second
    # sbatch carries resB over to the third; it asks no time of its own (its partition's)
    assert not [x for x in third if x.startswith(("#SBATCH --time", "#SBATCH --reserv"))]
    assert not [w for w in warnings if "time" in w or "reservation" in w], warnings
    again = get_script_dialect("slurm").parse_script(script)
    assert [c.walltime_s for c in again.components] == [3600, 4 * 3600, None]
    assert [c.reservation for c in again.components] == [None, "resB", "resB"]


def test_one_time_schedulers_get_the_longest_and_say_so() -> None:
    text = _HET.format(later="-t 4:00:00 --reservation=resB")
    for target, walltime in (("pbs", "#PBS -l walltime=04:00:00"), ("lsf", "#BSUB -W 4:00")):
        script, warnings, _ = translate(text, target, "slurm")
        assert walltime in script.splitlines(), script
        assert any(w.startswith("approximated: time limit 01:00:00 of component 0 as the "
                                "job's 04:00:00") for w in warnings), warnings
        assert any(w.startswith("dropped: reservation resB of component 1")
                   for w in warnings), warnings


def test_a_face_time_is_the_whole_jobs() -> None:
    spec = Federation.parse(_HET.format(later="-t 4:00:00"))
    spec.resources.walltime_s = 2 * 3600  # e.g. a face's --time: no longer the longest
    parts = _sbatch_parts(get_script_dialect("slurm").render_script(spec).script)
    assert "#SBATCH --time=02:00:00" in parts[0]
    assert not [x for p in parts[1:] for x in p if x.startswith("#SBATCH --time")]


def test_each_component_is_placed_with_its_own_time_limit() -> None:
    # debug allows 30 minutes: a component there asking 2 hours cannot run
    long = Federation.parse("#!/bin/bash\n#SBATCH -p cpu -N 1 -n 4 -t 20:00\n"
                            "#SBATCH hetjob\n#SBATCH -p debug -N 1 -n 1 -t 2:00:00\n./a\n")
    v = place(long, [hera()], now=NOW).verdict("hera")
    assert not v.feasible
    assert any("hetjob component 1" in r for r in v.reasons), v.reasons
    # the job's time is the longest (2 hours, the cpu component's), the debug one's 20
    # minutes its own: it fits
    short = Federation.parse("#!/bin/bash\n#SBATCH -p cpu -N 1 -n 4 -t 2:00:00\n"
                             "#SBATCH hetjob\n#SBATCH -p debug -N 1 -n 1 -t 20:00\n./a\n")
    assert short.resources.walltime_s == 2 * 3600
    v = only(place(short, [hera()], now=NOW), "hera", "cpu")
    assert v.feasible, v.reasons


def test_each_component_is_placed_with_its_own_reservation() -> None:
    # the site has reservation resA only: a component asking another cannot be submitted
    cfg, snap = hera()
    site = (cfg, snap.model_copy(update={"reservations": [Reservation(name="resA")]}))
    text = ("#!/bin/bash\n#SBATCH -p cpu -N 1 -n 4 -t 20:00 --reservation=resA\n"
            "#SBATCH hetjob\n#SBATCH -p gpu -N 1 -n 1 {own}\n./a\n")
    v = place(Federation.parse(text.format(own="--reservation=nosuch")), [site],
              now=NOW).verdict("hera")
    assert not v.feasible
    assert any("hetjob component 1" in r and "nosuch" in r for r in v.reasons), v.reasons
    ok = place(Federation.parse(text.format(own="")), [site], now=NOW).verdict("hera")
    assert not any("nosuch" in r for r in ok.reasons), ok.reasons


_OWN_C = ("#!/bin/bash\n#SBATCH -p cpu -N 1 -n 4 -t 1:00:00 -C haswell\n"
          "#SBATCH hetjob\n#SBATCH -p gpu -N 1 -n 1 -C a100\n"
          "#SBATCH hetjob\n#SBATCH -p cpu -N 1 -n 2\nsrun ./a : ./b : ./c\n")


def test_each_components_own_constraint_is_read_and_written_back() -> None:
    # sbatch does not carry --constraint over: the third component asks none
    spec = Federation.parse(_OWN_C)
    assert [c.features for c in spec.components] == [None, ["a100"], []]
    assert spec.constraints.features == ["haswell"]
    script, warnings, _ = translate(_OWN_C, "slurm", "slurm")
    first, second, third = _sbatch_parts(script)
    assert "#SBATCH --constraint=haswell" in first
    assert "#SBATCH --constraint=a100" in second
    assert not [x for x in third if x.startswith("#SBATCH --constraint")]
    assert not [w for w in warnings if "constraint" in w], warnings
    again = get_script_dialect("slurm").parse_script(script)
    assert [c.features for c in again.components] == [None, ["a100"], []]


def test_one_constraint_schedulers_say_each_components_own() -> None:
    for target in ("pbs", "lsf", "flux", "sge"):
        _, warnings, _ = translate(_OWN_C, target, "slurm")
        assert any(w.startswith("approximated: constraint a100 of component 1 as the job's "
                                "constraint haswell") for w in warnings), (target, warnings)
        assert any(w.startswith("approximated: no constraint of component 2 as the job's "
                                "constraint haswell") for w in warnings), (target, warnings)


def test_each_component_is_placed_with_its_own_constraint() -> None:
    # the first component's feature where the gpu one has none: placed with each its own
    cfg, snap = hera()
    nodes = [n.model_copy(update={"features": [*n.features, "ownfeat"]})
             if n.name.startswith("c") else n for n in snap.nodes]
    site = (cfg, snap.model_copy(update={"nodes": nodes}))
    text = ("#!/bin/bash\n#SBATCH -p cpu -N 1 -n 4 -t 1:00:00 -C ownfeat\n"
            "#SBATCH hetjob\n#SBATCH -p gpu -N 1 -n 1 {own}\n./a\n")
    v = place(Federation.parse(text.format(own="")), [site], now=NOW).verdict("hera")
    assert v.feasible, v.reasons  # the gpu component asks no feature of its own
    v = place(Federation.parse(text.format(own="-C nosuchfeat")), [site],
              now=NOW).verdict("hera")
    assert not v.feasible
    assert any("hetjob component 1" in r and "nosuchfeat" in r for r in v.reasons), v.reasons
