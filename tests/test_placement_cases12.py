"""Placement cases worked by hand, twelfth sweep: what the eleventh left unread. A Slurm
heterogeneous job component's own `--exclusive` and its own `--gres` entries beside its
GPUs (`nvme:1`), read, written back and placed per component; Grid Engine queue
consumables (`qconf -sq`'s `complex_values`, `qc:`) and a parallel job's slots outside its
`-masterq` queue. Each case asserts the verdict per site, the partition, the start and
that the reason names the real cause."""

from __future__ import annotations

from datetime import timedelta

from test_placement_cases import NOW, hera, only, reasons, run
from test_placement_cases3 import running

from diamond_jupyter.dialects.translate import get_script_dialect, translate

H = 3600


def hours(h: float):
    return NOW + timedelta(hours=h)


# --------------------------------------------------------------- Slurm hetjob components

_HET = ("#!/bin/bash\n#SBATCH -p cpu -N 1 -n 4 -t 1:00:00 {first}\n#SBATCH hetjob\n"
        "#SBATCH -p gpu -N 1 -n 4 {later}\nsrun ./a : ./b\n")


def _parts(script: str) -> list[list[str]]:
    """The #SBATCH lines of each component."""
    out: list[list[str]] = [[]]
    for line in script.splitlines():
        if line == "#SBATCH hetjob":
            out.append([])
        elif line.startswith("#SBATCH"):
            out[-1].append(line)
    return out


def test_a_components_own_exclusive_and_gres_are_read_and_written_back():
    # sbatch carries neither --exclusive nor --gres over to the components after the
    # first (heterogeneous_jobs.html lists the options it propagates; neither is one).
    # Before, a later component with either was kept as written, only the first read
    text = _HET.format(first="", later="--gres=gpu:a100:2,nvme:1 --exclusive")
    spec = get_script_dialect("slurm").parse_script(text)
    assert [(c.exclusive, c.gres, c.gpus_per_node) for c in spec.components] == \
        [(None, None, None), (True, "nvme:1", 2)]
    assert spec.unknown == [] and not spec.constraints.exclusive
    out, warnings, _ = translate(text, "slurm", "slurm")
    first, second = _parts(out)
    assert "#SBATCH --exclusive" not in first and "#SBATCH --exclusive" in second
    # its GPUs and its other entries on one --gres (sbatch keeps a component's last)
    assert "#SBATCH --gres=gpu:a100:2,nvme:1" in second
    assert not any(x.startswith("#SBATCH --gpus") for x in second)
    again = get_script_dialect("slurm").parse_script(out)
    assert [(c.exclusive, c.gres) for c in again.components] == [(None, None),
                                                                  (True, "nvme:1")]
    # the first exclusive, the later one not: shared (none carried over, none written)
    spec = get_script_dialect("slurm").parse_script(
        _HET.format(first="--exclusive", later="--gres=nvme:1"))
    assert [(c.exclusive, c.gres, c.gpus_per_node) for c in spec.components] == \
        [(None, None, None), (False, "nvme:1", None)]
    first, second = _parts(get_script_dialect("slurm").render_script(spec).script)
    assert "#SBATCH --exclusive" in first and "#SBATCH --exclusive" not in second
    assert "#SBATCH --gres=nvme:1" in second
    # the last --gres of a component is its own (the earlier one's GPUs are gone)
    spec = get_script_dialect("slurm").parse_script(
        _HET.format(first="", later="--gres=gpu:2\n#SBATCH --gres=nvme:1"))
    assert [(c.gres, c.gpus_per_node) for c in spec.components][1] == ("nvme:1", None)
    # --exclusive=user is still kept as written (no neutral form)
    kept = get_script_dialect("slurm").parse_script(
        _HET.format(first="", later="--exclusive=user"))
    assert kept.components == [] and "hetjob" in [d.option for d in kept.unknown]


def test_one_exclusivity_schedulers_say_each_components_own():
    text = _HET.format(first="", later="--gres=gpu:a100:2,nvme:1 --exclusive")
    for target, shown in (("pbs", "PBS"), ("lsf", "LSF"), ("sge", "Grid Engine"),
                          ("flux", "flux")):
        warnings = translate(text, target, "slurm")[1]
        assert f"approximated: exclusive nodes of component 1 as the job's shared ones " \
            f"({shown} has one exclusivity per job)" in warnings, (target, warnings)
        assert "dropped: --gres nvme:1 of component 1 (Slurm generic resources: no neutral " \
            "form)" in warnings, (target, warnings)
    from diamond_jupyter.dialects.slurm_rest import job_description
    spec = get_script_dialect("slurm").parse_script(text)
    spec.working_directory = "/home/u/run"
    assert any(w.startswith("approximated: exclusive nodes of component 1") for w in
               job_description(spec)[1])


def _run_het(first: str, later: str, site):
    """`_HET` placed on `site` alone."""
    return run(_HET.format(first=first, later=later).removeprefix("#!/bin/bash\n"), site)


def _gpu_busy():
    """hera: g01 holds r1 (8 CPUs, 1 GPU) until +2 h, g02 holds r2 (8 CPUs, 1 GPU) until
    +3 h; v01 (v100) idle."""
    return hera(jobs=[running("r1", "g01", 2, 8, 1, partition="gpu"),
                      running("r2", "g02", 3, 8, 1, partition="gpu")],
                alloc={"g01": (8, 1), "g02": (8, 1)})


def test_a_components_own_exclusive_is_placed_with_it():
    # the gpu component asks 4 CPUs and an a100: g01 has 56 CPUs and 3 GPUs free, so it
    # starts now sharing g01; with its own --exclusive it needs an a100 node nobody uses:
    # g01 once r1 ends (+2 h). The cpu component starts now on c01-c04. Before, the
    # component was kept as written and only the first (cpu) placed: READY now
    site = _gpu_busy()
    v = only(_run_het("", "--gres=gpu:a100:1", site), "hera", "cpu")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    v = only(_run_het("", "--gres=gpu:a100:1 --exclusive", site), "hera", "cpu")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))
    assert "hetjob component 1 runs in partition gpu, can start +2:00:00" in " ".join(v.notes)
    # the first exclusive, the gpu one not: that one shares g01 at once (the cpu nodes
    # are empty): now. Before: kept as written (the first's exclusivity not carried)
    v = only(_run_het("--exclusive", "--gres=gpu:a100:1", site), "hera", "cpu")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)


def _nvme_site():
    """hera with g01 (4 GPUs, 1 nvme) busy whole until +2 h (r1), g02 (4 GPUs, no nvme)
    idle, the cpu nodes one nvme each."""
    cfg, snap = hera(jobs=[running("r1", "g01", 2, 64, 4, partition="gpu")],
                     alloc={"g01": (64, 4)})
    gres = {"g01": {"gpu": 4, "nvme": 1}, "g02": {"gpu": 4}, "v01": {"gpu": 2}}
    nodes = [n.model_copy(update={"gres": gres.get(n.name, {"nvme": 1})}) for n in snap.nodes]
    return cfg, snap.model_copy(update={"nodes": nodes})


def test_a_components_own_gres_is_placed_with_it():
    site = _nvme_site()
    het = "#SBATCH -p cpu -N 1 -n 4 -t 1:00:00 {first}\n#SBATCH hetjob\n#SBATCH -p gpu {later}"
    # one a100: g02 now
    v = only(run(het.format(first="", later="-n 1 --gres=gpu:a100:1"), site), "hera", "cpu")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    # one a100 and an nvme: g01 only, once r1 ends (+2 h). Before: kept as written, only
    # the cpu component placed: READY now
    v = only(run(het.format(first="", later="-n 1 --gres=gpu:a100:1,nvme:1"), site), "hera",
             "cpu")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))
    # two such nodes: the gpu partition has one with nvme
    p = run(het.format(first="", later="-N 2 -n 2 --gres=gpu:a100:1,nvme:1"), site)
    assert reasons(p, "hera").startswith(
        "hetjob component 1: needs 2 nodes, partition gpu has only 1 that can run it")
    assert "(others: no node has gres 'nvme'" in reasons(p, "hera")
    # the first's nvme is its own (sbatch does not carry --gres over): the gpu component
    # starts on g02 now. Before, the first's kept --gres went with every component: it
    # waited for g01 (+2 h)
    v = only(run(het.format(first="--gres=nvme:1", later="-n 1 --gres=gpu:a100:1"), site),
             "hera", "cpu")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)


