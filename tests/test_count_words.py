"""A count of one meets its noun and its verb in the singular where limits are worded from a
table of unit words (before: "needs 1 nodes", "1 jobs are queued", "1 slots are")."""

from __future__ import annotations

from test_placement_cases import reasons, run
from test_placement_cases5 import gridq
from test_placement_cases13 import QOS, selene

from diamond_jupyter.dialects.slurm_commands import parse_qos
from diamond_jupyter.placement_limits import counted
from diamond_jupyter.wording import agree


def test_the_helpers_agree_with_the_count():
    assert (counted(1, "node"), counted(2, "node"), counted(1, "mem")) == \
        ("1 node", "2 nodes", "1 MB memory")
    assert (agree(1), agree(0), agree(3, "holds", "hold")) == ("is", "are", "hold")


def with_qos(extra: str, *queue: str, qos_of: dict[str, str] | None = None):
    """selene with the QOS lines `extra` beside its own."""
    cfg, snap = selene(*queue, qos_of=qos_of)
    return cfg, snap.model_copy(update={"qos": parse_qos(QOS + extra)})


def test_one_node_above_a_qos_max_tres_is_one_node():
    site = with_qos("nonode|node=0||||||||\n")
    assert "needs 1 node in all, the job's QOS nonode allows 0 (MaxTRESPerJob node=0)" in \
        reasons(run("#SBATCH --qos=nonode -N 1 -t 1:00:00", site), "selene")


def test_one_queued_job_under_grp_submit_jobs_is_one_job_that_is_queued():
    queued = "9001|PENDING|N/A|N/A|2024-01-01T00:00:00|1:00:00|1|4|bob|batch|N/A||" \
             "Priority|(null)|job9001"
    site = with_qos("one|||||||1||\n", queued, qos_of={"9001": "one"})
    said = reasons(run("#SBATCH --qos=one -t 1:00:00", site), "selene")
    assert "QOS one's GrpSubmitJobs is 1 and 1 job is queued or running under it" in said


def test_one_slot_under_a_fixed_allocation_rule_is_one_slot_that_is_no_multiple():
    assert reasons(run("#$ -pe mpi8 1", gridq()), "sgeq") == "parallel environment 'mpi8' " \
        "puts 8 slots on every host (allocation_rule 8): 1 slot is no multiple of it"
