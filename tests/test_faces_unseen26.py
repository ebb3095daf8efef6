"""Faces sweep 26: one mistake through every face at once, without the test bed. The same
bad value given to the command line, the REST API on a real Jupyter server, the `%diamond`
magics and the MCP tools: job names holding a newline, a NUL or a right-to-left mark, sizes
of memory without a unit or of nothing, time limits in forms no scheduler reads, counts past
any bound, site names mistyped, in full-width letters or thousands of characters long, a
REST body that is a list or gives a key twice deep inside, a job id of another user's job
or under another site's prefix or typed `alpha::77`, a job cancelled twice, counts of 0
or in digits no scheduler reads, values of only blanks, an option under both its spellings,
a script past its bound. Each face refuses it with the same words naming what was given,
where, and what would be accepted, and loses nothing (nothing is submitted, nothing
cancelled); what is accepted runs as given on every face.

Tests marked `fault` failed before this sweep's fixes; the others are guards."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import sweep_helpers
from sweep_helpers import assert_magic_refused, cli_refusal, mcp_refusal, rest_refused, sbatch_calls

from diamond_jupyter.model import Job, JobState
from diamond_jupyter.store import Store

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")
user, shell, jp_server_config, rest = sweep_helpers.FACES_FIXTURES
SCRIPT = sweep_helpers.FACES_SCRIPT
JSON = {"Content-Type": "application/json"}
LONG_SITE = "a" * 3000
LISTED = "expected how many to list, a whole number from 1 to "  # a list's limit refused


def _calls(user) -> str:
    return (user.fake / "calls").read_text() if (user.fake / "calls").exists() else ""


def _body(**fields: Any) -> bytes:
    return json.dumps(fields).encode()


# ---- (1) one submit option given wrong, the same words on every face -----------------------
# (face-neutral words: the CLI and the magics name `--name`, REST and MCP `name`)

NEWLINE = "contains a control character (newline, U+000A) at position 1; only printable " \
          "characters and tabs are accepted"
RTL = "holds U+202E RIGHT-TO-LEFT OVERRIDE at position 1, which is not shown as itself"
NUL = "contains a control character"
BARE_ZERO = "'0': expected a size above 0 with a unit, such as 4G or 500M"
ZERO_G = "'0G': expected a size such as 4G or 500M (a number above 0 with an optional K, M, " \
         "G or T unit)"

# (what is refused, CLI args before the script, the magic's line, the REST/MCP fields)
OPTIONS = [
    ("newline-name", ["--name", "a\nb"], None, {"name": "a\nb"}, NEWLINE),
    ("rtl-name", ["--name", "a\u202eb"], "--name a\u202eb", {"name": "a\u202eb"}, RTL),
    ("bare-zero-memory", ["--memory", "0"], "--memory 0", {"memory": "0"}, BARE_ZERO),
    ("zero-memory", ["--memory", "0G"], "--memory 0G", {"memory": "0G"}, ZERO_G),
]
IDS = [o[0] for o in OPTIONS]


@pytest.mark.parametrize("what,args,line,fields,said", OPTIONS, ids=IDS)
def test_a_submit_option_given_wrong_on_the_command_line(user, what, args, line, fields,
                                                        said):
    cli_refusal(user.run("submit", "--site", "alpha", *args, "job.sh"), said)
    assert sbatch_calls(user) == []


@pytest.mark.parametrize("what,args,line,fields,said",
                         [o for o in OPTIONS if o[2] is not None],
                         ids=[o[0] for o in OPTIONS if o[2] is not None])
def test_a_submit_option_given_wrong_in_a_magic(shell, user, capsys, what, args, line,
                                                fields, said):
    assert_magic_refused(shell, user, capsys, f"submit --site alpha {line}", SCRIPT, said)


@pytest.mark.parametrize("what,args,line,fields,said", OPTIONS, ids=IDS)
async def test_a_submit_option_given_wrong_over_rest(rest, what, args, line, fields, said):
    await rest_refused(rest, _body(script=SCRIPT, site="here", **fields), said)


@pytest.mark.parametrize("what,args,line,fields,said", OPTIONS, ids=IDS)
async def test_a_submit_option_given_wrong_to_mcp(user, what, args, line, fields, said):
    said_back = await mcp_refusal(user, "submit", {"script": SCRIPT, "site": "alpha",
                                                   **fields})
    assert said in said_back, said_back
    assert sbatch_calls(user) == []


async def test_a_name_with_a_nul_is_refused_over_rest(rest):
    """(argv and a magic's line cannot carry a NUL)"""
    await rest_refused(rest, _body(script=SCRIPT, site="here", name="a\x00b"), NUL)


async def test_a_name_with_a_nul_is_refused_by_mcp(user):
    said_back = await mcp_refusal(user, "submit", {"script": SCRIPT, "site": "alpha",
                                                   "name": "a\x00b"})
    assert NUL in said_back and "position 1" in said_back, said_back


# ---- (2) time limits in the script, the same words on every face ---------------------------

def _timed(limit: str) -> str:
    return f"#!/bin/bash\n#SBATCH --time={limit}\necho hi\n"


ISO = "line 2: bad time 'P1D' in `#SBATCH --time=P1D`; expected M, M:S, H:M:S, D-H, D-H:M or " \
      "D-H:M:S ('P1D' is an ISO 8601 duration, 24 h 0 min 0 s, which no scheduler reads)"


def test_an_iso_time_limit_in_a_script_is_refused_by_the_command_line_and_magic(
        shell, user, capsys):
    user.write("iso.sh", _timed("P1D"))
    cli_refusal(user.run("submit", "--site", "alpha", "iso.sh"), ISO)
    assert_magic_refused(shell, user, capsys, "submit --site alpha", _timed("P1D"), ISO)


async def test_an_iso_time_limit_in_a_script_is_refused_over_rest(rest):
    await rest_refused(rest, _body(script=_timed("P1D"), site="here"), ISO)


async def test_an_iso_time_limit_in_a_script_is_refused_by_mcp(user):
    said_back = await mcp_refusal(user, "submit", {"script": _timed("P1D"), "site": "alpha"})
    assert ISO in said_back, said_back


@pytest.mark.parametrize("limit,rendered", [("1-00:00:00", "1-00:00:00"), ("90", "01:30:00"),
                                            ("1:30", "00:01:30")])
def test_a_time_limit_in_each_form_sbatch_reads_is_taken_as_sbatch_reads_it(
        shell, user, limit, rendered):
    """`1:30` is a minute and a half (sbatch's M:S), `90` an hour and a half: the same on
    the command line's --time, in a script on the command line and in a magic's cell."""
    user.run("submit", "--site", "alpha", "--time", limit, "job.sh", code=0)
    user.write("timed.sh", _timed(limit))
    user.run("submit", "--site", "alpha", "timed.sh", code=0)
    shell.run_cell_magic("diamond", "submit --site alpha", _timed(limit))
    scripts = [Path(c.split()[-1]).read_text() for c in sbatch_calls(user)]
    assert len(scripts) == 3
    for s in scripts:
        assert f"#SBATCH --time={rendered}\n" in s, s


def test_an_iso_time_limit_on_the_command_line_says_the_forms_it_takes(user):
    cli_refusal(user.run("submit", "--site", "alpha", "--time", "P1D", "job.sh"),
                "argument --time: expected minutes, HH:MM:SS or D-HH[:MM[:SS]], not 'P1D'")


# ---- (3) memory the schedulers read alike ----------------------------------------------------

@pytest.mark.parametrize("memory,rendered", [("4G", "4G"), ("4096M", "4G"), ("4GB", "4G")])
def test_memory_in_each_unit_is_submitted_as_given_on_the_command_line_and_magic(
        shell, user, memory, rendered):
    user.run("submit", "--site", "alpha", "--memory", memory, "job.sh", code=0)
    shell.run_cell_magic("diamond", f"submit --site alpha --memory {memory}", SCRIPT)
    scripts = [Path(c.split()[-1]).read_text() for c in sbatch_calls(user)]
    assert len(scripts) == 2
    for s in scripts:
        assert f"#SBATCH --mem={rendered}\n" in s, s


# ---- (4) counts past any bound --------------------------------------------------------------

HUGE = 10 ** 20


def test_a_node_count_past_any_bound_is_refused_on_the_command_line_and_magic(
        shell, user, capsys):
    said = f"--nodes {HUGE} is too large"
    cli_refusal(user.run("submit", "--site", "alpha", "--nodes", str(HUGE), "job.sh"), said)
    assert_magic_refused(shell, user, capsys, f"submit --site alpha --nodes {HUGE}", SCRIPT,
                         said)


HUGE_SPEC = {"script": "echo hi", "resources": {"nodes": HUGE}}


async def test_a_node_count_past_any_bound_in_a_spec_is_refused_over_rest(rest):
    said = await rest_refused(rest, _body(spec=HUGE_SPEC, site="here"), f"{HUGE}")
    assert "nodes" in said, said


async def test_a_node_count_past_any_bound_in_a_spec_is_refused_by_mcp(user):
    said_back = await mcp_refusal(user, "submit", {"spec": HUGE_SPEC, "site": "alpha"})
    assert f"{HUGE}" in said_back and "nodes" in said_back, said_back


def test_a_hedge_past_its_bound_says_the_range_on_the_command_line(user):
    cli_refusal(user.run("submit", "--hedge", "99999", "job.sh"),
                "--hedge takes a number of copies from 1 to 8, not '99999'")


async def test_a_hedge_past_its_bound_says_the_range_over_rest(rest):
    said = await rest_refused(rest, _body(script=SCRIPT, hedge=99999), "hedge")
    assert "1 to 8" in said and "99999" in said, said


async def test_a_hedge_past_its_bound_says_the_range_to_mcp(user):
    said_back = await mcp_refusal(user, "submit", {"script": SCRIPT, "hedge": 99999})
    assert "1 to 8" in said_back and "99999" in said_back, said_back


# ---- (5) site names mistyped, full-width, thousands of characters ---------------------------

@pytest.mark.parametrize("given", ["alpah", "\uff41\uff4c\uff50\uff48\uff41"])
def test_a_near_miss_site_is_refused_with_the_site_meant_everywhere(shell, user, capsys,
                                                                    given):
    said = f"unknown site {given!r} (did you mean alpha? known: alpha, ghost)"
    cli_refusal(user.run("submit", "--site", given, "job.sh"), said)
    assert_magic_refused(shell, user, capsys, f"submit --site {given}", SCRIPT, said)


async def test_a_near_miss_site_is_refused_with_the_site_meant_over_rest(rest):
    await rest_refused(rest, _body(script=SCRIPT, site="hree"),
                       "unknown site 'hree' (did you mean here? known: here)")


async def test_a_near_miss_site_is_refused_with_the_site_meant_by_mcp(user):
    said_back = await mcp_refusal(user, "submit", {"script": SCRIPT, "site": "alpah"})
    assert "unknown site 'alpah' (did you mean alpha? known: alpha, ghost)" in said_back


LONG_SAID = f"unknown site {LONG_SITE[:40]!r}... (3000 characters) (known: "


def test_fault_a_site_name_thousands_long_is_named_by_its_start_and_length(shell, user,
                                                                          capsys):
    """The whole 3000-character name was echoed in the one-line reason."""
    last = cli_refusal(user.run("submit", "--site", LONG_SITE, "job.sh"), LONG_SAID)
    assert len(last) < 300, len(last)
    assert_magic_refused(shell, user, capsys, f"submit --site {LONG_SITE}", SCRIPT, LONG_SAID)


async def test_fault_a_site_name_thousands_long_is_cut_over_rest(rest):
    said = await rest_refused(rest, _body(script=SCRIPT, site=LONG_SITE), LONG_SAID)
    assert len(said) < 300, len(said)


async def test_fault_a_site_name_thousands_long_is_cut_by_mcp(user):
    said_back = await mcp_refusal(user, "submit", {"script": SCRIPT, "site": LONG_SITE})
    assert LONG_SAID in said_back and len(said_back) < 400, said_back


# ---- (6) REST bodies: a list, a key twice deep inside ---------------------------------------

@pytest.mark.parametrize("body,said", [
    (b'[{"script": "echo hi", "site": "here"}]', 'must be a JSON object of named fields '
     '({"field": value, ...}), not an array; send the one object itself, not a list '
     'holding it'),
    (b'"echo hi"', "must be a JSON object of named fields ({\"field\": value, ...}), not a "
                   "string"),
    (b'{"spec": {"script": "echo hi", "resources": {"nodes": 1, "nodes": 2}}, "site": "here"}',
     "'nodes' twice"),
])
async def test_a_rest_body_that_is_a_list_or_repeats_a_nested_key_is_a_400(rest, body, said):
    await rest_refused(rest, body, said)


# ---- (7) job ids: another user's job, another site's prefix, cancelled twice --------------

def _stored(store_path: Path, job_id: str, state: JobState) -> None:
    site, _, native = job_id.partition(":")
    store = Store(store_path)
    store.upsert_job(Job(id=job_id, site=site, native_id=native, name="sim"))
    store.apply_state(job_id, state)


THEIRS = "no job 'alpha:99' in the store (`diamond jobs` lists the known ones)"


def test_another_users_job_is_not_cancelled_on_the_command_line_or_magic(shell, user,
                                                                       capsys):
    cli_refusal(user.run("cancel", "alpha:99"), THEIRS)
    assert_magic_refused(shell, user, capsys, "cancel alpha:99", None, THEIRS)
    assert "scancel" not in _calls(user)


async def test_another_users_job_is_not_cancelled_over_rest(rest, tmp_path):
    code, reply = await rest("POST", "jobs/here:99/cancel")
    assert code == 404 and reply["message"] == THEIRS.replace("alpha", "here"), (code, reply)
    calls = tmp_path / "here-slurm" / "calls"
    assert not calls.exists() or "scancel" not in calls.read_text()


async def test_another_users_job_is_not_cancelled_by_mcp(user):
    said_back = await mcp_refusal(user, "cancel", {"job_id": "alpha:99"})
    assert THEIRS in said_back, said_back
    assert "scancel" not in _calls(user)


OTHER_PREFIX = "no job 'ghost:77' in the store (did you mean alpha:77? `diamond jobs` lists " \
               "the known ones)"


def test_a_job_under_another_sites_prefix_is_named_with_the_one_meant(shell, user, capsys):
    user.job("alpha:77", JobState.RUNNING)
    cli_refusal(user.run("status", "ghost:77"), OTHER_PREFIX)
    assert_magic_refused(shell, user, capsys, "status ghost:77", None, OTHER_PREFIX)


async def test_a_job_under_another_sites_prefix_is_named_over_rest(rest, tmp_path):
    _stored(tmp_path / "store.sqlite3", "here:77", JobState.RUNNING)
    code, reply = await rest("GET", "jobs/there:77")
    assert code == 404 and reply["message"] == OTHER_PREFIX.replace(
        "ghost", "there").replace("alpha", "here"), (code, reply)


async def test_a_job_under_another_sites_prefix_is_named_by_mcp(user):
    user.job("alpha:77", JobState.RUNNING)
    said_back = await mcp_refusal(user, "status", {"job_id": "ghost:77"})
    assert OTHER_PREFIX in said_back, said_back


def test_fault_a_job_cancelled_twice_in_a_magic_says_it_had_ended(shell, user, capsys):
    """The second cancel said "alpha:77: CANCELLED (cancel requested)", as if sent again;
    the command line said it had already ended."""
    user.job("alpha:77", JobState.RUNNING)
    shell.run_line_magic("diamond", "cancel alpha:77")
    assert "cancel of alpha:77 sent to alpha; its state changes once alpha confirms " \
           "(`%diamond status alpha:77`)" in capsys.readouterr().out
    shell.run_line_magic("diamond", "status alpha:77")  # the site no longer lists it
    capsys.readouterr()
    shell.run_line_magic("diamond", "cancel alpha:77")
    out = capsys.readouterr()
    assert "alpha:77 had already ended (CANCELLED): nothing to cancel" in out.out + out.err
    assert _calls(user).count("scancel") == 1


async def test_fault_a_job_cancelled_twice_through_mcp_says_it_had_ended(user):
    """The tool answered "cancel requested for alpha:77" for a job long cancelled."""
    from diamond_jupyter.mcp_server import build_server

    user.job("alpha:77", JobState.CANCELLED)
    server = build_server(str(user.sites), root=user.root)
    got = await server.call_tool("cancel", {"job_id": "alpha:77"})
    assert "had already ended (CANCELLED)" in str(got), got
    assert "scancel" not in _calls(user)


# ---- (8) an option given twice under its two spellings; `--` as the id ---------------------

ONE_OPTION = "--memory and --mem are one option, given twice ('4G' and '8G'); give it once"


def test_fault_memory_given_under_both_its_spellings_names_both(shell, user, capsys):
    """It said "--mem is given twice" to one who had typed --memory once and --mem once."""
    cli_refusal(user.run("submit", "--site", "alpha", "--memory", "4G", "--mem", "8G",
                         "job.sh"), ONE_OPTION)
    assert_magic_refused(shell, user, capsys, "submit --site alpha --memory 4G --mem 8G",
                         SCRIPT, ONE_OPTION)


DASHES = "job ID '--' is malformed: expected SITE:NUMBER, e.g. alpha:42"


def test_a_double_dash_given_as_the_id_is_named_as_an_id_on_the_command_line(user):
    cli_refusal(user.run("status", "--", "--"), DASHES)
    cli_refusal(user.run("cancel", "--", "--"), DASHES)
    assert "scancel" not in _calls(user)


async def test_a_double_dash_given_as_the_id_is_named_as_an_id_by_mcp(user):
    for tool in ("status", "cancel"):
        said_back = await mcp_refusal(user, tool, {"job_id": "--"})
        assert DASHES in said_back, said_back
    assert "scancel" not in _calls(user)


async def test_a_double_dash_given_as_the_id_is_named_as_an_id_over_rest(rest):
    code, reply = await rest("GET", "jobs/--")
    assert code == 404 and DASHES in reply["message"], (code, reply)


# ---- (9) a job name thousands of characters long: cut as every scheduler would, said short --

def test_fault_a_name_thousands_long_is_said_by_its_start_and_length(user):
    """The note that the name was cut echoed all 3000 characters of it."""
    res = user.run("submit", "--site", "alpha", "--name", "x" * 3000, "job.sh", code=0)
    [note] = [ln for ln in res.stderr.splitlines() if "job name" in ln]
    assert f"job name {'x' * 40!r}... (3000 characters) is submitted to alpha as " \
           f"{'x' * 40!r}" in note and len(note) < 300, note
    assert f"#SBATCH --job-name={'x' * 40}\n" in sweep_helpers.submitted_script(user)


# ---- (10) a script past the bound a job script holds ---------------------------------------

BIG = SCRIPT + "# " + "x" * (4 << 20) + "\n"
TOO_BIG = f"is {len(BIG)} bytes, more than the {4 << 20} a job script may hold"


def test_a_script_past_its_bound_is_refused_on_the_command_line_and_magic(shell, user,
                                                                          capsys):
    user.write("big.sh", BIG)
    cli_refusal(user.run("submit", "--site", "alpha", "big.sh"),
                f"big.sh: more than {4 << 20} bytes, more than a job script holds")
    assert_magic_refused(shell, user, capsys, "submit --site alpha", BIG, TOO_BIG)


async def test_a_script_past_its_bound_is_refused_by_mcp(user):
    said_back = await mcp_refusal(user, "submit", {"script": BIG, "site": "alpha"})
    assert TOO_BIG in said_back, said_back[:300]


async def test_a_script_past_its_bound_is_refused_over_rest(rest):
    """(the server's bound on a body leaves room for a script at its bound: the script's
    own words answer, as on the other faces)"""
    await rest_refused(rest, _body(script=BIG, site="here"), TOO_BIG)


# ---- (11) a job id typed with a colon twice or zeros before its number ---------------------

@pytest.mark.parametrize("typed", ["alpha:077", "alpha::77"])
def test_fault_an_id_with_zeros_or_a_second_colon_names_the_job_meant(shell, user, capsys,
                                                                     typed):
    """No job was suggested: the number after `::` or `0` was not read."""
    user.job("alpha:77", JobState.RUNNING)
    said = f"no job {typed!r} in the store (did you mean alpha:77? `diamond jobs` lists"
    cli_refusal(user.run("cancel", typed), said)
    assert_magic_refused(shell, user, capsys, f"cancel {typed}", None, said)
    assert "scancel" not in _calls(user)


async def test_fault_an_id_with_zeros_names_the_job_meant_by_mcp(user):
    user.job("alpha:77", JobState.RUNNING)
    said_back = await mcp_refusal(user, "status", {"job_id": "alpha:077"})
    assert "no job 'alpha:077' in the store (did you mean alpha:77?" in said_back, said_back


async def test_fault_an_id_with_a_second_colon_names_the_job_meant_over_rest(rest, tmp_path):
    _stored(tmp_path / "store.sqlite3", "here:77", JobState.RUNNING)
    code, reply = await rest("GET", "jobs/here::77")
    assert code == 404 and "no job 'here::77' in the store (did you mean here:77?" in \
        reply["message"], (code, reply)


# ---- (12) a count of none where a job needs one --------------------------------------------

ZERO_NODES = "spec.resources.nodes 0: expected a whole number, 1 or more (leave it out for " \
             "the site's default)"


def test_no_nodes_are_refused_on_the_command_line_and_magic(shell, user, capsys):
    said = "argument --nodes: expected a whole number, 1 or more, not '0'"
    cli_refusal(user.run("submit", "--site", "alpha", "--nodes", "0", "job.sh"), said)
    assert_magic_refused(shell, user, capsys, "submit --site alpha --nodes 0", SCRIPT,
                         "expected a whole number, 1 or more, not '0'")


async def test_fault_a_spec_of_no_nodes_is_refused_over_rest(rest):
    """A spec's `nodes: 0` was taken and submitted as the site's default (one node), where
    the command line's --nodes 0 and every dialect's directive are refused."""
    await rest_refused(rest, _body(spec={"script": "echo hi", "resources": {"nodes": 0}},
                                   site="here"), ZERO_NODES)


@pytest.mark.parametrize("field", ["nodes", "tasks", "cpus_per_task"])
async def test_fault_a_spec_of_no_nodes_tasks_or_cpus_is_refused_by_mcp(user, field):
    said_back = await mcp_refusal(user, "submit", {
        "spec": {"script": "echo hi", "resources": {field: 0}}, "site": "alpha"})
    assert ZERO_NODES.replace("nodes", field) in said_back, said_back


# ---- (13) a blank value where a name or a size goes ----------------------------------------

@pytest.mark.parametrize("field,value", [("name", "   "), ("mem", ""), ("mem", "  "),
                                         ("partition", " ")])
def test_a_blank_value_is_refused_on_the_command_line(user, field, value):
    cli_refusal(user.run("submit", "--site", "alpha", f"--{field}={value}", "job.sh"),
                f"argument --{field}", ": expected ", f"not {value!r} (an empty or blank value")


BLANKS = [("name", "a name"), ("memory", "a size such as 4G"), ("gpu_type", "a GPU model")]


@pytest.mark.parametrize("field,what", BLANKS)
async def test_fault_a_blank_value_is_refused_over_rest(rest, field, what):
    """`"name": "   "` was submitted as a job named `___`."""
    await rest_refused(rest, _body(script=SCRIPT, site="here", **{field: "   "}),
                       f"{field}: expected {what}, not '   ' (an empty or blank value)")


@pytest.mark.parametrize("field,what", BLANKS)
async def test_fault_a_blank_value_is_refused_by_mcp(user, field, what):
    said_back = await mcp_refusal(user, "submit", {"script": SCRIPT, "site": "alpha",
                                                   field: "   "})
    assert f"{field}: expected {what}, not '   ' (an empty or blank value)" in said_back, \
        said_back


# ---- (14) counts in digits no scheduler reads ----------------------------------------------

@pytest.mark.parametrize("option,typed,said", [
    ("--nodes", "\u0661", "expected a whole number, 1 or more, not '\u0661'"),
    ("--nodes", "1_0", "expected a whole number, 1 or more, not '1_0'"),
    ("--gpus", "\uff12", "expected a whole number, 0 or more, not '\uff12'"),
])
def test_fault_a_count_in_other_digits_is_refused_on_the_command_line_and_magic(
        shell, user, capsys, option, typed, said):
    """`--nodes 1_0` submitted 10 nodes and `--gpus ２` two GPUs (Python's int() reads
    both), where the REST API takes ASCII digits only."""
    cli_refusal(user.run("submit", "--site", "alpha", option, typed, "job.sh"),
                f"argument {option}: {said}")
    assert_magic_refused(shell, user, capsys, f"submit --site alpha {option} {typed}",
                         SCRIPT, said)


def test_fault_a_hedge_in_full_width_digits_is_refused(user):
    cli_refusal(user.run("submit", "--hedge", "\uff12", "job.sh"),
                "--hedge takes a number of copies from 1 to 8, not '\uff12'")


async def test_a_count_in_other_digits_is_refused_over_rest(rest):
    code, reply = await rest("GET", "jobs?limit=%EF%BC%92")
    assert code == 400 and reply["message"] == f"limit: {LISTED}500, "\
        "not '\uff12'", \
        (code, reply)


def test_fault_a_count_thousands_of_digits_long_is_named_by_its_start_and_length(
        shell, user, capsys):
    """A whole number past int()'s 4300 digits was "expected a whole number, 1 or more"."""
    said = "expected a whole number, 1 or more, of at most 40 digits, not " \
           f"{'9' * 20!r}... (5000 characters)"
    cli_refusal(user.run("submit", "--site", "alpha", "--nodes", "9" * 5000, "job.sh"),
                f"argument --nodes: {said}")
    assert_magic_refused(shell, user, capsys, f"submit --site alpha --nodes {'9' * 5000}",
                         SCRIPT, said)


# ---- (15) leftovers: a script REST takes, a listing's limit, times in other digits ----------

TWO_MB = SCRIPT + "# " + "x" * (2 << 20) + "\n"


def test_a_two_megabyte_script_runs_from_the_command_line(user):
    user.write("two.sh", TWO_MB)
    user.run("submit", "--site", "alpha", "two.sh", code=0)
    assert len(sbatch_calls(user)) == 1


async def test_fault_a_two_megabyte_script_runs_over_rest(rest, tmp_path):
    """A body over 1 MB was a 413 while the other faces took a script of up to 4 MB."""
    code, reply = await rest("POST", "jobs", _body(script=TWO_MB, site="here"), headers=JSON)
    assert code in (200, 201) and reply["id"].startswith("here:"), (code, str(reply)[:300])
    assert len(sweep_helpers.here_sbatch_calls(tmp_path)) == 1


async def test_fault_a_body_past_the_bound_names_the_script_bound_too(rest):
    body = _body(script="echo hi\n" + "#" * (6 << 20), site="here")
    code, reply = await rest("POST", "jobs", body, headers=JSON)
    assert code == 413 and reply["message"] == (
        f"the request body is {len(body)} bytes; this server accepts at most "
        f"{(4 << 20) + (1 << 20)} (DiamondApp.max_body_bytes), for a job script of at most "
        f"{4 << 20} bytes and the rest of the body"), (code, reply)
    assert (await rest("GET", "jobs"))[1]["jobs"] == []


def test_a_limit_of_0_is_refused_on_the_command_line(user):
    cli_refusal(user.run("jobs", "--limit", "0"),
                f"argument --limit: {LISTED}{2**63 - 1}, not '0'")


@pytest.mark.parametrize("listing", ["jobs", "transfers", "tasks", "workflows"])
async def test_fault_a_limit_of_0_is_refused_over_rest(rest, listing):
    """`jobs?limit=0` (and transfers, tasks) answered an empty page where `--limit 0` is
    refused: a listing's limit is 1 or more on every face (workflows: a guard)."""
    code, reply = await rest("GET", f"{listing}?limit=0")
    assert code == 400 and reply["message"].startswith(f"limit: {LISTED}"), \
        (code, reply)


FULL_WIDTH_TIME = "expected minutes, HH:MM:SS or D-HH[:MM[:SS]], not '\uff19\uff10'"


def test_fault_a_time_in_full_width_digits_is_refused_on_the_command_line_and_magic(
        shell, user, capsys):
    """`--time ９０` ran an hour and a half (\\d and int() read any digits)."""
    cli_refusal(user.run("submit", "--site", "alpha", "--time", "\uff19\uff10", "job.sh"),
                f"argument --time: {FULL_WIDTH_TIME}")
    assert_magic_refused(shell, user, capsys, "submit --site alpha --time \uff19\uff10",
                         SCRIPT, "expected minutes, HH:MM:SS or D-HH[:MM[:SS]]")


FULL_WIDTH_IN_SCRIPT = "line 2: bad time '\uff19\uff10' in `#SBATCH --time=\uff19\uff10`; " \
                       "expected M, M:S, H:M:S, D-H, D-H:M or D-H:M:S"


def test_fault_a_time_in_full_width_digits_in_a_script_is_refused_by_the_command_line(
        user):
    user.write("wide.sh", _timed("\uff19\uff10"))
    cli_refusal(user.run("submit", "--site", "alpha", "wide.sh"), FULL_WIDTH_IN_SCRIPT)


async def test_fault_a_time_in_full_width_digits_in_a_script_is_refused_over_rest(rest):
    await rest_refused(rest, _body(script=_timed("\uff19\uff10"), site="here"),
                       FULL_WIDTH_IN_SCRIPT)


async def test_fault_a_time_in_full_width_digits_in_a_script_is_refused_by_mcp(user):
    said_back = await mcp_refusal(user, "submit", {"script": _timed("\uff19\uff10"),
                                                   "site": "alpha"})
    assert FULL_WIDTH_IN_SCRIPT in said_back, said_back


@pytest.mark.parametrize("typed", ["\uff13", "1_0", "\u0663.5"])
def test_fault_a_timeout_in_other_digits_is_refused(user, typed):
    """`--timeout ３` waited three seconds (float() reads any digits and `_`)."""
    cli_refusal(user.run("wait", "alpha:1", "--timeout", typed),
                f"argument --timeout: expected a number of seconds above 0 (e.g. 30), "
                f"not {typed!r}")


def test_a_timeout_in_ascii_digits_is_taken(user):
    """(guard) `2.5`, `1e1`: still a number of seconds; only the job is unknown."""
    for typed in ("2.5", "1e1"):
        res = user.run("wait", "alpha:1", "--timeout", typed)
        assert "--timeout" not in res.stderr, res.stderr
