"""A sixth set of realistic batch scripts (tests/fixtures/scripts_unseen6/<dialect>/), on
what the first five sets left out: Slurm's srun --multi-prog with a heredoc holding an
`#SBATCH` line, --signal=B:USR1@300 with a trap and --requeue, --nice/--begin=now+1hour/
--comment, --deadline/--time-min/--priority, an array with a step and a throttle and
ARRAY_TASKS mail, a hetjob whose later component holds the GPUs, --threads-per-core/--tmp/
--mincpus, unique prefixes of long options, tabs and comments after options in a CRLF file
with a BOM, licenses with a reservation and a typed GPU count, torchrun on whole nodes with
--mem=0, a dependency on an array task, a quoted --export value and a lower-case memory
unit; PBS Pro's two-shape select with ompthreads, -J with a step and a list of afterany
ids, -v with a bare name beside -V, place=scatter:excl, -W sandbox; Torque's -t with a
throttle, gpus= with -l feature=, comma-joined -l lists with naccesspolicy and -W x=QOS;
LSF's quoted `name[1-100]%10`, done() && ended(name), rusage duration, -gpu with -M 16GB,
-c/-We/-b, -env "all, ...", -m host lists with -x and -oo; flux's bundled -N2 -n8 -c4 -g1,
--time-limit=2h with a bank and --env, a dependency with --exclusive, `# flux:` lines with
values after a space, --begin-time with -o cpu-affinity; Grid Engine's -hold_jid lists,
h_rt with s_rt, -P and -A, $JOB_ID/$TASK_ID paths with -t and -tc, -l gpu=1 with
all.q@host and -binding, -v lists beside -V, CRLF with mem_free, -ar and -r y. Each is
parsed, its needs read, translated into every dialect (its own too) and read back; the key
values are what each scheduler's documentation says."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from diamond_jupyter.dialects.translate import (
    SCRIPT_DIALECTS,
    get_script_dialect,
    request_totals,
    translate,
)
from diamond_jupyter.model import BadInput
from tests.scripts_unseen_check import (
    ALL_STRICT,
    check_translation,
    sweep_tests,
)

HERE = Path(__file__).parent / "fixtures" / "scripts_unseen6"
G = 1024  # MB in a GB

# As in test_scripts_unseen5: whole-job totals (every one checked, None when left out),
# walltime seconds, array, deps, the options kept as unknown directives (in order), JobSpec
# fields; `needs_gpus`/`needs_mem` per node (needs_of); `per_cpu` the spec's memory per CPU;
# `node_mem` the spec's memory per node; `notes` words a parse note must hold; `ignored`
# how many directives the reader noted as ignored (sbatch stops at the first command).
EXPECTED: dict[str, dict[str, Any]] = {
    # ---------------------------------------------------------------- Slurm
    # unique prefixes of long options (sbatch's getopt_long takes them)
    "slurm/abbreviated_unique_prefixes.sbatch": dict(
        nodes=2, tasks=8, cpus=64, walltime=7200, name="abbrev", queue="batch",
        account="proj7", mail_events=["fail"]),
    # 0-999 in steps of 4, at most 25 at once; --mem-per-cpu=3G x 2 CPUs
    "slurm/array_step_throttle_tasks_mail.sbatch": dict(
        tasks=1, cpus=2, memory_mb=2 * 3 * G, per_cpu=3 * G, walltime=1200,
        array="0-999:4%25", name="fastqc", stdout="logs/%x_%A_%a.out",
        stderr="logs/%x_%A_%a.err", mail_events=["end", "fail", "array_tasks"]),
    # a dependency on one task of an array (4711_7), read since the twelfth sweep (it was
    # kept whole); -t 15 is 15 minutes
    "slurm/array_task_dependency_kill.sbatch": dict(
        tasks=1, cpus=1, walltime=900, name="merge",
        deps=[("afterok", ["4711_7", "4712"])], unknown=["--kill-on-invalid-dep"]),
    # a BOM, CRLF, a tab after #SBATCH and comments after the values
    "slurm/crlf_bom_tab_comments.sbatch": dict(
        tasks=8, cpus=8, memory_mb=8 * 2000, per_cpu=2000, walltime=5400, name="win-edit",
        queue="short"),
    # --time=1-12 is a day and 12 hours
    "slurm/deadline_time_min_priority.sbatch": dict(
        tasks=16, cpus=16, walltime=36 * 3600, name="flex-window", queue="long",
        unknown=["--time-min", "--deadline", "--priority"]),
    # --mem=64g: a lower-case unit; --time=0-06 is 6 hours; a quoted value in --export
    "slurm/export_quoted_value_lower_mem.sbatch": dict(
        tasks=32, cpus=32, memory_mb=64 * G, needs_mem=64 * G, walltime=6 * 3600,
        name="lammps melt", working_directory="/scratch/bob/melt", export_all=True,
        variables={"RUN_LABEL": "melt 1500K", "NSTEPS": "200000"}),
    # only the first component maps; the GPU component is kept as written
    "slurm/hetjob_cpu_then_gpu.sbatch": dict(
        nodes=5, tasks=260, cpus=260, gpus=4, needs_gpus=4, walltime=7200, name="insitu-viz",
        queue="cpu", account="viz42",  # the gpu component read with its partition (tenth)
        notes=["heterogeneous job"]),
    "slurm/licenses_reservation_qos_gpu_type.sbatch": dict(
        nodes=1, tasks=32, cpus=32, gpus=2, needs_gpus=2, gpu_type="a100", walltime=8 * 3600,
        name="ansys-fluent", qos="high", reservation="cfd_course", unknown=["--licenses"]),
    # the heredoc's `#SBATCH --nodes=16` comes after the first command: sbatch ignores it
    "slurm/multi_prog_heredoc.sbatch": dict(
        nodes=2, tasks=64, cpus=64, walltime=3 * 3600, name="coupled-mp", queue="standard",
        account="climate01", ignored=1, notes=["after the first command"]),
    "slurm/nice_begin_comment.sbatch": dict(
        tasks=1, cpus=4, memory_mb=8 * G, needs_mem=8 * G, walltime=2700, name="prep-stage1",
        comment="preprocessing, stage 1 of 3", mail_events=["begin", "end"],
        mail_user="alice@uni.example", unknown=["--nice"]),
    "slurm/signal_trap_requeue.sbatch": dict(
        nodes=1, tasks=128, cpus=128, walltime=86400, name="cp2k-md", stdout="cp2k-%j.log",
        requeue=True, output_mode="append", unknown=["--signal"]),
    "slurm/threads_per_core_tmp_mincpus.sbatch": dict(
        nodes=1, tasks=16, cpus=16, memory_mb=64 * G, needs_mem=64 * G, walltime=2 * 86400,
        name="orca-opt", unknown=["--mincpus", "--threads-per-core", "--tmp"]),
    # --mem=0: all of each node's memory (no count); 8 GPUs on each of 4 nodes
    "slurm/torchrun_exclusive_mem0.sbatch": dict(
        nodes=4, tasks=4, cpus=4 * 96, gpus=32, needs_gpus=8, node_mem=0, walltime=48 * 3600,
        exclusive=True, name="llm-pretrain", queue="gpu", stdout="%x-%j.out"),
    # `cpu&milan`: both features
    "slurm/vasp_mem_per_cpu_constraint_and.sbatch": dict(
        nodes=4, tasks=512, cpus=512, memory_mb=512 * 1900, per_cpu=1900, walltime=86400,
        name="vasp_relax", account="chem-vasp", qos="regular", features=["cpu", "milan"]),
    # ---------------------------------------------------------------- PBS Pro / Torque
    "pbs/pro_array_step_depend_list.pbs": dict(
        nodes=1, tasks=1, cpus=2, memory_mb=4 * G, needs_mem=4 * G, walltime=1800,
        array="1-100:2", deps=[("afterany", ["1234.pbs01", "1235.pbs01"])],
        name="post_array", stdout="logs/"),
    # -m abe: abort, begin, end; -W sandbox has no neutral form
    "pbs/pro_gaussian_mail_rerun.pbs": dict(
        nodes=1, tasks=1, cpus=48, memory_mb=180 * G, needs_mem=180 * G, walltime=72 * 3600,
        name="g16_freq", mail_events=["fail", "begin", "end"],
        mail_user="chem.user@inst.example", requeue=False, unknown=["-W"]),
    # two chunk shapes, summed (a job of several shapes since the seventh sweep), noted
    "pbs/pro_multichunk_ompthreads_head.pbs": dict(
        nodes=3, tasks=33, cpus=136, walltime=6 * 3600, name="wrf_hybrid", queue="main",
        account="UCLM0042", unknown=["-l select:ompthreads"], notes=["(2 chunks)"]),
    "pbs/pro_place_scatter_excl_mem.pbs": dict(
        nodes=4, tasks=512, cpus=512, memory_mb=4 * 240 * G, needs_mem=240 * G,
        walltime=48 * 3600, exclusive=True, name="lammps_big", queue="regular",
        account="mat-sci", requeue=False, unknown=["-l place:scatter"]),
    # -v with values and a bare name (passed from qsub's environment), -V the whole one
    "pbs/pro_v_list_and_V.pbs": dict(
        nodes=1, tasks=1, cpus=8, memory_mb=16 * G, needs_mem=16 * G, walltime=7200,
        name="envpass", export_all=True,
        variables={"INPUT": "case7.dat", "NTHREADS": "8"}, passed=["SCRATCH"]),
    # one -l holding nodes, pmem and walltime (in seconds); Moab's naccesspolicy=singlejob
    # is the node to itself
    "pbs/torque_comma_joined_qos.pbs": dict(
        nodes=1, tasks=20, cpus=20, memory_mb=20 * 4 * G, per_cpu=4 * G, walltime=3600,
        exclusive=True, name="comma_joined", account="lab_account", unknown=["-W"]),
    "pbs/torque_crlf_bom_tab.pbs": dict(
        nodes=1, tasks=12, cpus=12, memory_mb=12 * 2 * G, per_cpu=2 * G, walltime=4 * 3600,
        name="crlf_job", queue="batch"),
    # gpus=2 per node; Moab's -l feature=k80 is a node feature
    "pbs/torque_t_throttle_gpus_feature.pbs": dict(
        nodes=2, tasks=16, cpus=16, gpus=4, needs_gpus=2, walltime=12 * 3600,
        array="1-10%2", name="amber_array", queue="gpu", mail_events=["fail", "end"],
        mail_user="md@lab.example", features=["k80"]),
    # ---------------------------------------------------------------- LSF
    # %J is the job id, %I the array index; -W 1:30 is H:M
    "lsf/array_throttle_quoted_name.lsf": dict(
        tasks=1, cpus=1, walltime=5400, array="1-100%10", name="sweep", queue="normal",
        stdout="out.%j.%a", stderr="err.%j.%a"),
    # -c (CPU time), -We (estimate) and -b (begin) kept; -N mails at the end
    "lsf/cpu_limit_estimate_begin.lsf": dict(
        tasks=4, cpus=4, walltime=4 * 3600, name="nightly", mail_events=["end"],
        mail_user="ops@site.example", unknown=["-We"]),
    # ended(NAME) names a job: no job id to translate, the whole condition kept
    "lsf/depend_done_and_ended_name.lsf": dict(
        tasks=2, cpus=2, walltime=1800, name="combine", unknown=["-w"]),
    "lsf/exclusive_ptile_hosts_list.lsf": dict(
        nodes=2, tasks=80, cpus=80, walltime=7200, exclusive=True, name="cfd_scaling",
        stdout="cfd.%j.out", output_mode="truncate", unknown=["-m"]),
    # -gpu num= is per host (2 hosts of 2 slots); -M 16GB is per process
    "lsf/gpu_exclusive_process_M_units.lsf": dict(
        nodes=2, tasks=4, cpus=4, gpus=4, needs_gpus=2, memory_mb=4 * 16 * G, per_cpu=16 * G,
        walltime=12 * 3600, name="pytorch_ddp", queue="gpu", account="ml_team",
        unknown=["-gpu mode"], notes=["-M 16GB"]),
    # rusage[mem] is per slot: 2GB x 16
    "lsf/orca_env_span_rusage_gb.lsf": dict(
        nodes=1, tasks=16, cpus=16, memory_mb=16 * 2 * G, per_cpu=2 * G, walltime=48 * 3600,
        name="orca_tddft", queue="long", account="chem", stdout="orca.%j.log",
        export_all=True, variables={"OMP_NUM_THREADS": "1"}),
    # rusage mem without a unit: MB; its duration= is kept
    "lsf/rusage_duration_span_hosts.lsf": dict(
        nodes=1, tasks=8, cpus=8, memory_mb=8 * 4000, per_cpu=4000, walltime=6 * 3600,
        name="star_align", queue="long", stdout="star.%j.out", unknown=["-R rusage"]),
    # ---------------------------------------------------------------- Flux
    "flux/begin_time_setopt_affinity.flux": dict(
        tasks=4, cpus=32, walltime=3600, unknown=["--setopt"]),
    # -N2 -n8 -c4 -g1: 8 slots of 4 cores and 1 GPU on 2 nodes
    "flux/bundled_short_gpu_time.flux": dict(
        nodes=2, tasks=8, cpus=32, gpus=8, needs_gpus=4, walltime=1800, name="gpu-short",
        queue="pbatch", unknown=["--urgency"]),
    # -N 1 without -n: one slot on a whole node
    "flux/dependency_afterok_queue_exclusive.flux": dict(
        nodes=1, tasks=1, cpus=1, walltime=600, exclusive=True, queue="pdebug",
        deps=[("afterok", ["fA7m2Pq9xUb"])]),
    # values after a space, `# flux:` with a blank
    "flux/space_prefix_long_values.flux": dict(
        nodes=2, tasks=32, cpus=64, walltime=5400, name="lammps_space"),
    "flux/time_limit_hours_bank_env.flux": dict(
        nodes=4, tasks=16, cpus=192, walltime=7200, name="cp2k-flux", account="chemlab",
        stdout="cp2k.%j.out", variables={"OMP_NUM_THREADS": "12"}),
    # ---------------------------------------------------------------- Grid Engine
    # $JOB_NAME/$JOB_ID/$TASK_ID in the paths; -tc is the array's running limit
    "sge/array_step_tc_task_paths.sge": dict(
        memory_mb=4 * G, per_cpu=4 * G, walltime=7200, array="1-100:10%5",
        name="blast_chunks", stdout="logs/%x.%j.%a.out", stderr="logs/%x.%j.%a.err"),
    # h_vmem per slot (4G x 8); mem_free (a load value to schedule by) kept
    "sge/crlf_mem_free_threaded.sge": dict(
        nodes=1, cpus=8, memory_mb=8 * 4 * G, per_cpu=4 * G, walltime=8 * 3600,
        name="crlf_threads", unknown=["-l mem_free"]),
    "sge/gpu_queue_host_binding.sge": dict(
        nodes=1, cpus=4, gpus=1, needs_gpus=1, walltime=12 * 3600, name="gmx_gpu",
        queue="all.q", unknown=["-binding"], notes=["node12"]),
    # -hold_jid with a wildcard names jobs: kept
    "sge/hold_wildcard_ar_rerun_mail.sge": dict(
        walltime=1800, name="collect", reservation="42", requeue=True,
        mail_events=["begin", "end", "fail"], mail_user="lab@uni.example",
        unknown=["-hold_jid"]),
    # -hold_jid by job names: kept; s_rt (the soft limit's warning) and -P kept
    "sge/pe_mpi_hold_list_soft_rt.sge": dict(
        tasks=32, cpus=32, walltime=3600, name="mpi_after_prep", account="grant42",
        unknown=["-hold_jid", "-l s_rt", "-P"]),
    "sge/v_list_V_cwd.sge": dict(
        nodes=1, cpus=8, walltime=3 * 3600, name="envjob", export_all=True,
        variables={"OMP_NUM_THREADS": "8", "INPUT": "data.txt"}),
}

_FIELDS = ("name", "queue", "account", "qos", "reservation", "stdout", "stderr", "requeue",
           "comment", "mail_events", "mail_user", "working_directory", "output_mode")


test_every_fixture_has_expectations, test_parse_values, test_translates_or_reports = \
    sweep_tests(HERE, EXPECTED, fields=_FIELDS, strict=ALL_STRICT)


# ---------------------------------------------------------------- faults found

@pytest.mark.parametrize(("lines", "per_chunk", "slot_mem"), [
    ("-n 32 --mem=64g", "select=32:ncpus=1:mpiprocs=1:mem=2gb", "rusage[mem=2GB]"),
    ("-n 4 --mem=8G", "select=4:ncpus=1:mpiprocs=1:mem=2gb", "rusage[mem=2GB]"),
    ("-n 2 -c 4 --mem=8G", "select=2:ncpus=4:mpiprocs=1:mem=4gb", "rusage[mem=4GB]"),
    ("-n 3 --mem=8G", "select=3:ncpus=1:mpiprocs=1:mem=2730mb", "rusage[mem=2730MB]"),
])
def test_memory_per_node_without_a_node_count_reaches_pbs_and_lsf(
        lines: str, per_chunk: str, slot_mem: str) -> None:
    """`#SBATCH -n 4 --mem=8G` (no --nodes: the tasks go where Slurm puts them, 8G on each
    node, read as one node's 8G) was refused by the PBS and LSF translations: each task's
    chunk (slot) asked for the whole 8G, 32G in all. Now the memory is shared by the tasks,
    rounded down (never more than asked), and reported."""
    text = f"#!/bin/bash\n#SBATCH {lines}\nsrun ./a\n"
    want = request_totals(get_script_dialect("slurm").parse_script(text))["memory_mb"]
    for target, line in (("pbs", f"#PBS -l {per_chunk}"), ("lsf", f'#BSUB -R "{slot_mem}')):
        script, warnings, _ = translate(text, target, "slurm")
        assert any(x.startswith(line) for x in script.splitlines()), script
        got = request_totals(get_script_dialect(target).parse_script(script))["memory_mb"]
        assert want - int(lines.split()[1]) < got <= want  # rounded down by under a task's MB
        assert any(w.startswith("approximated: memory") and "per node as" in w
                   for w in warnings), warnings
        check_translation(text, "slurm", target)
    # a node count keeps the node's memory on each node, as before
    one = translate("#!/bin/bash\n#SBATCH -N 1 -n 4 --mem=8G\nsrun ./a\n", "pbs", "slurm")[0]
    assert "#PBS -l select=1:ncpus=4:mpiprocs=4:mem=8gb" in one.splitlines()


def test_torque_node_exclusive_flag_is_read_back() -> None:
    """The PBS renderer writes a Torque job's exclusive nodes as `#PBS -n` (qsub -n, node
    exclusive), but the reader kept `-n` as an unknown option: a Torque script with
    naccesspolicy=singlejob came back from its own dialect not exclusive, with `-n` kept,
    and every other scheduler lost the exclusivity."""
    text = ("#!/bin/bash\n#PBS -l nodes=1:ppn=20,walltime=3600\n#PBS -l naccesspolicy=singlejob\n"
            "#PBS -W x=QOS:long\n./a\n")
    own = translate(text, "pbs", "pbs")[0]
    assert "#PBS -n" in own.splitlines()
    back = get_script_dialect("pbs").parse_script(own)
    assert back.constraints.exclusive is True and back.unknown == \
        get_script_dialect("pbs").parse_script(text).unknown
    spec = get_script_dialect("pbs").parse_script(
        "#!/bin/bash\n#PBS -l nodes=2:ppn=8\n#PBS -n\n./a\n")
    assert (spec.constraints.exclusive, spec.unknown) == (True, [])
    assert "#SBATCH --exclusive" in translate(
        "#!/bin/bash\n#PBS -l nodes=2:ppn=8\n#PBS -n\n./a\n", "slurm", "pbs")[0].splitlines()


@pytest.mark.parametrize(("dialect", "line", "value", "form"), [
    ("slurm", "#SBATCH --array=1-5:0", "1-5:0", "0-99:2%10"),
    ("slurm", "#SBATCH --array=0-15%0", "0-15%0", "0-99:2%10"),
    ("slurm", "#SBATCH -a 9-3", "9-3", "0-99:2%10"),
    ("pbs", "#PBS -J 5-1", "5-1", "1-100:2"),
    ("pbs", "#PBS -J 1-10:0", "1-10:0", "1-100:2"),
    ("pbs", "#PBS -t 1-4%0", "1-4%0", "1-10%2"),
    ("lsf", '#BSUB -J "scan[1-10:0]"', "scan[1-10:0]", "sweep[1-100:2]%10"),
    ("lsf", '#BSUB -J "scan[8-2]%2"', "scan[8-2]%2", "sweep[1-100:2]%10"),
    ("sge", "#$ -t 1-10:0", "1-10:0", "1-100:2"),
    ("sge", "#$ -t 10-1", "10-1", "1-100:2"),
])
def test_a_job_array_no_scheduler_runs_is_bad_input_naming_the_line(
        dialect: str, line: str, value: str, form: str) -> None:
    """A step or a running limit of 0, or a range that runs backwards, is refused by sbatch,
    qsub and bsub. The readers took it, and every translation (into the script's own
    dialect too) then failed with `array.expression '1-5:0' is not ...`, naming no line.
    Now bad input at the line, with the form its scheduler takes."""
    text = f"#!/bin/bash\n{line}\n./a\n"
    for call in (lambda: get_script_dialect(dialect).parse_script(text),
                 lambda: translate(text, dialect, dialect)):
        with pytest.raises(BadInput) as exc:
            call()
        msg = str(exc.value)
        assert msg.startswith(f"line 2: bad job array {value!r} in `{line}`"), msg
        assert msg.endswith(f"e.g. {form}"), msg


@pytest.mark.parametrize(("dialect", "lines", "limit"), [
    ("sge", "#$ -t 1-10\n#$ -tc 0", "-tc"),
    ("pbs", "#PBS -J 1-10\n#PBS -W max_run_subjobs=0", "max_run_subjobs"),
])
def test_a_running_limit_of_zero_is_bad_input(dialect: str, lines: str, limit: str) -> None:
    """Grid Engine's -tc and PBS Pro's max_run_subjobs asked for 'a positive integer' but
    took 0, making the array `1-10%0`, which no translation could write."""
    with pytest.raises(BadInput, match=rf"line 3: bad {limit}.*expected a positive integer"):
        get_script_dialect(dialect).parse_script(f"#!/bin/bash\n{lines}\n./a\n")


@pytest.mark.parametrize("value", ["afterok:12:", "afterok::12", "afterany:12,afterok:"])
def test_pbs_an_empty_job_id_in_a_dependency_is_kept_as_written(value: str) -> None:
    """`-W depend=afterok:12:` gave the job a dependency on the job '' (job_ids
    ['12', '']), written back as `afterok:12` everywhere, the script's own PBS included,
    without a word. Now kept as written, as Slurm's reader keeps an --dependency it cannot
    read, and reported elsewhere."""
    text = f"#!/bin/bash\n#PBS -W depend={value}\n./a\n"
    spec = get_script_dialect("pbs").parse_script(text)
    assert (spec.dependencies, [d.option for d in spec.unknown]) == ([], ["-W"])
    assert f"#PBS -W depend={value}" in translate(text, "pbs", "pbs")[0].splitlines()
    warnings = translate(text, "slurm", "pbs")[1]
    assert any(w.startswith(f"dropped: #PBS -W depend={value}") for w in warnings), warnings


@pytest.mark.parametrize(("value", "seconds"), [("2:00/hostA", 7200),
                                                ("120/Intel_Platinum", 7200)])
def test_lsf_run_limit_of_a_host_is_kept_and_said(value: str, seconds: int) -> None:
    """`-W 2:00/hostA` is a limit in hostA's time: LSF scales it by the CPU factor of the
    host the job runs on. The reader took 2 hours and dropped the host without a word, so
    the script's own LSF got a plain `-W 2:00` back (a different limit on a faster or
    slower host). Now the host stays on the LSF round trip and every translation says the
    limit is taken as written."""
    text = f"#!/bin/bash\n#BSUB -n 1\n#BSUB -W {value}\n./a\n"
    spec = get_script_dialect("lsf").parse_script(text)
    assert spec.resources.walltime_s == seconds
    own, warnings, _ = translate(text, "lsf", "lsf")
    host = value.split("/")[1]
    assert f"#BSUB -W 2:00/{host}" in own.splitlines()
    for target in ("slurm", "pbs"):
        warnings = translate(text, target, "lsf")[1]
        assert any(w.startswith("approximated: line 3: -W") and f"{host}'s CPU factor" in w
                   and "get the limit as written" in w for w in warnings), warnings
    # a later -W without a host replaces it, as bsub keeps the last
    later = translate(text.replace("./a", "#BSUB -W 30\n./a"), "lsf", "lsf")[0]
    assert [x for x in later.splitlines() if x.startswith("#BSUB -W")] == ["#BSUB -W 0:30"]
    with pytest.raises(BadInput, match=r"line 3: bad run limit '2:00/' .*host_model"):
        get_script_dialect("lsf").parse_script("#!/bin/bash\n#BSUB -n 1\n#BSUB -W 2:00/\n./a\n")


@pytest.mark.parametrize(("lines", "select", "nodes"), [
    ("-n 6 --ntasks-per-node=4 --mem=8G",
     "select=1:ncpus=4:mpiprocs=4:mem=8gb+1:ncpus=2:mpiprocs=2:mem=8gb",
     "nodes=1:ppn=4+1:ppn=2"),
    ("-N 2 -n 5", "select=1:ncpus=3:mpiprocs=3+1:ncpus=2:mpiprocs=2", "nodes=1:ppn=3+1:ppn=2"),
    ("-n 6 --ntasks-per-node=4 --gpus-per-node=2",
     "select=1:ncpus=4:mpiprocs=4:ngpus=2+1:ncpus=2:mpiprocs=2:ngpus=2",
     "nodes=1:ppn=4:gpus=2+1:ppn=2:gpus=2"),
])
def test_tasks_that_leave_a_node_part_filled_reach_pbs(lines: str, select: str,
                                                       nodes: str) -> None:
    """`-n 6 --ntasks-per-node=4` (Slurm places 4 + 2) had no PBS form: one chunk shape for
    every node asked for 8 tasks, and the translation was refused; a PBS script's own
    `nodes=2:ppn=16+1:ppn=4` was read as 3 nodes of 16 (48 tasks, not 36). Now full chunks
    and one with the rest, read back as the same tasks."""
    text = f"#!/bin/bash\n#SBATCH {lines}\nsrun ./a\n"
    spec = get_script_dialect("slurm").parse_script(text)
    script = translate(text, "pbs", "slurm")[0]
    assert f"#PBS -l {select}" in script.splitlines()
    back = get_script_dialect("pbs").parse_script(script)
    assert request_totals(back) == request_totals(spec)
    assert not back.metadata.get("parse_notes")  # exact: no superset note
    torque = get_script_dialect("pbs").parse_script(f"#!/bin/bash\n#PBS -l {nodes}\n./a\n")
    assert request_totals(torque) == request_totals(spec) | {"memory_mb": None}  # no mem
    for target in SCRIPT_DIALECTS:
        check_translation(text, "slurm", target)
    # chunks that differ otherwise are a job of several shapes (seventh sweep), said so
    odd = get_script_dialect("pbs").parse_script(
        "#!/bin/bash\n#PBS -l select=1:ncpus=4:mpiprocs=4:mem=8gb+1:ncpus=2:mpiprocs=2\n./a\n")
    assert request_totals(odd)["tasks"] == 6
    assert any("(2 chunks)" in n for n in odd.metadata["parse_notes"])


@pytest.mark.parametrize("line", ["#$ -l exclusive", "#$ -l h_rt=1:00:00,excl",
                                  "#$ -l exclusive=TRUE"])
def test_sge_exclusive_without_a_value_is_exclusive(line: str) -> None:
    """A Grid Engine BOOL complex requested without a value is requested TRUE: `-l
    exclusive` (or `excl` in a list) asks for the host to itself, as `exclusive=true` does.
    It was kept as an unknown option, so Slurm, PBS, LSF and flux shared the node."""
    text = f"#!/bin/bash\n#$ -pe smp 8\n{line}\n./a\n"
    spec = get_script_dialect("sge").parse_script(text)
    assert (spec.constraints.exclusive, spec.unknown) == (True, [])
    assert "#SBATCH --exclusive" in translate(text, "slurm", "sge")[0].splitlines()
    check_translation(text, "sge", "sge")
    no = get_script_dialect("sge").parse_script(text.replace(line, "#$ -l exclusive=false"))
    assert no.constraints.exclusive is False


@pytest.mark.parametrize(("lines", "features", "kept"), [
    ("#PBS -l nodes=2:ppn=8\n#PBS -l feature=k80", ["k80"], []),
    ("#PBS -l feature=haswell\n#PBS -l nodes=1:ppn=4", ["haswell"], []),  # before nodes=
    ("#PBS -l nodes=1:ppn=4:ib\n#PBS -l feature=ib", ["ib"], []),
    ("#PBS -l nodes=1:ppn=4\n#PBS -l feature='a|b'", [], ["-l"]),  # a list: kept
])
def test_moab_feature_is_a_node_feature(lines: str, features: list[str],
                                        kept: list[str]) -> None:
    """Torque sites under Moab take `-l feature=k80` for a node feature, as a `nodes=`
    property: it was kept as an unknown `-l`, so Slurm got no --constraint and placement
    did not ask for the feature."""
    from diamond_jupyter.needs import needs_of

    text = f"#!/bin/bash\n{lines}\n./a\n"
    spec = get_script_dialect("pbs").parse_script(text)
    assert spec.constraints.features == features
    assert [d.option for d in spec.unknown] == kept
    if features:
        assert f"#SBATCH --constraint={features[0]}" in translate(text, "slurm", "pbs")[0]
        assert needs_of(spec).constraint == features[0]
    for target in SCRIPT_DIALECTS:
        check_translation(text, "pbs", target)


@pytest.mark.parametrize("lines", ["#BSUB -N\n#BSUB -B", "#BSUB -B -N", "#BSUB -N -B -N"])
def test_lsf_mail_flags_in_any_order_round_trip(lines: str) -> None:
    """-B (mail at the start) and -N (at the end) are two flags: `-N` written before `-B`
    was read as ['end', 'begin'] and came back from LSF's own translation as ['begin',
    'end'] (a different job to every check), a repeated flag as the event twice."""
    text = f"#!/bin/bash\n#BSUB -n 1\n{lines}\n./a\n"
    spec = get_script_dialect("lsf").parse_script(text)
    assert spec.mail_events == ["begin", "end"]
    check_translation(text, "lsf", "lsf")
