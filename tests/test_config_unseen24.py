"""Sites files, twenty-fourth sweep: what a new user or admin writes by hand. YAML 1.1's
words where text is meant (a partition named `on`, an account `no`, a site named `null` or
`true`), a login written as other tools write it (`ssh: alice@login`, scp's
`alice@login:/scratch`, `ssh://alice@login:2222/home/alice`), JSON sites files (indented
with tabs as `jq --tab` writes them, with `//` comments, with a trailing comma), a Windows
path in double quotes, a key path in another user's home (`~root/...`), and forms read as
meant: flow maps on one line and with comments inside, a `---`/`...` framed document, a
very long line, a site with no scheduler key, keys in capitals, a relative key path read
beside the file from another directory. Each is read as meant or refused naming file,
line, key and what is accepted (the CLI exits 2).

Faults found and fixed, each shown by a test here marked `fault` that failed before:
- a text value YAML read as a boolean or null from a word (`default_partition: on`,
  `name: null`) was told `got true (... e.g. name: 'no')`, or, for null, `write '' for an
  empty one` (no site has an empty name); it now names the word and the line to write
  (`default_partition: 'on'`);
- a host holding a path (scp's `alice@login:/scratch/alice`, `ssh://...:2222/home/alice`)
  was told `the port must be a number from 1 to 65535`; it now says the path is no part
  of a host, the login to write and that the directory is workdir;
- `ssh: alice@login` at a site's level was told `did you mean transport?`; it now says
  the line to write (`transport: {host: alice@login}`);
- a Windows path in double quotes was refused in PyYAML's words alone (`expected escape
  sequence of 8 hexadecimal numbers`); it now says what a backslash starts there and to
  use single quotes or /;
- a JSON sites file indented with tabs (valid JSON) was refused (`found character '\\t'
  that cannot start any token`); it is now read, its lines as written;
- a JSON sites file with a `//` comment was refused at the line after it, in PyYAML's
  words; the comment's line is now named;
- a key path in another user's home (`~root/.ssh/id`) that does not exist was taken and
  failed only when the site connected; it is now said at once, as an absolute path is;
- a sites file given as `--config ~nosuchuser/sites.yaml` (or so in DIAMOND_CONFIG) ended
  in pathlib's traceback (`Could not determine home directory`, exit 1); it now says there
  is no such user and exits 2.
"""

from __future__ import annotations

import json

import pytest
import sweep_helpers
from test_config_unseen2 import loads, refused, write
from test_config_unseen22 import _cli_refused

from diamond_jupyter.cli.main import main

key_dir = sweep_helpers.key_dir
LOCAL = "    transport: {kind: local}\n"
SITE = "sites:\n  - name: a\n" + LOCAL


def _ssh(d, host: str) -> str:
    """A block-style ssh site `a` whose key and known_hosts exist, its host `host`."""
    return (f"sites:\n  - name: a\n    transport:\n      host: {host}\n"
            f"      known_hosts: {d}/known_hosts\n      key_file: {d}/id_ed25519\n"
            "      use_agent: false\n")


# ---- YAML 1.1's words where text is meant ------------------------------------------------

@pytest.mark.parametrize("text,said", [
    (SITE + "    default_partition: on\n",
     "site 'a' (sites[0]): default_partition: Input should be a valid string, got true: YAML "
     "reads `on` as true, not as the word; to mean the word, put the value in quotes: "
     "default_partition: 'on' (line 4)"),
    (SITE + "    default_account: no\n",
     "default_account: Input should be a valid string, got false: YAML reads `no` as false"),
    (SITE + "    allowed_partitions:\n      - debug\n      - Off\n",
     "allowed_partitions.1: Input should be a valid string, got false: YAML reads `Off` as "
     "false, not as the word; to mean the word, put the value in quotes: - 'Off' (line 6)"),
    ("sites:\n  - name: true\n" + LOCAL,
     "site (sites[0]): name: Input should be a valid string, got true: YAML reads `true` as "
     "true, not as the word; to mean the word, put the value in quotes: name: 'true' (line 2)"),
    ("sites:\n  - name: null\n" + LOCAL,
     "name: Input should be a valid string, got no value (null): YAML reads `null` as no "
     "value (null), not as the word; to mean the word, put the value in quotes: name: 'null' "
     "(line 2)"),
    ("sites:\n  - name: NULL\n" + LOCAL, "YAML reads `NULL` as no value (null)"),
])
def test_fault_a_word_yaml_reads_as_a_boolean_or_null_names_the_word_and_the_fix(
        key_dir, capsys, text, said):
    """Said before: `got true (... e.g. name: 'no')`, not the word written, nor for null
    anything but `write '' for an empty one`, which no site's name is."""
    err = _cli_refused(capsys, write(key_dir, text))
    assert said in err and "write '' for an empty one" not in err, err


def test_the_words_quoted_are_the_names_meant(key_dir):
    [site] = loads(key_dir, "sites:\n  - name: 'null'\n" + LOCAL + "    default_partition: "
                   "'on'\n    default_account: \"no\"\n    allowed_partitions: ['on', debug]\n"
                   ).sites
    assert (site.name, site.default_partition, site.default_account,
            site.allowed_partitions) == ("null", "on", "no", ["on", "debug"])


def test_a_key_with_nothing_after_it_still_says_it_has_no_value(key_dir):
    got = refused(key_dir, "sites:\n  - name:\n" + LOCAL)
    assert "name: Input should be a valid string, got nothing: the key has no value" in got


def test_booleans_where_flags_are_meant_are_read(key_dir):
    [site] = loads(key_dir, SITE + "    auto: no\n    hedge: On\n").sites
    assert (site.auto, site.hedge) == (False, True)


# ---- logins as other tools write them ----------------------------------------------------

@pytest.mark.parametrize("host,path,login", [
    ("alice@login.example.org:/scratch/alice", "/scratch/alice", "alice@login.example.org"),
    ("ssh://alice@login.example.org:2222/home/alice", "/home/alice",
     "alice@login.example.org:2222"),
    ("login.example.org:/", "/", "login.example.org"),
])
def test_fault_a_host_holding_a_path_says_the_login_and_where_the_directory_goes(
        key_dir, capsys, host, path, login):
    """Said before: `the port must be a number from 1 to 65535`."""
    err = _cli_refused(capsys, write(key_dir, _ssh(key_dir, host)))
    assert f"transport: host: '{host}': {path} is a path, which a host does not hold: write " \
        f"the login alone ({login}), and the directory jobs run in as the site's workdir " \
        "(line 4)" in err and "port must be" not in err, err


@pytest.mark.parametrize("host,want", [
    ("alice@login.example.org", ("alice", "login.example.org", None)),
    ("ssh://alice@login.example.org:2222", ("alice", "login.example.org", 2222)),
    ("'ssh://alice@login.example.org:2222/'", ("alice", "login.example.org", 2222)),
    ("alice@login.example.org:2222", ("alice", "login.example.org", 2222)),
])
def test_logins_in_ssh_forms_are_read_as_user_host_and_port(key_dir, host, want):
    t = loads(key_dir, _ssh(key_dir, host)).sites[0].transport
    assert (t.user, t.host, t.port) == want


def test_a_host_that_is_an_option_with_a_slash_is_still_no_host(key_dir):
    got = refused(key_dir, _ssh(key_dir, "'-oProxyCommand=nc /tmp/s'"))
    assert "is not a host" in got and "is a path" not in got, got


@pytest.mark.parametrize("key", ["ssh", "login", "ssh_host"])
def test_fault_a_login_written_at_the_sites_level_says_the_transport_line(key_dir, capsys,
                                                                         key):
    """Said before: `ssh: unknown key (did you mean transport? ...)`, not how."""
    err = _cli_refused(capsys, write(key_dir, "sites:\n  - name: a\n"
                                     f"    {key}: alice@login.example.org\n"))
    assert f"site 'a' (sites[0]): {key}: unknown key: a site's SSH login goes in its " \
        "transport: write transport: {host: alice@login.example.org} (USER@HOST:PORT and " \
        "ssh://USER@HOST:PORT are read there) (line 3)" in err, err


def test_the_line_said_for_a_login_loads(key_dir):
    d = key_dir
    [site] = loads(d, "sites:\n  - name: a\n    transport: {host: alice@login.example.org, "
                      f"known_hosts: {d}/known_hosts, key_file: {d}/id_ed25519, "
                      "use_agent: false}\n").sites
    assert (site.transport.user, site.transport.host) == ("alice", "login.example.org")


def test_hostname_at_the_sites_level_is_still_said_to_be_the_transports(key_dir):
    got = refused(key_dir, SITE + "    hostname: login\n")
    assert "host is the transport's, written under it" in got, got


# ---- paths ---------------------------------------------------------------------------------

def test_fault_a_windows_path_in_double_quotes_says_what_a_backslash_starts(key_dir, capsys):
    """Said before: PyYAML's `expected escape sequence of 8 hexadecimal numbers, but found
    's'` alone."""
    path = write(key_dir, "sites:\n  - name: a\n    transport: {host: h.example.org, key_file: "
                          '"C:\\Users\\alice\\.ssh\\id_ed25519"}\n')
    err = _cli_refused(capsys, path)
    assert f"sites file {path} is not valid YAML: line 3, column" in err and \
        "(a backslash inside double quotes starts an escape such as \\n or \\U0001F600: a " \
        "Windows path or other text holding backslashes goes in single quotes, and a path " \
        "here is written with /)" in err, err


def test_fault_an_unknown_escape_in_double_quotes_says_the_same(key_dir):
    got = refused(key_dir, SITE + '    workdir: "D:\\scratch"\n')
    assert "found unknown escape character" in got and "goes in single quotes" in got, got


def test_fault_a_key_path_in_another_users_home_is_checked_at_once(key_dir, capsys):
    """`~root/...` was kept unchecked, as `~/...` (each user's own) is: a missing key was
    found only when the site connected. Root's home is searchable here (tests run as root,
    or the check is said for a home we cannot open)."""
    import os

    if not os.access(os.path.expanduser("~root"), os.X_OK):
        pytest.skip("root's home is closed to this user: such a path is checked at connect")
    err = _cli_refused(capsys, write(key_dir, _ssh(key_dir, "h.example.org").replace(
        f"key_file: {key_dir}/id_ed25519", "key_file: ~root/.ssh/no_such_key_h7")))
    assert "transport.key_file: /root/.ssh/no_such_key_h7 does not exist (line 6)" in err, err


def test_a_key_path_in_ones_own_home_is_left_to_the_connection(key_dir):
    """A shared sites file's `~/...` is each user's own: not looked for here."""
    t = loads(key_dir, _ssh(key_dir, "h.example.org").replace(
        f"key_file: {key_dir}/id_ed25519", "key_file: ~/.ssh/no_such_key_h7")).sites[0]
    assert t.transport.key_file == "~/.ssh/no_such_key_h7"


def test_a_relative_key_path_is_read_beside_the_file_from_another_directory(
        key_dir, tmp_path_factory, monkeypatch):
    monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))
    t = loads(key_dir, "sites:\n  - name: a\n    transport: {host: h.example.org, known_hosts: "
                       "known_hosts, key_file: ./id_ed25519, use_agent: false}\n"
              ).sites[0].transport
    assert (t.key_file, t.known_hosts) == (f"{key_dir}/id_ed25519", f"{key_dir}/known_hosts")


# ---- JSON sites files ------------------------------------------------------------------------

_JSON = {"sites": [{"name": "a", "transport": {"kind": "local"}, "scheduler": "pbs"},
                   {"name": "b", "transport": {"kind": "local"}, "allowed_partitions":
                    ["on", "debug"]}]}


@pytest.mark.parametrize("indent", ["\t", 2])
def test_fault_a_json_file_indented_with_tabs_is_read(key_dir, indent):
    """`jq --tab`'s output was refused: `found character '\\t' that cannot start any
    token (indent with spaces: YAML does not allow tabs there)`."""
    a, b = loads(key_dir, json.dumps(_JSON, indent=indent) + "\n").sites
    assert (a.scheduler, b.allowed_partitions) == ("pbs", ["on", "debug"])


def test_fault_a_mistake_in_a_tab_indented_json_file_names_its_line(key_dir, capsys):
    bad = json.loads(json.dumps(_JSON))
    bad["sites"][1]["schedular"] = "lsf"
    err = _cli_refused(capsys, write(key_dir, json.dumps(bad, indent="\t")))
    assert "site 'b' (sites[1]): schedular: unknown key (did you mean scheduler?" in err and \
        err.rstrip().endswith("(line 19)"), err


def test_tabs_in_a_file_that_is_not_valid_json_are_still_refused(key_dir):
    got = refused(key_dir, '{\n\t"sites": [{"name": "a", "transport": {"kind": "local"}},]\n')
    assert "YAML does not allow tabs there" in got, got


@pytest.mark.parametrize("comment,line", [("// the sites of our group", 2),
                                          ("/* generated */", 2)])
def test_fault_a_json_comment_names_its_line(key_dir, capsys, comment, line):
    """Said before: `line 3, column 10: expected ',' or '}', but got ':'` alone."""
    err = _cli_refused(capsys, write(key_dir, '{\n  ' + comment + '\n  "sites": [{"name": '
                                     '"a", "transport": {"kind": "local"}}]\n}\n'))
    assert f"(line {line} starts with {comment[:2]}, a comment neither JSON nor YAML reads: " \
        "remove it, or write it after # as YAML does)" in err, err


def test_a_json_file_with_a_trailing_comma_is_read_as_yaml_reads_it(key_dir):
    [site] = loads(key_dir, '{"sites": [{"name": "a", "transport": {"kind": "local"},}]}').sites
    assert site.name == "a"


# ---- forms read as meant -------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "sites: [{name: a, scheduler: pbs, transport: {kind: local}}]\n",
    "sites: [\n  {name: a,  # the test site\n   scheduler: pbs,  # its scheduler\n"
    "   transport: {kind: local}}  # here\n]\n",
    "---\n# framed\nsites:\n  - name: a\n    scheduler: pbs\n" + LOCAL + "...\n",
    "%YAML 1.1\n---\nsites:\n  - {name: a, scheduler: pbs, transport: {kind: local}}\n",
])
def test_flow_maps_comments_inside_them_and_framed_documents_read_as_meant(key_dir, text):
    [site] = loads(key_dir, text).sites
    assert (site.name, site.scheduler, site.transport.kind) == ("a", "pbs", "local")


def test_an_empty_second_document_is_still_refused(key_dir):
    assert "a second YAML document (`---`)" in refused(key_dir, SITE + "---\n")


def test_a_site_with_no_scheduler_key_is_slurm(key_dir):
    assert loads(key_dir, SITE).sites[0].scheduler == "slurm"


def test_a_very_long_line_is_read_and_a_mistake_after_it_named_by_line(key_dir):
    long = "    preamble: '" + "echo ok; " * 1200 + "'\n"
    [site] = loads(key_dir, SITE + long).sites
    assert len(site.preamble) > 10000
    got = refused(key_dir, SITE + long + "    sheduler: pbs\n")
    assert "sheduler: unknown key (did you mean scheduler?" in got and got.endswith("(line 5)")


@pytest.mark.parametrize("key,meant", [("Scheduler", "scheduler"), ("TRANSPORT", "transport"),
                                       ("Default_Partition", "default_partition")])
def test_keys_in_capitals_say_the_key_meant(key_dir, key, meant):
    got = refused(key_dir, SITE + f"    {key}: pbs\n")
    assert f"{key}: unknown key (did you mean {meant}?" in got and got.endswith("(line 4)"), got


def test_a_key_given_twice_in_one_site_names_both_lines(key_dir, capsys):
    err = _cli_refused(capsys, write(key_dir, SITE + "    scheduler: pbs\n    scheduler: lsf\n"))
    assert "line 5, column 5: key 'scheduler' is given twice (first on line 4)" in err, err


@pytest.mark.parametrize("text", ["sites:\n", "sites: []\n", "sites: {}\n"])
def test_an_empty_sites_says_what_to_write(key_dir, capsys, text):
    err = _cli_refused(capsys, write(key_dir, text))
    assert "lists no sites (expected `sites:` followed by entries such as `- name: " \
        "mycluster`)" in err, err


# ---- the sites file's own path ---------------------------------------------------------------

NO_USER = "~nosuchuser_sweep24/sites.yaml"
NO_USER_SAID = ("sites file ~nosuchuser_sweep24/sites.yaml: ~nosuchuser_sweep24 is the home of "
                "a user nosuchuser_sweep24, and this machine has none (write ~/... for your "
                "own home, or the path out)")


@pytest.mark.parametrize("args", [["sites", "--config", NO_USER], ["--config", NO_USER],
                                  ["sites"], []])
def test_fault_a_sites_file_in_the_home_of_no_user_is_said_not_a_traceback(capsys, monkeypatch,
                                                                          args):
    """`--config ~nosuchuser/sites.yaml` ended in pathlib's `RuntimeError: Could not
    determine home directory` (exit 1); so did DIAMOND_CONFIG holding it (args without
    --config)."""
    monkeypatch.setenv("DIAMOND_CONFIG", NO_USER)
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err == f"diamond: {NO_USER_SAID}\n", err


def test_a_sites_file_that_is_a_directory_is_said_with_the_file_to_give(tmp_path, capsys):
    (tmp_path / "sites.yaml").mkdir()
    err = _cli_refused(capsys, tmp_path / "sites.yaml")
    assert f"sites file {tmp_path}/sites.yaml is a directory (give the YAML file in it" in err
