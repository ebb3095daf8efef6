"""Sweep 18 of scheduler outputs: outputs written here from each scheduler's documented
formats (Slurm 23.02-24.11 `scontrol`/`sinfo` node states and slurmrestd data_parser
v0.0.40-v0.0.42 shapes), not captured, and none of them met by sweeps 1-17: fed through the
parsers and, where the parser feeds placement, through placement. Each row of OUTPUTS is
one output and what must be read from it; the focused tests after it are the faults this
sweep found (each failed before)."""

from __future__ import annotations

import json
import sys
from datetime import timedelta, timezone
from pathlib import Path

import pytest

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.dialects import lsf_commands, slurm_rest
from diamond_jupyter.dialects.flux_commands import FluxCommands
from diamond_jupyter.dialects.lsf_commands import LsfCommands
from diamond_jupyter.dialects.pbs_commands import PbsCommands
from diamond_jupyter.dialects.slurm_commands import SlurmCommands
from diamond_jupyter.model import Node, SiteSnapshot
from diamond_jupyter.placement_fit import node_returning, node_usable

sys.path.insert(0, str(Path(__file__).parent))
from stand_in_slurmrestd import StandInSlurmrestd  # noqa: E402
from test_placement_cases import NOW, reasons  # noqa: E402
from test_placement_cases import run as run_placement  # noqa: E402
from test_placement_cases13 import hours, only, run, running, selene  # noqa: E402

UTC = timezone.utc
slurm = SlurmCommands(tz=UTC)
pbs = PbsCommands(tz=UTC)
lsf = LsfCommands(tz=UTC, now=lambda: NOW)
flux = FluxCommands()


def _epoch(h: float) -> int:
    """Seconds since the epoch `h` hours from the placement cases' now."""
    return int(NOW.timestamp() + h * 3600)


def _wrapped(n: int | None, *, infinite: bool = False) -> dict:
    """A number as data_parser v0.0.39 and later wrap it."""
    return {"set": n is not None or infinite, "infinite": infinite, "number": n or 0}


# `GET /slurm/v0.0.38/reservations` (plain epoch seconds, flags a list, names as text)
REST_RESV_38 = json.dumps({"reservations": [
    {"name": "maint", "node_list": "n[01-02]", "start_time": _epoch(-1),
     "end_time": _epoch(5), "users": "root", "accounts": "", "groups": "",
     "flags": ["MAINT", "SPEC_NODES"], "node_count": 2, "partition": ""},
    {"name": "course", "node_list": "n[03-04]", "start_time": _epoch(2),
     "end_time": _epoch(4), "users": "alice,-bob", "accounts": "", "flags": ["SPEC_NODES"]},
    {"node_list": "n05", "start_time": _epoch(0)},  # no name: said, left out
], "errors": []})
# v0.0.41: times wrapped, an end of no limit, groups and a FLEX/MAGNETIC one
REST_RESV_41 = json.dumps({"reservations": [
    {"name": "gpu-lab", "node_list": "g[01-02]", "start_time": _wrapped(_epoch(-2)),
     "end_time": _wrapped(None, infinite=True), "users": "", "accounts": "proj",
     "groups": "chem", "flags": ["FLEX", "MAGNETIC", "SPEC_NODES"]},
], "errors": [], "warnings": []})


def _state(state: str) -> tuple[bool, tuple[float, bool] | None]:
    """Whether a node of `state` takes a job now, and when it is back if it is out now."""
    node = Node(name="n", state=state)
    return node_usable(node), node_returning(node)


REST_NODES_41 = json.dumps({"nodes": [
    {"name": "g1", "state": ["MIXED", "NOT_RESPONDING"], "cpus": 64, "effective_cpus": 64,
     "alloc_cpus": 16, "real_memory": 512000, "alloc_memory": 128000,
     "gres": "gpu:a100:4(S:0-1)", "gres_used": "gpu:a100:2(IDX:0-1)", "partitions": ["gpu"]},
    {"name": "g2", "state": ["IDLE", "POWERED_DOWN"], "cpus": 64, "partitions": ["gpu"]},
    {"name": "g3", "state": ["DOWN", "NOT_RESPONDING"], "cpus": 64, "partitions": ["gpu"]}],
    "errors": [], "warnings": []})

SCONTROL_NODE_24 = (
    "NodeName=g01 Arch=x86_64 CoresPerSocket=32 CPUAlloc=16 CPUEfctv=64 CPUTot=64 "
    "CPULoad=3.20 AvailableFeatures=a100 ActiveFeatures=a100 Gres=gpu:a100:4(S:0-1) "
    "GresDrain=N/A GresUsed=gpu:a100:2(IDX:0-1) NodeAddr=g01 NodeHostName=g01 "
    "Version=24.05.1 OS=Linux RealMemory=512000 AllocMem=128000 FreeMem=300000 Sockets=2 "
    "Boards=1 State=MIXED ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A "
    "Partitions=gpu BootTime=2026-12-01T10:00:00 SlurmdStartTime=2026-12-01T10:01:00 "
    "LastBusyTime=2026-12-05T09:00:00 ResumeAfterTime=None "
    "CfgTRES=cpu=64,mem=500G,billing=64,gres/gpu=4,gres/gpu:a100=4 "
    "AllocTRES=cpu=16,mem=125G,gres/gpu=2,gres/gpu:a100=2 CurrentWatts=0 AveWatts=0\n")


def _at(h: float) -> str:
    return hours(h).strftime("%Y-%m-%dT%H:%M:%S")


SACCT_18 = "\n".join([
    f"100|batch|1-00:00:00|{_at(-26)}|{_at(-25)}|{_at(1 + 3 / 60 + 4 / 3600)}|32|1|COMPLETED",
    f"101|batch|UNLIMITED|{_at(-2)}|Unknown|Unknown|0|1|CANCELLED by 1000",
    f"102|batch|Partition_Limit|{_at(-1)}|None|{_at(-0.5)}|4|1|CANCELLED by 0",
    f"104_[1-3]|batch|10:00|{_at(-1)}|None|{_at(-0.5)}|4|1|CANCELLED",
]) + "\n"

QSTAT_18 = json.dumps({"timestamp": _epoch(0), "pbs_version": "2022.1.3",
                       "pbs_server": "pbs1", "Jobs": {
    "1201.pbs1": {"Job_Name": "big", "Job_Owner": "al@login1", "job_state": "Q",
                  "queue": "workq", "Resource_List": {
                      "ncpus": 72, "ngpus": 4, "nodect": 3, "mem": "288gb",
                      "select": "1:ncpus=8:mem=32gb+2:ncpus=32:ngpus=2:mem=128gb",
                      "walltime": "12:00:00", "place": "scatter"},
                  "estimated": {"exec_vnode": "(n1:ncpus=8)+(g1:ncpus=32:ngpus=2)+"
                                              "(g2:ncpus=32:ngpus=2)",
                                "start_time": hours(5).strftime("%a %b %e %H:%M:%S %Y")},
                  "qtime": hours(-1).strftime("%a %b %e %H:%M:%S %Y"),
                  "comment": "Not Running: Insufficient amount of resource: ngpus"},
    "1202.pbs1": {"Job_Name": "nog", "Job_Owner": "al@login1", "job_state": "Q",
                  "queue": "workq", "Resource_List": {"ncpus": 8, "nodect": 1,
                                                      "select": "1:ncpus=8",
                                                      "walltime": "01:00:00"},
                  "estimated": {"start_time": _epoch(2)}, "qtime": _epoch(-1)}}})

PBSNODES_18 = json.dumps({"pbs_version": "2022.1.3", "nodes": {
    "g1": {"Mom": "g1", "state": "free", "pcpus": 64, "jobs": ["77.pbs01/0"],
           "resources_available": {"host": "g1", "vnode": "g1", "ncpus": 64, "ngpus": 4,
                                   "mem": "512gb", "Qlist": "workq"},
           "resources_assigned": {"ncpus": 16, "ngpus": 1, "mem": "400gb"}},
    "g2": {"Mom": "g2", "state": "job-busy", "pcpus": 64,
           "resources_available": {"host": "g2", "ncpus": 64, "ngpus": 4, "mem": "512gb",
                                   "Qlist": "workq"},
           "resources_assigned": {"ncpus": 64, "ngpus": 1}}}})

BJOBS_18 = json.dumps({"COMMAND": "bjobs", "JOBS": 2, "RECORDS": [
    {"JOBID": "501", "STAT": "PEND", "USER": "al", "QUEUE": "normal", "JOB_NAME": "a",
     "PEND_REASON": "Not enough processors to meet the job's spanning requirement: 1 host;",
     "SUBMIT_TIME": hours(-1).strftime("%b %e %H:%M"), "START_TIME": "", "FINISH_TIME": "",
     "ESTIMATED_SIM_START_TIME": hours(4.5).strftime("%b %e %H:%M"), "SLOTS": "64",
     "EXEC_HOST": "", "RUNTIMELIMIT": "120.0/hostA"},
    {"JOBID": "502", "STAT": "PEND", "USER": "al", "QUEUE": "normal", "JOB_NAME": "b",
     "PEND_REASON": "Job dependency condition not satisfied;", "RUNTIMELIMIT": "-",
     "ESSTART_TIME": hours(2).strftime("%b %e %H:%M"), "SLOTS": "1"}]})

BQUEUES_L_18 = """QUEUE: normal
  -- For normal low priority jobs, running only if hosts are lightly loaded.

PARAMETERS/STATISTICS
PRIO NICE STATUS          MAX JL/U JL/P JL/H NJOBS  PEND   RUN SSUSP USUSP  RSV PJOBS
 30   20  Open:Active       -    4  0.5    -     8     4     4     0     0    0     2
Interval for a host to accept two jobs is 0 seconds

 RUNLIMIT
 720.0 min of hostA

 PROCLIMIT
 1 4 16

USERS: all
HOSTS:  all
RES_REQ:  select[type==any] rusage[mem=1000]

QUEUE: short
  -- short jobs

PARAMETERS/STATISTICS
PRIO NICE STATUS          MAX JL/U JL/P JL/H NJOBS  PEND   RUN SSUSP USUSP  RSV PJOBS
 40    0  Open:Active     100    -    2    -     0     0     0     0     0    0     0
"""

FLUX_RESOURCES_18 = "\n".join([
    "free||2|80|6|gpu[1-2]", "allocated||2|64|6|gpu[2-3]", "free|bigmem|1|64|0|cpu1",
    "down||1|64|0|cpu2"]) + "\n"


# Slurm node states (scontrol's `+` words, sinfo's marks, slurmrestd's list joined by `+`):
# a node not responding or set to reboot is out now but back by itself (slurm.conf:
# SlurmdTimeout, 300 s by default, else slurmctld sets it DOWN; ResumeTimeout, 60 s by
# default, for a reboot, done once the node's jobs end); one also DOWN, DRAIN or FAIL is out
# until an admin acts; one powered down takes jobs (booted on demand)
OUTPUTS = [
    ("sinfo idle*", lambda: _state("idle*"), (False, (300.0, False))),
    ("sinfo mix*", lambda: _state("mixed*"), (False, (300.0, False))),
    ("sinfo alloc*", lambda: _state("allocated*"), (False, (300.0, False))),
    ("sinfo comp*", lambda: _state("completing*"), (False, (300.0, False))),
    ("scontrol IDLE+NOT_RESPONDING", lambda: _state("IDLE+NOT_RESPONDING"),
     (False, (300.0, False))),
    ("sinfo down*", lambda: _state("down*"), (False, None)),
    ("sinfo drain*", lambda: _state("drained*"), (False, None)),
    ("sinfo fail*", lambda: _state("fail*"), (False, None)),
    ("scontrol DOWN+NOT_RESPONDING", lambda: _state("DOWN+NOT_RESPONDING"), (False, None)),
    ("scontrol IDLE+DRAIN+NOT_RESPONDING", lambda: _state("IDLE+DRAIN+NOT_RESPONDING"),
     (False, None)),
    ("scontrol IDLE+REBOOT_REQUESTED", lambda: _state("IDLE+REBOOT_REQUESTED"),
     (False, (60.0, True))),
    # without ASAP (no DRAIN) a node with jobs keeps taking more until it is idle
    ("scontrol MIXED+REBOOT_REQUESTED", lambda: _state("MIXED+REBOOT_REQUESTED"),
     (True, None)),
    ("scontrol MIXED+REBOOT_ISSUED", lambda: _state("MIXED+REBOOT_ISSUED"),
     (False, (60.0, True))),
    ("scontrol IDLE+REBOOT_ISSUED", lambda: _state("IDLE+REBOOT_ISSUED"),
     (False, (60.0, True))),
    ("sinfo idle^ (reboot issued)", lambda: _state("idle^"), (False, (60.0, True))),
    # `scontrol reboot ASAP` drains the node first: out until it is resumed
    ("scontrol DRAIN+REBOOT_REQUESTED", lambda: _state("IDLE+DRAIN+REBOOT_REQUESTED"),
     (False, None)),
    ("scontrol DOWN+REBOOT_ISSUED", lambda: _state("DOWN+REBOOT_ISSUED"), (False, None)),
    # powered down or powering up: takes jobs, booted first (within ResumeTimeout, since
    # the follow-ups of sweep 19; before taken as up now)
    ("scontrol IDLE+POWERED_DOWN", lambda: _state("IDLE+POWERED_DOWN"),
     (True, (60.0, False))),
    ("scontrol IDLE+POWERING_UP", lambda: _state("IDLE+POWERING_UP"), (True, (60.0, False))),
    ("sinfo idle~", lambda: _state("idle~"), (True, (60.0, False))),
    ("scontrol IDLE", lambda: _state("IDLE"), (True, None)),
    # in a reservation and not responding: back only for the reservation's jobs
    ("scontrol IDLE+RESERVED+NOT_RESPONDING", lambda: _state("IDLE+RESERVED+NOT_RESPONDING"),
     (False, None)),
    # slurmrestd's reservations, read as `scontrol show reservation -o`'s
    ("slurmrestd v0.0.38 reservations",
     lambda: [(r.name, r.nodes, r.start, r.end, r.users, r.accounts, r.flags)
              for r in slurm_rest.parse_reservations(REST_RESV_38, [])],
     [("maint", ["n[01-02]"], hours(-1), hours(5), ["root"], None, ["MAINT", "SPEC_NODES"]),
      ("course", ["n[03-04]"], hours(2), hours(4), ["alice", "-bob"], None, ["SPEC_NODES"])]),
    ("slurmrestd v0.0.38 reservation without a name, said",
     lambda: [w.split(" (got")[0] for w in (lambda said: (
         slurm_rest.parse_reservations(REST_RESV_38, said), said)[1])([])],
     ["slurmrestd: cannot parse reservations reservation 3: no name"]),
    ("slurmrestd v0.0.41 reservations",
     lambda: [(r.name, r.start, r.end, r.users, r.accounts, r.groups, r.flags)
              for r in slurm_rest.parse_reservations(REST_RESV_41)],
     [("gpu-lab", hours(-2), None, None, ["proj"], ["chem"],
       ["FLEX", "MAGNETIC", "SPEC_NODES"])]),
    # slurmrestd v0.0.41 nodes: state lists with NOT_RESPONDING, typed GPUs in use
    ("slurmrestd v0.0.41 nodes not responding, powered down, down",
     lambda: [(n.name, n.state, n.gpus, n.gpus_allocated, node_usable(n), node_returning(n))
              for n in slurm_rest.parse_nodes(REST_NODES_41)],
     [("g1", "mixed+not_responding", 4, 2, False, (300.0, False)),
      ("g2", "idle+powered_down", 0, 0, True, (60.0, False)),
      ("g3", "down+not_responding", 0, 0, False, None)]),
    # Slurm 24.05 `scontrol -d show node -o`: CfgTRES/AllocTRES beside typed Gres with
    # sockets and GresUsed with indices
    ("scontrol node CfgTRES/AllocTRES, Gres (S:0-1), GresUsed (IDX:0-1)",
     lambda: [(n.cpus, n.cpus_allocated, n.gpus, n.gpus_allocated, n.gpu_type, n.memory_mb,
               n.memory_allocated) for n in slurm.parse_nodes(SCONTROL_NODE_24)],
     [(64, 16, 4, 2, "a100", 512000, 128000)]),
    ("scontrol node without GresUsed: AllocTRES's typed and plain GPUs counted once",
     lambda: [n.gpus_allocated for n in slurm.parse_nodes(
         SCONTROL_NODE_24.replace(" GresUsed=gpu:a100:2(IDX:0-1)", ""))], [2]),
    # sacct -P of HISTORY_FIELDS: a limit over a day, Unknown and None starts, an array
    ("sacct -P limits and starts",
     lambda: [(j.native_id, j.state.value, j.walltime_s, j.started_at, j.ended_at)
              for j in slurm.parse_history(SACCT_18, [])],
     [("100", "COMPLETED", 86400, hours(-25), hours(1 + 3 / 60 + 4 / 3600)),
      ("101", "CANCELLED", None, None, None),
      ("102", "CANCELLED", None, None, hours(-0.5)),
      ("104_[1-3]", "CANCELLED", 600, None, hours(-0.5))]),
    # PBS Pro 2022 `qstat -f -F json`: chunks of two shapes, an estimated start as ctime
    # text and as epoch seconds
    ("PBS qstat -f -F json chunks and estimated.start_time",
     lambda: [(j.native_id, j.cpus, j.gpus, j.nodes, j.memory_mb, j.estimated_start)
              for j in pbs.parse_status(QSTAT_18)],
     [("1201.pbs1", 72, 4, 3, 288 * 1024, hours(5)),
      ("1202.pbs1", 8, None, 1, None, hours(2))]),
    # `pbsnodes -av -F json`: what is assigned of CPUs, GPUs and memory
    ("pbsnodes -F json resources_assigned ngpus and mem",
     lambda: [(n.name, n.cpus_allocated, n.gpus_allocated, n.memory_allocated)
              for n in pbs.parse_nodes(PBSNODES_18)],
     [("g1", 16, 1, 400 * 1024), ("g2", 64, 4, 0)]),
    # LSF 10.1 `bjobs -o ... -json`: the pending reason, the estimate under the field's
    # full name (`esstart_time` is its alias) or the alias
    ("bjobs -json PEND_REASON and the estimated start",
     lambda: [(j.native_id, j.reason, j.estimated_start, j.walltime_s)
              for j in lsf.parse_status(BJOBS_18)],
     [("501", "Not enough processors to meet the job's spanning requirement: 1 host;",
       hours(4.5), 7200),
      ("502", "Job dependency condition not satisfied;", hours(2), None)]),
    # `bqueues -l` with PJOBS after RSV (10.1.0.x), RUNLIMIT and PROCLIMIT blocks
    ("bqueues -l JL/P, JL/U and task limits",
     lambda: (lsf_commands.parse_jl_p(BQUEUES_L_18), lsf_commands.parse_jl_u(BQUEUES_L_18),
              lsf_commands.parse_task_limits(BQUEUES_L_18)),
     ({"normal": 0.5, "short": 2.0}, {"normal": 4}, {"normal": (1, 16)})),
    # `flux resource list -n -o RESOURCE_FORMAT`: GPUs, a node partly allocated, a property
    # line and a down node
    ("flux resource list with GPUs, free/allocated/down",
     lambda: [(n.name, n.state, n.cpus, n.cpus_allocated, n.gpus, n.gpus_allocated)
              for n in flux.parse_resources(FLUX_RESOURCES_18)],
     [("gpu1", "free", 48, 0, 4, 0), ("gpu2", "mixed", 48, 16, 4, 2),
      ("gpu3", "allocated", 48, 48, 4, 4), ("cpu1", "free", 64, 0, 0, 0),
      ("cpu2", "down", 64, 0, 0, 0)]),
]


@pytest.mark.parametrize("label,read,expected", OUTPUTS, ids=[o[0] for o in OUTPUTS])
def test_output_read(label, read, expected):
    assert read() == expected


# -- focused: the faults this sweep found ---------------------------------------------------

SCRIPT = "#SBATCH -p batch -N 4 -t 1:00:00"


@pytest.mark.parametrize("state", ["IDLE*", "MIXED*", "IDLE+NOT_RESPONDING"])
def test_a_node_not_responding_is_capacity_not_free_now(state):
    # n01-n04 of batch's six not responding (not DOWN): Slurm starts no job there now but
    # they answer again within SlurmdTimeout or are set DOWN. Before: read as gone for
    # good, so a 4-node job was INCOMPATIBLE ("batch has only 2 usable") where Slurm keeps
    # it waiting; now it waits for them, planned from SlurmdTimeout's default on, said
    site = selene(states={f"n0{i}": state for i in range(1, 5)})
    v = only(run(SCRIPT, site), "selene", "batch")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(300 / 3600)), v
    assert any("n01, n02, n03, n04 not responding" in n and "SlurmdTimeout" in n
               for n in v.notes), v.notes
    # a job the responding nodes hold is READY, with nothing said of the others
    v = only(run("#SBATCH -p batch -N 2 -t 1:00:00", site), "selene", "batch")
    assert v.verdict == "READY" and not any("not responding" in n for n in v.notes)


@pytest.mark.parametrize("state", ["DOWN*", "IDLE+DRAIN", "DOWN+NOT_RESPONDING", "FAIL*"])
def test_a_node_down_or_drained_stays_out_of_capacity(state):
    site = selene(states={f"n0{i}": state for i in range(1, 5)})
    with pytest.raises(AssertionError, match="has only 2 usable"):
        only(run(SCRIPT, site), "selene", "batch")


def test_a_node_to_be_rebooted_takes_jobs_after_its_jobs_and_the_reboot():
    # n01 runs a job with 2 h left and is being rebooted once it ends; n02-n04 are down or
    # drained. Before: n01 read as gone, the 3-node job INCOMPATIBLE; now it starts when
    # n01's job has ended and n01 is back (ResumeTimeout's default, 60 s)
    states = {"n01": "MIXED+REBOOT_ISSUED", "n02": "DOWN*", "n03": "IDLE+DRAIN",
              "n04": "DOWN"}
    site = selene(running("77", "bob", "n01", 8, 2, 4), states=states, alloc={"n01": 8})
    v = only(run("#SBATCH -p batch -N 3 -t 1:00:00", site), "selene", "batch")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2 + 60 / 3600)), v
    assert any("n01 to be rebooted" in n for n in v.notes), v.notes
    # idle with a reboot requested or issued: back 60 s from now
    for state in ("IDLE+REBOOT_ISSUED", "IDLE+REBOOT_REQUESTED"):
        site = selene(states={**states, "n01": state})
        v = only(run("#SBATCH -p batch -N 3 -t 1:00:00", site), "selene", "batch")
        assert (v.verdict, v.estimated_start) == ("BUSY", hours(60 / 3600)), v
    # a reboot requested without ASAP on a node with jobs: it takes more until idle (before:
    # read as gone, the job INCOMPATIBLE)
    site = selene(running("77", "bob", "n01", 8, 2, 4),
                  states={**states, "n01": "MIXED+REBOOT_REQUESTED"}, alloc={"n01": 8})
    v = only(run("#SBATCH -p batch -N 3 -t 1:00:00", site), "selene", "batch")
    assert v.verdict == "READY", v


def _rest_selene(reservations: str | None) -> tuple[SiteConfig, SiteSnapshot]:
    """selene's batch nodes n01-n06 (64 CPUs) as a slurmrestd site sees them, with the
    reservations reply `reservations` (None: not asked)."""
    nodes = json.dumps({"nodes": [{"name": f"n0{i}", "state": ["IDLE"] + (
        ["MAINTENANCE", "RESERVED"] if i < 3 else []), "cpus": 64, "real_memory": 256000,
        "partitions": ["batch"]} for i in range(1, 7)]})
    parts = json.dumps({"partitions": [{"name": "batch", "nodes": {"configured": "n[01-06]"},
                                        "partition": {"state": ["UP"]},
                                        "flags": ["default"]}]})
    outputs = {"queue": '{"jobs": []}', "nodes": nodes, "partitions": parts, "user": "alice"}
    if reservations is not None:
        outputs["reservations"] = reservations
    snap = slurm_rest.parse_snapshot("selene", outputs).model_copy(update={"taken_at": NOW})
    return SiteConfig(name="selene", metadata={"architecture": "x86_64"}), snap


def test_slurmrestd_reservations_are_read_and_placed_as_the_cli_ones():
    # before: a slurmrestd site read no reservations (None: unknown), so a job naming one
    # was placed without its window or users, and one naming none was never told so
    assert _rest_selene(None)[1].reservations is None
    site = _rest_selene(REST_RESV_38)
    assert [r.name for r in site[1].reservations] == ["maint", "course"]
    # one that does not exist: sbatch refuses it
    assert "reservation 'nope' not found (site has: maint, course)" in reasons(
        run("#SBATCH -p batch -N 1 -t 1:00:00 --reservation=nope", site), "selene")
    # root's maintenance: not open to the user
    assert "reservation 'maint' is not open to" in reasons(
        run("#SBATCH -p batch -N 1 -t 1:00:00 --reservation=maint", site), "selene")
    # alice's course, from +2 h on n03-n04: her job starts there no sooner
    v = only(run("#SBATCH -p batch -N 2 -t 1:00:00 --reservation=course", site), "selene")
    assert v.estimated_start == hours(2), v


async def test_slurmrestd_site_asks_reservations_and_keeps_the_snapshot_when_they_fail(
        tmp_path):
    # through a RestSite and a slurmrestd stand-in at the wire: `GET reservations` asked
    # with nodes and partitions; a reply of errors leaves them unknown, said in the
    # snapshot's warnings, the site reachable
    # (the snapshot names the transport's user, for whom the reservations are checked)
    nodes = json.dumps({"nodes": [{"name": "n1", "state": ["IDLE"], "cpus": 8,
                                   "real_memory": 16000, "partitions": ["batch"]}]})
    parts = json.dumps({"partitions": [{"name": "batch", "nodes": {"configured": "n1"},
                                        "partition": {"state": ["UP"]}}]})
    failed = json.dumps({"reservations": [], "errors": [
        {"description": "Unable to query reservations", "error_number": 1007}]})
    replies = {"jobs": ['{"jobs": []}'] * 2, "nodes": [nodes] * 2, "partitions": [parts] * 2,
               "reservations": [REST_RESV_41, failed]}
    async with StandInSlurmrestd(replies) as rest:
        site = rest.site(tmp_path, api_version="v0.0.41")
        try:
            first = await site.snapshot(max_age_s=0)
            assert first.reachable and [r.name for r in first.reservations] == ["gpu-lab"]
            assert first.user == "u"
            assert first.reservations[0].end is None and not first.warnings
            site._caps_at = -1e9  # the capabilities' 60 s over: asked again
            second = await site.snapshot(max_age_s=0)
            assert second.reachable and second.reservations is None
            assert [n.name for n in second.nodes] == ["n1"]
            assert any("reservations not read" in w and "Unable to query reservations (1007)"
                       in w for w in second.warnings), second.warnings
            # (licenses with each queue; slurmdb's qos once: its plugin is not there)
            assert rest.asked == ["jobs", "licenses", "nodes", "partitions", "reservations",
                                  "qos", "diag", "jobs", "licenses", "nodes", "partitions",
                                  "reservations", "diag"]
        finally:
            await site.close()


def test_pbs_memory_its_jobs_were_given_is_not_free():
    # `pbsnodes -F json`'s resources_assigned.mem (what PBS gave the vnode's jobs) was not
    # read: g1's 512 GB read as all free beside a running job given 400 GB, so a job asking
    # 200 GB was READY there where PBS waits for that job's end
    start = int((NOW - timedelta(hours=1)).timestamp())
    queue = json.dumps({"Jobs": {"77.pbs01": {
        "job_state": "R", "queue": "workq", "Job_Owner": "bob@l", "stime": start,
        "Resource_List": {"ncpus": 16, "ngpus": 1, "mem": "400gb", "nodect": 1,
                          "walltime": "03:00:00", "select": "1:ncpus=16:ngpus=1:mem=400gb"},
        "exec_host": "g1/0*16", "exec_vnode": "(g1:ncpus=16:ngpus=1:mem=400gb)"}}})
    nodes = json.dumps({"nodes": {"g1": json.loads(PBSNODES_18)["nodes"]["g1"]}})
    snap = pbs.parse_snapshot("pro", {"nodes": nodes, "queue": queue, "queues": json.dumps(
        {"Queue": {"workq": {"queue_type": "Execution", "enabled": "True",
                             "started": "True"}}}),
        "server": json.dumps({"Server": {"pbs01": {"default_queue": "workq"}}})})
    assert [(n.memory_mb, n.memory_allocated) for n in snap.nodes] == [(512 * 1024, 400 * 1024)]
    cfg = SiteConfig(name="pro", scheduler="pbs", metadata={"architecture": "x86_64"})
    site = (cfg, snap.model_copy(update={"taken_at": NOW}))
    v = run_placement("#PBS -l select=1:ncpus=8:ngpus=1:mem=200gb\n#PBS -l walltime=1:00:00",
                      site).verdict("pro")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2)), v
    # a job the memory left holds starts now
    v = run_placement("#PBS -l select=1:ncpus=8:ngpus=1:mem=100gb\n#PBS -l walltime=1:00:00",
                      site).verdict("pro")
    assert v.verdict == "READY", v


def test_lsf_estimated_start_under_the_fields_full_name():
    # `esstart_time` is the alias of bjobs -o's estimated_sim_start_time: a release that
    # names the JSON key by the field's full name had the estimate unread (None)
    rec = json.loads(BJOBS_18)["RECORDS"][0]
    assert lsf.parse_status(json.dumps({"RECORDS": [rec]}))[0].estimated_start == hours(4.5)


# -- follow-ups: the site's own timeouts, sinfo's `@` -------------------------------------

# `scontrol show config` as Slurm 23.11 prints it (an excerpt)
SHOW_CONFIG = """Configuration data as of 2026-12-06T05:00:00
AccountingStorageType   = accounting_storage/slurmdbd
BatchStartTimeout       = 10 sec
ClusterName             = selene
ResumeTimeout           = 90 sec
SlurmctldTimeout        = 120 sec
SlurmdTimeout           = 120 sec
SuspendTimeout          = 30 sec
"""


def test_the_site_timeouts_are_read_from_show_config_with_the_snapshot():
    # SuspendTimeout too since the follow-ups of sweep 19 (a node powering down)
    assert slurm.parse_node_timeouts(SHOW_CONFIG) == {"SlurmdTimeout": 120.0,
                                                      "ResumeTimeout": 90.0,
                                                      "SuspendTimeout": 30.0}
    # a line not a number (or missing) is left out: Slurm's default then
    assert slurm.parse_node_timeouts("SlurmdTimeout = soon\nResumeTimeout = 75") == {
        "ResumeTimeout": 75.0}
    # asked with the cached outputs (not with every queue read), and read into the snapshot
    assert "config" not in slurm.live_outputs
    assert "show config" in " ".join(slurm.snapshot_argvs()["config"])
    snap = slurm.parse_snapshot("selene", {"config": SHOW_CONFIG, "queue": "",
                                           "reservations": ""})
    assert snap.node_timeouts == {"SlurmdTimeout": 120.0, "ResumeTimeout": 90.0,
                                  "SuspendTimeout": 30.0}
    assert slurm.parse_snapshot("selene", {"queue": "", "reservations": ""}
                                ).node_timeouts is None


def _timed(site_snap, timeouts):
    cfg, snap = site_snap
    return cfg, snap.model_copy(update={"node_timeouts": timeouts})


def test_a_node_not_responding_is_planned_back_after_the_sites_slurmd_timeout():
    # before: 300 s (Slurm's default) whatever the site set; now the site's 120 s
    site = _timed(selene(states={f"n0{i}": "IDLE*" for i in range(1, 5)}),
                  slurm.parse_node_timeouts(SHOW_CONFIG))
    v = only(run(SCRIPT, site), "selene", "batch")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(120 / 3600)), v
    assert any("SlurmdTimeout, 120 s as the site sets it" in n for n in v.notes), v.notes
    # not read (slurmrestd, or the query failed): the default, said as the default
    site = _timed(selene(states={f"n0{i}": "IDLE*" for i in range(1, 5)}), None)
    v = only(run(SCRIPT, site), "selene", "batch")
    assert v.estimated_start == hours(300 / 3600) and any(
        "300 s by default" in n for n in v.notes), v.notes


def test_a_node_rebooting_is_planned_back_after_the_sites_resume_timeout():
    states = {"n01": "MIXED+REBOOT_ISSUED", "n02": "DOWN*", "n03": "IDLE+DRAIN",
              "n04": "DOWN"}
    site = _timed(selene(running("77", "bob", "n01", 8, 2, 4), states=states,
                         alloc={"n01": 8}), {"ResumeTimeout": 90.0})
    v = only(run("#SBATCH -p batch -N 3 -t 1:00:00", site), "selene", "batch")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2 + 90 / 3600)), v
    assert any("90 s later, the site's ResumeTimeout" in n for n in v.notes), v.notes


@pytest.mark.parametrize("sinfo,scontrol", [
    ("idle@", "IDLE+REBOOT_REQUESTED"), ("mixed@", "MIXED+REBOOT_REQUESTED"),
    ("allocated@", "ALLOCATED+REBOOT_REQUESTED"), ("idle^", "IDLE+REBOOT_ISSUED"),
    ("drained@", "IDLE+DRAIN+REBOOT_REQUESTED")])
def test_sinfo_reboot_marks_read_as_scontrols_states(sinfo, scontrol):
    # sinfo(1): `@` a reboot pending (REBOOT_REQUESTED), `^` a reboot issued. Before:
    # `idle@` was usable now where IDLE+REBOOT_REQUESTED is out until the reboot
    assert _state(sinfo) == _state(scontrol)


# -- follow-up: a Grid Engine site's own GPU complex -------------------------------------

CUDA_SC = """#name      shortcut   type        relop requestable consumable default  urgency
#-------------------------------------------------------------------------------
cuda       cuda       INT         <=    YES         JOB         0        0
h_vmem     h_vmem     MEMORY      <=    YES         YES         0        0
slots      s          INT         <=    YES         YES         1        1000
"""


def _cuda_site(monkeypatch, gpu_complex: str | None):
    """hestia (test_placement_cases12) whose hosts count their GPUs in `cuda` (hc:cuda 4
    left on s1, 2 on s2 where bob's job holds 2), read with the sites file's
    `gpu_complex`."""
    import functools

    import test_placement_cases12 as c12

    from diamond_jupyter.dialects import sge_commands
    monkeypatch.setattr(c12, "QCONF_SC", CUDA_SC)
    monkeypatch.setattr(sge_commands, "SgeCommands", functools.partial(
        sge_commands.SgeCommands, gpu_complex=gpu_complex))
    return c12.hestia({"all.q": (["s1", "s2", "s3"], "")},
                      {("all.q", "s2"): [c12._ge_job("1", 1, 3, cuda="2")]},
                      hc={"s1": {"cuda": "4"}, "s2": {"cuda": "2"}})


def test_a_grid_engine_site_names_the_complex_its_gpus_are_counted_in(monkeypatch):
    # before: a host's GPUs were its `gpu` alone; a site counting them in `cuda` had
    # none, and every GPU job was refused there
    cfg, snap = _cuda_site(monkeypatch, "cuda")
    s1, s2, s3 = snap.nodes
    assert [(n.gpus, n.gpus_allocated) for n in (s1, s2, s3)] == [(4, 0), (4, 2), (0, 0)]
    assert snap.gpu_complex == "cuda"
    job = "#$ -l gpu=3\n#$ -l h_rt=1:00:00"
    v = only(run(job, (cfg, snap)), "hestia", "all.q")
    assert (v.verdict, v.estimated_start) == ("READY", NOW), v
    # without the key: the usual names only, as before (no GPUs at this site)
    cfg, snap = _cuda_site(monkeypatch, None)
    assert [n.gpus for n in snap.nodes] == [0, 0, 0] and snap.gpu_complex is None
    assert "GPU" in reasons(run(job, (cfg, snap)), "hestia")


def test_a_job_at_a_grid_engine_site_asks_its_gpus_by_the_sites_complex():
    from diamond_jupyter.config import SiteConfig
    from diamond_jupyter.dialects.slurm_script import SlurmScript
    from diamond_jupyter.sites import Site

    spec = SlurmScript().parse_script("#!/bin/bash\n#SBATCH --gpus-per-node=2 -t 1:00:00\n"
                                      "hostname\n")
    cuda = Site(SiteConfig(name="ge", scheduler="sge", gpu_complex="cuda",
                           transport={"kind": "local"}))
    plain = Site(SiteConfig(name="ge2", scheduler="sge", transport={"kind": "local"}))
    assert "#$ -l h_rt=01:00:00,cuda=2\n" in cuda.render(spec).script
    assert "#$ -l h_rt=01:00:00,gpu=2\n" in plain.render(spec).script


@pytest.mark.parametrize("entry,said", [
    ("scheduler: slurm\n    gpu_complex: cuda", "gpu_complex is for scheduler sge"),
    ("scheduler: sge\n    gpu_complex: 'cu da'", "not a complex name"),
    ("scheduler: sge\n    gpu_complex: 2gpu", "not a complex name"),
])
def test_a_gpu_complex_key_the_site_cannot_use_is_refused(tmp_path, entry, said):
    from test_config_unseen2 import refused
    msg = refused(tmp_path, "sites:\n  - name: a\n    transport: {kind: local}\n"
                            f"    {entry}\n")
    assert said in msg and "gpu_complex" in msg, msg


def test_a_gpu_complex_key_is_read(tmp_path):
    from test_config_unseen2 import loads
    cfg = loads(tmp_path, "sites:\n  - {name: a, scheduler: sge, gpu_complex: ngpus, "
                          "transport: {kind: local}}\n")
    assert cfg.sites[0].gpu_complex == "ngpus"
