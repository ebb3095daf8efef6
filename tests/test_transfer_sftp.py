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
