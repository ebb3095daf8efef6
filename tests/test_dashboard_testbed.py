"""The dashboard on the real test bed, through a real `jupyter server` (a subprocess, so it
can be restarted): background load from `diamond testbed load` shows in the queues as
jobs that are not this user's, the user's own job is marked mine, and the usage series
accrues from the snapshots the server takes and is still there after a restart.

The test bed has one cluster login, so the load's jobs belong to the same Unix user as the
diamond job; "mine" means one of this user's diamond jobs."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from diamond_jupyter.testbed.load import cancel as cancel_load

pytestmark = pytest.mark.testbed

ROOT = Path(__file__).resolve().parents[1]
BOUND_S = 240.0  # generous: the machine is loaded on purpose during CI


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """`jupyter server` with the diamond extension on the test bed's sites file."""

    def __init__(self, tmp: Path, config: Path) -> None:
        self.tmp, self.config = tmp, config
        self.port, self.token = _port(), secrets.token_hex(16)
        self.proc: subprocess.Popen | None = None

    def start(self) -> Server:
        env = {**os.environ, "DIAMOND_CONFIG": str(self.config),
               "DIAMOND_DATA_DIR": str(self.tmp / "data"),
               "JUPYTER_CONFIG_DIR": str(self.tmp / "config"),
               "JUPYTER_RUNTIME_DIR": str(self.tmp / "runtime"),
               "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        (self.tmp / "root").mkdir(exist_ok=True)
        log = (self.tmp / "server.log").open("a")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "jupyter", "server", "--no-browser", f"--port={self.port}",
             "--ip=127.0.0.1", f"--ServerApp.token={self.token}", "--ServerApp.port_retries=0",
             "--allow-root", f"--ServerApp.root_dir={self.tmp / 'root'}",
             f"--DiamondApp.store_path={self.tmp / 'store.sqlite3'}"],
            env=env, stdout=log, stderr=subprocess.STDOUT, cwd=self.tmp / "root")
        deadline = time.monotonic() + 120
        while True:
            assert self.proc.poll() is None, (self.tmp / "server.log").read_text()[-3000:]
            try:
                self.get("/api/status")
                return self
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                assert time.monotonic() < deadline, "the server did not answer"
                time.sleep(0.25)  # not listening yet: refused at once

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None

    def call(self, method: str, path: str, body: Any = None) -> Any:
        req = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}", method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": f"token {self.token}",
                     "Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=120) as resp:
            return json.loads(resp.read() or b"null")

    def get(self, path: str) -> Any:
        return self.call("GET", path)


def _until(what: str, check: Any, seen: Any = None, bound_s: float = BOUND_S) -> Any:
    """Ask `check()` again (each call a real request) until it returns something truthy;
    `seen()` says what there was when it never did."""
    deadline = time.monotonic() + bound_s
    while True:
        got = check()
        if got:
            return got
        assert time.monotonic() < deadline, \
            f"not within {bound_s:.0f} s: {what}; last seen: {seen() if seen else ''}"
        time.sleep(1.0)


def test_dashboard_shows_the_load_marks_my_job_and_keeps_usage_across_a_restart(tb, tmp_path):
    # jobs of a few real minutes (time scale 2), submitted over 20 s
    load_log = (tmp_path / "load.log").open("w")
    load = subprocess.Popen(
        [sys.executable, "-m", "diamond_jupyter.cli", "testbed", "load", "--profile", "busy",
         "--seed", "3", "--duration", "20", "--time-scale", "2", "--json"],
        stdout=load_log, stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(
            [str(ROOT), os.environ.get("PYTHONPATH", "")])})
    server = Server(tmp_path, tb.config_path).start()
    job = None
    try:
        job = server.call("POST", "/diamond/api/jobs", {
            "site": "alpha", "name": "dash-mine",
            "script": "#!/bin/bash\n#SBATCH -t 10\nsleep 600\n"})
        native = job["id"].split(":", 1)[1]

        last: dict = {}

        def summary() -> str:
            return json.dumps({s["name"]: [(r["id"], r["name"], r["state"], r["mine"])
                                          for r in s["queue"]][:12] + [s["error"]]
                               for s in last.get("sites", [])}) + " load: " + \
                (tmp_path / "load.log").read_text()[-500:]

        def dash_shows_both() -> dict | None:
            d = last["d"] = server.get("/diamond/api/dashboard")
            last["sites"] = d["sites"]
            rows = {s["name"]: s["queue"] for s in d["sites"]}
            alpha = rows.get("alpha", [])
            mine = [r for r in alpha if r["mine"]]
            others = [r for q in rows.values() for r in q
                      if (r["name"] or "").startswith("load-") and not r["mine"]]
            return d if mine and others else None
        d = _until("the dashboard lists the load's jobs and mine", dash_shows_both, summary)
        rows = [r for s in d["sites"] for r in s["queue"]]
        mine = [r for r in rows if r["mine"]]
        assert [(r["id"], r["job"]) for r in mine] == [(native, job["id"])]
        others = [r for r in rows if (r["name"] or "").startswith("load-")]
        assert others and not any(r["mine"] or r["job"] for r in others)
        assert all(r["state"] in ("PENDING", "RUNNING") for r in rows)
        assert {s["name"] for s in d["sites"]} == set(tb.sites)
        for s in d["sites"]:
            assert s["busy"]["cpus"] <= s["totals"]["cpus"], s["name"]

        # the series grows with the snapshots the dashboard (like the sidebar) asks for
        def two_points() -> list | None:
            server.get("/diamond/api/dashboard")
            pts = server.get("/diamond/api/sites/alpha/usage?hours=1")["points"]
            return pts if len(pts) >= 2 else None
        before = _until("two usage points on alpha", two_points)
        assert all(p["busy_cpus"] >= 0 and p["pending"] >= 0 for p in before)
        assert [p["t"] for p in before] == sorted(p["t"] for p in before)
        assert any(p["running"] + p["pending"] > 0 for p in before)

        server.stop()
        server.start()  # same store: the series is still there, before any snapshot
        after = server.get("/diamond/api/sites/alpha/usage?hours=1")["points"]
        assert before[:-1] == after[:len(before) - 1]  # the last may be refined since
        assert len(after) >= len(before)
    finally:
        if job is not None and server.proc is not None:
            try:
                server.call("POST", f"/diamond/api/jobs/{job['id']}/cancel")
            except urllib.error.URLError:
                pass
        server.stop()
        try:
            load.wait(timeout=120)
        except subprocess.TimeoutExpired:
            load.kill()
        asyncio.run(cancel_load(tb.config_path))
