"""An eighth set of realistic batch scripts (tests/fixtures/scripts_unseen8/<dialect>/), and
the gaps the seventh sweep left.

LSF compound resource requirements first: `-R "1*{rusage[mem=4000]} + 16*{span[ptile=8]
rusage[mem=1000]}"` was kept as an unknown string (every other scheduler got a one-slot job
and a "dropped" line). It is now a job of several shapes, as PBS chunk lists of different
shapes are (`JobSpec.components`): each term's slots with its own span, memory and cores.
Slurm gets a heterogeneous job, PBS chunks, LSF itself the string as written; a job of
several shapes from elsewhere reaches LSF as a compound requirement (one term a shape).

The fixtures: see the EXPECTED table's comments. Each is parsed, its needs read, translated
into every dialect (its own too) and read back; the key values are what each scheduler's
documentation says."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from diamond_jupyter.dialects.translate import (
    SCRIPT_DIALECTS,
    get_script_dialect,
    request_totals,
    translate,
)
from diamond_jupyter.model import BadInput
from diamond_jupyter.needs import needs_of
from tests.scripts_unseen_check import (
    ALL_STRICT,
    check_translation,
    sweep_tests,
)

HERE = Path(__file__).parent / "fixtures" / "scripts_unseen8"
G = 1024  # MB in a GB


# As in test_scripts_unseen7: whole-job totals (every one checked, None when left out),
# walltime seconds, array, deps, the options kept as unknown directives (in order), JobSpec
# fields; `needs_gpus`/`needs_mem` per node (needs_of); `per_cpu` the spec's memory per CPU;
# `node_mem` the spec's memory per node; `notes` words a parse note must hold; `ignored`
# how many directives the reader noted as ignored.
EXPECTED: dict[str, dict[str, Any]] = {
    # ---------------------------------------------------------------- Slurm
    # any unambiguous prefix of a long option is that option (getopt_long)
    "slurm/bcbio_long_option_prefixes.sbatch": dict(
        cpus=16, memory_mb=96 * G, needs_mem=96 * G, walltime=7 * 86400, name="bcbio_wgs",
        queue="long", mail_user="genomics@uni.example", mail_events=["fail"]),
    # a stepped array with a running limit; ARRAY_TASKS mails per task; --tmp kept
    "slurm/blast_array_step_throttle_mail_tasks.sbatch": dict(
        cpus=8, memory_mb=16 * G, needs_mem=16 * G, walltime=6 * 3600, array="0-999:7%20",
        name="blastx_chunks", mail_events=["end", "fail", "array_tasks"],
        mail_user="seqlab@uni.example", stdout="blast_%A_%a.out", unknown=["--tmp"]),
    # --nodes=4-8: at least 4 (kept as written); 1800M a CPU x 256 tasks
    "slurm/cp2k_node_range_spread_min_nodes.sbatch": dict(
        nodes=4, tasks=256, cpus=256, memory_mb=256 * 1800, per_cpu=1800,
        walltime=12 * 3600, name="cp2k_aimd", account="chem-aimd",
        unknown=["--nodes", "--spread-job", "--use-min-nodes", "--exclude"],
        notes=["node range 4-8 kept as minimum 4"]),
    # a partition list (the first that can run it); --gres=gpu:2 per node; one log for both
    "slurm/cryosparc_worker_partition_list.sbatch": dict(
        cpus=16, gpus=2, needs_gpus=2, memory_mb=64 * G, needs_mem=64 * G,
        walltime=48 * 3600, name="cryosparc_P12_J88", queue="gpu,gpu-preempt",
        stdout="/scratch/cryosparc/P12/J88/job.log", stderr="/scratch/cryosparc/P12/J88/job.log"),
    # the GPU entry of --gres read, nvme:1 kept; --thread-spec kept; whole nodes
    "slurm/deepspeed_nvme_gres_thread_spec.sbatch": dict(
        nodes=4, tasks=4, cpus=256, gpus=16, needs_gpus=4, gpu_type="a100", walltime=86400,
        exclusive=True, name="ds-zero3", queue="gpu", account="ml_research",
        stdout="logs/%x-%j.out", unknown=["--gres", "--thread-spec"]),
    # a quoted &-constraint is two features; singleton and --hint kept
    "slurm/gromacs_plumed_singleton_hint.sbatch": dict(
        nodes=2, tasks=128, cpus=256, walltime=23 * 3600 + 59 * 60, features=["cpu", "ib"],
        name="metad_walkers", queue="standard", qos="normal",
        unknown=["--hint", "--dependency"]),
    # `packjob`, the older spelling of `hetjob`: 1 x (1 task, 16 CPUs, 64G) + 2 x (4 tasks,
    # 4 GPUs, 200G)
    "slurm/horovod_packjob_parameter_server.sbatch": dict(
        nodes=3, tasks=9, cpus=24, gpus=8, needs_gpus=4, memory_mb=(64 + 400) * G,
        needs_mem=200 * G, walltime=5 * 3600, name="hvd-ps", account="dl_proj",
        notes=["heterogeneous job of 2 components"]),
    # --cpus-per-gpu=8 with one GPU a task: 8 CPUs a task
    "slurm/jax_multihost_gpus_per_task_cpus_per_gpu.sbatch": dict(
        nodes=2, tasks=8, cpus=64, gpus=8, needs_gpus=4, walltime=9000, gpu_bind="closest",
        name="jax-pjit", queue="gpu_a100"),
    # --time=0-10 is ten hours (D-H); --licenses kept; a reservation
    "slurm/matlab_licenses_reservation.sbatch": dict(
        cpus=16, memory_mb=64 * G, needs_mem=64 * G, walltime=10 * 3600,
        name="parfor_sweep", reservation="course_mat101", stdout="%x_%j.txt",
        unknown=["--licenses"]),
    # --time=2-00 is two days; 3900 MB a CPU x 16
    "slurm/orca_tmp_mem_per_cpu_days.sbatch": dict(
        nodes=1, tasks=16, cpus=16, memory_mb=16 * 3900, per_cpu=3900, walltime=2 * 86400,
        name="orca_dlpno", unknown=["--tmp"]),
    "slurm/spark_standalone_exclusive.sbatch": dict(
        nodes=3, tasks=3, cpus=96, memory_mb=3 * 180 * G, needs_mem=180 * G,
        walltime=3 * 3600, exclusive=True, name="spark-etl"),
    # short options with their values glued on (-n1 -c4 -t120 -pshared -Jname -opath)
    "slurm/stata_sas_glued_short_options.sbatch": dict(
        tasks=1, cpus=4, memory_mb=24000, needs_mem=24000, walltime=7200,
        name="stata_panel", queue="shared", stdout="results/%x_%j.log"),
    # what `scontrol write batch_script` gives for an `sbatch --wrap` job: no directives,
    # the command under sh; every scheduler's defaults
    "slurm/sbatch_wrap_recorded.sbatch": dict(),
    # --signal (to the batch shell) kept; the job may be requeued; append to the log
    "slurm/torchrun_requeue_signal_usr1.sbatch": dict(
        nodes=2, tasks=2, cpus=64, gpus=8, needs_gpus=4, walltime=4 * 3600,
        name="llama-ft", requeue=True, output_mode="append", stdout="ft-%j.log",
        unknown=["--signal"]),
    # -F (--nodefile) and --delay-boot kept; --mem=0 all of each node's memory
    "slurm/vasp_nodefile_delay_boot.sbatch": dict(
        nodes=2, tasks=96, cpus=96, node_mem=0, walltime=8 * 3600, name="vasp_relax",
        queue="cloud", unknown=["--nodefile", "--delay-boot"]),
    # ---------------------------------------------------------------- PBS Pro / Torque
    # 8 chunks of 128 ranks; job_priority and ompthreads kept; -S kept
    "pbs/derecho_cesm_priority_economy.pbs": dict(
        nodes=8, tasks=1024, cpus=1024, walltime=12 * 3600, name="case.run.b1850",
        queue="main", account="P93300606",
        unknown=["-l", "-l select:ompthreads", "-S"]),
    # queue@server: the queue elsewhere; model= (a site resource), site=needed=, group_list
    "pbs/pleiades_model_site_needed_group_list.pbs": dict(
        nodes=4, tasks=112, cpus=112, walltime=8 * 3600, name="mitgcm_llc270",
        queue="long", mail_events=["end"],
        unknown=["-S", "-l select:model", "-l", "-W"], notes=["-q long@pbspl1"]),
    # -J with a step; stagein carried as a diamond stage-in; both streams into a directory
    "pbs/pro_array_step_stagein.pbs": dict(
        nodes=1, tasks=1, cpus=1, memory_mb=2 * G, needs_mem=2 * G, walltime=1800,
        array="0-1000:10", name="icon_members", stdout="logs/", stderr="logs/",
        notes=["carried: line 6: 'in.nc@datahost:/archive/icon/init.nc'"]),
    # one rank of 32 threads; -r n: never rerun; -P (project) kept
    "pbs/pro_gaussian_ompthreads_rerun_no.pbs": dict(
        nodes=1, tasks=1, cpus=32, memory_mb=120 * G, needs_mem=120 * G,
        walltime=86400, name="g16_freq", requeue=False,
        unknown=["-l select:ompthreads", "-P"]),
    # -V and -v with a value and a name passed from the shell; two ids in afterany
    "pbs/pro_queue_at_server_depend_list_v.pbs": dict(
        nodes=1, tasks=1, cpus=8, memory_mb=32 * G, needs_mem=32 * G, walltime=2700,
        name="post_ens", queue="workq", account="NWP_ENS", stdout="post_ens.log",
        deps=[("afterany", ["1234.pbs01", "1235.pbs01"])], export_all=True,
        variables={"INPUT": "run1.nml"}, passed=["NPROC"]),
    # Moab's feature= and qos=; walltime in seconds; mem=64gb is the job's (32 GB a node)
    "pbs/torque_feature_walltime_seconds_qos.pbs": dict(
        nodes=2, tasks=32, cpus=32, memory_mb=64 * G, needs_mem=32 * G, walltime=7200,
        features=["haswell"], name="lammps_melt", qos="debug",
        mail_events=["fail", "end"], mail_user="md.group@uni.example"),
    # the GPUs' compute mode kept; naccesspolicy=singlejob and -n: the node to itself
    "pbs/torque_gpus_exclusive_process_naccess.pbs": dict(
        nodes=1, tasks=8, cpus=8, gpus=2, needs_gpus=2, walltime=36 * 3600, exclusive=True,
        name="cuda_md", queue="gpu", unknown=["-l nodes:exclusive_process", "-W"]),
    # two named hosts of 4 processes each; pmem is per process; -t with a limit
    "pbs/torque_named_nodes_pmem_array_throttle.pbs": dict(
        nodes=2, tasks=8, cpus=8, memory_mb=8 * 2 * G, per_cpu=2 * G, walltime=36000,
        array="1-10%2", name="qe_bands", queue="batch",
        working_directory="/scratch/qe/bands", notes=["named here: n001, n002"]),
    # ---------------------------------------------------------------- LSF
    # ended(ID) is afterany; %I the array index; rusage 2000 MB per slot x 4
    "lsf/blast_array_ended_dependency.lsf": dict(
        nodes=1, tasks=4, cpus=4, memory_mb=4 * 2000, per_cpu=2000, walltime=5400,
        array="1-500%25", deps=[("afterany", ["5678"])], name="blast",
        stdout="logs/blast.%j.%a.out", stderr="logs/blast.%j.%a.err"),
    # a compound requirement: 1 slot with 64 GB + 64 slots 32 a host with 2 GB each
    "lsf/compound_head_workers_project.lsf": dict(
        tasks=65, cpus=65, memory_mb=64 * G + 64 * 2 * G, needs_mem=64 * G,
        walltime=9000, name="wrf_coupled", queue="normal", account="ATM112",
        stdout="wrf.%j.out", stderr="wrf.%j.err", unknown=["-R{1} select"],
        notes=["compound resource requirement of 2 terms"]),
    # -gpu num per host, its mode and j_exclusive kept; -env all plus variables; -oo
    "lsf/gpu_exclusive_j_exclusive_env.lsf": dict(
        nodes=1, tasks=2, cpus=2, gpus=2, needs_gpus=2, walltime=12 * 3600, name="gmx_gpu",
        queue="gpu", stdout="gmx.%j.log", output_mode="truncate", export_all=True,
        variables={"OMP_NUM_THREADS": "8", "GMX_ENABLE_DIRECT_GPU_COMM": "1"},
        unknown=["-gpu mode", "-gpu j_exclusive"]),
    # -We (estimate) kept; -N mails at the end
    "lsf/orca_runtime_estimate_We_hours.lsf": dict(
        nodes=1, tasks=8, cpus=8, memory_mb=8 * 4000, per_cpu=4000, walltime=86400,
        name="orca_casscf", mail_user="qc.user@uni.example", mail_events=["end"],
        unknown=["-We"]),
    # several -R merged: both selects and-ed, the span and rusage read, order kept
    "lsf/several_R_select_order_span.lsf": dict(
        nodes=4, tasks=128, cpus=128, memory_mb=128 * 3 * G, per_cpu=3 * G,
        walltime=6 * 3600, exclusive=True, features=["avx512", "ib"], name="cfd_openfoam",
        unknown=["-R order"]),
    # -n 32,64 kept (at least 32); -M 2GB per process; -c (CPU time) kept
    "lsf/vasp_slot_range_ptile_M_units_cpu_limit.lsf": dict(
        nodes=2, tasks=32, cpus=32, memory_mb=32 * 2 * G, per_cpu=2 * G, walltime=48 * 3600,
        name="vasp_md", stdout="vasp.%j", unknown=["-n"],
        notes=["slot range 32,64 kept as minimum 32", "-M 2GB"]),
    # -XF (X11) and -I (interactive) kept; a bare -W is minutes
    "lsf/xf_interactive_flags_matlab.lsf": dict(
        nodes=1, tasks=4, cpus=4, memory_mb=4 * 4096, per_cpu=4096, walltime=4 * 3600,
        name="matlab_gui", queue="interactive", unknown=["-XF", "-I"]),
    # ---------------------------------------------------------------- Flux
    "flux/env_output_error_unbuffered.flux": dict(
        tasks=4, cpus=32, walltime=5400, stdout="logs/spark.out", stderr="logs/spark.err",
        variables={"OMP_NUM_THREADS": "8"}, unknown=["--env-remove", "--unbuffered"]),
    # 8 slots of 16 cores and a GPU on 2 nodes; a system attribute kept
    "flux/nslots_cores_gpus_nodes_setattr.flux": dict(
        nodes=2, tasks=8, cpus=128, gpus=8, needs_gpus=4, walltime=3 * 3600,
        name="icon-gpu", unknown=["--setattr"]),
    # `# FLUX:`; --bank is the account; urgency 8 and a begin time kept
    "flux/queue_bank_urgency_begin_time.flux": dict(
        tasks=1, cpus=2, walltime=600, name="nightly-check", queue="pdebug",
        account="guests", unknown=["--urgency"]),
    # -N 4 alone: a slot per node, whole nodes; the host list and MPI option kept
    "flux/setopt_mpi_requires_exclusive.flux": dict(
        nodes=4, tasks=4, cpus=4, walltime=7200, exclusive=True, queue="pbatch",
        unknown=["--requires", "--setopt"]),
    # an F58 id (with its ƒ) in afterok; the output template {{id}} is the job id
    "flux/short_opts_dependency_f58.flux": dict(
        tasks=8, cpus=32, gpus=8, needs_gpus=1, walltime=5400, name="train-resnet",
        deps=[("afterok", ["ƒ2Gf3xbKrwYd"])], stdout="train.%j.out"),
    # ---------------------------------------------------------------- Grid Engine
    # every tenth task, 5 at a time; each task waits for the same task of 4321
    "sge/array_step_tc_hold_jid_ad.sge": dict(
        nodes=1, cpus=2, memory_mb=2 * 4 * G, per_cpu=4 * G, walltime=7200,
        array="1-100:10%5", name="align_tasks", deps=[("afterany", ["4321"])],
        stdout="logs/%x.%a.out", stderr="logs/%x.%a.err"),
    # -b y and -shell n are qsub's own handling of the command: kept
    "sge/binary_b_y_shell_n.sge": dict(
        memory_mb=16 * G, per_cpu=16 * G, walltime=4 * 3600, name="sas_batch",
        queue="long.q", unknown=["-b", "-shell"]),
    # exclusive=true; -l gpu=2 the job's (smp: one host); -P kept
    "sge/gromacs_plumed_smp_gpu_exclusive.sge": dict(
        nodes=1, cpus=16, gpus=2, needs_gpus=2, walltime=48 * 3600, exclusive=True,
        name="gmx_plumed", unknown=["-P"], notes=["consumable of type JOB"]),
    # h_rt in seconds; -binding kept; -m bea
    "sge/h_rt_seconds_binding_linear.sge": dict(
        nodes=1, cpus=4, memory_mb=4 * 6 * G, per_cpu=6 * G, walltime=86400,
        name="cesm_post", mail_events=["begin", "end", "fail"],
        mail_user="climate@uni.example", unknown=["-binding"]),
    # mpi_fill: 64 slots as the PE fills hosts; the job's 4 GPUs; h_vmem per slot
    "sge/pe_mpi_fill_gpu_total_h_vmem.sge": dict(
        tasks=64, cpus=64, gpus=4, needs_gpus=1, memory_mb=64 * 3 * G, per_cpu=3 * G,
        walltime=12 * 3600, name="lammps_kokkos", notes=["consumable of type JOB"]),
    # a host group in the queue (long.q@@bigmem); -V and -v with a name passed
    "sge/stata_V_v_list_hostgroup_queue.sge": dict(
        nodes=1, cpus=8, memory_mb=8 * 8 * G, per_cpu=8 * G, walltime=72 * 3600,
        name="stata_bootstrap", queue="long.q", export_all=True,
        variables={"STATA_LIC": "/opt/stata/stata.lic"}, passed=["TMPDIR"],
        notes=["named here: @bigmem"]),
}

_FIELDS = ("name", "queue", "account", "qos", "reservation", "stdout", "stderr", "requeue",
           "comment", "mail_events", "mail_user", "working_directory", "output_mode")

test_every_fixture_has_expectations, test_parse_values, test_translates_or_reports = \
    sweep_tests(HERE, EXPECTED, fields=_FIELDS, strict=ALL_STRICT)


def _lsf(lines: str) -> str:
    return f"#!/bin/bash\n{lines}\n#BSUB -W 60\nmpirun ./model\n"


# ---------------------------------------------------------------- LSF compound requirements

_COMPOUND = [
    # a head slot with memory, then 16 slots 8 a host (rusage[mem] is per slot)
    ('-R "1*{select[type==any] rusage[mem=4000]} + 16*{span[ptile=8] rusage[mem=1000]}"',
     dict(nodes=None, tasks=17, cpus=17, gpus=None, memory_mb=4000 + 16 * 1000), 2),
    # a head of 4 cores on a host of its own, 64 ranks 32 a host; -n says the same 65
    ('-n 65 -R "1*{span[hosts=1] affinity[core(4)] rusage[mem=32GB]} '
     '+ 64*{span[ptile=32] rusage[mem=2GB]}"',
     dict(nodes=3, tasks=65, cpus=68, gpus=None, memory_mb=32 * G + 64 * 2 * G), 2),
    # one term alone is a compound string of one shape
    ('-R "16*{span[ptile=4] rusage[mem=500]}"',
     dict(nodes=4, tasks=16, cpus=16, gpus=None, memory_mb=8000), 1),
]


@pytest.mark.parametrize(("line", "totals", "shapes"), _COMPOUND)
def test_lsf_compound_requirements_are_jobs_of_several_shapes(line: str, totals: dict,
                                                              shapes: int) -> None:
    """Each term's slots and simple string are a shape of the job: the totals are the
    terms' sums, Slurm gets a heterogeneous job of the same totals, PBS a chunk each, and
    LSF the string back as written."""
    text = _lsf(f"#BSUB {line}")
    spec = get_script_dialect("lsf").parse_script(text)
    assert request_totals(spec) == totals
    assert len(spec.components) == (shapes if shapes > 1 else 0)
    assert any("compound resource requirement" in n for n in spec.metadata["parse_notes"])
    own = translate(text, "lsf", "lsf")[0]
    value = line.split("-R ", 1)[1]
    assert f"#BSUB -R {value}" in own.splitlines(), own
    slurm, warnings, _ = translate(text, "slurm", "lsf")
    assert slurm.count("#SBATCH hetjob") == shapes - 1
    assert request_totals(get_script_dialect("slurm").parse_script(slurm)) == totals
    pbs = translate(text, "pbs", "lsf")[0]
    assert request_totals(get_script_dialect("pbs").parse_script(pbs))["tasks"] == totals["tasks"]
    for target in SCRIPT_DIALECTS:
        check_translation(text, "lsf", target)


def test_a_compound_term_keeps_what_has_no_neutral_form_by_its_term() -> None:
    """`select[type==any]` of the first term has no neutral form: kept as that term's
    (`-R{1} select`), written back inside the string on LSF and named as dropped elsewhere
    (it was dropped with the whole string, and the job read as one slot)."""
    text = _lsf('#BSUB -R "1*{select[type==any] rusage[mem=4000]} + 16*{span[ptile=8]}"')
    spec = get_script_dialect("lsf").parse_script(text)
    assert [(d.option, d.value) for d in spec.unknown] == [("-R{1} select", "select[type==any]")]
    slurm, warnings, _ = translate(text, "slurm", "lsf")
    assert any(w.startswith("dropped:") and "select[type==any]" in w for w in warnings)
    assert "type==any" not in slurm


def test_a_job_of_several_shapes_reaches_lsf_as_a_compound_requirement() -> None:
    """A PBS job of two chunk shapes reached LSF as one shape spread evenly (136 CPUs
    over 129 slots rounded down to 129, the head's 64 GB spread too); now one term per
    shape, read back as the same job."""
    text = ("#!/bin/bash\n#PBS -l select=1:ncpus=8:mem=64gb+4:ncpus=32:mpiprocs=32\n"
            "#PBS -l walltime=1:00:00\n./run\n")
    script, warnings, spec = translate(text, "lsf", "pbs")
    assert '#BSUB -R "1*{span[hosts=1] rusage[mem=64GB] affinity[core(8)]} + ' \
        '128*{span[ptile=32]}"' in script.splitlines()
    assert "#BSUB -n 129" in script.splitlines()
    assert not any("shapes" in w and w.startswith("approximated") for w in warnings)
    back = get_script_dialect("lsf").parse_script(script)
    assert request_totals(back) == request_totals(spec)
    # a Slurm hetjob too
    het = ("#!/bin/bash\n#SBATCH -N 1 -n 1 -c 16 --mem=64G -t 1:00:00\n#SBATCH hetjob\n"
           "#SBATCH -N 4 --ntasks-per-node=32 --mem-per-cpu=2G\nsrun ./a : ./b\n")
    out = translate(het, "lsf", "slurm")[0]
    assert request_totals(get_script_dialect("lsf").parse_script(out)) == \
        request_totals(get_script_dialect("slurm").parse_script(het))
    # shapes whose GPUs differ: each term's own (-gpu would ask every host alike); GPUs
    # per task cannot be said per term: one shape, said
    gpus = text.replace("mpiprocs=32", "mpiprocs=32:ngpus=4")
    assert "rusage[ngpus_physical=4]" in translate(gpus, "lsf", "pbs")[0]
    het = het.replace("--mem-per-cpu=2G", "--mem-per-cpu=2G --gpus-per-task=1")
    assert any(w.startswith("approximated: a job of 2 shapes")
               for w in translate(het, "lsf", "slurm")[1])


@pytest.mark.parametrize(("lines", "words"), [
    ('#BSUB -R "1*{rusage[mem=4000]} + 8*{span[ptile=8]}"\n#BSUB -R "select[avx512]"',
     "line 3: -R 'select[avx512]' beside the compound resource requirement of line 2"),
    ('#BSUB -R "0*{rusage[mem=4000]} + 8*{span[ptile=8]}"', "bad slot count 0 in term 1"),
])
def test_a_compound_requirement_with_another_r_is_refused(lines: str, words: str) -> None:
    """LSF 10.1 (bsub -R): compound resource requirements do not support multiple -R
    options; a term asks for at least one slot. Bad input naming the line, not a job
    whose second -R silently replaced the first's sizes."""
    with pytest.raises(BadInput, match=re.escape(words)):
        get_script_dialect("lsf").parse_script(_lsf(lines))


def test_lsf_gpu_request_applies_to_every_compound_term() -> None:
    """`-gpu num=2` asks each host of the job: every term's hosts get 2 GPUs."""
    text = _lsf('#BSUB -gpu "num=2"\n#BSUB -R "2*{span[hosts=1]} + 8*{span[ptile=4]}"')
    spec = get_script_dialect("lsf").parse_script(text)
    assert request_totals(spec)["gpus"] == 2 + 2 * 2
    assert needs_of(spec).gpus == 2
    own = translate(text, "lsf", "lsf")[0]
    assert '#BSUB -gpu "num=2"' in own.splitlines()


def test_several_r_strings_merge_as_bsub_merges_them() -> None:
    """bsub merges every -R into one string: select sections are and-ed, rusage sections
    joined, a load index may appear once only. A second span (`span[ptile=4]` then
    `span[hosts=1]`) was read as both: one node of 4 tasks per node for 8 tasks, which the
    script's own LSF translation refused; now the last one, said. A second rusage[mem] was
    silently the memory; now bad input naming both lines."""
    text = ('#!/bin/bash\n#BSUB -n 8\n#BSUB -R "span[ptile=4]"\n#BSUB -R "span[hosts=1]"\n'
            '#BSUB -R "select[avx2]" -R "rusage[mem=2000]"\n#BSUB -R "rusage[tmp=100]"\n./a\n')
    spec = get_script_dialect("lsf").parse_script(text)
    r = spec.resources
    assert (r.nodes, r.tasks, r.tasks_per_node, r.memory_per_cpu_mb) == (1, 8, None, 2000)
    assert spec.constraints.features == ["avx2"]
    assert any("read as the last one" in n for n in spec.metadata["parse_notes"])
    own = translate(text, "lsf", "lsf")[0]
    assert '#BSUB -R "span[hosts=1] rusage[mem=2000MB:tmp=100] select[avx2]"' in own
    assert "lsf_span" not in spec.metadata and "lsf_rusage_mem" not in spec.metadata
    for target in SCRIPT_DIALECTS:
        check_translation(text, "lsf", target)
    twice = ('#!/bin/bash\n#BSUB -R "rusage[mem=2000]"\n'
             '#BSUB -R "rusage[mem=4GB:duration=10]"\n./a\n')
    with pytest.raises(BadInput, match=r"line 3: rusage mem again \(line 2 reserves it"):
        get_script_dialect("lsf").parse_script(twice)


def test_a_compound_term_of_dash_asks_nothing_more() -> None:
    """`3*{-}` (LSF's own example, `2*{span[ptile=1]} + 3*{-}`) is three slots wherever LSF
    puts them; a shape that says nothing else reaches LSF the same way."""
    text = '#!/bin/bash\n#BSUB -R "2*{span[ptile=1]} + 3*{-}"\n./a\n'
    spec = get_script_dialect("lsf").parse_script(text)
    assert request_totals(spec) == dict(nodes=None, tasks=5, cpus=5, gpus=None, memory_mb=None)
    assert spec.unknown == []
    assert '#BSUB -R "2*{span[ptile=1]} + 3*{-}"' in translate(text, "lsf", "lsf")[0]
    # with a kept slot range, -n is written once (the range)
    ranged = '#!/bin/bash\n#BSUB -n 5,8 -R "2*{span[ptile=1]} + 3*{-}"\n./a\n'
    own = [x for x in translate(ranged, "lsf", "lsf")[0].splitlines() if x.startswith("#BSUB -n")]
    assert own == ["#BSUB -n 5,8"]
    het = "#!/bin/bash\n#SBATCH -N 2 -n 2\n#SBATCH hetjob\n#SBATCH -n 3\n./a\n"
    assert '#BSUB -R "2*{span[ptile=1]} + 3*{-}"' in translate(het, "lsf", "slurm")[0]


# ---------------------------------------------------------------- Grid Engine -l gpu

def test_sge_job_wide_gpus_reach_every_scheduler_as_the_jobs() -> None:
    """`-l gpu=2` beside `-pe mpi 8` is the job's 2 GPUs (read as a consumable of type JOB,
    complex(5), said in a note with what a per-slot complex would give). Slurm gets the
    total (--gpus=2); PBS refused the translation (8 chunks of 2 GPUs: 16) and now spreads
    the 2 over the one-task chunks; flux refused it saying the total was unknown, and now
    asks per slot where the total divides among the slots, else drops it by name."""
    text = ("#!/bin/bash\n#$ -N md\n#$ -pe mpi 8\n#$ -l gpu=2,h_vmem=2G,h_rt=1:00:00\n"
            "mpirun ./md\n")
    spec = get_script_dialect("sge").parse_script(text)
    assert request_totals(spec)["gpus"] == 2
    assert any("consumable of type JOB" in n and "16 for the 8 slots" in n
               for n in spec.metadata["parse_notes"])
    assert "#SBATCH --gpus=2" in translate(text, "slurm", "sge")[0].splitlines()
    pbs, warnings, _ = translate(text, "pbs", "sge")
    assert "#PBS -l select=2:ncpus=1:mpiprocs=1:mem=2gb:ngpus=1+6:ncpus=1:mpiprocs=1:mem=2gb" \
        in pbs.splitlines()
    back = request_totals(get_script_dialect("pbs").parse_script(pbs))
    assert (back["gpus"], back["tasks"]) == (2, 8)
    assert any("2 with ngpus=1, 6 with none" in w for w in warnings)
    flux, warnings, _ = translate(text, "flux", "sge")
    assert "gpus" not in flux and any(w.startswith("dropped: 2 GPUs for the whole job")
                                      for w in warnings)
    even = text.replace("gpu=2", "gpu=8")
    assert "#flux: --gpus-per-slot=1" in translate(even, "flux", "sge")[0].splitlines()
    for target in SCRIPT_DIALECTS:
        check_translation(text, "sge", target)
        check_translation(even, "sge", target)


# ---------------------------------------------------------------- ranges of sizes

@pytest.mark.parametrize(("value", "nodes"), [("2-4", 2), ("4,8,16", 4), ("2-16:2", 2)])
def test_slurm_node_ranges_and_size_lists(value: str, nodes: int) -> None:
    """sbatch --nodes takes MIN-MAX and a list of sizes (`4,8,16`, `2-16:2`): the job gets
    one of them, at least the smallest. A size list was refused ("bad number"); a range's
    own round trip wrote `--nodes=2` and `--nodes=2-4` both. Now the least is read, the
    value kept as written, and written back once."""
    text = f"#!/bin/bash\n#SBATCH --nodes={value}\n#SBATCH --ntasks-per-node=4\nsrun ./a\n"
    spec = get_script_dialect("slurm").parse_script(text)
    assert spec.resources.nodes == nodes
    assert [(d.option, d.value) for d in spec.unknown] == [("--nodes", value)]
    own = translate(text, "slurm", "slurm")[0].splitlines()
    assert [x for x in own if x.startswith("#SBATCH --nodes")] == [f"#SBATCH --nodes={value}"]
    for target in SCRIPT_DIALECTS:
        check_translation(text, "slurm", target)
    with pytest.raises(BadInput, match="bad node count '4-2'"):
        get_script_dialect("slurm").parse_script(text.replace(value, "4-2"))
    # a template's placeholder is no range: kept and written back as it was
    for held in ("%NODES%", "<my_node_count>", "@NNODES@"):
        own = translate(text.replace(value, held), "slurm", "slurm")[0].splitlines()
        assert f"#SBATCH --nodes={held}" in own


def test_lsf_slot_range_and_torque_node_lists_as_documented() -> None:
    """`bsub -n 4,16`: at least 4 slots, at most 16 (kept for LSF as written, 4 tasks
    elsewhere); Torque `nodes=2:ppn=4+1:ppn=2` is 10 processes on 3 nodes (4, 4 and 2),
    which Slurm places the same with -N 3 -n 10 --ntasks-per-node=4."""
    lsf = "#!/bin/bash\n#BSUB -n 4,16\n#BSUB -W 30\nmpirun ./a\n"
    spec = get_script_dialect("lsf").parse_script(lsf)
    assert request_totals(spec)["tasks"] == 4
    own = translate(lsf, "lsf", "lsf")[0].splitlines()
    assert "#BSUB -n 4,16" in own and "#BSUB -n 4" not in own
    torque = "#!/bin/bash\n#PBS -l nodes=2:ppn=4+1:ppn=2\n#PBS -l walltime=1:00:00\n./a\n"
    spec = get_script_dialect("pbs").parse_script(torque)
    assert request_totals(spec) == dict(nodes=3, tasks=10, cpus=10, gpus=None, memory_mb=None)
    slurm = translate(torque, "slurm", "pbs")[0].splitlines()
    assert {"#SBATCH --nodes=3", "#SBATCH --ntasks=10", "#SBATCH --ntasks-per-node=4"} \
        <= set(slurm)


# ---------------------------------------------------------------- faults the fixtures showed

def test_flux_bank_option_is_the_account() -> None:
    """flux's `--bank=NAME` is `--setattr=bank=NAME` (flux-core's submission options): the
    bank the job is charged to. It was kept as an unknown option, so Slurm, PBS, LSF and
    Grid Engine got no account ("dropped"); now the account, written back as flux writes
    an account."""
    text = "#!/bin/bash\n#flux: -n 1\n#flux: --bank=guests\nhostname\n"
    spec = get_script_dialect("flux").parse_script(text)
    assert (spec.account, spec.unknown) == ("guests", [])
    assert "#SBATCH --account=guests" in translate(text, "slurm", "flux")[0].splitlines()
    own = get_script_dialect("flux").parse_script(translate(text, "flux", "flux")[0])
    assert own.account == "guests"


def test_torque_qos_resource_is_the_qos() -> None:
    """Torque (Moab) takes the QOS as `-l qos=NAME`, the form this renderer writes for a
    Torque job; the reader kept it as an unknown resource, so Slurm got no --qos (and a
    Torque round trip of a Slurm job's QOS came back without it)."""
    text = "#!/bin/bash\n#PBS -l nodes=1:ppn=4\n#PBS -l qos=debug\n./a\n"
    spec = get_script_dialect("pbs").parse_script(text)
    assert (spec.qos, spec.unknown) == ("debug", [])
    assert "#SBATCH --qos=debug" in translate(text, "slurm", "pbs")[0].splitlines()
    assert "#PBS -l qos=debug" in translate(text, "pbs", "pbs")[0].splitlines()


def test_sge_kept_slot_range_on_a_line_of_other_options() -> None:
    """A PE slot range (`-pe mpi 4-16`) is kept as written; on a line with other options
    it was rebuilt as `#$ -pe "mpi 4-16"`, one quoted word qsub reads as a PE name without
    slots (the script's own Grid Engine translation was refused). Now its two words."""
    text = "#!/bin/bash\n#$ -pe mpi 4-16 -l gpu=2\n#$ -N rng\n./a\n"
    own = translate(text, "sge", "sge")[0].splitlines()
    assert "#$ -pe mpi 4-16" in own and not any('"mpi 4-16"' in x for x in own)
    back = get_script_dialect("sge").parse_script("\n".join(own))
    assert [(d.option, d.value) for d in back.unknown] == [("-pe", "mpi 4-16")]
    check_translation(text, "sge", "sge")


def test_flux_gpus_per_node_without_tasks_is_a_slot_per_node() -> None:
    """`-N 2 --gpus-per-node=4` (flux's per-resource options, no task layout) was read as
    no task count, and written back with `--tasks-per-node=1`: read again it asked for 2
    tasks, a different job. Now read as one slot on each node, as it is written back."""
    text = "#!/bin/bash\n#flux: -N 2 --gpus-per-node=4\nflux run ./a\n"
    spec = get_script_dialect("flux").parse_script(text)
    assert request_totals(spec) == dict(nodes=2, tasks=2, cpus=2, gpus=8, memory_mb=None)
    assert needs_of(spec).gpus == 4
    for target in SCRIPT_DIALECTS:
        check_translation(text, "flux", target)


@pytest.mark.parametrize("pe", ["smp 1", "mpi 1"])
def test_sge_one_slot_pe_stays_on_its_own_round_trip(pe: str) -> None:
    """`-pe smp 1` (one slot, as sites whose GPU queues need a PE write it) was dropped on
    the script's own Grid Engine translation: one node of one CPU read back as nothing,
    and the job lost its PE (a queue that takes only PE jobs refuses it)."""
    text = f"#!/bin/bash\n#$ -pe {pe} -l gpu=2\n./a\n"
    own = translate(text, "sge", "sge")[0].splitlines()
    assert f"#$ -pe {pe}" in own
    check_translation(text, "sge", "sge")


def test_lsf_kept_span_is_the_strings_only_span() -> None:
    """`span[ptile=8]` without -n is one slot (kept as written); the script's own LSF
    translation wrote `span[hosts=1] span[ptile=8]`: two span sections in one string, where
    a resource requirement has one of each section. Now the kept span alone."""
    for text in ('#!/bin/bash\n#BSUB -R "span[ptile=8]"\n./a\n',
                 '#!/bin/bash\n#BSUB -n 16 -R "span[block=4]"\n./a\n'):
        own = translate(text, "lsf", "lsf")[0]
        strings = [x for x in own.splitlines() if x.startswith("#BSUB -R")]
        assert len(strings) == 1 and strings[0].count("span[") == 1, strings
        check_translation(text, "lsf", "lsf")


def test_pbs_mail_letters_keep_their_order() -> None:
    """`-m bea` came back as `-m abe` (sorted), so the script's own round trip read its
    events in another order (fail, begin, end) than the script gave them."""
    text = "#!/bin/bash\n#PBS -m bea\n#PBS -M u@uni.example\n#PBS -l select=1:ncpus=1\n./a\n"
    assert "#PBS -m bea" in translate(text, "pbs", "pbs")[0].splitlines()
    check_translation(text, "pbs", "pbs")


@pytest.mark.parametrize(("source", "text", "target", "line"), [
    ("lsf", "#!/bin/bash\n#BSUB -n 4,16\n#BSUB -W 30\nmpirun ./a\n", "sge", "#$ -pe mpi 4-16"),
    ("sge", "#!/bin/bash\n#$ -pe mpi 4-16\n#$ -l h_rt=0:30:0\nmpirun ./a\n", "lsf",
     "#BSUB -n 4,16"),
    ("sge", "#!/bin/bash\n#$ -pe orte 8-32\nmpirun ./a\n", "lsf", "#BSUB -n 8,32"),
])
def test_a_range_of_task_counts_reaches_the_scheduler_that_has_one(
        source: str, text: str, target: str, line: str) -> None:
    """LSF `-n MIN,MAX` and a Grid Engine MPI PE's `MIN-MAX` both let the scheduler start
    the job on any task count in the range. Each reached the other as its minimum alone,
    the range named as dropped; now as the other's range, said. Slurm (no range of task
    counts) still gets the minimum, the range named as dropped."""
    script, warnings, _ = translate(text, target, source)
    assert line in script.splitlines()
    assert any(w.startswith("approximated:") and "the same range of task counts" in w
               for w in warnings)
    assert not any(w.startswith("dropped:") for w in warnings), warnings
    slurm, said, _ = translate(text, "slurm", source)
    assert any(w.startswith("dropped:") for w in said)
    for t in SCRIPT_DIALECTS:
        check_translation(text, source, t)


def test_a_pbs_chunks_gpu_model_is_the_gpu_type_elsewhere() -> None:
    """A PBS site's GPU-model chunk resource (`select=2:ngpus=4:gpu_model=a100`) was kept
    for PBS alone: placement asked for A100s (needs_of reads it) but Slurm got untyped
    `--gpus-per-node=4` and LSF no gmodel, the model named as dropped. Now it is the GPU
    type: Slurm `--gpus-per-node=a100:4`, LSF `gmodel=a100`, PBS the chunk as written."""
    text = ("#!/bin/bash\n#PBS -l select=2:ncpus=32:mpiprocs=4:ngpus=4:gpu_model=a100:mem=250gb\n"
            "#PBS -l walltime=1:00:00\n./a\n")
    spec = get_script_dialect("pbs").parse_script(text)
    assert spec.resources.gpu_type == "a100" and needs_of(spec).gpu_type == "a100"
    slurm, warnings, _ = translate(text, "slurm", "pbs")
    assert "#SBATCH --gpus-per-node=a100:4" in slurm.splitlines()
    assert not any("gpu_model" in w and w.startswith("dropped") for w in warnings), warnings
    assert 'gmodel=a100' in translate(text, "lsf", "pbs")[0]
    own, said, _ = translate(text, "pbs", "pbs")
    assert "gpu_model=a100" in own and not any("GPU type" in w for w in said)
    # several chunk shapes: the hetjob's GPU component is typed too
    chunks = text.replace("select=2:", "select=1:ncpus=4+2:")
    assert "#SBATCH --gpus-per-node=a100:4" in translate(chunks, "slurm", "pbs")[0].splitlines()
    for target in SCRIPT_DIALECTS:
        check_translation(text, "pbs", target)
        check_translation(chunks, "pbs", target)


def test_lsf_gpus_in_a_resource_string_are_read() -> None:
    """`rusage[ngpus_physical=N:gmodel=X]`, LSF's GPU request inside a resource string (the
    form compound requirements take, and sites without -gpu), was kept as written: Slurm
    got no GPUs. Now N GPUs on each host of the type named; the script's own LSF gets the
    same form back. A job of several shapes whose GPUs differ reaches LSF with each term's
    GPUs (it was one shape, its GPUs spread evenly and rounded down)."""
    text = ('#!/bin/bash\n#BSUB -n 4\n'
            '#BSUB -R "span[hosts=1] rusage[mem=2000:ngpus_physical=2:gmodel=v100]"\n./a\n')
    spec = get_script_dialect("lsf").parse_script(text)
    assert (spec.resources.gpus_per_node, spec.resources.gpu_type, spec.unknown) == \
        (2, "v100", [])
    assert "#SBATCH --gpus-per-node=v100:2" in translate(text, "slurm", "lsf")[0].splitlines()
    own = translate(text, "lsf", "lsf")[0].splitlines()
    assert '#BSUB -R "span[hosts=1] rusage[mem=2000MB:ngpus_physical=2:gmodel=v100]"' in own
    assert not any(x.startswith("#BSUB -gpu") for x in own)
    compound = ('#!/bin/bash\n#BSUB -R "1*{rusage[mem=8000]} + '
                '8*{span[ptile=4] rusage[ngpus_physical=2:gmodel=a100]}"\n#BSUB -W 30\n./a\n')
    spec = get_script_dialect("lsf").parse_script(compound)
    assert request_totals(spec)["gpus"] == 4 and needs_of(spec).gpus == 2
    slurm = translate(compound, "slurm", "lsf")[0]
    assert slurm.split("#SBATCH hetjob")[1].count("--gpus-per-node=a100:2") == 1
    pbs = ("#!/bin/bash\n#PBS -l select=1:ncpus=8:mem=64gb+4:ncpus=32:mpiprocs=32:ngpus=4\n"
           "#PBS -l walltime=1:00:00\n./a\n")
    out, warnings, _ = translate(pbs, "lsf", "pbs")
    assert '128*{span[ptile=32] rusage[ngpus_physical=4]}' in out
    assert not any(x.startswith("#BSUB -gpu") for x in out.splitlines())
    assert request_totals(get_script_dialect("lsf").parse_script(out))["gpus"] == 16
    for t in SCRIPT_DIALECTS:
        check_translation(text, "lsf", t)
        check_translation(compound, "lsf", t)
        check_translation(pbs, "pbs", t)
