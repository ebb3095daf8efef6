"""Sites files, fifth sweep, as centers and users write them: comments beside values and `#`
inside quoted ones, a Windows file (BOM, CRLF) with a tab inside a value, a tab in a flow
mapping's indentation, a site given two transports (a key twice, or a `transports:` list),
a slurmrestd door with a token file (beside the sites file, under `~`) and with both token
sources, a REST URL copied with its `/slurm/v0.0.N` path, one login host serving two
schedulers, YAML anchors shared by every site, a default site the file does not know, and
a second YAML document. Each file's answer was worked out by hand: what it builds (checked
without connecting) or its one-line refusal naming the file, the site, the key and what
would be accepted; `diamond sites` exits 2 on it."""

from __future__ import annotations

from pathlib import Path

import pytest
from sweep_helpers import key_files
from test_config_unseen2 import loads, refused, write
from test_config_unseen4 import door

from diamond_jupyter.cli import main


@pytest.fixture
def d(tmp_path: Path) -> Path:
    key_files(tmp_path)
    (tmp_path / "jwt").write_text("eyJhbGciOiJIUzI1NiJ9.e30.sig\n")
    (tmp_path / "jwt").chmod(0o600)
    return tmp_path


REST = "url: 'https://slurm.example.org:6820'"
WORKDIR = "    workdir: /scratch/ana/.diamond\n"


# -- 1. comments and `#` in values ------------------------------------------------------------

def test_comments_beside_values_and_hashes_inside_quoted_ones(d):
    """YAML ends a value at ` #` outside quotes only; a `#` inside quotes, or one with no
    blank before it, is the value's. A block preamble keeps its shell comments."""
    cfg = loads(d, f"""\
sites:
  - name: hpc   # the main cluster
    scheduler: slurm # since 2021
    default_account: proj#7
    preamble: |
      # the site's setup
      module load slurm   # shell's comment, kept
    env:
      SBATCH_COMMENT: "run # 4"
      TAG: 'a # b'
    transport:
      host: login.example.org  # round robin DNS
      key_file: {d}/id_ed25519
      known_hosts: {d}/known_hosts
      use_agent: false
""")
    s = cfg.site("hpc")
    assert (s.scheduler, s.default_account, s.transport.host) == \
        ("slurm", "proj#7", "login.example.org")
    assert s.preamble == "# the site's setup\nmodule load slurm   # shell's comment, kept\n"
    assert s.env == {"SBATCH_COMMENT": "run # 4", "TAG": "a # b"}


def test_a_windows_file_with_a_bom_crlf_and_a_tab_inside_a_quoted_value(d):
    path = write(d, "")
    path.write_bytes("\ufeff# exported from Notepad\r\nsites:\r\n  - name: a\r\n"
                     "    preamble: \"export OPTS=-a\\t-b\"\r\n"
                     "    transport: {kind: local}\r\n".encode("utf-8"))
    from diamond_jupyter.config import load_config
    s = load_config(path).site("a")
    assert s.preamble == "export OPTS=-a\t-b" and s.transport.kind == "local"


def test_a_tab_in_a_host_and_in_a_flow_mappings_indentation(d):
    msg = refused(d, f"sites:\n  - name: a\n    transport: {{host: \"login.example.org\\t\", "
                     f"{door(d)}}}\n")
    assert msg.endswith("transport: host: must be one line of printable text (it holds '\\t') "
                        "(line 3)")
    msg = refused(d, "sites:\n  - {name: a,\n\ttransport: {kind: local}}\n")
    assert "line 3, column 1: found character '\\t'" in msg and "indent with spaces" in msg


# -- 2. two transports ------------------------------------------------------------------------

def test_a_site_given_two_transports(d):
    """One site, one door: a second `transport:` is a key given twice; a `transports:` list
    is a key this file does not have (the second door is a second entry, `auto: false`)."""
    msg = refused(d, f"""\
sites:
  - name: a
    transport: {{host: login1.example.org, {door(d)}}}
    transport: {{kind: local}}
""")
    assert "line 4, column 5: key 'transport' is given twice (first on line 3)" in msg
    msg = refused(d, f"""\
sites:
  - name: a
    transports:
      - {{host: login1.example.org, {door(d)}}}
      - {{kind: local}}
""")
    assert "site 'a' (sites[0]): transports: unknown key (did you mean transport?" in msg
    assert msg.endswith("(line 3)")


def test_the_second_door_written_as_its_own_entry(d):
    cfg = loads(d, f"""\
sites:
  - {{name: hpc, transport: {{host: login.example.org, {door(d)}}}}}
  - name: hpc-rest
    auto: false
{WORKDIR}    transport: {{kind: slurmrestd, {REST}, token_file: jwt, user: ana}}
    files: {{host: login.example.org, user: ana, {door(d)}}}
""")
    rest = cfg.site("hpc-rest")
    assert (rest.auto, rest.transport.kind, rest.files.host) == (False, "slurmrestd",
                                                                 "login.example.org")
    assert rest.transport.token_file == str(d / "jwt")


# -- 3. slurmrestd token files ----------------------------------------------------------------

def test_a_token_file_under_the_home_is_left_to_the_site_that_reads_it(d):
    cfg = loads(d, f"sites:\n  - name: r\n{WORKDIR}    transport: {{kind: slurmrestd, {REST}, "
                   "token_file: ~/.slurm/jwt}\n")
    assert cfg.site("r").transport.token_file == "~/.slurm/jwt"


def test_fault_a_token_command_and_a_token_file_together_are_refused(d):
    """Before: both were taken and the command silently won; the file was never read."""
    msg = refused(d, f"""\
sites:
  - name: r
{WORKDIR}    transport:
      kind: slurmrestd
      {REST.replace("'", "")}
      token_file: jwt
      token_command: scontrol token lifespan=3600
""")
    assert msg.endswith("site 'r' (sites[0]): transport: token_command and token_file: give "
                        "one (the token comes from one of them) (line 4)")


@pytest.mark.parametrize("command,odd", [
    ("scontrol token lifespan=3600 | cut -d= -f2", "'|'"),
    ("cat $HOME/.slurm/jwt", "'$HOME/.slurm/jwt'"),
    ("cat ~/.slurm/jwt", "'~/.slurm/jwt'"),
    ("scontrol token 2>/dev/null", "'2>/dev/null'"),
])
def test_fault_a_one_line_token_command_with_shell_syntax_says_to_use_a_shell(d, command, odd):
    """The token command runs without a shell: before, `| cut ...` reached scontrol as
    arguments and `$HOME` as the letters, and the site failed at its first request."""
    msg = refused(d, f"sites:\n  - name: r\n{WORKDIR}    transport: {{kind: slurmrestd, "
                     f"{REST}, token_command: \"{command}\"}}\n")
    assert f"transport.token_command: '{command}' runs " in msg
    assert f"without a shell, so {odd} would reach it as written; for a pipeline or " \
        f"variables write it as a list, [bash, -c, '{command}']" in msg and \
        msg.endswith("(line 4)")


def test_a_token_command_as_a_list_or_plain_words_is_kept(d):
    cfg = loads(d, f"""\
sites:
  - name: r
{WORKDIR}    transport: {{kind: slurmrestd, {REST},
                 token_command: [bash, -c, "scontrol token | cut -d= -f2"]}}
  - name: s
{WORKDIR}    transport: {{kind: slurmrestd, {REST}, token_command: scontrol token lifespan=7200}}
""")
    assert cfg.site("r").transport.token_command == ["bash", "-c",
                                                     "scontrol token | cut -d= -f2"]
    assert cfg.site("s").transport.token_command == ["scontrol", "token", "lifespan=7200"]


@pytest.mark.parametrize("url,base,version", [
    ("http://slurm.example.org:6820/slurm/v0.0.38", "http://slurm.example.org:6820",
     "v0.0.38"),
    ("https://hpc.example.org/rest/slurm/v0.0.40/", "https://hpc.example.org/rest",
     "v0.0.40"),
    ("https://hpc.example.org:6820/slurmdb/v0.0.39/jobs", "https://hpc.example.org:6820",
     "v0.0.39"),
])
def test_fault_a_rest_url_copied_with_its_api_path_says_where_the_version_goes(
        d, url, base, version):
    """Each request adds /slurm/VERSION/... to the URL: one copied from slurmrestd's docs
    with that path in it asked for /slurm/v0.0.38/slurm/v0.0.38/jobs and got a 404 at the
    first submit; now it is refused at load with the base and the api_version meant."""
    msg = refused(d, f"sites:\n  - name: r\n{WORKDIR}    transport: {{kind: slurmrestd, "
                     f"url: '{url}', token_file: jwt}}\n")
    assert msg.endswith(f"transport.url: url is the API's base ({base}); its version goes in "
                        f"api_version: {version} (line 4)")


def test_a_rest_url_under_a_proxy_path_is_kept(d):
    cfg = loads(d, f"sites:\n  - name: r\n{WORKDIR}    transport: {{kind: slurmrestd, "
                   "url: 'https://hpc.example.org/slurmrestd', token_file: jwt, "
                   "api_version: v0.0.40}\n")
    assert cfg.site("r").transport.url == "https://hpc.example.org/slurmrestd"


# -- 4. one host, two schedulers; anchors -----------------------------------------------------

def test_one_login_serving_slurm_and_torque_is_two_sites(d):
    cfg = loads(d, f"""\
sites:
  - {{name: hpc-slurm, scheduler: SLURM, transport: {{host: login.example.org, {door(d)}}}}}
  - {{name: hpc-torque, scheduler: Torque, transport: {{host: login.example.org, {door(d)}}}}}
""")
    assert [(s.name, s.scheduler, s.flavor) for s in cfg.sites] == [
        ("hpc-slurm", "slurm", None), ("hpc-torque", "pbs", "torque")]
    assert cfg.sites[0].transport.host == cfg.sites[1].transport.host


def test_yaml_anchors_shared_by_every_site_and_overridden_by_one(d):
    cfg = loads(d, f"""\
x-ssh: &ssh
  key_file: {d}/id_ed25519
  known_hosts: {d}/known_hosts
  use_agent: false
x-slurm: &slurm
  scheduler: slurm
  workdir: $SCRATCH/.diamond
  default_account: proj1
sites:
  - <<: *slurm
    name: a
    transport: {{<<: *ssh, host: a.example.org}}
  - <<: *slurm
    name: b
    workdir: /scratch/b
    default_account: proj2
    transport: {{<<: *ssh, host: b.example.org, port: 2222}}
""")
    a, b = cfg.site("a"), cfg.site("b")
    assert (a.workdir, a.default_account, a.transport.port) == ("$SCRATCH/.diamond", "proj1",
                                                                 None)
    assert (b.workdir, b.default_account, b.transport.port) == ("/scratch/b", "proj2", 2222)
    assert a.transport.key_file == b.transport.key_file == str(d / "id_ed25519")


# -- 5. what the file does not have -----------------------------------------------------------

def test_a_default_site_is_not_a_key_of_the_file(d):
    """The site is chosen per submit (`--site NAME`, or auto); `default_site:` naming one the
    file does not even list is refused as the unknown key it is, with the keys accepted."""
    msg = refused(d, "default_site: gamma\nsites:\n  - {name: a, transport: {kind: local}}\n")
    assert msg.endswith("default_site: unknown key (accepted: sites, store, log_tail_bytes, "
                        "fetch_max_file_bytes, transfers, unsure_submit_settle_s) (line 1)")


def test_fault_a_second_yaml_document_says_a_sites_file_is_one(d):
    """Two files pasted together: PyYAML's "but found another document" was shown as is."""
    msg = refused(d, "sites:\n  - {name: a, transport: {kind: local}}\n---\n"
                     "sites:\n  - {name: b, transport: {kind: local}}\n")
    assert msg.endswith("is not valid YAML: line 3, column 1: a second YAML document (`---`); "
                        "a sites file is one document: list every site under one `sites:`")


@pytest.mark.parametrize("text,want", [
    ("sites:\n  - {name: a, transport: {kind: local}}\n---\nsites: []\n", "second YAML document"),
    ("sites:\n  - name: r\n    workdir: /s\n    transport: {kind: slurmrestd, url: "
     "'http://r:6820/slurm/v0.0.38', token_file: /t}\n", "api_version: v0.0.38"),
    ("sites:\n  - name: r\n    workdir: /s\n    transport: {kind: slurmrestd, url: "
     "'http://r:6820', token_file: /t, token_command: scontrol token}\n", "give one"),
])
def test_diamond_sites_exits_2_naming_the_file(d, capsys, text, want):
    path = write(d, text)
    assert main(["sites", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert want in err and str(path) in err and err.count("\n") == 1
