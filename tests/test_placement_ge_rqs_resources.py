"""Grid Engine resource quotas beyond slots, as placement reads them from outputs of the
real formats (sge_resource_quota(5), `qstat -f -xml -r`, `qconf -sc`, `qhost -xml -F`).

A rule's limit of a consumable (`h_vmem=64G`) counts the job's request of it (per slot
times its slots for consumable YES) and what the running jobs it binds take of it (their
hard requests, `qstat -r`); a dynamic limit (`slots=$num_proc*2`) is the host's own value;
a `projects`/`pes` filter counts only the running jobs of that project or PE (qstat -r's
JB_project and granted_pe); a job asking several queues (`-q a.q,b.q`, `*.q`) is held to
each rule in each queue it may use. Before, none of these was counted: every limit but
slots was said not checked, and every running job counted under a project filter."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from test_placement_cases import NOW, run
from test_placement_pbs_resv_ge_rqs import NIGHT, _ge_site, _smp

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.dialects.limits_text import RC_MARK
from diamond_jupyter.dialects.sge_commands import SgeCommands, parse_time_zone
from diamond_jupyter.model import SiteSnapshot

H = 3600
G = 2.0**30

# `qconf -sc`: h_vmem consumable per slot (YES), lic once a job (JOB)
COMPLEXES = """#name     shortcut   type     relop requestable consumable default  urgency
#------------------------------------------------------------------------
h_vmem              h_vmem     MEMORY      <=    YES         YES        0        0
lic                 lic        INT         <=    YES         JOB        0        0
slots               s          INT         <=    YES         YES        1        1000
"""


def ok(text: str) -> str:
    return f"{text}\n{RC_MARK}0\n"


def entry(jid: str, owner: str, slots: int, left_h: float, *, project: str | None = None,
          pe: str | None = None, vmem: str | None = None) -> str:
    """A running job's `qstat -f -xml -r` entry (4 h limit, `left_h` of it left)."""
    start = (NOW + timedelta(hours=left_h - 4)).strftime("%Y-%m-%dT%H:%M:%S")
    return (f'<job_list state="running"><JB_job_number>{jid}</JB_job_number>'
            f"<JB_name>j{jid}</JB_name><JB_owner>{owner}</JB_owner>"
            + (f"<JB_project>{project}</JB_project>" if project else "")
            + f"<state>r</state><JAT_start_time>{start}</JAT_start_time><slots>{slots}</slots>"
            + (f'<requested_pe name="{pe}">{slots}</requested_pe>'
               f'<granted_pe name="{pe}">{slots}</granted_pe>' if pe else "")
            + f'<hard_request name="h_rt" resource_contribution="0.000000">{4 * H}'
            "</hard_request>"
            + (f'<hard_request name="h_vmem" resource_contribution="0.000000">{vmem}'
               "</hard_request>" if vmem else "")
            + "</job_list>")


def site(quotas: str, jobs: dict[str, list[str]] | None = None, *,
         queues: tuple[str, ...] = ("all.q",), complexes: str = COMPLEXES,
         num_proc: int = 16, queue_conf: dict[str, str] | None = None,
         host_values: dict[str, str] | None = None, arches: dict[str, str] | None = None):
    """A Grid Engine site of two 16-slot hosts (s1, s2), each queue of `queues` on both,
    PEs smp and mpi ($pe_slots), probed as alice. `jobs`: running entries by queue
    instance (`all.q@s1`); `queue_conf`: more `qconf -sq` lines by queue; `host_values`:
    more `qhost -F` resourcevalue elements by host; `arches`: a host's arch_string other
    than lx-amd64."""
    jobs = jobs or {}

    def used(name: str) -> int:
        return sum(int(j.split("<slots>")[1].split("<")[0]) for j in jobs.get(name, []))

    inst = "".join(
        f"<Queue-List><name>{q}@{h}</name><qtype>BIP</qtype><slots_used>{used(f'{q}@{h}')}"
        "</slots_used><slots_resv>0</slots_resv><slots_total>16</slots_total>"
        "<load_avg>0.5</load_avg><arch>lx-amd64</arch><state></state>"
        f"{''.join(jobs.get(f'{q}@{h}', []))}</Queue-List>" for q in queues for h in ("s1", "s2"))
    qstat = f"<?xml version='1.0'?><job_info><queue_info>{inst}</queue_info>" \
        "<job_info></job_info></job_info>"
    qhost = "<?xml version='1.0'?><qhost><host name='global'></host>" + "".join(
        f"<host name='{h}'><hostvalue name='arch_string'>{(arches or {}).get(h, 'lx-amd64')}"
        "</hostvalue>"
        f"<hostvalue name='num_proc'>{num_proc}</hostvalue><hostvalue name='load_avg'>0.5"
        "</hostvalue><hostvalue name='mem_total'>256.0G</hostvalue>"
        f"{(host_values or {}).get(h, '')}</host>"
        for h in ("s1", "s2")) + "</qhost>"
    conf = "".join(f"qname {q}\nhostlist s1 s2\npe_list smp mpi\nh_rt 72:00:00\nslots 16\n"
                   f"calendar NONE\n{(queue_conf or {}).get(q, '')}\n" for q in queues)
    snap = SgeCommands(tz=timezone.utc).parse_snapshot("delta", {
        "queue": qstat, "hosts": qhost, "queues": conf, "pes": "smp\nmpi\n",
        "pe_rules": "pe_name smp\nallocation_rule $pe_slots\n\npe_name mpi\n"
                    "allocation_rule $pe_slots\n\n", "user": "alice\n",
        "complexes": complexes, "quotas": ok(quotas), "calendars": ok("")})
    return (SiteConfig(name="delta", scheduler="sge", metadata={"timezone": "UTC"}),
            snap.model_copy(update={"taken_at": NOW}))


def smp(slots: int, extra: str = "", queue: str = "all.q", pe: str = "smp") -> str:
    return f"#$ -pe {pe} {slots}\n#$ -l h_rt=1:00:00\n#$ -q {queue}\n{extra}"


def rqs(*limits: str) -> str:
    return "{\n name q\n enabled TRUE\n" + "".join(f" limit {x}\n" for x in limits) + "}\n"


# ---- the parser ----------------------------------------------------------------------------

BUSY_TILL_THEY_END = ("BUSY", NOW + timedelta(hours=2))  # the running jobs' end


def ready_not_checked(job: str, at: tuple[SiteConfig, SiteSnapshot]) -> list[str]:
    """What the verdict of `job` on `at` (site delta), READY, says it did not check."""
    v = run(job, at).verdict("delta")
    assert v.verdict == "READY"
    return v.not_checked


def test_running_jobs_project_pe_and_consumables_are_read_from_qstat_r():
    _, snap = site("", {"all.q@s1": [entry("1", "bob", 4, 2, project="p1", pe="mpi",
                                           vmem="10G")],
                        "all.q@s2": [entry("2", "carol", 1, 2)]})
    one, two = sorted(snap.running, key=lambda j: j.native_id)
    # h_vmem is consumable YES: 10G a slot x its 4 slots in that instance (and the slots
    # complex, YES of default 1, its slots)
    assert (one.account, one.pe, one.shared_use) == ("p1", "mpi", {"h_vmem": 40 * G, "slots": 4})
    # no JB_project, no granted_pe: none
    assert (two.account, two.pe, two.shared_use) == (None, None, {"slots": 1})


# ---- limits of consumables -------------------------------------------------------------------

VMEM = rqs("users {*} to h_vmem=64G")


def test_a_memory_quota_counts_memory_per_slot_times_slots_and_the_running_jobs_use():
    # alice runs 4 slots x 10G = 40G until +2 h; 4 x 8G = 32G more would make 72G of 64G:
    # the job waits for hers. Before: READY now, h_vmem said not counted
    hers = {"all.q@s1": [entry("1", "alice", 4, 2, vmem="10G")]}
    v = run(smp(4, "#$ -l h_vmem=8G"), site(VMEM, hers)).verdict("delta")
    assert (v.verdict, v.estimated_start) == BUSY_TILL_THEY_END, \
        (v.reasons, v.notes, v.not_checked)
    assert ("queue all.q: resource quota set q rule 1 (users {*} to h_vmem=64G): your "
            "running jobs hold 40G of its 64G of h_vmem; the job's 32G fit once enough of "
            "them end") in v.notes
    assert not v.not_checked
    # 2 x 8G = 16G fits beside her 40G now; bob's jobs are not hers ({*}: each apart)
    assert run(smp(2, "#$ -l h_vmem=8G"), site(VMEM, hers)).verdict("delta").verdict == "READY"
    bobs = {"all.q@s1": [entry("1", "bob", 4, 2, vmem="10G")]}
    assert run(smp(4, "#$ -l h_vmem=8G"), site(VMEM, bobs)).verdict("delta").verdict == "READY"


def test_a_memory_quota_below_the_jobs_request_refuses_it():
    v = run(smp(12, "#$ -l h_vmem=8G"), site(VMEM)).verdict("delta")
    assert v.verdict == "RESTRICTED"
    assert v.reasons == ["resource quota set q rule 1 (users {*} to h_vmem=64G): the job's "
                         "96G of h_vmem is above its limit of 64G"]


def test_a_job_not_asking_the_limited_consumable_is_not_bound_by_its_limit():
    hers = {"all.q@s1": [entry("1", "alice", 4, 2, vmem="16G")]}
    v = run(smp(4), site(VMEM, hers)).verdict("delta")
    assert (v.verdict, v.not_checked) == ("READY", []), (v.notes, v.not_checked)


def test_a_job_consumable_is_counted_once_and_a_non_consumable_as_asked():
    # lic is consumable JOB: the job's lic=3 is 3 whatever its slots; alice's job holds 2
    hers = {"all.q@s1": [entry("1", "alice", 4, 2).replace(
        "</job_list>", '<hard_request name="lic" resource_contribution="0">2</hard_request>'
        "</job_list>")]}
    v = run(smp(8, "#$ -l lic=3"), site(rqs("users {*} to lic=4"), hers)).verdict("delta")
    assert (v.verdict, v.estimated_start) == BUSY_TILL_THEY_END, v.notes
    assert any("your running jobs hold 2 of its 4 of lic; the job's 3 fit" in n
               for n in v.notes), v.notes
    # mem_free, no consumable here: the request itself is held to the limit
    v = run(smp(2, "#$ -l mem_free=8G"), site(rqs("users * to mem_free=4G"))).verdict("delta")
    assert v.verdict == "RESTRICTED" and v.reasons == [
        "resource quota set q rule 1 (users * to mem_free=4G): the job asks mem_free=8G, "
        "above its limit of 4G"]


def test_a_consumable_limit_without_the_complexes_is_said_not_checked():
    assert ready_not_checked(smp(4, "#$ -l h_vmem=8G"), site(VMEM, complexes="")) == [
        "resource quota set q rule 1 (users {*} to h_vmem=64G): h_vmem=64G not counted here "
        "(the complexes, qconf -sc, not read)"]


# ---- dynamic limits --------------------------------------------------------------------------

def test_a_dynamic_limit_is_the_hosts_own_value():
    # each host: slots=$num_proc*2 = 8 (num_proc 4); bob's 6 on each host: 4 more fit on
    # none until one of his ends. Before: READY, the limit said not counted
    quota = rqs("hosts {*} to slots=$num_proc*2")
    busy = {"all.q@s1": [entry("1", "bob", 6, 2)], "all.q@s2": [entry("2", "bob", 6, 3)]}
    v = run(smp(4), site(quota, busy, num_proc=4)).verdict("delta")
    assert (v.verdict, v.estimated_start) == BUSY_TILL_THEY_END, \
        (v.reasons, v.notes, v.not_checked)
    assert any("its running jobs hold 6 of its 8 slots on a host; the job's 4 fit" in n
               for n in v.notes), v.notes
    # 2 fit now; 10 never on a host of 4 processors
    assert run(smp(2), site(quota, busy, num_proc=4)).verdict("delta").verdict == "READY"
    v = run(smp(10), site(quota, num_proc=4)).verdict("delta")
    assert v.verdict == "RESTRICTED" and v.reasons == [
        "resource quota set q rule 1 (hosts {*} to slots=$num_proc*2): the job's 10 slots "
        "on a host are above its limit of 8"]
    # a sum of terms: $num_proc*2+4 = 12
    v = run(smp(10), site(rqs("hosts {*} to slots=$num_proc*2+4"), num_proc=4)
            ).verdict("delta")
    assert v.verdict == "READY", (v.reasons, v.notes)


def test_a_dynamic_limit_without_an_expanded_host_list_is_said_not_checked():
    assert ready_not_checked(smp(4), site(rqs("users {*} to slots=$num_proc"))) == [
        "resource quota set q rule 1 (users {*} to slots=$num_proc): slots=$num_proc (a "
        "host's own value) not counted here: a dynamic limit needs an expanded host list ({})"]


# ---- projects and PEs of the running jobs ----------------------------------------------------

def test_a_project_rule_counts_only_that_projects_running_jobs():
    quota = rqs("projects {p1} to slots=8")
    job = smp(4, "#$ -P p1")
    # bob's 6 slots are of p2: not counted against p1's 8. Before: counted, BUSY
    other = {"all.q@s1": [entry("1", "bob", 6, 2, project="p2")]}
    v = run(job, site(quota, other)).verdict("delta")
    assert (v.verdict, v.estimated_start) == ("READY", NOW), (v.reasons, v.notes)
    # of p1: counted, whoever runs them
    same = {"all.q@s1": [entry("1", "bob", 6, 2, project="p1")]}
    v = run(job, site(quota, same)).verdict("delta")
    assert (v.verdict, v.estimated_start) == BUSY_TILL_THEY_END, v.notes
    # a rule for p1 together (no braces): the same
    v = run(job, site(rqs("projects p1 to slots=8"), same)).verdict("delta")
    assert v.verdict == "BUSY", v.notes


def test_a_pe_rule_counts_only_the_jobs_granted_that_pe():
    quota = rqs("pes mpi to slots=8")
    smp_jobs = {"all.q@s1": [entry("1", "bob", 6, 2, pe="smp")]}
    v = run(smp(4, pe="mpi"), site(quota, smp_jobs)).verdict("delta")
    assert (v.verdict, v.estimated_start) == ("READY", NOW), (v.reasons, v.notes)
    mpi_jobs = {"all.q@s1": [entry("1", "bob", 6, 2, pe="mpi")]}
    v = run(smp(4, pe="mpi"), site(quota, mpi_jobs)).verdict("delta")
    assert (v.verdict, v.estimated_start) == BUSY_TILL_THEY_END, v.notes


# ---- a job asking several queues -------------------------------------------------------------

AQ = rqs("users {*} queues a.q to slots=4")


def test_a_queue_list_is_held_to_each_rule_in_each_queue():
    # alice holds a.q's 4; b.q is free of the rule: the job starts there now
    hers = {"a.q@s1": [entry("1", "alice", 4, 2)]}
    two = site(AQ, hers, queues=("a.q", "b.q"))
    for asked in ("a.q,b.q", "*.q", "b.q@s2,a.q"):
        v = run(smp(2, queue=asked), two).verdict("delta")
        assert (v.verdict, v.estimated_start) == ("READY", NOW), (asked, v.reasons, v.notes)
    # a.q alone: she waits for her job
    v = run(smp(2, queue="a.q"), two).verdict("delta")
    assert (v.verdict, v.estimated_start) == BUSY_TILL_THEY_END, v.notes
    # a wildcard naming a.q alone, or its instance on s1: the same
    for asked in ("a*", "a.q@s1"):
        v = run(smp(2, queue=asked), two).verdict("delta")
        assert (v.verdict, v.estimated_start) == BUSY_TILL_THEY_END, \
            (asked, v.reasons, v.notes)


# ---- the calendars' time zone ----------------------------------------------------------------

def test_the_hosts_reported_time_zone_is_read_from_the_probe():
    assert parse_time_zone("+0100\nTZ=\n/usr/share/zoneinfo/Europe/Berlin\n") == "Europe/Berlin"
    assert parse_time_zone("+0900\nTZ=:Asia/Tokyo\n/etc/localtime-other\n") == "Asia/Tokyo"
    assert parse_time_zone("+0530\nTZ=\n") == "+0530"
    assert parse_time_zone("") is None


def _night(zone_said: str | None, metadata: dict):
    cfg, snap = _ge_site(calendars=NIGHT, calendar="night")
    return (cfg.model_copy(update={"metadata": metadata}),
            snap.model_copy(update={"site_time_zone": zone_said}))


def test_a_calendar_is_read_in_the_zone_the_hosts_report():
    # NOW is Sunday 09:00 UTC, 18:00 in Tokyo; night's weekend stretch that holds 24 h
    # starts Friday 20:00 there, 11:00 UTC. Before: read in the engine's zone (20:00 UTC)
    v = run(_smp(4, "24:00:00"), _night("Asia/Tokyo", {})).verdict("delta")
    assert (v.verdict, v.estimated_start) == ("BUSY", datetime(2026, 3, 6, 11,
                                                                 tzinfo=timezone.utc)), v.notes
    assert any("at Fri 2026-03-06 20:00 (the cluster's time, Asia/Tokyo as its hosts report "
               "it)" in n for n in v.notes), v.notes
    # an offset alone is used too; the sites entry's zone wins over what the hosts say
    v = run(_smp(4, "24:00:00"), _night("+0900", {})).verdict("delta")
    assert v.estimated_start == datetime(2026, 3, 6, 11, tzinfo=timezone.utc), v.notes
    v = run(_smp(4, "24:00:00"), _night("Asia/Tokyo", {"timezone": "UTC"})).verdict("delta")
    assert v.estimated_start == datetime(2026, 3, 6, 20, tzinfo=timezone.utc), v.notes


def test_a_calendar_without_a_known_zone_says_it_is_read_in_the_engines():
    v = run(_smp(4, "24:00:00"), _night(None, {})).verdict("delta")
    assert v.verdict == "BUSY"
    assert any("(read in the engine's time zone: the sites entry sets no metadata.timezone "
               "and the site reported none)" in n for n in v.notes), v.notes


# ---- no limit ---------------------------------------------------------------------------------

def test_a_quota_of_infinity_or_a_mark_of_none_is_no_limit():
    # Grid Engine writes INFINITY of a number as 4294967295: no limit, not an amount. Before:
    # h_vmem=4294967295 and h_vmem=INFINITY were said not counted (not a number)
    hers = {"all.q@s1": [entry("1", "alice", 4, 2, vmem="10G")]}
    for limits in ("slots=4294967295,h_vmem=4294967295", "slots=INFINITY,h_vmem=INFINITY",
                   "slots=2147483647,h_vmem=infinity"):
        v = run(smp(8, "#$ -l h_vmem=8G"), site(rqs(f"users {{*}} to {limits}"), hers)
                ).verdict("delta")
        assert (v.verdict, v.reasons, v.not_checked) == ("READY", [], []), (limits, v.notes)


def test_a_memory_limit_in_bytes_past_a_count_is_still_an_amount():
    # 8589934592 bytes = 8G: no mark, held as a limit (the job asks 4 x 4G = 16G)
    v = run(smp(4, "#$ -l h_vmem=4G"), site(rqs("users {*} to h_vmem=8589934592"))
            ).verdict("delta")
    assert v.verdict == "RESTRICTED", (v.reasons, v.not_checked)
    assert "above its limit of 8G" in v.reasons[0]
