"""A waiting Slurm job's GPUs asked per job (`--gpus=N`), per task (`--gpus-per-task`) or
per socket (`--gpus-per-socket`), not per node (squeue's %b): read from the snapshot's one
`squeue -O` query beside the queue (tres-per-job, tres-per-task x NumTasks,
tres-per-socket x Sockets x nodes), from `squeue --json` and slurmrestd, and placed.

Before, only %b (tres_per_node) was read in squeue's text, so such a job counted 0 GPUs
and a probe that delays it was planned to start at once. Placement cases worked by hand:
site lyra, GPU nodes of 64 CPUs and 4 a100 each, partition gpu; NOW is 09:00."""

from __future__ import annotations

import json
from datetime import timedelta, timezone

import pytest
from test_placement_cases import NOW, run

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.dialects import slurm_rest
from diamond_jupyter.dialects.slurm_commands import (
    QUEUE_JOB_FIELDS,
    SlurmCommands,
    gpus_asked,
    gpus_of_jobs,
)
from diamond_jupyter.model import JobState, JobStatus

UTC = timezone.utc
slurm = SlurmCommands(tz=UTC)


def hours(n: float):
    return NOW + timedelta(hours=n)


def _wrapped(n: int | None) -> dict:
    """A number as data_parser v0.0.39 and later wrap it."""
    return {"set": n is not None, "infinite": False, "number": n or 0}


# ------------------------------------------------------------------------ reading the forms

@pytest.mark.parametrize(("kwargs", "gpus"), [
    # per node (%b) x nodes: 2 nodes x 4
    ({"nodes": 2, "per_node": "gres/gpu:a100:4"}, 8),
    # per job, 22.05's `gres:` and 23.02's `gres/` spellings, typed or not
    ({"nodes": 1, "per_job": "gres:gpu:4"}, 4),
    ({"nodes": 1, "per_job": "gres/gpu:a100:4"}, 4),
    # GPUs of several types asked per job: their sum
    ({"nodes": 1, "per_job": "gres/gpu:a100:2,gres/gpu:v100:1"}, 3),
    # per task x tasks, beside the CPUs a task (`--cpus-per-task`) in the same field
    ({"nodes": 1, "per_task": "cpu=4,gres/gpu=1", "tasks": 4}, 4),
    ({"nodes": 1, "per_task": "cpu:4,gres:gpu:2", "tasks": 3}, 6),
    # tasks not said (`N/A`, 0): at least one task a node
    ({"nodes": 2, "per_task": "gres/gpu:1", "tasks": None}, 2),
    ({"nodes": 3, "per_task": "gres/gpu:1", "tasks": 0}, 3),
    # per socket x sockets a node x nodes (`--sockets-per-node`, which Slurm requires)
    ({"nodes": 2, "per_socket": "gres/gpu:2", "sockets": 2}, 8),
    ({"nodes": 1, "per_socket": "gres/gpu:2", "sockets": None}, 2),
    # a total (tres-alloc, tres_req_str) counting typed GPUs twice: once
    ({"nodes": 1, "in_all": "cpu=8,mem=64G,node=1,billing=8,gres/gpu=2,gres/gpu:a100=2"}, 2),
    # several forms, as Slurm makes them agree: --gpus=4 --gpus-per-node=2 sets 2 nodes;
    # --gpus=4 --gpus-per-task=2 sets 2 tasks; the job's GPUs are the largest
    ({"nodes": 2, "per_node": "gres/gpu:2", "per_job": "gres/gpu:4"}, 4),
    ({"nodes": 1, "per_job": "gres/gpu:4", "per_task": "gres/gpu:2", "tasks": 2}, 4),
    ({"nodes": 2, "per_node": "gres/gpu:4", "per_task": "gres/gpu:1", "tasks": 8}, 8),
    # none asked: empty, N/A, (null), other TRES only
    ({"nodes": 1, "per_node": "N/A", "per_job": "", "per_task": "(null)",
      "per_socket": "N/A", "in_all": "cpu=4,mem=8G,node=1"}, None),
    ({"nodes": None, "per_task": "cpu=4"}, None),
])
def test_gpus_asked_in_each_form(kwargs, gpus):
    nodes = kwargs.pop("nodes")
    assert gpus_asked(nodes, **kwargs) == gpus


def qos_line(jid: str, state: str = "PD", *, alloc: str = "cpu=4,node=1,billing=4",
             per_job: str = "N/A", per_task: str = "N/A", per_socket: str = "N/A",
             tasks: str = "1", sockets: str = "*") -> str:
    """One job as `squeue -h -a -O QUEUE_JOB_FIELDS` prints it (each field ended by '|')."""
    return (f"{jid}|normal|proj|OK|{state}|{alloc}|{per_job}|{per_task}|{per_socket}|"
            f"{tasks}|{sockets}|")


def test_the_snapshot_asks_the_gpu_forms_in_its_one_squeue_O_query():
    argvs = slurm.snapshot_argvs()
    assert argvs["queue_qos"][-5:] == ["squeue", "-h", "-a", "-O", QUEUE_JOB_FIELDS]
    # Slurm 22.05's names (its squeue has each); the earlier fields keep their places
    assert QUEUE_JOB_FIELDS.split(",")[5:] == [
        "tres-alloc:0|", "tres-per-job:0|", "tres-per-task:0|", "tres-per-socket:0|",
        "NumTasks:0|", "Sockets:0|", "Licenses:0|", "Dependency:0|"]
    assert sum(a == "squeue" for argv in argvs.values() for a in argv) == 2  # queue, -O


def test_gpus_of_jobs_reads_each_form_by_job_id():
    jobs = [JobStatus(native_id=i, state=JobState.PENDING, nodes=n, gpus=g)
            for i, n, g in (("11", 1, None), ("12", 1, None), ("13_[1-4]", 2, None),
                            ("14+1", 1, None), ("15", 2, 4), ("16", 1, 2), ("17", 1, None))]
    text = "\n".join((
        qos_line("11", per_job="gres/gpu:4"),
        qos_line("12", per_task="cpu=2,gres/gpu=1", tasks="4"),
        qos_line("13_[1-4]", per_socket="gres/gpu:1", sockets="2"),
        qos_line("14+1", alloc="cpu=4,node=1,billing=4,gres/gpu=3"),
        # --gpus=4 --gpus-per-node=2 on 2 nodes: %b x nodes already says 4
        qos_line("15", per_job="gres/gpu:4"),
        # padded by a width, as an older query's fields: still read
        "16   |normal |proj |OK  |PD |cpu=1,node=1 |gres:gpu:3  |N/A |N/A |1 |* |",
        # a line of the older six fields: nothing more said
        "17|normal|proj|OK|PD|cpu=4,node=1|",
        "garbage"))
    assert [j.gpus for j in gpus_of_jobs(text, jobs)] == [4, 4, 4, 3, 4, 3, None]
    # nothing read (no -O answer): the jobs as they were
    assert gpus_of_jobs("", jobs) == jobs


def test_squeue_json_and_slurmrestd_read_gpus_per_job_task_and_socket():
    base = {"job_state": ["PENDING"], "user_name": "bob", "partition": "gpu",
            "cpus": _wrapped(4), "time_limit": _wrapped(120), "tres_alloc_str": "",
            "tres_per_node": "", "tres_per_job": "", "tres_per_task": "",
            "tres_per_socket": ""}
    reply = json.dumps({"jobs": [
        base | {"job_id": 21, "node_count": _wrapped(1), "tres_per_job": "gres/gpu:4"},
        base | {"job_id": 22, "node_count": _wrapped(1), "tasks": _wrapped(4),
                "tres_per_task": "cpu=1,gres/gpu=1"},
        base | {"job_id": 23, "node_count": _wrapped(2), "sockets_per_node": _wrapped(2),
                "tres_per_socket": "gres/gpu:1"},
        # v0.0.38's flat numbers, an unset socket count and a per-node ask
        base | {"job_id": 24, "node_count": 2, "tasks": 2, "sockets_per_node": {
            "set": False, "infinite": False, "number": 0}, "tres_per_node": "gres:gpu:2"},
        # running: what it holds
        base | {"job_id": 25, "job_state": ["RUNNING"], "node_count": _wrapped(1),
                "tres_alloc_str": "cpu=4,node=1,gres/gpu=2", "tres_per_job": "gres/gpu:2"},
        base | {"job_id": 26, "node_count": _wrapped(1)},
    ], "errors": [], "warnings": []})
    want = {"21": 4, "22": 4, "23": 4, "24": 4, "25": 2, "26": None}
    assert {j.native_id: j.gpus for j in slurm.parse_status_json(reply)} == want
    assert {j.native_id: j.gpus for j in slurm_rest.parse_jobs(reply)} == want


@pytest.mark.parametrize(("path", "gpus"), [
    ("slurm/squeue.json", {"7": 1, "18": 2}), ("slurm/squeue_suspended.json", {"7": 1}),
    ("slurmrestd/jobs.json", {})])
def test_recorded_squeue_json_reads_as_before(path, gpus):
    # the recordings of Slurm 22.05 (GPUs asked per node only, tres_per_job/_task/_socket
    # empty): the same GPUs as before
    from pathlib import Path

    text = (Path(__file__).parent / "fixtures" / "outputs" / path).read_text()
    assert {j.native_id: j.gpus for j in slurm.parse_status_json(text) if j.gpus} == gpus


# ------------------------------------------------------------------------ placement cases

def _node(name: str, cpus_alloc: int = 0, gpus_alloc: int = 0) -> str:
    alloc = f"cpu={cpus_alloc},gres/gpu={gpus_alloc}" if cpus_alloc else ""
    return (f"NodeName={name} Arch=x86_64 CPUAlloc={cpus_alloc} CPUTot=64 "
            f"RealMemory=256000 AllocMem=0 Gres=gpu:a100:4 Sockets=2 CoresPerSocket=32 "
            f"ThreadsPerCore=1 State={'MIXED' if cpus_alloc else 'IDLE'} Partitions=gpu "
            f"AllocTRES={alloc}")


# the running job: 8 CPUs and 2 GPUs of g1 since 08:00, a 2 h limit (ends 10:00, +1 h)
RUNNING = ("10|RUNNING|2026-03-01T08:00:00|2026-03-01T10:00:00|2026-03-01T07:00:00|"
           "2:00:00|1|8|alice|gpu|gres/gpu:a100:2|g1|None||train")


def waiting(nodes: int = 1, cpus: int = 4, per_node: str = "N/A") -> str:
    """Job 11, waiting first in line (Priority), 2 h limit, no start estimate."""
    return (f"11|PENDING|N/A|N/A|2026-03-01T08:30:00|2:00:00|{nodes}|{cpus}|bob|gpu|"
            f"{per_node}||Priority||big")


def lyra(queue_qos: str, *, nodes: int = 1, waiting_line: str | None = None):
    names = [f"g{i}" for i in range(1, nodes + 1)]
    outputs = {
        "partitions": f"PartitionName=gpu Default=YES MaxTime=1-00:00:00 "
                      f"Nodes=g[1-{nodes}] State=UP",
        "nodes": "\n".join(_node(n, 8, 2) if n == "g1" else _node(n) for n in names),
        "queue": "\n".join((RUNNING, waiting_line or waiting())),
        "queue_qos": queue_qos}
    snap = slurm.parse_snapshot("lyra", outputs)
    return (SiteConfig(name="lyra", scheduler="slurm", metadata={"architecture": "x86_64"}),
            snap.model_copy(update={"taken_at": NOW}))


PER_JOB_4 = "\n".join((qos_line("10", "R", alloc="cpu=8,node=1,billing=8"),
                       qos_line("11", per_job="gres/gpu:4")))


def probe(hours_limit: str, gpus: int = 1) -> str:
    return f"#SBATCH -p gpu\n#SBATCH -n 1\n#SBATCH --gres=gpu:{gpus}\n#SBATCH -t {hours_limit}"


def test_a_waiting_gpus_4_job_ahead_delays_a_1_gpu_probe_that_would_hold_it_back():
    # g1: 4 GPUs, 2 held by job 10 until 10:00. Job 11 (--gpus=4, first in line) takes
    # all 4 at 10:00 and holds them until 12:00. A 1-GPU probe of 3 h started now on one
    # of the 2 free GPUs would still hold it at 10:00 and push job 11 back: backfill does
    # not start it. It starts when job 11 ends: 12:00 (+3 h). Before, job 11 read 0 GPUs
    # (only %b was read) and the probe was READY now
    site = lyra(PER_JOB_4)
    assert [j.gpus for j in site[1].jobs] == [2, 4]
    v = run(probe("3:00:00"), site).verdict("lyra")
    assert v.feasible and (v.verdict, v.estimated_start) == ("BUSY", hours(3)), v


def test_a_short_1_gpu_probe_still_fills_the_gap_before_the_gpus_4_job():
    # 30 min on a free GPU ends at 09:30, before job 11 can start (10:00): backfill
    # starts it now
    v = run(probe("0:30:00"), lyra(PER_JOB_4)).verdict("lyra")
    assert (v.verdict, v.estimated_start) == ("READY", NOW), v


def test_the_same_queue_read_without_the_gpu_fields_keeps_the_old_reading():
    # an -O answer of the older six fields (an engine before these fields): job 11's
    # GPUs are not known, as before, and the 3 h probe is planned at once
    old = "\n".join(("10|normal|proj|OK|R|cpu=8,node=1,billing=8|",
                     "11|normal|proj|OK|PD|cpu=4,node=1,billing=4|"))
    site = lyra(old)
    assert [j.gpus for j in site[1].jobs] == [2, None]
    v = run(probe("3:00:00"), site).verdict("lyra")
    assert (v.verdict, v.estimated_start) == ("READY", NOW), v


@pytest.mark.parametrize("line", [
    # -n 4 --gpus-per-task=1 (with --cpus-per-task=1 in the same field, as 23.02+ says it)
    qos_line("11", per_task="cpu=1,gres/gpu=1", tasks="4"),
    # --sockets-per-node=2 --gpus-per-socket=2
    qos_line("11", per_socket="gres/gpu:2", sockets="2"),
    # a site tracking gres/gpu: the waiting job's tres-alloc is what it asks, GPUs too
    qos_line("11", alloc="cpu=4,node=1,billing=4,gres/gpu=4"),
])
def test_gpus_per_task_or_socket_delay_the_probe_the_same(line):
    site = lyra("\n".join((qos_line("10", "R"), line)))
    assert site[1].jobs[1].gpus == 4
    v = run(probe("3:00:00"), site).verdict("lyra")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(3)), v


def test_gpus_per_job_beyond_one_node_take_as_many_nodes_as_they_need():
    # g1 (2 of 4 GPUs held until 10:00) and g2 (idle). Job 11 asks --gpus=8: squeue counts
    # it 1 node (its least), but no node has 8: it takes g1 and g2 at 10:00 until 12:00.
    # A 1-GPU 3 h probe on g2 now would push it back: it starts at 12:00. Read as 8 GPUs
    # on one node, job 11 could never start and blocked nobody (the probe READY now)
    site = lyra("\n".join((qos_line("10", "R"), qos_line("11", per_job="gres/gpu:8"))),
                nodes=2)
    assert site[1].jobs[1].gpus == 8
    v = run(probe("3:00:00"), site).verdict("lyra")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(3)), v
    # 30 min fits before 10:00 on g2
    v = run(probe("0:30:00"), site).verdict("lyra")
    assert (v.verdict, v.estimated_start) == ("READY", NOW), v


def test_a_waiting_job_asking_gpus_per_node_is_read_as_before():
    # %b, 1 node x 4 GPUs, and no other form: the reading of sweep 16, unchanged
    site = lyra("\n".join((qos_line("10", "R"), qos_line("11"))),
                waiting_line=waiting(per_node="gres/gpu:a100:4"))
    assert site[1].jobs[1].gpus == 4
    v = run(probe("3:00:00"), site).verdict("lyra")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(3)), v


def test_slurmrestd_site_plans_the_gpus_4_job_the_same():
    nodes = json.dumps({"nodes": [
        {"name": "g1", "state": ["MIXED"], "cpus": 64, "alloc_cpus": 8,
         "real_memory": 256000, "gres": "gpu:a100:4", "gres_used": "gpu:a100:2",
         "partitions": ["gpu"], "architecture": "x86_64"}]})
    parts = json.dumps({"partitions": [
        {"name": "gpu", "nodes": {"configured": "g1"}, "partition": {"state": ["UP"]},
         "maximums": {"time": _wrapped(1440)}}]})
    common = {"user_name": "x", "partition": "gpu", "time_limit": _wrapped(120),
              "node_count": _wrapped(1), "tres_per_node": ""}
    queue = json.dumps({"jobs": [
        common | {"job_id": 10, "job_state": ["RUNNING"], "cpus": _wrapped(8),
                  "start_time": _wrapped(int((NOW - timedelta(hours=1)).timestamp())),
                  "nodes": "g1", "tres_alloc_str": "cpu=8,node=1,gres/gpu=2"},
        common | {"job_id": 11, "job_state": ["PENDING"], "cpus": _wrapped(4),
                  "state_reason": "Priority", "start_time": _wrapped(0),
                  "tres_per_job": "gres/gpu:4"}], "errors": []})
    snap = slurm_rest.parse_snapshot("lyra", {"nodes": nodes, "partitions": parts,
                                              "queue": queue})
    assert [j.gpus for j in snap.jobs] == [2, 4]
    site = (SiteConfig(name="lyra", scheduler="slurm", metadata={"architecture": "x86_64"}),
            snap.model_copy(update={"taken_at": NOW}))
    v = run(probe("3:00:00"), site).verdict("lyra")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(3)), v
