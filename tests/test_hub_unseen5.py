"""A real JupyterHub (no test bed), fifth sweep, everyday and hostile requests of a center
that deploys a server per user: a job that ends while its server is stopped is seen ended
once the hub starts it again; a cancel through another user's server reaches nothing of
hers; a request whose path climbs out of one user's prefix; one token scoped to a user
(`access:servers!user=alice`) opening each of her servers, default and named; the hub's
own culler service (servers and users, no access to servers) reading and submitting
nothing; and a request without any token leaving the site's queue as it was. The hub
(its base_url not '/') and its one local site: `hub_helpers.RealHub`."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hub_helpers import BASE_URL, SERVICE_TOKEN, RealHub, job_of, submit, wait_for

NAMED = "srv2"


class Hub(RealHub):
    users = ("alice", "bob")


@pytest.fixture(scope="module")
def hub(tmp_path_factory) -> Iterator[Hub]:
    with Hub(tmp_path_factory.mktemp("hub5")).serving(("alice", "bob")) as h:
        yield h


def queued(hub: Hub) -> list[str]:
    return [x.split("|", 1)[0] for x in
            (hub.site_dir / "queue.txt").read_text().splitlines() if x]


def test_the_hubs_base_url_prefixes_every_users_server(hub):
    assert BASE_URL != "/" and hub.url.endswith(BASE_URL.rstrip("/"))
    status, state = hub.call(hub.server_path("alice") + "diamond/api/state",
                             hub.tokens["alice"])
    assert status == 200 and state["error"] is None, (status, state)
    # the same route without the hub's base_url is the hub's 404, never the server
    bare = hub.url.removesuffix(BASE_URL.rstrip("/"))
    hub.url, kept = bare, hub.url
    try:
        status, _ = hub.call(hub.server_path("alice") + "diamond/api/state",
                             hub.tokens["alice"])
    finally:
        hub.url = kept
    assert status in (302, 404), status


def test_a_job_that_ends_while_the_server_is_stopped_is_seen_ended_after(hub):
    job = submit(hub, "alice", name="endswhiledown")
    native = wait_for(lambda: job_of(hub, "alice", job["id"]).get("native_id"), 60,
                      "the job's scheduler id", hub)
    hub.stop_server("alice")
    hub.finish(native)
    hub.spawn("alice")
    got = wait_for(lambda: (j := job_of(hub, "alice", job["id"]))["state"] == "COMPLETED"
                   and j, 60, "the job's end", hub)
    assert got["native_id"] == native


def test_bobs_cancel_of_alices_job_id_reaches_nothing_of_hers(hub):
    job = submit(hub, "alice", name="notbobs")
    native = wait_for(lambda: job_of(hub, "alice", job["id"]).get("native_id"), 60,
                      "the job's scheduler id", hub)
    status, body = hub.call(hub.server_path("bob") + f"diamond/api/jobs/{job['id']}/cancel",
                            hub.tokens["bob"], "POST")
    assert status == 404, (status, body)
    assert job["id"] in str(body)  # says which job it does not know
    assert native in queued(hub)
    assert job_of(hub, "alice", job["id"])["state"] not in ("CANCELLED", "CANCELLING")


@pytest.mark.parametrize("climb", ["../alice/", "%2e%2e/alice/", "%2E%2E%2Falice/"])
def test_a_path_climbing_out_of_bobs_prefix_never_reaches_alices_server(hub, climb):
    alices = submit(hub, "alice", name="climbed")
    status, body = hub.call(hub.server_path("bob") + climb + "diamond/api/jobs",
                            hub.tokens["bob"])
    assert alices["id"] not in str(body), (status, body)
    assert status in (200, 302, 403, 404), (status, body)


@pytest.fixture(scope="module")
def named(hub) -> Iterator[str]:
    with hub.named_server("alice", NAMED) as path:
        yield path


def test_a_token_scoped_to_the_user_opens_each_of_her_servers(hub, named):
    assert named == f"/user/alice/{NAMED}/"
    token = hub.token("alice", ["access:servers!user=alice"])
    for path in (hub.server_path("alice"), named):
        status, state = hub.call(path + "diamond/api/state", token)
        assert status == 200 and state["error"] is None, (path, status, state)
    status, body = hub.call(hub.server_path("bob") + "diamond/api/jobs", token)
    assert status in (302, 403), (status, body)


def test_a_job_from_the_named_server_is_listed_on_her_default_one(hub, named):
    job = submit(hub, "alice", named, name="fromsrv2")
    assert job_of(hub, "alice", job["id"])["id"] == job["id"]


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_the_hubs_culler_service_reads_and_submits_nothing(hub, method):
    before = queued(hub)
    status, body = hub.call(hub.server_path("alice") + "diamond/api/jobs", SERVICE_TOKEN,
                            method, {"site": "alpha", "script": "#!/bin/bash\nhostname\n"}
                            if method == "POST" else None)
    assert status in (302, 403), (status, body)
    assert queued(hub) == before


def test_a_submit_without_a_token_queues_nothing(hub):
    before = queued(hub)
    status, body = hub.call(hub.server_path("alice") + "diamond/api/jobs", None, "POST",
                            {"site": "alpha", "script": "#!/bin/bash\nhostname\n"})
    assert status in (302, 403), (status, body)
    assert queued(hub) == before
