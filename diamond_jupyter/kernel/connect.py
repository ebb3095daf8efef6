"""Which engine the kernel uses: the Jupyter server that started it, when that server runs the
diamond extension, else the engine in-process."""

from __future__ import annotations

import os
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from ..model import SiteError
from .engine import Engine
from .inprocess import LocalEngine


def find_server() -> dict[str, Any] | None:
    """The Jupyter server that started this kernel: its runtime file, matched by parent pid."""
    if os.environ.get("DIAMOND_SERVER_URL"):
        return {"url": os.environ["DIAMOND_SERVER_URL"],
                "token": os.environ.get("DIAMOND_SERVER_TOKEN", ""), "pid": None}
    try:
        from jupyter_server.serverapp import list_running_servers
    except ImportError:
        return None
    ppid = os.getppid()
    for info in list_running_servers():
        if info.get("pid") == ppid:
            hub_token = os.environ.get("JUPYTERHUB_API_TOKEN")
            if not info.get("token") and hub_token:  # a JupyterHub single-user server:
                info = {**info, "token": hub_token}  # it takes the hub's token of its user
            return info
    return None


def probe(info: dict[str, Any], timeout: float = 5.0) -> tuple[bool, str]:
    """Whether the server has the diamond extension: GET diamond/api/state."""
    url = info["url"].rstrip("/") + "/diamond/api/state"
    headers = {"Authorization": f"token {info['token']}"} if info.get("token") else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers),
                                    timeout=timeout):
            return True, f"Jupyter server {info['url']}"
    except urllib.error.HTTPError as e:
        if e.code == 404:
            return False, f"Jupyter server {info['url']} has no diamond extension (404)"
        return False, f"Jupyter server {info['url']} answered {e.code}"
    except OSError as e:
        return False, f"Jupyter server {info['url']} unreachable ({e})"


def connect(config: str | Path | None = None) -> Engine:
    """The user's server when it runs the diamond extension, else the engine in-process.
    DIAMOND_ENGINE=local|server forces one."""
    mode = os.environ.get("DIAMOND_ENGINE", "auto").lower()
    note = "DIAMOND_ENGINE=local"
    if mode != "local":
        info = find_server()
        if info is None:
            note = f"no Jupyter server found for parent pid {os.getppid()}"
        else:
            ok, note = probe(info)
            if ok:
                from .rest import ServerClient

                return ServerClient(info["url"], info.get("token", ""), note=note,
                                    root_dir=info.get("root_dir"))
        if mode == "server":
            raise SiteError(f"DIAMOND_ENGINE=server but {note}")
    return LocalEngine(config, note=note + "; running the engine in-process")
