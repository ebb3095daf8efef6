"""The third sweep of hostile and careless inputs, through every face: the REST routes of a
real Jupyter server (a local site, no test bed), the values a spec hands to each dialect,
workflow files and the command line.

The standard is the first sweep's (tests/test_adversarial_inputs.py): bad input is a 4xx (or
exit 2) with one line saying what, where and what would be accepted, never a 500 or a
traceback; nothing user-supplied changes the meaning of a directive or reaches a shell."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import sweep_helpers

from diamond_jupyter.model import BadInput, JobSpec

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")

DIALECTS = ["slurm", "pbs", "lsf", "flux", "sge"]
LISTED = "expected how many to list, a whole number from 1 to "  # a list's limit refused


# -- 1. REST: a real server, a local site -------------------------------------------------------

jp_server_config = sweep_helpers.one_local_site_server


rest = sweep_helpers.rest_caller


@pytest.fixture
def raw(rest):
    """`await raw(METHOD, "jobs/...?q", body)`: `rest` with `{}` for a POST, PUT or PATCH
    without a body."""

    async def call(method: str, path: str, body: bytes | None = None, *,
                   auth: bool = True) -> tuple[int, Any]:
        if method in ("POST", "PUT", "PATCH") and body is None:
            body = b"{}"
        return await rest(method, path, body, auth=auth)

    return call


def _rules(router: Any) -> list[Any]:
    found = []
    for rule in getattr(router, "rules", []):
        if hasattr(rule.target, "rules"):
            found += _rules(rule.target)
        elif "/diamond/" in getattr(getattr(rule.matcher, "regex", None), "pattern", ""):
            found.append(rule)
    return found


async def test_every_registered_route_refuses_every_method_without_a_token(jp_serverapp, raw):
    """Enumerated from the server's own handler table (a route added later is covered too);
    the test-bed suite checked this, so a run without the test bed never did."""
    from diamond_jupyter.server.routes import routes

    app = jp_serverapp.web_app
    rules = _rules(app.default_router) + _rules(app.wildcard_router)
    patterns = {r.matcher.regex.pattern for r in rules}
    assert len(patterns) >= len(routes())
    for pattern in patterns:
        path = re.sub(r"\(\?P<\w+>[^)]*\)", "here%3A1", pattern.rstrip("$"))
        path = "/diamond/api" + path.split("/diamond/api", 1)[1]
        for method in ("GET", "POST", "PUT", "DELETE", "PATCH"):
            code, body = await raw(method, path, auth=False)
            assert code in (401, 403), f"{method} {path} answered {code} without a token"
            assert body["reason"], (method, path, body)
            code, _ = await raw(method, path, auth=False, body=b'{"x": 1}'
                                if method != "GET" and method != "DELETE" else None)
            assert code in (401, 403)


async def test_a_body_that_is_not_utf8_is_a_400_not_a_500(raw):
    """A Latin-1 byte in the JSON was an 'unhandled error (see server log)', 500."""
    for body in (b"\xff\xfe{}", b'{"script": "echo caf\xe9"}', b"\xc0\xae"):
        for path in ("jobs", "place", "translate", "workflows", "transfers"):
            code, reply = await raw("POST", path, body)
            assert code == 400, (path, body, code, reply)
            assert reply["reason"] == "bad-input"
            assert "not UTF-8" in reply["message"] and "byte" in reply["message"]


@pytest.mark.parametrize("query", ["events?since=99999999999999999999999",
                                   "jobs?offset=99999999999999999999999",
                                   "tasks?offset=18446744073709551616",
                                   "transfers?offset=9223372036854775808",
                                   "jobs?offset=" + "9" * 5000])
async def test_an_integer_beyond_what_the_store_holds_is_a_400(raw, query):
    """SQLite's OverflowError became a 500."""
    code, reply = await raw("GET", query)
    assert code == 400, (query, code, reply)
    name = query.split("?")[1].split("=")[0]
    assert reply["message"] == f"{name} must be between 0 and {2**63 - 1}"


@pytest.mark.parametrize("value", ["1_0", "%D9%A3", "%EF%BC%91", "1.0", "1e3", "0x10", "--1"])
async def test_only_ascii_digits_are_an_integer(raw, value):
    """`limit=1_0` was read as 10, an Arabic-Indic or full-width digit as its value."""
    code, reply = await raw("GET", f"jobs?limit={value}")
    assert code == 400, (value, code, reply)
    assert reply["message"].startswith(f"limit: {LISTED}500, not ")


async def test_plain_integers_still_work(raw):
    code, reply = await raw("GET", "jobs?limit=+5&offset=0")
    assert code == 200 and reply["limit"] == 5 and reply["offset"] == 0


@pytest.mark.parametrize("ident", ["here:1%00", "here%3A1%0A", "%2e%2e%2f%2e%2e", "..",
                                   "here:%2F..%2F..%2Fetc", "%00", "here:$(id)", "-rf",
                                   "a" * 3000])
async def test_odd_ids_are_404s_that_name_them_visibly(raw, ident):
    for method, path in [("GET", "jobs/{}"), ("GET", "jobs/{}/logs"), ("GET", "jobs/{}/files"),
                         ("POST", "jobs/{}/cancel"), ("POST", "jobs/{}/fetch"),
                         ("GET", "workflows/{}"), ("POST", "workflows/{}/cancel"),
                         ("GET", "tasks/{}"), ("GET", "sites/{}/usage"),
                         ("GET", "sites/{}/describe"), ("POST", "sites/{}/login")]:
        code, reply = await raw(method, path.format(ident))
        assert code == 404, (method, path, ident, code, reply)
        msg = reply["message"]
        assert "\x00" not in msg and "\n" not in msg, msg


# -- 2. values a spec hands to a dialect -------------------------------------------------------

def _render(dialect: str, **fields: Any):
    from diamond_jupyter.dialects import get_script_dialect

    spec = JobSpec.model_validate({"script": "echo body\n", **fields})
    return get_script_dialect(dialect).render_script(spec)


@pytest.mark.parametrize("name", ["A B", "a,b", "a --uid=0", "1X", "-x", "A=B", "A;id", "$(id)",
                                  "", "Ä", "A-B", "A.B"])
def test_an_environment_variable_name_must_be_a_shell_identifier(name):
    """`{"a,b": "1"}` became `--export=ALL,a,b=1`: the job got a copy of the caller's `a`
    and a variable `b`; `a --uid=0` became a variable `a --uid`."""
    with pytest.raises(BadInput, match=r"^environment\.variables: name .* is not a variable "
                                       r"name \(a letter or _, then letters, digits or _\)"):
        JobSpec.model_validate({"script": "true\n",
                                "environment": {"variables": {name: "1"}}})


@pytest.mark.parametrize("dialect", DIALECTS)
def test_identifier_names_and_any_one_line_value_are_kept(dialect):
    from diamond_jupyter.dialects import get_script_dialect

    env = {"OMP_NUM_THREADS": "8", "_x1": "v", "PATHS": "/a:/b"}
    text = _render(dialect, environment={"variables": env}).script
    back = get_script_dialect(dialect).parse_script(text)
    assert back.environment.variables == env


LIST_VALUES = ["a,b", "x,y=z", ",", "a b,c", "it's,\"q\"", "$(touch PWNED),`touch PWNED`"]


@pytest.mark.parametrize("dialect", ["slurm", "pbs", "lsf", "sge"])
@pytest.mark.parametrize("value", LIST_VALUES)
def test_a_variable_whose_value_holds_a_comma_reaches_the_job_whole(dialect, value, tmp_path):
    """Slurm's --export, PBS's and Grid Engine's -v and LSF's -env read a comma as the end of
    the variable: FOO=a,b gave the job FOO=a and a copy of the caller's `b` (Slurm said
    'approximated', the others nothing). Such a variable is set by a quoted `export` line."""
    text = _render(dialect, environment={"variables": {"FOO": value, "KEEP": "1"}}).script
    head = text[:text.index("echo body")]
    for line in head.splitlines():
        if line.startswith("#"):
            assert "FOO=" not in line, line  # never in a directive's list
    body = text.replace("echo body", 'printf %s "$FOO" > out')
    res = subprocess.run(["bash", "-c", body], cwd=tmp_path, capture_output=True, text=True,
                         env={"PATH": os.environ["PATH"]})
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "out").read_text() == value
    assert not (tmp_path / "PWNED").exists()
    from diamond_jupyter.dialects import get_script_dialect

    assert get_script_dialect(dialect).parse_script(text).environment.variables == {
        "KEEP": "1"}  # FOO is set by the body now, not a directive: nothing else was added


@pytest.mark.parametrize("value", LIST_VALUES)
def test_flux_takes_one_variable_per_option_so_a_comma_stays_in_it(value):
    from diamond_jupyter.dialects import get_script_dialect

    text = _render("flux", environment={"variables": {"FOO": value}}).script
    assert get_script_dialect("flux").parse_script(text).environment.variables == {
        "FOO": value}


@pytest.mark.parametrize("expr", ["x", "a,b", "1-3;id", "$(id)", "-1", "0-", "1 2", "3-1",
                                  "1-10%0", "1-9:0", "[1-5]", "1--2", "", "1,,2",
                                  "9" * 12])
def test_an_array_is_indexes_and_ranges(expr):
    """`a,b` became `#PBS -J a-a`; `1-3;id`, `x` and `-1` reached --array, -J and array[]
    as they were."""
    with pytest.raises(BadInput, match=r"^array\.expression .* is not a list of job-array "
                                       r"indexes"):
        JobSpec.model_validate({"script": "true\n", "array": {"expression": expr}})


@pytest.mark.parametrize("expr", ["0", "1-10", "1,3,5", "1-9:2", "1-10%2", "0-15:4%3",
                                  "1,2,5-7", "0-999999"])
def test_ordinary_arrays_are_accepted(expr):
    spec = JobSpec.model_validate({"script": "true\n", "array": {"expression": expr}})
    assert spec.array.expression == expr


# -- 3. the command line, used carelessly ------------------------------------------------------

def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    sites = tmp_path / "sites.yaml"
    if not sites.exists():
        sites.write_text("sites:\n  - name: alpha\n    scheduler: slurm\n"
                         "    transport: {kind: local}\n"
                         f"store: {tmp_path / 'store.sqlite3'}\n")
    env = {**os.environ, "DIAMOND_DATA_DIR": str(tmp_path / "data"), "HOME": str(tmp_path),
           "DIAMOND_CONFIG": str(sites)}
    return subprocess.run([sys.executable, "-m", "diamond_jupyter.cli", *args],
                          capture_output=True, text=True, env=env, timeout=120)


def _leaf_commands() -> list[list[str]]:
    """Every runnable command of `diamond` (nested ones as [group, command])."""
    import argparse

    from diamond_jupyter.cli.main import build_parser

    def walk(parser: argparse.ArgumentParser, path: list[str]) -> list[list[str]]:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            return [path]
        return [leaf for name, p in subs[0].choices.items() for leaf in walk(p, [*path, name])]

    return walk(build_parser(), [])


def test_every_command_has_help_and_reports_an_unknown_option_with_its_own_usage(tmp_path):
    """`diamond jobs --bogus` printed the top-level usage, as if `jobs` were the mistake."""
    from diamond_jupyter.cli.main import main

    leaves = _leaf_commands()
    assert ["workflow", "run"] in leaves and ["jobs"] in leaves and len(leaves) > 20
    for leaf in leaves:
        with pytest.raises(SystemExit) as e:
            main([*leaf, "--help"])
        assert e.value.code == 0, leaf
    for leaf in (["jobs"], ["workflow", "status", "wf-1"], ["sites"],
                 ["translate", "--to", "pbs", "x"]):
        res = _cli(tmp_path, *leaf, "--frobnicate")
        assert res.returncode == 2 and res.stdout == ""
        assert res.stderr.splitlines()[0].startswith(f"usage: diamond {' '.join(leaf[:2])}"
                                                     if leaf[0] == "workflow" else
                                                     f"usage: diamond {leaf[0]} "), res.stderr
        # named as an unknown option, with the ones accepted (no option near it here)
        assert "error: unknown option --frobnicate (accepted: --config, " in res.stderr


@pytest.mark.parametrize("args,code,reason", [
    (["status", "nosuch"], 2, "bad-input"),
    (["status", "alpha:1"], 2, "bad-input"),
    (["queue", "nowhere"], 2, "bad-input"),
    (["workflow", "status", "wf-nope"], 2, "bad-input"),
    (["submit", "/nonexistent/job.sh"], 2, "bad-input"),
    (["jobs", "--limit", "many"], 2, "bad-input"),
    (["jobs", "--frobnicate"], 2, "bad-input"),
    (["sites", "--config", "/nonexistent.yaml"], 2, "bad-input"),
    (["queue", "alpha"], 1, "failed"),  # a local site without Slurm: the site fails
])
def test_json_output_is_json_even_when_the_command_fails(tmp_path, args, code, reason):
    """With --json a failure printed nothing on stdout: `json.loads` of the output raised
    instead of telling the script what went wrong."""
    res = _cli(tmp_path, *args, "--json")
    assert res.returncode == code, (res.stdout, res.stderr)
    reply = json.loads(res.stdout)
    assert reply["reason"] == reason and reply["message"] and "\n" not in reply["message"]
    assert res.stderr.strip().splitlines()[-1].endswith(reply["message"].split(": ", 1)[-1])


# -- 4. workflow files --------------------------------------------------------------------------

def _wf(*steps: dict) -> dict:
    return {"name": "w", "steps": list(steps)}


def _st(name: str, **kw: Any) -> dict:
    return {"name": name, "script": "#!/bin/bash\necho hi\n", **kw}


def _refused(data: Any) -> str:
    from diamond_jupyter.workflow.model import parse_workflow

    with pytest.raises(BadInput) as e:
        parse_workflow(data, sites=["alpha", "beta"])
    msg = str(e.value)
    assert "\n" not in msg
    return msg


@pytest.mark.parametrize("steps,names", [
    ([_st("prep"), _st("Prep", needs=["prep"])], ("prep", "Prep")),
    ([_st("a"), _st("b", needs=["a"]), _st("A")], ("a", "A")),
    ([_st("Train.v2"), _st("train.V2")], ("Train.v2", "train.V2")),
])
def test_step_names_differing_only_in_case_are_refused_naming_both(steps, names):
    """Both steps ran; `needs: [Prep]` meant for `prep` silently waited on the other one."""
    msg = _refused(_wf(*steps))
    assert f"step names {names[0]!r} and {names[1]!r} differ only in case" in msg


def test_gangs_differing_only_in_case_are_refused_naming_their_steps():
    """`gang: g` and `gang: G` made two gangs of one: neither waited for the other."""
    msg = _refused(_wf(_st("a", gang="g", site="alpha"), _st("b", gang="G", site="beta")))
    assert "gangs 'g' (a) and 'G' (b) differ only in case" in msg


def test_distinct_names_and_gangs_are_kept():
    from diamond_jupyter.workflow.model import parse_workflow

    w = parse_workflow(_wf(_st("a", gang="g1"), _st("b", gang="g1"), _st("a2", needs=["a"])),
                       sites=["alpha"])
    assert w.gangs() == {"g1": ["a", "b"]}


@pytest.mark.parametrize("text,where", [
    ("name: w\nsteps:\n  - {name: a, script: x}\n  - {name: A, script: y, needs: [a]}\n",
     "step names 'a' and 'A' differ only in case"),
    ("name: w\nsteps:\n  - {name: a, script: x, gang: g}\n  - {name: b, script: y, gang: G}\n",
     "gangs 'g' (a) and 'G' (b)"),
    ("name: w\nsteps:\n  - {name: a, script: x, inputs: [{from: a, path: o}]}\n",
     "step 'a': inputs[0] is from the step itself"),
    ("name: w\nsteps:\n  - {name: a, script: x, gang: 'g;id'}\n",
     "steps['a'].gang: 'g;id' is not a valid name"),
    ("name: w\nsteps:\n  - {name: a, script: '   '}\n", "steps['a'].script: the script is empty"),
    ("name: w\nsteps: []\n", "steps: no steps: a workflow has at least one"),
])
def test_diamond_workflow_run_refuses_with_exit_2_naming_the_step(tmp_path, text, where):
    f = tmp_path / "w.yaml"
    f.write_text(text)
    res = _cli(tmp_path, "workflow", "run", str(f), "--json")
    assert res.returncode == 2, (res.stdout, res.stderr)
    assert where in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert where in json.loads(res.stdout)["message"]


# -- 5. what jobs print, shown by the magics ----------------------------------------------------

ESC = ["\x1b]52;c;cm0gLXJmIH4K\x07", "\x1b[2K\x1b[1A", "\x1b]0;owned\x07", "\x9b2J", "\u202e"]
SHOWN_NEVER = ("\x1b]", "\x1b[2K", "\x1b[1A", "\x07", "\x9b", "\u202e")


def _job(**kw: Any):
    from diamond_jupyter.model import Job, JobState

    base = {"id": "alpha:7", "site": "alpha", "native_id": "7", "name": "n",
            "state": JobState.FAILED, "exit_code": 1}
    return Job.model_validate(base | kw)


def test_the_job_card_text_shows_job_output_without_driving_the_terminal():
    """The card's text/plain (what a terminal IPython prints) carried a job's escape
    sequences as they were: a job could set the clipboard or erase lines; the HTML was
    escaped already."""
    from diamond_jupyter.kernel.jobcard import bundle

    evil = "".join(ESC)
    b = bundle(_job(name="n" + evil, reason="Priority" + evil),
               {"stdout": "\x1b[32mok\x1b[0m " + evil + "\n", "stderr": evil + "boom\n",
                "files": ["f" + evil], "error": "e" + evil})
    text = b["text/plain"]
    assert not any(s in text for s in SHOWN_NEVER), repr(text)
    assert "\x1b[32mok\x1b[0m" in text and "boom" in text and "Priority" in text
    assert not any(s in b["text/html"] for s in SHOWN_NEVER)


def test_the_workflow_card_text_shows_reasons_visibly():
    from diamond_jupyter.kernel.workflowcard import render_text

    text = render_text({"id": "wf-1", "name": "w", "state": "FAILED", "reason": ESC[0] + "r",
                        "steps": [{"name": "a", "state": "FAILED", "site": "alpha",
                                   "job": "alpha:1" + ESC[1], "needs": []}]})
    assert not any(s in text for s in SHOWN_NEVER) and "r" in text


def test_a_magic_table_shows_scheduler_text_visibly():
    from diamond_jupyter.kernel.magics import jobs_table

    table = jobs_table([_job(reason="held" + ESC[0], name="x" + ESC[2])])
    text = repr(table)
    assert not any(s in text for s in SHOWN_NEVER) and "held" in text
    assert not any(s in table._repr_html_() for s in SHOWN_NEVER)


def test_magic_logs_and_errors_keep_colours_but_not_control_sequences(capsys):
    """`%diamond logs` wrote a job's bytes to the kernel's stdout; in a terminal IPython
    they drove the terminal. An error line from a site likewise."""
    import asyncio

    from diamond_jupyter.kernel import magics

    class Engine:
        def call(self, coro):
            return asyncio.run(coro)

        async def logs(self, job, lines):
            return {"stdout": "\x1b[1mbold\x1b[0m\n" + ESC[0] + "out\n",
                    "stderr": ESC[1] + "err\n", "missing": "gone" + ESC[2]}

    m = magics.DiamondMagics.__new__(magics.DiamondMagics)
    m._engine = Engine()
    m.do_logs(__import__("argparse").Namespace(job="alpha:1", lines=10), None)
    magics._error("alpha: sbatch: " + ESC[0] + "denied\nmore" + ESC[1])
    got = capsys.readouterr()
    for stream in (got.out, got.err):
        assert not any(s in stream for s in SHOWN_NEVER), repr(stream)
    assert "\x1b[1mbold\x1b[0m" in got.out and "out" in got.out
    assert "err" in got.err and "gone" in got.err and "denied" in got.err


# -- 6. secrets never reach the store -----------------------------------------------------------

SECRETS_IN_SCRIPTS = [
    ("export DB_PASS=Kq8vZ2mW\n", "Kq8vZ2mW"),
    ("MYSQL_PWD=Lr4nX7pT mysql -u me\n", "Lr4nX7pT"),
    ("export SSH_PASSPHRASE='open sesame 9'\n", "open sesame 9"),
    ("export AWS_CREDENTIALS=Zc5bQ1yH\n", "Zc5bQ1yH"),
    ("export SESSION_COOKIE=Pd3sF6gJ\n", "Pd3sF6gJ"),
    ("git clone https://me:ghs9Wk2Lm4@git.example.org/r.git\n", "ghs9Wk2Lm4"),
    ("export X=hf_" + "Ab3" * 12 + "\n", "hf_" + "Ab3" * 12),
    ("curl -H 'x-goog-api-key: AIza" + "Sy9" * 12 + "'\n", "AIza" + "Sy9" * 12),
    ("curl -H 'Authorization: Bearer eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.SflKxwRJSMeKKF2QT4'\n",
     "eyJzdWIiOiIxMjM0"),
]


@pytest.mark.parametrize("script,secret", SECRETS_IN_SCRIPTS)
def test_secrets_in_a_script_or_its_variables_are_not_stored(tmp_path, script, secret):
    """A password under a name the redactor did not know (DB_PASS, MYSQL_PWD), a credential
    in a URL, or a Hugging Face, Google or JWT token under any name reached the store."""
    from diamond_jupyter.store import Store

    store = Store(tmp_path / "s.sqlite3")
    spec = JobSpec(script="#!/bin/bash\n" + script + "echo done\n", name="leaky",
                   environment={"variables": {"OMP": "8"}})
    job = store.record_intent("alpha", "tok-secret", spec)
    stored = store.get_job(job.id).spec
    assert secret not in stored.script and "echo done" in stored.script
    assert stored.environment.variables["OMP"] == "8"
    store.close()
    raw = sweep_helpers.store_files(tmp_path)
    assert secret.encode() not in raw


def test_ordinary_names_and_numbers_are_kept():
    """`tokenizer=gpt2` in a script was stored as `tokenizer=***`."""
    from diamond_jupyter.store import redact

    text = ("export PASSES=3 OMP_NUM_THREADS=8 BYPASS_CACHE=1 COMPASS=north\n"
            "git clone https://git.example.org/r.git\nmax_tokens=100 tokenizer=gpt2\n")
    assert redact(text) == text


@pytest.mark.parametrize("text", ["eyJ" * 8000, "hf_" * 8000, "://a:" * 5000, "AIza" * 6000,
                                  "eyJ" + "a" * 30 + "." * 8000])
def test_the_redactor_stays_linear_on_what_it_now_looks_for(text):
    import time

    from diamond_jupyter.store import redact

    t0 = time.thread_time()
    redact(text)
    assert time.thread_time() - t0 < 0.5
