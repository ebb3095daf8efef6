"""What slurmrestd says that the CLI says too, read alike: a node an admin set DOWN or DRAIN
until a time (`resume_after`, scontrol's ResumeAfterTime) is back then through either path;
and Slurm's marks of "no limit" / "not set" (NO_VAL and INFINITE of 16 and 32 bits, plain
or wrapped as {set, infinite, number}) never read as a real number or a day in 2106, in any
field diamond reads of a recorded reply (Slurm 22.05.8's v0.0.38) or a v0.0.41 one.

22.05.8's slurmrestd (the test bed's) has no `resume_after`; v0.0.39 on wrap it as the
other times: the stand-in slurmrestd serves it at the wire."""

from __future__ import annotations

import copy
import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from stand_in_slurmrestd import StandInSlurmrestd
from test_placement_cases import NOW, at
from test_placement_cases28 import NODES, _node, notes, placed, starts_in, vega

from diamond_jupyter.dialects import slurm_rest
from diamond_jupyter.dialects.outputs_common import parse_kv_line
from diamond_jupyter.dialects.slurm_commands import SlurmCommands
from diamond_jupyter.model import OVER_TIME_UNLIMITED

FIX = Path(__file__).parent / "fixtures" / "outputs" / "slurmrestd"


def _wrapped(n: int | None, *, infinite: bool = False) -> dict[str, Any]:
    return {"set": n is not None or infinite, "infinite": infinite, "number": n or 0}


def _rest_node(line: str) -> dict[str, Any]:
    """One `scontrol -o show node` line as slurmrestd v0.0.41's `GET nodes` gives it."""
    kv = parse_kv_line(line)
    back = kv.get("ResumeAfterTime", "None")
    epoch = None if back == "None" else int(datetime.fromisoformat(back).replace(
        tzinfo=NOW.tzinfo).timestamp())
    return {
        "name": kv["NodeName"], "state": kv["State"].split("+"),
        "cpus": int(kv["CPUTot"]), "effective_cpus": int(kv["CPUEfctv"]),
        "alloc_cpus": int(kv["CPUAlloc"]), "real_memory": int(kv["RealMemory"]),
        "alloc_memory": int(kv["AllocMem"]), "sockets": int(kv["Sockets"]),
        "cores": int(kv["CoresPerSocket"]), "threads": int(kv["ThreadsPerCore"]),
        "temporary_disk": int(kv["TmpDisk"]), "weight": int(kv["Weight"]),
        "gres": "" if kv["Gres"] == "(null)" else kv["Gres"], "gres_used": kv["GresUsed"],
        "features": kv["AvailableFeatures"].split(","),
        "active_features": kv["ActiveFeatures"].split(","),
        "partitions": kv["Partitions"].split(","), "architecture": kv["Arch"],
        "reason": kv.get("Reason", "").split(" [")[0],
        "resume_after": _wrapped(epoch)}


def _out_until(states: dict[str, str], back_h: dict[str, float]) -> str:
    """vega's nodes as scontrol prints them: `states` a node's State, with a Reason, and for
    those of `back_h` its ResumeAfterTime (hours from NOW)."""
    lines = []
    for n in NODES:
        line = _node(n, 0, 0, states.get(n) or ("FUTURE" if n[0] == "f" else "IDLE"))
        if n in states:
            line += " Reason=PSU swap [root@2026-03-01T08:00:00]"
        if n in back_h:
            line = line.replace("ResumeAfterTime=None", f"ResumeAfterTime={at(back_h[n])}")
        lines.append(line)
    return "\n".join(lines) + "\n"


async def _through_slurmrestd(tmp_path: Path, nodes: str):
    """vega read by scontrol, its nodes replaced by what a v0.0.41 slurmrestd serving the
    same nodes gives (asked at the wire, through a RestSite)."""
    replies = {"jobs": '{"jobs": []}', "partitions": '{"partitions": []}',
               "nodes": json.dumps({"nodes": [_rest_node(ln) for ln in nodes.splitlines()],
                                    "errors": []}),
               "reservations": '{"reservations": []}'}
    async with StandInSlurmrestd(replies) as rest:
        snap = await rest.site(tmp_path, api_version="v0.0.41").snapshot(max_age_s=0)
    assert snap.reachable and "nodes" in rest.asked, snap.warnings
    cfg, cli = vega(nodes=nodes)
    return cfg, cli.model_copy(update={"nodes": snap.nodes})


@pytest.mark.parametrize("states, back_h, script", [
    ({"l01": "DOWN", "l02": "IDLE+DRAIN"}, {"l01": 2}, "#SBATCH --mem=1500G -t 2:00:00"),
    ({"b01": "IDLE+DRAIN", "b02": "DOWN"}, {"b01": 1, "b02": 3},
     "#SBATCH -p batch -c 96 -t 2:00:00"),
])
async def test_a_node_back_at_its_resume_after_is_placed_alike_by_slurmrestd_and_scontrol(
        tmp_path, states, back_h, script):
    """Before: slurmrestd's `resume_after` was not read, so l01 (DOWN until +2 h) was out
    for good there and the 1500 GB job refused, while scontrol's ResumeAfterTime planned
    it on l01 at +2 h."""
    nodes = _out_until(states, back_h)
    cli = vega(nodes=nodes)
    rest = await _through_slurmrestd(tmp_path, nodes)
    by_name = {n.name: n for n in cli[1].nodes}
    for node in rest[1].nodes:
        want = by_name[node.name]
        assert (node.state, node.resume_after, node.reason, node.cpus, node.memory_mb,
                node.weight) == (want.state, want.resume_after, want.reason, want.cpus,
                                 want.memory_mb, want.weight), node.name
    assert {n.name: n.resume_after for n in rest[1].nodes if n.resume_after} == {
        n: NOW + timedelta(hours=h) for n, h in back_h.items()}
    p_cli, said_cli = placed(script, cli)
    p_rest, said_rest = placed(script, rest)
    assert starts_in(p_rest) == starts_in(p_cli) == min(back_h.values()), said_rest
    assert p_rest.verdict("vega").partition == p_cli.verdict("vega").partition
    assert [n for n in notes(p_rest) if "ResumeAfterTime" in n] == [
        n for n in notes(p_cli) if "ResumeAfterTime" in n] != []


@pytest.mark.parametrize("value", [0, _wrapped(None), _wrapped(0), 4294967294, 4294967295,
                                   _wrapped(None, infinite=True), _wrapped(4294967294),
                                   "", None])
def test_a_resume_after_of_none_or_a_mark_is_no_time(value):
    node = {"name": "n1", "state": ["DOWN"], "cpus": 4, "resume_after": value}
    [got] = slurm_rest.parse_nodes(json.dumps({"nodes": [node]}))
    assert got.resume_after is None
    plain = {**node, "state": "down", "resume_after": int(NOW.timestamp())}  # v0.0.38
    assert slurm_rest.parse_nodes(json.dumps({"nodes": [plain]}))[0].resume_after == NOW


# ---- marks of none in every number read -----------------------------------------------------

MARKS_32 = [4294967294, 4294967295, _wrapped(None, infinite=True), _wrapped(4294967294)]
# Slurm's 16-bit fields, by the list they are in (a node's CPUs, sockets, cores and
# threads; a partition's priority tier, job factor and over-time limit; a job's sockets
# per node): NO_VAL16 and INFINITE16 there too
SIXTEEN_BITS = {"nodes": {"cpus", "effective_cpus", "alloc_cpus", "specialized_cores",
                          "sockets", "cores", "threads"},
                "partitions": {"priority_tier", "priority_job_factor", "tier", "job_factor",
                               "over_time_limit"},
                "jobs": {"sockets_per_node"}}
# 64-bit fields (slurmdb's TRES counts, a node's memory): their marks are NO_VAL64 and
# INFINITE64 alone (a TRES-minutes count passes 2**32 at large sites)
SIXTY_FOUR_BITS = {"count", "real_memory", "alloc_memory", "free_memory"}
MARKS_64 = [2**64 - 2, 2**64 - 1, _wrapped(None, infinite=True), _wrapped(2**64 - 2)]
# what a mark would read as: itself, in minutes as seconds, or as a day past 2100
_MARK_NUMBERS = {m * unit for m in (65534, 65535, 4294967294, 4294967295, 2**64 - 2,
                                    2**64 - 1) for unit in (1, 60)}


def _numbers(data: Any, path: tuple = ()):
    """The path of each number in a reply (a wrapped one as one)."""
    if isinstance(data, dict) and {"set", "number"} <= set(data):
        yield path
    elif isinstance(data, dict):
        for k, v in data.items():
            yield from _numbers(v, (*path, k))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            yield from _numbers(v, (*path, i))
    elif isinstance(data, int | float) and not isinstance(data, bool):
        yield path


def _marks_read(value: Any, where: str = "") -> list[str]:
    """Where a model holds what a mark would read as."""
    if hasattr(value, "model_dump"):
        value = value.model_dump()
    if isinstance(value, dict):
        return [w for k, v in value.items() for w in _marks_read(v, f"{where}.{k}")]
    if isinstance(value, list | tuple):
        return [w for i, v in enumerate(value) for w in _marks_read(v, f"{where}[{i}]")]
    if isinstance(value, datetime) and value.year >= 2100 or not isinstance(value, bool) \
            and isinstance(value, int | float) and value in _MARK_NUMBERS:
        return [f"{where}={value}"]
    return []


def _snapshot(text: str) -> Any:
    return slurm_rest.parse_snapshot("s", {"queue": text, "read_at": "1796150000"})


READERS = [
    ("nodes.json", slurm_rest.parse_nodes),
    ("partitions.json", slurm_rest.parse_partitions),
    ("jobs.json", _snapshot), ("jobs_suspended_v0.0.38.json", _snapshot),
    ("jobs_resumed_v0.0.41.json", _snapshot),
    *((f"qos_{v}.json", lambda t, v=v: slurm_rest.parse_qos(t, v))
      for v in ("v0.0.38", "v0.0.41")),
    *((f"qos_{v}.json", slurm_rest.parse_qos_priorities) for v in ("v0.0.38", "v0.0.41")),
    *((f"licenses_{v}.json", slurm_rest.parse_licenses) for v in ("v0.0.38", "v0.0.41")),
    *((f"associations_alice_{v}.json", slurm_rest.parse_associations)
      for v in ("v0.0.38", "v0.0.41")),
    ("shares_v0.0.41.json", slurm_rest.parse_shares),
]


@pytest.mark.parametrize("name, read", READERS, ids=[f"{n}-{i}" for i, (n, _) in
                                                     enumerate(READERS)])
def test_no_mark_of_none_reads_as_a_number_or_a_time(name, read):
    """Each number of the reply set to each of Slurm's marks in turn: nothing read holds
    the mark (nor it as minutes in seconds, nor a day past 2100). Before: a job's
    `start_time` or `submit_time` of NO_VAL read as 2106-02-07."""
    reply = json.loads((FIX / name).read_text(encoding="utf-8"))
    for key, entries in reply.items():  # (a job of each state is enough, three of others)
        if isinstance(entries, list):
            kinds = {json.dumps(e.get("job_state")): e for e in reversed(entries)
                     if isinstance(e, dict)}
            reply[key] = list(kinds.values()) if key == "jobs" else entries[:3]
    paths = list(_numbers(reply))
    assert paths, name
    found = []
    for path in paths:
        key = next((p for p in reversed(path) if isinstance(p, str)), "")
        marks = MARKS_64 if key in SIXTY_FOUR_BITS else MARKS_32 + (
            [65534, 65535, _wrapped(65535)] if key in SIXTEEN_BITS.get(str(path[0]), ())
            else [])
        for mark in marks:
            data = copy.deepcopy(reply)
            at_ = data
            for p in path[:-1]:
                at_ = at_[p]
            at_[path[-1]] = copy.deepcopy(mark)
            found += [f"{'/'.join(map(str, path))}={json.dumps(mark)}: {w}"
                      for w in _marks_read(read(json.dumps(data)))]
    assert found == []


@pytest.mark.parametrize("value, over", [
    (65535, OVER_TIME_UNLIMITED), (_wrapped(None, infinite=True), OVER_TIME_UNLIMITED),
    (65534, None), (_wrapped(None), None), (_wrapped(5), 300.0)])
def test_a_16_bit_over_time_limit_of_infinite_is_unlimited(value, over):
    """Before: a plain INFINITE16 over-time limit read as not set (the site's)."""
    part = {"name": "p", "partition": {"state": ["UP"]}, "nodes": {"configured": "n1"},
            "maximums": {"over_time_limit": value}}
    [got] = slurm_rest.parse_partitions(json.dumps({"partitions": [part]}))
    assert got.over_time_s == over


def test_an_array_task_id_of_no_val_is_no_task():
    """v0.0.38 writes a job outside an array's task id as NO_VAL: before, a job naming its
    array but no task string read as `7_4294967294`."""
    job = {"job_id": 7, "array_job_id": 7, "array_task_id": 4294967294,
           "array_task_string": "", "job_state": "PENDING", "time_limit": 60}
    [got] = slurm_rest.parse_jobs(json.dumps({"jobs": [job]}))
    assert got.native_id == "7"


@pytest.mark.parametrize("mark", [4294967294, 4294967295, _wrapped(None, infinite=True)])
def test_squeue_json_reads_the_marks_as_the_rest_path_does(mark):
    """`squeue --json` (the CLI path) prints the same numbers: a waiting job's start time,
    a submit time and a task id of NO_VAL/INFINITE are none there too."""
    job = {"job_id": 8, "array_job_id": 8, "array_task_id": mark, "job_state": "PENDING",
           "start_time": mark, "submit_time": mark, "time_limit": mark, "node_count": mark}
    [got] = SlurmCommands().parse_status_json(json.dumps({"jobs": [job]}))
    assert (got.native_id, got.estimated_start, got.submitted_at, got.walltime_s,
            got.nodes) == ("8", None, None, None, None)
