"""Sweep 17 of scheduler outputs: outputs written here from each scheduler's documented
formats (Slurm 23.02-24.11 text, `squeue --json` and slurmrestd data_parser v0.0.40-v0.0.42
shapes, PBS Pro 2022 `qstat -f -F json`, LSF 10.1 `bjobs -o -json`, Grid Engine 8 `qstat
-f -xml`, flux-core `flux jobs --json`), not captured, and none of them met by sweeps 1-16:
fed through the parsers and, where the parser feeds placement, through placement. Each row
of OUTPUTS is one output and what must be read from it; the focused tests after it are the
faults this sweep found (each failed before). The slurmrestd submit body of v0.0.39 and
later, closed in the same sweep, is tested in `tests/test_slurmrest_submit_versions.py`."""

from __future__ import annotations

import json
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.dialects import slurm_rest
from diamond_jupyter.dialects.flux_commands import FluxCommands
from diamond_jupyter.dialects.lsf_commands import LsfCommands
from diamond_jupyter.dialects.outputs_common import array_record
from diamond_jupyter.dialects.pbs_commands import PbsCommands
from diamond_jupyter.dialects.sge_commands import SgeCommands
from diamond_jupyter.dialects.slurm_commands import SlurmCommands
from diamond_jupyter.model import JobState, Node, SiteError
from diamond_jupyter.placement_fit import node_usable

sys.path.insert(0, str(Path(__file__).parent))
from stand_in_slurmrestd import StandInSlurmrestd  # noqa: E402
from test_placement_cases import run as run_placement  # noqa: E402
from test_placement_cases13 import hours, only, resv, run, selene  # noqa: E402

UTC = timezone.utc
slurm = SlurmCommands(tz=UTC)
sge = SgeCommands(tz=UTC)
lsf = LsfCommands(tz=UTC, now=lambda: datetime(2026, 12, 5, 12, 0, tzinfo=UTC))
pbs = PbsCommands(tz=UTC)
flux = FluxCommands()


def _usable(state: str) -> bool:
    return node_usable(Node(name="n", state=state))


def _wrapped(n: int | None, *, infinite: bool = False) -> dict:
    """A number as data_parser v0.0.39 and later wrap it."""
    return {"set": n is not None or infinite, "infinite": infinite, "number": n or 0}


# -- Slurm ---------------------------------------------------------------------------------

SQUEUE_HET = "\n".join([
    # %i|%T|%S|%e|%V|%l|%D|%C|%u|%P|%b|%N|%r|%k|%j: a het job's two components, the second
    # asking typed GPUs in `=` form on two nodes
    "1234+0|RUNNING|2026-12-05T10:00:00|2026-12-05T11:00:00|2026-12-05T09:00:00|1:00:00|1|4|"
    "al|batch|N/A|n001|None||het",
    "1234+1|RUNNING|2026-12-05T10:00:00|2026-12-05T11:00:00|2026-12-05T09:00:00|1:00:00|2|64|"
    "al|gpu|gres/gpu:a100=2|g[01-02]|None||het",
])

SQUEUE_JSON_42 = json.dumps({"jobs": [
    # GPUs asked per job, per task and per node; a het job's components; an unlimited
    # waiting array with a throttle (data_parser v0.0.42)
    {"job_id": 1, "job_state": ["RUNNING"], "node_count": _wrapped(2), "cpus": _wrapped(16),
     "tres_per_job": "gres/gpu:a100=4", "nodes": "g[1-2]", "time_limit": _wrapped(60)},
    {"job_id": 2, "job_state": ["PENDING"], "node_count": _wrapped(1), "cpus": _wrapped(4),
     "tasks": _wrapped(4), "tres_per_task": "gres/gpu=1", "time_limit": _wrapped(60)},
    {"job_id": 3, "job_state": ["PENDING"], "node_count": _wrapped(2), "cpus": _wrapped(4),
     "tres_per_node": "gres/gpu:a100:2", "time_limit": _wrapped(60)},
    {"job_id": 4, "job_state": ["PENDING", "REQUEUED"], "het_job_id": _wrapped(4),
     "het_job_offset": _wrapped(0), "node_count": _wrapped(1), "cpus": _wrapped(4)},
    {"job_id": 5, "job_state": ["PENDING"], "het_job_id": _wrapped(4),
     "het_job_offset": _wrapped(1), "node_count": _wrapped(1), "cpus": _wrapped(8)},
    {"job_id": 7, "job_state": ["PENDING"], "cpus": _wrapped(8),
     "time_limit": _wrapped(None, infinite=True), "array_job_id": _wrapped(7),
     "array_task_string": "1-5%2", "array_max_tasks": _wrapped(2)},
], "meta": {"plugin": {"data_parser": "data_parser/v0.0.42"}}, "errors": [],
    "warnings": [{"description": "field deprecated", "source": "#/jobs/0/"}]})

SCONTROL_TWO_GPU_TYPES = "\n".join([
    "NodeName=g01 CPUTot=64 CPUAlloc=0 RealMemory=256000 Gres=gpu:a100:4,gpu:v100:2 "
    "GresUsed=gpu:a100:1(IDX:0),gpu:v100:0 State=MIXED Partitions=gpu",
    # typed accounting only (AccountingStorageTRES=gres/gpu:a100), and a second GRES
    "NodeName=g02 CPUTot=64 CPUAlloc=8 RealMemory=256000 Gres=gpu:a100:4(S:0-1),nvme:1 "
    "AllocTRES=cpu=8,gres/gpu:a100=2 State=MIXED Partitions=gpu",
])

REST_NODES_ERROR = json.dumps({
    "nodes": [], "meta": {"plugin": {"data_parser": "data_parser/v0.0.41"}},
    "errors": [{"description": "Unable to query nodes", "error_number": 1007,
                "error": "Protocol authentication error", "source": "slurm_load_node()"}],
    "warnings": []})

# -- LSF ------------------------------------------------------------------------------------

BJOBS = json.dumps({"COMMAND": "bjobs", "JOBS": 8, "RECORDS": [
    {"JOBID": "8001", "STAT": "PSUSP", "JOB_NAME": "a", "SLOTS": "4"},
    {"JOBID": "8002", "STAT": "USUSP", "JOB_NAME": "b", "SLOTS": "6",
     "EXEC_HOST": "4*hostA:2*hostB", "START_TIME": "Dec  5 09:01"},
    {"JOBID": "8003", "STAT": "SSUSP", "JOB_NAME": "c", "SLOTS": "2", "EXEC_HOST": "2*hostC"},
    {"JOBID": "8004[3]", "STAT": "RUN", "JOB_NAME": "arr[3]", "SLOTS": "1",
     "EXEC_HOST": "hostD"},
    {"JOBID": "8005", "STAT": "WAIT", "JOB_NAME": "w", "SLOTS": "1"},
    {"JOBID": "8006", "STAT": "ZOMBI", "JOB_NAME": "z", "SLOTS": "1"},
    {"JOBID": "8007", "STAT": "UNKWN", "JOB_NAME": "u", "SLOTS": "1"},
    {"JOBID": "8008", "STAT": "PROV", "JOB_NAME": "p", "SLOTS": "1"},
]})

# -- PBS Pro --------------------------------------------------------------------------------

PBS_JOBS = json.dumps({"Jobs": {
    "123[].pbs01": {"job_state": "B", "queue": "workq", "array": "True",
                    "Resource_List": {"ncpus": 4, "select": "1:ncpus=4", "walltime": "01:00:00"},
                    "array_indices_submitted": "1-10", "array_indices_remaining": "5-10",
                    "array_state_count": "Queued:6 Running:1 Exiting:0 Expired:3 "},
    "123[4].pbs01": {"job_state": "R", "queue": "workq", "array_id": "123[].pbs01",
                     "array_index": "4", "exec_host": "n1/0*4", "exec_vnode": "(n1:ncpus=4)",
                     "Resource_List": {"ncpus": 4, "select": "1:ncpus=4",
                                       "walltime": "01:00:00"},
                     "stime": "Sat Dec  5 09:00:00 2026"},
    "124.pbs01": {"job_state": "R", "queue": "workq", "exec_host": "n1/0*64+n2/0*64",
                  "exec_vnode": "(n1:ncpus=64)+(n2:ncpus=64)",
                  "Resource_List": {"ncpus": 128, "nodect": 2, "select": "2:ncpus=64",
                                    "walltime": "02:00:00", "place": "scatter"},
                  "stime": "Sat Dec  5 09:00:00 2026"},
    "125.pbs01": {"job_state": "R", "queue": "workq", "exec_host": "big/0*96",
                  "exec_vnode": "(big[0]:ncpus=48+big[1]:ncpus=48)",
                  "Resource_List": {"ncpus": 96, "nodect": 1, "select": "1:ncpus=96",
                                    "walltime": "02:00:00"},
                  "stime": "Sat Dec  5 09:00:00 2026"},
    "126.pbs01": {"job_state": "H", "queue": "workq", "Hold_Types": "u",
                  "Resource_List": {"ncpus": 1, "walltime": "00:10:00"}},
    "127.pbs01": {"job_state": "S", "queue": "workq",
                  "Resource_List": {"ncpus": 1, "walltime": "00:10:00"}},
    "129.pbs01": {"job_state": "F", "queue": "workq", "Exit_status": -11,
                  "Resource_List": {"ncpus": 1}},
    "130.pbs01": {"job_state": "F", "queue": "workq", "Exit_status": -29,
                  "Resource_List": {"ncpus": 1, "walltime": "00:10:00"},
                  "resources_used": {"walltime": "00:10:01"}},
}})

# -- Grid Engine ----------------------------------------------------------------------------


def _job(n: int, code: str, slots: int = 1, tasks: str | None = None,
         state: str = "pending") -> str:
    started = ("<JAT_start_time>2026-12-05T09:10:00</JAT_start_time>"
               if state == "running" else "")
    return (f'<job_list state="{state}"><JB_job_number>{n}</JB_job_number><JB_name>j'
            f"</JB_name><JB_owner>ann</JB_owner><state>{code}</state><JB_submission_time>"
            f"2026-12-05T09:00:00</JB_submission_time>{started}<slots>{slots}</slots>"
            + (f"<tasks>{tasks}</tasks>" if tasks else "") + "</job_list>")


SGE_QSTAT = (
    "<?xml version='1.0'?><job_info><queue_info><Queue-List><name>all.q@n01</name>"
    "<qtype>BIP</qtype><slots_used>8</slots_used><slots_resv>0</slots_resv>"
    "<slots_total>16</slots_total>"
    + _job(50, "dr", 4, state="running") + _job(51, "t", 2, state="running")
    + _job(55, "r", 1, tasks="3", state="running") + _job(56, "Rr", 1, state="running")
    + "</Queue-List></queue_info><job_info>"
    + _job(52, "hqw", 8) + _job(53, "Eqw", 2) + _job(54, "qw", 1, tasks="4-10:2")
    + _job(57, "hRwq", 1) + _job(58, "qw", 1, tasks="1-100:1")
    + "</job_info></job_info>")

# -- flux -----------------------------------------------------------------------------------

FLUX_JOBS = json.dumps({"jobs": [
    {"id": 1, "state": "SCHED", "nnodes": 2, "ntasks": 8, "ncores": 16, "ngpus": 8,
     "duration": 7200.0, "annotations": {"sched": {"reason_pending": "insufficient resources",
                                                   "t_estimate": 1796003600.0}}},
    {"id": 2, "state": "RUN", "nnodes": 1, "ncores": 4, "ngpus": 2, "nodelist": "g1",
     "t_run": 1796000000.0, "duration": 0.0},
    {"id": 3, "state": "DEPEND", "ncores": 1},
    {"id": 4, "state": "PRIORITY", "ncores": 1, "urgency": 0},
    {"id": 5, "state": "CLEANUP", "ncores": 1, "result": "CANCELED"},
    {"id": 6, "state": "INACTIVE", "result": "FAILED", "returncode": 1, "waitstatus": 256},
    {"id": 8, "state": "INACTIVE", "result": "CANCELED", "returncode": 143,
     "exception_type": "cancel"},
    {"id": 9, "state": "INACTIVE", "result": "TIMEOUT", "returncode": 142,
     "exception_type": "timeout"},
]})


# (label, what is read, expected): each a value read from an output written here
OUTPUTS = [
    # Slurm node states of 23.x/24.x as scontrol writes them
    ("scontrol IDLE+POWERING_UP takes jobs (it boots for them)",
     lambda: _usable("idle+powering_up"), True),
    ("scontrol ALLOCATED+POWERING_UP is busy, not down", lambda: _usable("allocated+powering_up"),
     True),
    ("scontrol MIXED+PLANNED takes jobs", lambda: _usable("mixed+planned"), True),
    ("scontrol IDLE+RESERVED+MAINTENANCE takes none", lambda: _usable("idle+reserved+maintenance"),
     False),
    ("scontrol IDLE+DRAIN+REBOOT_REQUESTED takes none",
     lambda: _usable("idle+drain+reboot_requested"), False),
    ("scontrol DOWN+DRAIN+INVALID_REG takes none", lambda: _usable("down+drain+invalid_reg"),
     False),
    ("scontrol MIXED+COMPLETING takes jobs", lambda: _usable("mixed+completing"), True),
    ("scontrol IDLE+POWERED_DOWN+NOT_RESPONDING takes none",
     lambda: _usable("idle+powered_down+not_responding"), False),
    ("squeue: a het job's components, typed GPUs per node in `=` form",
     lambda: [(j.native_id, j.state, j.nodes, j.cpus, j.gpus, j.node_list)
              for j in slurm.parse_status(SQUEUE_HET)],
     [("1234+0", JobState.RUNNING, 1, 4, None, "n001"),
      ("1234+1", JobState.RUNNING, 2, 64, 4, "g[01-02]")]),
    ("squeue --json v0.0.42: GPUs per job, per task, per node; het components; an "
     "unlimited throttled array",
     lambda: [(j.native_id, j.state, j.nodes, j.cpus, j.gpus, j.walltime_s)
              for j in slurm.parse_status_json(SQUEUE_JSON_42)],
     [("1", JobState.RUNNING, 2, 16, 4, 3600), ("2", JobState.PENDING, 1, 4, 4, 3600),
      ("3", JobState.PENDING, 2, 4, 4, 3600), ("4+0", JobState.PENDING, 1, 4, None, None),
      ("4+1", JobState.PENDING, 1, 8, None, None), ("7_[1-5%2]", JobState.PENDING, None, 8,
                                                  None, None)]),
    ("squeue --json: the throttled array's waiting tasks", lambda: array_record("7_[1-5%2]"),
     ("7", 5, 2)),
    ("scontrol nodes: two GPU types, typed-only AllocTRES, a second GRES",
     lambda: [(n.name, n.gpus, n.gpus_allocated, n.gpu_types, n.gres)
              for n in slurm.parse_nodes(SCONTROL_TWO_GPU_TYPES)],
     [("g01", 6, 1, {"a100": 4, "v100": 2}, {}), ("g02", 4, 2, None, {"nvme": 1})]),
    # LSF
    ("bjobs -json: PSUSP waits held, USUSP/SSUSP hold their hosts, `4*hostA:2*hostB` is 2 "
     "hosts, an array element, WAIT and PROV wait, ZOMBI and UNKWN are not known",
     lambda: [(j.native_id, j.state, j.nodes, j.cpus) for j in lsf.parse_status(BJOBS)],
     [("8001", JobState.PENDING, None, 4), ("8002", JobState.RUNNING, 2, 6),
      ("8003", JobState.RUNNING, 1, 2), ("8004[3]", JobState.RUNNING, 1, 1),
      ("8005", JobState.PENDING, None, 1), ("8006", JobState.UNKNOWN, None, 1),
      ("8007", JobState.UNKNOWN, None, 1), ("8008", JobState.PENDING, None, 1)]),
    ("bjobs -json: PSUSP is said held", lambda: lsf.parse_status(BJOBS)[0].reason,
     "held (PSUSP)"),
    # PBS Pro
    ("qstat -f -F json -t: an array (B) and its subjob, exec_vnode over two hosts and over "
     "two vnodes of one, held, suspended, never ran, walltime exceeded",
     lambda: [(j.native_id, j.state, j.nodes, j.cpus, j.walltime_s, j.exit_code)
              for j in pbs.parse_status(PBS_JOBS)],
     [("123[].pbs01", JobState.RUNNING, None, 4, 3600, None),
      ("123[4].pbs01", JobState.RUNNING, None, 4, 3600, None),
      ("124.pbs01", JobState.RUNNING, 2, 128, 7200, None),
      ("125.pbs01", JobState.RUNNING, 1, 96, 7200, None),
      ("126.pbs01", JobState.PENDING, None, 1, 600, None),
      ("127.pbs01", JobState.RUNNING, None, 1, 600, None),
      ("129.pbs01", JobState.FAILED, None, 1, None, -11),
      ("130.pbs01", JobState.TIMEOUT, None, 1, 600, -29)]),
    ("qstat -F json: the array's counts (6 queued left of 1-10, one running)",
     lambda: [(j.array_waiting, j.array_running) for j in pbs.parse_status(PBS_JOBS)][:2],
     [(6, 1), (None, None)]),
    ("qstat -F json: a user hold is said", lambda: pbs.parse_status(PBS_JOBS)[4].reason,
     "held (u)"),
    # Grid Engine
    ("qstat -f -xml: dr, t, Rr and a running task hold their slots; hqw, Eqw, hRwq and "
     "task ranges wait",
     lambda: [(j.native_id, j.state, j.cpus) for j in sge.parse_snapshot(
         "ge", {"queue": SGE_QSTAT}).jobs],
     [("50", JobState.RUNNING, 4), ("51", JobState.RUNNING, 2), ("55.3", JobState.RUNNING, 1),
      ("56", JobState.RUNNING, 1), ("52", JobState.PENDING, 8), ("53", JobState.PENDING, 2),
      ("54.4-10:2", JobState.PENDING, 1), ("57", JobState.PENDING, 1),
      ("58.1-100:1", JobState.PENDING, 1)]),
    ("qstat -xml: what a waiting task range stands for",
     lambda: (array_record("54.4-10:2"), array_record("58.1-100:1"), array_record("55.3")),
     (("54", 4, None), ("58", 100, None), ("55", 1, None))),
    ("qstat -xml: Eqw says how to clear it, hqw and hRwq are held",
     lambda: {j.native_id: (j.reason or "")[:12] for j in sge.parse_snapshot(
         "ge", {"queue": SGE_QSTAT}).jobs if j.reason},
     {"50": "being delete", "52": "held (hqw)", "53": "error state ", "57": "held (hRwq)"}),
    # flux
    ("flux jobs --json: GPUs of waiting and running jobs, dependency and priority waits, "
     "cleanup, results",
     lambda: [(j.native_id, j.state, j.nodes, j.cpus, j.gpus, j.exit_code)
              for j in flux.parse_status(FLUX_JOBS)],
     [("1", JobState.PENDING, 2, 16, 8, None), ("2", JobState.RUNNING, 1, 4, 2, None),
      ("3", JobState.PENDING, None, 1, None, None), ("4", JobState.PENDING, None, 1, None,
                                                     None),
      ("5", JobState.CANCELLED, None, 1, None, None), ("6", JobState.FAILED, None, None, None, 1),
      ("8", JobState.CANCELLED, None, None, None, 143),
      ("9", JobState.TIMEOUT, None, None, None, 142)]),
    ("flux jobs --json: urgency 0 is a hold", lambda: flux.parse_status(FLUX_JOBS)[3].reason,
     "held (urgency 0)"),
]


@pytest.mark.parametrize("label, read, expected", OUTPUTS, ids=[o[0] for o in OUTPUTS])
def test_output_read(label, read, expected):
    assert read() == expected


# -- focused: the faults this sweep found ---------------------------------------------------

def _reserved(*names: str) -> dict[str, str]:
    """scontrol's state of idle nodes inside a running reservation."""
    return {n: "IDLE+RESERVED" for n in names}


def test_a_magnetic_reservation_open_to_the_user_takes_the_job_without_naming_it():
    # course holds n01-n04 until +5 h for alice with Flags=MAGNETIC: Slurm considers her
    # jobs for it though they name no reservation. Before: its nodes held from her as
    # from anyone's (RESERVED, and held until its end), so a 3-node job was BUSY until +5 h
    # where Slurm starts it now inside the reservation
    site = selene(states=_reserved("n01", "n02", "n03", "n04"),
                  resv=resv("course", "n[01-04]", -1, 5, users="alice",
                            flags="MAGNETIC,SPEC_NODES"))
    v = only(run("#SBATCH -p batch -N 3 -t 1:00:00", site), "selene", "batch")
    assert (v.verdict, v.estimated_start) == ("READY", hours(0)), v
    assert any("reservation course is MAGNETIC and open to you" in n for n in v.notes)


def test_a_magnetic_reservation_of_others_or_not_begun_stays_closed():
    # of another user: n01-n04 stay theirs (the 2 free nodes take 2 now, 3 wait)
    site = selene(states=_reserved("n01", "n02", "n03", "n04"),
                  resv=resv("course", "n[01-04]", -1, 5, users="carol",
                            flags="MAGNETIC,SPEC_NODES"))
    v = only(run("#SBATCH -p batch -N 3 -t 1:00:00", site), "selene", "batch")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(5))
    assert not any("MAGNETIC" in n for n in v.notes)
    # alice's, denied to her by name (`Users=-alice`): closed as well
    site = selene(states=_reserved("n01", "n02", "n03", "n04"),
                  resv=resv("course", "n[01-04]", -1, 5, users="-alice",
                            flags="MAGNETIC,SPEC_NODES"))
    assert only(run("#SBATCH -p batch -N 3 -t 1:00:00", site), "selene",
                "batch").estimated_start == hours(5)
    # hers but starting in 30 min: a 2-hour job cannot start now on its nodes (Slurm puts
    # a job in a magnetic reservation only once it is running)
    site = selene(resv=resv("course", "n[01-04]", 0.5, 5, users="alice",
                            flags="MAGNETIC,SPEC_NODES"))
    v = only(run("#SBATCH -p batch -N 3 -t 2:00:00", site), "selene", "batch")
    assert v.verdict != "READY", v


def test_a_magnetic_reservation_for_groups_is_open_only_to_known_members():
    # `Groups=chem` (no users): before its groups were not read, so the reservation read
    # as open to every user; now it is theirs only where the site lists the user's groups
    line = resv("course", "n[01-04]", -1, 5, users="(null)", flags="MAGNETIC,SPEC_NODES"
                ).replace("Groups=(null)", "Groups=chem")
    cfg, snap = selene(states=_reserved("n01", "n02", "n03", "n04"), resv=line)
    assert snap.reservations[0].groups == ["chem"] and snap.reservations[0].users is None
    script = "#SBATCH -p batch -N 3 -t 1:00:00"
    assert only(run(script, (cfg, snap)), "selene", "batch").estimated_start == hours(5)
    member = cfg.model_copy(update={"metadata": {**cfg.metadata, "groups": ["users", "chem"]}})
    assert only(run(script, (member, snap)), "selene", "batch").verdict == "READY"
    other = cfg.model_copy(update={"metadata": {**cfg.metadata, "groups": ["bio"]}})
    assert only(run(script, (other, snap)), "selene", "batch").estimated_start == hours(5)
    # naming it, a user of none of its groups is refused, as sbatch refuses it
    v = run(script + " --reservation=course", (other, snap)).verdict("selene")
    assert v.verdict == "RESTRICTED" and v.reasons == [
        "reservation 'course' is not open to your groups (bio; its groups: chem)"]
    assert run(script + " --reservation=course", (member, snap)).verdict(
        "selene").verdict == "READY"


def test_slurmrestd_nodes_reply_of_errors_is_not_a_cluster_without_nodes():
    # slurmrestd answers `GET nodes` with an empty list beside its errors when slurmctld
    # does not answer. Before: read as a reachable site of no nodes (every job refused
    # there as too big, never "unreachable"); the jobs reply's errors were already refused
    with pytest.raises(SiteError, match=r"slurmrestd: nodes: Protocol authentication error: "
                                        r"Unable to query nodes \(1007\)"):
        slurm_rest.parse_snapshot("rest", {"queue": '{"jobs": []}', "nodes": REST_NODES_ERROR,
                                           "partitions": '{"partitions": []}'})
    with pytest.raises(SiteError, match=r"slurmrestd: partitions: .*\(1007\)"):
        slurm_rest.parse_partitions(REST_NODES_ERROR.replace('"nodes"', '"partitions"'))


async def test_slurmrestd_site_with_nodes_reply_of_errors_is_unreachable_then_asks_again(
        tmp_path):
    # through a RestSite and a slurmrestd stand-in at the wire: the errors make the site
    # unreachable (said), and the next snapshot asks nodes again (not the reply of errors
    # kept for the capabilities' 60 s)
    good_nodes = json.dumps({"nodes": [{"name": "n1", "state": ["IDLE"], "cpus": 8,
                                        "real_memory": 16000, "partitions": ["batch"]}],
                             "errors": [], "warnings": []})
    replies = {"jobs": ['{"jobs": [], "errors": [], "warnings": []}'] * 2,
               "nodes": [REST_NODES_ERROR, good_nodes],
               "partitions": [json.dumps({"partitions": [
                   {"name": "batch", "nodes": {"configured": "n1"},
                    "partition": {"state": ["UP"]}}]})] * 2,
               "reservations": ['{"reservations": []}'] * 2}
    async with StandInSlurmrestd(replies) as rest:
        site = rest.site(tmp_path, api_version="v0.0.41")
        try:
            first = await site.snapshot(max_age_s=0)
            assert not first.reachable and "Unable to query nodes (1007)" in (first.error or "")
            second = await site.snapshot(max_age_s=0)
            assert second.reachable and [n.name for n in second.nodes] == ["n1"]
            # (licenses with each queue; slurmdb's qos and diag once, with the capabilities
            # the 60 s began with: only slurmctld's nodes, partitions, reservations again)
            assert rest.asked == ["jobs", "licenses", "nodes", "partitions", "reservations",
                                  "qos", "diag", "jobs", "licenses", "nodes", "partitions",
                                  "reservations"]
        finally:
            await site.close()


def _lsf(command: str, *records: dict) -> str:
    return json.dumps({"COMMAND": command, "RECORDS": list(records)})


def test_lsf_host_closed_without_its_reason_is_not_free_now():
    # bhosts prints a plain `closed` (the reason only under -l): LSF dispatches nothing
    # there. Before: its 32 empty slots were free, and a 32-slot job READY now where the
    # only other host is full
    snap = lsf.parse_snapshot("lsfsite", {
        "hosts": _lsf("bhosts",
                      {"HOST_NAME": "hA", "STATUS": "closed", "MAX": "32", "NJOBS": "0",
                       "RUN": "0"},
                      {"HOST_NAME": "hB", "STATUS": "ok", "MAX": "32", "NJOBS": "32",
                       "RUN": "32"},
                      {"HOST_NAME": "hC", "STATUS": "closed_RC", "MAX": "32", "NJOBS": "0",
                       "RUN": "0"}),
        "lshosts": _lsf("lshosts", *[{"HOST_NAME": h, "type": "X86_64", "model": "EPYC",
                                      "ncpus": "32", "maxmem": "250G", "RESOURCES": "()"}
                                     for h in ("hA", "hB", "hC")]),
        "queues": _lsf("bqueues", {"QUEUE_NAME": "normal", "STATUS": "Open:Active",
                                   "MAX": "-", "RUNLIMIT": "-"})})
    assert {n.name: n.cpus - n.cpus_allocated for n in snap.nodes} == {"hA": 0, "hB": 0,
                                                                        "hC": 0}
    from test_placement_cases import NOW

    cfg = SiteConfig(name="lsfsite", scheduler="lsf", metadata={"architecture": "x86_64"})
    p = run_placement("#BSUB -n 32 -R \"span[hosts=1]\" -W 1:00",
                      (cfg, snap.model_copy(update={"taken_at": NOW})))
    v = p.verdict("lsfsite")
    assert v.feasible and v.verdict != "READY", p.explain()


def test_pbs_vnode_busy_with_load_takes_no_job_now():
    # `busy`: the mom's load average is past its max_load, so the scheduler starts nothing
    # there (the Torque text reader already read it so). Before: its 128 unassigned CPUs
    # were free, a 100-CPU job READY now
    nodes = json.dumps({"nodes": {
        "n1": {"state": "busy", "resources_available": {"host": "n1", "ncpus": 128,
                                                        "mem": "512gb", "Qlist": "workq"}},
        "n2": {"state": "free", "resources_available": {"host": "n2", "ncpus": 128,
                                                        "mem": "512gb", "Qlist": "workq"},
               "resources_assigned": {"ncpus": 64}}}})
    snap = pbs.parse_snapshot("pro", {"nodes": nodes, "queues": json.dumps({"Queue": {
        "workq": {"queue_type": "Execution", "enabled": "True", "started": "True"}}}),
        "server": json.dumps({"Server": {"pbs01": {"default_queue": "workq"}}})})
    assert {n.name: (n.cpus, n.cpus - n.cpus_allocated) for n in snap.nodes} == {
        "n1": (128, 0), "n2": (128, 64)}
    from test_placement_cases import NOW

    cfg = SiteConfig(name="pro", scheduler="pbs", metadata={"architecture": "x86_64"})
    p = run_placement("#PBS -l select=1:ncpus=100\n#PBS -l walltime=1:00:00",
                      (cfg, snap.model_copy(update={"taken_at": NOW})))
    v = p.verdict("pro")
    assert v.feasible and v.verdict != "READY", p.explain()


# -- follow-ups of the sweep: LSF reserved slots, Univa/Altair `P`, flux reason_pending ------

def _bhosts_site(record: dict) -> tuple[SiteConfig, object]:
    from test_placement_cases import NOW

    snap = lsf.parse_snapshot("lsfsite", {
        "hosts": _lsf("bhosts", record),
        "lshosts": _lsf("lshosts", {"HOST_NAME": "hA", "type": "X86_64", "model": "EPYC",
                                    "ncpus": "32", "maxmem": "250G", "RESOURCES": "()"}),
        "queues": _lsf("bqueues", {"QUEUE_NAME": "normal", "STATUS": "Open:Active",
                                   "MAX": "-", "RUNLIMIT": "-"})})
    cfg = SiteConfig(name="lsfsite", scheduler="lsf", metadata={"architecture": "x86_64"})
    return cfg, snap.model_copy(update={"taken_at": NOW})


def test_lsf_slots_reserved_for_waiting_jobs_are_not_free():
    # bhosts asks the RSV column now (one call still), and the slots LSF reserves on a host
    # for waiting jobs are not free: 8 running and 24 reserved of 32 leave none. Before:
    # `bhosts -o "host_name status max njobs run"`, 24 slots free and a 24-slot job READY
    assert lsf.snapshot_argvs()["hosts"] == [
        "bhosts", "-o", "host_name status max njobs run ssusp ususp rsv", "-json"]
    rec = {"HOST_NAME": "hA", "STATUS": "ok", "MAX": "32", "NJOBS": "8", "RUN": "8",
           "SSUSP": "0", "USUSP": "0", "RSV": "24"}
    cfg, snap = _bhosts_site(rec)
    assert [(n.cpus, n.cpus_allocated) for n in snap.nodes] == [(32, 32)]
    p = run_placement("#BSUB -n 24 -R \"span[hosts=1]\" -W 1:00", (cfg, snap))
    v = p.verdict("lsfsite")
    assert v.feasible and v.verdict != "READY", p.explain()
    # NJOBS that already counts them (IBM's examples: NJOBS = RUN+SSUSP+USUSP+RSV) is not
    # counted twice: 2 running, 1 user-suspended, 1 reserved of 8 leave 4
    cfg, snap = _bhosts_site({"HOST_NAME": "hA", "STATUS": "ok", "MAX": "8", "NJOBS": "4",
                              "RUN": "2", "SSUSP": "0", "USUSP": "1", "RSV": "1"})
    assert [(n.cpus, n.cpus_allocated) for n in snap.nodes] == [(8, 4)]
    # an output of the older field list (no SSUSP/USUSP/RSV) reads as before: NJOBS
    cfg, snap = _bhosts_site({"HOST_NAME": "hA", "STATUS": "ok", "MAX": "32", "NJOBS": "8",
                              "RUN": "8"})
    assert [(n.cpus, n.cpus_allocated) for n in snap.nodes] == [(32, 8)]
    assert run_placement("#BSUB -n 24 -R \"span[hosts=1]\" -W 1:00", (cfg, snap)).verdict(
        "lsfsite").verdict == "READY"


def _instance(name: str, state: str) -> str:
    return (f"<Queue-List><name>{name}</name><qtype>BIP</qtype><slots_used>0</slots_used>"
            "<slots_resv>0</slots_resv><slots_total>16</slots_total><load_avg>0.1</load_avg>"
            "<arch>lx-amd64</arch>" + (f"<state>{state}</state>" if state else "")
            + "</Queue-List>")


def test_univa_preempted_queue_instance_takes_no_job():
    # Univa/Altair Grid Engine's queue state P (preempted: suspended by a preemption) starts
    # no job there, as Son of Grid Engine's s/S/C. Before: read open, so all.q listed n01
    # and pre.q, preempted on its one host, was UP
    xml = ("<?xml version='1.0'?><job_info><queue_info>" + _instance("all.q@n01", "P")
           + _instance("all.q@n02", "") + _instance("pre.q@n01", "P")
           + "</queue_info><job_info></job_info></job_info>")
    parts = {p.name: p for p in sge.parse_snapshot("ge", {"queue": xml}).partitions}
    assert parts["all.q"].nodes == ["n02"] and parts["pre.q"].state == "DOWN"


def test_flux_reason_pending_is_read_as_waiting_for_resources():
    # fluxion's annotations.sched.reason_pending ("insufficient resources") is the waiting
    # job's reason now (before: none said), a sentence of flux's own, and waits for nothing
    # but resources in the placement plan (as Slurm's Resources), not held
    from test_placement_cases import NOW

    from diamond_jupyter.dialects.reasons import scheduler_sentence
    from diamond_jupyter.placement import site_nodes
    from diamond_jupyter.placement_sim import build_state, pending_demands

    job = flux.parse_status(FLUX_JOBS)[0]
    assert job.reason == "insufficient resources" and scheduler_sentence(job.reason)
    # in the plan: a waiting job the plan may start at once if it fits (its estimate not
    # binding), as one without a reason (not held back to fluxion's estimate)
    snap = flux.parse_snapshot("fl", {
        "resources": "free|genoa|4|256|0|n[01-04]\n", "queue": json.dumps({"jobs": [
            {"id": 1, "state": "SCHED", "nnodes": 1, "ncores": 64, "duration": 3600.0,
             "t_submit": 1796000000.0, "annotations": {"sched": {
                 "reason_pending": "insufficient resources",
                 "t_estimate": NOW.timestamp() + 7200}}}]})})
    assert snap.pending[0].reason == "insufficient resources"
    nodes = site_nodes(snap)
    members = {p.name: [n.name for n in nodes] for p in snap.partitions} or {
        None: [n.name for n in nodes]}
    st = build_state(snap, nodes, members, NOW, {})
    [demand] = pending_demands(snap, st, members, NOW, {})
    assert demand.now_ok and demand.sched and demand.not_before == 7200
    # a hold and a dependency keep their own reason; a running job has none
    assert flux.parse_status(json.dumps({"id": 4, "state": "PRIORITY", "urgency": 0,
                                         "annotations": {"sched": {
                                             "reason_pending": "insufficient resources"}}})
                             )[0].reason == "held (urgency 0)"
    assert flux.parse_status(json.dumps({"id": 2, "state": "RUN", "annotations": {
        "sched": {"reason_pending": "insufficient resources"}}}))[0].reason is None
