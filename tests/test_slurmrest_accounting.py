"""A slurmrestd site reads what the CLI reads: the QOS limits (slurmdb's `GET qos`, as
`sacctmgr show qos`), the user's associations and the accounts above them (`GET
associations?user=U`, then `?account=A` up the tree, as the CLI's `sacctmgr show assoc`
probe: the default QOS a job naming none runs under, the QOS it may use, the accounts'
limits), each queued job's QOS, account and held memory, and a running job's
time used (squeue's %M, from `start_time`, `suspend_time` and `pre_sus_time`), so placement
makes the same decisions and refusals over either door. Before, a slurmrestd snapshot had no
QOS (none of their limits checked) and no time used (a job resumed after a suspension was
planned to end as if it had run since its start).

The replies of each API version (tests/fixtures/outputs/slurmrestd/qos_*.json,
associations_*.json, licenses_*.json, jobs_*_v0.0.*.json) are written, not captured: those
of v0.0.38 as the installed 22.05.8 plugins declare and write them (checked in
tests/test_slurmrest_spec.py), those of v0.0.41 from the data parser's documented
schemas. A site without slurmdb (its plugin not loaded: 404) or without slurmdbd (a reply
of errors) has its QOS not known: no limit is read from it, none is checked. The licenses
(`GET licenses`, v0.0.38 on) fill the site's licenses as `scontrol show licenses` does; a
version without that call, or a call that fails, leaves them not known."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from stand_in_slurmrestd import StandInSlurmrestd
from test_placement_cases import NOW, hours, run
from test_placement_cases13 import selene
from test_placement_cases18_followups import SUSPEND, _used

from diamond_jupyter.dialects import slurm_rest
from diamond_jupyter.dialects.slurm_commands import (
    ASSOC_FIELDS,
    QOS_FIELDS,
    SlurmCommands,
    parse_assoc,
    parse_qos,
    parse_usage,
    with_usage,
)
from diamond_jupyter.model import SiteError

FIXTURES = Path(__file__).parent / "fixtures" / "outputs" / "slurmrestd"
VERSIONS = ["v0.0.38", "v0.0.41"]


def _reply(name: str) -> str:
    return (FIXTURES / name).read_text()


def _sacctmgr(name: str, **fields: str) -> str:
    """One `sacctmgr -nP show qos format=QOS_FIELDS` line, the fields not given empty."""
    return "|".join(fields.get(f, name if f == "Name" else "")
                    for f in QOS_FIELDS.split(",")) + "\n"


def _cli_qos(version: str) -> str:
    """What sacctmgr prints of the QOS the `qos_VERSION.json` replies hold (the same in
    each version)."""
    return "".join((
        _sacctmgr("normal", MaxTRESPerUser="cpu=256", MinTRES="cpu=16", MaxJobsPerUser="2",
                  MaxSubmitJobsPerUser="10"),
        _sacctmgr("wide", MaxTRES="node=2", MinTRES="node=2", Flags="DenyOnLimit,OverPartQOS"),
        _sacctmgr("gpuq", GrpTRES="gres/gpu=4", MinTRES="gres/gpu=1", Flags="DenyOnLimit"),
        _sacctmgr("short", MaxWall="04:00:00"),
    ))


@pytest.mark.parametrize("version", VERSIONS)
def test_the_qos_reply_of_each_version_reads_as_sacctmgr_shows_the_same_qos(version):
    rest = slurm_rest.parse_qos(_reply(f"qos_{version}.json"), version)
    assert rest == parse_qos(_cli_qos(version))
    assert rest["short"].max_wall_s == 4 * 3600 and rest["gpuq"].grp_tres == {"gres/gpu": 4}
    assert rest["wide"].flags == ["DenyOnLimit", "OverPartQOS"]
    # MaxJobsPerUser at `max.jobs.active_jobs.per.user`, MaxSubmitJobsPerUser at
    # `max.jobs.per.user` in every version (v0.0.38's plugin too); GrpSubmitJobs in none
    normal = rest["normal"]
    assert (normal.max_jobs_per_user, normal.max_submit_jobs_per_user) == (2, 10)
    assert normal.grp_submit_jobs is None


# the refusals of tests/test_placement_cases18_followups.py, on both doors
SCRIPTS = [
    ("#SBATCH -p batch -n 4 -t 1:00:00",
     "the job's QOS normal takes only jobs of at least 16 (MinTRESPerJob cpu=16): Slurm "
     "keeps it pending (QOSMinCpuNotSatisfied)"),
    ("#SBATCH -p gpu --qos=gpuq -n 4 -t 1:00:00",
     "(MinTRESPerJob gres/gpu=1): Slurm refuses it at submit (DenyOnLimit)"),
    ("#SBATCH -p batch --qos=wide -N 3 -t 1:00:00",
     "needs 3 nodes in all, the job's QOS wide allows 2 (MaxTRESPerJob node=2): Slurm "
     "refuses it at submit (DenyOnLimit)"),
    ("#SBATCH -p batch --qos=short -n 16 -t 5:00:00",
     "walltime 5:00:00 above the job's QOS short MaxWall 4:00:00"),
    ("#SBATCH -p batch -n 512 -t 1:00:00",
     "needs 512 CPUs in all, the job's QOS normal allows 256 (MaxTRESPerUser cpu=256)"),
]


def _site_with_qos(qos):
    cfg, snap = selene()
    return cfg, snap.model_copy(update={"qos": qos})


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("script, said", SCRIPTS)
def test_a_slurmrestd_site_refuses_what_the_cli_site_refuses(version, script, said):
    rest = run(script, _site_with_qos(slurm_rest.parse_qos(_reply(f"qos_{version}.json"),
                                                           version))).verdict("selene")
    cli = run(script, _site_with_qos(parse_qos(_cli_qos(version)))).verdict("selene")
    assert rest.verdict == cli.verdict == "INCOMPATIBLE", rest.reasons
    assert rest.reasons == cli.reasons
    assert any(said in r for r in rest.reasons), rest.reasons
    # the same job within the limits runs on both
    ok = run("#SBATCH -p batch --qos=wide -N 2 -t 1:00:00", _site_with_qos(
        slurm_rest.parse_qos(_reply(f"qos_{version}.json"), version)))
    assert ok.ranked[0].verdict == "READY"


def _rest_jobs(name: str, version: str, read_at: bool = True):
    """The jobs of a `GET jobs` reply as a slurmrestd snapshot reads them (read at NOW)."""
    outputs = {"queue": _reply(f"jobs_{name}_{version}.json")}
    if read_at:
        outputs[slurm_rest.READ_AT] = f"{NOW.timestamp():.0f}"
    return slurm_rest.parse_snapshot("selene", outputs, api_version=version).jobs


# job 71 (bob, scav, m01 whole, 12 h limit) started 4 h ago. Suspended by hand after 1 h
# run: held for its 11 h left from now. Resumed 1 h ago after 1 h run: it has run 2 h, so
# it ends in 10 h (not 8 h, as if it had run since its start).
@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("name, state, used, start_h", [
    ("suspended", "SUSPENDED", "1:00:00", 11), ("resumed", "RUNNING", "2:00:00", 10)])
def test_a_jobs_time_used_gives_the_same_start_as_squeue_percent_m(version, name, state,
                                                                   used, start_h):
    jobs = _rest_jobs(name, version)
    assert [(j.native_id, j.native_state, j.time_used_s, j.qos, j.account) for j in jobs] == [
        ("71", state, int(used.split(":")[0]) * 3600, "normal", "proj")]
    line = "|".join(["71", state, "2026-03-01T05:00:00", "2026-03-01T17:00:00",
                     "2026-03-01T04:00:00", "12:00:00", "1", "128", "bob", "scav", "N/A",
                     "m01", "None", "(null)", "job71"])
    cfg, cli = selene(_used(line, used), alloc={"m01": 128}, mem={"m01": 500000},
                      partitions=SUSPEND)
    assert [j.time_used_s for j in cli.jobs] == [j.time_used_s for j in jobs]
    rest = cli.model_copy(update={"jobs": jobs})
    script = "#SBATCH -p scav -w m01 -n 128 --mem=1G -t 1:00:00"
    v_rest, v_cli = run(script, (cfg, rest)).ranked[0], run(script, (cfg, cli)).ranked[0]
    assert (v_rest.verdict, v_rest.estimated_start) == ("BUSY", hours(start_h)), v_rest.notes
    assert v_cli.estimated_start == v_rest.estimated_start


def test_a_running_jobs_time_used_is_not_known_without_the_time_of_the_reading():
    # v0.0.38 gives no `last_update`: without the snapshot's own time, not guessed
    assert _rest_jobs("resumed", "v0.0.38", read_at=False)[0].time_used_s is None
    # a suspended job's time used needs no clock
    assert _rest_jobs("suspended", "v0.0.38", read_at=False)[0].time_used_s == 3600
    # v0.0.41 says when slurmctld made the list
    assert _rest_jobs("resumed", "v0.0.41", read_at=False)[0].time_used_s == 2 * 3600


def test_a_running_jobs_memory_is_read_from_its_allocated_tres():
    reply = json.loads(_reply("jobs_resumed_v0.0.41.json"))
    reply["jobs"][0]["tres_alloc_str"] = "cpu=256,mem=64G,node=2,billing=256"
    reply["jobs"][0]["node_count"] = {"set": True, "infinite": False, "number": 2}
    outputs = {"queue": json.dumps(reply)}
    job = slurm_rest.parse_snapshot("s", outputs, api_version="v0.0.41").jobs[0]
    assert job.memory_mb == 32 * 1024  # a node, as the CLI's tres-alloc reads


@pytest.mark.parametrize("reply, why", [
    (_reply("qos_no_slurmdbd.json"), "Unable to connect to database"),
    ("<html>Bad Gateway</html>", "not JSON"),
    ('{"meta": {}, "errors": []}', "no 'qos' list"),
])
def test_a_qos_reply_that_is_not_one_leaves_the_qos_not_known(reply, why):
    with pytest.raises(SiteError, match=why):
        slurm_rest.parse_qos(reply)
    cfg, cli = selene()
    snap = slurm_rest.parse_snapshot("selene", {"qos": reply})
    assert snap.qos is None
    assert any("QOS limits not read" in w and why in w for w in snap.warnings), snap.warnings
    # never a wrong limit: the QOS's limits are not checked, the job is not refused by them
    v = run("#SBATCH -p batch --qos=wide -N 3 -t 1:00:00",
            (cfg, cli.model_copy(update={"qos": snap.qos}))).verdict("selene")
    assert not any("QOS" in r for r in v.reasons), v.reasons


_NODES = json.dumps({"nodes": [{"name": "n1", "state": ["IDLE"], "cpus": 8,
                                "real_memory": 16000, "partitions": ["batch"]}]})
_PARTS = json.dumps({"partitions": [{"name": "batch", "nodes": {"configured": "n1"},
                                     "partition": {"state": ["UP"]}}]})


def _slurmdb_replies(version: str) -> dict[str, str]:
    """slurmdb's QOS and alice's associations (account proj under root), and from v0.0.40
    on slurmctld's shares of them (what they have used of their TRES-minutes)."""
    return {"qos": _reply(f"qos_{version}.json"),
            **{f"associations?{who}": _reply(f"associations_{name}_{version}.json")
               for who, name in (("user=alice", "alice"), ("account=proj", "proj"),
                                 ("account=root", "root"))},
            **({"shares?users=alice": _reply(f"shares_{version}.json")}
               if slurm_rest.api_number(version) >= slurm_rest.SHARES_SINCE else {})}


# what sshare prints of the TRES-minutes in shares_v0.0.41.json (GrpTRESRaw, TRESRunMins)
_SSHARE = ("root||cpu=0,mem=0|cpu=0,mem=0\n"
           " proj||cpu=91500,mem=0|cpu=7680,mem=0\n"
           "  proj|alice|cpu=61000,mem=0|cpu=3840,mem=0\n")


def _cli_assoc(version: str) -> str:
    """What the CLI's `sacctmgr show assoc` probe prints of the same associations (the
    same in each version)."""
    line = dict.fromkeys(ASSOC_FIELDS.split(","), "")
    return "user|alice\n" + "".join("|".join({**line, **f}.values()) + "\n" for f in (
        {"User": "alice", "Account": "proj", "DefaultQOS": "normal",
         "QOS": "capped,gpuq,normal,short,wide", "MaxTRES": "gres/gpu=8",
         "MaxJobs": "4", "MaxSubmitJobs": "6"},
        {"Account": "proj", "ParentName": "root", "GrpTRES": "cpu=512", "GrpJobs": "20",
         "GrpSubmitJobs": "50"},
        {"Account": "root", "QOS": "normal"}))


async def _rest_snapshot(tmp_path, version: str, queue: str = '{"jobs": []}'):
    replies = {"jobs": queue, "nodes": _NODES, "partitions": _PARTS,
               "reservations": '{"reservations": []}', **_slurmdb_replies(version)}
    async with StandInSlurmrestd(replies) as rest:
        site = rest.site(tmp_path, api_version=version, user="alice")
        try:
            snap = await site.snapshot(max_age_s=0)
            await site.snapshot(max_age_s=0)  # the capabilities are fresh: the queue alone
            return snap, rest.asked
        finally:
            await site.close()


@pytest.mark.parametrize("version", VERSIONS)
async def test_a_rest_site_asks_slurmdb_for_the_qos_and_associations_with_its_capabilities(
        tmp_path, version):
    snap, asked = await _rest_snapshot(tmp_path, version,
                                       _reply(f"jobs_resumed_{version}.json"))
    assert snap.reachable and not snap.warnings, snap.warnings
    assert snap.qos == parse_qos(_cli_qos(version))
    assert snap.user == "alice"
    cli_assocs = parse_assoc(_cli_assoc(version))[1]
    if slurm_rest.api_number(version) >= slurm_rest.SHARES_SINCE:  # GET shares, as sshare
        cli_assocs = with_usage(cli_assocs, parse_usage(_SSHARE), "alice")
        assert snap.associations[0].tres_mins_used == {"cpu": 61000, "mem": 0}
    assert snap.associations == cli_assocs
    assert [(j.native_id, j.qos, j.account) for j in snap.jobs] == [("71", "normal", "proj")]
    # v0.0.41: at slurmctld's last_update; v0.0.38: at this machine's clock when read
    # (the reply's job resumed at NOW - 1 h after 1 h run)
    used = 7200 if version != "v0.0.38" else time.time() - NOW.timestamp() + 7200
    assert abs(snap.jobs[0].time_used_s - used) < 30
    shares = ["shares?users=alice"] if version != "v0.0.38" else []
    assert asked == ["jobs", "licenses", "nodes", "partitions", "reservations", "qos",
                     "diag", "associations?user=alice", "associations?account=proj",
                     "associations?account=root", *shares, "jobs", "licenses"]


# a job naming no QOS runs under alice's default, normal (MinTRES cpu=16); one naming an
# account she has no association with is refused by sbatch; one above proj's GrpTRES never
# runs
ASSOC_SCRIPTS = [
    ("#SBATCH -p batch -n 4 -t 1:00:00", "the job's QOS normal takes only jobs of at least "
     "16 (MinTRESPerJob cpu=16)"),
    ("#SBATCH -p batch -n 16 -A other -t 1:00:00", "you have no association with account "
     "'other'"),
]


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("script, said", ASSOC_SCRIPTS)
async def test_the_rest_sites_associations_refuse_what_the_cli_sites_refuse(
        tmp_path, version, script, said):
    rest, _ = await _rest_snapshot(tmp_path, version)
    cfg, cli = selene()
    cli = cli.model_copy(update={"qos": parse_qos(_cli_qos(version)),
                                 "associations": parse_assoc(_cli_assoc(version))[1]})
    over_rest = cli.model_copy(update={"qos": rest.qos, "associations": rest.associations})
    v_rest = run(script, (cfg, over_rest)).verdict("selene")
    v_cli = run(script, (cfg, cli)).verdict("selene")
    assert v_rest.verdict == v_cli.verdict != "READY"
    assert v_rest.reasons == v_cli.reasons
    assert any(said in r for r in v_rest.reasons), v_rest.reasons


def test_associations_that_are_not_read_are_not_known():
    # the user's own reply of errors: not known (no default QOS, no refusal by account)
    out = {slurm_rest.ASSOCIATIONS: json.dumps([_reply("qos_no_slurmdbd.json")])}
    snap = slurm_rest.parse_snapshot("selene", out)
    assert snap.associations is None
    assert any("associations not read" in w and "Unable to connect to database" in w
               for w in snap.warnings), snap.warnings
    # an account's reply of errors: the user's associations stand, that account's limits
    # are left out, said
    out = {slurm_rest.ASSOCIATIONS: json.dumps([
        _reply("associations_alice_v0.0.38.json"), _reply("qos_no_slurmdbd.json")])}
    snap = slurm_rest.parse_snapshot("selene", out)
    assert [(a.level, a.account) for a in snap.associations] == [("user", "proj")]
    assert any("an account's association not read" in w for w in snap.warnings)
    # a user with no association in the reply: not known (not "no association at all")
    empty = json.dumps({"associations": [], "errors": []})
    assert slurm_rest.parse_snapshot(
        "s", {slurm_rest.ASSOCIATIONS: json.dumps([empty])}).associations is None


async def test_a_rest_site_without_slurmdb_knows_no_qos_and_stops_asking(tmp_path):
    # the stand-in answers slurmdb paths it was given no reply for as a slurmrestd without
    # its slurmdb plugin does: 404, plain text
    replies = {"jobs": '{"jobs": []}', "nodes": _NODES, "partitions": _PARTS,
               "reservations": '{"reservations": []}'}
    async with StandInSlurmrestd(replies) as rest:
        site = rest.site(tmp_path, api_version="v0.0.38")
        try:
            first = await site.snapshot(max_age_s=0)
            assert first.reachable and first.qos is None and not first.warnings
            site._caps_at = -1e9  # the capabilities' 60 s over: asked again, slurmdb not
            second = await site.snapshot(max_age_s=0)
            assert second.reachable and second.qos is None
            assert rest.asked == ["jobs", "licenses", "nodes", "partitions",
                                  "reservations", "qos", "diag", "jobs", "licenses", "nodes",
                                  "partitions", "reservations", "diag"]
            assert first.associations is None
        finally:
            await site.close()


async def test_a_rest_site_whose_slurmdbd_is_down_says_the_qos_were_not_read(tmp_path):
    replies = {"jobs": ['{"jobs": []}'] * 2, "nodes": [_NODES] * 2,
               "partitions": [_PARTS] * 2, "reservations": ['{"reservations": []}'] * 2,
               **_slurmdb_replies("v0.0.38"),
               "qos": [_reply("qos_no_slurmdbd.json"), _reply("qos_v0.0.38.json")]}
    async with StandInSlurmrestd(replies) as rest:
        site = rest.site(tmp_path, api_version="v0.0.38", user="alice")
        try:
            first = await site.snapshot(max_age_s=0)
            # the site stands (nodes and partitions kept for their lifetime), the QOS not
            # known, said
            assert first.reachable and first.qos is None and [n.name for n in first.nodes]
            assert any("QOS limits not read" in w and "Unable to connect to database" in w
                       for w in first.warnings), first.warnings
            site._caps_at = -1e9
            second = await site.snapshot(max_age_s=0)  # slurmdbd back: read
            assert second.qos == parse_qos(_cli_qos("v0.0.38")) and not second.warnings
            assert second.associations == parse_assoc(_cli_assoc("v0.0.38"))[1]
            # the associations were not asked of a slurmdbd that did not answer
            assert rest.asked.count("associations?user=alice") == 1
        finally:
            await site.close()


def test_odd_qos_entries_are_left_out_never_read_as_limits():
    reply = json.dumps({"qos": [
        None, 7, {"name": ""}, {"name": "two words"},
        {"name": "odd", "flags": "DENY_LIMIT", "limits": {"max": {
            "tres": {"per": {"job": [{"type": "cpu", "count": -1}, {"count": 4},
                                     {"type": "node", "count": {"set": False}}, "x"]}},
            "wall_clock": {"per": {"job": 4294967295}}}}}]})
    assert slurm_rest.parse_qos(reply) == {"odd": parse_qos("odd|||||||||||\n")["odd"]}


# ---- licenses (GET licenses, v0.0.38 on) --------------------------------------------------

SCONTROL_LICENSES = ("LicenseName=matlab Total=4 Used=1 Free=3 Reserved=0 Remote=no\n"
                     "LicenseName=ansys Total=2 Used=2 Free=0 Reserved=0 Remote=yes\n")


@pytest.mark.parametrize("version", VERSIONS)
def test_the_licenses_reply_of_each_version_reads_as_scontrol_shows_them(version):
    cli = SlurmCommands()
    snap = slurm_rest.parse_snapshot("selene", {
        slurm_rest.LICENSES: _reply(f"licenses_{version}.json")}, api_version=version)
    assert (snap.licenses, snap.licenses_free) == (
        cli.parse_licenses(SCONTROL_LICENSES), cli.parse_licenses(SCONTROL_LICENSES, True))
    assert snap.licenses == {"matlab": 4, "ansys": 2} and snap.licenses_free["ansys"] == 0
    # no Free: Total less Used and Reserved; neither Free nor Used: how many are free is
    # not known (the totals still are)
    reply = {"licenses": [{"LicenseName": "m", "Total": 5, "Used": 1, "Reserved": 1}]}
    assert slurm_rest.parse_licenses(json.dumps(reply)) == ({"m": 5}, {"m": 3})
    reply["licenses"].append({"LicenseName": "n", "Total": 2})
    assert slurm_rest.parse_licenses(json.dumps(reply)) == ({"m": 5, "n": 2}, None)


LICENSE_SCRIPTS = [
    "#SBATCH -p batch -n 16 -L matlab:5 -t 1:00:00",  # more than the site has
    "#SBATCH -p batch -n 16 -L comsol -t 1:00:00",  # not defined here
    "#SBATCH -p batch -n 16 -L ansys:1 -t 1:00:00",  # none free now
    "#SBATCH -p batch -n 16 -L matlab:2 -t 1:00:00",  # within them
]


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("script", LICENSE_SCRIPTS)
def test_a_rest_site_places_a_job_asking_licenses_as_the_cli_site(version, script):
    cfg, cli = selene()
    cmds = SlurmCommands()
    cli = cli.model_copy(update={"licenses": cmds.parse_licenses(SCONTROL_LICENSES),
                                 "licenses_free": cmds.parse_licenses(SCONTROL_LICENSES,
                                                                      True)})
    rest = slurm_rest.parse_snapshot("selene", {
        slurm_rest.LICENSES: _reply(f"licenses_{version}.json")}, api_version=version)
    over_rest = cli.model_copy(update={"licenses": rest.licenses,
                                       "licenses_free": rest.licenses_free})
    v_rest = run(script, (cfg, over_rest)).verdict("selene")
    v_cli = run(script, (cfg, cli)).verdict("selene")
    assert (v_rest.verdict, v_rest.reasons, v_rest.notes, v_rest.not_checked) == (
        v_cli.verdict, v_cli.reasons, v_cli.notes, v_cli.not_checked)
    # and not as a site whose licenses are not known
    unknown = run(script, (cfg, cli.model_copy(update={
        "licenses": None, "licenses_free": None}))).verdict("selene")
    assert (unknown.verdict, unknown.reasons, unknown.notes, unknown.not_checked) != (
        v_rest.verdict, v_rest.reasons, v_rest.notes, v_rest.not_checked)


def test_licenses_not_read_are_not_known_and_a_jobs_licenses_come_with_it():
    snap = slurm_rest.parse_snapshot("s", {slurm_rest.LICENSES: _reply("qos_no_slurmdbd.json")})
    assert snap.licenses is None and snap.licenses_free is None
    assert any("licenses not read" in w and "Unable to connect" in w for w in snap.warnings)
    snap = slurm_rest.parse_snapshot("s", {slurm_rest.LICENSES_UNREAD: "HTTP 404"})
    assert snap.licenses is None and any("HTTP 404" in w for w in snap.warnings)
    # each job's licenses, as squeue -O Licenses gives them; an any-of entry: not known
    reply = json.loads(_reply("jobs_resumed_v0.0.38.json"))
    job = reply["jobs"][0]
    reply["jobs"] = [job | {"licenses": "matlab:2,ansys"},
                     job | {"job_id": 72, "licenses": "matlab|ansys"},
                     job | {"job_id": 73, "licenses": ""}]
    jobs = slurm_rest.parse_snapshot("s", {"queue": json.dumps(reply)}).jobs
    assert [(j.native_id, j.licenses) for j in jobs] == [
        ("71", {"matlab": 2, "ansys": 1}), ("72", None), ("73", {})]


async def test_a_rest_site_asks_the_licenses_with_each_queue_where_its_version_has_them(
        tmp_path):
    replies = {"jobs": '{"jobs": []}', "nodes": _NODES, "partitions": _PARTS,
               "reservations": '{"reservations": []}',
               "licenses": _reply("licenses_v0.0.38.json")}
    async with StandInSlurmrestd(replies) as rest:
        site = rest.site(tmp_path, api_version="v0.0.38")
        old = rest.site(tmp_path, name="old", api_version="v0.0.37")
        try:
            snap = await site.snapshot(max_age_s=0)
            assert snap.licenses == {"matlab": 4, "ansys": 2} and not snap.warnings
            assert rest.paths[:2] == ["/slurm/v0.0.38/jobs", "/slurm/v0.0.38/licenses"]
            # v0.0.37 has no such call: not asked, the licenses not known, nothing said
            before = len(rest.paths)
            snap = await old.snapshot(max_age_s=0)
            assert snap.licenses is None and not snap.warnings
            assert not any(p.endswith("licenses") for p in rest.paths[before:])
        finally:
            await site.close()
            await old.close()


def test_another_users_associations_are_left_out():
    # dbv0.0.36 and dbv0.0.37 take no user= filter: the reply holds everyone's
    reply = json.loads(_reply("associations_proj_v0.0.38.json"))
    bob = reply["associations"][1] | {"user": "bob", "account": "other",
                                      "default": {"qos": "wide"}}
    reply["associations"].append(bob)
    out = {slurm_rest.ASSOCIATIONS: json.dumps([json.dumps(reply)]), "user": "alice"}
    snap = slurm_rest.parse_snapshot("selene", out)
    assert [(a.level, a.account, a.default_qos) for a in snap.associations
            if a.level == "user"] == [("user", "proj", "normal")]
    # read for bob, only his
    snap = slurm_rest.parse_snapshot("selene", out | {"user": "bob"})
    assert [(a.account, a.default_qos) for a in snap.associations] == [("other", "wide")]


def test_an_associations_max_tres_minutes_are_read_as_sacctmgr_shows_them():
    reply = json.loads(_reply("associations_proj_v0.0.38.json"))
    reply["associations"][1]["max"]["tres"]["minutes"]["per"]["job"] = [
        {"type": "cpu", "name": "", "id": 1, "count": 1000}]
    out = {slurm_rest.ASSOCIATIONS: json.dumps([json.dumps(reply)]), "user": "alice"}
    snap = slurm_rest.parse_snapshot("selene", out)
    assert [a.max_tres_mins_per_job for a in snap.associations if a.level == "user"] == [
        {"cpu": 1000}]
