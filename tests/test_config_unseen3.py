"""Sites files, third sweep, as centers and users write them: jump hosts chained through
ssh_config (each hop's own ProxyJump), `proxy_jump: none`, ssh:// hops and a YAML list of
hops, site templates merged from a list, per-site policies spelled as YAML does (`hedge:
no`), Globus ids and slurmrestd URLs as copied from a web page, environment variables where
a value must be literal, and blanks that are not spaces. Each file's answer was worked out
by hand: what it builds (checked without connecting), or its one-line refusal naming the
file, the site, the key and what would be accepted; `diamond sites` exits 2 on it."""

from __future__ import annotations

from pathlib import Path

import pytest
from sweep_helpers import key_files
from test_config_unseen2 import loads, refused, write

from diamond_jupyter.cli import main
from diamond_jupyter.config import FederationConfig
from diamond_jupyter.model import BadInput
from diamond_jupyter.transports.ssh import SSHTransport

UUID = "6c54cade-bde5-45c1-bdea-f4bd71dba2cc"


@pytest.fixture
def d(tmp_path: Path) -> Path:
    """A user's directory: a key (0600), a known_hosts file and an ssh_config where the
    login is reached through `hop`, itself reached through the gateway."""
    key_files(tmp_path)
    (tmp_path / "ssh_config").write_text(
        "Host login.hpc.example.org\n  ProxyJump hop\n"
        "Host hop\n  HostName hop.hpc.example.org\n  User alice\n  ProxyJump gw.example.org\n"
        "Host gw.example.org\n  User alice\n  Port 2201\n"
        "Host loop-a\n  ProxyJump loop-b\nHost loop-b\n  ProxyJump loop-a\n")
    return tmp_path


def ssh(d: Path, lines: str, name: str = "hpc") -> str:
    """One SSH site with the directory's key, known_hosts and ssh_config."""
    return (f"sites:\n  - name: {name}\n    transport:\n"
            f"      key_file: {d}/id_ed25519\n      known_hosts: {d}/known_hosts\n"
            f"      ssh_config: {d}/ssh_config\n      use_agent: false\n"
            + "".join(f"      {ln}\n" for ln in lines.strip().splitlines()))


def jumps(cfg: FederationConfig, name: str = "hpc") -> list[str]:
    """The hops the site's transport goes through, in order (built, not connected)."""
    t = SSHTransport(cfg.site(name).transport, site=name)
    assert t.connections_opened == 0
    return [h.label for h in t.jumps]


# -- 1. jump hosts --------------------------------------------------------------------------

def test_fault_a_jump_host_reached_through_its_own_proxy_jump(d):
    """ssh_config: the login through `hop`, `hop` through the gateway (on 2201). ssh goes
    gateway -> hop -> login; the transport went to hop directly (which only the gateway
    reaches): the gateway is now first, with its user and port from ssh_config."""
    want = ["alice@gw.example.org:2201", "alice@hop.hpc.example.org:22"]
    assert jumps(loads(d, ssh(d, "host: login.hpc.example.org"))) == want
    assert jumps(loads(d, ssh(d, "host: login.hpc.example.org\nproxy_jump: hop"))) == want


def test_proxy_jump_none_goes_straight_to_the_login_as_ssh_does(d):
    cfg = loads(d, ssh(d, "host: login.hpc.example.org\nproxy_jump: none"))
    assert jumps(cfg) == []


def test_an_explicit_chain_of_ssh_urls_is_taken_in_order(d):
    """`ssh://user@host:port` hops, a blank after the comma: the first hop's own ProxyJump
    (none here) would come first; a later hop's is not read (ssh's rule)."""
    cfg = loads(d, ssh(d, "host: login.hpc.example.org\n"
                       "proxy_jump: 'ssh://bob@bastion.example.org:2222, hop'"))
    assert jumps(cfg) == ["bob@bastion.example.org:2222", "alice@hop.hpc.example.org:22"]


def test_fault_a_list_of_jump_hosts_is_the_chain_in_order(d):
    """`proxy_jump: [gw, hop]` was 'Input should be a valid string'."""
    cfg = loads(d, ssh(d, "host: login.hpc.example.org\n"
                       "proxy_jump: [gw.example.org, hop]"))
    assert cfg.site("hpc").transport.proxy_jump == "gw.example.org,hop"
    assert jumps(cfg) == ["alice@gw.example.org:2201", "alice@hop.hpc.example.org:22"]


@pytest.mark.parametrize("value", ["[]", "[{host: gw.example.org}]", "[gw.example.org, 22]"])
def test_a_list_of_jump_hosts_that_is_not_host_names_is_refused(d, value):
    msg = refused(d, ssh(d, f"host: login.hpc.example.org\nproxy_jump: {value}"))
    assert "transport.proxy_jump: proxy_jump is the jump hosts in order, as text (gw1,gw2) " \
           "or a list of host names ([gw1, gw2])" in msg


def test_fault_jump_hosts_that_lead_back_to_each_other_are_bad_input(d):
    """loop-a through loop-b through loop-a: followed for ever, now refused naming it."""
    cfg = loads(d, ssh(d, "host: login.hpc.example.org\nproxy_jump: loop-a"))
    with pytest.raises(BadInput, match=r"proxy_jump: the jump hosts of ssh_config make a "
                                       r"loop \(\S+@loop-a:22 -> \S+@loop-b:22 -> "
                                       r"\S+@loop-a:22\)"):
        SSHTransport(cfg.site("hpc").transport, site="hpc")


# -- 2. realistic entries -------------------------------------------------------------------

def test_fault_of_a_list_of_site_templates_the_first_that_gives_a_key_wins(d):
    """`<<: [*pbs_center, *defaults]`: YAML gives the earlier template's value; the later
    one won (a PBS center's site was made a Slurm one)."""
    cfg = loads(d, "x-defaults: &defaults {scheduler: slurm, hedge: true, transport: "
                   "{kind: local}}\nx-pbs: &pbs {scheduler: pbs, hedge: false}\nsites:\n"
                   "  - {<<: [*pbs, *defaults], name: casper}\n"
                   "  - {<<: [*pbs, *defaults], name: derecho, hedge: true}\n")
    got = [(s.name, s.scheduler, s.hedge, s.transport.kind) for s in cfg.sites]
    assert got == [("casper", "pbs", False, "local"), ("derecho", "pbs", True, "local")]


def test_policies_and_ids_as_yaml_and_globus_write_them(d):
    """`hedge: no` is false; a site named `all` is a name like any (no command reads it as
    a keyword); a Globus id in capitals is the same id; a REST URL with a final slash."""
    cfg = loads(d, "sites:\n"
                   f"  - {{name: all, transport: {{kind: local}}, hedge: no, "
                   f"globus_collection: {UUID.upper()}}}\n"
                   "  - name: rest\n    transport: {kind: slurmrestd, url: "
                   "'https://slurm.example.org:6820/', token_file: /run/user/tok}\n"
                   "    workdir: /scratch/rest\n")
    a, rest = cfg.site("all"), cfg.site("rest")
    assert (a.hedge, a.globus_collection) == (False, UUID.upper())
    assert rest.transport.url == "https://slurm.example.org:6820/"


# -- 3. refused entries ---------------------------------------------------------------------

@pytest.mark.parametrize("entry,want", [
    ("{name: a, transport: {kind: local}, max_walltime: '24:00:00'}",
     "site 'a' (sites[0]): max_walltime: unknown key (accepted: name, scheduler"),
    ("{name: a, transport: {kind: local}, hedge: forbidden}",
     "site 'a' (sites[0]): hedge: Input should be a valid boolean"),
    ("{name: a, transport: {kind: local}, globus_collection: 'my-endpoint#scratch'}",
     "globus_collection: expected a Globus collection id, a UUID such as"),
    (f"{{name: a, transport: {{kind: local}}, globus_collection: 'urn:uuid:{UUID}'}}",
     "globus_collection: expected a Globus collection id"),
    ("{name: r, workdir: /s, transport: {kind: slurmrestd, url: 'slurm.example.org:6820', "
     "token_file: /t}}",
     "site 'r' (sites[0]): transport.url: expected an http:// or https:// URL"),
    ("{name: a, transport: {kind: local}, schedular: pbs}",
     "schedular: unknown key (did you mean scheduler?"),
    ("{name: a, transport: {kind: ssh, host: $LOGIN_HOST, use_agent: false}}",
     "host: '$LOGIN_HOST': a host is written out, not read from a variable"),
    ("{name: a, transport: {kind: ssh, host: login.example.org, user: '${USER}'}}",
     "transport.user: '${USER}': a login name is written out"),
    ("{name: a, transport: {kind: ssh, host: login.example.org, port: ssh}}",
     "transport.port: Input should be a valid integer"),
])
def test_a_refused_entry_names_the_site_the_key_and_what_is_accepted(d, entry, want):
    assert want in refused(d, f"sites:\n  - {entry}\n")


def test_fault_a_no_break_space_is_named_with_its_line(d):
    """A no-break space in the indentation (copied from a center's web page): PyYAML's
    complaint named another column; the character and its place are named."""
    msg = refused(d, "sites:\n\u00a0 - {name: a, transport: {kind: local}}\n")
    assert msg.endswith("line 2, column 1 holds a NO-BREAK SPACE (U+00A0), which YAML does "
                        "not read as a space (text copied from a web page or a document has "
                        "them): type a plain space there")


def test_diamond_sites_exits_2_on_them(d, capsys):
    path = write(d, "sites:\n  - {name: a, transport: {kind: ssh, host: login.example.org, "
                    "proxy_jump: []}}\n")
    assert main(["sites", "--config", str(path), "--json"]) == 2
    err = capsys.readouterr().err
    assert "proxy_jump is the jump hosts in order" in err and err.count("\n") == 1


def test_fault_a_site_template_defined_below_its_use_is_named(d):
    msg = refused(d, "sites:\n  - {<<: *center, name: a}\nx-center: &center {transport: "
                     "{kind: local}}\n")
    assert msg.endswith("found undefined alias 'center'; its anchor &center is on line 3, "
                        "below: YAML reads an alias only after its anchor, so move the anchor "
                        "above its first use")


def test_fault_a_proxy_command_of_ssh_config_is_followed_or_refused(d):
    """`ProxyCommand ssh -q -W %h:%p alice@gw -p 2201` (the older way to write a jump host)
    was ignored: the connection went straight to a login only the gateway reaches. It is
    now that jump host; a ProxyCommand that names none (an HTTP proxy through nc, ssh with
    other options) is refused saying how to write it, and `proxy_jump: none` connects
    directly as before."""
    (d / "ssh_config").write_text(
        "Host old\n  HostName login.hpc.example.org\n"
        "  ProxyCommand ssh -q -W %h:%p alice@gw.example.org -p 2201\n"
        "Host viaproxy\n  ProxyCommand nc -X connect -x proxy.example.org:3128 %h %p\n"
        "Host opts\n  ProxyCommand ssh -o StrictHostKeyChecking=no -W %h:%p gw.example.org\n")
    assert jumps(loads(d, ssh(d, "host: old"))) == ["alice@gw.example.org:2201"]
    for host in ("viaproxy", "opts"):
        cfg = loads(d, ssh(d, f"host: {host}"))
        with pytest.raises(BadInput) as e:
            SSHTransport(cfg.site("hpc").transport, site="hpc")
        assert str(e.value).startswith(f"ssh_config gives Host {host} the ProxyCommand '")
        assert str(e.value).endswith("which is not run (no local command is run to connect): "
                                     "write the jump host as `ProxyJump GW` there, or "
                                     "`proxy_jump: GW` (`none` to connect directly) in the "
                                     "sites file")
    assert jumps(loads(d, ssh(d, "host: viaproxy\nproxy_jump: none"))) == []


@pytest.mark.parametrize("entry,hint", [
    (f"globus_collection: 'https://app.globus.org/file-manager?origin_id={UUID}&origin_path="
     "%2F'", f"(the id in it is {UUID}: write just that)"),
    (f"globus_collection: 'urn:uuid:{UUID}'", f"(the id in it is {UUID}: write just that)"),
    ("transport: {kind: slurmrestd, url: 'slurm.example.org:6820/slurm', token_file: /t}",
     "(it has no scheme: write https://slurm.example.org:6820/slurm, or http:// for a plain "
     "one)"),
])
def test_fault_a_value_copied_from_a_web_page_says_what_it_meant(d, entry, hint):
    """The collection's link from the Globus web app, or a REST URL without its scheme, was
    refused with the accepted form only; the id in the link, or the URL meant, is said."""
    transport = "" if entry.startswith("transport") else "transport: {kind: local}, "
    msg = refused(d, f"sites:\n  - {{name: a, workdir: /w, {transport}{entry}}}\n")
    assert hint in msg
