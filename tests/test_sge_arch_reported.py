"""Grid Engine matches a job's `-l arch` request expression (wildcards, `!`, `&`, `|`)
against the architecture each host reports (`qhost`'s arch_string, `lx-amd64`), not only
against a value complex_values sets; and a quota limit on a CSTRING complex matches the
job's request in any case, as Grid Engine compares CSTRING values (a STRING or RESTRING
limit stays case-sensitive). Placement on snapshots parsed from recorded-shape `qhost`,
`qstat` and `qconf` outputs."""

from __future__ import annotations

from test_placement_cases import run
from test_placement_ge_rqs_resources import rqs, site, smp
from test_placement_sge_pbs38 import VALUED

ARM_S2 = {"s2": "lx-arm64"}
# VALUED (arch RESTRING, site CSTRING, ssd BOOL ...) and a STRING complex
TYPED = VALUED + "room    ro    STRING    ==    YES    NO    NONE    0\n"


def test_the_parser_keeps_each_hosts_reported_architecture():
    _, snap = site("", arches=ARM_S2)
    assert {n.name: (n.arch_string, n.architecture) for n in snap.nodes} == {
        "s1": ("lx-amd64", "x86_64"), "s2": ("lx-arm64", "aarch64")}


def test_a_host_reporting_another_architecture_is_passed_over():
    # before: only complex_values were compared, so s2 (lx-arm64) was counted as a host
    v = run(smp(2, "#$ -l 'arch=lx-*&!*-arm64'"), site("", arches=ARM_S2)).verdict("delta")
    assert v.verdict == "READY", (v.reasons, v.notes)
    assert ("queue all.q: passed over: host s2 reports arch=lx-arm64 (qhost), which the "
            "job's -l arch=lx-*&!*-arm64 does not match: Grid Engine starts there only a "
            "job whose request matches the value set") in v.notes, v.notes


def test_no_host_reporting_a_matching_architecture_refuses_the_queue():
    v = run(smp(2, "#$ -l 'arch=sol-*|darwin-*'"), site("", arches=ARM_S2)).verdict("delta")
    assert v.verdict == "INCOMPATIBLE" and v.reasons == [
        "queue all.q: host s1 reports arch=lx-amd64 (qhost), which the job's "
        "-l arch=sol-*|darwin-* does not match; host s2 reports arch=lx-arm64 (qhost), which "
        "the job's -l arch=sol-*|darwin-* does not match: Grid Engine starts there only a "
        "job whose request matches the value set"], v.reasons


def test_an_alternative_naming_each_hosts_architecture_passes_none_over():
    v = run(smp(2, "#$ -l 'arch=lx-amd64|lx-arm64'"), site("", arches=ARM_S2)
            ).verdict("delta")
    assert v.verdict == "READY" and not any("arch" in n for n in v.notes), v.notes


def test_a_host_setting_arch_in_complex_values_is_matched_by_that_value():
    arm_set = "<resourcevalue name='arch' dominance='hf'>lx-amd64</resourcevalue>"
    v = run(smp(2, "#$ -l 'arch=lx-amd*'"), site("", complexes=VALUED, arches=ARM_S2,
                                                 host_values={"s2": arm_set})).verdict("delta")
    assert v.verdict == "READY" and not any("arch" in n for n in v.notes), v.notes


def test_a_plain_architecture_is_said_once_by_the_hosts_architecture_check():
    v = run(smp(2, "#$ -l arch=lx-arm64"), site("")).verdict("delta")
    assert v.verdict == "INCOMPATIBLE" and not any("(qhost)" in r for r in v.reasons), \
        v.reasons


def test_a_cstring_quota_limit_matches_the_request_in_any_case():
    # before: `site=BER` did not admit `-l st=ber`: the job was said never to start
    v = run(smp(2, "#$ -l st=ber"), site(rqs("users {*} to site=BER"), complexes=TYPED)
            ).verdict("delta")
    assert (v.verdict, v.reasons) == ("READY", []), v.reasons
    v = run(smp(2, "#$ -l st=muc"), site(rqs("users {*} to site=BER"), complexes=TYPED)
            ).verdict("delta")
    assert v.verdict == "RESTRICTED" and "the job asks site=muc, which the limit site=BER " \
        "does not admit" in v.reasons[0], v.reasons


def test_a_string_quota_limit_stays_case_sensitive():
    v = run(smp(2, "#$ -l ro=a1"), site(rqs("users {*} to room=A1"), complexes=TYPED)
            ).verdict("delta")
    assert v.verdict == "RESTRICTED" and "the job asks room=a1, which the limit room=A1 " \
        "does not admit" in v.reasons[0], v.reasons


def test_a_restring_arch_stays_case_sensitive_against_the_reported_one():
    v = run(smp(2, "#$ -l 'arch=LX-*'"), site("")).verdict("delta")
    assert v.verdict == "INCOMPATIBLE" and "hosts s1, s2 report arch=lx-amd64 (qhost), " \
        "which the job's -l arch=LX-* does not match" in v.reasons[0], v.reasons


def test_the_arch_shortcut_is_matched_against_the_reported_architecture_too():
    v = run(smp(2, "#$ -l 'a=lx-*&!*-arm64'"), site("", complexes=VALUED, arches=ARM_S2)
            ).verdict("delta")
    assert v.verdict == "READY" and any(n.startswith(
        "queue all.q: passed over: host s2 reports arch=lx-arm64 (qhost)") for n in v.notes), \
        v.notes
