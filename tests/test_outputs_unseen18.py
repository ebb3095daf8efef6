"""Sweep 18 of scheduler outputs: outputs written here from each scheduler's documented
formats (Slurm 23.02-24.11 `scontrol`/`sinfo` node states and slurmrestd data_parser
v0.0.40-v0.0.42 shapes), not captured, and none of them met by sweeps 1-17: fed through the
parsers and, where the parser feeds placement, through placement. Each row of OUTPUTS is
one output and what must be read from it; the focused tests after it are the faults this
sweep found (each failed before)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from diamond_jupyter.model import Node
from diamond_jupyter.placement_fit import node_returning, node_usable

sys.path.insert(0, str(Path(__file__).parent))
from test_placement_cases13 import hours, only, run, running, selene  # noqa: E402


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
