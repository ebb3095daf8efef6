"""Symbolic links among a job's results, as the faces say them: the REST route's `skipped`
lines name each link and where it leads, through
a real Jupyter server with the diamond extension (a local site, no test bed). No link is
followed nor made again in the server's root directory (test_fetch_links.py covers the
engine, the CLI and SFTP)."""

from __future__ import annotations

from pathlib import Path

import pytest
from server_conftest import job_path
from test_fetch_links import _expected, _make_job_dir
from test_fetch_safe import _job

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")

JOB = "here:41"


@pytest.fixture
def job_dirs(tmp_path: Path) -> tuple[Path, Path]:
    return _make_job_dir(tmp_path / "site")


@pytest.fixture
def jp_server_config(tmp_path, data_dir, job_dirs):
    """A local site and the store the server reads, already holding the job whose directory
    holds the links."""
    import yaml
    from server_conftest import diamond_config

    from diamond_jupyter.store import Store

    sites = tmp_path / "sites.yaml"
    sites.write_text(yaml.safe_dump({"sites": [{"name": "here",
                                                "transport": {"kind": "local"}}]}))
    store_path = tmp_path / "store.sqlite3"
    store = Store(store_path)
    try:
        assert _job(store, job_dirs[0]) == JOB
    finally:
        store.close()
    return diamond_config(str(sites), str(store_path))


def _links_in(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_symlink()]


async def test_the_fetch_route_names_each_link_and_follows_none(api, jp_root_dir, job_dirs):
    wd, secret = job_dirs
    reply = await api.post(job_path(JOB, "fetch"), {"dest": "out"})
    assert reply["dest"] == "out"
    assert reply["paths"] == ["out/result.txt", "out/run1/out.dat"]
    assert sorted(reply["skipped"]) == _expected(wd, secret, wd.resolve())
    written = sorted(p.relative_to(jp_root_dir / "out").as_posix()
                     for p in (jp_root_dir / "out").rglob("*"))
    assert written == ["result.txt", "run1", "run1/out.dat"]
    assert _links_in(jp_root_dir) == []
    assert not (jp_root_dir / "out" / "keys").exists()
    # a link named alone is said, not fetched, and not "no such result file"
    reply = await api.post(job_path(JOB, "fetch"), {"dest": "one", "files": ["passwd"]})
    assert reply["paths"] == [] and [line.split(":", 1)[0] for line in reply["skipped"]] == [
        "passwd"]
    assert "leading out of the job's directory (to '/etc/passwd')" in reply["skipped"][0]
