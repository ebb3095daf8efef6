"""A twenty-second set of realistic batch scripts (tests/fixtures/scripts_unseen22/<dialect>/),
written as HPC centers' user guides show them: Slurm at NERSC (-C cpu with --qos=debug and
-L scratch,cfs; -C "gpu&hbm40g" on a shared GPU with --gpu-bind=none; premium QOS with
--gpu-bind=map_gpu; a realtime QOS on a whole node; a hetjob with srun --het-group; a shared
array with ARRAY_TASKS mail; a singleton chain with --signal and --open-mode), OLCF (Frontier
--gpus-per-task with --gpu-bind=closest and -S 8; --threads-per-core with --ntasks-per-gpu;
Andes --mem=0), TACC (ibrun scripts with trailing comments, a GPU partition, a training
reservation), LUMI (standard-g with a CPU mask in srun, small with --mem-per-cpu and
--hint), CSCS (Piz Daint's --ntasks-per-core beside --hint, Alps' --uenv/--view), JSC
(--gres=gpu:4 on the booster, --threads-per-core on a devel partition) and --network with
--switches; PBS Pro at ALCF Polaris (select=N:system=polaris, -l filesystems=home:eagle,
place=scatter:exclusive, preemptable arrays, a depend on a full server id) and NCAR
(Derecho's ompthreads and gpu_type, Casper's job_priority, develop), place=pack:excl with
two chunks, -V beside -v with -W umask; LSF at OLCF Summit (-nnodes with -alloc_flags gpumps
and a quoted "smt4 nvme", batch-hm with -w ended, -N mail, an array for jsrun ERF files) and
LLNL Lassen (-G, -core_isolation, -stage), span[ptile] with rusage[mem]; flux at LLNL
(`#flux: -N2 --queue=pbatch -t 1h`, --bank with --exclusive, -c/-g per task, --setattr,
afterany with --urgency, split output/error); Grid Engine at UK/EU universities (UCL Myriad
mem/tmpfs/gpu, Sheffield rmem, Leeds coproc_v100 with `-cwd -V` on one line, QMUL h_vmem per
slot, -ac context, an MPI PE with ib=true, -t with -tc and -hold_jid, gpu_type with -R y).

Each is parsed and compared with its EXPECTED row, its needs read, and translated into
every dialect (its own too) and read back (tests/scripts_unseen_check.py). Fault found,
fixed and shown by tests here that failed before: NCAR's job-wide GPU model (`#PBS -l
gpu_type=a100`, as Casper and Derecho write it) was kept unread while the same resource in a
chunk (`select=...:gpu_type=a100`) was the GPU type: placement took any GPU site, Slurm got
untyped `--gpus-per-node=4`, LSF no gmodel, and each translation said the line dropped; now
the GPU type, said approximated, and kept as written for PBS."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from diamond_jupyter.needs import needs_of
from tests.scripts_unseen_check import (
    ALL_STRICT,
    COMPARED_FIELDS,
    directive_lines,
    parse_lines,
    sweep_tests,
    translated,
)

HERE = Path(__file__).parent / "fixtures" / "scripts_unseen22"

# As in the earlier sweeps (tests/scripts_unseen_check.py names the keys): whole-job
# totals, walltime seconds, array, deps, the options kept as unknown directives (in order),
# JobSpec fields; needs_gpus/needs_mem per node. Output paths are in the neutral form.
EXPECTED: dict[str, dict[str, Any]] = {
    "flux/llnl_N2_pbatch_t1h.flux": dict(
        nodes=2, tasks=2, cpus=2, walltime=3600, name="tuo_run", queue="pbatch", exclusive=True),
    "flux/llnl_bank_exclusive_output.flux": dict(
        nodes=4, tasks=16, cpus=16, walltime=7200, queue="pdebug", account="physics",
        stdout="flux-%j.out", exclusive=True),
    "flux/llnl_dependency_afterany_and_urgency.flux": dict(
        tasks=1, cpus=1, walltime=300, deps=[("afterany", ["f2bQpWrN3u"])], unknown=["--urgency"],
        name="cleanup"),
    "flux/llnl_error_output_split_conf.flux": dict(
        tasks=2, cpus=2, walltime=900, name="split_io", stdout="logs/out.%j",
        stderr="logs/err.%j"),
    "flux/llnl_gpus_per_task_cores_per_task.flux": dict(
        nodes=1, tasks=4, cpus=96, gpus=4, walltime=1800, name="elcap_gpu", needs_gpus=4),
    "flux/llnl_setattr_system_conf.flux": dict(
        nodes=1, tasks=1, cpus=1, walltime=600, unknown=["--setattr"], name="cpx",
        exclusive=True),
    "lsf/generic_lsf_R_span_ptile_rusage_mem.lsf": dict(
        nodes=2, tasks=32, cpus=32, memory_mb=128000, walltime=28800, name="ptile16",
        queue="normal", stdout="%j.out", per_cpu=4000),
    "lsf/lassen_stage_and_core_isolation.lsf": dict(
        nodes=2, walltime=3600, unknown=["-G", "-core_isolation", "-stage"], name="lassen_iso",
        queue="pbatch"),
    "lsf/summit_alloc_flags_smt_nvme_quoted.lsf": dict(
        nodes=4, walltime=2700, unknown=["-alloc_flags"], name="bb_job", account="ABC123"),
    "lsf/summit_array_jsrun_erf.lsf": dict(
        nodes=1, walltime=600, array="1-20%5", name="ens", account="ABC123", stdout="ens.%j.%a"),
    "lsf/summit_batch_hm_queue_depend.lsf": dict(
        nodes=1, walltime=5400, deps=[("afterany", ["123456"])], name="hm_post", queue="batch-hm",
        account="ABC123"),
    "lsf/summit_debug_q_N_mail.lsf": dict(
        nodes=8, walltime=1800, name="dbg8", queue="debug", account="ABC123", mail_events=["end"],
        mail_user="user@ornl.gov"),
    "lsf/summit_nnodes_alloc_flags_gpumps.lsf": dict(
        nodes=2, walltime=7200, unknown=["-alloc_flags"], name="summit_mps", account="ABC123",
        stdout="summit_mps.%j", stderr="summit_mps.%j"),
    "pbs/ncar_casper_job_priority_mem.pbs": dict(
        nodes=1, tasks=1, cpus=1, memory_mb=10240, walltime=7200, unknown=["-l"],
        name="casper_serial", queue="casper", account="UABC0001", needs_mem=10240),
    "pbs/ncar_derecho_develop_shared_ncpus.pbs": dict(
        nodes=1, tasks=8, cpus=8, memory_mb=20480, walltime=600, name="dev_small",
        queue="develop", account="UABC0001", stdout="dev_small.out", stderr="dev_small.err",
        needs_mem=20480),
    "pbs/ncar_derecho_gpu_a100_mem.pbs": dict(
        nodes=1, tasks=4, cpus=64, gpus=4, memory_mb=491520, walltime=1800, unknown=["-l"],
        name="derecho_gpu", queue="main", account="UABC0001", gpu_type="a100", needs_gpus=4,
        needs_mem=491520),
    "pbs/ncar_derecho_main_cpu_ompthreads.pbs": dict(
        nodes=2, tasks=8, cpus=256, walltime=3600, unknown=["-k", "-l select:ompthreads"],
        name="derecho_hybrid", queue="main", account="UABC0001"),
    "pbs/pbs_pro_V_and_v_list_with_W_umask.pbs": dict(
        nodes=1, tasks=1, cpus=4, walltime=1200, unknown=["-W"], name="envjob", export_all=True,
        variables={"NPROC": "4", "MODE": "fast"}),
    "pbs/pbs_pro_place_pack_excl_hybrid.pbs": dict(
        nodes=1, tasks=37, cpus=74, walltime=14400, unknown=["-l place:pack"], name="packed",
        queue="workq", exclusive=True),
    "pbs/polaris_depend_afterok_and_mail.pbs": dict(
        nodes=4, walltime=10800,
        deps=[("afterok", ["1234567.polaris-pbs-01.hsn.cm.polaris.alcf.anl.gov"])],
        unknown=["-l select:system", "-l place:scatter", "-l"], queue="prod", account="MyProject",
        mail_events=["fail", "begin", "end"], mail_user="user@anl.gov"),
    "pbs/polaris_filesystems_home_eagle_place_scatter.pbs": dict(
        nodes=2, walltime=1800, unknown=["-l select:system", "-l place:scatter", "-l"],
        name="pol_scatter", queue="debug-scaling", account="MyProject"),
    "pbs/polaris_preemptable_array_J.pbs": dict(
        nodes=1, walltime=900, array="1-16", unknown=["-l select:system", "-l"], name="pre_arr",
        queue="preemptable", account="MyProject", requeue=True),
    "pbs/polaris_select_ngpus_mpiprocs_exclusive.pbs": dict(
        nodes=2, tasks=8, cpus=128, gpus=8, walltime=3600,
        unknown=["-l place:scatter", "-l place:exclusive", "-l", "-k"], name="pol_gpu",
        queue="prod", account="Catalyst", needs_gpus=4),
    "sge/ac_context_and_project.sge": dict(
        nodes=1, cpus=4, walltime=1800, unknown=["-P", "-ac"], name="ctxjob"),
    "sge/array_t_with_tc_and_hold_jid.sge": dict(
        memory_mb=1024, walltime=300, array="1-500:1%25", deps=[("afterany", ["4242"])],
        name="arr_after", per_cpu=1024),
    "sge/gpu_type_complex_and_R_y.sge": dict(
        nodes=1, cpus=16, gpus=1, walltime=21600, unknown=["-l gpu_type", "-R"], name="gputype",
        needs_gpus=1),
    "sge/leeds_arc_coproc_v100.sge": dict(
        walltime=172800, unknown=["-l coproc_v100"], name="arc_v100", export_all=True),
    "sge/mpi_pe_ib_and_highmem.sge": dict(
        tasks=64, cpus=64, memory_mb=131072, walltime=43200, unknown=["-l ib"], name="ibmpi",
        queue="parallel.q", stdout="logs/%x.o%j", stderr="logs/%x.e%j", per_cpu=2048),
    "sge/qmul_apocrita_h_vmem_per_slot.sge": dict(
        nodes=1, cpus=8, memory_mb=32768, walltime=86400, name="apoc", per_cpu=4096),
    "sge/sheffield_h_vmem_rmem_smp.sge": dict(
        nodes=1, cpus=8, walltime=14400, unknown=["-l rmem"], name="shef_smp",
        mail_events=["begin", "end", "fail"], mail_user="user@sheffield.ac.uk"),
    "sge/ucl_myriad_gpu_pe_smp.sge": dict(
        nodes=1, cpus=12, gpus=2, walltime=7200, unknown=["-l mem"], name="myriad_gpu",
        needs_gpus=2),
    "sge/ucl_myriad_h_rt_mem_tmpfs.sge": dict(
        walltime=600, unknown=["-l mem", "-l tmpfs"], name="myriad_serial",
        working_directory="/home/ucxxxxx/Scratch/output"),
    "slurm/alcf_aurora_like_slurm_network_single.sbatch": dict(
        nodes=1, tasks=16, cpus=16, walltime=1200, unknown=["--network", "--switches"],
        name="netsingle"),
    "slurm/cscs_alps_uenv_view_gh200.sbatch": dict(
        nodes=2, tasks=8, cpus=8, gpus=8, walltime=7200, unknown=["--uenv", "--view"],
        name="alps_gh", account="a-g42", needs_gpus=4),
    "slurm/cscs_daint_constraint_gpu_ntasks_per_core.sbatch": dict(
        nodes=4, tasks=4, cpus=48, walltime=1800, unknown=["--ntasks-per-core"], name="daint_gpu",
        queue="normal", account="s1234", features=["gpu"], ignored=1),
    "slurm/jsc_jureca_dc_develgpus_threads.sbatch": dict(
        nodes=1, tasks=2, cpus=128, gpus=2, walltime=600, unknown=["--threads-per-core"],
        queue="dc-gpu-devel", account="cjsc", needs_gpus=2),
    "slurm/jsc_juwels_booster_gres_gpu4.sbatch": dict(
        nodes=2, tasks=8, cpus=96, gpus=8, walltime=900, queue="booster", account="training2400",
        stdout="mpi-out.%j", stderr="mpi-err.%j", needs_gpus=4),
    "slurm/lumi_g_standard_g_cpu_bind_mask.sbatch": dict(
        nodes=2, tasks=16, cpus=16, gpus=16, walltime=86400, name="lumi_g", queue="standard-g",
        account="project_465000000", stdout="lumi_g.o%j", stderr="lumi_g.e%j", needs_gpus=8),
    "slurm/lumi_small_mem_per_cpu_hint.sbatch": dict(
        tasks=1, cpus=16, memory_mb=28000, walltime=43200, unknown=["--hint"], name="lumi_small",
        queue="small", account="project_462000000", per_cpu=1750),
    "slurm/nersc_array_shared_throttle_mail.sbatch": dict(
        tasks=1, cpus=2, memory_mb=3800, walltime=600, array="0-99%10", qos="shared",
        stdout="logs/task_%A_%a.out", mail_events=["fail", "array_tasks"],
        mail_user="user@lbl.gov", features=["cpu"], needs_mem=3800),
    "slurm/nersc_cpu_debug_licenses_cfs.sbatch": dict(
        nodes=2, walltime=1200, unknown=["--licenses"], name="cfs_debug", account="m9999",
        qos="debug", features=["cpu"]),
    "slurm/nersc_dependency_singleton_workflow.sbatch": dict(
        nodes=1, walltime=28800, unknown=["--dependency", "--signal"], name="chain_step",
        qos="regular", requeue=True, features=["cpu"]),
    "slurm/nersc_gpu_hbm40g_gpu_bind_none.sbatch": dict(
        tasks=1, cpus=32, gpus=1, walltime=7200, name="a40g", account="m9999_g", qos="shared",
        features=["gpu", "hbm40g"], needs_gpus=1),
    "slurm/nersc_het_group_cpu_gpu.sbatch": dict(
        nodes=1, walltime=3600, unknown=["hetjob", "--nodes", "--constraint", "--gpus"],
        name="hetwf", qos="regular", features=["cpu"]),
    "slurm/nersc_premium_regular_gpus_per_node.sbatch": dict(
        nodes=8, tasks=32, cpus=1024, gpus=32, walltime=21600, name="pm_premium",
        account="m4242_g", qos="premium", features=["gpu"], needs_gpus=4),
    "slurm/nersc_realtime_qos_exclusive.sbatch": dict(
        nodes=1, walltime=1800, name="rt_stream", qos="realtime", features=["cpu"],
        exclusive=True),
    "slurm/nersc_shared_qos_mem_per_cpu_cpu.sbatch": dict(
        tasks=1, cpus=4, memory_mb=7600, walltime=14400, name="serial_post", qos="shared",
        per_cpu=1900, features=["cpu"]),
    "slurm/olcf_andes_mem0_whole_node.sbatch": dict(
        nodes=1, tasks=32, cpus=32, walltime=3600, name="andes_mem", queue="batch",
        account="STF007"),
    "slurm/olcf_frontier_gpus_per_task_closest.sbatch": dict(
        nodes=16, tasks=128, cpus=128, gpus=128, walltime=7200, unknown=["--core-spec"],
        name="frontier_run", queue="batch", account="CSC999", stdout="%x-%j.out", needs_gpus=8),
    "slurm/olcf_frontier_threads_per_core_ntasks_per_gpu.sbatch": dict(
        nodes=2, tasks=32, cpus=32, gpus=16, walltime=2700,
        unknown=["--threads-per-core", "--ntasks-per-gpu"], name="tpc2", account="CSC999",
        needs_gpus=8),
    "slurm/tacc_frontera_normal_N_n.sbatch": dict(
        nodes=4, tasks=224, cpus=224, walltime=5400, name="myjob", queue="normal",
        account="myproject", stdout="myjob.o%j", stderr="myjob.e%j", mail_events=["all"],
        mail_user="username@tacc.utexas.edu"),
    "slurm/tacc_ls6_gpu_a100_small.sbatch": dict(
        nodes=1, tasks=1, cpus=1, walltime=2400, name="ls6gpu", queue="gpu-a100-small",
        stdout="ls6gpu.o%j"),
    "slurm/tacc_stampede_skx_dev_reservation.sbatch": dict(
        nodes=1, tasks=48, cpus=48, walltime=900, name="resv_job", queue="skx-dev",
        reservation="Training_Day2"),
}

test_every_fixture_has_expectations, test_parse_values, test_translates_or_reports = \
    sweep_tests(HERE, EXPECTED, fields=COMPARED_FIELDS, strict=ALL_STRICT, at_least=50)


# ------------------------------------------------------------ faults found, now fixed

NCAR_GPU = "pbs/ncar_derecho_gpu_a100_mem.pbs"


@pytest.mark.parametrize("lines", [
    "#PBS -l select=1:ncpus=8:ngpus=1\n#PBS -l gpu_type=v100",
    "#PBS -l gpu_type=v100\n#PBS -l select=1:ncpus=8:ngpus=1",
    "#PBS -l select=1:ncpus=8:ngpus=1,gpu_type=v100",
])
def test_a_job_wide_pbs_gpu_model_is_the_gpu_type(lines: str):
    spec = parse_lines("pbs", lines)
    assert spec.resources.gpu_type == "v100"
    assert needs_of(spec).gpu_type == "v100"
    assert [(d.option, d.value) for d in spec.unknown] == [("-l", "gpu_type=v100")]


def test_a_job_wide_pbs_gpu_model_that_is_no_name_stays_unread():
    spec = parse_lines("pbs", "#PBS -l select=1:ncpus=8:ngpus=1\n#PBS -l gpu_type=$GPU")
    assert spec.resources.gpu_type is None


@pytest.mark.parametrize(("target", "sentinel", "typed"), [
    ("slurm", "#SBATCH", "#SBATCH --gpus-per-node=a100:4"),
    ("lsf", "#BSUB", '#BSUB -gpu "num=4:gmodel=a100"'),
])
def test_the_ncar_gpu_model_reaches_other_schedulers_typed(target: str, sentinel: str,
                                                           typed: str):
    script, warnings = translated(HERE, NCAR_GPU, target)
    assert typed in directive_lines(script, sentinel)
    assert not [w for w in warnings if w.startswith("dropped") and "gpu_type" in w], warnings
    assert any(w.startswith("approximated: #PBS -l gpu_type=a100") and "GPU type" in w
               for w in warnings), warnings


def test_the_ncar_gpu_model_stays_as_written_for_pbs_and_is_not_said_dropped():
    script, warnings = translated(HERE, NCAR_GPU, "pbs")
    assert "#PBS -l gpu_type=a100" in directive_lines(script, "#PBS")
    assert not [w for w in warnings if "GPU type" in w or "gpu_type" in w], warnings
