"""An eighteenth set of realistic batch scripts (tests/fixtures/scripts_unseen18/<dialect>/),
written from each scheduler's documentation: Slurm --gres=gpu:a100:2,nvme:1, --gpus=a100:4,
--tres-per-task=cpu=4,gres/gpu:1, --switches=1@10:00 with --network, --wckey, --comment,
--mail-type=END,FAIL, --exclusive=user, --oversubscribe, --spread-job,
--distribution=block:cyclic with --mem=0, --batch, --chdir=/scratch/%u/%x, --export=NONE
then --export=A=1,B, --get-user-env=60L, --begin=now+2hours, --nice with --qos and
--requeue, --gpus-per-node=h100:4 with --mem-per-gpu, --time=0-06, a here-document holding
#SBATCH lines, CRLF line ends, a UTF-8 BOM, #!/bin/tcsh and #!/usr/bin/env python3, a padded
array index (%3a); PBS walltime in seconds alone and as MM:SS, select with host=/vnode=,
model=, ngpus/mpiprocs/ompthreads, place=pack:shared, -r n, -m abe -M, -V with -v A=1,B,
-a, -h, -q queue@server, -S /bin/csh, -W sandbox beside -W depend=afterany, ^array_index^,
Torque walltime=2:00:00:00; LSF -R "select[] order[] rusage[mem=2000:duration=10]",
rusage[mem=3GB], -x, -b, -w "done(123)" with -ti, -app, -P, -sla, -M 8GB with -hl,
-B/-N/-u, -gpu num=2:gmodel= with span[ptile=4], "name[1-100]%10" with %I, -cwd with %U, -L;
flux --requires=amd, --dependency=afterok:ID, --begin-time=+1h with --urgency,
-o gpu-affinity=per-task, --conf, -c, --exclusive with -N and --output={{id}}; Grid Engine
-l gpu=2, -q all.q@host, -binding linear:4, -R y with -a and -p, -notify with -S and -w e,
$TASK_ID outputs, -m bea, -V with -v, h_vmem with mem_free and -P.

Each is parsed and compared with its EXPECTED row, its needs read, and translated into
every dialect (its own too) and read back (tests/scripts_unseen_check.py). Faults found,
each fixed and shown by a test here that failed before: a padded array index (Slurm's
%3a) reached LSF, Grid Engine and PBS as the characters `%3a`, so every task of the array
wrote the one file (now their own index, unpadded, said); a flux `--exclusive` without
`--nodes`, which flux batch refuses ("exclusive can only be set with a node count"), was
read, and a translation of an exclusive job without a node count (LSF -x -n 16) wrote it
for flux (now refused as bad input in a flux script, and dropped, said, in a
translation)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from diamond_jupyter.dialects.scripts_common import output_file_name
from diamond_jupyter.dialects.translate import get_script_dialect, translate
from diamond_jupyter.model import BadInput
from tests.scripts_unseen_check import (
    ALL_STRICT,
    COMPARED_FIELDS,
    directive_lines,
    parse_lines,
    read_fixture,
    sweep_tests,
    translated,
)

HERE = Path(__file__).parent / "fixtures" / "scripts_unseen18"
G = 1024  # MB in a GB
BEGIN = "2027-01-15T02:30:00"

# As in the earlier sweeps: whole-job totals (every one checked, None when left out),
# walltime seconds, array, deps, the options kept as unknown directives (in order), JobSpec
# fields; `needs_gpus`/`needs_mem` per node (needs_of); `per_cpu` memory per CPU;
# `ignored` how many directives were noted as ignored. Output paths are in the neutral
# (Slurm) form.
EXPECTED: dict[str, dict[str, Any]] = {
    # ---------------------------------------------------------------------------------- flux
    # +1h: an hour after the submission
    "flux/begin_time_plus_1h_urgency.flux": dict(
        tasks=2, cpus=2, walltime=1200, unknown=["--urgency"], name="later_flux",
        begin="now+3600"),
    # -N 1 alone: one slot on a whole node
    "flux/conf_batch.flux": dict(
        nodes=1, tasks=1, cpus=1, walltime=600, unknown=["--conf"], name="confd",
        exclusive=True),
    "flux/cores_per_slot_c.flux": dict(tasks=4, cpus=32, walltime=10800, name="cps"),
    "flux/dependency_afterok_jobid.flux": dict(
        tasks=1, cpus=1, walltime=1800, deps=[("afterok", ["f2QW8bPnUkZ"])], name="dep_flux"),
    "flux/exclusive_queue_output.flux": dict(
        nodes=3, tasks=3, cpus=3, walltime=900, name="xq", queue="pdebug", stdout="xq.%j.log",
        exclusive=True),
    "flux/gpu_affinity_per_task.flux": dict(
        nodes=1, tasks=4, cpus=4, gpus=4, walltime=7200, name="gaff", gpu_bind="per_task:1",
        needs_gpus=4),
    "flux/requires_property.flux": dict(
        nodes=2, tasks=8, cpus=8, walltime=3600, features=["amd"], name="req_prop"),
    # ----------------------------------------------------------------------------------- LSF
    "lsf/M_units_hl.lsf": dict(
        tasks=2, cpus=2, memory_mb=16 * G, walltime=3600, unknown=["-hl"], name="memlimit",
        per_cpu=8 * G, notes=["-M 8GB read as 8192MB per task"]),
    # rusage[mem] per slot read; select[], order[] and the duration kept
    "lsf/R_select_order_rusage_duration.lsf": dict(
        tasks=8, cpus=8, memory_mb=16000, walltime=7200,
        unknown=["-R select", "-R order", "-R rusage"], name="memsel", stdout="memsel.%j.out",
        per_cpu=2000),
    "lsf/app_profile_project_sla.lsf": dict(
        tasks=4, cpus=4, walltime=10800, unknown=["-app", "-sla"], name="profiled",
        account="chem_dept"),
    "lsf/array_throttle_index_output.lsf": dict(
        walltime=1200, array="1-100%10", name="sweep", stdout="out/sweep.%j.%a.log"),
    "lsf/b_begin_time.lsf": dict(
        tasks=1, cpus=1, walltime=1800, name="begin_later", begin=BEGIN),
    "lsf/csh_L_shell.lsf": dict(
        tasks=1, cpus=1, walltime=300, unknown=["-L"], name="csh_lsf", shell="/bin/csh"),
    "lsf/cwd_outdir_e_file.lsf": dict(
        walltime=600, name="wd", stdout="out_%j.log", stderr="err_%j.log",
        working_directory="/work/%U/runs"),
    # -gpu num= is per host: 2 hosts of 4 slots, 2 GPUs each
    "lsf/gpu_num_gmodel_ptile.lsf": dict(
        nodes=2, tasks=8, cpus=8, gpus=4, walltime=28800, name="gpu_ptile", queue="gpu",
        gpu_type="TeslaV100_SXM2_32GB", needs_gpus=2),
    "lsf/mail_B_N_u.lsf": dict(
        tasks=1, cpus=1, walltime=600, name="notify", mail_events=["begin", "end"],
        mail_user="lee@lab.example"),
    "lsf/rusage_mem_units_GB_R.lsf": dict(
        nodes=1, tasks=4, cpus=4, memory_mb=12 * G, walltime=14400, name="gbmem",
        per_cpu=3 * G),
    "lsf/utf8_bom.lsf": dict(tasks=2, cpus=2, walltime=600, name="bom_lsf"),
    "lsf/w_done_ti.lsf": dict(
        tasks=1, cpus=1, walltime=900, deps=[("afterok", ["123"])], unknown=["-ti"],
        name="child"),
    "lsf/x_exclusive_queue.lsf": dict(
        tasks=16, cpus=16, walltime=3600, name="excl", queue="normal", exclusive=True),
    # ---------------------------------------------------------------------- PBS Pro / Torque
    # -V and -v A=1,B: everything, A set, B passed as it is
    "pbs/V_and_v_list.pbs": dict(
        nodes=1, tasks=1, cpus=1, walltime=300, name="envs", export_all=True,
        variables={"A": "1"}, passed=["B"]),
    "pbs/array_J_percent_outputs_index.pbs": dict(
        nodes=1, tasks=1, cpus=1, walltime=600, array="1-50:1", name="arr",
        stdout="logs/arr.%a.out", stderr=None),
    "pbs/crlf_line_ends.pbs": dict(nodes=1, tasks=1, cpus=2, walltime=600, name="crlf_pbs"),
    "pbs/csh_S_shell.pbs": dict(
        nodes=1, tasks=1, cpus=1, walltime=300, unknown=["-S"], name="csh_pbs",
        shell="/bin/csh"),
    # [[[[CC]YY]MM]DD]hhmm
    "pbs/deferred_a_datetime.pbs": dict(
        nodes=1, tasks=1, cpus=1, walltime=900, name="deferred", begin=BEGIN),
    "pbs/depend_afterany_and_W_sandbox.pbs": dict(
        nodes=1, tasks=1, cpus=1, walltime=600, deps=[("afterany", ["9001.pbsserver"])],
        unknown=["-W"], name="sandboxed"),
    "pbs/held_h.pbs": dict(nodes=1, tasks=1, cpus=2, walltime=1200, name="held", hold=True),
    "pbs/place_pack_shared.pbs": dict(
        nodes=1, tasks=1, cpus=2, memory_mb=4 * G, walltime=1800,
        unknown=["-l place:pack", "-l place:shared"], name="sharedpack", needs_mem=4 * G),
    "pbs/queue_at_server.pbs": dict(
        nodes=1, tasks=1, cpus=4, walltime=7200, name="remote_q", queue="workq",
        notes=["the PBS server pbs2.example.org has no equivalent"]),
    "pbs/rerun_n_mail_abe.pbs": dict(
        nodes=1, tasks=1, cpus=1, walltime=600, name="mails", requeue=False,
        mail_events=["fail", "begin", "end"], mail_user="kim@hpc.example"),
    "pbs/select_arch_model.pbs": dict(
        nodes=4, tasks=4, cpus=144, walltime=28800,
        unknown=["-l select:model", "-l place:scatter"], name="modelled"),
    "pbs/select_host_vnode.pbs": dict(
        nodes=2, tasks=2, cpus=16, walltime=3600,
        unknown=["-l select:host", "-l select:vnode"], name="pinned"),
    "pbs/select_ngpus_mpiprocs_ompthreads.pbs": dict(
        nodes=2, tasks=8, cpus=64, gpus=8, memory_mb=512 * G, walltime=21600,
        unknown=["-l select:ompthreads"], name="hybrid_gpu", queue="gpu", account="proj123",
        needs_gpus=4, needs_mem=256 * G),
    # Torque's -l mem is the job's: per node, half
    "pbs/torque_nodes_ppn_mem_walltime_dhms.pbs": dict(
        nodes=2, tasks=24, cpus=24, memory_mb=48 * G, walltime=172800, name="torq",
        needs_mem=24 * G),
    # [[hours:]minutes:]seconds: 45 min 30 s
    "pbs/walltime_minutes_seconds.pbs": dict(
        nodes=1, tasks=1, cpus=1, walltime=2730, name="mmss"),
    "pbs/walltime_seconds_only.pbs": dict(
        nodes=1, tasks=1, cpus=4, walltime=5400, name="secs"),
    # --------------------------------------------------------------------------- Grid Engine
    "sge/R_y_a_deferred_p.sge": dict(
        walltime=3600, unknown=["-R", "-p"], name="reserve_late", begin=BEGIN),
    "sge/V_and_v_list.sge": dict(
        walltime=300, name="env_sge", export_all=True, variables={"A": "1"}, passed=["B"]),
    "sge/binding_linear_pe_smp.sge": dict(
        nodes=1, cpus=4, walltime=7200, unknown=["-binding"], name="bound"),
    "sge/crlf_line_ends.sge": dict(walltime=600, name="crlf_sge"),
    "sge/l_gpu_2.sge": dict(gpus=2, walltime=14400, name="gpu_sge", needs_gpus=2),
    "sge/m_bea_M.sge": dict(
        walltime=600, name="mail_sge", mail_events=["begin", "end", "fail"],
        mail_user="max@lab.example"),
    # h_vmem per slot; mem_free (a load value) and the project kept
    "sge/mem_free_h_vmem_pe_orte.sge": dict(
        tasks=24, cpus=24, memory_mb=96 * G, walltime=43200, unknown=["-l mem_free", "-P"],
        name="orte", per_cpu=4 * G),
    # -S, not the #! line, is the shell Grid Engine starts
    "sge/notify_S_shell_w_e.sge": dict(
        walltime=2700, unknown=["-notify", "-w"], name="notified", shell="/bin/bash"),
    "sge/q_queue_at_host.sge": dict(
        walltime=1800, name="on_host", queue="all.q", notes=["named here: node07"]),
    "sge/t_array_o_task_id.sge": dict(
        walltime=600, array="1-40", name="arr_sge", stdout="logs/arr.%a.out", stderr=None),
    # --------------------------------------------------------------------------------- Slurm
    "slurm/array_padded_index_lsf_sge.sbatch": dict(
        walltime=1200, array="1-250%20", name="frames", stdout="render/frame_%3a.log",
        stderr="render/frame_%3a.err"),
    "slurm/batch_features_chdir_u_x.sbatch": dict(
        tasks=1, cpus=1, walltime=600, unknown=["--batch"], name="featjob",
        working_directory="/scratch/%u/%x", features=["skylake"]),
    "slurm/crlf_line_ends.sbatch": dict(
        tasks=2, cpus=2, walltime=1200, name="crlf_job", stdout="crlf_%j.out"),
    "slurm/deadline_begin_now_plus.sbatch": dict(
        tasks=1, cpus=1, walltime=1800, name="later", begin="now+2hours"),
    # --mem=0: all of each node's memory
    "slurm/distribution_block_cyclic_mem0.sbatch": dict(
        nodes=2, tasks=32, cpus=32, walltime=10800, name="bc", distribution="block:cyclic",
        node_mem=0),
    "slurm/exclusive_user.sbatch": dict(
        nodes=2, tasks=8, cpus=8, walltime=3600, unknown=["--exclusive"], name="mine_only"),
    # the last --export counts: A=1 and B alone (no ALL)
    "slurm/export_none_then_list.sbatch": dict(
        tasks=1, cpus=1, walltime=300, name="env_list", export_all=False,
        variables={"A": "1"}, passed=["B"]),
    "slurm/get_user_env_time.sbatch": dict(
        tasks=1, cpus=1, walltime=900, unknown=["--get-user-env"], name="login_env"),
    # a total over nodes Slurm picks: at least one GPU on each node
    "slurm/gpus_typed_total.sbatch": dict(
        tasks=4, cpus=4, walltime=86400, unknown=["--gpus"], name="llm_ft", queue="gpu",
        gpu_type="a100", needs_gpus=1),
    "slurm/gres_typed_gpu_and_nvme.sbatch": dict(
        nodes=1, tasks=2, cpus=2, gpus=2, walltime=14400, unknown=["--gres"],
        name="ckpt_nvme", gpu_type="a100", needs_gpus=2),
    # the child script's #SBATCH lines are the body's, which sbatch does not read
    "slurm/heredoc_sbatch_lines_in_body.sbatch": dict(
        tasks=1, cpus=1, walltime=600, name="generator", ignored=3),
    "slurm/mem_per_cpu_units_cpus.sbatch": dict(
        tasks=6, cpus=12, memory_mb=18000, walltime=21600, name="mpc", per_cpu=1500),
    "slurm/mem_per_gpu_gpus_per_node_typed.sbatch": dict(
        nodes=2, tasks=8, cpus=8, gpus=8, memory_mb=640 * G, walltime=43200, name="gpn",
        gpu_type="h100", needs_gpus=4, needs_mem=320 * G),
    "slurm/network_switches_wait.sbatch": dict(
        nodes=16, tasks=64, cpus=64, walltime=1800, unknown=["--switches", "--network"],
        name="allreduce"),
    "slurm/nice_priority_qos.sbatch": dict(
        tasks=1, cpus=1, walltime=7200, unknown=["--nice"], name="lowprio", requeue=True,
        qos="scavenger"),
    "slurm/oversubscribe_spread_job.sbatch": dict(
        tasks=32, cpus=32, walltime=1200, unknown=["--oversubscribe", "--spread-job"],
        name="spread"),
    "slurm/python_interpreter_env.sbatch": dict(
        cpus=8, memory_mb=16 * G, walltime=5400, name="py_job",
        shell="/usr/bin/env python3", needs_mem=16 * G),
    "slurm/tcsh_interpreter.sbatch": dict(
        tasks=4, cpus=4, walltime=1800, name="tcsh_job", shell="/bin/tcsh"),
    "slurm/tres_per_task_cpu_gpu.sbatch": dict(
        tasks=4, cpus=16, gpus=4, walltime=7200, name="tpt", needs_gpus=1),
    "slurm/utf8_bom.sbatch": dict(tasks=1, cpus=1, walltime=420, name="bom_job"),
    "slurm/wckey_comment_mail_end_fail.sbatch": dict(
        tasks=1, cpus=1, walltime=2700, unknown=["--wckey"], name="nightly",
        comment="nightly regression, owner: ana", mail_events=["end", "fail"],
        mail_user="ana@lab.example"),
}

test_every_fixture_has_expectations, test_parse_values, test_translates_or_reports = \
    sweep_tests(HERE, EXPECTED, fields=COMPARED_FIELDS, strict=ALL_STRICT, at_least=60)


@pytest.mark.parametrize(("target", "out", "err", "index"), [
    ("lsf", "#BSUB -oo render/frame_%I.log", "#BSUB -eo render/frame_%I.err", "%I"),
    ("sge", "#$ -o render/frame_$TASK_ID.log", "#$ -e render/frame_$TASK_ID.err",
     "$TASK_ID"),
    ("pbs", "#PBS -o render/frame_^array_index^.log", "#PBS -e render/frame_^array_index^.err",
     "^array_index^"),
])
def test_a_padded_array_index_is_each_task_s_own_file(target: str, out: str, err: str,
                                                      index: str):
    """sbatch writes %3a as the task's index padded to three digits (frame_007.log). LSF
    (%I), Grid Engine ($TASK_ID) and PBS Pro (^array_index^) have the index but cannot pad
    it: the `%3a` reached them as those characters, so all 250 tasks wrote one file
    `frame_%3a.log`, said only as "kept literally". Now each task's own file, unpadded,
    said."""
    script, warnings = translated(HERE, "slurm/array_padded_index_lsf_sge.sbatch", target)
    lines = script.splitlines()
    assert out in lines and err in lines and "%3a" not in script
    assert f"approximated: %3a in output path 'render/frame_%3a.log' as {index}, unpadded " \
           f"({target} cannot pad it: 7 is written 7, not 007)" in warnings
    # read back: the array's index in the name again, so task 7 and task 8 differ
    back = get_script_dialect(target).parse_script(script)
    assert back.stdout == "render/frame_%a.log"
    assert output_file_name(back.stdout, "slurm", job_id="41", name="frames")[1] == \
        "its array task's index"
    # a padded job id needs no index: LSF's %J and Grid Engine's $JOB_ID, unpadded too
    spec = parse_lines("slurm", "#SBATCH -t 5 -o run_%6j.out")
    rendered = get_script_dialect("lsf").render_script(spec)
    assert "#BSUB -oo run_%J.out" in rendered.script


def test_a_padded_index_stays_padded_where_it_can_be():
    """Slurm keeps its own %3a; flux batch has no arrays (the array is said dropped, and
    the token, which flux has no form for, stays as written, said)."""
    script, _ = translated(HERE, "slurm/array_padded_index_lsf_sge.sbatch", "slurm")
    assert "#SBATCH --output=render/frame_%3a.log" in script
    script, warnings = translated(HERE, "slurm/array_padded_index_lsf_sge.sbatch", "flux")
    assert any(w.startswith("dropped: array 1-250%20") for w in warnings)
    assert any("%3a in output path" in w and "kept literally" in w for w in warnings)


@pytest.mark.parametrize("lines", ["#flux: -n 4\n#flux: --exclusive",
                                   "#flux: -x\n#flux: -n 2 -c 4",
                                   "#flux: --cores=8\n#flux: --exclusive"])
def test_flux_exclusive_without_nodes_is_refused_as_flux_batch_refuses_it(lines: str):
    """flux-core's jobspec: "exclusive can only be set with a node count" (flux batch
    fails). The script was read, placed and translated as an exclusive job."""
    with pytest.raises(BadInput, match=r"line \d: --exclusive without --nodes: flux batch "
                                       r"refuses it .*add --nodes=N, or drop --exclusive"):
        parse_lines("flux", lines)
    # with a node count it is read, as before
    spec = parse_lines("flux", "#flux: -N 2 -n 4\n#flux: --exclusive")
    assert spec.constraints.exclusive and spec.resources.nodes == 2


def test_an_exclusive_job_without_a_node_count_reaches_flux_without_exclusive():
    """LSF's -x -n 16 (no host count) was written `--nslots=16 --exclusive` for flux,
    which flux batch refuses, said only as "approximated". Now dropped, said; with a node
    count (Slurm -N 2 --exclusive) it is kept."""
    script, warnings = translated(HERE, "lsf/x_exclusive_queue.lsf", "flux")
    assert "--exclusive" not in script and "#flux: --nslots=16" in script
    assert "dropped: exclusive node use (flux batch takes --exclusive only with --nodes, " \
           "and the job asks for no node count)" in warnings
    get_script_dialect("flux").parse_script(script)  # flux batch takes it
    script, warnings, _ = translate("#!/bin/bash\n#SBATCH -N 2 -n 8 --exclusive -t 10\n./a\n",
                                    "flux", "slurm")
    assert directive_lines(script, "#flux: --exclusive") and \
        not any("exclusive" in w for w in warnings)


def test_fixtures_keep_their_line_ends_and_mark():
    """The CRLF and BOM fixtures are what they say (an editor could have undone them)."""
    for rel in ("slurm/crlf_line_ends.sbatch", "pbs/crlf_line_ends.pbs",
                "sge/crlf_line_ends.sge"):
        assert "\r\n" in read_fixture(HERE, rel)[1]
    for rel in ("slurm/utf8_bom.sbatch", "lsf/utf8_bom.lsf"):
        assert read_fixture(HERE, rel)[1].startswith("\ufeff#!")
