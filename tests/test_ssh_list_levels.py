"""A directory listed over SSH a level at a time, each level's directories on several SFTP
channels at once, against a real private sshd: the files, their order and where the limit
cuts them are those of the walk one directory after another (the local transport's walk,
on the same directory), and `transport.sftp_channels` in the sites file sets how many
channels that takes."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from sshd_helper import remove_tree, tree_in_home
from test_transport_ssh import ssh

from diamond_jupyter.config import MAX_SFTP_CHANNELS, SiteConfig, load_config
from diamond_jupyter.model import BadInput
from diamond_jupyter.transports.local import LocalTransport

# 3 directories a level, 4 levels (one past the default depth), files at each level, and
# what is never entered or read: a link to a directory, a link out, a FIFO, a hidden dir
TREE = r"""set -e
cd "$1"
for a in d0 d1 d2; do for b in e0 e1 e2; do for c in f0 f1 f2; do
  mkdir -p "$a/$b/$c/g"; printf "$a$b$c" > "$a/$b/$c/leaf.txt"; printf x > "$a/$b/$c/g/deep"
done; printf "$a$b" > "$a/$b/mid.dat"; done; printf "$a" > "$a/top.txt"; done
printf r > root.txt; printf rr > 'z space ✓.txt'; mkdir .hidden; printf h > .hidden/h
ln -s d0 to_d0; ln -s /etc out; ln -s missing nowhere; mkfifo pipe
"""
CLOSED = 'mkdir "$1/d1/closed"; printf c > "$1/d1/closed/c"; chmod 000 "$1/d1/closed"'



async def _tree(t) -> str:
    """The tree under the test user's home; its absolute path (the local walk reads it)."""
    return await tree_in_home(t, "dj-levels", TREE)


def _shown(files) -> list[tuple[str, int, int]]:
    return [(f.path, f.size, f.mode) for f in files]


@pytest.mark.asyncio
async def test_a_listing_is_the_one_directory_after_another_walk(sshd, tmp_path):
    """Every depth, limit and `special` alike: the same entries in the same order as the
    local walk (which lists one directory after another) gives for the same directory."""
    t = ssh(sshd)
    local = LocalTransport("here", str(tmp_path))
    root = ""
    try:
        root = await _tree(t)
        for depth in (1, 2, 3, 5):
            for limit in (1, 2, 7, 20, 40, 10000):
                for special in (False, True):
                    want = await local.list_files(root, max_depth=depth, limit=limit,
                                                  special=special)
                    got = await t.list_files(root, max_depth=depth, limit=limit,
                                             special=special)
                    assert _shown(got) == _shown(want), (depth, limit, special)
        assert t._conn.sftp.opened == t.sftp_channels == 4  # a level's listings at once
        everything = await t.list_files(root, max_depth=5, special=True)
        paths = [f.path for f in everything]
        assert len(paths) == 2 + 4 + 1 + 3 + 9 + 27 + 27  # by level; 4 are special
        assert f"{root}/d2/e2/f2/g/deep" in paths and f"{root}/pipe" in paths
        assert f"{root}/to_d0" in paths and not any("/to_d0/" in p for p in paths)
        assert f"{root}/.hidden/h" in paths  # hidden files are listed, as before
        # a directory the user may not read is passed over, the rest listed as before
        await t.run(["sh", "-c", CLOSED, "closed", root], check=True)
        assert _shown(await t.list_files(root, max_depth=5, special=True)) == \
            _shown(everything)
    finally:
        if root:
            await remove_tree(t, root)
        await t.close()


@pytest.mark.asyncio
@pytest.mark.parametrize("channels", [1, 2])
async def test_sftp_channels_bounds_a_listings_channels(sshd, channels):
    """`sftp_channels: 1` is the single channel of before; 2 lists a level two at a time.
    The answer is the same either way."""
    t, wide = ssh(sshd, sftp_channels=channels), ssh(sshd)
    root = ""
    try:
        root = await _tree(t)
        got = await t.list_files(root, max_depth=5, special=True)
        assert t.sftp_channels == channels and t._conn.sftp.opened == channels
        assert _shown(got) == _shown(await wide.list_files(root, max_depth=5, special=True))
    finally:
        if root:
            await remove_tree(t, root)
        await t.close()
        await wide.close()


def _sites(tmp_path: Path, transport: str) -> Path:
    p = tmp_path / "sites.yaml"
    p.write_text(f"sites:\n  - name: far\n    scheduler: slurm\n    transport: {transport}\n")
    p.chmod(0o600)
    return p


@pytest.mark.parametrize("given, said", [
    ("sftp_channels: 0", "transport.sftp_channels: 0 is not a number of SFTP channels: give "
     f"1 to {MAX_SFTP_CHANNELS}"),
    ("sftp_channels: 17", "transport.sftp_channels: 17 is not a number of SFTP channels"),
    ("sftp_channels: -2", "give 1 to 16"),
    ("sftp_channels: true", "transport.sftp_channels: expected a number"),
    ("sftp_channels: 2.5", "transport.sftp_channels"),
    ("sftp_channels: 5", "sftp_channels: 5 needs max_sessions 11 or more"),
    ("sftp_channels: 16, max_sessions: 32", "with max_sessions 32, give 1 to 15"),
])
def test_sftp_channels_out_of_range_is_refused_naming_site_and_range(tmp_path, given, said):
    with pytest.raises(BadInput) as e:
        load_config(_sites(tmp_path, f"{{kind: ssh, host: login.example.org, {given}}}"))
    assert "site 'far'" in str(e.value) and said in str(e.value), str(e.value)


def test_sftp_channels_read_from_the_sites_file(tmp_path):
    def channels(transport: str) -> int:
        return load_config(_sites(tmp_path, transport)).sites[0].transport.sftp_channels

    assert channels("{kind: ssh, host: login.example.org}") is None  # the default, 4
    assert channels("{kind: ssh, host: login.example.org, sftp_channels: 1}") == 1
    assert channels("{kind: ssh, host: h, sftp_channels: 16, max_sessions: 33}") == 16
    with pytest.raises(BadInput, match="sftp_channels: for a transport of kind ssh"):
        channels("{kind: local, sftp_channels: 2}")


@pytest.mark.parametrize("transport", [{"kind": "local"},
                                       {"kind": "ssh", "host": "h", "max_sessions": 4}])
def test_a_written_out_site_reads_back(tmp_path, transport):
    """A site written out whole (every default in it, as the engine hands a configuration on)
    reads back: the default channel count was refused at a local site, and above what
    max_sessions 4 allows, though nobody had asked for it."""
    site = SiteConfig.model_validate({"name": "far", "scheduler": "slurm",
                                      "transport": transport})
    p = tmp_path / "sites.yaml"
    p.write_text(yaml.safe_dump({"sites": [site.model_dump(mode="json")]}))
    p.chmod(0o600)
    assert load_config(p).sites[0] == site
