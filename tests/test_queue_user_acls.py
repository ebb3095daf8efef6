"""Who a queue takes jobs of, by user: PBS's `acl_users` (where `acl_user_enable` is True)
and Grid Engine's `user_lists` / `xuser_lists` (access lists, `qconf -su`). A queue whose
lists leave the user out refuses the job at submit, which placement now says (RESTRICTED,
naming the queue and the list), as it says PBS's acl_groups. Before, neither was read: the
queue was READY for a user it refuses. What cannot be told here (a Unix group's members, the
host a PBS entry names, who the probe ran as) is said, never refused on."""

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
