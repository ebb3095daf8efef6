"""Sites files and ssh_config, thirteenth sweep: ssh_config as HPC centers hand it out, each
case checked against what this machine's `ssh -G HOST -F FILE` prints (it resolves without
connecting and runs no ProxyCommand): `CanonicalizeHostname` with `CanonicalDomains` (ssh
canonicalizes the HostName, not the alias), `Match canonical` and `Match final`,
`ProxyCommand` with `%h %p` (an `ssh -W` one is read as the jump host it names, any other is
never run and the refusal says so), `SetEnv`, `SendEnv`, `ServerAliveInterval` and
`ConnectTimeout` in ssh's time forms. A value ssh refuses is refused naming the file, the
line and what is accepted. Also the server's traitlets config (`c.DiamondApp...` of the
wrong type, or misspelt: the right name suggested) and a center's sites file (a slurmrestd
JWT file others can read, keys carried over from other tools, a no-hedging policy).
The tests marked `fault` failed before this sweep's fixes."""

import subprocess
from pathlib import Path

import pytest
from test_config_unseen12 import both

from diamond_jupyter.transports.ssh_auth import HostSpec

pytestmark = pytest.mark.skipif(
    subprocess.run(["ssh", "-V"], capture_output=True).returncode != 0,
    reason="OpenSSH's ssh is not installed")

CANON = "CanonicalizeHostname {mode}\nCanonicalDomains hpc.example.invalid\n"

# (config, host): the engine dials the host name, port and login `ssh -G` prints
SAME_AS_SSH = [
    (CANON.format(mode="yes") + "Host hpc\n  HostName login\n", "hpc"),  # fault: alias dialled
    (CANON.format(mode="always") + "Host hpc\n  HostName login\n", "hpc"),  # fault
    (CANON.format(mode="yes") + "Host hpc\n  HostName login.a.b.c\n", "hpc"),  # fault: 3 dots
    (CANON.format(mode="no") + "Host hpc\n  HostName login\n", "hpc"),
    (CANON.format(mode="yes") + "Host login\n  Port 2222\n", "login"),
    (CANON.format(mode="yes") + "CanonicalizeMaxDots 0\nHost hpc\n  HostName a.b\n",
     "hpc"),  # fault
    (CANON.format(mode="yes") + "Match canonical host login\n  User alice\n"
     "Host hpc\n  HostName login\n", "hpc"),  # fault: canonical pass matched on the alias
    ("Match canonical final\n  Port 2\n", "hpc"),  # fault: the last pass is canonical
    ("Match canonical\n  Port 2\n", "hpc"),  # no canonicalization, no second pass
    ("Match final host login.example.org\n  Port 2201\nHost hpc\n  HostName "
     "login.example.org\n", "hpc"),
    ("Match canonical all\n  Port 2200\nHost hpc\n  HostName login.example.org\n", "hpc"),
    ("Match !canonical\n  Port 2300\n", "hpc"),
    ("Host hpc\n  HostName login.example.org\n  SetEnv LANG=C TERM=xterm\n  SendEnv LC_*\n"
     "  ServerAliveInterval 30\n  ServerAliveCountMax 4\n", "hpc"),
    ("Host hpc\n  ServerAliveInterval 30s\n", "hpc"),
    ("Host hpc\n  ServerAliveInterval 1m\n", "hpc"),
    ("Host hpc\n  ServerAliveInterval 1h30m\n", "hpc"),
    ("Host hpc\n  ServerAliveCountMax 0\n", "hpc"),
    ("Host hpc\n  ServerAliveInterval 30 # seconds between probes\n", "hpc"),
    ("Host hpc\n  ConnectTimeout 10\n  TCPKeepAlive no\n", "hpc"),
    ('Host hpc\n  SetEnv "MSG=a b" X=1\n', "hpc"),
    ("Host hpc\n  SendEnv -LC_*\n", "hpc"),
    ("Host hpc\n  SendEnv LANG LC_* SLURM_*\n  SetEnv SLURM_ACCOUNT=proj1\n", "hpc"),
    ("Host *\n  ServerAliveInterval 60\n  ServerAliveCountMax 3\nHost hpc\n  Port 2022\n",
     "hpc"),
    ("Host hpc\n  ProxyCommand none\n  HostName h2\n", "hpc"),
    ("Host hpc\n  HostName login.example.org\n  ProxyCommand nc -X 5 -x socks.example.org:1080 "
     "%h %p\n", "hpc"),
    ("Host hpc\n  HostName login.example.org\n  ProxyCommand ssh -W %h:%p gw.example.org\n",
     "hpc"),
    ("Host hpc\n  ProxyCommand ssh gw nc %h %p\n", "hpc"),
    ("Host hpc\n  CanonicalizeFallbackLocal yes\n  CanonicalizeHostname yes\n"
     "  CanonicalDomains example.invalid\n", "hpc"),
]


@pytest.mark.parametrize("text,host", SAME_AS_SSH)
def test_the_engine_dials_what_ssh_g_resolves(tmp_path, text, host):
    """A center's ssh_config resolves to the host name, port and login `ssh -G` prints.
    Under `CanonicalizeHostname yes` the engine dialled the alias and lost the HostName
    (paramiko canonicalizes the name typed, ssh the HostName), and a `Match canonical`
    block was never applied in the last pass `Match final` makes."""
    ssh, spec = both(tmp_path, text, host)
    assert isinstance(ssh, dict), ssh
    assert isinstance(spec, HostSpec), spec
    assert (spec.hostname, str(spec.port), spec.user) == (
        ssh["hostname"], ssh["port"], ssh["user"]), (ssh, spec)


# (config, keyword, what the refusal says is accepted): ssh refuses the line; so does the
# engine, naming the file, the line and the accepted forms
REFUSED_AS_SSH = [
    ("Host hpc\n  ServerAliveInterval -1\n", "ServerAliveInterval", "1h30m"),  # fault
    ("Host hpc\n  ServerAliveInterval thirty\n", "ServerAliveInterval", "30s"),  # fault
    ("Host hpc\n  ServerAliveInterval 30sec\n", "ServerAliveInterval", "30s"),  # fault
    ("Host hpc\n  ConnectTimeout 10 s\n", "ConnectTimeout", "extra arguments"),  # fault
    ("Host hpc\n  ConnectTimeout ten\n", "ConnectTimeout", "30s"),  # fault
    ("Host hpc\n  ServerAliveCountMax three\n", "ServerAliveCountMax", "whole number"),  # fault
    ("Host hpc\n  SetEnv NOEQ\n", "SetEnv", "NAME=value"),  # fault
    ("Host hpc\n  SetEnv LANG=C TERM\n", "SetEnv", "NAME=value"),  # fault
    ("Host hpc\n  CanonicalizeHostname maybe\n", "CanonicalizeHostname",
     "yes, no or always"),  # fault
    ("Host hpc\n  CanonicalizeMaxDots two\n", "CanonicalizeMaxDots", "whole number"),  # fault
    ("Host hpc\n  CanonicalizeFallbackLocal always\n", "CanonicalizeFallbackLocal",
     "yes or no"),  # fault
    ("Host other\n  ServerAliveInterval soon\nHost hpc\n  Port 22\n", "ServerAliveInterval",
     "30s"),  # fault: ssh refuses it whatever host the block is for
]


@pytest.mark.parametrize("text,keyword,accepted", REFUSED_AS_SSH)
def test_a_value_ssh_refuses_is_refused_naming_file_line_and_accepted_forms(
        tmp_path, text, keyword, accepted):
    """A value ssh refuses (`invalid time value`, `Invalid SetEnv`, `unsupported option`)
    was taken by the engine, which then kept the connection alive on its own terms or not
    at all; now it is refused on the line ssh names, saying what is accepted."""
    ssh, spec = both(tmp_path, text)
    assert isinstance(ssh, str), ssh
    line = ssh.split(" line ")[1].split(":")[0]
    assert isinstance(spec, str), (ssh, spec)
    assert spec.startswith(f"ssh_config {tmp_path}/ssh_config line {line}: {keyword}"), spec
    assert accepted in spec and "ssh refuses the line too" in spec and "\n" not in spec, spec


@pytest.mark.parametrize("command,jump", [
    ("ssh -W %h:%p gw.example.org", "gw.example.org"),
    ("/usr/bin/ssh -q -W %h:%p alice@gw.example.org", "alice@gw.example.org"),
    ("exec ssh -W %h:%p -p 2022 gw.example.org", "gw.example.org:2022"),
])
def test_a_proxy_command_of_ssh_w_is_the_jump_host_it_names(tmp_path, command, jump):
    """`ProxyCommand ssh -W %h:%p GW` is not run: it is read as the jump host GW, which
    the engine reaches itself over paramiko (ssh -G shows the command kept as written)."""
    text = f"Host hpc\n  HostName login.example.org\n  ProxyCommand {command}\n"
    ssh, spec = both(tmp_path, text)
    assert isinstance(ssh, dict) and ssh["proxycommand"] == command, ssh
    assert isinstance(spec, HostSpec), spec
    assert spec.proxy_jump == jump and spec.proxy_problem is None, spec


@pytest.mark.parametrize("command", [
    "nc -X 5 -x socks.example.org:1080 %h %p",
    "ssh gw nc %h %p",
    "sh -c 'touch /tmp/diamond-h6-ran; nc %h %p'",
    "corkscrew proxy.example.org 8080 %h %p",
])
def test_any_other_proxy_command_is_never_run_and_the_reason_says_so(tmp_path, command):
    """Any other ProxyCommand (netcat through a SOCKS proxy, corkscrew) is never run: the
    host is marked as not reachable the way ssh reaches it, and the reason names the
    command and says it is not run."""
    marker = Path("/tmp/diamond-h6-ran")
    marker.unlink(missing_ok=True)
    ssh, spec = both(tmp_path, f"Host hpc\n  ProxyCommand {command}\n")
    assert isinstance(ssh, dict), ssh
    assert isinstance(spec, HostSpec), spec
    assert spec.proxy_jump is None and spec.proxy_problem, spec
    assert "ProxyCommand" in spec.proxy_problem and "not run" in spec.proxy_problem
    assert not marker.exists()


# -- the server's traitlets config, as a JupyterHub deployment writes it -----------------

@pytest.mark.parametrize("trait,value,expected", [
    ("poll_interval_s", "60s", "expected a float, not the str '60s'"),
    ("agent_approval", "yes", "expected any of ['ask', 'auto', 'dry-run'], not the str 'yes'"),
    ("max_body_bytes", "1MB", "expected an int, not the str '1MB'"),
    ("allowed_partitions", ["debug"], "expected a dict, not the list ['debug']"),
    ("user_site_hosts", "*.partner.example.org", None),  # one pattern read as a list of one
])
def test_a_wrong_type_in_jupyter_server_config_json_names_the_trait_and_the_type(
        tmp_path, trait, value, expected):
    """`c.DiamondApp.X` of the wrong type in jupyter_server_config.json is refused naming
    the trait, the type it takes and the value given (traitlets' TraitError), before any
    site is touched; a single string where a list is taken is a list of that one string."""
    import json

    from traitlets import TraitError
    from traitlets.config.loader import JSONFileConfigLoader

    from diamond_jupyter.server.app import DiamondApp

    path = tmp_path / "jupyter_server_config.json"
    path.write_text(json.dumps({"DiamondApp": {trait: value}}))
    config = JSONFileConfigLoader(path.name, str(tmp_path)).load_config()
    if expected is None:
        assert getattr(DiamondApp(config=config), trait) == [value]
        return
    with pytest.raises(TraitError) as e:
        DiamondApp(config=config)
    assert f"'{trait}' trait of a DiamondApp instance {expected}" in str(e.value)


@pytest.mark.parametrize("written,meant", [
    ("poll_interval", "poll_interval_s"),
    ("sites_files", "sites_file"),
    ("allowed_site", "allowed_sites"),
])
def test_an_unknown_trait_in_jupyter_server_config_py_suggests_the_right_name(
        tmp_path, caplog, written, meant):
    """A misspelt `c.DiamondApp.X` in jupyter_server_config.py is not silently dropped:
    the server's log says it is not recognized and names the trait meant."""
    import logging

    from traitlets.config.loader import PyFileConfigLoader

    from diamond_jupyter.server.app import DiamondApp

    path = tmp_path / "jupyter_server_config.py"
    path.write_text(f"c.DiamondApp.{written} = {'30' if 'poll' in written else repr('x')}\n")
    config = PyFileConfigLoader(path.name, str(tmp_path)).load_config()
    app = DiamondApp(config=config, log=logging.getLogger("diamond-sweep13"))
    with caplog.at_level(logging.WARNING, logger="diamond-sweep13"):
        app._load_config(config)
    said = caplog.text
    assert f"`{written}` not recognized by `DiamondApp`" in said
    suggested = said.split("Did you mean", 1)[1].splitlines()[0]
    assert meant in suggested.replace("`", " ").replace(",", " ").split(), said


# -- a center's sites file for many users -----------------------------------------------

def _rest_site(token: Path) -> str:
    return ("sites:\n  - name: perl\n    scheduler: slurm\n    workdir: /pscratch/u\n"
            "    transport: {kind: slurmrestd, url: 'https://rest.example.org', "
            f"token_file: {token}}}\n")


@pytest.mark.parametrize("mode,refused", [(0o600, False), (0o400, False), (0o640, True),
                                          (0o644, True)])
def test_a_slurmrestd_jwt_file_others_can_read_is_refused_saying_the_chmod(
        tmp_path, mode, refused):
    """A JWT file a center's template left group- or world-readable is refused on the
    token_file's line, with the chmod that fixes it; one only its owner reads loads."""
    from test_config_unseen2 import write

    from diamond_jupyter.config import load_config
    from diamond_jupyter.model import BadInput

    token = tmp_path / "slurm.jwt"
    token.write_text("eyJhbGciOiJIUzI1NiJ9.e30.sig\n")
    token.chmod(mode)
    path = write(tmp_path, _rest_site(token))
    if not refused:
        assert load_config(path).sites[0].transport.token_file == str(token)
        return
    with pytest.raises(BadInput) as e:
        load_config(path)
    said = str(e.value)
    assert said.startswith(f"sites file {path}: site 'perl'") and said.endswith("(line 5)")
    assert f"(mode {mode:03o})" in said and f"`chmod 600 {token}`" in said


@pytest.mark.parametrize("lines,says", [
    ("hedge: forbidden", "hedge: Input should be a valid boolean"),
    ("account: m1234", "account: unknown key (did you mean default_account?"),
    ("transfer: {method: globus}", "transfer: unknown key (did you mean transport?"),
    ("module_paths: [/sw/modulefiles]", "module_paths: unknown key: module paths are shell, "
     "run before each scheduler command: write them in the preamble (preamble: | then "
     "`module use /PATH` lines)"),
    ("globus_collection: NERSC DTN", "globus_collection: expected a Globus collection id"),
    ("preamble: ['module use /sw/modulefiles', 'module load slurm']",
     "preamble: Input should be a valid string, got a list of lines: write preamble: |"),
])
def test_a_center_s_site_keys_from_other_tools_are_refused_naming_line_and_key(
        tmp_path, lines, says):
    """Keys an admin carries over from other tools' site files (a hedging policy as a word,
    `account`, `transfer`, Lmod's `module_paths`, a Globus endpoint's display name) are
    refused on their line, naming the key and what is accepted; nothing is dropped."""
    from test_config_unseen2 import refused

    said = refused(tmp_path, "sites:\n  - name: a\n    transport: {kind: local}\n"
                   f"    {lines}\n")
    assert "site 'a' (sites[0]): " + says in said and said.endswith("(line 4)"), said


def test_a_site_policy_forbidding_hedging_is_read_as_written(tmp_path):
    """`hedge: no` (YAML's word for false) is the center's policy: the site takes no
    hedged copies."""
    from test_config_unseen2 import loads

    cfg = loads(tmp_path, "sites:\n  - name: a\n    transport: {kind: local}\n    hedge: no\n"
                "    globus_collection: 9d6d994a-6d04-11e5-ba46-22000b92c6ec\n"
                "    globus_path_map: {/home/u: /global/homes/u}\n")
    assert cfg.sites[0].hedge is False
    assert cfg.sites[0].globus_path_map == {"/home/u": "/global/homes/u"}
