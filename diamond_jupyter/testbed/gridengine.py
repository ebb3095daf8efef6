"""A Grid Engine cluster in the test bed (Debian's gridengine 8.1.9, Son of Grid Engine).

Hosts: the qmaster host (named after the cluster; also its login host with sshd) and one
exec host per node, each in its own network, UTS and mount namespace: Grid Engine knows a
host by its name and an execd by host and port, so two execds cannot share a namespace.
The master's namespace holds a bridge that joins the host's veth and the exec hosts'
veths into one 10.213.<index>.0/24 segment. Inside every host of the cluster:
/etc/hosts names them all, /var/lib/gridengine/default is the cluster's own cell and the
test user's home is the cluster's shared home (bind mounts, private to the namespace).

The cell is made without `inst_sge`: classic (flat-file) spooling initialised with
`spoolinit`, then `spooldefaults` writes the global configuration, complexes, managers,
admin/submit/exec hosts and parallel environments (`smp`: $pe_slots, `mpi`: $fill_up)
before the qmaster first starts; queues, the host group and a fast scheduler
configuration go in with `qconf` once it answers. Daemons run as root (admin_user none).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from ..digits import ascii_digits
from .clusters import HOME, USER, ClusterDef
from .configs import cluster_dir, sshd_config
from .host import TestbedError, _descendants, _pid, _run, _wait, _which

SGE_ROOT = Path("/var/lib/gridengine")
CELL_MOUNT = SGE_ROOT / "default"
LIBEXEC = Path("/usr/lib/gridengine")
SLOTS = "slots"


@dataclass(frozen=True)
class SgeHost:
    name: str
    netns: str
    ip: str
    master: bool = False


def hosts(c: ClusterDef) -> list[SgeHost]:
    """The qmaster/login host first, then the exec hosts."""
    out = [SgeHost(c.name, c.netns, c.ip, master=True)]
    for i, n in enumerate(c.node_names):
        out.append(SgeHost(n, f"{c.netns}-{n}", f"10.213.{c.index}.{3 + i}"))
    return out


def exec_hosts(c: ClusterDef) -> list[SgeHost]:
    return hosts(c)[1:]


def netns_names(c: ClusterDef) -> list[str]:
    return [h.netns for h in hosts(c)]


def link_names(c: ClusterDef) -> list[str]:
    """Host-side interfaces this cluster adds to the machine (the rest live in its
    namespaces and go with them)."""
    return [f"dtbh{c.index}"]


def sge_dir(base: Path, c: ClusterDef) -> Path:
    return cluster_dir(base, c) / "sge"


def _cell(base: Path, c: ClusterDef) -> Path:
    return sge_dir(base, c) / "cell"


def _spool(base: Path, c: ClusterDef) -> Path:
    return sge_dir(base, c) / "spool"


def in_host(base: Path, c: ClusterDef, h: SgeHost, *argv: str) -> list[str]:
    """argv that runs a command as host `h` of cluster c."""
    d = cluster_dir(base, c)
    # no DNS: /etc/hosts names every host; a resolver nobody answers fails at once (srun,
    # which discovery asks for its MPI plugins, would wait seconds for a DNS SRV record)
    script = (f"mount --bind {sge_dir(base, c) / 'hosts'} /etc/hosts && "
              f"mount --bind {sge_dir(base, c) / 'resolv.conf'} /etc/resolv.conf && "
              f"mount --bind {_cell(base, c)} {CELL_MOUNT} && "
              f"mount --bind {d / 'home'} {HOME} && hostname {h.name} && exec \"$@\"")
    return ["nsenter", f"--net=/run/netns/{h.netns}", "unshare", "--mount", "--uts",
            "--propagation", "private", "sh", "-c", script, "sh", *argv]


def qcmd(base: Path, c: ClusterDef, *argv: str, check: bool = True, timeout: float = 30):
    """A Grid Engine client command run as root on the qmaster host (the binary itself:
    Debian's wrapper script spends ~0.2 s finding the architecture)."""
    binary = LIBEXEC / argv[0]
    return _run(*in_host(base, c, hosts(c)[0], str(binary) if binary.exists() else argv[0],
                         *argv[1:]), check=check, env=_daemon_env(), timeout=timeout)


# ---------------------------------------------------------------- files

def _hosts_file(c: ClusterDef) -> str:
    lines = ["127.0.0.1 localhost"] + [f"{h.ip} {h.name}" for h in hosts(c)]
    return "\n".join(lines) + "\n"


def _bootstrap(base: Path, c: ClusterDef) -> str:
    sp = _spool(base, c)
    return "\n".join([
        "# Version: 8.1.9",
        "admin_user              none",
        "default_domain          none",
        "ignore_fqdn             true",
        "spooling_method         classic",
        "spooling_lib            libspoolc",
        f"spooling_params         {_cell(base, c) / 'common'};{sp / 'qmaster'}",
        f"binary_path             {LIBEXEC}",
        f"qmaster_spool_dir       {sp / 'qmaster'}",
        "security_mode           none",
        "listener_threads        2",
        "worker_threads          2",
        "scheduler_threads       1",
        "",
    ])


def _global_conf(base: Path, c: ClusterDef) -> str:
    """The global configuration: accounting written at once (qacct sees a job as soon as
    it left qstat), loads reported every 10 s, no mail."""
    template = Path("/usr/share/gridengine/default-configuration").read_text()
    values = {
        "execd_spool_dir": str(_spool(base, c) / "execd"),
        "mailer": "/bin/true",
        "load_report_time": "00:00:10",
        "reporting_params": "accounting=true reporting=false flush_time=00:00:01 "
                            "joblog=false sharelog=00:00:00 accounting_flush_time=00:00:00",
        "execd_params": "KEEP_ACTIVE=false",
        "finished_jobs": "0",
        "administrator_mail": "none",
    }
    out = []
    for line in template.splitlines():
        key = line.split()[0] if line.strip() and not line.startswith("#") else None
        if key in values:
            line = f"{key:<22} {values.pop(key)}"
        out.append(line)
    out += [f"{k:<22} {v}" for k, v in values.items()]
    return "\n".join(out) + "\n"


def _complex_gpu() -> str:
    return ("name        gpu\nshortcut    gpu\ntype        INT\nrelop       <=\n"
            "requestable YES\nconsumable  JOB\ndefault     0\nurgency     0\n")


def _exechost(c: ClusterDef, h: SgeHost) -> str:
    values = f"{SLOTS}={c.cpus},gpu={c.gpus}"
    return (f"hostname              {h.name}\nload_scaling          NONE\n"
            f"complex_values        {values}\nuser_lists            NONE\n"
            "xuser_lists           NONE\nprojects              NONE\n"
            "xprojects             NONE\nusage_scaling         NONE\n"
            "report_variables      NONE\n")


def _queue(c: ClusterDef, name: str, h_rt: str, seq: int) -> str:
    """A cluster queue on every exec host: `cpus` slots each (the host's complex caps the
    sum over queues), no load thresholds (a busy test machine must not put queues in
    alarm), POSIX shell start (the script's #! is not read: qsub -S picks the shell)."""
    fields = [
        ("qname", name), ("hostlist", "@allhosts"), ("seq_no", str(seq)),
        ("load_thresholds", "NONE"), ("suspend_thresholds", "NONE"), ("nsuspend", "1"),
        ("suspend_interval", "00:05:00"), ("priority", "0"), ("min_cpu_interval", "00:05:00"),
        ("processors", "UNDEFINED"), ("qtype", "BATCH INTERACTIVE"), ("ckpt_list", "NONE"),
        ("pe_list", "smp mpi"), ("rerun", "FALSE"), ("slots", str(c.cpus)),
        ("tmpdir", "/tmp"), ("shell", "/bin/sh"), ("prolog", "NONE"), ("epilog", "NONE"),
        ("shell_start_mode", "posix_compliant"), ("starter_method", "NONE"),
        ("suspend_method", "NONE"), ("resume_method", "NONE"), ("terminate_method", "NONE"),
        ("notify", "00:00:60"), ("owner_list", "NONE"), ("user_lists", "NONE"),
        ("xuser_lists", "NONE"), ("subordinate_list", "NONE"), ("complex_values", "NONE"),
        ("projects", "NONE"), ("xprojects", "NONE"), ("calendar", "NONE"),
        ("initial_state", "default"), ("s_rt", "INFINITY"), ("h_rt", h_rt),
    ]
    fields += [(f"{p}_{r}", "INFINITY") for r in ("cpu", "fsize", "data", "stack", "core",
                                                   "rss", "vmem") for p in ("s", "h")]
    return "".join(f"{k:<20} {v}\n" for k, v in fields)


def _pe_files(d: Path) -> None:
    src = Path("/usr/share/gridengine/util/resources/pe")
    d.mkdir(parents=True, exist_ok=True)
    for name in ("smp", "mpi"):
        text = (src / name).read_text()
        (d / name).write_text(re.sub(r"(?m)^slots\s+[0-9]+", "slots              9999", text))


GID_RANGE = (65400, 65500)  # the global configuration's gid_range, split between exec hosts


def gid_ranges(c: ClusterDef) -> dict[str, str]:
    """Each exec host's own `gid_range`, disjoint from the others'. Every job gets a
    supplementary group id from its execd's range, and its shepherd SIGKILLs every process
    holding that id when the job ends (ENABLE_ADDGRP_KILL, on by default). The test bed's
    exec hosts share one kernel (their own network, UTS and mount namespaces, not PIDs), so
    two execds handing out the same id killed the other host's job that held it."""
    ex = exec_hosts(c)
    width = (GID_RANGE[1] - GID_RANGE[0] + 1) // max(1, len(ex))
    return {h.name: f"{GID_RANGE[0] + i * width}-{GID_RANGE[0] + (i + 1) * width - 1}"
            for i, h in enumerate(ex)}


def _h_rt(max_time: str) -> str:
    """A test-bed partition's Slurm MaxTime (minutes or D-HH:MM:SS) as h_rt."""
    if ascii_digits(max_time):
        return f"{int(max_time) // 60}:{int(max_time) % 60:02d}:00"
    days, _, hms = max_time.partition("-")
    h, m, s = (hms.split(":") + ["0", "0"])[:3]
    return f"{int(days) * 24 + int(h)}:{int(m):02d}:{int(s):02d}"


def prepare(base: Path, c: ClusterDef) -> None:
    """The cell and spool, made once (a later `up` keeps them: jobs and ids survive)."""
    sd, cell, sp = sge_dir(base, c), _cell(base, c), _spool(base, c)
    d = cluster_dir(base, c)
    for sub in ("run", "log", "ssh", "home", "etc"):
        (d / sub).mkdir(parents=True, exist_ok=True)
    (cell / "common").mkdir(parents=True, exist_ok=True)
    for sub in ("qmaster", "execd"):
        (sp / sub).mkdir(parents=True, exist_ok=True)
    (sd / "hosts").write_text(_hosts_file(c))
    (sd / "resolv.conf").write_text("nameserver 127.0.0.1\n")
    (cell / "common" / "bootstrap").write_text(_bootstrap(base, c))
    (cell / "common" / "act_qmaster").write_text(c.name + "\n")
    (cell / "common" / "cluster_name").write_text(c.name + "\n")
    (cell / "common" / "settings.sh").write_text(
        f"SGE_ROOT={SGE_ROOT}; export SGE_ROOT\nSGE_CELL=default; export SGE_CELL\n")
    CELL_MOUNT.mkdir(parents=True, exist_ok=True)  # the mount point (gridengine-common)
    from .pieces import _user_ids

    uid, gid = _user_ids()
    os.chown(d / "home", uid, gid)
    os.chmod(d / "home", 0o700)
    hk = d / "ssh" / "ssh_host_ed25519_key"
    if not hk.exists():
        _run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(hk))
    (d / "etc" / "sshd_config").write_text(sshd_config(base, c))
    if (sd / "initialised").exists():
        return
    t = sd / "templates"
    for sub in ("adminhosts", "submithosts", "exechosts", "centry"):
        (t / sub).mkdir(parents=True, exist_ok=True)
    (t / "global").write_text(_global_conf(base, c))
    for f in Path("/usr/share/gridengine/util/resources/centry").iterdir():
        (t / "centry" / f.name).write_text(f.read_text())
    (t / "centry" / "gpu").write_text(_complex_gpu())
    master = hosts(c)[0]
    for kind in ("adminhosts", "submithosts"):
        (t / kind / master.name).write_text(f"hostname {master.name}\n")
    for h in exec_hosts(c):
        (t / "exechosts" / h.name).write_text(_exechost(c, h))
    _pe_files(t / "pes")
    steps = [["spoolinit", "classic", "libspoolc",
              f"{cell / 'common'};{sp / 'qmaster'}", "init"],
             ["spooldefaults", "configuration", str(t / "global")],
             ["spooldefaults", "complexes", str(t / "centry")],
             ["spooldefaults", "usersets", "/usr/share/gridengine/util/resources/usersets"],
             ["spooldefaults", "managers", "root"],
             ["spooldefaults", "adminhosts", str(t / "adminhosts")],
             ["spooldefaults", "submithosts", str(t / "submithosts")],
             ["spooldefaults", "exechosts", str(t / "exechosts")],
             ["spooldefaults", "pes", str(t / "pes")]]
    for step in steps:
        _run(*in_host(base, c, master, str(LIBEXEC / step[0]), *step[1:]),
             env=_daemon_env())
    (sd / "initialised").write_text("spooled; queues follow at the first start\n")


def _daemon_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SGE_")}
    env.update(SGE_ROOT=str(SGE_ROOT), SGE_CELL="default")
    return env


# ---------------------------------------------------------------- network

def make_netns(c: ClusterDef) -> None:
    """The master's namespace with a bridge joining the host's veth and one veth per exec
    host's namespace: one L2 segment, nothing routed through this machine."""
    master = hosts(c)[0]
    br = "dtbbr"
    if not Path(f"/run/netns/{master.netns}").exists():
        host_if, ns_if = f"dtbh{c.index}", f"dtbn{c.index}"
        _run("ip", "netns", "add", master.netns)
        _run("ip", "link", "add", host_if, "type", "veth", "peer", "name", ns_if)
        _run("ip", "link", "set", ns_if, "netns", master.netns)
        _run("ip", "addr", "add", f"{c.host_ip}/24", "dev", host_if)
        _run("ip", "link", "set", host_if, "up")
        _run("ip", "-n", master.netns, "link", "add", br, "type", "bridge")
        _run("ip", "-n", master.netns, "link", "set", ns_if, "master", br)
        _run("ip", "-n", master.netns, "addr", "add", f"{master.ip}/24", "dev", br)
        for dev in (ns_if, br, "lo"):
            _run("ip", "-n", master.netns, "link", "set", dev, "up")
        _run("ip", "-n", master.netns, "route", "add", "default", "via", c.host_ip)
    for i, h in enumerate(exec_hosts(c), 1):
        if Path(f"/run/netns/{h.netns}").exists():
            continue
        outer, inner = f"dtbx{c.index}{i}", f"dtby{c.index}{i}"
        _run("ip", "netns", "add", h.netns)
        _run("ip", "-n", master.netns, "link", "add", outer, "type", "veth", "peer", "name",
             inner)
        _run("ip", "-n", master.netns, "link", "set", inner, "netns", h.netns)
        _run("ip", "-n", master.netns, "link", "set", outer, "master", br)
        _run("ip", "-n", master.netns, "link", "set", outer, "up")
        _run("ip", "-n", h.netns, "addr", "add", f"{h.ip}/24", "dev", inner)
        _run("ip", "-n", h.netns, "link", "set", inner, "up")
        _run("ip", "-n", h.netns, "link", "set", "lo", "up")
        _run("ip", "-n", h.netns, "route", "add", "default", "via", c.host_ip)


def remove_netns(c: ClusterDef) -> None:
    for ns in reversed(netns_names(c)):
        if Path(f"/run/netns/{ns}").exists():
            _run("ip", "netns", "del", ns, check=False)
    for link in link_names(c):
        _run("ip", "link", "del", link, check=False)


# ---------------------------------------------------------------- daemons

def _qmaster_pidfile(base: Path, c: ClusterDef) -> Path:
    return _spool(base, c) / "qmaster" / "qmaster.pid"


def _execd_pidfile(base: Path, c: ClusterDef, h: SgeHost) -> Path:
    return _spool(base, c) / "execd" / h.name / "execd.pid"


def pidfiles(base: Path, c: ClusterDef) -> list[Path]:
    return [_qmaster_pidfile(base, c), *(_execd_pidfile(base, c, h) for h in exec_hosts(c))]


def site_status(base: Path, c: ClusterDef) -> dict:
    d = cluster_dir(base, c)
    return {
        "name": c.name, "scheduler": "sge", "ip": c.ip,
        "netns": all(Path(f"/run/netns/{ns}").exists() for ns in netns_names(c)),
        "qmaster": bool(_pid(_qmaster_pidfile(base, c))),
        "execd": {h.name: bool(_pid(_execd_pidfile(base, c, h))) for h in exec_hosts(c)},
        "sshd": bool(_pid(d / "run" / "sshd.pid")),
    }


def site_up(st: dict) -> bool:
    return st["netns"] and st["qmaster"] and st["sshd"] and all(st["execd"].values())


def start(base: Path, c: ClusterDef, parts: tuple[str, ...] = ("slurm", "sshd")
          ) -> list[str]:
    """Start what of `parts` is not running ("slurm" means the scheduler's daemons, as
    for the Slurm sites). The qmaster starts from its spool: queued jobs and the job-id
    sequence survive a restart."""
    started: list[str] = []
    master = hosts(c)[0]
    if "slurm" in parts:
        if not _pid(_qmaster_pidfile(base, c)):
            _run(*in_host(base, c, master, str(LIBEXEC / "sge_qmaster")), env=_daemon_env())
            started.append(f"{c.name} sge_qmaster")
            _wait(lambda: qcmd(base, c, "qconf", "-sh", check=False).returncode == 0, 60,
                  f"{c.name}'s qmaster to answer")
            _configure(base, c)
        procs = []  # each execd returns once it has registered: start them together
        for h in exec_hosts(c):
            if not _pid(_execd_pidfile(base, c, h)):
                (_spool(base, c) / "execd" / h.name).mkdir(parents=True, exist_ok=True)
                procs.append((h, subprocess.Popen(
                    in_host(base, c, h, str(LIBEXEC / "sge_execd")), env=_daemon_env(),
                    stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                    text=True)))
        for h, proc in procs:
            out, err = proc.communicate(timeout=60)
            if proc.returncode != 0:
                raise TestbedError(f"{c.name}: sge_execd on {h.name} failed "
                                   f"({proc.returncode}): {(err or out).strip()}")
            started.append(f"{c.name} sge_execd {h.name}")
    if "sshd" in parts and not _pid(cluster_dir(base, c) / "run" / "sshd.pid"):
        Path("/run/sshd").mkdir(exist_ok=True)
        _run(*in_host(base, c, master, _which("sshd") or "sshd", "-f",
                      str(cluster_dir(base, c) / "etc" / "sshd_config")))
        started.append(f"{c.name} sshd")
    return started


def _configure(base: Path, c: ClusterDef) -> None:
    """What spooldefaults cannot make: each exec host's own gid range (`gid_ranges`), the
    host group, the queues and a scheduler that dispatches at once; each added only when
    missing."""
    sd = sge_dir(base, c)
    t = sd / "templates"
    t.mkdir(exist_ok=True)
    groups = qcmd(base, c, "qconf", "-shgrpl", check=False).stdout.split()
    if "@allhosts" not in groups:
        (t / "allhosts").write_text("group_name @allhosts\nhostlist "
                                    + " ".join(h.name for h in exec_hosts(c)) + "\n")
        qcmd(base, c, "qconf", "-Ahgrp", str(t / "allhosts"))
    local = t / "local_conf"
    local.mkdir(exist_ok=True)
    for host, ids in gid_ranges(c).items():
        shown = qcmd(base, c, "qconf", "-sconf", host, check=False)
        if re.search(rf"(?m)^gid_range\s+{ids}$", shown.stdout):
            continue
        (local / host).write_text(f"gid_range {ids}\n")  # qconf names it by the file's name
        qcmd(base, c, "qconf", "-Mconf" if shown.returncode == 0 else "-Aconf",
             str(local / host))
    have = qcmd(base, c, "qconf", "-sql", check=False).stdout.split()
    for seq, p in enumerate(c.partitions):
        if p.name not in have:
            (t / f"queue-{p.name}").write_text(_queue(c, p.name, _h_rt(p.max_time), seq))
            qcmd(base, c, "qconf", "-Aq", str(t / f"queue-{p.name}"))
    sconf = qcmd(base, c, "qconf", "-ssconf").stdout
    fast = {"schedule_interval": "0:0:1", "flush_submit_sec": "1", "flush_finish_sec": "1",
            "job_load_adjustments": "NONE", "load_adjustment_decay_time": "0:0:0",
            "schedd_job_info": "true", "queue_sort_method": "seqno"}
    lines = []
    for line in sconf.splitlines():
        key = line.split()[0] if line.strip() else ""
        lines.append(f"{key:<33} {fast[key]}" if key in fast else line)
    (t / "sched_conf").write_text("\n".join(lines) + "\n")
    qcmd(base, c, "qconf", "-Msconf", str(t / "sched_conf"))


def ready(base: Path, c: ClusterDef) -> bool:
    """Every exec host reported in: its queue instances show no unknown ('u') state."""
    r = qcmd(base, c, "qstat", "-f", "-xml", check=False)
    if r.returncode != 0:
        return False
    try:
        root = ET.fromstring(r.stdout)
    except (ET.ParseError, ValueError):
        return False
    seen: dict[str, bool] = {}
    for q in root.iter("Queue-List"):
        name = (q.findtext("name") or "").split("@")[-1]
        state = q.findtext("state") or ""
        seen[name] = seen.get(name, True) and not re.search(r"[uEdDo]", state)
    return all(seen.get(h.name) for h in exec_hosts(c))


def stop(base: Path, c: ClusterDef, parts: tuple[str, ...], *,
         kill: bool = False) -> list[tuple[str, list[int]]]:
    """SIGTERM the daemons of `parts` (SIGKILL with `kill`: for a teardown, as the qmaster's
    controlled shutdown takes about 7 s here); returns (what, pids) for the caller to wait
    on. After SIGTERM the qmaster has saved its state; jobs keep running under their
    shepherds either way."""
    files: list[tuple[str, Path]] = []
    if "slurm" in parts:
        files += [(f"{c.name} sge_qmaster", _qmaster_pidfile(base, c))]
        files += [(f"{c.name} sge_execd {h.name}", _execd_pidfile(base, c, h))
                  for h in exec_hosts(c)]
    if "sshd" in parts:
        files.append((f"{c.name} sshd", cluster_dir(base, c) / "run" / "sshd.pid"))
    out = []
    for what, f in files:
        pid = _pid(f)
        if not pid:
            continue
        victims = [pid, *(_descendants(pid) if f.name == "sshd.pid" else [])]
        for p in victims:
            with contextlib.suppress(ProcessLookupError):
                os.kill(p, signal.SIGTERM if p == pid and not kill else signal.SIGKILL)
        out.append((what, victims))
    return out


def check_installed() -> str | None:
    """What is missing to run a Grid Engine site here (None: nothing)."""
    need = [LIBEXEC / "sge_qmaster", LIBEXEC / "sge_execd", LIBEXEC / "spoolinit",
            Path("/usr/bin/qsub"), Path("/usr/share/gridengine/default-configuration")]
    missing = [str(p) for p in need if not p.exists()]
    if missing:
        return ("Grid Engine is not installed (missing " + ", ".join(missing) + "); install "
                "with `apt-get install -y --no-install-recommends gridengine-master "
                "gridengine-exec gridengine-client`")
    return None


def _user() -> str:
    return USER
