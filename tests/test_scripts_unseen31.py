"""A thirty-first set of realistic batch scripts (tests/fixtures/scripts_unseen31/<dialect>/).

Each is parsed and compared with its EXPECTED row (values worked out by hand), its needs
read, and translated into every dialect (its own too) and read back
(tests/scripts_unseen_check.py). The styles: Slurm under zsh with a quoted name given
after a space and REQUEUE mail, `-N2 -n8 -c4` glued with `-t 2-12` and an array of step 3,
a thirty-second limit waiting on a failed array task, `--gpus-per-node=h100:4` with
`--cpus-per-gpu` and `--mem-per-gpu`, a trailing comment and a disabled `## #SBATCH`, an
account of a shell default, `--exclusive` with a dated `--begin`, three ids of one
afterany, a typed `--gpus` total with lower-case `24g`; PBS Pro walltimes of two fields
(`1:30`, `100:00`), two server-qualified afterok ids, `-J 1-9:2` with `-r y`,
`mpiprocs`/`ompthreads` with `scatter:excl`; Torque one `-l` of nodes, walltime and mem,
`-t 1-10%2` of `procs`; LSF `span[hosts=1] rusage[...]` in one string, `-W 2:30`, a quoted
array of step and throttle, `ended() && done()`, `-gpu` with mode and gmodel, select,
rusage and ptile in one string, `-x -N -B`, a ksh job with `-cwd`; flux short `-N -n -c -g`
with `90s`, `-t 2d` exclusive with queue and bank, `{{id}}` output templates, urgency 0,
cores per task with no nodes under sh, GPUs per task over two nodes; Grid Engine `mpi` PE
with `h_vmem` in one `-l`, `-t 1-100:10` with `-tc`, two held job ids, single-digit time
fields with a GPU, `-m bea` under zsh with an output directory, Univa's `m_mem_free`.

What the sweep found (each test below failed before): a job runs where it was submitted
under Slurm, LSF, flux and Grid Engine's `-cwd`, but PBS Pro and Torque start it in the
home directory; the PBS translation of such a script (`./after` its first command) ran it
there, unsaid: now a `cd "$PBS_O_WORKDIR"` line goes before the body (unless the body
starts by entering a directory of its own), said; a csh or zsh body reads it as its own
first line, its shell kept. And a PBS script, which runs in the home
directory, reached Grid Engine with `-cwd` (moved to the submit directory); now without.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from diamond_jupyter.dialects.translate import get_script_dialect, translate
from tests.scripts_unseen_check import ALL_STRICT, COMPARED_FIELDS, directive_lines, sweep_tests

HERE = Path(__file__).parent / "fixtures" / "scripts_unseen31"
G = 1024

EXPECTED: dict[str, dict[str, Any]] = {
    # -- Slurm
    "slurm/zsh_quoted_name_space_separated_mail_requeue_event.sbatch": dict(
        tasks=4, cpus=4, walltime=90 * 60, name="stage two",
        mail_events=["begin", "requeue"], mail_user="ops@example.org"),
    "slurm/array_step_three_glued_short_N_n_c.sbatch": dict(
        nodes=2, tasks=8, cpus=8 * 4, memory_mb=8 * 4 * 1500, walltime=2 * 86400 + 12 * 3600,
        array="1-7:3", stdout="run_%A-%a.log", per_cpu=1500),
    "slurm/seconds_only_time_afternotok_array_element.sbatch": dict(
        walltime=30, name="rescue", deps=[("afternotok", ["100_5"])]),
    "slurm/gpus_per_node_h100_cpus_per_gpu_mem_per_gpu_two_nodes.sbatch": dict(
        nodes=2, cpus=2 * 4 * 16, gpus=2 * 4, memory_mb=2 * 4 * 120 * G, walltime=86400,
        queue="gpu-h100", gpu_type="h100", needs_gpus=4),
    "slurm/continued_directive_comment_inside_mem_mb.sbatch": dict(
        tasks=1, cpus=6, memory_mb=16384, walltime=45 * 60, node_mem=16384,
        account="${ACCOUNT:-bio}"),
    "slurm/ntasks_per_node_nodes_exclusive_time_min_begin_date.sbatch": dict(
        nodes=3, tasks=3 * 32, cpus=3 * 32, walltime=12 * 3600, exclusive=True,
        begin="2027-01-15T06:30:00", qos="long"),
    "slurm/dependency_afterany_three_ids_dev_null_output.sbatch": dict(
        walltime=300, deps=[("afterany", ["201", "202", "203"])], stdout="/dev/null",
        stderr="merge.err"),
    "slurm/gpus_total_typed_ntasks_gpus_per_task_absent_mem_gb_lower.sbatch": dict(
        tasks=2, cpus=2, memory_mb=24 * G, walltime=3 * 3600, gpu_type="v100", needs_gpus=1,
        unknown=["--gpus"], notes=["--gpus=v100:2 is the job's total over as many nodes"]),
    # -- PBS Pro and Torque
    "pbs/pro_walltime_mm_ss_two_fields.pbs": dict(
        nodes=1, tasks=1, cpus=2, memory_mb=2 * G, walltime=90, name="quick"),
    "pbs/pro_walltime_hundred_minutes_mm_ss.pbs": dict(
        nodes=1, tasks=1, cpus=1, walltime=100 * 60, name="hundred"),
    "pbs/pro_depend_afterok_two_server_ids.pbs": dict(
        nodes=1, tasks=1, cpus=1, memory_mb=500, walltime=600, name="join",
        deps=[("afterok", ["123.srv", "124.srv"])]),
    "pbs/torque_nodes_ppn_walltime_mem_one_l_line.pbs": dict(
        nodes=2, tasks=8, cpus=8, memory_mb=4 * G, walltime=7200, name="onel"),
    "pbs/torque_t_throttle_procs.pbs": dict(
        tasks=4, cpus=4, walltime=3600, array="1-10%2", name="procarr"),
    "pbs/pro_J_odd_step_rerun_y_mem_mb_chunk.pbs": dict(
        nodes=1, tasks=1, cpus=4, memory_mb=3500, walltime=1800, array="1-9:2",
        requeue=True, name="odd"),
    "pbs/pro_mpiprocs_ompthreads_scatter_excl_mail_ae.pbs": dict(
        nodes=2, tasks=2 * 6, cpus=2 * 36, walltime=12 * 3600, exclusive=True,
        unknown=["-l select:ompthreads", "-l place:scatter"],
        mail_events=["fail", "end"], mail_user="sci@example.org", account="PROJ001"),
    # -- LSF
    "lsf/span_hosts_rusage_one_string_W_hh_mm.lsf": dict(
        nodes=1, tasks=16, cpus=16, memory_mb=16 * 2000, walltime=9000, name="onehost",
        per_cpu=2000),
    "lsf/array_step_throttle_quoted_name.lsf": dict(
        walltime=900, array="1-20:2%4", name="sweep", stdout="sweep.%j.%a.out"),
    "lsf/w_ended_and_done_two_ids.lsf": dict(
        walltime=600, name="gather", deps=[("afterany", ["123"]), ("afterok", ["124"])]),
    "lsf/gpu_num_mode_gmodel.lsf": dict(
        tasks=2, cpus=2, gpus=2, walltime=4 * 3600, queue="gpu",
        gpu_type="NVIDIAA100_SXM4_80GB", needs_gpus=2, unknown=["-gpu mode"]),
    "lsf/select_mem_rusage_ptile_eight_n32.lsf": dict(
        nodes=4, tasks=32, cpus=32, memory_mb=32 * 4096, walltime=8 * 3600, account="chem42",
        per_cpu=4096, unknown=["-R select"]),
    "lsf/exclusive_x_N_B_outputs_J_percent.lsf": dict(
        walltime=3600, exclusive=True, mail_events=["begin", "end"],
        mail_user="me@example.org", stdout="out.%j", stderr="err.%j"),
    "lsf/ksh_shebang_cwd_n_one_W_minutes.lsf": dict(
        tasks=1, cpus=1, walltime=720 * 60, name="kshjob", working_directory="/scratch/run1"),
    # -- Flux
    "flux/short_N_n_c_g_options.flux": dict(
        nodes=2, tasks=8, cpus=8 * 2, gpus=8, walltime=90, name="shorty", needs_gpus=4),
    "flux/days_limit_exclusive_queue_bank.flux": dict(
        nodes=4, tasks=4, cpus=4, walltime=2 * 86400, exclusive=True, queue="pbatch",
        account="mybank"),
    "flux/output_error_templates_minutes.flux": dict(
        tasks=2, cpus=2, walltime=45 * 60, stdout="job.%j.out", stderr="job.%j.err"),
    "flux/urgency_zero_held.flux": dict(tasks=1, cpus=1, walltime=600, hold=True),
    "flux/ntasks_cores_per_task_no_nodes_hours_fraction.flux": dict(
        walltime=1800, unknown=["--ntasks", "--cores-per-task"],
        notes=["--ntasks is a flux run option; flux batch refuses it"]),
    "flux/gpus_per_task_nodes_two.flux": dict(
        nodes=2, tasks=4, cpus=4, walltime=3 * 3600, unknown=["--gpus-per-task"],
        notes=["--gpus-per-task is a flux run option; flux batch refuses it"]),
    # -- Grid Engine
    "sge/pe_mpi_h_rt_h_vmem_one_l.sge": dict(
        tasks=32, cpus=32, memory_mb=32 * 2 * G, walltime=48 * 3600, name="mpi32",
        per_cpu=2 * G),
    "sge/t_step_tc_throttle.sge": dict(walltime=1200, array="1-100:10%5", name="stepped"),
    "sge/hold_jid_two_ids_cwd_j_y.sge": dict(
        walltime=3600, deps=[("afterany", ["123", "124"])]),
    "sge/gpu_one_single_digit_fields_q.sge": dict(
        gpus=1, walltime=3600, queue="gpu.q", name="g1", needs_gpus=1),
    "sge/m_bea_M_S_zsh_o_directory.sge": dict(
        walltime=300, name="zed", mail_events=["begin", "end", "fail"],
        mail_user="me@example.org", stdout="logs/", shell="/bin/zsh"),
    "sge/pe_smp_m_mem_free_per_slot.sge": dict(
        nodes=1, cpus=8, memory_mb=8 * 4 * G, walltime=7200, name="mmem", per_cpu=4 * G),
}

test_every_fixture_has_expectations, test_parse_values, test_translates_or_reports = \
    sweep_tests(HERE, EXPECTED, fields=(*COMPARED_FIELDS, "shell"), strict=ALL_STRICT,
                at_least=33)


# ------------------------------------------ where the job starts: submit directory or home

ENTER = 'cd "${PBS_O_WORKDIR:-.}"'  # stays put where unset (Slurm's qsub wrapper)
ENTER_CSH = 'cd "`printenv PBS_O_WORKDIR | grep . || echo .`"'  # csh has no :-
SAID = ("starts it where it was submitted, PBS in the home directory): a cd "
        '"${PBS_O_WORKDIR:-.}" line was added before the body')
# (source, a script of it whose job runs where it was submitted, its first command ./after)
WHERE_SUBMITTED = [
    ("slurm", "#!/bin/bash\n#SBATCH -t 60\n./after\n"),
    ("lsf", "#!/bin/bash\n#BSUB -W 60\n./after\n"),
    ("flux", "#!/bin/bash\n#flux: -t 60m\n./after\n"),
    ("sge", "#!/bin/bash\n#$ -cwd\n#$ -l h_rt=3600\n./after\n"),
]


@pytest.mark.parametrize(("source", "text"), WHERE_SUBMITTED, ids=[s for s, _ in WHERE_SUBMITTED])
def test_a_job_run_where_submitted_enters_that_directory_under_pbs(source: str, text: str):
    """Before: `./after` ran in the home directory, where PBS starts a job, unsaid."""
    script, warnings, _ = translate(text, "pbs", source)
    body = [x for x in script.splitlines()[1:] if not x.startswith("#")]
    assert body == [ENTER, "./after"], script
    assert any(w.startswith("kept: the directory the job runs in") and SAID in w
               for w in warnings), warnings
    back = get_script_dialect("pbs").parse_script(script)  # the line is body, read as such
    assert back.script is not None and ENTER in back.script


@pytest.mark.parametrize("first", ["cd $SLURM_SUBMIT_DIR", 'cd "${SLURM_SUBMIT_DIR}"',
                                   "cd /scratch/run", "cd ~/run", "cd $WORK/run"])
def test_a_body_that_enters_its_own_directory_gets_no_second_cd(first: str):
    script, warnings, _ = translate(f"#!/bin/bash\n#SBATCH -t 60\n{first}\n./after\n",
                                    "pbs", "slurm")
    assert ENTER not in script and not any(SAID in w for w in warnings), script


def test_a_relative_cd_still_needs_the_submit_directory():
    script, _, _ = translate("#!/bin/bash\n#SBATCH -t 60\n\n# inputs\ncd inputs\n./after\n",
                             "pbs", "slurm")
    assert script.index(ENTER) < script.index("cd inputs"), script


@pytest.mark.parametrize("text", [
    "#!/bin/bash\n#$ -l h_rt=3600\n./after\n",  # Grid Engine without -cwd: the home
    "#!/bin/bash\n#PBS -l walltime=1:00:00\n./after\n",  # PBS's own: the home
])
def test_a_job_that_ran_in_the_home_gets_no_cd_under_pbs(text: str):
    source = "sge" if "#$" in text else "pbs"
    script, warnings, _ = translate(text, "pbs", source)
    assert ENTER not in script and not any(SAID in w for w in warnings), script


def test_a_python_body_enters_the_submit_directory_too():
    script, _, _ = translate("#!/usr/bin/env python3\n#SBATCH -t 60\nopen('in.txt')\n",
                             "pbs", "slurm")
    assert script.index(ENTER) < script.index("open('in.txt')"), script


@pytest.mark.parametrize("shell", ["/bin/tcsh", "/bin/csh", "/usr/bin/env zsh"])
def test_a_csh_or_zsh_body_keeps_its_shell_and_reads_the_cd_itself(shell: str):
    """The body runs as written, its shell kept, not wrapped into a bash here-document; csh
    reads a line of its own (it has no `${VAR:-.}` and stops at an unset `$VAR`)."""
    script, _, _ = translate(f"#!{shell}\n#SBATCH -t 60\nsetenv A 1\n./after\n", "pbs",
                             "slurm")
    lines = script.splitlines()
    enter = ENTER if "zsh" in shell else ENTER_CSH
    assert lines[0] == f"#!{shell}" and lines[-3:] == [enter, "setenv A 1", "./after"], script


def test_a_pbs_job_reaches_grid_engine_in_the_home_not_with_cwd():
    """Before: `#$ -cwd` moved a PBS job (run in the home) to the submit directory."""
    text = "#!/bin/bash\n#PBS -l walltime=1:00:00\n./in_home\n"
    script, _, _ = translate(text, "sge", "pbs")
    assert "#$ -cwd" not in directive_lines(script, "#$"), script
    entered = "#!/bin/bash\n#PBS -l walltime=1:00:00\ncd $PBS_O_WORKDIR\n./here\n"
    script, _, _ = translate(entered, "sge", "pbs")
    assert "cd $SGE_O_WORKDIR" in script and "#$ -cwd" not in script, script
    for source, text in WHERE_SUBMITTED:  # the others still run where submitted
        script, _, _ = translate(text, "sge", source)
        assert "#$ -cwd" in directive_lines(script, "#$"), (source, script)


# ------------------------------- the other way: a job PBS or Grid Engine started in the home

HOME_ENTER = 'cd "$HOME"'
STARTED_IN_HOME = [("pbs", "#!/bin/bash\n#PBS -l walltime=1:00:00\n./after\n"),
                   ("sge", "#!/bin/bash\n#$ -l h_rt=3600\n./after\n")]


@pytest.mark.parametrize("target", ["slurm", "lsf", "flux"])
@pytest.mark.parametrize(("source", "text"), STARTED_IN_HOME, ids=["pbs", "sge"])
def test_a_job_started_in_the_home_enters_it_where_jobs_start_where_submitted(
        source: str, text: str, target: str):
    """Before: `./after` ran in the submit directory under Slurm, LSF and Flux, unsaid."""
    script, warnings, _ = translate(text, target, source)
    body = [x for x in script.splitlines()[1:] if not x.startswith("#")]
    assert body == [HOME_ENTER, "./after"], script
    assert any(w.startswith("kept: the directory the job runs in") and "in the home" in w
               and f"a {HOME_ENTER} line was added" in w for w in warnings), warnings


@pytest.mark.parametrize("target", ["slurm", "lsf", "flux"])
def test_a_home_job_that_enters_its_own_directory_or_names_one_gets_no_home_cd(target: str):
    for text in ("#!/bin/bash\n#PBS -l walltime=1:00:00\ncd $PBS_O_WORKDIR\n./after\n",
                 "#!/bin/bash\n#PBS -l walltime=1:00:00\ncd /scratch/run\n./after\n",
                 "#!/bin/bash\n#$ -wd /scratch/run\n./after\n"):
        script, warnings, _ = translate(text, target, "sge" if "#$" in text else "pbs")
        assert HOME_ENTER not in script and not any("in the home" in w for w in warnings), \
            script
    for source, text in WHERE_SUBMITTED:  # started where submitted already: nothing added
        script, _, _ = translate(text, target, source)
        assert HOME_ENTER not in script, (source, script)


@pytest.mark.parametrize("target", ["slurm", "lsf", "flux", "pbs"])
def test_a_job_diamond_submits_runs_in_its_working_directory_with_no_cd(target: str):
    """diamond's submit names every job's working directory (`Site.prepare`): the job runs
    there under any scheduler, nothing added to move it."""
    source, text = STARTED_IN_HOME[0] if target != "pbs" else WHERE_SUBMITTED[0]
    spec = get_script_dialect(source).parse_script(text)
    spec = spec.model_copy(update={"working_directory": "/scratch/run"})
    rendered = get_script_dialect(target).render_script(spec)
    assert HOME_ENTER not in rendered.script and "PBS_O_WORKDIR" not in rendered.script
    assert "/scratch/run" in rendered.script, rendered.script
    assert not any(w.startswith("kept: the directory the job runs in")
                   for w in rendered.warnings), rendered.warnings


@pytest.mark.parametrize("shell", [s for s in ("bash", "dash", "csh", "tcsh")
                                   if shutil.which(s)])
@pytest.mark.parametrize("workdir", [None, "", "sub dir"], ids=["unset", "empty", "set"])
def test_the_pbs_cd_runs_in_sh_and_csh_where_the_variable_is_unset_or_empty(
        shell: str, workdir: str | None, tmp_path: Path):
    """Before: csh stopped at `cd "$PBS_O_WORKDIR"` where the variable is unset (Slurm's qsub
    wrapper, the test bed's PBS door, sets none) or empty. Run by the real shell."""
    csh = shell in ("csh", "tcsh")
    script, _, _ = translate(f"#!/bin/{'tcsh' if csh else 'bash'} -u\n#SBATCH -t 60\n"
                             "pwd\n", "pbs", "slurm")
    (tmp_path / "sub dir").mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PBS_O_WORKDIR"}
    if workdir is not None:
        env["PBS_O_WORKDIR"] = str(tmp_path / workdir) if workdir else ""
    body = "\n".join(x for x in script.splitlines() if not x.startswith("#"))
    ran = subprocess.run([shell, "-fc" if csh else "-uc", body], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == str(tmp_path / (workdir or "")).rstrip("/"), ran
