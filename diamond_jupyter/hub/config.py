"""The text of the hub's jupyterhub_config.py: PAM logins of the hub's system users, a
single-user server per user (a local process, or a Slurm job through batchspawner), and the
admin's diamond defaults pinned on every server's command line."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class HubSettings:
    base: Path  # the hub's state directory
    users: tuple[str, ...]
    port: int  # the proxy's public port (127.0.0.1)
    hub_ip: str  # where the hub's API listens (reachable from wherever servers run)
    hub_port: int
    proxy_api_port: int
    proxy_command: str
    python: str  # the single-user environment's interpreter (runnable by every user)
    sites_file: Path
    environment: dict[str, str]
    admin: dict[str, Any] = field(default_factory=dict)  # DiamondApp traits: the defaults
    batch: dict[str, str] | None = None  # batchspawner on a test-bed cluster (None: local)


def trait_args(admin: dict[str, Any]) -> list[str]:
    """`--DiamondApp.NAME=VALUE` for each admin default: on the command line, so that a
    user's own jupyter_server_config cannot override them. A list is one flag per item: the
    server parses its command line before it knows the extension's traits, and a list
    written as one value would arrive as a single item."""
    out = []
    for name, value in admin.items():
        if isinstance(value, (list, tuple)):
            if not value:
                raise ValueError(f"DiamondApp.{name}: an empty list cannot be given on the "
                                 "command line (set it in a config file)")
            out += [f"--DiamondApp.{name}={item}" for item in value]
        else:
            out.append(f"--DiamondApp.{name}={value if isinstance(value, str) else repr(value)}")
    return out


def render(s: HubSettings) -> str:
    lines = [
        "# written by `scripts/hub.sh up` (diamond_jupyter.hub); rewritten at every up",
        "c = get_config()  # noqa: F821",
        f"c.JupyterHub.bind_url = 'http://127.0.0.1:{s.port}'",
        f"c.JupyterHub.hub_bind_url = 'http://{s.hub_ip}:{s.hub_port}'",
        f"c.ConfigurableHTTPProxy.api_url = 'http://127.0.0.1:{s.proxy_api_port}'",
        f"c.ConfigurableHTTPProxy.command = [{s.proxy_command!r}]",
        f"c.ConfigurableHTTPProxy.pid_file = {str(s.base / 'proxy.pid')!r}",
        f"c.JupyterHub.db_url = 'sqlite:///{s.base / 'jupyterhub.sqlite'}'",
        f"c.JupyterHub.cookie_secret_file = {str(s.base / 'cookie_secret')!r}",
        f"c.JupyterHub.pid_file = {str(s.base / 'jupyterhub.pid')!r}",
        "c.JupyterHub.cleanup_servers = True",
        "c.JupyterHub.authenticator_class = 'pam'",
        "c.PAMAuthenticator.open_sessions = False",
        f"c.Authenticator.allowed_users = {set(s.users)!r}",
        f"c.Spawner.cmd = [{s.python!r}, '-m', 'jupyterhub.singleuser']",
        "c.Spawner.default_url = '/lab'",
        "c.Spawner.notebook_dir = '~'",
        "c.Spawner.start_timeout = 300",
        "c.Spawner.http_timeout = 300",
        f"c.Spawner.environment = {s.environment!r}",
    ]
    args = trait_args({"sites_file": str(s.sites_file), **s.admin})
    if s.batch is not None:  # batchspawner puts the command line into a shell script
        args = [shlex.quote(a) for a in args]
    lines.append(f"c.Spawner.args = {args!r}")
    if s.batch is None:
        lines.append("c.JupyterHub.spawner_class = 'localprocess'")
    else:
        b = s.batch
        lines += [
            "c.JupyterHub.spawner_class = 'batchspawner.SlurmSpawner'",
            # sbatch, squeue and scancel run as the user, on the cluster's network
            f"c.SlurmSpawner.exec_prefix = {b['exec_prefix']!r}",
            "c.SlurmSpawner.batch_submit_cmd = 'sbatch --parsable'",
            "c.SlurmSpawner.batch_query_cmd = \"squeue -h -j {job_id} -o '%T %B'\"",
            "c.SlurmSpawner.batch_cancel_cmd = 'scancel {job_id}'",
            f"c.SlurmSpawner.req_partition = {b['partition']!r}",
            "c.SlurmSpawner.req_runtime = '02:00:00'",
            "c.SlurmSpawner.req_srun = ''",
            # batchspawner's wrapper runs the single-user *script* (not an interpreter)
            f"c.SlurmSpawner.batchspawner_singleuser_cmd = "
            f"{s.python + ' -m batchspawner.singleuser'!r}",
            f"c.SlurmSpawner.cmd = [{b['singleuser_script']!r}]",
            # the proxy reaches the compute node at the cluster's address, whatever its name
            f"c.SlurmSpawner.state_exechost_exp = {b['node_ip']!r}",
            "c.SlurmSpawner.startup_poll_interval = 1.0",
            f"c.SlurmSpawner.batch_script = {BATCH_SCRIPT!r}",
        ]
    return "\n".join(lines) + "\n"


# The single-user server's job: its name marks it as the hub's (`hub.sh down` cancels it).
BATCH_SCRIPT = """#!/bin/bash
#SBATCH --output={{homedir}}/.diamond-hub-%j.log
#SBATCH --job-name=diamond-hub-singleuser
#SBATCH --chdir={{homedir}}
#SBATCH --export={{keepvars}}
{% if partition %}#SBATCH --partition={{partition}}
{% endif %}{% if runtime %}#SBATCH --time={{runtime}}
{% endif %}
set -eu
exec {{cmd}}
"""
