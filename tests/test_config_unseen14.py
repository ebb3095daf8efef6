"""Sites files, fourteenth sweep: what an admin writes by habit. Numbers with units (`10s`,
`5m`, `64MB`, `1 MiB`) in keys that hold seconds or bytes, and numbers YAML left as text
(`1.5e6`); a port by its service name or as a list; a store that is a directory; paths
copied from Windows; a site given twice, a top-level key of another tool's file and a
full-width colon, each named with its line; SSH options at the site's level or the file's;
schedulers by other names and misspelt; variables and `~user` where they are not read.
Each is refused naming the file, the key, the line and what would be accepted, or taken as
an admin means it. The tests marked `fault` failed before this sweep's fixes."""

from __future__ import annotations

from pathlib import Path

import pytest

from diamond_jupyter.config import load_config
from diamond_jupyter.model import BadInput

LOCAL = "sites:\n  - name: a\n    transport: {kind: local}\n"


def _ssh(d: Path, *lines: str) -> str:
    """One SSH site `a` (host keys checked against d/known_hosts), `lines` under its
    transport from line 6 on."""
    return (f"sites:\n  - name: a\n    transport:\n      known_hosts: {d}/known_hosts\n"
            "      use_agent: false\n" + "".join(f"      {ln}\n" for ln in lines))


def _refusal(d: Path, text: str) -> str:
    (d / "known_hosts").write_text("")
    path = d / "sites.yaml"
    path.write_text(text)
    with pytest.raises(BadInput) as e:
        load_config(path)
    said = str(e.value)
    assert said.startswith(f"sites file {path}"), said
    assert "\n" not in said, said
    return said


# (sites file, what the one-line refusal holds, its line): a unit where a key takes a
# plain number of seconds or bytes is read back as the number meant
UNITS = [
    (lambda d: _ssh(d, "host: h", "connect_timeout_s: 10s"),
     "transport.connect_timeout_s: Input should be a valid number", "write 10 for 10s", 7),
    (lambda d: _ssh(d, "host: h", "connect_timeout_s: 10000ms"),
     "transport.connect_timeout_s", "a plain number of seconds: write 10 for 10000ms", 7),
    (lambda d: _ssh(d, "host: h", "keepalive_s: 5m"),
     "transport.keepalive_s", "a plain number of seconds: write 300 for 5m", 7),
    (lambda d: _ssh(d, "host: h", "command_timeout_s: 2 hours"),
     "transport.command_timeout_s", "write 7200 for 2 hours", 7),
    (lambda d: _ssh(d, "host: h", "max_output_bytes: 64MB"),
     "transport.max_output_bytes", "a plain number of bytes: write 64000000 for 64MB", 7),
    (lambda d: LOCAL + "log_tail_bytes: 1 MiB\n",
     "log_tail_bytes", "write 1048576 for 1 MiB", 4),
    (lambda d: LOCAL + "log_tail_bytes: 1.5e6\n",
     "log_tail_bytes", "write 1500000 for 1.5e6", 4),
    (lambda d: LOCAL + "fetch_max_file_bytes: 2G\n",
     "fetch_max_file_bytes", "write 2147483648 for 2G", 4),
    (lambda d: LOCAL + "unsure_submit_settle_s: 30 seconds\n",
     "unsure_submit_settle_s", "write 30 for 30 seconds", 4),
    (lambda d: "sites:\n  - name: a\n    workdir: /w\n    transport: {kind: slurmrestd, "
               "url: 'http://ctl:6820', token_command: scontrol token, token_refresh_s: 1m}\n",
     "transport.token_refresh_s", "write 60 for 1m", 4),
    (lambda d: _ssh(d, "host: h", "port: ssh"),
     "transport.port", "(a plain number, a port from 1 to 65535, e.g. 22)", 7),
    (lambda d: _ssh(d, "host: h", "port: [22, 2222]"),
     "transport.port", "(a plain number, a port from 1 to 65535, e.g. 22)", 7),
]


@pytest.mark.parametrize("text,key,accepted,line", UNITS)
def test_fault_a_number_written_with_a_unit_says_the_number_meant(tmp_path, text, key,
                                                                  accepted, line):
    """`connect_timeout_s: 10s` was answered "(a plain number, e.g. 30)": no word that the
    key holds seconds, nor which number `10s` is; a port "e.g. 30"."""
    said = _refusal(tmp_path, text(tmp_path))
    assert key in said and accepted in said and said.endswith(f"(line {line})"), said


def test_fault_a_number_with_no_whole_meaning_says_the_unit_without_guessing(tmp_path):
    said = _refusal(tmp_path, _ssh(tmp_path, "host: h", "keepalive_s: half a minute"))
    assert "transport.keepalive_s" in said and "(a plain number of seconds, e.g. 30)" in said
    said = _refusal(tmp_path, _ssh(tmp_path, "host: h", "keepalive_s: 2.5"))
    assert "fractional part (a plain number of seconds, e.g. 30) (line 7)" in said, said


# (sites file, what the refusal holds, its line)
PLACES_FAULTS = [
    # a directory was taken as the store, and failed when the engine opened it
    (lambda d: LOCAL + "store: /tmp\n", "store: '/tmp' is a directory; the store is one "
     "SQLite file: name the file in it (e.g. /tmp/store.sqlite3)", 4),
    (lambda d: LOCAL + "store: ~/\n", "store: '~/' is a directory", 4),  # fault
    # paths copied from Windows were one odd file name in the current directory
    (lambda d: LOCAL + "store: 'C:\\Users\\me\\diamond.sqlite3'\n",
     "store: 'C:\\\\Users\\\\me\\\\diamond.sqlite3' is a Windows path; paths here are POSIX",
     4),
    (lambda d: LOCAL + "    workdir: 'D:\\scratch\\diamond'\n",
     "workdir: 'D:\\\\scratch\\\\diamond' is a Windows path", 4),
    (lambda d: _ssh(d, "host: h", "key_file: 'C:/Users/me/.ssh/id_ed25519'"),
     "transport.key_file: 'C:/Users/me/.ssh/id_ed25519' is a Windows path", 7),
    # the site given twice was named by index only, no line
    (lambda d: LOCAL + "  - name: a\n    transport: {kind: local}\n",
     "site name 'a' is used twice (sites[0] and sites[1])", 4),
    # a top-level key of another tool's file, no other key: no line
    (lambda d: "jobqueue:\n  slurm:\n    cores: 4\n", "jobqueue: unknown key", 1),
    (lambda d: "clusters:\n  - name: a\n", "clusters: unknown key (did you mean sites?", 1),
]
PLACES = [
    (lambda d: _ssh(d, "host: ${LOGIN_HOST}"), "a host is written out, not read from a "
     "variable", 6),
    (lambda d: LOCAL + "store: $DIAMOND_NO_SUCH_VAR_14/x.sqlite3\n",
     "names $DIAMOND_NO_SUCH_VAR_14, which is not set in this environment", 4),
    (lambda d: LOCAL + "store: ~nosuchadmin14/x.sqlite3\n",
     "~nosuchadmin14 is the home of a user nosuchadmin14, and this machine has none", 4),
    (lambda d: LOCAL + "    workdir: ~bob/diamond\n", "~user paths are not supported", 4),
    (lambda d: LOCAL + "    env: {PATH: $PATH:/opt/bin}\n", "no shell expands '$PATH'", 4),
]


@pytest.mark.parametrize("text,said,line", PLACES_FAULTS)
def test_fault_a_path_or_a_site_given_wrong_names_the_key_and_line(tmp_path, text, said,
                                                                   line):
    """A directory or a Windows path was taken as the store (failing when the engine first
    opened it) or as a workdir or key file; a site given twice, or a lone key of another
    tool's file, was named without its line."""
    got = _refusal(tmp_path, text(tmp_path))
    assert said in got and got.endswith(f"(line {line})"), got


@pytest.mark.parametrize("text,said,line", PLACES)
def test_a_path_or_a_place_given_wrong_names_the_key_and_line(tmp_path, text, said, line):
    got = _refusal(tmp_path, text(tmp_path))
    assert said in got and got.endswith(f"(line {line})"), got


def test_fault_a_full_width_colon_names_its_line_not_where_yaml_gave_up(tmp_path):
    """YAML's "line 5: could not find expected ':'" pointed past the line that held a colon
    an input method typed (U+FF1A)."""
    said = _refusal(tmp_path, LOCAL + "    default_partition\uff1a gpu\n")
    assert "(line 4 holds '：', a full-width colon (U+FF1A), not the ':' YAML reads after " \
           "a key: type ':' there)" in said, said


# (sites file, the key named, what is said instead)
ELSEWHERE = [
    (lambda d: LOCAL + "    port: 2222\n", "port: unknown key: port is the transport's, "
     "written under it (transport: {port: ...}", 4),
    (lambda d: LOCAL + "    proxy_jump: gw\n", "proxy_jump is the transport's", 4),
    (lambda d: LOCAL + "    hostname: login\n", "host is the transport's", 4),
    (lambda d: _ssh(d, "host: h", "IdentityFile: ~/.ssh/id_ed25519"),
     "transport.IdentityFile: unknown key (did you mean key_file?", 7),
    (lambda d: _ssh(d, "host: h", "ProxyJump: gw"),
     "transport.ProxyJump: unknown key (did you mean proxy_jump?", 7),
    (lambda d: "sites:\n  - name: a\n    transport: {kind: local, scheduler: slurm}\n",
     "transport.scheduler: unknown key: scheduler is the site's, written beside transport: "
     "under the site's `- name:`; accepted here: kind, host", 3),
    (lambda d: "key_file: ~/.ssh/id\n" + LOCAL, "key_file: unknown key (accepted: sites, "
     "store", 1),
    (lambda d: LOCAL + "ServerApp:\n  port: 8888\n", "ServerApp: unknown key", 4),
    (lambda d: LOCAL + "    SlurmctldHost: ctl\n", "SlurmctldHost: unknown key", 4),
    (lambda d: LOCAL + "    account: proj1\n", "did you mean default_account?", 4),
]


@pytest.mark.parametrize("text,said,line", ELSEWHERE)
def test_a_key_in_the_wrong_place_or_of_another_tool_says_where_it_goes(tmp_path, text, said,
                                                                         line):
    got = _refusal(tmp_path, text(tmp_path))
    assert said in got and got.endswith(f"(line {line})"), got


@pytest.mark.parametrize("written,meant", [
    ("slurmd", "slurm"), ("lfs", "lsf"), ("pbz", "pbs"), ("flxu", "flux"), ("sgee", "sge"),
])
def test_a_misspelt_scheduler_names_the_one_meant(tmp_path, written, meant):
    said = _refusal(tmp_path, f"sites:\n  - name: a\n    scheduler: {written}\n"
                              "    transport: {kind: local}\n")
    assert f"scheduler: Input should be 'slurm', 'pbs', 'lsf', 'flux' or 'sge', not " \
           f"'{written}'; did you mean {meant}?" in said and said.endswith("(line 3)"), said


@pytest.mark.parametrize("written,read", [
    ("SLURM", "slurm"), ("pbspro", "pbs"), ("pbs-pro", "pbs"), ("openpbs", "pbs"),
    ("uge", "sge"),
    ("gridengine", "sge"),
])
def test_a_scheduler_by_the_name_a_center_gives_it_is_read(tmp_path, written, read):
    path = tmp_path / "sites.yaml"
    path.write_text(f"sites:\n  - name: a\n    scheduler: {written}\n"
                    "    transport: {kind: local}\n")
    assert load_config(path).sites[0].scheduler == read


def test_what_an_admin_means_by_habit_is_taken_as_meant(tmp_path, monkeypatch):
    """A port in quotes, `hedge: no`, Windows line ends, a store under $HOME, and the
    host written as an ssh:// URL with its login and port."""
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "known_hosts").write_text("")
    path = tmp_path / "sites.yaml"
    path.write_text((_ssh(tmp_path, "host: 'ssh://me@login.example.org:2222'")
                     + "    hedge: no\n  - name: b\n    transport: {host: b.example.org, "
                     f"port: '2022', known_hosts: {tmp_path}/known_hosts}}\n"
                     "store: $HOME/d.sqlite3\n").replace("\n", "\r\n"))
    cfg = load_config(path)
    a, b = cfg.sites
    assert (a.transport.host, a.transport.user, a.transport.port) == \
        ("login.example.org", "me", 2222)
    assert a.hedge is False and b.transport.port == 2022
    assert Path(cfg.store).expanduser() == tmp_path / "d.sqlite3"
