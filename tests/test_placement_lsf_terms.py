"""Placement cases worked by hand, ninth sweep: an LSF compound job (`-R "1*{...} +
16*{...}"`) placed term by term on an LSF site, as a PBS job's chunks are: each term on
the hosts that fit it and its own select[], its span[] honoured (ptile pieces on distinct
hosts), the start when every term finds room at once, the reason naming the term left
without a host."""

from __future__ import annotations

from test_placement_cases import NOW, hours, only, reasons, run
from test_placement_cases8 import _wjob, wren

# wren (test_placement_cases8): w1-w2 XeonGold 32 CPUs 192 GB with ib; w3 EPYC 64 CPUs
# 512 GB with ib and bigmem; w4 EPYC 64 CPUs 512 GB


def lsf(resreq: str) -> str:
    return f'#BSUB -R "{resreq}"\n#BSUB -W 1:00'


BIG_LEADER = "1*{select[bigmem] rusage[mem=400GB]} + 64*{span[ptile=32]}"
W1_W2_BUSY = (_wjob("1", "bob", 32, "w1", 3), _wjob("2", "bob", 32, "w2", 3))


def test_lsf_a_leader_of_much_memory_and_workers_of_little_each_fit_their_hosts():
    # the leader's slot asks 400 GB (w3 only, the bigmem host), the workers 2 hosts of 32
    # slots and no memory. Before, the job was placed as its superset, 3 hosts of 32 slots
    # and 400 GB each: INCOMPATIBLE
    v = only(run(lsf(BIG_LEADER), wren()), "wren", "normal")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)


def test_lsf_terms_share_a_host_while_it_has_room():
    # w1 and w2 are full until +3 h: the leader takes a slot of w3, the workers w3's other
    # 63 slots and w4: they start now (not when w1 and w2 free)
    v = only(run(lsf(BIG_LEADER), wren(*W1_W2_BUSY)), "wren")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)


def test_lsf_a_term_waits_for_the_only_host_its_select_allows():
    # w3, the one bigmem host, is full until +2 h: the workers could start now on w1 and
    # w2, the leader waits for w3; the terms start together at +2 h. Before, the job was
    # READY now
    v = only(run(lsf("1*{select[bigmem]} + 64*{span[ptile=32]}"),
                 wren(_wjob("3", "bob", 64, "w3", 2))), "wren")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))
    assert any("queue normal: its terms find room all at once at +2:00:00" in n
               for n in v.notes)


def test_lsf_a_ptile_terms_hosts_are_distinct():
    # 64 slots, 16 on each of 4 hosts, and one more slot anywhere. w1 and w2 are full
    # until +3 h: w3 and w4 have room for four pieces of 16 but ptile puts each on a host
    # of its own: +3 h. Before: INCOMPATIBLE (read as 5 hosts of 16 slots)
    v = only(run(lsf("64*{span[ptile=16]} + 1*{-}"), wren(*W1_W2_BUSY)), "wren")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(3))
    v = only(run(lsf("64*{span[ptile=16]} + 1*{-}"), wren()), "wren")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)


def test_lsf_the_reason_names_the_term_left_without_a_host():
    # the workers take all of w3 and w4 (64 slots on each): the bigmem leader is left
    # without a host
    p = run(lsf("1*{select[bigmem]} + 128*{span[ptile=64]}"), wren())
    assert reasons(p, "wren") == (
        "the terms 1*{select[bigmem]}+128*{span[ptile=64]} do not fit the site's nodes "
        "together (each term's span): they ask 129 CPUs in all, the nodes that can hold "
        "them have 128; term 1 (1*{select[bigmem]}) is the one left without a host")


def test_lsf_a_term_no_host_can_hold_is_named():
    # 48 slots on one host: only w3 and w4 have 48 CPUs, and the term's select keeps the
    # XeonGold hosts (w1, w2) only
    p = run(lsf("1*{-} + 48*{select[model==XeonGold] span[hosts=1]}"), wren())
    assert reasons(p, "wren") == ("term 2 (48*{select[model==XeonGold] span[hosts=1]}): no "
                                  "host meets select[model==XeonGold] that can run it")


def test_lsf_a_select_of_the_whole_job_and_m_still_bound_every_term():
    # -m w1 w2: the 400 GB leader fits neither: the job cannot run
    p = run(lsf(BIG_LEADER).replace("#BSUB -W", "#BSUB -m \"w1 w2\"\n#BSUB -W"), wren())
    assert reasons(p, "wren") == (
        "term 1 (1*{select[bigmem] rusage[mem=400GB]}): none of the hosts -m and select[] "
        "leave it (w1, w2) can run it: needs 409600 MB memory per host, largest host has "
        "196608 MB")
