"""A thirtieth set of realistic batch scripts (tests/fixtures/scripts_unseen30/<dialect>/).

Each is parsed and compared with its EXPECTED row (values worked out by hand), its needs
read, and translated into every dialect (its own too) and read back
(tests/scripts_unseen_check.py). The styles: a Slurm heterogeneous job whose second
component asks typed GPUs per node, `--mem=2T` with `-t 3-0` and `TIME_LIMIT_80` mail, an
array of a list and a stepped range under a throttle of 1, typed `--gpus-per-task`,
a csh script of `-n -c --mem-per-cpu`, a python script of an OR dependency (`?`), a job's
`--gpus` spread by `--gpus-per-node` after a blank line, a `--gres` per line; PBS Pro
`-J 0-20:5%3` with a `gpu_model` chunk, old-style `-l ncpus=8,mem=1tb,walltime=00:90:00`,
`-a` with seconds, a remote server's job in `depend`, a python job of `mem=400MB`; Torque
`gpus=1:K80` with `pmem` and a four-field walltime under tcsh; LSF `num=1/host` and
`num=2/task` GPUs, `-w "done() || exit(id, !=0)"`, `-n 4,8`, `-b` with a year under csh,
two queues in one quoted `-q`, `affinity[core(4)]`; flux `-t 1.5h`, `system.duration` with
`--begin-time=+1h`, per-slot GPUs on nodes, `--cores` over nodes, two dependency lines,
`0.25d`; Grid Engine a wildcard PE, `h_vmem` in decimal megabytes, an open slot range with
a job GPU, a quoted `-l`, `*@host` queues, a repeated `h_rt` with a fraction, `-a MMDDhhmm`,
a csh job of one array task.

What the sweep found (each test below failed before): LSF 10.1.0.9's per-job memory
reservation `rusage[mem=8GB/job]`, a script bsub takes, was refused ("expected ... an
optional /task or /host"): now read once the slots are known (on one host, that host's
memory; over several slots, shared evenly per slot, said); PBS Pro's `-m abej` (mail for
each subjob of an array too) lost its `j` unsaid, back as `-m abe` and with no
ARRAY_TASKS at Slurm: now read as Slurm's ARRAY_TASKS and written back as `j` where PBS
Pro takes it (an array, beside a, b or e; said dropped elsewhere), and `-m j` alone, which
qsub refuses, is refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from diamond_jupyter.dialects.lsf_script import LsfScript
from diamond_jupyter.dialects.translate import request_totals, translate
from diamond_jupyter.model import BadInput
from tests.scripts_unseen_check import (
    ALL_STRICT,
    COMPARED_FIELDS,
    parse_lines,
    sweep_tests,
    translated,
)

HERE = Path(__file__).parent / "fixtures" / "scripts_unseen30"
G = 1024

EXPECTED: dict[str, dict[str, Any]] = {
    # -- Slurm
    "slurm/hetjob_typed_gpus_per_node_second_component.sbatch": dict(
        nodes=3, tasks=1 + 2 * 4, cpus=8 + 2 * 4, gpus=2 * 4, memory_mb=32 * G + 2 * 64 * G,
        walltime=4 * 3600, name="coupled", gpu_type="a100", needs_gpus=4),
    "slurm/mem_terabytes_days_only_mail_time_limit_80.sbatch": dict(
        nodes=1, tasks=1, cpus=64, memory_mb=2 * G * G, walltime=3 * 86400, queue="himem",
        node_mem=2 * G * G, mail_events=["time_limit_80", "fail"],
        mail_user="astro@example.org"),
    "slurm/array_list_step_throttle_one_env_default.sbatch": dict(
        walltime=1800, array="1-3,5-7:2%1", name="serial-sweep",
        stdout="logs/%x_%A_%a.out"),
    "slurm/gpus_per_task_typed_ntasks_per_core.sbatch": dict(
        tasks=2, cpus=2, gpus=2, walltime=45 * 60, account="ml-lab", gpu_type="a100",
        needs_gpus=1, unknown=["--ntasks-per-core"]),
    "slurm/csh_shebang_setenv_cpus_per_task_mem_per_cpu.sbatch": dict(
        tasks=3, cpus=3 * 4, memory_mb=3 * 4 * 500, walltime=7200, qos="normal", per_cpu=500),
    "slurm/python_shebang_dependency_or_requeue.sbatch": dict(
        tasks=1, cpus=1, walltime=600, name="post", requeue=True,
        deps=[("afterok", ["12", "13"]), ("afterany", ["14"])]),
    "slurm/blank_then_gpus_total_with_gpus_per_node.sbatch": dict(
        nodes=2, gpus=2, walltime=3600, queue="gpu", needs_gpus=1,
        notes=["--gpus=2 (the job's) with 1 GPU per node (line 6) read as 2 nodes of 1 GPU"]),
    "slurm/nodes_ntasks_per_node_cpus_mem_per_cpu_plain_mb.sbatch": dict(
        nodes=2, tasks=2 * 3, cpus=2 * 3 * 2, memory_mb=12 * 1024, walltime=5400,
        per_cpu=1024, comment="grid 3x2"),
    "slurm/gres_typed_and_nvme_separate_lines.sbatch": dict(
        nodes=1, gpus=2, walltime=6 * 3600, gpu_type="tesla", exclusive=True, needs_gpus=2,
        unknown=["--gres"]),
    # -- PBS Pro and Torque
    "pbs/pro_J_step_throttle_select_gpu_model.pbs": dict(
        nodes=1, tasks=1, cpus=4, gpus=1, walltime=7200, array="0-20:5%3", name="scan",
        queue="gpu", gpu_type="a100", needs_gpus=1, unknown=["-l select:gpu_model"]),
    "pbs/pro_old_style_ncpus_mem_tb_walltime_minutes_over_60.pbs": dict(
        cpus=8, memory_mb=G * G, walltime=90 * 60, name="bigmem", node_mem=G * G),
    "pbs/torque_nodes_ppn_gpus_property_pmem_comma.pbs": dict(
        nodes=2, tasks=8, cpus=8, gpus=2, memory_mb=8 * 3 * G, walltime=12 * 3600,
        name="k80job", account="proj42", per_cpu=3 * G, features=["K80"], needs_gpus=1),
    "pbs/pro_a_with_seconds_quoted_account_mail_n.pbs": dict(
        nodes=1, tasks=1, cpus=1, walltime=300, begin="2026-12-24T08:00:30",
        account="my acct", mail_events=[]),
    "pbs/torque_tcsh_S_walltime_days_field_ppn_pmem.pbs": dict(
        nodes=1, tasks=2, cpus=2, memory_mb=2 * 3 * G, walltime=86400, name="tcshday",
        per_cpu=3 * G, shell="/bin/tcsh", unknown=["-S"]),
    "pbs/pro_chunks_place_free_shared_depend_remote_server.pbs": dict(
        nodes=5, tasks=5, cpus=3 * 2 + 2 * 4, gpus=2, walltime=8 * 3600, name="mixed",
        deps=[("afterok", ["1.srv@other"])], needs_gpus=1,
        unknown=["-l place:free", "-l place:shared"]),
    "pbs/pro_python_shebang_select_mem_upper_MB.pbs": dict(
        nodes=1, tasks=1, cpus=4, memory_mb=400, walltime=1200, name="pyjob",
        stdout="py.out", stderr="py.err"),
    "pbs/pro_J_mail_abej_each_subjob.pbs": dict(
        nodes=1, tasks=1, cpus=2, walltime=900, array="1-10", name="subjob-mail",
        mail_events=["fail", "begin", "end", "array_tasks"], mail_user="me@example.org"),
    # -- LSF
    "lsf/gpu_num_per_host_ptile_two_hosts.lsf": dict(
        nodes=2, tasks=8, cpus=8, gpus=2, walltime=3600, name="allreduce", queue="gpu",
        needs_gpus=1),
    "lsf/gpu_num_per_task_M_MB.lsf": dict(
        tasks=2, cpus=2, gpus=4, memory_mb=2 * 1536, walltime=1800, per_cpu=1536,
        needs_gpus=2),
    "lsf/w_done_or_exit_code_not_zero.lsf": dict(
        tasks=1, cpus=1, walltime=900, name="cleanup",
        deps=[("afterok", ["123"]), ("afternotok", ["124"])]),
    "lsf/n_min_max_W_hhmm_We_estimate.lsf": dict(
        tasks=4, cpus=4, walltime=9000, account="chem", unknown=["-n", "-We"],
        notes=["slot range 4,8 kept as minimum 4"]),
    "lsf/csh_b_full_date_J_quoted_array_pct.lsf": dict(
        walltime=600, array="1-100%5", name="name", begin="2026-12-24T08:00:00",
        stdout="out.%j.%a"),
    "lsf/select_mem_rusage_plain_two_queues_quoted.lsf": dict(
        tasks=2, cpus=2, memory_mb=2 * 4000, walltime=2700, queue="short,long", per_cpu=4000,
        unknown=["-R select"]),
    "lsf/affinity_core4_N_u_outputs.lsf": dict(
        tasks=4, cpus=16, walltime=3 * 3600, stdout="out.%j", stderr="err.%j",
        mail_events=["end"], mail_user="me@example.org"),
    "lsf/rusage_mem_per_job_spread_over_slots.lsf": dict(
        tasks=4, cpus=4, memory_mb=8 * G, walltime=3600, name="shared-mem", per_cpu=2 * G,
        notes=["rusage[mem=8GB/job] (the whole job's) read as 2048MB per slot of 4"]),
    "lsf/rusage_mem_per_job_one_host_duration.lsf": dict(
        nodes=1, tasks=8, cpus=8, memory_mb=16 * G, walltime=1800, node_mem=16 * G,
        unknown=["-R rusage"],
        notes=["rusage[mem=16GB/job:duration=10] (the whole job's) read as 16384MB on its one "
               "host"]),
    # -- Flux
    "flux/t_fraction_hours_n_output_template.flux": dict(
        tasks=4, cpus=4, walltime=5400),
    "flux/setattr_system_duration_begin_plus_hour.flux": dict(
        tasks=1, cpus=1, walltime=3600, begin="now+3600", name="later"),
    "flux/nslots_cores_gpus_per_slot_nodes.flux": dict(
        nodes=3, tasks=3, cpus=12, gpus=3, walltime=7200, queue="pbatch", needs_gpus=1),
    "flux/cores_total_on_nodes_queue_bank_short.flux": dict(
        nodes=2, tasks=2, cpus=16, walltime=1800, queue="pdebug", account="guests",
        notes=["--cores=16 on 2 nodes read as one slot of 8 cores on each"]),
    "flux/two_dependency_lines_name_repeated_last_wins.flux": dict(
        tasks=2, cpus=2, walltime=1200, name="b",
        deps=[("afterok", ["123"]), ("afterany", ["124"])]),
    "flux/days_fraction_nodes_uneven_tasks.flux": dict(
        nodes=2, tasks=3, cpus=3, walltime=6 * 3600),
    # -- Grid Engine
    "sge/pe_wildcard_h_vmem_lower_m.sge": dict(
        tasks=16, cpus=16, memory_mb=16 * 1954, walltime=4 * 3600, name="wild", per_cpu=1954),
    "sge/pe_open_range_gpu_job_consumable.sge": dict(
        nodes=1, cpus=4, gpus=2, walltime=3600, queue="gpu.q", needs_gpus=2,
        unknown=["-pe"], notes=["slot range smp 4- read as at least 4 slots"]),
    "sge/quoted_l_h_rt_queue_any_at_host.sge": dict(
        walltime=3600, name="pinned", notes=["-q *@node01"]),
    "sge/mem_free_and_h_vmem_comma_pe_smp.sge": dict(
        nodes=1, cpus=2, memory_mb=2 * 3 * G, walltime=600, per_cpu=3 * G,
        unknown=["-l mem_free"], notes=["-l mem_free=2G read as the job's memory per slot"]),
    "sge/h_rt_repeated_fraction_seconds_last_wins.sge": dict(
        walltime=3600, name="again"),
    "sge/a_MMDDhhmm_m_ea_M_two_users.sge": dict(
        walltime=600, name="eve", mail_events=["end", "fail"],
        mail_user="me@example.org,you@example.org"),
    "sge/csh_S_exclusive_single_task_array.sge": dict(
        walltime=7200, array="5", name="five", exclusive=True, shell="/bin/csh"),
}

test_every_fixture_has_expectations, test_parse_values, test_translates_or_reports = \
    sweep_tests(HERE, EXPECTED, fields=(*COMPARED_FIELDS, "shell"), strict=ALL_STRICT,
                at_least=39)


# ------------------------------------------------------- LSF's per-job memory reservation

@pytest.mark.parametrize(("lines", "totals", "said"), [
    ('#BSUB -n 4 -R "rusage[mem=8GB/job]"', (4, 8 * G),
     "line 2: rusage[mem=8GB/job] (the whole job's) read as 2048MB per slot of 4"),
    ('#BSUB -R "rusage[mem=4000/job]"\n#BSUB -n 3', (3, 3 * 1333),
     "line 2: rusage[mem=4000/job] (the whole job's) read as 1333MB per slot of 3 (rounded "
     "down)"),
    ('#BSUB -R "rusage[mem=500MB/job]"', (None, 500),
     "line 2: rusage[mem=500MB/job] (the whole job's) read as 500MB on its one host"),
    ('#BSUB -n 16 -R "span[hosts=1]" -R "rusage[mem=32GB/job]"', (16, 32 * G),
     "line 2: rusage[mem=32GB/job] (the whole job's) read as 32768MB on its one host"),
])
def test_lsf_memory_reserved_per_job_is_read(lines: str, totals: tuple, said: str):
    """LSF 10.1.0.9 reserves `rusage[mem=N/job]` once for the whole job; before, the reader
    refused it ("expected ... an optional /task or /host"), a script bsub takes."""
    spec = parse_lines("lsf", lines)
    got = request_totals(spec)
    assert (got["tasks"], got["memory_mb"]) == totals
    assert said in spec.metadata["parse_notes"], spec.metadata["parse_notes"]


def test_lsf_per_job_memory_too_small_to_share_is_kept_and_said():
    spec = parse_lines("lsf", '#BSUB -n 4 -R "rusage[mem=3/job]"')
    assert request_totals(spec)["memory_mb"] is None
    assert [d.raw for d in spec.unknown] == ['#BSUB -n 4 -R "rusage[mem=3/job]"']
    assert "line 2: rusage[mem=3/job] (the whole job's): less than 1MB for each of its 4 " \
           "slots; kept as written, no memory read" in spec.metadata["parse_notes"]


def test_lsf_per_job_memory_over_a_slot_range_is_kept_as_written():
    """`-n 2,8` runs on 2 to 8 slots: the job's 8000MB cannot be shared per slot (before:
    4000MB per slot of the minimum 2, written back to LSF as `rusage[mem=4000MB]` beside
    `-n 2,8`, up to 32000MB reserved); kept as written, said, no memory read."""
    spec = parse_lines("lsf", '#BSUB -n 2,8\n#BSUB -R "rusage[mem=8000/job]"')
    assert request_totals(spec)["memory_mb"] is None
    assert "line 3: rusage[mem=8000/job] (the whole job's): a slot range (-n MIN,MAX) does " \
        "not say how many slots share it; kept as written, no memory read" \
        in spec.metadata["parse_notes"], spec.metadata["parse_notes"]
    lines = LsfScript().render_script(spec).script.splitlines()
    assert '#BSUB -R "rusage[mem=8000/job]"' in lines and "#BSUB -n 2,8" in lines, lines


def test_lsf_reservation_methods_past_task_host_job_are_still_refused():
    with pytest.raises(BadInput) as e:
        parse_lines("lsf", '#BSUB -R "rusage[mem=4000/node]"')
    assert "an optional /task, /host or /job" in str(e.value)


@pytest.mark.parametrize(("rel", "target", "line"), [
    ("lsf/rusage_mem_per_job_spread_over_slots.lsf", "slurm", "#SBATCH --mem-per-cpu=2G"),
    ("lsf/rusage_mem_per_job_spread_over_slots.lsf", "sge", "#$ -l h_rt=01:00:00,h_vmem=2G"),
    ("lsf/rusage_mem_per_job_one_host_duration.lsf", "slurm", "#SBATCH --mem=16G"),
])
def test_per_job_memory_reaches_other_schedulers(rel: str, target: str, line: str):
    script, _ = translated(HERE, rel, target)
    assert line in script.splitlines(), script


# ------------------------------------------------ mail for each subjob of an array (-m j)

def test_pbs_mail_for_each_subjob_is_read_as_slurms_array_tasks():
    """PBS Pro's `-m abej` mails for each subjob too; before, the j was dropped unsaid (back
    as `-m abe`, and Slurm got no ARRAY_TASKS)."""
    rel = "pbs/pro_J_mail_abej_each_subjob.pbs"
    own, warnings = translated(HERE, rel, "pbs")
    assert "#PBS -m abej" in own.splitlines() and not warnings
    script, _ = translated(HERE, rel, "slurm")
    assert "#SBATCH --mail-type=FAIL,BEGIN,END,ARRAY_TASKS" in script.splitlines()
    _, warnings = translated(HERE, rel, "lsf")
    assert "dropped: mail event array_tasks (no lsf equivalent)" in warnings


@pytest.mark.parametrize(("lines", "said"), [
    ("#PBS -m j", "bad -m value 'j' in `#PBS -m j`; expected j (mail for each subjob) with "
                  "a, b or e, e.g. -m abej"),
    ("#PBS -m abf", "bad -m value 'abf' in `#PBS -m abf`; expected letters from a, b, e "
                    "(with j: for each subjob of an array too), or n"),
])
def test_pbs_mail_letters_qsub_refuses_are_refused(lines: str, said: str):
    with pytest.raises(BadInput) as e:
        parse_lines("pbs", lines)
    assert str(e.value) == f"line 2: {said}"


@pytest.mark.parametrize(("array", "line", "said"), [
    ("#SBATCH --array=1-4\n", "#PBS -m ej", None),
    ("", "#PBS -m e", "dropped: mail event array_tasks (PBS Pro's -m j is for an array's "
                      "subjobs, beside a, b or e: the job is no array)"),
])
def test_slurm_array_tasks_mail_reaches_pbs_as_j(array: str, line: str, said: str | None):
    script, warnings, _ = translate(
        f"#!/bin/bash\n#SBATCH --mail-type=END,ARRAY_TASKS\n{array}./a\n", "pbs", "slurm")
    assert line in script.splitlines(), script
    assert (said in warnings) if said else not [w for w in warnings if "mail" in w], warnings
