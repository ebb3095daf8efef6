"""Sweep 19 of scheduler outputs: outputs written here from each scheduler's documented
formats (Slurm's job reason codes, 23.x-24.x node states, LSF `bjobs -json` and
`bqueues`, Grid Engine queue instance states, `flux resource list`, PBS Pro `qstat -f -F
json`), not captured, and none of them met by sweeps 1-18: fed through the parsers and,
where the parser feeds placement or the engine's attention, through those. Each row of
OUTPUTS is one output and what must be read from it; the focused tests after it are the
faults this sweep found (each failed before)."""

from __future__ import annotations

import json
import sys
from datetime import timezone
from pathlib import Path

import pytest

from diamond_jupyter.attention import never_reason
from diamond_jupyter.dialects.flux_commands import FluxCommands
from diamond_jupyter.dialects.lsf_commands import LsfCommands
from diamond_jupyter.dialects.pbs_commands import PbsCommands
from diamond_jupyter.dialects.reasons import scheduler_sentence
from diamond_jupyter.dialects.sge_commands import SgeCommands
from diamond_jupyter.dialects.slurm_commands import SlurmCommands
from diamond_jupyter.model import Node
from diamond_jupyter.placement_fit import node_returning, node_usable
from diamond_jupyter.placement_sim import held_reason

sys.path.insert(0, str(Path(__file__).parent))
from test_placement_cases import NOW  # noqa: E402
from test_placement_cases13 import pending, run, running, selene  # noqa: E402

UTC = timezone.utc
slurm = SlurmCommands(tz=UTC)
pbs = PbsCommands(tz=UTC)
lsf = LsfCommands(tz=UTC, now=lambda: NOW)
flux = FluxCommands()
sge = SgeCommands(tz=UTC)


def _state(state: str) -> tuple[bool, tuple[float, bool] | None]:
    """Whether a node of `state` takes a job now, and when it is back if it is out now."""
    node = Node(name="n", state=state)
    return node_usable(node), node_returning(node)


def _bjobs(**record: str) -> str:
    """`bjobs -o BJOBS_FIELDS -json` of one job (its other fields empty)."""
    base = {"JOBID": "2001", "STAT": "PEND", "USER": "u", "QUEUE": "normal",
            "JOB_NAME": "x", "EXIT_CODE": "", "PEND_REASON": "", "SUBMIT_TIME": "Nov 29 10:02",
            "START_TIME": "", "FINISH_TIME": "", "ESSTART_TIME": "", "SLOTS": "4",
            "EXEC_HOST": "", "RUNTIMELIMIT": "60.0 min"}
    return json.dumps({"COMMAND": "bjobs", "JOBS": 1, "RECORDS": [{**base, **record}]})


# LSF 10.1 pending reasons as `bjobs -p` and `-o pend_reason` print them: one a line,
# each ending with its host count and ';' (a raw newline inside the JSON string, as bjobs
# writes it)
LSF_PEND = ("Not enough job slot(s): 3 hosts;\n Job requirements for reserving resource "
            "(mem) not satisfied: 2 hosts;\n Closed by LSF administrator: 1 host;")
LSF_PEND_JSON = _bjobs(PEND_REASON="@").replace('"@"', json.dumps(LSF_PEND).replace(
    "\\n", "\n"))

# PBS Pro: the scheduler's comment, a name holding '=' (qsub -N allows it)
PBS_JOB = json.dumps({"pbs_version": "2022.1.1", "Jobs": {"31.pbs01": {
    "Job_Name": "a=b", "Job_Owner": "alice@login", "job_state": "Q", "queue": "workq",
    "comment": "Not Running: Insufficient amount of resource: ngpus",
    "Resource_List": {"ncpus": 8, "ngpus": 2, "nodect": 1, "select": "1:ncpus=8:ngpus=2",
                      "walltime": "01:00:00"}}}})

# `flux resource list -n -o RESOURCE_FORMAT`: one rank down (drained or offline; flux
# lists excluded ranks among the down ones)
FLUX_RESOURCES = ("free||2|64|0|node[1-2]\n"
                  "allocated||1|32|0|node3\n"
                  "down||2|64|0|node[4-5]\n")

OUTPUTS = [
    # Slurm node states of 23.x-24.x, sinfo's marks and scontrol's words
    ("scontrol IDLE+DRAIN+COMPLETING", lambda: _state("IDLE+DRAIN+COMPLETING"),
     (False, None)),
    ("scontrol MIXED+DRAIN+COMPLETING", lambda: _state("MIXED+DRAIN+COMPLETING"),
     (False, None)),
    ("sinfo drng (draining)", lambda: _state("drng"), (False, None)),
    # PLANNED (`-`): the backfill plans it for a job ahead; the plan itself counts that job
    ("scontrol IDLE+PLANNED", lambda: _state("IDLE+PLANNED"), (True, None)),
    ("sinfo idle- (planned)", lambda: _state("idle-"), (True, None)),
    # booted first, within ResumeTimeout (since the follow-ups; before taken as up now)
    ("sinfo idle# (powering up)", lambda: _state("idle#"), (True, (60.0, False))),
    ("sinfo idle~ (powered down)", lambda: _state("idle~"), (True, (60.0, False))),
    ("scontrol IDLE+INVALID_REG", lambda: _state("IDLE+INVALID_REG"), (False, None)),
    ("sinfo inval", lambda: _state("inval"), (False, None)),
    ("scontrol FUTURE", lambda: _state("FUTURE"), (False, None)),
    ("sinfo future", lambda: _state("future"), (False, None)),
    # squeue reasons: which hold a waiting job back from the plan whatever is free
    ("squeue BeginTime held", lambda: held_reason("BeginTime"), True),
    ("squeue DependencyNeverSatisfied held", lambda: held_reason("DependencyNeverSatisfied"),
     True),
    ("squeue ReqNodeNotAvail, Reserved for maintenance not held",
     lambda: held_reason("ReqNodeNotAvail, Reserved for maintenance"), False),
    ("squeue AssocGrpGRES not held (waits for its account's jobs)",
     lambda: held_reason("AssocGrpGRES"), False),
    ("squeue QOSMaxGRESPerUser not held (waits for its user's jobs)",
     lambda: held_reason("QOSMaxGRESPerUser"), False),
    ("squeue QOSMaxCpuPerJobLimit held (over the limit by itself)",
     lambda: held_reason("QOSMaxCpuPerJobLimit"), True),
    ("squeue AssocGrpCPUMinutesLimit held (usage used up)",
     lambda: held_reason("AssocGrpCPUMinutesLimit"), True),
    # LSF: a multi-line pending reason read whole, each line a sentence LSF writes
    ("bjobs -json PEND_REASON over lines",
     lambda: [(j.native_id, j.reason) for j in lsf.parse_status(LSF_PEND_JSON)],
     [("2001", LSF_PEND)]),
    # before: withheld from an agent's model as text a job set (not in LSF's list)
    ("LSF reserving-resource reason is LSF's own sentence",
     lambda: scheduler_sentence(LSF_PEND), True),
    ("LSF queue reserving-resource and whole-duration reasons",
     lambda: [scheduler_sentence(x) for x in (
         "Queue requirements for reserving resource (lic_x) not satisfied: 4 hosts;",
         "Not enough slots or resources for whole duration of the job: 2 hosts;",
         "Job requirements for reserving resource (mem) not satisfied; rm -rf /")],
     [True, True, False]),
    # PBS Pro: the scheduler's comment is the waiting job's reason; a name with '='
    ("qstat -f -F json comment and Job_Name a=b",
     lambda: [(j.name, j.reason, j.gpus) for j in pbs.parse_status(PBS_JOB)],
     [("a=b", "Not Running: Insufficient amount of resource: ngpus", 2)]),
    ("PBS insufficient-resource comment is PBS's own sentence",
     lambda: scheduler_sentence("Not Running: Insufficient amount of resource: ngpus"), True),
    # flux: down ranks take nothing
    ("flux resource list with down ranks",
     lambda: [(n.name, n.state, n.cpus, node_usable(n))
              for n in flux.parse_resources(FLUX_RESOURCES)],
     [("node1", "free", 32, True), ("node2", "free", 32, True),
      ("node3", "allocated", 32, True), ("node4", "down", 32, False),
      ("node5", "down", 32, False)]),
]


@pytest.mark.parametrize("label,read,expected", OUTPUTS, ids=[o[0] for o in OUTPUTS])
def test_output_read(label, read, expected):
    assert read() == expected


# -- focused: the faults this sweep found ---------------------------------------------------

@pytest.mark.parametrize("reason,never", [
    # a maintenance reservation on the nodes it names: it starts once the window ends
    ("ReqNodeNotAvail, Reserved for maintenance", None),
    ("ReqNodeNotAvail", None),  # the nodes it names busy or reserved for now
    ("ReqNodeNotAvail, UnavailableNodes:n[01-02]", "ReqNodeNotAvail"),  # down or drained
    # an association's aggregate limit reached by its running jobs: free as they end
    ("AssocGrpGRES", None), ("AssocGrpCpuLimit", None), ("AssocGrpCPURunMinutesLimit", None),
    ("AssocGrpCPUMinutesLimit", "AssocGrpCPUMinutesLimit"),  # usage used up
    ("QOSMaxGRESPerUser", None), ("BeginTime", None),
    ("QOSMaxGRESPerNode", "QOSMaxGRESPerNode"),
    ("DependencyNeverSatisfied", "DependencyNeverSatisfied"),
])
def test_which_slurm_reasons_mean_the_job_never_starts(reason, never):
    """Before: every ReqNodeNotAvail and every AssocGrp* woke the user (and an agent) as a
    job that will never start, though Slurm starts it after the maintenance window or once
    the account's running jobs end; a dependency that can never be satisfied did not."""
    assert never_reason(reason) == never


def _start_h(v) -> float | None:
    return None if v.estimated_start is None else (v.estimated_start - NOW).total_seconds() / 3600


# carol's job waits on big (96 CPUs) for a limit her own (or her account's, her QOS's)
# running job on g01 reaches until +1 h; m01 is bob's until +3 h, m02 idle
def _limited(reason: str):
    return selene(running("7", "bob", "m01", 128, 3, 4, "big"),
                  running("8", "carol", "g01", 8, 1, 4, "gpu"),
                  pending("9", "carol", 96, 4, "big", 1, reason), alloc={"m01": 128, "g01": 8})


@pytest.mark.parametrize("reason", ["QOSMaxCpuPerUserLimit", "AssocGrpCpuLimit",
                                    "QOSGrpCpuLimit", "AssocMaxJobsLimit"])
def test_a_job_ahead_waiting_for_a_limit_does_not_take_the_idle_node_now(reason):
    """Before: carol's job, which Slurm starts only once her running job frees her limit
    (+1 h), was planned on m02 now, so alice's one-hour job was BUSY until bob's ends
    (+3 h); it runs on m02 now and ends before carol's can start."""
    v = run("#SBATCH -p big -c 96 -t 1:00:00", _limited(reason)).ranked[0]
    assert (v.verdict, _start_h(v)) == ("READY", 0.0), v.notes


def test_a_job_ahead_waiting_for_resources_still_takes_the_idle_node():
    v = run("#SBATCH -p big -c 96 -t 1:00:00", _limited("Priority")).ranked[0]
    assert v.verdict == "BUSY" and _start_h(v) == pytest.approx(3.0, abs=0.05)


def test_a_job_ahead_held_for_a_limit_it_is_over_takes_nothing():
    v = run("#SBATCH -p big -c 96 -t 1:00:00", _limited("QOSMaxCpuPerJobLimit")).ranked[0]
    assert v.verdict == "READY"
    # a two-hour job runs past carol's limit freeing (+1 h): she is ahead of it then
    v = run("#SBATCH -p big -c 96 -t 2:00:00", _limited("QOSMaxCpuPerUserLimit")).ranked[0]
    assert v.verdict == "BUSY" and _start_h(v) == pytest.approx(3.0, abs=0.05)


# -- LSF: a queue out of its time windows (Open:Inact_Win) --------------------------------

NIGHT_LONG = """QUEUE: night
  -- Night queue: dispatches only outside working hours.

PARAMETERS/STATISTICS
PRIO NICE STATUS          MAX JL/U JL/P JL/H NJOBS  PEND   RUN SSUSP USUSP  RSV PJOBS
 30   20  {status}   -    8    -    -     0     0     0     0     0    0     0
Interval for a host to accept two jobs is 0 seconds

RUN_WINDOWS:  20:00-08:00
DISPATCH_WINDOW:  (22:00-06:00 )

USERS: all
HOSTS:  all
"""


def _wren_night(status: str = "Open:Inact_Win", long: str = NIGHT_LONG):
    """wren's hosts with one queue, night, in `status` (NOW is Sunday 09:00, UTC)."""
    from test_placement_cases8 import WREN

    from diamond_jupyter.config import SiteConfig
    hosts = {"RECORDS": [{"HOST_NAME": h, "STATUS": "ok", "MAX": str(c), "NJOBS": "0",
                          "RUN": "0"} for h, _, c, _, _ in WREN]}
    lshosts = {"RECORDS": [{"HOST_NAME": h, "type": "X86_64", "model": m, "ncpus": str(c),
                            "maxmem": mem, "RESOURCES": res} for h, m, c, mem, res in WREN]}
    queues = {"RECORDS": [{"QUEUE_NAME": "night", "STATUS": status, "MAX": "-",
                           "RUNLIMIT": "720.0 min"}]}
    snap = lsf.parse_snapshot("wren", {
        "hosts": json.dumps(hosts), "lshosts": json.dumps(lshosts),
        "queues": json.dumps(queues), "queue": '{"RECORDS": []}', "user": "alice\n",
        "queue_long": long.format(status=status)}).model_copy(update={"taken_at": NOW})
    snap.partitions[0].default = True
    return SiteConfig(name="wren", scheduler="lsf"), snap


def test_the_windows_of_a_queue_are_read_from_bqueues_long():
    from diamond_jupyter.dialects.lsf_commands import next_window_open, parse_queue_windows
    windows = parse_queue_windows(NIGHT_LONG)
    assert windows == {"night": [["20:00-08:00"], ["22:00-06:00"]]}
    # open when both are: 22:00-06:00; LSF's day 0 is Sunday (a weekly window)
    assert next_window_open(windows["night"], NOW) == NOW.replace(hour=22)
    assert next_window_open(windows["night"], NOW.replace(hour=23)) == NOW.replace(hour=23)
    # Friday 19:00 to Monday 08:30: open on Sunday; from Monday 09:00, next Friday
    assert next_window_open([["5:19:00-1:08:30"]], NOW) == NOW
    assert next_window_open([["5:19:00-1:08:30"]], NOW.replace(day=2)) == NOW.replace(
        day=6, hour=19)
    assert next_window_open([["25:00-3:00"]], NOW) is None  # not a time: not guessed
    _, snap = _wren_night()
    assert snap.partitions[0].opens_at == NOW.replace(hour=22)


def test_a_queue_out_of_its_windows_takes_the_job_for_when_they_open():
    """Before: `-q night` was INCOMPATIBLE ("queue 'night' is INACTIVE"), and `diamond
    submit` to wren refused it, though LSF takes the job and dispatches it at 22:00."""
    v = run_placement_lsf("#BSUB -q night\n#BSUB -n 4\n#BSUB -W 1:00", _wren_night())
    assert v.verdict == "BUSY", v.reasons
    assert _start_h(v) == pytest.approx(13.0, abs=0.01)
    assert any("queue night dispatches no job outside its run and dispatch windows "
               "(Open:Inact_Win): LSF dispatches it once they open, Sun 22:00" in n
               for n in v.notes), v.notes


def test_a_queue_an_administrator_inactivated_stays_out():
    v = run_placement_lsf("#BSUB -q night\n#BSUB -n 4\n#BSUB -W 1:00",
                          _wren_night("Open:Inact_Adm"))
    assert v.verdict == "INCOMPATIBLE" and "queue 'night' is INACTIVE" in v.reasons


def run_placement_lsf(script: str, site):
    from test_placement_cases import run as run_any
    return run_any(script, site).ranked[0]
