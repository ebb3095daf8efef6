"""What a center and its users meet under a real JupyterHub (no test bed): several users'
servers on one hub (a user name with characters a URL escapes, a unicode one, named servers,
a hub base_url with unusual characters), the hub's own tokens and scopes, a server stopped
by the hub (or its idle-culler) while jobs run and started again, and admin defaults a
server refuses. The hub and its one local site: `hub_helpers.RealHub`."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest
from hub_helpers import (
    SERVICE_TOKEN,
    SITES,
    RealHub,
    events_of,
    job_of,
    store_of,
    submit,
    wait_for,
)

USERS = ("alice", "bob", "a.b-c@x", "zoë")
# users whose servers the admin configured wrongly, started by their own tests
MISCONFIGURED = ("carol", "dave", "erin", "frank", "gina", "diamond")


class Hub(RealHub):
    users = (*USERS, *MISCONFIGURED)

    def per_user(self) -> dict[str, dict[str, Any]]:
        """The admin's settings for some users: carol's from a config directory of the
        admin's (a bad value and an unknown name), dave's on the command line (a bad
        number), erin's own sites file read (her file has a typo); frank's one allowed site
        in a `jupyter_server_config.d` file, gina's in one flag."""
        admin_dir = self.base / "etc-carol"
        (admin_dir / "jupyter_server_config.d").mkdir(parents=True)
        (admin_dir / "jupyter_server_config.d" / "diamond.json").write_text(
            '{\n  "DiamondApp": {\n    "agent_approval": "ask",\n'
            '    "allowed_partitions": {"alpha": "debug"},\n'
            '    "allowed_site": ["alpha"]\n  }\n}\n')
        frank = self.base / "etc-frank" / "jupyter_server_config.d"
        frank.mkdir(parents=True)
        (frank / "diamond.json").write_text('{"DiamondApp": {"allowed_sites": ["beta"]}}\n')
        erin = self.home("erin") / ".config" / "diamond"
        erin.mkdir(parents=True)
        (erin / "user-sites.yaml").write_text(
            "sites:\n  - name: lab\n    transport: {kind: ssh, host: login.partner.example,"
            " prot: 22}\n")
        return {"carol": {"env": {"JUPYTER_CONFIG_PATH": str(admin_dir)}},
                "dave": {"args": ["--DiamondApp.max_body_bytes=1MB"]},
                "frank": {"env": {"JUPYTER_CONFIG_PATH": str(frank.parent)}},
                "gina": {"args": ["--DiamondApp.allowed_sites=beta"]},
                "erin": {"args": ["--DiamondApp.user_site_hosts=*.partner.example"]}}


@pytest.fixture(scope="module")
def hub(tmp_path_factory) -> Iterator[Hub]:
    with Hub(tmp_path_factory.mktemp("hub")).serving(USERS) as h:
        yield h


@pytest.mark.parametrize("user", USERS)
def test_each_users_server_answers_under_its_escaped_prefix(hub, user):
    status, state = hub.call(hub.server_path(user) + "diamond/api/state", hub.tokens[user])
    assert status == 200, state
    assert state["error"] is None and [s["name"] for s in state["sites"]] == SITES, state


@pytest.mark.parametrize("user", USERS)
def test_each_users_store_is_in_their_own_home_and_private(hub, user):
    store = store_of(hub, user)
    assert store.exists(), sorted(str(p) for p in hub.home(user).rglob("*"))[:20]
    assert store.stat().st_mode & 0o077 == 0, oct(store.stat().st_mode)


@pytest.mark.parametrize("user", USERS)
def test_an_unknown_route_names_the_path_from_diamond_api_not_the_prefix(hub, user):
    status, body = hub.call(hub.server_path(user) + "diamond/api/nope", hub.tokens[user])
    assert status == 404, body
    assert body["message"].startswith("no API route /diamond/api/nope;"), body


@pytest.mark.parametrize("user", USERS)
def test_the_event_stream_answers_under_the_escaped_prefix(hub, user):
    assert isinstance(events_of(hub, user), list)


# -- tokens and scopes -----------------------------------------------------------------------
@pytest.mark.parametrize(("owner", "other"), [("alice", "bob"), ("zoë", "a.b-c@x"),
                                              ("a.b-c@x", "zoë")])
@pytest.mark.parametrize("method", ["GET", "POST"])
def test_one_users_token_never_opens_anothers_routes(hub, owner, other, method):
    body = {} if method == "POST" else None
    for route in ("state", "jobs", "events", "sites/alpha", "dashboard", "tasks"):
        status, reply = hub.call(hub.server_path(other) + f"diamond/api/{route}",
                                 hub.tokens[owner], method, body)
        assert status in (302, 401, 403), (owner, other, route, status, reply)
        assert "alpha" not in json.dumps(reply) or status == 302, reply


def test_a_token_scoped_to_one_users_server_opens_it_and_nothing_else(hub):
    scoped = hub.token("alice", ["access:servers!user=alice"])
    status, state = hub.call(hub.server_path("alice") + "diamond/api/state", scoped)
    assert status == 200 and state["error"] is None, state
    assert hub.call(hub.server_path("bob") + "diamond/api/state", scoped)[0] in (302, 403)
    # of the hub it reads no other user, and it starts or stops no server
    assert hub.call("/hub/api/users/bob", scoped)[0] in (403, 404)
    assert hub.call("/hub/api/users/alice/server", scoped, "DELETE")[0] == 403


def test_a_token_without_access_to_servers_is_refused_by_the_users_own_server(hub):
    reader = hub.token("alice", ["read:users:name!user=alice"])
    for method in ("GET", "POST"):
        status, reply = hub.call(hub.server_path("alice") + "diamond/api/jobs", reader,
                                 method, {} if method == "POST" else None)
        assert status in (302, 403), (method, status, reply)


def test_a_revoked_token_is_refused_by_diamonds_routes_within_the_bound(hub):
    tok = hub.token("bob", ["access:servers!user=bob"])
    state = hub.server_path("bob") + "diamond/api/state"
    assert hub.call(state, tok)[0] == 200  # the server now caches the hub's answer
    status, tokens = hub.call("/hub/api/users/bob/tokens", SERVICE_TOKEN)
    assert status == 200, tokens
    # the newest token is the one just made
    newest = max(tokens["api_tokens"], key=lambda t: t["created"])
    assert hub.call(f"/hub/api/users/bob/tokens/{newest['id']}", SERVICE_TOKEN,
                    "DELETE")[0] == 204
    assert hub.call("/hub/api/user", tok)[0] == 403  # the hub's own routes: at once
    # diamond's routes, reading and writing: once the server's cached answer (5 s,
    # DiamondApp.hub_token_check_s; JupyterHub's default is 300) has expired
    bound_s = 5.0
    wait_for(lambda: hub.call(state, tok)[0] in (302, 403), bound_s + 20,
             "bob's server to refuse the revoked token", hub)
    status, reply = hub.call(hub.server_path("bob") + "diamond/api/jobs", tok, "POST", {})
    assert status in (302, 403), (status, reply)
    # bob's other token still works: the shorter cache asks the hub again, and it answers
    assert hub.call(state, hub.tokens["bob"])[0] == 200


# -- jobs and events of two users never mix ------------------------------------------------
def test_two_users_jobs_and_events_stay_in_their_own_server_and_store(hub):
    a = submit(hub, "alice", name="alices")
    z = submit(hub, "zoë", name="zoes")
    assert a["id"] != z["id"]
    for user, mine, theirs in (("alice", a, z), ("zoë", z, a)):
        status, jobs = hub.call(hub.server_path(user) + "diamond/api/jobs?limit=500",
                                hub.tokens[user])
        ids = [j["id"] for j in jobs["jobs"]]
        assert mine["id"] in ids and theirs["id"] not in ids, (user, ids)
        assert theirs["id"] not in json.dumps(events_of(hub, user))
        with sqlite3.connect(f"file:{store_of(hub, user)}?mode=ro", uri=True) as con:
            rows = {r[0] for r in con.execute("SELECT id FROM jobs")}
        assert mine["id"] in rows and theirs["id"] not in rows, (user, rows)
    # each job's files are under its submitter's home only
    for user, job in (("alice", a), ("zoë", z)):
        script = (hub.site_dir / "kept" / f"{job['native_id']}.sh").read_text()
        assert str(hub.home(user)) in script, script[:400]
        other = "zoë" if user == "alice" else "alice"
        assert str(hub.home(other)) not in script


def test_the_hubs_token_never_reaches_the_scheduler_or_the_job(hub):
    job = submit(hub, "bob", name="secretcheck")
    env = (hub.site_dir / "kept" / f"{job['native_id']}.env").read_text()
    script = (hub.site_dir / "kept" / f"{job['native_id']}.sh").read_text()
    leaked = [line.split("=")[0] for line in env.splitlines()
              if line.startswith(("JUPYTERHUB_", "JPY_API_TOKEN"))]
    assert leaked == [], leaked
    assert hub.tokens["bob"] not in env and hub.tokens["bob"] not in script
    assert "JUPYTERHUB" not in script


# -- a server stopped mid-job and started again ---------------------------------------------
def test_a_server_stopped_by_the_culler_mid_job_loses_nothing(hub):
    user = "a.b-c@x"
    job = submit(hub, user, name="outlive")
    before = [e for e in events_of(hub, user) if e.get("job_id") == job["id"]]
    assert before
    hub.stop_server(user)
    # the job ends while no server of the user runs
    hub.finish(str(job["native_id"]))
    hub.spawn(user)
    # the new server re-attaches the job from the store and learns its end
    done = wait_for(lambda: (j := job_of(hub, user, job["id"]))["state"] == "COMPLETED" and j,
                    120, "the job's end after the restart", hub)
    assert done["native_id"] == job["native_id"]
    after = [e for e in events_of(hub, user) if e.get("job_id") == job["id"]]
    assert [e["seq"] for e in after[:len(before)]] == [e["seq"] for e in before]
    states = [e["data"].get("state") for e in after if e["kind"] == "job.state"]
    assert states and states[-1] == "COMPLETED", states  # the end, seen by the new server


def test_a_workflow_and_its_plan_survive_the_servers_restart(hub):
    user = "bob"
    path = hub.server_path(user)
    wf = {"name": "approve-me", "steps": [{"name": "one", "site": "alpha",
                                          "script": "#!/bin/bash\n#SBATCH -t 5\necho one\n"}]}
    status, made = hub.call(path + "diamond/api/workflows", hub.tokens[user], "POST",
                            {"workflow": wf})
    assert status in (200, 201, 202), (status, made)
    wid = made["id"]
    status, plan = hub.call(path + f"diamond/api/workflows/{quote(wid, safe='')}/plan",
                            hub.tokens[user])
    assert status == 200, plan
    hub.stop_server(user)
    hub.spawn(user)
    status, again = hub.call(path + f"diamond/api/workflows/{quote(wid, safe='')}",
                             hub.tokens[user])
    assert status == 200, again
    assert again["id"] == wid
    status, plan2 = hub.call(path + f"diamond/api/workflows/{quote(wid, safe='')}/plan",
                             hub.tokens[user])
    assert status == 200 and plan2.get("sha256") == plan.get("sha256"), (plan, plan2)


# -- named servers ---------------------------------------------------------------------------
def test_a_named_server_shares_the_users_store(hub):
    path = hub.spawn("alice", "lab-2")  # JupyterHub 6 takes slugs as server names
    assert path == "/user/alice/lab-2/", path
    job = submit(hub, "alice", path, name="fromlab")
    # the default server sees the job the named one submitted: one store per user
    seen = wait_for(lambda: job["id"] in json.dumps(
        hub.call(hub.server_path("alice") + "diamond/api/jobs?limit=500",
                 hub.tokens["alice"])[1]), 60, "the named server's job in the default's", hub)
    assert seen
    # bob's token does not open alice's named server
    assert hub.call(path + "diamond/api/state", hub.tokens["bob"])[0] in (302, 403)
    hub.stop_server("alice", "lab-2")
    # the default server goes on
    assert hub.call(hub.server_path("alice") + "diamond/api/state",
                    hub.tokens["alice"])[0] == 200


# -- the admin's settings refused, each said where ------------------------------------------
def state_error(hub: Hub, user: str) -> str:
    hub.spawn(user)
    status, state = hub.call(hub.server_path(user) + "diamond/api/state", hub.tokens[user])
    assert status == 200, state
    return state["error"] or ""


def test_a_bad_value_and_an_unknown_name_in_the_admins_file_are_refused_by_line(hub):
    error = state_error(hub, "carol")
    path = hub.base / "etc-carol" / "jupyter_server_config.d" / "diamond.json"
    assert "the engine is not started" in error, error
    assert f"DiamondApp.allowed_partitions = {{'alpha': 'debug'}} in {path} (line 4)" \
        in error, error
    assert f"DiamondApp.allowed_site in {path} (line 5): unknown setting (did you mean " \
           "allowed_sites?" in error, error
    # the good setting is not named, and nothing else of the API runs on half a policy
    assert "agent_approval" not in error.split("diamond settings:")[0]
    status, body = hub.call(hub.server_path("carol") + "diamond/api/jobs",
                            hub.tokens["carol"], "POST", {"site": "alpha",
                                                          "script": "#!/bin/sh\n"})
    assert status == 503 and body["reason"] == "not-configured", body


def test_a_bad_number_on_the_spawners_command_line_is_refused_naming_it(hub):
    error = state_error(hub, "dave")
    assert "DiamondApp.max_body_bytes = '1MB' in the server's command line (under " \
           "JupyterHub: c.Spawner.args): expected an int, not the str '1MB'" in error, error


def test_a_typo_in_the_users_own_sites_file_keeps_the_admins_sites(hub):
    hub.spawn("erin")
    status, state = hub.call(hub.server_path("erin") + "diamond/api/state",
                             hub.tokens["erin"])
    assert status == 200, state
    assert state["error"] is None and [s["name"] for s in state["sites"]] == SITES, state
    (why,) = state["refused_sites"]
    path = hub.home("erin") / ".config" / "diamond" / "user-sites.yaml"
    assert why.startswith(f"{path}: not read, none of its sites is loaded:"), why
    assert "transport.prot: unknown key (did you mean port?" in why and "(line 3)" in why, why


@pytest.mark.parametrize("user", ["frank", "gina"])
def test_one_allowed_site_from_a_config_d_file_or_one_flag_is_the_only_site(hub, user):
    """frank's admin file is /etc/jupyter/jupyter_server_config.d/diamond.json (as the docs
    advise; Jupyter reads such files for enabled extensions only), gina's one
    `--DiamondApp.allowed_sites=beta` (traitlets reads one flag of a list as no list)."""
    hub.spawn(user)
    status, state = hub.call(hub.server_path(user) + "diamond/api/state", hub.tokens[user])
    assert status == 200 and state["error"] is None, state
    assert [s["name"] for s in state["sites"]] == ["beta"], state
    status, body = hub.call(hub.server_path(user) + "diamond/api/jobs", hub.tokens[user],
                            "POST", {"site": "alpha", "script": "#!/bin/bash\nhostname\n"})
    assert status in (400, 403, 422) and "alpha" in body["message"], body


def test_a_user_diamond_with_a_server_api_is_told_the_route_from_diamond_api(hub):
    """/user/diamond/api/ is the prefix: the 404 names what follows it, not the prefix."""
    path = hub.spawn("diamond", "api")
    assert path == "/user/diamond/api/", path
    status, body = hub.call(path + "diamond/api/nope", hub.tokens["diamond"])
    assert status == 404, body
    assert body["message"].startswith("no API route /diamond/api/nope;"), body
    status, state = hub.call(path + "diamond/api/state", hub.tokens["diamond"])
    assert status == 200 and state["error"] is None, state
