"""A sixteenth set of realistic batch scripts (tests/fixtures/scripts_unseen16/<dialect>/),
written in the styles centers' user guides show, favouring how scripts are laid out more
than what they ask: directives after shell code, blank and comment lines, with trailing
comments, inside here-documents, ended by a backslash, repeated with conflicting values
(the last wins: sbatch, qsub and flux batch read them in order), CRLF line endings and a
BOM, `#!/bin/tcsh`, `#!/bin/csh` and `#!/usr/bin/env python3` payloads, job names with
blanks and non-ASCII letters, and scripts mixing two dialects' directives (a Slurm
script keeping its PBS or LSF header); Slurm --chdir with %u/%x, outputs `%A_%a`, `%j`,
`%N`, `%t`, --gres=shard, --kill-on-invalid-dep, days-hours times, mail for array
tasks; PBS `$PBS_O_WORKDIR`, `-o` to a directory with `-j oe`, `-k oed`, Torque
`-t 0-99%10` with `walltime=1:00:00:00`, a walltime in seconds, `-S /bin/tcsh` with
afternotok; LSF `-W 1:30` and `-W 90` with `-We`, `-c`, `-hl` with
`rusage[mem=4096:duration=10]`, `rusage[ngpus_physical=1]`, `-n 4,8`, `%J.%I` outputs,
`-o`/`-e` to directories, `-w` with done() and ended(); Grid Engine `h_vmem` per slot,
`s_vmem`, `-masterq`, `-ckpt`, `-r y`, `-notify`, `-p -100`, `-o` to a directory,
`-t 1-1000:10` with `-tc`, `-S /usr/bin/python3`, `-l hostname=a|b`; flux
`--time-limit=1h`, `-t 30m`, `--exclusive`, `--requires=host:`,
`--dependency=afterany:`, `--cwd`.

Each is parsed and compared with its EXPECTED row, its needs read, and translated into
every dialect (its own too) and read back (tests/scripts_unseen_check.py); placement in
tests/test_placement_cases16.py. Faults found, each fixed and shown by a test here or
there: sbatch reads a script's `#PBS` lines (or, where there are `#BSUB` lines, those)
after its `#SBATCH` ones unless --ignore-pbs is given, so a ported script's old
`#PBS -l walltime=` is its time limit: they were not read (the job placed and
translated with the #SBATCH values), and a Slurm round trip added --ignore-pbs, turning
them off; a translation left the target's own directive lines at the top of the body,
which the source's scheduler had never read, for the target to read (a Slurm script's
stale `#PBS -N`/`-l walltime=99:00:00` under --ignore-pbs became the PBS job's name and
limit, said only as "read by pbs"): now made comments, said; an output directory
between LSF (`<id>.out` in it) and PBS or Grid Engine (`<name>.o<id>`) changed the file's
name unsaid; the hosts a flux `--requires=host:` term or a Grid Engine
`-l hostname=a|b` names were not read by placement off flux sites, so a site holding none
of them (where the translation keeps them: LSF -m, which bsub refuses for a host it does
not know; Grid Engine, where the job waits for good) was READY."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from diamond_jupyter.dialects.translate import get_script_dialect, translate
from tests.scripts_unseen_check import ALL_STRICT, read_fixture, sweep_tests, translated

HERE = Path(__file__).parent / "fixtures" / "scripts_unseen16"
G = 1024  # MB in a GB

# As in the earlier sweeps: whole-job totals (every one checked, None when left out),
# walltime seconds, array, deps, the options kept as unknown directives (in order), JobSpec
# fields; `needs_gpus`/`needs_mem` per node (needs_of); `per_cpu` memory per CPU;
# `ignored` how many directives were noted as ignored.
EXPECTED: dict[str, dict[str, Any]] = {
    # ---------------------------------------------------------------------------------- flux
    "flux/bom_crlf_directives.flux": dict(
        nodes=1, tasks=8, cpus=8, walltime=5400, name="crlf_flux"),
    "flux/dependency_afterany_cwd.flux": dict(
        tasks=1, cpus=1, walltime=900, deps=[("afterany", ["fvNmEqGvGPh"])], name="after_any",
        working_directory="/p/lustre2/ann/stage2"),
    "flux/directive_after_blank_and_comment.flux": dict(
        tasks=2, cpus=2, walltime=7200, name="spaced_out"),
    # flux batch's directives must be grouped: the late one is ignored, said
    "flux/directive_after_command.flux": dict(
        tasks=1, cpus=1, name="late_flux", ignored=1),
    "flux/python_payload_flux.flux": dict(
        tasks=1, cpus=1, walltime=300, name="py_flux", shell="/usr/bin/env python3"),
    "flux/repeated_time_limit.flux": dict(
        tasks=1, cpus=1, walltime=1200, name="twice_flux"),
    # placement: only node1-node4, where the site's script keeps them
    "flux/t_30m_requires_host.flux": dict(
        nodes=1, tasks=4, cpus=4, walltime=1800, name="on_hosts", unknown=["--requires"]),
    "flux/time_limit_1h_exclusive_nodes.flux": dict(
        nodes=2, tasks=2, cpus=2, walltime=3600, exclusive=True, name="fx_excl",
        stdout="fx_excl.%j.out"),
    "flux/trailing_comment_flux.flux": dict(
        nodes=1, tasks=16, cpus=16, walltime=2700, queue="pdebug"),
    # ----------------------------------------------------------------------------------- LSF
    "lsf/W_hours_minutes_c_cpu_limit.lsf": dict(
        tasks=4, cpus=4, walltime=5400, name="cpu_capped", stdout="capped.%j.out"),
    "lsf/W_minutes_We_estimate.lsf": dict(
        tasks=1, cpus=1, walltime=5400, name="est", queue="short", unknown=["-We"]),
    "lsf/bom_crlf_name_with_space.lsf": dict(
        tasks=2, cpus=2, walltime=1800, name="nightly build", stdout="build.%j.log"),
    "lsf/crlf_ptile.lsf": dict(
        nodes=1, tasks=16, cpus=16, walltime=10800, name="crlf_lsf", queue="normal"),
    "lsf/csh_shebang_M_mem_limit.lsf": dict(
        tasks=1, cpus=1, memory_mb=2000, per_cpu=2000, walltime=900, name="cshjob",
        mail_user="ana@lab.example", mail_events=["end"], shell="/bin/csh"),
    "lsf/directive_after_command_trailing_comment.lsf": dict(
        tasks=2, cpus=2, name="late_bsub", ignored=1),
    "lsf/hl_rusage_mem_duration.lsf": dict(
        nodes=1, tasks=8, cpus=8, memory_mb=32 * G, per_cpu=4 * G, walltime=7200,
        name="hostlimit", stdout="%j.out", stderr="%j.err", unknown=["-R rusage", "-hl"]),
    "lsf/job_array_outputs_I.lsf": dict(
        tasks=1, cpus=1, walltime=1200, array="1-200%25", name="render",
        stdout="logs/render.%j.%a.out", stderr="logs/render.%j.%a.err"),
    # -n 4,8: at least 4 slots, at most 8; the minimum placed, the range kept
    "lsf/n_min_max_slots.lsf": dict(
        nodes=1, tasks=4, cpus=4, walltime=1800, name="elastic_lsf", unknown=["-n"]),
    # directories: LSF names the files <id>.out/.err in them (PBS/Grid Engine <name>.o<id>)
    "lsf/o_e_directories.lsf": dict(
        tasks=2, cpus=2, walltime=2700, name="dir_logs", stdout="/work/lab/logs/",
        stderr="/work/lab/errs/"),
    "lsf/rusage_ngpus_physical_one.lsf": dict(
        tasks=1, cpus=1, gpus=1, needs_gpus=1, walltime=14400, name="gpu1", queue="gpu"),
    "lsf/w_done_name_and_numeric.lsf": dict(
        tasks=1, cpus=1, walltime=600, name="merge_lsf", unknown=["-w"]),
    # ---------------------------------------------------------------------- PBS Pro / Torque
    "pbs/pro_crlf_select.pbs": dict(
        nodes=1, tasks=16, cpus=16, walltime=14400, name="crlf_pro", queue="normal"),
    # qsub stops at the first command: its later walltime is ignored, said
    "pbs/pro_directive_after_command.pbs": dict(
        nodes=1, tasks=1, cpus=2, name="late_opts", ignored=1),
    "pbs/pro_koed_e_o_files.pbs": dict(
        nodes=1, tasks=1, cpus=4, memory_mb=8 * G, needs_mem=8 * G, walltime=1800,
        name="keep_direct", stdout="run.out", stderr="run.err", unknown=["-k"]),
    "pbs/pro_name_with_spaces.pbs": dict(
        nodes=1, tasks=1, cpus=1, walltime=600, name="my run"),
    # the last walltime wins
    "pbs/pro_repeated_walltime_last_wins.pbs": dict(
        nodes=1, tasks=1, cpus=4, walltime=10800, name="twice"),
    "pbs/pro_tcsh_S_depend_afternotok.pbs": dict(
        nodes=1, tasks=1, cpus=1, walltime=1200, deps=[("afternotok", ["1234.pbs01"])],
        name="recover", shell="/bin/tcsh", unknown=["-S"]),
    "pbs/pro_trailing_comment_directives.pbs": dict(
        nodes=1, tasks=1, cpus=8, memory_mb=16 * G, needs_mem=16 * G, walltime=7200,
        name="commented", account="proj123"),
    "pbs/pro_workdir_j_oe_o_directory.pbs": dict(
        nodes=2, tasks=72, cpus=72, memory_mb=360 * G, needs_mem=180 * G, walltime=28800,
        name="cfd_case7", queue="workq", stdout="/home/kim/logs/"),
    # walltime in days (1:00:00:00) and an array throttle
    "pbs/torque_array_pct_walltime_days.pbs": dict(
        nodes=1, tasks=2, cpus=2, memory_mb=4 * G, needs_mem=4 * G, walltime=86400,
        array="0-99%10", name="param_scan"),
    # the next job's #PBS lines in a here-document: after the first command, not this job's
    "pbs/torque_heredoc_pbs_lines_after_command.pbs": dict(
        nodes=1, tasks=1, cpus=1, walltime=600, name="stage_writer", ignored=3),
    "pbs/torque_nodes_ppn_walltime_seconds_only.pbs": dict(
        nodes=2, tasks=16, cpus=16, memory_mb=32 * G, per_cpu=2 * G, walltime=5400, name="secs",
        mail_user="lee@uni.example", mail_events=["fail", "begin", "end"]),
    # --------------------------------------------------------------------------- Grid Engine
    "sge/bom_crlf_smp.sge": dict(
        nodes=1, cpus=4, walltime=2700, name="bom_sge", shell="/bin/sh"),
    # qsub reads #$ lines anywhere in the script, after the first command too
    "sge/directive_after_command_trailing.sge": dict(
        walltime=36000, name="late_sge"),
    # h_vmem is per slot: 8 slots x 4G
    "sge/h_vmem_per_slot_pe_smp.sge": dict(
        nodes=1, cpus=8, memory_mb=32 * G, per_cpu=4 * G, walltime=21600, name="hvmem_slot"),
    # placement: only node07/node08 (tests/test_placement_cases16.py)
    "sge/hostname_list_h_rt.sge": dict(
        nodes=1, cpus=2, walltime=7200, name="pinned_host", unknown=["-l hostname"]),
    "sge/masterq_pe_mpi_ckpt.sge": dict(
        tasks=32, cpus=32, memory_mb=64 * G, per_cpu=2 * G, walltime=43200, name="mpi_master",
        unknown=["-masterq", "-ckpt"]),
    "sge/python_S_shell.sge": dict(
        walltime=600, name="pyjob", shell="/usr/bin/python3"),
    "sge/r_y_notify_p_negative.sge": dict(
        walltime=1800, name="low_prio", stdout="/home/sam/logs/", stderr="/home/sam/logs/",
        requeue=True, unknown=["-notify", "-p"]),
    # the last -N and -l h_rt win
    "sge/repeated_h_rt_and_N.sge": dict(
        walltime=7200, name="second_name"),
    "sge/s_vmem_h_vmem_no_pe.sge": dict(
        memory_mb=8 * G, per_cpu=8 * G, walltime=3600, name="soft_mem", unknown=["-l s_vmem"]),
    "sge/t_array_step_outputs_task_id.sge": dict(
        walltime=300, array="1-1000:10%50", name="chunks", stdout="logs/%x.%j.%a.out"),
    "sge/trailing_comment_directives.sge": dict(
        nodes=1, cpus=4, walltime=14400, name="commented_sge"),
    # --------------------------------------------------------------------------------- Slurm
    "slurm/array_output_A_a_throttle.sbatch": dict(
        tasks=1, cpus=8, memory_mb=16 * G, needs_mem=16 * G, walltime=10800, array="0-99%10",
        name="align_arr", stdout="logs/align_%A_%a.out", stderr="logs/align_%A_%a.err"),
    "slurm/bom_crlf_cpus_per_task.sbatch": dict(
        tasks=2, cpus=8, walltime=5400, name="win_edit", stdout="win_edit_%j.log"),
    # #BSUB lines found: sbatch reads them (over #SBATCH) and not the #PBS line
    "slurm/bsub_leftovers_after_sbatch.sbatch": dict(
        tasks=8, cpus=8, walltime=7200, name="lsf_era_name", queue="normal"),
    "slurm/chdir_user_jobname_patterns.sbatch": dict(
        tasks=1, cpus=16, memory_mb=48 * G, per_cpu=3 * G, walltime=43200, name="assembly",
        stdout="%x-%j.out", stderr="%x-%j.err", working_directory="/scratch/%u/%x"),
    # a backslash ends a directive line as any other character: no continuation
    "slurm/continuation_backslash_directive.sbatch": dict(
        tasks=2, cpus=2, walltime=300, name="cont"),
    "slurm/dependency_afterany_kill_invalid.sbatch": dict(
        tasks=1, cpus=1, walltime=900, deps=[("afterany", ["41234", "41235"])], name="stage2",
        unknown=["--kill-on-invalid-dep"]),
    # sbatch stops at `module load`: the time and memory lines after it are ignored, said
    "slurm/directive_after_module_load.sbatch": dict(
        tasks=4, cpus=4, name="ens_post", ignored=2),
    "slurm/exclusive_mem_per_cpu_mail_array_tasks.sbatch": dict(
        nodes=1, memory_mb=2 * G, per_cpu=2 * G, walltime=7200, array="1-4", exclusive=True,
        name="excl_arr", mail_user="jo@site.example", mail_events=["all", "array_tasks"]),
    "slurm/gres_shard_mps.sbatch": dict(
        tasks=1, cpus=1, walltime=3600, name="shared_gpu", queue="gpu", unknown=["--gres"]),
    # the child script's #SBATCH lines in a here-document are no directives of this job
    "slurm/heredoc_with_sbatch_lines.sbatch": dict(
        tasks=1, cpus=1, walltime=600, name="driver", ignored=3),
    # --ignore-pbs: the #PBS lines are not read (a PBS translation comments them out)
    "slurm/ignore_pbs_with_pbs_lines.sbatch": dict(
        tasks=1, cpus=1, walltime=1200, name="clean_port", unknown=["--ignore-pbs"]),
    # an indented #SBATCH line is no directive: the later --time counts
    "slurm/indented_sbatch_ignored.sbatch": dict(
        tasks=2, cpus=2, walltime=1800, name="indent", ignored=1),
    "slurm/job_name_spaces_unicode.sbatch": dict(
        tasks=1, cpus=1, walltime=600, name="Müller run 2"),
    # sbatch reads the #PBS lines after the #SBATCH ones (its PBS compatibility): their name
    # and time limit win (before: `ported`, 2 h, the #PBS lines unread)
    "slurm/mixed_pbs_and_slurm.sbatch": dict(
        tasks=4, cpus=4, walltime=36000, name="old_header"),
    "slurm/output_node_task_pattern.sbatch": dict(
        nodes=2, tasks=8, cpus=8, walltime=1800, name="per_rank", stdout="out_%N_%t.log"),
    "slurm/python_payload.sbatch": dict(
        tasks=1, cpus=4, memory_mb=4 * G, needs_mem=4 * G, walltime=2700, name="py_direct",
        shell="/usr/bin/env python3"),
    # repeated options: the last one wins (sbatch reads them in order)
    "slurm/repeated_conflicting_time.sbatch": dict(
        tasks=16, cpus=16, walltime=14400, name="retimed", queue="cpu"),
    "slurm/tcsh_shebang_setenv.sbatch": dict(
        tasks=1, cpus=1, memory_mb=2000, needs_mem=2000, walltime=1200, name="tcsh_job",
        shell="/bin/tcsh"),
    "slurm/time_days_hours_only.sbatch": dict(
        nodes=1, tasks=32, cpus=32, walltime=129600, name="long_md", queue="cpu"),
    "slurm/trailing_comments_directives.sbatch": dict(
        nodes=2, tasks=96, cpus=96, walltime=21600, name="wrf_d02", queue="cpu",
        mail_user="ivan@meteo.example", mail_events=["end", "fail"]),
}

_FIELDS = ("name", "queue", "account", "stdout", "stderr", "requeue", "mail_events",
           "mail_user", "working_directory", "hold", "begin", "shell", "comment",
           "reservation")

test_every_fixture_has_expectations, test_parse_values, test_translates_or_reports = \
    sweep_tests(HERE, EXPECTED, fields=_FIELDS, strict=ALL_STRICT, at_least=40)


def _notes(spec) -> list[str]:
    return spec.metadata.get("parse_notes", [])


def test_sbatch_reads_leftover_pbs_lines_after_the_sbatch_ones():
    """sbatch's PBS compatibility: unless --ignore-pbs, a script's #PBS lines are read
    after its #SBATCH lines and win (sbatch/opt.c reads them after the #SBATCH pass). They
    were not read: a ported script keeping `#PBS -l walltime=10:00:00` was placed and
    translated at its #SBATCH 2 h, and its Slurm round trip added --ignore-pbs, turning
    them off. Now read; its sizes are said not read; the round trip keeps them read."""
    _, text = read_fixture(HERE, "slurm/mixed_pbs_and_slurm.sbatch")
    spec = get_script_dialect("slurm").parse_script(text)
    assert (spec.name, spec.resources.walltime_s, spec.resources.tasks) == \
        ("old_header", 36000, 4)
    assert ("line 3: `#PBS -l walltime=10:00:00` is read by sbatch after the #SBATCH lines "
            "(PBS compatibility; #SBATCH --ignore-pbs turns it off): its time limit taken "
            "over the #SBATCH ones") in _notes(spec)
    script, warnings = translated(HERE, "slurm/mixed_pbs_and_slurm.sbatch", "slurm")
    assert "--ignore-pbs" not in script and "#PBS -l walltime=10:00:00\n" in script
    assert "#SBATCH --time=10:00:00\n" in script, script
    # the same job at a PBS site: what sbatch read is in the header, and the body's lines,
    # which qsub would read over it (the engine's job name and its token among them), are
    # made comments
    script, warnings = translated(HERE, "slurm/mixed_pbs_and_slurm.sbatch", "pbs")
    assert "##PBS -N old_header\n##PBS -l walltime=10:00:00\n" in script, script
    back = get_script_dialect("pbs").parse_script(script)
    assert (back.name, back.resources.walltime_s) == ("old_header", 36000)
    assert any(w.startswith("approximated: 2 #PBS line(s) at the top of the body made "
                            "##PBS comments") for w in warnings), warnings
    # sizes in a #PBS line are sbatch's to read, said not read here (the #SBATCH ones kept)
    sized = get_script_dialect("slurm").parse_script(
        "#!/bin/bash\n#SBATCH -n 2 -t 5\n#PBS -l nodes=2:ppn=4 -p 10\n./a\n")
    assert sized.resources.tasks == 2
    assert any(n.endswith("not read here: its sizes (the #SBATCH ones are kept), -p")
               for n in _notes(sized)), _notes(sized)


def test_sbatch_reads_bsub_lines_before_pbs_ones_and_none_with_ignore_pbs():
    """#BSUB lines found, sbatch reads them and stops (its #PBS ones unread); with
    --ignore-pbs neither (and SBATCH_IGNORE_PBS, the environment's, is not seen here)."""
    _, text = read_fixture(HERE, "slurm/bsub_leftovers_after_sbatch.sbatch")
    spec = get_script_dialect("slurm").parse_script(text)
    assert (spec.name, spec.queue, spec.resources.walltime_s) == \
        ("lsf_era_name", "normal", 7200)
    assert not any("never_read" in n for n in _notes(spec))
    _, text = read_fixture(HERE, "slurm/ignore_pbs_with_pbs_lines.sbatch")
    spec = get_script_dialect("slurm").parse_script(text)
    assert (spec.name, spec.resources.walltime_s) == ("clean_port", 1200)
    assert not _notes(spec)


def test_target_lines_the_source_never_read_are_made_comments():
    """A translation keeps the body as written; a target's own directive lines at its top
    were read by the target though the source's scheduler never read them: the Slurm job
    under --ignore-pbs became, at a PBS site, `stale` with a 99 h limit (said only as
    "they are read by pbs"). Now written as comments, said."""
    script, warnings = translated(HERE, "slurm/ignore_pbs_with_pbs_lines.sbatch", "pbs")
    assert "##PBS -N stale\n##PBS -l walltime=99:00:00\n" in script, script
    back = get_script_dialect("pbs").parse_script(script)
    assert (back.name, back.resources.walltime_s) == ("clean_port", 1200)
    assert ("approximated: 2 #PBS line(s) at the top of the body made ##PBS comments, so "
            "pbs does not read them after the header, which says what the slurm job asks (a "
            "script of both headers: read it as pbs to keep them)") in warnings
    # the #PBS line sbatch skipped for the #BSUB ones: the same
    script, _ = translated(HERE, "slurm/bsub_leftovers_after_sbatch.sbatch", "pbs")
    assert "##PBS -N never_read\n" in script
    # a PBS script's leftover #SBATCH line: sbatch would have read it after the header
    pbs = ("#!/bin/bash\n#PBS -N pbsjob\n#PBS -l select=1:ncpus=1\n"
           "#PBS -l walltime=01:00:00\n#SBATCH --time=99:00:00\n./a\n")
    script, warnings, _ = translate(pbs, "slurm", "pbs")
    assert "##SBATCH --time=99:00:00\n" in script
    assert get_script_dialect("slurm").parse_script(script).resources.walltime_s == 3600


def test_output_directories_keep_their_file_names_or_say_so():
    """`-o logs/` names a directory on LSF, PBS and Grid Engine, each writing its default
    file in it: LSF `<id>.out`, PBS and Grid Engine `<name>.o<id>`. Carried as the bare
    directory, the file's name changed unsaid. Grid Engine writes LSF's name out; PBS and
    LSF, which cannot write the other's, say so; PBS and Grid Engine agree."""
    script, warnings = translated(HERE, "lsf/o_e_directories.lsf", "sge")
    assert "#$ -o /work/lab/logs/$JOB_ID.out\n#$ -e /work/lab/errs/$JOB_ID.err\n" in script
    script, warnings = translated(HERE, "lsf/o_e_directories.lsf", "pbs")
    assert "#PBS -o /work/lab/logs/\n" in script
    assert ("approximated: stdout directory /work/lab/logs/: pbs names the file in it "
            "%x.o%j, where lsf named it %j.out") in warnings
    script, warnings = translated(HERE, "pbs/pro_workdir_j_oe_o_directory.pbs", "lsf")
    assert ("approximated: stdout directory /home/kim/logs/: lsf names the file in it "
            "%j.out, where pbs named it %x.o%j") in warnings
    script, warnings = translated(HERE, "sge/r_y_notify_p_negative.sge", "pbs")
    assert "#PBS -o /home/sam/logs/\n" in script
    assert not any("directory" in w for w in warnings), warnings


async def test_a_submitted_jobs_name_keeps_its_token_over_leftover_header_lines(
        tmp_path, monkeypatch):
    """The engine gives a PBS or LSF job its name with the idempotency token
    (`NAME.dmd-TOKEN`); a Slurm script's `#PBS -N` left at the top of the body was read by
    qsub after that header line, so the job went by the bare name and its token was lost.
    The site's body is translated as `diamond translate` does it: such lines made
    comments."""
    from tests.test_submit_waits import _fed

    fed = _fed(tmp_path, monkeypatch)
    try:
        _, text = read_fixture(HERE, "slurm/mixed_pbs_and_slurm.sbatch")
        spec = fed.spec_from_text(text, "slurm")
        job = await fed.submit(spec, "pbs")
        sent = (tmp_path / "pbs.script").read_text()
        names = [x for x in sent.splitlines() if x.startswith("#PBS -N")]
        assert names == [f"#PBS -N old_header.dmd-{job.token}"], sent
        assert "##PBS -N old_header\n" in sent
    finally:
        await fed.close()


def test_a_program_body_that_reads_scheduler_variables_is_said():
    """A `#!/usr/bin/env python3` payload reads the scheduler's variables by name
    (`os.environ.get("SLURM_JOB_ID")`); the body's translation rewrites a shell's
    `$SLURM_JOB_ID` only, so under PBS the program got None, unsaid. Now said, line by line;
    a shell body is translated as before."""
    script, warnings = translated(HERE, "slurm/python_payload.sbatch", "pbs")
    assert 'print(os.environ.get("SLURM_JOB_ID"))' in script
    assert ("kept: line 8: SLURM_JOB_ID read by the python3 body, which is not translated (a "
            "shell's $NAME is): pbs does not set it") in warnings
    _, text = read_fixture(HERE, "sge/python_S_shell.sge")  # -S /usr/bin/python3
    _, warnings, _ = translate(text + "print(os.environ['JOB_ID'], os.environ['SGE_TASK_ID'])\n",
                               "slurm", "sge")
    assert any(w.startswith("kept: line 7: JOB_ID, SGE_TASK_ID read by the python3 body")
               and w.endswith("slurm does not set them") for w in warnings), warnings
    _, warnings = translated(HERE, "slurm/tcsh_shebang_setenv.sbatch", "pbs")
    assert not any("body, which is not translated" in w for w in warnings)


@pytest.mark.parametrize("line, said", [
    ("#PBS -v A=1,B", "not read here: its variables (-v)"),
    ("#PBS -l walltime=abc", "but not here: bad walltime 'walltime=abc'"),
    ("#BSUB -m \"h1 h2\"", "not read here: -m"),
    ("#PBS -W umask=022", "not read here: -W"),
])
def test_what_sbatch_reads_of_a_leftover_line_and_this_does_not_is_said(line, said):
    """Each option of a leftover #PBS/#BSUB line that sbatch reads and this does not read
    into the job is said on the line's note (its variables were passed over unsaid)."""
    spec = get_script_dialect("slurm").parse_script(
        f"#!/bin/bash\n#SBATCH -n 1 -t 10 -J base\n{line}\n./a\n")
    assert spec.name == "base" and spec.resources.walltime_s == 600
    assert any(n.startswith(f"line 3: `{line}` is read by sbatch") and said in n
               for n in _notes(spec)), _notes(spec)
    # nothing sbatch takes and does nothing with is said (#PBS -j oe, -V, -r y)
    quiet = get_script_dialect("slurm").parse_script(
        "#!/bin/bash\n#SBATCH -n 1 -t 10\n#PBS -j oe -V -r y\n./a\n")
    assert not _notes(quiet)


def test_qsub_priority_between_pbs_and_grid_engine():
    """`qsub -p N` ranks a job among the others in PBS (-1024..1023) and Grid Engine
    (-1023..1024, a user 0 and below only): the same option, said dropped between them.
    Now carried where the other takes the value; a raise Grid Engine refuses a user is
    said dropped, with why."""
    script, warnings = translated(HERE, "sge/r_y_notify_p_negative.sge", "pbs")
    assert "#PBS -p -100\n" in script
    assert ("kept: #$ -p -100 as -p -100 (the job's priority among the others, as qsub -p "
            "ranks it there)") in warnings
    assert not any(w.startswith("dropped: #$ -p") for w in warnings)
    up = "#!/bin/bash\n#PBS -l nodes=1:ppn=1\n#PBS -p 50\n./a\n"
    script, warnings, _ = translate(up, "sge", "pbs")
    assert " -p " not in script and ("dropped: #PBS -p 50 (-p 50: Grid Engine lets a user "
                                     "only lower a job's priority (0 and below))") in warnings
    # elsewhere (no -p of the same meaning) it is said dropped as before
    _, warnings = translated(HERE, "sge/r_y_notify_p_negative.sge", "slurm")
    assert "dropped: #$ -p -100 (-p -100: no slurm equivalent)" in warnings
