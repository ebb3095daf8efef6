"""A thirty-third set of realistic batch scripts (tests/fixtures/scripts_unseen33/<dialect>/).

Each is parsed and compared with its EXPECTED row (values worked out by hand), its needs
read, and translated into every dialect (its own too) and read back
(tests/scripts_unseen_check.py). The styles: Slurm with CRLF line ends of `--array=0-99%10`
and `--hint=nomultithread`, `--gpus-per-task` with `--cpus-per-gpu` and `--mem=0` on two
nodes, `aftercorr` with `--kill-on-invalid-dep`, `--signal=B:USR1@600` with `--requeue` and
`--open-mode=append`, a tcsh job of `--distribution=block:cyclic`, `# SBATCH`, `#sbatch` and
`##SBATCH` lines sbatch does not read, a UTF-8 BOM with a non-ASCII name and a time of
minutes and seconds; PBS Pro `select=2:ncpus=8:mpiprocs=4+1:ncpus=1`, `-J 1-10:2` with two
`afterany` ids, CRLF with a walltime of plain seconds, `-V` with a quoted `-v` list, `-r n`
and `-p`, job-wide `ncpus,ngpus,mem`, a `host=` chunk with `place=pack:excl`; Torque named
hosts `nodes=n01:ppn=4+n02:ppn=4`, a tcsh job of `-t 1,3,5-7`; LSF `-nnodes` with
`-alloc_flags "smt4 nvme"` and `-W 1:30`, `affinity[thread(2)*4]`, an array of a thousand
under `%50` with `-outdir` and `%I` outputs, `done() && started()`, CRLF with
`select[type==X86_64]` and a plain `-M`, a tcsh job of `-env none` and `-cwd`, `-gpu` with
`mode=shared:mps=yes`, `-env "all, TEST='A, B'"`; flux `--nslots` with `-c -g -N
--exclusive`, `--requires=amd`, `-o mpi=` with `--conf` and a unitless `-t` (minutes), CRLF
with an `{{id}}` output, an ISO `--begin-time` with two dependency lines,
`--signal=SIGUSR1@5m` with `--tasks-per-node`; Grid Engine `#$ -S /bin/bash` after the first
command, `-l gpu=1` on `-pe smp 8` with `-binding striding:4:2`, `-hold_jid "prep*"`, `-q
all.q@@gpunodes` with `-l h=`, `-pe mpi-rr 32 -R y` with `h_vmem`, a BOM and CRLF with `-l
tmpfree`, `-V -v` with `-notify` and `-m n`.

What the sweep found (each test below the table failed before): LSF's `-env` takes a value
in single quotes to hold commas (`-env "all, TEST='A, B'"`, bsub's own example) and takes
the quotes off; the reader kept such a list as an unknown option (dropped, said, by every
other scheduler: the job lost its variables) and read `MSG='a b'` with its quotes, so a
Slurm or flux job got `'a b'` where LSF's got `a b`. Now the quotes are LSF's syntax.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from diamond_jupyter.dialects.translate import SCRIPT_DIALECTS, get_script_dialect, translate
from tests.scripts_unseen_check import ALL_STRICT, COMPARED_FIELDS, parse_lines, sweep_tests

HERE = Path(__file__).parent / "fixtures" / "scripts_unseen33"
G = 1024

EXPECTED: dict[str, dict[str, Any]] = {
    # -- Slurm
    "slurm/array_pct10_hint_nomultithread_mem_per_cpu_crlf.sbatch": dict(
        tasks=1, cpus=4, memory_mb=4 * 1500, per_cpu=1500, walltime=45 * 60, array="0-99%10",
        name="tile", stdout="logs/tile_%A_%a.out", unknown=["--hint"]),
    "slurm/gpus_per_task_cpus_per_gpu_mem_zero_two_nodes.sbatch": dict(
        nodes=2, tasks=2 * 4, cpus=2 * 4 * 8, gpus=2 * 4, walltime=6 * 3600, queue="gpu",
        needs_gpus=4, notes=["--cpus-per-gpu=8 read as 8 CPUs per task"]),
    "slurm/aftercorr_array_kill_on_invalid_dep_minutes.sbatch": dict(
        walltime=15 * 60, array="1-20", name="post", deps=[("afterok", ["812345"])],
        unknown=["--kill-on-invalid-dep"]),
    "slurm/signal_B_usr1_requeue_open_mode_two_days.sbatch": dict(
        tasks=16, cpus=16, walltime=2 * 86400, requeue=True, stdout="long.log",
        unknown=["--signal"]),
    "slurm/tcsh_distribution_block_cyclic_ntasks_per_node_mem_per_cpu_G.sbatch": dict(
        nodes=3, tasks=3 * 8, cpus=3 * 8 * 2, memory_mb=3 * 8 * 2 * 2 * G, per_cpu=2 * G,
        walltime=3600, shell="/bin/tcsh", distribution="block:cyclic"),
    "slurm/space_and_lowercase_directives_not_read.sbatch": dict(
        tasks=2, cpus=2, walltime=600, name="plain"),
    "slurm/bom_name_unicode_time_minutes_seconds.sbatch": dict(
        tasks=2, cpus=2, walltime=90 * 60 + 30, name="análisis", comment="éclair run"),
    # -- PBS Pro and Torque
    "pbs/pro_select_mixed_chunks_mpiprocs_plus_one_ncpus.pbs": dict(
        nodes=2 + 1, tasks=2 * 4 + 1, cpus=2 * 8 + 1, walltime=4 * 3600, name="mixed",
        account="chem01", unknown=["-l place:scatter"], notes=["a job of 2 shapes"]),
    "pbs/pro_J_step_two_depend_afterany_two_ids.pbs": dict(
        nodes=1, tasks=1, cpus=2, memory_mb=4 * G, node_mem=4 * G, walltime=20 * 60,
        array="1-10:2", name="odds", deps=[("afterany", ["1234.pbs01", "1235.pbs01"])]),
    "pbs/pro_crlf_walltime_plain_seconds_mem_mb.pbs": dict(
        nodes=1, tasks=1, cpus=4, memory_mb=3000, walltime=5400, name="crlf", queue="short"),
    "pbs/torque_nodes_named_hosts_plus_ppn.pbs": dict(
        nodes=2, tasks=2 * 4, cpus=2 * 4, walltime=2 * 3600, name="hosts",
        notes=["hosts named here: n01, n02"]),
    "pbs/pro_v_quoted_list_V_r_n_p_priority.pbs": dict(
        nodes=1, tasks=1, cpus=1, walltime=300, name="vars", requeue=False, export_all=True,
        variables={"ALPHA": "1", "BETA": "two"}, unknown=["-p"]),
    "pbs/torque_tcsh_t_list_ranges_nodes_ppn_mem_walltime_one_l.pbs": dict(
        nodes=1, tasks=8, cpus=8, memory_mb=16 * G, walltime=90 * 60, array="1,3,5-7",
        name="tlist", shell="/bin/tcsh"),
    "pbs/pro_old_style_ncpus_ngpus_mem_job_wide.pbs": dict(
        cpus=4, gpus=1, memory_mb=16 * G, walltime=8 * 3600, queue="gpuq", needs_gpus=1,
        needs_mem=16 * G),
    "pbs/pro_host_chunk_place_pack_excl.pbs": dict(
        nodes=1, tasks=1, cpus=32, walltime=12 * 3600, name="onhost", exclusive=True,
        unknown=["-l select:host", "-l place:pack"]),
    # -- LSF
    "lsf/alloc_flags_smt4_nvme_nnodes_W_h_mm.lsf": dict(
        nodes=2, walltime=90 * 60, name="summit", account="AST123", stdout="summit.%j",
        unknown=["-alloc_flags"]),
    "lsf/n4_affinity_thread_two_times_four.lsf": dict(
        tasks=4, cpus=4, walltime=3600, name="thr", unknown=["-R affinity"]),
    "lsf/J_array_pct50_outdir_I_outputs.lsf": dict(
        walltime=20 * 60, array="1-1000%50", name="render", stdout="out/render.%j.%a.log",
        stderr="out/render.%j.%a.err", unknown=["-outdir"]),
    "lsf/w_done_and_started.lsf": dict(
        walltime=30 * 60, name="both", deps=[("afterok", ["1001"]), ("after", ["1002"])]),
    "lsf/crlf_R_select_type_q_M_plain.lsf": dict(
        tasks=1, cpus=1, memory_mb=2000, per_cpu=2000, walltime=2 * 3600, queue="normal",
        unknown=["-R select"], notes=["-M 2000 read as 2000MB per task"]),
    "lsf/tcsh_env_none_cwd_n2.lsf": dict(
        tasks=2, cpus=2, walltime=45 * 60, shell="/bin/tcsh",
        working_directory="/scratch/run3", export_all=False),
    "lsf/env_all_quoted_value_with_comma.lsf": dict(
        tasks=2, cpus=2, walltime=20 * 60, name="envq", export_all=True,
        variables={"TEST": "A, B", "MODE": "fast"}),
    "lsf/gpu_num2_shared_mps_span_hosts1.lsf": dict(
        nodes=1, tasks=2, cpus=2, gpus=2, walltime=3 * 3600, queue="gpu", needs_gpus=2,
        unknown=["-gpu mode", "-gpu mps"]),
    # -- Flux
    "flux/nslots_c_g_N_exclusive_hours.flux": dict(
        nodes=2, tasks=4, cpus=4 * 8, gpus=4, walltime=4 * 3600, name="slots", exclusive=True,
        needs_gpus=2),
    "flux/requires_property_queue_n8.flux": dict(
        tasks=8, cpus=8, walltime=30 * 60, queue="pbatch", features=["amd"]),
    "flux/setopt_mpi_conf_t_plain_minutes.flux": dict(
        nodes=1, tasks=4, cpus=4, walltime=20 * 60, unknown=["--setopt", "--conf"]),
    "flux/crlf_job_name_output_id_template.flux": dict(
        tasks=2, cpus=2, walltime=45 * 60, name="crlf", stdout="crlf.%j.out"),
    "flux/begin_time_iso_afterok_afternotok_lines.flux": dict(
        tasks=1, cpus=1, walltime=600, begin="2026-12-08T06:00:00",
        deps=[("afterok", ["123456"]), ("afternotok", ["123457"])]),
    "flux/signal_usr1_tasks_per_node_N2.flux": dict(
        nodes=2, tasks=2 * 4, cpus=2 * 4, walltime=2 * 3600, unknown=["--signal"]),
    # -- Grid Engine
    "sge/S_bash_mid_script_after_command.sge": dict(
        walltime=3600, name="mid", shell="/bin/bash",
        notes=["`#$ -S /bin/bash` after the first command is read too"]),
    "sge/l_gpu_one_pe_smp_binding_striding.sge": dict(
        nodes=1, cpus=8, gpus=1, walltime=4 * 3600, name="gstride", needs_gpus=1,
        unknown=["-binding"], notes=["Grid Engine gives 8 for the 8 slots"]),
    "sge/hold_jid_wildcard_name_cwd.sge": dict(
        walltime=600, name="after_prep", unknown=["-hold_jid"]),
    "sge/q_hostgroup_l_h_host_j_y.sge": dict(
        walltime=30 * 60, queue="all.q", unknown=["-l h"], notes=["(named here: @gpunodes)"]),
    "sge/pe_mpi_rr_32_R_y_h_vmem.sge": dict(
        tasks=32, cpus=32, memory_mb=32 * 2 * G, per_cpu=2 * G, walltime=86400, name="rr32",
        unknown=["-R"]),
    "sge/bom_crlf_l_h_rt_tmpfree.sge": dict(
        walltime=2 * 3600, name="bomcrlf", unknown=["-l tmpfree"]),
    "sge/v_vars_V_notify_m_n.sge": dict(
        walltime=300, name="vars", export_all=True, variables={"MODE": "fast", "LEVEL": "3"},
        unknown=["-notify"]),
}

test_every_fixture_has_expectations, test_parse_values, test_translates_or_reports = \
    sweep_tests(HERE, EXPECTED, fields=(*COMPARED_FIELDS, "shell"), strict=ALL_STRICT,
                at_least=33)


# ------------------------------------------------------- LSF -env values in single quotes

@pytest.mark.parametrize(("env", "variables", "export_all", "passed"), [
    ("all, TEST='A, B'", {"TEST": "A, B"}, True, []),  # bsub's example: a comma in a value
    ("TEST='A, B'", {"TEST": "A, B"}, False, []),
    ("all, MSG='a b', N=2", {"MSG": "a b", "N": "2"}, True, []),
    ("MSG='plain', HOME", {"MSG": "plain"}, False, ["HOME"]),
    ("all,X=1 ,Y=2", {"X": "1", "Y": "2"}, True, []),
])
def test_an_lsf_env_value_in_single_quotes_is_read_without_them(env, variables, export_all,
                                                                 passed):
    """Before: a quoted value with a comma left the list unread (kept; dropped elsewhere),
    and one without kept its quotes (`'a b'`)."""
    spec = parse_lines("lsf", f'#BSUB -W 60\n#BSUB -env "{env}"')
    e = spec.environment
    assert (e.variables, e.export_all, e.passed, spec.unknown) == (
        variables, export_all, passed, [])


@pytest.mark.parametrize("env", ["all, ~HOME", "X='open", "A,,B", "all, NAME"])
def test_an_lsf_env_list_not_read_is_kept_as_written(env):
    spec = parse_lines("lsf", f'#BSUB -W 60\n#BSUB -env "{env}"')
    assert [(d.option, d.value) for d in spec.unknown] == [("-env", env)]


@pytest.mark.parametrize("target", list(SCRIPT_DIALECTS))
def test_a_job_translated_from_lsf_sees_the_value_lsf_gives(target: str, tmp_path: Path):
    """What each target's job sees: the variables its scheduler sets from the translation's
    directives (read back), then its body (which may set some itself) run by bash."""
    text = ("#!/bin/bash\n#BSUB -W 60\n#BSUB -n 1\n"
            "#BSUB -env \"all, TEST='A, B', MSG='a b'\"\n"
            'printf "%s|%s" "$TEST" "$MSG" > seen\n')
    script, warnings, _ = translate(text, target, "lsf")
    assert not any("-env" in w for w in warnings), warnings
    given = get_script_dialect(target).parse_script(script).environment.variables
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "PBS_O_WORKDIR": str(tmp_path),
           **given}
    ran = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    assert (tmp_path / "seen").read_text() == "A, B|a b", script
