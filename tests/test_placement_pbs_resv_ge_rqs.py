"""PBS Pro reservations (`pbs_rstat -f`), Grid Engine resource quota sets (`qconf -srqs`)
and calendars (`qconf -scal`) as placement reads them, on outputs of the real formats.

PBS: a job asking a reservation's queue (`-q R123`) is placed only where that reservation
exists, is confirmed or running, admits the user and holds the walltime before its end, on
its nodes, no sooner than its start; every other job finds the reservation's share of its
nodes taken while it would overlap it. Grid Engine: the first rule of each enabled quota
set that matches the job caps its slots, the running jobs that rule binds counted; a
calendar that disables or suspends a queue's instances delays the job to the first on-duty
stretch that holds its h_rt, or refuses it where there is none. Before, none of these was
read: a reservation's queue was one like any other, its nodes free room for every job."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
from test_placement_cases import NOW, run

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.dialects.limits_text import (
    RC_MARK,
    parse_pbs_reservations,
    parse_sge_calendars,
    parse_sge_quotas,
    split_status,
    with_status,
)
from diamond_jupyter.dialects.pbs_commands import PbsCommands
from diamond_jupyter.dialects.sge_commands import SgeCommands
from diamond_jupyter.model import SgeCalendar
from diamond_jupyter.placement_sge_limits import calendar_state, first_stretch

H = 3600
pbs = PbsCommands(tz=timezone.utc)


def hours(h: float) -> datetime:
    return NOW + timedelta(hours=h)


def ok(text: str) -> str:
    """`text` as the snapshot's probe prints it: the output, then its exit status 0."""
    return f"{text}\n{RC_MARK}0\n"


# `pbs_rstat -f` of an advance reservation on n002 (32 of its 64 CPUs) from 11:00 to 15:00
# of NOW's day (NOW is 09:00 UTC), for alice
RSTAT = """Resv ID: R123.pbs01
Reserve_Name = NULL
Reserve_Owner = alice@login1
reserve_type = 2
reserve_state = {state}
reserve_substate = 2
reserve_start = Sun Mar 01 {start}:00:00 2026
reserve_end = Sun Mar 01 {end}:00:00 2026
reserve_duration = 14400
queue = R123
Resource_List.ncpus = 32
Resource_List.nodect = 1
Resource_List.select = 1:ncpus=32
Resource_List.place = free
Resource_List.walltime = 04:00:00
schedselect = 1:ncpus=32
resv_nodes = (n002:ncpus=32)
Authorized_Users = {users}
server = pbs01
ctime = Sun Mar 01 08:00:00 2026
mtime = Sun Mar 01 08:00:00 2026
interactive = 0
"""


def _pbs_site(rstat: str | None = None, *, user: str = "alice", n001_busy_h: float = 8,
              state: str = "RESV_CONFIRMED", users: str = "alice", window=(11, 15),
              n002_assigned: int = 0):
    """A PBS Pro site of two 64-CPU hosts: n001 taken whole by bob's job until +`n001_busy_h`
    h, n002 free; queues workq (default) and R123 (the reservation's, not started yet).
    `rstat`: the reservations probe's whole output (None: RSTAT's, exit 0, its `window`
    the hours it starts and ends at); `n002_assigned`: n002's resources_assigned.ncpus."""
    nodes = json.dumps({"nodes": {h: {"state": "free", "resources_available": {
        "host": h, "mem": "256gb", "ncpus": 64}, "resources_assigned": {
            "ncpus": 64 if h == "n001" else n002_assigned}} for h in ("n001", "n002")}})
    queues = json.dumps({"Queue": {
        "workq": {"queue_type": "Execution", "enabled": "True", "started": "True"},
        "R123": {"queue_type": "Execution", "enabled": "True", "started": "False"}}})
    start = (NOW - timedelta(hours=1)).strftime("%a %b %d %H:%M:%S %Y")
    jobs = json.dumps({"Jobs": {"7.pbs01": {
        "Job_Name": "big", "Job_Owner": "bob@login1", "job_state": "R", "queue": "workq",
        "exec_host": "n001/0*64", "stime": start, "Resource_List": {
            "ncpus": 64, "nodect": 1, "walltime": f"{int(n001_busy_h) + 1}:00:00"}}}})
    snap = pbs.parse_snapshot("pro", {
        "nodes": nodes, "queues": queues, "queue": jobs,
        "server": json.dumps({"Server": {"pbs01": {"default_queue": "workq"}}}),
        "user": user + "\n", "group": "physics\n",
        "reservations": ok(RSTAT.format(state=state, users=users, start=window[0],
                                        end=window[1])) if rstat is None
        else rstat})
    return (SiteConfig(name="pro", scheduler="pbs", metadata={"architecture": "x86_64"}),
            snap.model_copy(update={"taken_at": NOW}))


def _resv_job(cpus: int = 16, wall: str = "2:00:00", queue: str = "R123") -> str:
    return f"#PBS -q {queue}\n#PBS -l select=1:ncpus={cpus}\n#PBS -l walltime={wall}"


# ---- PBS: the parser ------------------------------------------------------------------------

def test_pbs_rstat_is_read_into_reservations():
    [r], why = parse_pbs_reservations(ok(RSTAT.format(state="RESV_RUNNING",
                                                      users="alice,+bob@*,-carol",
                                                      start=11, end=15)),
                                      timezone.utc)
    assert why is None
    assert (r.name, r.queue, r.state, r.owner) == ("R123.pbs01", "R123", "RESV_RUNNING",
                                                   "alice@login1")
    assert (r.start, r.end) == (hours(2), hours(6))
    assert r.users == ["alice", "+bob@*", "-carol"] and r.groups is None
    assert r.nodes == {"n002": {"ncpus": 32}}


def test_pbs_rstat_vnodes_count_for_their_host_and_none_is_no_reservation():
    text = RSTAT.format(state="RESV_CONFIRMED", users="alice", start=11, end=15).replace(
        "resv_nodes = (n002:ncpus=32)", "resv_nodes = (gpu1[0]:ncpus=8:ngpus=2)+"
        "(gpu1[1]:ncpus=8:ngpus=2)")
    [r], _ = parse_pbs_reservations(ok(text), timezone.utc)
    assert r.nodes == {"gpu1": {"ncpus": 16, "ngpus": 4}}
    assert parse_pbs_reservations(ok(""), timezone.utc) == ([], None)


def test_a_failed_pbs_rstat_is_unread_not_none():
    resv, why = parse_pbs_reservations(
        "pbs_rstat: cannot connect to server pbs01 (errno=15010)\n#diamond-rc=2\n")
    assert resv is None
    assert why == "pbs_rstat -f failed (exit 2: pbs_rstat: cannot connect to server pbs01 " \
        "(errno=15010))"


def test_the_status_mark_is_split_from_the_output():
    assert split_status(f"a\nb\n{RC_MARK}3\n") == ("a\nb", 3)
    assert split_status(f"{RC_MARK}0\n") == ("", 0)
    assert split_status("no mark\n") == ("no mark\n", None)
    # the probe is constant text run by sh, its output ending with the mark
    argv = with_status("qconf -srqs")
    assert argv[:2] == ["sh", "-c"] and "qconf -srqs 2>&1" in argv[2]


# ---- PBS: placement ---------------------------------------------------------------------

def test_a_job_of_a_confirmed_reservation_starts_at_its_start_on_its_nodes():
    p = run(_resv_job(), _pbs_site())
    v = p.verdict("pro")
    assert (v.verdict, v.partition, v.estimated_start) == ("BUSY", "R123", hours(2)), \
        p.explain()
    assert "reservation R123 starts at 2026-03-01 11:00: its queue starts no job before " \
        "then" in " ".join(v.notes), v.notes


def test_a_reservation_job_asking_more_than_it_holds_is_refused():
    # 48 CPUs: n002 has 64, the reservation 32 of them
    v = run(_resv_job(cpus=48), _pbs_site()).verdict("pro")
    assert not v.feasible
    assert "reservation R123's nodes (n002) cannot run it" in " | ".join(v.reasons), v.reasons


@pytest.mark.parametrize("job, site, said", [
    # its walltime runs past the reservation's end (4 h from its start)
    (_resv_job(wall="5:00:00"), {}, "walltime 5:00:00 runs past reservation R123's end at "
     "2026-03-01 15:00 (4:00:00 of it left from its start at 11:00): PBS ends a "
     "reservation's jobs when it ends; ask at most that"),
    # bob is not among its Authorized_Users
    (_resv_job(), {"user": "bob"}, "reservation R123 does not admit bob (Authorized_Users: "
     "alice)"),
    # denied by name, though everyone else is admitted
    (_resv_job(), {"users": "-alice,*"}, "reservation R123 does not admit alice "
     "(Authorized_Users: -alice, *)"),
    # not confirmed yet
    (_resv_job(), {"state": "RESV_UNCONFIRMED"}, "reservation R123 is not confirmed "
     "(RESV_UNCONFIRMED): the scheduler has not found it room, and its queue runs no job "
     "until it does"),
    # a reservation the site does not have
    (_resv_job(queue="R999"), {}, "queue R999 names a reservation this site does not have "
     "(pbs_rstat -f lists: R123)"),
])
def test_a_reservation_job_is_refused_naming_the_reservation_and_why(job, site, said):
    v = run(job, _pbs_site(**site)).verdict("pro")
    assert v.verdict == "RESTRICTED" and v.reasons == [said], (v.verdict, v.reasons)


def test_an_admitted_user_by_wildcard_and_a_running_reservation_start_now():
    v = run(_resv_job(wall="1:00:00"), _pbs_site(users="+*@*", state="RESV_RUNNING")
            ).verdict("pro")
    # its window opens at 11:00 still (pbs_rstat's reserve_start): the start waits for it
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2)), (v.reasons, v.notes)


def test_a_reservation_holds_its_share_from_jobs_that_would_overlap_it():
    # 48 CPUs for 4 h in workq: n002 has 64 free, but from 11:00 to 15:00 32 of them are
    # R123's: the job would run into it, so it starts at 15:00 (n001 frees at +8 h).
    # Before, READY now on n002
    v = run("#PBS -l select=1:ncpus=48\n#PBS -l walltime=4:00:00", _pbs_site()
            ).verdict("pro")
    assert (v.verdict, v.partition, v.estimated_start) == ("BUSY", "workq", hours(6)), \
        (v.reasons, v.notes)
    assert ("reservation R123 holds n002 (ncpus=32) from 2026-03-01 11:00 to 2026-03-01 "
            "15:00: the job, of walltime 4:00:00, would run into it, so PBS gives it none "
            "of that before it ends") in v.notes
    # one that ends before the reservation starts takes n002 now
    v = run("#PBS -l select=1:ncpus=48\n#PBS -l walltime=1:00:00", _pbs_site()
            ).verdict("pro")
    assert (v.verdict, v.estimated_start) == ("READY", NOW), (v.reasons, v.notes)
    # and one that fits beside the reservation's share starts now too
    v = run("#PBS -l select=1:ncpus=32\n#PBS -l walltime=4:00:00", _pbs_site()
            ).verdict("pro")
    assert (v.verdict, v.estimated_start) == ("READY", NOW), (v.reasons, v.notes)


def test_a_running_reservations_share_comes_back_to_others_at_its_end():
    # R123 runs from 08:00 to 12:00: n002's resources_assigned holds its 32 CPUs. A job of
    # 48 waits for its end (+3 h): before, those 32 CPUs, held by no job it knew of, were
    # taken to come back within the hour (BUSY, +1 h)
    site = _pbs_site(state="RESV_RUNNING", window=(8, 12), n002_assigned=32)
    v = run("#PBS -l select=1:ncpus=48\n#PBS -l walltime=1:00:00", site).verdict("pro")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(3)), (v.reasons, v.notes)
    # a job of the reservation starts now, on what it holds
    v = run(_resv_job(cpus=32), site).verdict("pro")
    assert (v.verdict, v.partition, v.estimated_start) == ("READY", "R123", NOW), \
        (v.reasons, v.notes)


def test_reservations_not_read_are_said_not_checked():
    site = _pbs_site("pbs_rstat: Unauthorized Request\n#diamond-rc=1\n")
    assert site[1].pbs_reservations is None
    p = run(_resv_job(), site)
    v = p.verdict("pro")
    assert "reservations (pbs_rstat -f failed (exit 1: pbs_rstat: Unauthorized Request)): " \
        "queue R123's reservation window, users and nodes" in v.not_checked
    assert "pro not checked: reservations (pbs_rstat -f failed" in p.explain()


# ---- Grid Engine: the site ---------------------------------------------------------------

def _ge_entry(jid: str, owner: str, slots: int, left_h: float, limit_h: int = 4) -> str:
    """A running job's `qstat -f -xml -r` entry in a queue instance."""
    start = (NOW + timedelta(hours=left_h - limit_h)).strftime("%Y-%m-%dT%H:%M:%S")
    return (f'<job_list state="running"><JB_job_number>{jid}</JB_job_number>'
            f"<JB_name>j{jid}</JB_name><JB_owner>{owner}</JB_owner><state>r</state>"
            f"<JAT_start_time>{start}</JAT_start_time><slots>{slots}</slots>"
            f'<hard_request name="h_rt" resource_contribution="0.000000">{limit_h * H}'
            "</hard_request></job_list>")


def _ge_site(*, quotas: str | None = "", calendars: str = "", calendar: str = "NONE",
             jobs: dict[str, list[str]] | None = None, state: str = "",
             groups: dict[str, str] | None = None, queue_conf: str = ""):
    """A Grid Engine site of two 16-slot hosts (s1, s2) with one queue, all.q (16 slots
    an instance, h_rt 72 h, its `calendar`), probed as alice. `quotas`: `qconf -srqs`'s
    output (None: the probe failed); `calendars`: the `qconf -scal` loop's; `jobs`: the
    running jobs' entries by host; `state`: the instances' qstat state; `groups`: the
    snapshot's host groups and access lists outputs ("hostgroups", "access_lists");
    `queue_conf`: more of all.q's `qconf -sq` lines."""
    jobs = jobs or {}
    inst = "".join(
        f"<Queue-List><name>all.q@{h}</name><qtype>BIP</qtype><slots_used>"
        f"{sum(int(j.split('<slots>')[1].split('<')[0]) for j in jobs.get(h, []))}"
        f"</slots_used><slots_resv>0</slots_resv><slots_total>16</slots_total>"
        f"<load_avg>0.5</load_avg><arch>lx-amd64</arch><state>{state}</state>"
        f"{''.join(jobs.get(h, []))}</Queue-List>" for h in ("s1", "s2"))
    qstat = f"<?xml version='1.0'?><job_info><queue_info>{inst}</queue_info>" \
        "<job_info></job_info></job_info>"
    qhost = "<?xml version='1.0'?><qhost><host name='global'></host>" + "".join(
        f"<host name='{h}'><hostvalue name='arch_string'>lx-amd64</hostvalue>"
        "<hostvalue name='num_proc'>16</hostvalue><hostvalue name='load_avg'>0.5"
        "</hostvalue><hostvalue name='mem_total'>64.0G</hostvalue></host>"
        for h in ("s1", "s2")) + "</qhost>"
    conf = (f"qname all.q\nhostlist s1 s2\npe_list smp\nh_rt 72:00:00\nslots 16\n"
            f"calendar {calendar}\n{queue_conf}")
    snap = SgeCommands(tz=timezone.utc).parse_snapshot("delta", {
        "queue": qstat, "hosts": qhost, "queues": conf, "pes": "smp\n",
        "pe_rules": "pe_name smp\nallocation_rule $pe_slots\n\n", "user": "alice\n",
        "quotas": "error: access denied\n#diamond-rc=1\n" if quotas is None else ok(quotas),
        "calendars": ok(calendars), **(groups or {})})
    return (SiteConfig(name="delta", scheduler="sge", metadata={"timezone": "UTC"}),
            snap.model_copy(update={"taken_at": NOW}))


def _smp(slots: int, h_rt: str = "1:00:00") -> str:
    return f"#$ -pe smp {slots}\n#$ -l h_rt={h_rt}\n#$ -q all.q"


RQS = """{
   name         max_user_slots
   description  "each user's slots in all.q"
   enabled      ENABLED
   limit        name per_user users USERS queues all.q to slots=8
   limit        users * to slots=64
}
"""


def rqs(enabled: str, users: str) -> str:
    return RQS.replace("ENABLED", enabled).replace("USERS", users)


# ---- Grid Engine: the parsers ------------------------------------------------------------

def test_qconf_srqs_is_read_into_sets_of_rules():
    text = rqs("TRUE", "{*}") + """{
   name         per_host
   description  NONE
   enabled      FALSE
   limit        projects !chem,bio pes mpi hosts {@gpu,s1} to slots=$num_proc*2, h_vmem=8G
}
"""
    sets, why = parse_sge_quotas(ok(text))
    assert why is None and [(s.name, s.enabled, len(s.rules)) for s in sets] == [
        ("max_user_slots", True, 2), ("per_host", False, 1)]
    first, second = sets[0].rules
    assert (first.name, first.filters["users"].names, first.filters["users"].each,
            first.filters["queues"].names, first.limits) == (
        "per_user", ["*"], True, ["all.q"], {"slots": "8"})
    assert (second.filters["users"].each, second.limits) == (False, {"slots": "64"})
    [rule] = sets[1].rules
    assert (rule.filters["projects"].names, rule.filters["hosts"].names,
            rule.filters["hosts"].each, rule.limits) == (
        ["!chem", "bio"], ["@gpu", "s1"], True, {"slots": "$num_proc*2", "h_vmem": "8G"})


def test_qconf_srqs_none_defined_failed_and_unreadable():
    # qconf says so and exits 1 where no set is defined: none
    assert parse_sge_quotas("no resource quota set list defined\n#diamond-rc=1\n") == ([], None)
    assert parse_sge_quotas(ok("")) == ([], None)
    assert parse_sge_quotas("error: denied: host \"x\" is no submit host\n#diamond-rc=1\n") \
        == (None, 'qconf -srqs failed (exit 1: error: denied: host "x" is no submit host)')
    sets, why = parse_sge_quotas(ok("{\n name broken\n limit users {*} slots=4\n}\n"))
    assert sets is None and why == "qconf -srqs: rule set broken: unreadable rule " \
        "'users {*} slots=4'"


def test_qconf_scal_is_read_and_evaluated_as_calendar_conf_says():
    cals, why = parse_sge_calendars(ok(
        "calendar_name    night\nyear             1.3.2026=on\nweek             mon-fri=6-20\n\n"
        "calendar_name    weekend_s\nyear             NONE\nweek             sat-sun=suspended\n"))
    assert why is None and set(cals) == {"night", "weekend_s"}
    night = cals["night"]
    assert (night.year, night.week) == (["1.3.2026=on"], ["mon-fri=6-20"])
    utc = timezone.utc
    # weekdays 6:00-20:00 off, on otherwise; the 1st of March a holiday (on all day)
    assert calendar_state(night, datetime(2026, 3, 2, 5, 59, tzinfo=utc)) == "on"
    assert calendar_state(night, datetime(2026, 3, 2, 6, 0, tzinfo=utc)) == "off"
    assert calendar_state(night, datetime(2026, 3, 2, 20, 0, tzinfo=utc)) == "on"
    assert calendar_state(night, datetime(2026, 3, 7, 12, 0, tzinfo=utc)) == "on"  # Sat
    assert calendar_state(cals["weekend_s"], datetime(2026, 3, 8, 1, tzinfo=utc)) == "suspended"
    # a range whose end comes first wraps past midnight; `on` wins over `off`
    cal = SgeCalendar(name="c", week=["12-11=off", "tue=13-17=on"])
    assert calendar_state(cal, datetime(2026, 3, 3, 11, 30, tzinfo=utc)) == "on"
    assert calendar_state(cal, datetime(2026, 3, 3, 14, 0, tzinfo=utc)) == "on"
    assert calendar_state(cal, datetime(2026, 3, 4, 14, 0, tzinfo=utc)) == "off"
    # the first stretch that holds 24 h: Fri 20:00 to Mon 06:00 (NOW is Sun 09:00, the
    # 1st, a holiday; on until Mon 06:00, 21 h only)
    start, end = first_stretch(night, NOW, 24 * H)
    assert (start, end) == (datetime(2026, 3, 6, 20, tzinfo=utc),
                            datetime(2026, 3, 9, 6, tzinfo=utc))
    assert first_stretch(night, NOW, 20 * H) == (NOW, datetime(2026, 3, 2, 6, tzinfo=utc))


# ---- Grid Engine: resource quotas in placement --------------------------------------------

def test_a_user_quota_counts_the_users_running_slots_and_waits_for_them():
    # alice runs 6 slots in all.q until +2 h; rule per_user caps each user at 8 there:
    # -pe smp 4 waits for her job to end, though s2 is empty. Before, READY now
    site = _ge_site(quotas=rqs("TRUE", "{*}"),
                    jobs={"s1": [_ge_entry("1", "alice", 6, 2)]})
    v = run(_smp(4), site).verdict("delta")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2)), (v.reasons, v.notes)
    assert ("queue all.q: resource quota set max_user_slots rule per_user (users {*} queues "
            "all.q to slots=8): your running jobs hold 6 of its 8 slots; the job's 4 fit once "
            "enough of them end") in v.notes
    # 2 slots fit beside hers now
    assert run(_smp(2), site).verdict("delta").verdict == "READY"


def test_other_users_jobs_count_only_under_a_rule_for_all_of_them():
    bobs = {"s1": [_ge_entry("1", "bob", 6, 2)]}
    # {*}: each user apart: bob's 6 are not alice's
    v = run(_smp(4), _ge_site(quotas=rqs("TRUE", "{*}"), jobs=bobs)
            ).verdict("delta")
    assert (v.verdict, v.estimated_start) == ("READY", NOW), (v.reasons, v.notes)
    # * without braces: every user's together
    v = run(_smp(4), _ge_site(quotas=rqs("TRUE", "*"), jobs=bobs)
            ).verdict("delta")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2)), (v.reasons, v.notes)
    assert any("its running jobs hold 6 of its 8 slots" in n for n in v.notes), v.notes


def test_a_job_above_the_quota_is_refused_naming_the_rule():
    v = run(_smp(12), _ge_site(quotas=rqs("TRUE", "{*}"))
            ).verdict("delta")
    assert v.verdict == "RESTRICTED"
    assert v.reasons == ["resource quota set max_user_slots rule per_user (users {*} queues "
                         "all.q to slots=8): the job's 12 slots are above its limit of 8"]


def test_a_job_of_an_advance_reservation_is_not_bound_by_the_quotas():
    # sge_resource_quota(5): a job of an AR (-ar) is neither limited nor counted
    v = run(_smp(12) + "\n#$ -ar 17", _ge_site(quotas=rqs("TRUE", "{*}"))).verdict("delta")
    assert v.verdict == "READY" and not any("quota" in x for x in v.reasons + v.notes
                                                  + v.not_checked), (v.reasons, v.notes)


@pytest.mark.parametrize("enabled, users", [
    ("FALSE", "{*}"),  # the set is not enabled
    ("TRUE", "!alice"),  # the rule leaves alice out: the next one (64 slots) binds her
])
def test_a_disabled_set_or_a_rule_not_matching_binds_nothing(enabled, users):
    v = run(_smp(12), _ge_site(quotas=rqs(enabled, users))
            ).verdict("delta")
    assert (v.verdict, v.estimated_start) == ("READY", NOW), (v.reasons, v.notes)


def test_a_per_host_rule_passes_over_the_hosts_it_fills():
    rqs = "{\n name per_host\n enabled TRUE\n limit users {*} hosts {*} to slots=4\n}\n"
    site = _ge_site(quotas=rqs, jobs={"s1": [_ge_entry("1", "alice", 2, 2)]})
    v = run(_smp(3), site).verdict("delta")
    # s1 holds 2 of hers: 3 more do not fit there, s2 takes them now
    assert (v.verdict, v.estimated_start) == ("READY", NOW), (v.reasons, v.notes)
    v = run(_smp(6), site).verdict("delta")
    assert v.verdict == "RESTRICTED" and v.reasons == [
        "resource quota set per_host rule 1 (users {*} hosts {*} to slots=4): the job's 6 "
        "slots on a host are above its limit of 4"]


def test_rules_naming_host_groups_and_access_lists_use_their_members():
    rqs = ("{\n name staff_short\n enabled TRUE\n"
           " limit users @staff hosts @short to slots=8\n}\n")
    groups = {"hostgroups": "group_name @short\ns1\n",
              "access_lists": "name    staff\ntype    ACL\nentries alice,carol\n\n"}
    hers = {"s1": [_ge_entry("1", "alice", 6, 2)]}
    site = _ge_site(quotas=rqs, jobs=hers, groups=groups)
    assert site[1].sge_host_groups == {"@short": ["s1"]}
    # alice is in staff: on s1 (in @short) 6 of 8 are hers; s2 is outside the rule: now
    v = run(_smp(4), site).verdict("delta")
    assert (v.verdict, v.estimated_start, v.not_checked) == ("READY", NOW, []), v.notes
    # -l hostname=s1: only s1, where the rule binds her: she waits for her job
    v = run(_smp(4) + "\n#$ -l hostname=s1", site).verdict("delta")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2)), (v.reasons, v.notes)
    # a list whose members are Unix groups cannot be told: said, not refused on
    groups["access_lists"] = "name    staff\ntype    ACL\nentries @physics\n\n"
    v = run(_smp(4) + "\n#$ -l hostname=s1", _ge_site(quotas=rqs, jobs=hers, groups=groups)
            ).verdict("delta")
    assert v.verdict == "READY" and v.not_checked == [
        "resource quota set staff_short rule 1 (users @staff hosts @short to slots=8): names "
        "a host group or access list whose members are not known here"], v.not_checked


def test_resource_quotas_not_read_are_said_not_checked():
    p = run(_smp(4), _ge_site(quotas=None))
    v = p.verdict("delta")
    assert v.verdict == "READY"
    assert v.not_checked == ["resource quotas (qconf -srqs failed (exit 1: error: access "
                             "denied))"]
    assert "delta not checked: resource quotas (qconf -srqs failed" in p.explain()


# ---- Grid Engine: calendars in placement --------------------------------------------------

NIGHT = "calendar_name night\nyear 1.3.2026=on\nweek mon-fri=6-20\n"


def test_a_calendar_that_closes_the_queue_during_the_walltime_delays_the_start():
    site = _ge_site(calendars=NIGHT, calendar="night")
    assert site[1].partitions[0].instance_calendars == {"s1": "night", "s2": "night"}
    # 1 h fits before Monday 06:00: now
    v = run(_smp(4), site).verdict("delta")
    assert (v.verdict, v.estimated_start) == ("READY", NOW), (v.reasons, v.notes)
    # 24 h does not: the weekend's stretch, Friday 20:00
    v = run(_smp(4, "24:00:00"), site).verdict("delta")
    assert (v.verdict, v.estimated_start) == ("BUSY", datetime(2026, 3, 6, 20,
                                                                 tzinfo=timezone.utc))
    assert ("queue all.q's calendar night (qconf -scal): now on, but not for long enough; "
            "Grid Engine starts the job there at Fri 2026-03-06 20:00 (the cluster's time), "
            "the first on-duty stretch that holds its walltime 1-00:00:00") in v.notes


def test_a_queue_the_calendar_disables_now_opens_at_its_end():
    # Sunday 08:00-12:00 off: the instances are disabled by their calendar now (qstat D);
    # before, the queue was DOWN and the job refused
    site = _ge_site(calendars="calendar_name sunday\nyear NONE\nweek sun=8-12=off\n",
                    calendar="sunday", state="D")
    assert site[1].partitions[0].calendar_closed == ["s1", "s2"]
    v = run(_smp(4), site).verdict("delta")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(3)), (v.reasons, v.notes)
    assert any("now disabled" in n for n in v.notes), v.notes
    # disabled by an administrator too (d): it stays closed, whatever the calendar
    site = _ge_site(calendars="calendar_name sunday\nyear NONE\nweek sun=8-12=off\n",
                    calendar="sunday", state="dD")
    assert site[1].partitions[0].calendar_closed is None
    assert not run(_smp(4), site).verdict("delta").feasible


def test_a_calendar_of_no_stretch_long_enough_refuses_the_queue():
    site = _ge_site(calendars="calendar_name short\nyear NONE\nweek 0-6=on 6-24=off\n",
                    calendar="short")
    v = run(_smp(4, "8:00:00"), site).verdict("delta")
    assert not v.feasible
    assert v.reasons == ["queue all.q: its calendar short (qconf -scal) leaves no on-duty "
                         "stretch that holds its walltime 8:00:00 in the next 60 days on any "
                         "of its instances"]


def test_a_calendar_not_read_is_said_not_checked():
    v = run(_smp(4), _ge_site(calendar="night")).verdict("delta")
    assert v.verdict == "READY"
    assert "calendar night of queue all.q (not listed by qconf -scall)" in v.not_checked
