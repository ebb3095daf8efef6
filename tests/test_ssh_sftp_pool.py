"""SFTP requests at once over one SSH connection (a pool of SFTP channels), against a real
private sshd: the same answers as asked one by one, a dropped connection survived, no
channel left open, session slots given back to commands."""

from __future__ import annotations

import asyncio
import random
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from test_transport_ssh import ssh, wait_for

from diamond_jupyter.model import SiteError
from diamond_jupyter.transports import ssh_sftp_pool

# a job directory's kinds of entry: files, a directory, links inside, out, nowhere, a loop
TREE = """set -e
mkdir -p "$1/sub/deeper" "$1/other"
cd "$1"
printf 'a' > a.txt; printf 'bb' > 'with space ✓.txt'; printf 'ccc' > sub/c.dat
printf 'dddd' > sub/deeper/d.dat; chmod 600 sub/c.dat
ln -s a.txt to_a; ln -s sub to_sub; ln -s ../other/x out_of; ln -s /etc/hostname abs
ln -s missing dangling; ln -s loop1 loop2; ln -s loop2 loop1; ln -s to_a chain
printf 'x' > other/x
mkdir closed; printf 'z' > closed/z; chmod 000 closed
"""
NAMES = ["a.txt", "with space ✓.txt", "sub", "sub/c.dat", "sub/deeper", "sub/deeper/d.dat",
         "to_a", "to_sub", "out_of", "abs", "dangling", "loop1", "loop2", "chain", "closed",
         "closed/z", "missing", "sub/missing", "../", "."]
LINKS = ["to_a", "to_sub", "out_of", "abs", "dangling", "loop1", "loop2", "chain"]


def _requests(root: str) -> list[tuple[str, str]]:
    """Every kind of metadata request, on every kind of entry."""
    out = [(op, f"{root}/{n}") for n in NAMES for op in ("stat", "real_path")]
    out += [("link_target", f"{root}/{n}") for n in [*LINKS, "a.txt", "missing"]]
    out += [("list_files", root), ("list_files", f"{root}/sub"), ("list_files", f"{root}/x")]
    return out


async def _answer(t, op: str, path: str) -> object:
    """The transport's answer, or the kind and text of its error (compared alike)."""
    try:
        if op == "list_files":
            return await t.list_files(path, special=True)
        return await getattr(t, op)(path)
    except (FileNotFoundError, SiteError) as e:
        return (type(e).__name__, str(e))


async def _tree(t) -> str:
    root = f"dj-pool-{secrets.token_hex(4)}"
    r = await t.run(["sh", "-c", TREE, "tree", root])
    assert r.ok, r.stderr
    return f"~/{root}"


async def _remove(t, root: str) -> None:
    await t.run(["sh", "-c", 'chmod -R u+rwx "$1"; rm -rf "$1"', "rm", root[2:]])


async def _at_once(t, asks: list[tuple[str, str]]) -> list[object]:
    """Every request at the same time; the bound only stops a hung test (a channel two
    threads shared would lose an answer and wait for it forever)."""
    return await asyncio.wait_for(asyncio.gather(*(_answer(t, op, p) for op, p in asks)),
                                  60)


@asynccontextmanager
async def _on_a_tree(sshd, **settings: Any) -> AsyncIterator[tuple[Any, str]]:
    """An SSH transport to `sshd` (`settings`, the transport's own) and a fresh TREE in its
    home: the transport and the tree's root; the tree removed and the transport closed
    after."""
    t = ssh(sshd, **settings)
    root = ""
    try:
        root = await _tree(t)
        yield t, root
    finally:
        if root:
            await _remove(t, root)
        await t.close()


def _channels(t) -> int:
    """Channels paramiko holds open on the transport's connection (SFTP, commands)."""
    return len(t._conn.transport._channels.values())


@pytest.mark.asyncio
async def test_at_once_the_answers_are_those_asked_one_by_one(sshd):
    async with _on_a_tree(sshd) as (t, root):
        asks = _requests(root)
        singles = [a for a in asks if a[0] != "list_files"]  # a listing's level is at once
        serial = [await _answer(t, op, p) for op, p in singles]
        assert t._conn.sftp.opened == 1  # one by one: the first channel alone
        serial += [await _answer(t, op, p) for op, p in asks[len(singles):]]
        # the kinds are all there: a missing path, a link nowhere, no right to look
        assert serial[asks.index(("stat", f"{root}/missing"))] is None
        assert serial[asks.index(("real_path", f"{root}/dangling"))] is None
        assert serial[asks.index(("real_path", f"{root}/loop1"))] is None
        assert serial[asks.index(("link_target", f"{root}/chain"))][0] == "to_a"
        assert serial[asks.index(("link_target", f"{root}/missing"))][0] == \
            "FileNotFoundError"
        assert serial[asks.index(("stat", f"{root}/closed/z"))][0] == "SiteError"
        rng = random.Random(7)
        for _ in range(4):  # all at once, in shuffled orders
            order = list(range(len(asks)))
            rng.shuffle(order)
            got = await _at_once(t, [asks[i] for i in order])
            assert [got[order.index(i)] for i in range(len(asks))] == serial
        assert t._conn.sftp.opened == t.sftp_channels == 4  # and they did run at once
        assert t.connections_opened == 1


@pytest.mark.asyncio
async def test_callers_cancelled_midway_leave_every_channel_usable(sshd):
    async with _on_a_tree(sshd) as (t, root):
        asks = _requests(root)
        serial = [await _answer(t, op, p) for op, p in asks]
        for _ in range(3):
            tasks = [asyncio.ensure_future(_answer(t, op, p)) for op, p in asks * 2]
            # once the first answer is in, the others are mid-request or wait for a channel
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in tasks[::2]:
                task.cancel()
            for task, want in zip(tasks[1::2], (serial * 2)[1::2], strict=True):
                assert await asyncio.wait_for(task, 60) == want
            await asyncio.gather(*tasks[::2], return_exceptions=True)
        # a channel comes back only once its thread has ended: none was shared since
        assert await _at_once(t, asks) == serial
        assert t._conn.sftp.open_channels == 4 and t.connections_opened == 1


@pytest.mark.asyncio
async def test_many_calls_leave_no_channel_open(sshd):
    async with _on_a_tree(sshd) as (t, root):
        asks = _requests(root)
        for _ in range(8):  # 8 bursts, errors included
            await _at_once(t, asks)
        conn = t._conn
        assert conn.sftp.opened == conn.sftp.open_channels == 4  # reused, not reopened

        async def sftp_only():  # paramiko forgets a command's channel once the server
            return _channels(t) == 4  # confirms its close

        await wait_for(sftp_only, "only the 4 SFTP channels open")
        # the server agrees: commands fill every session it allows (MaxSessions 10, as
        # max_sessions), which it would refuse if a channel were left open there
        rs = await asyncio.gather(*(t.run(["echo", str(i)]) for i in range(30)))
        assert [r.stdout for r in rs] == [f"{i}\n" for i in range(30)]

        async def sftp_alone():  # the commands' channels closed, the idle extras given up
            return _channels(t) == 1 and t._sem._value == t.max_sessions - 1

        await wait_for(sftp_alone, "the commands' channels to close, every slot back")
        assert t.connections_opened == 1


@pytest.mark.asyncio
async def test_idle_extra_channels_give_their_slots_to_commands(sshd):
    # 6 slots for commands and extra channels; 3 channels
    async with _on_a_tree(sshd, max_sessions=7) as (t, root):
        await _at_once(t, _requests(root))
        assert t.describe()["sftp_channels"] == 3
        gate = f"{root[2:]}/gate"
        # 6 commands that each wait until all 6 have started: only when the 2 idle extra
        # SFTP channels give back their slots (else 4 run, and each gives up after 20 s)
        wait_all = ('mkdir -p "$1"; : > "$1/$2"; n=0; '
                    'while [ "$(ls "$1" | wc -l)" -lt 6 ]; do '
                    'n=$((n+1)); [ $n -gt 400 ] && exit 3; sleep 0.05; done')
        rs = await asyncio.gather(*(t.run(["sh", "-c", wait_all, "w", gate, str(i)])
                                    for i in range(6)))
        assert [r.exit_status for r in rs] == [0] * 6
        assert t.describe()["sftp_channels"] == 1
        # and the next burst opens them again
        await _at_once(t, _requests(root))
        assert t.describe()["sftp_channels"] == 3


@pytest.mark.asyncio
async def test_idle_extra_channels_close_after_a_while(sshd, monkeypatch):
    monkeypatch.setattr(ssh_sftp_pool, "LINGER_S", 0.2)
    async with _on_a_tree(sshd) as (t, root):
        await _at_once(t, _requests(root))

        async def one_left():  # and every slot back
            return t.describe()["sftp_channels"] == 1 and _channels(t) == 1 \
                and t._sem._value == t.max_sessions - 1

        await wait_for(one_left, "the extra SFTP channels to close")
        assert await t.stat(f"{root}/a.txt") is not None


@pytest.mark.asyncio
async def test_a_dropped_connection_is_survived_and_its_slots_come_back(sshd):
    async with _on_a_tree(sshd) as (t, root):
        asks = _requests(root)
        serial = [await _answer(t, op, p) for op, p in asks]
        await _at_once(t, asks)
        assert t.describe()["sftp_channels"] == 4
        first = t._conn
        assert sshd.kill_connections() >= 1  # the server side of the connection dies

        async def noticed():
            return not first.alive()

        await wait_for(noticed, "the client to see the connection gone")
        got = await _at_once(t, asks)
        assert got == serial and t.connections_opened == 2
        # the old pool's slots came back: the new pool's 3 extras hold 3 of them
        assert t._sem._value == t.max_sessions - 1 - 3
        # dropped while requests are in flight: each ends (an answer or "lost"), none hangs
        second = t._conn
        burst = asyncio.gather(*(_answer(t, op, p) for op, p in asks * 4))
        await asyncio.sleep(0)  # the burst is under way
        second.transport.close()
        ended = await asyncio.wait_for(burst, 120)
        lost = [g for g in ended if isinstance(g, tuple) and "lost" in str(g[1])]
        assert all(g in serial or g in lost for g in ended)
        got = await _at_once(t, asks)
        assert got == serial and t.connections_opened == 3
        assert second.sftp.closed and second.sftp.open_channels == 0

        async def settled():  # the calls of the dropped connection have all ended
            return t._sem._value == t.max_sessions - 1 - (t.describe()["sftp_channels"] - 1)

        await wait_for(settled, "the dropped connection's slots to come back")


@pytest.mark.asyncio
async def test_an_extra_channel_the_server_refuses_is_no_error(sshd):
    # the transport thinks 20 sessions fit; the server allows 10 (MaxSessions)
    gate = f"dj-gate-{secrets.token_hex(4)}"
    async with _on_a_tree(sshd, max_sessions=20) as (t, root):
        try:
            asks = _requests(root)
            # asked on another connection: a listing's level at once would open t's extras
            ref = ssh(sshd, sftp_channels=1)
            try:
                serial = [await _answer(ref, op, p) for op, p in asks]
                assert ref._conn.sftp.opened == 1
            finally:
                await ref.close()
            assert await t.stat(root) is not None  # t's first SFTP channel, on its own slot
            # 9 commands hold the other 9 sessions the server allows until the gate opens
            hold = ('n=0; until [ -e "$1" ]; do n=$((n+1)); [ $n -gt 2400 ] && exit 3; '
                    'sleep 0.05; done')
            held = [asyncio.ensure_future(t.run(["sh", "-c", hold, "h", gate]))
                    for _ in range(9)]

            async def nine_open():
                return _channels(t) >= 10

            await wait_for(nine_open, "9 commands to hold their sessions")
            got = await _at_once(t, asks)
            assert got == serial  # every answer, on the one channel the server let open
            assert t._conn.sftp.opened == 1
            await t.put_bytes(b"", gate)  # over SFTP: the server has no session left for `touch`
            assert [r.exit_status for r in await asyncio.gather(*held)] == [0] * 9
        finally:
            await t.run(["rm", "-f", gate])
