"""Faces sweep 27: the same words on every face, without the test bed. A list's limit given
wrong (0, a word, digits no scheduler reads, past its bound) to the command line, the
`%diamond` magics and the REST API on a real Jupyter server; job ids in full-width digits or
with a full-width colon, with blanks around them or their site in capitals; `auto` written
in capitals, with a blank or in a full-width letter; an empty job script; more arguments
than a command takes; a key no field is named by, in a REST body and in an MCP tool call.
Each face refuses it in the same words, naming what was given and what is accepted, and
nothing is submitted; what is accepted runs as given.

Tests marked `fault` failed before this sweep's fixes; the others are guards."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import quote

import pytest
import sweep_helpers
from sweep_helpers import assert_magic_refused, cli_refusal, mcp_refusal, rest_refused, sbatch_calls

from diamond_jupyter.model import Job, JobState
from diamond_jupyter.option_types import MAX_LISTED
from diamond_jupyter.skills import SKILLS
from diamond_jupyter.store import Store

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")
user, shell, jp_server_config, rest = sweep_helpers.FACES_FIXTURES
SCRIPT = sweep_helpers.FACES_SCRIPT
JSON = {"Content-Type": "application/json"}
LISTED = "expected how many to list, a whole number from 1 to "  # a list's limit refused


def _stored(path: Path, job_id: str, state: JobState) -> None:
    site, _, native = job_id.partition(":")
    store = Store(path)
    store.upsert_job(Job(id=job_id, site=site, native_id=native, name="sim"))
    store.apply_state(job_id, state)


# ---- (1) a list's limit: one set of words on every face -----------------------------------

BAD_LIMITS = ["0", "-1", "ten", "\uff19", "\u0663", "1_0", "1e3", "99999999999999999999999"]


@pytest.mark.parametrize("given", BAD_LIMITS)
def test_fault_a_bad_list_limit_is_refused_in_the_list_words_on_the_command_line(user,
                                                                                 given):
    """`--limit 0` was "a whole number, 1 or more", past the bound "from 1 to N"."""
    cli_refusal(user.run("jobs", f"--limit={given}"),
                f"argument --limit: {LISTED}{MAX_LISTED}, not {given!r}")


def test_fault_a_workflow_list_limit_is_refused_in_the_same_words(user):
    cli_refusal(user.run("workflow", "list", "--limit=0"),
                f"argument --limit: {LISTED}{MAX_LISTED}, not '0'")


@pytest.mark.parametrize("given", ["0", "ten", "\uff19"])
def test_fault_a_bad_list_limit_is_refused_in_the_list_words_in_a_magic(shell, user, capsys,
                                                                        given):
    assert_magic_refused(shell, user, capsys, f"jobs --limit {given}", None,
                         f"argument --limit: {LISTED}{MAX_LISTED}, not {given!r}")


@pytest.mark.parametrize("listing,most", [("jobs", 500), ("transfers", 500), ("tasks", 500),
                                          ("workflows", 1000), ("events", 10000)])
@pytest.mark.parametrize("given", ["0", "ten", "\uff19", "1_0", "99999999999999999999999"])
async def test_fault_a_bad_list_limit_is_refused_in_the_list_words_over_rest(rest, listing,
                                                                            most, given):
    """`limit=0` was "limit must be between 1 and 500", `limit=ten` "limit must be an
    integer": other words than the command line's for one mistake."""
    code, reply = await rest("GET", f"{listing}?limit={quote(given)}")
    assert (code, reply["message"]) == (400, f"limit: {LISTED}{most}, not {given!r}"), reply


async def test_a_list_limit_over_rest_past_a_page_names_the_page_bound(rest):
    """A guard: 501 is past one page (500), not bad as a number."""
    code, reply = await rest("GET", "jobs?limit=501")
    assert (code, reply["message"]) == (400, f"limit: {LISTED}500, not '501'"), reply


def test_a_list_limit_in_range_lists_that_many_on_the_command_line(user):
    for n in (77, 78):
        user.job(f"alpha:{n}", JobState.RUNNING)
    listed = json.loads(user.run("jobs", "--limit", "1", "--json", code=0).stdout)
    assert len(listed) == 1


async def test_a_list_limit_in_range_lists_that_many_over_rest(rest, tmp_path):
    for n in (77, 78):
        _stored(tmp_path / "store.sqlite3", f"here:{n}", JobState.RUNNING)
    code, reply = await rest("GET", "jobs?limit=1")
    assert code == 200 and len(reply["jobs"]) == 1 and reply["total"] == 2, reply


def test_no_mcp_or_agent_tool_takes_a_list_limit_of_its_own():
    """The MCP and agent tools are the skills: none lists with a `limit` (were one added,
    it would take `option_types.list_limit_refusal`'s words, as the other faces do)."""
    assert [n for n, s in SKILLS.items() if "limit" in s.input.model_fields] == []


# ---- (2) job ids typed otherwise: the job meant is named on every face ---------------------

FULL_WIDTH = {"alpha:\uff17\uff17": "no job 'alpha:\uff17\uff17' in the store (did you mean "
                                    "alpha:77? `diamond jobs` lists the known ones)",
              "alpha\uff1a77": "job ID 'alpha\uff1a77' is malformed: expected SITE:NUMBER, "
                               "e.g. alpha:42 (or a job's submission token); did you mean "
                               "alpha:77?"}


@pytest.mark.parametrize("given", sorted(FULL_WIDTH))
def test_fault_a_job_id_in_full_width_is_named_as_the_job_meant(shell, user, capsys, given):
    """`alpha:７７` (an input method's digits) was "no job" without the job meant."""
    user.job("alpha:77", JobState.RUNNING)
    cli_refusal(user.run("status", given), FULL_WIDTH[given])
    assert_magic_refused(shell, user, capsys, f"status {given}", None, FULL_WIDTH[given])


@pytest.mark.parametrize("given", sorted(FULL_WIDTH))
async def test_fault_a_job_id_in_full_width_is_named_by_mcp(user, given):
    user.job("alpha:77", JobState.RUNNING)
    assert FULL_WIDTH[given] in await mcp_refusal(user, "status", {"job_id": given})


async def test_fault_a_job_id_in_full_width_digits_is_named_over_rest(rest, tmp_path):
    _stored(tmp_path / "store.sqlite3", "here:77", JobState.RUNNING)
    code, reply = await rest("GET", "jobs/" + quote("here:\uff17\uff17"))
    assert code == 404 and reply["message"] == FULL_WIDTH["alpha:\uff17\uff17"].replace(
        "alpha", "here"), (code, reply)


def test_a_full_width_job_id_cancels_nothing(user):
    """A guard: the job meant is named, never acted on."""
    user.job("alpha:77", JobState.RUNNING)
    user.run("cancel", "alpha:\uff17\uff17")
    assert user.job("alpha:77", JobState.UNKNOWN).state == JobState.RUNNING
    calls = user.fake / "calls"
    assert "scancel" not in (calls.read_text() if calls.exists() else "")


@pytest.mark.parametrize("given", [" alpha:77 ", "ALPHA:77", "alpha:077"])
async def test_a_job_id_with_blanks_capitals_or_zeros_names_the_job_on_every_face(
        shell, user, capsys, given):
    said = f"no job {given!r} in the store (did you mean alpha:77? `diamond jobs` lists " \
           "the known ones)"
    user.job("alpha:77", JobState.RUNNING)
    cli_refusal(user.run("status", given), said)
    assert said in await mcp_refusal(user, "status", {"job_id": given})
    if given.strip() == given:  # the magic's line is split at blanks: ' alpha:77 ' is found
        assert_magic_refused(shell, user, capsys, f"status {given}", None, said)


# ---- (3) `auto` written otherwise: said as auto on every face ------------------------------

AUTO_MEANT = "(did you mean auto, written in lower case alone, for placement to choose? " \
             "known: alpha, ghost)"


@pytest.mark.parametrize("given", ["AUTO", "Auto", "auto ", "\uff41uto"])
def test_fault_auto_written_otherwise_is_named_on_the_command_line_and_magic(
        shell, user, capsys, given):
    """`--site AUTO` was "unknown site 'AUTO' (known: alpha, ghost)": auto not said."""
    said = f"unknown site {given!r} {AUTO_MEANT}"
    cli_refusal(user.run("submit", "--site", given, "job.sh"), said)
    assert sbatch_calls(user) == []
    if given.strip() == given:
        assert_magic_refused(shell, user, capsys, f"submit --site {given}", SCRIPT, said)


async def test_fault_auto_written_otherwise_is_named_over_rest(rest):
    await rest_refused(rest, {"script": SCRIPT, "site": "Auto"},
                       "unknown site 'Auto' (did you mean auto, written in lower case alone, "
                       "for placement to choose? known: here)", whole=True)


@pytest.mark.parametrize("given", ["AUTO", "auto "])
async def test_fault_auto_written_otherwise_is_named_by_mcp(user, given):
    said_back = await mcp_refusal(user, "submit", {"script": SCRIPT, "site": given})
    assert f"unknown site {given!r} {AUTO_MEANT}" in said_back, said_back


def test_auto_written_in_lower_case_is_no_unknown_site(user):
    """A guard: `auto` itself is placement's choice (here no site can run the job: said so,
    as a site's failure, not as a site name)."""
    res = user.run("submit", "--site", "auto", "job.sh")
    assert res.returncode == 1 and "no site can run this job" in res.stderr, res.stderr
    assert "unknown site" not in res.stderr


def test_a_site_in_capitals_is_named_when_listing_jobs_too(user):
    cli_refusal(user.run("jobs", "--site", "ALPHA"),
                "unknown site 'ALPHA' (did you mean alpha? known: alpha, ghost)")


async def test_a_site_in_capitals_is_named_when_listing_jobs_over_rest(rest):
    code, reply = await rest("GET", "jobs?site=HERE")
    assert (code, reply["message"]) == (
        400, "unknown site 'HERE' (did you mean here? known: here)"), reply


# ---- (4) an empty job script: the same words on every face ----------------------------------

EMPTY = "the job script is empty"


@pytest.mark.parametrize("text", ["", "  \n\n"])
def test_an_empty_script_file_is_refused_on_the_command_line(user, text):
    user.write("empty.sh", text)
    cli_refusal(user.run("submit", "--site", "alpha", "empty.sh"), f"diamond: {EMPTY}")
    assert sbatch_calls(user) == []


def test_fault_a_cell_of_blanks_is_refused_as_an_empty_script_in_a_magic(shell, user,
                                                                        capsys):
    """It said "submit: give a FILE, or use %%diamond submit with the script as the cell
    body", which is what was done."""
    assert_magic_refused(shell, user, capsys, "submit --site alpha", "  \n", EMPTY)


@pytest.mark.parametrize("script", ["", " \n"])
async def test_fault_an_empty_script_is_refused_as_empty_over_rest(rest, script):
    """`"script": ""` was "body: Value error, give `script` ... or `spec`": it was given."""
    await rest_refused(rest, {"script": script, "site": "here"}, EMPTY, whole=True)


async def test_fault_an_empty_script_is_refused_as_empty_by_mcp(user):
    said_back = await mcp_refusal(user, "submit", {"script": "", "site": "alpha"})
    assert said_back.endswith(EMPTY), said_back
    assert sbatch_calls(user) == []


async def test_no_script_nor_spec_still_says_to_give_one_over_rest(rest):
    """A guard: a body without either is told what to give."""
    code, reply = await rest("POST", "jobs", json.dumps({"site": "here"}).encode(),
                             headers=JSON)
    assert code == 400 and "give `script` (batch script text) or `spec`" in reply["message"]


# ---- (5) more arguments than a command takes ------------------------------------------------

def test_fault_a_magic_given_two_ids_says_what_it_takes(shell, user, capsys):
    """It said "%diamond: unrecognized arguments: alpha:78" alone."""
    user.job("alpha:77", JobState.RUNNING)
    cli_refusal(user.run("status", "alpha:77", "alpha:78"),
                "unrecognized arguments: alpha:78 (1 more than diamond status takes: JOB)")
    assert_magic_refused(shell, user, capsys, "status alpha:77 alpha:78", None,
                         "unrecognized arguments: alpha:78 (1 more than %diamond status "
                         "takes: JOB)")


def test_fault_a_magic_given_thousands_of_ids_names_the_first_and_last_few(shell, user,
                                                                          capsys):
    ids = " ".join(f"alpha:{n}" for n in range(3000))
    assert_magic_refused(shell, user, capsys, f"cancel {ids}", None,
                         "unrecognized arguments: alpha:1 alpha:2 alpha:3 ... alpha:2998 "
                         "alpha:2999 (2999 more than %diamond cancel takes: JOB)")
    calls = user.fake / "calls"
    assert "scancel" not in (calls.read_text() if calls.exists() else "")


# ---- (6) a key no field is named by: the same words in a body and a tool call ---------------

UNKNOWN_COLOUR = "unknown field 'colour' in {} (accepted: script, spec, name, arch, software,"


async def test_an_unknown_key_in_a_rest_body_names_it_and_the_fields(rest):
    code, reply = await rest("POST", "jobs", json.dumps(
        {"script": SCRIPT, "site": "here", "colour": 1}).encode(), headers=JSON)
    assert code == 400 and reply["message"].startswith(UNKNOWN_COLOUR.format("the body")), reply


async def test_fault_an_unknown_tool_argument_is_said_in_the_rest_body_words(user):
    """MCP said "submit: colour: not an argument of submit (accepted: ...)", REST "unknown
    field 'colour' in the body (accepted: ...)"."""
    said_back = await mcp_refusal(user, "submit", {"script": SCRIPT, "site": "alpha",
                                                   "colour": 1})
    assert "submit: " + UNKNOWN_COLOUR.format("the arguments") in said_back, said_back
    assert sbatch_calls(user) == []


async def test_fault_a_misspelt_tool_argument_names_the_one_meant_as_rest_does(user):
    said_back = await mcp_refusal(user, "status", {"job_id": "alpha:77", "refrsh": True})
    assert "status: unknown field 'refrsh' in the arguments (did you mean 'refresh'? " \
           "accepted: job_id, refresh)" in said_back, said_back


NODEZ = "spec.resources.nodez: not a field of Resources (did you mean nodes?)"


async def test_an_unknown_key_deep_in_a_spec_is_named_over_rest(rest):
    code, reply = await rest("POST", "jobs", json.dumps(
        {"spec": {"resources": {"nodez": 1}}, "site": "here"}).encode(), headers=JSON)
    assert code == 400 and reply["message"].startswith(NODEZ), reply


async def test_an_unknown_key_deep_in_a_spec_is_named_alike_by_mcp(user):
    assert NODEZ in await mcp_refusal(user, "submit", {"spec": {"resources": {"nodez": 1}},
                                                       "site": "alpha"})


# ---- (7) a REST number in other digits ---------------------------------------------------

@pytest.mark.parametrize("given", ["\u0666", "6_0"])
async def test_fault_usage_hours_in_other_digits_are_refused_over_rest(rest, given):
    """`sites/here/usage?hours=٦` was read as 6 hours (float() reads it), `6_0` as 60."""
    code, reply = await rest("GET", f"sites/here/usage?hours={quote(given)}")
    assert (code, reply["message"]) == (
        400, f"hours must be a number of hours, not {given!r}"), (code, reply)
