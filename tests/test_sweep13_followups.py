"""Follow-ups of the thirteenth sweep of batch scripts: what it left dropped or unread.

Grid Engine's `h_data` and `mem_free` are the job's memory per slot (as `h_vmem`), taken
as the site's `qconf -sc` says (JOB or HOST: once; mem_free that is no consumable: a
host's load value, once); CPU-time limits carried between PBS `cput`, Grid Engine
`h_cpu`/`s_cpu` and LSF `-c`; Slurm's any-of dependency (`?`) carried to LSF's `||` and
back; Slurm `--switches` still said dropped (PBS `place=group=` names a site's own
resource); an LSF GPU model with its memory (`NVIDIAA100_SXM4_80GB`) is the A100 family
at a site that says `a100`, with a note (tests/test_placement_cases3.py)."""

from __future__ import annotations

import pytest
from test_placement_cases import run
from test_placement_cases11 import QCONF_SC, gaia

from diamond_jupyter.dialects.translate import translate


def _directives(script: str, sentinel: str) -> list[str]:
    return [ln for ln in script.splitlines() if ln.startswith(sentinel)]


# --------------------------------------------------------------- h_data, mem_free

GE_MEM = "#!/bin/bash\n#$ -pe smp 4\n#$ -l h_rt=01:00:00,{}\n./app\n"


@pytest.mark.parametrize("key", ["mem_free", "h_data"])
def test_grid_engine_h_data_and_mem_free_are_memory_per_slot(key):
    text = GE_MEM.format(f"{key}=2G")
    out, warnings, spec = translate(text, "slurm")
    assert spec.resources.memory_per_cpu_mb == 2048 and spec.metadata["sge_memory"] == key
    assert "#SBATCH --mem-per-cpu=2G" in out
    assert any(f"-l {key}=2G read as the job's memory per slot" in w for w in warnings)
    assert not any(w.startswith("dropped") and key in w for w in warnings)
    out, warnings, _ = translate(text, "pbs")
    assert "#PBS -l select=1:ncpus=4:mem=8gb" in out  # 4 slots x 2G, one chunk
    out, warnings, _ = translate(text, "lsf")
    assert "rusage[mem=8GB]" in out
    out, warnings, _ = translate(text, "flux")  # flux batch asks no memory: said
    assert "dropped: memory request (2048MB; flux batch has none)" in warnings
    # back to Grid Engine: the complex as written, not turned into h_vmem
    out, _, _ = translate(text, "sge")
    assert f"#$ -l h_rt=01:00:00,{key}=2G" in out and "h_vmem" not in out


@pytest.mark.parametrize("asks", ["h_vmem=4G,mem_free=2G", "mem_free=2G,h_vmem=4G",
                                  "mem_free=2G\n#$ -l h_vmem=4G"])
def test_h_vmem_is_the_memory_beside_mem_free_which_stays_as_written(asks):
    text = GE_MEM.format(asks)
    out, warnings, spec = translate(text, "slurm")
    assert spec.resources.memory_per_cpu_mb == 4096 and "sge_memory" not in spec.metadata
    assert [d.value for d in spec.unknown] == ["mem_free=2G"]
    assert "#SBATCH --mem-per-cpu=4G" in out
    assert any(w.startswith("dropped") and "mem_free=2G" in w for w in warnings)
    out, _, _ = translate(text, "sge")
    lines = _directives(out, "#$ -l")
    assert len(lines) == 1 and "h_vmem=4G" in lines[0] and "mem_free=2G" in lines[0]


def test_h_data_is_the_memory_before_mem_free():
    _, _, spec = translate(GE_MEM.format("mem_free=1G,h_data=3G"), "slurm")
    assert (spec.resources.memory_per_cpu_mb, spec.metadata["sge_memory"]) == (3072, "h_data")
    assert [d.value for d in spec.unknown] == ["mem_free=1G"]


def test_bad_mem_free_is_refused_naming_it():
    from diamond_jupyter.model import BadInput
    with pytest.raises(BadInput, match="bad mem_free"):
        translate(GE_MEM.format("mem_free=lots"), "slurm")


def test_mem_free_taken_as_the_sites_complexes_say():
    # gaia: two 16-slot hosts of 64 GB. 4 slots x 20G: 80G a host, per slot (no qconf -sc,
    # or mem_free consumable YES): no host has it. Before, mem_free was no memory at all
    job = "#$ -pe smp 4\n#$ -l mem_free=20G\n#$ -l h_rt=1:00:00"
    for complexes in ("", QCONF_SC):
        v = run(job, gaia({}, {}, complexes)).ranked[0]
        assert v.reasons == ["needs 81920 MB memory per host, largest host has 65536 MB"]
    # consumable JOB: 20G once
    as_job = QCONF_SC.replace("mem_free   mf         MEMORY      <=    YES         YES",
                              "mem_free   mf         MEMORY      <=    YES         JOB")
    v = run(job, gaia({}, {}, as_job)).ranked[0]
    assert v.verdict == "READY"
    assert "mem_free is a consumable of type JOB here (qconf -sc): the job's 20G is taken " \
        "once, not times its 4 slots" in v.notes
    # no consumable (Grid Engine's own table): a host's load value, compared once
    load = "\n".join(ln for ln in QCONF_SC.splitlines() if not ln.startswith("mem_free"))
    v = run(job, gaia({}, {}, load)).ranked[0]
    assert v.verdict == "READY"
    assert "mem_free is no consumable (a host's load value) here (qconf -sc): the job's " \
        "20G is taken once, not times its 4 slots" in v.notes
    # h_data that is no consumable stays per slot (a limit of each process)
    v = run(job.replace("mem_free", "h_data"), gaia({}, {}, load)).ranked[0]
    assert v.reasons == ["needs 81920 MB memory per host, largest host has 65536 MB"]


# --------------------------------------------------------------- any-of dependencies

SLURM_ANY = "#!/bin/bash\n#SBATCH -n 2\n#SBATCH --dependency=afterok:11:12?afternotok:13\n./app\n"


def test_slurm_any_of_dependency_reaches_lsf_as_or_and_back():
    from diamond_jupyter.model import DEPENDENCY_ANY
    out, warnings, spec = translate(SLURM_ANY, "lsf", dependency_ids="target")
    assert spec.metadata[DEPENDENCY_ANY] is True and not spec.unknown
    assert '#BSUB -w "done(11) || done(12) || exit(13)"' in out
    assert not any("dependency" in w for w in warnings)
    back, warnings, lsf = translate(out, "slurm", dependency_ids="target")
    assert lsf.metadata[DEPENDENCY_ANY] is True
    assert '#SBATCH --dependency="afterok:11?afterok:12?afternotok:13"' in back
    # and Slurm to Slurm keeps `?`, not `,` (which would wait for all three)
    out, _, _ = translate(SLURM_ANY, "slurm")
    assert '#SBATCH --dependency="afterok:11:12?afternotok:13"' in out


@pytest.mark.parametrize("target", ["pbs", "sge", "flux"])
def test_any_of_dependency_is_said_dropped_where_a_scheduler_waits_for_all(target):
    out, warnings, _ = translate(SLURM_ANY, target, dependency_ids="target")
    assert "dropped: dependency afterok:11:12?afternotok:13 (any one of them suffices; " \
        f"{target} waits for all of a job's dependencies and has no any-of)" in warnings
    assert "11" not in "".join(ln for ln in out.splitlines() if ln.startswith("#"))
    lsf = '#!/bin/bash\n#BSUB -n 1\n#BSUB -w "ended(5) || exit(6)"\n./app\n'
    _, warnings, _ = translate(lsf, target, dependency_ids="target")
    assert any(w.startswith("dropped: dependency afterany:5?afternotok:6") for w in warnings)


def test_all_of_dependencies_and_mixed_forms_are_unchanged():
    out, _, spec = translate("#!/bin/bash\n#SBATCH --dependency=afterok:1,afternotok:2\n"
                             "./app\n", "lsf", dependency_ids="target")
    assert '#BSUB -w "done(1) && exit(2)"' in out
    out, _, _ = translate("#!/bin/bash\n#SBATCH --dependency=afterok:1:2\n./app\n", "pbs",
                          dependency_ids="target")
    assert "#PBS -W depend=afterok:1:2" in out
    # an any-of -w beside another -w: the second kept as written (no one neutral form)
    _, _, spec = translate("#!/bin/bash\n#BSUB -w \"done(4) || exit(4)\"\n"
                           "#BSUB -w \"done(9)\"\n./app\n", "slurm", "lsf")
    assert [d.job_ids for d in spec.dependencies] == [["4"], ["4"]]  # the any-of alone
    assert [d.option for d in spec.unknown if d.dialect == "lsf"] == ["-w"]
    # `&&` with `||`: LSF's own precedence, kept as written (said dropped elsewhere)
    _, warnings, spec = translate('#!/bin/bash\n#BSUB -w "done(1) && done(2) || exit(3)"\n'
                                  "./app\n", "slurm")
    assert not spec.dependencies and any("done(1) && done(2) || exit(3)" in w
                                         for w in warnings)


# --------------------------------------------------------------- CPU-time limits

CPU_LIMITED = {
    "pbs": "#!/bin/bash\n#PBS -l select=1:ncpus=4\n#PBS -l walltime=01:00:00,cput=03:30:00\n"
           "./app\n",
    "sge": "#!/bin/bash\n#$ -pe smp 4\n#$ -l h_rt=01:00:00,h_cpu=03:30:00\n./app\n",
    "lsf": "#!/bin/bash\n#BSUB -n 4\n#BSUB -W 1:00\n#BSUB -c 210\n./app\n",
}
WRITTEN = {"pbs": "#PBS -l cput=03:30:00", "sge": "h_cpu=03:30:00",
           "lsf": "#BSUB -c 3:30"}


@pytest.mark.parametrize("source", sorted(CPU_LIMITED))
@pytest.mark.parametrize("target", sorted(CPU_LIMITED))
def test_cpu_time_limit_carried_between_pbs_grid_engine_and_lsf(source, target):
    from diamond_jupyter.model import CPU_TIME
    out, warnings, spec = translate(CPU_LIMITED[source], target, source)
    assert spec.metadata[CPU_TIME] == 3.5 * 3600
    assert WRITTEN[target] in out
    assert not any(w.startswith("dropped") and ("cpu" in w.lower() or "-c" in w)
                   for w in warnings), warnings
    normalized = [w for w in warnings if "CPU factor" in w]
    # LSF's -c is normalized CPU time: said whenever it crosses to or from LSF
    assert bool(normalized) == ((source == "lsf") != (target == "lsf"))
    assert translate(out, source, target)[2].metadata[CPU_TIME] == 3.5 * 3600  # and back


@pytest.mark.parametrize("source", sorted(CPU_LIMITED))
@pytest.mark.parametrize("target", ["slurm", "flux"])
def test_cpu_time_limit_said_dropped_where_there_is_none(source, target):
    out, warnings, _ = translate(CPU_LIMITED[source], target, source)
    written = {"pbs": "pbs -l cput", "sge": "sge -l h_cpu", "lsf": "lsf -c"}[source]
    assert f"dropped: CPU-time limit 03:30:00 ({written}) ({target} has no per-job " \
        "CPU-time limit option)" in warnings
    assert "03:30" not in out and "3:30" not in out


def test_cpu_time_units_and_odd_forms():
    from diamond_jupyter.model import CPU_TIME, BadInput
    # LSF: minutes past 59, hours:minutes; rounded up to whole minutes going there
    assert translate("#!/bin/bash\n#BSUB -c 90\n./a\n", "pbs")[2].metadata[CPU_TIME] == 5400
    out, warnings, _ = translate("#!/bin/bash\n#PBS -l cput=100\n./a\n", "lsf")
    assert "#BSUB -c 0:02" in out and any("whole minutes, rounded up" in w for w in warnings)
    # a normalization host named: kept as written (its scale is that host's)
    _, warnings, spec = translate("#!/bin/bash\n#BSUB -c 60/hostA\n./a\n", "pbs")
    assert CPU_TIME not in spec.metadata and [d.option for d in spec.unknown] == ["-c"]
    assert any(w.startswith("dropped") and "-c 60/hostA" in w for w in warnings)
    # Grid Engine: h_cpu wins over s_cpu, whatever the order; s_cpu alone is carried, said
    for asks in ("s_cpu=1:00:00,h_cpu=2:00:00", "h_cpu=2:00:00,s_cpu=1:00:00"):
        out, _, spec = translate(f"#!/bin/bash\n#$ -l {asks}\n./a\n", "sge")
        assert spec.metadata[CPU_TIME] == 7200 and [d.value for d in spec.unknown] == \
            ["s_cpu=1:00:00"]
        assert "h_cpu=02:00:00" in out and "s_cpu=1:00:00" in out
    out, warnings, _ = translate("#!/bin/bash\n#$ -l s_cpu=1:00:00\n./a\n", "pbs")
    assert "cput=01:00:00" in out and any("soft CPU-time limit s_cpu" in w for w in warnings)
    assert "s_cpu=01:00:00" in translate("#!/bin/bash\n#$ -l s_cpu=1:00:00\n./a\n", "sge")[0]
    with pytest.raises(BadInput, match="bad cput"):
        translate("#!/bin/bash\n#PBS -l cput=soon\n./a\n", "slurm")
    with pytest.raises(BadInput, match="bad h_cpu"):
        translate("#!/bin/bash\n#$ -l h_cpu=soon\n./a\n", "slurm")


# --------------------------------------------------------------- --switches, place=group=

def test_switches_and_pbs_group_stay_dropped_saying_why():
    # no honest mapping: PBS's group resource is each site's own and binds every chunk;
    # Slurm's --switches counts leaf switches and gives up waiting for them
    out, warnings, _ = translate("#!/bin/bash\n#SBATCH -N 4\n#SBATCH --switches=1@1:00:00\n"
                                 "./app\n", "pbs")
    assert "group=" not in out
    assert any(w.startswith("dropped: #SBATCH --switches=1@1:00:00 (--switches 1@1:00:00: "
                            "no pbs equivalent; PBS place=group= puts every chunk") for w in
               warnings)
    out, warnings, _ = translate("#!/bin/bash\n#PBS -l select=4:ncpus=8\n"
                                 "#PBS -l place=scatter:group=switch\n./app\n", "slurm")
    assert "--switches" not in out
    assert any("(-l place:group=switch place=scatter:group=switch: no slurm equivalent; the "
               "group's resource is the PBS site's own" in w for w in warnings)
