"""Grid Engine's request expressions and BOOL values, as placement compares a job's `-l` with
quota limits and with the values hosts and queues set in complex_values.

sge_types(1), complex(5): a string request is wildcard patterns joined by `!`, `&`, `|`
(binding in that order) and grouped by parentheses; a BOOL is TRUE or FALSE in any case,
or 1 or 0. Before, a request of `&`, `!` or parentheses was neither compared nor refused,
and `-l ssd=1` / `ssd=0` was read as a number, not as the BOOL it asks."""

from __future__ import annotations

import fnmatch
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_placement_cases import run
from test_placement_ge_rqs_resources import rqs, site, smp
from test_placement_sge_pbs38 import NO_SSD, VALUED

from diamond_jupyter.sge_expression import (
    ExpressionError,
    expression_matches,
    ge_bool,
    parse_expression,
)

# ---- the pure helper ---------------------------------------------------------------------------


@pytest.mark.parametrize(("expression", "value", "expected"), [
    ("lx-amd64&!lx-arm64", "lx-amd64", True),
    ("lx-amd64&!lx-arm64", "lx-arm64", False),
    ("(lx-*|sol-*)&!*-sparc", "sol-amd64", True),
    ("(lx-*|sol-*)&!*-sparc", "sol-sparc", False),
    ("(lx-*|sol-*)&!*-sparc", "darwin-x86", False),
    ("!ber", "muc", True),
    ("!!ber", "ber", True),
    ("a|b&c", "a", True),  # & binds before |: a|(b&c)
    ("(a|b)&c", "a", False),
    ("node[!0-4]*", "node7", True),  # `!` inside a set is the set's negation
    ("node[!0-4]*", "node2", False),
])
def test_expressions_are_matched_as_grid_engine_reads_them(expression, value, expected):
    assert expression_matches(expression, value) is expected


def test_caseless_types_match_in_any_case():
    assert expression_matches("BER*&!*X", "berlin", caseless=True)
    assert not expression_matches("BER*", "berlin")


@pytest.mark.parametrize(("expression", "said"), [
    ("(lx-*|sol-*", "a parenthesis not closed at character 12"),
    ("lx-*&", "a pattern missing at character 6"),
    ("lx-*)", "')' not expected at character 5"),
    ("&lx-*", "a pattern expected, '&' found at character 1"),
    ("", "a pattern missing at character 1"),
])
def test_a_malformed_expression_says_where_and_what_is_taken(expression, said):
    with pytest.raises(ExpressionError) as e:
        parse_expression(expression)
    assert said in str(e.value) and "! (not), & (and), | (or)" in str(e.value), e.value


def test_bool_values_are_read_in_grid_engines_forms():
    assert [ge_bool(v) for v in ("TRUE", "true", "True", "1", "1.000000", "FALSE", "0",
                                 "0.000000")] == [True] * 5 + [False] * 3
    assert [ge_bool(v) for v in ("yes", "no", "2", "", "t")] == [None] * 5


# a reference: the expression rewritten as Python's not/and/or, whose precedence is GE's
_PATTERNS = ["a*", "b?", "ab", "*c", "[ab]c", "c", "*"]
_VALUES = ["a", "ab", "ac", "bc", "c", "bb", "abc", ""]


def _reference(expression: str, value: str) -> bool:
    python = re.sub(r"[^!&|()]+", lambda m: f"m({m.group(0)!r})", expression)
    python = python.replace("!", " not ").replace("&", " and ").replace("|", " or ")
    return eval(python, {"m": lambda p: fnmatch.fnmatchcase(value, p)})  # noqa: S307


def _render(depth: int) -> st.SearchStrategy[str]:
    leaf = st.sampled_from(_PATTERNS)
    if depth == 0:
        return leaf
    below = _render(depth - 1)
    return st.one_of(
        leaf,
        below.map(lambda e: f"!{e}"),
        below.map(lambda e: f"({e})"),
        st.tuples(below, st.sampled_from("&|"), below).map("".join))


@settings(max_examples=300, deadline=None)
@given(_render(4), st.sampled_from(_VALUES))
def test_random_expressions_match_as_the_reference_evaluates_them(expression, value):
    assert expression_matches(expression, value) is _reference(expression, value)


# ---- placement: quota limits and complex_values --------------------------------------------------

ARCH_VALUED = VALUED  # arch is a RESTRING, ssd a BOOL


def _arch_site(values: str):
    return site("", complexes=ARCH_VALUED, queue_conf={"all.q": f"complex_values {values}\n"})


def test_an_expression_request_is_compared_with_a_queues_value():
    at = _arch_site("arch=lx-amd64,[s2=arch=sol-sparc]")
    v = run(smp(2, "#$ -l arch='lx-amd64&!lx-arm64'"), at).verdict("delta")
    assert v.verdict == "READY", (v.reasons, v.notes)
    assert ("queue all.q: passed over: its instance on s2 sets arch=sol-sparc in the queue's "
            "complex_values, which the job's -l arch=lx-amd64&!lx-arm64 does not match: Grid "
            "Engine starts there only a job whose request matches the value set") in v.notes
    v = run(smp(2, "#$ -l 'arch=(lx-*|sol-*)&!*-sparc'"), _arch_site("arch=sol-sparc")
            ).verdict("delta")
    assert v.verdict == "INCOMPATIBLE" and v.reasons == [
        "queue all.q: its instances on s1, s2 set arch=sol-sparc in the queue's complex_values, "
        "which the job's -l arch=(lx-*|sol-*)&!*-sparc does not match: Grid Engine starts "
        "there only a job whose request matches the value set"], v.reasons


def test_an_expression_request_is_compared_with_a_quota_limit():
    v = run(smp(2, "#$ -l 'arch=(lx-*|sol-*)&!*-sparc'"),
            site(rqs("users {*} to arch=sol-sparc"))).verdict("delta")
    assert v.verdict == "RESTRICTED" and v.reasons == [
        "resource quota set q rule 1 (users {*} to arch=sol-sparc): the job asks "
        "arch=(lx-*|sol-*)&!*-sparc, which the limit arch=sol-sparc does not admit: Grid "
        "Engine never starts it under this rule"], v.reasons


def test_a_malformed_expression_is_said_not_checked_naming_where():
    v = run(smp(2, "#$ -l 'arch=(lx-*|sol-*'"), _arch_site("arch=lx-amd64")).verdict("delta")
    assert v.verdict == "READY" and any(
        "-l arch: request expression '(lx-*|sol-*': a parenthesis not closed at character 12"
        in n for n in v.not_checked), v.not_checked


@pytest.mark.parametrize("asked", ["1", "TRUE", "True"])
def test_a_bool_asked_as_one_or_true_in_any_case_is_compared_with_a_hosts_value(asked):
    v = run(smp(2, f"#$ -l ssd={asked}"), site("", complexes=VALUED,
                                              host_values={"s1": NO_SSD})).verdict("delta")
    # Before (ssd=1): s1, whose ssd is FALSE, was not passed over
    assert any(n.startswith("queue all.q: passed over: host s1 sets ssd=0.000000") and
               f"-l ssd={asked} does not match" in n for n in v.notes), v.notes


def test_a_bool_asked_as_zero_is_compared_with_a_quota_limit():
    ssd_false = rqs("users {*} queues all.q to ssd=false")
    v = run(smp(2, "#$ -l ssd=1"), site(ssd_false, complexes=VALUED)).verdict("delta")
    assert v.verdict == "RESTRICTED" and "the job asks ssd=1, which the limit ssd=false " \
        "does not admit" in v.reasons[0], v.reasons
    v = run(smp(2, "#$ -l ssd=0"), site(ssd_false, complexes=VALUED)).verdict("delta")
    assert (v.verdict, v.reasons) == ("READY", []), v.reasons


def test_a_bool_asked_with_a_word_grid_engine_does_not_take_is_refused_saying_which():
    v = run(smp(2, "#$ -l ssd=yes"), site("", complexes=VALUED)).verdict("delta")
    assert v.verdict == "INCOMPATIBLE" and v.reasons == [
        "the job's -l ssd=yes is no value of ssd, a BOOL complex in qconf -sc: Grid Engine "
        "takes TRUE, FALSE (any case), 1 or 0"], v.reasons
