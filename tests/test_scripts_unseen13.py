"""A thirteenth set of realistic batch scripts (tests/fixtures/scripts_unseen13/<dialect>/),
written in the styles centers' user guides show, favouring options the earlier sweeps held
few of: Slurm --gpus-per-task with --hint=nomultithread and --gpu-bind=closest,
--ntasks-per-gpu with --cpus-per-gpu and --mem-per-gpu, --distribution=block:cyclic with
--switches, --signal=B:USR1@60 with --open-mode=append, --export=NONE with
--get-user-env, a here-doc input deck, a hetjob run by `srun --het-group`, --mem=0 with a
node range, D-HH:MM times with --time-min and singleton, --gres with a typed GPU and
another resource, a constraint with `|`, --deadline; PBS Pro -W group_list and
sandbox=PRIVATE, place=excl:group=switch, chunks of two shapes, plain-second walltimes
with cput, -a dates and a site's GPU model resource; Torque nodes=N:ppn=M:gpus=G with
-l feature=, -t with a % limit, named hosts with naccesspolicy; LSF span[ptile] with
affinity[core()], -gpu with mode and gmodel, -M in KB and G, -app, -alloc_flags, -csm,
select[]/order[]/rusage[duration], -x arrays with %J_%I, post_done/ended, -b, -cwd with
%U, -outdir, -We, -env, -c; Grid Engine -pe mpi with -binding, -tc with -hold_jid_ad,
-R y with -jsv, a slot range, h_rt in seconds, exclusive=true, a queue instance, -shell
and -b, -a with -m bea, Hoffman2's h_data and highp; Flux -N/-n/-c/-g, --setattr,
--requires=host:, --urgency, --conf, --begin-time=+1h, `# flux:` and `#FLUX:` sentinels,
and flux run/batch/submit lines in the body.

Each is parsed and compared with its EXPECTED row, its needs read, and translated into
every dialect (its own too) and read back (tests/scripts_unseen_check.py). Faults found,
each fixed and shown by a test here: PBS Pro `place=excl:group=switch` came back from a
PBS round trip as `place=group=switch:excl` (the kept option no longer the one written);
LSF's -wa/-wt (the warning action and time before the run limit) were read as `-w a` and
`-w t` with stray words `USR1` and `5`; Grid Engine's `-binding set linear:2` lost its
strategy to a stray word; an LSF -cwd's patterns (%U, %J: LSF fills them in and makes the
directory) reached every other scheduler unsaid; Grid Engine's `h_rt=INFINITY` (no
limit) was called a template placeholder, and `h_rt=infinity` refused as a bad time; a
zero limit (PBS `walltime=0`, LSF `-W 0`, `h_rt=0`) reached Slurm as `--time=00:00:00`
and flux as `--time-limit=0d`, which both read as no limit at all. And one gap closed: a
signal before the time limit (Slurm --signal, flux --signal, LSF -wa/-wt) was said
dropped between the three that have it; it is now carried (said approximated). HPE MPT's
`mpiexec_mpt` and MVAPICH's `mpirun_rsh` were no MPI launcher to the needs reader.
--ntasks-per-gpu beside --gpus-per-task, --gpus-per-socket or --ntasks-per-node (which
sbatch refuses) was kept as written; it is refused, naming both lines. A Grid Engine PE
named with a `.pe`/`_pe` suffix (`smp.pe`, `openmp_pe`) was read as MPI slots anywhere,
not one host's; flux's `-x` (--exclusive) was kept unread."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from diamond_jupyter.dialects.translate import get_script_dialect, translate
from diamond_jupyter.model import BadInput
from diamond_jupyter.needs import needs_of
from tests.scripts_unseen_check import ALL_STRICT, read_fixture, sweep_tests, translated

HERE = Path(__file__).parent / "fixtures" / "scripts_unseen13"
G = 1024  # MB in a GB

# As in the earlier sweeps: whole-job totals (every one checked, None when left out),
# walltime seconds, array, deps, the options kept as unknown directives (in order), JobSpec
# fields; `needs_gpus`/`needs_mem` per node (needs_of); `per_cpu` memory per CPU; `notes`
# words a parse note holds; `ignored` how many directives were noted as ignored.
EXPECTED: dict[str, dict[str, Any]] = {
    # ----------------------------------------------------------- Slurm
    # 0-63 with at most 8 at once; %x_%A_%a kept; --no-requeue
    "slurm/array_pct_output_pattern_requeue_no.sbatch": dict(
        tasks=1, cpus=2, memory_mb=4000, per_cpu=2000, walltime=1200, array="0-63%8",
        name="param_scan", stdout="logs/%x_%A_%a.out", stderr="logs/%x_%A_%a.err"),
    # a constraint with `|` (either feature); a name with a blank; END,FAIL
    "slurm/constraint_or_expression_mail_end_fail.sbatch": dict(
        tasks=1, cpus=24, memory_mb=90 * G, needs_mem=90 * G, walltime=43200,
        features=["skylake|cascadelake"], name="blast search", mail_events=["end", "fail"],
        mail_user="bio-lab@univ.example"),
    # 64 whole nodes, block:cyclic; --switches kept; `#!/bin/bash -l`
    "slurm/distribution_block_cyclic_switches_exclusive.sbatch": dict(
        nodes=64, tasks=8192, cpus=8192, walltime=86400, features=["rome"], exclusive=True,
        name="icon_r2b8", queue="compute", account="bb1153", shell="/bin/bash -l",
        distribution="block:cyclic", unknown=["--switches"]),
    # --export=NONE read; --get-user-env=10L kept (no other scheduler has it)
    "slurm/export_none_get_user_env_login.sbatch": dict(
        tasks=16, cpus=16, memory_mb=28800, per_cpu=1800, walltime=10800, name="clean_env",
        queue="standard96", export_all=False, unknown=["--get-user-env"]),
    # ALL plus two variables; per-socket and per-core options kept
    "slurm/export_vars_threads_per_core_ntasks_per_socket.sbatch": dict(
        nodes=4, tasks=16, cpus=192, walltime=14400, name="hybrid_omp", qos="normal",
        variables={"OMP_NUM_THREADS": "12", "OMP_PLACES": "cores"},
        unknown=["--ntasks-per-socket", "--threads-per-core"]),
    # 8 tasks of 7 cores and a GPU each on 2 nodes; --hint kept
    "slurm/gpus_per_task_hint_nomultithread_gpu_bind_closest.sbatch": dict(
        nodes=2, tasks=16, cpus=112, gpus=16, needs_gpus=8, walltime=7200,
        name="gromacs_rep", queue="batch", account="chm145", stdout="%x-%j.out",
        gpu_bind="closest", unknown=["--hint"]),
    # gpu:a100:2 read, nvme:1 and --tmp kept
    "slurm/gres_gpu_typed_and_nvme.sbatch": dict(
        nodes=1, tasks=2, cpus=32, gpus=2, needs_gpus=2, gpu_type="a100", walltime=21600,
        name="io_heavy", unknown=["--gres", "--tmp"]),
    # a LAMMPS deck written by a here-doc (its `# SBATCH` is no directive)
    "slurm/heredoc_input_deck_then_srun.sbatch": dict(
        tasks=32, cpus=32, memory_mb=64 * G, per_cpu=2 * G, walltime=2700, name="lammps_melt"),
    # 1 GPU node + 2 CPU nodes, run by `srun --het-group=0 : --het-group=1`
    "slurm/hetjob_het_group_srun.sbatch": dict(
        nodes=3, tasks=132, cpus=132, gpus=4, memory_mb=228 * G, needs_gpus=4,
        needs_mem=100 * G, walltime=5400, name="coupled", queue="gpu",
        notes=["line 5: heterogeneous job of 2 components: 3 nodes"]),
    # 1500G on one node for 96 hours; --begin read, --deadline kept
    "slurm/large_mem_tmp_deadline_begin.sbatch": dict(
        tasks=1, cpus=128, memory_mb=1500 * G, needs_mem=1500 * G, walltime=345600,
        name="denovo", queue="largemem", begin="2026-12-24T18:00:00",
        unknown=["--deadline"]),
    # --nodes=2-4 (kept, read as 2); --mem=0 is the whole node's memory
    "slurm/mem_zero_whole_node_nodes_range.sbatch": dict(
        nodes=2, tasks=64, cpus=64, walltime=28800, name="flexible", unknown=["--nodes"],
        notes=["line 3: node range 2-4 kept as minimum 2"]),
    # 2 tasks per GPU of 4 (and --gpu-bind=single:2, as Slurm implies)
    "slurm/ntasks_per_gpu_cpus_mem_per_gpu.sbatch": dict(
        nodes=1, tasks=8, cpus=64, gpus=4, memory_mb=240 * G, needs_gpus=4,
        needs_mem=240 * G, walltime=14400, name="mps_share", queue="gpu-a100",
        gpu_bind="single:2", notes=["--ntasks-per-gpu=2 read as 8 tasks (2 per GPU of 4)",
                                    "--cpus-per-gpu=16 read as 8 CPUs per task",
                                    "--mem-per-gpu=60G read as 245760MB per node"]),
    # --signal=B:USR1@60 kept; --open-mode=append read
    "slurm/signal_B_usr1_open_mode_append_trap.sbatch": dict(
        tasks=1, cpus=12, memory_mb=48 * G, needs_mem=48 * G, walltime=86340,
        name="longtrain", stdout="train.log", stderr="train.err", unknown=["--signal"]),
    # 2-12:30 is 2 days 12 hours 30 minutes; --time-min and singleton kept
    "slurm/time_days_hours_minutes_singleton.sbatch": dict(
        tasks=1, cpus=4, memory_mb=16000, needs_mem=16000, walltime=217800,
        name="chain_link", unknown=["--time-min", "--dependency"]),
    # ------------------------------------------------ PBS Pro / Torque
    # -J 1-100:5, -r y, one depend on two jobs
    "pbs/pro_J_step_rerun_two_afterok.pbs": dict(
        nodes=1, tasks=1, cpus=2, memory_mb=4 * G, needs_mem=4 * G, walltime=1800,
        array="1-100:5", deps=[("afterok", ["4410.pbs01", "4411.pbs01"])],
        name="post_frames", requeue=True),
    # -a [[CC]YY]MMDDhhmm; a site's gpu_model read as the GPU type (said)
    "pbs/pro_a_datetime_custom_gpu_model.pbs": dict(
        nodes=2, tasks=2, cpus=96, gpus=8, memory_mb=960 * G, needs_gpus=4,
        needs_mem=480 * G, gpu_type="a100", walltime=28800, name="night_run",
        begin="2026-12-30T22:00:00", unknown=["-l select:gpu_model", "-P"]),
    # excl read, scatter kept; group_list and sandbox=PRIVATE kept
    "pbs/pro_group_list_sandbox_private_scatter_excl.pbs": dict(
        nodes=2, tasks=128, cpus=128, memory_mb=400 * G, needs_mem=200 * G, walltime=21600,
        exclusive=True, name="vasp_relax", queue="normal",
        unknown=["-l place:scatter", "-W", "-W"]),
    # excl read, group=switch kept (a PBS round trip gives the same place)
    "pbs/pro_place_excl_group_switch.pbs": dict(
        nodes=16, tasks=576, cpus=576, walltime=43200, exclusive=True, name="cp2k_scale",
        queue="regular", account="NCAR0042", mail_events=["fail", "begin", "end"],
        mail_user="scaler@ncar.example", unknown=["-l place:group=switch"]),
    # a 4-core master chunk and 4 worker chunks of 32
    "pbs/pro_two_chunk_types_select.pbs": dict(
        nodes=5, tasks=129, cpus=132, memory_mb=272 * G, needs_mem=64 * G, walltime=7200,
        name="master_workers", queue="workq",
        notes=["line 3: select=1:ncpus=4:mem=16gb+4:ncpus=32:mpipr"]),
    # -V and -v; umask, -k and ompthreads kept
    "pbs/pro_v_vars_V_umask_keep.pbs": dict(
        nodes=1, tasks=1, cpus=8, walltime=3600, name="env_pass",
        variables={"INPUT": "/scratch/run7", "NSTEPS": "5000"},
        unknown=["-W", "-k", "-l select:ompthreads"]),
    # walltime in plain seconds; cput kept
    "pbs/pro_walltime_plain_seconds_cput.pbs": dict(
        nodes=1, tasks=1, cpus=1, memory_mb=2 * G, needs_mem=2 * G, walltime=5400,
        name="short_serial"),
    # two named hosts (said); naccesspolicy=singlejob is whole nodes
    "pbs/torque_named_hosts_naccesspolicy.pbs": dict(
        nodes=2, tasks=8, cpus=8, walltime=2700, exclusive=True, name="pinned_hosts",
        notes=["line 3: nodes=node01:ppn=4+node02:ppn=4: hosts named here: node01, node02"]),
    # gpus=2 on each of 2 nodes; -l feature=k80; pmem per process
    "pbs/torque_nodes_ppn_gpus_feature.pbs": dict(
        nodes=2, tasks=16, cpus=16, gpus=4, memory_mb=48 * G, per_cpu=3 * G, needs_gpus=2,
        walltime=86400, features=["k80"], name="amber_gpu", queue="gpu"),
    # -t 1-10%2; mem for the job; -l feature=bigmem
    "pbs/torque_t_limit_feature_bigmem.pbs": dict(
        nodes=1, tasks=4, cpus=4, memory_mb=64 * G, needs_mem=64 * G, walltime=36000,
        array="1-10%2", features=["bigmem"], name="split_align"),
    # ------------------------------------------------------------- LSF
    # Summit style: -nnodes 8; -app and -alloc_flags kept
    "lsf/app_profile_alloc_flags_nnodes.lsf": dict(
        nodes=8, walltime=3600, name="namd_summit", account="BIO123", stdout="namd.%j",
        unknown=["-app", "-alloc_flags"]),
    # tiles[1-50]%5 with -x; %J_%I in the file names
    "lsf/array_limit_exclusive_outputs_index.lsf": dict(
        tasks=1, cpus=1, walltime=2700, array="1-50%5", exclusive=True, name="tiles",
        stdout="logs/tile_%j_%a.out", stderr="logs/tile_%j_%a.err"),
    # -csm y and -step_cgroup y kept
    "lsf/csm_y_step_cgroup.lsf": dict(
        nodes=2, walltime=1800, name="csm_test", account="STF007",
        unknown=["-csm", "-step_cgroup"]),
    # -env all plus one; -c (CPU time) kept; -N mail at the end to -u
    "lsf/env_all_omp_cputime_limit.lsf": dict(
        tasks=6, cpus=6, walltime=10800, name="env_lsf", mail_events=["end"],
        mail_user="chem@univ.example", variables={"OMP_NUM_THREADS": "6"}),
    # 2 GPUs of a model on one host; the mode kept
    "lsf/gpu_num2_mode_exclusive_gmodel.lsf": dict(
        nodes=1, tasks=2, cpus=2, gpus=2, memory_mb=16000, per_cpu=8000, needs_gpus=2,
        gpu_type="NVIDIAA100_SXM4_80GB", walltime=86400, name="bert_pretrain", queue="gpu",
        unknown=["-gpu mode"]),
    # -M 100G a task; -cwd with %U (said at translation); -outdir, -We kept
    "lsf/hosts_one_big_mem_G_cwd_outdir.lsf": dict(
        nodes=1, tasks=24, cpus=24, memory_mb=2400 * G, per_cpu=100 * G, walltime=28800,
        name="big_smp", working_directory="/scratch/%U/big_smp", unknown=["-outdir", "-We"],
        notes=["line 5: -M 100G read as 102400MB per task (a limit"]),
    # -M in KB: 4000000KB is 3907MB a task
    "lsf/mem_limit_kb_no_unit_hosts_one.lsf": dict(
        nodes=1, tasks=8, cpus=8, memory_mb=31256, per_cpu=3907, walltime=5400,
        name="kb_limit", notes=["line 5: -M 4000000KB read as 3907MB per task (a li"]),
    # rusage[mem] read; select[], order[] and the duration kept
    "lsf/select_order_rusage_duration.lsf": dict(
        tasks=4, cpus=4, memory_mb=125 * G, per_cpu=32000, walltime=14400,
        name="pick_hosts", queue="long", unknown=["-R select", "-R order", "-R rusage"]),
    # 4 slots a host, 2 cores each; -M 4GB a task
    "lsf/span_ptile_affinity_core.lsf": dict(
        nodes=4, tasks=16, cpus=32, memory_mb=64 * G, needs_mem=16 * G, walltime=7200,
        name="nek_hybrid", queue="normal", stdout="nek.%j.out",
        notes=["line 6: -M 4GB read as 4096MB per task (a limit pe"]),
    # post_done/ended by name kept whole; -b read
    "lsf/w_post_done_ended_name_begin.lsf": dict(
        tasks=2, cpus=2, walltime=1800, name="summarize", begin="2026-12-31T23:00:00",
        unknown=["-w"]),
    # ------------------------------------------------------------ flux
    # -N2 -n8 -c4 -g1: 8 slots of 4 cores and a GPU; the bank from --setattr
    "flux/batch_N_n_c_g_setattr_bank.flux": dict(
        nodes=2, tasks=8, cpus=32, gpus=8, needs_gpus=4, walltime=7200, name="ensemble_gpu",
        queue="pbatch", account="lc-ml"),
    # `# flux:` sentinels; --nslots/--cores-per-slot; a user attribute kept
    "flux/dependency_afterany_cwd_setattr_user.flux": dict(
        tasks=4, cpus=32, walltime=86400, deps=[("afterany", ["fBq2Xs9kf"])],
        working_directory="/p/lustre1/user/run3", unknown=["--setattr"]),
    # #!/bin/sh; --begin-time=+1h; one whole node
    "flux/exclusive_env_begin_time.flux": dict(
        nodes=1, tasks=1, cpus=1, walltime=5400, exclusive=True, begin="now+3600",
        shell="/bin/sh", variables={"OMP_NUM_THREADS": "16"},
        notes=["--nodes=1 without --nslots read as 1 slot, one per"]),
    # flux run, batch, submit and queue lines stay in the body
    "flux/flux_run_lines_only_and_batch_nested.flux": dict(
        nodes=3, tasks=3, cpus=3, walltime=2700, exclusive=True, name="nested",
        notes=["--nodes=3 without --nslots read as 3 slots, one per"]),
    # `#FLUX:`; --urgency=0 is a held job; --conf kept
    "flux/gpus_per_node_urgency_hold_conf.flux": dict(
        nodes=2, tasks=2, cpus=2, gpus=8, needs_gpus=4, walltime=3600, stderr="err.%j",
        hold=True, unknown=["--conf"],
        notes=["--nodes=2 --gpus-per-node=4 without --tasks-per-no"]),
    # --requires=host:... and --urgency=8 kept; {{id}} in the file name
    "flux/requires_host_urgency_output.flux": dict(
        nodes=4, tasks=4, cpus=4, walltime=1800, exclusive=True, name="pinned_flux",
        queue="pdebug", stdout="flux-%j.out", unknown=["--requires", "--urgency"],
        notes=["--nodes=4 without --nslots read as 4 slots, one per"]),
    # -x is flux's short --exclusive (it was kept unread: the nodes were shared)
    "flux/short_x_exclusive_slots_queue.flux": dict(
        nodes=2, tasks=16, cpus=16, walltime=2700, exclusive=True, name="x_short",
        queue="pbatch"),
    # ----------------------------------------------------- Grid Engine
    # Manchester CSF's smp.pe is one host's slots (it was read as 8 MPI tasks anywhere);
    # its v100 consumable kept
    "sge/csf_smp_pe_v100_consumable.sge": dict(
        nodes=1, cpus=8, walltime=7200, shell="/bin/bash --login", unknown=["-l v100"]),
    # -V with -v; -shell n and -b n kept
    "sge/V_v_vars_j_y_shell_n.sge": dict(
        walltime=600, name="envtest", variables={"FOO": "bar", "LEVEL": "3"},
        unknown=["-shell", "-b"]),
    # -a date; -m bea; arch=lx-amd64 read as x86_64; -notify kept
    "sge/a_begin_mail_bea_arch_notify.sge": dict(
        nodes=1, cpus=4, walltime=10800, architecture="x86_64", name="timed_start",
        mail_events=["begin", "end", "fail"], mail_user="sge-user@lab.example",
        begin="2026-12-31T08:30:00", unknown=["-notify"]),
    # -t 1-100 with -tc 10; -hold_jid_ad on a name kept
    "sge/array_tc_hold_jid_ad.sge": dict(
        memory_mb=4 * G, per_cpu=4 * G, walltime=3600, array="1-100%10", name="align_step2",
        unknown=["-hold_jid_ad"]),
    # -l gpu=2 with -pe smp 12; a site's gpu_type and -P kept
    "sge/gpu_cuda_complex_pe_smp.sge": dict(
        nodes=1, cpus=12, gpus=2, needs_gpus=2, walltime=36000, name="cuda_sge",
        account="dept_ml", unknown=["-l gpu_type", "-P"],
        notes=["-l gpu=2 read as the job's 2 GPUs"]),
    # h_rt in seconds; exclusive=true read; s_vmem kept beside h_vmem
    "sge/h_rt_seconds_exclusive_s_vmem.sge": dict(
        nodes=1, cpus=16, memory_mb=512 * G, per_cpu=32 * G, walltime=86400, exclusive=True,
        name="whole_host", unknown=["-l s_vmem"]),
    # INFINITY (no limit) for both limits: kept as written, not read as a time or memory
    "sge/h_rt_infinity_h_vmem_infinity_long_q.sge": dict(
        nodes=1, cpus=4, name="db_service", queue="long.q",
        unknown=["-l h_rt", "-l h_vmem"], notes=["-l h_rt=INFINITY asks no limit"]),
    # Hoffman2: h_data and highp kept (not read as memory)
    "sge/hoffman_h_data_highp.sge": dict(
        nodes=1, cpus=8, walltime=28800, stdout="joblog.%j",
        mail_events=["begin", "end", "fail"], mail_user="$USER@mail",
        memory_mb=32 * G, per_cpu=4 * G, unknown=["-l highp"]),
    # -pe mpi 16; -binding linear:1 and mem_free kept
    "sge/pe_mpi_16_binding_linear_mem_free.sge": dict(
        tasks=16, cpus=16, walltime=14400, name="openfoam_mpi", stdout="foam.%j.log",
        memory_mb=32 * G, per_cpu=2 * G, unknown=["-binding"]),
    # -pe mpi 8-32: at least 8 slots, kept as written
    "sge/pe_range_slots.sge": dict(
        tasks=8, cpus=8, walltime=7200, name="elastic", unknown=["-pe"],
        notes=["line 3: slot range mpi 8-32 read as at least 8 slo"]),
    # all.q@node07 (the host said); -o /dev/null
    "sge/queue_host_instance_hostname.sge": dict(
        walltime=900, name="pinned", queue="all.q", stdout="/dev/null", stderr="errors.log",
        unknown=["-l hostname"],
        notes=["approximated: line 3: -q all.q@node07: other sched"]),
    # -R y and -jsv kept; 3G a slot
    "sge/reserve_jsv_orte_h_vmem.sge": dict(
        tasks=64, cpus=64, memory_mb=192 * G, per_cpu=3 * G, walltime=172800,
        name="big_orte", queue="parallel.q", unknown=["-R", "-jsv"]),
}

_FIELDS = ("name", "queue", "account", "qos", "stdout", "stderr", "requeue", "mail_events",
           "mail_user", "working_directory", "hold", "begin", "shell")

test_every_fixture_has_expectations, test_parse_values, test_translates_or_reports = \
    sweep_tests(HERE, EXPECTED, fields=_FIELDS, strict=ALL_STRICT, at_least=40)


def test_pbs_place_parts_come_back_in_the_order_written():
    """`place=excl:group=switch` came back from a PBS round trip as
    `place=group=switch:excl`: the option kept was no longer the one written."""
    script, _ = translated(HERE, "pbs/pro_place_excl_group_switch.pbs", "pbs")
    assert "#PBS -l place=excl:group=switch\n" in script
    for place in ("scatter:excl:group=rack", "free:shared", "excl:pack"):
        text = f"#!/bin/bash\n#PBS -l select=2:ncpus=4\n#PBS -l place={place}\n./a\n"
        out, _, _ = translate(text, "pbs", "pbs")
        assert f"#PBS -l place={place}\n" in out, out
    # from another scheduler, scatter still comes first
    other = "#!/bin/bash\n#SBATCH -N 2\n#SBATCH --exclusive\n./a\n"
    assert "#PBS -l place=scatter:excl\n" in translate(other, "pbs", "slurm")[0]


def test_lsf_warning_action_and_time_are_options_not_glued_letters():
    """bsub -wa SIGNAL -wt [hours:]minutes: read as `-w a`, `USR1`, `-w t`, `5` (four
    kept words, two of them bare). Now two options, written back as they were, and said
    by name where they are dropped."""
    text = "#!/bin/bash\n#BSUB -n 4\n#BSUB -wa USR1\n#BSUB -wt 5\n#BSUB -W 10\n./a\n"
    spec = get_script_dialect("lsf").parse_script(text)
    assert [(d.option, d.value) for d in spec.unknown] == [("-wa", "USR1"), ("-wt", "5")]
    out, _, _ = translate(text, "lsf", "lsf")
    assert "#BSUB -wa USR1\n#BSUB -wt 5\n" in out
    _, warnings, _ = translate(text, "pbs", "lsf")
    # said once, with why (tests/test_sweep15_followups.py)
    assert "dropped: #BSUB -wa USR1 #BSUB -wt 5 (-wa USR1, -wt 5: a signal 300 s before the " \
        "time limit; qsub has no option for a signal before the walltime)" in warnings
    assert not any("(USR1:" in w or "-w a" in w for w in warnings)


def test_a_signal_before_the_time_limit_reaches_slurm_flux_and_lsf():
    """Slurm's --signal, flux's --signal and LSF's -wa/-wt ask the same thing (a signal some
    time before the time limit, to checkpoint); each was said dropped by the others. Now
    carried between the three (said approximated: who gets the signal differs), the time
    in each one's unit (LSF's whole minutes rounded up: never later than asked); PBS and
    Grid Engine have none (said dropped); LSF's actions (CHKPNT) are not signals before
    the limit and stay dropped (Slurm's R: is carried since tests/test_sweep15_followups.py:
    sbatch reads it as a flag before the signal)."""
    rel = "slurm/signal_B_usr1_open_mode_append_trap.sbatch"
    flux, warnings = translated(HERE, rel, "flux")
    assert "#flux: --signal=USR1@1m\n" in flux
    assert any(w.startswith("approximated: #SBATCH --signal=B:USR1@60 as --signal=USR1@1m "
                            "(a signal 60 s before the time limit;") and "B: (the batch shell "
               "alone) is not said there" in w for w in warnings), warnings
    lsf, _ = translated(HERE, rel, "lsf")
    assert "#BSUB -wa USR1\n#BSUB -wt 1\n" in lsf
    back = get_script_dialect("lsf").parse_script(lsf)
    assert [(d.option, d.value) for d in back.unknown] == [("-wa", "USR1"), ("-wt", "1")]
    _, warnings = translated(HERE, rel, "pbs")
    assert "dropped: #SBATCH --signal=B:USR1@60 (--signal B:USR1@60: a signal 60 s before the " \
        "time limit; qsub has no option for a signal before the walltime)" in warnings
    lsf_text = "#!/bin/bash\n#BSUB -n 4\n#BSUB -wa USR1\n#BSUB -wt 1:30\n#BSUB -W 600\n./a\n"
    slurm, warnings, _ = translate(lsf_text, "slurm", "lsf")
    assert "#SBATCH --signal=USR1@5400\n" in slurm
    assert not any(w.startswith("dropped: #BSUB -w") for w in warnings), warnings
    flux_text = "#!/bin/bash\n#flux: -n 4\n#flux: --signal=SIGTERM@90s\n#flux: -t 1h\n./a\n"
    lsf, warnings, _ = translate(flux_text, "lsf", "flux")
    assert "#BSUB -wa TERM\n#BSUB -wt 2\n" in lsf
    assert any("rounded up to whole minutes" in w for w in warnings)
    assert "#SBATCH --signal=TERM@90\n" in translate(flux_text, "slurm", "flux")[0]
    for not_carried, source in (("#BSUB -wa CHKPNT\n#BSUB -wt 5", "lsf"),
                                ("#BSUB -wa USR1", "lsf"), ("#SBATCH --signal=USR1@0", "slurm")):
        text = f"#!/bin/bash\n{not_carried}\n./a\n"
        for target in {"slurm", "flux", "lsf"} - {source}:
            out, warnings, _ = translate(text, target, source)
            assert "signal" not in out and "-wa" not in out, (not_carried, target, out)
            assert any(w.startswith("dropped: " + not_carried.splitlines()[0])
                       for w in warnings), warnings


def test_grid_engine_binding_instance_and_strategy_stay_one_option():
    """`-binding set linear:2` ([set|env|pe] then a strategy): the strategy was a stray
    word kept on its own line; now one option, back as written."""
    text = "#!/bin/bash\n#$ -pe smp 2\n#$ -binding set linear:2\n#$ -l h_rt=600\n./a\n"
    spec = get_script_dialect("sge").parse_script(text)
    assert [(d.option, d.value) for d in spec.unknown] == [("-binding", "set linear:2")]
    assert "#$ -binding set linear:2\n" in translate(text, "sge", "sge")[0]
    plain = get_script_dialect("sge").parse_script(text.replace("set linear:2", "linear:2"))
    assert [(d.option, d.value) for d in plain.unknown] == [("-binding", "linear:2")]


def test_lsf_working_directory_patterns_are_said_kept_literally():
    """bsub -cwd fills in %U (user), %J (job id) and the rest, and makes the directory;
    no other scheduler does, in a working directory: the path was carried unsaid."""
    rel = "lsf/hosts_one_big_mem_G_cwd_outdir.lsf"
    for target in ("slurm", "pbs", "flux", "sge"):
        script, warnings = translated(HERE, rel, target)
        assert "/scratch/%U/big_smp" in script
        assert (f"approximated: %U in working directory '/scratch/%U/big_smp': LSF fills it "
                f"in and makes the directory; {target} does neither (kept literally)"
                in warnings), warnings
    _, warnings = translated(HERE, rel, "lsf")
    assert not any("working directory" in w for w in warnings)
    text = "#!/bin/bash\n#BSUB -cwd /w/%J_%I\n#BSUB -W 10\n./a\n"
    _, warnings, _ = translate(text, "slurm", "lsf")
    assert any(w.startswith("approximated: %J, %I in working directory") for w in warnings)
    plain = "#!/bin/bash\n#BSUB -cwd /w/run1\n#BSUB -W 10\n./a\n"
    assert not any("working directory" in w for w in translate(plain, "slurm", "lsf")[1])


def test_grid_engine_infinity_is_no_limit_not_a_placeholder():
    """INFINITY (any case) is Grid Engine's own word for no limit (queue_conf(5)): it was
    noted as a template placeholder, and `infinity` refused as a bad h_rt. Now kept as
    written, said, and the job has no time or memory read from it."""
    rel = "sge/h_rt_infinity_h_vmem_infinity_long_q.sge"
    source, text = read_fixture(HERE, rel)
    spec = get_script_dialect(source).parse_script(text)
    notes = spec.metadata["parse_notes"]
    assert not any("placeholder" in n for n in notes), notes
    assert spec.resources.walltime_s is None and spec.resources.memory_per_cpu_mb is None
    script, _ = translated(HERE, rel, "sge")
    assert "#$ -l h_rt=INFINITY,h_vmem=INFINITY\n" in script
    _, warnings = translated(HERE, rel, "slurm")
    assert "dropped: #$ -l h_rt=INFINITY (-l h_rt h_rt=INFINITY: no slurm equivalent)" \
        in warnings
    lower = get_script_dialect("sge").parse_script("#!/bin/bash\n#$ -l h_rt=infinity\n./a\n")
    assert [(d.option, d.value) for d in lower.unknown] == [("-l h_rt", "h_rt=infinity")]


def test_a_zero_time_limit_never_becomes_slurm_or_flux_no_limit():
    """`walltime=0`, `-W 0` and `h_rt=0` were read as a 0 s job time, written to Slurm as
    `--time=00:00:00` and to flux as `--time-limit=0d`: both mean no limit at all. Now
    kept as written (as Slurm's -t 0 and flux's -t 0 already were), said."""
    for source, line in (("pbs", "#PBS -l walltime=00:00:00"), ("lsf", "#BSUB -W 0"),
                         ("sge", "#$ -l h_rt=0")):
        text = f"#!/bin/bash\n{line}\n./a\n"
        spec = get_script_dialect(source).parse_script(text)
        assert spec.resources.walltime_s is None
        assert any("zero time limit" in n for n in spec.metadata["parse_notes"])
        slurm, warnings, _ = translate(text, "slurm", source)
        assert "--time" not in slurm and any(w.startswith(f"dropped: {line}")
                                             for w in warnings), warnings
        flux, _, _ = translate(text, "flux", source)
        assert "time-limit" not in flux
        assert line in translate(text, source, source)[0]


def test_mpt_and_mvapich_launchers_are_read_as_mpi_launchers():
    """`mpiexec_mpt` (HPE MPT, as NCAR's PBS guides write it) and `mpirun_rsh` (MVAPICH)
    were no launcher to the needs reader: a job needing an MPI stack went unchecked."""
    source, text = read_fixture(HERE, "pbs/pro_place_excl_group_switch.pbs")
    assert needs_of(get_script_dialect(source).parse_script(text)).mpi == "mpiexec"
    rsh = "#!/bin/bash\n#SBATCH -n 4\nmpirun_rsh -np 4 -hostfile hosts ./a\n"
    assert needs_of(get_script_dialect("slurm").parse_script(rsh)).mpi == "mpirun"


@pytest.mark.parametrize("lines, named", [
    ("-n 8\n#SBATCH --gpus-per-task=1\n#SBATCH --ntasks-per-gpu=2",
     "--ntasks-per-gpu (line 4) with --gpus-per-task (line 3)"),
    ("-N 2\n#SBATCH --ntasks-per-node=4 --gpus-per-node=2\n#SBATCH --ntasks-per-gpu=2",
     "--ntasks-per-gpu (line 4) with --ntasks-per-node (line 3)"),
    ("-N 2 --gpus-per-socket=1 --ntasks-per-gpu=1",
     "--ntasks-per-gpu (line 2) with --gpus-per-socket (line 2)"),
])
def test_ntasks_per_gpu_beside_what_sbatch_refuses_is_refused_by_line(lines, named):
    """sbatch refuses --ntasks-per-gpu beside --gpus-per-task, --gpus-per-socket or
    --ntasks-per-node; it was kept as written (the job read without it, and sent on to be
    refused by sbatch, or dropped unsaid of its meaning elsewhere)."""
    text = f"#!/bin/bash\n#SBATCH {lines}\n./a\n"
    with pytest.raises(BadInput, match=re.escape(named) + ".*sbatch refuses.*keep one"):
        get_script_dialect("slurm").parse_script(text)


def test_shared_memory_pe_with_a_pe_suffix_is_one_host():
    """Sites name their PEs `smp.pe` (Manchester CSF), `openmp_pe`: one host's slots, as
    `smp`; they were read as MPI tasks spread anywhere. An MPI PE keeps its reading."""
    for pe in ("smp.pe", "openmp_pe", "shm-pe", "smp"):
        spec = get_script_dialect("sge").parse_script(f"#!/bin/bash\n#$ -pe {pe} 8\n./a\n")
        r = spec.resources
        assert (r.nodes, r.cpus_per_task, r.tasks) == (1, 8, None), pe
    mpi = get_script_dialect("sge").parse_script("#!/bin/bash\n#$ -pe mpi-24-ib.pe 48\n./a\n")
    assert (mpi.resources.tasks, mpi.resources.nodes) == (48, None)
    script, _ = translated(HERE, "sge/csf_smp_pe_v100_consumable.sge", "slurm")
    assert "#SBATCH --nodes=1\n" in script and "#SBATCH --cpus-per-task=8\n" in script


def test_flux_short_x_is_exclusive():
    source, text = read_fixture(HERE, "flux/short_x_exclusive_slots_queue.flux")
    spec = get_script_dialect(source).parse_script(text)
    assert spec.constraints.exclusive and not spec.unknown
    assert "#SBATCH --exclusive\n" in translate(text, "slurm", source)[0]
