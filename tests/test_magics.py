"""`%diamond` magics in a real ipykernel against the real local Slurm test bed.

Kernels are driven with jupyter_client (every iopub message is kept, so updates that arrive
after a cell has finished can be checked) or nbclient (a whole notebook). Waiting is always
on a message or a line of output, never on a timer.
"""

from __future__ import annotations

import json
import os
import queue
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("ipykernel")
jupyter_client = pytest.importorskip("jupyter_client")

ROOT = Path(__file__).resolve().parents[1]
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
CARD_MIME = "application/vnd.diamond.job+json"
ANSI = re.compile(r"\x1b\[[0-9;]*m")
TIMEOUT = 120.0

pytestmark = pytest.mark.timeout(300)


def kernel_env(tb: Any, data_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("DIAMOND_NO_WIDGETS", "DIAMOND_ENGINE", "DIAMOND_SERVER_URL")}
    env.update(DIAMOND_CONFIG=str(tb.config_path), DIAMOND_DATA_DIR=str(data_dir),
               PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p))
    env.update(extra)
    return env


class Kernel:
    """A kernel client that keeps every iopub message in arrival order."""

    def __init__(self, kc: Any, km: Any = None) -> None:
        self.kc, self.km = kc, km
        self.log: list[dict[str, Any]] = []

    @classmethod
    def start(cls, env: dict[str, str], cwd: Path) -> Kernel:
        km = jupyter_client.KernelManager(kernel_name="python3")
        km.start_kernel(env=env, cwd=str(cwd))
        kc = km.client()
        kc.start_channels()
        kc.wait_for_ready(timeout=60)
        return cls(kc, km)

    def stop(self) -> None:
        self.kc.stop_channels()
        if self.km is not None:
            self.km.shutdown_kernel(now=True)

    def read_until(self, pred: Callable[[dict[str, Any]], bool],
                   timeout: float = TIMEOUT) -> dict[str, Any]:
        for m in self.log:  # maybe it already arrived
            if pred(m):
                return m
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            try:
                m = self.kc.get_iopub_msg(timeout=max(left, 0.01))
            except queue.Empty:
                raise AssertionError(f"no matching iopub message within {timeout}s") from None
            self.log.append(m)
            if pred(m):
                return m

    def execute(self, code: str, cell_id: str | None = None) -> str:
        """Run one cell; returns its msg_id once the kernel went idle for it."""
        content = {"code": code, "silent": False, "store_history": True,
                   "user_expressions": {}, "allow_stdin": False, "stop_on_error": True}
        msg = self.kc.session.msg("execute_request", content,
                                  metadata={"cellId": cell_id} if cell_id else {})
        self.kc.shell_channel.send(msg)
        mid = msg["header"]["msg_id"]
        self.read_until(lambda m: m["msg_type"] == "status"
                        and m["parent_header"].get("msg_id") == mid
                        and m["content"]["execution_state"] == "idle")
        while True:
            reply = self.kc.get_shell_msg(timeout=TIMEOUT)
            if reply["parent_header"].get("msg_id") == mid:
                assert reply["content"]["status"] == "ok", reply["content"]
                return mid

    def index_of_idle(self, mid: str) -> int:
        return next(i for i, m in enumerate(self.log) if m["msg_type"] == "status"
                    and m["parent_header"].get("msg_id") == mid
                    and m["content"]["execution_state"] == "idle")

    def outputs(self, mid: str) -> list[dict[str, Any]]:
        return [m for m in self.log if m["parent_header"].get("msg_id") == mid and m["msg_type"]
                in ("stream", "display_data", "execute_result", "error")]

    def text(self, mid: str, name: str | None = None) -> str:
        out = []
        for m in self.outputs(mid):
            c = m["content"]
            if m["msg_type"] == "stream" and (name is None or c["name"] == name):
                out.append(c["text"])
            elif m["msg_type"] in ("display_data", "execute_result") and name is None:
                out.append(c["data"].get("text/plain", ""))
        return ANSI.sub("", "".join(out))


@pytest.fixture
def kernel_factory(tmp_path):
    kernels: list[Kernel] = []

    def start(env: dict[str, str]) -> Kernel:
        k = Kernel.start(env, tmp_path)
        kernels.append(k)
        return k
    yield start
    for k in kernels:
        k.stop()


def _store_job(tb: Any, job_id: str) -> Any:
    from diamond_jupyter.federation import Federation

    return Federation(tb.config_path).job(job_id)


# -- a notebook, executed by nbclient ----------------------------------------------------------

def test_notebook_submit_wait_result(tb, data_dir, tmp_path, monkeypatch):
    """A notebook run by nbclient, then converted by nbconvert: the saved cards show how the
    jobs ended (state, stdout, stderr of the failed one, files) with no kernel and no
    widget state."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nbconvert = pytest.importorskip("nbconvert")
    for k, v in kernel_env(tb, data_dir).items():
        monkeypatch.setenv(k, v)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in (
        "%load_ext diamond_jupyter",
        "%diamond sites",
        "%%diamond submit --site alpha --time 00:05:00\necho hello-from-slurm",
        "job = _\nprint(job.id)\nprint(job.wait(timeout=120).state)",
        "print(job.result())",
        "%diamond jobs",
        "%%diamond submit --site alpha\necho about-to-fail >&2\nexit 3",
        "bad = _\nprint(bad.wait(timeout=120).state)",
    )]
    nbclient.NotebookClient(nb, timeout=180, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()

    def text(i: int) -> str:
        parts = []
        for o in nb.cells[i].outputs:
            parts.append(o.get("text", "") if o.output_type == "stream"
                         else o.get("data", {}).get("text/plain", ""))
        return ANSI.sub("", "".join(parts))

    assert "alpha" in text(1) and "beta" in text(1)
    job_id, state = text(3).split()
    assert state == "COMPLETED"
    assert "hello-from-slurm" in text(4)
    assert job_id in text(5)
    assert _store_job(tb, job_id).state.value == "COMPLETED"
    assert text(7).strip() == "FAILED"

    # The saved cards: no widget, the final state in all three parts.
    for i in (2, 6):
        assert not any(WIDGET_MIME in o.get("data", {}) for o in nb.cells[i].outputs)
    card = nb.cells[2].outputs[0]["data"]
    assert card[CARD_MIME]["job"]["id"] == job_id
    assert card[CARD_MIME]["job"]["state"] == "COMPLETED"
    assert card[CARD_MIME]["time_limit_s"] == 300
    assert "hello-from-slurm" in card[CARD_MIME]["stdout_tail"]
    assert "stdout.log" in " ".join(card[CARD_MIME]["files"])
    assert "COMPLETED" in card["text/plain"] and "of 0:05:00 limit" in card["text/plain"]
    failed = nb.cells[6].outputs[0]["data"]
    assert failed[CARD_MIME]["job"]["state"] == "FAILED"
    assert failed[CARD_MIME]["job"]["exit_code"] == 3
    assert "about-to-fail" in failed[CARD_MIME]["stderr_tail"]
    assert "stderr (tail)" in failed["text/plain"] and "about-to-fail" in failed["text/plain"]

    # Saved, reopened and converted without a kernel: the outcome is in the HTML.
    path = tmp_path / "saved.ipynb"
    nbformat.write(nb, path)
    body, _ = nbconvert.HTMLExporter().from_notebook_node(nbformat.read(path, as_version=4))
    assert f'data-diamond-job="{job_id}" data-diamond-state="COMPLETED"' in body
    assert "hello-from-slurm" in body
    assert 'data-diamond-state="FAILED"' in body and "about-to-fail" in body
    assert "Error displaying widget" not in body and "model not found" not in body
    text_body, _ = nbconvert.MarkdownExporter().from_notebook_node(nb)
    assert "COMPLETED" in text_body


# -- the card keeps updating after its cell finished --------------------------------------------

def test_card_updates_after_cell(tb, data_dir, kernel_factory):
    k = kernel_factory(kernel_env(tb, data_dir))
    k.execute("%load_ext diamond_jupyter")
    cell_id = "cell-" + uuid.uuid4().hex[:8]
    mid = k.execute("%%diamond submit --site alpha --name card-test\n"
                    "sleep 1\necho hello-from-slurm", cell_id=cell_id)
    idle = k.index_of_idle(mid)
    shown = [m for m in k.outputs(mid) if m["msg_type"] == "display_data"]
    assert shown, k.text(mid)
    first = shown[0]["content"]
    assert not any(WIDGET_MIME in m["content"]["data"] for m in shown)
    assert not [m for m in k.log if m["msg_type"] == "comm_open"]  # nothing that dies with us
    display_id = first["transient"]["display_id"]
    assert first["data"][CARD_MIME]["job"]["state"] in ("PENDING", "RUNNING")
    assert first["data"][CARD_MIME]["job"]["name"].startswith("card-test")

    def final(m: dict[str, Any]) -> bool:
        c = m["content"]
        return (m["msg_type"] == "update_display_data"
                and c.get("transient", {}).get("display_id") == display_id
                and c["data"][CARD_MIME]["job"]["state"] == "COMPLETED"
                and "hello-from-slurm" in (c["data"][CARD_MIME]["stdout_tail"] or ""))
    # No cell runs from here on: this arrives from the kernel's background thread.
    upd = k.read_until(final)
    assert k.log.index(upd) > idle
    assert upd["parent_header"].get("msg_id") == mid  # routed to the submit cell's output
    assert 'data-diamond-state="COMPLETED"' in upd["content"]["data"]["text/html"]
    assert "hello-from-slurm" in upd["content"]["data"]["text/plain"]

    mid2 = k.execute("job = _\nprint(job.id, job.wait(timeout=60).state)")
    job_id, state = k.text(mid2, "stdout").split()
    assert state == "COMPLETED"
    job = _store_job(tb, job_id)
    assert job.origin and job.origin.get("cell_id") == cell_id

    # A new kernel knows nothing of the handle: `%diamond card JOB` shows the job again.
    k2 = kernel_factory(kernel_env(tb, data_dir))
    k2.execute("%load_ext diamond_jupyter")
    mid3 = k2.execute(f"%diamond card {job_id}")
    again = [m for m in k2.outputs(mid3) if m["msg_type"] == "display_data"]
    assert again and again[0]["content"]["data"][CARD_MIME]["job"]["state"] == "COMPLETED"


# -- in-process engine: failures and bad input -------------------------------------------------

def test_local_engine_failed_job(tb, data_dir, kernel_factory):
    k = kernel_factory(kernel_env(tb, data_dir))
    k.execute("%load_ext diamond_jupyter")
    mid = k.execute("%diamond engine")
    assert k.text(mid).startswith("local: no Jupyter server found")
    k.execute("%%diamond submit --site alpha --time 00:05:00\necho about-to-fail >&2\nexit 3")
    mid = k.execute("job = _\ntry:\n    job.result(timeout=120)\n"
                    "except Exception as e:\n    print(type(e).__name__, '|', e)\n"
                    "print(job.state, job.exit_code)")
    out = k.text(mid, "stdout")
    assert "JobFailed | job" in out and "FAILED with exit code 3" in out
    assert "about-to-fail" in out
    assert out.strip().endswith("FAILED 3")


def test_bad_input_is_one_red_line(tb, data_dir, kernel_factory):
    k = kernel_factory(kernel_env(tb, data_dir))
    k.execute("%load_ext diamond_jupyter")
    for code, expect in (("%%diamond submit --site nope\necho x", "unknown site 'nope'"),
                         ("%diamond submit --nodes lots x.sh",
                          "--nodes: expected a whole number, 1 or more, not 'lots'"),
                         ("%diamond status alpha:999999999", "alpha:999999999")):
        mid = k.execute(code)
        outs = k.outputs(mid)
        assert not [m for m in outs if m["msg_type"] == "error"], code  # no traceback
        err = [m["content"]["text"] for m in outs if m["msg_type"] == "stream"
               and m["content"]["name"] == "stderr"]
        assert len(err) == 1 and err[0].count("\n") == 1, err
        assert err[0].startswith("\x1b[31mdiamond: ") and expect in err[0], err


def test_ask_without_agent_explains(tb, data_dir, kernel_factory):
    env = kernel_env(tb, data_dir)
    env.pop("ANTHROPIC_API_KEY", None)
    k = kernel_factory(env)
    k.execute("%load_ext diamond_jupyter")
    mid = k.execute("%%diamond ask\nrun hello on the least busy site")
    assert "ANTHROPIC_API_KEY" in k.text(mid) and "DiamondApp.llm_" in k.text(mid)


# -- through a real Jupyter server ----------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, env: dict[str, str], root: Path, extension: bool) -> None:
        self.port, self.token = _free_port(), uuid.uuid4().hex
        self.runtime = root / "runtime"
        self.url = f"http://127.0.0.1:{self.port}/"
        cmd = [sys.executable, "-m", "jupyter_server", "--no-browser", "--allow-root",
               "--ip=127.0.0.1",
               f"--port={self.port}", "--ServerApp.port_retries=0",
               f"--IdentityProvider.token={self.token}", f"--ServerApp.root_dir={root}"]
        # explicit either way: an installed package enables itself through jupyter-config
        cmd.append(f"--ServerApp.jpserver_extensions=diamond_jupyter={extension}")
        env = env | {"JUPYTER_RUNTIME_DIR": str(self.runtime)}
        self.proc = subprocess.Popen(cmd, env=env, cwd=root, stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []
        self._new: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._drain, daemon=True).start()
        self._ready()

    def _drain(self) -> None:
        for line in self.proc.stderr:
            self.lines.append(line)
            self._new.put(line)
        self._new.put("")  # EOF: the server exited

    def _ready(self) -> None:
        """The server logs its URL just before its loop binds the port: wait for the line,
        then until a connection is accepted (each refusal waits for more server output)."""
        deadline = time.monotonic() + 60
        seen_url = False
        while time.monotonic() < deadline:
            if seen_url:
                try:
                    socket.create_connection(("127.0.0.1", self.port), timeout=5).close()
                    return
                except ConnectionRefusedError:
                    pass
            try:
                line = self._new.get(timeout=0.1 if seen_url else deadline - time.monotonic())
            except queue.Empty:
                continue
            if line == "":
                break
            seen_url = seen_url or f"127.0.0.1:{self.port}/" in line
        raise AssertionError("jupyter server did not start:\n" + "".join(self.lines))

    def request(self, method: str, path: str, body: Any = None) -> Any:
        req = urllib.request.Request(self.url + path, method=method,
                                     data=json.dumps(body).encode() if body is not None else None,
                                     headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=120) as r:
            return json.loads(r.read() or b"null")

    def kernel(self) -> Kernel:
        kid = self.request("POST", "api/kernels", {"name": "python3"})["id"]
        kc = jupyter_client.BlockingKernelClient(
            connection_file=str(self.runtime / f"kernel-{kid}.json"))
        kc.load_connection_file()
        kc.start_channels(hb=False)  # not our kernel to watch; liveness is the server's job
        kc.wait_for_ready(timeout=60)
        return Kernel(kc)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)


@pytest.fixture
def server_factory(tmp_path):
    servers: list[tuple[Server, list[Kernel]]] = []

    def start(env: dict[str, str], extension: bool) -> Server:
        s = Server(env, tmp_path, extension)
        servers.append((s, []))
        return s
    yield start
    for s, _ in servers:
        s.stop()


DISCOVER = ("from diamond_jupyter.kernel import connect\n"
            "info = connect.find_server()\n"
            "print('FOUND', info and info['pid'], info and info['url'])\n"
            "e = connect.connect()\n"
            "print('ENGINE', e.kind, '|', e.note)\n")


def test_plain_server_discovery_falls_back(tb, data_dir, server_factory):
    """A plain server (no diamond extension): the kernel finds it by its parent pid, gets 404
    on diamond/api/state and runs the engine in-process."""
    srv = server_factory(kernel_env(tb, data_dir), extension=False)
    k = srv.kernel()
    try:
        mid = k.execute(DISCOVER)
        out = k.text(mid, "stdout")
        assert f"FOUND {srv.proc.pid} {srv.url}" in out
        assert "ENGINE local | " in out and "(404)" in out
    finally:
        k.kc.stop_channels()


def test_server_path(tb, data_dir, server_factory):
    srv = server_factory(kernel_env(tb, data_dir), extension=True)
    try:
        srv.request("GET", "diamond/api/state")
    except urllib.error.HTTPError as e:
        pytest.fail(f"server extension not loaded (diamond/api/state: {e.code}):\n"
                    + "".join(srv.lines[-20:]))
    k = srv.kernel()
    try:
        mid = k.execute(DISCOVER)
        assert f"FOUND {srv.proc.pid}" in k.text(mid) and "ENGINE server" in k.text(mid)
        k.execute("%load_ext diamond_jupyter")
        mid = k.execute("%diamond sites")
        assert "alpha" in k.text(mid) and "gamma" in k.text(mid)
        mid = k.execute("%%diamond submit --site beta --time 00:02:00\n"
                        "sleep 2\necho via-the-server")
        shown = [m for m in k.outputs(mid) if m["msg_type"] == "display_data"]
        assert shown, k.text(mid)
        display_id = shown[0]["content"]["transient"]["display_id"]
        idle = k.index_of_idle(mid)
        # the card's record keeps updating from the server's events after the cell ended
        done = k.read_until(lambda m: m["msg_type"] == "update_display_data"
                            and m["content"].get("transient", {}).get("display_id")
                            == display_id
                            and m["content"]["data"][CARD_MIME]["job"]["state"]
                            == "COMPLETED")
        assert k.log.index(done) > idle
        mid = k.execute("job = _\nprint(job.wait(timeout=60).state)\nprint(job.result())")
        out = k.text(mid, "stdout")
        assert "COMPLETED" in out and "via-the-server" in out
        jobs = srv.request("GET", "diamond/api/jobs?site=beta")["jobs"]
        assert any(j["state"] == "COMPLETED" for j in jobs)
    finally:
        k.kc.stop_channels()


def test_commands_in_one_kernel(tb, data_dir, kernel_factory, tmp_path):
    """place, translate, queue, the line form of submit, logs, files, fetch and cancel."""
    (tmp_path / "job.sh").write_text("#!/bin/bash\n#SBATCH --time=00:05:00\n"
                                     "echo result > out.txt\necho line-form-done\n")
    k = kernel_factory(kernel_env(tb, data_dir))
    k.execute("%load_ext diamond_jupyter")
    mid = k.execute("%%diamond place\n#SBATCH --nodes=1\n#SBATCH --time=00:10:00\nhostname")
    assert "policy diamond; choice" in k.text(mid) and "alpha" in k.text(mid)
    mid = k.execute("%%diamond translate --to pbs\n#SBATCH --nodes=2\n#SBATCH --exclude=n1\n"
                    "echo x")
    assert "#PBS -l" in k.text(mid, "stdout")
    assert "dropped: #SBATCH --exclude=n1" in k.text(mid, "stderr")
    mid = k.execute("%diamond queue alpha")
    assert k.outputs(mid) and not [m for m in k.outputs(mid) if m["msg_type"] == "error"]

    mid = k.execute("h = %diamond submit --site gamma job.sh\n"
                    "print(h.wait(timeout=120).state)\n"
                    "%diamond logs $h.id\n"
                    "print(sorted(p.rsplit('/', 1)[-1] for p in h.files()))\n"
                    "print([p.name for p in h.fetch('results')])")
    out = k.text(mid, "stdout")
    assert "COMPLETED" in out and "line-form-done" in out
    assert "'out.txt'" in out and (tmp_path / "results" / "out.txt").read_text() == "result\n"

    mid = k.execute("%diamond transfer results/out.txt alpha:from-notebook.txt\n"
                    "%diamond transfer alpha:from-notebook.txt back.txt")
    assert k.text(mid, "stdout").count("SUCCEEDED") == 2
    assert (tmp_path / "back.txt").read_text() == "result\n"

    k.execute("%%diamond submit --site beta --name to-cancel\nsleep 300")
    mid = k.execute("job = _\njob.cancel()\nprint(job.wait(timeout=120).state)")
    assert k.text(mid, "stdout").split()[-1] == "CANCELLED"


def test_rest_site_logs_and_fetch_in_a_kernel(tb, data_dir, kernel_factory, tmp_path):
    """A job on the slurmrestd site: its log and results come through the site's file door."""
    (tmp_path / "rest.sh").write_text("#!/bin/bash\necho magic-rest\necho kept > kept.txt\n")
    k = kernel_factory(kernel_env(tb, data_dir))
    k.execute("%load_ext diamond_jupyter")
    mid = k.execute("h = %diamond submit --site beta-rest rest.sh\n"
                    "print(h.wait(timeout=240).state)\n"
                    "%diamond logs $h.id\n"
                    "print([p.name for p in h.fetch('rest-out')])")
    out = k.text(mid, "stdout")
    assert "COMPLETED" in out and "magic-rest" in out, k.text(mid)
    assert (tmp_path / "rest-out" / "kept.txt").read_text() == "kept\n"
