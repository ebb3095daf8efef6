"""Scheduler command lines and output parsers, on recorded outputs (no cluster needed)."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from diamond_jupyter.dialects.base import private_values
from diamond_jupyter.dialects.flux_commands import FluxCommands, flux_commands
from diamond_jupyter.dialects.lsf_commands import LsfCommands
from diamond_jupyter.dialects.outputs_common import (
    expand_hostlist,
    load_json,
    parse_duration,
    parse_fsd,
    repair_json_lines,
    to_int,
)
from diamond_jupyter.dialects.pbs_commands import PbsCommands, short_id
from diamond_jupyter.dialects.slurm_commands import SlurmCommands, map_state, parse_exit
from diamond_jupyter.model import BadInput, DiamondError, JobState, SiteError

FIX = Path(__file__).parent / "fixtures" / "outputs"
UTC = timezone.utc
slurm = SlurmCommands(jobcomp=True, tz=UTC)
pbs = PbsCommands(tz=UTC)
lsf = LsfCommands(tz=UTC, now=lambda: datetime(2026, 11, 29, 12, 0, tzinfo=UTC))


def read(*parts: str) -> str:
    return (FIX.joinpath(*parts)).read_text(encoding="utf-8")


def by_id(jobs):
    return {j.native_id: j for j in jobs}


# -- shared helpers ---------------------------------------------------------
@pytest.mark.parametrize("text,seconds", [
    ("1-02:03:04", 93784), ("5:00", 300), ("01:00:00", 3600), ("2-00:00:00", 172800),
    ("UNLIMITED", None), ("infinite", None), ("N/A", None), ("Unknown", None), ("", None),
])
def test_parse_duration(text, seconds):
    assert parse_duration(text) == seconds


def test_parse_fsd_and_hostlist():
    assert parse_fsd("1.5h") == 5400 and parse_fsd("inf") is None and parse_fsd("0") is None
    assert expand_hostlist("c[1-3,07],gpu01") == ["c1", "c2", "c3", "c07", "gpu01"]
    assert expand_hostlist("(null)") == []


# -- Slurm (recorded on a real Slurm 22.05.8 cluster) -----------------------
def test_slurm_argvs():
    argv = slurm.status_argv(["7", "8_1", "20_[1-3]"])
    assert argv[0] == "env" and "SQUEUE_FORMAT2" in argv and "SLURM_TIME_FORMAT" in argv
    # the format (with its fresh separator) goes in SQUEUE_FORMAT, off the command line
    assert "SQUEUE_FORMAT" not in argv and "-o" not in argv
    assert private_values(argv)["SQUEUE_FORMAT"].startswith("%i#dj-")
    assert argv[argv.index("squeue"):] == ["squeue", "-h", "-t", "all", "-j", "7,8_1,20_[1-3]"]
    assert slurm.submit_argv("/x/job.sh", hold=True) == ["sbatch", "--parsable", "--hold",
                                                         "/x/job.sh"]
    assert slurm.cancel_argv(["1", "2"]) == ["scancel", "1", "2"]
    assert slurm.release_argv(["1", "2"]) == ["scontrol", "release", "1,2"]
    assert "-c" in slurm.accounting_argv(["1"])
    assert "-X" in SlurmCommands(jobcomp=False).accounting_argv(["1"])
    # the name rides in its option (--name=VALUE): a name never becomes an option itself
    assert SlurmCommands(clean_env=False).find_by_name_argv("-tok")[:5] == [
        "squeue", "-h", "-t", "all", "--name=-tok"]
    with pytest.raises(BadInput):
        slurm.status_argv([])
    with pytest.raises(BadInput):
        slurm.cancel_argv(["1; rm -rf /"])


def test_slurm_submit():
    assert slurm.parse_submit("16\n") == "16"
    assert slurm.parse_submit("123;capture\n") == "123"
    with pytest.raises(SiteError, match="sbatch"):
        slurm.parse_submit(read("slurm", "sbatch_badpart.err"))


def test_slurm_status_text():
    jobs = by_id(slurm.parse_status(read("slurm", "squeue_status.txt")))
    assert jobs["1"].state == JobState.COMPLETED
    assert jobs["2"].state == JobState.FAILED and jobs["2"].reason == "NonZeroExitCode"
    assert jobs["3"].state == JobState.TIMEOUT and jobs["3"].walltime_s == 60
    assert jobs["4"].state == JobState.CANCELLED
    assert jobs["4"].ended_at == datetime(2026, 11, 29, 17, 18, 43, tzinfo=UTC)
    run = jobs["16"]
    assert run.state == JobState.RUNNING and run.nodes == 2 and run.cpus == 12
    assert run.node_list == "c[1-2]" and run.walltime_s == 1200 and run.ended_at is None
    pend = jobs["17"]
    assert pend.state == JobState.PENDING and pend.reason == "Resources"
    assert pend.estimated_start == datetime(2026, 11, 29, 17, 40, 54, tzinfo=UTC)
    assert pend.started_at is None
    assert jobs["7"].gpus == 1 and jobs["7"].partition == "gpu"
    assert jobs["11"].comment == "diamond:tok-abc123" and jobs["11"].name == "dj-tok-abc123"
    assert jobs["19"].name == "pipe|name" and jobs["19"].reason == "JobHeldUser"
    assert jobs["20_[1-3]"].state == JobState.PENDING
    assert jobs["6"].reason.startswith("Job's account not known")


def test_slurm_empty_and_malformed():
    assert slurm.parse_status(read("slurm", "squeue_empty.txt")) == []
    with pytest.raises(SiteError, match="squeue line 1"):
        slurm.parse_status("garbage without separators\n")
    with pytest.raises(SiteError, match="squeue line 1"):
        slurm.parse_status(read("slurm", "squeue_status_oldorder.txt").replace("|", "", 9))


def test_slurm_status_json():
    jobs = by_id(slurm.parse_status_json(read("slurm", "squeue.json")))
    assert jobs["2"].exit_code == 3 and jobs["2"].state == JobState.FAILED
    assert jobs["5"].exit_code == 137  # killed by signal 9
    assert jobs["7"].gpus == 1 and jobs["7"].walltime_s == 1200
    assert jobs["20_[1-3]"].state == JobState.PENDING
    old = by_id(slurm.parse_status_json(read("slurm", "squeue_suspended.json")))
    assert old["7"].native_state == "SUSPENDED" and old["7"].state == JobState.RUNNING
    assert old["8_1"].state == JobState.RUNNING and "8_[3-5%2]" in old
    assert old["6"].reason.startswith("Job's account")


def test_slurm_json_newer_shapes():
    text = ('{"meta": {}, "errors": [], "jobs": [{"job_id": 5, "job_state": ["PENDING", '
            '"REQUEUED"], "time_limit": {"set": true, "infinite": false, "number": 30}, '
            '"start_time": {"set": true, "infinite": false, "number": 1795972721}, '
            '"exit_code": {"status": ["PENDING"], "return_code": {"set": true, "number": 0}}}, '
            '{"job_id": 6, "job_state": ["FAILED"], "exit_code": {"status": ["SIGNALED"], '
            '"return_code": {"set": true, "number": 0}, "signal": {"id": {"set": true, '
            '"number": 9}, "name": "KILL"}}}]}')
    jobs = by_id(slurm.parse_status_json(text))
    assert jobs["5"].state == JobState.PENDING and jobs["5"].walltime_s == 1800
    assert jobs["5"].estimated_start is not None and jobs["5"].native_state == "PENDING+REQUEUED"
    assert jobs["6"].exit_code == 137
    with pytest.raises(SiteError, match="squeue --json"):
        slurm.parse_status_json('{"jobs": [')


def sacct_with_trailing_id(recorded: str) -> str:
    """A recording of `-o ...,jobname` as the engine's sacct query prints it now: the job
    id once more after the name (`slurm_commands.SACCT_FIELDS`)."""
    return "".join(f"{ln}|{ln.split('|', 1)[0]}\n" for ln in recorded.splitlines())


def test_slurm_accounting_jobcomp():
    jobs = by_id(slurm.parse_accounting(sacct_with_trailing_id(read("slurm", "sacct_jobcomp.txt"))))
    assert jobs["2"].exit_code == 3 and jobs["2"].state == JobState.FAILED
    assert jobs["5"].exit_code == 137
    assert jobs["1"].exit_code == 0 and jobs["1"].state == JobState.COMPLETED
    assert jobs["3"].state == JobState.TIMEOUT and jobs["10"].node_list == "c2,g1"
    assert jobs["6"].node_list is None


@pytest.mark.parametrize("native,state", [
    ("CANCELLED by 1000", JobState.CANCELLED), ("OUT_OF_MEMORY", JobState.FAILED),
    ("NODE_FAIL", JobState.FAILED), ("PREEMPTED", JobState.FAILED), ("TIMEOUT", JobState.TIMEOUT),
    ("BOOT_FAIL", JobState.FAILED), ("DEADLINE", JobState.TIMEOUT), ("REQUEUED", JobState.PENDING),
    ("SUSPENDED", JobState.RUNNING), ("CONFIGURING", JobState.RUNNING), ("CG", JobState.RUNNING),
    ("COMPLETING", JobState.RUNNING), ("CANCELLED+", JobState.CANCELLED),
    ("WIBBLE", JobState.UNKNOWN),
])
def test_slurm_state_map(native, state):
    assert map_state(native) == state


def test_slurm_unknown_state_kept_and_cancel_reason():
    line = "9|WIBBLE|N/A|N/A|2026-11-29T17:18:40|5:00|1|1|root|debug|N/A||None|(null)|x"
    (job,) = slurm.parse_status(line)
    assert job.state == JobState.UNKNOWN and job.native_state == "WIBBLE"
    text = "4|CANCELLED by 1000|0:15|N/A|Unknown|c1|x|4\n4.batch|x|0:0|||c1||4.batch"
    (acc,) = slurm.parse_accounting(text)
    assert acc.state == JobState.CANCELLED and acc.reason == "cancelled by uid 1000"
    assert acc.exit_code == 143 and parse_exit("3:0") == 3


def test_slurm_snapshot():
    snap = slurm.parse_snapshot("capture", {
        "partitions": read("slurm", "scontrol_partition.txt"),
        "nodes": read("slurm", "scontrol_node.txt"),
        "queue": read("slurm", "squeue_queue.txt"),
    })
    parts = {p.name: p for p in snap.partitions}
    assert parts["debug"].default and parts["debug"].max_time_s == 3600
    assert parts["debug"].max_nodes == 2 and parts["debug"].nodes == ["c1", "c2", "g1"]
    assert parts["long"].max_time_s == 2 * 86400 and parts["long"].allowed_accounts == [
        "physics", "chem"]
    assert parts["gpu"].max_time_s is None and parts["gpu"].allowed_accounts is None
    nodes = {n.name: n for n in snap.nodes}
    assert nodes["g1"].cpus == 16 and nodes["g1"].gpus == 2 and nodes["g1"].gpus_allocated == 1
    assert nodes["g1"].memory_mb == 64000 and "gpu" in nodes["g1"].features
    assert nodes["c1"].architecture == "x86_64" and nodes["c1"].features == ["arch=x86_64", "avx2"]
    assert nodes["c1"].cpus_allocated == 7 and nodes["c1"].partitions == ["debug", "long"]
    assert len(snap.running) == 3 and len(snap.pending) == 4


def test_slurm_sinfo_and_estimates():
    nodes = {n.name: n for n in slurm.parse_sinfo_nodes(read("slurm", "sinfo_nodes.txt"))}
    assert nodes["g1"].gpus == 2 and nodes["g1"].partitions == ["debug", "gpu"]
    est = slurm.parse_estimates(read("slurm", "squeue_start.txt"))
    assert est["17"] == datetime(2026, 11, 29, 17, 40, 54, tzinfo=UTC) and est["19"] is None


# -- PBS Pro / Torque -------------------------------------------------------
def test_pbs_argvs_and_submit():
    assert pbs.submit_argv("/j.sh", hold=True) == ["qsub", "-h", "/j.sh"]
    assert pbs.status_argv(["1.vbox", "2"]) == ["qstat", "-f", "-F", "json", "-x", "1.vbox", "2"]
    assert PbsCommands(flavor="torque").status_argv(["548.moab"]) == [
        "qstat", "-f", "-x", "548.moab"]
    assert pbs.release_argv(["1"]) == ["qrls", "1"]
    find = pbs.find_by_name_argv("dj-tok; rm -rf /")
    assert find[:2] == ["sh", "-c"] and find[-1] == "dj-tok; rm -rf /" and "qselect -x" in find[2]
    assert pbs.parse_submit(read("pbs", "qsub.txt")) == "548.moab"
    assert short_id("45[].pbs01") == "45[]"
    with pytest.raises(SiteError):
        pbs.parse_submit("qsub: Unknown queue\n")


def test_pbs_status_json_with_invalid_escapes():
    text = read("pbs", "qstat_f_json.json")
    assert '"C:\\Users' in text  # the recorded output really is invalid JSON
    jobs = by_id(pbs.parse_status(text))
    q = jobs["1.vbox"]
    assert q.state == JobState.PENDING and q.gpus == 1 and q.cpus == 4 and q.walltime_s == 3600
    assert q.estimated_start == datetime(2016, 11, 11, 19, 0, tzinfo=UTC)
    assert q.reason.startswith("Not Running") and q.user == "alice"
    assert jobs["2.vbox"].state == JobState.RUNNING and jobs["2.vbox"].node_list == "node1/0*8"
    assert jobs["3.vbox"].state == JobState.COMPLETED and jobs["3.vbox"].exit_code == 0
    assert jobs["3.vbox"].ended_at == datetime(2016, 11, 11, 16, 5, 5, tzinfo=UTC)
    assert jobs["4.vbox"].state == JobState.FAILED and jobs["4.vbox"].exit_code == 137
    assert "signal 9" in jobs["4.vbox"].reason
    assert jobs["5.vbox"].state == JobState.CANCELLED
    assert jobs["6.vbox"].state == JobState.FAILED and "never ran" in jobs["6.vbox"].reason
    assert jobs["7.vbox"].state == JobState.TIMEOUT
    assert jobs["8.vbox"].state == JobState.PENDING and "held" in jobs["8.vbox"].reason
    assert jobs["9.vbox"].exit_code == 2 and jobs["9.vbox"].state == JobState.FAILED


def test_pbs_empty_malformed_and_unknown():
    assert pbs.parse_status("") == []
    assert pbs.parse_status('{"timestamp": 1, "pbs_server": "x"}') == []
    with pytest.raises(SiteError, match="pbs"):
        pbs.parse_status("{ this is not json")
    (job,) = pbs.parse_status('{"Jobs": {"1.x": {"job_state": "Z"}}}')
    assert job.state == JobState.UNKNOWN and job.native_state == "Z"
    assert "\\\\" in repair_json_lines('  "A":"C:\\x",')


def test_pbs_torque_xml():
    jobs = by_id(PbsCommands(flavor="torque").parse_status(read("pbs", "torque_qstat_fx.xml")))
    assert jobs["548.moab"].state == JobState.RUNNING and jobs["548.moab"].walltime_s == 3600
    assert jobs["549.moab"].state == JobState.FAILED and jobs["549.moab"].exit_code == 3
    assert jobs["549.moab"].ended_at == datetime.fromtimestamp(1519338480, UTC)
    with pytest.raises(SiteError, match="Torque XML"):
        pbs.parse_torque_xml("<Data><Job>")


def test_pbs_snapshot():
    snap = pbs.parse_snapshot("pbs", {
        "nodes": read("pbs", "pbsnodes_json.json"), "queues": read("pbs", "qstat_Qf_json.json"),
        "server": read("pbs", "qstat_Bf_json.json"), "queue": read("pbs", "qstat_f_json.json"),
    })
    nodes = {n.name: n for n in snap.nodes}
    assert nodes["node1"].cpus == 8 and nodes["node1"].cpus_allocated == 8
    assert nodes["node1"].memory_mb == 15884 and nodes["node1"].features == [
        "avx512", "cpu_model=skylake"]
    assert nodes["node2"].gpus == 4 and nodes["node2"].gpu_type == "a100"
    assert nodes["node3"].memory_mb == 16384 and nodes["node3"].state == "down,offline"
    parts = {p.name: p for p in snap.partitions}
    assert set(parts) == {"workq", "gpu", "route"} and parts["workq"].default
    # the routing queue runs nothing: it names where it sends jobs
    assert parts["route"].routes_to == ["workq", "gpu"] and parts["workq"].routes_to is None
    assert parts["workq"].max_time_s == 86400 and parts["workq"].max_nodes == 4
    # acl_groups: the groups whose jobs it takes (not accounts)
    assert parts["gpu"].state == "NOT_STARTED"
    assert parts["gpu"].allowed_groups == ["physics", "chem"]
    assert parts["gpu"].allowed_accounts is None
    assert all(not j.state.terminal for j in snap.jobs) and len(snap.jobs) == 3


# -- LSF ----------------------------------------------------------------------
def test_lsf_argvs_and_submit():
    assert LsfCommands.submit_stdin is True
    assert lsf.submit_argv("/j.sh") == ["bsub"] and lsf.submit_argv("/j", hold=True) == [
        "bsub", "-H"]
    argv = lsf.status_argv(["1001", "1002[3]"])
    assert argv[:2] == ["bjobs", "-o"] and "esstart_time" in argv[2]
    assert argv[3:] == ["-json", "-a", "1001", "1002[3]"]
    assert lsf.release_argv(["1"]) == ["bresume", "1"]
    assert lsf.parse_submit(read("lsf", "bsub.txt")) == "1001"
    assert lsf.parse_submit("Job <7> is submitted to queue <normal>.") == "7"
    with pytest.raises(SiteError, match="bsub"):
        lsf.parse_submit("Request aborted by esub. Job not submitted.")


def test_lsf_status():
    jobs = by_id(lsf.parse_status(read("lsf", "bjobs_json.json")))
    assert "1007" not in jobs  # "Job <1007> is not found"
    run = jobs["1001"]
    assert run.state == JobState.RUNNING and run.cpus == 8 and run.nodes == 2
    assert run.walltime_s == 720 * 60 and run.exit_code is None and run.ended_at is None
    assert run.started_at == datetime(2026, 11, 29, 10, 1, tzinfo=UTC)
    pend = jobs["1002"]
    assert pend.state == JobState.PENDING and pend.reason == "Job slot limit reached;"
    assert pend.estimated_start == datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
    assert jobs["1003"].state == JobState.COMPLETED and jobs["1003"].exit_code == 0
    assert jobs["1003"].ended_at == datetime(2026, 11, 29, 9, 5, tzinfo=UTC)
    assert jobs["1004"].state == JobState.FAILED and jobs["1004"].exit_code == 3
    assert jobs["1005"].state == JobState.PENDING and jobs["1005"].started_at is None
    assert jobs["1006"].state == JobState.CANCELLED


def test_lsf_year_rollover_and_edges():
    early = LsfCommands(tz=UTC, now=lambda: datetime(2027, 1, 2, tzinfo=UTC))
    text = '{"RECORDS": [{"JOBID": "5", "STAT": "RUN", "START_TIME": "Dec 31 23:00"}]}'
    (job,) = early.parse_status(text)
    assert job.started_at == datetime(2026, 12, 31, 23, 0, tzinfo=UTC)
    assert lsf.parse_status(read("lsf", "bjobs_none.txt")) == []
    (odd,) = lsf.parse_status('{"RECORDS": [{"JOBID": "6", "STAT": "WEIRD", "EXIT_CODE": ""}]}')
    assert odd.state == JobState.UNKNOWN and odd.native_state == "WEIRD"
    with pytest.raises(SiteError, match="RECORDS"):
        lsf.parse_status('{"COMMAND": "bjobs"}')


def test_lsf_snapshot():
    snap = lsf.parse_snapshot("lsf", {
        "hosts": read("lsf", "bhosts_json.json"), "lshosts": read("lsf", "lshosts_json.json"),
        "queues": read("lsf", "bqueues_json.json"), "queue": read("lsf", "bjobs_json.json"),
    })
    nodes = {n.name: n for n in snap.nodes}
    assert nodes["hostB"].cpus == 16 and nodes["hostB"].gpus == 4 and "gpu" in nodes[
        "hostB"].features
    assert nodes["hostA"].memory_mb == int(15.6 * 1024) and nodes["hostA"].architecture == "x86_64"
    assert nodes["hostC"].architecture == "ppc64le" and nodes["hostC"].state == "unavail"
    parts = {p.name: p for p in snap.partitions}
    assert parts["short"].max_time_s == 3600 and parts["normal"].max_time_s == 43200
    assert parts["night"].state == "INACTIVE" and parts["night"].max_time_s is None


# -- Flux ---------------------------------------------------------------------
def test_flux_argvs_and_submit():
    assert flux_commands.submit_argv("/j.sh", hold=True) == [
        "flux", "batch", "--urgency=hold", "/j.sh"]
    assert flux_commands.status_argv(["ƒ2Jc8CuU1"]) == ["flux", "jobs", "--json", "-a",
                                                        "ƒ2Jc8CuU1"]
    assert flux_commands.release_argv(["123"]) == ["flux", "job", "urgency", "123", "default"]
    assert flux_commands.release_argv(["1", "2"])[:2] == ["sh", "-c"]
    assert flux_commands.accounting_argv(["1"]) == flux_commands.status_argv(["1"])
    assert flux_commands.parse_submit(read("flux", "flux_batch.txt")) == "ƒ2Jc8CuU1"
    assert flux_commands.parse_submit("91096977768448\n") == "91096977768448"
    with pytest.raises(SiteError):
        flux_commands.parse_submit("flux-batch: ERROR: unsatisfiable request")


def test_flux_status():
    jobs = by_id(FluxCommands().parse_status(read("flux", "flux_jobs_json.json")))
    pend = jobs["91096977768448"]
    assert pend.state == JobState.PENDING and pend.walltime_s == 3600
    assert pend.estimated_start == datetime.fromtimestamp(1791489000, UTC)
    canc = jobs["91088924704768"]
    assert canc.state == JobState.CANCELLED and canc.exit_code == 143
    assert canc.ended_at == datetime.fromtimestamp(1791485358.6704354, UTC)
    run = jobs["91100000000000"]
    assert run.state == JobState.RUNNING and run.gpus == 2 and run.node_list == "node[0-1]"
    assert jobs["91100000000001"].state == JobState.COMPLETED
    assert jobs["91100000000002"].exit_code == 3 and jobs["91100000000002"].state == JobState.FAILED
    assert jobs["91100000000003"].state == JobState.TIMEOUT
    assert "held" in jobs["91100000000004"].reason
    (single,) = flux_commands.parse_status(read("flux", "flux_jobs_single.json"))
    assert single.native_id == "91096977768448" and single.walltime_s is None


def test_flux_edges():
    assert flux_commands.parse_status("") == []
    assert flux_commands.parse_status('{"jobs": []}') == []
    (num,) = flux_commands.parse_status('{"jobs": [{"id": 1, "state": 64, "result": 4}]}')
    assert num.state == JobState.CANCELLED
    (odd,) = flux_commands.parse_status('{"id": 2, "state": "LIMBO"}')
    assert odd.state == JobState.UNKNOWN and odd.native_state == "LIMBO"
    with pytest.raises(SiteError, match="flux"):
        flux_commands.parse_status('{"nothing": true}')


def test_flux_snapshot():
    snap = flux_commands.parse_snapshot("flux", {
        "resources": read("flux", "flux_resource_list.txt"),
        "queues": read("flux", "flux_queue_list.txt"),
        "queue": read("flux", "flux_jobs_json.json"),
    })
    nodes = {n.name: n for n in snap.nodes}
    # node0 is in the free line (4 cores) and the allocated one with node2 (12): the two
    # nodes linked are read as of one size, 8 cores, node2's all busy, 4 of node0's
    assert nodes["node0"].cpus == 8 and nodes["node0"].cpus_allocated == 4
    assert nodes["node2"].cpus == nodes["node2"].cpus_allocated == 8
    assert nodes["node0"].state == "mixed" and nodes["node2"].state == "allocated"
    assert nodes["node1"].gpus == 4 and nodes["node1"].features == ["gpu"]
    assert nodes["node3"].state == "down"
    parts = {p.name: p for p in snap.partitions}
    assert parts["batch"].default and parts["batch"].max_time_s == 8 * 3600
    assert parts["batch"].max_nodes is None and parts["debug"].max_nodes == 2
    assert parts["debug"].state == "DOWN"
    assert len(snap.running) == 1 and len(snap.pending) == 2


def test_errors_are_diamond_errors_never_index_errors():
    for parser, text in [
        (slurm.parse_accounting, "1|x"), (slurm.parse_sinfo_nodes, "a|b"),
        (pbs.parse_nodes, "[]"), (lsf.parse_status, "[1, 2]"),
        (flux_commands.parse_resources, "free|1"), (flux_commands.parse_queues, "QUEUE X\n"),
    ]:
        with pytest.raises(DiamondError):
            parser(text)


@pytest.mark.parametrize("text", ["24:00:   INFINITY", "inf:00", "1e999", "nan:00:00"])
def test_a_duration_with_no_finite_number_is_refused_by_name(text):
    """Found by the SGE fuzzing: a queue's h_rt mangled to '24:00:   INFINITY' raised
    OverflowError (float infinity to int), which no caller expects."""
    with pytest.raises(ValueError, match="bad duration"):
        parse_duration(text)


@pytest.mark.parametrize("text", ["inf", "1e999", "-inf", "nan"])
def test_a_count_with_no_finite_number_is_unknown(text):
    assert to_int(text) is None


def test_a_grid_engine_queue_whose_h_rt_is_mangled_has_no_limit():
    from diamond_jupyter.dialects.sge_commands import SgeCommands

    conf = "qname all.q\nhostlist @allhosts\nslots 8\nh_rt 24:00:   INFINITY\n"
    parts = SgeCommands(tz=UTC)._partitions(conf, [])
    assert [(p.name, p.max_time_s) for p in parts] == [("all.q", None)]


@pytest.mark.parametrize("text", ["9" * 400 + "G", ".", "1.2.3M"])
def test_a_memory_that_is_no_number_is_unknown(text):
    from diamond_jupyter.dialects.outputs_common import memory_mb

    assert memory_mb(text) is None


def test_an_lsf_run_limit_too_big_for_a_number_is_unknown():
    from diamond_jupyter.dialects.lsf_commands import _runlimit

    assert _runlimit("9" * 400 + " min") is None and _runlimit("720.0 min") == 43200


@pytest.mark.parametrize("job", [
    {"id": "f1", "state": 8, "exception": 1},
    {"id": "f1", "state": 8, "annotations": 3},
    {"id": "f1", "state": 8, "annotations": {"sched": 5}},
    {"id": "f1", "state": 8, "dependencies": 7},
])
def test_a_flux_job_whose_objects_are_mangled_still_parses(job):
    """Found by the fuzzing: `exception`, `annotations` or `sched` mangled into a number
    raised AttributeError ('int' object has no attribute 'get')."""
    from diamond_jupyter.dialects.flux_commands import FluxCommands

    [got] = FluxCommands().parse_status(json.dumps({"jobs": [job]}))
    assert got.native_id == "f1" and got.state == JobState.PENDING


def test_json_with_a_number_beyond_pythons_limit_is_a_named_site_error():
    """Valid JSON, but a 5,000-digit integer exceeds Python's int conversion limit
    (ValueError, not JSONDecodeError)."""
    with pytest.raises(SiteError, match="invalid JSON"):
        load_json("flux", "flux jobs --json", "[" + "9" * 5000 + "]")
