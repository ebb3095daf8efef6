"""A seventeenth set of realistic batch scripts (tests/fixtures/scripts_unseen17/<dialect>/),
written from each scheduler's documentation, favouring what a job asks beside its sizes:
Slurm --hint with --gpu-bind=per_task, --cpus-per-gpu/--mem-per-gpu over --gpus without a
task count, -G, --threads-per-core, a hetjob with trailing comments, --dependency lists
holding `singleton` or `after:ID+MIN`, --signal=B:TERM@300 with --requeue and
--open-mode=append, --array=1-10:2%3 and `3,7,12-15%2`, `%%` and `%4a` in file names,
--distribution=plane=4, TIME_LIMIT_80 mail; PBS Pro chunks with and without GPUs,
place=scatter:excl with -J 1-10:2, place=pack:exclhost, -W depend= with a server suffix
and with beforeok, -W group_list, -j eo, -h/-r n/-m n, min_walltime/max_walltime (a
shrink-to-fit job), -c c=30, -q @server, select vmem, -koed with a directory, Torque
nodes=1:ppn=8:gpus=2+2:ppn=4 with pmem and -w; LSF span[ptile=4] rusage[mem=4000] in one
-R, -gpu num=2:mode=exclusive_process with -n 4,8, num=4/host with j_exclusive and
gmodel, -W 1:30 with -We, -cwd/-outdir with %U, "name[1-10:2]%3", -wa/-wt, -i, -L, -Q,
span[block=4], span[hosts=-1], -sp, -eo alone, -w with started(); flux -N2 -n8 with
--gpus-per-task, -S system.*, -t 90s/2d, -B, --requires=-host:, --cores with
--gpus-per-node, --urgency with --begin-time; Grid Engine -pe mpi 16 with h_vmem, -t
1-100:5 and -tc, -hold_jid of ids and a name, -clear, h_cpu, a wildcard PE, -i, `-o :path`,
-v names, -w e with -R y, tmp_free with exclusive; and a literal `%` in each dialect's
output path.

Each is parsed and compared with its EXPECTED row, its needs read, and translated into
every dialect (its own too) and read back (tests/scripts_unseen_check.py). Faults found,
each fixed and shown by a test here that failed before: a `%` PBS, LSF (beside its %J
and %I), Grid Engine and flux write into the file's name as it is was read as Slurm's
token (PBS's `load_50%x.log` became sbatch's job name, flux's {{name}}, Grid Engine's
$JOB_NAME), and a Slurm `%%` reached LSF and flux as `%%`; a --dependency list holding
`singleton` or `after:ID+MIN` was kept whole, so its afterok jobs were dropped in every
other dialect (PBS `-W depend=` beside beforeok, Grid Engine `-hold_jid` of ids and a
name, the same); --cpus-per-gpu beside --cpus-per-task, which sbatch refuses, was read;
PBS `-j eo` was read as an error file alone (a translation sent stdout to the scheduler's
default file); place=exclhost came back from PBS as excl; `-l pmem` after chunks of several
shapes made the job its largest chunk on every node (24 tasks and 6 GPUs for 16 and 2) and
before them was lost; flux `-B` (--bank) was read as --broker-opts; Grid Engine's -clear
was written last, resetting every option before it, and the options before a -clear were
read; a PBS shrink-to-fit job's min/max_walltime were dropped at Slurm, which has the same
(--time-min beside --time); --hint beside --ntasks-per-core, which sbatch ignores, was
read (placement took `nomultithread`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from diamond_jupyter.dialects.translate import get_script_dialect, request_totals, translate
from diamond_jupyter.model import BadInput
from tests.scripts_unseen_check import ALL_STRICT, read_fixture, sweep_tests

HERE = Path(__file__).parent / "fixtures" / "scripts_unseen17"
G = 1024  # MB in a GB

# As in the earlier sweeps: whole-job totals (every one checked, None when left out),
# walltime seconds, array, deps, the options kept as unknown directives (in order), JobSpec
# fields; `needs_gpus`/`needs_mem` per node (needs_of); `per_cpu` memory per CPU;
# `ignored` how many directives were noted as ignored. Output paths are in the neutral
# (Slurm) form: `%%` is a `%` of the file's name.
EXPECTED: dict[str, dict[str, Any]] = {
    # ---------------------------------------------------------------------------------- flux
    # --gpus-per-task is flux run's: flux batch refuses it (said, kept as written)
    "flux/N2_n8_gpus_per_task_batch.flux": dict(
        nodes=2, tasks=8, cpus=8, walltime=3600, unknown=["--gpus-per-task"], name="gpt_flux"),
    "flux/cores_total_gpus_per_node.flux": dict(
        nodes=2, tasks=2, cpus=64, gpus=8, walltime=10800, needs_gpus=4),
    # flux writes `%x` as it is: a `%` of the name
    "flux/literal_percent_output.flux": dict(
        tasks=1, cpus=1, walltime=300, name="pct_flux", stdout="run_%%x_%j.out"),
    "flux/requires_negated_host.flux": dict(
        nodes=1, tasks=4, cpus=4, walltime=1200, unknown=["--requires"]),
    "flux/setattr_system_duration_and_user.flux": dict(
        nodes=1, tasks=4, cpus=8, walltime=1800, unknown=["--setattr", "--setattr"]),
    # -B is --bank (it was read as --broker-opts)
    "flux/t_2d_exclusive_nodes_queue_bank.flux": dict(
        nodes=4, tasks=4, cpus=4, walltime=172800, queue="pbatch", account="climate",
        exclusive=True),
    "flux/t_90s_job_name_output_error.flux": dict(
        tasks=1, cpus=1, walltime=90, name="quick", stdout="quick.%j.out",
        stderr="quick.%j.err", shell="/bin/sh"),
    "flux/urgency_begin_time_dependency_afterok.flux": dict(
        tasks=2, cpus=2, walltime=900, deps=[("afterok", ["fA3bCdEfGh"])],
        unknown=["--urgency"], begin="now+3600"),
    # ----------------------------------------------------------------------------------- LSF
    "lsf/Q_requeue_exit_values.lsf": dict(
        tasks=2, cpus=2, walltime=3600, unknown=["-Q"], name="retry_on_99", requeue=True),
    "lsf/W_1_30_We_45_cwd_outdir.lsf": dict(
        walltime=5400, unknown=["-We", "-outdir"], name="est_run", stdout="%j.log",
        working_directory="/scratch/%U/est_run"),
    "lsf/array_name_step_throttle.lsf": dict(
        tasks=1, cpus=1, walltime=1200, array="1-10:2%3", name="frames",
        stdout="frames.%j.%a.out"),
    "lsf/eo_only_no_o.lsf": dict(
        tasks=1, cpus=1, walltime=600, name="err_only", stderr="errors.%j.log"),
    # -n 4,8: the minimum placed, the range kept
    "lsf/gpu_num2_exclusive_process_n_min_max.lsf": dict(
        nodes=1, tasks=4, cpus=4, gpus=2, walltime=3600, unknown=["-n", "-gpu mode"],
        name="elastic_gpu", needs_gpus=2),
    "lsf/gpu_num4_per_host_j_exclusive_gmodel.lsf": dict(
        nodes=2, tasks=8, cpus=8, gpus=8, walltime=43200,
        unknown=["-gpu mode", "-gpu j_exclusive"], name="a100x4", queue="gpu",
        gpu_type="NVIDIAA100_SXM4_80GB", needs_gpus=4),
    "lsf/i_input_file_L_login_shell.lsf": dict(
        tasks=1, cpus=1, walltime=1800, unknown=["-i", "-L"], name="stdin_job"),
    # -o expands %J and %I only: %x stays in the name
    "lsf/literal_percent_output.lsf": dict(
        tasks=1, cpus=1, walltime=600, name="pct_lsf", stdout="run_%%x_%j.out"),
    "lsf/sp_priority_M_mem_G.lsf": dict(
        tasks=4, cpus=4, memory_mb=32 * G, walltime=2700, unknown=["-sp"], name="prio",
        per_cpu=8 * G),
    "lsf/span_block_R.lsf": dict(
        tasks=12, cpus=12, walltime=2400, unknown=["-R span"], name="block4"),
    "lsf/span_hosts_minus_one.lsf": dict(
        tasks=8, cpus=8, walltime=2400, unknown=["-R span"], name="anyhosts"),
    "lsf/span_ptile4_rusage_mem4000_one_R.lsf": dict(
        nodes=4, tasks=16, cpus=16, memory_mb=64000, walltime=7200, name="wrf_lsf",
        queue="normal", stdout="wrf.%j.out", per_cpu=4000),
    "lsf/w_done_and_started.lsf": dict(
        tasks=1, cpus=1, walltime=1800, deps=[("afterok", ["8812"]), ("after", ["8813"])],
        name="watcher"),
    "lsf/wa_wt_warning_signal.lsf": dict(
        tasks=8, cpus=8, walltime=14400, unknown=["-wa", "-wt"], name="warned"),
    # ---------------------------------------------------------------------- PBS Pro / Torque
    "pbs/pro_c_checkpoint_interval.pbs": dict(
        nodes=1, tasks=1, cpus=8, walltime=43200, unknown=["-c"], name="ckpt_int"),
    # afterok read, beforeok kept beside it (the whole was kept)
    "pbs/pro_depend_afterok_and_beforeok.pbs": dict(
        nodes=1, tasks=1, cpus=2, walltime=2400, deps=[("afterok", ["7001", "7002"])],
        unknown=["-W"], name="middle"),
    "pbs/pro_depend_afterok_server_group_list.pbs": dict(
        nodes=1, tasks=1, cpus=4, walltime=1800,
        deps=[("afterok", ["4821.pbs-server", "4822.pbs-server"])], unknown=["-W"],
        name="postproc"),
    "pbs/pro_depend_beforeok.pbs": dict(
        nodes=1, tasks=1, cpus=1, walltime=600, unknown=["-W"], name="prepare"),
    "pbs/pro_h_hold_r_n_m_n.pbs": dict(
        nodes=1, tasks=1, cpus=2, memory_mb=4 * G, walltime=900, name="held_start",
        hold=True, requeue=False, needs_mem=4 * G),
    # -j eo: both streams in the -e file, read as the job's one output file
    "pbs/pro_j_eo_e_file.pbs": dict(
        nodes=1, tasks=1, cpus=2, walltime=1200, name="eo_join", stdout="logs/eo_join.err",
        stderr=None),
    # -j oe: the -e path is not used (both streams in the -o file)
    "pbs/pro_j_oe_with_e_file.pbs": dict(
        nodes=1, tasks=1, cpus=4, walltime=2700, name="joined_oe", stdout="logs/joined.out",
        stderr=None),
    "pbs/pro_koed_J_step_array_index_outputs.pbs": dict(
        nodes=1, tasks=1, cpus=1, walltime=600, array="0-20:5", unknown=["-k"], name="k_arr",
        stdout="/home/rob/logs/"),
    "pbs/pro_literal_percent_output.pbs": dict(
        nodes=1, tasks=1, cpus=1, walltime=300, name="pct", stdout="load_50%%x.log"),
    # a shrink-to-fit job: no time limit of its own (PBS sets one between the two)
    "pbs/pro_min_max_walltime.pbs": dict(
        nodes=2, tasks=72, cpus=72, unknown=["-l", "-l"], name="shrink_to_fit"),
    "pbs/pro_place_pack_exclhost.pbs": dict(
        nodes=1, tasks=64, cpus=64, walltime=7200, unknown=["-l place:pack"], name="packed",
        exclusive=True),
    "pbs/pro_place_scatter_excl_J_step.pbs": dict(
        nodes=1, tasks=1, cpus=32, memory_mb=64 * G, walltime=3600, array="1-10:2",
        unknown=["-l place:scatter"], name="sweep_excl", exclusive=True, needs_mem=64 * G),
    # the default queue of another server: no queue name
    "pbs/pro_q_default_queue_at_server.pbs": dict(
        nodes=1, tasks=1, cpus=1, walltime=300, unknown=["-q"], name="other_server"),
    "pbs/pro_select_gpu_chunk_plus_cpu_chunk.pbs": dict(
        nodes=3, tasks=9, cpus=20, gpus=2, walltime=10800, name="hybrid_chunks",
        queue="workq", needs_gpus=1),
    "pbs/pro_select_mem_vmem_chunk.pbs": dict(
        nodes=1, tasks=1, cpus=4, memory_mb=8 * G, walltime=5400,
        unknown=["-l select:vmem"], name="vmem_chunk", needs_mem=8 * G),
    # pmem on every chunk: 16 tasks x 2G (it was 24 tasks and 6 GPUs)
    "pbs/torque_nodes_plus_ppn_gpus.pbs": dict(
        nodes=3, tasks=16, cpus=16, gpus=2, memory_mb=32 * G, walltime=21600,
        name="mixed_torque", needs_gpus=2, needs_mem=16 * G),
    "pbs/torque_w_workdir.pbs": dict(
        nodes=1, tasks=2, cpus=2, walltime=1800, unknown=["-w"], name="wdir"),
    # --------------------------------------------------------------------------- Grid Engine
    # the -N and h_rt before -clear are reset by it
    "sge/clear_after_some_directives.sge": dict(
        nodes=1, cpus=4, walltime=1800, unknown=["-clear"], name="after_clear", ignored=2),
    "sge/clear_then_directives.sge": dict(
        nodes=1, cpus=2, walltime=600, unknown=["-clear"], name="cleared"),
    "sge/h_cpu_limit_and_h_rt.sge": dict(
        nodes=1, cpus=4, walltime=7200, name="cpu_capped_sge"),
    # the ids read, the name kept beside them
    "sge/hold_jid_list_names_and_ids.sge": dict(
        walltime=1800, deps=[("afterany", ["4412", "4413"])], unknown=["-hold_jid"],
        name="merge_sge"),
    "sge/i_stdin_o_host_path.sge": dict(
        walltime=600, unknown=["-i"], name="stdin_sge", stdout="/home/ada/out.log",
        stderr="/home/ada/err.log"),
    # -j y: qsub sets the -e path but does not use it
    "sge/j_y_with_e_file.sge": dict(
        walltime=2700, name="joined_sge", stdout="logs/joined.out", stderr=None),
    "sge/literal_percent_output.sge": dict(
        walltime=300, name="pct_sge", stdout="run_%%x_%j.out"),
    "sge/pe_mpi_16_h_vmem_t_step_tc.sge": dict(
        tasks=16, cpus=16, memory_mb=32 * G, walltime=7200, array="1-100:5%4", name="mpi_arr",
        stdout="logs/%x.%j.%a", per_cpu=2 * G, export_all=True),
    "sge/pe_wildcard_name.sge": dict(
        tasks=32, cpus=32, walltime=21600, name="wildpe"),
    "sge/tmpfree_l_exclusive.sge": dict(
        walltime=28800, unknown=["-l tmp_free"], name="scratchy", exclusive=True),
    "sge/v_name_without_value_m_a_M_list.sge": dict(
        walltime=3600, name="mailer", mail_events=["fail"],
        mail_user="ops@lab.example,ada@lab.example", passed=["OMP_NUM_THREADS", "PATH"]),
    "sge/w_e_verify_R_y_pe_smp.sge": dict(
        nodes=1, cpus=8, memory_mb=8 * 4 * G, per_cpu=4 * G, walltime=14400,
        unknown=["-w", "-R"], name="verified"),
    # --------------------------------------------------------------------------------- Slurm
    "slurm/G_short_gpus_cpus_per_gpu.sbatch": dict(
        cpus=8, gpus=2, walltime=3600, name="short_g", needs_gpus=2),
    "slurm/array_list_throttle.sbatch": dict(
        walltime=900, array="3,7,12-15%2", name="reruns"),
    "slurm/array_step_throttle_1_10_2_pct3.sbatch": dict(
        tasks=1, cpus=1, walltime=2700, array="1-10:2%3", name="odd_cases",
        stdout="logs/%x_%A_%a.out", stderr="logs/%x_%A_%a.err"),
    # afterok read; after:ID+30 kept beside it
    "slurm/dependency_after_delay_and_afterok.sbatch": dict(
        tasks=4, cpus=4, walltime=3600, deps=[("afterok", ["2199"])],
        unknown=["--dependency"], name="staggered"),
    "slurm/dependency_afterok_list_singleton.sbatch": dict(
        tasks=1, cpus=1, walltime=1800, deps=[("afterok", ["1001", "1002"])],
        unknown=["--dependency"], name="nightly_merge"),
    "slurm/directives_after_first_command_trailing.sbatch": dict(
        tasks=2, cpus=2, name="early", ignored=2),
    "slurm/distribution_plane.sbatch": dict(
        nodes=4, tasks=16, cpus=16, walltime=1800, name="plane", distribution="plane=4"),
    "slurm/gpus_total_cpus_per_gpu_mem_per_gpu_no_tasks.sbatch": dict(
        nodes=2, cpus=48, gpus=8, memory_mb=320 * G, walltime=86400, name="llm_pretrain",
        stdout="%x-%j.out", needs_gpus=4, needs_mem=160 * G),
    "slurm/hetjob_trailing_comments.sbatch": dict(
        nodes=3, tasks=33, cpus=36, memory_mb=72 * G, walltime=7200, name="coupled",
        needs_mem=32 * G),
    # sbatch ignores --hint beside --ntasks-per-core
    "slurm/hint_and_threads_per_core.sbatch": dict(
        tasks=8, cpus=8, walltime=1800, unknown=["--ntasks-per-core"], name="hint_tpc",
        ignored=1),
    "slurm/hint_nomultithread_gpu_bind_per_task.sbatch": dict(
        nodes=2, tasks=8, cpus=64, gpus=8, walltime=14400, unknown=["--hint"], name="md_gpu",
        queue="gpu", gpu_bind="per_task:1", needs_gpus=4),
    "slurm/mail_time_limit_80_invalid_depend.sbatch": dict(
        tasks=8, cpus=8, walltime=172800, name="longrun",
        mail_events=["time_limit_80", "invalid_depend", "requeue"],
        mail_user="pat@univ.example"),
    "slurm/output_percent_escaped.sbatch": dict(
        walltime=300, name="literal", stdout="run_%%j_%j.out"),
    "slurm/output_zero_padded_array_index.sbatch": dict(
        walltime=300, array="0-99", name="pad", stdout="out/%x_%A_%4a.log"),
    "slurm/signal_B_sigterm_requeue_append_x_j.sbatch": dict(
        tasks=1, cpus=4, walltime=28800, unknown=["--signal"], name="ckpt_loop",
        stdout="%x-%j.out", requeue=True),
    "slurm/threads_per_core_one_ntasks.sbatch": dict(
        tasks=64, cpus=64, memory_mb=64 * G, walltime=1200, unknown=["--threads-per-core"],
        name="stream", per_cpu=1 * G),
}

_FIELDS = ("name", "queue", "account", "stdout", "stderr", "requeue", "mail_events",
           "mail_user", "working_directory", "hold", "begin", "shell", "comment",
           "reservation")

test_every_fixture_has_expectations, test_parse_values, test_translates_or_reports = \
    sweep_tests(HERE, EXPECTED, fields=_FIELDS, strict=ALL_STRICT, at_least=60)


def _parsed(rel: str):
    dialect, text = read_fixture(HERE, rel)
    return get_script_dialect(dialect).parse_script(text)


def _translated(rel: str, target: str, dependency_ids: str = "source"
                ) -> tuple[str, list[str]]:
    source, text = read_fixture(HERE, rel)
    script, warnings, _ = translate(text, target, source, dependency_ids=dependency_ids)
    return script, warnings


def _header(script: str, sentinel: str) -> list[str]:
    return [x for x in script.splitlines() if x.startswith(sentinel)]


@pytest.mark.parametrize(("rel", "slurm", "flux", "sge"), [
    ("pbs/pro_literal_percent_output.pbs", "load_50%%x.log", "load_50%x.log",
     "load_50%x.log"),
    ("lsf/literal_percent_output.lsf", "run_%%x_%j.out", "run_%x_{{id}}.out",
     "run_%x_$JOB_ID.out"),
    ("sge/literal_percent_output.sge", "run_%%x_%j.out", "run_%x_{{id}}.out",
     "run_%x_$JOB_ID.out"),
    ("flux/literal_percent_output.flux", "run_%%x_%j.out", "run_%x_{{id}}.out",
     "run_%x_$JOB_ID.out"),
])
def test_a_percent_written_as_it_is_stays_so(rel: str, slurm: str, flux: str, sge: str):
    """PBS, Grid Engine and flux have no %-tokens and LSF's -o has %J and %I only: their
    `%x` is two characters of the file's name. It was read as Slurm's token, so sbatch
    named the file after the job (`load_50job.log`), flux wrote {{name}} and Grid Engine
    $JOB_NAME. Now a `%` of the name: `%%` to sbatch, `%` elsewhere."""
    for target, want in (("slurm", slurm), ("flux", flux), ("sge", sge)):
        script, _ = _translated(rel, target)
        assert any(x.endswith(want) for x in _header(script, {
            "slurm": "#SBATCH --output=", "flux": "#flux: --output=", "sge": "#$ -o "}[target])
                   ), (target, script)
    # and the file name each scheduler writes is the one the source's scheduler wrote
    from diamond_jupyter.dialects.scripts_common import output_file_name

    assert output_file_name(_parsed(rel).stdout or "", "slurm", job_id="7", name="j")[0] \
        .startswith(("load_50%x", "run_%x_"))


def test_a_slurm_percent_of_the_name_reaches_lsf_and_flux_as_one_percent():
    """sbatch's `%%` is one `%` of the name (`run_%j_41.out`); LSF and flux, which read
    no `%j`, were given `%%` and wrote `run_%%j_...`."""
    script, _ = _translated("slurm/output_percent_escaped.sbatch", "lsf")
    assert "#BSUB -oo run_%j_%J.out" in script
    script, _ = _translated("slurm/output_percent_escaped.sbatch", "flux")
    assert "#flux: --output=run_%j_{{id}}.out" in script
    # before LSF's own token letters the `%%` stays (LSF would read %J), said
    spec = get_script_dialect("slurm").parse_script(
        "#!/bin/bash\n#SBATCH -t 5 -o run_%%J.out\n./a\n")
    rendered = get_script_dialect("lsf").render_script(spec)
    assert "run_%%J.out" in rendered.script
    assert any("lsf would read %J as a token" in w for w in rendered.warnings)


def test_a_dependency_list_keeps_what_it_reads_beside_what_it_cannot():
    """`--dependency=afterok:1001:1002,singleton` was kept whole, so every other dialect
    dropped the afterok jobs too. Now afterok is read and carried; singleton is kept and
    said dropped elsewhere; sbatch gets one --dependency again (it keeps only the last)."""
    script, warnings = _translated("slurm/dependency_afterok_list_singleton.sbatch", "pbs",
                                   "target")
    assert "#PBS -W depend=afterok:1001:1002" in script
    assert "dropped: #SBATCH --dependency=singleton (--dependency singleton: no pbs " \
           "equivalent)" in warnings
    script, _ = _translated("slurm/dependency_afterok_list_singleton.sbatch", "slurm")
    assert [x for x in script.splitlines() if "--dependency" in x] == \
        ["#SBATCH --dependency=afterok:1001:1002,singleton"]
    script, _ = _translated("slurm/dependency_after_delay_and_afterok.sbatch", "lsf", "target")
    assert '#BSUB -w "done(2199)"' in script
    # alternatives (`?`) and a term sbatch would judge stay whole, as before
    for value in ("afterok:1?singleton", "afterany:12,afterok:"):
        spec = get_script_dialect("slurm").parse_script(
            f"#!/bin/bash\n#SBATCH --dependency={value}\n./a\n")
        assert not spec.dependencies and [(d.option, d.value) for d in spec.unknown] == \
            [("--dependency", value)]


def test_pbs_and_grid_engine_dependencies_beside_ones_they_cannot_carry():
    """PBS `-W depend=afterok:7001:7002,beforeok:7010` and Grid Engine
    `-hold_jid 4412,4413,prep_step` were kept whole: their job ids were lost elsewhere.
    Now read, the rest kept and joined again in the script's own dialect."""
    script, warnings = _translated("pbs/pro_depend_afterok_and_beforeok.pbs", "slurm", "target")
    assert "#SBATCH --dependency=afterok:7001:7002" in script
    assert any(w.startswith("dropped: #PBS -W depend=beforeok:7010") for w in warnings)
    script, _ = _translated("pbs/pro_depend_afterok_and_beforeok.pbs", "pbs")
    assert [x for x in script.splitlines() if "depend=" in x] == \
        ["#PBS -W depend=afterok:7001:7002,beforeok:7010"]
    script, warnings = _translated("sge/hold_jid_list_names_and_ids.sge", "slurm", "target")
    assert "#SBATCH --dependency=afterany:4412:4413" in script
    assert any(w.startswith("dropped: #$ -hold_jid prep_step") for w in warnings)
    script, _ = _translated("sge/hold_jid_list_names_and_ids.sge", "sge")
    assert [x for x in script.splitlines() if "hold_jid" in x] == \
        ["#$ -hold_jid 4412,4413,prep_step"]


@pytest.mark.parametrize("options", [
    "--gpus-per-task=1 --cpus-per-gpu=8 --cpus-per-task=4",
    "--cpus-per-task=2\n#SBATCH -G 1 --cpus-per-gpu=4",
    "--gpus=2 --cpus-per-gpu=4 --tres-per-task=cpu=2",
])
def test_cpus_per_gpu_beside_cpus_per_task_is_refused_as_sbatch_refuses_it(options: str):
    """sbatch: "--cpus-per-task, --tres-per-task=cpu:#, and --cpus-per-gpu are mutually
    exclusive" (fatal, whatever the order). The pair was read: --cpus-per-task taken and
    --cpus-per-gpu kept, so a job sbatch refuses was placed and translated."""
    with pytest.raises(BadInput, match=r"--cpus-per-gpu \(line \d\).*sbatch refuses these "
                                       r"together.*keep one"):
        get_script_dialect("slurm").parse_script(
            f"#!/bin/bash\n#SBATCH -n 2 -t 10 {options}\n./a\n")


def test_pbs_join_into_the_error_file_is_one_output_file():
    """`-j eo` merges stdout into the error file; it was read as an error file alone, so
    at Slurm stdout went to slurm-%j.out and at LSF to mail. Now the -e path is the job's
    one output file."""
    spec = _parsed("pbs/pro_j_eo_e_file.pbs")
    assert (spec.stdout, spec.stderr, spec.join_output) == ("logs/eo_join.err", None, True)
    script, _ = _translated("pbs/pro_j_eo_e_file.pbs", "slurm")
    assert "#SBATCH --output=logs/eo_join.err" in script and "--error" not in script
    # -e after -j eo (the order qsub does not mind), and -j eo without -e
    spec = get_script_dialect("pbs").parse_script(
        "#!/bin/bash\n#PBS -j eo\n#PBS -e e.log\n#PBS -l walltime=1:00\n./a\n")
    assert (spec.stdout, spec.stderr) == ("e.log", None)
    spec = get_script_dialect("pbs").parse_script("#!/bin/bash\n#PBS -j eo\n./a\n")
    assert spec.join_output and any("named %x.e%j by default" in n
                                    for n in spec.metadata["parse_notes"])


def test_pbs_exclhost_comes_back_as_exclhost():
    """`place=pack:exclhost` (the whole host, all its vnodes) came back from PBS as
    `place=pack:excl` (only the vnodes the job uses)."""
    script, _ = _translated("pbs/pro_place_pack_exclhost.pbs", "pbs")
    assert "#PBS -l place=pack:exclhost" in script
    script, _ = _translated("pbs/pro_place_scatter_excl_J_step.pbs", "pbs")
    assert "#PBS -l place=scatter:excl" in script


@pytest.mark.parametrize("lines", [
    "#PBS -l nodes=1:ppn=8:gpus=2+2:ppn=4\n#PBS -l pmem=2gb",
    "#PBS -l pmem=2gb\n#PBS -l nodes=1:ppn=8:gpus=2+2:ppn=4",
    "#PBS -l nodes=1:ppn=8:gpus=2+2:ppn=4,pmem=2gb",
])
def test_pbs_pmem_is_each_process_of_every_chunk(lines: str):
    """`-l pmem` after chunks of two shapes set the job's one shape, so the job read as
    its largest chunk on every node: 24 tasks and 6 GPUs for 16 and 2, which every
    translation asked for; before them it was lost. Now every chunk's, on any line."""
    spec = get_script_dialect("pbs").parse_script(f"#!/bin/bash\n{lines}\n./a\n")
    assert request_totals(spec) == dict(nodes=3, tasks=16, cpus=16, gpus=2,
                                        memory_mb=32 * G)
    script, _, _ = translate(f"#!/bin/bash\n{lines}\n./a\n", "slurm", "pbs")
    assert script.count("--mem-per-cpu=2G") == 2 and "#SBATCH hetjob" in script
    back, _, _ = translate(f"#!/bin/bash\n{lines}\n./a\n", "pbs", "pbs")
    assert "#PBS -l nodes=1:ppn=8:gpus=2+2:ppn=4\n#PBS -l pmem=2gb\n" in back


def test_flux_B_is_the_bank():
    """flux's `-B NAME` is --bank (flux-core's submit options); it was read as
    --broker-opts and said dropped everywhere, the job's bank lost."""
    spec = _parsed("flux/t_2d_exclusive_nodes_queue_bank.flux")
    assert spec.account == "climate" and not spec.unknown
    script, _ = _translated("flux/t_2d_exclusive_nodes_queue_bank.flux", "slurm")
    assert "#SBATCH --account=climate" in script


def test_grid_engine_clear_resets_what_comes_before_it():
    """qsub's -clear resets every option before it. The options before it were read (the
    job named `before_clear`, 99 h), and -clear was written last, so the Grid Engine
    translation reset its own -N, -pe and h_rt. Now the earlier ones are said ignored and
    -clear comes first."""
    spec = _parsed("sge/clear_after_some_directives.sge")
    assert (spec.name, spec.resources.walltime_s) == ("after_clear", 1800)
    assert "line 2: ignored `#$ -N before_clear` (the -clear on line 4 resets the options " \
           "before it)" in spec.metadata["parse_notes"]
    script, _ = _translated("sge/clear_after_some_directives.sge", "sge")
    assert _header(script, "#$")[0] == "#$ -clear"
    back = get_script_dialect("sge").parse_script(script)
    assert (back.name, back.resources.walltime_s) == ("after_clear", 1800)


def test_pbs_shrink_to_fit_is_sbatch_time_min():
    """A PBS Pro shrink-to-fit job (min_walltime, max_walltime) gets a time limit between
    the two as it starts; sbatch's --time-min beside --time is the same. Both were said
    dropped at Slurm, the job sent with the partition's limit."""
    script, warnings = _translated("pbs/pro_min_max_walltime.pbs", "slurm")
    assert "#SBATCH --time=06:00:00\n#SBATCH --time-min=01:00:00\n" in script
    assert ("kept: #PBS -l min_walltime=01:00:00, #PBS -l max_walltime=06:00:00 as "
            "--time=06:00:00 --time-min=01:00:00 (a shrink-to-fit job: its time limit is "
            "set between them as it starts)") in warnings
    assert not any(w.startswith("dropped: #PBS -l m") for w in warnings)
    # a min alone: up to the partition's limit
    script, _, _ = translate("#!/bin/bash\n#PBS -l select=1:ncpus=1\n"
                             "#PBS -l min_walltime=00:30:00\n./a\n", "slurm", "pbs")
    assert "#SBATCH --time-min=00:30:00" in script and "--time=" not in script


def test_hint_beside_ntasks_per_core_is_ignored_as_sbatch_ignores_it():
    """sbatch: "Following options are mutually exclusive with --hint: --ntasks-per-core,
    --threads-per-core, -B and --cpu-bind ... Ignoring --hint." It was read, and placement
    counted a `--hint=nomultithread` job in whole cores where sbatch ignores it."""
    spec = _parsed("slurm/hint_and_threads_per_core.sbatch")
    assert [d.option for d in spec.unknown] == ["--ntasks-per-core"]
    assert "ignored --hint=compute_bound (sbatch ignores --hint beside --ntasks-per-core)" \
        in spec.metadata["parse_notes"]
    spec = get_script_dialect("slurm").parse_script(
        "#!/bin/bash\n#SBATCH -n 4 --hint=nomultithread --cpu-bind=verbose\n./a\n")
    assert [d.option for d in spec.unknown] == ["--hint"]  # verbose is no binding


def test_a_standard_input_file_is_carried_where_there_is_an_option_for_it():
    """bsub -i, Grid Engine's qsub -i and sbatch --input each give the batch job its
    standard input from a file; it was said dropped between them. Now carried, said;
    PBS and flux batch have none (said dropped, as before); a path with a file-name
    pattern stays where it is."""
    script, warnings = _translated("lsf/i_input_file_L_login_shell.lsf", "slurm")
    assert "#SBATCH --input=input.deck" in script
    assert "kept: #BSUB -i input.deck as --input input.deck (the job's standard input)" \
        in warnings
    script, _ = _translated("sge/i_stdin_o_host_path.sge", "lsf")
    assert "#BSUB -i input.txt" in script
    _, warnings = _translated("sge/i_stdin_o_host_path.sge", "pbs")
    assert "dropped: #$ -i input.txt (-i input.txt: no pbs equivalent)" in warnings
    script, warnings, _ = translate("#!/bin/bash\n#SBATCH -t 5 --input=in_%j.txt\n./a\n",
                                    "sge", "slurm")
    assert " -i " not in script and any(
        w.startswith("dropped: #SBATCH -t 5 --input=in_%j.txt") for w in warnings)


@pytest.mark.parametrize(("rel", "option"), [("pbs/pro_j_oe_with_e_file.pbs", "-j oe"),
                                             ("sge/j_y_with_e_file.sge", "-j y")])
def test_a_joined_job_writes_one_file_though_an_error_path_is_given(rel: str, option: str):
    """With `-j oe` (PBS) or `-j y` (Grid Engine) both streams go to the output file and
    the -e path is not used (qsub(1) of Grid Engine: "sets but ignores the error-path
    attribute"). Both paths were read, so every translation split the streams again, the
    script's own dialect too (its `-j` was left out beside an error file)."""
    spec = _parsed(rel)
    assert (spec.stdout, spec.stderr, spec.join_output) == ("logs/joined.out", None, True)
    assert any(n.endswith("-e logs/joined.err not used (qsub writes both streams to the "
                          + ("other file)" if option == "-j oe" else "output file)"))
               for n in spec.metadata["parse_notes"])
    script, _ = _translated(rel, "slurm")
    assert "#SBATCH --output=logs/joined.out" in script and "--error" not in script
    source = rel.split("/")[0]
    script, _ = _translated(rel, source)
    assert option in script and "joined.err" not in script
