"""A REST body's unknown field is refused, never passed over (what it asked for would
silently not happen), and a memory size without a unit is refused on every face that takes
one (`--memory 4` was read as 4 MB, where its user meant 4 GB); a batch script's own
directives keep their scheduler's meaning (`#SBATCH --mem=4000` is 4000 MB)."""

from __future__ import annotations

import json

import pytest
import sweep_helpers
from sweep_helpers import assert_magic_refused, sbatch_calls

from diamond_jupyter.model import BadInput, JobSpec
from diamond_jupyter.needs import with_options

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")

jp_server_config = sweep_helpers.one_local_site_server
rest = sweep_helpers.rest_caller
user = sweep_helpers.new_user
shell = sweep_helpers.magics_shell

UNIT_LESS = "memory '4' has no unit: give one, e.g. 4G for 4 GB or 4M for 4 MB"


@pytest.mark.parametrize("path,body,key,accepted", [
    ("translate", {"script": "#SBATCH -N 2\necho\n", "to": "pbs", "colour": "blue"},
     "colour", "script, to, from, from_dialect"),
    ("jobs", {"script": "echo hi", "site": "here", "priority_boost": 3}, "priority_boost",
     "script, spec, name, arch"),
    ("place", {"script": "echo hi", "explain_more": True}, "explain_more", "script, spec"),
    ("workflows", {"workflow": "name: w\nsteps: [{name: a, script: echo}]\n",
                   "dry_run": True}, "dry_run", "workflow, origin"),
])
async def test_an_unknown_field_in_a_body_is_refused_naming_it_and_the_accepted(
        rest, path, body, key, accepted):
    code, reply = await rest("POST", path, json.dumps(body).encode())
    assert code == 400, (code, reply)
    said = reply["message"]
    assert said.startswith(f"unknown field {key!r} in the body (accepted: "), said
    assert accepted in said, said
    assert (await rest("GET", "jobs"))[1]["total"] == 0
    assert (await rest("GET", "workflows"))[1].get("total", 0) == 0


async def test_a_login_answer_with_an_unknown_field_is_refused(rest):
    code, reply = await rest("POST", "logins/abc123", json.dumps(
        {"answers": ["123456"], "remember": True}).encode())
    assert code == 400, (code, reply)
    assert reply["message"] == "unknown field 'remember' in the body (accepted: answers)"


async def test_a_body_of_known_fields_only_still_runs(rest):
    """(guard) The refusal is of unknown fields only."""
    code, reply = await rest("POST", "translate", json.dumps(
        {"script": "#SBATCH -N 2\necho\n", "to": "pbs"}).encode())
    assert code == 200 and "#PBS" in reply["script"], reply


async def test_a_unit_less_memory_in_a_rest_body_is_refused(rest):
    code, reply = await rest("POST", "jobs", json.dumps(
        {"script": "echo hi", "site": "here", "memory": "4"}).encode())
    assert code == 400, (code, reply)
    assert UNIT_LESS in reply["message"], reply
    assert (await rest("GET", "jobs"))[1]["total"] == 0


async def test_a_script_s_unit_less_mem_keeps_the_scheduler_s_megabytes(rest):
    """(guard) sbatch reads `--mem=4000` as 4000 MB: so does diamond."""
    code, reply = await rest("POST", "translate", json.dumps(
        {"script": "#SBATCH --mem=4000\necho\n", "to": "pbs"}).encode())
    assert code == 200 and "mem=4000mb" in reply["script"], reply


def test_a_unit_less_memory_on_the_command_line_is_refused(user):
    line = user.refused("submit", "--site", "alpha", "--memory", "4", "job.sh")
    assert f"--{UNIT_LESS}" in line, line
    assert sbatch_calls(user) == []


def test_a_unit_less_memory_in_the_magic_is_refused(shell, user, capsys):
    assert_magic_refused(shell, user, capsys, "submit --site alpha --memory 4", "echo hi\n",
                         f"--{UNIT_LESS}")


@pytest.mark.parametrize("given,mb", [("4G", 4096), ("4000M", 4000), ("1.5g", 1536),
                                      ("2048MB", 2048)])
def test_a_memory_with_a_unit_is_read(given, mb):
    spec = with_options(JobSpec(script="echo hi"), memory=given)
    assert spec.resources.memory_mb == mb


@pytest.mark.parametrize("given", ["4", " 16 ", "2.5"])
def test_a_unit_less_memory_option_asks_for_a_unit(given):
    with pytest.raises(BadInput, match="has no unit: give one, e.g. "):
        with_options(JobSpec(script="echo hi"), memory=given)
