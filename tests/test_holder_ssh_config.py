"""`diamond login SITE` keeps the login as the user's ssh_config keeps the host's ssh logins
(ControlMaster with ControlPersist, as OpenSSH reads them), `--persist` overriding; read from
written ssh_config files, and with the real holder process against a private sshd."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from test_mfa_holder import _cli, _fed, _sites, runtime_dir  # noqa: F401 (a fixture)

from diamond_jupyter.config import TransportConfig
from diamond_jupyter.model import BadInput
from diamond_jupyter.transports import ssh_holder
from diamond_jupyter.transports.ssh import SSHTransport

SHARED = "Host cluster\n  HostName 127.0.0.1\n  ControlMaster auto\n  ControlPath ~/.ssh/cm-%C\n"


def _keeps(tmp_path: Path, text: str) -> dict:
    cfg = tmp_path / "ssh_config"
    cfg.write_text(text)
    t = SSHTransport(TransportConfig(kind="ssh", host="cluster", user="u", ssh_config=str(cfg)),
                     site="alpha")
    return t.ssh_config_keeps()


@pytest.mark.parametrize(("persist", "idle_s"), [
    ("30m", 1800.0), ("1h30m", 5400.0), ("600", 600.0), ("2H", 7200.0),
    ("yes", math.inf), ("0", math.inf), ("no", None)])
def test_control_persist_is_read_as_openssh_means_it(tmp_path, persist, idle_s):
    said = _keeps(tmp_path, SHARED + f"  ControlPersist {persist}\n")
    assert said["idle_s"] == idle_s
    assert said["control_path"] == "~/.ssh/cm-%C"
    if idle_s is not None:
        assert said["origin"] == f"ssh_config {tmp_path / 'ssh_config'} line 5: " \
                                 f"ControlPersist {persist}"


@pytest.mark.parametrize("text", [
    "Host cluster\n  ControlPersist 30m\n",  # no ControlMaster: ssh shares nothing
    SHARED.replace("ControlMaster auto", "ControlMaster no") + "  ControlPersist 30m\n",
    SHARED.replace("~/.ssh/cm-%C", "none") + "  ControlPersist yes\n",
    SHARED,  # a master, but no ControlPersist: it ends with ssh's own command
    "Host other\n  ControlMaster auto\n  ControlPath /tmp/x\n  ControlPersist 1h\n"])
def test_nothing_kept_where_ssh_keeps_nothing(tmp_path, text):
    assert _keeps(tmp_path, text)["idle_s"] is None


def test_a_control_persist_ssh_refuses_is_refused_naming_its_line(tmp_path):
    with pytest.raises(BadInput, match=r"ssh_config \S+ssh_config line 5: ControlPersist "
                                       r"'10min' is not yes, no or a time such as 600, 10m or "
                                       r"1h30m \(ssh refuses it too"):
        _keeps(tmp_path, SHARED + "  ControlPersist 10min\n")


def _site(tmp_path: Path, own_sshd, ssh_config: str) -> Path:
    sites = _sites(tmp_path, port=own_sshd.port, user=own_sshd.user, key=own_sshd.client_key,
                   known_hosts=own_sshd.base / "known_hosts")
    (tmp_path / "ssh_config").write_text(ssh_config)
    return sites


async def test_login_keeps_as_ssh_config_says_and_persist_overrides(runtime_dir, tmp_path,  # noqa: F811
                                                                    own_sshd):
    sites = _site(tmp_path, own_sshd, "Host 127.0.0.1\n  ControlMaster auto\n"
                                      "  ControlPath ~/.ssh/cm-%r@%h:%p\n  ControlPersist 1h\n")
    cli = _cli(tmp_path, "login", "alpha", "--config", str(sites))
    assert cli.returncode == 0, cli.stderr
    assert cli.stdout == (
        "alpha: logged in; the connection is kept for later commands until unused for "
        f"3600 s (as ssh_config {tmp_path / 'ssh_config'} line 4: ControlPersist 1h; "
        "`diamond logout alpha` ends it)\n"
        "alpha: ssh_config's ControlPath ~/.ssh/cm-%r@%h:%p is ssh's own; diamond keeps its "
        "logins in a holder of its own\n")
    socket = next((runtime_dir / "diamond-ssh").glob("*.sock"))
    # `--persist no`: a plain login (through the holder there), nothing more kept
    plain = _cli(tmp_path, "login", "alpha", "--persist", "no", "--config", str(sites), "--json")
    assert plain.returncode == 0 and "holder" not in json.loads(plain.stdout), plain.stderr
    assert ssh_holder.stop(socket, own_sshd.user)
    # `--persist 2m` over ssh_config's hour
    fed = _fed(sites, tmp_path, [])
    try:
        res = await fed.login("alpha", persist_s=120)
        assert res["holder"]["idle_s"] == 120 and res["holder"]["origin"] is None
        assert res["new_connection"] is True
    finally:
        await fed.logout("alpha")
        await fed.close()
    assert ssh_holder.wait_spawned(res["holder"]["pid"], 30) == 0


async def test_control_persist_yes_keeps_until_logout(runtime_dir, tmp_path, own_sshd):  # noqa: F811
    sites = _site(tmp_path, own_sshd, "Host *\n  ControlMaster yes\n  ControlPath /tmp/%C\n"
                                      "  ControlPersist yes\n")
    fed = _fed(sites, tmp_path, [])
    try:
        res = await fed.login("alpha", as_ssh_config=True)
        assert res["holder"]["idle_s"] is None and res["new_connection"] is True
        assert res["ssh_control_path"] == "/tmp/%C"
        assert (await fed.logout("alpha"))["stopped"] is True
    finally:
        await fed.close()
    assert ssh_holder.wait_spawned(res["holder"]["pid"], 30) == 0
    assert list((runtime_dir / "diamond-ssh").iterdir()) == []


async def test_no_control_persist_is_a_plain_login(runtime_dir, tmp_path, own_sshd):  # noqa: F811
    sites = _site(tmp_path, own_sshd, "")
    fed = _fed(sites, tmp_path, [])
    try:
        res = await fed.login("alpha", as_ssh_config=True)
    finally:
        await fed.close()
    assert res == {"site": "alpha", "new_connection": True}
    assert list(runtime_dir.rglob("*.sock")) == []
