"""Fixtures for the browser tests: a real `jupyter lab` and Debian chromium.

No mocks: the server is a real JupyterLab with the installed diamond-jupyter
server extension, configured with the real local Slurm test bed
(`diamond_jupyter.testbed.up()`, idempotent; never taken down here).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = os.environ.get("DIAMOND_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--headless",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = Path(__file__).parent / "screenshots"
DOCS_IMG = Path(__file__).resolve().parent.parent / "docs" / "img"


def publish(*shots: Path) -> None:
    """Copy screenshots to docs/img (the README's images) when DIAMOND_UPDATE_DOCS_IMG is
    set; an ordinary test run leaves the tracked images alone."""
    if os.environ.get("DIAMOND_UPDATE_DOCS_IMG"):
        DOCS_IMG.mkdir(parents=True, exist_ok=True)
        for shot in shots:
            shutil.copyfile(shot, DOCS_IMG / shot.name)
STARTUP_TIMEOUT_S = 90


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _labextension_installed() -> bool:
    out = subprocess.run(
        [sys.executable, "-m", "jupyter", "labextension", "list"],
        capture_output=True,
        text=True,
        check=False,
    )
    text = out.stdout + out.stderr
    return any(
        line.split()[:1] == ["diamond-jupyter"] and "enabled" in line
        for line in text.splitlines()
    )


def _wait_for_status(url: str, token: str, proc: subprocess.Popen, log: Path) -> None:
    """Return once GET /api/status answers 200 to our token."""
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    request = urllib.request.Request(url, headers={"Authorization": f"token {token}"})
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"jupyter lab exited ({proc.returncode}):\n{log.read_text()}")
        try:
            with urllib.request.urlopen(request, timeout=2) as resp:
                if resp.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"jupyter lab did not answer {url}:\n{log.read_text()}")
        # The server is not listening yet; connection refused returns at once.
        time.sleep(0.25)


def api(server: dict, method: str, path: str, body: Any = None, timeout: float = 60) -> Any:
    """Call the server's REST API with its token; JSON in and out."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(
        f"{server['url']}/{path.lstrip('/')}", data=data, method=method,
        headers={"Authorization": f"token {server['token']}",
                 "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        text = resp.read().decode()
    return json.loads(text) if text else None


@pytest.fixture(scope="session")
def testbed_config() -> Path:
    """The test bed's sites file (brought up if needed; left up for the others)."""
    from diamond_jupyter import testbed

    testbed.lock.hold()
    return Path(testbed.up()["config"])


def serve_this_checkouts_labextension(tmp: Path, env: dict[str, str],
                                      built: Path | None = None) -> None:
    """When this checkout has a built labextension (or `built` is given: another build,
    e.g. an earlier commit's for a before/after benchmark), the server loads it (first on
    JUPYTER_PATH wins) rather than a copy installed into the environment from elsewhere."""
    built = built or Path(__file__).resolve().parent.parent / "diamond_jupyter" / "labextension"
    if not (built / "package.json").exists():
        return
    ext = tmp / "jupyter-path" / "labextensions"
    ext.mkdir(parents=True, exist_ok=True)
    link = ext / "diamond-jupyter"
    if not link.exists():
        link.symlink_to(built, target_is_directory=True)
    env["JUPYTER_PATH"] = os.pathsep.join(
        p for p in (str(tmp / "jupyter-path"), env.get("JUPYTER_PATH")) if p)


def start_lab(tmp: Path, *, diamond_config: Path | None, store: Path | None = None,
              extra_args: tuple[str, ...] = (),
              env: dict[str, str] | None = None, port: int | None = None,
              token: str | None = None,
              labextension: Path | None = None) -> tuple[subprocess.Popen, dict]:
    """Start `jupyter lab` in `tmp` and wait until it answers; returns (proc, info).
    `env`: extra environment variables of the server (e.g. the agent's LLM settings);
    `port`, `token`: those of a previous start in `tmp` (a restart the open page survives);
    `labextension`: a built labextension directory served instead of this checkout's."""
    root = tmp / "root"
    root.mkdir(parents=True, exist_ok=True)
    extra_env = env or {}
    env = dict(os.environ)
    env.pop("DIAMOND_CONFIG", None)
    if diamond_config is not None:
        env["DIAMOND_CONFIG"] = str(diamond_config)
    env["DIAMOND_DATA_DIR"] = str(tmp / "data")
    env.update(extra_env)
    serve_this_checkouts_labextension(tmp, env, labextension)
    env.update(
        JUPYTER_CONFIG_DIR=str(tmp / "config"),
        JUPYTER_RUNTIME_DIR=str(tmp / "runtime"),
        JUPYTERLAB_SETTINGS_DIR=str(tmp / "settings"),
        JUPYTERLAB_WORKSPACES_DIR=str(tmp / "workspaces"),
    )
    # No "fetch Jupyter news?" toast (nor a request to the internet).
    notes = tmp / "settings" / "@jupyterlab" / "apputils-extension"
    notes.mkdir(parents=True, exist_ok=True)
    (notes / "notification.jupyterlab-settings").write_text(
        '{"fetchNews": "false", "checkForUpdates": false}'
    )
    port = port or _free_port()
    token = token or secrets.token_hex(16)
    log = tmp / "server.log"
    args = ["--DiamondApp.store_poll_s=0.25", *extra_args]
    if store is not None:
        args.append(f"--DiamondApp.store_path={store}")
    with log.open("w") as log_file:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "jupyter",
                "lab",
                "--no-browser",
                f"--port={port}",
                "--ip=127.0.0.1",
                f"--ServerApp.token={token}",
                "--ServerApp.port_retries=0",
                "--allow-root",
                f"--ServerApp.root_dir={root}",
                *args,
            ],
            env=env,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            cwd=root,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_for_status(f"{base}/api/status", token, proc, log)
    except BaseException:
        stop_lab(proc)
        raise
    return proc, {"url": base, "token": token, "root": root, "log": log}


def stop_lab(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="module")
def bare_lab(tmp_path_factory):
    """`jupyter lab` with the extension and no sites file, for a module's tests."""
    proc, info = start_lab(tmp_path_factory.mktemp("bare-lab"), diamond_config=None)
    try:
        yield info
    finally:
        stop_lab(proc)


@pytest.fixture(scope="module")
def lab_server(tmp_path_factory, testbed_config):
    """A real `jupyter lab` on the test bed; yields {"url", "token", "root", "log"}."""
    if not _labextension_installed():
        pytest.fail(
            "diamond-jupyter is not in `jupyter labextension list`: run "
            "`pip install -e .` (or `jlpm build && jupyter labextension develop . --overwrite`)"
        )
    proc, info = start_lab(tmp_path_factory.mktemp("lab"), diamond_config=testbed_config)
    try:
        yield info
    finally:
        stop_lab(proc)


def confirm(page, button, text: str, attempts: int = 3):
    """Click `button` until its confirmation dialog (containing `text`) is up, and return
    the dialog: on a busy machine a click can land on a row being drawn again (a state
    change) and be lost, which a user would just repeat."""
    from playwright.sync_api import expect

    dialog = page.locator(".jp-Dialog")
    for _ in range(attempts):
        if dialog.count():  # a slow one is up now: a second click would be blocked by it
            break
        button.click()
        try:
            expect(dialog).to_contain_text(text, timeout=15_000)
            return dialog
        except AssertionError:
            continue
    expect(dialog).to_contain_text(text)
    return dialog


def load_lab(page, server: dict, path: str = "lab") -> None:
    page.goto(f"{server['url']}/{path}?token={server['token']}")
    # The app shell is up once the splash screen is gone and the left bar exists.
    page.wait_for_selector("#jupyterlab-splash", state="detached", timeout=60_000)
    page.wait_for_selector(".jp-SideBar.jp-mod-left", timeout=60_000)
    wait_for_main_area(page)


def wait_for_main_area(page) -> None:
    """Return once JupyterLab has put its first widget in the main area and activated it.
    That activation takes the focus (into the Launcher, which is made only after the file
    browser has read its folder from the server): on a busy machine seconds after the
    sidebar shows, so a keyboard test started before it lost its focus mid-way."""
    page.wait_for_selector("#jp-main-dock-panel .lm-TabBar-tab.lm-mod-current",
                           timeout=60_000)
    # Lumino delivers the activate-request on an animation frame: two frames, and it is done
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists() and not shutil.which(CHROMIUM):
        pytest.skip(f"no chromium at {CHROMIUM}")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture(scope="module")
def lab_page(lab_server, browser):
    """A page with JupyterLab loaded; `page.diamond_errors` collects page errors."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(f"{err.message}\n{err.stack or ''}"))
    load_lab(page, lab_server)
    page.diamond_errors = errors  # type: ignore[attr-defined]
    SCREENSHOTS.mkdir(exist_ok=True)
    try:
        yield page
    finally:
        context.close()
