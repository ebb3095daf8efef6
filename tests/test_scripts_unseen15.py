"""A fifteenth set of realistic batch scripts (tests/fixtures/scripts_unseen15/<dialect>/),
written in the styles centers' user guides show, favouring what the earlier sweeps held few
of: a Slurm hetjob of three components (a whole-node leader with --mem=0, GPU workers with
--cpus-per-gpu), --begin=now+90 with --deadline, `after:ID+30?afterany:ID`, --test-only,
-W, --signal=R:SIGUSR2@300 with --open-mode=append, counted constraint groups
(`[rack1*2&rack2*4]`), --export=NIL with --export-file, --time=UNLIMITED with a partition
list, --gpus-per-socket, %N outputs, DataWarp `#DW` lines, --no-kill with
--wait-all-nodes and --propagate, --nodes=2-4 with every mail type, --chdir=/scratch/%u
with --hold, --core-spec with --hint=nomultithread, --overcommit with --oversubscribe,
--gpus-per-node of two GPU types;
PBS Pro select chunks of three shapes, `-q workq@server`, `-o host:path`,
-W max_run_subjobs, MetaCentrum scratch_local and gpu_mem, place=vscatter:shared, -I,
job-wide ncpus and mem with -p and -h, `-a 1830`; Torque gpus with a mode and a property,
-W x=NACCESSPOLICY, depend=afterokarray, umask; LSF affinity[] with its options, -gpu with
mps and gmem, -Is, -K with -b and -t, -m host lists with a queue list, a compound
requirement, -env "all, ..." with -cwd %U/%J, old rusage[ngpus_physical], exit() ||
numdone(), -network; Grid Engine -l gpu,exclusive with -sync y, -binding striding and
explicit, -js, -shell no, -hold_jid by name pattern, -v lists, a hostgroup queue instance,
-pe smp 4-, -t with -tc, -p and -a, -now y, -ac, -P with -A, -R y, -r yes; flux
--setattr=system.queue, --urgency=hold, -N -n -c -g with --add-file, --env=-* then names,
--begin-time=+1h, --signal=SIGUSR1@10m, -o shell options, --dependency=afternotok,
--flags=waitable, --requires=-host:, --time-limit=0.

Each is parsed and compared with its EXPECTED row, its needs read, and translated into
every dialect (its own too) and read back (tests/scripts_unseen_check.py); each is placed
on recorded sites of every scheduler without a crash. Faults found, each fixed and shown by
a test here or in tests/test_placement_cases15.py: flux's `--setattr=system.queue=NAME`
(what --queue sets, applied after it) was kept unread, the job placed in any queue and its
queue said dropped elsewhere; sbatch's `--test-only` (and --help, --usage, --version) and
flux batch's `--dry-run` submit no job, yet were written back and submitted, the engine
left to look for a job that never was: refused at submit, saying why; a Slurm constraint's
counted group (`[rack1*2&rack2*4]`: two nodes of rack1, four of rack2) reached LSF as
`select[(rack1 && rack2)]` and flux as `(rack1&rack2)`, every node of both racks, which no
node is: now each node of one of them, said; a Slurm job asking no time limit
(`--time=UNLIMITED`, `INFINITE`, `0`) was placed in partitions of a finite MaxTime, where
slurmctld holds it (PartitionTimeLimit) for good: refused there, said; `--core-spec` and
`--thread-spec` did not keep cores from the job, `--overcommit` was placed as tasks x CPUs;
Torque's `afterokarray:ID[]`, which the PBS writer itself writes, was not read back as a
dependency; `--export=NIL` came back from a Slurm round trip as `NONE`, which loads the
login environment; a hetjob component's `--cpus-per-gpu` kept every later component
unread, and a component's `--mem=0` was dropped unsaid in other schedulers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from diamond_jupyter.dialects.translate import translate
from diamond_jupyter.model import BadInput
from tests.scripts_unseen_check import (
    ALL_STRICT,
    COMPARED_FIELDS,
    parse_lines,
    sweep_tests,
    translated,
)

HERE = Path(__file__).parent / "fixtures" / "scripts_unseen15"
G = 1024  # MB in a GB

# As in the earlier sweeps: whole-job totals (every one checked, None when left out),
# walltime seconds, array, deps, the options kept as unknown directives (in order), JobSpec
# fields; `needs_gpus`/`needs_mem` per node (needs_of); `per_cpu` memory per CPU; `notes`
# words a parse note holds; `ignored` how many directives were noted as ignored.
EXPECTED: dict[str, dict[str, Any]] = {
    # -------------------------------------------------------------------------------------- flux
    "flux/N_n_c_g_add_file.flux": dict(
        nodes=2, tasks=8, cpus=16, gpus=8, needs_gpus=4, walltime=7200, name="with_files",
        unknown=["--add-file", "--add-file"]),
    "flux/dependency_afternotok_flags_waitable.flux": dict(
        tasks=1, cpus=1, walltime=300, deps=[("afternotok", ["f3QwQ7MpR5h"])], name="on_failure",
        unknown=["--flags", "--requires"]),
    "flux/env_clear_then_keep_begin_plus.flux": dict(
        tasks=1, cpus=1, walltime=600, name="clean_env", begin="now+3600", export_all=False,
        variables={"RUN_ID": "42"}, passed=["PATH", "HOME"]),
    # --setattr=system.queue=pbatch is the queue (--queue sets it): it was kept unread
    "flux/setattr_system_queue_urgency_word.flux": dict(
        nodes=1, tasks=4, cpus=4, walltime=1800, name="queued_by_attr", queue="pbatch", hold=True),
    "flux/shell_options_affinity_mpi.flux": dict(
        nodes=4, tasks=32, cpus=32, gpus=16, needs_gpus=4, walltime=10800, name="shell_opts",
        unknown=["--setopt"]),
    "flux/signal_at_time_cwd_label_io.flux": dict(
        nodes=1, tasks=16, cpus=16, walltime=14400, name="sig_flux",
        working_directory="/p/lustre1/heidi/run3", unknown=["--signal", "--label-io"]),
    "flux/time_limit_zero_cores_slots.flux": dict(
        nodes=2, tasks=2, cpus=32, name="no_limit", stdout="flux-%j.out",
        unknown=["--time-limit"]),
    # --------------------------------------------------------------------------------------- LSF
    "lsf/K_wait_begin_term_time.lsf": dict(
        tasks=2, cpus=2, walltime=3600, name="waiter", begin="20:30:00", unknown=["-K", "-t"]),
    "lsf/affinity_core_same_socket_membind.lsf": dict(
        nodes=4, tasks=16, cpus=32, walltime=7200, name="pinned", queue="gpu",
        unknown=["-R select", "-R affinity"]),
    "lsf/compound_res_req.lsf": dict(
        nodes=3, tasks=5, cpus=5, memory_mb=64000, needs_mem=64000, walltime=14400,
        name="compound", unknown=["-R{1} select", "-R{2} select"],
        notes=["compound resource requirement of 2 terms read as a job of 2 shapes"]),
    "lsf/env_all_cwd_user_job_eo_oo.lsf": dict(
        tasks=8, cpus=8, memory_mb=32 * G, per_cpu=4 * G, walltime=10800, name="env_cwd",
        stdout="run.out", stderr="run.err", working_directory="/scratch/%U/%J_run",
        variables={"OMP_NUM_THREADS": "1", "RUN_MODE": "prod"},
        notes=["-M 4G read as 4096MB per task"]),
    "lsf/gpu_mps_gmem_shared.lsf": dict(
        nodes=1, tasks=4, cpus=4, gpus=1, needs_gpus=1, walltime=3600, name="mps_job",
        stdout="mps.%j.out", unknown=["-gpu mode", "-gpu mps", "-gpu gmem"]),
    "lsf/host_list_m_queue_list.lsf": dict(
        tasks=8, cpus=8, walltime=1800, name="picky_hosts", queue="short,normal", unknown=["-m"]),
    "lsf/interactive_Is.lsf": dict(
        tasks=1, cpus=1, walltime=1800, queue="interactive", unknown=["-Is"]),
    "lsf/network_pe_ptile_x.lsf": dict(
        nodes=2, tasks=64, cpus=64, walltime=21600, exclusive=True, name="pe_net",
        account="climate", unknown=["-network"]),
    "lsf/rusage_ngpus_physical_mem_gb_unit.lsf": dict(
        tasks=1, cpus=1, gpus=2, memory_mb=12 * G, per_cpu=12 * G, needs_gpus=2, walltime=28800,
        name="old_gpu_syntax", unknown=["-R select", "-app"]),
    "lsf/w_exit_code_numdone_array.lsf": dict(
        tasks=1, cpus=1, walltime=1200, name="reduce", unknown=["-w", "-E"]),
    # -------------------------------------------------------------------------- PBS Pro / Torque
    "pbs/pro_a_short_time_hhmm.pbs": dict(
        nodes=1, tasks=1, cpus=2, walltime=1200, name="at_six", begin="18:30:00"),
    "pbs/pro_interactive_I.pbs": dict(
        nodes=1, tasks=1, cpus=8, walltime=3600, name="interact", unknown=["-I"]),
    "pbs/pro_jobwide_ncpus_mem_nodes_torque_style_mix.pbs": dict(
        cpus=16, memory_mb=64 * G, needs_mem=64 * G, walltime=36000, name="jobwide", hold=True,
        unknown=["-l", "-p"]),
    "pbs/pro_max_run_subjobs_J.pbs": dict(
        nodes=1, tasks=1, cpus=2, memory_mb=4 * G, needs_mem=4 * G, walltime=3600,
        array="1-200%10", name="limited_array"),
    "pbs/pro_metacentrum_scratch_local_gpu_mem.pbs": dict(
        nodes=1, tasks=1, cpus=4, gpus=1, memory_mb=16 * G, needs_gpus=1, needs_mem=16 * G,
        walltime=7200, name="meta_gpu", queue="gpu",
        unknown=["-l select:scratch_local", "-l select:gpu_mem"]),
    "pbs/pro_output_host_prefix.pbs": dict(
        nodes=1, tasks=1, cpus=1, walltime=600, name="host_paths",
        stdout="/home/erin/logs/host_paths.out", stderr="/home/erin/logs/host_paths.err",
        notes=["line 5: host prefix dropped from login1:"]),
    "pbs/pro_place_vscatter_shared.pbs": dict(
        nodes=8, tasks=8, cpus=8, memory_mb=16 * G, needs_mem=2 * G, walltime=1800,
        name="vscatter", unknown=["-l place:vscatter", "-l place:shared"]),
    "pbs/pro_queue_at_server_mail_abe.pbs": dict(
        nodes=1, tasks=1, cpus=4, memory_mb=8 * G, needs_mem=8 * G, walltime=2700,
        name="remote_queue", queue="workq", mail_events=["fail", "begin", "end"],
        mail_user="dave@hpc.example.org",
        notes=["the PBS server pbs01.hpc.example.org has no equivalent"]),
    "pbs/pro_select_three_chunk_shapes.pbs": dict(
        nodes=5, tasks=110, cpus=152, gpus=1, memory_mb=490 * G, needs_gpus=1, needs_mem=180 * G,
        walltime=21600, name="mixed_chunks", queue="regular", account="NCAR0001",
        notes=["(3 chunks) read as a job of 3 shapes"]),
    "pbs/torque_nodes_ppn_gpus_mode_property.pbs": dict(
        nodes=2, tasks=16, cpus=16, gpus=4, memory_mb=48 * G, per_cpu=3 * G, needs_gpus=2,
        walltime=43200, features=["k80"], name="torque_gpu_mode",
        unknown=["-l nodes:exclusive_process", "-W"]),
    # Torque's afterokarray:8812[] (its writer's own form) was kept unread
    "pbs/torque_x_naccesspolicy_depend_afterokarray.pbs": dict(
        nodes=1, tasks=4, cpus=4, walltime=5400, deps=[("afterok", ["8812[]"])], name="collect",
        unknown=["-W", "-W"]),
    # ------------------------------------------------------------------------------- Grid Engine
    "sge/binding_explicit_masterl.sge": dict(
        nodes=1, cpus=2, walltime=3600, architecture="x86_64", name="explicit_bind",
        unknown=["-binding", "-w"]),
    "sge/binding_striding_js_shell_no.sge": dict(
        tasks=16, cpus=16, memory_mb=32 * G, per_cpu=2 * G, walltime=14400, name="stride",
        unknown=["-binding", "-js", "-shell"]),
    "sge/gpu_exclusive_sync_y.sge": dict(
        gpus=1, needs_gpus=1, walltime=7200, exclusive=True, name="gpu_sync", unknown=["-sync"]),
    "sge/hold_jid_name_wildcard_v_list.sge": dict(
        walltime=1800, name="merge", stdout="merge.log", variables={"DATA": "/data/set1"},
        passed=["VERBOSE"], unknown=["-hold_jid"]),
    "sge/now_y_ac_context_P_A.sge": dict(
        walltime=600, name="now_job", account="grant_77", unknown=["-now", "-ac", "-P"]),
    "sge/queue_hostgroup_instance_pe_open_range.sge": dict(
        nodes=1, cpus=4, memory_mb=6 * G, per_cpu=1536, walltime=43200, name="open_range",
        queue="all.q", unknown=["-pe"], notes=["slot range smp 4- read as at least 4 slots"]),
    "sge/r_yes_R_y_mem_free_pe_orte.sge": dict(
        tasks=64, cpus=64, memory_mb=192 * G, per_cpu=3 * G, walltime=86400, name="reserve_big",
        requeue=True, mail_events=["begin", "end", "fail"], mail_user="grace@lab.example",
        unknown=["-R"]),
    "sge/t_tc_js_priority_begin.sge": dict(
        walltime=900, array="1-500%20", name="sweep", stdout="logs/sweep.%a.out",
        stderr="/dev/null", begin="2027-03-01T08:00:00", unknown=["-p"]),
    # ------------------------------------------------------------------------------------- Slurm
    "slurm/begin_now_plus_seconds_deadline_date.sbatch": dict(
        tasks=1, cpus=1, memory_mb=1 * G, needs_mem=1 * G, walltime=1200, name="delayed_start",
        begin="now+90", unknown=["--deadline"]),
    "slurm/chdir_user_pattern_hold.sbatch": dict(
        tasks=1, cpus=1, walltime=300, name="held", working_directory="/scratch/%u/runs",
        hold=True),
    # two nodes of rack1 and four of rack2: LSF and flux got every node of both racks
    "slurm/constraint_counts_brackets.sbatch": dict(
        nodes=6, tasks=96, cpus=96, walltime=7200, features=["[rack1*2&rack2*4]"],
        name="two_racks"),
    # --core-spec=4 keeps 4 cores of each node from the job (placement: 60 tasks need a
    # node of 64 CPUs at least, one thread a core)
    "slurm/core_spec_thread_bound_solver.sbatch": dict(
        nodes=4, tasks=240, cpus=240, walltime=21600, name="noise_free", account="hpc_perf",
        unknown=["--core-spec", "--hint"]),
    "slurm/datawarp_dw_lines.sbatch": dict(
        nodes=4, walltime=3600, features=["haswell"], name="bb_stage", qos="regular"),
    "slurm/dependency_after_delay_or.sbatch": dict(
        tasks=1, cpus=1, walltime=600, name="cleanup_after", unknown=["--dependency"]),
    "slurm/export_nil_export_file.sbatch": dict(
        tasks=2, cpus=2, walltime=1800, name="clean_env", export_all=False,
        unknown=["--export-file"]),
    # GPUs of two types on one node: read as one GPU of type `a100:2,v100` before
    "slurm/gpus_per_node_two_types.sbatch": dict(
        nodes=1, tasks=3, cpus=3, walltime=7200, name="mixed_gpu_node", queue="gpu",
        unknown=["--gpus-per-node"], notes=["--gpus-per-node=a100:2,v100:1 asks GPUs of "
                                            "several types; kept as written"]),
    "slurm/gpus_per_socket_cpus_per_gpu.sbatch": dict(
        nodes=1, needs_gpus=4, walltime=21600, name="socket_gpus",
        unknown=["--sockets-per-node", "--gpus-per-socket", "--cpus-per-gpu"]),
    # a whole-node leader (--mem=0), GPU workers of 8 CPUs per GPU (--cpus-per-gpu, which
    # kept the later components unread) and 512 one-CPU tasks
    "slurm/hetjob_three_components_mem_zero_leader.sbatch": dict(
        nodes=7, tasks=521, cpus=640, gpus=8, memory_mb=512 * G, needs_gpus=4,
        needs_mem=128 * G, walltime=14400, name="coupled3", queue="standard", account="clim42",
        notes=["heterogeneous job of 3 components: 7 nodes, 521 tasks, 640 CPUs, 8 GPUs"]),
    "slurm/no_kill_wait_all_nodes_propagate.sbatch": dict(
        nodes=8, tasks=32, cpus=32, walltime=10800, name="robust",
        unknown=["--no-kill", "--wait-all-nodes", "--propagate"]),
    "slurm/nodes_range_ntasks_per_node_mail_many.sbatch": dict(
        nodes=2, tasks=16, cpus=16, walltime=28800, name="elastic",
        mail_events=["begin", "end", "fail", "requeue", "invalid_depend"],
        mail_user="carol@uni.example", unknown=["--nodes"],
        notes=["node range 2-4 kept as minimum 2"]),
    "slurm/output_node_pattern_dev_null_error.sbatch": dict(
        nodes=2, tasks=2, cpus=2, walltime=900, name="quiet", stdout="out.%N.%j",
        stderr="/dev/null"),
    # --overcommit: CPUs as for one task a node (placement: 256 tasks on one node)
    "slurm/overcommit_many_light_tasks.sbatch": dict(
        nodes=1, tasks=256, cpus=256, memory_mb=125 * G, per_cpu=500, walltime=1800,
        name="light_tasks", unknown=["--overcommit", "--oversubscribe"]),
    "slurm/signal_sig_prefix_r_flag.sbatch": dict(
        nodes=2, tasks=64, cpus=64, walltime=86400, name="ckpt_sim", stdout="ckpt_sim.log",
        requeue=True, unknown=["--signal"]),
    # sbatch --test-only submits no job: refused at submit (the kept option stays here)
    "slurm/test_only_wait_flag.sbatch": dict(
        nodes=16, tasks=768, cpus=768, walltime=43200, name="probe", unknown=["--test-only"]),
    # no time limit: held PartitionTimeLimit where the partition has a MaxTime (placement)
    "slurm/time_unlimited_partition_list.sbatch": dict(
        tasks=1, cpus=2, name="forever", queue="long,preempt", unknown=["--time"]),
    "slurm/wait_flag_blocks.sbatch": dict(
        tasks=4, cpus=4, walltime=300, name="blocker", unknown=["--wait"]),
}

test_every_fixture_has_expectations, test_parse_values, test_translates_or_reports = \
    sweep_tests(HERE, EXPECTED, fields=COMPARED_FIELDS, strict=ALL_STRICT, at_least=40)


def test_flux_setattr_system_queue_is_the_queue():
    """`--setattr=system.queue=pbatch` sets what --queue sets (flux applies --setattr after
    it, wherever it is written): it was kept unread, so placement chose among every queue
    and a Slurm translation said it dropped instead of naming the partition."""
    rel = "flux/setattr_system_queue_urgency_word.flux"
    script, warnings = translated(HERE, rel, "slurm")
    assert "#SBATCH --partition=pbatch\n" in script
    assert not any("setattr" in w for w in warnings), warnings
    assert "#flux: --queue=pbatch\n" in translated(HERE, rel, "flux")[0]
    for lines in ("#flux: -S queue=pdebug\n#flux: --queue=pbatch",
                  "#flux: --queue=pbatch\n#flux: --setattr=.system.queue=pdebug"):
        spec = parse_lines("flux", lines)
        assert spec.queue == "pdebug" and not spec.unknown, lines
        assert any("--setattr queue=pdebug is the queue (flux sets it after --queue, which "
                   "asked pbatch)" in n for n in spec.metadata["parse_notes"])
    # an empty name, or another namespace's queue: kept for flux to judge
    for value in ("system.queue=", "user.queue=pdebug"):
        spec = parse_lines("flux", f"#flux: --setattr={value}")
        assert spec.queue is None and [d.value for d in spec.unknown] == [value]


@pytest.mark.parametrize("site, line, said", [
    ("slurm", "#SBATCH --test-only",
     "sbatch --test-only only says when and where the job would start and submits no job"),
    ("slurm", "#SBATCH --usage", "sbatch --usage prints its usage and submits no job"),
    ("flux", "#FLUX: --dry-run", "flux batch --dry-run prints the jobspec and submits no job"),
])
async def test_an_option_after_which_nothing_is_submitted_is_refused(tmp_path, monkeypatch,
                                                                    site, line, said):
    """sbatch --test-only validates the job and says when it would start, submitting
    nothing (so does flux batch --dry-run, printing the jobspec): written back and run, the
    engine recorded a job that never was and looked for it. Refused before anything runs,
    saying why and what to do; another scheduler's translation says it dropped."""
    from tests.test_submit_waits import _fed

    fed = _fed(tmp_path, monkeypatch)
    try:
        spec = fed.spec_from_text(f"#!/bin/bash\n{line}\necho hi\n", None)
        with pytest.raises(BadInput) as refused:
            await fed.submit(spec, site)
        why = str(refused.value)
        assert why.startswith(f"{line.strip()!r}: {said}; the engine would find no job to "
                              "follow: remove it to submit the job"), why
        assert fed.store.list_jobs() == [] and not (tmp_path / f"{site}.script").exists()
    finally:
        await fed.close()
    _, warnings = translated(HERE, "slurm/test_only_wait_flag.sbatch", "pbs")
    assert "dropped: #SBATCH --test-only (--test-only: no pbs equivalent)" in warnings


@pytest.mark.parametrize("target, line, said", [
    ("lsf", '#BSUB -R "span[ptile=16] select[(rack1 || rack2)]"\n', "LSF"),
    ("flux", '#flux: --requires="(rack1|rack2)"\n', "flux"),
])
def test_counted_constraint_groups_are_each_node_one_of_them(target, line, said):
    """`--constraint="[rack1*2&rack2*4]"`: two nodes with rack1 and four with rack2
    (sbatch's multiple counts). LSF got `select[(rack1 && rack2)]` and flux
    `(rack1&rack2)`: every node in both racks, which no node is, so the job never started.
    Each node has one of them: an OR there, said, and the counts said dropped."""
    script, warnings = translated(HERE, "slurm/constraint_counts_brackets.sbatch", target)
    assert line in script, script
    assert (f"approximated: constraint [rack1*2&rack2*4] (so many nodes with each) as every "
            f"node having one of them ({said} cannot split the nodes among requirements)"
            ) in warnings
    assert any(w.startswith("approximated: node counts in constraint") for w in warnings)
    # a bracket of alternatives without counts is still the same one on every node
    plain = translate("#!/bin/bash\n#SBATCH -N 2 -C [a|b]\n./a\n", target, "slurm")[1]
    assert any("cannot ask for the same one on every node" in w for w in plain), plain


@pytest.mark.parametrize("term, kind, ids, written", [
    ("afterokarray:8812[]", "afterok", ["8812[]"], None),
    ("afteranyarray:8812[].srv", "afterany", ["8812[].srv"], None),
    ("afternotokarray:8812[]:8813[]", "afternotok", ["8812[]", "8813[]"],
     "afternotokarray:8812[],afternotokarray:8813[]"),  # one term an array, as Torque's own
    ("afterstartarray:8812[]", "after", ["8812[]"], None),
])
def test_torque_array_dependency_kinds_are_read(term, kind, ids, written):
    """Torque waits on a whole job array through its own kinds (`afterokarray:8812[]`),
    which the PBS writer itself writes for a Torque site: they were kept unread (no
    dependency, the job said to depend on nothing), so a script the engine wrote did not
    read back the same. Now the dependency they are; a Torque round trip writes them back."""
    spec = parse_lines("pbs", f"#PBS -l nodes=1:ppn=1\n#PBS -W depend={term}")
    assert [(d.kind, d.job_ids) for d in spec.dependencies] == [(kind, ids)]
    assert not spec.unknown
    back = translate(f"#!/bin/bash\n#PBS -l nodes=1:ppn=1\n#PBS -W depend={term}\n./a\n",
                     "pbs", "pbs")[0]
    assert f"#PBS -W depend={written or term}\n" in back
    # a count of the array's tasks (`8812[][5]`) has no neutral form: kept as written
    counted = parse_lines("pbs", "#PBS -W depend=afterokarray:8812[][5]")
    assert not counted.dependencies and [d.value for d in counted.unknown] == [
        "depend=afterokarray:8812[][5]"]


def test_slurm_export_nil_stays_nil():
    """`--export=NIL` and `--export=NONE` both pass no variables but the SLURM_ ones, and
    NONE makes sbatch load the user's login environment on the node (as --get-user-env);
    NIL does not. A Slurm round trip wrote NIL back as NONE: the job ran in a login
    environment its author had turned away, unsaid."""
    script, warnings = translated(HERE, "slurm/export_nil_export_file.sbatch", "slurm")
    assert "#SBATCH --export=NIL\n" in script and "NONE" not in script, script
    assert not warnings
    none = "#!/bin/bash\n#SBATCH -n 1 -t 5 --export=NONE\n./a\n"
    assert "#SBATCH --export=NONE\n" in translate(none, "slurm", "slurm")[0]
    # the last --export counts, whole
    later = "#!/bin/bash\n#SBATCH --export=NIL\n#SBATCH -n 1 -t 5 --export=NONE\n./a\n"
    assert "#SBATCH --export=NONE\n" in translate(later, "slurm", "slurm")[0]
    # elsewhere it is the environment not exported, as before
    assert "#BSUB -env none\n" in translated(HERE, "slurm/export_nil_export_file.sbatch", "lsf")[0]


def test_hetjob_component_with_cpus_per_gpu_is_read():
    """A hetjob component asking `--cpus-per-gpu` (or `--mem-per-gpu`) kept every later
    component as written: only the first was read, so another scheduler got a one-node
    job and said it dropped the rest. Read as its CPUs per task where its GPUs make that
    exact; else still kept. And a component's --mem=0 (all of a node's memory), which no
    other scheduler has, is said dropped as the first's was."""
    rel = "slurm/hetjob_three_components_mem_zero_leader.sbatch"
    script, warnings = translated(HERE, rel, "slurm")
    later = script.split("#SBATCH hetjob\n")[1]
    assert "#SBATCH --cpus-per-task=8\n" in later and "#SBATCH --gpus-per-task=1\n" in later
    assert "#SBATCH --mem=0M\n" in script.split("#SBATCH hetjob\n")[0]
    script, warnings = translated(HERE, rel, "pbs")
    assert "+2:ncpus=32:mpiprocs=4:ngpus=4+" in script, script
    # --mem=0 is carried into component 1 (it asks no memory; sbatch carries --mem)
    assert ("dropped: memory 0 of component 0, 1 (Slurm's 'all memory of the node'; no pbs "
            "form)") in warnings
    # per-GPU memory of a component: its GPUs' memory a node
    spec = parse_lines("slurm", "#SBATCH -N 1 -n 1 -t 10\n#SBATCH hetjob\n"
                           "#SBATCH -N 2 --gpus-per-node=4 --mem-per-gpu=20G")
    assert spec.components[1].memory_mb == 80 * G and not spec.unknown
    # one it cannot hold exactly (4 GPUs shared by 3 tasks at 5 CPUs each): kept
    kept = parse_lines("slurm", "#SBATCH -N 1 -n 1 -t 10\n#SBATCH hetjob\n"
                           "#SBATCH -N 1 --ntasks-per-node=3 --gpus-per-node=4 --cpus-per-gpu=5")
    assert not kept.components and "--cpus-per-gpu" in [d.option for d in kept.unknown]


@pytest.mark.parametrize("option", ["--gpus", "--gpus-per-node", "--gpus-per-task"])
def test_gpus_of_several_types_are_kept_not_read_as_one_type(option):
    """sbatch takes GPUs of several types in one option (`--gpus=a100:2,v100:1`); it was
    read as one GPU of type `a100:2,v100`, which LSF got as `num=1:gmodel=a100:2,v100`
    and placement looked for on every node. Kept as written (placement reads each type,
    tests/test_placement_cases15.py); each entry must still be [type:]N."""
    spec = parse_lines("slurm", f"#SBATCH -N 1 -n 2 -t 10 {option}=a100:2,v100:1")
    r = spec.resources
    assert (r.gpu_type, r.gpus_per_node, r.gpus_per_task) == (None, None, None)
    assert [(d.option, d.value) for d in spec.unknown] == [(option, "a100:2,v100:1")]
    lsf = translate(f"#!/bin/bash\n#SBATCH -N 1 -n 2 -t 10 {option}=a100:2,v100:1\n./a\n",
                    "lsf", "slurm")
    assert "gmodel" not in lsf[0] and any(w.startswith("dropped: #SBATCH") for w in lsf[1])
    with pytest.raises(BadInput, match="bad GPU count"):
        parse_lines("slurm", f"#SBATCH -n 1 -t 10 {option}=a100:two,v100:1")
