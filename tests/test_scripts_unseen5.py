"""A fifth set of realistic batch scripts (tests/fixtures/scripts_unseen5/<dialect>/), on
what the first four sets left out: Slurm's --ntasks-per-gpu with --gpu-bind, `a100&ib` and
`[rack1|rack2]` constraints, sockets and cores per socket, --export=ALL with variables,
--get-user-env, directives after the first command, values after a space, a job's --gpus
beside --gpus-per-task, a list of partitions; Torque's named hosts joined by `+`, pmem and
vmem, a job-wide mem, gpus= with group_list and umask, afterokarray; PBS Pro's -r n, -k oed,
a host in a chunk, ompthreads; LSF's -nnodes with -alloc_flags (Summit), affinity[core(N)],
select/order strings, -x -G -L -cwd -outdir, -app with -P, -We, dependencies by job name;
Flux's --exclusive with a queue, gpu/cpu affinity shell options, {{id}} in the output,
decimal hours, `flux submit` in the body; Grid Engine's exclusive=true with mem_free,
-masterq, -ckpt with -notify, a decimal h_vmem, an odd job name, a comma list of limits.
Each is parsed, its needs read, translated into every dialect (its own too) and read back;
the key values are what each scheduler's documentation says."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from diamond_jupyter.dialects.translate import (
    SCRIPT_DIALECTS,
    get_script_dialect,
    request_totals,
    translate,
)
from diamond_jupyter.needs import needs_of
from tests.scripts_unseen_check import (
    ALL_STRICT,
    check_translation,
    fixture_scripts,
    read_fixture,
    sweep_tests,
)

HERE = Path(__file__).parent / "fixtures" / "scripts_unseen5"
G = 1024  # MB in a GB

# As in test_scripts_unseen4.EXPECTED: whole-job totals, walltime seconds, array, deps, the
# options kept as unknown directives, JobSpec fields; `needs_gpus`/`needs_mem` per node
# (needs_of); `per_cpu` the spec's memory per CPU.
EXPECTED: dict[str, dict[str, Any]] = {
    # ---------------------------------------------------------------- Slurm
    # one task per GPU: 2 nodes x 4 GPUs = 8 tasks of 32 CPUs (NERSC Perlmutter style)
    "slurm/ntasks_per_gpu_bind_closest.sbatch": dict(
        nodes=2, tasks=8, cpus=256, gpus=8, needs_gpus=4, walltime=7200, name="lammps-kk",
        account="m4321_g", qos="regular", features=["gpu"]),
    # `&` is AND: both features; 60G for each of the node's 4 GPUs
    "slurm/constraint_and_mem_per_gpu.sbatch": dict(
        nodes=1, tasks=4, cpus=4, gpus=4, needs_gpus=4, memory_mb=4 * 60 * G,
        needs_mem=4 * 60 * G, walltime=12 * 3600, name="bert-finetune", queue="gpu",
        stdout="%x-%j.out", features=["a100", "ib"]),
    # a matching OR in brackets: every node from one rack, kept as one expression
    "slurm/constraint_rack_brackets_switches.sbatch": dict(
        nodes=8, tasks=512, cpus=512, walltime=4 * 3600, name="allreduce-bench",
        queue="compute", features=["[rack1|rack2]"], unknown=["--switches"]),
    "slurm/block_cyclic_sockets_cores.sbatch": dict(
        nodes=2, tasks=32, cpus=32, memory_mb=3850 * 32, per_cpu=3850, walltime=8 * 3600,
        queue="parallel",
        unknown=["--ntasks-per-socket", "--sockets-per-node", "--cores-per-socket", "--hint"]),
    "slurm/nodelist_exclude_ranges.sbatch": dict(
        nodes=3, tasks=48, cpus=48, walltime=1800, name="hosttest",
        unknown=["--nodelist", "--exclude"]),
    # ALL plus variables: the whole environment and two more
    "slurm/export_all_with_vars.sbatch": dict(
        tasks=1, cpus=8, memory_mb=16 * G, needs_mem=16 * G, walltime=3 * 3600,
        account="def-smithj", export_all=True,
        variables={"OMP_NUM_THREADS": "8", "CASE": "run42"}),
    "slurm/get_user_env_export_none.sbatch": dict(
        tasks=1, cpus=2, memory_mb=4000, per_cpu=2000, walltime=3600, name="cleanenv",
        export_all=False, unknown=["--get-user-env"]),
    # sbatch stops reading directives at the first command
    "slurm/directives_after_first_command.sbatch": dict(
        tasks=4, cpus=4, walltime=1200, name="late", notes=["after the first command"]),
    # `--time 2-00` is two days; --mem without a unit is megabytes, per node
    "slurm/space_separated_values.sbatch": dict(
        nodes=2, tasks=48, cpus=48, memory_mb=2 * 32000, needs_mem=32000,
        walltime=2 * 86400, name="spaced", queue="long", account="chem101"),
    "slurm/plain_megabytes_chdir.sbatch": dict(
        tasks=16, cpus=16, memory_mb=1536, walltime=5400, name="qe-relax",
        stdout="%x-%j.out", stderr="%x-%j.err", working_directory="/scratch/alice/qe/relax"),
    # -G 8 is the job's 8 (one per task), not 8 per node; 8 CPUs for each task's GPU
    "slurm/gpus_total_per_task_cpus_per_gpu.sbatch": dict(
        nodes=2, tasks=8, cpus=64, gpus=8, needs_gpus=4, walltime=86400,
        name="gromacs-multi", queue="gpu"),
    "slurm/tmp_disk_comment_mail_all.sbatch": dict(
        tasks=1, cpus=32, memory_mb=200 * G, walltime=3 * 86400, name="assembly",
        mail_events=["all"], mail_user="bio@univ.example", unknown=["--tmp"]),
    "slurm/partition_list_requeue.sbatch": dict(
        nodes=1, tasks=2, cpus=2, gpus=2, needs_gpus=2, memory_mb=64 * G, walltime=6 * 3600,
        name="preemptible", queue="gpu,gpu-preempt", requeue=True),
    "slurm/ntasks_per_socket_hint_multithread.sbatch": dict(
        nodes=1, tasks=4, cpus=112, walltime=12 * 3600, account="geo-alloc",
        exclusive=True, unknown=["--ntasks-per-socket", "--hint"]),
    # ---------------------------------------------------------------- PBS Pro / Torque
    # two named hosts of 4 processors each: 2 nodes, 8 tasks, the names noted
    "pbs/torque_named_hosts_plus.pbs": dict(
        nodes=2, tasks=8, cpus=8, walltime=7200, name="hostpair", queue="batch",
        notes=["node01, node02"]),
    # pmem is per process (2gb x 16); vmem has no neutral form
    "pbs/torque_pmem_vmem.pbs": dict(
        nodes=2, tasks=16, cpus=16, memory_mb=2 * G * 16, per_cpu=2 * G, walltime=36000,
        name="cfd_pmem", account="cfd_lab", unknown=["-l"]),
    "pbs/torque_gpus_group_umask.pbs": dict(
        nodes=1, tasks=6, cpus=6, gpus=2, needs_gpus=2, walltime=86400, name="amber_gpu",
        queue="gpu", unknown=["-W", "-W"]),
    "pbs/pro_rerun_keep_oed_dir.pbs": dict(
        nodes=1, tasks=1, cpus=16, memory_mb=32 * G, needs_mem=32 * G, walltime=4 * 3600,
        name="nonrerun", stdout="/scratch/bob/logs/", requeue=False, unknown=["-k", "-P"]),
    # Torque's -l mem is the job's: 64gb over 2 nodes
    "pbs/torque_job_mem_total.pbs": dict(
        nodes=2, tasks=32, cpus=32, memory_mb=64 * G, needs_mem=32 * G, walltime=12 * 3600,
        name="memjob", mail_events=["fail", "end"], mail_user="lab@uni.example"),
    "pbs/pro_host_bigmem.pbs": dict(
        nodes=1, tasks=1, cpus=64, memory_mb=480 * G, needs_mem=480 * G,
        walltime=72 * 3600, name="bigmem_assembly", queue="bigmem", account="BIO0007",
        unknown=["-l select:host"]),
    # afterokarray (Torque): the array's afterok (sweep 15; it was kept unread)
    "pbs/torque_array_afterokarray.pbs": dict(
        nodes=1, tasks=1, cpus=1, walltime=1800, array="1-20%5", name="reduce_step",
        deps=[("afterok", ["1234[]"])]),
    "pbs/pro_hybrid_ompthreads_mpiprocs.pbs": dict(
        nodes=4, tasks=32, cpus=512, memory_mb=4 * 200 * G, needs_mem=200 * G,
        walltime=6 * 3600, name="hybrid_cesm", queue="main", account="UCSU0099",
        mail_events=["fail", "begin", "end"], mail_user="climate@ucar.example",
        unknown=["-l select:ompthreads"]),
    # ---------------------------------------------------------------- LSF
    # -nnodes: whole nodes (CSM on Summit); -W H:M
    "lsf/summit_nnodes_alloc_flags.lsf": dict(
        nodes=4, walltime=7200, name="gtc_run", account="CSC999", stdout="gtc_run.%j",
        stderr="gtc_run.%j", unknown=["-alloc_flags"]),
    # affinity[core(4)]: 4 cores for each of the 16 tasks
    "lsf/affinity_select_order_span.lsf": dict(
        nodes=1, tasks=16, cpus=64, walltime=6 * 3600, name="omp_affinity", queue="normal",
        stdout="%j.out", unknown=["-R select", "-R order"]),
    "lsf/exclusive_group_login_cwd_outdir.lsf": dict(
        tasks=32, cpus=32, walltime=12 * 3600, exclusive=True, name="exclusive_run",
        stdout="%j.log", working_directory="/scratch/carol/run1", unknown=["-G", "-L", "-outdir"]),
    "lsf/app_project_gpu_exclusive_process.lsf": dict(
        nodes=1, tasks=2, cpus=2, gpus=2, needs_gpus=2, walltime=8 * 3600, name="tf_gpu",
        queue="gpu", account="ml_proj", stdout="tf.%j.out", unknown=["-app", "-gpu mode"]),
    # rusage[mem] is per slot (4GB x 8); -M is a per-process limit, kept
    "lsf/rusage_mem_per_slot_limit.lsf": dict(
        nodes=1, tasks=8, cpus=8, memory_mb=8 * 4 * G, per_cpu=4 * G, walltime=4 * 3600,
        name="bwa_map", queue="long", stdout="bwa.%j.out", stderr="bwa.%j.err",
        unknown=["-M"]),
    # a dependency on job names with a wildcard: no job ids, kept
    "lsf/depend_by_name_wildcard.lsf": dict(
        tasks=1, cpus=1, walltime=1800, name="merge_all", queue="short", unknown=["-w"]),
    # -W 30 is minutes; -We (the estimate) kept; -N mails at the end
    "lsf/runtime_estimate_minutes.lsf": dict(
        tasks=4, cpus=4, walltime=1800, name="quick_check", queue="short",
        mail_events=["end"], mail_user="ops@site.example", unknown=["-We"]),
    # ---------------------------------------------------------------- Flux
    "flux/exclusive_queue_gpu_affinity.flux": dict(
        nodes=2, tasks=8, cpus=96, gpus=8, needs_gpus=4, walltime=3 * 3600, exclusive=True,
        name="amr-gpu", queue="pbatch"),
    # {{id}} is the job id; the body's flux submit lines stay as they are
    "flux/body_submit_run_id_output.flux": dict(
        nodes=1, tasks=4, cpus=8, walltime=3600, name="ensemble", stdout="ensemble-%j.out"),
    # FSD takes a decimal: 1.5h is 5400 s
    "flux/decimal_hours_time_limit.flux": dict(
        nodes=1, tasks=4, cpus=8, walltime=5400, queue="pdebug"),
    # --env=-* clears the environment; --env=PATH passes PATH from the submitting shell
    "flux/cpu_affinity_env_clear.flux": dict(
        nodes=2, tasks=4, cpus=32, gpus=4, needs_gpus=2, walltime=4 * 3600,
        export_all=False, passed=["PATH"]),
    # -t 30 is minutes (flux batch)
    "flux/whole_node_debug_loop.flux": dict(
        nodes=1, tasks=1, cpus=48, walltime=1800, name="sweep-driver", queue="pdebug"),
    # ---------------------------------------------------------------- Grid Engine
    "sge/exclusive_true_mem_free_smp.sge": dict(
        nodes=1, cpus=16, walltime=86400, exclusive=True, name="smp_exclusive",
        memory_mb=256 * G, per_cpu=16 * G),
    # h_vmem is per slot: 2G x 32
    "sge/masterq_mpi_hvmem_per_slot.sge": dict(
        tasks=32, cpus=32, memory_mb=2 * G * 32, per_cpu=2 * G, walltime=8 * 3600,
        name="mpi_masterq", queue="big.q", unknown=["-masterq"]),
    "sge/ckpt_notify_rerun.sge": dict(
        memory_mb=4 * G, walltime=72 * 3600, name="long_ckpt", stdout="logs/",
        requeue=True, unknown=["-ckpt", "-notify"]),
    # Grid Engine's memory values take a decimal: 2.5G is 2560M per slot
    "sge/decimal_h_vmem.sge": dict(
        nodes=1, cpus=4, memory_mb=4 * 2560, per_cpu=2560, walltime=7200,
        name="decimal_mem"),
    "sge/odd_job_name.sge": dict(
        memory_mb=G, walltime=2700, name="run-3.x_final+v2", export_all=True),
    # h_rt and h_vmem in one comma list; s_rt (the soft limit's warning) kept
    "sge/hard_limit_list_arch.sge": dict(
        nodes=1, cpus=8, memory_mb=8 * 4 * G, per_cpu=4 * G, walltime=48 * 3600,
        name="limit_list", mail_events=["begin", "end", "fail"],
        mail_user="hpc.user@inst.example", architecture="x86_64", unknown=["-l s_rt"]),
}

SCRIPTS = fixture_scripts(HERE)
_FIELDS = ("name", "queue", "account", "qos", "reservation", "stdout", "stderr", "requeue",
           "mail_events", "mail_user", "working_directory")


# every default checked but the count of ignored directives (the notes say which)
_STRICT = tuple(k for k in ALL_STRICT if k != "ignored")


test_every_fixture_has_expectations, test_parse_values, test_translates_or_reports = \
    sweep_tests(HERE, EXPECTED, fields=_FIELDS, strict=_STRICT)


# ---------------------------------------------------------------- faults found

@pytest.mark.parametrize(("lines", "gpus", "per_node", "cpus"), [
    ("-N 2 -n 8 -G 8 --gpus-per-task=1", 8, 4, 8),
    ("-N 2 -n 8 --gpus-per-task=1 -G 8", 8, 4, 8),  # either order
    ("-n 8 -G 8 --gpus-per-task=1", 8, 1, 8),  # no node count: --gpus kept as written
    ("-N 1 -n 2 --gpus=4 --gpus-per-task=2", 4, 4, 4),
])
def test_slurm_job_gpus_beside_gpus_per_task(lines: str, gpus: int, per_node: int | None,
                                              cpus: int) -> None:
    """`--gpus=N` (the job's total) followed by `--gpus-per-task`: the per-task option
    dropped the total's pending spread, so the 8 GPUs were read as 8 per node (16 on 2
    nodes, placement and every translation asking twice the GPUs) and --cpus-per-gpu gave
    16 CPUs a task."""
    text = f"#!/bin/bash\n#SBATCH {lines}\n#SBATCH --cpus-per-gpu=1\nsrun x\n"
    spec = get_script_dialect("slurm").parse_script(text)
    totals = request_totals(spec)
    assert totals["gpus"] == gpus
    assert totals["cpus"] == cpus
    assert needs_of(spec).gpus == per_node
    for target in SCRIPT_DIALECTS:
        check_translation(text, "slurm", target)


@pytest.mark.parametrize(("target", "line", "warned"), [
    ("slurm", "#SBATCH --partition=gpu,gpu-preempt", False),
    ("sge", "#$ -q gpu,gpu-preempt", False),  # a comma list of queues
    ("lsf", '#BSUB -q "gpu gpu-preempt"', False),  # bsub's list: quoted, space separated
    ("pbs", "#PBS -q gpu", True),  # one queue only: the first, reported
    ("flux", "#flux: --queue=gpu", True),
])
def test_a_list_of_partitions_in_each_schedulers_form(target: str, line: str,
                                                      warned: bool) -> None:
    """`--partition=gpu,gpu-preempt` (any of them) went everywhere as one queue named
    `gpu,gpu-preempt`: no PBS, LSF or flux queue has that name, so the job was refused at
    submission. LSF gets its quoted list; PBS and flux, which take one queue, the first
    with a warning naming the list."""
    _, text = read_fixture(HERE, "slurm/partition_list_requeue.sbatch")
    script, warnings, _ = translate(text, target, "slurm")
    assert line in script.splitlines()
    assert any("queue list gpu,gpu-preempt as the queue gpu" in w
               for w in warnings) is warned
    back = get_script_dialect(target).parse_script(script)
    assert back.queue == ("gpu" if warned else "gpu,gpu-preempt")


def test_lsf_queue_list_is_read_as_any_of_them() -> None:
    """bsub -q "short normal": either queue. It was one queue named `short normal`, which
    Slurm read as a partition name with a space."""
    text = '#!/bin/bash\n#BSUB -q "short normal"\n#BSUB -n 1\n./x\n'
    assert get_script_dialect("lsf").parse_script(text).queue == "short,normal"
    assert "#SBATCH --partition=short,normal" in translate(text, "slurm", "lsf")[0]
    check_translation(text, "lsf", "lsf")


@pytest.mark.parametrize(("dialect", "line", "what"), [
    ("slurm", "#SBATCH --mem=1.5G", "1.5G"),
    ("slurm", "#SBATCH --mem-per-cpu=2.5g", "2.5g"),
    ("slurm", "#SBATCH -G 1 --mem-per-gpu=0.5T", "0.5T"),
    ("slurm", "#SBATCH --mem=1.5", "1.5"),  # megabytes: 2 was asked
    ("slurm", "#SBATCH --mem=1P", "1P"),  # sbatch's units stop at T
    ("pbs", "#PBS -l select=1:ncpus=4:mem=1.5gb", "mem=1.5gb"),
    ("pbs", "#PBS -l nodes=1:ppn=2,pmem=2.5gb", "pmem=2.5gb"),
    ("pbs", "#PBS -l mem=0.5tb", "mem=0.5tb"),
])
def test_a_fraction_of_a_unit_is_refused_where_the_scheduler_refuses_it(
        dialect: str, line: str, what: str) -> None:
    """sbatch and qsub take a whole number with a unit: `--mem=1.5G` is "Invalid --mem
    specification", PBS's size an integer. The readers took 1.5G as 1536M and translated a
    script its own scheduler refuses; now bad input naming the value, the line and the form
    that works."""
    from diamond_jupyter.model import BadInput

    with pytest.raises(BadInput, match=rf"line 2: bad mem.*{what!r}.*expected a whole number"
                                       r".*no fraction"):
        get_script_dialect(dialect).parse_script(f"#!/bin/bash\n{line}\n./x\n")


@pytest.mark.parametrize(("dialect", "line", "mb"), [
    ("slurm", "#SBATCH --mem=16GB", 16 * G),  # an optional B after the unit
    ("slurm", "#SBATCH --mem=1536", 1536),
    ("pbs", "#PBS -l select=1:ncpus=4:mem=1536mb", 1536),
    ("sge", "#$ -l h_vmem=2.5G", 2560),  # Grid Engine takes a fraction: kept exact
    ("lsf", '#BSUB -R "rusage[mem=2.5GB]"', 2560),
])
def test_whole_and_accepted_sizes_still_read(dialect: str, line: str, mb: int) -> None:
    spec = get_script_dialect(dialect).parse_script(f"#!/bin/bash\n{line}\n./x\n")
    assert request_totals(spec)["memory_mb"] == mb
    # written out elsewhere as a whole number of a unit the other side takes
    for target in ("slurm", "pbs"):
        out = translate(f"#!/bin/bash\n{line}\n./x\n", target, dialect)[0]
        assert "." not in "".join(x for x in out.splitlines() if "mem" in x), out
        assert request_totals(get_script_dialect(target).parse_script(out))["memory_mb"] == mb


@pytest.mark.parametrize("target", ["slurm", "pbs", "flux", "sge"])
def test_jsrun_lines_are_reported_elsewhere(target: str) -> None:
    """jsrun (and lrun) exist only under LSF on IBM systems (Summit, Sierra): a Summit
    script's `jsrun -n 24 ...` reached Slurm, PBS, flux and Grid Engine unchanged and
    unreported, to fail there with `jsrun: command not found`."""
    from diamond_jupyter.dialects.body import translate_body

    _, text = read_fixture(HERE, "lsf/summit_nnodes_alloc_flags.lsf")
    script, warnings, _ = translate(text, target, "lsf")
    assert "jsrun -n 24 -a 1 -c 7 -g 1 --bind=packed:7 ./gtc" in script  # kept as written
    assert any(w.startswith("kept: line") and "jsrun" in w and target in w
               for w in warnings), warnings
    out, notes = translate_body("time lrun -T 4 ./a\nexport JSRUN=1\n", "lsf", target)
    assert len(notes) == 1 and "lrun" in notes[0] and notes[0].startswith("kept: line 1")
    assert translate_body("jsrun -n 4 ./a\n", "lsf", "lsf") == ("jsrun -n 4 ./a\n", [])


@pytest.mark.parametrize(("source", "lines", "out", "err"), [
    ("pbs", "#PBS -l select=1:ncpus=1\n#PBS -j oe\n#PBS -o /scratch/bob/logs/",
     "/scratch/bob/logs/%x.o%j", None),
    ("pbs", "#PBS -l select=1:ncpus=1\n#PBS -o out/\n#PBS -e err/", "out/%x.o%j",
     "err/%x.e%j"),
    ("sge", "#$ -pe smp 2\n#$ -j y\n#$ -o logs/", "logs/%x.o%j", None),
    ("lsf", "#BSUB -n 1\n#BSUB -o logs/\n#BSUB -e logs/", "logs/%j.out", "logs/%j.err"),
])
def test_an_output_directory_becomes_a_file_where_only_files_are_taken(
        source: str, lines: str, out: str, err: str | None) -> None:
    """PBS, Grid Engine and LSF write their default file into a directory given as -o/-e;
    Slurm and flux open the path as a file: `--output=/scratch/bob/logs/` failed with "Is a
    directory" and the job's output was lost. They now get the source's default name in
    that directory, reported; the source's own dialect keeps the directory."""
    text = f"#!/bin/bash\n{lines}\n./x\n"
    script, warnings, _ = translate(text, "slurm", source)
    back = get_script_dialect("slurm").parse_script(script)
    assert (back.stdout, back.stderr) == (out, err)
    assert any(w.startswith(f"approximated: stdout directory {out.rsplit('/', 1)[0]}/")
               for w in warnings), warnings
    flux = translate(text, "flux", source)[0]
    assert f"--output={out.replace('%x', '{{name}}').replace('%j', '{{id}}')}" in flux
    own = get_script_dialect(source).parse_script(translate(text, source, source)[0])
    assert own.stdout.endswith("/")


@pytest.mark.parametrize(("constraint", "requires", "reported"), [
    ("[rack1|rack2]", "(rack1|rack2)", ["as (rack1|rack2)"]),
    ("a100|h100", "a100|h100", []),  # an OR per node: flux's own `|`
    # two nodes with ib and two with eth (sbatch's multiple counts): each node has one of
    # them (sweep 15: it was `(ib&eth)`, every node both)
    ("[ib*2&eth*2]", "(ib|eth)", ["(so many nodes with each)", "node counts in constraint"]),
    ("a100&ib", None, []),  # two features: two --requires
])
def test_slurm_constraint_expressions_reach_flux_in_its_query_syntax(
        constraint: str, requires: str | None, reported: list[str]) -> None:
    """`-C "[rack1|rack2]"` (every node from the same rack) went to flux as
    `--requires=[rack1|rack2]`, which its constraint syntax (RFC 35: names, `|`, `&`,
    parentheses) does not take; node counts (`ib*2`) likewise. Now the nearest query,
    reported as LSF's translation is."""
    text = f'#!/bin/bash\n#SBATCH -N 4\n#SBATCH -C "{constraint}"\nsrun x\n'
    script, warnings, _ = translate(text, "flux", "slurm")
    got = [x for x in script.splitlines() if x.startswith("#flux: --requires")]
    if requires is None:
        assert got == ["#flux: --requires=a100", "#flux: --requires=ib"]
    else:
        assert got == [f'#flux: --requires="{requires}"'] or \
            got == [f"#flux: --requires={requires}"], got
    assert not any("[" in x or "*" in x for x in got)
    for words in reported:
        assert any(w.startswith("approximated") and words in w for w in warnings), warnings
    if not reported:
        assert not any("constraint" in w for w in warnings), warnings


_RERUN = {  # (rerunnable, never rerun) as each scheduler writes them
    "slurm": ("#SBATCH --requeue", "#SBATCH --no-requeue"),
    "pbs": ("#PBS -r y", "#PBS -r n"),
    "lsf": ("#BSUB -r", "#BSUB -rn"),
    "sge": ("#$ -r y", "#$ -r n"),
}


@pytest.mark.parametrize("source", list(_RERUN))
@pytest.mark.parametrize("value", [True, False])
def test_rerun_after_a_failure_reaches_every_scheduler_that_has_it(source: str,
                                                                   value: bool) -> None:
    """Slurm --requeue/--no-requeue, PBS and Grid Engine -r y|n and LSF -r/-rn say the same
    thing (may the job run again after a node failure or preemption): each was kept as
    written and dropped elsewhere ("no slurm equivalent"), so a job that must never run
    twice (it appends to its results) became rerunnable on a Slurm site that requeues by
    default. Now read into the model and written in each scheduler's form; flux, which has
    none, reports it."""
    line = _RERUN[source][not value]
    text = f"#!/bin/bash\n{line}\n./x\n"
    spec = get_script_dialect(source).parse_script(text)
    assert (spec.requeue, spec.unknown) == (value, [])
    for target, forms in _RERUN.items():
        script, warnings, _ = translate(text, target, source)
        assert forms[not value] in script.splitlines(), (target, script)
        assert get_script_dialect(target).parse_script(script).requeue is value
        assert not any("rerun" in w or "requeue" in w for w in warnings), warnings
    script, warnings, _ = translate(text, "flux", source)
    assert any(w.startswith("dropped: " + ("rerun" if value else "never rerun"))
               for w in warnings), warnings


@pytest.mark.parametrize(("dialect", "line"), [("pbs", "#PBS -r maybe"), ("sge", "#$ -r 1")])
def test_a_bad_rerun_value_is_bad_input(dialect: str, line: str) -> None:
    from diamond_jupyter.model import BadInput

    with pytest.raises(BadInput, match=r"line 2: bad -r value .* expected y \(rerunnable\) "
                                       r"or n \(never rerun\)"):
        get_script_dialect(dialect).parse_script(f"#!/bin/bash\n{line}\n./x\n")


def test_slurmrestd_gets_the_rerun_flag() -> None:
    from diamond_jupyter.dialects.slurm_rest import job_description

    spec = get_script_dialect("pbs").parse_script("#!/bin/bash\n#PBS -r n\n./x\n")
    spec.working_directory = "/scratch/u"
    assert job_description(spec)[0]["requeue"] is False
    spec.requeue = None  # the site's default: not sent
    assert "requeue" not in job_description(spec)[0]


@pytest.mark.parametrize(("line", "fixed"), [
    ("#$ -N 'qc run'", "qc_run"),
    ("#$ -N sample/01", "sample_01"),
    ("#$ -N job:7", "job_7"),
    ("#$ -N fit*", "fit_"),
])
def test_sge_job_name_qsub_denies_is_bad_input(line: str, fixed: str) -> None:
    """Grid Engine denies a job name with / : @ \\ * ? or a blank at submission (sge_types):
    the reader took it, and the Grid Engine round trip quietly renamed the job. Now bad
    input naming the name and a form qsub takes; odd but valid names still read."""
    from diamond_jupyter.model import BadInput

    with pytest.raises(BadInput, match=rf"line 2: bad job name .*e\.g\. {re.escape(fixed)}$"):
        get_script_dialect("sge").parse_script(f"#!/bin/bash\n{line}\n./x\n")
    _, text = read_fixture(HERE, "sge/odd_job_name.sge")
    assert get_script_dialect("sge").parse_script(text).name == "run-3.x_final+v2"


def test_flux_commands_in_the_body_are_translated_or_reported() -> None:
    """`flux run -n1 ./prepare` was kept ("no srun equivalent") for its attached value, and
    `flux job wait --all` / `flux queue drain` went to Slurm unreported, to fail there with
    `flux: command not found`. Short options with an attached value now translate (srun and
    flux take both forms); every other flux command is reported by name."""
    from diamond_jupyter.dialects.body import translate_body

    _, text = read_fixture(HERE, "flux/body_submit_run_id_output.flux")
    script, warnings, _ = translate(text, "slurm", "flux")
    assert "srun -n 1 ./prepare" in script.splitlines()
    for sub in ("submit", "job"):
        assert any(w.startswith("kept: line") and f"`flux {sub}` has no slurm" in w
                   for w in warnings), warnings
    assert any("`flux job` has no slurm equivalent (only a flux instance runs it)" in w
               for w in warnings)
    _, text = read_fixture(HERE, "flux/whole_node_debug_loop.flux")
    warnings = translate(text, "pbs", "flux")[1]
    assert any("`flux queue` has no pbs equivalent" in w for w in warnings), warnings
    out, notes = translate_body("srun -n4 -c$NC ./a\nmpirun -np4 ./b\n", "slurm", "flux")
    assert out == "flux run -n 4 -c $NC ./a\nmpirun -np4 ./b\n"  # -np4 is not -n p4
    assert notes == ["kept: line 2: mpirun options without a flux run equivalent; the line "
                     "is unchanged"]


@pytest.mark.parametrize(("dialect", "line", "names"), [
    ("slurm", "#SBATCH --ntasks-per 4", "--ntasks-per-core, --ntasks-per-gpu, --ntasks-per-node"),
    ("slurm", "#SBATCH --mem-per=4G", "--mem-per-cpu, --mem-per-gpu"),
    ("slurm", "#SBATCH --exclu", "--exclude, --exclusive"),
    ("slurm", "#SBATCH --cpus 4", "--cpus-per-gpu, --cpus-per-task"),
    ("flux", "# flux: --n 4", "--nodes, --nslots"),
])
def test_an_ambiguous_abbreviation_is_bad_input(dialect: str, line: str, names: str) -> None:
    """sbatch (getopt_long) and flux (argparse) take a unique prefix of a long option and
    refuse one that begins several (`--mem-per`: per CPU or per GPU?). It was kept as an
    unknown option and dropped elsewhere, the job's memory silently lost; now bad input
    naming the candidates. Unique prefixes still read."""
    from diamond_jupyter.model import BadInput

    with pytest.raises(BadInput, match=rf"line 2: option --\S+ is ambiguous \(it begins "
                                       rf"{re.escape(names)}.*write the option in full"):
        get_script_dialect(dialect).parse_script(f"#!/bin/bash\n{line}\n./x\n")
    spec = get_script_dialect("slurm").parse_script(
        "#!/bin/bash\n#SBATCH --mem-per-c=4G --ntasks-per-n=2 -N 1\n./x\n")
    assert (spec.resources.memory_per_cpu_mb, spec.resources.tasks_per_node) == (4 * G, 2)


@pytest.mark.parametrize(("source", "line"), [
    ("slurm", "#SBATCH --mail-type=FAIL"),
    ("pbs", "#PBS -m a"),
    ("sge", "#$ -m a"),
])
def test_mail_on_failure_alone_reaches_lsf_reported(source: str, line: str) -> None:
    """A mail on failure alone became -N silently (a mail after every successful run too);
    since the tenth sweep it is bsub's own -Ne (mail only when the job exits in failure)."""
    text = f"#!/bin/bash\n{line}\n./x\n"
    script, warnings, _ = translate(text, "lsf", source)
    assert "#BSUB -Ne" in script.splitlines() and "#BSUB -N" not in script.splitlines()
    assert not any("mail on failure" in w for w in warnings)
    both = translate(text.replace("FAIL", "END,FAIL").replace("-m a", "-m ae"), "lsf",
                     source)[1]
    assert not any("mail on failure" in w for w in both), both


@pytest.mark.parametrize(("source", "lines", "exported", "names", "values"), [
    ("slurm", "#SBATCH --export=NONE,PATH,HOME", False, ["PATH", "HOME"], {}),
    ("slurm", "#SBATCH --export=INPUT,N=3", False, ["INPUT"], {"N": "3"}),
    ("pbs", "#PBS -v INPUT,N=3", None, ["INPUT"], {"N": "3"}),
    ("sge", "#$ -v INPUT,N=3", None, ["INPUT"], {"N": "3"}),
    ("flux", "# flux: --env=-*\n# flux: --env=INPUT", False, ["INPUT"], {}),
])
def test_variables_passed_by_name_reach_every_scheduler(source: str, lines: str,
                                                        exported: bool | None,
                                                        names: list[str],
                                                        values: dict[str, str]) -> None:
    """A variable named without a value (Slurm --export=NAME, PBS and Grid Engine -v NAME,
    flux --env=NAME) is passed with its value at submission. Such a list was kept whole as
    written and dropped elsewhere, so a job that runs with a cleared environment lost the
    variables it named (PATH, its INPUT). Now read and written in each one's form (LSF's
    -env lists them without `none`, which bsub takes alone); where the whole environment
    goes (the default of Slurm, LSF and flux), the names go with it."""
    text = f"#!/bin/bash\n{lines}\n./x\n"
    spec = get_script_dialect(source).parse_script(text)
    env = spec.environment
    assert (env.export_all, env.passed, env.variables, spec.unknown) == \
        (exported, names, values, [])
    for target in ("slurm", "pbs", "sge", "flux", "lsf"):
        back = get_script_dialect(target).parse_script(translate(text, target, source)[0])
        assert back.environment.variables == values, target
        if exported is False or target in ("pbs", "sge"):  # only where they matter
            assert back.environment.passed == names, target
    assert not any("submitting shell" in w for w in translate(text, "lsf", source)[1])
    # with the whole environment exported, the names add nothing and are not written
    spec.environment.export_all = True
    for target in ("slurm", "pbs", "sge", "flux"):
        out = get_script_dialect(target).render_script(spec).script
        assert not any(n in out for n in names), out
