"""The sites file of a long-lived engine (the Jupyter server's, a kernel's, `diamond mcp`'s)
edited, removed or created while it runs: its sites stay those it read at its start, and the
Federation says so (`sites_file_changed`) to every face that lists sites: the REST `GET
sites` and `GET state` (which the sidebar polls), `%diamond sites` in a kernel, the MCP tool
discover_resources. Each listing stats the file; it is hashed only when its stat changed.

On a real Jupyter server, IPython shell and MCP server over files on disk. Tests marked
`fault` failed before the check moved behind the Federation; the others are guards."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import sweep_helpers
import yaml

from diamond_jupyter import sites_file_watch

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")
user, shell, _, rest = sweep_helpers.FACES_FIXTURES


@pytest.fixture
def sites_at_start() -> bool:
    """Whether the server starts with its sites file (parametrized False: moved aside to
    tmp_path/sites.later until the test puts it in place)."""
    return True


@pytest.fixture
def jp_server_config(tmp_path, data_dir, sites_at_start):
    from server_conftest import diamond_config  # a plugin here: imported once it is loaded

    sites = sweep_helpers.here_sites_file(tmp_path, tmp_path / "here-work")
    if not sites_at_start:
        sites.rename(tmp_path / "sites.later")
    return diamond_config(str(sites), str(tmp_path / "store.sqlite3"))


@pytest.fixture
def digests(monkeypatch) -> list[Path]:
    """The files the watch hashes, in order (the real hash, counted)."""
    hashed: list[Path] = []
    real = sites_file_watch.file_digest

    def counted(path: Path) -> tuple[sites_file_watch.Stat | None, str | None]:
        hashed.append(path)
        return real(path)

    monkeypatch.setattr(sites_file_watch, "file_digest", counted)
    return hashed


def _add_a_site(sites: Path) -> None:
    data = yaml.safe_load(sites.read_text())
    data["sites"].append({"name": "there", "transport": {"kind": "local"}, "workdir": "/w"})
    sites.write_text(yaml.safe_dump(data))


async def _notes(rest, *paths: str) -> list[str | None]:
    """Each listing's `sites_file_changed` (None: not in the reply), each answered 200."""
    out = []
    for path in paths:
        code, reply = await rest("GET", path)
        assert code == 200, (path, code, reply)
        out.append(reply.get("sites_file_changed"))
    return out


# ---- the REST face ------------------------------------------------------------------------------

async def test_fault_a_sites_file_removed_while_the_server_runs_is_said_removed(rest,
                                                                                 tmp_path):
    """A removed file was said "changed ... restart to use the edited file": there is no
    edited file to use."""
    sites = tmp_path / "sites.yaml"
    sites.unlink()
    for note in await _notes(rest, "sites", "state"):
        assert note is not None and note.startswith(
            f"the sites file {sites} was removed since this Jupyter server read it; the "
            "sites shown are those it read: put the file back"), note
        assert "changed" not in note, note
    assert [s["name"] for s in (await rest("GET", "sites"))[1]["sites"]] == ["here"]


@pytest.mark.parametrize("sites_at_start", [False])
async def test_fault_a_sites_file_created_after_a_start_without_one_is_said(rest, tmp_path):
    """A server started before its sites file was written kept saying only "not found"."""
    sites = tmp_path / "sites.yaml"
    code, reply = await rest("GET", "state")
    assert code == 200 and f"sites file {sites} not found" in reply["error"], reply
    assert "sites_file_changed" not in reply, reply
    (tmp_path / "sites.later").rename(sites)
    [note] = await _notes(rest, "state")
    assert note == (f"the sites file {sites} was created after this Jupyter server started "
                    "without it: restart the Jupyter server to use its sites"), note


async def test_fault_each_listing_stats_the_file_and_hashes_it_only_when_its_stat_changed(
        rest, tmp_path, digests):
    """Every `GET sites`/`GET state` (the sidebar polls them) read and hashed the whole file."""
    sites = tmp_path / "sites.yaml"
    assert await _notes(rest, "sites", "state", "sites", "state") == [None] * 4
    assert digests == []
    st = os.stat(sites)  # saved again with the same bytes: a new mtime, hashed once
    sites.write_bytes(sites.read_bytes())
    os.utime(sites, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert await _notes(rest, "sites", "state", "sites") == [None] * 3
    assert digests == [sites]
    _add_a_site(sites)  # a new size: hashed once more, then said from what was found
    notes = await _notes(rest, "sites", "state", "sites")
    assert digests == [sites, sites]
    assert all(n and "changed since this Jupyter server read it" in n for n in notes), notes


async def test_a_sites_file_put_back_as_it_was_is_not_said_changed(rest, tmp_path):
    """(guard) removed, then the same bytes written again: nothing to say."""
    sites = tmp_path / "sites.yaml"
    text = sites.read_bytes()
    sites.unlink()
    [note] = await _notes(rest, "sites")
    assert note and "was removed" in note, note
    sites.write_bytes(text)
    assert await _notes(rest, "sites", "state") == [None, None]


# ---- the kernel's and the MCP server's engines ---------------------------------------------------

def test_fault_diamond_sites_in_a_kernel_says_the_file_edited_since_it_read_it(shell, user,
                                                                                capsys):
    """`%diamond sites` on the kernel's own engine listed the sites it read, unsaid."""
    user.sites.write_text(f"sites:\n{user.alpha}store: {user.store_path}\n")  # no ghost
    shell.run_line_magic("diamond", "sites")
    assert "the sites file" not in capsys.readouterr().err
    user.sites.write_text(f"sites:\n{user.alpha}{user.ghost}store: {user.store_path}\n")
    table = shell.run_line_magic("diamond", "sites")
    err = capsys.readouterr().err
    assert (f"diamond: the sites file {user.sites} changed since this kernel read it; the "
            "sites shown are those it read: restart the kernel to use the edited file"
            ) in err, err
    assert [row[0] for row in table.rows] == ["alpha"], table.rows


async def test_fault_mcp_discover_resources_says_the_file_removed_since_it_read_it(user):
    """The MCP tool listed the sites its engine read, with no word of the file's removal."""
    from diamond_jupyter.mcp_server import build_server

    user.sites.write_text(f"sites:\n{user.alpha}store: {user.store_path}\n")
    server = build_server(str(user.sites), root=user.root)
    async with server.settings.lifespan(server):  # the server's engine closed at its end
        first = await server.call_tool("discover_resources", {})
        assert not first.is_error and first.structured_content["sites_file_changed"] is None
        user.sites.unlink()
        got = await server.call_tool("discover_resources", {})
    assert not got.is_error, got
    said = got.structured_content
    assert [s["name"] for s in said["sites"]] == ["alpha"], said
    assert said["sites_file_changed"].startswith(
        f"the sites file {user.sites} was removed since this MCP server read it"), said


def test_an_edited_file_past_a_sites_files_size_is_said_changed_without_being_parsed(
        tmp_path, monkeypatch):
    """Loading it to say why it would not load runs inside a listing: a 4 MB YAML file took
    10 s to parse with the server waiting. Past MOST_LOADED the note says changed, unparsed."""
    from diamond_jupyter import sites_file_watch
    path = tmp_path / "sites.yaml"
    path.write_text("sites: []\n")
    watch = sites_file_watch.SitesFileWatch.now(path, "Jupyter server")
    parsed = []
    monkeypatch.setattr(sites_file_watch, "load_config", lambda p: parsed.append(p))
    path.write_text("sites: []\n" + ("#" * 79 + "\n") * (sites_file_watch.MOST_LOADED // 80 + 1))
    assert "changed since this Jupyter server read it (it is too large to check here that " \
        "it loads); the sites shown are those it read" in watch.note()
    assert parsed == []
    path.write_text("sites: [] # edited\n")
    assert "changed since" in watch.note() and parsed == [path]
