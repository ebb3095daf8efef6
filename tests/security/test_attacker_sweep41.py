"""Security sweep 41: fields no earlier sweep attacked, secrets given another way, a hostile
site's answers, every route without its token, and files an attacker shapes.

A job's mail events, start time and node features given through REST and MCP as options or
shell syntax; a Slurm token in the environment or in a site's `env:` echoed back by sbatch; a
slurmrestd URL carrying a token in its query; sbatch answering with a job id no Slurm makes;
every route of the API called without the token, or with a forged XSRF cookie only; a job's
output of HTML served by the API; a workflow file of aliases, of deep nesting or of
thousands of steps; a stage path, a copy destination and a module name starting with '-'.
Each attack fails safely: refused with an error naming the field and nothing submitted, or
carried as data that nothing runs.

Tests marked `fault` failed before this sweep's fixes; the others are guards."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
from pathlib import Path

import pytest
import sweep_helpers
import yaml
from sweep_helpers import mcp_refusal, sbatch_calls, store_files, submitted_script

from diamond_jupyter.config import load_config
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import MAX_STAGE_ENTRIES, BadInput, JobSpec, JobState
from diamond_jupyter.server.routes import NoRouteHandler, routes
from diamond_jupyter.store import Store
from diamond_jupyter.workflow.model import load_workflow

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")
user, shell, jp_server_config, rest = sweep_helpers.FACES_FIXTURES
engine = sweep_helpers.here_engine
SCRIPT = sweep_helpers.FACES_SCRIPT
JSON = {"Content-Type": "application/json"}
PWN = "touch PWNED"
SITE_TOKEN = "Zq7x9Lm" * 6  # no known token shape: only its name says it is one
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdW4iOiJtZSJ9Q2xhc3NpZmllZA.c2lnbmF0dXJlLXNlY3JldA"


def _no_pwned(*roots: Path) -> None:
    for root in roots:
        assert not list(root.rglob("PWNED")), f"a command ran under {root}"


async def _rest_spec_refused(rest, spec: dict, field: str) -> str:
    """POST jobs with `spec` (the script added) is a 400 naming `field`; no job is made."""
    body = json.dumps({"spec": {"script": SCRIPT, **spec}, "site": "here"}).encode()
    code, reply = await rest("POST", "jobs", body, headers=JSON)
    assert code == 400 and reply["reason"] == "bad-input", (code, reply)
    assert field in reply["message"], reply
    assert (await rest("GET", "jobs"))[1]["jobs"] == []
    return reply["message"]


# ---- (1) fields that reach a directive: mail events, start time, node features --------------

@pytest.mark.parametrize("event", ["--uid=0", "end;id", "END,ALL"])
async def test_fault_a_mail_event_no_scheduler_knows_is_refused_over_rest(rest, event):
    """`mail_events: ["--uid=0"]` reached the script as `#SBATCH --mail-type=--UID=0`."""
    said = await _rest_spec_refused(rest, {"mail_events": [event]}, "mail_events[0]")
    assert f"{event!r} is not a mail event" in said and "accepted: all, " in said, said


async def test_fault_a_mail_event_in_capitals_names_the_one_meant(user):
    said = await mcp_refusal(user, "submit", {"spec": {"script": SCRIPT, "mail_events": [
        "begin", "END"]}, "site": "alpha"})
    assert "mail_events[1] 'END' is not a mail event (did you mean end? accepted:" in said, said
    assert sbatch_calls(user) == []


async def test_a_known_mail_event_reaches_the_script(engine, tmp_path):
    """(guard) the words accepted are those sbatch reads, and they are rendered."""
    await engine.submit(JobSpec(script="echo hi\n", mail_events=["end", "time_limit_80"]),
                        "here")
    [call] = sweep_helpers.here_sbatch_calls(tmp_path)
    assert "#SBATCH --mail-type=END,TIME_LIMIT_80\n" in Path(call.split()[-1]).read_text()


@pytest.mark.parametrize("begin", [f"now;{PWN}", "--uid=0", "tomorrow at noon"])
async def test_fault_a_start_time_no_scheduler_reads_is_refused_over_rest(rest, begin):
    """It was accepted and left out of the script without a word: the job would start at
    once, while the job recorded (and shown) said it waits."""
    said = await _rest_spec_refused(rest, {"begin": begin}, "begin")
    assert f"begin {begin!r} is not a start time" in said, said


async def test_fault_a_start_time_no_scheduler_reads_is_refused_by_mcp(user):
    said = await mcp_refusal(user, "submit", {"spec": {"script": SCRIPT, "begin": "$(id)"},
                                              "site": "alpha"})
    assert "begin '$(id)' is not a start time" in said, said
    assert sbatch_calls(user) == []


def test_a_scripts_unreadable_start_time_stays_its_directive_and_runs_nothing(user):
    """(guard) a script's own `--begin` sbatch cannot read reaches sbatch as written (sbatch
    refuses it), never as a line of shell."""
    user.write("begin.sh", f"#!/bin/bash\n#SBATCH --begin=now;{PWN}\necho hi\n")
    user.run("submit", "--site", "alpha", "begin.sh", code=0)
    script = submitted_script(user)
    assert [ln for ln in script.splitlines() if PWN in ln] == [f"#SBATCH --begin=now;{PWN}"]
    subprocess.run(["bash", "-c", script], cwd=user.root, capture_output=True, timeout=30)
    _no_pwned(user.root)


async def test_fault_a_node_feature_that_is_an_option_is_refused_over_rest(rest):
    """`constraints.features: ["--uid=0"]` reached `#SBATCH --constraint=--uid=0`."""
    said = await _rest_spec_refused(rest, {"constraints": {"features": ["--uid=0"]}},
                                    "constraints.features[0]")
    assert "starts with '-'" in said and "a node feature is a name" in said, said


@pytest.mark.parametrize("spec,field", [
    ({"environment": {"modules": ["-rf"]}}, "environment.modules[0]"),
    ({"dependencies": [{"job_ids": ["\uff14\uff12"]}]}, "dependencies[0].job_ids[0]"),
    ({"array": {"expression": "\uff11-\uff13"}}, "array.expression"),
    ({"stage_in": [{"source": "-rf", "destination": "in"}]}, "stage_in[0].source"),
    ({"working_directory": "rel/../../.ssh"}, "working_directory"),
])
async def test_a_dash_a_look_alike_digit_or_a_climb_in_a_field_is_refused(rest, spec, field):
    """(guard) a module named as an option, full-width digits in a dependency or an array,
    a stage path read as an option, a working directory climbing out of the home."""
    await _rest_spec_refused(rest, spec, field)


# ---- (2) secrets given otherwise than the environment's known names --------------------------

def _sbatch_echoing(fake: Path, variable: str) -> None:
    (fake / "sbatch").unlink()
    (fake / "sbatch").write_text(f'#!/bin/sh\necho "sbatch: error: Invalid token ${variable}" '
                                 ">&2\nexit 1\n")
    (fake / "sbatch").chmod(0o755)


async def _refused_submit(sites: Path, tmp_path: Path) -> str:
    fed = Federation(sites, store=Store(tmp_path / "s.sqlite3"), poll_interval_s=3600,
                     min_poll_s=3600)
    await fed.start(recover=False)
    try:
        with pytest.raises(BadInput):
            await fed.submit(JobSpec(script="#!/bin/bash\necho hi\n"), "here")
        return str(fed.store.list_jobs()[0].reason)
    finally:
        await fed.close()


@pytest.mark.parametrize("line", [f"export SLURM_JWT={JWT}\n",
                                  f"curl -H 'X-SLURM-USER-TOKEN: {JWT}' $URL\n",
                                  f"JWT={JWT} sbatch --wrap true\n"])
def test_slurms_token_in_a_job_script_is_not_kept_by_the_store(tmp_path, line):
    """(guard) SLURM_JWT, Slurm's own token variable, and slurmrestd's X-SLURM-USER-TOKEN
    header, set in a script: the store keeps the script without the token."""
    sweep_helpers.assert_script_secret_not_stored(tmp_path, line, JWT)


async def test_fault_a_token_a_sites_file_gives_a_sites_commands_never_reaches_the_store(
        tmp_path):
    """A site's `env: {API_TOKEN: ...}` (for its commands) echoed by sbatch was kept."""
    sites = sweep_helpers.here_sites_file(tmp_path, tmp_path / "work")
    data = yaml.safe_load(sites.read_text())
    data["sites"][0]["env"] = {"SITE_API_TOKEN": SITE_TOKEN}
    sites.write_text(yaml.safe_dump(data))
    _sbatch_echoing(tmp_path / "here-slurm", "SITE_API_TOKEN")
    assert "Invalid token ***" in await _refused_submit(sites, tmp_path)
    assert SITE_TOKEN.encode() not in store_files(tmp_path)


@pytest.mark.parametrize("url", [f"https://hpc.example.org/?token={JWT}",
                                 f"https://hpc.example.org/api#{JWT}"])
def test_fault_a_slurmrestd_url_carrying_a_token_is_refused_without_showing_it(tmp_path,
                                                                               url):
    path = tmp_path / "sites.yaml"
    path.write_text(yaml.safe_dump({"sites": [{"name": "a", "workdir": "/w", "transport": {
        "kind": "slurmrestd", "url": url, "user": "me", "token_file": "/nonexistent"}}]}))
    with pytest.raises(BadInput) as e:
        load_config(path)
    said = str(e.value)
    assert "transport.url: url must be the API's base address, without a query" in said, said
    assert JWT not in said


# ---- (3) a hostile site's answers ---------------------------------------------------------------

@pytest.mark.parametrize("answer", ["9" * 400, f"4242;{PWN}\n", "\x1b]52;c;aGk=\x07 4242"])
async def test_fault_a_submit_answer_that_is_no_slurm_job_id_is_refused(tmp_path, answer):
    """sbatch answering a 400-digit number (`fault`: it was taken as the job's id), shell
    syntax or a terminal sequence: no job id is recorded from it."""
    sites = sweep_helpers.here_sites_file(tmp_path, tmp_path / "work")
    fake = tmp_path / "here-slurm"
    (fake / "answer").write_text(answer)
    (fake / "sbatch").unlink()
    (fake / "sbatch").write_text(f"#!/bin/sh\ncat {fake / 'answer'}\n")
    (fake / "sbatch").chmod(0o755)
    fed = Federation(sites, store=Store(tmp_path / "store.sqlite3"), poll_interval_s=3600,
                     min_poll_s=3600)
    await fed.start(recover=False)
    try:
        with pytest.raises(Exception, match="cannot parse sbatch output: no job id"):
            await fed.submit(JobSpec(script="#!/bin/bash\necho hi\n"), "here")
        assert [j.native_id for j in fed.store.list_jobs()] == [None]
    finally:
        await fed.close()
    _no_pwned(tmp_path)


async def test_a_copy_to_a_site_path_shaped_as_an_option_is_a_file_of_that_name(engine,
                                                                                tmp_path):
    """(guard) `here:-oProxyCommand=...` is a path on the site (no shell, no option): the
    file is written under that name in the site's home, and nothing runs."""
    src = tmp_path / "in.txt"
    src.write_text("data\n")
    rec = await engine.transfer(str(src), f"here:-oProxyCommand={PWN}")
    assert rec.state == "SUCCEEDED", rec
    _no_pwned(tmp_path, Path.home())


# ---- (4) the REST API: every route's door, and what it serves -----------------------------------

def _route_paths() -> list[str]:
    """Each route's path under the server, its groups filled with a sample value."""
    return [re.sub(r"\(\?P<[a-z_]+>[^)]*\)", "x", r) for r, h in routes()
            if h is not NoRouteHandler] + ["/diamond/api/no-such-route"]


@pytest.mark.parametrize("method", ["GET", "POST", "DELETE", "PUT", "PATCH"])
async def test_no_route_answers_anything_without_the_token(rest, method):
    """(guard) every route, for every method, without the token: 403 and no data."""
    answers = {}
    for path in _route_paths():
        code, reply = await rest(method, path, b"{}" if method != "GET" else None, auth=False)
        answers[path] = code
        assert code == 403 and "jobs" not in str(reply), (path, code, str(reply)[:200])
    assert len(answers) > 30


async def test_no_post_route_acts_on_a_forged_xsrf_cookie_alone(rest):
    """(guard) a page on another origin can set a cookie and a header of its own making,
    not the server's token: every POST route is a 403 and nothing is submitted."""
    forged = {"X-XSRFToken": "forged", "Cookie": "_xsrf=forged; username-x=forged"}
    for path in _route_paths():
        code, _ = await rest("POST", path, b'{"script": "echo hi", "site": "here"}',
                             auth=False, headers=forged)
        assert code == 403, (path, code)
    assert (await rest("GET", "jobs"))[1]["jobs"] == []


async def test_a_jobs_html_output_is_served_as_json_that_no_browser_renders(
        http_server_client, jp_base_url, jp_auth_header, tmp_path):
    """(guard) a job's stdout of `<script>` (and a path of one) comes back as JSON data,
    with a content type a browser does not sniff into HTML."""
    work = tmp_path / "here-work"
    work.mkdir(exist_ok=True)
    out = work / "job.out"
    out.write_text("<script>alert(document.cookie)</script>\n<img src=x onerror=alert(1)>\n")
    store = Store(tmp_path / "store.sqlite3")
    store.record_intent("here", "abc123abc123", JobSpec(script="true\n"))
    job = store.bind_native_id("abc123abc123", "41")
    store.upsert_job(job.model_copy(update={"stdout_path": str(out)}))
    store.apply_state(job.id, JobState.COMPLETED)
    base = jp_base_url.rstrip("/") + "/diamond/api/"
    for path in (f"jobs/{job.id}/logs", "%3Cscript%3Ealert(1)%3C%2Fscript%3E"):
        resp = await http_server_client.fetch(base + path, headers=jp_auth_header,
                                              raise_error=False)
        assert resp.headers["Content-Type"].startswith("application/json"), resp.headers
        assert resp.headers.get("X-Content-Type-Options") == "nosniff", resp.headers
        reply = json.loads(resp.body)
        if path.startswith("jobs/"):
            assert "<script>alert(document.cookie)</script>" in reply["stdout"], reply


# ---- (5) a crafted workflow file ----------------------------------------------------------------

def _refused_quickly(text: str) -> str:
    with pytest.raises(BadInput) as e:
        load_workflow(text, sites=sweep_helpers.SITES)
    said = str(e.value)
    assert said and "\n" not in said and len(said) < 2000, said[:300]
    return said


def test_a_workflow_of_nested_aliases_is_refused_before_it_is_expanded():
    """(guard) a billion-laughs file: nine levels of nine aliases each."""
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"] + [
        f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    text = "\n".join(lines) + "\nname: wf\nsteps:\n  - {name: s, script: *a9}\n"
    said = _refused_quickly(text)
    assert "alias" in said.lower() or "anchor" in said.lower(), said


def test_a_workflow_nested_thousands_deep_is_refused():
    """(guard) 5000 nested lists in a step's field: refused, no RecursionError."""
    text = "name: wf\nsteps:\n  - name: s\n    script: " + "[" * 5000 + "]" * 5000 + "\n"
    _refused_quickly(text)


def test_a_workflow_of_very_many_steps_is_refused_naming_the_bound():
    """(guard) 20000 steps: refused by count, the bound said."""
    said = _refused_quickly(sweep_helpers.independent_steps(20_000, script="echo hi"))
    assert "steps" in said and "20000" in said, said


async def test_an_agents_plan_of_thousands_of_stage_entries_is_refused(rest):
    """(guard) resource exhaustion through stage entries: one job copying a file each of
    more entries than a job may stage (a larger body is refused by its size, 413)."""
    entries = [{"source": f"here:/data/f{i}", "destination": f"in/f{i}"}
               for i in range(MAX_STAGE_ENTRIES + 1)]
    said = await _rest_spec_refused(rest, {"stage_in": entries}, "stage_in")
    assert "more than the" in said, said


async def test_a_job_output_of_endless_lines_is_read_in_bounded_time(engine, tmp_path):
    """(guard) a job's output of 64 MiB on one line: `logs` answers, bounded, in time."""
    out = tmp_path / "work" / "big.out"
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("wb") as f:
        f.write(b"A" * (64 << 20))
    engine.store.record_intent("here", "def456def456", JobSpec(script="true\n"))
    job = engine.store.bind_native_id("def456def456", "42")
    engine.store.upsert_job(job.model_copy(update={"stdout_path": str(out)}))
    logs = await asyncio.wait_for(engine.logs(job.id), 60)
    assert len(logs["stdout"]) < 4 << 20, len(logs["stdout"])
