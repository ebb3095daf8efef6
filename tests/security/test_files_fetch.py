"""Fetched files keep their content, never setuid/setgid/world-write bits, and stream to disk
(a real sshd over SFTP, and the local transport)."""

from __future__ import annotations

import hashlib
import stat

import pytest
from sshd_helper import scratch_over_ssh
from sweep_helpers import traced_memory

from diamond_jupyter.transports.local import LocalTransport


@pytest.fixture
async def remote(sshd):
    async with scratch_over_ssh(sshd, "dj-fetch") as pair:
        yield pair


async def test_ssh_fetch_of_a_setuid_world_writable_file_is_defused(remote, tmp_path):
    t, d = remote
    await t.run(["sh", "-c", f"printf 'payload' > {d}/tool && chmod 6777 {d}/tool"], check=True)
    assert (await t.run(["stat", "-c", "%A", f"{d}/tool"])).stdout.strip() == "-rwsrwsrwx"
    local = tmp_path / "tool"
    await t.get_file(f"{d}/tool", str(local))
    assert local.read_bytes() == b"payload"
    assert stat.S_IMODE(local.stat().st_mode) == 0o775


async def test_ssh_fetch_keeps_a_private_file_private(remote, tmp_path):
    t, d = remote
    await t.run(["sh", "-c", f"echo secret > {d}/key && chmod 600 {d}/key"], check=True)
    await t.get_file(f"{d}/key", str(tmp_path / "key"))
    assert stat.S_IMODE((tmp_path / "key").stat().st_mode) == 0o600


async def test_ssh_fetch_streams_to_disk(remote, tmp_path):
    """A 24 MB file never sits whole in memory (the old code read it into one bytes)."""
    t, d = remote
    await t.run(["sh", "-c", f"head -c 24M /dev/urandom > {d}/big"], check=True)
    want = (await t.run(["sha256sum", f"{d}/big"], check=True)).stdout.split()[0]
    with traced_memory() as memory:
        await t.get_file(f"{d}/big", str(tmp_path / "big"))
    assert hashlib.sha256((tmp_path / "big").read_bytes()).hexdigest() == want
    # windows of 2 MB, which paramiko's reads hold about three times over, plus whatever
    # else the process allocates meanwhile (12.6 MB seen once at load): well under the file
    assert memory.peak < 16 << 20, f"peak {memory.peak / 2**20:.1f} MB while fetching 24 MB"


async def test_local_fetch_of_a_setuid_world_writable_file_is_defused(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "tool").write_bytes(b"payload")
    (site / "tool").chmod(0o6777)
    t = LocalTransport("here", str(site))
    await t.get_file("tool", str(tmp_path / "tool"))
    assert (tmp_path / "tool").read_bytes() == b"payload"
    assert stat.S_IMODE((tmp_path / "tool").stat().st_mode) == 0o775
