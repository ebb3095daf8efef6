"""A thirty-second set of realistic batch scripts (tests/fixtures/scripts_unseen32/<dialect>/).

Each is parsed and compared with its EXPECTED row (values worked out by hand), its needs
read, and translated into every dialect (its own too) and read back
(tests/scripts_unseen_check.py). The styles: Slurm with `set -euo pipefail`, a shell
function around `srun` and a `#SBATCH --mem` after the first command (ignored, said), an
`srun --multi-prog` file written by a here-document that holds an `#SBATCH` line, three
options on one `#SBATCH` line, `--time=0-04` and `1-2:30`, an array of a stepped range and a
single under a throttle, options spaced from their values, `afterok` with `singleton`,
`--gres=gpu:2` with `--mem=0`; PBS Pro three chunks of `mpiprocs` run by `mpirun -np` of the
node file, a zero-based `-J 0-99:3%5` of GPU chunks, `afternotok` beside `-W umask`, a held
job of `45:00` (minutes and seconds), the old `nodes=3:ppn=4` with a job's `mem`; Torque
`nodes=2:ppn=12,walltime=...` in one `-l` with `pmem`, `mem` and `vmem` with a Python
here-document; LSF `-n 16` with `span[ptile=4]` and `rusage[mem=2000]` on two `-R` lines,
`-W 90`, an array of a list and a stepped range with a throttle, `post_done() || exit()`,
`-b 18:30` with `-app`, `span[hosts=1] rusage[...]` under `set -euo pipefail` and a
here-document, `-env "all, VAR=..."`; flux `--setattr` and `-S system.bank`, `-t 1.5h` on
whole nodes, `afterany` with an `{{id}}` output, `--nslots` with `--cores-per-slot` and
`--requires`, `--begin-time=+30m` with `--env`, `--cwd`; Grid Engine `-pe orte 4-16`,
`-t 1-100:2`, `s_rt` and `h_rt` in one `-l`, `-binding linear:4`, `-hold_jid_ad`, a queue
list with `-P` and `-A`.

What the sweep found (each test below the table failed before): flux sets no variable of
the directory a job was submitted from, so a translation into flux kept `cd $PBS_O_WORKDIR`
(or Slurm's, LSF's, Grid Engine's) as written, said only as "no flux equivalent": the job
ran in the home directory (`cd` of nothing). Now the body's first line sets the variable to
where flux starts the job (`export NAME="$PWD"`, csh's `setenv NAME "$cwd"`), said, and a
job its own scheduler started in the home reads it before it enters the home.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from diamond_jupyter.dialects.translate import translate
from tests.scripts_unseen_check import ALL_STRICT, COMPARED_FIELDS, sweep_tests

HERE = Path(__file__).parent / "fixtures" / "scripts_unseen32"
G = 1024

EXPECTED: dict[str, dict[str, Any]] = {
    # -- Slurm
    "slurm/pipefail_function_directive_after_first_command.sbatch": dict(
        tasks=6, cpus=6, walltime=4 * 3600, name="fn-run", ignored=1,
        notes=["ignored `#SBATCH --mem=64G` (after the first command"]),
    "slurm/multi_prog_heredoc_two_options_one_line.sbatch": dict(
        nodes=1, tasks=4, cpus=4, walltime=5 * 60, name="mp", stdout="mp-%j.txt", ignored=1,
        notes=["ignored `#SBATCH --ntasks=99`"]),
    "slurm/days_hours_minutes_mem_per_cpu_G_cpus_per_task.sbatch": dict(
        tasks=3, cpus=3 * 5, memory_mb=3 * 5 * 2 * G, walltime=86400 + 2 * 3600 + 30 * 60,
        per_cpu=2 * G, queue="long", shell="/bin/bash -l"),
    "slurm/array_stepped_range_and_single_throttle_name_output.sbatch": dict(
        memory_mb=1000, node_mem=1000, walltime=20 * 60, array="0-30:10,99%2", name="scan",
        stdout="%x_%A_%a.out"),
    "slurm/exclusive_nodes_ntasks_per_node_account_qos_equals_spaces.sbatch": dict(
        nodes=4, tasks=4 * 16, cpus=4 * 16, walltime=30 * 60, exclusive=True,
        account="abc123", qos="debug"),
    "slurm/dependency_singleton_and_afterok_mail_all.sbatch": dict(
        walltime=2 * 3600, deps=[("afterok", ["5001"])], unknown=["--dependency"],
        name="chain", mail_events=["all"], mail_user="lab@example.org"),
    "slurm/gres_gpu_two_mem_zero_cpus_per_task_eight.sbatch": dict(
        cpus=8, gpus=2, walltime=12 * 3600, queue="gpu", needs_gpus=2,
        shell="/usr/bin/env bash"),
    # -- PBS Pro and Torque
    "pbs/pro_select_three_chunks_mpiprocs_mpirun_pbs_np.pbs": dict(
        nodes=3, tasks=3 * 16, cpus=3 * 16, memory_mb=3 * 60 * G, node_mem=60 * G,
        walltime=2 * 3600, name="mpi48"),
    "pbs/torque_nodes_ppn_pmem_gb_walltime_l_comma.pbs": dict(
        nodes=2, tasks=2 * 12, cpus=2 * 12, memory_mb=2 * 12 * 2 * G, per_cpu=2 * G,
        walltime=10 * 3600, name="tq24", queue="batch"),
    "pbs/pro_depend_afternotok_umask.pbs": dict(
        nodes=1, tasks=1, cpus=1, memory_mb=G, walltime=600, name="cleanup",
        deps=[("afternotok", ["55.srv"])], unknown=["-W"], shell="/bin/sh"),
    "pbs/pro_J_step_throttle_zero_based_ngpus.pbs": dict(
        nodes=1, tasks=1, cpus=8, gpus=1, memory_mb=32 * G, walltime=3 * 3600,
        array="0-99:3%5", name="gsweep", queue="gpu", needs_gpus=1),
    "pbs/torque_heredoc_python_mem_vmem.pbs": dict(
        nodes=1, tasks=2, cpus=2, memory_mb=8 * G, node_mem=8 * G, walltime=3600,
        name="pyhd", unknown=["-l"]),
    "pbs/pro_hold_account_walltime_mm_ss.pbs": dict(
        nodes=2, tasks=2, cpus=2 * 4, walltime=45 * 60, name="held2", queue="workq",
        account="GEO-77", hold=True),
    "pbs/pro_old_style_nodes_ppn_on_pro_mem_per_job.pbs": dict(
        nodes=3, tasks=3 * 4, cpus=3 * 4, memory_mb=12 * G, node_mem=4 * G,
        walltime=6 * 3600, notes=["job memory 12288MB read as 4096MB per node"]),
    # -- LSF
    "lsf/n16_span_ptile4_rusage_mem_separate_R.lsf": dict(
        nodes=16 // 4, tasks=16, cpus=16, memory_mb=16 * 2000, per_cpu=2000, walltime=3600,
        name="ptile4", stdout="%j.out"),
    "lsf/W_minutes_over_sixty_q_P.lsf": dict(
        walltime=90 * 60, name="ninety", queue="short", account="proj9"),
    "lsf/array_list_step_throttle.lsf": dict(
        walltime=30 * 60, array="1,5,10-20:5%3", name="tiles", stdout="tiles.%j.%a.out",
        stderr="tiles.%j.%a.err"),
    "lsf/w_post_done_or_exit_code.lsf": dict(walltime=600, name="after", unknown=["-w"]),
    "lsf/b_begin_hh_mm_app_profile.lsf": dict(
        tasks=2, cpus=2, walltime=2 * 3600, begin="18:30:00", unknown=["-app"]),
    "lsf/set_euo_function_heredoc_R_combined_select_span.lsf": dict(
        nodes=1, tasks=8, cpus=8, memory_mb=8 * 1024, per_cpu=1024, walltime=4 * 3600,
        name="onenode"),
    "lsf/env_all_vars_u_mail_N.lsf": dict(
        tasks=4, cpus=4, walltime=30 * 60, mail_events=["end"], mail_user="me@example.org",
        export_all=True, variables={"OMP_NUM_THREADS": "4"}),
    # -- Flux
    "flux/setattr_system_and_user_keys.flux": dict(
        nodes=1, tasks=4, cpus=4, walltime=20 * 60, name="attrs", account="physics",
        unknown=["--setattr"]),
    "flux/t_fraction_hours_exclusive_nodes.flux": dict(
        nodes=2, tasks=2, cpus=2, walltime=90 * 60, exclusive=True, queue="pdebug"),
    "flux/dependency_afterany_numeric_output.flux": dict(
        tasks=1, cpus=1, walltime=600, deps=[("afterany", ["1234"])], stdout="post.%j.log"),
    "flux/requires_host_queue_nslots_cores.flux": dict(
        tasks=4, cpus=4 * 2, walltime=3600, unknown=["--requires"]),
    "flux/begin_time_relative_env_var.flux": dict(
        walltime=5 * 60, name="later", begin="now+1800", variables={"MODE": "fast"}),
    "flux/cwd_set_euo_function.flux": dict(
        tasks=2, cpus=2, walltime=2 * 3600, working_directory="/p/lustre/run7"),
    # -- Grid Engine
    "sge/pe_range_4_16_h_rt_seconds.sge": dict(
        tasks=4, cpus=4, walltime=7200, name="peRange", unknown=["-pe"],
        notes=["slot range orte 4-16 read as at least 4 slots"]),
    "sge/t_1_100_2_h_rt_hhmmss.sge": dict(
        walltime=3600, array="1-100:2", name="odd", stdout="logs/%x.%a.out"),
    "sge/s_rt_and_h_rt_one_l.sge": dict(walltime=3600, name="soft", unknown=["-l s_rt"]),
    "sge/binding_linear_pe_smp.sge": dict(
        nodes=1, cpus=4, memory_mb=4 * 3 * G, per_cpu=3 * G, walltime=2 * 3600, name="bound",
        unknown=["-binding"]),
    "sge/hold_jid_ad_array.sge": dict(
        walltime=600, array="1-10", deps=[("afterany", ["99"])], name="stage2"),
    "sge/q_list_P_project_A_account_set_e.sge": dict(
        walltime=30 * 60, name="multiq", queue="short.q,long.q", account="lab7",
        unknown=["-P"]),
}

test_every_fixture_has_expectations, test_parse_values, test_translates_or_reports = \
    sweep_tests(HERE, EXPECTED, fields=(*COMPARED_FIELDS, "shell"), strict=ALL_STRICT,
                at_least=33)


# ------------------------------------------------ the submit directory of a flux translation

SAID_UNDER_FLUX = "(flux starts the job in the directory it was submitted from)"
# (source, its submit directory variable, a script whose body reads it after its first line)
READS_SUBMIT_DIRECTORY = [
    ("pbs", "PBS_O_WORKDIR", "#!/bin/bash\n#PBS -l walltime=1:00:00\ncd $PBS_O_WORKDIR\n"),
    ("slurm", "SLURM_SUBMIT_DIR", "#!/bin/bash\n#SBATCH -t 60\ncd \"$SLURM_SUBMIT_DIR\"\n"),
    ("lsf", "LS_SUBCWD", "#!/bin/bash\n#BSUB -W 60\ncd ${LS_SUBCWD}\n"),
    ("sge", "SGE_O_WORKDIR", "#!/bin/bash\n#$ -l h_rt=3600\ncd $SGE_O_WORKDIR\n"),
]


@pytest.mark.parametrize(("source", "name", "text"), READS_SUBMIT_DIRECTORY,
                         ids=[s for s, _, _ in READS_SUBMIT_DIRECTORY])
def test_a_flux_translation_sets_the_submit_directory_the_body_reads(
        source: str, name: str, text: str, tmp_path: Path):
    """Before: `cd $PBS_O_WORKDIR` was kept as written, and flux sets no such variable: the
    job ran in the home directory (`cd` of nothing), or under `/run` for `cd
    $PBS_O_WORKDIR/run`. Run by bash from a submit directory, with the home elsewhere."""
    script, warnings, _ = translate(text + "pwd > where\n", "flux", source)
    assert any(w.startswith(f"kept: line 3: ${name} (submit directory): flux sets none")
               and SAID_UNDER_FLUX in w for w in warnings), warnings
    assert not any("has no flux equivalent" in w for w in warnings), warnings
    submitted, home = tmp_path / "sub mitted", tmp_path / "home"
    submitted.mkdir(), home.mkdir()
    env = {"PATH": os.environ["PATH"], "HOME": str(home)}
    ran = subprocess.run(["bash", "-c", script], cwd=submitted, env=env, capture_output=True,
                         text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    assert (submitted / "where").read_text().strip() == str(submitted), script


def test_a_home_started_job_reads_the_submit_directory_before_it_enters_the_home(
        tmp_path: Path):
    """A PBS job starts in the home, so its flux translation enters it (sweep 31); the
    submit directory is read before that, where the flux job starts."""
    text = ("#!/bin/bash\n#PBS -l walltime=1:00:00\n./x 2>/dev/null || true\n"
            "pwd > started\ncp started \"$PBS_O_WORKDIR/got\"\n")
    script, _, _ = translate(text, "flux", "pbs")
    body = [x for x in script.splitlines()[1:] if not x.startswith("#flux:")]
    assert body[:2] == [f'export PBS_O_WORKDIR="$PWD"  # {SAID_UNDER_FLUX[1:-1]}',
                        'cd "$HOME"'], script
    submitted, home = tmp_path / "submitted", tmp_path / "home"
    submitted.mkdir(), home.mkdir()
    env = {"PATH": os.environ["PATH"], "HOME": str(home)}
    ran = subprocess.run(["bash", "-c", script], cwd=submitted, env=env, capture_output=True,
                         text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    assert (submitted / "got").read_text().strip() == str(home)  # it ran in the home, as PBS


@pytest.mark.parametrize("shell", [s for s in ("csh", "tcsh") if shutil.which(s)])
def test_a_csh_body_under_flux_sets_it_with_setenv(shell: str, tmp_path: Path):
    script, _, _ = translate(f"#!/bin/{shell}\n#PBS -l walltime=1:00:00\n"
                             "cd $PBS_O_WORKDIR\npwd > where\n", "flux", "pbs")
    assert 'setenv PBS_O_WORKDIR "$cwd"' in script, script
    body = "\n".join(x for x in script.splitlines() if not x.startswith("#"))
    ran = subprocess.run([shell, "-fc", body], cwd=tmp_path, capture_output=True, text=True,
                         timeout=60, env={"PATH": os.environ["PATH"], "HOME": "/"})
    assert ran.returncode == 0, ran.stderr
    assert (tmp_path / "where").read_text().strip() == str(tmp_path)


def test_a_python_body_and_other_targets_get_no_such_line():
    text = "#!/bin/bash\n#PBS -l walltime=1:00:00\ncd $PBS_O_WORKDIR\n./a\n"
    for target in ("slurm", "lsf", "sge", "pbs"):
        script, _, _ = translate(text, target, "pbs")
        assert "$PWD" not in script and "submitted from" not in script, (target, script)
    script, warnings, _ = translate("#!/usr/bin/env python3\n#PBS -l walltime=1:00:00\n"
                                    "import os\nprint('$PBS_O_WORKDIR')\n", "flux", "pbs")
    assert "export PBS_O_WORKDIR" not in script, script


@pytest.mark.parametrize(("source", "name", "text"), READS_SUBMIT_DIRECTORY,
                         ids=[s for s, _, _ in READS_SUBMIT_DIRECTORY])
def test_a_script_translated_into_flux_and_back_reads_its_own_submit_directory(
        source: str, name: str, text: str, tmp_path: Path):
    """Review: the line a translation into flux adds (`export PBS_O_WORKDIR="$PWD"`) was
    kept on the way back, so a PBS or Grid Engine job (started in the home) set the
    variable to the home and `cd $PBS_O_WORKDIR` stayed there."""
    there, _, _ = translate(text + "pwd > where\n", "flux", source)
    back, _, _ = translate(there, source, "flux")
    assert "$PWD" not in back and "submitted from" not in back, back
    submitted, home = tmp_path / "submitted", tmp_path / "home"
    submitted.mkdir(), home.mkdir()
    env = {"PATH": os.environ["PATH"], "HOME": str(home), name: str(submitted)}
    ran = subprocess.run(["bash", "-c", back], cwd=home, env=env, capture_output=True,
                         text=True, timeout=60)  # started in the home, as PBS starts it
    assert ran.returncode == 0, ran.stderr
    assert (submitted / "where").read_text().strip() == str(submitted), back


@pytest.mark.parametrize(("source", "name", "text"), READS_SUBMIT_DIRECTORY,
                         ids=[s for s, _, _ in READS_SUBMIT_DIRECTORY])
def test_a_flux_translation_read_into_another_scheduler_reads_that_ones_submit_directory(
        source: str, name: str, text: str, tmp_path: Path):
    """Review: read from flux, the line the translation into flux added was dropped and
    `cd $PBS_O_WORKDIR` kept, which a Slurm, LSF or Grid Engine job has unset: it ran in the
    home. The variable that line set is read as the submit directory, written as the
    target's own. Run by bash started in the home (as PBS starts a job), the target's
    variable set as its scheduler sets it."""
    there, _, _ = translate(text + "pwd > where\n", "flux", source)
    submitted, home = tmp_path / "submitted", tmp_path / "home"
    submitted.mkdir(), home.mkdir()
    for target, own, _ in READS_SUBMIT_DIRECTORY:
        back, _, _ = translate(there, target, "flux")
        assert "submitted from" not in back and (own == name or name not in back), back
        env = {"PATH": os.environ["PATH"], "HOME": str(home), own: str(submitted)}
        ran = subprocess.run(["bash", "-c", back], cwd=home, env=env, capture_output=True,
                             text=True, timeout=60)
        assert ran.returncode == 0, ran.stderr
        assert (submitted / "where").read_text().strip() == str(submitted), (target, back)
        (submitted / "where").unlink()


def test_a_flux_body_that_sets_the_variable_again_keeps_its_line():
    """A variable the body assigns itself later is its own: the line setting it first is
    kept and the variable is not read as the submit directory."""
    line = 'export PBS_O_WORKDIR="$PWD"  # ' + SAID_UNDER_FLUX[1:-1]
    text = f"#!/bin/bash\n#flux: -t 60\n{line}\ncd $PBS_O_WORKDIR\nPBS_O_WORKDIR=/tmp\n"
    back, _, _ = translate(text, "slurm", "flux")
    assert f"{line}\ncd $PBS_O_WORKDIR\n" in back and "SLURM_SUBMIT_DIR" not in back, back
