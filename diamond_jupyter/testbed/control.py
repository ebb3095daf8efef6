"""Bring the test bed up and down: munged, and per cluster a network namespace with
its own slurmctld, slurmd per node, and sshd, reached as a plain user over SSH."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import yaml

from ..model import DiamondError
from .clusters import CLUSTERS, HOME, USER, ClusterDef, base_dir
from .configs import cluster_dir, gres_conf, slurm_conf, sshd_config

REQUIRED = {
    "slurmctld": "slurmctld", "slurmd": "slurmd", "sbatch": "slurm-client",
    "munged": "munge", "sshd": "openssh-server", "ssh-keygen": "openssh-client",
    "ip": "iproute2", "nsenter": "util-linux", "unshare": "util-linux",
}
SBIN = ("/usr/sbin", "/sbin", "/usr/bin", "/bin")
APT = ("apt-get install -y --no-install-recommends slurm-wlm slurmctld slurmd slurm-client "
       "munge openssh-server iproute2")


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
    script = (f"mount --bind {d / 'etc'} /etc/slurm && mount --bind {d / 'home'} {HOME} "
              f"&& hostname {c.name} && exec \"$@\"")
    return ["nsenter", f"--net=/run/netns/{c.netns}", "unshare", "--mount", "--uts",
            "--propagation", "private", "sh", "-c", script, "sh", *argv]


def _ctl_env(base: Path, c: ClusterDef) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "SQUEUE_"))}
    env["SLURM_CONF"] = str(cluster_dir(base, c) / "etc" / "slurm.conf")
    return env


def _ctl(base: Path, c: ClusterDef, *argv: str, check: bool = True) -> subprocess.CompletedProcess:
    """Run a Slurm client command against cluster c from the host, through its netns."""
    return _run("nsenter", f"--net=/run/netns/{c.netns}", *argv, check=check, env=_ctl_env(base, c))


def _pid(path: Path) -> int | None:
    try:
        pid = int(path.read_text().strip())
    except (OSError, ValueError):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    return pid


def _wait(pred, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    delay = 0.02
    while not pred():
        if time.monotonic() > deadline:
            raise TestbedError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(delay)
        delay = min(delay * 1.5, 0.25)


# ---------------------------------------------------------------- pieces


def _ensure_user() -> None:
    if _run("getent", "passwd", USER, check=False).returncode != 0:
        _run("useradd", "--create-home", "--home-dir", str(HOME), "--shell", "/bin/bash", USER)
    _run("usermod", "-p", "*", USER)  # unlocked for key login, no password
    HOME.mkdir(exist_ok=True)


def _user_ids() -> tuple[int, int]:
    import pwd

    pw = pwd.getpwnam(USER)
    return pw.pw_uid, pw.pw_gid


def _ensure_keys(base: Path) -> None:
    ssh = base / "ssh"
    ssh.mkdir(mode=0o755, parents=True, exist_ok=True)
    key = ssh / "id_ed25519"
    if not key.exists():
        _run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "diamond-testbed", "-f", str(key))
    os.chmod(key, 0o600)
    auth = ssh / f"authorized_keys.{USER}"
    auth.write_text((ssh / "id_ed25519.pub").read_text())
    os.chmod(auth, 0o644)


def _start_munge(base: Path) -> None:
    m = base / "munge"
    keydir = m / "key"
    keydir.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(m, 0o755)
    key = keydir / "munge.key"
    if not key.exists():
        key.write_bytes(os.urandom(1024))
    os.chmod(key, 0o400)
    if _pid(m / "munged.pid"):
        return
    _run(_which("munged") or "munged", "--force", f"--key-file={key}",
         f"--socket={m / 'munge.socket'}",
         f"--pid-file={m / 'munged.pid'}", f"--log-file={m / 'munged.log'}",
         f"--seed-file={m / 'munged.seed'}")
    _wait(lambda: (m / "munge.socket").exists(), 10, "munged's socket")


def _prepare_cluster(base: Path, c: ClusterDef) -> None:
    d = cluster_dir(base, c)
    for sub in ("etc", "state", "run", "log", "ssh", "dev", "home"):
        (d / sub).mkdir(parents=True, exist_ok=True)
    for n in c.node_names:
        (d / "spool" / n).mkdir(parents=True, exist_ok=True)
    (d / "etc" / "slurm.conf").write_text(slurm_conf(base, c))
    (d / "etc" / "gres.conf").write_text(gres_conf(base, c))
    (d / "etc" / "cgroup.conf").write_text("CgroupPlugin=cgroup/v1\nIgnoreSystemd=yes\n")
    for i in range(c.gpus):
        dev = d / "dev" / f"nvidia{i}"
        if not dev.exists():
            os.mknod(dev, 0o666 | 0o020000, os.makedev(1, 3))  # a /dev/null alias
    comp = d / "jobcomp.txt"
    comp.touch()
    os.chmod(comp, 0o666)
    uid, gid = _user_ids()
    os.chown(d / "home", uid, gid)
    os.chmod(d / "home", 0o700)
    hk = d / "ssh" / "ssh_host_ed25519_key"
    if not hk.exists():
        _run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(hk))
    (d / "etc" / "sshd_config").write_text(sshd_config(base, c))


def _make_netns(c: ClusterDef) -> None:
    if Path(f"/run/netns/{c.netns}").exists():
        return
    host_if, ns_if = f"dtbh{c.index}", f"dtbn{c.index}"
    _run("ip", "netns", "add", c.netns)
    _run("ip", "link", "add", host_if, "type", "veth", "peer", "name", ns_if)
    _run("ip", "link", "set", ns_if, "netns", c.netns)
    _run("ip", "addr", "add", f"{c.host_ip}/24", "dev", host_if)
    _run("ip", "link", "set", host_if, "up")
    _run("ip", "-n", c.netns, "addr", "add", f"{c.ip}/24", "dev", ns_if)
    _run("ip", "-n", c.netns, "link", "set", ns_if, "up")
    _run("ip", "-n", c.netns, "link", "set", "lo", "up")
    _run("ip", "-n", c.netns, "route", "add", "default", "via", c.host_ip)


def _start_cluster(base: Path, c: ClusterDef) -> None:
    d = cluster_dir(base, c)
    Path("/etc/slurm").mkdir(exist_ok=True)
    if not _pid(d / "run" / "slurmctld.pid"):
        _run(*_in_ns(c, base, _which("slurmctld") or "slurmctld", "-c"))
    for n in c.node_names:
        if not _pid(d / "run" / f"slurmd-{n}.pid"):
            _run(*_in_ns(c, base, _which("slurmd") or "slurmd", "-N", n))
    if not _pid(d / "run" / "sshd.pid"):
        Path("/run/sshd").mkdir(exist_ok=True)
        _run(*_in_ns(c, base, _which("sshd") or "sshd", "-f", str(d / "etc" / "sshd_config")))


def _nodes_idle(base: Path, c: ClusterDef) -> bool:
    r = _ctl(base, c, "sinfo", "-h", "-N", "-o", "%N %T", check=False)
    if r.returncode != 0:
        return False
    states = {}
    for line in r.stdout.split("\n"):
        if line.strip():
            name, state = line.split()
            states[name] = state
    ready = ("idle", "mixed", "allocated")
    return len(states) == c.nodes and all(s.rstrip("*~#") in ready for s in states.values())


def _sshd_up(c: ClusterDef) -> bool:
    import socket

    try:
        with socket.create_connection((c.ip, 22), timeout=0.5) as s:
            return s.recv(4).startswith(b"SSH")
    except OSError:
        return False


def _write_config(base: Path) -> Path:
    known = []
    sites = []
    for c in CLUSTERS:
        d = cluster_dir(base, c)
        pub = (d / "ssh" / "ssh_host_ed25519_key.pub").read_text().split()
        known.append(f"{c.ip} {pub[0]} {pub[1]}")
        sites.append({
            "name": c.name,
            "scheduler": "slurm",
            "transport": {
                "kind": "ssh", "host": c.ip, "port": 22, "user": USER,
                "key_file": str(base / "ssh" / "id_ed25519"),
                "known_hosts": str(base / "ssh" / "known_hosts"),
                "use_agent": False,
            },
            "workdir": f"{HOME}/.diamond",
            "default_partition": next(p.name for p in c.partitions if p.default),
            "jobcomp": True,
            "charge_factor": c.charge_factor,
            "speed_factor": c.speed_factor,
            "metadata": dict(c.metadata),
        })
    kh = base / "ssh" / "known_hosts"
    kh.write_text("\n".join(known) + "\n")
    os.chmod(kh, 0o644)
    path = base / "sites.yaml"
    text = yaml.safe_dump({"sites": sites}, sort_keys=False)
    path.write_text("# written by `diamond testbed up`\n" + text)
    return path


# ---------------------------------------------------------------- public


def status() -> dict:
    base = base_dir()
    munged = bool(_pid(base / "munge" / "munged.pid"))
    out: dict = {"base": str(base), "munged": munged, "sites": []}
    for c in CLUSTERS:
        d = cluster_dir(base, c)
        nodes = {n: bool(_pid(d / "run" / f"slurmd-{n}.pid")) for n in c.node_names}
        out["sites"].append({
            "name": c.name, "netns": Path(f"/run/netns/{c.netns}").exists(), "ip": c.ip,
            "slurmctld": bool(_pid(d / "run" / "slurmctld.pid")),
            "slurmd": nodes, "sshd": bool(_pid(d / "run" / "sshd.pid")),
        })
    s = out["sites"]
    out["up"] = out["munged"] and all(
        x["netns"] and x["slurmctld"] and x["sshd"] and all(x["slurmd"].values()) for x in s)
    cfg = base / "sites.yaml"
    out["config"] = str(cfg) if cfg.exists() else None
    return out


def up(timeout: float = 60) -> dict:
    """Start everything (idempotent); returns {"config": PATH, "sites": [...]}."""
    check_prerequisites()
    base = base_dir()
    t0 = time.monotonic()
    st = status()
    if not st["up"]:
        if any([st["munged"], *[x["netns"] or x["slurmctld"] for x in st["sites"]]]):
            down()  # a half-up bed: start clean
        base.mkdir(parents=True, exist_ok=True)
        os.chmod(base, 0o755)
        _ensure_user()
        _ensure_keys(base)
        _start_munge(base)
        for c in CLUSTERS:
            _prepare_cluster(base, c)
            _make_netns(c)
            _start_cluster(base, c)
        for c in CLUSTERS:
            _wait(lambda c=c: _nodes_idle(base, c), timeout, f"{c.name}'s nodes to be idle")
            _wait(lambda c=c: _sshd_up(c), timeout, f"{c.name}'s sshd")
            # slurmctld resets the jobcomp file's mode when it opens it; users read it
            os.chmod(cluster_dir(base, c) / "jobcomp.txt", 0o666)
    cfg = _write_config(base)
    (base / "state.json").write_text(json.dumps({"up_s": time.monotonic() - t0}))
    return {"config": str(cfg), "sites": [c.name for c in CLUSTERS],
            "seconds": round(time.monotonic() - t0, 3)}


def _kill_pidfile(path: Path, sig: int = signal.SIGTERM) -> int | None:
    pid = _pid(path)
    if pid:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return None
    return pid


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


def leftovers() -> list[str]:
    """Everything of the test bed still present on the machine (empty after `down`)."""
    base = base_dir()
    found = []
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            cmd = (p / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if str(base) in cmd or any(f"/run/netns/{c.netns}" in cmd for c in CLUSTERS):
            found.append(f"process {p.name}: {cmd.strip()[:120]}")
    for c in CLUSTERS:
        if Path(f"/run/netns/{c.netns}").exists():
            found.append(f"network namespace {c.netns}")
    links = _run("ip", "-o", "link", "show", check=False).stdout
    found += [f"veth {c.name}" for c in CLUSTERS if f"dtbh{c.index}" in links]
    mounts = Path("/proc/self/mountinfo").read_text()
    found += [f"mount {line.split()[4]}" for line in mounts.splitlines()
              if str(base) in line or "/run/netns/dtb-" in line]
    if _run("getent", "passwd", USER, check=False).returncode == 0:
        found.append(f"user {USER}")
    if base.exists():
        found.append(f"directory {base}")
    return found


def down(timeout: float = 30) -> dict:
    check_prerequisites()
    base = base_dir()
    t0 = time.monotonic()
    pids: list[int] = []
    for c in CLUSTERS:
        d = cluster_dir(base, c)
        if _pid(d / "run" / "slurmctld.pid") and Path(f"/run/netns/{c.netns}").exists():
            _ctl(base, c, "scontrol", "shutdown", check=False)
        for f in (d / "run").glob("slurm*.pid") if (d / "run").exists() else []:
            p = _pid(f)
            if p:
                pids.append(p)
    try:
        _wait(lambda: _gone(pids), 10, "Slurm daemons to stop")
    except TestbedError:
        for p in pids:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
    _run("pkill", "-KILL", "-u", USER, check=False)  # leftover job steps and ssh sessions
    for c in CLUSTERS:
        d = cluster_dir(base, c)
        p = _kill_pidfile(d / "run" / "sshd.pid")
        if p:
            pids.append(p)
    m = _kill_pidfile(base / "munge" / "munged.pid")
    if m:
        pids.append(m)
    _wait(lambda: _gone(pids), timeout, "daemons to stop")
    for c in CLUSTERS:
        if Path(f"/run/netns/{c.netns}").exists():
            _run("ip", "netns", "del", c.netns, check=False)
        _run("ip", "link", "del", f"dtbh{c.index}", check=False)
    if _run("getent", "passwd", USER, check=False).returncode == 0:
        _run("userdel", "--remove", USER, check=False)
        if HOME.exists():
            shutil.rmtree(HOME, ignore_errors=True)
    shutil.rmtree(base, ignore_errors=True)
    return {"down": True, "seconds": round(time.monotonic() - t0, 3), "leftovers": leftovers()}



# ---------------------------------------------------------------- faults (for tests)


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


def restart_sshd(site: str, timeout: float = 30, while_down=None) -> None:
    """SIGKILL a site's sshd with its per-connection children (every session drops), call
    `while_down()` if given, start sshd again and return once it answers."""
    from .clusters import cluster

    c, base = cluster(site), base_dir()
    pid = _pid(cluster_dir(base, c) / "run" / "sshd.pid")
    victims = [pid, *_descendants(pid)] if pid else []
    for p in victims:
        with contextlib.suppress(ProcessLookupError):
            os.kill(p, signal.SIGKILL)
    _wait(lambda: _gone(victims), 10, f"{site}'s sshd to die")
    if while_down is not None:
        while_down()
    Path("/run/sshd").mkdir(exist_ok=True)
    _run(*_in_ns(c, base, _which("sshd") or "sshd", "-f", str(cluster_dir(base, c) / "etc"
                                                               / "sshd_config")))
    _wait(lambda: _sshd_up(c), timeout, f"{site}'s sshd")


def restart_slurmctld(site: str, timeout: float = 30) -> None:
    """SIGTERM a site's slurmctld (it saves state) and start it again WITHOUT `-c`, so
    queued and running jobs survive; return once `scontrol ping` says UP."""
    from .clusters import cluster

    c, base = cluster(site), base_dir()
    pid = _kill_pidfile(cluster_dir(base, c) / "run" / "slurmctld.pid")
    _wait(lambda: _gone([pid] if pid else []), timeout, f"{site}'s slurmctld to stop")
    _run(*_in_ns(c, base, _which("slurmctld") or "slurmctld"))
    _wait(lambda: "UP" in _ctl(base, c, "scontrol", "ping", check=False).stdout, timeout,
          f"{site}'s slurmctld")
