"""Sweep 18 of scheduler outputs: outputs written here from each scheduler's documented
formats (Slurm 23.02-24.11 `scontrol`/`sinfo` node states and slurmrestd data_parser
v0.0.40-v0.0.42 shapes), not captured, and none of them met by sweeps 1-17: fed through the
parsers and, where the parser feeds placement, through placement. Each row of OUTPUTS is
one output and what must be read from it; the focused tests after it are the faults this
sweep found (each failed before)."""

from __future__ import annotations

import asyncio
import base64
import json
import sys
from datetime import timezone
from pathlib import Path

import pytest

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.dialects import slurm_rest
from diamond_jupyter.model import Node, SiteSnapshot
from diamond_jupyter.placement_fit import node_returning, node_usable
from diamond_jupyter.sites_rest import RestSite

sys.path.insert(0, str(Path(__file__).parent))
from test_placement_cases import NOW, reasons  # noqa: E402
from test_placement_cases13 import hours, only, run, running, selene  # noqa: E402

UTC = timezone.utc


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
    ("scontrol MIXED+REBOOT_REQUESTED", lambda: _state("MIXED+REBOOT_REQUESTED"),
     (False, (60.0, True))),
    ("scontrol IDLE+REBOOT_ISSUED", lambda: _state("IDLE+REBOOT_ISSUED"),
     (False, (60.0, True))),
    ("sinfo idle^ (reboot issued)", lambda: _state("idle^"), (False, (60.0, True))),
    # `scontrol reboot ASAP` drains the node first: out until it is resumed
    ("scontrol DRAIN+REBOOT_REQUESTED", lambda: _state("IDLE+DRAIN+REBOOT_REQUESTED"),
     (False, None)),
    ("scontrol DOWN+REBOOT_ISSUED", lambda: _state("DOWN+REBOOT_ISSUED"), (False, None)),
    ("scontrol IDLE+POWERED_DOWN", lambda: _state("IDLE+POWERED_DOWN"), (True, None)),
    ("scontrol IDLE+POWERING_UP", lambda: _state("IDLE+POWERING_UP"), (True, None)),
    ("sinfo idle~", lambda: _state("idle~"), (True, None)),
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
    # n01 runs a job with 2 h left and has a reboot requested (not ASAP: no drain); n02-n04
    # are down or drained. Before: n01 read as gone, the 3-node job INCOMPATIBLE; now it
    # starts when n01's job has ended and n01 is back (ResumeTimeout's default, 60 s)
    states = {"n01": "MIXED+REBOOT_REQUESTED", "n02": "DOWN*", "n03": "IDLE+DRAIN",
              "n04": "DOWN"}
    site = selene(running("77", "bob", "n01", 8, 2, 4), states=states, alloc={"n01": 8})
    v = only(run("#SBATCH -p batch -N 3 -t 1:00:00", site), "selene", "batch")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2 + 60 / 3600)), v
    assert any("n01 to be rebooted" in n for n in v.notes), v.notes
    # idle and to be rebooted: back 60 s from now
    site = selene(states={**states, "n01": "IDLE+REBOOT_ISSUED"})
    v = only(run("#SBATCH -p batch -N 3 -t 1:00:00", site), "selene", "batch")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(60 / 3600)), v


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
    def b64(d: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(d).encode()).decode().rstrip("=")
    (tmp_path / "jwt").write_text(f"{b64({'alg': 'none'})}.{b64({'exp': 4102444800})}.sig")
    # (the snapshot names the transport's user, for whom the reservations are checked)
    nodes = json.dumps({"nodes": [{"name": "n1", "state": ["IDLE"], "cpus": 8,
                                   "real_memory": 16000, "partitions": ["batch"]}]})
    parts = json.dumps({"partitions": [{"name": "batch", "nodes": {"configured": "n1"},
                                        "partition": {"state": ["UP"]}}]})
    failed = json.dumps({"reservations": [], "errors": [
        {"description": "Unable to query reservations", "error_number": 1007}]})
    replies = {"jobs": ['{"jobs": []}'] * 2, "nodes": [nodes] * 2, "partitions": [parts] * 2,
               "reservations": [REST_RESV_41, failed]}
    asked: list[str] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while head := await reader.readuntil(b"\r\n\r\n"):
                what = head.split(b" ")[1].decode().rsplit("/", 1)[1]
                asked.append(what)
                data = replies[what].pop(0).encode()
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                             b"content-length: %d\r\n\r\n%s" % (len(data), data))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    site = RestSite(SiteConfig(name="rest", workdir="/home/u/.diamond", transport={
        "kind": "slurmrestd", "url": f"http://127.0.0.1:{port}", "user": "u",
        "token_file": str(tmp_path / "jwt"), "api_version": "v0.0.41"}))
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
        assert asked == ["jobs", "nodes", "partitions", "reservations"] * 2
    finally:
        await site.close()
        server.close()
        await server.wait_closed()
