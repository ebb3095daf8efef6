"""A Grid Engine job's own hard `-l s_rt` against its queues' s_rt (left by the sweeps:
"a Grid Engine `-l s_rt` asked by a job is not matched against the queue's"). s_rt is a
requestable limit like h_rt (complex(5): relation `<=`): a queue whose s_rt is shorter than
the job asks never takes it, and the job waited there for ever. Placement now passes such a
queue over, saying why in Grid Engine's words, and refuses a job that names only such a
queue. A queue of s_rt INFINITY (none), a job within it, and a soft (`-soft -l s_rt`)
request are placed as before. The tests marked `fault` failed before the fix."""

from __future__ import annotations

from test_placement_cases import only, reasons, run
from test_placement_cases8 import grebe

# all.q: h_rt 24 h, s_rt 4 h; short.q: h_rt 24 h, no s_rt
QUEUES = ("qname all.q\nh_rt 24:00:00\ns_rt 4:00:00\nnotify 00:02:00\n\n"
          "qname short.q\nh_rt 24:00:00\ns_rt INFINITY\n")
SAID = ("s_rt 6:00:00 above queue all.q's s_rt 4:00:00 (Grid Engine runs a job only in a "
        "queue whose limits hold what it asks)")


def test_fault_a_queue_whose_s_rt_is_below_the_jobs_is_passed_over():
    p = run("#$ -l h_rt=10:00:00,s_rt=6:00:00", grebe({}, queues=QUEUES))
    only(p, "grebe", "short.q")


def test_fault_a_job_naming_only_such_a_queue_is_refused_saying_why():
    p = run("#$ -q all.q\n#$ -l h_rt=10:00:00,s_rt=6:00:00", grebe({}, queues=QUEUES))
    assert SAID in reasons(p, "grebe")


def test_a_job_within_the_queues_s_rt_and_a_soft_request_are_placed_as_before():
    """(guard)"""
    site = grebe({}, queues=QUEUES)
    only(run("#$ -q all.q\n#$ -l h_rt=10:00:00,s_rt=3:00:00", site), "grebe", "all.q")
    only(run("#$ -q all.q\n#$ -l h_rt=10:00:00\n#$ -soft -l s_rt=6:00:00", site), "grebe",
         "all.q")
    only(run("#$ -q short.q\n#$ -l h_rt=10:00:00,s_rt=60:00:00", site), "grebe", "short.q")
