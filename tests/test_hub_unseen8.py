"""A real JupyterHub (no test bed), eighth sweep, its hub served under
`c.JupyterHub.base_url = '/hub-prefix/'`: a user's server culled as idle while her job runs
(jupyterhub-idle-culler is not installed here: the hub's API stop, with the culler
service's token, as it does) and started again, the job followed to its end and its ending
posted once; an admin whose token opens another user's server sees that user's jobs only;
the user's token rotated (the old one refused on every route once the server's cached
answer for it is older than its bound, the new one sees the same jobs) and the server's
own hub token rotated by a restart, kept nowhere; two users submitting at once on one
machine, each store holding only its owner's jobs. The hub and its one local site:
`hub_helpers.RealHub`. No fault found: each case held as it is."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import quote

import pytest
from hub_helpers import (
    OPENER,
    SERVICE_TOKEN,
    RealHub,
    events_of,
    job_of,
    server_environ,
    store_of,
    submit,
    submit_located,
    wait_for,
)

ADMIN = "ada"
EACH = 3  # jobs each user submits at once
CHECK_BOUND_S = 20  # the hub's answer for a token is kept 5 s; a loaded machine is slower


class Hub(RealHub):
    users = ("alice", "bob", ADMIN)
    base_url = "/hub-prefix/"

    def config(self, sites) -> str:
        return super().config(sites) + f"c.Authenticator.admin_users = {{{ADMIN!r}}}\n"


@pytest.fixture(scope="module")
def hub(tmp_path_factory) -> Iterator[Hub]:
    with Hub(tmp_path_factory.mktemp("hub8")).serving(("alice", "bob")) as h:
        yield h


def ended(hub: Hub, user: str, job_id: str, state: str = "COMPLETED") -> dict:
    return wait_for(lambda: (j := job_of(hub, user, job_id))["state"] == state and j, 60,
                    f"job {job_id} to end {state}", hub)


def endings(events: list[dict], job_id: str) -> list[str]:
    return [e["data"]["state"] for e in events if e.get("job_id") == job_id
            and (e.get("data") or {}).get("state") in ("COMPLETED", "FAILED")]


# -- the hub under /hub-prefix/ --------------------------------------------------------------
def test_under_hub_prefix_a_new_jobs_location_leads_back_to_it_and_bare_paths_do_not(hub):
    assert hub.url.endswith("/hub-prefix") and hub.server_path("alice") == "/user/alice/"
    location, job = submit_located(hub, "alice", "/user/alice/")
    assert location.startswith("/hub-prefix/user/alice/diamond/api/jobs/"), location
    status, body = hub.call(location.removeprefix("/hub-prefix"), hub.tokens["alice"])
    assert status == 200 and body["id"] == job["id"], (status, body)
    # the same path without the hub's prefix is not the server's
    bare = f"http://127.0.0.1:{hub.port}/user/alice/diamond/api/state"
    req = urllib.request.Request(bare, headers={"Authorization": f"token {hub.tokens['alice']}"})
    with pytest.raises(urllib.error.HTTPError) as e:
        OPENER.open(req, timeout=30)
    assert e.value.code in (302, 404), e.value.code
    hub.finish(str(job["native_id"]))
    ended(hub, "alice", job["id"])


# -- culled idle while a job runs ------------------------------------------------------------
def test_a_server_culled_idle_mid_job_and_started_again_posts_the_ending_once(hub):
    job = submit(hub, "bob", name="culledidle")
    before = events_of(hub, "bob")
    hub.stop_server("bob")  # as jupyterhub-idle-culler stops an idle server
    hub.finish(str(job["native_id"]))  # the job ends while no server watches it
    hub.spawn("bob")
    assert ended(hub, "bob", job["id"])["native_id"] == job["native_id"]
    after = events_of(hub, "bob")
    assert after[:len(before)] == before
    assert endings(after, job["id"]) == ["COMPLETED"], after[len(before):]


# -- an admin on another user's server -------------------------------------------------------
def test_an_admins_token_on_bobs_server_lists_bobs_jobs_and_none_of_alices(hub):
    admin = hub.token(ADMIN, ["access:servers!user=bob"])
    mine, hers = submit(hub, "bob", name="bobs"), submit(hub, "alice", name="alices")
    status, listed = hub.call(hub.server_path("bob") + "diamond/api/jobs?limit=500", admin)
    assert status == 200, listed
    ids = {j["id"] for j in listed["jobs"]}
    assert mine["id"] in ids and hers["id"] not in ids
    status, body = hub.call(hub.server_path("bob")
                            + f"diamond/api/jobs/{quote(hers['id'], safe='')}", admin)
    assert status == 404, (status, body)
    # the admin's token opens bob's server only: alice's refuses it
    status, body = hub.call(hub.server_path("alice") + "diamond/api/jobs", admin)
    assert status in (302, 403), (status, body)
    for job, user in ((mine, "bob"), (hers, "alice")):
        hub.finish(str(job["native_id"]))
        ended(hub, user, job["id"])


# -- tokens rotated --------------------------------------------------------------------------
def test_a_rotated_user_token_is_refused_and_the_new_one_sees_the_same_jobs(hub):
    job = submit(hub, "alice", name="rotated")
    old = hub.tokens["alice"]
    status, listed = hub.call("/hub/api/users/alice/tokens", SERVICE_TOKEN)
    assert status == 200, listed
    for t in [t for t in listed["api_tokens"] if t["note"] == "test"]:  # not her server's
        assert hub.call(f"/hub/api/users/alice/tokens/{t['id']}", SERVICE_TOKEN,
                        "DELETE")[0] == 204
    new = hub.tokens["alice"] = hub.token("alice", ["access:servers!user=alice", "self"])
    # the server asks the hub again once its answer is older than its bound
    # (DiamondApp.hub_token_check_s, 5 s): from then on, every route refuses the old one
    for route in ("state", "jobs", f"jobs/{quote(job['id'], safe='')}", "events?since=0"):
        wait_for(lambda route=route: hub.call(hub.server_path("alice")
                                              + f"diamond/api/{route}", old)[0] in (302, 403),
                 CHECK_BOUND_S, f"the old token refused on {route}", hub)
    status, got = hub.call(hub.server_path("alice")
                           + f"diamond/api/jobs/{quote(job['id'], safe='')}", new)
    assert status == 200 and got["native_id"] == job["native_id"], (status, got)
    hub.finish(str(job["native_id"]))
    ended(hub, "alice", job["id"])


def test_the_servers_own_hub_token_rotated_by_a_restart_is_kept_nowhere(hub):
    first = server_environ("bob")["JUPYTERHUB_API_TOKEN"]
    job = submit(hub, "bob", name="servertoken")
    hub.stop_server("bob")
    hub.spawn("bob")
    second = server_environ("bob")["JUPYTERHUB_API_TOKEN"]
    assert second != first
    hub.finish(str(job["native_id"]))
    ended(hub, "bob", job["id"])
    kept = b"".join(p.read_bytes() for p in store_of(hub, "bob").parent.rglob("*")
                    if p.is_file())
    assert first.encode() not in kept and second.encode() not in kept
    assert json.dumps(events_of(hub, "bob")).count(first) == 0


# -- two users' stores on one machine --------------------------------------------------------
def test_two_users_submitting_at_once_each_keep_only_their_own_jobs(hub):
    with ThreadPoolExecutor(2 * EACH) as pool:
        made = list(pool.map(lambda k: ("alice", "bob")[k % 2], range(2 * EACH)))
        jobs = list(pool.map(lambda u: (u, submit(hub, u, name=f"apart{u}")), made))
    assert len({j["native_id"] for _, j in jobs}) == 2 * EACH
    stores = {u: store_of(hub, u) for u in ("alice", "bob")}
    assert stores["alice"] != stores["bob"]
    for user, other in (("alice", "bob"), ("bob", "alice")):
        status, listed = hub.call(hub.server_path(user) + "diamond/api/jobs?limit=500",
                                  hub.tokens[user])
        assert status == 200, listed
        ids = {j["id"] for j in listed["jobs"]}
        assert {j["id"] for u, j in jobs if u == user} <= ids
        assert not ids & {j["id"] for u, j in jobs if u == other}
        kept = stores[user].read_bytes()
        assert not [j["id"] for u, j in jobs if u == other and j["id"].encode() in kept]
        assert (stores[user].stat().st_mode & 0o077) == 0
    for user, job in jobs:
        hub.finish(str(job["native_id"]))
        ended(hub, user, job["id"])
