"""Follow-ups of the nineteenth sweep of scheduler outputs.

1. Slurm power saving (sinfo(1)'s state marks `~` powered off, `#` powering up, `!` to be
   powered down, `%` powering down; scontrol's POWERED_DOWN, POWERING_UP, POWER_DOWN,
   POWERING_DOWN): before, an idle node powered off or booting counted as taking a job at
   once, said only in a note ("boots first"), and one powering down as free now. Now the
   boot is planned: a job there starts no sooner than the site's ResumeTimeout (the longest
   a boot may take; how long one takes, or how far a booting node is, is not read), one
   powering down is back after SuspendTimeout and a boot; both read from `scontrol show
   config`. A site (or node) up now that frees sooner is preferred.
2. LSF shared resources (`bhosts -s`: TOTAL, RESERVED): before, a job asking more of a
   license than is free now was READY at once. Now `bhosts -s` is read with every queue and
   each running job's reservation (`bjobs -o effective_resreq`): the job waits until
   enough of the running jobs reserving it end, or says the wait is not known.
3. Slurm licenses as alternatives (`-L a|b`, sbatch(1): any one of them, tried in the order
   written; "AND and OR cannot both be used"): a mix of `,` and `|` was placed as `|`;
   now refused as sbatch refuses it.
"""

from __future__ import annotations

import json
from datetime import timedelta, timezone

import pytest
from test_placement_cases import NOW
from test_placement_cases8 import WREN, _wjob
from test_placement_cases14 import PARTITIONS, node_lines, running

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.dialects.lsf_commands import (
    LsfCommands,
    parse_job_rusage,
    parse_shared_instances,
)
from diamond_jupyter.dialects.slurm_commands import SlurmCommands
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import LsfSharedInstance, Node
from diamond_jupyter.placement import place
from diamond_jupyter.placement_fit import node_power, node_returning, node_usable

slurm = SlurmCommands(tz=timezone.utc)

# `scontrol show config` of a cloud site (an excerpt): boots take up to 5 minutes
CLOUD_CONFIG = """Configuration data as of 2026-12-06T05:00:00
ResumeTimeout           = 300 sec
SlurmdTimeout           = 300 sec
SuspendTimeout          = 120 sec
SuspendTime             = 600 sec
"""


def _state(state: str, timeouts: dict[str, float] | None = None):
    node = Node(name="n", state=state)
    return node_usable(node), node_returning(node, timeouts=timeouts), node_power(node)


STATES = [
    # (state, usable by state, back after (s, after its jobs), power saving's)
    ("idle~", True, (60.0, False), "off"),
    ("IDLE+POWERED_DOWN", True, (60.0, False), "off"),
    ("IDLE+CLOUD+POWERED_DOWN", True, (60.0, False), "off"),
    ("idle#", True, (60.0, False), "booting"),
    ("IDLE+POWERING_UP", True, (60.0, False), "booting"),
    ("alloc#", True, (60.0, False), "booting"),
    # to be powered off, or powering off: off first (SuspendTimeout), then booted
    ("idle!", True, (90.0, True), "going_off"),
    ("IDLE+POWER_DOWN", True, (90.0, True), "going_off"),
    ("idle%", True, (90.0, True), "going_off"),
    ("IDLE+POWERING_DOWN", True, (90.0, True), "going_off"),
    # down, drained or silent as well: out as before, whatever its power
    ("DOWN+CLOUD+POWERED_DOWN", False, None, "off"),
    ("IDLE+DRAIN+POWERED_DOWN", False, None, "off"),
    ("idle~*", False, (300.0, False), "off"),
    # on
    ("idle", True, None, None), ("mix", True, None, None), ("IDLE+CLOUD", True, None, None),
]


@pytest.mark.parametrize("state, usable, back, power", STATES, ids=[s[0] for s in STATES])
def test_power_saving_states_are_back_after_their_boot(state, usable, back, power):
    """Before: `~`, `#` and POWERING_UP nodes (None: no wait), `!`/`%`/POWERING_DOWN too."""
    assert _state(state) == (usable, back, power)


def test_the_site_timeouts_plan_the_boot():
    timeouts = slurm.parse_node_timeouts(CLOUD_CONFIG)
    assert timeouts == {"ResumeTimeout": 300.0, "SlurmdTimeout": 300.0,
                        "SuspendTimeout": 120.0, "SuspendTime": 600.0}
    assert _state("idle~", timeouts)[1] == (300.0, False)
    assert _state("idle%", timeouts)[1] == (420.0, True)


def test_suspend_time_is_read_from_show_config_into_the_snapshot():
    """SuspendTime (how long a node idles before it powers down) beside the other node
    timeouts, in the same field; `NONE` (power saving off) is left out."""
    snap = slurm.parse_snapshot("vega", {"config": CLOUD_CONFIG, "queue": ""})
    assert snap.node_timeouts["SuspendTime"] == 600.0
    off = CLOUD_CONFIG.replace("SuspendTime             = 600 sec", "SuspendTime = NONE")
    assert "SuspendTime" not in slurm.parse_node_timeouts(off)
    assert slurm.parse_node_timeouts(off)["SuspendTimeout"] == 120.0


def _vega(states: dict[str, str], queue=(), config: str = CLOUD_CONFIG, name: str = "vega",
          alloc=None):
    """vega (main: c01-c02 of 64 CPUs, c03-c04 of 32) with node states changed as `scontrol show
    node` prints them, and its `scontrol show config`."""
    nodes = node_lines(alloc or {}, {})
    for node, state in states.items():
        nodes = "\n".join(line.replace(" State=IDLE ", f" State={state} ")
                          if line.startswith(f"NodeName={node} ") else line
                          for line in nodes.splitlines()) + "\n"
    outputs = {"partitions": PARTITIONS, "nodes": nodes, "queue": "\n".join(queue),
               "queue_qos": "", "qos": "normal||||||||\n",
               "reservations": "No reservations in the system\n",
               "assoc": "user|alice\nalice|proj||normal|normal\n", "config": config}
    snap = slurm.parse_snapshot(name, outputs).model_copy(update={"taken_at": NOW})
    return SiteConfig(name=name, metadata={"architecture": "x86_64"}), snap


# c01, c02 full (their jobs end at +2 h and +3 h)
FULL = dict(alloc={"c01": 64, "c02": 64},
            queue=(running("7", "c01", 64, 2), running("8", "c02", 64, 3)))


def _place(script: str, *sites):
    spec = Federation.parse(f"#!/bin/bash\n{script}\n./app\n", "slurm")
    return place(spec, list(sites), now=NOW)


def seconds_to_start(v) -> float:
    return (v.estimated_start - NOW).total_seconds()


def test_a_job_only_powered_down_nodes_can_take_starts_after_their_boot():
    """Before: READY now, with a note."""
    site = _vega({"c03": "IDLE+CLOUD+POWERED_DOWN", "c04": "IDLE+CLOUD+POWERED_DOWN"}, **FULL)
    v = _place("#SBATCH -p main -N 1 -n 32 -t 1:00:00", site).verdict("vega")
    assert v.verdict == "BUSY" and seconds_to_start(v) == pytest.approx(300)
    assert any(n.startswith("partition main: c03, c04 powered down: Slurm boots the nodes "
                            "it gives the job first, planned to take 300 s (the site's "
                            "ResumeTimeout), the longest a boot may take") for n in v.notes), \
        v.notes
    # without the site's config: Slurm's default, 60 s
    v = _place("#SBATCH -p main -N 1 -n 32 -t 1:00:00",
               _vega({"c03": "IDLE+POWERED_DOWN", "c04": "IDLE+POWERED_DOWN"}, config="",
                     **FULL)).verdict("vega")
    assert seconds_to_start(v) == pytest.approx(60)
    assert any("60 s (Slurm's default ResumeTimeout)" in n for n in v.notes)


def test_a_node_up_now_is_taken_before_one_to_boot():
    # c03 up and idle, c04 powered down: one node starts now on c03, nothing said of a boot
    site = _vega({"c04": "IDLE+POWERED_DOWN"}, **FULL)
    v = _place("#SBATCH -p main -N 1 -n 32 -t 1:00:00", site).verdict("vega")
    assert (v.verdict, seconds_to_start(v)) == ("READY", 0)
    assert not any("powered down" in n for n in v.notes)
    # two nodes: c04 must boot
    v = _place("#SBATCH -p main -N 2 -n 64 -t 1:00:00", site).verdict("vega")
    assert v.verdict == "BUSY" and seconds_to_start(v) == pytest.approx(300)


def test_a_node_booting_is_planned_at_the_bound_and_said():
    site = _vega({"c03": "IDLE+POWERING_UP", "c04": "IDLE+POWERING_UP"}, **FULL)
    v = _place("#SBATCH -p main -N 1 -n 32 -t 1:00:00", site).verdict("vega")
    assert seconds_to_start(v) == pytest.approx(300)
    assert "partition main: c03, c04 being powered up: how much of the boot is left is not " \
        "known, so it is planned to take 300 s (the site's ResumeTimeout), the bound" \
        in v.notes


def test_a_node_powering_down_is_off_first_then_booted():
    """Before: free now."""
    site = _vega({"c03": "IDLE+POWERING_DOWN", "c04": "IDLE+POWERING_DOWN"}, **FULL)
    v = _place("#SBATCH -p main -N 1 -n 32 -t 1:00:00", site).verdict("vega")
    assert seconds_to_start(v) == pytest.approx(420)
    assert any("c03, c04 being powered down: no job there until it is off, within 120 s "
               "(the site's SuspendTimeout), and booted again, within 300 s" in n
               for n in v.notes), v.notes


@pytest.mark.parametrize("first_end_h, chosen", [(1 / 60, "lyra"), (2, "vega")])
def test_a_site_up_now_that_frees_sooner_is_preferred_to_a_boot(first_end_h, chosen):
    """vega: only powered-down nodes free (a boot of up to 300 s); lyra: every node busy,
    its first job ending after `first_end_h`: the sooner start wins. Before: vega always
    (READY at once)."""
    vega = _vega({"c03": "IDLE+POWERED_DOWN", "c04": "IDLE+POWERED_DOWN"}, **FULL)
    busy = {"c01": 64, "c02": 64, "c03": 32, "c04": 32}
    lyra = _vega({}, name="lyra", alloc=busy, queue=tuple(
        running(str(10 + i), node, cpus, first_end_h if node == "c03" else 3)
        for i, (node, cpus) in enumerate(busy.items())))
    p = _place("#SBATCH -p main -N 1 -n 32 -t 1:00:00", vega, lyra)
    assert p.ranked[0].site == chosen, p.explain()


# -- LSF shared resources in use ----------------------------------------------------------

BHOSTS_S = """RESOURCE                 TOTAL       RESERVED       LOCATION
matlab                    10.0            8.0       w1 w2 w3 w4
abaqus_tok                  40            0.0       w1 w2 w3 w4
scratch_gb               500.0          400.0       w1 w2
scratch_gb               800.0          700.0       w3
                                                    w4
"""


def _rusage(jid: str, resreq: str, slots: int = 4, name: str | None = None) -> dict:
    return {"JOBID": jid, "JOB_NAME": name or f"j{jid}", "SLOTS": str(slots),
            "EFFECTIVE_RESREQ": f"select[type == local] order[r15s:pg] {resreq}"}


# job 1 on w1 reserves 5 matlab until +1 h, job 2 on w3 3 until +2 h; job 3 on w2 100 GB
# of w1-w2's scratch until +1 h, job 4 on w4 700 GB of w3-w4's until +3 h
JOBS = (_wjob("1", "bob", 4, "w1", 1), _wjob("2", "bob", 4, "w3", 2),
        _wjob("3", "bob", 4, "w2", 1), _wjob("4", "bob", 4, "w4", 3))
RUSAGE = json.dumps({"COMMAND": "bjobs", "JOBS": 4, "RECORDS": [
    _rusage("1", "rusage[matlab=5.00:duration=10]"),
    _rusage("2", "rusage[matlab=3.00,mem=1000.00]"),
    _rusage("3", "rusage[scratch_gb=25.00/task]"),
    _rusage("4", "rusage[scratch_gb=700.00]")]})


def wren(bhosts_s: str = BHOSTS_S, rusage: str | None = RUSAGE, jobs=JOBS):
    used: dict[str, int] = {}
    for j in jobs:
        host = j["EXEC_HOST"].split("*")[1]
        used[host] = used.get(host, 0) + int(j["SLOTS"])
    hosts = {"RECORDS": [{"HOST_NAME": h, "STATUS": "ok", "MAX": str(c),
                          "NJOBS": str(used.get(h, 0)), "RUN": str(used.get(h, 0))}
                         for h, _, c, _, _ in WREN]}
    lshosts = {"RECORDS": [{"HOST_NAME": h, "type": "X86_64", "model": m, "ncpus": str(c),
                            "maxmem": mem, "RESOURCES": res} for h, m, c, mem, res in WREN]}
    queues = {"RECORDS": [{"QUEUE_NAME": "normal", "STATUS": "Open:Active", "MAX": "-",
                           "RUNLIMIT": "1440.0 min"}]}
    outputs = {"hosts": json.dumps(hosts), "lshosts": json.dumps(lshosts),
               "queues": json.dumps(queues), "queue": json.dumps({"RECORDS": list(jobs)}),
               "user": "alice\n", "shared_resources": bhosts_s,
               "resource_names": "RESOURCE_NAME TYPE ORDER DESCRIPTION\nmatlab Numeric Dec x\n"
                                 "abaqus_tok Numeric Dec x\nscratch_gb Numeric Dec x\n",
               **({"job_rusage": rusage} if rusage is not None else {})}
    snap = LsfCommands(tz=timezone.utc).parse_snapshot("wren", outputs)
    snap = snap.model_copy(update={"taken_at": NOW})
    snap.partitions[0].default = True
    return SiteConfig(name="wren", scheduler="lsf"), snap


def lsf_verdict(rusage: str, site=None):
    spec = Federation.parse(f'#!/bin/bash\n#BSUB -n 4\n#BSUB -W 1:00\n#BSUB -R "{rusage}"\n'
                            "./app\n", "lsf")
    return place(spec, [site or wren()], now=NOW).verdict("wren")


def test_bhosts_s_and_each_jobs_reservation_are_read_with_every_queue():
    assert parse_shared_instances(BHOSTS_S) == {
        "matlab": [LsfSharedInstance(total=10, reserved=8, hosts=["w1", "w2", "w3", "w4"])],
        "abaqus_tok": [LsfSharedInstance(total=40, reserved=0,
                                         hosts=["w1", "w2", "w3", "w4"])],
        "scratch_gb": [LsfSharedInstance(total=500, reserved=400, hosts=["w1", "w2"]),
                       LsfSharedInstance(total=800, reserved=700, hosts=["w3", "w4"])]}
    assert parse_shared_instances("") is None
    assert parse_shared_instances("No resource defined\n") == {}
    # /task: times the job's slots; duration and decay are no resource
    assert parse_job_rusage(RUSAGE) == {"1": {"matlab": 5.0}, "2": {"matlab": 3.0,
                                                                     "mem": 1000.0},
                                        "3": {"scratch_gb": 100.0},
                                        "4": {"scratch_gb": 700.0}}
    # an array element by its record id; alternatives (which one is held is not said) and
    # an LSF that does not know the field are not read
    assert parse_job_rusage(json.dumps({"RECORDS": [
        _rusage("9", "rusage[matlab=1]", name="arr[3]"),
        _rusage("10", "rusage[matlab=1 || abaqus_tok=4]")]})) == {"9[3]": {"matlab": 1.0}}
    assert parse_job_rusage("bjobs: Illegal field name effective_resreq\n") is None
    assert parse_job_rusage("") is None
    argvs = LsfCommands().snapshot_argvs()
    assert "effective_resreq" in " ".join(argvs["job_rusage"])
    assert {"shared_resources", "job_rusage"} <= LsfCommands.live_outputs
    _, snap = wren()
    assert {j.native_id: j.shared_use for j in snap.jobs} == parse_job_rusage(RUSAGE)
    assert wren(rusage=None)[1].jobs[0].shared_use is None


LSF_CASES = [
    # (rusage, verdict, hours to its start (None: not known), what is said)
    ("rusage[matlab=2]", "READY", 0.0, None),
    # 4 matlab: 2 free, job 1's 5 back at +1 h
    ("rusage[matlab=4]", "BUSY", 1.0, "4 of shared resource 'matlab' asked, 2 free now (10 for "
     "scheduling, 8 reserved: bhosts -s): it waits until enough of the running jobs "
     "reserving it (8) end"),
    # 9: jobs 1 and 2 both (+2 h)
    ("rusage[matlab=9]", "BUSY", 2.0, "9 of shared resource 'matlab' asked"),
    # scratch: w1-w2's instance has 100 free, job 3 gives back 100 at +1 h; w3-w4's 100
    # free, job 4's 700 at +3 h: the sooner instance
    ("rusage[scratch_gb=150]", "BUSY", 1.0, "150 of shared resource 'scratch_gb' asked, "
     "100 free now (500 for scheduling, 400 reserved: bhosts -s)"),
    ("rusage[scratch_gb=300]", "BUSY", 3.0, "300 of shared resource 'scratch_gb' asked, "
     "100 free now (800 for scheduling, 700 reserved"),
    # alternatives: abaqus is free now
    ("rusage[matlab=4 || abaqus_tok=4]", "READY", 0.0, None),
    ("rusage[matlab=4:abaqus_tok=4]", "BUSY", 1.0, "4 of shared resource 'matlab'"),
]


@pytest.mark.parametrize("rusage, expect, start_h, said", LSF_CASES,
                         ids=[c[0] for c in LSF_CASES])
def test_an_lsf_job_waits_for_shared_resources_until_the_jobs_reserving_them_end(
        rusage, expect, start_h, said):
    """Before: every one READY now."""
    v = lsf_verdict(rusage)
    assert v.verdict == expect, v.notes
    assert (v.estimated_start - NOW) / timedelta(hours=1) == pytest.approx(start_h, abs=0.02)
    if said:
        assert any(said in w for w in v.waits_for), v.notes
    else:
        assert not v.waits_for


def test_an_lsf_wait_not_known_is_said():
    # the jobs' reservations not read: waits, for how long not known
    v = lsf_verdict("rusage[matlab=4]", wren(rusage=None))
    assert v.verdict == "BUSY" and v.estimated_start is None
    assert any("4 of shared resource 'matlab' asked, 2 free now (10 for scheduling, 8 "
               "reserved: bhosts -s): it waits until enough is given back, by jobs whose "
               "reservations are not read here (when is not known)" in n for n in v.notes)
    # reserved by no running job here (pending jobs' reservations, another cluster's)
    v = lsf_verdict("rusage[matlab=4]", wren(rusage=json.dumps({"RECORDS": [
        _rusage(j, "rusage[mem=100]") for j in "1234"]})))
    assert v.verdict == "BUSY" and v.estimated_start is None
    assert any("more than the running jobs here reserve (0) gives back (when is not known)"
               in n for n in v.notes), v.notes


# -- Slurm licenses as alternatives -------------------------------------------------------

LICENSES = ("LicenseName=matlab Total=10 Used=2 Free=8 Reserved=0 Remote=no\n"
            "LicenseName=fluent Total=4 Used=4 Free=0 Reserved=0 Remote=no\n")


def _licensed(asked: str):
    cfg, snap = _vega({})
    snap = snap.model_copy(update={"licenses": slurm.parse_licenses(LICENSES),
                                   "licenses_free": slurm.parse_licenses(LICENSES, free=True)})
    return _place(f"#SBATCH -n 1 -t 1:00:00 -L {asked}", (cfg, snap)).verdict("vega")


@pytest.mark.parametrize("asked", ["fluent:1|matlab:1", "fluent|matlab:2", "matlab=1|fluent"])
def test_licenses_asked_as_alternatives_take_any_one(asked):
    v = _licensed(asked)
    assert (v.verdict, seconds_to_start(v)) == ("READY", 0), v.reasons + v.notes


@pytest.mark.parametrize("asked", ["fluent:1|matlab:1,matlab:2", "matlab;fluent|matlab"])
def test_licenses_asked_both_all_and_any_one_are_refused_as_sbatch_does(asked):
    """Before: placed as any one of them."""
    v = _licensed(asked)
    assert v.verdict == "INCOMPATIBLE"
    assert v.reasons == [f"--licenses={asked}: asks all of some licenses (',') and any one "
                         "of others ('|') at once, which Slurm does not take (AND and OR "
                         "cannot both be used): sbatch refuses the job (Invalid license "
                         "specification); ask either all of them, a,b, or any one, a|b"]


def test_licenses_separated_by_semicolons_are_all_asked():
    # `;` is Slurm's other AND: fluent is not free
    v = _licensed("matlab:1;fluent:1")
    assert v.verdict == "BUSY"
