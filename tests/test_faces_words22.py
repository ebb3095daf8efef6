"""Each face names what its user wrote: a directory copied without `recursive` is told the
JSON field over REST and MCP (`recursive: true`), the option on the command line
(`--recursive`); a bad entry in a REST body's `software` list is named by its index; a
workflow step's plan shows, per site, the working directory it runs in, resolved.

Tests named `fault` failed before these fixes; the others are guards."""

from __future__ import annotations

import json

import pytest
import sweep_helpers

from diamond_jupyter.federation_plan import describe_plan

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")
user = sweep_helpers.new_user
jp_server_config = sweep_helpers.one_local_site_server
rest = sweep_helpers.rest_caller
engine = sweep_helpers.here_engine

SCRIPT = "#!/bin/bash\n#SBATCH -n 1\necho hi\n"


# ---- a directory copied without recursive ---------------------------------------------------

async def test_fault_a_rest_directory_copy_names_the_json_field(rest, jp_root_dir):
    (jp_root_dir / "data").mkdir()
    body = json.dumps({"src": str(jp_root_dir / "data"), "dst": "here:in"}).encode()
    code, reply = await rest("POST", "transfers", body)
    assert code == 400, (code, reply)
    assert reply["message"] == \
        f"src: {jp_root_dir / 'data'} is a directory (copy it with recursive: true)", reply
    assert (await rest("GET", "transfers"))[1]["transfers"] == []


async def test_fault_an_mcp_directory_copy_names_the_json_field(user):
    (user.root / "data").mkdir()
    told = await sweep_helpers.mcp_refusal(user, "transfer", {"src": str(user.root / "data"),
                                                              "dst": "alpha:in"})
    assert "is a directory (copy it with recursive: true)" in told, told
    assert "--recursive" not in told


def test_a_command_lines_directory_copy_names_its_option(user):
    (user.root / "data").mkdir()
    said = user.refused("transfer", str(user.root / "data"), "alpha:in")
    assert "is a directory (copy it with --recursive)" in said, said


# ---- a bad software entry over REST, by its index ---------------------------------------------

@pytest.mark.parametrize("software,said", [
    (["gcc", "a;b"], "software[1] 'a;b': expected NAME or NAME/VERSION"),
    (["gcc", "fftw", " , "], "software[2] ' , ' names no software"),
])
async def test_fault_a_rest_bad_software_entry_is_named_by_its_index(rest, software, said):
    body = json.dumps({"script": SCRIPT, "site": "here", "software": software}).encode()
    code, reply = await rest("POST", "jobs", body)
    assert code == 400 and reply["message"].startswith(said), (code, reply)


# ---- a workflow step's plan: where it runs --------------------------------------------------

def _workflow(chdir: str | None) -> dict:
    line = f"#SBATCH --chdir={chdir}\n" if chdir else ""
    return {"name": "wd", "steps": [
        {"name": "prep", "site": "here", "script": f"#!/bin/bash\n{line}echo 1\n"}]}


async def test_fault_a_workflow_steps_relative_directory_is_shown_resolved(engine):
    home = await engine.site("here").home()
    plan = await engine.plan_workflow(_workflow("run/a"))
    [step] = plan["steps"]
    [here] = step["rendered"]
    assert here["working_directory"] == f"{home}/run/a"
    assert f"\n    on here, runs in: {home}/run/a\n" in describe_plan(plan)


async def test_fault_a_workflow_step_without_a_directory_shows_its_own(engine, tmp_path):
    plan = await engine.plan_workflow(_workflow(None))
    [here] = plan["steps"][0]["rendered"]
    wd = here["working_directory"]
    assert wd.startswith(f"{tmp_path / 'work'}/jobs/"), wd
    assert f"on here, runs in: {wd}\n" in describe_plan(plan)
