"""A slurmrestd site's priorities: what it serves is read, and the job keeps today's place.

slurmrestd serves each job's `priority` (GET jobs), each QOS's (slurmdb), the user's
FairShare factor and LevelFS (`GET shares`, v0.0.40 on) and each partition's
PriorityJobFactor, but neither PriorityType nor the PriorityWeight* of slurm.conf: the new
job's own priority cannot be summed. Placement then says so once (`SITE not checked:
priority factor weights (slurmrestd does not report them)`) and keeps the job behind every
waiting job. With the weights known, the factors it reads weigh the job as the CLI's do.

The replies are the recorded ones (tests/fixtures/outputs/slurmrestd/) with priorities
set; the placement case is selene of test_placement_slurm_new_job_priority.
"""

from __future__ import annotations

import json
from pathlib import Path

from test_placement_cases import hours
from test_placement_slurm_new_job_priority import FOUR, _one, factors, selene

from diamond_jupyter.dialects import slurm_rest
from diamond_jupyter.model import UNREPORTED_PRIORITY_WEIGHTS, JobState

REPLIES = Path(__file__).parent / "fixtures" / "outputs" / "slurmrestd"
WEIGHTS_UNREPORTED = "priority factor weights (slurmrestd does not report them)"


def _reply(name: str) -> dict:
    return json.loads((REPLIES / name).read_text())


def _qos_reply(priorities: dict[str, int]) -> str:
    """The recorded v0.0.41 QOS reply with each QOS's priority (wrapped) set."""
    data = _reply("qos_v0.0.41.json")
    for q in data["qos"]:
        if q["name"] in priorities:
            q["priority"] = {"set": True, "infinite": False, "number": priorities[q["name"]]}
    return json.dumps(data)


def _shares_reply(factor: float) -> str:
    """The recorded v0.0.41 shares reply with alice's FairShare factor under proj set."""
    data = _reply("shares_v0.0.41.json")
    for row in data["shares"]["shares"]:
        if row["name"] == "alice":
            row["fairshare"]["factor"]["number"] = factor
    return json.dumps(data)


def _jobs_reply(priorities: dict[str, int], wrapped: bool) -> str:
    """The recorded GET jobs reply, its first jobs waiting with these ids and priorities
    (plain as v0.0.38 writes them, else wrapped as v0.0.40 on)."""
    data = _reply("jobs.json")
    template = data["jobs"][0]
    data["jobs"] = []
    for jid, prio in priorities.items():
        job = json.loads(json.dumps(template))
        job.update(job_id=int(jid), job_state="PENDING", priority={
            "set": True, "infinite": False, "number": prio} if wrapped else prio)
        data["jobs"].append(job)
    return json.dumps(data)


def _rest_snapshot(api_version: str):
    outputs = {"queue": _jobs_reply({"41": 3000, "42": 2000}, wrapped=api_version != "v0.0.38"),
               "nodes": (REPLIES / "nodes.json").read_text(),
               "partitions": (REPLIES / "partitions.json").read_text(),
               "qos": _qos_reply({"normal": 0, "wide": 100}),
               slurm_rest.SHARES: _shares_reply(0.62), "user": "alice"}
    return slurm_rest.parse_snapshot("selene", outputs, api_version=api_version)


def test_what_slurmrestd_serves_of_the_priorities_is_read():
    snap = _rest_snapshot("v0.0.41")
    assert snap.job_priorities == {"41": 3000, "42": 2000}
    prio = snap.priority
    assert prio is not None and (prio.plugin, prio.weights) == (None, {})
    assert (prio.fair_share, prio.level_fs) == ({"proj": 0.62}, {"proj": "1"})
    assert prio.qos_priority == {"normal": 0, "wide": 100, "gpuq": 0, "short": 0}
    assert snap.unreported[UNREPORTED_PRIORITY_WEIGHTS] == "slurmrestd v0.0.41"
    assert [p.priority_job_factor for p in snap.partitions] == [1]
    # v0.0.38: plain numbers, and no shares call (its fair share not known, said why)
    old = _rest_snapshot("v0.0.38")
    assert old.job_priorities == {"41": 3000, "42": 2000}
    assert old.priority is not None and old.priority.fair_share is None
    assert old.priority.unread["fair share"] == "slurmrestd v0.0.38 has no shares call"
    assert old.priority.qos_priority == prio.qos_priority


def test_the_weights_not_reported_are_said_once_and_the_job_keeps_its_place():
    """selene's jobs 41-43 wait; over slurmrestd the job goes behind all three (+35 h),
    where the CLI's weights put it after job 41 only (+15 h)."""
    cfg, snap = selene(factors())
    rest = _rest_snapshot("v0.0.41")
    over_rest = snap.model_copy(update={
        "priority": rest.priority, "unreported": rest.unreported})
    v, p = _one(FOUR, (cfg, over_rest))
    assert v.estimated_start == hours(35), p.explain()
    assert v.not_checked.count(WEIGHTS_UNREPORTED) == 1, v.not_checked
    assert p.explain().count(f"selene not checked: {WEIGHTS_UNREPORTED}") == 1, p.explain()
    assert not any("your job's priority" in n for n in v.notes)
    # a job that may run in two partitions hears it once too
    v, p = _one(FOUR.replace("-p batch", "-p batch,big"), (cfg, over_rest))
    assert v.not_checked.count(WEIGHTS_UNREPORTED) == 1, p.explain()
    # no job waits: nothing to order, nothing said
    idle = over_rest.model_copy(update={
        "jobs": [j for j in over_rest.jobs if j.state != JobState.PENDING]})
    v, _ = _one(FOUR, (cfg, idle))
    assert WEIGHTS_UNREPORTED not in v.not_checked


def test_with_the_weights_known_the_factors_read_weigh_the_job_as_the_cli_s_do():
    """The CLI's weights with slurmrestd's fair share (0.62), QOS priorities and job
    priorities: priority 2410, after job 41 only (+15 h), as on the CLI path."""
    cfg, snap = selene(factors())
    assert snap.priority is not None
    rest = _rest_snapshot("v0.0.41")
    assert rest.priority is not None
    weighed = rest.priority.model_copy(update={
        "plugin": snap.priority.plugin, "weights": snap.priority.weights,
        "default_account": "proj", "qos_priority": {"normal": 0, "high": 100}})
    jobs = json.loads(_jobs_reply({"41": 3000, "42": 2000, "43": 1500}, wrapped=True))
    over_rest = snap.model_copy(update={
        "priority": weighed, "unreported": rest.unreported,
        "job_priorities": slurm_rest.job_priorities(json.dumps(jobs))})
    v, p = _one(FOUR, (cfg, over_rest))
    cli, _ = _one(FOUR, selene(factors()))
    assert v.estimated_start == cli.estimated_start == hours(15), p.explain()
    assert [n for n in v.notes if "your job's priority ~ 2410" in n] == \
        [n for n in cli.notes if "your job's priority ~ 2410" in n] != []
    assert WEIGHTS_UNREPORTED not in v.not_checked
