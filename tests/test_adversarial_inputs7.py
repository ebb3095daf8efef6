"""The seventh sweep of hostile inputs, one trust boundary at a time: the names a job gives its
result files, the sites file and ~/.ssh settings from the center, the store's directory that
another local user can write to, a Globus answer, a shared SWF trace, the agent's model (a
turn whose tool calls break the protocol; a hedged submission after its approval), REST
bodies and tool arguments with odd numbers, and what a hostile cluster prints.

The standard is the earlier sweeps' (tests/test_adversarial_inputs.py and after): bad input
is refused with one line naming what, where and what would be accepted; what comes from a
site, a job or a service is data, never a command, a record, a line of its own or a path
outside its place. Tests of attacks that already failed safely say so ("guard")."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any

import pytest
import yaml

from diamond_jupyter.model import JobSpec

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")

ESC = "\x1b]52;c;cm0gLXJmIH4K\x07"  # writes the terminal's clipboard
FORGED = "a\nFORGED-LINE.txt"  # a result file's name: a newline, then what looks like a file


# -- 1. the names a job gives its result files, listed on a terminal ---------------------------

def _fetchable_job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A finished job on a local site whose directory holds a plain result and files named
    with a newline and an escape sequence; the CLI's environment points at it."""
    from diamond_jupyter.store import Store

    wd = tmp_path / "wd"
    wd.mkdir()
    (wd / "ok.txt").write_text("result\n")
    (wd / FORGED).write_text("x\n")
    (wd / f"b{ESC}c").write_text("x\n")
    data, home = tmp_path / "data", tmp_path / "home"
    home.mkdir()
    store = Store(data / "diamond.sqlite3")
    store.record_intent("here", "abc123abc123", JobSpec(script="true\n",
                                                        working_directory=str(wd)))
    job = store.bind_native_id("abc123abc123", "41").id
    store.close()
    sites = tmp_path / "sites.yaml"
    sites.write_text(yaml.safe_dump({"sites": [{"name": "here", "transport": {"kind": "local"},
                                                "workdir": str(home / ".diamond")}]}))
    for k, v in {"DIAMOND_DATA_DIR": str(data), "HOME": str(home),
                 "DIAMOND_CONFIG": str(sites), "DIAMOND_ENGINE": "local"}.items():
        monkeypatch.setenv(k, v)
    return job


def test_diamond_fetch_lists_a_name_holding_a_newline_on_one_line(tmp_path, monkeypatch, capsys):
    """A job named a result file `a\\nFORGED-LINE.txt`: `diamond fetch` printed the paths
    joined by newlines, so the listing showed a line `FORGED-LINE.txt` that no file written
    has (a name can hold any character but `/` and NUL). Each name is one line now, its
    newline written out."""
    from diamond_jupyter.cli.main import main

    job = _fetchable_job(tmp_path, monkeypatch)
    dest = tmp_path / "dest"
    assert main(["fetch", job, str(dest)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3, lines
    assert all(line.startswith(str(dest) + "/") for line in lines), lines
    assert f"{dest}/a\\x0aFORGED-LINE.txt" in lines
    assert not any("\x1b" in line or "\x07" in line for line in lines)
    assert (dest / FORGED).read_text() == "x\n"  # the file itself is fetched as named


def test_diamond_fetch_says_each_skipped_name_on_one_line(tmp_path, monkeypatch, capsys):
    """The skipped list (`diamond: skipped NAME: why`, on stderr) wrote a name's newline as
    it was: the rest of the name stood alone on a line of its own, without the prefix."""
    from diamond_jupyter.cli.main import main

    job = _fetchable_job(tmp_path, monkeypatch)
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / FORGED).write_text("mine\n")  # no fetch of this job wrote it: skipped
    assert main(["fetch", job, str(dest)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert all(line.startswith("diamond: ") for line in err), err
    assert any(line.startswith("diamond: skipped a\\x0aFORGED-LINE.txt: ") for line in err)
    assert (dest / FORGED).read_text() == "mine\n"


def test_the_magic_and_the_handle_list_each_fetched_or_skipped_name_on_one_line(capsys):
    """`%diamond fetch`, `handle.fetch()` and `%diamond transfer` printed names with
    `visible`, which keeps newlines: a name split into two lines of the listing."""
    from diamond_jupyter.kernel import magics
    from diamond_jupyter.kernel.handle import JobHandle

    class Engine:
        def call(self, coro: Any) -> Any:
            return asyncio.run(coro)

        async def fetch(self, job: str, dest: Any, files: Any = None,
                        overwrite: bool = False) -> dict[str, Any]:
            return {"dest": "/w", "paths": [f"/w/{FORGED}", "/w/ok.txt"],
                    "skipped": [f"{FORGED}: a local file no fetch of this job wrote"]}

        async def transfer(self, *a: Any, **kw: Any) -> dict[str, Any]:
            return {"id": "t1", "src": "a:/x", "dst": "/y", "state": "SUCCEEDED",
                    "data": {"skipped": [f"{FORGED}: already there"]}}

    m = magics.DiamondMagics.__new__(magics.DiamondMagics)
    m._engine = Engine()
    m.do_fetch(argparse.Namespace(job="here:41", dest=None, file=None, overwrite=False), None)
    m.do_transfer(argparse.Namespace(src="a:/x", dst="/y", via=None, recursive=True,
                                     overwrite=False), None)
    handle = JobHandle.__new__(JobHandle)
    handle._engine, handle._job = Engine(), argparse.Namespace(id="here:41")  # its id only
    handle.fetch()
    got = capsys.readouterr()
    lines = got.out.splitlines() + got.err.splitlines()
    assert "FORGED-LINE.txt" not in lines and "FORGED-LINE.txt: already there" not in lines
    assert lines.count("/w/a\\x0aFORGED-LINE.txt") == 1
    assert sum("skipped a\\x0aFORGED-LINE.txt: " in line for line in lines) == 3, lines
