"""A twenty-ninth set of realistic batch scripts (tests/fixtures/scripts_unseen29/<dialect>/).

Each is parsed and compared with its EXPECTED row (values worked out by hand), its needs
read, and translated into every dialect (its own too) and read back
(tests/scripts_unseen_check.py). The styles: Slurm `--gpus-per-node=a100:4` with
`--cpus-per-gpu` and `--mem-per-gpu` and a `2-12` time, a heterogeneous job of bundled
options with memory in K and M, an array of a stepped range, singles and a range under one
throttle, a quoted name with parentheses and a comment holding `#`, `--ntasks-per-gpu`
under a job's `--gpus`, `--begin=midnight` with `--time-min`, `--mem-per-gpu=0`; PBS Pro
chunks of mb and gb memory, `-l select=...,walltime=...,place=scatter:excl` on one line,
milliseconds in a walltime, Torque `nodes=1:ppn=16:bigmem+4:ppn=8`, `procs` with `pmem`,
`-t 1-32%4` with two dependencies; LSF `-J "sim[1-5,10,20-30:5]%3"`, `-M 8GB` per task,
`-gpu` with `j_exclusive` and a model, `-w "ended() && done()"`; flux `-N -n -c -g` with
`--exclusive`, `--time-limit=1.5d` on whole nodes, an f58 dependency, `--setattr=bank=`;
Grid Engine `-pe mpi 8-16`, `-t 2-50:4 -tc 3`, `-l m_mem_free` with a GPU, tab-separated
directives, an `h_rt` written with a leading 0; directives after a blank line and a
comment in every dialect.

What the sweep found (each test below failed before): a PBS walltime of a fraction of an
hour (`1.5:00:00`, which qsub refuses) was read as 90 minutes, and milliseconds were
rounded up where qsub rounds to the nearest second; a Grid Engine time of two fields
(`h_rt=90:00`, which qsub refuses: it takes H:M:S or seconds) was read as 90 minutes, a
fraction of a second rounded up where Grid Engine cuts it, and a number written with a
leading 0 (octal to Grid Engine: `03600` is 1920 seconds) read as decimal, unsaid;
`--mem-per-gpu=0` was said as "read as NoneMB per CPU"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from diamond_jupyter.dialects.translate import SCRIPT_DIALECTS, translate
from diamond_jupyter.model import BadInput
from tests.scripts_unseen_check import (
    ALL_STRICT,
    COMPARED_FIELDS,
    parse_lines,
    sweep_tests,
    translated,
)

HERE = Path(__file__).parent / "fixtures" / "scripts_unseen29"
G = 1024

# As in the earlier sweeps (tests/scripts_unseen_check.py names the keys).
EXPECTED: dict[str, dict[str, Any]] = {
    # -- Slurm
    "slurm/array_range_step_singles_range_throttle_padded_output.sbatch": dict(
        walltime=300, array="1-7:3,20,40-42%2", name="sweep", stdout="logs/%x-%A_%4a.out",
        unknown=["--kill-on-invalid-dep"]),
    "slurm/begin_midnight_minutes_time_min.sbatch": dict(
        cpus=6, memory_mb=6 * 1500, walltime=90 * 60, per_cpu=1500, begin="midnight",
        unknown=["--time-min"]),
    "slurm/blank_comment_then_directives_export_default.sbatch": dict(
        tasks=1, cpus=32, memory_mb=120 * G, walltime=12 * 3600, account="proj42",
        node_mem=120 * G, needs_mem=120 * G, export_all=True,
        variables={"OMP_NUM_THREADS": "32"}),
    "slurm/dependency_afterok_plus_afterany_requeue_open_mode.sbatch": dict(
        tasks=2, cpus=2, walltime=3600, name="post", requeue=True, stderr="post.%j.err",
        deps=[("afterok", ["7001", "7002"]), ("afterany", ["7003"])]),
    "slurm/gpus_per_node_typed_cpus_mem_per_gpu_days_hours.sbatch": dict(
        # 2 nodes x 4 GPUs; 4 tasks a node, 1 GPU each: 8 CPUs a task; 4 x 60G a node
        nodes=2, tasks=8, cpus=8 * 8, gpus=8, memory_mb=2 * 4 * 60 * G,
        walltime=2 * 86400 + 12 * 3600, name="llm-ft", gpu_type="a100", node_mem=4 * 60 * G,
        needs_gpus=4, mail_events=["begin", "end", "fail", "requeue"],
        mail_user="ml@example.org",
        notes=["--cpus-per-gpu=8 read as 8 CPUs per task",
               "--mem-per-gpu=60G read as 245760MB per node"]),
    "slurm/hetjob_options_bundled_mem_K_and_M.sbatch": dict(
        # 1 node of 1 task and 512000K (500M) + 2 nodes of 16 tasks and 2048M each
        nodes=3, tasks=33, cpus=33, memory_mb=500 + 2 * 2048, walltime=45 * 60, queue="io",
        notes=["heterogeneous job of 2 components: 3 nodes, 33 tasks, 33 CPUs, 4596MB"]),
    "slurm/mem_1536G_constraint_and_quoted.sbatch": dict(
        nodes=1, tasks=1, cpus=64, memory_mb=1536 * G, walltime=4 * 86400,
        node_mem=1536 * G, needs_mem=1536 * G, features=["bigmem", "avx512"]),
    "slurm/mem_per_gpu_zero_whole_node.sbatch": dict(
        nodes=1, gpus=4, walltime=6 * 3600, node_mem=0, exclusive=True, needs_gpus=4,
        notes=["--mem-per-gpu=0 read as --mem=0: all the memory of each node"]),
    "slurm/ntasks_per_gpu_gpus_total_lower_g_mem.sbatch": dict(
        tasks=8, cpus=8, memory_mb=16 * G, walltime=5400, queue="gpu", node_mem=16 * G,
        needs_mem=16 * G, needs_gpus=1, unknown=["--gpus"],
        notes=["--ntasks-per-gpu=2 read as 8 tasks (2 per GPU of 4)"]),
    "slurm/quoted_name_parens_comment_with_hash.sbatch": dict(
        tasks=4, cpus=4, walltime=600, name="my run (v2)", comment="ticket #4411 rerun"),
    # -- PBS Pro and Torque
    "pbs/pro_J_step_mail_list_group_list.pbs": dict(
        nodes=1, tasks=1, cpus=2, memory_mb=4 * G, walltime=1200, array="1-99:7",
        node_mem=4 * G, needs_mem=4 * G, mail_events=["fail", "begin", "end"],
        mail_user="a@example.org,b@example.org", unknown=["-W"]),
    "pbs/pro_blank_then_directives_trailing_comments.pbs": dict(
        nodes=2, tasks=2, cpus=32, gpus=4, walltime=4 * 3600 + 1800, needs_gpus=2,
        unknown=["-P"]),
    "pbs/pro_l_comma_select_place_scatter_excl.pbs": dict(
        nodes=4, tasks=128, cpus=128, walltime=6 * 3600, name="wide", exclusive=True,
        unknown=["-l place:scatter"]),
    "pbs/pro_select_chunks_mem_mb_and_gb.pbs": dict(
        nodes=3, tasks=3, cpus=4 + 2 * 8, memory_mb=500 + 2 * 2 * G, walltime=36 * 3600,
        name="mixmem", queue="workq",
        notes=["read as a job of 2 shapes: 3 nodes, 3 tasks, 20 CPUs, 4596MB of memory"]),
    "pbs/pro_spaced_quoted_name_k_oe_r_n.pbs": dict(
        nodes=1, tasks=1, cpus=1, walltime=100 * 3600, name="long job", requeue=False,
        unknown=["-k"]),
    "pbs/pro_walltime_milliseconds_rounded.pbs": dict(
        nodes=1, tasks=1, cpus=2, walltime=5400 + 1, name="msec"),
    "pbs/torque_nodes_ppn_plus_feature_mixed.pbs": dict(
        nodes=5, tasks=16 + 4 * 8, cpus=48, walltime=8 * 3600, name="pipeline",
        features=["bigmem"], notes=["(2 chunks) read as a job of 2 shapes: 5 nodes"]),
    "pbs/torque_procs_pmem_mb_walltime_seconds.pbs": dict(
        tasks=24, cpus=24, memory_mb=24 * 1500, walltime=5400, name="procjob",
        account="alloc7", per_cpu=1500),
    "pbs/torque_t_pct_depend_afterany_two_ids.pbs": dict(
        nodes=1, tasks=1, cpus=1, walltime=7200, array="1-32%4", name="chunk",
        deps=[("afterany", ["100.srv", "101.srv"])]),
    # -- LSF
    "lsf/J_list_step_singles_throttle_quoted.lsf": dict(
        tasks=1, cpus=1, walltime=1800, array="1-5,10,20-30:5%3", name="sim",
        stdout="out.%j.%a"),
    "lsf/blank_comment_then_directives_env_none_P.lsf": dict(
        tasks=8, cpus=8, walltime=2700, account="proj-x", stdout="reduce.%j.out",
        stderr="reduce.%j.err", export_all=False),
    "lsf/gpu_num_j_exclusive_yes_gmodel_quoted.lsf": dict(
        nodes=1, tasks=4, cpus=4, gpus=2, walltime=7200, queue="gpu",
        gpu_type="NVIDIAA100_SXM4_80GB", needs_gpus=2, unknown=["-gpu j_exclusive"]),
    "lsf/n_ptile_M_GB_W_hhmm_q.lsf": dict(
        nodes=2, tasks=64, cpus=64, memory_mb=64 * 8 * G, walltime=12 * 3600, name="cfd",
        queue="long", per_cpu=8 * G, notes=["-M 8GB read as 8192MB per task"]),
    "lsf/rusage_mem_per_task_n_and_hosts_one.lsf": dict(
        nodes=1, tasks=6, cpus=6, memory_mb=6 * 3000, walltime=40 * 60, name="threads 6",
        per_cpu=3000),
    "lsf/w_ended_and_done_numeric.lsf": dict(
        tasks=2, cpus=2, walltime=3600, name="merge", mail_events=["begin", "end"],
        mail_user="ops@example.org", deps=[("afterany", ["5001"]), ("afterok", ["5002"])]),
    # -- Flux
    "flux/N_n_c_g_t_hours_exclusive.flux": dict(
        nodes=2, tasks=8, cpus=8 * 4, gpus=8, walltime=7200, name="gpu-ens", exclusive=True,
        needs_gpus=4),
    "flux/blank_comment_then_directives_setattr_bank.flux": dict(
        tasks=16, cpus=32, walltime=45 * 60, account="chem"),
    "flux/dependency_afterok_f58_output_error.flux": dict(
        tasks=1, cpus=1, walltime=600, stdout="post.%j.out", stderr="post.%j.err",
        deps=[("afterok", ["ƒ2ZxHGm"])]),
    "flux/nodes_only_exclusive_time_days_float.flux": dict(
        nodes=4, tasks=4, cpus=4, walltime=36 * 3600, queue="pbatch", exclusive=True,
        notes=["--nodes=4 without --nslots read as 4 slots, one per node"]),
    "flux/short_t_seconds_queue_comment_spaced.flux": dict(
        tasks=4, cpus=4, walltime=3600, queue="debug"),
    "flux/urgency_begin_time_tasks_per_node.flux": dict(
        nodes=3, tasks=36, cpus=36, walltime=300, begin="now+7200", unknown=["--urgency"]),
    # -- Grid Engine
    "sge/S_shell_now_no_l_arch_tabs.sge": dict(
        walltime=3600, shell="/bin/bash", architecture="x86_64", unknown=["-now"]),
    "sge/blank_comment_then_directives_P_A_wd.sge": dict(
        memory_mb=3 * G, walltime=3600, account="grant9", working_directory="/scratch/run2",
        per_cpu=3 * G, unknown=["-P"]),
    "sge/h_rt_leading_zero_octal.sge": dict(
        memory_mb=G, walltime=0o3600, name="padded", per_cpu=G,
        notes=["h_rt=03600 is octal to Grid Engine: read as qsub reads it, 1920 seconds"]),
    "sge/hold_jid_two_names_M_m_bea.sge": dict(
        walltime=1800, name="collect", mail_events=["begin", "end", "fail"],
        mail_user="me@example.org", unknown=["-hold_jid"]),
    "sge/l_lines_gpu_m_mem_free_smp.sge": dict(
        nodes=1, cpus=8, gpus=1, memory_mb=8 * 4 * G, walltime=7200, queue="gpu.q",
        per_cpu=4 * G, needs_gpus=1, notes=["-l m_mem_free=4G read as the job's memory"]),
    "sge/pe_mpi_range_h_vmem_G_per_slot.sge": dict(
        tasks=8, cpus=8, memory_mb=8 * 2 * G, walltime=6 * 3600, name="mpirange",
        per_cpu=2 * G, unknown=["-pe"], notes=["slot range mpi 8-16 read as at least 8"]),
    "sge/t_step_tc_h_rt_seconds_j_y.sge": dict(
        walltime=900, array="2-50:4%3", stdout="logs/"),
}

test_every_fixture_has_expectations, test_parse_values, test_translates_or_reports = \
    sweep_tests(HERE, EXPECTED, fields=(*COMPARED_FIELDS, "shell"), strict=ALL_STRICT,
                at_least=38)


# ----------------------------------------------------------- what a translation says or writes

@pytest.mark.parametrize(("rel", "target", "said"), [
    ("slurm/array_range_step_singles_range_throttle_padded_output.sbatch", "pbs",
     "approximated: array 1-7:3,20,40-42%2 as 1-7:3%2 (PBS Pro -J takes one X-Y[:Z] range; "
     "indexes 20,40,41,42 left out)"),
    ("slurm/hetjob_options_bundled_mem_K_and_M.sbatch", "pbs",
     "dropped: partition compute of component 1 (PBS has one queue per job: the whole job "
     "goes to io)"),
    ("slurm/begin_midnight_minutes_time_min.sbatch", "sge",
     "dropped: begin time midnight (Grid Engine's qsub -a needs a month and day"),
    ("slurm/quoted_name_parens_comment_with_hash.sbatch", "pbs",
     "approximated: job name 'my run (v2)' as 'my_run_(v2)'"),
    ("pbs/pro_select_chunks_mem_mb_and_gb.pbs", "flux",
     "approximated: a job of 2 shapes (1 node, 1 task, 4 CPUs, 500MB of memory + 2 nodes, "
     "2 tasks, 16 CPUs, 4096MB of memory) as one shape of 3 nodes and 3 tasks"),
    ("lsf/gpu_num_j_exclusive_yes_gmodel_quoted.lsf", "slurm",
     'dropped: #BSUB -gpu "num=2:j_exclusive=yes:gmodel=NVIDIAA100_SXM4_80GB"'),
    ("flux/urgency_begin_time_tasks_per_node.flux", "pbs",
     "dropped: begin time now+7200 (qsub -a takes a date and time: no time relative to the "
     "submission; the job may start at once)"),
    ("sge/pe_mpi_range_h_vmem_G_per_slot.sge", "lsf",
     "approximated: #$ -pe mpi 8-16 as -n 8,16"),
    ("sge/h_rt_leading_zero_octal.sge", "slurm",
     "line 3: h_rt=03600 is octal to Grid Engine: read as qsub reads it, 1920 seconds "
     "(00:32:00); write 1920 or 00:32:00 if that is meant"),
])
def test_what_is_not_carried_is_said_in_words(rel: str, target: str, said: str):
    _, warnings = translated(HERE, rel, target)
    assert any(w.startswith(said) for w in warnings), warnings


@pytest.mark.parametrize(("rel", "target", "lines"), [
    ("slurm/gpus_per_node_typed_cpus_mem_per_gpu_days_hours.sbatch", "pbs",
     ["#PBS -l select=2:ncpus=32:mpiprocs=4:ngpus=4:mem=240gb", "#PBS -l place=scatter",
      "#PBS -l walltime=60:00:00"]),
    ("slurm/begin_midnight_minutes_time_min.sbatch", "pbs", ["#PBS -a 0000"]),
    ("slurm/begin_midnight_minutes_time_min.sbatch", "lsf", ["#BSUB -b 00:00"]),
    ("lsf/J_list_step_singles_throttle_quoted.lsf", "slurm",
     ["#SBATCH --array=1-5,10,20-30:5%3"]),
    ("pbs/torque_t_pct_depend_afterany_two_ids.pbs", "sge", ["#$ -t 1-32", "#$ -tc 4"]),
    ("pbs/pro_walltime_milliseconds_rounded.pbs", "slurm", ["#SBATCH --time=01:30:01"]),
    ("sge/h_rt_leading_zero_octal.sge", "slurm", ["#SBATCH --time=00:32:00"]),
    ("sge/pe_mpi_range_h_vmem_G_per_slot.sge", "lsf", ["#BSUB -n 8,16"]),
    ("flux/nodes_only_exclusive_time_days_float.flux", "slurm",
     ["#SBATCH --nodes=4", "#SBATCH --exclusive", "#SBATCH --time=1-12:00:00"]),
])
def test_carried_as_a_user_would_write_it(rel: str, target: str, lines: list[str]):
    script, _ = translated(HERE, rel, target)
    for line in lines:
        assert line in script.splitlines(), (line, script)


# ------------------------------------------------------------ PBS times as qsub reads them

@pytest.mark.parametrize("line", ["#PBS -l walltime=1.5:00:00", "#PBS -l walltime=1:30.5:00",
                                  "#PBS -l cput=2.5:00:00"])
def test_a_fraction_of_an_hour_or_minute_is_no_pbs_time(line: str):
    """qsub's decode_time takes a fraction only after the seconds; before, `1.5:00:00` was
    read as 90 minutes (Torque reads it as 1 second, PBS Pro refuses it)."""
    with pytest.raises(BadInput) as e:
        parse_lines("pbs", line)
    said = str(e.value)
    assert said.startswith(f"line 2: bad {line.split()[-1].split('=')[0]} ") and \
        "in whole numbers but for a fraction of the seconds (1.5:00:00 is none: write " \
        "01:30:00)" in said, said


@pytest.mark.parametrize(("walltime", "seconds"), [
    ("2:00:00.4", 7200), ("2:00:00.5", 7201), ("2:00:00.4999", 7200), ("90.", 90),
    ("01:30:00.750", 5401), ("45", 45), ("2:12:00:00", 216000)])
def test_pbs_milliseconds_round_to_the_nearest_second(walltime: str, seconds: int):
    """decode_time adds a second for milliseconds of 500 or more; before, any fraction was
    rounded up (`2:00:00.4` asked 7201 seconds of a scheduler that gives 7200)."""
    assert parse_lines("pbs", f"#PBS -l walltime={walltime}").resources.walltime_s == seconds


# ------------------------------------------------------ Grid Engine times as qsub reads them

@pytest.mark.parametrize("value", ["90:00", "1:00:00:00", "::", "0800", "1:2"])
def test_a_grid_engine_time_not_of_three_fields_or_seconds_is_refused(value: str):
    """sge_types(1): seconds, or H:M:S with all three fields; before, `h_rt=90:00` was read
    as 90 minutes (qsub refuses it)."""
    with pytest.raises(BadInput) as e:
        parse_lines("sge", f"#$ -l h_rt={value}")
    assert str(e.value) == (
        f"line 2: bad h_rt 'h_rt={value}' in `#$ -l h_rt={value}`; expected seconds, or H:M:S "
        "with all three fields (a zero field may be left empty, as in 1::30), e.g. 5400 or "
        "01:30:00; a leading 0 makes a number octal")


@pytest.mark.parametrize(("value", "seconds"), [
    ("1.5", 1), ("1.5:00:00", 5400), ("0:1.5:0", 90), ("::90.9", 90), ("1::1", 3601),
    ("0600", 384), ("0x10", 16), ("3600", 3600), ("01:00:00", 3600)])
def test_a_grid_engine_time_is_read_as_qsub_reads_it(value: str, seconds: int):
    """Each field's fraction cut to whole seconds, a leading 0 octal, 0x hexadecimal;
    before, `h_rt=1.5` asked 2 seconds and `h_rt=0600` 600."""
    assert parse_lines("sge", f"#$ -l h_rt={value}").resources.walltime_s == seconds


@pytest.mark.parametrize("key", ["h_rt", "h_cpu"])
def test_a_time_with_a_leading_zero_is_said_octal(key: str):
    spec = parse_lines("sge", f"#$ -l {key}=010")
    assert f"line 2: {key}=010 is octal to Grid Engine: read as qsub reads it, 8 seconds " \
           "(00:00:08); write 8 or 00:00:08 if that is meant" in spec.metadata["parse_notes"]
    plain = parse_lines("sge", f"#$ -l {key}=10")
    assert not [n for n in plain.metadata.get("parse_notes", []) if "octal" in n]


# ------------------------------------------------------------------- --mem-per-gpu=0

@pytest.mark.parametrize(("lines", "said"), [
    ("#SBATCH -N 1 --gpus-per-node=2 --mem-per-gpu=0",
     "line 2: --mem-per-gpu=0 read as --mem=0: all the memory of each node"),
    ("#SBATCH -n 2 --gpus-per-task=1 --mem-per-gpu=0",
     "line 2: --mem-per-gpu=0 read as --mem-per-cpu=0"),
])
def test_mem_per_gpu_zero_is_said_as_all_the_memory(lines: str, said: str):
    """Before: 'line 2: --mem-per-gpu=0 read as NoneMB per CPU' (and '0MB per CPU')."""
    notes = parse_lines("slurm", lines).metadata["parse_notes"]
    assert said in notes and not [n for n in notes if "None" in n or "0MB" in n], notes


@pytest.mark.parametrize("target", [t for t in SCRIPT_DIALECTS if t != "slurm"])
def test_mem_per_gpu_zero_is_said_dropped_where_no_scheduler_takes_all_memory(target: str):
    _, warnings, _ = translate((HERE / "slurm/mem_per_gpu_zero_whole_node.sbatch").read_text(),
                               target, "slurm")
    assert f"dropped: memory 0 (Slurm's 'all memory of the node'; no {target} form)" in \
        warnings, warnings


# ------------------------------------------------ IEC memory units qsub and bsub refuse

@pytest.mark.parametrize(("dialect", "line", "said"), [
    ("pbs", "#PBS -l mem=2GiB", "bad memory size 'mem=2GiB'"),
    ("pbs", "#PBS -l pmem=512Mi", "bad memory size 'pmem=512Mi'"),
    ("pbs", "#PBS -l select=1:ncpus=1:mem=4GiB", "bad mem 'mem=4GiB'"),
    ("lsf", "#BSUB -M 2GiB", "bad memory limit '2GiB'"),
    ("lsf", '#BSUB -R "rusage[mem=2GiB]"', "bad rusage mem 'rusage[mem=2GiB]'"),
])
def test_an_iec_memory_unit_is_refused_where_the_scheduler_refuses_it(dialect: str, line: str,
                                                                      said: str):
    """PBS's sizes are k, m, g, t ... then b or w, LSF's KB, MB, GB ...: `2GiB` is neither
    (qsub and bsub refuse it). Before, it was read as 2048MB (and `mem=2iB` as 1MB)."""
    with pytest.raises(BadInput) as e:
        parse_lines(dialect, line)
    assert str(e.value).startswith(f"line 2: {said} in `{line}`; expected "), str(e.value)


def test_the_other_memory_readers_are_unchanged():
    """Grid Engine's sizes and Slurm's refusal of `10GiB` stay as they were."""
    assert parse_lines("sge", "#$ -l h_vmem=4G").resources.memory_per_cpu_mb == 4096
    with pytest.raises(BadInput, match="bad memory size '10GiB'"):
        parse_lines("slurm", "#SBATCH --mem=10GiB")
