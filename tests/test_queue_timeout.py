"""A whole-queue query that does not answer in time is not a site that does not answer.

When the batch holding the queue query times out, the site's other queries (partitions,
nodes; asked anew even when cached) say whether the site answers: if they do, the site stays
reachable with its queue unknown and why (`queue_error`, as for a queue over the output cap:
its row shows no counts, `diamond queue` says so, placement ranks it after sites with a
start) and the user's jobs are still followed by id; if they time out too (the login or the
scheduler hangs), the site reads unreachable.

Sites on the local transport with scheduler commands written here (no test bed): a command
that "hangs" waits far longer than the site's short `command_timeout_s` and is stopped."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from stand_in_slurmrestd import StandInSlurmrestd

from diamond_jupyter.cli.jobs import _site_state
from diamond_jupyter.config import SiteConfig
from diamond_jupyter.model import JobState
from diamond_jupyter.sites import Site
from diamond_jupyter.summary import site_summary
from diamond_jupyter.transports import make_transport

TIMEOUT_S = 2
HANG = "exec sleep 120"  # stopped by the transport after TIMEOUT_S

MINE = ("7|RUNNING|2026-12-04T10:00:05|N/A|2026-12-04T10:00:00|1:00:00|1|2|me|batch|N/A|c1|"
        "None|(null)|mine")
PARTITION = ("PartitionName=batch Default=YES MaxTime=01:00:00 Nodes=c1 State=UP TotalNodes=1 "
             "TotalCPUs=8")
NODE = "NodeName=c1 CPUTot=8 CPUAlloc=2 RealMemory=16000 State=MIXED Partitions=batch"
SCONTROL = f"""case "$*" in
  *partition*) echo '{PARTITION}' ;;
  *node*) echo '{NODE}' ;;
esac"""


def _tool(bin_: Path, name: str, body: str) -> str:
    (bin_ / name).write_text(f"#!/bin/sh\n{body}\n")
    (bin_ / name).chmod(0o755)
    return str(bin_ / name)


def _site(tmp_path: Path, *, squeue: str, scontrol: str = SCONTROL,
          preamble: str = "") -> Site:
    """`preamble`: shell the site runs before every command (a hanging login: HANG)."""
    bin_ = tmp_path / "bin"
    bin_.mkdir(exist_ok=True)
    tools = {"squeue": squeue, "scontrol": scontrol, "sacct": "exit 0"}
    cfg = SiteConfig(name="slow", workdir=str(tmp_path), preamble=preamble,
                     transport={"kind": "local", "command_timeout_s": TIMEOUT_S},
                     commands={name: _tool(bin_, name, body) for name, body in tools.items()})
    return Site(cfg, transport=make_transport(cfg.transport, "slow", workdir=str(tmp_path)))


# the whole queue hangs; the user's own job, asked by id, answers at once
SLOW_QUEUE = f"""case " $* " in
  *" -j "*) echo '{MINE}' ;;
  *) {HANG} ;;
esac"""


@pytest.fixture
async def slow_queue(tmp_path):
    site = _site(tmp_path, squeue=SLOW_QUEUE)
    yield site
    await site.close()


async def test_a_queue_query_that_times_out_leaves_the_site_reachable_with_its_queue_unknown(
        slow_queue):
    snap = await slow_queue.snapshot(max_age_s=0)
    assert snap.reachable and snap.error is None
    assert [p.name for p in snap.partitions] == ["batch"]
    assert [n.name for n in snap.nodes] == ["c1"]
    assert snap.jobs == []
    assert snap.queue_error is not None
    assert snap.queue_error == (
        f"queue not read: slow: the queue query did not answer within {TIMEOUT_S} s, while "
        "the site's other queries did. Your own jobs are still followed, asked by id")


async def test_with_capabilities_cached_they_are_asked_again_to_tell_the_site_answers(
        slow_queue):
    first = await slow_queue.snapshot(max_age_s=0)
    before = slow_queue.scheduler_commands
    again = await slow_queue.snapshot(max_age_s=0)  # capabilities still fresh
    assert again.reachable and again.queue_error and again.nodes == first.nodes
    # the live queries (queue, queue_qos), then every other one (partitions, nodes, ...)
    live = slow_queue.commands.live_outputs
    others = set(slow_queue.commands.snapshot_argvs()) - live
    assert slow_queue.scheduler_commands - before == len(live) + len(others)


async def test_the_users_jobs_are_still_followed(slow_queue):
    await slow_queue.snapshot(max_age_s=0)
    (st,) = await slow_queue.statuses(["7"])
    assert st.native_id == "7" and st.state == JobState.RUNNING and st.name == "mine"


async def test_the_sites_row_and_diamond_queue_say_the_queue_is_unknown(slow_queue):
    snap = await slow_queue.snapshot(max_age_s=0)
    row = site_summary(slow_queue.cfg, snap)
    assert row.reachable and row.running is None and row.pending is None
    assert row.queue_error == snap.queue_error
    # `diamond sites`' line for it
    text = _site_state({**row.model_dump(), "partitions": [p.name for p in row.partitions]})
    assert "queue unknown" in text and "did not answer" in text


async def test_a_site_whose_every_query_times_out_is_unreachable(tmp_path):
    site = _site(tmp_path, squeue=HANG, scontrol=HANG)
    try:
        snap = await site.snapshot(max_age_s=0)
        assert not snap.reachable and snap.queue_error is None
        assert "did not answer" in (snap.error or "")
        assert "partitions" in (snap.error or "")  # the second batch, the capabilities'
    finally:
        await site.close()


async def test_with_capabilities_cached_a_scheduler_that_stops_answering_is_unreachable(
        tmp_path):
    site = _site(tmp_path, squeue=SLOW_QUEUE)
    try:
        assert (await site.snapshot(max_age_s=0)).reachable
        _tool(tmp_path / "bin", "scontrol", HANG)  # now the scheduler hangs whole
        snap = await site.snapshot(max_age_s=0)
        assert not snap.reachable and "did not answer" in (snap.error or "")
    finally:
        await site.close()


class _QueueOnly:
    """A dialect whose snapshot is its queue alone (no capability query to ask)."""

    def __init__(self, inner) -> None:
        self._inner = inner

    def __getattr__(self, name: str):
        return getattr(self._inner, name)

    def snapshot_argvs(self) -> dict[str, list[str]]:
        return {"queue": self._inner.snapshot_argvs()["queue"]}


@pytest.mark.parametrize("login_hangs", [False, True])
async def test_a_queue_only_snapshot_asks_the_login_a_command_of_no_cost(tmp_path,
                                                                         login_hangs):
    site = _site(tmp_path, squeue=SLOW_QUEUE, preamble=HANG if login_hangs else "")
    site.commands = _QueueOnly(site.commands)
    try:
        snap = await site.snapshot(max_age_s=0)
        if login_hangs:
            assert not snap.reachable and "timed out" in (snap.error or "")
        else:
            assert snap.reachable and snap.jobs == []
            assert snap.queue_error and "the queue query did not answer" in snap.queue_error
    finally:
        await site.close()


# -- slurmrestd: `GET jobs` that does not answer in time -----------------------------------

FIXTURES = Path(__file__).parent / "fixtures" / "outputs" / "slurmrestd"


@pytest.mark.parametrize("everything_hangs", [False, True])
async def test_slurmrestd_get_jobs_timing_out_leaves_the_queue_unknown(tmp_path,
                                                                       everything_hangs):
    bodies = {"nodes": (FIXTURES / "nodes.json").read_text(),
              "partitions": (FIXTURES / "partitions.json").read_text()}
    never = asyncio.Event()  # never set: a request that hangs waits on it

    async def answer(method: str, path: str, body: bytes) -> tuple[int, str]:
        what = path.rsplit("/", 1)[1]
        if what == "jobs" or everything_hangs:
            await never.wait()
        return 200, bodies[what]

    async with StandInSlurmrestd(answer=answer) as rest:
        site = rest.site(tmp_path, "beta-rest", command_timeout_s=TIMEOUT_S)
        try:
            snap = await site.snapshot(max_age_s=0)
            if everything_hangs:
                assert not snap.reachable and "did not answer" in (snap.error or "")
            else:
                assert snap.reachable and snap.nodes and snap.partitions and snap.jobs == []
                assert snap.queue_error == (
                    f"queue not read: beta-rest: the queue query did not answer within "
                    f"{TIMEOUT_S} s, while the site's other queries did. Your own jobs are "
                    "still followed, asked by id")
        finally:
            await site.close()


async def test_a_queue_over_the_cap_with_capabilities_cached_asks_the_queue_alone(tmp_path):
    """(guard) Too large is an answer: the site answered, so cached capabilities are not
    asked again to tell it, as they are after a timeout."""
    flood = 'head -c 100000 /dev/zero | tr "\\0" x; echo'
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    tools = {"squeue": flood, "scontrol": SCONTROL, "sacct": "exit 0"}
    cfg = SiteConfig(name="big", workdir=str(tmp_path),
                     transport={"kind": "local", "max_output_bytes": 4096},
                     commands={name: _tool(bin_, name, body) for name, body in tools.items()})
    site = Site(cfg, transport=make_transport(cfg.transport, "big", workdir=str(tmp_path)))
    try:
        assert (await site.snapshot(max_age_s=0)).queue_error
        before = site.scheduler_commands
        again = await site.snapshot(max_age_s=0)
        assert again.reachable and again.nodes and "more than 4096 bytes" in again.queue_error
        assert site.scheduler_commands - before == len(site.commands.live_outputs)
    finally:
        await site.close()
