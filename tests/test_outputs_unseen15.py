"""Sweep 15 of scheduler outputs: outputs written here (from each scheduler's documented
formats, not captured) with what a real center shows and the recorded fixtures lack, fed
through the parsers and what reads them (the snapshot a placement reads, job-state
tracking's folding of arrays). Each row of OUTPUTS is one output and what must be read
from it; the focused tests after it are the faults this sweep found (each failed before).
A record a parser cannot read is said in the snapshot's warnings (naming the site, the
output and the line), never the whole site's view lost nor the record dropped unsaid."""

from __future__ import annotations

import json
from datetime import timezone

import pytest

from diamond_jupyter.dialects import slurm_rest
from diamond_jupyter.dialects.flux_commands import FluxCommands
from diamond_jupyter.dialects.lsf_commands import LsfCommands
from diamond_jupyter.dialects.outputs_common import (
    expand_hostlist,
    fold_array_tasks,
    gpu_count,
    job_hosts,
    parse_duration,
)
from diamond_jupyter.dialects.pbs_commands import PbsCommands
from diamond_jupyter.dialects.sge_commands import SgeCommands
from diamond_jupyter.dialects.slurm_commands import SlurmCommands, map_state
from diamond_jupyter.model import JobState, SiteError
from diamond_jupyter.placement_fit import node_usable

UTC = timezone.utc
slurm = SlurmCommands(tz=UTC)
sge = SgeCommands(tz=UTC)
lsf = LsfCommands(tz=UTC)
pbs = PbsCommands()
torque = PbsCommands(flavor="torque")
flux = FluxCommands()


def squeue_line(jid: str, state: str, *, start: str = "N/A", end: str = "N/A",
                limit: str = "1:00:00", nodes: str = "", tres: str = "N/A",
                name: str = "job", user: str = "alice", part: str = "batch") -> str:
    """One line of SQUEUE_FIELDS (%i|%T|%S|%e|%V|%l|%D|%C|%u|%P|%b|%N|%r|%k|%j)."""
    return "|".join([jid, state, start, end, "2026-12-05T09:00:00", limit, "1", "4", user,
                     part, tres, nodes, "None", "", name])


SCONTROL_NODES = "\n".join([
    "NodeName=cn001.hpc.example.org Arch=x86_64 CoresPerSocket=16 CPUAlloc=0 CPUTot=32 "
    "Gres=(null) RealMemory=128000 AllocMem=0 State=DOWN+CLOUD+POWERED_DOWN ThreadsPerCore=1 "
    "Partitions=cloud Reason=Not responding [slurm@2026-12-01T00:00:00]",
    # typed GPU accounting (AccountingStorageTRES=gres/gpu,gres/gpu:a100): AllocTRES names
    # the two GPUs in all and again by type; no GresUsed (scontrol without -d)
    "NodeName=gpu-a01 Arch=x86_64 CPUAlloc=16 CPUTot=64 Gres=gpu:a100:4(S:0-1) "
    "AllocTRES=cpu=16,mem=64G,gres/gpu=2,gres/gpu:a100=2 RealMemory=512000 AllocMem=65536 "
    "State=MIXED Partitions=gpu,gpu-long",
    "NodeName=gpu-a02 CPUAlloc=16 CPUTot=64 Gres=gpu:a100:4 GresUsed=gpu:a100:1(IDX:0) "
    "RealMemory=512000 State=MIXED+DRAIN Partitions=gpu",
    "NodeName=cn010 CPUAlloc=0 CPUTot=32 RealMemory=128000 State=IDLE+MAINTENANCE+RESERVED "
    "Partitions=batch",
    "NodeName=cn013 CPUAlloc=32 CPUTot=32 RealMemory=128000 State=ALLOCATED+COMPLETING "
    "Partitions=batch",
])

SCONTROL_PARTITIONS = "\n".join([
    "PartitionName=empty AllowGroups=ALL AllowAccounts=ALL Default=NO DefaultTime=NONE "
    "MaxNodes=UNLIMITED MaxTime=UNLIMITED MinNodes=0 Nodes=(null) State=UP TotalCPUs=0 "
    "TotalNodes=0",
    "PartitionName=gpu Default=YES DefaultTime=01:00:00 MaxTime=2-00:00:00 "
    "Nodes=cn[001-004,010],gpu-a[01-02] State=UP TotalCPUs=384 TotalNodes=7",
])

SACCT = "\n".join([
    "123_4|CANCELLED by 1234|0:15|2026-12-01T00:00:00|2026-12-01T01:00:00|cn[001-002]|arr"
    "|123_4",
    "123_[5-9%2]|PENDING|0:0|Unknown|Unknown|None assigned|arr|123_[5-9%2]",
    "124+1|FAILED|1:0|2026-12-01T00:00:00|2026-12-01T00:00:05|gpu-a01|het|124+1",
    "124+1.batch|FAILED|1:0|2026-12-01T00:00:00|2026-12-01T00:00:05|gpu-a01|batch|124+1.batch",
    "125|OUT_OF_MEMORY|0:125|2026-12-01T00:00:00|2026-12-01T00:00:05|cn001|big|125",
])

QACCT = """==============================================================
qname        all.q
hostname     n-01.cluster.org
owner        jürgen
jobname      Ünïcode-job
jobnumber    77
taskid       undefined
qsub_time    Sat Dec  5 10:00:00 2026
start_time   -/-
end_time     -/-
failed       1       : assumedly before job
exit_status  0
==============================================================
qname        all.q
hostname     n-02
jobname      k
jobnumber    78
taskid       3
qsub_time    12/05/2026 09:59:00.120
start_time   12/05/2026 10:00:00.512
end_time     12/05/2026 10:05:00.004
failed       100     : assumedly after job
exit_status  137                  (Killed)
"""


def _bjobs(*records: dict) -> str:
    return json.dumps({"COMMAND": "bjobs", "JOBS": len(records), "RECORDS": list(records)})


# (label, what is read, expected): each a value read from an output written here
OUTPUTS = [
    ("hostlist of nested ranges with leading zeros and a dotted name",
     lambda: expand_hostlist("cn[001-004,010],gpu-a[01-02],login.ex-1.org"),
     ["cn001", "cn002", "cn003", "cn004", "cn010", "gpu-a01", "gpu-a02", "login.ex-1.org"]),
    ("Torque exec_host ranges", lambda: job_hosts("n1/0-3+n2/0-3"), ["n1", "n2"]),
    ("LSF wide hosts", lambda: job_hosts("4*hostA:2*host-b.x"), ["hostA", "host-b.x"]),
    ("squeue state with a uid", lambda: map_state("CANCELLED by 1234"), JobState.CANCELLED),
    ("squeue COMPLETING", lambda: map_state("COMPLETING"), JobState.RUNNING),
    ("squeue REQUEUE_HOLD", lambda: map_state("REQUEUE_HOLD"), JobState.PENDING),
    ("squeue RESV_DEL_HOLD", lambda: map_state("RESV_DEL_HOLD"), JobState.PENDING),
    ("a time limit in days", lambda: parse_duration("2-03:04:05"), 2 * 86400 + 3 * 3600 + 245),
    ("UNLIMITED", lambda: parse_duration("UNLIMITED"), None),
    ("typed GPUs of a TRES string counted once",
     lambda: gpu_count("cpu=4,mem=16G,node=1,billing=4,gres/gpu=2,gres/gpu:a100=2"),
     (2, "a100")),
    ("two GPU types in a TRES string",
     lambda: gpu_count("gres/gpu=3,gres/gpu:a100=1,gres/gpu:v100=2"), (3, "a100")),
    ("a typed GPU TRES alone", lambda: gpu_count("gres/gpu:a100=2"), (2, "a100")),
    ("squeue: array range, het component, COMPLETING with INVALID end",
     lambda: [(j.native_id, j.state, j.gpus, j.walltime_s, j.node_list)
              for j in slurm.parse_status("\n".join([
                  squeue_line("123_[1-5%2]", "PENDING", tres="gres/gpu:a100:2",
                              limit="2-03:04:05", name="name|with|pipes"),
                  squeue_line("123+1", "RUNNING", start="2026-12-05T10:00:00",
                              limit="UNLIMITED", nodes="cn[001-002]"),
                  squeue_line("124", "COMPLETING", start="2026-12-05T10:00:00",
                              end="INVALID", limit="INVALID", nodes="cn001"),
              ]))],
     [("123_[1-5%2]", JobState.PENDING, 2, 183845, None),
      ("123+1", JobState.RUNNING, None, None, "cn[001-002]"),
      ("124", JobState.RUNNING, None, None, "cn001")]),
    ("squeue: a name holding the separator and non-ASCII, 300 characters long",
     lambda: slurm.parse_status(squeue_line("7", "PENDING", name="ü|" * 150,
                                            user="jürgen"))[0].name,
     "ü|" * 150),
    ("scontrol nodes: states, typed GPUs in AllocTRES, dotted name",
     lambda: [(n.name, n.gpus, n.gpus_allocated, node_usable(n))
              for n in slurm.parse_nodes(SCONTROL_NODES)],
     [("cn001.hpc.example.org", 0, 0, False), ("gpu-a01", 4, 2, True),
      ("gpu-a02", 4, 1, False), ("cn010", 0, 0, False), ("cn013", 0, 0, True)]),
    ("scontrol nodes: an admin's Reason and Comment holding fields of their own",
     lambda: [(n.name, n.cpus, n.memory_mb, n.state) for n in slurm.parse_nodes(
         "NodeName=cn5 CPUAlloc=0 CPUTot=64 RealMemory=256000 State=IDLE+DRAIN "
         "Partitions=batch Reason=DIMM swap: RealMemory=128000 CPUTot=32 until fixed "
         "[root@2026-12-01T00:00:00]\n"
         "NodeName=cn6 CPUAlloc=0 CPUTot=64 RealMemory=256000 State=IDLE Partitions=batch "
         "Reason=was State=DOWN Comment=moved, State=DOWN to rack 3 Extra=GresUsed=gpu:4")],
     [("cn5", 64, 256000, "idle+drain"), ("cn6", 64, 256000, "idle")]),
    ("scontrol partitions: an empty one, nested node ranges",
     lambda: [(p.name, p.nodes, p.max_time_s, p.default_time_s, p.max_nodes)
              for p in slurm.parse_partitions(SCONTROL_PARTITIONS)],
     [("empty", [], None, None, None),
      ("gpu", ["cn001", "cn002", "cn003", "cn004", "cn010", "gpu-a01", "gpu-a02"],
       172800, 3600, None)]),
    ("sacct: cancelled by a uid, pending range, het component, OOM",
     lambda: [(j.native_id, j.state, j.exit_code, j.node_list)
              for j in slurm.parse_accounting(SACCT)],
     [("123_4", JobState.CANCELLED, 143, "cn[001-002]"),
      ("123_[5-9%2]", JobState.PENDING, None, None),
      ("124+1", JobState.FAILED, 1, "gpu-a01"),
      ("125", JobState.FAILED, None, "cn001")]),
    ("squeue: a waiting job's StartTime of 0 printed as a date",
     lambda: slurm.parse_status(squeue_line("200", "PENDING",
                                            start="1970-01-01T00:00:00"))[0].estimated_start,
     None),
    ("qacct: never started, and killed (137) with Univa's time format",
     lambda: [(j.native_id, j.state, j.exit_code, j.started_at is not None, j.user)
              for j in sge.parse_accounting(QACCT)],
     [("77", JobState.FAILED, None, False, "jürgen"),
      ("78.3", JobState.FAILED, 137, True, None)]),
    ("LSF: a job's hosts listed once a slot",
     lambda: lsf.parse_status(_bjobs({"JOBID": "502", "STAT": "RUN", "JOB_NAME": "w",
                                      "SLOTS": "3", "EXEC_HOST": "hostA:hostA:host-b.x"}))[0]
     .nodes, 2),
    ("PBS Pro: GPUs asked by select chunks only",
     lambda: pbs.parse_status(json.dumps({"Jobs": {"101[].srv": {
         "job_state": "B", "queue": "workq",
         "Resource_List": {"ncpus": 9, "select": "2:ncpus=4:ngpus=1+1:ncpus=1:ngpus=2"}}}}))[0]
     .gpus, 4),
    ("Torque: GPUs asked by nodes",
     lambda: pbs.parse_status(json.dumps({"Jobs": {"55.torque": {
         "job_state": "Q", "Resource_List": {"nodes": "2:ppn=4:gpus=2"}}}}))[0].gpus, 4),
    ("flux: jobs with only an id and a state, a long non-ASCII name",
     lambda: [(j.native_id, j.state, j.user) for j in flux.parse_status(json.dumps({"jobs": [
         {"id": 1234, "state": "RUN"},
         {"id": "f2X", "state": "INACTIVE", "result": "COMPLETED"},
         {"id": 55, "userid": 1001, "state": 8, "name": "é" * 300}]}))],
     [("1234", JobState.RUNNING, None), ("f2X", JobState.COMPLETED, None),
      ("55", JobState.PENDING, "1001")]),
    ("LSF: array elements under their array's JOBID, `-` fields, wide hosts",
     lambda: [(j.native_id, j.state, j.nodes, j.walltime_s)
              for j in lsf.parse_status(_bjobs(
                  {"JOBID": "500", "STAT": "RUN", "JOB_NAME": "arr[1]", "SLOTS": "8",
                   "EXEC_HOST": "4*hostA:4*host-b.x", "RUNTIMELIMIT": "-", "EXIT_CODE": "-"},
                  {"JOBID": "500", "STAT": "PEND", "JOB_NAME": "arr[2]", "SLOTS": "",
                   "EXEC_HOST": "", "RUNTIMELIMIT": "-"},
                  {"JOBID": "501", "STAT": "EXIT", "EXIT_CODE": "137",
                   "EXIT_REASON": "TERM_MEMLIMIT", "JOB_NAME": "plain"}))],
     [("500[1]", JobState.RUNNING, 2, None), ("500[2]", JobState.PENDING, None, None),
      ("501", JobState.FAILED, None, None)]),
]


@pytest.mark.parametrize("label, read, expected", OUTPUTS, ids=[o[0] for o in OUTPUTS])
def test_output_read(label, read, expected):
    assert read() == expected


# -- focused: a record that cannot be read is said, the rest of the view stands ---------

def test_slurm_squeue_line_before_the_records_is_a_warning_not_the_site_lost():
    queue = "squeue: error: Invalid user: 4711\n" + squeue_line("300", "RUNNING",
                                                               nodes="cn001")
    with pytest.raises(SiteError, match="squeue line 1"):  # job tracking: still an error
        slurm.parse_status(queue)
    snap = slurm.parse_snapshot("vega", {"queue": queue, "nodes": SCONTROL_NODES,
                                         "partitions": SCONTROL_PARTITIONS})
    assert [j.native_id for j in snap.jobs] == ["300"]
    assert len(snap.nodes) == 5 and len(snap.partitions) == 2
    assert snap.warnings == ["vega: slurm: cannot parse squeue line 1: 1 of 15 fields "
                             "(got 'squeue: error: Invalid user: 4711')"]


def test_slurm_job_listed_twice_is_said():
    queue = "\n".join([squeue_line("301", "RUNNING", name="x\n" + squeue_line(
        "302", "PENDING")), squeue_line("302", "PENDING")])
    snap = slurm.parse_snapshot("vega", {"queue": queue})
    assert [j.native_id for j in snap.jobs] == ["301"]
    assert any("squeue job 302" in w and "twice" in w for w in snap.warnings)


def test_sinfo_line_of_another_shape_is_said():
    skipped: list[str] = []
    nodes = slurm.parse_sinfo_nodes(
        "cn001|idle|8|16000|gpu:a100:2|a,b|batch*|0/8/0/8|1-00:00:00|1\nbadline\n", skipped)
    assert [n.name for n in nodes] == ["cn001"]
    assert skipped == ["slurm: cannot parse sinfo line 2: expected 10 '|' fields "
                       "(got 'badline')"]


def test_slurmrestd_job_without_id_and_node_without_name_are_said():
    jobs = {"jobs": [{"job_id": 900, "job_state": "RUNNING", "name": "ok"},
                     {"job_state": "PENDING", "name": "no id"}]}
    nodes = {"nodes": [{"name": "n1", "state": "idle", "cpus": 4},
                       {"state": "idle", "cpus": 8}]}
    snap = slurm_rest.parse_snapshot("rest", {"queue": json.dumps(jobs),
                                              "nodes": json.dumps(nodes)})
    assert [j.native_id for j in snap.jobs] == ["900"]  # not a job "None"
    assert [n.name for n in snap.nodes] == ["n1"]
    assert len(snap.warnings) == 2
    assert snap.warnings[0].startswith("rest: slurm: cannot parse squeue --json job 2: no "
                                       "job_id")
    assert snap.warnings[1].startswith("rest: slurmrestd: cannot parse nodes node 2: no name")


def test_lsf_array_elements_fold_into_their_array():
    records = lsf.parse_status(_bjobs(
        {"JOBID": "500", "STAT": "DONE", "JOB_NAME": "arr[1]", "EXIT_CODE": ""},
        {"JOBID": "500", "STAT": "RUN", "JOB_NAME": "arr[2]"},
        {"JOBID": "500", "STAT": "PEND", "JOB_NAME": "arr[3]"}))
    folded = fold_array_tasks(records, lsf.array_of, lsf.array_tasks)
    assert [(j.native_id, j.state) for j in folded] == [("500", JobState.RUNNING)]
    assert folded[0].reason == "array tasks: 1 running, 1 waiting, 1 completed"
    # the last element's failure is the array's outcome once all ended
    ended = fold_array_tasks(lsf.parse_status(_bjobs(
        {"JOBID": "500", "STAT": "DONE", "JOB_NAME": "arr[1]"},
        {"JOBID": "500", "STAT": "EXIT", "JOB_NAME": "arr[2]", "EXIT_CODE": "3"})),
        lsf.array_of, lsf.array_tasks)
    assert [(j.native_id, j.state, j.exit_code) for j in ended] == [("500", JobState.FAILED,
                                                                     3)]
    # with LSB_BJOBS_DISPLAY_ENH=Y the index is in JOBID already
    assert lsf.parse_status(_bjobs({"JOBID": "500[7]", "STAT": "RUN",
                                    "JOB_NAME": "arr[7]"}))[0].native_id == "500[7]"


def test_lsf_record_without_jobid_is_said():
    queue = _bjobs({"JOBID": "600", "STAT": "RUN", "JOB_NAME": "a"}, {"JOBID": "", "STAT": "RUN"})
    hosts = json.dumps({"COMMAND": "bhosts", "HOSTS": 2, "RECORDS": [
        {"HOST_NAME": "host-b.x", "STATUS": "closed_Full", "MAX": "-", "NJOBS": "8"},
        {"HOST_NAME": "", "STATUS": "ok", "MAX": "16"}]})
    lshosts = json.dumps({"COMMAND": "lshosts", "HOSTS": 1, "RECORDS": [
        {"HOST_NAME": "host-b.x", "ncpus": "8", "maxmem": "64G", "type": "X86_64"}]})
    with pytest.raises(SiteError, match="no JOBID"):
        lsf.parse_status(queue)
    snap = lsf.parse_snapshot("lsfsite", {"queue": queue, "hosts": hosts, "lshosts": lshosts})
    assert [j.native_id for j in snap.jobs] == ["600"]
    assert [(n.name, n.cpus, n.cpus_allocated) for n in snap.nodes] == [("host-b.x", 8, 8)]
    assert [w.split(" (got")[0] for w in snap.warnings] == [
        "lsfsite: lsf: cannot parse bhosts -json record 2: no HOST_NAME",
        "lsfsite: lsf: cannot parse bjobs -json record 2: no JOBID"]


SGE_QUEUE = """<?xml version='1.0'?>
<job_info>
  <queue_info>
    <Queue-List><name>all.q@n-01.cluster.org</name><qtype>BIP</qtype><slots_used>4</slots_used>
      <slots_resv>0</slots_resv><slots_total>8</slots_total><arch>lx-amd64</arch>
      <job_list state="running"><JB_job_number>12</JB_job_number><JB_name>ok</JB_name>
        <JB_owner>bob</JB_owner><state>r</state><slots>4</slots></job_list>
    </Queue-List>
  </queue_info>
  <job_info>
    <job_list state="pending"><JB_name>lost</JB_name><state>qw</state></job_list>
    <job_list state="pending"><JB_job_number>14</JB_job_number><JB_name>arr</JB_name>
      <state>hqw</state><slots>1</slots><tasks>1-10:2</tasks></job_list>
  </job_info>
</job_info>"""


def test_sge_job_without_number_is_said():
    with pytest.raises(SiteError, match="JB_job_number"):
        sge.parse_status(SGE_QUEUE)
    snap = sge.parse_snapshot("delta", {"queue": SGE_QUEUE})
    # the waiting range under its task record's id, as the status query reads it
    assert [j.native_id for j in snap.jobs] == ["12", "14.1-10:2"]
    assert snap.warnings == ["delta: sge: cannot parse qstat -xml: a job without "
                             "JB_job_number (got 'JB_name=lost state=qw')"]
    assert [j.native_id for j in sge.parse_status(SGE_QUEUE, [])] == ["12", "14.1-10:2"]


def test_flux_job_without_id_and_short_resource_line_are_said():
    snap = flux.parse_snapshot("fl", {
        "queue": json.dumps({"jobs": [{"id": 9, "state": "RUN"}, {"state": "SCHED"}]}),
        "resources": "free||2|8|0|node[01-02]\nfree|2|8|0|node[03-04]\n"})
    assert [j.native_id for j in snap.jobs] == ["9"]
    assert [n.name for n in snap.nodes] == ["node01", "node02"]
    assert snap.warnings == [
        "fl: flux: cannot parse flux jobs --json job 2: not a job with an id "
        "(got \"{'state': 'SCHED'}\")",
        "fl: flux: cannot parse flux resource list line 2: expected 6 '|' fields "
        "(got 'free|2|8|0|node[03-04]')"]


def test_pbs_entries_that_are_no_records_are_said():
    queue = json.dumps({"Jobs": {"1.srv": {"job_state": "R", "queue": "workq"},
                                 "2.srv": "mangled"}})
    nodes = json.dumps({"nodes": {"n1": {"state": "free", "resources_available": {
        "ncpus": 8}}, "n2": ["mangled"]}})
    snap = pbs.parse_snapshot("pro", {"queue": queue, "nodes": nodes})
    assert [j.native_id for j in snap.jobs] == ["1.srv"]
    assert [n.name for n in snap.nodes] == ["n1"]
    assert [w.split(":")[:3] for w in snap.warnings] == [
        ["pro", " pbs", " cannot parse qstat -F json job 2.srv"],
        ["pro", " pbs", " cannot parse pbsnodes -F json node n2"]]


def test_torque_job_without_id_is_said():
    xml = ("<Data><Job><Job_Id>5.t</Job_Id><job_state>R</job_state></Job>"
           "<Job><Job_Name>anon</Job_Name><job_state>Q</job_state></Job></Data>")
    with pytest.raises(SiteError, match="without Job_Id"):
        torque.parse_status(xml)
    skipped: list[str] = []
    assert [j.native_id for j in torque.parse_status(xml, skipped)] == ["5.t"]
    assert skipped == ["pbs: cannot parse qstat -x (Torque XML): a Job without Job_Id "
                       "(got 'Job_Name=anon job_state=Q')"]


# -- through a site: the snapshot stands, its warnings are logged once -------------------

def _tool(bin_, name: str, body: str) -> None:
    (bin_ / name).write_text(f"#!/bin/sh\n{body}\n")
    (bin_ / name).chmod(0o755)


async def test_site_snapshot_keeps_its_view_and_logs_an_unread_line_once(tmp_path, caplog):
    from diamond_jupyter.config import SiteConfig
    from diamond_jupyter.sites import Site
    from diamond_jupyter.transports import make_transport

    bin_ = tmp_path / "bin"
    bin_.mkdir()
    mine = squeue_line("7", "RUNNING", start="2026-12-05T10:00:00", nodes="c1")
    _tool(bin_, "squeue", f"echo 'squeue: warning: partial answer'; echo '{mine}'")
    _tool(bin_, "scontrol", """case "$*" in
  *partition*) echo 'PartitionName=batch Default=YES MaxTime=01:00:00 Nodes=c1 State=UP' ;;
  *node*) echo 'NodeName=c1 CPUTot=8 CPUAlloc=4 RealMemory=16000 State=MIXED' ;;
esac""")
    cfg = SiteConfig(name="odd", workdir=str(tmp_path), transport={"kind": "local"},
                     commands={p: str(bin_ / p) for p in ("squeue", "scontrol")})
    site = Site(cfg, transport=make_transport(cfg.transport, "odd", workdir=str(tmp_path)))
    try:
        with caplog.at_level("WARNING", logger="diamond_jupyter.sites"):
            first = await site.snapshot(max_age_s=0)
            second = await site.snapshot(max_age_s=0)
    finally:
        await site.close()
    assert first.reachable and [j.native_id for j in first.jobs] == ["7"]
    assert [n.name for n in first.nodes] == ["c1"]
    assert first.warnings == second.warnings == [
        "odd: slurm: cannot parse squeue line 1: 1 of 15 fields "
        "(got 'squeue: warning: partial answer')"]
    logged = [r.getMessage() for r in caplog.records if "squeue line 1" in r.getMessage()]
    assert logged == first.warnings  # said once, not at every snapshot


def test_cli_queue_lists_the_jobs_read_and_says_the_line_left_out(tmp_path):
    import os
    import subprocess
    import sys

    bin_ = tmp_path / "bin"
    bin_.mkdir()
    mine = squeue_line("7", "RUNNING", start="2026-12-05T10:00:00", nodes="c1", name="mine")
    _tool(bin_, "squeue", f"echo 'squeue: warning: partial answer'; echo '{mine}'")
    _tool(bin_, "scontrol", "exit 0")
    sites = tmp_path / "sites.yaml"
    sites.write_text("sites:\n  - name: odd\n    scheduler: slurm\n"
                     "    transport: {kind: local}\n"
                     f"    workdir: {tmp_path}\n"
                     f"    commands: {{squeue: {bin_ / 'squeue'}, scontrol: "
                     f"{bin_ / 'scontrol'}}}\n"
                     f"store: {tmp_path / 'store.sqlite3'}\n")
    env = {**os.environ, "DIAMOND_DATA_DIR": str(tmp_path / "data"), "HOME": str(tmp_path),
           "DIAMOND_CONFIG": str(sites)}
    res = subprocess.run([sys.executable, "-m", "diamond_jupyter.cli", "queue", "odd"],
                         capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 0, res.stderr
    assert "RUNNING" in res.stdout and "mine" in res.stdout
    assert "diamond: warning: odd: slurm: cannot parse squeue line 1: 1 of 15 fields " \
        "(got 'squeue: warning: partial answer')" in res.stderr


def test_history_line_of_another_shape_is_said_and_the_rest_calibrates():
    history = "\n".join([
        "900|batch|1-00:00:00|2026-12-05T08:00:00|2026-12-05T08:01:00|2026-12-05T09:00:00|8|1"
        "|COMPLETED",
        "sacct: warning: partial answer from the database",
        "901|gpu|UNLIMITED|2026-12-05T08:00:00|2026-12-05T08:30:00|2026-12-05T09:00:00|4|1"
        "|CANCELLED by 1234"])
    with pytest.raises(SiteError, match="sacct line 2"):
        slurm.parse_history(history)
    skipped: list[str] = []
    jobs = slurm.parse_history(history, skipped)
    assert [(j.native_id, j.state, j.walltime_s) for j in jobs] == [
        ("900", JobState.COMPLETED, 86400), ("901", JobState.CANCELLED, None)]
    assert skipped == ["slurm: cannot parse sacct line 2: expected 9 '|' fields (got "
                       "'sacct: warning: partial answer from the database')"]
    qacct = QACCT.replace("jobnumber    77", "jobnumber    seventy-seven")
    skipped = []
    assert [j.native_id for j in sge.parse_history(qacct, skipped)] == ["78.3"]
    assert len(skipped) == 1 and "bad jobnumber 'seventy-seven'" in skipped[0]


def test_torque_pbsnodes_line_of_another_shape_is_said():
    nodes = "\n".join([
        "n001.cluster.org", "     state = free", "     np = 16", "     properties = batch,ib",
        "     jobs = 0-3/12.srv", "     note = DIMM replaced", "     see ticket 4711",
        "     gpus = 2", "", "n002", "     state = down,offline", "     np = 16", ""])
    from diamond_jupyter.dialects.pbs_text import parse_wrapper_nodes

    with pytest.raises(SiteError, match="pbsnodes line 7"):
        parse_wrapper_nodes(nodes)
    snap = torque.parse_snapshot("tq", {"nodes": nodes})
    assert [n.name for n in snap.nodes] == ["n001.cluster.org", "n002"]
    assert snap.warnings == ["tq: pbs: cannot parse pbsnodes line 7: expected 'name = value' "
                             "under a node (got 'see ticket 4711')"]

    skipped: list[str] = []
    got = parse_wrapper_nodes(nodes, skipped)
    assert [(n.name, n.cpus, n.cpus_allocated, n.gpus, node_usable(n)) for n in got] == [
        ("n001.cluster.org", 16, 4, 2, True), ("n002", 16, 0, 0, False)]
    assert skipped == ["pbs: cannot parse pbsnodes line 7: expected 'name = value' under a "
                       "node (got 'see ticket 4711')"]
