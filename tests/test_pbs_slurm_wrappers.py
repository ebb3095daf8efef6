"""The pbs dialect on Slurm's own Torque wrappers (slurm-wlm-torque), from their recorded
outputs (tests/fixtures/outputs/slurm_torque/, no cluster needed)."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.dialects import get_commands
from diamond_jupyter.dialects.pbs_commands import PbsCommands
from diamond_jupyter.dialects.pbs_text import parse_full
from diamond_jupyter.model import BadInput, DiamondError, JobState

FIX = Path(__file__).parent / "fixtures" / "outputs" / "slurm_torque"
UTC = timezone.utc
wrappers = PbsCommands(flavor="slurm", jobcomp=True, tz=UTC)


def read(name: str) -> str:
    return (FIX / name).read_text(encoding="utf-8")


def test_qsub_prints_a_bare_id():
    assert wrappers.parse_submit(read("qsub.txt")) == "900005"
    assert wrappers.parse_submit(read("qsub_hold.txt")) == "900008"


def test_status_text_states_times_and_hosts():
    got = {s.native_id: s for s in wrappers.parse_status(read("qstat_f_ids.txt"))}
    assert set(got) == {"900005", "900006", "900007", "900008", "900009"}
    run = got["900007"]
    assert run.state == JobState.RUNNING and run.node_list == "sn1" and run.walltime_s == 600
    assert run.started_at == datetime(2026, 12, 1, 18, 25, 27, tzinfo=UTC)
    assert run.ended_at is None  # a running job's ctime is its expected end, not an end
    assert run.name == "long.dmd-ccc333" and run.user == "restscratch" and run.cpus == 1
    held = got["900009"]
    assert held.state == JobState.PENDING and held.reason == "held (priority 0)"
    # finished: C with no exit status, whether it completed, failed or was cancelled
    for jid in ("900005", "900006", "900008"):
        assert got[jid].state == JobState.UNKNOWN and got[jid].native_state == "C"
        assert got[jid].ended_at is not None
    assert got["900008"].started_at is None and got["900008"].node_list is None  # never ran


def test_finished_jobs_are_settled_by_slurm_accounting():
    argv = wrappers.accounting_argv(["900005", "900008.ignored"])
    assert argv[argv.index("sacct"):][:2] == ["sacct", "-c"]
    assert argv[-2:] == ["-j", "900005,900008"]
    recorded = read("sacct_jobcomp.txt")  # recorded with the name last; now the id follows it
    got = {s.native_id: s for s in wrappers.parse_accounting(
        "".join(f"{ln}|{ln.split('|', 1)[0]}\n" for ln in recorded.splitlines()))}
    assert got["900005"].state == JobState.COMPLETED and got["900005"].exit_code == 0
    assert got["900006"].state == JobState.FAILED and got["900006"].exit_code == 3
    assert got["900008"].state == JobState.CANCELLED
    # PBS Pro and Torque ask their own server's logs (tracejob), not Slurm's accounting
    for flavor in ("pro", "torque"):
        assert "sacct" not in PbsCommands(flavor=flavor).accounting_argv(["1"])


def test_argvs_differ_from_pbs_pro():
    assert wrappers.status_argv(["900005.server", "7"]) == ["qstat", "-f", "900005", "7"]
    assert PbsCommands().status_argv(["1"]) == ["qstat", "-f", "-F", "json", "-x", "1"]
    # no qselect, and `qstat -f` prints anyone's name as given: Slurm's squeue lists the jobs
    find = wrappers.find_by_name_argv("x.dmd-abc")
    assert "squeue" in find and "--name=x.dmd-abc" in find
    argvs = wrappers.snapshot_argvs()
    assert (argvs["nodes"], argvs["queues"]) == (["pbsnodes", "-a"], ["qstat", "-q"])
    assert "squeue" in argvs["queue"] and "-a" in argvs["queue"]
    # the wrapper's qsub overrides #PBS -o/-e with its own names unless told them
    assert wrappers.submit_argv("/h/j.sh", stdout="/h/o", stderr="/h/e") == \
        ["qsub", "-o", "/h/o", "-e", "/h/e", "/h/j.sh"]
    assert wrappers.submit_argv("/h/j.sh", hold=True, stdout="/h/o") == \
        ["qsub", "-h", "-o", "/h/o", "-j", "oe", "/h/j.sh"]
    assert PbsCommands().submit_argv("/h/j.sh", hold=True) == ["qsub", "-h", "/h/j.sh"]


@pytest.mark.parametrize("path", ["/h/my out", "/h/$(id)", "/h/a;b", "/h/`x`", "/h/'q'"])
def test_wrapper_refuses_paths_its_shell_would_split(path):
    # the wrapper runs sbatch through a shell with its arguments unquoted
    with pytest.raises(BadInput, match="qsub wrapper"):
        wrappers.submit_argv("/h/j.sh", stdout=path)


def test_snapshot_nodes_and_queues():
    snap = wrappers.parse_snapshot("alpha-pbs", {
        "nodes": read("pbsnodes_a.txt"), "queues": read("qstat_q.txt"),
        "queue": read("qstat_f_all.txt")})
    (node,) = snap.nodes
    assert (node.name, node.cpus, node.memory_mb, node.architecture) == \
        ("sn1", 4, 8000, "x86_64")
    (queue,) = snap.partitions
    assert (queue.name, queue.state, queue.max_time_s) == ("batch", "UP", 3600)
    # the queue holds what is pending or running, not the finished (C) jobs
    assert {j.native_id for j in snap.jobs} == {"900007", "900009"}
    assert all(j.state in (JobState.PENDING, JobState.RUNNING) for j in snap.jobs)


def test_unknown_id_is_empty_and_json_options_are_refused():
    assert read("qstat_f_unknown.txt") == "" and wrappers.parse_status("") == []
    assert read("qstat_F_json.err").startswith("Unknown option: F")
    assert read("qstat_x.err").startswith("Unknown option: x")


def test_malformed_text_is_a_clear_error():
    with pytest.raises(DiamondError, match="before any 'Job Id:'"):
        parse_full("\tjob_state = Q\n")
    with pytest.raises(DiamondError, match="expected 'name = value'"):
        parse_full("Job Id:\t1\nnonsense line\n")
    # what the wrapper's `hostname -f` says on stderr before the jobs is not a job line
    noisy = "hostname: Temporary failure in name resolution\n" + read("qstat_f_all.txt")
    assert parse_full(noisy) == parse_full(read("qstat_f_all.txt"))
    # a wrapped value continues on an indented line (Torque's long values)
    jobs = parse_full("Job Id: 1\n\tJob_Name = a\n\tvery_long = abc\n\t    def\n")
    assert jobs["1"]["very_long"] == "abcdef"


def test_site_config_flavor():
    assert get_commands("pbs", flavor="slurm", jobcomp=True).flavor == "slurm"
    assert get_commands("pbs").flavor == "pro"
    with pytest.raises(ValueError, match="unknown pbs flavor"):
        SiteConfig(name="x", scheduler="pbs", flavor="openpbs9")
    with pytest.raises(ValueError, match="flavor is for scheduler pbs"):
        SiteConfig(name="x", scheduler="slurm", flavor="slurm")


def test_discovery_reads_the_wrappers_nodes_and_queues():
    """`qstat -q` always exits 153 (nothing counted as printed): no failure for this flavor."""
    from diamond_jupyter.discovery_site import describe_from_outputs

    parts = {"arch": "x86_64\n", "sched:alpha-pbs:nodes": read("pbsnodes_a.txt"),
             "sched:alpha-pbs:queues": read("qstat_q.txt")}
    codes = {"sched:alpha-pbs:nodes": 0, "sched:alpha-pbs:queues": 153}
    d = describe_from_outputs("alpha-pbs", wrappers, parts, codes, ["alpha-pbs"],
                              ["nodes", "queues"])
    assert d.clusters[0].error is None and d.capabilities.errors == []
    bad = describe_from_outputs("alpha-pbs", PbsCommands(), parts, codes, ["alpha-pbs"],
                                ["nodes", "queues"])
    assert "queues query failed" in bad.clusters[0].error  # other flavors: 153 is a failure
