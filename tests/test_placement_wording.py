"""Placement's words where the sweep of `test_placement_cases20` found them wrong: a count
of one in the singular, a PBS queue enabled but not started, a maintenance under way named
with its end, a node both down and in maintenance said to be both."""

from __future__ import annotations

import pytest
from test_placement_cases import hours, reasons, run
from test_placement_cases20 import corvus, kestrel, resv, verdict

from diamond_jupyter.model import NOT_STARTED
from diamond_jupyter.wording import quantity

JOB_OF_FOUR_NODES = "#SBATCH -p compute -N 4 -t 1:00:00"


@pytest.mark.parametrize("n, noun, said", [
    (1, "GPU", "1 GPU"), (2, "GPU", "2 GPUs"), (0, "node", "0 nodes"),
    (1, "host", "1 host"), (3, "job", "3 jobs"),
])
def test_a_count_takes_its_nouns_number(n, noun, said):
    assert quantity(n, noun) == said


def test_a_pbs_queue_enabled_but_not_started_is_not_called_down():
    """corvus's queue held: enabled=True, started=False (PBS queues the job, runs none until
    the queue is started); before: "queue 'held' is DOWN"."""
    cfg, snap = corvus()
    assert next(p for p in snap.partitions if p.name == "held").state == NOT_STARTED
    job = "#PBS -q held\n#PBS -l select=1:ncpus=8\n#PBS -l walltime=1:00:00"
    assert reasons(run(job, (cfg, snap)), "corvus") == \
        "queue 'held' is not started: takes jobs, runs none until started"


def test_a_maintenance_under_way_is_named_with_its_end():
    """c01 in reservation pm (MAINT) until +9 h: the job of four nodes is BUSY until then,
    and a note names the reservation, the node and the end (before: no word why)."""
    site = kestrel(states={"c01": "IDLE+MAINT"},
                   reservations=resv("pm", "c01", -1, 9, "MAINT,SPEC_NODES"))
    v = verdict(JOB_OF_FOUR_NODES, site)
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(9))
    assert f"reservation pm (MAINT,SPEC_NODES) holds c01 in maintenance until " \
           f"{hours(9):%Y-%m-%d %H:%M}: it takes no job before then" in v.notes


def test_a_down_node_in_maintenance_is_said_to_be_both():
    """c01 DOWN+MAINT: down, it stays out when the maintenance ends (before: "others in
    maintenance: c01", as if it came back then)."""
    for r in ("", resv("pm", "c01", -1, 9, "MAINT,SPEC_NODES")):
        site = kestrel(states={"c01": "DOWN+MAINT"}, reservations=r)
        assert reasons(run(JOB_OF_FOUR_NODES, site), "kestrel") == (
            "needs 4 nodes, partition compute has only 3 usable (others in maintenance: "
            "c01 (down too: out after the maintenance ends))")
