"""A twenty-first set of realistic batch scripts (tests/fixtures/scripts_unseen21/<dialect>/):
Slurm 23/24 spellings (--gres=shard:N alone and with --gres-flags=multiple-tasks-per-sharing,
--tres-per-task=cpu=8,gres/gpu:a100=1, a typed --gpus-per-socket=a100:2, --exclusive=topo
with --segment), a MIG profile as the GPU type (--gres=gpu:1g.10gb:1), --gres=gpu:0 on a GPU
partition, --mem=2T with --time=3-0, an array of ranges and a singleton throttled, --export
with a bare name, Perlmutter's -C "gpu&hbm80g" with an _g account, directives framed by a
`#`-banner block, a <<- here-document holding a tab-indented #SBATCH line, a job name, output
and --chdir holding shell syntax and quotes, CRLF with unicode paths and mail users, a late
#SBATCH after module loads; PBS Pro (mem=16GB in capitals, a chunk per named host, ngpus=0
on CPU chunks, /dev/null outputs, ^array_index^ outputs with a 30-second walltime, CRLF with
a unicode name and -P, a here-document holding #PBS lines, vntype and ompthreads, comments
after directives, -v with an empty value beside -V) and Torque (a node property with ppn
and pmem in mb, afterok on two ids); LSF (-cwd with %U/%J, -gpu gmem with mode=shared,
select[hname!=...], same[type], -M and rusage in GB, -b with a year, a quoted array name with
a step and throttle, tab-separated values with comments, -env all with values, exit(job, op),
a here-document of #BSUB lines, a late directive, CRLF with unicode paths); Grid Engine
(h_rt=1:0:0, -l h=!host, a boolean complex, tmp_free, -m beas, -v with a bare name, a step
with -tc and a named hold, comments after directives, -P with -A and -wd, a here-document of
#$ lines qsub reads, -l gpu beside -pe smp, CRLF with a Greek name); flux (a natural-language
--begin-time, --tasks-per-core, --gpus-per-task with --tasks-per-node, -q/-B, --env with a
file, comments after directives, a here-document of #flux: lines, a name and output holding
shell syntax, --exclusive with --cores-per-task, a numeric afterok with --begin-time=+2h,
-g 0, CRLF with a CJK name).

Each is parsed and compared with its EXPECTED row, its needs read, and translated into
every dialect (its own too) and read back (tests/scripts_unseen_check.py). Faults found,
each fixed and shown by tests here that failed before: a request for 0 GPUs (PBS `ngpus=0`,
as NCAR's CPU jobs write it, Torque `gpus=0`, Slurm `--gres=gpu:0`/`--gpus-per-node=0`, LSF
`-gpu num=0`, Grid Engine `-l gpu=0`, flux `-g 0`) was read as a count of 0 GPUs: Grid
Engine got `-l gpu=0` (qsub refuses a resource its site does not define), Slurm
`--gpus-per-node=0`, and every other translation, the script's own PBS too, a false
`dropped: 0 GPU(s)`; now no GPU request, said. Grid Engine's `-l h=!node03` (any host but
node03) was refused as a host pattern, so Slurm got no --exclude and flux no `-host:`; and
Slurm's --exclude reached Grid Engine as "no form excludes hosts" though `hostname=!a&!b`
is one. `--gpus-per-socket=a100:2` on two sockets reached PBS, LSF, flux and Grid Engine
without GPUs (dropped, while placement sent the job to GPU sites); now 4 per node, said
approximated. Counts of 0 a scheduler refuses (`--ntasks=0`, `--cpus-per-task=0`,
`--nodes=0`, flux `-n 0`/`-N 0`, PBS `select=0`, `nodes=0`) were read as nothing or as 0
nodes; now refused, saying what is accepted; PBS `ncpus=0` reached Slurm as
`--cpus-per-task=0` and `mpiprocs=0` divided by zero ("unreadable value"): now not given,
said. A MIG profile (`1g.10gb`) reached LSF as `gmodel=1g.10gb`, a model no host has: now
`-gpu mig=1`, said. LSF's `-w "exit(ID, != 0)"` was kept unread (no other scheduler waited
for the job): every exit is one with a non-zero code, so afternotok, said."""

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
    ALL_STRICT,
    COMPARED_FIELDS,
    parse_lines,
    sweep_tests,
    translated,
)

HERE = Path(__file__).parent / "fixtures" / "scripts_unseen21"

# As in the earlier sweeps (tests/scripts_unseen_check.py names the keys): whole-job
# totals, walltime seconds, array, deps, the options kept as unknown directives (in order),
# JobSpec fields; needs_gpus/needs_mem per node. Output paths are in the neutral form.
EXPECTED: dict[str, dict[str, Any]] = {
    # ------------------------------------------------------------ flux
    "flux/begin_time_natural_words.flux": dict(
        tasks=1, cpus=1, walltime=600, unknown=["--begin-time"], name="tomorrow"),
    "flux/comment_after_directive_flux.flux": dict(
        nodes=2, tasks=16, cpus=16, walltime=1800, name="annotated"),
    "flux/crlf_unicode_name_gpus.flux": dict(
        nodes=1, tasks=2, cpus=2, gpus=2, walltime=3600, name="計算", needs_gpus=2),
    "flux/dependency_afterok_numeric_and_begin.flux": dict(
        tasks=1, cpus=1, walltime=900, deps=[("afterok", ["123456789"])], name="chained",
        begin="now+7200"),
    "flux/env_export_forms_body.flux": dict(
        tasks=2, cpus=2, walltime=300, unknown=["--env"], name="envs",
        variables={"OMP_NUM_THREADS": "2"}),
    "flux/exclusive_nodes_cores_per_task.flux": dict(
        nodes=4, tasks=32, cpus=32, walltime=10800, unknown=["--cores-per-task"], name="whole",
        exclusive=True),
    "flux/gpus_per_slot_zero_cpu_only.flux": dict(
        nodes=1, tasks=4, cpus=8, walltime=1800, name="cpuonly", notes=["a request for 0 GPUs"]),
    "flux/gpus_per_task_tasks_per_node.flux": dict(
        nodes=2, tasks=8, cpus=8, walltime=7200, unknown=["--gpus-per-task"], name="gpt"),
    "flux/heredoc_inner_batch.flux": dict(
        tasks=1, cpus=1, walltime=600, name="outerflux", ignored=2),
    "flux/injection_name_and_output.flux": dict(
        tasks=1, cpus=1, walltime=120, name="x; reboot", stdout="o $(id).log"),
    "flux/queue_bank_short_options.flux": dict(
        tasks=4, cpus=4, walltime=2700, name="bankq", queue="pdebug", account="guests"),
    "flux/tasks_per_core_flag.flux": dict(
        nodes=1, tasks=8, cpus=8, walltime=1200, unknown=["--tasks-per-core"], name="tpc"),
    # ------------------------------------------------------------ lsf
    "lsf/M_gigabytes_with_rusage_gb_ptile.lsf": dict(
        nodes=1, tasks=8, cpus=8, memory_mb=24576, walltime=43200, unknown=["-M"], name="memgb",
        queue="long", per_cpu=3072),
    "lsf/array_outputs_I_index_quoted_name.lsf": dict(
        tasks=1, cpus=1, walltime=900, array="1-40:2%8", name="sweep",
        stdout="logs/sweep.%j.%a.out", stderr="logs/sweep.%j.%a.err"),
    "lsf/b_with_year_month_day.lsf": dict(
        tasks=1, cpus=1, walltime=600, name="dated", begin="2027-03-15T06:30:00"),
    "lsf/comments_after_directives_tabs.lsf": dict(
        tasks=16, cpus=16, walltime=10800, name="tabbed", queue="normal"),
    "lsf/crlf_unicode_outputs.lsf": dict(
        tasks=1, cpus=1, walltime=2700, name="résumé", stdout="résultats/%j.out",
        stderr="résultats/%j.err"),
    "lsf/cwd_with_job_id_pattern.lsf": dict(
        tasks=4, cpus=4, walltime=7200, name="cwdpat", stdout="out.%j",
        working_directory="/scratch/%U/run_%J"),
    "lsf/env_all_with_value.lsf": dict(
        tasks=1, cpus=1, walltime=1200, name="envset", export_all=True,
        variables={"OMP_NUM_THREADS": "8", "MODE": "fast"}),
    "lsf/heredoc_with_bsub_lines.lsf": dict(
        tasks=2, cpus=2, walltime=1800, name="outer", ignored=2),
    "lsf/late_directive_after_module.lsf": dict(
        tasks=4, cpus=4, walltime=3600, name="late", ignored=1),
    "lsf/rusage_gmem_ngpus_physical_shared.lsf": dict(
        nodes=1, tasks=2, cpus=2, gpus=1, walltime=3600, unknown=["-gpu mode", "-gpu gmem"],
        name="gmemjob", queue="gpu", needs_gpus=1),
    "lsf/same_type_compound_span.lsf": dict(
        nodes=2, tasks=32, cpus=32, walltime=14400, unknown=["-R same"], name="sametype"),
    "lsf/select_hname_not_equal.lsf": dict(
        tasks=1, cpus=1, walltime=1800, unknown=["-R select"], name="avoid"),
    "lsf/w_exit_code_condition.lsf": dict(
        tasks=1, cpus=1, walltime=600, deps=[("afternotok", ["5501"])], name="onfail",
        notes=["-w exit(5501, != 0) read as exit(5501)"]),
    # ------------------------------------------------------------ pbs
    "pbs/pro_comment_after_directive_walltime.pbs": dict(
        nodes=1, tasks=1, cpus=4, walltime=3600, name="tagged", queue="normal"),
    "pbs/pro_crlf_unicode_name_account.pbs": dict(
        nodes=1, tasks=1, cpus=16, memory_mb=32768, walltime=14400, unknown=["-P"],
        name="Überlauf", needs_mem=32768),
    "pbs/pro_dev_null_outputs_koe.pbs": dict(
        nodes=1, tasks=1, cpus=1, walltime=300, name="quiet", stdout="/dev/null",
        stderr="/dev/null"),
    "pbs/pro_heredoc_input_with_pbs_lines.pbs": dict(
        nodes=1, tasks=1, cpus=16, memory_mb=65536, walltime=86400, name="gauss", ignored=1,
        needs_mem=65536),
    "pbs/pro_mem_uppercase_gb_chunk.pbs": dict(
        nodes=1, tasks=1, cpus=8, memory_mb=16384, walltime=7200, name="upper_gb", queue="workq",
        needs_mem=16384),
    "pbs/pro_ngpus_zero_cpu_chunk.pbs": dict(
        nodes=2, tasks=72, cpus=72, memory_mb=368640, walltime=43200, name="nogpu",
        account="P93300606", needs_mem=184320,
        notes=["a request for 0 GPUs"]),
    "pbs/pro_two_named_hosts_chunks.pbs": dict(
        nodes=2, tasks=2, cpus=8, walltime=1800, unknown=["-l select:host", "-l select:host"],
        name="pinned2"),
    "pbs/pro_v_empty_value_and_V.pbs": dict(
        nodes=1, tasks=1, cpus=1, walltime=600, name="venv", export_all=True,
        variables={"DEBUG": "", "LEVEL": "3"}),
    "pbs/pro_vntype_ompthreads_mem.pbs": dict(
        nodes=4, tasks=32, cpus=512, memory_mb=983040, walltime=21600,
        unknown=["-l select:ompthreads", "-l select:vntype", "-l place:scatter"],
        name="hybrid_cray", needs_mem=245760),
    "pbs/pro_walltime_seconds_array_outputs_caret.pbs": dict(
        nodes=1, tasks=1, cpus=2, memory_mb=4096, walltime=30, array="0-9", name="caret",
        stdout="logs/out_%a.txt", needs_mem=4096),
    "pbs/torque_depend_afterok_two_colon_ids.pbs": dict(
        nodes=1, tasks=1, cpus=1, walltime=900,
        deps=[("afterok", ["1234.headnode", "1235.headnode"])], name="post"),
    "pbs/torque_nodes_named_feature_ppn_pmem_mb.pbs": dict(
        nodes=2, tasks=24, cpus=24, memory_mb=48000, walltime=36000, name="feat", per_cpu=2000,
        features=["haswell"]),
    # ------------------------------------------------------------ sge
    "sge/array_step_tc_hold_name.sge": dict(
        walltime=1200, array="1-1000:10%20", unknown=["-hold_jid"], name="stepped",
        stdout="logs/%x.%a.out"),
    "sge/boolean_highmem_complex.sge": dict(
        memory_mb=65536, walltime=43200, unknown=["-l highmem"], name="himem", per_cpu=65536),
    "sge/comment_after_directive_sge.sge": dict(
        nodes=1, cpus=2, walltime=14400, name="commented"),
    "sge/crlf_unicode_name_pe.sge": dict(
        tasks=16, cpus=16, walltime=10800, name="δοκιμή"),
    "sge/gpu_cuda_per_slot_pe_smp.sge": dict(
        nodes=1, cpus=4, gpus=2, walltime=28800, name="cudapair", queue="gpu.q", needs_gpus=2),
    "sge/h_rt_short_fields_smp.sge": dict(
        nodes=1, cpus=8, memory_mb=16384, walltime=3600, name="shortrt", per_cpu=2048),
    "sge/heredoc_with_sge_lines.sge": dict(
        nodes=1, cpus=64, walltime=356400, name="parent"),
    "sge/mail_suspend_flag_s.sge": dict(
        walltime=3600, name="susp", mail_events=["begin", "end", "fail"],
        mail_user="user@site.example"),
    "sge/negated_host_request.sge": dict(
        walltime=1800, unknown=["-l h"], name="nothere"),
    "sge/project_account_wd_home.sge": dict(
        walltime=2400, unknown=["-P"], name="projacct", account="grant_42",
        working_directory="/home/u/runs"),
    "sge/tmp_free_scratch_request.sge": dict(
        nodes=1, cpus=4, walltime=7200, unknown=["-l tmp_free"], name="scratchy"),
    "sge/v_bare_name_and_value.sge": dict(
        walltime=600, name="vbare", variables={"OMP_NUM_THREADS": "4"}, passed=["PATH"]),
    # ------------------------------------------------------------ slurm
    "slurm/array_list_of_ranges_throttle.sbatch": dict(
        tasks=1, cpus=1, memory_mb=3000, walltime=1200, array="1-3,10-12,20%2", name="chunks",
        stdout="chunk_%A-%a.out", needs_mem=3000),
    "slurm/crlf_unicode_output_path.sbatch": dict(
        tasks=4, cpus=4, memory_mb=10000, walltime=9000, name="données",
        stdout="résultats/%x_%j.out", mail_events=["end", "fail"],
        mail_user="équipe@labo.example", per_cpu=2500),
    "slurm/exclusive_topo_segment.sbatch": dict(
        nodes=8, tasks=8, cpus=8, walltime=3600, unknown=["--exclusive", "--segment"],
        name="topo"),
    "slurm/export_all_bare_names.sbatch": dict(
        tasks=1, cpus=1, walltime=600, name="bare_exports", export_all=True,
        variables={"RUN_MODE": "prod"}, passed=["LD_LIBRARY_PATH"]),
    "slurm/gpus_per_socket_typed_two_nodes.sbatch": dict(
        nodes=2, tasks=8, cpus=8, walltime=7200,
        unknown=["--sockets-per-node", "--gpus-per-socket"], name="socketgpu", needs_gpus=4),
    "slurm/gres_flags_multiple_tasks_per_sharing.sbatch": dict(
        tasks=4, cpus=4, walltime=2700, unknown=["--gres", "--gres-flags"], name="mps_share"),
    "slurm/gres_gpu_zero_on_gpu_partition.sbatch": dict(
        tasks=1, cpus=8, memory_mb=32768, walltime=3600, name="preproc", queue="gpu",
        needs_mem=32768, notes=["a request for 0 GPUs"]),
    "slurm/gres_shard_two_tasks.sbatch": dict(
        tasks=2, cpus=2, walltime=1800, unknown=["--gres"], name="shared_infer",
        queue="gpu-shared"),
    "slurm/hash_prefixed_block_banner.sbatch": dict(
        tasks=8, cpus=8, memory_mb=8192, walltime=21600, name="framed", stdout="framed-%j.log",
        per_cpu=1024),
    "slurm/heredoc_dash_tabbed_input.sbatch": dict(
        nodes=2, tasks=128, cpus=128, walltime=28800, name="qe_scf"),
    "slurm/injection_chdir_and_output_quotes.sbatch": dict(
        tasks=1, cpus=1, walltime=300, name="$(touch /tmp/pwned)", stdout="out; rm -rf ~.log",
        working_directory="/scratch/u/run 'a'"),
    "slurm/mem_terabytes_time_days_hours.sbatch": dict(
        nodes=1, tasks=1, cpus=96, memory_mb=2097152, walltime=259200, name="assembly",
        queue="hugemem", needs_mem=2097152),
    "slurm/mig_gres_type_with_dots.sbatch": dict(
        tasks=1, cpus=4, gpus=1, walltime=3600, name="mig_small", gpu_type="1g.10gb",
        needs_gpus=1),
    "slurm/mpiexec_hydra_late_directive.sbatch": dict(
        tasks=32, cpus=32, walltime=3600, name="hydra", ignored=1),
    "slurm/perlmutter_gpu_constraint_and_account.sbatch": dict(
        nodes=4, tasks=16, cpus=512, gpus=16, walltime=21600, name="pm_train", account="m1234_g",
        qos="regular", features=["gpu", "hbm80g"], needs_gpus=4),
    "slurm/tres_per_task_typed_gpu.sbatch": dict(
        nodes=1, tasks=4, cpus=32, gpus=4, walltime=14400, name="tpt_a100", gpu_type="a100",
        needs_gpus=4),
}

test_every_fixture_has_expectations, test_parse_values, test_translates_or_reports = \
    sweep_tests(HERE, EXPECTED, fields=COMPARED_FIELDS, strict=ALL_STRICT, at_least=60)


# ------------------------------------------------------------ faults found, now fixed

ZERO_GPUS = [
    ("slurm", "#SBATCH -n 2\n#SBATCH --gres=gpu:0"),
    ("slurm", "#SBATCH -n 2\n#SBATCH --gpus-per-node=0"),
    ("slurm", "#SBATCH -n 2\n#SBATCH --gpus-per-task=0"),
    ("pbs", "#PBS -l select=1:ncpus=2:ngpus=0"),
    ("pbs", "#PBS -l nodes=1:ppn=2:gpus=0"),
    ("lsf", '#BSUB -n 2\n#BSUB -gpu "num=0"'),
    ("sge", "#$ -pe smp 2\n#$ -l gpu=0"),
    ("flux", "#flux: -n 2\n#flux: -g 0"),
    ("flux", "#flux: -N 1\n#flux: --gpus-per-node=0"),
]
# a GPU count as each scheduler's directive writes it
_GPU_COUNT_WORDS = ("gpu", "gres", "ngpus", "-g ", "--gpus")


@pytest.mark.parametrize(("dialect", "lines"), ZERO_GPUS)
def test_zero_gpus_are_no_gpu_request(dialect: str, lines: str):
    """0 GPUs was a count of 0: Grid Engine got `-l gpu=0`, Slurm `--gpus-per-node=0`, and
    the others (the script's own scheduler too) a false `dropped: 0 GPU(s) ... does not
    carry it`. Now no GPU request, and said."""
    spec = parse_lines(dialect, lines)
    assert request_totals(spec)["gpus"] is None and needs_of(spec).gpus is None
    assert any("a request for 0 GPUs" in n and "read as no GPU request" in n
               for n in spec.metadata["parse_notes"])
    text = f"#!/bin/bash\n{lines}\n./a\n"
    for target in SCRIPT_DIALECTS:
        script, warnings, _ = translate(text, target, dialect)
        directives = [x for x in script.splitlines()[1:] if x.startswith("#")]
        assert not any(w in x.lower() for x in directives for w in _GPU_COUNT_WORDS), \
            (target, directives)
        assert not any("0 GPU(s)" in w for w in warnings), warnings
        assert any("a request for 0 GPUs" in w for w in warnings), warnings


def test_zero_gpus_beside_a_gpu_chunk_keep_the_gpu_chunk():
    """A PBS job of a GPU chunk and CPU chunks written `ngpus=0`: Slurm gets a hetjob whose
    first component has the 2 GPUs, the CPU component none (it got --gpus-per-node=0)."""
    spec = parse_lines("pbs", "#PBS -l select=1:ncpus=4:ngpus=2+2:ncpus=8:ngpus=0")
    assert request_totals(spec)["gpus"] == 2
    script, warnings, _ = translate("#!/bin/bash\n#PBS -l select=1:ncpus=4:ngpus=2"
                                    "+2:ncpus=8:ngpus=0\n./a\n", "slurm", "pbs")
    lines = script.splitlines()
    assert lines[1:9] == [
        "#SBATCH --nodes=1", "#SBATCH --ntasks-per-node=1", "#SBATCH --cpus-per-task=4",
        "#SBATCH --gpus-per-node=2", "#SBATCH hetjob", "#SBATCH --nodes=2",
        "#SBATCH --ntasks-per-node=1", "#SBATCH --cpus-per-task=8"]
    assert not any("0 GPU(s)" in w for w in warnings)


def test_the_fixture_cpu_chunks_reach_grid_engine_without_a_gpu_resource():
    script, warnings = translated(HERE, "pbs/pro_ngpus_zero_cpu_chunk.pbs", "sge")
    assert "#$ -l h_rt=12:00:00,h_vmem=5G" in script.splitlines()  # no gpu=0
    script, warnings = translated(HERE, "pbs/pro_ngpus_zero_cpu_chunk.pbs", "pbs")
    assert "#PBS -l select=2:ncpus=36:mpiprocs=36:mem=180gb" in script.splitlines()
    assert not any(w.startswith("dropped") for w in warnings), warnings


@pytest.mark.parametrize(("target", "line"), [
    ("slurm", "#SBATCH --exclude=node03"), ("flux", "#flux: --requires=-host:node03")])
def test_a_grid_engine_negated_host_is_an_excluded_host(target: str, line: str):
    """`-l h=!node03` (complex(5): any host but node03) was refused as a host pattern, so
    Slurm got no --exclude and flux no -host: term; the job could land on the host it
    shuns."""
    script, warnings = translated(HERE, "sge/negated_host_request.sge", target)
    assert line in script.splitlines()
    assert f"kept: #$ -l h=!node03 as {line.split(' ', 1)[1]}" in warnings
    _, warnings = translated(HERE, "sge/negated_host_request.sge", "pbs")
    assert "dropped: #$ -l h=!node03 (the hosts node03 the job must not have: no pbs form " \
           "excludes hosts)" in warnings


def test_excluded_hosts_reach_grid_engine_as_negated_hostnames():
    """Slurm's --exclude and flux's -host: were dropped for Grid Engine ('no sge form
    excludes hosts'): `-l hostname=!a&!b` is that form, and reads back the same."""
    text = "#!/bin/bash\n#SBATCH -N 1\n#SBATCH --exclude=gpu[07-08]\n#SBATCH -t 10\n./a\n"
    script, warnings, _ = translate(text, "sge", "slurm")
    assert "#$ -l hostname=!gpu07&!gpu08" in script.splitlines()
    assert "kept: #SBATCH --exclude=gpu[07-08] as -l hostname=!gpu07&!gpu08" in warnings
    back, _, _ = translate(script, "slurm", "sge")
    assert "#SBATCH --exclude=gpu07,gpu08" in back.splitlines()
    text = "#!/bin/bash\n#flux: -N 1\n#flux: --requires=-host:f3\n#flux: -t 5m\n./a\n"
    script, _, _ = translate(text, "sge", "flux")
    assert "#$ -l hostname=!f3" in script.splitlines()
    # beside hosts to choose from, a second hostname request would replace the first: said
    text = "#!/bin/bash\n#SBATCH -N 1\n#SBATCH -w n1\n#SBATCH -x n3\n#SBATCH -t 10\n./a\n"
    script, warnings, _ = translate(text, "sge", "slurm")
    assert "#$ -l hostname=n1" in script.splitlines()
    assert "dropped: #SBATCH -x n3 (the hosts n3 the job must not have: qsub keeps one " \
           "hostname request, the hosts named)" in warnings


@pytest.mark.parametrize(("target", "line"), [
    ("pbs", "#PBS -l select=2:ncpus=4:mpiprocs=4:ngpus=4"),
    ("lsf", '#BSUB -gpu "num=4:gmodel=a100"'),
    ("flux", "#flux: --gpus-per-slot=1"),  # 4 slots a node: 4 GPUs a node
    ("sge", "#$ -l h_rt=02:00:00,gpu=8")])
def test_gpus_per_socket_reach_other_schedulers_as_gpus_per_node(target: str, line: str):
    """`--gpus-per-socket=a100:2` on `--sockets-per-node=2` is 4 GPUs a node (needs_of
    read it so, and placement sent the job to GPU sites), but every other scheduler got
    the job without GPUs ('dropped'). Now 4 per node, the socket binding said lost."""
    rel = "slurm/gpus_per_socket_typed_two_nodes.sbatch"
    script, warnings = translated(HERE, rel, target)
    assert line in script.splitlines()
    assert "approximated: #SBATCH --gpus-per-socket=a100:2 with --sockets-per-node=2 as 4 " \
           f"GPUs of type a100 per node ({target} ties no GPU to a socket)" in warnings
    assert not any(w.startswith("dropped: #SBATCH --gpus-per-socket") for w in warnings)
    assert f"dropped: #SBATCH --sockets-per-node=2 (--sockets-per-node 2: no {target} " \
           "equivalent)" in warnings


def test_gpus_per_socket_without_a_socket_count_stay_dropped_and_said():
    """sbatch wants --sockets-per-node beside --gpus-per-socket: no count is made up."""
    text = "#!/bin/bash\n#SBATCH -N 1\n#SBATCH --gpus-per-socket=2\n#SBATCH -t 10\n./a\n"
    script, warnings, _ = translate(text, "pbs", "slurm")
    assert "ngpus" not in script
    assert "dropped: #SBATCH --gpus-per-socket=2 (--gpus-per-socket 2: no pbs equivalent)" \
        in warnings


@pytest.mark.parametrize(("dialect", "lines", "refusal"), [
    ("slurm", "#SBATCH --ntasks=0", "line 2: bad number '0' in `#SBATCH --ntasks=0`; "
     "expected a positive integer"),
    ("slurm", "#SBATCH -n 2 --cpus-per-task=0", "line 2: bad number '0' in `#SBATCH -n 2 "
     "--cpus-per-task=0`; expected a positive integer"),
    ("slurm", "#SBATCH --nodes=0", "line 2: bad number '0' in `#SBATCH --nodes=0`; expected "
     "a positive integer"),
    ("flux", "#flux: -n 0", "line 2: bad count '0' in `#flux: -n 0`; expected a positive "
     "integer"),
    ("flux", "#flux: -N 0", "line 2: bad count '0' in `#flux: -N 0`; expected a positive "
     "integer"),
    ("pbs", "#PBS -l select=0:ncpus=4", "line 2: bad select 'select=0:ncpus=4' in `#PBS -l "
     "select=0:ncpus=4`; expected N:ncpus=C:... with a chunk count N of 1 or more"),
    ("pbs", "#PBS -l nodes=0:ppn=4", "line 2: bad nodes 'nodes=0:ppn=4' in `#PBS -l "
     "nodes=0:ppn=4`; expected N[:ppn=P][:gpus=G][:property] with N of 1 or more"),
])
def test_a_count_of_zero_the_scheduler_refuses_is_refused(dialect: str, lines: str,
                                                          refusal: str):
    """sbatch refuses --ntasks=0 and --cpus-per-task=0, flux batch 0 slots or nodes, qsub 0
    chunks or nodes. They were read as nothing (gone unsaid: the job became a one-task
    job elsewhere) or as 0 nodes, which every other scheduler then refused confusingly."""
    with pytest.raises(BadInput) as e:
        parse_lines(dialect, lines)
    assert str(e.value) == refusal


@pytest.mark.parametrize(("lines", "said"), [
    ("#PBS -l select=1:ncpus=0:ngpus=1", "ncpus=0: a count of 0 read as not given"),
    ("#PBS -l select=1:ncpus=4:mpiprocs=0", "line 2: mpiprocs=0: a count of 0 read as not "
     "given"),
    ("#PBS -l ncpus=0", "ncpus=0: a count of 0 read as not given")])
def test_a_pbs_count_of_zero_is_no_count_and_said(lines: str, said: str):
    """PBS takes `ncpus=0`/`mpiprocs=0`; Slurm got `--cpus-per-task=0` (sbatch refuses it)
    and `mpiprocs=0` divided by zero ('unreadable value'). Now not given, and said."""
    text = f"#!/bin/bash\n{lines}\n./a\n"
    script, warnings, _ = translate(text, "slurm", "pbs")
    assert not any(x.endswith("=0") for x in script.splitlines() if x.startswith("#SBATCH"))
    assert any(w.startswith(said) for w in warnings), warnings
    get_script_dialect("slurm").parse_script(script)  # sbatch's reading: no refusal


@pytest.mark.parametrize("condition", ["exit(5501, != 0)", "exit(5501,>0)", "exit(5501, >= 1)"])
def test_an_lsf_exit_with_any_non_zero_code_is_afternotok(condition: str):
    """`-w "exit(5501, != 0)"` (bsub: 5501 exited with a code other than 0) is every exit
    of 5501; it was kept unread, so no other scheduler waited for 5501 at all."""
    text = f'#!/bin/bash\n#BSUB -n 1\n#BSUB -w "{condition}"\n#BSUB -W 5\n./a\n'
    script, warnings, _ = translate(text, "slurm", "lsf", dependency_ids="target")
    assert "#SBATCH --dependency=afternotok:5501" in script.splitlines()
    assert f"line 3: -w {condition} read as exit(5501) (a job in EXIT state ended with a " \
           "non-zero code; elsewhere the job waits for it to fail)" in warnings
    spec = parse_lines("lsf", '#BSUB -n 1\n#BSUB -w "exit(5501, == 3)"')  # one code: kept
    assert spec.dependencies == [] and [d.option for d in spec.unknown] == ["-w"]


# ------------------------------------------------------------ behaviour pinned down

def test_a_flux_time_limit_in_hours_minutes_seconds_is_refused_with_the_accepted_forms():
    """flux batch takes FSD (30m, 2h) or minutes, not 1:30:00: refused, saying what is."""
    with pytest.raises(BadInput) as e:
        parse_lines("flux", "#flux: -n 1\n#flux: -t 1:30:00")
    assert str(e.value) == ("line 3: bad time limit '1:30:00' in `#flux: -t 1:30:00`; "
                            "expected minutes or an FSD such as 30m, 2h, 1d, 90s")


@pytest.mark.parametrize("target", ["slurm", "pbs", "lsf", "flux", "sge"])
def test_shell_syntax_in_name_output_and_chdir_stays_one_quoted_value(target: str):
    """`$(touch ...)`, `;` and quotes in a name, an output path and --chdir never become
    a command or another option: each is one quoted word (or a name made safe, said).
    Grid Engine's qsub splits #$ lines at blanks and deletes quotes: refused there."""
    if target == "sge":
        with pytest.raises(BadInput, match=r"^sge cannot express the "):
            translated(HERE, "slurm/injection_chdir_and_output_quotes.sbatch", target)
        return
    script, warnings = translated(HERE, "slurm/injection_chdir_and_output_quotes.sbatch",
                                  target)
    back = get_script_dialect(target).parse_script(script)
    assert back.stdout == "out; rm -rf ~.log"
    if target != "pbs":  # PBS Pro has no -d: a quoted cd line, said
        assert back.working_directory == "/scratch/u/run 'a'"
    else:
        assert "cd '/scratch/u/run '\"'\"'a'\"'\"''" in script.splitlines()
    assert back.name == "$(touch /tmp/pwned)" or any(
        w.startswith("approximated: job name") for w in warnings)
    assert not any(x.startswith(("touch", "rm ")) for x in script.splitlines())


def test_a_mig_profile_is_a_gpu_type():
    """`--gres=gpu:1g.10gb:1`: one GPU of the MIG profile 1g.10gb (the dot no separator)."""
    script, _ = translated(HERE, "slurm/mig_gres_type_with_dots.sbatch", "slurm")
    assert "#SBATCH --gpus-per-node=1g.10gb:1" in script.splitlines()


@pytest.mark.parametrize(("gres", "line", "slices"), [
    ("gpu:1g.10gb:1", '#BSUB -gpu "num=1:mig=1"', 1),
    ("gpu:nvidia_a100_3g.40gb:2", '#BSUB -gpu "num=2:mig=3"', 3)])
def test_a_mig_profile_reaches_lsf_as_a_mig_size(gres: str, line: str, slices: int):
    """A MIG profile reached LSF as `gmodel=1g.10gb`, a GPU model no host has (the job
    pends for ever); LSF asks MIG instances by their size in slices: `mig=N`, said."""
    text = f"#!/bin/bash\n#SBATCH -n 1\n#SBATCH --gres={gres}\n#SBATCH -t 5\n./a\n"
    script, warnings, _ = translate(text, "lsf", "slurm")
    assert line in script.splitlines() and "gmodel" not in script
    kind = gres.split(":")[1]
    assert f"approximated: GPU type {kind} (a MIG profile, a GPU instance of {slices} " \
           f"slice(s)) as -gpu mig={slices} (LSF asks MIG instances by their size; a " \
           "gmodel= names a GPU model, which no host would have)" in warnings
    script, _, _ = translate(text.replace(gres, "gpu:a100:1"), "lsf", "slurm")  # (guard)
    assert '#BSUB -gpu "num=1:gmodel=a100"' in script.splitlines()


def test_late_and_here_document_directives_are_read_as_each_scheduler_reads_them():
    """sbatch/qsub(PBS)/bsub stop at the first command; Grid Engine's qsub reads on, a
    here-document's lines too; flux batch rejects ungrouped ones: each said."""
    spec = get_script_dialect("sge").parse_script(
        (HERE / "sge/heredoc_with_sge_lines.sge").read_text())
    assert spec.resources.walltime_s == 99 * 3600 and request_totals(spec)["cpus"] == 64
    spec = get_script_dialect("lsf").parse_script(
        (HERE / "lsf/heredoc_with_bsub_lines.lsf").read_text())
    assert spec.name == "outer" and request_totals(spec)["tasks"] == 2
    spec = get_script_dialect("slurm").parse_script(
        (HERE / "slurm/heredoc_dash_tabbed_input.sbatch").read_text())
    assert spec.resources.walltime_s == 8 * 3600
