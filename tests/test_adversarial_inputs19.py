"""Sweep 19 of hostile and new-user inputs, through the faces and everyday use, without the
test bed: an SSH door that refuses the login at the moment of a submit (a real private sshd, a
real keyboard-interactive server), `diamond logs --follow --stderr`, `diamond submit`'s
resource options in forms a user may type, sites files reached through link loops, REST bodies
built to break a JSON parser, magic cells of comments alone, forged notebook outputs, and an
agent plan naming no real tool or the same submit twice.

The standard is the earlier sweeps': a hostile input is answered with an error naming what was
wrong, where, and what would be accepted, never a traceback, and nothing is lost or sent.
Tests marked `fault` failed before this sweep's fixes; the others are guards."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from sshd_helper import MfaSshServer, Sshd, keygen, make_base, remove_base

from diamond_jupyter.federation import Federation
from diamond_jupyter.model import JobSpec, JobState
from diamond_jupyter.store import Store
from diamond_jupyter.transports import AuthError, HostKeyError

# ---- (1) the SSH door refuses the login as a job is submitted: closed at once ----

def _ssh_site_fed(tmp_path: Path, *, port: int, user: str, key: Path, known_hosts: Path,
                  ssh_config: Path) -> Federation:
    site = {"name": "alpha", "scheduler": "slurm", "workdir": str(tmp_path / "wd"),
            "transport": {"kind": "ssh", "host": "127.0.0.1", "port": port, "user": user,
                          "key_file": str(key), "known_hosts": str(known_hosts),
                          "use_agent": False, "ssh_config": str(ssh_config),
                          "connect_timeout_s": 5, "reconnect_attempts": 1}}
    sites = tmp_path / "sites.yaml"
    sites.write_text(yaml.safe_dump({"sites": [site]}))
    return Federation(sites, store=Store(tmp_path / "store.sqlite"), poll_interval_s=3600,
                      min_poll_s=3600)


async def _submit_refused_at_the_door(fed: Federation, tmp_path: Path) -> Exception:
    """A forced submit to alpha, which must fail; its intent must be closed already (never
    submitted, FAILED, no native id) and nothing must have run on the site."""
    spec = JobSpec(name="door", command=f"touch {tmp_path / 'ran'}",
                   working_directory=str(tmp_path))
    with pytest.raises((AuthError, HostKeyError)) as told:
        await fed.submit(spec, "alpha", force=True)
    assert fed.store.intents_without_native_id() == []  # closed, not left to the settle time
    [job] = fed.store.list_jobs()
    assert job.state == JobState.FAILED and job.native_id is None
    assert "alpha: the submit could not be sent" in (job.reason or "")
    assert not (tmp_path / "ran").exists() and not (tmp_path / "wd").exists()
    return told.value


@pytest.fixture
def own_sshd():
    """A private sshd whose authorized keys this test alone changes."""
    base = make_base()
    d = Sshd(base).start()
    (base / "empty_ssh_config").write_text("")
    (base / "known_hosts").write_text(d.known_hosts_line())
    yield d
    d.stop()
    remove_base(base)


async def test_fault_a_key_the_site_refuses_closes_the_submit_at_once(own_sshd, tmp_path):
    d = own_sshd
    wrong = keygen(tmp_path / "not_authorized")
    fed = _ssh_site_fed(tmp_path, port=d.port, user=d.user, key=wrong,
                        known_hosts=d.base / "known_hosts",
                        ssh_config=d.base / "empty_ssh_config")
    try:
        e = await _submit_refused_at_the_door(fed, tmp_path)
        assert str(e).startswith("alpha: authentication failed for ")
        assert "(tried publickey not_authorized)" in str(e)
        assert str(e).endswith(
            "; nothing was submitted: check alpha's credentials in the sites file (key_file, "
            "cert_file, the ssh_config's IdentityFile or the agent) and that the site accepts "
            "that key, then submit again")
    finally:
        await fed.close()


async def test_fault_a_key_revoked_while_connected_closes_the_next_submit_at_once(
        own_sshd, tmp_path):
    """Connected with a good key; the site then revokes it and drops the link: the submit's
    reconnect is refused before the command goes."""
    d = own_sshd
    fed = _ssh_site_fed(tmp_path, port=d.port, user=d.user, key=d.client_key,
                        known_hosts=d.base / "known_hosts",
                        ssh_config=d.base / "empty_ssh_config")
    try:
        assert (await fed.site("alpha").run(["echo", "in"])).stdout == "in\n"
        (d.base / f"authorized_keys.{d.user}").write_text("")
        d.kill_connections()
        e = await _submit_refused_at_the_door(fed, tmp_path)
        assert "nothing was submitted: check alpha's credentials" in str(e)
    finally:
        await fed.close()


async def test_fault_a_host_key_that_changed_closes_the_submit_at_once(own_sshd, tmp_path):
    d = own_sshd
    other = keygen(tmp_path / "other_host")
    pub = Path(f"{other}.pub").read_text().split()
    (tmp_path / "known_hosts").write_text(f"[127.0.0.1]:{d.port} {pub[0]} {pub[1]}\n")
    fed = _ssh_site_fed(tmp_path, port=d.port, user=d.user, key=d.client_key,
                        known_hosts=tmp_path / "known_hosts",
                        ssh_config=d.base / "empty_ssh_config")
    try:
        e = await _submit_refused_at_the_door(fed, tmp_path)
        assert isinstance(e, HostKeyError)
        assert str(e).endswith("; nothing was submitted: check alpha's host key (known_hosts) "
                               "before submitting again")
    finally:
        await fed.close()


@pytest.mark.parametrize("answer, why", [
    ("000000", "the one-time code was not accepted"),
    (None, "no one-time code was given"),
])
async def test_fault_a_one_time_code_refused_at_submit_closes_it_and_says_log_in(
        own_sshd, tmp_path, answer, why):
    srv = MfaSshServer(tmp_path, own_sshd.client_key)
    (tmp_path / "known_hosts").write_text(srv.known_hosts_line())
    (tmp_path / "ssh_config").write_text("")
    fed = _ssh_site_fed(tmp_path, port=srv.port, user=srv.user, key=own_sshd.client_key,
                        known_hosts=tmp_path / "known_hosts", ssh_config=tmp_path / "ssh_config")
    asked: list[object] = []

    def ask(title, instructions, prompts):
        asked.append(prompts)
        if answer is None:
            raise RuntimeError("the dialog was closed")
        return [answer]

    fed.set_interactive_handler(ask)
    try:
        e = await _submit_refused_at_the_door(fed, tmp_path)
        assert isinstance(e, AuthError) and e.interactive  # the faces' "log in" cue kept
        assert why in str(e) and len(asked) == 1  # asked once, never again by itself
        assert str(e).endswith("; nothing was submitted: log in to alpha (`diamond login "
                               "alpha`, or the site's Log in button in JupyterLab), then "
                               "submit again")
        assert fed.needs_login("alpha")
        # the next submit is refused at once too, without a prompt or a connection
        connections = srv.connections
        spec = JobSpec(name="again", command="true", working_directory=str(tmp_path))
        with pytest.raises(AuthError, match="nothing was submitted: log in to alpha"):
            await fed.submit(spec, "alpha", force=True)
        assert srv.connections == connections and len(asked) == 1
        assert fed.store.intents_without_native_id() == []
        assert {j.state for j in fed.store.list_jobs()} == {JobState.FAILED}
    finally:
        await fed.close()
        srv.stop()
