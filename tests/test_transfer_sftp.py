"""SFTP transfers between the real test-bed sites (each with its own home), over real SSH."""

from __future__ import annotations

import hashlib
import secrets
import subprocess

import pytest

from diamond_jupyter.federation import Federation
from diamond_jupyter.store import Store
from diamond_jupyter.transfer import parse_location
from diamond_jupyter.transfer.sftp import PART

pytestmark = pytest.mark.testbed
MB = 1 << 20


@pytest.fixture
async def fed(tb, tmp_path):
    f = Federation(tb.config_path, store=Store(tmp_path / "store.sqlite"))
    yield f
    await f.close()


@pytest.fixture
def d() -> str:
    """A directory name of its own on every site, for one test."""
    return f"xfer-test/{secrets.token_hex(4)}"


async def sh(fed: Federation, site: str, cmd: str) -> str:
    res = await fed.site(site).transport.run(["sh", "-c", cmd], check=True, timeout=120)
    return res.stdout


async def sha(fed: Federation, site: str, path: str) -> str:
    return (await sh(fed, site, f"sha256sum {path}")).split()[0]


async def size(fed: Federation, site: str, path: str) -> int | None:
    st = await fed.site(site).transport.stat(path)
    return st.size if st else None


def test_parse_location():
    sites = {"alpha": 1, "beta": 2}
    assert parse_location("alpha:data/x", sites).site == "alpha"
    assert parse_location("/tmp/a:b", sites).site is None
    assert parse_location("rel/path", sites).path == "rel/path"
    with pytest.raises(Exception, match="unknown site 'nope'"):
        parse_location("nope:x", sites)


async def test_relay_100mb_alpha_to_beta(fed, d):
    await sh(fed, "alpha", f"mkdir -p {d} && head -c 100M /dev/urandom > {d}/f")
    want = await sha(fed, "alpha", f"{d}/f")
    rec = await fed.transfer(f"alpha:{d}/f", f"beta:{d}/f", via="sftp")
    assert rec.state == "SUCCEEDED", rec.error
    assert rec.bytes == 100 * MB and rec.checksum == f"sha256:{want}"
    assert await sha(fed, "beta", f"{d}/f") == want  # independently, on beta
    assert await size(fed, "beta", f"{d}/f{PART}") is None
    prog = [e.data for e in fed.store.events_since(0, kinds=["transfer.progress"])
            if e.data["transfer_id"] == rec.id]
    assert len(prog) >= 10 and prog[-1]["bytes_done"] == 100 * MB
    assert all(p["bytes_total"] == 100 * MB for p in prog)
    assert [p["bytes_done"] for p in prog] == sorted(p["bytes_done"] for p in prog)
    states = [e.data["state"] for e in fed.store.events_since(0, kinds=["transfer.state"])]
    assert states == ["ACTIVE", "SUCCEEDED"]
    print(f"\n100 MB relay alpha -> beta: {rec.data['seconds']} s, {rec.data['mb_per_s']} MB/s")
    await sh(fed, "alpha", f"rm -rf {d}")
    await sh(fed, "beta", f"rm -rf {d}")


async def test_interrupted_transfer_resumes_with_the_remainder_only(fed, d):
    await sh(fed, "alpha", f"mkdir -p {d} && head -c 20M /dev/urandom > {d}/f")
    want = await sha(fed, "alpha", f"{d}/f")
    first = await fed.mover.transfer(f"alpha:{d}/f", f"beta:{d}/f", via="sftp",
                                     limit_bytes=7 * MB)
    assert first.state == "FAILED" and "stopped after" in first.error
    assert await size(fed, "beta", f"{d}/f{PART}") == 7 * MB  # the partial file is kept
    assert await size(fed, "beta", f"{d}/f") is None  # nothing half-written in place
    again = await fed.transfer(f"alpha:{d}/f", f"beta:{d}/f", via="sftp")
    assert again.state == "SUCCEEDED", again.error
    assert again.data["resumed_from"] == 7 * MB and again.data["moved"] == 13 * MB
    assert await sha(fed, "beta", f"{d}/f") == want
    await sh(fed, "alpha", f"rm -rf {d}")
    await sh(fed, "beta", f"rm -rf {d}")


async def test_corrupted_destination_fails_the_checksum(fed, d):
    await sh(fed, "alpha", f"mkdir -p {d} && head -c 8M /dev/urandom > {d}/f")
    await fed.mover.transfer(f"alpha:{d}/f", f"gamma:{d}/f", via="sftp", limit_bytes=3 * MB)
    # flip bytes inside the part already moved: resuming appends the rest after them
    await sh(fed, "gamma", f"printf XXXXXXXX | dd of={d}/f{PART} bs=1 seek=1000 conv=notrunc"
                           " 2>/dev/null")
    rec = await fed.transfer(f"alpha:{d}/f", f"gamma:{d}/f", via="sftp")
    assert rec.state == "FAILED" and "checksum mismatch" in rec.error
    assert await size(fed, "gamma", f"{d}/f") is None  # never renamed into place
    assert await size(fed, "gamma", f"{d}/f{PART}") is None  # a retry starts clean
    ok = await fed.transfer(f"alpha:{d}/f", f"gamma:{d}/f", via="sftp")
    assert ok.state == "SUCCEEDED" and ok.data["resumed_from"] == 0
    await sh(fed, "alpha", f"rm -rf {d}")
    await sh(fed, "gamma", f"rm -rf {d}")


async def test_server_to_site_and_back_and_a_directory(fed, d, tmp_path):
    src = tmp_path / "up.bin"
    data = secrets.token_bytes(3 * MB + 17)
    src.write_bytes(data)
    up = await fed.transfer(str(src), f"gamma:{d}/", via="sftp")  # trailing /: into the dir
    assert up.state == "SUCCEEDED", up.error
    assert await sha(fed, "gamma", f"{d}/up.bin") == hashlib.sha256(data).hexdigest()
    await sh(fed, "gamma", f"mkdir -p {d}/tree/sub && echo a > {d}/tree/a && "
                           f"echo b > {d}/tree/sub/b")
    down = await fed.transfer(f"gamma:{d}/tree", str(tmp_path / "tree"), recursive=True)
    assert down.state == "SUCCEEDED", down.error
    assert (tmp_path / "tree/a").read_text() == "a\n"
    assert (tmp_path / "tree/sub/b").read_text() == "b\n"
    assert sorted(f["path"] for f in down.data["files"]) == ["a", "sub/b"]
    back = await fed.transfer(f"gamma:{d}/up.bin", str(tmp_path / "back.bin"))
    assert (tmp_path / "back.bin").read_bytes() == data and back.bytes == len(data)
    await sh(fed, "gamma", f"rm -rf {d}")


async def test_missing_source_fails_clearly(fed):
    rec = await fed.transfer("beta:does/not/exist", "alpha:x", via="sftp")
    assert rec.state == "FAILED" and "no such file" in rec.error


def test_cli_transfer_json(tb, tmp_path, data_dir):
    src = tmp_path / "c.txt"
    src.write_text("hello\n")
    out = subprocess.run(["diamond", "transfer", str(src), "beta:xfer-test/cli/c.txt",
                          "--via", "sftp", "--json", "--config", str(tb.config_path)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    import json

    rec = json.loads(out.stdout)
    assert rec["state"] == "SUCCEEDED" and rec["bytes"] == 6
    assert rec["checksum"] == "sha256:" + hashlib.sha256(b"hello\n").hexdigest()
    bad = subprocess.run(["diamond", "transfer", "nosite:x", "/tmp/y", "--config",
                          str(tb.config_path)], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "unknown site" in bad.stderr


# -- lost connections: retried with resume --------------------------------------------------

@pytest.fixture
def sshd_back(tb):
    """Whatever a test does to a site's sshd, it runs again afterwards."""
    yield
    from diamond_jupyter.testbed import control

    for s in control.status()["sites"]:
        if not s["sshd"]:
            control.restart_sshd(s["name"])


async def first_progress(fed: Federation, transfer_id: str | None = None) -> None:
    async for ev in fed.events(since=0):
        if ev.kind == "transfer.progress" and ev.data["bytes_done"] > 0 and (
                transfer_id is None or ev.data["transfer_id"] == transfer_id):
            return


async def test_connection_cut_mid_copy_is_retried_and_resumed(fed, d, sshd_back):
    import asyncio

    from diamond_jupyter.testbed import control

    fed.config.transfers.backoff_s = 0.2
    await sh(fed, "alpha", f"mkdir -p {d} && head -c 150M /dev/urandom > {d}/f")
    want = await sha(fed, "alpha", f"{d}/f")
    rec = await fed.transfer(f"alpha:{d}/f", f"beta:{d}/f", via="sftp", wait=False)
    await first_progress(fed, rec.id)
    await asyncio.to_thread(control.restart_sshd, "alpha")  # every session of alpha drops
    done = await fed.mover.wait(rec.id)
    assert done.state == "SUCCEEDED", done.error
    assert done.data["attempts"] >= 2 and done.data["resumed_from"] > 0  # not from scratch
    assert done.checksum == f"sha256:{want}" and await sha(fed, "beta", f"{d}/f") == want
    retries = [e.data for e in fed.store.events_since(0, kinds=["transfer.retry"])]
    assert retries and retries[0]["attempt"] == 2 and retries[0]["attempts"] == 6
    states = [e.data["state"] for e in fed.store.events_since(0, kinds=["transfer.state"])]
    assert states == ["ACTIVE", "SUCCEEDED"]  # one transfer, never failed in between
    print(f"\nsshd of alpha restarted mid-copy: {done.data['attempts']} attempts, resumed "
          f"from {done.data['resumed_from'] / MB:.1f} MB")
    await sh(fed, "alpha", f"rm -rf {d}")
    await sh(fed, "beta", f"rm -rf {d}")


async def test_retries_spent_fail_with_the_count_and_the_last_error(fed, d, sshd_back):
    import asyncio
    import threading

    from diamond_jupyter.testbed import control

    fed.config.transfers.attempts, fed.config.transfers.backoff_s = 3, 0.1
    await sh(fed, "alpha", f"mkdir -p {d} && head -c 150M /dev/urandom > {d}/f")
    rec = await fed.transfer(f"alpha:{d}/f", f"gamma:{d}/f", via="sftp", wait=False)
    await first_progress(fed, rec.id)
    failed = threading.Event()
    task = asyncio.ensure_future(fed.mover.wait(rec.id))
    task.add_done_callback(lambda _t: failed.set())
    # alpha stays down until the transfer has given up
    await asyncio.to_thread(control.restart_sshd, "alpha", while_down=lambda: failed.wait(120))
    done = await task
    assert done.state == "FAILED"
    assert done.error.startswith("connection lost during the copy: gave up after 3 attempts;"
                                 " last error: "), done.error
    assert "alpha" in done.error and "refused" in done.error  # the last try found no sshd
    assert len(fed.store.events_since(0, kinds=["transfer.retry"])) == 2
    assert await size(fed, "gamma", f"{d}/f{PART}") > 0  # kept for a later resume
    again = await fed.transfer(f"alpha:{d}/f", f"gamma:{d}/f", via="sftp")
    assert again.state == "SUCCEEDED" and again.data["resumed_from"] > 0
    await sh(fed, "alpha", f"rm -rf {d}")
    await sh(fed, "gamma", f"rm -rf {d}")


async def test_a_directory_copied_again_moves_only_what_is_missing(tmp_path):
    """A retry of a directory copy skips the files that arrived whole (same size and
    sha256) and copies the rest (the server's own disk on both ends: no site needed)."""
    import threading

    from diamond_jupyter.transfer.sftp import LocalSide, copy_tree

    src, dst = tmp_path / "src", tmp_path / "dst"
    (src / "sub").mkdir(parents=True)
    for rel, n in (("a.bin", 3 * MB), ("sub/b.bin", MB + 5), ("c.txt", 10)):
        (src / rel).write_bytes(secrets.token_bytes(n))
    side = LocalSide(str(tmp_path))

    async def copy():
        return await copy_tree(side, str(src), side, str(dst), progress=lambda *_: None,
                               cancel=threading.Event())
    first = await copy()
    assert first.moved == first.bytes == 4 * MB + 15
    (dst / "sub/b.bin").unlink()  # lost, as by a copy cut short
    (dst / "c.txt").write_bytes(b"X" * 10)  # same size, other bytes
    again = await copy()
    assert again.moved == MB + 5 + 10 and again.checksum == first.checksum
    assert (dst / "c.txt").read_bytes() == (src / "c.txt").read_bytes()
