"""A twenty-sixth set of realistic batch scripts (tests/fixtures/scripts_unseen26/<dialect>/).

Each is parsed and compared with its EXPECTED row, its needs read, and translated into
every dialect (its own too) and read back (tests/scripts_unseen_check.py). Then the
leftovers of session 37 as each scheduler's own reader means them: a value starting with
'-' (getopt's sbatch and qsub take it as the value, argparse's flux takes it for an option,
bsub may take it for an option) and PBS Pro's job-wide `-l mem` beside a select."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from diamond_jupyter.dialects.translate import get_script_dialect, translate
from diamond_jupyter.model import BadInput
from tests.scripts_unseen_check import (
    ALL_STRICT,
    COMPARED_FIELDS,
    parse_lines,
    sweep_tests,
    translated,
)

HERE = Path(__file__).parent / "fixtures" / "scripts_unseen26"
G = 1024

# As in the earlier sweeps (tests/scripts_unseen_check.py names the keys).
EXPECTED: dict[str, dict[str, Any]] = {
    "flux/begin_time_relative.flux": dict(
        tasks=1, cpus=1, walltime=600, begin="now+3600"),
    "flux/bom_crlf_korean_name.flux": dict(tasks=2, cpus=2, walltime=1800, name="계산"),
    "flux/env_remove_joined_with_equals.flux": dict(
        tasks=1, cpus=1, walltime=300, unknown=["--env"]),
    "flux/job_name_equals_dash.flux": dict(tasks=1, cpus=1, walltime=300, name="-x"),
    "flux/nodes_exclusive_minutes.flux": dict(
        nodes=2, tasks=2, cpus=2, walltime=5400, exclusive=True),
    "flux/output_template_cwd.flux": dict(
        tasks=1, cpus=1, walltime=1200, stdout="job.%j.out", working_directory="/scratch/run"),
    "flux/queue_bank_urgency.flux": dict(
        tasks=4, cpus=4, walltime=900, unknown=["--urgency"], queue="pdebug",
        account="physics"),
    "flux/tasks_per_node_two_nodes.flux": dict(nodes=2, tasks=8, cpus=8, walltime=3600),
    "lsf/M_unit_and_rusage_mem.lsf": dict(
        tasks=1, cpus=1, memory_mb=8 * G, walltime=10800, unknown=["-M"]),
    "lsf/array_step_limit_quoted.lsf": dict(
        tasks=1, cpus=1, walltime=1800, array="1-200:4%8", name="sweep",
        stdout="logs/%j_%a.out"),
    "lsf/begin_time_and_mail_u.lsf": dict(
        tasks=1, cpus=1, walltime=900, mail_events=["end"], mail_user="ana@example.org",
        begin="18:00:00"),
    "lsf/bom_crlf_chinese_name.lsf": dict(tasks=2, cpus=2, walltime=2700, name="解析"),
    "lsf/cwd_oo_eo_overwrite.lsf": dict(
        tasks=1, cpus=1, walltime=300, stdout="run.out", stderr="run.err",
        working_directory="/scratch/run7"),
    "lsf/env_all_plus_variable.lsf": dict(
        nodes=1, tasks=4, cpus=4, walltime=7200, export_all=True,
        variables={"OMP_NUM_THREADS": "4"}),
    "lsf/gpu_dash_default_request.lsf": dict(
        tasks=1, cpus=1, gpus=1, walltime=14400, queue="gpu", needs_gpus=1),
    "lsf/span_hosts1_affinity_cores.lsf": dict(
        nodes=1, tasks=8, cpus=16, walltime=3600, name="aff"),
    "lsf/two_queues_project_group.lsf": dict(
        tasks=2, cpus=2, walltime=1200, unknown=["-G"], queue="short,normal",
        account="climate"),
    "lsf/w_ended_id_and_done_name.lsf": dict(
        tasks=1, cpus=1, walltime=600, unknown=["-w"], name="post"),
    "pbs/array_J_step_rerunnable.pbs": dict(
        nodes=1, tasks=1, cpus=1, memory_mb=2 * G, walltime=600, array="1-99:2",
        requeue=True),
    "pbs/bom_crlf_french_name.pbs": dict(
        nodes=1, tasks=1, cpus=2, memory_mb=4 * G, walltime=2700, name="données"),
    "pbs/depend_afterok_two_server_ids.pbs": dict(
        nodes=1, tasks=1, cpus=2, walltime=3600,
        deps=[("afterok", ["1234.pbsserver", "1235.pbsserver"])]),
    "pbs/directives_after_blank_and_comment_lines.pbs": dict(
        nodes=1, tasks=1, cpus=2, walltime=1200, mail_events=["fail", "end"],
        mail_user="ops@example.org"),
    "pbs/hold_and_begin_datetime.pbs": dict(
        nodes=1, tasks=1, cpus=1, walltime=300, hold=True, begin="2026-12-31T23:59:00"),
    "pbs/select_ngpus_place_free_shared.pbs": dict(
        nodes=2, tasks=2, cpus=16, gpus=4, walltime=10800,
        unknown=["-l place:free", "-l place:shared"], needs_gpus=2),
    "pbs/select_two_chunks_mem_mpiprocs.pbs": dict(
        nodes=2, tasks=32, cpus=32, memory_mb=120 * G, walltime=43200, name="mpi_mem",
        queue="workq", node_mem=60 * G),
    "pbs/select_walltime_place_one_list.pbs": dict(
        nodes=1, tasks=1, cpus=8, memory_mb=16 * G, walltime=7200, exclusive=True),
    "pbs/select_without_mem_two_days.pbs": dict(
        nodes=1, tasks=1, cpus=4, walltime=172800, account="proj42"),
    "pbs/torque_nodes_ppn_jobwide_mem.pbs": dict(
        nodes=2, tasks=16, cpus=16, memory_mb=32 * G, walltime=14400, name="torque_mem",
        node_mem=16 * G),
    "sge/array_t_with_step.sge": dict(walltime=120, array="1-10:3"),
    "sge/bom_crlf_russian_name.sge": dict(walltime=1800, name="расчёт"),
    "sge/hold_jid_two_names.sge": dict(walltime=3600, unknown=["-hold_jid"], name="merge"),
    "sge/join_logs_dir_shell.sge": dict(walltime=600, stdout="logs/"),
    "sge/mail_bea_two_addresses.sge": dict(
        walltime=300, mail_events=["begin", "end", "fail"],
        mail_user="ana@example.org,bo@example.org"),
    "sge/pe_smp_cwd_binding_h_rt_seconds.sge": dict(
        nodes=1, cpus=4, walltime=3600, unknown=["-binding"]),
    "sge/queue_at_host.sge": dict(walltime=600, queue="all.q"),
    "slurm/account_qos_reservation.sbatch": dict(
        tasks=8, cpus=8, walltime=1800, account="chem123", qos="debug",
        reservation="maint_window"),
    "slurm/array_step_throttle_open_mode_append.sbatch": dict(
        tasks=1, cpus=2, walltime=1200, array="0-99:3%5", stdout="logs/%A_%a.out"),
    "slurm/bom_crlf_export_vars.sbatch": dict(
        tasks=1, cpus=8, walltime=3600, name="bom_run", export_all=True,
        variables={"OMP_NUM_THREADS": "8"}),
    "slurm/chdir_error_output_split.sbatch": dict(
        tasks=1, cpus=1, walltime=3600, stdout="out-%j.txt", stderr="err-%j.txt",
        working_directory="/scratch/proj/run1"),
    "slurm/dependency_singleton_and_afterok_list.sbatch": dict(
        tasks=1, cpus=1, walltime=1800, deps=[("afterok", ["4101", "4102"])],
        unknown=["--dependency"], name="merge"),
    "slurm/gpus_per_task_cpus_per_gpu.sbatch": dict(
        nodes=1, tasks=4, cpus=32, gpus=4, walltime=21600, needs_gpus=4),
    "slurm/hetjob_two_parts_partitions.sbatch": dict(
        nodes=3, tasks=68, cpus=68, gpus=4, walltime=7200, name="coupled", queue="cpu",
        needs_gpus=4),
    "slurm/japanese_name_comment_spaces.sbatch": dict(
        tasks=2, cpus=2, walltime=900, name="計算", comment="テスト run"),
    "slurm/job_name_dash_equals_and_J.sbatch": dict(
        tasks=1, cpus=1, walltime=600, name="-prep"),
    "slurm/mail_type_multi_and_user.sbatch": dict(
        tasks=1, cpus=1, walltime=300, mail_events=["begin", "end", "fail"],
        mail_user="ana@example.org"),
    "slurm/mem_per_cpu_hint_nomultithread.sbatch": dict(
        tasks=16, cpus=16, memory_mb=48 * G, walltime=14400, unknown=["--hint"],
        per_cpu=3 * G),
    "slurm/time_days_signal_batch_usr1.sbatch": dict(
        tasks=1, cpus=1, walltime=217800, unknown=["--signal"], requeue=True),
}

test_every_fixture_has_expectations, test_parse_values, test_translates_or_reports = \
    sweep_tests(HERE, EXPECTED, fields=COMPARED_FIELDS, strict=ALL_STRICT, at_least=45)


# ------------------------------------------------------------ a value starting with '-'

@pytest.mark.parametrize(("dialect", "line", "name"), [
    # getopt_long (sbatch) gives a required argument the next word, whatever it starts with
    ("slurm", "#SBATCH -J -x", "-x"),
    ("slurm", "#SBATCH --job-name -x", "-x"),
    ("slurm", "#SBATCH --job-name=-x", "-x"),
    # argparse (flux) takes a word joined by '=' as the value
    ("flux", "#flux: --job-name=-x", "-x"),
])
def test_a_dash_name_the_reader_takes_as_the_value_is_the_name(dialect, line, name):
    assert parse_lines(dialect, line).name == name


def test_slurm_writes_a_dash_name_back_joined_to_its_option():
    script, _ = translated(HERE, "slurm/job_name_dash_equals_and_J.sbatch", "slurm")
    assert "#SBATCH --job-name=-prep" in script


@pytest.mark.parametrize("option", ["-J", "-Jd", "-P", "-q", "-G", "-u", "-sp", "-app", "-g"])
def test_every_lsf_option_with_a_dash_value_is_refused_naming_line_and_option(option):
    """`#BSUB -P -proj` was read as the project '-proj' (and `-Jd -x`, `-G -x` written
    back so), where bsub may read '-proj' as an option of its own, as session 37 found
    for `-J -x`."""
    with pytest.raises(BadInput) as exc:
        parse_lines("lsf", f"#BSUB -n 1\n#BSUB {option} -val")
    said = str(exc.value)
    assert said.startswith(f"line 3: `#BSUB {option} -val`: the value '-val' of {option} "
                           "starts with '-', which bsub can read as an option of its own")
    assert "give a value that starts with a letter, a digit, '_' or '/'" in said


def test_an_lsf_output_path_starting_with_a_dash_is_refused_with_its_dot_slash_form():
    with pytest.raises(BadInput) as exc:
        parse_lines("lsf", "#BSUB -o -run.log")
    assert "line 2: `#BSUB -o -run.log`" in str(exc.value)
    assert "./-run.log" in str(exc.value)


def test_lsf_gpu_dash_is_the_sites_default_request_not_a_dash_value():
    spec = parse_lines("lsf", "#BSUB -gpu -\n#BSUB -n 1")
    assert spec.resources.gpus_per_node == 1


def test_a_comment_starting_with_a_dash_is_not_written_as_bsub_jd():
    """`#SBATCH --comment=-x` into LSF was `#BSUB -Jd -x`."""
    text = "#!/bin/bash\n#SBATCH --comment=-x\n#SBATCH -n 1\n./a\n"
    with pytest.raises(BadInput) as exc:
        translate(text, "lsf", "slurm")
    assert str(exc.value).startswith("lsf cannot express the comment: the value '-x' of -Jd "
                                     "starts with '-'")
    assert "#SBATCH --comment=-x" in translate(text, "slurm", "slurm")[0]


def test_a_pbs_job_name_starting_with_a_dash_is_refused_as_qsub_refuses_it():
    with pytest.raises(BadInput) as exc:
        parse_lines("pbs", "#PBS -l select=1:ncpus=1\n#PBS -N -x")
    assert str(exc.value) == (
        "line 3: job name '-x' in `#PBS -N -x` starts with '-': qsub takes it as -N's value "
        "and refuses it (a PBS job name starts with a letter); give one that does (e.g. "
        "'j-x')")


@pytest.mark.parametrize(("dialect", "line", "field", "advice"), [
    ("pbs", "#PBS -A -acct", "account", "an account is a name"),
    ("pbs", "#PBS -q -short", "queue", "a queue is a name"),
    ("pbs", "#PBS -M -x", "mail user", "a mail user is an address or a user name"),
    ("slurm", "#SBATCH -A -acct", "account", "an account is a name"),
    ("slurm", "#SBATCH --partition=-short", "queue", "a queue is a name"),
    ("slurm", "#SBATCH --output=-x.log", "output file", "a path such as ./-x.log"),
    ("sge", "#$ -q -x", "queue", "a queue is a name"),
    ("flux", "#flux: --queue=-x", "queue", "a queue is a name"),
])
def test_a_dash_value_no_scheduler_takes_back_is_refused_at_its_line(dialect, line, field,
                                                                     advice):
    """`#PBS -A -acct` was read, then refused at translation without a line to look at."""
    with pytest.raises(BadInput) as exc:
        parse_lines(dialect, line)
    said = str(exc.value)
    assert said.startswith(f"line 2: `{line}` sets the {field} to ")
    assert "which starts with '-'" in said and advice in said


@pytest.mark.parametrize("line", ["#flux: --job-name -x", "#flux: -q -short",
                                  "#flux: --setattr -x"])
def test_flux_refuses_a_separate_dash_value_as_argparse_does(line):
    """argparse takes `-x` after `--job-name` for an option (`expected one argument`); it
    was read as the name."""
    with pytest.raises(BadInput) as exc:
        parse_lines("flux", line)
    option, word = line.split()[1:3]
    assert str(exc.value).startswith(f"line 2: {option} is followed by {word!r}, which "
                                     "flux's option reader (argparse) takes for an option")
    assert f"({option}={word})" in str(exc.value)


def test_flux_takes_a_separate_negative_number_as_a_value():
    """argparse reads `-5` as a negative number, a value (flux's urgency may be one)."""
    spec = parse_lines("flux", "#flux: --urgency -5\n#flux: -n 1")
    assert [(d.option, d.value) for d in spec.unknown] == [("--urgency", "-5")]


# ------------------------------------------------ PBS Pro: job-wide mem beside a select

@pytest.mark.parametrize(("lines", "said"), [
    ("#PBS -l select=1:ncpus=8\n#PBS -l mem=16gb",
     "line 3: a job-wide -l mem (`#PBS -l mem=16gb`) beside the select of line 2 "
     "(`#PBS -l select=1:ncpus=8`): PBS Pro's qsub refuses a job-wide mem with a select; "
     "ask it in the select's chunks (select=N:mem=X) or drop the -l mem line"),
    ("#PBS -l mem=16gb\n#PBS -l select=2:ncpus=8:mem=4gb",
     "line 2: a job-wide -l mem (`#PBS -l mem=16gb`) beside the select of line 3"),
    ("#PBS -l select=1:ncpus=8,mem=16gb",
     "line 2: a job-wide -l mem (`#PBS -l select=1:ncpus=8,mem=16gb`) beside the select in "
     "the same -l list"),
])
def test_a_job_wide_mem_beside_a_select_is_refused_naming_both_lines(lines, said):
    """PBS Pro converts a job-wide mem to a chunk (its resource definition says so) and so
    refuses it beside a select, as it does ncpus: it was read as the job's memory in place
    of the chunks' (16gb over 2 chunks of 4gb read as 8gb a node)."""
    with pytest.raises(BadInput) as exc:
        parse_lines("pbs", lines)
    assert said in str(exc.value)


def test_a_select_without_mem_leaves_the_memory_to_the_site():
    spec = parse_lines("pbs", "#PBS -l select=2:ncpus=4")
    assert spec.resources.memory_mb is None and spec.resources.nodes == 2


def test_torque_job_wide_mem_beside_nodes_is_the_jobs_spread_over_its_nodes():
    """Torque has no select: `-l nodes=2:ppn=8,mem=32gb` is 32gb for the job, 16gb a node
    in Slurm's per-node --mem."""
    script, _ = translated(HERE, "pbs/torque_nodes_ppn_jobwide_mem.pbs", "slurm")
    assert "#SBATCH --mem=16G" in script and "#SBATCH --nodes=2" in script


def test_select_chunk_mem_is_slurms_per_node_mem():
    script, _ = translated(HERE, "pbs/select_two_chunks_mem_mpiprocs.pbs", "slurm")
    assert "#SBATCH --mem=60G" in script and "#SBATCH --ntasks-per-node=16" in script


# -------------------------------------------------- translations a user would look at

def test_hetjob_parts_keep_their_partitions_in_slurm():
    script, _ = translated(HERE, "slurm/hetjob_two_parts_partitions.sbatch", "slurm")
    lines = [x for x in script.splitlines() if x.startswith("#SBATCH")]
    split = lines.index("#SBATCH hetjob")
    assert "#SBATCH --partition=cpu" in lines[:split]
    assert "#SBATCH --partition=gpu" in lines[split:]


def test_pbs_french_name_with_bom_and_crlf_reaches_lsf_and_sge_whole():
    for target, directive in (("lsf", "#BSUB -J données"), ("sge", "#$ -N données")):
        script, _ = translated(HERE, "pbs/bom_crlf_french_name.pbs", target)
        assert directive in script.splitlines()


def test_lsf_array_step_and_limit_become_slurm_array():
    script, _ = translated(HERE, "lsf/array_step_limit_quoted.lsf", "slurm")
    assert "#SBATCH --array=1-200:4%8" in script


def test_sge_array_step_becomes_pbs_j_with_step():
    script, _ = translated(HERE, "sge/array_t_with_step.sge", "pbs")
    assert "#PBS -J 1-10:3" in script


def test_own_dialect_gets_the_lsf_group_back():
    script, _ = translated(HERE, "lsf/two_queues_project_group.lsf", "lsf")
    assert "#BSUB -G modelers" in script
    assert get_script_dialect("lsf").parse_script(script).queue == "short,normal"
