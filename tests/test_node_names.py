"""NodeNames: a partition's member names that answer `in` from a set, as a list would."""

from diamond_jupyter.model import Node, Partition, SiteSnapshot
from diamond_jupyter.placement_fit import NodeNames, partition_members


def test_membership_order_and_equality_are_a_lists():
    names = NodeNames(["c3", "c1", "g1"])
    assert names == ["c3", "c1", "g1"]  # the site's order, equal to the plain list
    assert "c1" in names and "g1" in names
    assert "c2" not in names and None not in names and 1 not in names


def test_it_cannot_be_changed_so_its_set_stays_in_step():
    names = NodeNames(["c1", "c2"])
    for change in (lambda: names.append("c3"), lambda: names.remove("c1"),
                   lambda: names.__setitem__(0, "c9"), lambda: names.pop(),
                   lambda: names.extend(["c3"]), lambda: names.__delitem__(0),
                   lambda: names.sort(), lambda: names.__iadd__(["c3"])):
        try:
            change()
        except TypeError as e:
            assert "read-only" in str(e)
        else:
            raise AssertionError("changed")
    assert names == ["c1", "c2"] and "c1" in names and "c9" not in names
    copy = list(names) + ["c3"]  # a copy is an ordinary list
    assert "c3" in copy and "c3" not in names


def test_partition_members_keeps_the_nodes_order():
    nodes = [Node(name=n, state="idle", cpus=4) for n in ("c2", "c1", "g1")]
    snap = SiteSnapshot(site="s", partitions=[Partition(name="cpu", nodes=["c[1-2]"]),
                                              Partition(name="all")], nodes=nodes)
    members = partition_members(snap, nodes)
    assert members == {"cpu": ["c2", "c1"], "all": ["c2", "c1", "g1"]}
    assert all(isinstance(v, NodeNames) for v in members.values())
    assert "g1" not in members["cpu"] and "g1" in members["all"]
