"""A twenty-fourth set of realistic batch scripts (tests/fixtures/scripts_unseen24/<dialect>/),
on the options the earlier sweeps used least: Slurm (--mem-bind=local and
verbose,map_mem, --cpu-freq as a range with a governor and as a governor alone,
--signal=B:USR1@300 with --requeue and --open-mode=append, a bare signal number, an array
with --signal, --kill-on-invalid-dep with --nice, --deadline beside --begin, --open-mode=
truncate with --no-requeue, --begin=now+30minutes with --hold); PBS Pro and Torque (-W
stagein/stageout, one of them into a directory, a quoted list of two, -W sandbox=PRIVATE and
HOME, -W umask, -W group_list with -p, -h with -k oe, -r y with -o/-e paths, place=excl with
-P); LSF (-E and -Ep, -w of ended() && exit(), -ti, -sla/-app/-P, -We with -hl, -k with -r,
-mig with -rn, -nnodes with -alloc_flags, -Lp with -w done(NAME) and -G, -b with -ptl and -N);
Grid Engine (-ckpt, -notify, -r y, -masterq, -binding linear and striding, -soft/-hard,
-sync y with -now n, -dl, -ac, -c, -js, -p, -R y, -t with -tc and $TASK_ID paths); flux (--cc
copies with {cc} in the output, $FLUX_JOB_CC without --cc, one slot of one core, --signal
with --urgency, -q with --exclusive).

Each is parsed and compared with its EXPECTED row, its needs read, and translated into
every dialect (its own too) and read back (tests/scripts_unseen_check.py), then the
translations a user would look at are checked line by line. Faults found, each fixed and
shown by tests here that failed before: a flux job of --cc copies reached flux batch as a
`--cc` line it refuses (now refused, saying to split the job or use flux submit --cc);
$FLUX_JOB_CC in a job without --cc became the target's array index (now kept as written,
said); one task of one CPU reached Grid Engine said dropped though its default is that (now
not said); a PBS stageout into a directory (`results.tar@host:/keep/`) was staged onto the
directory's own path (now into it, under the file's name)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from diamond_jupyter.dialects.translate import get_script_dialect, translate
from diamond_jupyter.model import BadInput, StageEntry
from tests.scripts_unseen_check import (
    ALL_STRICT,
    COMPARED_FIELDS,
    directive_lines,
    read_fixture,
    sweep_tests,
    translated,
)

HERE = Path(__file__).parent / "fixtures" / "scripts_unseen24"

# As in the earlier sweeps (tests/scripts_unseen_check.py names the keys).
EXPECTED: dict[str, dict[str, Any]] = {
    "flux/cc_copies_with_id_in_output.flux": dict(
        tasks=2, cpus=2, walltime=900, array="1-4", name="replicas", stdout="rep.%a.out",
        notes=["`#flux: --cc=1-4`: flux batch would refuse it"]),
    "flux/copy_id_without_cc.flux": dict(
        tasks=1, cpus=1, walltime=300, name="single"),
    "flux/one_slot_to_default.flux": dict(
        nodes=1, tasks=1, cpus=1, walltime=600, name="tiny"),
    "flux/queue_and_conf_exclusive.flux": dict(
        nodes=4, tasks=4, cpus=4, walltime=1800, queue="pdebug", stdout="run-%j.log",
        exclusive=True),
    "flux/signal_and_urgency.flux": dict(
        nodes=2, tasks=16, cpus=16, walltime=7200, unknown=["--signal", "--urgency"]),
    "lsf/Ep_E_pre_post_exec.lsf": dict(
        tasks=8, cpus=8, walltime=3600, unknown=["-E", "-Ep"], name="prepost",
        stdout="prepost.%j.out"),
    "lsf/Lp_license_project_w_done_numbered.lsf": dict(
        tasks=4, cpus=4, walltime=10800, unknown=["-Lp", "-w", "-G"], name="lic"),
    "lsf/We_estimate_and_hl.lsf": dict(
        tasks=2, cpus=2, memory_mb=8192, walltime=7200, unknown=["-We", "-hl"], name="est"),
    "lsf/k_checkpoint_dir_period.lsf": dict(
        tasks=4, cpus=4, walltime=43200, unknown=["-k"], name="ckpt", requeue=True),
    "lsf/mig_and_rn.lsf": dict(
        tasks=1, cpus=1, walltime=21600, unknown=["-mig"], name="migr", requeue=False),
    "lsf/ptl_and_b_begin_date.lsf": dict(
        tasks=2, cpus=2, walltime=1800, unknown=["-ptl"], name="later", mail_events=["end"],
        mail_user="me@lab.example", begin="2026-12-31T22:00:00"),
    "lsf/sla_app_project.lsf": dict(
        nodes=1, tasks=16, cpus=16, walltime=14400, unknown=["-sla", "-app"], name="slajob",
        account="proj_aero", stdout="%j.log"),
    "lsf/smt_alloc_flags_nnodes_summit.lsf": dict(
        nodes=8, walltime=7200, unknown=["-alloc_flags"], name="summit_run", account="GEN150",
        stdout="run.%j"),
    "lsf/w_expression_ended_exit.lsf": dict(
        tasks=1, cpus=1, walltime=1200, unknown=["-w", "-ti"], name="collect", queue="normal"),
    "pbs/array_J_with_sandbox_hpc.pbs": dict(
        nodes=1, tasks=1, cpus=2, memory_mb=4096, walltime=2700, array="1-20", unknown=["-W"],
        name="arr_sbx", queue="short", needs_mem=4096),
    "pbs/group_list_and_priority.pbs": dict(
        nodes=1, tasks=1, cpus=4, walltime=1800, unknown=["-W", "-p"], name="grp",
        account="CLI0042"),
    "pbs/hold_and_keep_oe.pbs": dict(
        nodes=1, tasks=1, cpus=1, walltime=300, unknown=["-k"], name="held", hold=True),
    "pbs/place_excl_gpus_mem.pbs": dict(
        nodes=1, tasks=1, cpus=32, gpus=4, memory_mb=256000, walltime=43200, unknown=["-P"],
        name="gpu_excl", queue="gpu", exclusive=True, needs_gpus=4, needs_mem=256000),
    "pbs/r_y_and_e_o_paths.pbs": dict(
        nodes=1, tasks=1, cpus=16, walltime=7200, unknown=["-l select:ompthreads"],
        name="rerun_ok", stdout="/scratch/user/logs/rerun.out",
        stderr="/scratch/user/logs/rerun.err", requeue=True),
    "pbs/sandbox_private_umask.pbs": dict(
        nodes=1, tasks=1, cpus=8, memory_mb=16384, walltime=3600, unknown=["-W", "-W"], name="sbx",
        needs_mem=16384),
    "pbs/stagein_stageout_select.pbs": dict(
        nodes=2, tasks=72, cpus=72, walltime=21600, name="staged_run", queue="workq"),
    "pbs/stagein_two_files_comma.pbs": dict(
        nodes=1, tasks=1, cpus=4, walltime=1200, name="two_in"),
    "pbs/torque_nodes_ppn_umask_depend_afterany.pbs": dict(
        nodes=2, tasks=24, cpus=24, walltime=28800, deps=[("afterany", ["88231.torque01"])],
        unknown=["-W"], name="tq_chain", mail_events=["fail", "end"],
        mail_user="someone@uni.example"),
    "sge/binding_linear_and_soft_hard.sge": dict(
        nodes=1, cpus=4, walltime=3600, unknown=["-binding", "-soft", "-soft -l", "-hard"],
        name="bind"),
    "sge/binding_striding_and_R_y.sge": dict(
        nodes=1, cpus=16, walltime=21600, unknown=["-R", "-binding"], name="reserve"),
    "sge/c_checkpoint_interval_and_ckpt.sge": dict(
        walltime=36000, unknown=["-ckpt", "-c"], name="cinterval"),
    "sge/ckpt_notify_r_yes.sge": dict(
        nodes=1, cpus=8, walltime=86400, unknown=["-ckpt", "-notify"], name="ckpt_run",
        requeue=True),
    "sge/dl_deadline_and_ac_context.sge": dict(
        walltime=7200, unknown=["-dl", "-ac"], name="ctx"),
    "sge/js_priority_and_P_project.sge": dict(
        memory_mb=8192, walltime=10800, unknown=["-js", "-P", "-p"], name="prio"),
    "sge/masterq_and_pe_mpi.sge": dict(
        tasks=32, cpus=32, memory_mb=65536, walltime=14400, unknown=["-masterq"], name="mq"),
    "sge/sync_y_and_now_n.sge": dict(
        walltime=600, unknown=["-sync", "-now"], name="waitme"),
    "sge/t_array_with_notify_and_e_o.sge": dict(
        walltime=1200, array="1-100:1%10", unknown=["-notify"], name="arr",
        stdout="logs/%x.%a.out", stderr="logs/%x.%a.err"),
    "slurm/array_requeue_signal_at_percent.sbatch": dict(
        tasks=1, cpus=2, walltime=5400, array="1-50%5", unknown=["--signal"], name="sweep",
        stdout="sweep_%A_%a.log", requeue=True),
    "slurm/begin_now_plus_minutes_hold.sbatch": dict(
        tasks=1, cpus=1, walltime=600, name="delayed", hold=True, begin="now+30minutes"),
    "slurm/cpu_freq_governor_only_qos.sbatch": dict(
        tasks=48, cpus=48, memory_mb=96000, walltime=14400, unknown=["--cpu-freq"], name="energy",
        qos="low"),
    "slurm/deadline_and_begin_tomorrow.sbatch": dict(
        tasks=4, cpus=4, walltime=3600, unknown=["--deadline"], name="nightly",
        mail_events=["fail"], mail_user="ops@lab.example", begin="2026-12-24T20:00:00"),
    "slurm/kill_on_invalid_dep_nice.sbatch": dict(
        tasks=1, cpus=4, walltime=1800, deps=[("afterok", ["4412001"])],
        unknown=["--kill-on-invalid-dep", "--nice"], name="post"),
    "slurm/mem_bind_local_cpu_freq_range.sbatch": dict(
        nodes=1, tasks=32, cpus=32, walltime=1200, unknown=["--mem-bind", "--cpu-freq"],
        name="stream_bind", queue="compute"),
    "slurm/mem_bind_verbose_map_mem.sbatch": dict(
        nodes=1, tasks=2, cpus=32, memory_mb=122880, walltime=10800, unknown=["--mem-bind"],
        name="numa_pin", needs_mem=122880),
    "slurm/open_mode_truncate_separate_err.sbatch": dict(
        tasks=8, cpus=8, walltime=900, name="io_test", stdout="io_%x_%j.out",
        stderr="io_%x_%j.err", requeue=False),
    "slurm/signal_bare_number_and_exclusive.sbatch": dict(
        nodes=4, tasks=512, cpus=512, walltime=43200, unknown=["--signal"], name="lammps_ck",
        account="chm230012", exclusive=True),
    "slurm/signal_batch_prefix_requeue.sbatch": dict(
        nodes=2, tasks=128, cpus=128, walltime=172800, unknown=["--signal"], name="ckpt_loop",
        stdout="logs/ckpt_%j.out", requeue=True),
}

test_every_fixture_has_expectations, test_parse_values, test_translates_or_reports = \
    sweep_tests(HERE, EXPECTED, fields=COMPARED_FIELDS, strict=ALL_STRICT, at_least=40)


# ------------------------------------------------------------ faults found, now fixed

CC = "flux/cc_copies_with_id_in_output.flux"
NO_CC = "flux/copy_id_without_cc.flux"


def test_flux_copies_are_refused_for_flux_batch_saying_what_instead():
    with pytest.raises(BadInput) as exc:
        translated(HERE, CC, "flux")
    msg = str(exc.value)
    assert msg.startswith("line 5: --cc=1-4: flux batch cannot express copies of a job (it "
                          "has no --cc, and a job array is no flux batch concept)")
    assert "split the job into one batch script per copy" in msg
    assert "`flux submit --cc=1-4`" in msg


@pytest.mark.parametrize(("target", "array", "out", "index"), [
    ("slurm", "#SBATCH --array=1-4", "#SBATCH --output=rep.%a.out", "$SLURM_ARRAY_TASK_ID"),
    ("pbs", "#PBS -J 1-4", "#PBS -o rep.^array_index^.out", "$PBS_ARRAY_INDEX"),
    ("sge", "#$ -t 1-4", "#$ -o rep.$TASK_ID.out", "$SGE_TASK_ID"),
])
def test_flux_copies_reach_other_schedulers_as_an_array(target, array, out, index):
    script, warnings = translated(HERE, CC, target)
    assert array in script and out in script
    assert f'./replica --seed "{index}"' in script
    assert any(w.startswith("line 5: `#flux: --cc=1-4`: flux batch would refuse it")
               for w in warnings)


@pytest.mark.parametrize("target", ["slurm", "pbs", "lsf", "sge"])
def test_copy_id_without_cc_stays_as_written(target: str):
    script, warnings = translated(HERE, NO_CC, target)
    assert 'echo "copy: ${FLUX_JOB_CC:-none}"' in script
    assert f"kept: line 5: $FLUX_JOB_CC (a --cc copy's id, and the job has no --cc) has no " \
        f"{target} equivalent" in warnings
    assert not any(line.startswith(("#SBATCH --array", "#PBS -J", "#$ -t"))
                   for line in script.splitlines())


def test_one_slot_of_one_core_reaches_grid_engine_unsaid():
    script, warnings = translated(HERE, "flux/one_slot_to_default.flux", "sge")
    assert directive_lines(script, "#$") == [
        "#$ -S /bin/bash", "#$ -N tiny", "#$ -cwd", "#$ -l h_rt=00:10:00", "#$ -j y"]
    assert warnings == []


def test_pbs_stageout_into_a_directory_lands_inside_it():
    _, text = read_fixture(HERE, "pbs/stagein_stageout_select.pbs")
    spec = get_script_dialect("pbs").parse_script(text)
    assert spec.stage_out == [StageEntry(
        source="results.tar", destination="login01:/home/user/results/results.tar",
        recursive=True)]
    assert spec.stage_in == [StageEntry(
        source="login01:/home/user/data/input.dat", destination="input.dat", recursive=True)]


@pytest.mark.parametrize(("entries", "stage_in", "stage_out"), [
    # a file into a directory of the job's side, and the job's directory into the storage's
    ("stagein=in/@fs:/data/x.dat,stageout=out@h:/arch/",
     [("fs:/data/x.dat", "in/x.dat")], [("out", "h:/arch/out")]),
    # a directory onto a directory, both ending in '/': the same directory, as before
    ("stagein=mesh/@fs:/data/mesh/", [("fs:/data/mesh", "mesh")], []),
    # no '/': the path named
    ("stageout=a.out@h:/keep/a.out", [], [("a.out", "h:/keep/a.out")]),
])
def test_pbs_staging_into_directories(entries, stage_in, stage_out):
    spec = get_script_dialect("pbs").parse_script(
        f"#!/bin/bash\n#PBS -l select=1:ncpus=1\n#PBS -W {entries}\n./a\n")
    assert [(e.source, e.destination) for e in spec.stage_in] == stage_in
    assert [(e.source, e.destination) for e in spec.stage_out] == stage_out


# ------------------------------------------------------------ what a user sees, carried

@pytest.mark.parametrize(("rel", "target", "lines"), [
    ("slurm/signal_batch_prefix_requeue.sbatch", "lsf",
     ["#BSUB -r", "#BSUB -wa USR1", "#BSUB -wt 5"]),
    ("slurm/signal_batch_prefix_requeue.sbatch", "flux",
     ["#flux: --signal=USR1@5m", "#flux: --setopt=output.mode=append"]),
    ("slurm/signal_bare_number_and_exclusive.sbatch", "flux",
     ["#flux: --signal=10@2m", "#flux: --exclusive"]),
    ("flux/signal_and_urgency.flux", "slurm", ["#SBATCH --signal=USR1@300"]),
    ("lsf/mig_and_rn.lsf", "slurm", ["#SBATCH --no-requeue"]),
    ("lsf/ptl_and_b_begin_date.lsf", "slurm",
     ["#SBATCH --begin=2026-12-31T22:00:00", "#SBATCH --mail-type=END"]),
    ("sge/ckpt_notify_r_yes.sge", "slurm", ["#SBATCH --requeue", "#SBATCH --cpus-per-task=8"]),
    ("pbs/hold_and_keep_oe.pbs", "slurm", ["#SBATCH --hold"]),
    ("pbs/hold_and_keep_oe.pbs", "sge", ["#$ -h"]),
    ("sge/t_array_with_notify_and_e_o.sge", "slurm",
     ["#SBATCH --array=1-100:1%10", "#SBATCH --output=logs/%x.%a.out",
      "#SBATCH --error=logs/%x.%a.err"]),
    ("slurm/deadline_and_begin_tomorrow.sbatch", "sge", ["#$ -a 202612242000"]),
    ("slurm/begin_now_plus_minutes_hold.sbatch", "flux",
     ["#flux: --urgency=0", "#flux: --begin-time=+1800s"]),
    ("pbs/place_excl_gpus_mem.pbs", "slurm", ["#SBATCH --exclusive"]),
])
def test_carried_as_a_user_would_write_it(rel: str, target: str, lines: list[str]):
    script, _ = translated(HERE, rel, target)
    for line in lines:
        assert line in script.splitlines(), (line, script)


@pytest.mark.parametrize(("rel", "target", "said"), [
    ("slurm/kill_on_invalid_dep_nice.sbatch", "pbs",
     ["dropped: #SBATCH --kill-on-invalid-dep=yes", "dropped: #SBATCH --nice=100"]),
    ("slurm/mem_bind_local_cpu_freq_range.sbatch", "lsf",
     ["dropped: #SBATCH --mem-bind=local", "dropped: #SBATCH --cpu-freq=2000000-2400000"]),
    ("slurm/deadline_and_begin_tomorrow.sbatch", "lsf",
     ["dropped: #SBATCH --deadline=2026-12-25T06:00:00"]),
    ("slurm/begin_now_plus_minutes_hold.sbatch", "pbs",
     ["dropped: begin time now+30minutes (qsub -a takes a date and time"]),
    ("lsf/Ep_E_pre_post_exec.lsf", "slurm",
     ['dropped: #BSUB -E "/usr/local/bin/check_scratch.sh"',
      'dropped: #BSUB -Ep "/usr/local/bin/cleanup.sh"']),
    ("lsf/w_expression_ended_exit.lsf", "slurm",
     ['dropped: #BSUB -w "ended(71001) && exit(71002, 0)"', "dropped: #BSUB -ti"]),
    ("lsf/We_estimate_and_hl.lsf", "slurm", ["dropped: #BSUB -We 00:45", "dropped: #BSUB -hl"]),
    ("lsf/k_checkpoint_dir_period.lsf", "sge", ['dropped: #BSUB -k "/scratch/ckpt 30']),
    ("sge/masterq_and_pe_mpi.sge", "slurm", ["dropped: #$ -masterq big.q@node001"]),
    ("sge/sync_y_and_now_n.sge", "sge", ["dropped: #$ -sync y (-sync y makes qsub wait"]),
    ("sge/dl_deadline_and_ac_context.sge", "slurm",
     ["dropped: #$ -dl 202612312359", "dropped: #$ -ac stage=prep,owner=lab1"]),
    ("pbs/sandbox_private_umask.pbs", "slurm",
     ["dropped: #PBS -W sandbox=PRIVATE", "dropped: #PBS -W umask=027"]),
    ("slurm/signal_batch_prefix_requeue.sbatch", "sge",
     ["dropped: #SBATCH --signal=B:USR1@300 (--signal B:USR1@300: a signal 300 s before"]),
])
def test_not_carried_is_said_by_its_line(rel: str, target: str, said: list[str]):
    _, warnings = translated(HERE, rel, target)
    for words in said:
        assert any(w.startswith(words) for w in warnings), (words, warnings)


def test_sync_y_is_dropped_for_grid_engine_itself_and_now_n_kept():
    script, _ = translated(HERE, "sge/sync_y_and_now_n.sge", "sge")
    assert "#$ -now n" in script.splitlines() and "-sync" not in script


def test_a_flux_script_with_copies_translates_for_slurm_with_its_totals():
    _, text = read_fixture(HERE, CC)
    script, _, spec = translate(text, "slurm", "flux")
    assert "#SBATCH --ntasks=2" in script and "#SBATCH --time=00:15:00" in script
    assert spec.array.expression == "1-4"
