"""The pieces of a test-bed bring-up: user, keys, munged, a cluster's files, its network
namespace and daemons, and the sites file."""

from __future__ import annotations

import os
from pathlib import Path

import yaml

from . import doors, mfa
from .clusters import CLUSTERS, HOME, USER, ClusterDef
from .configs import cluster_dir, gres_conf, slurm_conf, sshd_config
from .host import _ctl, _in_ns, _pid, _run, _wait, _which
from .modules import SOFTWARE, lmod_init, write_bashrc, write_tree


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
    (d / "etc" / "slurm.conf").write_text(doors.with_conf_lines(slurm_conf(base, c), base, c))
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
    write_bashrc(d / "home", uid, gid)
    hk = d / "ssh" / "ssh_host_ed25519_key"
    if not hk.exists():
        _run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(hk))
    write_tree(base, c)
    (d / "etc" / "sshd_config").write_text(sshd_config(base, c))
    (d / "net").mkdir(exist_ok=True)
    (d / "net" / "resolv.conf").unlink(missing_ok=True)  # an earlier version's dead resolver
    for name, text in net_files(c).items():
        (d / "net" / name).write_text(text)
    doors.prepare(base, c)
    mfa.prepare(base, c)


HOST_NAME = "dtb-host"  # this machine, as the clusters see it


def net_files(c: ClusterDef) -> dict[str, str]:
    """/etc/hosts as a cluster's hosts see it: their own name, and the engine's side of the
    link, resolve without DNS (the namespace has none). slurmrestd looks up every client's
    address: without the engine's line each request waited for a resolver that never
    answers, and slurmrestd spun and stopped answering."""
    return {"hosts": f"127.0.0.1 localhost\n{c.ip} {c.name}\n{c.host_ip} {HOST_NAME}\n"}


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


def _start_cluster(base: Path, c: ClusterDef,
                   parts: tuple[str, ...] = ("slurm", "sshd", "rest")) -> list[str]:
    """Start the daemons of `parts` that are not running; returns what was started.
    slurmctld starts from its saved state (never `-c`): queued and running jobs and the
    job-id sequence survive a restart; a fresh state directory starts empty."""
    d = cluster_dir(base, c)
    Path("/etc/slurm").mkdir(exist_ok=True)
    started = []
    if "slurm" in parts:
        if not _pid(d / "run" / "slurmctld.pid"):
            _run(*_in_ns(c, base, _which("slurmctld") or "slurmctld"))
            started.append(f"{c.name} slurmctld")
        for n in c.node_names:
            if not _pid(d / "run" / f"slurmd-{n}.pid"):
                _run(*_in_ns(c, base, _which("slurmd") or "slurmd", "-N", n))
                started.append(f"{c.name} slurmd {n}")
    if "sshd" in parts and not _pid(d / "run" / "sshd.pid"):
        Path("/run/sshd").mkdir(exist_ok=True)
        _run(*_in_ns(c, base, _which("sshd") or "sshd", "-f", str(d / "etc" / "sshd_config")))
        started.append(f"{c.name} sshd")
    if "sshd" in parts:
        started += mfa.start(base, c)
    if "rest" in parts:
        started += doors.start_rest(base, c)
    return started


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


def _nodes_report(base: Path, c: ClusterDef) -> str:
    """What keeps c's nodes from being idle: each node's state and reason, and the node
    daemons that do not run, with the last lines of their logs."""
    d = cluster_dir(base, c)
    r = _ctl(base, c, "sinfo", "-h", "-N", "-o", "%N %T %E", check=False)
    parts = [("; ".join(x.strip() for x in r.stdout.splitlines() if x.strip()) or "no nodes")
             if r.returncode == 0 else f"sinfo failed: {r.stderr.strip()[-200:]}"]
    if not _pid(d / "run" / "slurmctld.pid"):
        parts.append("slurmctld is not running")
    for n in c.node_names:
        if not _pid(d / "run" / f"slurmd-{n}.pid"):
            try:
                tail = (d / "log" / f"slurmd-{n}.log").read_text().splitlines()[-3:]
            except OSError:
                tail = []
            parts.append(f"slurmd {n} is not running ({' | '.join(tail) or 'no log'})")
    return "; ".join(parts)


def _sshd_up(c: ClusterDef) -> bool:
    import socket

    try:
        with socket.create_connection((c.ip, 22), timeout=0.5) as s:
            return s.recv(4).startswith(b"SSH")
    except OSError:
        return False


def _metadata(c: ClusterDef) -> dict:
    """With Lmod, the site's software and runtimes are discovered, not typed in."""
    if lmod_init() is None or c.name not in SOFTWARE:
        return dict(c.metadata)
    return {k: v for k, v in c.metadata.items() if k not in ("software", "container_runtimes")}


def _write_config(base: Path) -> Path:
    known = []
    sites = []
    for c in CLUSTERS:
        d = cluster_dir(base, c)
        pub = (d / "ssh" / "ssh_host_ed25519_key.pub").read_text().split()
        known.append(f"{c.ip} {pub[0]} {pub[1]}")
        known += mfa.known_hosts_lines(base, c)
        sites.append({
            "name": c.name,
            "scheduler": c.scheduler,
            "transport": {
                "kind": "ssh", "host": c.ip, "port": 22, "user": USER,
                "key_file": str(base / "ssh" / "id_ed25519"),
                "known_hosts": str(base / "ssh" / "known_hosts"),
                "use_agent": False,
            },
            "workdir": f"{HOME}/.diamond",
            "default_partition": next(p.name for p in c.partitions if p.default),
            "jobcomp": c.scheduler == "slurm",
            "charge_factor": c.charge_factor,
            "speed_factor": c.speed_factor,
            "metadata": _metadata(c),
        })
    by_cluster = {e["name"]: e for e in sites}
    sites += doors.site_entries(base, {c.name: c for c in CLUSTERS}, by_cluster)[0]
    kh = base / "ssh" / "known_hosts"
    kh.write_text("\n".join(known) + "\n")
    os.chmod(kh, 0o644)
    path = base / "sites.yaml"
    text = yaml.safe_dump({"sites": sites}, sort_keys=False)
    path.write_text("# written by `diamond testbed up`\n" + text)
    guarded = mfa.site_entries(base, {c.name: c for c in CLUSTERS}, by_cluster)[0]
    mfa.config_file(base).unlink(missing_ok=True)
    if guarded:  # a file of their own: a face asks for a code only where it was given one
        mfa.config_file(base).write_text(
            "# written by `diamond testbed up`: doors that need a one-time code or a "
            "certificate\n" + yaml.safe_dump({"sites": guarded}, sort_keys=False))
    return path
