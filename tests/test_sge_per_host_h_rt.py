"""A Grid Engine queue whose h_rt differs by host (queue_conf(5)'s `default,[host=value]`,
`[@group=value]`), left by the sweeps ("the queue's h_rt is read from `qconf -sq`, per-host
limits are not"): `24:00:00,[s2=1:00:00]` was no time at all, so the queue read as having
no limit, and a job of 10 h was placed on s2, where Grid Engine never starts it. Each
instance's h_rt is now read (a host group's through its resolved hosts): a host whose h_rt
is below the job's walltime is passed over, said; a queue none of whose hosts holds it is
refused, naming them; the queue's limit is the longest of its hosts'. The tests marked
`fault` failed before the fix."""

from __future__ import annotations

from test_placement_cases import only, reasons, run
from test_placement_cases8 import grebe
from test_placement_cases10 import has_note

QUEUES = "qname all.q\nh_rt 24:00:00,[s2=1:00:00]\n\nqname short.q\nh_rt 1:00:00\n"


def test_fault_each_instance_keeps_its_own_h_rt():
    _, snap = grebe({}, queues=QUEUES)
    q = {p.name: p for p in snap.partitions}
    assert (q["all.q"].max_time_s, q["all.q"].instance_time_s) == (
        24 * 3600, {"s1": 24 * 3600, "s2": 3600})
    assert (q["short.q"].max_time_s, q["short.q"].instance_time_s) == (3600, None)


def test_fault_a_job_past_a_hosts_h_rt_runs_only_on_the_others():
    """A 10 h job: s2 (h_rt 1 h) is passed over, said; s1 runs it. Half an hour's job: both
    hosts, nothing said."""
    site = grebe({}, queues=QUEUES)
    v = only(run("#$ -q all.q\n#$ -l h_rt=10:00:00", site), "grebe", "all.q")
    assert v.verdict == "READY", v
    assert has_note(v, "queue all.q: s2 of a shorter h_rt than the walltime 10:00:00 "
                       "(qconf -sq): passed over")
    v = only(run("#$ -q all.q\n#$ -l h_rt=0:30:00", site), "grebe", "all.q")
    assert v.verdict == "READY" and not has_note(v, "shorter h_rt")


def test_fault_a_queue_none_of_whose_hosts_holds_the_walltime_is_refused_naming_them():
    queues = "qname all.q\nh_rt 2:00:00,[s1=1:00:00]\n\nqname short.q\nh_rt 1:00:00\n"
    p = run("#$ -q all.q\n#$ -l h_rt=10:00:00", grebe({}, queues=queues))
    said = reasons(p, "grebe")
    assert said == "walltime 10:00:00 above queue all.q h_rt 2:00:00", said
    # s1 (24 h) has no slot for it, s2 (1 h) is too short: none of its hosts can
    p = run("#$ -q all.q\n#$ -l h_rt=10:00:00", grebe({}, used={"s1": 16}, queues=QUEUES))
    said = reasons(p, "grebe")
    assert "walltime 10:00:00 above queue all.q's h_rt on every host that can run the job " \
           "(s2 1:00:00; qconf -sq)" in said, said


def test_a_host_groups_own_h_rt_and_one_limit_for_all_are_read():
    """(guard and group) `[@short=...]` reaches the group's hosts; a plain h_rt as before."""
    from diamond_jupyter.dialects.sge_commands import SgeCommands
    limits = SgeCommands()._partitions(
        "qname all.q\nh_rt INFINITY,[@short=2:00:00]\n",
        [{"queue": "all.q", "host": h, "state": "", "total": 8} for h in ("s1", "s2")],
        groups={"@short": ["s2"]})
    assert (limits[0].max_time_s, limits[0].instance_time_s) == (None, {"s1": None,
                                                                        "s2": 7200})
    plain = SgeCommands()._partitions(
        "qname all.q\nh_rt 24:00:00\n", [{"queue": "all.q", "host": "s1", "state": "",
                                           "total": 8}])
    assert (plain[0].max_time_s, plain[0].instance_time_s) == (24 * 3600, None)
