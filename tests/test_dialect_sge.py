"""Grid Engine: #$ scripts (parse, render, translate) and its commands' outputs, recorded on
the test bed's Son of Grid Engine 8.1.9 (tests/fixtures/outputs/sge). No cluster needed."""

from __future__ import annotations

import os
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.dialects import get_commands, get_script_dialect
from diamond_jupyter.dialects.sge_commands import SgeCommands, finished_state, map_state
from diamond_jupyter.dialects.sge_script import sge_script
from diamond_jupyter.dialects.translate import detect_dialect, translate
from diamond_jupyter.model import (
    ArraySpec,
    BadInput,
    Dependency,
    Environment,
    JobSpec,
    JobState,
    Resources,
    SiteError,
)
from diamond_jupyter.placement import place
from diamond_jupyter.wrapper import parse_event_line, wrapper_prologue

FIX = Path(__file__).parent / "fixtures" / "outputs" / "sge"
UTC = timezone.utc
sge = SgeCommands(tz=UTC)

SCRIPT = """#!/bin/bash
#$ -S /bin/bash
#$ -N sgejob
#$ -pe smp 4
#$ -l h_rt=02:00:00,h_vmem=2G,mem_free=3G
#$ -q all.q
#$ -o logs/$JOB_NAME.o$JOB_ID -e err.txt
#$ -t 1-100:2 -tc 5
#$ -hold_jid 5,6
#$ -cwd -V -M me@example.org -m bea
#$ -v A=1,B=two
#$ -notify
echo $JOB_ID $SGE_TASK_ID $NSLOTS
"""


def read(name: str) -> str:
    return (FIX / name).read_text(encoding="utf-8")


# -- scripts ------------------------------------------------------------------------------------

def test_parse_every_directive():
    spec = sge_script.parse_script(SCRIPT)
    r = spec.resources
    assert (r.nodes, r.tasks, r.cpus_per_task) == (1, None, 4)  # smp: one task on one host
    assert (r.walltime_s, r.memory_per_cpu_mb) == (7200, 2048)
    assert spec.name == "sgejob" and spec.queue == "all.q" and spec.shell == "/bin/bash"
    assert spec.stdout == "logs/%x.o%j" and spec.stderr == "err.txt" and not spec.join_output
    assert spec.array.expression == "1-100:2%5"
    assert spec.dependencies == [Dependency(kind="afterany", job_ids=["5", "6"], scheduler="sge")]
    assert spec.environment.export_all and spec.environment.variables == {"A": "1", "B": "two"}
    assert spec.mail_user == "me@example.org"
    assert sorted(spec.mail_events) == ["begin", "end", "fail"]
    assert spec.metadata["sge_cwd"] and spec.metadata["sge_pe"] == "smp"
    assert [(d.option, d.value) for d in spec.unknown] == [("-l mem_free", "mem_free=3G"),
                                                           ("-notify", None)]


def test_sge_round_trip_keeps_everything():
    spec = sge_script.parse_script(SCRIPT)
    out = sge_script.render_script(spec)
    assert out.warnings == []
    lines = out.script.splitlines()
    for line in ("#$ -pe smp 4", "#$ -l h_rt=02:00:00,h_vmem=2G,mem_free=3G", "#$ -cwd",
                 "#$ -t 1-100:2", "#$ -tc 5", "#$ -hold_jid 5,6", "#$ -notify",
                 "#$ -o logs/$JOB_NAME.o$JOB_ID", "#$ -m bea", "#$ -v A=1,B=two"):
        assert line in lines, line
    again = sge_script.parse_script(out.script)
    assert again.model_dump(exclude={"metadata"}) == spec.model_dump(exclude={"metadata"})


def test_late_directives_are_read_as_qsub_reads_them():
    # measured: qsub -terse of this script printed 'warning: "-N" option has already been
    # set' (fixtures/qsub_warning.txt) and the job ran as "renamed" with h_rt 7 s
    text = "#!/bin/bash\n#$ -N late\necho first\n#$ -N renamed\n#$ -l h_rt=00:00:07\n"
    spec = sge_script.parse_script(text)
    assert spec.name == "renamed" and spec.resources.walltime_s == 7
    assert "#$ -N renamed" in spec.script  # and they stay where they were
    assert "warning" in read("qsub_warning.txt") and sge.parse_submit(
        read("qsub_warning.txt")) == "13"


def test_pe_names_and_slots_from_other_dialects():
    spec = get_script_dialect("sge").parse_script("#!/bin/sh\n#$ -pe mpi 12\nmpirun a\n")
    assert (spec.resources.tasks, spec.resources.cpus_per_task) == (12, None)
    assert get_script_dialect("sge").parse_script(
        "#!/bin/sh\n#$ -pe openmp 8\nrun\n").resources.cpus_per_task == 8
    out, warnings, _ = translate("#!/bin/bash\n#SBATCH -n 8\nsrun ./a\n", "sge")
    assert "#$ -pe mpi 8" in out and "#$ -cwd" in out and "#$ -j y" in out
    assert any("srun has no sge equivalent" in w for w in warnings)
    out, _, _ = translate("#!/bin/bash\n#SBATCH -c 6 --mem=12G\n./threads\n", "sge")
    assert "#$ -pe smp 6" in out and "h_vmem=2G" in out  # 12G per node over 6 slots
    out, warnings, _ = translate("#!/bin/bash\n#SBATCH -N 2 --ntasks-per-node=4\nx\n", "sge")
    assert "#$ -pe mpi 8" in out and any("2 nodes" in w for w in warnings)


def test_translation_reports_every_loss():
    text = ("#!/bin/bash\n#SBATCH --qos=high\n#SBATCH --gres=gpu:a100:2\n#SBATCH --exclusive\n"
            "#SBATCH -C avx2\n#SBATCH --dependency=after:7\n#SBATCH --comment=hello\n"
            "#SBATCH --mail-type=TIME_LIMIT\n#SBATCH --hint=nomultithread\nhostname\n")
    out, warnings, _ = translate(text, "sge")
    joined = "\n".join(warnings)
    for needle in ("QOS high", "GPU type a100", "exclusive", "node features avx2",
                   "dependency after:7", "comment 'hello'", "mail event time_limit",
                   "#SBATCH --hint=nomultithread"):
        assert needle in joined, needle
    assert "gpu=2" in out


def test_translation_from_sge_names_its_losses_and_variables():
    out, warnings, _ = translate(SCRIPT, "slurm", dependency_ids="target")
    assert "#SBATCH --cpus-per-task=4" in out and "#SBATCH --array=1-100:2%5" in out
    assert "#SBATCH --dependency=afterany:5:6" in out and "#SBATCH --export=ALL" in out
    # -pe smp 4: $NSLOTS is the one task's 4 CPUs
    assert "echo $SLURM_JOB_ID $SLURM_ARRAY_TASK_ID $SLURM_CPUS_PER_TASK" in out
    assert any("-l mem_free" in w for w in warnings) and any("-notify" in w for w in warnings)
    pbs, _, _ = translate(SCRIPT, "pbs", dependency_ids="target")
    assert "#PBS -N sgejob" in pbs and "$PBS_JOBID" in pbs
    # without -j y Grid Engine keeps stderr apart; Slurm joins it
    out, warnings, _ = translate("#!/bin/bash\n#$ -N a\necho\n", "slurm")
    assert any("stderr now goes with stdout" in w for w in warnings)


def test_job_names_qsub_refuses_are_fixed_and_reported():
    # measured: qsub -N 1digit -> 'denied: "1digit" is not a valid object name (cannot start
    # with a digit)'; -N a/b -> 'argument to -N option must not contain /'
    out = sge_script.render_script(JobSpec(name="1st run/a", script="true\n"))
    assert "#$ -N j1st_run_a" in out.script and any("job name" in w for w in out.warnings)


@pytest.mark.parametrize(("line", "message"), [
    ("#$ -pe smp", "needs 2 value"), ("#$ -pe smp many", "bad slot count"),
    ("#$ -l h_rt=soon", "bad h_rt"), ("#$ -j maybe", "bad -j value"),
    ("#$ -t x-y", "bad task range"), ("#$ -m q", "bad -m value"),
    ("#$ -l h_vmem=lots", "bad h_vmem"), ("#$ -l gpu=two", "bad GPU count"),
])
def test_bad_directives_name_the_line(line, message):
    with pytest.raises(BadInput, match=f"line 2.*{message}"):
        sge_script.parse_script(f"#!/bin/bash\n{line}\ntrue\n")


def test_detected_and_registered():
    assert detect_dialect(SCRIPT) == "sge"
    assert get_script_dialect("sge") is sge_script
    assert isinstance(get_commands("sge"), SgeCommands)
    assert SiteConfig(name="d", scheduler="sge").scheduler == "sge"
    with pytest.raises(BadInput, match=r"#flux:, #\$\)"):
        detect_dialect("#!/bin/bash\necho\n")


# -- hypothesis: what Grid Engine can say survives render -> parse --------------------------

names = st.from_regex(r"[a-z][a-z0-9_.-]{0,12}", fullmatch=True)
specs = st.builds(
    JobSpec,
    name=st.one_of(st.none(), names),
    queue=st.one_of(st.none(), st.sampled_from(["all.q", "short.q", "gpu.q"])),
    account=st.one_of(st.none(), names),
    resources=st.builds(
        Resources,
        walltime_s=st.one_of(st.none(), st.integers(1, 10 * 86400)),
        memory_per_cpu_mb=st.one_of(st.none(), st.integers(1, 10**6)),
        gpus_per_node=st.one_of(st.none(), st.integers(0, 8)),
        tasks=st.one_of(st.none(), st.integers(2, 512)),
    ),
    array=st.one_of(st.none(), st.builds(ArraySpec, expression=st.sampled_from(
        ["1-10", "1-100:2", "5", "1-20%4", "3-9:3%2"]))),
    dependencies=st.lists(st.builds(Dependency, kind=st.just("afterany"), job_ids=st.lists(
        st.from_regex(r"[1-9][0-9]{0,6}", fullmatch=True), min_size=1, max_size=3)),
        max_size=2, unique_by=lambda d: tuple(d.job_ids)),
    stdout=st.one_of(st.none(), st.sampled_from(["o.%j", "/tmp/%x-%j.log", "out.txt"])),
    stderr=st.one_of(st.none(), st.sampled_from(["e.%j", "err.txt"])),
    join_output=st.booleans(), hold=st.booleans(),
    mail_user=st.one_of(st.none(), st.just("me@example.org")),
    mail_events=st.lists(st.sampled_from(["begin", "end", "fail"]), unique=True),
    working_directory=st.one_of(st.none(), st.sampled_from(["/scratch/run", "~/w"])),
    environment=st.builds(Environment, export_all=st.one_of(st.none(), st.just(True)),
                          variables=st.dictionaries(st.from_regex(r"[A-Z][A-Z0-9_]{0,6}",
                                                                  fullmatch=True),
                                                    names, max_size=3)),
    script=st.just("echo body\n"),
)
KEPT = ("name", "queue", "account", "array", "dependencies", "stdout", "stderr", "hold",
        "mail_user", "working_directory")


@settings(max_examples=60, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(specs)
def test_render_then_parse_keeps_what_grid_engine_can_say(spec: JobSpec):
    rendered = sge_script.render_script(spec)
    back = sge_script.parse_script(rendered.script)
    for field in KEPT:
        if field == "dependencies":  # read back as ids of Grid Engine's jobs
            assert all(d.scheduler == "sge" for d in back.dependencies)
            assert [d.model_copy(update={"scheduler": None}) for d in back.dependencies] \
                == spec.dependencies
            continue
        assert getattr(back, field) == getattr(spec, field), field
    r, b = spec.resources, back.resources
    assert (b.walltime_s, b.memory_per_cpu_mb, b.gpus_per_node, b.tasks) == (
        r.walltime_s, r.memory_per_cpu_mb, r.gpus_per_node or None, r.tasks)  # 0: none
    assert sorted(back.mail_events) == sorted(spec.mail_events)
    assert back.environment.variables == spec.environment.variables
    assert bool(back.environment.export_all) == bool(spec.environment.export_all)
    assert back.join_output == (spec.stderr is None)  # -j y unless an error file is named
    assert back.script == spec.script and not rendered.warnings
    # and the round trip is a fixed point
    assert sge_script.render_script(back).script == rendered.script


# -- commands and outputs (recorded) -------------------------------------------------------------

def test_argvs():
    assert sge.submit_argv("/j/job.sh") == ["qsub", "-terse", "/j/job.sh"]
    held = sge.submit_argv("/j/job.sh", hold=True)
    assert held[:2] == ["sh", "-c"] and held[-1] == "/j/job.sh" and "-h" in held[2]
    assert sge.cancel_argv(["7", "9.1-5:1"]) == ["qdel", "7", "9"]
    assert sge.release_argv(["7"]) == ["qrls", "7"]
    assert sge.status_argv(["7"]) == ["qstat", "-xml"]  # the login's own jobs (the default)
    acct = sge.accounting_argv(["3", "4", "3"])
    assert acct[:2] == ["sh", "-c"] and acct[-2:] == ["3", "4"]  # ids are arguments
    for bad in (["1;rm -rf /"], ["$(x)"], []):
        with pytest.raises(BadInput):
            sge.cancel_argv(bad)
    with pytest.raises(BadInput):
        sge.find_by_name_argv("-x")
    assert sge.find_by_name_argv("a b.dmd-1")[-1] == "a b.dmd-1"


@pytest.mark.parametrize("held", [True, False])
def test_held_submit_toggles_hold_once(tmp_path, held):
    """qsub's -h toggles (measured: -h on the line AND in the script ran the job): the held
    submit adds -h only to a script without it. Run with a qsub that prints its argv."""
    fake = tmp_path / "qsub"
    fake.write_text('#!/bin/sh\necho "$@"\n')
    fake.chmod(0o755)
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/bash\n#$ -N x" + (" -h" if held else "") + "\ntrue\n")
    argv = sge.submit_argv(str(script), hold=True)
    env = {"PATH": f"{tmp_path}:{os.environ['PATH']}"}
    out = subprocess.run(argv, capture_output=True, text=True, env=env, check=True).stdout
    assert out.split()[:-1] == (["-terse"] if held else ["-terse", "-h"])


def test_submit_outputs():
    assert sge.parse_submit(read("qsub.txt")) == "2"
    assert sge.parse_submit(read("qsub_array.txt")) == "9"  # '9.1-5:1'
    with pytest.raises(SiteError, match="no job id"):
        sge.parse_submit("Unable to run job: denied: \"1digit\" is not a valid object name")


def test_status_running_pending_held_error_and_arrays():
    jobs = {j.native_id: j for j in sge.parse_status(read("qstat_xml.xml"))}
    assert jobs["7"].state == JobState.RUNNING and jobs["7"].cpus == 4
    assert jobs["7"].partition == "all.q" and jobs["7"].node_list == "dn2"
    assert jobs["7"].started_at == datetime(2026, 12, 1, 18, 26, 49, tzinfo=UTC)
    # an array: a record per running task and one for its waiting ones (task 2 has ended)
    assert {i: jobs[i].state for i in ("9.1", "9.3", "9.4,5")} == {
        "9.1": JobState.RUNNING, "9.3": JobState.RUNNING, "9.4,5": JobState.PENDING}
    assert "9" not in jobs and jobs["19.1-3:1"].comment == "tasks 1-3:1"
    assert jobs["8"].state == JobState.PENDING and jobs["8"].cpus == 12
    assert jobs["17"].state == JobState.PENDING and "Eqw" in jobs["17"].reason
    assert jobs["18"].reason == "held (hqw)"
    assert jobs["20"].name == "x.dmd-abc123"
    assert sge.parse_status("") == []


@pytest.mark.parametrize(("code", "state"), [
    ("r", JobState.RUNNING), ("t", JobState.RUNNING), ("Rr", JobState.RUNNING),
    ("s", JobState.RUNNING), ("dr", JobState.RUNNING), ("qw", JobState.PENDING),
    ("hqw", JobState.PENDING), ("hRwq", JobState.PENDING), ("Eqw", JobState.PENDING),
    ("", JobState.UNKNOWN), ("zz", JobState.UNKNOWN),
])
def test_state_codes(code, state):
    assert map_state(code)[0] == state


def test_accounting_outcomes():
    # 1, 2, 13 ok; 3 exit 3; 4 h_rt 5 s; 5 qdel while running; 6 and 10 qdel while pending
    # (no record); 11 Eqw (output dir missing) deleted; 12 `kill -9 $$`
    jobs = {j.native_id: j for j in sge.parse_accounting(read("qacct_jobs.txt"))}
    assert set(jobs) == {"1", "2", "3", "4", "5", "11", "12", "13"}
    assert jobs["2"].state == JobState.COMPLETED and jobs["2"].exit_code == 0
    assert jobs["3"].state == JobState.FAILED and jobs["3"].exit_code == 3
    assert jobs["4"].state == JobState.TIMEOUT and "h_rt" in jobs["4"].reason
    assert jobs["5"].state == jobs["12"].state == JobState.FAILED  # indistinguishable
    assert jobs["5"].exit_code == 137 and jobs["5"].reason == "killed by signal 9"
    assert jobs["11"].state == JobState.FAILED and jobs["11"].started_at is None
    assert "opening input/output file" in jobs["11"].reason
    assert jobs["3"].ended_at == datetime(2026, 12, 1, 18, 26, 49, tzinfo=UTC)
    assert finished_state("0", 0)[0] == JobState.COMPLETED


@pytest.mark.parametrize(("value", "queue", "hosts"), [
    ("all.q@node01", "all.q", "node01"), ("*@dn1", None, "dn1"),
    ("all.q@n1,all.q@n2", "all.q", "n1, n2")])
def test_queue_instances_keep_the_queue_elsewhere_and_the_value_here(value, queue, hosts):
    from diamond_jupyter.dialects.translate import translate

    text = f"#!/bin/bash\n#$ -q {value}\n#$ -pe smp 2\n./a\n"
    spec = sge_script.parse_script(text)
    assert spec.queue == queue
    assert f"#$ -q {value}" in sge_script.render_script(spec).script
    script, warnings, _ = translate(text, "slurm")
    assert ("--partition=" + queue in script) if queue else "--partition" not in script
    assert any(f"named here: {hosts}" in w for w in warnings)
    spec.queue = "short.q"  # changed: the new queue, not the old instances
    assert "#$ -q short.q" in sge_script.render_script(spec).script
    assert sge_script.parse_script("#!/bin/bash\n#$ -q all.q,short.q\n").queue == \
        "all.q,short.q"


def test_history_is_one_qacct_since_a_local_time_with_each_jobs_request():
    from zoneinfo import ZoneInfo

    since = datetime(2026, 12, 2, 19, 55, 7, tzinfo=UTC)
    assert SgeCommands(tz=ZoneInfo("Europe/Berlin")).history_argv(since) == [
        "qacct", "-j", "-b", "202612022055.07"]
    jobs = {j.native_id: j for j in sge.parse_history(read("qacct_jobs.txt"))}
    assert jobs["4"].walltime_s == 5  # category "-l h_rt=5"
    assert jobs["2"].walltime_s is None  # category NONE: no request to calibrate against
    summary = ("Total System Usage\n    WALLCLOCK         UTIME         STIME\n"
               + "=" * 112 + "\n")  # what qacct prints when no job started since then
    assert sge.parse_history(summary) == []


def test_find_by_name_sees_queue_and_accounting():
    found = sge.parse_status(read("find_byname.txt"))
    named = [j for j in found if j.name == "x.dmd-abc123"]
    assert {(j.native_id, j.state) for j in named} == {("20", JobState.RUNNING),
                                                      ("15", JobState.COMPLETED)}


def _snapshot():
    return sge.parse_snapshot("delta", {"hosts": read("qhost_xml.xml"),
                                        "queues": read("qconf_sq_all.txt"),
                                        "pes": read("qconf_spl.txt"),
                                        "queue": read("qstat_f_xml.xml")})


def test_snapshot_hosts_queues_and_jobs():
    snap = _snapshot()
    nodes = {n.name: n for n in snap.nodes}
    assert set(nodes) == {"dn1", "dn2"}  # not the "global" pseudo host
    assert nodes["dn2"].cpus == 8 and nodes["dn2"].cpus_allocated == 5
    assert nodes["dn1"].architecture == "x86_64" and nodes["dn1"].memory_mb > 1000
    assert nodes["dn1"].partitions == ["all.q", "short.q"]
    parts = {p.name: p for p in snap.partitions}
    assert parts["all.q"].default and parts["all.q"].max_time_s == 86400
    assert parts["short.q"].max_time_s == 1800 and parts["short.q"].total_cpus == 16
    running = [j for j in snap.jobs if j.state == JobState.RUNNING]
    assert {j.node_list for j in running} == {"dn1", "dn2"}
    assert any(j.state == JobState.PENDING for j in snap.jobs)
    assert read("qconf_spl.txt").split() == ["mpi", "smp"]


def test_placement_from_a_grid_engine_snapshot():
    cfg = SiteConfig(name="delta", scheduler="sge")
    spec = sge_script.parse_script("#!/bin/bash\n#$ -pe smp 4\n#$ -l h_rt=01:00:00\nx\n")
    snap = _snapshot()
    v = place(spec, [(cfg, snap)], now=snap.taken_at).verdict("delta")
    assert v.feasible and v.partition in ("all.q", "short.q")
    too_long = spec.model_copy(update={"resources": spec.resources.model_copy(
        update={"walltime_s": 3 * 86400})})
    v = place(too_long, [(cfg, snap)], now=snap.taken_at).verdict("delta")
    assert not v.feasible and v.reasons


@pytest.mark.parametrize("text", ["<job_info><queue_info>", "<qhost><host name='x'>",
                                  "not xml at all </job_info>"])
def test_malformed_outputs_are_site_errors(text):
    with pytest.raises(SiteError, match="sge: cannot parse"):
        sge.parse_status(text) if "job_info" in text else sge.parse_snapshot(
            "d", {"hosts": text})


def test_the_wrapper_reports_grid_engine_job_ids(tmp_path):
    ev, sec = tmp_path / "events.log", tmp_path / "secret"
    sec.write_text("ab" * 32 + "\n")
    script = wrapper_prologue(str(ev), "0a0b0c0d0e0f", str(sec)) + "exit 4\n"
    env = {"PATH": os.environ["PATH"], "JOB_ID": "4242", "SGE_TASK_ID": "undefined"}
    subprocess.run(["bash", "-c", script], env=env, timeout=30, check=False)
    lines = [parse_event_line(x) for x in ev.read_text().splitlines()]
    assert [(x.kind, x.native_id, x.rc) for x in lines] == [("start", "4242", 0),
                                                           ("end", "4242", 4)]


def test_a_machine_without_grid_engine_leaves_delta_out_with_the_reason(monkeypatch, tmp_path):
    from diamond_jupyter.testbed import control, gridengine

    monkeypatch.setattr(gridengine, "LIBEXEC", tmp_path / "nowhere")
    left = {e["name"]: e["why"] for e in control._left_out(tmp_path)}
    assert "gridengine-master" in left["delta"] and "apt-get install" in left["delta"]


def _host(name: str, slots_left: int, queues: list[tuple[str, int, int]]) -> str:
    qs = "".join(
        f"<queue name='{q}'><queuevalue qname='{q}' name='slots_used'>{u}</queuevalue>"
        f"<queuevalue qname='{q}' name='slots'>{t}</queuevalue>"
        f"<queuevalue qname='{q}' name='state_string'></queuevalue></queue>"
        for q, u, t in queues)
    return (f"<host name='{name}'><hostvalue name='arch_string'>lx-amd64</hostvalue>"
            "<hostvalue name='num_proc'>2</hostvalue><hostvalue name='load_avg'>0.5"
            "</hostvalue><hostvalue name='mem_total'>23.5G</hostvalue>"
            f"<resourcevalue name='slots' dominance='hc'>{slots_left}.000000</resourcevalue>"
            f"{qs}</host>")


def test_a_hosts_slots_are_read_at_one_moment_whatever_qstat_saw():
    """qhost and qstat run one after the other: a job that started or ended between them
    made a host's total its free slots plus qstat's used ones (0 or double). `qhost -q`
    gives each host's used slots at the moment of its slots left (found on the test bed
    under a fast-turning queue: delta's hosts read as 0, 1 or 14 CPUs, and a probe was
    refused as needing more CPUs than any node had)."""
    qhost = ("<?xml version='1.0'?><qhost><host name='global'></host>"
             + _host("dn1", 0, [("all.q", 8, 8), ("short.q", 0, 8)])
             + _host("dn2", 8, [("all.q", 0, 8), ("short.q", 0, 8)]) + "</qhost>")
    # qstat, a moment earlier: dn1's job had not started yet, dn2's had not ended
    qstat = ("<?xml version='1.0'?><job_info><queue_info>"
             + "".join(f"<Queue-List><name>{q}@{h}</name><slots_used>{u}</slots_used>"
                       f"<slots_total>8</slots_total><state></state></Queue-List>"
                       for q, h, u in [("all.q", "dn1", 0), ("short.q", "dn1", 0),
                                       ("all.q", "dn2", 8), ("short.q", "dn2", 0)])
             + "</queue_info><job_info></job_info></job_info>")
    snap = sge.parse_snapshot("delta", {"hosts": qhost, "queue": qstat})
    nodes = {n.name: (n.cpus, n.cpus_allocated) for n in snap.nodes}
    # each host's size from qhost's own moment; what is in use from qstat's, whose job
    # list explains it (slots the list does not show would never be freed in the plan)
    assert nodes == {"dn1": (8, 0), "dn2": (8, 8)}
    assert "-q" in sge.snapshot_argvs()["hosts"]
