"""REST bodies have a size limit (413 before anything parses or stores them), and user
scripts are parsed off the server's event loop (a real Jupyter server with the extension)."""

from __future__ import annotations

import asyncio
import threading

import pytest

from diamond_jupyter.federation import Federation

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")
HELLO = "#!/bin/bash\n#SBATCH -N 1\nhostname\n"


@pytest.fixture
def jp_server_config(tmp_path, data_dir, monkeypatch):
    from server_conftest import diamond_config

    monkeypatch.setenv("HOME", str(tmp_path))
    sites = tmp_path / "sites.yaml"
    sites.write_text("sites:\n  - name: alpha\n    scheduler: slurm\n"
                     "    transport: {kind: local}\n")
    cfg = diamond_config(str(sites), str(tmp_path / "store.sqlite3"))
    cfg["DiamondApp"]["max_body_bytes"] = 64 * 1024
    return cfg


@pytest.mark.parametrize("route", ["jobs", "translate", "place", "transfers", "tasks"])
async def test_an_oversized_body_is_refused_with_413(api, route):
    script = HELLO + "#" * (200 * 1024) + "\n"  # 200 KB over a 64 KB limit
    r = await api.call("POST", route, {"script": script, "to": "pbs", "prompt": script,
                                       "src": script, "dst": "alpha:x"}, expect=413)
    assert r.body["reason"] == "too-large"
    assert "at most 65536" in r.body["message"] and "max_body_bytes" in r.body["message"]
    assert (await api.get("jobs"))["total"] == 0


async def test_a_body_under_the_limit_is_served(api):
    out = await api.post("translate", {"script": HELLO, "to": "pbs"})
    assert "#PBS" in out["script"]


async def test_scripts_are_parsed_off_the_event_loop(api, monkeypatch):
    threads: list[tuple[str, bool]] = []
    real = Federation.parse

    def parse(text: str, dialect: str | None = None):
        try:
            asyncio.get_running_loop()
            on_loop = True
        except RuntimeError:
            on_loop = False
        threads.append((threading.current_thread().name, on_loop))
        return real(text, dialect)

    monkeypatch.setattr(Federation, "parse", staticmethod(parse))
    await api.call("POST", "place", {"script": HELLO}, expect=None, validate=False)
    await api.call("POST", "jobs", {"script": HELLO, "site": "alpha"}, expect=None,
                   validate=False)
    assert len(threads) == 2
    assert not any(on_loop for _, on_loop in threads), threads
