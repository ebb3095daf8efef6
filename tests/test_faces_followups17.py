"""Follow-ups to the seventeenth sweep of the faces: the magics refuse a prefix of an option's
name as the command line does; `/diamond/api` itself (no last `/`) is a JSON 404; `diamond
logs JOB --follow` prints a job's output as it grows until the job ends. Each test here failed
before its fix."""

from __future__ import annotations

import pytest
import sweep_helpers
from sweep_helpers import assert_magic_refused

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")

user = sweep_helpers.new_user
shell = sweep_helpers.magics_shell


# -- 1. the magics: no option read from a prefix of its name --------------------------------

@pytest.mark.parametrize("line,cell,said", [
    ("jobs --stat RUNNING", None,
     "%diamond jobs: unknown option --stat (did you mean --state? accepted: --limit, --site, "
     "--state)"),
    ("submit --site alpha --tim 5", "echo hi\n",
     "%diamond submit: unknown option --tim (did you mean --time? accepted: "),
    ("logs alpha:1 --line 5", None,
     "%diamond logs: unknown option --line (did you mean --lines? accepted: --lines)"),
])
def test_a_prefix_of_an_option_is_refused_naming_the_option(shell, user, capsys, line, cell,
                                                            said):
    """`%diamond jobs --stat X` was taken as `--state X` (and `submit --tim 5` as a time
    limit), where `diamond jobs --stat X` is refused: the same words now, nothing runs."""
    assert_magic_refused(shell, user, capsys, line, cell, said)


def test_an_option_written_whole_is_still_taken(shell, user, capsys):
    """(guard) `--state` in full lists the jobs in that state (none yet)."""
    shell.run_line_magic("diamond", "jobs --state RUNNING")
    assert "unknown option" not in capsys.readouterr().err


# -- 2. REST: /diamond/api without its last '/' ---------------------------------------------

jp_server_config = sweep_helpers.one_local_site_server
rest = sweep_helpers.rest_caller


@pytest.mark.parametrize("method", ["GET", "POST", "DELETE"])
async def test_the_api_root_without_its_slash_is_a_json_404_naming_the_routes(rest, method):
    """Jupyter's HTML "404: Not Found" page answered /diamond/api (a path under it that is
    no route was already a JSON 404)."""
    code, reply = await rest(method, "/diamond/api", b"{}" if method == "POST" else None)
    assert code == 404 and isinstance(reply, dict), (code, str(reply)[:200])
    assert reply["reason"] == "not-found", reply
    assert reply["message"].startswith("no API route /diamond/api; the routes start "
                                       "/diamond/api/ with dashboard, events, jobs, "), reply


async def test_the_api_root_without_its_slash_asks_for_authentication(rest):
    """Without the token: 403 with a JSON reason, as every route; no list of routes."""
    code, reply = await rest("GET", "/diamond/api", auth=False)
    assert code == 403 and reply["reason"] == "forbidden" and "routes" not in str(reply)


async def test_a_path_that_only_starts_like_the_api_is_not_taken(rest):
    """(guard) /diamond/apis is no path of the extension: the catch-all does not answer it."""
    code, reply = await rest("GET", "/diamond/apis")
    assert code == 404 and not isinstance(reply, dict)
