"""A second set of realistic batch scripts (tests/fixtures/scripts_unseen2/<dialect>/), on
features the first set (test_scripts_unseen) left out: Slurm's odd time forms, min-max
nodes, per-socket GPUs, sbatch's own quoting; PBS chunks with ompthreads, memory units,
Torque GPU modes and `queue@server`; LSF's -M memory limit; Flux and Grid Engine options.
Each is parsed, its needs read, and translated into every other dialect and read back;
the key values are what each scheduler's documentation says they mean."""

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
from diamond_jupyter.needs import needs_of
from tests.scripts_unseen_check import (
    fixture_scripts,
    read_fixture,
    sweep_tests,
)

HERE = Path(__file__).parent / "fixtures" / "scripts_unseen2"
G = 1024  # MB in a GB

# As in test_scripts_unseen.EXPECTED: whole-job totals, walltime seconds, array, deps, the
# options kept as unknown directives, JobSpec fields; `needs_gpus`/`needs_mem` per node
# (needs_of); `node_mem` the spec's own memory per node.
EXPECTED: dict[str, dict[str, Any]] = {
    # ---------------------------------------------------------------- Slurm
    "slurm/ntasks_per_core_threads.sbatch": dict(
        nodes=2, tasks=64, cpus=128, walltime=6 * 3600, name="hybrid", queue="standard",
        unknown=["--ntasks-per-core", "--threads-per-core"]),
    # --mem=0: all the memory of each node, no number of its own
    "slurm/mem_zero_whole_node.sbatch": dict(
        nodes=1, memory_mb=None, node_mem=0, needs_mem=None, exclusive=True,
        walltime=86400, queue="bigmem"),
    # -t D-H: days-hours
    "slurm/mem_per_cpu_days_hours.sbatch": dict(
        tasks=4, cpus=32, memory_mb=3500 * 32, walltime=2 * 86400 + 12 * 3600,
        account="chem042"),
    "slurm/node_minmax_exclusive_mcs.sbatch": dict(
        nodes=2, tasks=16, walltime=7200, exclusive=False, unknown=["--nodes", "--exclusive"]),
    # 2 GPUs on each of 2 sockets: kept as written, but the node needs 4 GPUs
    "slurm/gpus_per_socket.sbatch": dict(
        nodes=1, tasks=4, gpus=None, needs_gpus=4, walltime=4 * 3600, queue="gpu",
        unknown=["--sockets-per-node", "--gpus-per-socket"]),
    # not sbatch's name[:type][:count] form: kept whole, no made-up GPU type
    "slurm/gres_socket_suffix.sbatch": dict(
        tasks=1, gpus=None, gpu_type=None, walltime=1800, unknown=["--gres"]),
    "slurm/time_unlimited_begin_signal.sbatch": dict(
        tasks=1, walltime=None, qos="long", reservation="maint_window",
        unknown=["--time", "--signal"]),
    "slurm/time_days_hours_minutes.sbatch": dict(tasks=2, walltime=86400 + 30 * 60),
    "slurm/time_minutes_seconds.sbatch": dict(tasks=1, walltime=90 * 60 + 30),
    "slurm/array_stepped.sbatch": dict(tasks=1, walltime=1200, array="0-15:4", name="chunks",
                                       stdout="chunk_%A_%a.out"),
    "slurm/array_list.sbatch": dict(tasks=1, walltime=600, array="1,3,5-7", name="rerun"),
    "slurm/licenses_qos.sbatch": dict(tasks=16, walltime=2700, name="cfd", qos="debug",
                                      unknown=["--licenses"]),
    "slurm/long_options_space.sbatch": dict(
        nodes=2, tasks=32, memory_mb=2 * 64 * G, walltime=12 * 3600, name="space sep",
        queue="compute"),
    "slurm/comments_blank_trailing.sbatch": dict(
        nodes=2, tasks=64, cpus=64, memory_mb=2 * G * 64, walltime=8 * 3600,
        mail_events=["end", "fail"], stdout="%x-%j.out", stderr="%x-%j.err", name="wave"),
    # sbatch's reader: a backslash escapes the next character inside either quote
    "slurm/quoted_escapes.sbatch": dict(
        tasks=1, name='a "b"', comment="x y", stdout="it's.out", stderr="logs\\run.err"),
    # 3 GPUs over 2 nodes: kept as written; each node needs ceil(3/2) = 2
    "slurm/gpus_uneven_nodes.sbatch": dict(
        nodes=2, tasks=4, gpus=None, needs_gpus=2, walltime=3 * 3600, unknown=["--gpus"]),
    # sbatch: an unquoted `#` ends the line, inside a word too
    "slurm/hash_in_value.sbatch": dict(tasks=2, walltime=1800, comment="run"),
    # ---------------------------------------------------------------- PBS Pro / Torque
    "pbs/pro_select_ompthreads_chunks.pbs": dict(
        nodes=3, tasks=65, cpus=132, walltime=100 * 3600, exclusive=True, name="coupled",
        queue="workq", account="ATM001",
        unknown=["-l select:ompthreads", "-l place:scatter"]),
    "pbs/torque_mem_upper_gb.pbs": dict(nodes=1, tasks=8, cpus=8, memory_mb=4 * G,
                                        walltime=7200),
    "pbs/pro_mem_mb.pbs": dict(nodes=1, tasks=1, cpus=4, memory_mb=4096, walltime=1800),
    # -l mem is the job's: 4g over 2 nodes is 2g on each
    "pbs/torque_mem_g_suffix.pbs": dict(nodes=2, tasks=8, memory_mb=4 * G, needs_mem=2 * G,
                                        walltime=3600),
    # `shared` is the GPUs' compute mode (Torque), not a node property
    "pbs/torque_nodes_gpus_shared.pbs": dict(
        nodes=2, tasks=32, gpus=4, needs_gpus=2, features=[], queue="gpu", walltime=86400,
        unknown=["-l nodes:shared"]),
    "pbs/torque_named_hosts.pbs": dict(nodes=2, tasks=None, walltime=600),
    "pbs/depend_server_queue_at.pbs": dict(
        nodes=1, tasks=1, cpus=2, array="1-10:2", queue="workq", walltime=900,
        deps=[("afterok", ["123.server", "124.server"])]),
    "pbs/torque_array_limit.pbs": dict(nodes=1, tasks=1, array="1-10%2", name="tarr",
                                       walltime=300),
    "pbs/pro_gpu_place_free.pbs": dict(
        nodes=4, tasks=16, cpus=192, gpus=16, needs_gpus=4, memory_mb=4 * 480 * G,
        walltime=12 * 3600, unknown=["-l place:free", "-P"]),
    # ---------------------------------------------------------------- LSF
    # -M is a per-process limit (one process per task): 4GB x 32 tasks
    "lsf/mem_limit_gb_ptile.lsf": dict(
        nodes=2, tasks=32, cpus=32, memory_mb=4 * G * 32, walltime=5400, queue="normal",
        account="proj042", name="mpi32"),
    # a bare -M number in MB (LSF_UNIT_FOR_LIMITS=MB); -W 90 is 90 minutes
    "lsf/mem_limit_bare_minutes.lsf": dict(
        nodes=1, tasks=4, memory_mb=4 * 4000, walltime=5400, stdout="out.%j"),
    # the reservation (rusage[mem]) is the request; the limit above it is kept as written
    "lsf/rusage_and_limit.lsf": dict(
        nodes=2, tasks=32, memory_mb=4000 * 32, exclusive=True, walltime=86400,
        unknown=["-M"]),
    "lsf/gpu_mode_hosts_one.lsf": dict(
        nodes=1, tasks=2, gpus=2, needs_gpus=2, queue="gpu", walltime=4 * 3600,
        unknown=["-gpu mode"]),
    "lsf/array_done_dep.lsf": dict(tasks=1, array="1-10", deps=[("afterok", ["123"])],
                                   name="sweep", walltime=1800),
    "lsf/exclusive_project_queue.lsf": dict(
        nodes=2, tasks=64, exclusive=True, queue="hpc", account="proj123", walltime=86400,
        name="wrf"),
    # a hard limit (`!`) of 2GB per process, 2 tasks of 4 cores on one host
    "lsf/mem_limit_affinity.lsf": dict(nodes=1, tasks=2, cpus=8, memory_mb=2 * 2 * G,
                                       walltime=7200),
    # ---------------------------------------------------------------- Flux
    "flux/short_bundle_gpus.flux": dict(nodes=2, tasks=8, cpus=32, gpus=8, needs_gpus=4,
                                        walltime=7200, name="train8"),
    "flux/seconds_exclusive.flux": dict(nodes=1, tasks=4, walltime=30, exclusive=True,
                                        queue="pdebug"),
    "flux/setattr_dependency.flux": dict(
        tasks=2, cpus=16, walltime=5400, deps=[("afterany", ["f3Zb9KqWu"])],
        unknown=["--setattr"]),
    "flux/urgency_hold_queue.flux": dict(tasks=1, walltime=86400, hold=True, queue="pbatch",
                                         name="held"),
    "flux/cores_total_tasks_per_node.flux": dict(nodes=2, tasks=8, cpus=16, walltime=2700),
    "flux/output_template.flux": dict(tasks=1, walltime=900, stdout="job-%j.out",
                                      stderr="job-%j.err"),
    # ---------------------------------------------------------------- Grid Engine
    "sge/mpi_rt_vmem_cwd.sge": dict(tasks=32, cpus=32, memory_mb=4 * G * 32, walltime=3600,
                                    name="mpi32", queue="all.q"),
    "sge/gpu_array_step_tc.sge": dict(gpus=2, walltime=1800, array="1-100:10%5"),
    "sge/hold_jid_numeric.sge": dict(walltime=600, deps=[("afterany", ["123", "124"])],
                                     name="post"),
    "sge/smp_vmem_rt.sge": dict(nodes=1, cpus=8, memory_mb=2 * G * 8, walltime=9000,
                                stdout="logs/"),
    "sge/orte_mem_free_binding.sge": dict(tasks=16, walltime=3600, memory_mb=128 * 1024,
                                          per_cpu=8 * 1024, unknown=["-binding"]),
    "sge/queue_list_seconds.sge": dict(nodes=1, cpus=2, walltime=5400, queue="short.q,long.q",
                                       unknown=["-l s_rt"]),
}

SCRIPTS = fixture_scripts(HERE)
_FIELDS = ("name", "queue", "account", "qos", "reservation", "stdout", "stderr", "hold",
           "comment", "mail_events")


test_every_fixture_has_expectations, test_parse_values, test_translates_or_reports = \
    sweep_tests(HERE, EXPECTED, fields=_FIELDS, strict=())


# ---------------------------------------------------------------- sbatch's own quoting

@pytest.mark.parametrize(("payload", "words"), [
    ("--comment='it\\'s'", ["--comment=it's"]),  # escaped inside single quotes
    ('--output="C:\\logs\\a.out"', ["--output=C:logsa.out"]),  # any escaped character
    ('--output="C:\\\\logs\\\\a.out"', ["--output=C:\\logs\\a.out"]),
    ("--comment=run\\#7 -n 2", ["--comment=run#7", "-n", "2"]),  # an escaped # stays
    ("--comment=run#7 -n 2", ["--comment=run"]),  # an unquoted # ends the line
    ("--comment='run #7' -n 2", ["--comment=run #7", "-n", "2"]),
    ("-J a\\ b", ["-J", "a b"]),
])
def test_sbatch_reads_its_lines_as_sbatch_does(payload: str, words: list[str]) -> None:
    from diamond_jupyter.dialects.slurm_script import sbatch_words

    assert sbatch_words(payload) == words


@pytest.mark.parametrize("line", ["#SBATCH --job-name='unclosed", '#SBATCH -o "a b'])
def test_an_unmatched_quote_is_bad_input(line: str) -> None:
    with pytest.raises(BadInput, match=r"line 2: unmatched .* sbatch refuses it"):
        get_script_dialect("slurm").parse_script(f"#!/bin/bash\n{line}\nsrun x\n")


@pytest.mark.parametrize("target", list(SCRIPT_DIALECTS))
def test_escaped_values_survive_every_translation(target: str) -> None:
    text = "#!/bin/bash\n#SBATCH --job-name='it\\'s #1'\n#SBATCH -n 1\nsrun x\n"
    spec = get_script_dialect("slurm").parse_script(text)
    assert spec.name == "it's #1"
    script = translate(text, target, "slurm")[0]
    back = get_script_dialect(target).parse_script(script).name
    if target not in ("sge", "pbs"):
        assert back == "it's #1"
    elif target == "pbs":  # qsub -N refuses a name with a space: `_` instead (reported)
        assert back == "it's_#1"
    else:  # Grid Engine's qsub deletes the quote of a #$ line too
        assert back == "it_s_#1"


# ---------------------------------------------------------------- Slurm GPUs kept as written

@pytest.mark.parametrize(("lines", "per_node", "gpu_type"), [
    ("#SBATCH --gpus=3\n#SBATCH -N 2", 2, None),  # 2 + 1: each node must hold 2
    ("#SBATCH -N 3 --gpus=a100:4", 2, "a100"),
    ("#SBATCH --gpus-per-socket=2 --sockets-per-node=2", 4, None),
    ("#SBATCH --gpus-per-socket=h100:1", 1, "h100"),
    ("#SBATCH -N 1\n#SBATCH hetjob\n#SBATCH --gpus=3 -N 2", None, None),  # not the first
])
def test_kept_slurm_gpus_still_need_gpus(lines: str, per_node: int | None,
                                         gpu_type: str | None) -> None:
    from diamond_jupyter.model import Node
    from diamond_jupyter.placement_fit import node_checks, request

    text = f"#!/bin/bash\n{lines}\nsrun x\n"
    spec = get_script_dialect("slurm").parse_script(text)
    assert spec.resources.gpus_per_node is None
    assert (needs_of(spec).gpus, needs_of(spec).gpu_type) == (per_node, gpu_type)
    req = request(spec, 64)
    assert req.gpn == (per_node or 0)
    if per_node:
        cpu_only = [Node(name=f"c{i}", state="idle", cpus=64) for i in range(4)]
        reasons, _ = node_checks(req, cpu_only, None)
        assert reasons and ("GPU" in reasons[0])
        small = [Node(name=f"g{i}", state="idle", cpus=64, gpus=per_node - 1,
                      gpu_type=gpu_type) for i in range(4)]
        assert node_checks(req, small, None)[0]
        fits = [Node(name=f"g{i}", state="idle", cpus=64, gpus=per_node, gpu_type=gpu_type)
                for i in range(4)]
        assert node_checks(req, fits, None) == ([], {n.name for n in fits})
    # rendered back to Slurm as written: the same options, the same needs
    back = get_script_dialect("slurm").parse_script(translate(text, "slurm", "slurm")[0])
    assert [(d.option, d.value) for d in back.unknown] == \
        [(d.option, d.value) for d in spec.unknown]
    assert back.resources == spec.resources and needs_of(back) == needs_of(spec)


@pytest.mark.parametrize(("gres", "gpus", "gpu_type", "kept"), [
    ("gpu:1(S:0)", None, None, True),  # scontrol's socket suffix: not a request form
    ("gpu:a100:2", 2, "a100", False),
    ("gpu:1g.5gb:1", 1, "1g.5gb", False),  # a MIG profile as the type
    ("gpu:3", 3, None, False),
    ("gpu:a:b", None, None, True),
])
def test_gres_gpu_forms(gres: str, gpus: int | None, gpu_type: str | None, kept: bool) -> None:
    spec = get_script_dialect("slurm").parse_script(
        f"#!/bin/bash\n#SBATCH -N 1\n#SBATCH --gres={gres}\nsrun x\n")
    r = spec.resources
    assert (r.gpus_per_node, r.gpu_type) == (gpus, gpu_type)
    assert [d.option for d in spec.unknown] == (["--gres"] if kept else [])


# ---------------------------------------------------------------- LSF -M

@pytest.mark.parametrize(("value", "per_task", "rendered"), [
    ("4000", 4000, "4000MB"), ("4GB", 4 * G, "4GB"), ("4G", 4 * G, "4GB"),
    ("512MB", 512, "512MB"), ("2048KB", 2, "2MB"), ("1TB", G * G, "1024GB"),
    ("2GB!", 2 * G, "2GB!"), ("4gb", 4 * G, "4GB"),
])
def test_lsf_memory_limit_units(value: str, per_task: int, rendered: str) -> None:
    """-M is per process (one per task); a bare number is MB; an LSF round trip keeps it
    a limit (not a rusage reservation), hard (`!`) when it was."""
    text = f"#!/bin/bash\n#BSUB -n 2\n#BSUB -M {value}\n./x\n"
    spec = get_script_dialect("lsf").parse_script(text)
    assert spec.resources.memory_per_cpu_mb == per_task
    assert request_totals(spec)["memory_mb"] == 2 * per_task
    out = translate(text, "lsf", "lsf")[0].splitlines()
    assert [x for x in out if x.startswith("#BSUB -M")] == [f"#BSUB -M {rendered}"]
    assert not any("rusage" in x for x in out)


@pytest.mark.parametrize("value", ["lots", "4XB", "0"])
def test_lsf_bad_memory_limit_is_bad_input(value: str) -> None:
    with pytest.raises(BadInput, match=r"line 3: bad memory limit .* e\.g\. 4GB"):
        get_script_dialect("lsf").parse_script(f"#!/bin/bash\n#BSUB -n 1\n#BSUB -M {value}\nx\n")


def test_lsf_negative_memory_limit_is_refused_as_a_dash_value() -> None:
    """`-M -4`: since sweep 26 any bsub value starting with '-' is refused at its line."""
    with pytest.raises(BadInput, match=r"line 3: `#BSUB -M -4`: the value '-4' of -M starts"):
        get_script_dialect("lsf").parse_script("#!/bin/bash\n#BSUB -n 1\n#BSUB -M -4\nx\n")


def test_lsf_memory_limit_goes_elsewhere_as_memory_per_task() -> None:
    _, text = read_fixture(HERE, "lsf/mem_limit_gb_ptile.lsf")
    assert "#SBATCH --mem-per-cpu=4G" in translate(text, "slurm", "lsf")[0].splitlines()
    back = translate(translate(text, "slurm", "lsf")[0], "lsf", "slurm")[0]
    assert '#BSUB -R "span[ptile=16] rusage[mem=4GB]"' in back.splitlines()  # a reservation


def test_lsf_slot_memory_of_threaded_tasks_on_one_host_round_trips() -> None:
    """rusage[mem] per slot, tasks of 4 cores, one host: read as memory per node; written
    back per slot (it was written as the whole node's per slot, and refused as larger)."""
    text = ('#!/bin/bash\n#BSUB -n 2\n#BSUB -R "span[hosts=1] affinity[core(4)] '
            'rusage[mem=2GB]"\n./x\n')
    out = translate(text, "lsf", "lsf")[0]
    assert '#BSUB -R "span[hosts=1] rusage[mem=2GB] affinity[core(4)]"' in out.splitlines()


# ---------------------------------------------------------------- PBS

def test_pbs_queue_at_server() -> None:
    _, text = read_fixture(HERE, "pbs/depend_server_queue_at.pbs")
    assert "#PBS -q workq@server" in translate(text, "pbs", "pbs")[0].splitlines()
    for target in ("slurm", "lsf", "flux", "sge"):
        script, warnings, _ = translate(text, target, "pbs")
        assert "server" not in script.split("\n\n")[0].replace("123.server", ""), target
        assert any("-q workq@server" in w for w in warnings)


@pytest.mark.parametrize(("nodes", "features", "kept"), [
    ("2:ppn=16:gpus=2:shared", [], ["-l nodes:shared"]),
    ("1:ppn=4:gpus=1:exclusive_process", [], ["-l nodes:exclusive_process"]),
    ("1:ppn=4:shared", ["shared"], []),  # no GPUs asked: a node property of that name
])
def test_torque_gpu_modes_are_not_node_properties(nodes: str, features: list[str],
                                                  kept: list[str]) -> None:
    text = f"#!/bin/bash\n#PBS -l nodes={nodes}\ncd $PBS_O_WORKDIR\n"
    spec = get_script_dialect("pbs").parse_script(text)
    assert spec.constraints.features == features
    assert [d.option for d in spec.unknown] == kept
    assert f"#PBS -l nodes={nodes}" in translate(text, "pbs", "pbs")[0].splitlines()


def test_a_gpu_type_option_keeps_the_kept_slurm_gpu_count() -> None:
    """--gpu-type on a job whose --gpus the nodes do not divide: the type is added, the
    count stays the script's (not one GPU per node on top of it)."""
    from diamond_jupyter.needs import with_options

    spec = get_script_dialect("slurm").parse_script(
        "#!/bin/bash\n#SBATCH --gpus=3 -N 2\nsrun x\n")
    typed = with_options(spec, gpu_type="a100")
    assert typed.resources.gpus_per_node is None
    assert (needs_of(typed).gpus, needs_of(typed).gpu_type) == (2, "a100")
