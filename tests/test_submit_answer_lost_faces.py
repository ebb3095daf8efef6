"""A submit whose answer was lost (sbatch's "Socket timed out on send/recv operation": the
controller may have queued the job), made through a real Jupyter server with the diamond
extension: the REST answer (202) and the `%%diamond submit` card first say the job is being
looked for, with a job.submit-unsure event, and the server looks for it by its token in the
background; the card and the job then turn into the job found (id, site) or into "never
submitted, a new submit is safe" once the settle time has passed. A server restart in
between loses nothing. A local Slurm site whose `sbatch` and `squeue` are fakes; no test bed.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import one_site_engine
import pytest
from local_slurm import LocalSlurmQueue
from one_site_engine import LOOKOUT_WAIT_S as WAIT_S
from one_site_engine import SBATCH_ANSWER_LOST as TIMED_OUT
from one_site_engine import lost_spec, one_site_server_config
from sweep_helpers import in_process_shell
from test_fetch_links_magic import _in_a_thread

from diamond_jupyter.kernel.jobcard import bundle
from diamond_jupyter.server.events import JOB_STATE

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")

CELL = "#!/bin/bash\n#SBATCH --job-name=lost\ntrue\n"

queue = one_site_engine.lookout_queue
settle_s = one_site_engine.lookout_settle_s


@pytest.fixture
def jp_server_config(tmp_path, data_dir, queue, settle_s):
    return one_site_server_config(tmp_path, queue.site.cfg, settle_s)


@pytest.fixture
def job_events(jp_serverapp):
    """Every job-state event the server emits from now on, and a way to wait for one."""
    seen: list[dict[str, Any]] = []
    cond = asyncio.Condition()

    async def listener(logger: Any, schema_id: str, data: dict[str, Any]) -> None:
        async with cond:
            seen.append(dict(data))
            cond.notify_all()
    jp_serverapp.event_logger.add_listener(schema_id=JOB_STATE, listener=listener)

    async def wait(kind: str) -> dict[str, Any]:
        async def found() -> dict[str, Any]:
            async with cond:
                while True:
                    for data in seen:
                        if data["kind"] == kind:
                            return data
                    await cond.wait()
        try:
            return await asyncio.wait_for(found(), WAIT_S)
        except asyncio.TimeoutError:
            raise AssertionError(f"no {kind} event within {WAIT_S}s; saw {seen}") from None
    return wait


def job_path(job_id: str) -> str:
    return f"jobs/{job_id}"


def _engine(app: Any) -> Any:
    return app.web_app.settings["diamond_app"].federation


async def _submit_lost(api, tmp_path, queue) -> dict[str, Any]:
    """POST jobs whose sbatch's answer is lost (the job not in the queue yet): 202."""
    queue.sbatch_says(TIMED_OUT, takes_the_job=False)
    body = {"site": "alpha", "force": True,
            "spec": lost_spec(tmp_path).model_dump(mode="json", exclude_none=True)}
    reply = await api.call("POST", "jobs", body, expect=202)
    assert reply.headers["Location"].endswith("/" + reply.body["id"])
    return reply.body


async def test_rest_answers_looking_then_gives_the_job_found(
        api, jp_serverapp, job_events, tmp_path, queue, settle_s):
    job = await _submit_lost(api, tmp_path, queue)
    assert job["id"].startswith("alpha:pending-") and job["state"] == "UNKNOWN"
    assert job["native_id"] is None
    lookout = job["lookout"]
    assert lookout["state"] == "looking" and lookout["settle_s"] == settle_s
    assert lookout["message"] == (
        f"alpha: the scheduler's answer to the submit was lost ({TIMED_OUT}): the scheduler "
        "may have taken the job; looking for it in alpha's queue by its token (up to 60s): "
        "do not submit it again")
    said = await job_events("job.submit-unsure")
    assert (said["job_id"], said["state"]) == (job["id"], "UNKNOWN")
    assert said["reason"] == f"alpha: the scheduler's answer to the submit was lost ({TIMED_OUT})"
    assert (await api.get(job_path(job["id"])))["lookout"]["state"] == "looking"

    queue.add("4250", job["token"], "lost")  # the controller queued it after all
    found = await job_events("job.submitted")
    assert found["job_id"] == "alpha:4250"
    assert found["previous_id"] == job["id"]  # the sidebar's provisional row is this job
    now = await api.get(job_path(job["id"]))  # the provisional id still names it
    assert (now["id"], now["site"], now["native_id"]) == ("alpha:4250", "alpha", "4250")
    assert now["state"] == "PENDING"
    assert now["lookout"]["state"] == "found"
    assert now["lookout"]["message"] == "alpha had taken the job: found in its queue as " \
        "alpha:4250"
    assert _engine(jp_serverapp).store.intents_without_native_id() == []


@pytest.mark.parametrize("settle_s", [1.0])
async def test_rest_closes_a_job_not_found_within_the_settle_time(
        api, jp_serverapp, job_events, tmp_path, queue, settle_s):
    calls = queue.sbatch_says(TIMED_OUT, takes_the_job=False)
    job = await _submit_lost(api, tmp_path, queue)
    assert job["lookout"]["state"] == "looking"
    closed = await job_events("job.state")
    assert (closed["job_id"], closed["state"]) == (job["id"], "FAILED")
    now = await api.get(job_path(job["id"]))
    assert now["state"] == "FAILED" and now["native_id"] is None
    assert now["lookout"]["state"] == "never-submitted"
    assert now["lookout"]["message"] == (
        "no job carrying the submit's token showed in alpha's queue within 1s: "
        f"{job['id']} is closed as never submitted; nothing was submitted, so a new submit "
        "is safe")
    assert len(calls.read_text().splitlines()) == 1  # sent once, never again by the search


async def test_a_server_restart_while_looking_loses_nothing(
        api, jp_serverapp, job_events, tmp_path, queue):
    """The extension stops while the job is looked for (its engine closed, the search with
    it) and starts again as a restarted server does (settings and engine made anew over the
    same store): the intent, still open and younger than the recovery's grace period, is
    looked for again and bound when its job shows."""
    job = await _submit_lost(api, tmp_path, queue)
    app, before = jp_serverapp.web_app.settings["diamond_app"], _engine(jp_serverapp)
    await app.stop_extension()
    [left] = before.store.intents_without_native_id()
    assert left.id == job["id"] and not left.state.terminal  # kept open, not closed
    app.initialize_settings()
    fed = await app.ensure_started()
    assert fed is not None and fed is not before
    assert (await api.get(job_path(job["id"])))["lookout"]["state"] == "looking"
    queue.add("4251", job["token"], "lost")
    bound = await fed.wait(job["id"], until=lambda j: j.native_id is not None
                           or j.state.terminal, timeout=WAIT_S)
    assert bound.id == "alpha:4251" and not bound.state.terminal
    assert (await api.get(job_path(job["id"])))["lookout"]["state"] == "found"


# -- the %%diamond submit card, through the server ----------------------------------------

class _Seen:
    """A card stand-in that notes each state the handle's card would show, and wakes a
    waiter when one matches."""

    live = True

    def __init__(self) -> None:
        self.shown: list[dict[str, Any]] = []
        self.changed = threading.Condition()

    def update(self, handle: Any, here: bool = False) -> None:
        with self.changed:
            self.shown.append(bundle(*handle.snapshot()))
            self.changed.notify_all()

    def show(self) -> None:
        pass

    def wait_for(self, pred: Any) -> dict[str, Any]:
        with self.changed:
            if not self.changed.wait_for(lambda: any(pred(b) for b in self.shown), WAIT_S):
                raise AssertionError(f"the card never showed it; it showed {self.shown}")
            return next(b for b in self.shown if pred(b))


def _magics(port: int, base_url: str, app: Any, root: Any) -> Any:
    from diamond_jupyter.kernel import magics
    from diamond_jupyter.kernel.rest import ServerClient

    m = magics.DiamondMagics.__new__(magics.DiamondMagics)
    m.handles = {}
    m._engine = ServerClient(f"http://localhost:{port}{base_url}",
                             app.identity_provider.token, root_dir=str(root))
    m.origin = lambda: {"path": "lost.ipynb", "cell_id": "c1"}  # no kernel message here
    return m


def _lookout(b: dict[str, Any]) -> str | None:
    return (b["application/vnd.diamond.job+json"].get("lookout") or {}).get("state")


def _card_turns_into_the_outcome(handle: Any, queue: LocalSlurmQueue, err: str,
                                 found: bool) -> None:
    """The card of a cell whose submit's answer was lost says the job is looked for, then
    shows the job found (its id and site) when `found` (the job is put in the queue here),
    else, once the settle time has passed, that it was never submitted (blocks: run it in a
    thread of its own when a server on this loop must serve meanwhile)."""
    assert "looking for it in alpha's queue by its token" in err, err
    first = bundle(*handle.snapshot())
    assert _lookout(first) == "looking" and handle.state == "UNKNOWN"
    assert 'data-diamond-lookout="looking"' in first["text/html"]
    assert "LOOKING FOR IT" in first["text/plain"]
    card = _Seen()
    handle._attach(card)
    if found:  # the job shows in the queue: the card becomes the job found
        queue.add("4260", handle.job.token or "", "lost")
        shown = card.wait_for(lambda b: _lookout(b) == "found")
        assert shown["application/vnd.diamond.job+json"]["job"]["id"] == "alpha:4260"
        assert 'data-diamond-job="alpha:4260"' in shown["text/html"]
        assert 'data-diamond-state="PENDING"' in shown["text/html"]
        assert "data-diamond-lookout" not in shown["text/html"]
        assert handle.id == "alpha:4260" and handle.site == "alpha"
        return
    handle.wait(WAIT_S)
    shown = bundle(*handle.snapshot())
    assert _lookout(shown) == "never-submitted" and handle.state == "FAILED"
    assert 'data-diamond-lookout="never-submitted"' in shown["text/html"]
    assert "NEVER SUBMITTED" in shown["text/plain"]
    assert "nothing was submitted, so a new submit is safe" in shown["text/plain"]


@pytest.mark.parametrize("settle_s, found", [(60.0, True), (1.5, False)])
async def test_the_cell_card_through_the_server_says_looking_then_the_outcome(
        jp_fetch, jp_serverapp, jp_http_port, jp_base_url, jp_root_dir, queue, settle_s,
        found, capsys):
    """`%%diamond submit` through the server returns at once with a card that says the job
    is looked for; the card then turns into the job found, or into "never submitted"."""
    queue.sbatch_says(TIMED_OUT, takes_the_job=False)
    m = _magics(jp_http_port, jp_base_url, jp_serverapp, jp_root_dir)
    try:
        handle = await _in_a_thread(m.diamond, "submit --site alpha --force", CELL)
        err = capsys.readouterr().err
        assert handle is not None, err
        await _in_a_thread(_card_turns_into_the_outcome, handle, queue, err, found)
    finally:
        await _in_a_thread(m.close)


@pytest.fixture
def shell(tmp_path, monkeypatch, queue, settle_s):
    """IPython's shell with the extension loaded, its engine in this process (no server)
    over the one site."""
    config = one_site_server_config(tmp_path, queue.site.cfg, settle_s)
    (tmp_path / "home").mkdir()
    yield from in_process_shell(monkeypatch, config["DiamondApp"]["sites_file"],
                                tmp_path / "data", tmp_path / "home", DIAMOND_HANDOVER="0")


@pytest.mark.parametrize("settle_s, found", [(60.0, True), (1.5, False)])
def test_the_cell_card_in_process_says_looking_then_the_outcome(shell, queue, settle_s,
                                                                 found, capsys):
    """The same with the engine in the kernel's own process: the cell returns at once, the
    search runs on the engine's loop."""
    queue.sbatch_says(TIMED_OUT, takes_the_job=False)
    handle = shell.run_cell_magic("diamond", "submit --site alpha --force", CELL)
    err = capsys.readouterr().err
    assert handle is not None, err
    _card_turns_into_the_outcome(handle, queue, err, found)
