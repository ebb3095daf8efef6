"""A twelfth set of realistic batch scripts (tests/fixtures/scripts_unseen12/<dialect>/), of
the shapes users at centers write that the earlier sweeps held few of: unusual shebangs
(`#!/bin/tcsh` with setenv bodies, `#!/usr/bin/env -S bash -l`, `#!/bin/csh`), stepped
arrays with a running limit and the array index in the body (SLURM_ARRAY_TASK_ID,
PBS_ARRAY_INDEX, PBS_ARRAYID, LSB_JOBINDEX, SGE_TASK_ID with SGE_TASK_STEPSIZE), GPUs in
each spelling (--gpus-per-node=TYPE:N, --gres=gpu:TYPE:N, --gpus=TYPE:N with
--mem-per-gpu, --gpus-per-task in a hetjob component, select ngpus, Torque gpus=, -gpu
"num=N:mode=...", -l gpu=N in a comma list), memory in every unit (K, T, GB, kb, tb, MB,
M), mail lists and events (TIME_LIMIT_80, -B -N -u, -m abe with two addresses, -m as),
signal and requeue options, here-docs holding another scheduler's or the same
scheduler's directives, `##SBATCH` and `# SBATCH` disabled lines, a directive inside a
string, directives after the first command, line continuations, srun/mpirun/jsrun/aprun
lines, Cray's mppwidth/mppnppn, flux run's per-task options in a flux batch script.

Each is parsed and compared with its EXPECTED row, its needs read, and translated into
every dialect (its own too) and read back (tests/scripts_unseen_check.py). Faults found,
each fixed and shown by a test here: LSF asked a node's memory per slot rounded up (a PBS
`mem=150000000kb` on 36 slots was refused: the translation asked for more); Grid Engine
said "PE (none)'s allocation rule" for several nodes without a task count; flux batch
scripts with --ntasks, --cores-per-task or --gpus-per-task (flux run options flux batch
refuses) kept them without saying why; Cray's mppwidth/mppnppn/mppdepth were kept unread
(placement saw one task); an index list reached PBS Pro as `-J 1-1` (its first index),
and %a in an output path was kept literally there (PBS Pro's is ^array_index^); a PBS
`-S` naming the #! shell was said dropped; a dependency on one array task (778812_3) was
kept unread; Grid Engine read a here-document's directives without a word."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from diamond_jupyter.dialects.translate import get_script_dialect, request_totals, translate
from diamond_jupyter.model import BadInput
from diamond_jupyter.needs import needs_of
from tests.scripts_unseen_check import ALL_STRICT, read_fixture, sweep_tests, translated

HERE = Path(__file__).parent / "fixtures" / "scripts_unseen12"
G = 1024  # MB in a GB

# As in the earlier sweeps: whole-job totals (every one checked, None when left out),
# walltime seconds, array, deps, the options kept as unknown directives (in order), JobSpec
# fields; `needs_gpus`/`needs_mem` per node (needs_of); `per_cpu` memory per CPU; `notes`
# words a parse note holds; `ignored` how many directives were noted as ignored.
EXPECTED: dict[str, dict[str, Any]] = {
    # ---------------------------------------------------------------- Slurm
    # tcsh body; 0-99:4%10 stepped and limited; 1500M per CPU x 2
    "slurm/tcsh_setenv_array_step_limit.sbatch": dict(
        tasks=1, cpus=2, memory_mb=3000, per_cpu=1500, walltime=1800, array="0-99:4%10",
        name="mc_tcsh", stdout="mc_%A_%a.out", shell="/bin/tcsh"),
    # the interpreter line kept whole; a100:4 on each of 2 nodes
    "slurm/env_S_bash_login_gpus_per_node_typed.sbatch": dict(
        nodes=2, tasks=8, cpus=64, gpus=8, needs_gpus=4, gpu_type="a100",
        memory_mb=2 * 480 * G, needs_mem=480 * G, walltime=86400, name="vit_ddp",
        queue="gpu", shell="/usr/bin/env -S bash -l"),
    # --mem in kibibytes: 64000000K = 62500M; TIME_LIMIT_80 a mail event
    "slurm/gres_typed_mem_kilobytes_mail_list.sbatch": dict(
        nodes=1, tasks=1, cpus=16, gpus=2, needs_gpus=2, gpu_type="v100", memory_mb=62500,
        needs_mem=62500, walltime=8 * 3600, name="bwa_gpu",
        mail_events=["begin", "end", "fail", "time_limit_80"],
        mail_user="seq-core@univ.example"),
    # --mem=2T; 7 days
    "slurm/mem_terabyte_bigmem.sbatch": dict(
        nodes=1, tasks=1, cpus=64, memory_mb=2 * G * G, needs_mem=2 * G * G,
        walltime=7 * 86400, name="asm_bigmem", queue="bigmem", account="genomics-lab"),
    # --gpus=h100:8 on one node; 12 CPUs and 80G per GPU
    "slurm/gpus_typed_total_mem_per_gpu.sbatch": dict(
        nodes=1, tasks=8, cpus=96, gpus=8, needs_gpus=8, gpu_type="h100",
        memory_mb=8 * 80 * G, needs_mem=8 * 80 * G, walltime=2 * 86400, name="llama_ft",
        queue="h100", qos="high", notes=["--cpus-per-gpu=12", "--mem-per-gpu=80G"]),
    # a GPU learner (--gpus-per-task) and 4 nodes of CPU actors (2G per CPU)
    "slurm/hetjob_gpus_per_task_workers.sbatch": dict(
        nodes=5, tasks=129, cpus=136, gpus=1, needs_gpus=1, memory_mb=128 * 2 * G,
        walltime=4 * 3600, name="rl_actor_learner", queue="gpu",
        notes=["heterogeneous job of 2 components"]),
    # on two tasks of an array job (778812_3; they were kept unread); --open-mode=append
    "slurm/array_element_dependency_open_mode.sbatch": dict(
        tasks=4, cpus=4, memory_mb=8 * G, needs_mem=8 * G, walltime=45 * 60, name="reduce",
        stdout="reduce.log", deps=[("afterok", ["778812_3", "778812_7"])]),
    # --signal=B:USR1@300 and --no-kill kept; --requeue read
    "slurm/signal_batch_requeue_no_kill.sbatch": dict(
        tasks=1, cpus=4, memory_mb=12 * G, needs_mem=12 * G, walltime=6 * 3600,
        name="ckpt_loop", requeue=True, unknown=["--signal", "--no-kill"]),
    # the child's #SBATCH lines in a here-doc come after the first command: ignored
    "slurm/heredoc_sbatch_lines_in_body.sbatch": dict(
        tasks=1, cpus=1, memory_mb=G, needs_mem=G, walltime=600, name="make_children",
        ignored=3, notes=["`#SBATCH -n 16` (after the first command"]),
    # ##SBATCH and `# SBATCH` are comments; an echoed "#SBATCH" is a string
    "slurm/disabled_directives_quoted_string.sbatch": dict(
        tasks=8, cpus=8, memory_mb=24 * G, per_cpu=3 * G, walltime=3 * 3600,
        name="cfd run", queue="standard"),
    # srun's continued options stay in the body; --constraint=cpu; whole nodes
    "slurm/srun_line_continuations_aprun_free.sbatch": dict(
        nodes=4, tasks=256, cpus=512, walltime=12 * 3600, features=["cpu"], exclusive=True,
        name="wrf_real"),
    # 4GB per CPU; the second --ntasks wins; --nodelist kept
    "slurm/mem_per_cpu_gb_units_nodelist.sbatch": dict(
        nodes=2, tasks=2, cpus=24, memory_mb=24 * 4 * G, per_cpu=4 * G, walltime=9000,
        name="plink_assoc", unknown=["--nodelist"]),
    # GPUs per task with a model; CPUs and MB (no unit) per GPU
    "slurm/gpus_per_task_typed_cpus_mem_per_gpu_mb.sbatch": dict(
        tasks=4, cpus=32, gpus=4, needs_gpus=1, gpu_type="a100", memory_mb=80000,
        per_cpu=2500, walltime=3600, name="typed_per_task",
        notes=["--cpus-per-gpu=8", "--mem-per-gpu=20000"]),
    # ALL with ARRAY_TASKS (a mail for each task); -t 5 is minutes
    "slurm/mail_all_array_tasks_minutes.sbatch": dict(
        walltime=300, array="1-5", name="mailer", mail_events=["all", "array_tasks"],
        mail_user="me@x.example"),
    # -G 4: the job's GPUs over nodes Slurm picks (kept, read as 1 a node at least)
    "slurm/G_short_job_gpus_gpu_bind_single.sbatch": dict(
        tasks=8, cpus=8, needs_gpus=1, walltime=1800, name="gbind", unknown=["--gpus"],
        gpu_bind="single:2", notes=["--gpus=4 is the job's total"]),
    # 40G per GPU, 2 GPUs on each of 2 nodes; NONE asks no mail
    "slurm/mem_per_gpu_two_nodes_mail_none.sbatch": dict(
        nodes=2, tasks=4, cpus=4, gpus=4, needs_gpus=2, memory_mb=2 * 80 * G,
        needs_mem=80 * G, walltime=3600, name="mpg", mail_events=[]),
    # `set -e` is the first command: every directive after it is ignored
    "slurm/sh_set_e_before_every_directive.sbatch": dict(
        shell="/bin/sh", ignored=2, nodes=None, tasks=None, cpus=None,
        gpus=None, memory_mb=None),
    # ---------------------------------------------------------------- PBS Pro / Torque
    # ngpus in the chunk; -J 0-30:3
    "pbs/pro_select_ngpus_array_step_pbs_index.pbs": dict(
        nodes=1, tasks=1, cpus=16, gpus=2, needs_gpus=2, memory_mb=120 * G,
        needs_mem=120 * G, walltime=4 * 3600, array="0-30:3", name="hp_sweep",
        queue="gpu", stdout="sweep.log"),
    # Torque -t with a % limit; mem in mb
    "pbs/torque_t_step_limit_arrayid.pbs": dict(
        nodes=1, tasks=4, cpus=4, memory_mb=16000, needs_mem=16000, walltime=36000,
        array="1-200%25", name="blast_chunks", queue="batch"),
    # mem=1tb; 100 hours; -m abe to two addresses
    "pbs/pro_mem_terabyte_hundred_hours_mail_two.pbs": dict(
        nodes=1, tasks=1, cpus=96, memory_mb=G * G, needs_mem=G * G, walltime=100 * 3600,
        name="gen_assembly", account="GEN-2026", mail_events=["fail", "begin", "end"],
        mail_user="alice@univ.example,bob@univ.example"),
    # tcsh; -S kept; two ids in one afterany
    "pbs/tcsh_S_shell_depend_afterany_two.pbs": dict(
        nodes=1, tasks=1, cpus=4, memory_mb=8 * G, needs_mem=8 * G, walltime=3600,
        deps=[("afterany", ["9001.pbsserver", "9002.pbsserver"])], name="post_tcsh",
        shell="/bin/tcsh", unknown=["-S"]),
    # Cray ALPS sizes: mppwidth tasks, mppnppn per node (they were kept, not read)
    "pbs/cray_aprun_mppwidth.pbs": dict(
        nodes=4, tasks=128, cpus=128, walltime=7200, name="xc_aprun", queue="regular",
        notes=["read as 128 tasks, 32 per node on 4 nodes"]),
    # the three in one comma list; mppdepth the CPUs of each task
    "pbs/cray_mppwidth_nppn_depth_joined.pbs": dict(
        nodes=8, tasks=64, cpus=256, walltime=3600, name="hybrid",
        notes=["read as 64 tasks, 8 per node on 8 nodes, 4 CPUs each"]),
    # an array job's id with [] (the whole array) in depend
    "pbs/pro_depend_on_array_parent.pbs": dict(
        nodes=1, tasks=1, cpus=2, memory_mb=4 * G, needs_mem=4 * G, walltime=1800,
        deps=[("afterok", ["12345[].pbs01"])], name="gather"),
    # job-wide ncpus, ngpus and mem on their own lines (no select)
    "pbs/pro_jobwide_ngpus_ncpus_mem_lines.pbs": dict(
        cpus=8, gpus=2, needs_gpus=2, memory_mb=32 * G, needs_mem=32 * G, walltime=7200,
        name="oldstyle"),
    # Torque procs with pmem in one comma list
    "pbs/torque_procs_pmem_comma_joined.pbs": dict(
        tasks=12, cpus=12, memory_mb=12 * 2 * G, per_cpu=2 * G, walltime=3 * 3600,
        name="procs_job"),
    # mem in kb (150000000kb = 146485MB rounded up) per chunk; scatter:excl
    "pbs/pro_mem_kb_mpiprocs_mpirun_continuation.pbs": dict(
        nodes=2, tasks=72, cpus=72, memory_mb=2 * 146485, needs_mem=146485,
        walltime=8 * 3600, exclusive=True, name="nwchem_dft", requeue=True,
        unknown=["-l place:scatter"]),
    # a walltime after `cd` is ignored by qsub; gpus= in nodes; pmem per process
    "pbs/torque_gpus_mem_after_first_command.pbs": dict(
        nodes=1, tasks=8, cpus=8, gpus=2, needs_gpus=2, memory_mb=8 * 4 * G, per_cpu=4 * G,
        walltime=86400, name="relion_gpu", ignored=1),
    # place=shared kept; -m n asks no mail
    "pbs/pro_place_shared_gpu_mail_n.pbs": dict(
        nodes=1, tasks=1, cpus=4, gpus=1, needs_gpus=1, memory_mb=16 * G, needs_mem=16 * G,
        walltime=2700, name="shared_gpu", mail_events=[], unknown=["-l place:shared"]),
    # nodes, mem and walltime in one Torque list; -m ae
    "pbs/torque_comma_nodes_mem_walltime_mail_ae.pbs": dict(
        nodes=1, tasks=1, cpus=1, memory_mb=500, needs_mem=500, walltime=3600, name="tc",
        mail_events=["fail", "end"], mail_user="x@y.example"),
    # ---------------------------------------------------------------- LSF
    # -gpu num=2 (a host), its mode kept; -M 32GB per process
    "lsf/gpu_quoted_exclusive_process_span.lsf": dict(
        nodes=1, tasks=8, cpus=8, gpus=2, needs_gpus=2, memory_mb=8 * 32 * G,
        per_cpu=32 * G, walltime=6 * 3600, name="colabfold", queue="gpu",
        stdout="colabfold.%j.out", stderr="colabfold.%j.err", unknown=["-gpu mode"]),
    # render[1-100:10]%4; -W 30 is minutes
    "lsf/array_step_limit_jobindex_body.lsf": dict(
        tasks=1, cpus=1, walltime=1800, array="1-100:10%4", name="render", queue="short",
        stdout="logs/render.%j.%a.out"),
    # -B -N mail on begin and end to -u; -r; -Q kept
    "lsf/mail_B_N_u_rerun_requeue_exit.lsf": dict(
        nodes=1, tasks=16, cpus=16, memory_mb=16 * 3000, per_cpu=3000, walltime=48 * 3600,
        name="gaussian_opt", mail_events=["begin", "end"],
        mail_user="chem-admin@univ.example", requeue=True, unknown=["-Q"]),
    # csh; -M 2048MB; done() && exit()
    "lsf/csh_shebang_mem_limit_mb_depend_exit.lsf": dict(
        tasks=4, cpus=4, memory_mb=4 * 2 * G, per_cpu=2 * G, walltime=7200,
        deps=[("afterok", ["41100"]), ("afternotok", ["41101"])], name="csh_stats",
        account="stats-proj", shell="/bin/csh", notes=["-M 2048MB"]),
    # Summit-style -nnodes; a -W after `module load` ignored; -alloc_flags kept
    "lsf/jsrun_nnodes_gpu_per_host_late_directive.lsf": dict(
        nodes=4, walltime=7200, name="lammps_kokkos", account="CSC999", ignored=1,
        unknown=["-alloc_flags"]),
    # num=1/task: 8 GPUs, 4 on each ptile host; mode and j_exclusive kept
    "lsf/gpu_num_per_task_j_exclusive_ptile.lsf": dict(
        nodes=2, tasks=8, cpus=8, gpus=8, needs_gpus=4, walltime=3600, name="mps_ranks",
        unknown=["-gpu mode", "-gpu j_exclusive"]),
    # `-gpu -`: the default GPU requirement (one GPU)
    "lsf/gpu_default_requirement_dash.lsf": dict(
        tasks=1, cpus=1, gpus=1, needs_gpus=1, walltime=1200, name="defgpu"),
    # an index list with a range; -W 10 is minutes
    "lsf/array_index_list_minutes.lsf": dict(
        tasks=2, cpus=2, walltime=600, array="1,3,5-9", name="redo", stdout="redo.%j.%a"),
    # a usage string and a span in two -R: 4096MB a slot, 8 slots a host
    "lsf/two_R_rusage_then_span.lsf": dict(
        nodes=2, tasks=16, cpus=16, memory_mb=16 * 4096, per_cpu=4096, walltime=5400,
        name="tworr"),
    # ---------------------------------------------------------------- flux
    # -N1 -n2 -g2 -c8 glued: 2 slots of 8 cores and 2 GPUs
    "flux/glued_short_slots_gpus_cores.flux": dict(
        nodes=1, tasks=2, cpus=16, gpus=4, needs_gpus=4, walltime=1800),
    # --gpus-per-task is flux run's: flux batch refuses it (kept, said why)
    "flux/env_S_bash_gpus_per_task_flux_run.flux": dict(
        nodes=2, tasks=8, cpus=32, walltime=7200, name="md_ensemble", queue="pbatch",
        shell="/usr/bin/env -S bash -l", unknown=["--gpus-per-task"],
        notes=["--gpus-per-task is a flux run option"]),
    # the child's #flux: lines in a here-doc are not grouped: ignored
    "flux/heredoc_flux_lines_continuation.flux": dict(
        nodes=1, tasks=1, cpus=16, walltime=5400, name="driver", stdout="driver.%j.out",
        ignored=2),
    # --ntasks/--cores-per-task kept (flux run's); --nodes=1 alone is one whole node
    "flux/dependency_afterok_setattr_mail.flux": dict(
        nodes=1, tasks=1, cpus=1, walltime=3 * 3600, exclusive=True,
        deps=[("afterok", ["f2oLkTLb"])], account="climate",
        unknown=["--ntasks", "--cores-per-task", "--setattr"],
        notes=["--ntasks is a flux run option", "-c/--cores-per-slot"]),
    # ---------------------------------------------------------------- Grid Engine
    # one -l with gpu, h_rt and h_vmem; -t 1-1000:10 with -tc 20
    "sge/comma_l_gpu_h_rt_h_vmem_array_tc_task_id.sge": dict(
        gpus=1, needs_gpus=1, memory_mb=24 * G, per_cpu=24 * G, walltime=4 * 3600,
        array="1-1000:10%20", name="embed_shards", stdout="logs/%x.%a.out"),
    # -S tcsh; -m as (abort is fail; suspend has no neutral form); two held ids
    "sge/tcsh_S_mail_as_notify_hold_two.sge": dict(
        nodes=1, cpus=4, memory_mb=4 * 2 * G, per_cpu=2 * G, walltime=7200,
        deps=[("afterany", ["7001", "7002"])], name="tcsh_merge", shell="/bin/tcsh",
        mail_events=["fail"], mail_user="ops@lab.example", unknown=["-notify"],
        notes=["mail on suspend"]),
    # UGE m_mem_free: memory per slot; -P kept; -V
    "sge/uge_m_mem_free_gb_smp_mpirun.sge": dict(
        tasks=24, cpus=24, memory_mb=24 * 5 * G, per_cpu=5 * G, walltime=36 * 3600,
        name="orca_uge", queue="long.q", export_all=True, unknown=["-P"]),
    # -l gpu=2 beside -pe smp 8: the job's 2 (said how a per-slot complex would differ)
    "sge/gpu_job_consumable_smp.sge": dict(
        nodes=1, cpus=8, gpus=2, needs_gpus=2, walltime=3600, name="gpu2",
        notes=["-l gpu=2 read as the job's 2 GPUs"]),
    # s_rt (a soft limit) kept beside h_rt; -m n
    "sge/soft_s_rt_beside_h_rt_mail_n.sge": dict(
        nodes=1, cpus=2, walltime=3600, name="soft", mail_events=[], unknown=["-l s_rt"]),
    # Grid Engine reads #$ lines after commands too (said); not the one inside a string
    "sge/late_directive_and_string.sge": dict(
        nodes=1, cpus=8, memory_mb=8 * 4 * G, per_cpu=4 * G, walltime=1800,
        name="late_sge", notes=["line 6: `#$ -pe smp 8` after the first command is read"]),
    # a child script's directives in a here-document are the parent's too, as qsub reads
    # them: 16 slots for 12 hours (said, line by line)
    "sge/heredoc_child_directives_read_by_qsub.sge": dict(
        nodes=1, cpus=16, walltime=12 * 3600, name="parent",
        notes=["line 8: `#$ -pe smp 16` after the first command is read too",
               "line 9: `#$ -l h_rt=12:00:00` after the first command is read too"]),
}

_FIELDS = ("name", "queue", "account", "qos", "stdout", "stderr", "requeue", "mail_events",
           "mail_user", "working_directory", "hold", "begin", "shell")

test_every_fixture_has_expectations, test_parse_values, test_translates_or_reports = \
    sweep_tests(HERE, EXPECTED, fields=_FIELDS, strict=ALL_STRICT, at_least=40)


def test_a_node_memory_per_slot_is_rounded_down_for_lsf():
    """146485MB on each of 2 nodes of 36 slots: 4069MB a slot (never more than asked),
    said approximated; it was rounded up to 4070 and the translation refused."""
    script, warnings = translated(HERE, "pbs/pro_mem_kb_mpiprocs_mpirun_continuation.pbs", "lsf")
    assert "rusage[mem=4069MB]" in script
    assert any("146485MB per node as 4069MB per slot" in w for w in warnings)


def test_nodes_without_tasks_into_grid_engine_say_one_slot_on_one_host():
    _, warnings = translated(HERE, "lsf/jsrun_nnodes_gpu_per_host_late_directive.lsf", "sge")
    assert any(w.startswith("approximated: 4 nodes as one slot on one host") for w in warnings)
    assert not any("(none)" in w for w in warnings)


def test_shebangs_and_bodies_survive_every_translation():
    """The interpreter line (tcsh, csh, `env -S bash -l`) leads every translation; a
    here-doc's inner directives and an echoed directive stay in the body as written."""
    for rel, shebang in (("slurm/tcsh_setenv_array_step_limit.sbatch", "#!/bin/tcsh"),
                         ("lsf/csh_shebang_mem_limit_mb_depend_exit.lsf", "#!/bin/csh"),
                         ("flux/env_S_bash_gpus_per_task_flux_run.flux",
                          "#!/usr/bin/env -S bash -l")):
        for target in ("slurm", "pbs", "lsf", "flux", "sge"):
            try:
                script, _ = translated(HERE, rel, target)
            except BadInput as exc:  # a refusal is checked by the sweep; not here
                assert "cannot express" in str(exc), exc
                continue
            assert script.splitlines()[0] == shebang, (rel, target)
    script, _ = translated(HERE, "slurm/heredoc_sbatch_lines_in_body.sbatch", "pbs")
    assert "#SBATCH -n 16\n" in script and "#PBS -l select=1:ncpus=1" in script
    back = get_script_dialect("pbs").parse_script(script)
    assert request_totals(back)["tasks"] == 1 and back.name == "make_children"
    script, _ = translated(HERE, "slurm/disabled_directives_quoted_string.sbatch", "sge")
    assert 'echo "#SBATCH --gres=gpu:4 is not what we want"' in script
    assert "##SBATCH --partition=debug" in script and "#$ -q standard" in script


def test_cray_alps_sizes_are_read_and_written_back_as_written():
    """mppwidth/mppnppn/mppdepth were kept unread: placement saw a one-task job. They are
    the job's tasks, tasks per node and CPUs per task; PBS gets them back as written, the
    others their own sizes; an aprun line is said to need Cray's launcher."""
    rel = "pbs/cray_mppwidth_nppn_depth_joined.pbs"
    source, text = read_fixture(HERE, rel)
    spec = get_script_dialect("pbs").parse_script(text)
    assert needs_of(spec).mpi == "aprun"
    assert (request_totals(spec)["nodes"], request_totals(spec)["cpus"]) == (8, 256)
    pbs, _ = translated(HERE, rel, "pbs")
    assert [x for x in pbs.splitlines() if x.startswith("#PBS -l mpp")] == \
        ["#PBS -l mppwidth=64", "#PBS -l mppnppn=8", "#PBS -l mppdepth=4"]
    assert "select=" not in pbs
    slurm, warnings = translated(HERE, rel, "slurm")
    assert "#SBATCH --ntasks-per-node=8" in slurm and "#SBATCH --cpus-per-task=4" in slurm
    assert any(w.startswith("kept: line 7: aprun (Cray's ALPS launcher)") for w in warnings)
    # with another size given, the ALPS ones stay as written (qsub decides)
    both = get_script_dialect("pbs").parse_script(
        "#!/bin/bash\n#PBS -l select=2:ncpus=4\n#PBS -l mppnppn=8\n./a\n")
    assert [d.value for d in both.unknown] == ["mppnppn=8"]
    assert request_totals(both)["nodes"] == 2
    # a job resized after parsing (placement, the agent) is no longer what they say
    spec.resources.tasks = 32
    out = get_script_dialect("pbs").render_script(spec).script
    assert "mppwidth" not in out and "select=" in out


def test_mem_and_mem_per_cpu_together_are_refused_by_line():
    text = "#!/bin/bash\n#SBATCH -n 4\n#SBATCH --mem=16G\n#SBATCH --mem-per-cpu=2G\n./a\n"
    with pytest.raises(BadInput, match=r"--mem \(line 3\), --mem-per-cpu \(line 4\)"):
        get_script_dialect("slurm").parse_script(text)


def test_an_index_list_reaches_pbs_pro_as_one_range_it_accepts():
    """PBS Pro's -J takes one range X-Y[:Z], Y above X; a list became its first index as
    `1-1`, which qsub refuses. Now: the list's indexes when they step evenly, else its
    largest part, naming the indexes left out."""
    script, warnings = translated(HERE, "lsf/array_index_list_minutes.lsf", "pbs")
    assert "#PBS -J 5-9\n" in script
    assert "approximated: array 1,3,5-9 as 5-9 (PBS Pro -J takes one X-Y[:Z] range; " \
        "indexes 1,3 left out)" in warnings
    even = "#!/bin/bash\n#SBATCH --array=1,3,5,7%2\n#SBATCH -t 5\n./a\n"
    out, warned, _ = translate(even, "pbs", "slurm")
    assert "#PBS -J 1-7:2%2\n" in out and not any("array" in w for w in warned)


def test_the_array_index_in_output_paths_is_pbs_pros_own_pattern():
    """%a (Slurm), %I (LSF), $TASK_ID (Grid Engine) are ^array_index^ in PBS Pro's -o/-e,
    and read back as the index; Torque has none (kept literally, said)."""
    script, warnings = translated(HERE, "slurm/tcsh_setenv_array_step_limit.sbatch", "pbs")
    assert "#PBS -o mc_%A_^array_index^.out" in script
    assert not any("%a in output path" in w for w in warnings)
    # PBS has no %A: kept as written, read back as the literal `%` it is there
    assert get_script_dialect("pbs").parse_script(script).stdout == "mc_%%A_%a.out"
    torque_text = "#!/bin/bash\n#SBATCH --array=1-4\n#SBATCH -o out.%a\n./a\n"
    spec = get_script_dialect("slurm").parse_script(torque_text)
    spec.metadata["pbs_target_flavor"] = "torque"
    rendered = get_script_dialect("pbs").render_script(spec)
    assert "#PBS -o out.%a" in rendered.script and "#PBS -t 1-4" in rendered.script
    assert any("%a in output path 'out.%a' has no torque equivalent" in w
               for w in rendered.warnings)


def test_log_file_names_know_which_pbs_expands_the_array_index():
    """A PBS Pro job's `out.^array_index^` is one file per subjob (only the subjob knows
    which); a Torque job's `out.%a` is that very file name."""
    from diamond_jupyter.dialects.scripts_common import output_file_name

    path, why = output_file_name("out.%a", "pbs", job_id="12[].s", name="a", array=True)
    assert path == "out.%a" and why == "its array task's index"
    assert output_file_name("out.%a", "torque", job_id="12[]", name="a", array=True) == \
        ("out.%a", None)


def test_pbs_shell_that_is_the_shebang_is_said_kept_not_dropped():
    """`#PBS -S /bin/tcsh` under `#!/bin/tcsh`: every translation starts `#!/bin/tcsh`, so
    it is said kept as the #! line (it was said dropped); another shell is still dropped."""
    for target in ("slurm", "lsf", "flux"):
        script, warnings = translated(HERE, "pbs/tcsh_S_shell_depend_afterany_two.pbs", target)
        assert script.startswith("#!/bin/tcsh\n")
        assert "kept: #PBS -S /bin/tcsh as the #! line (the same interpreter)" in warnings
        assert not any(w.startswith("dropped: #PBS -S") for w in warnings)
    other = "#!/bin/bash\n#PBS -S /bin/ksh\n#PBS -l walltime=1:00:00\n./a\n"
    _, warnings, _ = translate(other, "slurm", "pbs")
    assert "dropped: #PBS -S /bin/ksh (-S /bin/ksh: no slurm equivalent)" in warnings


def test_a_dependency_on_one_array_task_reaches_lsf_and_is_said_dropped_elsewhere():
    """Slurm's afterok:778812_3 (one task of an array job) was kept unread: no scheduler
    but Slurm got it, and each said only that --dependency had no equivalent. LSF names an
    element as 778812[3] (and is read back so); PBS, Grid Engine and flux wait on whole
    jobs only, said per id."""
    rel = "slurm/array_element_dependency_open_mode.sbatch"
    lsf, _ = translated(HERE, rel, "lsf", dependency_ids="target")
    assert '#BSUB -w "done(778812[3]) && done(778812[7])"' in lsf
    back = get_script_dialect("lsf").parse_script(lsf)
    assert [(d.kind, d.job_ids, d.per_task) for d in back.dependencies] == \
        [("afterok", ["778812_3"], False), ("afterok", ["778812_7"], False)]
    for target in ("pbs", "sge"):
        out, warnings = translated(HERE, rel, target, dependency_ids="target")
        assert "778812" not in out
        assert f"dropped: dependency afterok:778812_3 (one task of an array job: {target} " \
            "waits on whole jobs only)" in warnings
    # aftercorr pairs the tasks of whole arrays: on one task it is kept as written
    kept = get_script_dialect("slurm").parse_script(
        "#!/bin/bash\n#SBATCH --dependency=aftercorr:12_3\n./a\n")
    assert [d.option for d in kept.unknown] == ["--dependency"] and not kept.dependencies


def test_placement_reads_cray_alps_sizes():
    """8 nodes of 32 tasks x 2 CPUs: no site of the placement cases has 8 nodes to give
    (each reason names the node count); 4 nodes of 16 x 2 fit both. Before, the job was
    one task anywhere."""
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from test_placement_cases import reasons, run

    big = run("#PBS -l mppwidth=256,mppnppn=32,mppdepth=2\n#PBS -l walltime=01:00:00")
    assert "needs 8 nodes, partition cpu allows at most 4" in reasons(big, "hera")
    assert "needs 8 nodes, largest partition has 4" in reasons(big, "ares")
    fits = run("#PBS -l mppwidth=64,mppnppn=16,mppdepth=2\n#PBS -l walltime=01:00:00")
    assert {v.site for v in fits.ranked if v.feasible} == {"hera", "ares"}
