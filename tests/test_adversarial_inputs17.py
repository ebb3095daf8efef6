"""The seventeenth sweep of hostile inputs and careless hands, through the faces: the command
line (a subprocess on `test_cli_newuser.NewUser`'s fake Slurm site), the magics, MCP tool
calls (the server's own `call_tool`), the REST routes of a real Jupyter server, LSF's -env,
and workflow files.

The standard is the earlier sweeps': bad input is refused with one line naming what, where
and what would be accepted (exit 2 on the CLI, a 4xx with a JSON message on REST), and loses
nothing: no job reaches a scheduler, no traceback, no hang. Tests marked `fault` failed
before this sweep's fixes; the others are guards (attacks that already failed safely)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
import sweep_helpers
from sweep_helpers import assert_magic_refused, mcp_refusal, sbatch_calls

from diamond_jupyter.model import BadInput, JobSpec

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")


user = sweep_helpers.new_user


# -- 1. `diamond` alone ------------------------------------------------------------------------

def test_fault_diamond_alone_without_a_sites_file_says_how_to_begin(user):
    """argparse's usage and "the following arguments are required: command" was all a new
    user got. Now: where the file goes, an example site entry, how to check it; exit 2."""
    res = user.run(config=None, code=2)
    where = user.home / ".config" / "diamond" / "sites.yaml"
    assert res.stdout == ""
    assert res.stderr.startswith(f"diamond: no command given, and no sites file at {where}.")
    for said in ("sites:\n  - name: mycluster", "scheduler: slurm", "host: login.example.org",
                 "`diamond sites` lists the sites", "`diamond describe mycluster`",
                 "--config FILE", "DIAMOND_CONFIG", "`diamond testbed up`"):
        assert said in res.stderr, (said, res.stderr)
    assert "usage:" not in res.stderr and "required" not in res.stderr
    # the example is a sites file the engine reads: written where it was said, it lists
    example = res.stderr[res.stderr.index("sites:\n"):res.stderr.index("\nThen check it")]
    where.parent.mkdir(parents=True)
    where.write_text(example)
    listed = user.run("sites", "--offline", config=None, code=0).stdout
    assert listed.startswith("mycluster") and "slurm" in listed, listed


def test_fault_diamond_alone_with_json_says_it_as_json_too(user):
    res = user.run("--json", config=None, code=2)
    reply = json.loads(res.stdout)
    assert reply["reason"] == "bad-input"
    assert reply["message"].startswith("no command given, and no sites file at ")


def test_fault_diamond_alone_with_a_sites_file_lists_the_commands(user):
    """With a sites file, `diamond` alone lists the commands (argparse's help) and exits 2
    as argparse does for a missing argument; the sites file it would read is named."""
    res = user.run(code=2)
    assert "usage: diamond" in res.stderr
    for command in ("submit", "status", "logs", "workflow", "describe"):
        assert command in res.stderr, (command, res.stderr)
    assert res.stderr.rstrip().endswith(f"diamond: no command given (sites file: "
                                        f"{user.sites})")
    given = user.run("--config", str(user.sites), config=None, code=2).stderr
    assert "usage: diamond" in given and f"(sites file: {user.sites})" in given


def test_fault_diamond_alone_with_a_missing_given_file_names_that_file(user):
    """`--config` naming no file: that file is the one the first-run text names."""
    missing = user.root / "nowhere.yaml"
    res = user.run("--config", str(missing), config=None, code=2)
    assert f"no sites file at {missing}." in res.stderr


# -- 2. the command line: pasted dashes, time limits ------------------------------------------

PASTED = "(a dash pasted from a web page or a word processor is not the hyphen options " \
         "start with)"


@pytest.mark.parametrize("args,said", [
    (["submit", "\u2014site", "alpha", "job.sh"],
     f"'\u2014site' starts with em dash (U+2014), not '-': did you mean --site? {PASTED}"),
    (["submit", "--site", "alpha", "\u2013-time=10", "job.sh"],
     f"'\u2013-time' starts with en dash (U+2013), not '-': did you mean --time? {PASTED}"),
    (["submit", "\u2212\u2212site", "alpha", "job.sh"],
     "'\u2212\u2212site' starts with minus sign (U+2212), not '-': did you mean --site?"),
    (["\u2014json", "sites"], "'\u2014json' starts with em dash (U+2014), not '-': did you "
     "mean --json?"),
    (["status", "alpha:1", "\u2014json"], "did you mean --json?"),
    (["submit", "--site", "alpha", "\u2014bogus", "job.sh"],
     f"'\u2014bogus' starts with em dash (U+2014), not '-', and names no option {PASTED}; "
     "accepted: --arch, --config,"),
])
def test_fault_an_option_written_with_a_typographic_dash_names_the_option(user, args, said):
    """`—site` (a web page's em dash for `--`) was read as the job's FILE and the rest as
    "unrecognized arguments: alpha job.sh"; nothing said the dash was the fault."""
    line = user.refused(*args)
    assert said in line, line
    assert sbatch_calls(user) == []


def test_a_value_or_a_file_that_starts_with_a_dash_look_alike_is_taken(user):
    """(guards) A job name after --name, and a file of that name, are what they say."""
    user.write("\u2014notes.sh", "#!/bin/bash\necho hi\n")
    assert user.run("submit", "--site", "alpha", "\u2014notes.sh", code=0).stdout.strip() \
        == "alpha:4242"
    res = user.run("submit", "--site", "alpha", "--name", "\u2014draft", "job.sh", "--json",
                   code=0)
    assert json.loads(res.stdout)["name"] == "\u2014draft"


def test_after_a_double_hyphen_a_dash_look_alike_is_a_file_name(user):
    """(guard) `--` ends the options: what follows is the FILE, however it starts."""
    line = user.refused("submit", "--site", "alpha", "--", "\u2014site")
    assert "starts with em dash" not in line and "\u2014site" in line, line


@pytest.mark.parametrize("given,said", [
    ("1:60:00", "60 minutes is out of range (minutes and seconds run 0-59, hours 0-23 after "
     "a day; 02:00:00 is the same time written in range), not '1:60:00'"),
    ("1-25:00:00", "25 hours is out of range (minutes and seconds run 0-59, hours 0-23 after "
     "a day; 2-01:00:00 is the same time written in range)"),
    ("90:60", "60 seconds is out of range"),
    ("1-24", "24 hours is out of range"),
    ("2-0:75", "75 minutes is out of range"),
    ("1:00:99", "99 seconds is out of range"),
])
def test_fault_a_time_limit_with_a_field_past_its_clock_is_refused(user, given, said):
    """sbatch adds 1:60:00 up to two hours and 1-25:00:00 to two days and an hour; either
    is more likely a slip (1:06:00? 1-05:00:00?) than meant, and was submitted unsaid."""
    line = user.refused("submit", "--site", "alpha", "--time", given, "job.sh")
    assert said in line, line
    assert sbatch_calls(user) == []


@pytest.mark.parametrize("given,seconds", [
    ("90", 5400), ("90:00", 5400), ("1:30:00", 5400), ("100:59:59", 363599),
    ("1-23:59:59", 172799), ("0-1", 3600), ("2-0", 172800), ("1-0:30", 88200),
])
def test_each_accepted_time_form_is_submitted_as_it_says(user, given, seconds):
    """(guard) Every sbatch --time form, its leading field unbounded, is taken as it says."""
    res = user.run("submit", "--site", "alpha", "--time", given, "job.sh", "--json", code=0)
    assert json.loads(res.stdout)["time_limit_s"] == seconds
    script = Path(sbatch_calls(user)[0].split()[-1]).read_text()
    assert "#SBATCH --time=" in script, script


def test_logs_follow_misspelt_is_an_unknown_option_naming_the_one_meant(user):
    """(guard) `diamond logs --folow JOB`: no such option, said with the one meant and the
    accepted ones (`--follow` itself: tests/test_logs_follow.py); nothing else runs."""
    line = user.refused("logs", "--folow", "alpha:1")
    assert line.startswith("diamond logs: error: unknown option --folow (did you mean "
                           "--follow? accepted: "), line


# -- 3. the magics -----------------------------------------------------------------------------

shell = sweep_helpers.magics_shell




@pytest.mark.parametrize("line,cell,said", [
    # faults: `—site alpha` was the FILE and "unrecognized arguments: alpha"; an unknown
    # option was "unrecognized arguments" with no hint, where the CLI names the one meant
    ("submit \u2014site alpha", "echo hi\n",
     "%diamond submit: '\u2014site' starts with em dash (U+2014), not '-': did you mean "
     "--site?"),
    ("submit --site alpha \u2013\u2013time 5", "echo hi\n", "did you mean --time?"),
    ("submit --site alpha --tme 5", "echo hi\n",
     "%diamond submit: unknown option --tme (did you mean --time? accepted: "),
    ("jobs --sate RUNNING", None, "unknown option --sate (did you mean --state? accepted: "),
    ("submit --site alpha --time 1:60:00", "echo hi\n", "60 minutes is out of range"),
    ("submit --site alpha --time 1-25:00:00", "echo hi\n", "25 hours is out of range"),
    # guards
    ("submit --site 'alpha", "echo hi\n", "No closing quotation"),
    ('submit --name "a b', "echo hi\n", "No closing quotation"),
    ("submit --site alpha --hedge 999", "echo hi\n", "from 1 to 8, not '999'"),
])
def test_a_cell_the_magic_cannot_take_is_one_reason_and_nothing_runs(shell, user, capsys,
                                                                      line, cell, said):
    assert_magic_refused(shell, user, capsys, line, cell, said)


# -- 4. MCP tool calls -------------------------------------------------------------------------




@pytest.mark.parametrize("args,said", [
    ({"site": "gamma", "script": "echo hi"}, "unknown site 'gamma' (known: alpha, ghost)"),
    ({"site": "\u2014alpha", "script": "echo hi"},
     "unknown site '\u2014alpha' (did you mean alpha? known: alpha, ghost)"),
    ({"site": "alpha", "script": "echo hi", "hedge": 0},
     "hedge: expected a whole number from 1 to 8, not 0"),
    ({"site": "alpha", "script": "echo hi", "time": "1:60:00"},
     "unknown field 'time' in the arguments (accepted: "),
])
async def test_a_tool_call_for_a_site_not_configured_sends_nothing(user, args, said):
    """(guards) What an agent's plan or another MCP client may ask: a site the sites file
    lacks, a pasted dash in its name, a hedge of none, a time where the call takes none."""
    msg = await mcp_refusal(user, "submit", args)
    assert said in msg, msg
    assert sbatch_calls(user) == []


# -- 5. LSF: variables named to pass where the environment is not exported ----------------

def _lsf(environment: dict[str, Any]) -> tuple[str, list[str]]:
    from diamond_jupyter.dialects import get_script_dialect

    rendered = get_script_dialect("lsf").render_script(JobSpec.model_validate(
        {"command": "echo body", "environment": environment}))
    return rendered.script, rendered.warnings


def test_fault_lsf_passes_the_named_variables_where_the_environment_is_not_exported():
    """`export_all: false` with `passed: [HOME_DIR, X]` rendered `-env "none, K=v"` and a
    "dropped" warning: the names never reached the job. bsub's -env takes a list of names
    (each with its value at submission) and NAME=VALUE pairs without `all` or `none`, and
    `none` only alone."""
    script, warnings = _lsf({"export_all": False, "passed": ["HOME_DIR", "X"],
                             "variables": {"K": "v", "OPTS": "a=1,b=2"}})
    assert '#BSUB -env "HOME_DIR, X, K=v"' in script.splitlines(), script
    assert "export OPTS=a=1,b=2" in script  # a comma in its value: set by the script
    assert warnings == []
    from diamond_jupyter.dialects import get_script_dialect

    env = get_script_dialect("lsf").parse_script(script).environment
    assert (env.export_all, env.passed, env.variables) == (False, ["HOME_DIR", "X"],
                                                           {"K": "v"})


@pytest.mark.parametrize("environment,line,warned", [
    ({"export_all": False}, "#BSUB -env none", []),
    ({"export_all": False, "variables": {"K": "v"}}, "#BSUB -env K=v", []),
    ({"export_all": True, "passed": ["X"], "variables": {"K": "1"}},
     '#BSUB -env "all, K=1"', []),
    ({"variables": {"K": "1"}}, '#BSUB -env "all, K=1"', []),
    # bsub reads `all` and `none` as its keywords: such a name cannot be listed, and says so
    ({"export_all": False, "passed": ["all", "Y"]}, "#BSUB -env Y",
     ["dropped: all from the submitting shell (LSF -env reads 'all' and 'none' as keywords, "
      "never as variable names)"]),
])
def test_fault_lsf_env_takes_none_alone_and_no_keyword_as_a_name(environment, line, warned):
    """`none, K=v` (bsub takes `none` only alone) is now `K=v`; a name `all` was written
    into the list as the keyword."""
    script, warnings = _lsf(environment)
    assert line in script.splitlines(), script
    assert warnings == warned


def test_fault_translate_to_lsf_carries_slurm_export_names(user):
    """Through the CLI: `--export=NONE,INPUT,N=3` reached LSF as `-env "none, N=3"` with
    INPUT named on stderr as dropped."""
    user.write("e.sh", "#!/bin/bash\n#SBATCH --export=NONE,INPUT,N=3\n./run\n")
    res = user.run("translate", "--to", "lsf", "e.sh", code=0)
    assert '#BSUB -env "INPUT, N=3"' in res.stdout.splitlines(), res.stdout
    assert "INPUT" not in res.stderr, res.stderr


def test_fault_an_lsf_script_listing_names_is_read_and_written_back_to_slurm(user):
    """`-env "INPUT, N=3"`, bsub's list form, was kept as an unknown line."""
    user.write("l.sh", '#!/bin/bash\n#BSUB -env "INPUT, N=3"\n./run\n')
    res = user.run("translate", "--to", "slurm", "--from", "lsf", "l.sh", code=0)
    assert "#SBATCH --export=INPUT,N=3" in res.stdout.splitlines(), res.stdout
    # only where the output goes (LSF mailed it: no -o) is said, nothing of the variables
    assert res.stderr.splitlines() == [
        "approximated: stdout: no output file is named; lsf mails it to the submitter (no "
        "-o), slurm writes it to its default file, slurm-%j.out"], res.stderr


# -- 6. sites files: the host forms, and text editors' marks -----------------------------------

@pytest.mark.parametrize("host,shown", [
    ("alice@login.example.org", "on login.example.org"),
    ("login.example.org:2222", "on login.example.org"),
    ("2001:db8::1", "on 2001:db8::1"),
    ("[2001:db8::1]:22", "on 2001:db8::1"),
])
def test_a_host_with_a_user_a_port_or_an_ipv6_literal_is_read(user, host, shown):
    """(guards) The forms ssh takes in `host:`; nothing connects with --offline."""
    cfg = user.write("h.yaml", f"sites:\n  - name: h\n    transport: {{host: \"{host}\"}}\n"
                               f"store: {user.store_path}\n")
    out = user.run("sites", "--offline", config=cfg, code=0).stdout
    assert out.startswith("h ") and shown in out, out


@pytest.mark.parametrize("mark", ["bom", "crlf", "both"])
def test_a_sites_file_with_a_bom_or_windows_line_ends_is_read(user, mark):
    """(guards) What Notepad writes."""
    text = user.sites.read_text()
    data = text.replace("\n", "\r\n") if mark in ("crlf", "both") else text
    raw = (b"\xef\xbb\xbf" if mark in ("bom", "both") else b"") + data.encode()
    cfg = user.root / "w.yaml"
    cfg.write_bytes(raw)
    out = user.run("sites", "--offline", config=cfg, code=0).stdout
    assert out.startswith("alpha ") and "ghost" in out, out


# -- 7. REST: routes that are not there, bodies that are no object ----------------------------

jp_server_config = sweep_helpers.one_local_site_server
rest = sweep_helpers.rest_caller







ROUTES_SAID = ("the routes start /diamond/api/ with dashboard, events, jobs, logins, "
               "openapi.yaml, place, sites, state, tasks, transfers, translate, workflows "
               "(GET /diamond/api/openapi.yaml describes each)")


@pytest.mark.parametrize("method,path,said", [
    ("POST", "approve", "no API route /diamond/api/approve; " + ROUTES_SAID),
    ("GET", "", "no API route /diamond/api/; "),
    ("DELETE", "jobs/here:1/nothing", "no API route /diamond/api/jobs/here:1/nothing; "),
    ("GET", "jobs/", "no API route /diamond/api/jobs/ (without the last '/': "
     "/diamond/api/jobs); "),
    ("GET", "jobs/here:1/logs/", "(without the last '/': /diamond/api/jobs/here:1/logs)"),
])
async def test_fault_a_path_that_is_no_route_is_a_json_404(rest, method, path, said):
    """Jupyter's HTML "404: Not Found" page answered a script that asked /diamond/api/approve
    (the route is tasks/ID/approve) or `jobs/` with a trailing slash."""
    code, reply = await rest(method, path, b"{}" if method == "POST" else None)
    assert code == 404 and isinstance(reply, dict), (code, str(reply)[:200])
    assert reply["reason"] == "not-found" and said in reply["message"], reply


async def test_fault_a_path_that_is_no_route_asks_for_authentication(rest):
    """Without the token: 403 with a JSON reason, as every route (it was the HTML 404),
    never the list of routes."""
    code, reply = await rest("GET", "nothing", auth=False)
    assert code == 403 and "routes" not in str(reply)


@pytest.mark.parametrize("body", [b"[]", b'["script"]', b"null", b'"echo hi"', b"7"])
@pytest.mark.parametrize("path", ["jobs", "translate", "place", "workflows", "tasks",
                                  "transfers"])
async def test_a_body_that_is_json_but_no_object_is_refused(rest, path, body):
    """(guards) A list, null, a string or a number: 400 with a JSON message, nothing done."""
    code, reply = await rest("POST", path, body)
    assert code == 400 and reply["reason"] == "bad-input", reply
    assert reply["message"].startswith('the request body must be a JSON object of named '
                                       'fields ({"field": value, ...}), not '), reply
    assert (await rest("GET", "jobs"))[1]["total"] == 0


async def test_a_ten_megabyte_body_is_refused_before_it_is_read(rest):
    """(guard) 413 naming the bound; no job."""
    big = json.dumps({"script": "echo hi\n" * 1_300_000, "site": "here"}).encode()
    t0 = time.monotonic()
    code, reply = await rest("POST", "jobs", big)
    assert code == 413 and reply["reason"] == "too-large", reply
    assert f"the request body is {len(big)} bytes" in reply["message"]
    assert time.monotonic() - t0 < 30
    assert (await rest("GET", "jobs"))[1]["total"] == 0


# -- 8. workflows --------------------------------------------------------------------------------

def _ring(n: int) -> str:
    out = ["name: ring", "steps:"]
    for i in range(n):
        out.append(f"  - name: s{i}\n    script: ./x\n    needs: [s{(i - 1) % n}]")
    return "\n".join(out) + "\n"


def test_fault_a_cycle_of_a_thousand_steps_is_named_in_a_line_one_can_read():
    """A ring of 1,000 steps was refused with all 1,001 names in one line of 7,927
    characters; now its length, its first steps and the step that closes it."""
    from diamond_jupyter.workflow.model import load_workflow

    t0 = time.monotonic()
    with pytest.raises(BadInput) as e:
        load_workflow(_ring(1000))
    assert time.monotonic() - t0 < 30
    assert str(e.value) == ("workflow 'ring' has a cycle of 1000 steps: s0 -> s1 -> s2 -> s3 "
                            "-> s4 -> s5 -> s6 -> s7 -> ... (990 steps more) ... -> s998 -> "
                            "s999 -> s0 (line 8)"), str(e.value)


@pytest.mark.parametrize("n,said", [
    (2, "workflow 'ring' has a cycle: s0 -> s1 -> s0 (line 8)"),
    (11, "has a cycle: s0 -> s1 -> s2 -> s3 -> s4 -> s5 -> s6 -> s7 -> s8 -> s9 -> s10 -> s0"),
])
def test_a_short_cycle_is_named_whole(n, said):
    """(guard of the shortening) Up to 11 steps every name is said."""
    from diamond_jupyter.workflow.model import load_workflow

    with pytest.raises(BadInput, match="cycle") as e:
        load_workflow(_ring(n))
    assert said in str(e.value), str(e.value)


def test_fault_a_ring_through_the_cli_exits_2_naming_it_in_a_short_line(user):
    user.write("ring.yaml", _ring(1000).replace("./x", "echo hi"))
    line = user.refused("workflow", "run", "ring.yaml")
    assert "has a cycle of 1000 steps: s0 -> s1" in line and len(line) < 300, line
    assert sbatch_calls(user) == []


def test_a_thousand_step_chain_loads(tmp_path: Path):
    """(guard) 1,000 steps, each needing the one before: loaded, in order, in seconds."""
    from diamond_jupyter.workflow.model import load_workflow

    text = _ring(1000).replace("    needs: [s999]\n", "", 1)
    t0 = time.monotonic()
    wf = load_workflow(text)
    assert time.monotonic() - t0 < 30
    assert wf.order()[0] == "s0" and wf.order()[-1] == "s999" and len(wf.steps) == 1000
