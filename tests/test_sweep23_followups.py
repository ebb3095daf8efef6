"""Follow-ups of the twenty-third sweep of batch scripts: what it left unread or dropped.

Univa/Altair Grid Engine's `-l m_mem_free` is the job's memory per slot (a host consumable
of type YES unless the site's `qconf -sc` says JOB), carried by translation and seen by
placement's memory check. Flux `--cc=IDSET` (a copy per id, each told its id by
$FLUX_JOB_CC) is an array of those indexes where the target has arrays, `{cc}` in its output
paths the array index; flux batch itself refuses --cc, which is said. PBS `-v` values quoted
around commas (`LIST='a,b',X=1`) are one value each, as qsub reads them."""

from __future__ import annotations

import pytest
from test_placement_cases import run
from test_placement_cases11 import QCONF_SC, gaia

from diamond_jupyter.dialects.translate import translate
from diamond_jupyter.model import BadInput

# --------------------------------------------------------------------------- m_mem_free

UGE = "#!/bin/bash\n#$ -pe smp 4\n#$ -l h_rt=01:00:00,m_mem_free=2G\n./app\n"
M_MEM_FREE = "m_mem_free mfree      MEMORY      <=    YES         YES        0        0\n"


def test_m_mem_free_is_the_memory_per_slot_carried_by_translation():
    out, warnings, spec = translate(UGE, "slurm")
    assert spec.resources.memory_per_cpu_mb == 2048
    assert spec.metadata["sge_memory"] == "m_mem_free" and not spec.unknown
    assert "#SBATCH --mem-per-cpu=2G" in out
    assert any("-l m_mem_free=2G read as the job's memory per slot" in w for w in warnings)
    assert not any("m_mem_free" in w and w.startswith("dropped") for w in warnings)
    out, _, _ = translate(UGE, "pbs")
    assert "#PBS -l select=1:ncpus=4:mem=8gb" in out  # 4 slots x 2G, one chunk
    # back to Grid Engine: the complex as written, not turned into h_vmem
    out, _, _ = translate(UGE, "sge")
    assert "#$ -l h_rt=01:00:00,m_mem_free=2G" in out and "h_vmem" not in out


def test_h_vmem_beside_m_mem_free_is_the_memory_and_m_mem_free_stays_as_written():
    out, _, spec = translate(UGE.replace("m_mem_free=2G", "m_mem_free=2G,h_vmem=3G"), "slurm")
    assert spec.resources.memory_per_cpu_mb == 3072 and "sge_memory" not in spec.metadata
    assert [d.value for d in spec.unknown] == ["m_mem_free=2G"]


def test_placement_sees_m_mem_free_as_memory_per_slot():
    # gaia: two 16-slot hosts of 64 GB. 4 slots x 20G = 80G a host: no host has it (before,
    # m_mem_free was no memory at all and the job was READY)
    job = "#$ -pe smp 4\n#$ -l m_mem_free=20G\n#$ -l h_rt=1:00:00"
    for complexes in ("", QCONF_SC + M_MEM_FREE):
        v = run(job, gaia({}, {}, complexes)).ranked[0]
        assert v.reasons == ["needs 81920 MB memory per host, largest host has 65536 MB"]
    # a site whose m_mem_free is of type JOB: 20G once
    as_job = QCONF_SC + M_MEM_FREE.replace("YES        0", "JOB        0")
    v = run(job, gaia({}, {}, as_job)).ranked[0]
    assert v.verdict == "READY"
    assert "m_mem_free is a consumable of type JOB here (qconf -sc): the job's 20G is " \
        "taken once, not times its 4 slots" in v.notes
    # 4 x 10G fits a host
    assert run(job.replace("20G", "10G"), gaia({}, {}, "")).ranked[0].verdict == "READY"


# --------------------------------------------------------------------------- flux --cc

CC = ("#!/bin/bash\n#flux: -n 1\n#flux: -t 5m\n#flux: --cc={ids} --output=run.{{cc}}.out\n"
      "./case \"$FLUX_JOB_CC\" $((FLUX_JOB_CC + 1))\n")


def test_flux_copies_are_an_array_of_their_ids_with_the_index_variable():
    text = CC.format(ids="1-10")
    out, warnings, spec = translate(text, "slurm")
    assert spec.array.expression == "1-10" and not spec.unknown
    assert "#SBATCH --array=1-10" in out and "#SBATCH --output=run.%a.out" in out
    assert './case "$SLURM_ARRAY_TASK_ID" $((SLURM_ARRAY_TASK_ID + 1))' in out
    assert any("--cc=1-10" in w and "flux batch would refuse it" in w for w in warnings)
    assert not any(w.startswith("dropped") for w in warnings)
    out, _, _ = translate(text, "pbs")
    assert "#PBS -J 1-10" in out and "#PBS -o run.^array_index^.out" in out
    assert '"$PBS_ARRAY_INDEX"' in out
    out, _, _ = translate(text, "sge")
    assert "#$ -t 1-10" in out and "$SGE_TASK_ID" in out
    out, _, _ = translate(text, "lsf")
    assert "$LSB_JOBINDEX" in out and "[1-10]" in out


def test_flux_copy_ids_are_kept_as_written_a_list_and_brackets_too():
    out, _, spec = translate(CC.format(ids="[0,2,5-7]"), "slurm")
    assert spec.array.expression == "0,2,5-7" and "#SBATCH --array=0,2,5-7" in out


@pytest.mark.parametrize("ids", ["1-10", "[0,2,5-7]"])
def test_copies_are_refused_for_flux_batch_saying_what_to_do_instead(ids: str):
    # flux batch has no --cc: the line it would refuse is never written
    with pytest.raises(BadInput) as exc:
        translate(CC.format(ids=ids), "flux")
    msg = str(exc.value)
    assert msg.startswith(f"line 4: --cc={ids}: flux batch cannot express copies of a job")
    assert "a job array is no flux batch concept" in msg and "\n" not in msg
    assert "split the job into one batch script per copy" in msg
    assert f"`flux submit --cc={ids}`" in msg


def test_copies_refused_when_rendered_for_a_flux_site():
    from diamond_jupyter.dialects.translate import get_script_dialect
    flux = get_script_dialect("flux")
    spec = flux.parse_script(CC.format(ids="1-4"))
    with pytest.raises(BadInput, match=r"^line 4: --cc=1-4: flux batch cannot express"):
        flux.render_script(spec)
    # an array from another scheduler is still a drop, said (no --cc line written)
    slurm = get_script_dialect("slurm").parse_script(
        "#!/bin/bash\n#SBATCH --array=1-4\n#SBATCH -t 5\n./a\n")
    rendered = flux.render_script(slurm)
    assert "--cc" not in rendered.script
    assert any(w.startswith("dropped: array 1-4") for w in rendered.warnings)


def test_reading_copies_says_flux_batch_would_refuse_the_line():
    _, warnings, spec = translate(CC.format(ids="1-3"), "slurm")
    assert "line 4: `#flux: --cc=1-3 --output=run.{cc}.out`: flux batch would refuse it " \
        "(--cc is an option of flux submit and flux bulksubmit); its copies, each told its " \
        "id by $FLUX_JOB_CC, read as a job array of indexes 1-3" in warnings
    assert spec.array.expression == "1-3"


@pytest.mark.parametrize("target", ["slurm", "pbs", "lsf", "sge"])
def test_copy_id_without_cc_is_kept_as_written_and_said(target: str):
    text = "#!/bin/bash\n#flux: -n 1\n#flux: -t 5m\n./case \"$FLUX_JOB_CC\" $((FLUX_JOB_CC+1))\n"
    out, warnings, spec = translate(text, target)
    assert spec.array is None
    assert './case "$FLUX_JOB_CC" $((FLUX_JOB_CC+1))' in out
    assert f"kept: line 4: $FLUX_JOB_CC (a --cc copy's id, and the job has no --cc) has no " \
        f"{target} equivalent" in warnings


def test_one_task_of_one_cpu_reaches_grid_engine_as_its_default_not_dropped():
    # Grid Engine has no -pe for one slot: the job it is given without one is that
    text = "#!/bin/bash\n#flux: -N 1\n#flux: -n 1\n#flux: -c 1\n#flux: -t 5m\n./a\n"
    out, warnings, _ = translate(text, "sge")
    assert "-pe" not in out and "#$ -l h_rt=00:05:00" in out
    assert not any(w.startswith("dropped") for w in warnings), warnings
    # one task of 4 CPUs: a shared-memory PE on one host, one task
    out, warnings, _ = translate(text.replace("-c 1", "-c 4"), "sge")
    assert "#$ -pe smp 4" in out and warnings == []
    # one node of 8 tasks is no default: a PE's allocation rule may spread them, said
    out, warnings, _ = translate(text.replace("-n 1", "-n 8").replace("#flux: -c 1\n", ""),
                                 "sge")
    assert "#$ -pe mpi 8" in out
    assert any(w.startswith("approximated: 1 node") for w in warnings), warnings


def test_cc_elsewhere_is_said_by_name_and_a_bad_id_set_refused():
    text = CC.format(ids="3-4").replace("./case", "#flux: --job-name=c{cc}\n./case {cc}")
    out, warnings, _ = translate(text, "slurm")
    assert "#SBATCH --job-name=c{cc}" in out and "./case {cc}" in out
    assert any(w.startswith("line 5: {cc} (each copy's id under --cc) in its directive")
               for w in warnings)
    assert any(w.startswith("line 6: {cc} (each copy's id under --cc) in the script's text")
               for w in warnings)
    for ids in ("10-1", "a-b", "1-"):
        with pytest.raises(BadInput, match=rf"line 4: bad id set '{ids}' .* such as 1-10 or"):
            translate(CC.format(ids=ids), "slurm")


# --------------------------------------------------------------------- PBS -v quoted values

PBS_V = "#!/bin/bash\n#PBS -l select=1:ncpus=1\n#PBS -v {}\n./app \"$LIST\" $X\n"


@pytest.mark.parametrize("given", ["\"LIST='a,b',X=1\"", "'LIST=\"a,b\",X=1'",
                                   "\"X=1,LIST='a,b'\""])
def test_pbs_v_value_quoted_around_commas_is_one_value_and_the_rest_carried(given):
    out, warnings, spec = translate(PBS_V.format(given), "slurm")
    assert spec.environment.variables == {"LIST": "a,b", "X": "1"} and not spec.unknown
    assert "#SBATCH --export=ALL,X=1" in out and "export LIST=a,b" in out
    assert not any("-v" in w for w in warnings)
    out, _, _ = translate(PBS_V.format(given), "pbs")
    assert "#PBS -v X=1" in out and "export LIST=a,b" in out


@pytest.mark.parametrize("given", ["\"LIST='a,b,X=1\"", "\"LIST='a,b'c,X=1\""])
def test_pbs_v_quote_left_open_or_run_on_is_kept_as_written_and_said(given):
    out, warnings, spec = translate(PBS_V.format(given), "slurm")
    assert spec.environment.variables == {}
    assert any(w.startswith("dropped: #PBS -v") for w in warnings)
    out, _, _ = translate(PBS_V.format(given), "pbs")
    assert f"#PBS -v {given}" in out
