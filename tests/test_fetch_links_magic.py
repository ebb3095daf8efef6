"""`%diamond fetch` names each symbolic link among a job's results, with where it leads, and
follows none: through the engine in the kernel's process (IPython's shell, the extension
loaded as a notebook loads it) and through a real Jupyter server with the diamond extension
(the kernel's other engine). A local site, no test bed.

Why an earlier test of the server path hung: the magic blocks its thread until the engine
answers, and the server a test starts serves on the test's own loop. Run on that loop, the
magic waits for a server that cannot run; run in the loop's executor, it waits for a server
that was never listening (pytest-jupyter binds the port only for a test that asks for
`jp_fetch`): the request's 600 s timeout, and then the loop's shutdown waits for the worker
thread. Here the server is listening (`jp_fetch`), the magic runs in a thread of its own
and is awaited with a guard, so a fault fails the test instead of stopping the session."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml
from sweep_helpers import in_process_shell
from test_fetch_links import _expected, _make_job_dir
from test_fetch_safe import _job

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")

JOB = "here:41"
GUARD_S = 120  # a hang guard: the fetch itself takes well under a second


@pytest.fixture
def job_dirs(tmp_path: Path) -> tuple[Path, Path]:
    return _make_job_dir(tmp_path / "site")


def _sites(tmp_path: Path) -> Path:
    sites = tmp_path / "sites.yaml"
    sites.write_text(yaml.safe_dump({"sites": [{"name": "here",
                                                "transport": {"kind": "local"}}]}))
    return sites


def _said(out: str) -> list[str]:
    return sorted(line.removeprefix("skipped ") for line in out.splitlines()
                  if line.startswith("skipped "))


def _links_in(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_symlink()]


@pytest.fixture
def shell(tmp_path, monkeypatch, job_dirs):
    """IPython's shell with the extension loaded, its engine in this process over a store
    that holds the job."""
    from diamond_jupyter.store import Store

    data = tmp_path / "data"
    store = Store(data / "diamond.sqlite3")
    try:
        assert _job(store, job_dirs[0]) == JOB
    finally:
        store.close()
    (tmp_path / "home").mkdir()
    yield from in_process_shell(monkeypatch, _sites(tmp_path), data, tmp_path / "home",
                                DIAMOND_HANDOVER="0")


def test_the_magic_in_process_names_each_link_and_follows_none(shell, tmp_path, job_dirs,
                                                               capsys):
    wd, secret = job_dirs
    dest = tmp_path / "dest"
    paths = shell.run_line_magic("diamond", f"fetch {JOB} {dest}")
    out = capsys.readouterr().out
    assert paths == [dest / "result.txt", dest / "run1" / "out.dat"]
    assert out.splitlines()[:2] == [str(dest / "result.txt"), str(dest / "run1" / "out.dat")]
    assert _said(out) == _expected(wd, secret, wd.resolve())
    assert _links_in(dest) == [] and not (dest / "keys").exists()
    # a link named alone is said, not fetched
    paths = shell.run_line_magic("diamond", f"fetch {JOB} {tmp_path / 'one'} --file passwd")
    out = capsys.readouterr().out
    assert paths == [] and out.splitlines()[0] == "no result files written"
    assert [line.split(":", 1)[0] for line in _said(out)] == ["passwd"]


# -- through the user's Jupyter server ---------------------------------------------------------

@pytest.fixture
def jp_server_config(tmp_path, data_dir, job_dirs):
    """The server's local site and store, already holding the job."""
    from server_conftest import diamond_config

    from diamond_jupyter.store import Store

    store_path = tmp_path / "store.sqlite3"
    store = Store(store_path)
    try:
        assert _job(store, job_dirs[0]) == JOB
    finally:
        store.close()
    return diamond_config(str(_sites(tmp_path)), str(store_path))


async def _in_a_thread(fn: Any, *args: Any) -> Any:
    """`fn(*args)` in a daemon thread of its own, awaited at most GUARD_S: the server on
    this loop goes on serving meanwhile, and a magic that never returns fails the test
    without holding the loop's executor (whose shutdown would wait for it)."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future = loop.create_future()

    def settle(how: str, value: Any) -> None:
        if not done.done():
            getattr(done, how)(value)

    def run() -> None:
        try:
            got = fn(*args)
        except BaseException as e:  # handed to the test
            loop.call_soon_threadsafe(settle, "set_exception", e)
        else:
            loop.call_soon_threadsafe(settle, "set_result", got)
    threading.Thread(target=run, daemon=True).start()
    return await asyncio.wait_for(done, GUARD_S)


async def test_the_magic_through_the_server_names_each_link_and_follows_none(
        jp_fetch, jp_serverapp, jp_http_port, jp_base_url, jp_root_dir, job_dirs, capsys,
        monkeypatch):
    from diamond_jupyter.kernel import magics
    from diamond_jupyter.kernel.rest import ServerClient

    wd, secret = job_dirs
    monkeypatch.chdir(jp_root_dir)  # the notebook's directory, in the server's root
    m = magics.DiamondMagics.__new__(magics.DiamondMagics)
    m.handles = {}
    m._engine = ServerClient(f"http://localhost:{jp_http_port}{jp_base_url}",
                             jp_serverapp.identity_provider.token, root_dir=str(jp_root_dir))
    try:
        paths = await _in_a_thread(m.diamond, f"fetch {JOB} out")
        out = capsys.readouterr().out
        dest = jp_root_dir / "out"
        assert paths == [dest / "result.txt", dest / "run1" / "out.dat"]
        assert _said(out) == _expected(wd, secret, wd.resolve())
        assert _links_in(jp_root_dir) == [] and not (dest / "keys").exists()
    finally:
        await _in_a_thread(m.close)
