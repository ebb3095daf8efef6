"""Running things on this machine and inside a test-bed host's namespaces."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import time
from pathlib import Path

from ..model import DiamondError
from .clusters import HOME, ClusterDef
from .configs import cluster_dir

REQUIRED = {
    "slurmctld": "slurmctld", "slurmd": "slurmd", "sbatch": "slurm-client",
    "munged": "munge", "sshd": "openssh-server", "ssh-keygen": "openssh-client",
    "ip": "iproute2", "nsenter": "util-linux", "unshare": "util-linux",
}
SBIN = ("/usr/sbin", "/sbin", "/usr/bin", "/bin")
APT = ("apt-get install -y --no-install-recommends slurm-wlm slurmctld slurmd slurm-client "
       "munge openssh-server iproute2 gridengine-master gridengine-exec gridengine-client")


class TestbedError(DiamondError):
    """The test bed cannot run here; the message says what is missing and how to get it."""


def _which(cmd: str) -> str | None:
    path = os.environ.get("PATH", "") + os.pathsep + os.pathsep.join(SBIN)
    return shutil.which(cmd, path=path)


def check_prerequisites() -> None:
    problems = []
    if os.geteuid() != 0:
        problems.append("root is required (network namespaces, slurmd, a test user); "
                        "run as root, e.g. `sudo diamond testbed up`")
    missing = sorted({pkg for cmd, pkg in REQUIRED.items() if not _which(cmd)})
    if missing:
        problems.append(f"missing Debian packages: {' '.join(missing)}; install with `{APT}`")
    if problems:
        raise TestbedError("; ".join(problems))


def _run(*argv: str, check: bool = True, env: dict | None = None,
         **kw) -> subprocess.CompletedProcess:
    r = subprocess.run(argv, capture_output=True, text=True, env=env, **kw)
    if check and r.returncode != 0:
        raise TestbedError(f"`{' '.join(argv)}` failed ({r.returncode}): {r.stderr.strip()}")
    return r


def _in_ns(c: ClusterDef, base: Path, *argv: str) -> list[str]:
    """argv that runs a command as a host of cluster c: its network, hostname, /etc/slurm, home."""
    d = cluster_dir(base, c)
    # the host's own name from /etc/hosts: no DNS answers in the namespaces, and a lookup
    # would wait ~10 s (`hostname -f`, which Slurm's qstat wrapper runs every time)
    net = [f"{{ [ ! -f {d / 'net' / f} ] || mount --bind {d / 'net' / f} /etc/{f}; }}"
           for f in ("hosts",)]
    script = (f"mount --bind {d / 'etc'} /etc/slurm && mount --bind {d / 'home'} {HOME} "
              f"&& {' && '.join(net)} && hostname {c.name} && exec \"$@\"")
    return ["nsenter", f"--net=/run/netns/{c.netns}", "unshare", "--mount", "--uts",
            "--propagation", "private", "sh", "-c", script, "sh", *argv]


def _ctl_env(base: Path, c: ClusterDef) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "SQUEUE_"))}
    env["SLURM_CONF"] = str(cluster_dir(base, c) / "etc" / "slurm.conf")
    return env


def _ctl(base: Path, c: ClusterDef, *argv: str, check: bool = True) -> subprocess.CompletedProcess:
    """Run a Slurm client command against cluster c from the host, through its netns."""
    return _run("nsenter", f"--net=/run/netns/{c.netns}", *argv, check=check, env=_ctl_env(base, c))


# what the test bed's pid files name; a pid file left from before a reboot or a kill names
# whatever process holds that number now, which is none of these
DAEMONS = frozenset({"munged", "slurmctld", "slurmd", "sshd", "slurmrestd", "sge_qmaster",
                     "sge_execd"})


def _daemon_name(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return None


def _pid(path: Path) -> int | None:
    """The live test-bed daemon `path` names, or None (no file, no process, a zombie, or
    the number now belongs to another program)."""
    try:
        pid = int(path.read_text().strip())
    except (OSError, ValueError):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    if _daemon_name(pid) not in DAEMONS:
        return None
    if _zombie(pid):  # stopped, not yet reaped (a child of ours): not running
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, os.WNOHANG)
        return None
    return pid


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z")
    except (OSError, IndexError):
        return False


def _wait(pred, timeout: float, what: str, explain=None) -> None:
    """Until `pred()`; on timeout the error names `what` and what `explain()` saw."""
    deadline = time.monotonic() + timeout
    delay = 0.02
    while not pred():
        if time.monotonic() > deadline:
            seen = f": {explain()}" if explain else ""
            raise TestbedError(f"timed out after {timeout:.0f}s waiting for {what}{seen}")
        time.sleep(delay)
        delay = min(delay * 1.5, 0.25)


def _gone(pids: list[int]) -> bool:
    for p in pids:
        try:
            os.kill(p, 0)
            # a zombie child of ours counts as gone
            if Path(f"/proc/{p}/stat").read_text().split(") ")[1].startswith("Z"):
                continue
            return False
        except (ProcessLookupError, OSError):
            continue
    return True


def _descendants(pid: int) -> list[int]:
    kids: dict[int, list[int]] = {}
    for p in Path("/proc").glob("[0-9]*"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            kids.setdefault(int((p / "stat").read_text().rsplit(") ", 1)[1].split()[1]),
                            []).append(int(p.name))
    out, todo = [], [pid]
    while todo:
        found = kids.get(todo.pop(), [])
        out += found
        todo += found
    return out
