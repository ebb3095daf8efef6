"""Who a queue (or a Grid Engine project) takes jobs of, by user: PBS's `acl_users` (where
`acl_user_enable` is True), Grid Engine's queue `user_lists` / `xuser_lists` and project
`acl` / `xacl` (access lists, `qconf -su`; projects, `qconf -sprj`). Lists that leave the user
out refuse the job at submit, which placement now says (RESTRICTED, naming the queue or
project and the list), as it says PBS's acl_groups. Before, none was read: the queue was
READY for a user it refuses. What cannot be told here (a Unix group's members, the host a
PBS entry names, who the probe ran as) is said, never refused on."""

from __future__ import annotations

import json

import pytest
from test_placement_cases import NOW, run

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.dialects.pbs_commands import PbsCommands

pbs = PbsCommands()


def _pbs_site(acl: dict[str, str], user: str | None = "alice"):
    """A PBS Pro site of one free 128-CPU node and one queue, workq, with the queue
    attributes `acl`, probed as `user`."""
    nodes = json.dumps({"nodes": {"n003": {"state": "free", "resources_available": {
        "host": "n003", "mem": "1tb", "ncpus": 128}, "resources_assigned": {}}}})
    queues = json.dumps({"Queue": {"workq": {
        "queue_type": "Execution", "enabled": "True", "started": "True", **acl}}})
    snap = pbs.parse_snapshot("pro", {
        "nodes": nodes, "queues": queues, "queue": "",
        "server": json.dumps({"Server": {"pbs01": {"default_queue": "workq"}}}),
        **({"user": user + "\n"} if user else {}), "group": "physics\n"})
    return (SiteConfig(name="pro", scheduler="pbs", metadata={"architecture": "x86_64"}),
            snap.model_copy(update={"taken_at": NOW}))


PBS_JOB = "#PBS -l select=1:ncpus=4\n#PBS -l walltime=1:00:00"


@pytest.mark.parametrize("enable, users, user, verdict, said", [
    # alice is listed (`+` grants): placed
    ("True", "alice,+bob", "alice", "READY", None),
    # alice is in none: qsub refuses her job
    ("True", "bob,+carol", "alice", "RESTRICTED",
     "queue workq takes the jobs of listed users only and you (alice) are in none of its "
     "lists (acl_users: bob, carol): the scheduler refuses it"),
    # `@*` is any host: alice listed
    ("True", "alice@*", "alice", "READY", None),
    # listed from one host only: whether hers is that host is not known here, said
    ("True", "alice@login1.hpc", "alice", "READY",
     "queue workq takes the jobs of alice@login1.hpc (acl_users); whether that takes yours "
     "(your group or the host you submit from) is not known here"),
    # the list not enabled: not checked
    ("False", "bob", "alice", "READY", None),
    # a list that denies is read in order by PBS: not read here, not checked
    ("True", "-alice,bob", "alice", "READY", None),
    # who the probe ran as is not known: said, not refused
    ("True", "bob", None, "READY",
     "queue workq takes or refuses users by acl_users; who you are is not known here"),
])
def test_a_pbs_queues_acl_users_refuse_a_user_it_does_not_list(enable, users, user,
                                                                verdict, said):
    site = _pbs_site({"acl_user_enable": enable, "acl_users": users}, user)
    v = run(PBS_JOB, site).verdict("pro")
    assert v.verdict == verdict, (v.reasons, v.notes)
    if said is not None:
        assert said in v.reasons + v.notes, (v.reasons, v.notes)
    else:
        assert not any("acl_users" in r for r in v.reasons + v.notes), (v.reasons, v.notes)


def test_acl_users_are_read_as_a_list_of_the_queue():
    queue = _pbs_site({"acl_user_enable": "True", "acl_users": "+alice, bob@*.hpc"})[1]
    [acl] = queue.partitions[0].user_acls
    assert (acl.source, acl.users, acl.deny) == ("acl_users", ["alice", "bob@*.hpc"], False)
    assert _pbs_site({})[1].partitions[0].user_acls is None


# ---- Grid Engine: user_lists and xuser_lists ------------------------------------------------

SGE_OUT = __import__("pathlib").Path(__file__).parent / "fixtures" / "outputs" / "sge"

# `qconf -su` of each access list, as the snapshot's loop prints them
ACCESS_LISTS = ("name    staff\ntype    ACL\nfshare  0\noshare  0\nentries alice,carol\n\n"
                "name    blocked\ntype    ACL\nfshare  0\noshare  0\nentries bob\n\n"
                "name    admins\ntype    ACL\nfshare  0\noshare  0\nentries @wheel\n\n")


def _sge_site(user: str | None, all_q: str = "staff", short_q_x: str = "blocked",
              lists: str | None = ACCESS_LISTS, projects: str | None = None):
    """delta (recorded: all.q 24 h, short.q 30 min on dn1, dn2) whose all.q takes the users
    of `all_q` (user_lists) and whose short.q refuses those of `short_q_x` (xuser_lists),
    probed as `user`."""
    from diamond_jupyter.dialects.sge_commands import SgeCommands

    queues = (SGE_OUT / "delta_qconf_sq.txt").read_text().split("\n\n")
    queues = [queues[0].replace("user_lists            NONE", f"user_lists            {all_q}"),
              queues[1].replace("xuser_lists           NONE",
                                f"xuser_lists           {short_q_x}"), *queues[2:]]
    outputs = {"hosts": (SGE_OUT / "delta_qhost_xml.xml").read_text(),
               "queues": "\n\n".join(queues),
               "queue": (SGE_OUT / "delta_qstat_f_xml_r.xml").read_text(),
               **({"access_lists": lists} if lists is not None else {}),
               **({"projects": projects} if projects is not None else {}),
               **({"user": user + "\n"} if user else {})}
    snap = SgeCommands().parse_snapshot("delta", outputs)
    return (SiteConfig(name="delta", scheduler="sge", metadata={"architecture": "x86_64"}),
            snap.model_copy(update={"taken_at": NOW}))


def test_the_access_lists_are_read_into_the_queues():
    _, snap = _sge_site("alice")
    acls = {p.name: [(a.source, a.users, a.deny) for a in p.user_acls or []]
            for p in snap.partitions}
    assert acls == {"all.q": [("user_lists staff", ["alice", "carol"], False)],
                    "short.q": [("xuser_lists blocked", ["bob"], True)]}
    assert snap.user == "alice"


SGE_JOB = "#$ -l h_rt=0:10:00\n#$ -pe smp 2"


@pytest.mark.parametrize("user, queue, verdict, said", [
    ("alice", "all.q", "READY", None),
    # bob is in none of all.q's user_lists: qsub refuses his job there
    ("bob", "all.q", "RESTRICTED",
     "queue all.q takes the jobs of listed users only and you (bob) are in none of its lists "
     "(user_lists staff: alice, carol): the scheduler refuses it"),
    # bob is in short.q's xuser_lists: refused there
    ("bob", "short.q", "RESTRICTED",
     "queue short.q refuses your jobs: you (bob) are in its xuser_lists blocked"),
    ("carol", "short.q", "READY", None),
])
def test_a_grid_engine_queue_refuses_a_user_its_lists_leave_out(user, queue, verdict, said):
    v = run(f"#$ -q {queue}\n{SGE_JOB}", _sge_site(user)).verdict("delta")
    assert v.verdict == verdict, (v.reasons, v.notes)
    if said is not None:
        assert said in v.reasons, v.reasons
    else:
        assert not any("lists" in r for r in v.reasons), v.reasons


def test_a_job_naming_no_queue_goes_to_the_queue_that_takes_the_user():
    # dave: in none of all.q's lists, not refused by short.q: placed there
    v = run(SGE_JOB, _sge_site("dave")).verdict("delta")
    assert (v.verdict, v.partition) == ("READY", "short.q"), (v.reasons, v.notes)
    # bob: all.q leaves him out and short.q refuses him: no queue takes his job
    v = run(SGE_JOB, _sge_site("bob")).verdict("delta")
    assert v.verdict == "RESTRICTED", (v.reasons, v.notes)


@pytest.mark.parametrize("all_q, lists, user, said", [
    # a Unix group's members are not known here: said, not refused
    ("admins", ACCESS_LISTS, "bob",
     "queue all.q takes the jobs of @wheel (user_lists admins); whether that takes yours"),
    # the lists were not read, one set per host, or a list not read: not checked
    ("staff", None, "bob", None),
    ("NONE,[dn1=staff]", ACCESS_LISTS, "bob", None),
    ("nosuchlist", ACCESS_LISTS, "bob", None),
    # who the probe ran as is not known: said
    ("staff", ACCESS_LISTS, None,
     "queue all.q takes or refuses users by user_lists staff; who you are is not known here"),
])
def test_what_the_lists_cannot_tell_is_never_refused_on(all_q, lists, user, said):
    v = run(f"#$ -q all.q\n{SGE_JOB}", _sge_site(user, all_q, "NONE", lists)
            ).verdict("delta")
    assert v.verdict == "READY", (v.reasons, v.notes)
    if said is not None:
        assert any(said in n for n in v.notes), v.notes


# `qconf -sprj` of each project: physics takes staff's users and refuses blocked's; open
# takes everyone; lab names a list not read (not checked)
PROJECTS = ("name    physics\noticket 0\nfshare  0\nacl     staff\nxacl    blocked\n\n"
            "name    open\noticket 0\nfshare  0\nacl     NONE\nxacl    NONE\n\n"
            "name    lab\noticket 0\nfshare  0\nacl     nosuchlist\nxacl    NONE\n\n")


@pytest.mark.parametrize("user, project, verdict, said", [
    ("carol", "physics", "READY", None),
    ("dave", "physics", "RESTRICTED",
     "project physics takes the jobs of listed users only and you (dave) are in none of its "
     "lists (acl staff: alice, carol): the scheduler refuses it"),
    ("bob", "open", "READY", None),
    ("dave", "lab", "READY", None),
    # no -P: no project's lists apply
    ("dave", None, "READY", None),
])
def test_a_grid_engine_project_refuses_a_user_its_acl_leaves_out(user, project, verdict,
                                                                   said):
    script = (f"#$ -P {project}\n" if project else "") + f"#$ -q short.q\n{SGE_JOB}"
    v = run(script, _sge_site(user, "NONE", "NONE", projects=PROJECTS)).verdict("delta")
    assert v.verdict == verdict, (v.reasons, v.notes)
    if said is not None:
        assert said in v.reasons, v.reasons
    else:
        assert not any("project" in r for r in v.reasons), v.reasons


def test_a_project_xacl_refuses_its_users():
    v = run(f"#$ -P physics\n#$ -q short.q\n{SGE_JOB}",
            _sge_site("bob", "NONE", "NONE", projects=PROJECTS)).verdict("delta")
    assert v.verdict == "RESTRICTED"
    assert "project physics refuses your jobs: you (bob) are in its xacl blocked" in v.reasons
    # the projects not read: nothing known, nothing refused
    v = run(f"#$ -P physics\n#$ -q short.q\n{SGE_JOB}",
            _sge_site("bob", "NONE", "NONE")).verdict("delta")
    assert v.verdict == "READY", v.reasons
