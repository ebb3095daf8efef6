"""LSF fair share and Flux queue `requires` in placement, from what the sites' own commands
print: `bqueues -l` (USER_SHARES, SHARE_INFO_FOR) and `bhpart -r` on lark, an LSF site of
one 32-slot host; `flux config get queues` on finch (f1-f2 batch, f3 debug). Each case
asserts the decision and what the user reads of it."""

from __future__ import annotations

import json
from datetime import timezone

import pytest
from test_placement_cases import NOW, hours, only, reasons, run
from test_placement_cases23 import FLUX_QUEUES

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.dialects.flux_commands import FluxCommands, parse_queue_requires
from diamond_jupyter.dialects.lsf_commands import LsfCommands
from diamond_jupyter.dialects.lsf_fairshare import (
    parse_host_partitions,
    parse_queue_fair_share,
)
from diamond_jupyter.model import ShareAccount

# ---- recorded outputs -----------------------------------------------------------------------

_PARAMS = (
    "PARAMETERS/STATISTICS\n"
    "PRIO NICE STATUS          MAX JL/U JL/P JL/H NJOBS  PEND   RUN SSUSP USUSP  RSV PJOBS\n"
    " 30   20  Open:Active       -    -    -    -    64    32    32     0     0    0     0\n"
    "Interval for a host to accept two jobs is 0 seconds\n\n"
    "SCHEDULING PARAMETERS\n"
    "           r15s   r1m  r15m   ut      pg    io   ls    it    tmp    swp    mem\n"
    " loadSched   -     -     -     -       -     -    -     -     -      -      -\n"
    " loadStop    -     -     -     -       -     -    -     -     -      -      -\n\n")
_SHARE_HEAD = (" USER/GROUP   SHARES  PRIORITY  STARTED  RESERVED  CPU_TIME  RUN_TIME   ADJUST"
               "  GPU_RUN_TIME\n")


def fair_queue(rows: str, shares: str = "[alice, 10] [bob, 10] [default, 1]") -> str:
    """Queue `fair` as `bqueues -l` prints a fair share queue: `rows` its accounts."""
    return (f"QUEUE: fair\n  -- a fair share queue\n\n{_PARAMS}"
            f"SCHEDULING POLICIES:  FAIRSHARE\nUSER_SHARES:  {shares}\n\n"
            f"SHARE_INFO_FOR: fair/\n{_SHARE_HEAD}{rows}\n"
            "USERS: all\nHOSTS:  all\n")


def plain_queue() -> str:
    return f"QUEUE: fair\n  -- no fair share\n\n{_PARAMS}USERS: all\nHOSTS:  all\n"


# alice over bob: little used lately; carol holds the host
ALICE_FIRST = (" alice           10    3.333      0        0         0.0        0       0.000"
               "        0\n"
               " bob             10    0.303      0        0      1200.5    36000       0.000"
               "        0\n"
               " carol            1    0.010     32        0     50000.0     7200       0.000"
               "        0\n")
# bob over alice: she ran much of late
BOB_FIRST = ALICE_FIRST.replace("3.333", "0.100").replace("0.303", "2.500")

BHPART = ("HOST_PARTITION_NAME: hp1\nHOSTS: l1\n\nSHARE_INFO_FOR: hp1/\n"
          " USER/GROUP   SHARES  PRIORITY  STARTED  RESERVED  CPU_TIME  RUN_TIME   ADJUST\n"
          " alice           5    1.667      0        0         0.0        0       0.000\n"
          " bob             5    0.152      0        0      1200.5    36000       0.000\n")


def _time(h: float) -> str:
    return hours(h).strftime("%b %d %H:%M:%S %Y")


def _job(jid: str, user: str, stat: str, slots: int, **more: str) -> dict:
    return {"JOBID": jid, "STAT": stat, "USER": user, "QUEUE": "fair", "JOB_NAME": f"j{jid}",
            "SUBMIT_TIME": _time(-3), "SLOTS": str(slots), "RUNTIMELIMIT": "60.0", **more}


# carol's job holds l1's 32 slots to +2 h; bob's 32-slot job waits (it came first)
CAROL = _job("1", "carol", "RUN", 32, START_TIME=_time(-2), EXEC_HOST="l1",
             RUNTIMELIMIT="240.0/l1")
BOB = _job("2", "bob", "PEND", 32, PEND_REASON="Not enough job slot(s)")


def lark(queue_long: str, bhpart: str = "", user: str = "alice",
         user_groups: str = ""):
    """lark read from `bhosts`, `lshosts`, `bqueues -json`, `bjobs` and `bqueues -l`."""
    out = {"hosts": json.dumps({"RECORDS": [{"HOST_NAME": "l1", "STATUS": "closed_Full",
                                             "MAX": "32", "NJOBS": "32", "RUN": "32"}]}),
           "lshosts": json.dumps({"RECORDS": [{"HOST_NAME": "l1", "type": "X86_64",
                                               "model": "EPYC", "ncpus": "32",
                                               "maxmem": "256G", "RESOURCES": ""}]}),
           "queues": json.dumps({"RECORDS": [{"QUEUE_NAME": "fair", "STATUS": "Open:Active",
                                              "MAX": "-", "RUNLIMIT": "1440.0 min"}]}),
           "queue": json.dumps({"RECORDS": [CAROL, BOB]}), "user": f"{user}\n",
           "queue_long": queue_long, "host_partitions": bhpart, "user_groups": user_groups}
    snap = LsfCommands(tz=timezone.utc, now=lambda: NOW).parse_snapshot("lark", out)
    snap = snap.model_copy(update={"taken_at": NOW})
    snap.partitions[0].default = True
    return SiteConfig(name="lark", scheduler="lsf"), snap


JOB = "#BSUB -q fair\n#BSUB -n 32\n#BSUB -W 1:00"

# ---- parsers --------------------------------------------------------------------------------


def test_bqueues_l_fair_share_is_read_by_its_header():
    got = parse_queue_fair_share(fair_queue(ALICE_FIRST))
    shares, table = got["fair"]
    assert shares == {"alice": 10, "bob": 10, "default": 1}
    assert table == [ShareAccount(name="alice", shares=10, priority=3.333),
                     ShareAccount(name="bob", shares=10, priority=0.303),
                     ShareAccount(name="carol", shares=1, priority=0.01, started=32)]


def test_a_queue_without_fair_share_has_none_and_a_wrapped_user_shares_is_read_whole():
    assert parse_queue_fair_share(plain_queue()) == {}
    text = fair_queue(ALICE_FIRST, "[alice, 10] [bob, 10]\n              [default, 1]")
    assert parse_queue_fair_share(text)["fair"][0] == {"alice": 10, "bob": 10, "default": 1}


def test_hierarchical_fair_share_reads_the_top_level_the_users_group_account():
    """`fair/` lists the groups, `fair/phys/` the users inside: the top level decides
    between groups; alice's account is her group's (bugroup)."""
    rows = (" phys/           20    1.250      0        0         0.0        0       0.000"
            "        0\n"
            " chem/           10    0.500      0        0         0.0        0       0.000"
            "        0\n")
    text = fair_queue(rows, "[phys, 20] [chem, 10]") + (
        f"\nSHARE_INFO_FOR: fair/phys/\n{_SHARE_HEAD}"
        " alice           1    9.999      0        0         0.0        0       0.000"
        "        0\n")
    assert [a.name for a in parse_queue_fair_share(text)["fair"][1]] == ["phys", "chem"]


def test_bhpart_r_reads_each_host_partitions_hosts_and_accounts():
    got = parse_host_partitions(BHPART)
    assert got["hp1"][0] == ["l1"]
    assert [(a.name, a.priority) for a in got["hp1"][1]] == [("alice", 1.667), ("bob", 0.152)]


@pytest.mark.parametrize("text, requires, why", [
    ('{"debug":{"requires":["debug"],"policy":{"limits":{"duration":"30m"}}},'
     '"batch":{"requires":["batch"]}}', {"debug": ["debug"], "batch": ["batch"]}, None),
    ("{}\n", {}, None),  # no queues configured (--default)
    # a virtual queue (RFC 33 parent) with none of its own: its parent's
    ('{"batch":{"requires":["batch"]},"urgent":{"parent":"batch"}}',
     {"batch": ["batch"], "urgent": ["batch"]}, None),
    ("flux-config: unrecognized option '--default={}'\n", None,
     "`flux config get queues` said: flux-config: unrecognized option '--default={}'"),
    ("", None, "`flux config get queues` said: no output"),
])
def test_flux_config_get_queues_is_read_or_said_why_not(text, requires, why):
    assert parse_queue_requires(text) == (requires, why)


# ---- LSF fair share in placement ------------------------------------------------------------


def test_a_higher_dynamic_priority_puts_the_job_ahead_of_an_earlier_one():
    """alice 3.333 over bob 0.303: LSF dispatches hers first once carol's job ends (+2 h),
    though bob's came first; without fair share she waits behind his hour (+3 h)."""
    v = only(run(JOB, lark(fair_queue(ALICE_FIRST))), "lark", "fair")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))
    assert "queue fair: fair share (bqueues -l SHARE_INFO_FOR): your account alice has share " \
           "10, dynamic priority 3.333; LSF dispatches the jobs of the highest priority first: " \
           "0 jobs waiting there go first (of a higher priority, yours or of owners not " \
           "listed), 1 job waiting there waits behind it (of a lower priority)" in v.notes, \
        v.notes
    plain = only(run(JOB, lark(plain_queue())), "lark", "fair")
    assert plain.estimated_start == hours(3)
    assert not any("fair share" in n for n in plain.notes)


def test_a_lower_dynamic_priority_waits_behind_the_higher_one():
    v = only(run(JOB, lark(fair_queue(BOB_FIRST))), "lark", "fair")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(3))
    assert any("your account alice has share 10, dynamic priority 0.1;" in n
               and "1 job waiting there goes first" in n
               and "0 jobs waiting there wait behind it" in n for n in v.notes), v.notes


def test_a_user_without_an_account_listed_is_not_checked_and_waits_behind_all():
    v = only(run(JOB, lark(fair_queue(ALICE_FIRST), user="dave")), "lark", "fair")
    assert v.estimated_start == hours(3)
    assert v.not_checked == [
        "queue fair's fair share (queue): no account of user dave is listed (accounts: alice, "
        "bob, carol), so your dynamic priority is not known; the job was counted behind every "
        "job waiting there"]
    assert "lark not checked: queue fair's fair share" in run(
        JOB, lark(fair_queue(ALICE_FIRST), user="dave")).explain()


def test_a_group_account_gives_its_members_its_priority():
    rows = (" phys            20    1.250      0        0         0.0        0       0.000"
            "        0\n"
            " bob             10    0.303      0        0      1200.5    36000       0.000"
            "        0\n")
    site = lark(fair_queue(rows, "[phys, 20] [bob, 10]"),
                user_groups="GROUP_NAME    USERS\nphys          alice erin\n")
    v = only(run(JOB, site), "lark", "fair")
    assert v.estimated_start == hours(2)
    assert any("your group's account phys has share 20, dynamic priority 1.25" in n
               for n in v.notes), v.notes


def test_host_partition_fair_share_orders_a_queue_of_none_of_its_own():
    v = only(run(JOB, lark(plain_queue(), bhpart=BHPART)), "lark", "fair")
    assert v.estimated_start == hours(2)
    assert any(n.startswith("queue fair: fair share (bhpart -r, host partition hp1): your "
                            "account alice has share 5, dynamic priority 1.667") for n in v.notes)


# ---- Flux queue requires in placement -------------------------------------------------------


def finch(config: str | None):
    """finch read from `flux resource list`, `flux queue list` and, where given, `flux
    config get --default={} queues`."""
    res = "free|batch,amd|2|128|0|f[1-2]\nfree|debug,amd|1|64|0|f3\n"
    out = {"resources": res, "queue": "", "queues": FLUX_QUEUES}
    if config is not None:
        out["queue_config"] = config
    snap = FluxCommands().parse_snapshot("finch", out).model_copy(update={"taken_at": NOW})
    return SiteConfig(name="finch", scheduler="flux"), snap


CONFIG = json.dumps({"batch": {"requires": ["batch"]}, "debug": {"requires": ["debug"]},
                     "old": {"requires": ["gpu"]}})


def test_a_queue_requiring_a_property_no_node_has_is_refused_naming_it():
    """`old` requires gpu, which no node has; its state aside (up here), it runs no job."""
    cfg, snap = finch(CONFIG)
    snap.partitions[2].state = "UP"
    assert reasons(run("#flux: -N 1 -n 1 -q old -t 10m", (cfg, snap)), "finch") == (
        "queue old requires node properties gpu (flux config get queues: requires), which no "
        "node has (their properties: amd, batch, debug): it runs no job")


def test_a_queue_requires_holds_its_jobs_to_the_nodes_with_it():
    """debug requires debug: f3 alone, so 2 nodes are refused there (its own node cap set
    aside), where requiring amd it has all three; batch's two nodes take a 2-node job,
    nothing left not checked."""
    def debug_uncapped(config: str):
        cfg, snap = finch(config)
        snap.partitions[1].max_nodes = None
        return cfg, snap
    job = "#flux: -N 2 -n 2 -q debug -t 10m"
    assert reasons(run(job, debug_uncapped(CONFIG)), "finch") == \
        "needs 2 nodes, queue debug has only 1"
    v = only(run(job, debug_uncapped(CONFIG.replace('["debug"]', '["amd"]'))), "finch", "debug")
    assert v.estimated_start == NOW
    v = only(run("#flux: -N 2 -n 2 -t 10m", finch(CONFIG)), "finch", "batch")
    assert (v.estimated_start, v.not_checked) == (NOW, [])


def test_a_config_that_cannot_be_read_is_said_not_checked():
    said = "flux-config: get: Operation not permitted"
    p = run("#flux: -N 1 -n 1 -q debug -t 10m", finch(said + "\n"))
    v = only(p, "finch", "debug")
    assert v.not_checked == [
        f"queue requires (`flux config get queues` said: {said}): which nodes queue debug "
        "may use is not known; every node was counted, though only f3 have property "
        "'debug': if the queue requires it, the job gets only those"]
    assert f"finch not checked: queue requires (`flux config get queues` said: {said})" \
        in p.explain()


def test_an_idle_fair_share_queue_says_nothing_of_an_unlisted_users_priority():
    cfg, snap = lark(fair_queue(ALICE_FIRST), user="dave")
    snap = snap.model_copy(update={"jobs": [j for j in snap.jobs if j.user != "bob"]})
    v = only(run(JOB, (cfg, snap)), "lark", "fair")
    assert (v.estimated_start, v.not_checked) == (hours(2), [])
    assert not any("fair share" in n for n in v.notes), v.notes


def test_a_user_with_no_share_assigned_is_refused_naming_the_shares():
    """No `default` in USER_SHARES: dave, in no group named there, may not use it."""
    no_default = fair_queue(ALICE_FIRST, "[alice, 10] [bob, 10]")
    groups = "GROUP_NAME    USERS\nphys          alice erin\n"
    p = run(JOB, lark(no_default, user="dave", user_groups=groups))
    assert reasons(p, "lark") == (
        "queue fair is a fair share queue and assigns you (dave) no share, nor any group of "
        "yours (USER_SHARES: [alice, 10] [bob, 10]): LSF takes its jobs only from users with "
        "a share")
    # a `default` share takes him; so does a group of his named there
    assert only(run(JOB, lark(fair_queue(ALICE_FIRST), user="dave", user_groups=groups)),
                "lark", "fair")
    named = fair_queue(ALICE_FIRST, "[alice, 10] [phys, 10]")
    assert only(run(JOB, lark(named, user="erin", user_groups=groups)), "lark", "fair")


def test_a_share_assignment_not_known_to_be_the_users_is_said():
    v = only(run(JOB, lark(fair_queue(ALICE_FIRST, "[alice, 10] [phys, 10]"), user="erin")),
             "lark", "fair")
    assert any("queue fair's fair share assigns shares to alice, phys (USER_SHARES), none "
               "to you (erin) by name; whether one is your group is not known here" in n
               for n in v.notes), v.notes


def test_the_fair_share_of_an_earlier_recorded_bqueues_l_is_read():
    """sweep 16's `bqueues -l` (a fair share queue beside windows and a RES_REQ)."""
    from test_outputs_unseen16 import BQUEUES_LONG
    shares, table = parse_queue_fair_share(BQUEUES_LONG)["night"]
    assert shares == {"default": 1}
    assert [(a.name, a.shares, a.priority, a.started) for a in table or []] == \
        [("alice", 1, 0.333, 2), ("bob", 1, 0.5, 0)]


def test_a_count_that_is_a_mark_of_none_is_not_known_and_said_so():
    """LSF prints INT_MAX (2147483647) where a count is not set: alice's shares and bob's
    slots are not known, not two billion. Before: read as numbers."""
    marks = ALICE_FIRST.replace("alice           10", "alice   2147483647").replace(
        "bob             10    0.303      0        0",
        "bob             10    0.303 2147483647  4294967295")
    shares, table = parse_queue_fair_share(fair_queue(marks, "[alice, 2147483647] [bob, 10]"
                                                      " [default, 1]"))["fair"]
    assert shares == {"alice": None, "bob": 10, "default": 1}
    assert table is not None and (table[0].shares, table[0].priority) == (None, 3.333)
    assert (table[1].started, table[1].reserved) == (None, None)
    assert (table[2].started, table[2].reserved) == (32, 0)
    # placement still orders by priority, and says the share is not known
    v = only(run(JOB, lark(fair_queue(marks))), "lark", "fair")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))
    assert any("your account alice has a share not known (LSF printed a mark of none), "
               "dynamic priority 3.333;" in n for n in v.notes), v.notes
