"""A nineteenth set of realistic batch scripts (tests/fixtures/scripts_unseen19/<dialect>/),
written from each scheduler's documentation: Slurm burst buffer lines (#BB, #DW jobdw and
stage_in/stage_out) with $DW_JOB_STRIPED, --dependency=afterburstbuffer, after:ID+MIN and
an any-of `?` list, aftercorr and one array task (ID_3), --nodes=1,4,8, -B 2:8:1,
--tres-bind=gres/gpu:closest, --gres=none, --gres-flags=disable-binding, --reboot with
--cpu-freq, --resv-ports with --propagate, --mail-type=TIME_LIMIT_80,ARRAY_TASKS, an array
list with a step, --hint beside --ntasks-per-core, --tmp with --mincpus, --time=INFINITE,
--export=NIL, --begin=teatime, --deadline, --signal=R:, --gpus-per-socket, --container (OCI
bundle), --mem-per-gpu over --gpus, --cpus-per-gpu with --gpus-per-task,
--threads-per-core with --ntasks-per-socket; PBS -R oe, -W run_count with pcput, select of
two chunk shapes with place=scatter:excl, -W depend=on:2, -c c=60, Torque gpus= with pmem,
-W stagein/stageout, -J 0-98:2%5, -j eo with -k oed, mem in kb, afterokarray, -a hhmm, an
-o host prefix, Torque -l joined by commas, -W umask with group_list, place=pack, job-wide
ncpus/ngpus/mem; LSF affinity[core(2,same=socket,exclusive=(socket,injob))],
rusage[mem=N/host], -gpu mode=exclusive_process:mps=yes:j_exclusive=yes, done() && ended(),
-E/-Ep, -We with -c, -n 8,32, a compound resource requirement, -outdir with %U, -ext with
-rn, -G with -Jd, -W 90/hostA, -b 18:00, -t, -q "short long", -env with ~NAME, -m host
group preference, -gpu gmem; Grid Engine -pe mpi 16-32 and orte 8-, -soft/-hard, -masterq,
-now y, -jc, m_mem_free, -l joined by commas with exclusive=true, -t 2-20:2 with -tc and
-hold_jid_ad, -ckpt/-js/-ac, -wd with -o /dev/null and an -e directory, -b n with -shell,
$HOME/$JOB_NAME/$JOB_ID outputs, -hold_jid 123,124 and a wildcard, s_rt beside h_rt,
$SGE_TASK_STEPSIZE, -q a,b; flux --taskmap, -o per-resource.type=core, --setattr bank and
user, an absolute --begin-time, afterany/afternotok ids, -t 1.5h with -g, env rules
(--env-remove=* then --env=PATH, a value naming $PATH, a removal between settings),
--requires=-rank:0, --signal with --bank, --flags=waitable, --tasks-per-node with --cores,
--add-file, -o mpi=/pmi=, --urgency=31.

Each is parsed and compared with its EXPECTED row, its needs read, and translated into
every dialect (its own too) and read back (tests/scripts_unseen_check.py). Faults found,
each fixed and shown by a test here that failed before: a Slurm script's burst buffer
lines (#BB, #BB_LUA, #DW) reached the other schedulers as plain comments, said nowhere, so
the job ran without its buffer and its files were neither staged in nor out (now said
dropped, line by line, and the body's $DW_JOB_* named); flux env rules were read out of
their order (`--env-remove=*` kept unread, so a Slurm translation exported everything and
PATH; a setting after a removal pattern was written before it, so flux removed it) and a
rule's value naming a variable (`PATH=/opt/bin:$PATH`, which flux fills in) reached the
other schedulers as the characters `$PATH`, while a literal `$` reached flux unescaped (now
read in order, a value naming a variable kept as written and said, `$` written `$$`); Grid
Engine's $HOME in an -o/-e path (its pseudo variable) reached the others, which expand
nothing there, as a directory named `$HOME`, said nowhere (now said)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from diamond_jupyter.dialects.translate import get_script_dialect, translate
from tests.scripts_unseen_check import (
    ALL_STRICT,
    directive_lines,
    parse_lines,
    sweep_tests,
    translated,
)

HERE = Path(__file__).parent / "fixtures" / "scripts_unseen19"

# As in the earlier sweeps: whole-job totals (every one checked, None when left out),
# walltime seconds, array, deps, the options kept as unknown directives (in order), JobSpec
# fields; `needs_gpus`/`needs_mem` per node (needs_of); `per_cpu` memory per CPU;
# `ignored` how many directives were noted as ignored. Output paths are in the neutral
# (Slurm) form.
EXPECTED: dict[str, dict[str, Any]] = {
    # ------------------------------------------------------------ flux
    "flux/add_file_days_queue.flux": dict(
        nodes=1, tasks=1, cpus=1, walltime=172800, unknown=["--add-file"], name="long",
        queue="batch", exclusive=True),
    "flux/begin_time_absolute.flux": dict(
        tasks=1, cpus=1, walltime=600, name="abs_begin", begin="2027-01-15T02:30:00"),
    "flux/dependency_afterany_afternotok.flux": dict(
        tasks=1, cpus=1, walltime=300,
        deps=[("afterany", ["f4Bb9xVkHs7"]), ("afternotok", ["f4Bb9xVkHs8"])], name="cleanup"),
    "flux/env_remove_all_then_path.flux": dict(
        tasks=1, cpus=1, walltime=300, name="envs", export_all=False,
        variables={"PATH": "/usr/bin:/bin"}),
    "flux/env_remove_pattern_between_sets.flux": dict(
        tasks=1, cpus=1, walltime=300, unknown=["--env-remove", "--env"], name="envorder",
        variables={"MPLCONFIGDIR": "/tmp/mpl"}),
    "flux/env_value_names_a_variable.flux": dict(
        tasks=1, cpus=1, walltime=300, unknown=["--env", "--env"], name="ev"),
    "flux/flags_waitable_label_io.flux": dict(
        tasks=1, cpus=1, walltime=300, unknown=["--flags", "--unbuffered", "--label-io"],
        name="flags"),
    "flux/mpi_spectrum_pmi_simple.flux": dict(
        nodes=2, tasks=8, cpus=8, walltime=300, unknown=["--setopt", "--setopt"], name="mpi"),
    "flux/per_resource_type_core.flux": dict(
        nodes=1, tasks=1, cpus=1, walltime=3600, unknown=["--setopt"], name="perres",
        exclusive=True),
    "flux/requires_negated_rank.flux": dict(
        nodes=2, tasks=2, cpus=2, walltime=900, unknown=["--requires"], name="notzero"),
    "flux/setattr_bank_and_user.flux": dict(
        tasks=2, cpus=2, walltime=1200, unknown=["--setattr"], name="attrs", account="physics"),
    "flux/signal_at_time_bank.flux": dict(
        tasks=1, cpus=1, walltime=7200, unknown=["--signal"], name="sig", account="chem"),
    "flux/taskmap_cyclic.flux": dict(
        nodes=2, tasks=8, cpus=8, walltime=1800, unknown=["--taskmap"], name="tmap"),
    "flux/tasks_per_node_cores_total.flux": dict(
        nodes=2, tasks=8, cpus=16, walltime=2700, name="tpn"),
    "flux/time_float_hours_gpus_per_slot.flux": dict(
        tasks=4, cpus=32, gpus=4, walltime=5400, name="gslot", needs_gpus=1),
    "flux/urgency_expedite.flux": dict(
        tasks=1, cpus=1, walltime=300, unknown=["--urgency"], name="exp"),
    # ------------------------------------------------------------ lsf
    "lsf/E_Ep_pre_post_exec.lsf": dict(
        tasks=2, cpus=2, walltime=3600, unknown=["-E", "-Ep"], name="prepost"),
    "lsf/G_usergroup_Jd.lsf": dict(
        tasks=1, cpus=1, walltime=1200, unknown=["-G"], name="described",
        comment="nightly reduction of run 42"),
    "lsf/W_host_normalized.lsf": dict(
        tasks=1, cpus=1, walltime=5400, name="norm"),
    "lsf/We_estimated_runtime_c.lsf": dict(
        tasks=4, cpus=4, walltime=14400, unknown=["-We"], name="estimated"),
    "lsf/affinity_core_same_socket_exclusive.lsf": dict(
        nodes=2, tasks=8, cpus=16, walltime=10800, unknown=["-R affinity"], name="pinned",
        queue="normal"),
    "lsf/b_hour_minute.lsf": dict(
        tasks=1, cpus=1, walltime=600, name="bhm", begin="18:00:00"),
    "lsf/compound_resreq_leader.lsf": dict(
        tasks=5, cpus=5, memory_mb=60000, walltime=18000, unknown=["-R{1} select"],
        name="compound"),
    "lsf/env_exclude_variable.lsf": dict(
        tasks=1, cpus=1, walltime=600, unknown=["-env"], name="ee"),
    "lsf/ext_rn.lsf": dict(
        tasks=4, cpus=4, walltime=3600, unknown=["-ext"], name="extsched"),
    "lsf/gpu_gmem.lsf": dict(
        tasks=1, cpus=1, gpus=1, walltime=600, unknown=["-gpu gmem"], name="gm", needs_gpus=1),
    "lsf/gpu_mode_exclusive_mps.lsf": dict(
        nodes=1, tasks=4, cpus=4, gpus=2, walltime=21600,
        unknown=["-gpu mode", "-gpu mps", "-gpu j_exclusive"], name="mps", needs_gpus=2),
    "lsf/m_hostgroup_preference.lsf": dict(
        tasks=2, cpus=2, walltime=600, unknown=["-m"], name="hg"),
    "lsf/n_min_max_slots.lsf": dict(
        tasks=8, cpus=8, walltime=7200, unknown=["-n"], name="flexible"),
    "lsf/outdir_oo.lsf": dict(
        tasks=1, cpus=1, walltime=600, unknown=["-outdir"], name="outdir_job",
        stdout="/scratch/%%U/%j/out.txt"),
    "lsf/q_two_queues.lsf": dict(
        tasks=1, cpus=1, walltime=600, name="mq", queue="short,long"),
    "lsf/rusage_mem_per_host.lsf": dict(
        nodes=2, tasks=16, cpus=16, memory_mb=64000, walltime=7200, name="perhost",
        needs_mem=32000),
    "lsf/t_termination.lsf": dict(
        tasks=1, cpus=1, walltime=600, unknown=["-t"], name="term"),
    "lsf/w_done_and_ended.lsf": dict(
        tasks=1, cpus=1, walltime=1800, deps=[("afterok", ["3101"]), ("afterany", ["3102"])],
        name="merge"),
    # ------------------------------------------------------------ pbs
    "pbs/R_oe_remove_files.pbs": dict(
        nodes=1, tasks=1, cpus=2, walltime=1200, unknown=["-R"], name="tidy"),
    "pbs/W_run_count_pcput.pbs": dict(
        nodes=1, tasks=1, cpus=4, memory_mb=8192, walltime=7200, unknown=["-l", "-W"],
        name="retries"),
    "pbs/W_stagein_stageout.pbs": dict(
        nodes=1, tasks=1, cpus=4, walltime=3600, name="staged",
        notes=["carried: line 5: 'input.dat@fs01:", "carried: line 6: 'result.dat@fs01:"]),
    "pbs/a_hhmm_only.pbs": dict(
        nodes=1, tasks=1, cpus=1, walltime=600, name="at", begin="14:30:00"),
    "pbs/afterokarray.pbs": dict(
        nodes=1, tasks=1, cpus=1, walltime=600, deps=[("afterok", ["1234[].srv"])], name="deparr"),
    "pbs/array_step_throttle.pbs": dict(
        nodes=1, tasks=1, cpus=1, walltime=900, array="0-98:2%5", name="steps"),
    "pbs/c_checkpoint_interval.pbs": dict(
        nodes=1, tasks=1, cpus=16, walltime=86400, unknown=["-c"], name="ckpt"),
    "pbs/depend_on_count.pbs": dict(
        nodes=1, tasks=1, cpus=1, walltime=600, unknown=["-W"], name="waits_for_two"),
    "pbs/k_oed_j_eo.pbs": dict(
        nodes=1, tasks=1, cpus=1, walltime=300, unknown=["-k"], name="keep"),
    "pbs/mem_in_kb.pbs": dict(
        nodes=1, tasks=1, cpus=2, memory_mb=2048, walltime=1800, name="kbmem"),
    "pbs/multi_chunk_scatter_excl.pbs": dict(
        nodes=5, tasks=129, cpus=136, memory_mb=589824, walltime=43200,
        unknown=["-l place:scatter"], name="mixed", queue="workq", exclusive=True,
        needs_mem=131072),
    "pbs/ngpus_ncpus_jobwide.pbs": dict(
        cpus=8, gpus=2, memory_mb=16384, walltime=3600, name="ng", needs_gpus=2),
    "pbs/o_host_prefix.pbs": dict(
        nodes=1, tasks=1, cpus=1, walltime=600, name="hostout", stdout="/home/u/out.txt"),
    "pbs/place_pack.pbs": dict(
        nodes=1, tasks=4, cpus=4, walltime=600, unknown=["-l place:pack"], name="pk"),
    "pbs/torque_gpus_ppn_pmem.pbs": dict(
        nodes=2, tasks=16, cpus=16, gpus=4, memory_mb=32768, walltime=14400, name="tq_gpu",
        per_cpu=2048, needs_gpus=2),
    "pbs/torque_l_commas.pbs": dict(
        nodes=2, tasks=16, cpus=16, memory_mb=16384, walltime=7200, name="commas", per_cpu=1024),
    "pbs/umask_group_list.pbs": dict(
        nodes=1, tasks=1, cpus=1, walltime=600, unknown=["-W", "-W"], name="um"),
    # ------------------------------------------------------------ sge
    "sge/b_n_shell_yes.sge": dict(
        walltime=300, unknown=["-b", "-shell"], name="bin"),
    "sge/ckpt_js_ac.sge": dict(
        walltime=18000, unknown=["-ckpt", "-js", "-ac"], name="ctx"),
    "sge/comma_joined_l_exclusive.sge": dict(
        nodes=1, cpus=8, memory_mb=16384, walltime=43200, name="joined", exclusive=True,
        per_cpu=2048),
    "sge/hold_jid_list.sge": dict(
        walltime=600, deps=[("afterany", ["123", "124"])], name="hl"),
    "sge/hold_jid_wildcard.sge": dict(
        walltime=600, unknown=["-hold_jid"], name="hw"),
    "sge/jc_job_class.sge": dict(
        walltime=1800, unknown=["-jc"], name="classed"),
    "sge/m_mem_free_uge.sge": dict(
        nodes=1, cpus=4, memory_mb=4 * 6144, per_cpu=6144, walltime=28800,
        name="uge_mem"),
    "sge/masterq_pe.sge": dict(
        tasks=12, cpus=12, walltime=14400, unknown=["-masterq"], name="master"),
    "sge/now_y.sge": dict(
        walltime=600, unknown=["-now"], name="waiter"),
    "sge/o_home_pseudo_variables.sge": dict(
        walltime=600, name="pv", stdout="$HOME/logs/%x.%j", stderr="$HOME/logs/%x.e%j"),
    "sge/pe_open_range.sge": dict(
        tasks=8, cpus=8, walltime=3600, unknown=["-pe"], name="atleast"),
    "sge/pe_range_mpi.sge": dict(
        tasks=16, cpus=16, walltime=7200, unknown=["-pe"], name="ranged"),
    "sge/q_list.sge": dict(
        walltime=600, name="ql", queue="short.q,long.q"),
    "sge/s_rt_h_rt.sge": dict(
        walltime=3600, unknown=["-l s_rt"], name="srt"),
    "sge/soft_arch_hard_vmem.sge": dict(
        memory_mb=4096, walltime=3600, unknown=["-soft", "-soft -l", "-hard"], name="softreq",
        per_cpu=4096),
    "sge/t_step_tc_hold_jid_ad.sge": dict(
        walltime=1200, array="2-20:2%3", unknown=["-hold_jid_ad"], name="post_arr"),
    "sge/t_stepsize_variables.sge": dict(
        walltime=600, array="1-100:10", name="stp"),
    "sge/wd_o_dev_null_e_dir.sge": dict(
        walltime=300, name="quiet_sge", stdout="/dev/null", stderr="/data/proj/run3/logs/",
        working_directory="/data/proj/run3"),
    # ------------------------------------------------------------ slurm
    "slurm/aftercorr_numeric.sbatch": dict(
        tasks=1, cpus=1, walltime=600, array="0-7", deps=[("afterok", ["5511"])], name="post"),
    "slurm/afterok_array_element.sbatch": dict(
        tasks=1, cpus=1, walltime=600, deps=[("afterok", ["5511_3"])], name="elem"),
    "slurm/array_list_with_step.sbatch": dict(
        tasks=1, cpus=1, walltime=300, array="1,3,5-11:2", name="odd", stdout="odd_%A_%a.out"),
    "slurm/bb_datawarp_stage_in.sbatch": dict(
        nodes=2, tasks=16, cpus=16, walltime=1800, name="bbstage"),
    "slurm/begin_teatime.sbatch": dict(
        tasks=1, cpus=1, walltime=600, name="tea", begin="teatime"),
    "slurm/container_oci_bundle.sbatch": dict(
        tasks=1, cpus=1, walltime=600, unknown=["--container"], name="oci"),
    "slurm/cpus_per_gpu_gpus_per_task.sbatch": dict(
        tasks=4, cpus=24, gpus=4, walltime=600, name="cpg", needs_gpus=1),
    "slurm/deadline_now_plus.sbatch": dict(
        tasks=1, cpus=1, walltime=600, unknown=["--deadline"], name="dl"),
    "slurm/dependency_after_plus_minutes.sbatch": dict(
        tasks=1, cpus=1, walltime=600, unknown=["--dependency"], name="trail"),
    "slurm/dependency_afterburstbuffer.sbatch": dict(
        tasks=4, cpus=4, walltime=3600, unknown=["--dependency"], name="bb_consume"),
    "slurm/dependency_any_of_question_mark.sbatch": dict(
        tasks=1, cpus=1, walltime=600, deps=[("afterok", ["5001"]), ("afternotok", ["5002"])],
        name="either"),
    "slurm/export_nil.sbatch": dict(
        tasks=1, cpus=1, walltime=600, name="nil", export_all=False),
    "slurm/extra_node_info_B.sbatch": dict(
        nodes=1, tasks=16, cpus=16, walltime=3600, unknown=["--extra-node-info"], name="topo"),
    "slurm/gpus_per_socket_sockets.sbatch": dict(
        nodes=1, tasks=2, cpus=2, walltime=3600,
        unknown=["--sockets-per-node", "--gpus-per-socket"], name="gps", needs_gpus=2),
    "slurm/gres_flags_disable_binding.sbatch": dict(
        nodes=1, tasks=2, cpus=2, gpus=2, walltime=14400, unknown=["--gres-flags"], name="anybind",
        needs_gpus=2),
    "slurm/gres_none_cpu_only.sbatch": dict(
        tasks=2, cpus=2, walltime=1200, unknown=["--gres"], name="cpuonly", queue="gpu"),
    "slurm/hint_compute_bound_ntasks_per_core.sbatch": dict(
        nodes=1, tasks=32, cpus=32, walltime=3600, unknown=["--ntasks-per-core"], name="cb",
        ignored=1),
    "slurm/mail_time_limit_80_array_tasks.sbatch": dict(
        tasks=1, cpus=1, walltime=7200, array="0-9", name="warned",
        mail_events=["time_limit_80", "array_tasks"], mail_user="bo@uni.example"),
    "slurm/mem_per_gpu_gpus_total.sbatch": dict(
        nodes=1, gpus=2, memory_mb=81920, walltime=600, name="mpg", needs_gpus=2),
    "slurm/nodes_size_list.sbatch": dict(
        nodes=1, tasks=4, cpus=4, walltime=7200, unknown=["--nodes"], name="sizes"),
    "slurm/reboot_cpu_freq.sbatch": dict(
        nodes=1, tasks=8, cpus=8, walltime=10800, unknown=["--reboot", "--cpu-freq"], name="fresh"),
    "slurm/resv_ports_propagate.sbatch": dict(
        tasks=8, cpus=8, walltime=900, unknown=["--resv-ports", "--propagate"], name="ports"),
    "slurm/signal_R_prefix.sbatch": dict(
        tasks=1, cpus=1, walltime=3600, unknown=["--signal"], name="sigr"),
    "slurm/threads_per_core_ntasks_per_socket.sbatch": dict(
        nodes=1, tasks=8, cpus=8, walltime=600,
        unknown=["--ntasks-per-socket", "--threads-per-core"], name="tpc"),
    "slurm/time_infinite.sbatch": dict(
        tasks=1, cpus=1, walltime=None, unknown=["--time"], name="forever", queue="service"),
    "slurm/tmp_disk_mincpus.sbatch": dict(
        nodes=1, walltime=21600, unknown=["--mincpus", "--tmp"], name="localdisk"),
    "slurm/tres_bind_gpu_closest.sbatch": dict(
        nodes=1, tasks=4, cpus=4, gpus=4, walltime=2700, unknown=["--tres-bind"], name="tbind",
        needs_gpus=4),
}

_FIELDS = ("name", "queue", "account", "qos", "stdout", "stderr", "requeue", "mail_events",
           "mail_user", "working_directory", "hold", "begin", "shell", "comment",
           "reservation")

test_every_fixture_has_expectations, test_parse_values, test_translates_or_reports = \
    sweep_tests(HERE, EXPECTED, fields=_FIELDS, strict=ALL_STRICT, at_least=90)


@pytest.mark.parametrize("target", ["pbs", "lsf", "flux", "sge"])
def test_burst_buffer_lines_are_said_dropped_line_by_line(target: str):
    """sbatch reads #BB and #DW lines in the leading block (the burst buffer plugin's
    directives): the buffer, and the files staged into it and out. Another scheduler reads
    them as plain comments, and the translation said nothing, so the job ran without its
    buffer, on input never staged in, and its output was never staged out."""
    script, warnings = translated(HERE, "slurm/bb_datawarp_stage_in.sbatch", target)
    dropped = [w for w in warnings if "a Slurm burst buffer directive" in w]
    assert [w.split("`")[1].split()[:2] for w in dropped] == [
        ["#BB", "create_persistent"], ["#DW", "jobdw"], ["#DW", "stage_in"],
        ["#DW", "stage_out"]]
    assert dropped[1].startswith("dropped: line 7: `#DW jobdw capacity=100GB")
    assert f"{target} has none, so the job runs without that buffer" in dropped[1]
    # the body's path into the buffer, which nothing sets there
    assert f"kept: line 12: $DW_JOB_STRIPED (the burst buffer's path, set by Slurm) is not " \
           f"set under {target}" in warnings
    assert "#DW jobdw" in script  # left in the body, a comment there


def test_burst_buffer_lines_stay_for_slurm_and_only_in_the_leading_block():
    script, warnings = translated(HERE, "slurm/bb_datawarp_stage_in.sbatch", "slurm")
    assert "#DW stage_in source=/lus/proj/input" in script
    assert not any("burst buffer" in w for w in warnings)
    # after the first command sbatch reads none: a #DW line there is a comment for Slurm too
    text = "#!/bin/bash\n#SBATCH -n 1 -t 5\necho start\n#DW jobdw capacity=1GB\n./a\n"
    _, warnings, _ = translate(text, "pbs", "slurm")
    assert not any("burst buffer" in w for w in warnings)


def test_flux_env_remove_all_then_a_setting_is_only_that_variable():
    """`--env-remove=*` then `--env=PATH=...`: flux starts the job with PATH alone. The
    removal was kept unread, so Slurm got --export=ALL,PATH=... (the whole environment)."""
    script, warnings = translated(HERE, "flux/env_remove_all_then_path.flux", "slurm")
    assert directive_lines(script, "#SBATCH --export") == [
        "#SBATCH --export=PATH=/usr/bin:/bin"]
    assert not any("env" in w for w in warnings)
    script, _ = translated(HERE, "flux/env_remove_all_then_path.flux", "flux")
    assert directive_lines(script, "#flux: --env") == [
        "#flux: --env=-*", "#flux: --env=PATH=/usr/bin:/bin"]
    # a setting before the removal is removed too, as flux applies the rules in order
    spec = parse_lines("flux", "#flux: -n 1\n#flux: --env=A=1\n#flux: --env=-*\n"
                               "#flux: --env=B=2")
    assert spec.environment.export_all is False and spec.environment.variables == {"B": "2"}


def test_flux_env_rules_after_a_kept_one_keep_their_order():
    """A removal by pattern is kept as written (it removes from the submitting shell too);
    a setting after it was read and written before it, so flux removed what the script
    set: OMPI_MCA_pml=ucx was lost. Now the rules after a kept one are kept too, in their
    order, and a removal also removes what was set before it (OMPI_MCA_btl)."""
    rel = "flux/env_remove_pattern_between_sets.flux"
    script, _ = translated(HERE, rel, "flux")
    assert directive_lines(script, "#flux: --env") == [
        "#flux: --env=MPLCONFIGDIR=/tmp/mpl", "#flux: --env-remove=OMPI_*",
        "#flux: --env=OMPI_MCA_pml=ucx"]
    script, warnings = translated(HERE, rel, "slurm")
    assert directive_lines(script, "#SBATCH --export") == [
        "#SBATCH --export=ALL,MPLCONFIGDIR=/tmp/mpl"]
    assert any(w.startswith("dropped: #flux: --env-remove=OMPI_*") for w in warnings)
    assert any(w.startswith("dropped: #flux: --env=OMPI_MCA_pml=ucx") for w in warnings)
    assert "line 7: env rule `OMPI_MCA_pml=ucx` kept as written, as `-OMPI_*` before it is " \
           "(flux applies env rules in their order)" in warnings


def test_a_flux_env_value_naming_a_variable_is_kept_and_said():
    """flux fills in `$PATH` in `--env=PATH=/opt/tool/bin:$PATH` at submission; sbatch,
    qsub and bsub set the characters `$PATH`, so the job lost its PATH, said nowhere."""
    rel = "flux/env_value_names_a_variable.flux"
    for target, sentinel in (("slurm", "#SBATCH"), ("pbs", "#PBS"), ("lsf", "#BSUB"),
                             ("sge", "#$")):
        script, warnings = translated(HERE, rel, target)
        assert not any("PATH" in x for x in directive_lines(script, sentinel))
        assert "line 4: `--env=PATH=/opt/tool/bin:$PATH`: flux fills in $PATH from the " \
               "submitting environment, which no other scheduler's directive does; kept " \
               "as written" in warnings
        assert any(w.startswith("dropped: #flux: --env=SCRATCH=${HOME}/scratch")
                   for w in warnings)
    script, _ = translated(HERE, rel, "flux")
    assert directive_lines(script, "#flux: --env") == [
        "#flux: --env=PATH=/opt/tool/bin:$PATH", "#flux: --env=SCRATCH=${HOME}/scratch"]


def test_a_literal_dollar_reaches_flux_escaped_and_is_read_back():
    """PBS, Grid Engine and Slurm set a value as written; flux would fill in `$PATH`, so it
    is written `$$PATH` (flux's escape), and read back as the value it was."""
    text = "#!/bin/bash\n#PBS -l select=1:ncpus=1\n#PBS -v PATH=/opt/tool/bin:$PATH\n./a\n"
    script, _, _ = translate(text, "flux", "pbs")
    assert "#flux: --env=PATH=/opt/tool/bin:$$PATH" in script.splitlines()
    back = get_script_dialect("flux").parse_script(script)
    assert back.environment.variables == {"PATH": "/opt/tool/bin:$PATH"}
    assert parse_lines("flux", "#flux: -n 1\n#flux: --env=PRICE=$$5").environment.variables \
        == {"PRICE": "$5"}


@pytest.mark.parametrize("target", ["slurm", "pbs", "lsf", "flux"])
def test_grid_engine_home_in_an_output_path_is_said(target: str):
    """Grid Engine reads $HOME in -o/-e as the job owner's home (a pseudo variable, as
    $JOB_ID); the others expand nothing in a directive: their job wrote under a directory
    named `$HOME`, said nowhere. $JOB_NAME and $JOB_ID still become their tokens."""
    script, warnings = translated(HERE, "sge/o_home_pseudo_variables.sge", target)
    said = [w for w in warnings if w.startswith("approximated: $HOME in output path")]
    assert said == [
        f"approximated: $HOME in output path {p!r} (Grid Engine's pseudo variable: the job "
        f"owner's home directory) has no {target} equivalent; kept literally, so {target} "
        "writes under a directory named $HOME (give the home directory's path)"
        for p in ("$HOME/logs/%x.%j", "$HOME/logs/%x.e%j")]
    script, warnings = translated(HERE, "sge/o_home_pseudo_variables.sge", "sge")
    assert "#$ -o $HOME/logs/$JOB_NAME.$JOB_ID" in script.splitlines()
    assert not any("$HOME" in w for w in warnings)


def test_a_flux_env_rule_without_a_variable_name_is_kept_as_written():
    """`--env==x` names no variable: it was read as the variable "" (Slurm got
    --export=ALL,=x); now kept for flux to judge, and the rules after it with it."""
    spec = parse_lines("flux", "#flux: -n 1\n#flux: --env==x\n#flux: --env=A=1")
    assert spec.environment.variables == {}
    assert [(d.option, d.value) for d in spec.unknown] == [("--env", "=x"), ("--env", "A=1")]
