"""Faces sweep 24: what people type at each face, without the test bed. On the command
line: an option given a value it takes none of, or none where it needs one, a site list
where one site goes, a directory or /dev/null for a script, ids with a blank, without
their site or with a second one, options of another command; the source dialect given
wrong (`--from pbs` for a Slurm script: every directive was passed over, exit 0) on every
face, the model's included; workflow files with the mistakes a first one has; the REST
API, the `%diamond` magics and the MCP tools given the same. Each is refused naming what
was given, where, and what would be accepted, and loses nothing (nothing is submitted).

Tests marked `fault` failed before this sweep's fixes; the others are guards."""

from __future__ import annotations

import json

import pytest
import sweep_helpers
from fake_llm import text, tool_results, tool_use
from sweep_helpers import cli_refusal, sbatch_calls

from diamond_jupyter.model import JobState

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")
user, shell, jp_server_config, rest = sweep_helpers.FACES_FIXTURES
SCRIPT = sweep_helpers.FACES_SCRIPT
GIVEN_AS_PBS = ("the script was given as pbs, but holds no #PBS directive, and 1 #SBATCH "
                "one(s) (slurm's), which a pbs reading passes over: translate it from slurm, "
                "or give no source dialect to have it detected")
LISTED = "expected how many to list, a whole number from 1 to "  # a list's limit refused


# ---- (1) the command line: options and ids -------------------------------------------------

@pytest.mark.parametrize("args,said", [
    (["status", "--json=yes", "alpha:77"], "argument --json: ignored explicit argument 'yes'"),
    (["submit", "job.sh", "--site"], "argument --site: expected one argument"),
    (["submit", "--site=", "job.sh"], "unknown site '' (known: alpha, ghost)"),
    (["submit", "--site", "alpha", "--time", "25:00:00:00", "job.sh"],
     "argument --time: expected minutes, HH:MM:SS or D-HH[:MM[:SS]], not '25:00:00:00'"),
    (["submit", "--site", "alpha", "--nodes", "1.5", "job.sh"],
     "argument --nodes: expected a whole number, 1 or more, not '1.5'"),
    (["submit", "--site", "alpha", "--hedge", "2", "job.sh"],
     "hedge 2 needs site 'auto' (placement picks the sites for the copies), not an explicit "
     "site 'alpha'"),
    (["submit", "--site", "alpha,ghost", "job.sh"],
     "unknown site 'alpha,ghost' (one site is named here, not a list"),
    (["submit", "--site", "ALPHA", "job.sh"], "unknown site 'ALPHA' (did you mean alpha?"),
    (["submit", "--site", "alpha", "."], ". is a directory, not a job script"),
    (["submit", "--site", "alpha", "/dev/null"], "the job script is empty"),
    (["cancel"], "the following arguments are required: JOB"),
    (["cancel", "77"], "job ID '77' is malformed: expected SITE:NUMBER, e.g. alpha:42 (or a "
                       "job's submission token); did you mean alpha:77?"),
    (["cancel", "alpha: 77"], "no job 'alpha: 77' in the store (did you mean alpha:77?"),
    (["status", "alpha:77 "], "no job 'alpha:77 ' in the store (did you mean alpha:77?"),
    (["logs", "alpha:77", "--lines", "1e3"],
     "argument --lines: expected a whole number, 1 or more, not '1e3'"),
    (["fetch", "alpha:77", "/etc/passwd"], "/etc/passwd is a file, not a directory"),
    (["describe", "alpha", "beta"], "unrecognized arguments: beta (1 more than diamond "
                                    "describe takes: SITE)"),
    (["jobs", "--state", "finished"], "argument --state: unknown state 'finished'; expected "),
    (["place", "job.sh", "--policy", "fastest"], "unknown placement policy 'fastest' (known: "),
    (["transfer", "alpha:/x", "nosuch:/y"], "unknown site 'nosuch' in 'nosuch:/y' (known: "),
    (["wait", "alpha:77", "--timeout", "1h"], "argument --timeout: expected a number of "
                                              "seconds above 0 (e.g. 30), not '1h'"),
])
def test_a_mistyped_command_line_is_one_line_naming_what_was_typed(user, args, said):
    user.job("alpha:77", JobState.RUNNING)
    cli_refusal(user.run(*args), said)
    assert sbatch_calls(user) == []
    assert "scancel" not in ((user.fake / "calls").read_text()
                             if (user.fake / "calls").exists() else "")


def test_fault_a_translation_from_the_wrong_dialect_is_refused_not_passed_over(user):
    """`--from pbs` for a Slurm script: its #SBATCH lines were kept as comments, the PBS
    script asked for nothing the original did, and the command exited 0."""
    cli_refusal(user.run("translate", "--to", "lsf", "--from", "pbs", "job.sh"),
                      GIVEN_AS_PBS)


def test_a_translation_from_the_dialect_of_a_script_without_directives_is_taken(user):
    user.write("plain.sh", "#!/bin/bash\necho hi\n")
    res = user.run("translate", "--to", "slurm", "--from", "pbs", "plain.sh", code=0)
    assert "echo hi" in res.stdout


# ---- (2) workflow files with mistakes ------------------------------------------------------

STEP = "name: w\nsteps:\n  - name: a\n    script: echo\n"


@pytest.mark.parametrize("name,text,said", [
    ("w.yaml", "name: w\nsteps:\n  a: {script: echo}\n",
     "steps: Input should be a valid list: write each step as an item (`- name: prep`), not "
     "as a key of a mapping (line 3)"),
    ("w.yaml", STEP + "    retries: twice\n",
     "steps['a'].retries: retries must be a whole number from 0 to 10, not 'twice' (line 5)"),
    ("w.yaml", "name: w\nsteps:\n  - name: 'a b'\n    script: echo\n",
     "' ' is not one of them (use - or _ for a blank)) (line 3)"),
    ("w.yaml", "name: w\nsteps:\n  - name: a\n    script: 5\n",
     "steps['a'].script: the script is text, not 5: write `script: |`"),
    ("w.yaml", STEP + "    time: 3h\n",
     "steps['a'].time: not supported: a step's resources and time limit are its script's own "
     "directives"),
    ("w.yaml", "name: w\nsteps:\n  - name: 'schritt-\u00e4'\n    script: echo\n",
     "'\u00e4' is not one of them) (line 3)"),
    ("w.yaml", "\ufeff" + STEP + "    site: nosuch\n",
     "step 'a': unknown site 'nosuch' (known: alpha, ghost, or auto) (line 5)"),
    ("w.json", '{"name": "w", "steps": [{"name": "a", "script": "echo", "site": "beta"}]}',
     "step 'a': unknown site 'beta' (known: alpha, ghost, or auto) (line 1)"),
    ("w.yaml", STEP + "    script_file: job.sh\n",
     "step 'a': give script or script_file, not both (line 5)"),
])
def test_a_workflow_file_with_a_mistake_names_file_step_and_line(user, name, text, said):
    user.write(name, text)
    cli_refusal(user.run("workflow", "run", name), f"{name}: ", said)
    assert sbatch_calls(user) == []
    assert json.loads(user.run("workflow", "list", "--json", code=0).stdout) in ([], {
        "workflows": []})


# ---- (3) the magics ------------------------------------------------------------------------

def test_fault_a_magic_translation_from_the_wrong_dialect_is_refused(shell, user, capsys):
    sweep_helpers.assert_magic_refused(shell, user, capsys, "translate --to lsf --from pbs",
                                       SCRIPT, GIVEN_AS_PBS)


@pytest.mark.parametrize("line,cell,said", [
    ("submit --site alpha,ghost", SCRIPT, "one site is named here, not a list"),
    ("submit --site ALPHA", SCRIPT, "did you mean alpha?"),
    ("cancel 77", None, "expected SITE:NUMBER"),
])
def test_a_magic_given_a_wrong_value_names_it(shell, user, capsys, line, cell, said):
    sweep_helpers.assert_magic_refused(shell, user, capsys, line, cell, said)


# ---- (4) the MCP tools ---------------------------------------------------------------------

async def test_fault_the_mcp_translation_from_the_wrong_dialect_is_refused(user):
    said_back = await sweep_helpers.mcp_refusal(user, "translate", {
        "script": SCRIPT, "to": "lsf", "from_dialect": "pbs"})
    assert GIVEN_AS_PBS in said_back, said_back


@pytest.mark.parametrize("tool,args,said", [
    ("submit", {"script": SCRIPT, "site": ["alpha", "ghost"]}, "site"),
    ("cancel", {"job_id": "77"}, "expected SITE:NUMBER"),
    ("status", {"job_id": "alpha:77", "job": "alpha:77"}, "job"),
])
async def test_an_mcp_tool_given_a_wrong_value_names_it(user, tool, args, said):
    said_back = await sweep_helpers.mcp_refusal(user, tool, args)
    assert said in said_back, said_back
    assert sbatch_calls(user) == []


# ---- (5) the REST API ----------------------------------------------------------------------

def _body(**fields) -> bytes:
    return json.dumps(fields).encode()


JSON = {"Content-Type": "application/json"}


async def test_fault_a_rest_translation_from_the_wrong_dialect_is_a_400(rest):
    code, reply = await rest("POST", "translate", _body(script=SCRIPT, to="lsf",
                                                        **{"from": "pbs"}), headers=JSON)
    assert code == 400 and reply["message"] == GIVEN_AS_PBS, (code, reply)


@pytest.mark.parametrize("method,path,body,said", [
    ("POST", "place", _body(script=SCRIPT, policy="fastest"), "unknown placement policy "
                                                              "'fastest'"),
    ("POST", "transfers", _body(src="here:/tmp/x"), "dst"),
    ("POST", "workflows", _body(workflow=5), "workflow"),
    ("POST", "workflows", _body(workflow="name: w\nsteps:\n\t- name: a\n"),
     "indent with spaces"),
    ("GET", "jobs?limit=ten", None, f"limit: {LISTED}500, not 'ten'"),
    ("GET", "events?kinds=Job.State", None, "kinds: 'Job.State' is no event kind"),
])
async def test_a_rest_request_with_a_wrong_value_is_a_400_naming_it(rest, method, path, body,
                                                                     said):
    code, reply = await rest(method, path, body, headers=JSON if body else None)
    assert code == 400 and said in reply["message"], (code, reply)
    assert (await rest("GET", "jobs"))[1]["jobs"] == []


# ---- (6) the agent: its model translating from the wrong dialect ----------------------------

def test_fault_a_model_translating_from_the_wrong_dialect_is_told_what_it_wrote(
        shell, user, fake_llm):
    """The model's translate call with the wrong source dialect came back as a success
    holding the script untranslated; now an error naming the dialect to give."""
    from diamond_jupyter.kernel import magics

    answered = {}

    def answer(body):
        answered["result"] = tool_results(body)[-1]
        return [text("noted")]

    fake_llm.script([tool_use("translate", {"script": SCRIPT, "to": "lsf",
                                            "from_dialect": "pbs"})], answer)
    handle = shell.run_cell_magic("diamond", "ask", "translate my script to lsf")
    engine = magics._magics.engine

    async def settled():
        return await (await engine.agent()).wait(handle.id, settled=True, timeout=60)

    engine.call(settled())
    _, content, is_error = answered["result"]
    assert is_error and GIVEN_AS_PBS in str(content), content
    assert sbatch_calls(user) == []
