"""Sites files, seventh sweep, as centers and users write them: a slurmrestd door whose JWT
file others can read, known_hosts files with hashed names (`HashKnownHosts yes`, a port
too), ssh_config's `IdentityAgent` (a password manager's agent socket, or `none`), a
`default_partition` the site no longer has, and the doors' keys mixed. Each file's answer
was worked out by hand: what it builds, or its one-line refusal naming the file, the site,
the key and what to do; `diamond sites` exits 2 on it. The tests marked `fault` failed
before this sweep's fixes."""

from __future__ import annotations

import socket
import struct
import threading
from pathlib import Path

import paramiko
import pytest
from test_config_unseen2 import loads, refused, write
from test_placement_cases import hera, only, run

from diamond_jupyter.cli import main
from diamond_jupyter.transports.ssh_auth import (
    HostKeyError,
    HostKeyVerifier,
    HostSpec,
    _keys,
    agent_socket,
    load_ssh_config,
    resolve_host,
    ssh_home,
)


@pytest.fixture
def d(tmp_path: Path) -> Path:
    (tmp_path / "jwt").write_text("eyJhbGciOiJIUzI1NiJ9.eyJzdW4iOiJhbmEifQ.c2ln\n")
    (tmp_path / "jwt").chmod(0o600)
    return tmp_path


def rest(d: Path, token: str = "jwt") -> str:
    return ("sites:\n  - name: campus\n    scheduler: slurm\n    workdir: /scratch/ana/diamond\n"
            "    transport:\n      kind: slurmrestd\n      url: https://slurm.campus.edu:6820\n"
            f"      token_file: {d}/{token}\n")


# -- 1-4. a slurmrestd door's JWT file ---------------------------------------------------------

def test_fault_a_jwt_file_others_can_read_is_refused(d):
    """`scontrol token > ~/.slurm.jwt` under umask 022 leaves it 644: any user of the
    machine could submit as ana. It was accepted."""
    (d / "jwt").chmod(0o644)
    msg = refused(d, rest(d))
    assert msg == (f"sites file {d}/sites.yaml: site 'campus' (sites[0]): transport.token_file: "
                   f"{d}/jwt can be read by other users (mode 644); its JWT lets whoever reads "
                   f"it act as you at slurmrestd: `chmod 600 {d}/jwt` (line 8)")


def test_fault_a_group_readable_jwt_file_exits_2(d, capsys):
    (d / "jwt").chmod(0o640)
    assert main(["sites", "--config", str(write(d, rest(d)))]) == 2
    err = capsys.readouterr().err.strip()
    assert "can be read by other users (mode 640)" in err and len(err.splitlines()) == 1


def test_a_private_jwt_file_loads(d):
    t = loads(d, rest(d)).site("campus").transport
    assert (t.kind, t.url, t.token_file) == ("slurmrestd", "https://slurm.campus.edu:6820",
                                             f"{d}/jwt")


def test_a_jwt_file_not_made_yet_loads_and_is_read_when_the_site_is(d):
    """A token a cron job writes (`scontrol token lifespan=...`) may come after the file is
    written; it is read (and a missing one said) when the site is used."""
    assert loads(d, rest(d, "later.jwt")).site("campus").transport.token_file == \
        f"{d}/later.jwt"


def test_an_ssh_key_on_a_slurmrestd_door_is_refused(d):
    msg = refused(d, rest(d) + f"      key_file: {d}/id\n")
    assert "key_file: for a transport of kind ssh, not slurmrestd" in msg


# -- 5-6. known_hosts with hashed names ---------------------------------------------------------

KEY = paramiko.RSAKey.generate(1024)
OTHER = paramiko.RSAKey.generate(1024)


def hashed_known_hosts(d: Path, name: str) -> Path:
    """A line as `ssh-keygen -H` writes it: |1|salt|HMAC-SHA1 of the name, then the key."""
    f = d / "known_hosts"
    f.write_text(f"{paramiko.HostKeys.hash_host(name)} {KEY.get_name()} {KEY.get_base64()}\n")
    return f


@pytest.mark.parametrize("port,name", [(22, "login.hpc.example.org"),
                                       (2222, "[login.hpc.example.org]:2222")])
def test_a_hashed_known_hosts_name_is_matched(d, port, name):
    f = hashed_known_hosts(d, name)
    spec = HostSpec(alias="hpc", hostname="login.hpc.example.org", port=port, user="ana")
    v = HostKeyVerifier("hpc", str(f), tofu=False)
    v.verify(spec, KEY)  # the key the hashed line holds: accepted
    with pytest.raises(HostKeyError, match="HAS CHANGED"):
        v.verify(spec, OTHER)


# -- 7-9. ssh_config's IdentityAgent -----------------------------------------------------------

def fake_agent(path: Path, *keys: paramiko.PKey) -> threading.Thread:
    """An ssh-agent at `path` holding `keys`: answers one identities request."""
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(str(path))
    srv.listen(1)

    def serve() -> None:
        conn, _ = srv.accept()
        with conn:
            size = struct.unpack(">I", conn.recv(4))[0]
            conn.recv(size)  # SSH2_AGENTC_REQUEST_IDENTITIES
            body = bytes([12]) + struct.pack(">I", len(keys))
            for key in keys:
                blob = key.asbytes()
                body += struct.pack(">I", len(blob)) + blob + struct.pack(">I", 4) + b"test"
            conn.sendall(struct.pack(">I", len(body)) + body)
        srv.close()

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    return t


def spec_for(d: Path, lines: str) -> HostSpec:
    (d / "ssh_config").write_text("Host hpc\n  HostName login.hpc.example.org\n" + lines)
    return resolve_host(load_ssh_config(str(d / "ssh_config")), "hpc")


def test_fault_identity_agent_names_the_socket_keys_come_from(d, monkeypatch):
    """`IdentityAgent ~/.1password/agent.sock`: ssh asks that agent; the engine asked
    $SSH_AUTH_SOCK's (another agent, or none), and the login failed where ssh succeeds."""
    sock = d / "pm-agent.sock"
    served = fake_agent(sock, KEY)
    monkeypatch.setenv("SSH_AUTH_SOCK", str(d / "no-agent-here.sock"))
    spec = spec_for(d, f"  IdentityAgent {sock}\n")
    assert spec.identity_agent == str(sock)
    keys = _keys("hpc", spec, use_agent=True)
    served.join(5)
    assert [(label, k.get_base64()) for label, k in keys] == [("agent:ssh-rsa",
                                                               KEY.get_base64())]


def test_fault_identity_agent_none_uses_no_agent(d, monkeypatch):
    sock = d / "env-agent.sock"
    fake_agent(sock, KEY)
    monkeypatch.setenv("SSH_AUTH_SOCK", str(sock))
    spec = spec_for(d, "  IdentityAgent none\n")
    assert agent_socket(spec.identity_agent) is None
    assert not any(label.startswith("agent:") for label, _ in
                   _keys("hpc", spec, use_agent=True))


@pytest.mark.parametrize("written,want", [
    ("SSH_AUTH_SOCK", "/run/user/1000/agent"), ("$SSH_AUTH_SOCK", "/run/user/1000/agent"),
    ("~/.ssh/agent.sock", "HOME/.ssh/agent.sock"), ("${UNSET_AGENT_DIR}/s", None),
    (None, "/run/user/1000/agent"),
])
def test_identity_agent_values_as_ssh_reads_them(monkeypatch, tmp_path, written, want):
    monkeypatch.setenv("SSH_AUTH_SOCK", "/run/user/1000/agent")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("UNSET_AGENT_DIR", raising=False)
    # `~` the password database's home, as ssh's (never $HOME)
    assert agent_socket(written) == (want.replace("HOME", ssh_home()) if want else None)


# -- 10. a default partition the site no longer has ------------------------------------------------

def test_fault_a_default_partition_the_site_lacks_is_said_and_not_used():
    """hera's partitions are cpu (its default), debug, gpu and old; the sites file still
    says `default_partition: gpu-old`. It was used silently as the tie-break default."""
    cfg, snap = hera()
    p = run("#SBATCH -N 1 -n 4 -t 1:00:00",
            (cfg.model_copy(update={"default_partition": "gpu-old"}), snap))
    v = only(p, "hera", "cpu")
    assert "the sites file's default_partition 'gpu-old' is not a partition of hera (it has: " \
           "cpu, debug, gpu, old); not used: the default is cpu" in v.notes


def test_a_default_partition_outside_the_allowed_ones_is_refused(d):
    msg = refused(d, "sites:\n  - name: a\n    transport: {kind: local}\n"
                     "    allowed_partitions: [cpu, gpu]\n    default_partition: debug\n")
    assert "default_partition 'debug' is not in" in msg


# -- keys a center's admin writes for what a site holds elsewhere --------------------------

@pytest.mark.parametrize("key,value,said", [
    ("module_paths", "[/opt/modules]", "write them in the preamble (preamble: | then "
                                       "`module use /PATH` lines)"),
    ("modulepath", "/opt/modules", "`module use /PATH`"),
    ("modules", "[gcc, openmpi]", "`module load NAME` lines); the software a site offers, "
                                  "for placement, is metadata: {software: [NAME, ...]}"),
    ("qos", "normal", "a QOS is a job's (its qos, or #SBATCH --qos in its script)"),
    ("default_qos", "normal", "a QOS is a job's"),
    ("environment", "{OMP_NUM_THREADS: 4}", "(did you mean env?"),
    ("environment_variables", "{OMP_NUM_THREADS: 4}", "(did you mean env?"),
    ("env_vars", "{OMP_NUM_THREADS: 4}", "(did you mean env?"),
    ("partition", "gpu", "(did you mean default_partition?"),
    ("queue", "gpu", "(did you mean default_partition?"),
    ("account", "m1234", "(did you mean default_account?"),
])
def test_fault_a_key_an_admin_would_try_says_where_it_goes(d, key, value, said):
    """`module_paths`, `modules`, `qos` were refused with the accepted keys only (and
    `default_qos` was taken for default_account); `environment` pointed nowhere."""
    msg = refused(d, "sites:\n  - name: a\n    transport: {kind: local}\n"
                     f"    {key}: {value}\n")
    assert msg.startswith(f"sites file {d}/sites.yaml: site 'a' (sites[0]): {key}: unknown key")
    assert said in msg and msg.endswith("(line 4)")
    assert "did you mean default_account" not in msg or key == "account"
