"""An eleventh set of realistic batch scripts (tests/fixtures/scripts_unseen11/<dialect>/),
mostly of the dialects the earlier sweeps held fewest of (flux 50, Grid Engine 53, LSF 68,
PBS 78 against Slurm's 144): flux per-resource sizes (--cores, --gpus-per-node, --tasks-per-node),
--requires, --bank, --cwd, --setattr, --signal, --conf, -t in bare minutes and days, the
spaced `# flux:` sentinel; Grid Engine `-pe smp` with h_vmem per slot, `-m bea`, `-V`,
`-j y`, `-l gpu` with `-binding`, stepped arrays with `-hold_jid_ad`, PE slot ranges with
`-A` and `-R y`, `-S`, `-wd`, `-p`, `-r n`, `-l exclusive=true` and `arch`; LSF slot ranges
with ptile and -M, `-gpu` with mode and gmodel, a usage string of several usages,
`-w ended()`, `-eo`, an array's running limit, `-b` with a day and no month, `-E`/`-Ep`;
PBS Pro `-P`, place=pack:shared, `-p`, `-S`, ompthreads chunks, dependency lists; Torque
node properties after ppn, `-d`, naccesspolicy.

Each is parsed and compared with its EXPECTED row (the values each scheduler's
documentation gives), its needs read, and translated into every dialect (its own too)
and read back (tests/scripts_unseen_check.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.scripts_unseen_check import ALL_STRICT, sweep_tests

HERE = Path(__file__).parent / "fixtures" / "scripts_unseen11"
G = 1024  # MB in a GB

# As in the earlier sweeps: whole-job totals (every one checked, None when left out),
# walltime seconds, array, deps, the options kept as unknown directives (in order), JobSpec
# fields; `needs_gpus`/`needs_mem` per node (needs_of); `per_cpu` memory per CPU; `notes`
# words a parse note holds.
EXPECTED: dict[str, dict[str, Any]] = {
    # ---------------------------------------------------------------- flux
    # -n 8 -c 2: 8 slots of 2 cores; --bank is the account; --setattr and --urgency kept
    "flux/bank_cwd_setattr_urgency.flux": dict(
        tasks=8, cpus=16, walltime=90 * 60, account="physics",
        working_directory="/p/lustre1/user/qcd", unknown=["--setattr", "--urgency"]),
    # {{id}} is the job id; --env=NAME=VALUE sets it
    "flux/dependency_afterany_env.flux": dict(
        tasks=4, cpus=4, walltime=1800, deps=[("afterany", ["fBuN8kqGmy5"])],
        name="collect", stderr="collect.%j.err", variables={"OMP_NUM_THREADS": "4"}),
    # per-resource: 4 GPUs and 4 tasks on each of 2 nodes; --requires=ampere a property
    "flux/gpus_per_node_requires.flux": dict(
        nodes=2, tasks=8, cpus=8, gpus=8, needs_gpus=4, walltime=6 * 3600,
        features=["ampere"], name="ddp_train"),
    # --cores=64 on 2 nodes: 32 cores on each (one slot a node)
    "flux/ior_cores_per_resource.flux": dict(
        nodes=2, tasks=2, cpus=64, walltime=7200, name="ior_bench", queue="pdebug",
        stdout="ior.%j.out", notes=["--cores=64 on 2 nodes"]),
    # -N 16 --exclusive: whole nodes; 1.5d; --signal and --conf kept
    "flux/long_exclusive_signal_conf.flux": dict(
        nodes=16, tasks=16, cpus=16, walltime=36 * 3600, exclusive=True,
        name="climate_spinup", queue="pbatch", unknown=["--signal", "--conf"]),
    # `# flux:` with a blank is RFC 36's sentinel too; -t 45 is minutes; -o is --setopt
    "flux/spaced_sentinel_bare_minutes.flux": dict(
        tasks=1, cpus=1, walltime=45 * 60, name="quick_check", unknown=["--setopt"]),
    # ---------------------------------------------------------------- Grid Engine
    # -pe smp 16 on one host; h_vmem=6G per slot: 96G; -m bea; -V; -j y
    "sge/smp_h_rt_mail_bea_cwd.sge": dict(
        nodes=1, cpus=16, memory_mb=16 * 6 * G, per_cpu=6 * G, walltime=48 * 3600,
        name="trinity_asm", stdout="logs/trinity.log", mail_events=["begin", "end", "fail"],
        mail_user="genomics@lab.example", export_all=True),
    # -l gpu=2 beside an smp PE: the job's 2; -binding kept
    "sge/gpu_queue_binding_linear.sge": dict(
        nodes=1, cpus=4, gpus=2, needs_gpus=2, walltime=12 * 3600, name="cryo_refine",
        queue="gpu.q", unknown=["-binding"]),
    # -t 1-100:5 stepped; -hold_jid_ad: task by task (afterany); mem_free kept
    "sge/array_step_hold_jid_ad.sge": dict(
        walltime=600, array="1-100:5", deps=[("afterany", ["5511"])], name="resample",
        memory_mb=2 * G, per_cpu=2 * G),
    # -pe mpi 32-64: at least 32 (the range kept); -A the account; -R y kept
    "sge/mpi_pe_range_account_reserve.sge": dict(
        tasks=32, cpus=32, walltime=86400, name="dft_scan", account="materials-lab",
        unknown=["-pe", "-R"], notes=["slot range mpi 32-64"]),
    # -S the shell; -wd the directory; -r n; -p (priority) kept; h_rt=0:20:0
    "sge/sh_shell_wd_priority_no_rerun.sge": dict(
        walltime=1200, name="tidy", stdout="tidy.out", stderr="tidy.err", requeue=False,
        working_directory="/data/projects/tidy", shell="/bin/sh", unknown=["-p"]),
    # -l exclusive=true: whole hosts; arch=lx-amd64 is x86_64
    "sge/orte_exclusive_arch.sge": dict(
        tasks=48, cpus=48, walltime=36 * 3600, exclusive=True, architecture="x86_64",
        name="lammps_big"),
    # ---------------------------------------------------------------- PBS Pro / Torque
    # -P is PBS Pro's project (kept, not an account); place=pack:shared, -p and -S kept
    "pbs/project_P_place_pack_shared.pbs": dict(
        nodes=1, tasks=1, cpus=24, memory_mb=48 * G, needs_mem=48 * G, walltime=5 * 3600,
        name="xtb_screen", unknown=["-P", "-l place:pack", "-l place:shared", "-p", "-S"]),
    # Torque: a node property after ppn; -d the directory; naccesspolicy=singlejob a
    # whole node (Moab's)
    "pbs/torque_d_workdir_feature_naccess.pbs": dict(
        nodes=1, tasks=16, cpus=16, memory_mb=64 * G, needs_mem=64 * G, walltime=36000,
        features=["haswell"], exclusive=True, name="hmmer_scan", queue="batch",
        working_directory="/scratch/bio/hmmer"),
    # two ids in one afterok; -r n; -j oe into -o
    "pbs/pro_depend_afterok_list_r_n.pbs": dict(
        nodes=1, tasks=1, cpus=8, memory_mb=16 * G, needs_mem=16 * G, walltime=5400,
        deps=[("afterok", ["4411.pbs01", "4412.pbs01"])], name="merge_shards",
        stdout="merge.log", requeue=False),
    # 2 chunks of 32 CPUs, 4 ranks of 8 threads, 4 GPUs, 240gb each; ompthreads kept
    "pbs/pro_two_chunk_gpu_ompthreads.pbs": dict(
        nodes=2, tasks=8, cpus=64, gpus=8, needs_gpus=4, memory_mb=2 * 240 * G,
        needs_mem=240 * G, walltime=12 * 3600, name="gpu_mpi_omp", queue="gpu",
        account="ai-lab", unknown=["-l select:ompthreads"]),
    # ---------------------------------------------------------------- LSF
    # -n 32,64: at least 32 (the range kept); ptile=16: 2 hosts; -M per process
    "lsf/n_range_ptile_M_long.lsf": dict(
        nodes=2, tasks=32, cpus=32, memory_mb=32 * 4 * G, per_cpu=4 * G, walltime=9000,
        name="cfd_scaling", queue="long", stdout="cfd.%j.out", unknown=["-n"],
        notes=["slot range 32,64"]),
    # -gpu num=2 (a host) with its model; mode=exclusive_process kept
    "lsf/gpu_num_mode_gmodel.lsf": dict(
        nodes=1, tasks=2, cpus=2, gpus=2, needs_gpus=2, gpu_type="NVIDIAA100_SXM4_80GB",
        walltime=86400, name="bert_pretrain", queue="gpu", unknown=["-gpu mode"]),
    # each usage its own duration: the memory read (8GB a slot), the rest kept
    "lsf/rusage_mem_license_usages.lsf": dict(
        nodes=1, tasks=4, cpus=4, memory_mb=4 * 8 * G, per_cpu=8 * G, walltime=4 * 3600,
        name="matlab_fit", queue="normal",
        unknown=["-R rusage", "-R rusage (other usages)"]),
    # sim[1-50]%5; ended() is afterany; -eo overwrites the error file
    "lsf/array_limit_w_ended_outputs.lsf": dict(
        tasks=1, cpus=1, walltime=3600, array="1-50%5", deps=[("afterany", ["1234"])],
        name="sim", queue="short", stdout="out.%j.%a", stderr="err.%j.%a"),
    # -b 15:02:00 (day:hour:minute, no month): kept as written; -E, -Ep kept; -P account
    "lsf/b_day_only_pre_post_exec.lsf": dict(
        tasks=2, cpus=2, walltime=3 * 3600, name="monthly_report", account="finance-ops",
        unknown=["-b", "-E", "-Ep"], notes=["a day of the month without the month"]),
}

_FIELDS = ("name", "queue", "account", "qos", "stdout", "stderr", "requeue", "mail_events",
           "mail_user", "working_directory", "hold", "begin", "shell")

test_every_fixture_has_expectations, test_parse_values, test_translates_or_reports = \
    sweep_tests(HERE, EXPECTED, fields=_FIELDS, strict=ALL_STRICT, at_least=15)
