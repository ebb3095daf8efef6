"""The test bed's JupyterHub (`scripts/hub.sh`), brought up and down for a test module."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def hub_sh(*args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHON": sys.executable, "DIAMOND_NO_VENV": "1"}
    return subprocess.run([str(ROOT / "scripts" / "hub.sh"), *args], capture_output=True,
                          text=True, env=env, timeout=timeout, check=False)


@contextmanager
def hub_up(*up_args: str) -> Iterator[dict]:
    """`hub.sh up UP_ARGS --json`, giving what it prints; `hub.sh down` after, which must
    succeed."""
    r = hub_sh("up", *up_args, "--json")
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    try:
        yield info
    finally:
        down = hub_sh("down", "--json")
        assert down.returncode == 0, down.stderr
