"""What a slurmrestd site reads that the CLI path reads too: a waiting job's dependency
(`dependency` of GET jobs, squeue's %E text), the power-saving ResumeTimeout and
SuspendTimeout (a partition's `timeouts` from v0.0.40 on, only where every partition sets
the same); and what no slurmrestd serves (MaxArraySize, bf_window: slurm.conf's; a QOS's
GrpSubmitJobs) stays not known, never a wrong limit. Replies recorded from Slurm 22.05.8's
slurmrestd (v0.0.38), later shapes from their published schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from diamond_jupyter.dialects import slurm_rest
from diamond_jupyter.dialects.slurm_commands import parse_job_dependencies

FIX = Path(__file__).parent / "fixtures" / "outputs" / "slurmrestd"
REST = slurm_rest.RestCommands()


def recorded(name: str) -> dict:
    return json.loads((FIX / name).read_text(encoding="utf-8"))


def snapshot(jobs: dict, partitions: str | None = None, api_version: str = "v0.0.38"):
    return slurm_rest.RestCommands(api_version=api_version).parse_snapshot("beta-rest", {
        "queue": json.dumps(jobs), "nodes": (FIX / "nodes.json").read_text(),
        "partitions": partitions or (FIX / "partitions.json").read_text()})


def test_recorded_jobs_without_a_dependency_have_none():
    snap = snapshot(recorded("jobs.json"))
    assert snap.jobs and all(j.dependency is None for j in snap.jobs)


@pytest.mark.parametrize("value, expected", [
    ("afterok:900013(unfulfilled)", "afterok:900013(unfulfilled)"),
    ("afterany:900013_*(unfulfilled)?singleton(unfulfilled)",
     "afterany:900013_*(unfulfilled)?singleton(unfulfilled)"),
    ("(null)", None),
    ("afterok:1; rm -rf ~", None),  # not squeue's shape: not read
    (17, None),
])
def test_a_waiting_jobs_dependency_reads_as_the_cli_reads_squeue(value, expected):
    data = recorded("jobs.json")
    waiting = next(j for j in data["jobs"] if j["job_state"] == "PENDING")
    waiting["dependency"] = value
    snap = snapshot(data)
    (job,) = [j for j in snap.jobs if j.native_id == str(waiting["job_id"])]
    assert job.dependency == expected
    if isinstance(value, str):  # the same text through the CLI's squeue -O reading
        line = f"{waiting['job_id']}|" + "x|" * 11 + f"{value}|"
        assert parse_job_dependencies(line).get(str(waiting["job_id"])) == expected


def test_v0038_serves_no_timeouts_array_size_nor_backfill_window():
    snap = snapshot(recorded("jobs.json"))
    assert (snap.node_timeouts, snap.max_array_size, snap.bf_window_s) == (None, None, None)
    # each said as not reported (placement says so where it matters: not checked)
    assert snap.unreported == {"MaxArraySize": "slurmrestd v0.0.38",
                               "bf_window": "slurmrestd v0.0.38",
                               "TRES-minutes used": "slurmrestd v0.0.38",
                               "priority factor weights": "slurmrestd v0.0.38",
                               "SchedulerType": "slurmrestd v0.0.38"}


def _partition_v41(name: str, resume: dict, suspend: dict) -> dict:
    return {"name": name, "partition": {"state": ["UP"]}, "nodes": {"configured": "c1",
            "total": 1}, "cpus": {"total": 4}, "maximums": {"time": {"set": True,
            "infinite": True, "number": 0}}, "timeouts": {"resume": resume,
                                                          "suspend": suspend}}


def _n(number: int, *, set_: bool = True) -> dict:
    return {"set": set_, "infinite": False, "number": number}


def test_v0041_partitions_that_agree_give_the_sites_timeouts():
    parts = json.dumps({"partitions": [_partition_v41("a", _n(600), _n(45)),
                                       _partition_v41("b", _n(600), _n(45))]})
    snap = snapshot(recorded("jobs.json"), parts, "v0.0.41")
    assert snap.node_timeouts == {"ResumeTimeout": 600.0, "SuspendTimeout": 45.0}


def test_v0041_partitions_that_differ_or_do_not_set_one_leave_it_not_known():
    parts = json.dumps({"partitions": [_partition_v41("a", _n(600), _n(0, set_=False)),
                                       _partition_v41("b", _n(300), _n(0, set_=False))]})
    assert snapshot(recorded("jobs.json"), parts, "v0.0.41").node_timeouts is None
    parts = json.dumps({"partitions": [_partition_v41("a", _n(600), _n(0xFFFE))]})
    assert slurm_rest.partition_timeouts(parts) == {"ResumeTimeout": 600.0}


def test_a_qos_grp_submit_jobs_is_not_read_from_either_recorded_version():
    for name in ("qos_v0.0.38.json", "qos_v0.0.41.json"):
        version = name.removeprefix("qos_").removesuffix(".json")
        qos = slurm_rest.parse_qos((FIX / name).read_text(), version)["normal"]
        assert qos.max_submit_jobs_per_user == 10 and qos.grp_submit_jobs is None
