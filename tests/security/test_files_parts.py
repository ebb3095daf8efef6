"""Partial files of a transfer: never written through a planted link or into someone else's
file, and a copy never more open than its source (local disk and a real sshd over SFTP)."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest
from sshd_helper import scratch_over_ssh

from diamond_jupyter.model import SiteError
from diamond_jupyter.transfer.sftp import PART, sftp_copy

VICTIM = b"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIvictim victim@host\n"
ATTACK = b"x" * len(VICTIM) + b"ssh-ed25519 AAAAattacker attacker@evil\n"


def noop(_done: int, _total: int) -> None:
    return None


async def copy(src_t, src: str, dst_t, dst: str) -> None:
    await sftp_copy(src_t, src, dst_t, dst, recursive=False, progress=noop,
                    cancel=threading.Event())


@pytest.fixture
async def remote(sshd):
    async with scratch_over_ssh(sshd, "dj-parts") as pair:
        yield pair


def attack_src(tmp_path: Path) -> Path:
    src = tmp_path / "src.bin"
    src.write_bytes(ATTACK)
    return src


async def test_local_part_file_symlink_to_authorized_keys_is_refused(tmp_path):
    victim = tmp_path / "home" / ".ssh" / "authorized_keys"
    victim.parent.mkdir(parents=True)
    victim.write_bytes(VICTIM)
    dst = tmp_path / "shared" / "results.bin"
    dst.parent.mkdir()
    os.symlink(victim, f"{dst}{PART}")  # planted by someone who can write to "shared"
    with pytest.raises(SiteError, match=r"refusing to write the partial file .*symbolic link"):
        await copy(None, str(attack_src(tmp_path)), None, str(dst))
    assert victim.read_bytes() == VICTIM
    assert not dst.exists()


async def test_local_part_file_hard_link_is_refused(tmp_path):
    victim = tmp_path / "authorized_keys"
    victim.write_bytes(VICTIM)
    dst = tmp_path / "results.bin"
    os.link(victim, f"{dst}{PART}")
    with pytest.raises(SiteError, match="hard links"):
        await copy(None, str(attack_src(tmp_path)), None, str(dst))
    assert victim.read_bytes() == VICTIM


async def test_local_part_file_of_another_user_is_not_resumed(tmp_path):
    dst = tmp_path / "results.bin"
    part = Path(f"{dst}{PART}")
    part.write_bytes(b"x" * 10)  # a plausible prefix, but not ours
    os.chown(part, 65534, 65534)
    with pytest.raises(SiteError, match=r"owned by another user \(uid 65534\)"):
        await copy(None, str(attack_src(tmp_path)), None, str(dst))
    assert part.read_bytes() == b"x" * 10


async def test_local_own_part_file_still_resumes(tmp_path):
    dst = tmp_path / "results.bin"
    Path(f"{dst}{PART}").write_bytes(ATTACK[:20])
    await copy(None, str(attack_src(tmp_path)), None, str(dst))
    assert dst.read_bytes() == ATTACK and not Path(f"{dst}{PART}").exists()


@pytest.mark.parametrize(("src_mode", "want"), [(0o600, 0o600), (0o640, 0o640),
                                                (0o755, 0o755), (0o6777, 0o775)])
async def test_local_copy_keeps_private_mode_and_drops_dangerous_bits(tmp_path, src_mode,
                                                                       want):
    src = attack_src(tmp_path)
    src.chmod(src_mode)
    dst = tmp_path / "out" / "copy.bin"
    old = os.umask(0o022)
    try:
        await copy(None, str(src), None, str(dst))
    finally:
        os.umask(old)
    assert stat.S_IMODE(dst.stat().st_mode) == want
    assert dst.read_bytes() == ATTACK


async def test_sftp_part_file_symlink_is_refused_on_the_site(remote, tmp_path):
    t, d = remote
    await t.run(["sh", "-c", f"mkdir -p .ssh && printf '%s' \"$1\" > {d}/victim_keys",
                 "sh", VICTIM.decode()], check=True)
    await t.run(["ln", "-s", f"../{d}/victim_keys", f"{d}/results.bin{PART}"], check=True)
    with pytest.raises(SiteError, match=r"refusing to write the partial file .*symbolic link"):
        await copy(None, str(attack_src(tmp_path)), t, f"{d}/results.bin")
    assert (await t.run(["cat", f"{d}/victim_keys"], check=True)).stdout == VICTIM.decode()
    assert await t.stat(f"{d}/results.bin") is None


async def test_sftp_dangling_symlink_part_is_refused(remote, tmp_path):
    """A link to a file that does not exist yet: the old code created the file through it."""
    t, d = remote
    await t.run(["ln", "-s", f"../{d}/planted", f"{d}/r.bin{PART}"], check=True)
    with pytest.raises(SiteError, match="symbolic link"):
        await copy(None, str(attack_src(tmp_path)), t, f"{d}/r.bin")
    assert await t.stat(f"{d}/planted") is None


@pytest.mark.parametrize(("src_mode", "want"), [(0o600, "600"), (0o6777, "775")])
async def test_sftp_copy_keeps_private_mode_and_drops_dangerous_bits(remote, tmp_path,
                                                                     src_mode, want):
    t, d = remote
    src = attack_src(tmp_path)
    src.chmod(src_mode)
    await copy(None, str(src), t, f"{d}/copy.bin")
    got = await t.run(["stat", "-c", "%a", f"{d}/copy.bin"], check=True)
    assert got.stdout.strip() == want
    assert await t.get_bytes(f"{d}/copy.bin") == ATTACK
