"""Sites files, twenty-third sweep: what a new user or admin writes by hand from another
tool's habits. Durations as Slurm, ssh or ISO 8601 write them (`1-00:00:00`, `2-12`,
`1h30m`, `PT1H30M`) where seconds are wanted; a factor written as a percentage (`150%`), with
a decimal comma (`1,5`) or a times sign (`2x`); bytes with thousands marks (`1,000,000`) or
an exponent YAML reads as a fraction (`1.0e+9`); anchors defined twice, merge keys
(`<<: *a`, `<<: [*a, *b]`) in sites and transports, aliases as keys; a BOM with CRLF line
ends, tabs, names alike but for case, a map of sites, scheduler names misspelt or of other
families, `host:port`, `[IPv6]:port` and `ssh://` hosts, `~` and `$VAR` in paths and
hosts; and a sites file edited while the Jupyter server runs into one that no longer loads.
Each is read as meant or refused naming file, line, key and what is accepted (the CLI
exits 2).

Faults found and fixed, each shown by a test here marked `fault` that failed before:
- a seconds key given a clock (`1-00:00:00`, `'00:30:00'`, `2-12`), units run together
  (`1h30m`) or ISO 8601 (`PT1H`) was told `a plain number of seconds, e.g. 30`; it now says
  the seconds meant (`write 86400 for 1-00:00:00`);
- a factor written `150%`, `1,5` or `2x` was told `a plain number, e.g. 30` (30 times the
  speed); it now says the factor meant (`write 1.5 for 150%`), and a factor's example is 1.5;
- bytes written `1,000,000` were told `e.g. 30`, and `1.0e+9` (read by YAML as a fraction)
  too; each now says the whole number to write;
- an anchor defined twice (`&a` on two blocks) was refused as `line 2, column 6: second
  occurrence`, PyYAML's half sentence; it now names the anchor and both lines;
- a sites file edited, while the Jupyter server ran, into one that would not load (a YAML
  slip) was said `changed ...: restart the Jupyter server to use the edited file`, and the
  restart then started no engine; the note now gives the edited file's error and says to
  mend it before restarting (the sites shown stay those read).
"""

from __future__ import annotations

import pytest
import sweep_helpers
from test_config_unseen2 import loads, refused, write
from test_config_unseen22 import _cli_refused

from diamond_jupyter.config import load_config
from diamond_jupyter.sites_file_watch import SitesFileWatch

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")
_, _, jp_server_config, rest = sweep_helpers.FACES_FIXTURES
key_dir = sweep_helpers.key_dir
LOCAL = "    transport: {kind: local}\n"
SITE = "sites:\n  - name: a\n" + LOCAL


def _transport(d, keys: str) -> str:
    """An ssh site `a` whose key and known_hosts exist, with `keys` (flow) in transport."""
    return (f"sites:\n  - name: a\n    transport: {{known_hosts: {d}/known_hosts, "
            f"key_file: {d}/id_ed25519, use_agent: false, {keys}}}\n")


# ---- durations where seconds are wanted -------------------------------------------------------

@pytest.mark.parametrize("written,seconds", [
    ("1-00:00:00", 86400),  # Slurm's D-HH:MM:SS
    ("2-12", 216000),  # D-HH
    ("0-01:30", 5400),  # D-HH:MM
    ("'00:30:00'", 1800),  # HH:MM:SS quoted (unquoted, YAML 1.1 reads it as 1800 itself)
    ("1h30m", 5400),  # ssh's TIME FORMAT
    ("PT1H30M", 5400),  # ISO 8601
    ("P1D", 86400),
])
def test_fault_a_duration_written_as_another_tool_does_says_its_seconds(key_dir, capsys,
                                                                        written, seconds):
    """Said before: `a plain number of seconds, e.g. 30`, not which number."""
    path = write(key_dir, "sites:\n  - name: a\n    transport: {kind: local, "
                 f"command_timeout_s: {written}}}\n")
    err = _cli_refused(capsys, path)
    shown = written.strip("'")
    assert "transport.command_timeout_s: Input should be a valid number" in err and \
        f"(a plain number of seconds: write {seconds} for {shown}) (line 3)" in err, err


@pytest.mark.parametrize("written", ["'1:30'", "1-", "PT", "soon"])
def test_a_duration_that_says_no_one_number_keeps_the_example(key_dir, written):
    """`1:30` is minutes or hours as its writer meant: not guessed."""
    got = refused(key_dir, f"transfers: {{backoff_s: {written}}}\n" + SITE)
    assert "transfers.backoff_s: Input should be a valid number" in got and \
        "(a plain number of seconds, e.g. 30) (line 1)" in got, got


def test_fault_the_duration_told_is_one_the_file_then_loads_with(key_dir):
    got = refused(key_dir, "transfers: {backoff_max_s: 0-00:10:00}\n" + SITE)
    assert "write 600 for 0-00:10:00" in got, got
    assert loads(key_dir, "transfers: {backoff_max_s: 600}\n" + SITE).transfers \
        .backoff_max_s == 600


# ---- factors and byte counts written as a person would -------------------------------------

@pytest.mark.parametrize("line,said", [
    ("charge_factor: 150%", "charge_factor: Input should be a valid number, unable to parse "
                            "string as a number (a plain number, a factor, not a percentage: "
                            "write 1.5 for 150%) (line 4)"),
    ("speed_factor: '80 %'", "a factor, not a percentage: write 0.8 for 80 %"),
    ("speed_factor: 1,5", "speed_factor: Input should be a valid number, unable to parse string "
                          "as a number (a plain number, with a decimal point: write 1.5 for "
                          "1,5)"),
    ("charge_factor: 2x", "(a plain number, the factor alone: write 2 for 2x)"),
    ("speed_factor: x1.25", "the factor alone: write 1.25 for x1.25"),
    ("speed_factor: 64GB", "speed_factor: Input should be a valid number, unable to parse "
                           "string as a number (a plain number, e.g. 1.5) (line 4)"),
])
def test_fault_a_factor_written_as_a_person_would_says_the_factor(key_dir, line, said):
    """Said before: `a plain number, e.g. 30`: a speed factor of 30."""
    got = refused(key_dir, SITE + f"    {line}\n")
    assert said in got and "e.g. 30" not in got, got


def test_a_factor_as_a_plain_number_loads(key_dir):
    [site] = loads(key_dir, SITE + "    charge_factor: 1.5\n    speed_factor: 0.8\n").sites
    assert (site.charge_factor, site.speed_factor) == (1.5, 0.8)


@pytest.mark.parametrize("text,said", [
    ("fetch_max_file_bytes: 1,000,000\n" + SITE,
     "fetch_max_file_bytes: Input should be a valid integer, unable to parse string as an "
     "integer (a plain number of bytes, without thousands marks: write 1000000 for "
     "1,000,000) (line 1)"),
    ("sites:\n  - name: a\n    transport: {kind: local, max_output_bytes: 1.0e+9}\n",
     "transport.max_output_bytes: Input should be a valid integer (a plain number of bytes: "
     "write 1000000000, with no decimal point nor exponent) (line 3)"),
])
def test_fault_bytes_with_thousands_marks_or_a_fraction_say_the_whole_number(key_dir, text,
                                                                            said):
    """Said before: `a plain number of bytes, e.g. 30`."""
    got = refused(key_dir, text)
    assert said in got, got


@pytest.mark.parametrize("written,meant", [("64GB", "64000000000"), ("2T", "2199023255552"),
                                           ("'64 MiB'", "67108864")])
def test_bytes_with_units_still_say_the_number(key_dir, written, meant):
    got = refused(key_dir, f"log_tail_bytes: {written}\n" + SITE)
    assert f"(a plain number of bytes: write {meant} for {written.strip(chr(39))})" in got, got


# ---- anchors, aliases and merge keys -------------------------------------------------------

def test_fault_an_anchor_defined_twice_names_it_and_both_lines(key_dir, capsys):
    """Said before: `line 5, column 6: second occurrence`, with no word of what occurred."""
    path = write(key_dir, "x-ssh: &common {scheduler: pbs}\n\n# later, copied from another "
                          "file\nx-local: &common {scheduler: lsf}\n" + SITE
                 + "    <<: *common\n")
    err = _cli_refused(capsys, path)
    assert f"sites file {path} is not valid YAML: line 4, column 10: the anchor &common is " \
        "defined a second time (first on line 1): give each anchor its own name" in err, err


def test_merges_of_several_anchors_and_a_key_after_them_are_read_as_meant(key_dir):
    cfg = loads(key_dir, "x-pbs: &pbs {scheduler: pbs, charge_factor: 2}\n"
                         "x-quiet: &quiet {auto: false, hedge: false}\n"
                         "sites:\n  - name: a\n    <<: [*pbs, *quiet]\n    charge_factor: 3\n"
                + LOCAL + "  - name: b\n    <<: *quiet\n" + LOCAL)
    a, b = cfg.sites
    assert (a.scheduler, a.charge_factor, a.auto, a.hedge) == ("pbs", 3.0, False, False)
    assert (b.scheduler, b.auto) == ("slurm", False)


def test_a_transport_merged_from_one_block_into_two_sites_keeps_each_host(key_dir):
    d = key_dir
    cfg = loads(d, f"x-ssh: &ssh {{known_hosts: {d}/known_hosts, key_file: {d}/id_ed25519, "
                   "use_agent: false, port: 2222}\nsites:\n"
                   "  - name: a\n    transport:\n      <<: *ssh\n      host: login1.example.org\n"
                   "  - name: b\n    transport:\n      <<: *ssh\n      host: login2.example.org\n")
    assert [(s.transport.host, s.transport.port) for s in cfg.sites] == [
        ("login1.example.org", 2222), ("login2.example.org", 2222)]


def test_a_misspelt_key_in_a_merged_block_is_named_on_the_blocks_line(key_dir):
    got = refused(key_dir, "x-base: &base\n  schedular: pbs\n" + SITE + "    <<: *base\n")
    assert "site 'a' (sites[0]): schedular: unknown key (did you mean scheduler?" in got and \
        got.endswith("(line 2)"), got


def test_a_block_of_anchors_not_named_x_says_how_to_name_it(key_dir):
    got = refused(key_dir, "defaults: &d {scheduler: pbs}\n" + SITE + "    <<: *d\n")
    assert "defaults: unknown key" in got and "is named x-NAME, e.g. x-defaults" in got, got


@pytest.mark.parametrize("text,said", [
    (SITE + "    <<: *nowhere\n", "found undefined alias 'nowhere'; no anchor &nowhere"),
    (SITE + "    <<: pbs\n", "expected a mapping or list of mappings for merging"),
    (SITE + "    metadata: &m {self: *m}\n", "an alias refers to a value that holds it"),
])
def test_aliases_that_cannot_be_read_are_refused_with_their_reason(key_dir, text, said):
    assert said in refused(key_dir, text)


def test_an_alias_as_a_key_is_the_key_it_names(key_dir):
    [site] = loads(key_dir, "x-k: &k scheduler\n" + SITE + "    *k : pbs\n").sites
    assert site.scheduler == "pbs"


# ---- bytes of the file ---------------------------------------------------------------------------

def test_a_bom_and_crlf_line_ends_are_read_and_lines_counted_as_an_editor_shows(key_dir):
    text = "\ufeff# sites\r\nsites:\r\n  - name: a\r\n" + LOCAL.replace("\n", "\r\n")
    path = key_dir / "sites.yaml"
    path.write_bytes(text.encode())
    assert [s.name for s in load_config(path).sites] == ["a"]
    path.write_bytes((text + "    scheduler: pbss\r\n").encode())
    with pytest.raises(Exception) as e:
        load_config(path)
    assert "scheduler: Input should be 'slurm', 'pbs', 'lsf', 'flux' or 'sge', not 'pbss'; " \
        "did you mean pbs? (line 5)" in str(e.value), e.value


@pytest.mark.parametrize("text,line", [("sites:\n\t- name: a\n", 2),
                                       ("sites:\n  - name: a\n  \ttransport: {}\n", 3)])
def test_tabs_for_indentation_are_refused_on_their_line(key_dir, text, line):
    got = refused(key_dir, text)
    assert f"line {line}, column" in got and "indent with spaces" in got, got


# ---- site lists and names ---------------------------------------------------------------------

def test_names_alike_but_for_case_are_refused_naming_both(key_dir, capsys):
    err = _cli_refused(capsys, write(key_dir, "sites:\n  - name: Perlmutter\n" + LOCAL
                                    + "  - name: perlmutter\n" + LOCAL))
    assert "site names 'Perlmutter' (sites[0]) and 'perlmutter' (sites[1]) differ only in " \
        "case" in err and "(line 4)" in err, err


def test_sites_as_a_map_says_to_write_a_list(key_dir):
    got = refused(key_dir, "sites:\n  perlmutter:\n    transport: {kind: local}\n")
    assert "sites: Input should be a valid list, got a mapping: write each site as an item " \
        "of the list, `- name: perlmutter` with its keys" in got, got


@pytest.mark.parametrize("written,read", [("openpbs", "pbs"), ("Univa", "sge"),
                                          ("'SLURM '", "slurm"), ("spectrum lsf", "lsf")])
def test_scheduler_names_of_the_same_family_are_read(key_dir, written, read):
    assert loads(key_dir, SITE + f"    scheduler: {written}\n").sites[0].scheduler == read


@pytest.mark.parametrize("written,said", [
    ("slrum", "not 'slrum'; did you mean slurm? (line 4)"),
    ("htcondor", "not 'htcondor' (the engine runs Slurm, PBS Pro/Torque, LSF, Flux and Grid "
                 "Engine sites) (line 4)"),
])
def test_a_scheduler_misspelt_or_of_another_kind_is_refused_saying_what_runs(key_dir,
                                                                           written, said):
    got = refused(key_dir, SITE + f"    scheduler: {written}\n")
    assert "scheduler: Input should be 'slurm', 'pbs', 'lsf', 'flux' or 'sge', " + said in got


# ---- hosts, ports and paths --------------------------------------------------------------------

@pytest.mark.parametrize("host,read", [
    ("login.example.org:2222", ("login.example.org", 2222, None)),
    ("'[2001:db8::1]:2222'", ("2001:db8::1", 2222, None)),
    ("'2001:db8::1'", ("2001:db8::1", None, None)),
    ("ssh://alice@login.example.org:2200", ("login.example.org", 2200, "alice")),
])
def test_hosts_with_a_port_a_user_or_ipv6_are_read_as_meant(key_dir, host, read):
    (key_dir / "id_ed25519").chmod(0o600)
    t = loads(key_dir, _transport(key_dir, f"host: {host}")).sites[0].transport
    assert (t.host, t.port, t.user) == read


def test_a_port_in_the_host_and_another_in_port_is_refused(key_dir):
    got = refused(key_dir, _transport(key_dir, "host: 'h.example.org:2222', port: 22"))
    assert "transport: host gives port 2222 and port gives 22: give it once (line 3)" in got


@pytest.mark.parametrize("keys,said", [
    ("host: $LOGIN_HOST", "host: '$LOGIN_HOST': a host is written out, not read from a "
                          "variable"),
    ("host: h, key_file: $NO_SUCH_DIR_23/id", "names $NO_SUCH_DIR_23, which is not set"),
    ("host: h, key_file: ~nosuchuser23/.ssh/id", "~nosuchuser23 is the home of a user "
                                                 "nosuchuser23, and this machine has none"),
])
def test_variables_and_homes_in_hosts_and_paths_are_refused_when_unmeant(key_dir, monkeypatch,
                                                                        keys, said):
    monkeypatch.setenv("LOGIN_HOST", "login.example.org")
    monkeypatch.delenv("NO_SUCH_DIR_23", raising=False)
    got = refused(key_dir, f"sites:\n  - name: a\n    transport: {{{keys}}}\n")
    assert said in got and "(line 3)" in got, got


def test_a_variable_in_a_key_path_is_expanded(key_dir, monkeypatch):
    monkeypatch.setenv("KEYS_23", str(key_dir))
    (key_dir / "id_ed25519").chmod(0o600)
    t = loads(key_dir, "sites:\n  - name: a\n    transport: {host: h, key_file: "
                       "$KEYS_23/id_ed25519, known_hosts: '${KEYS_23}/known_hosts', "
                       "use_agent: false}\n").sites[0].transport
    assert (str(t.key_file), str(t.known_hosts)) == (f"{key_dir}/id_ed25519",
                                                     f"{key_dir}/known_hosts")


# ---- a sites file edited while the Jupyter server runs -----------------------------------------

async def _said(rest) -> str | None:
    code, reply = await rest("GET", "state")
    assert code == 200, reply
    return reply.get("sites_file_changed")


async def test_fault_an_edit_that_breaks_the_file_is_said_with_its_error(rest, tmp_path):
    """Said before: `changed ...: restart the Jupyter server to use the edited file`; the
    restart then found the error and started no engine."""
    sites = tmp_path / "sites.yaml"
    good = sites.read_text()  # yaml.safe_dump's: `- name: here` at the line's start
    sites.write_text(good + "- name: there\n\ttransport: {kind: local}\n")
    note = await _said(rest)
    assert note is not None and note.startswith(
        f"the sites file {sites} changed since this Jupyter server read it, and the edited "
        f"file would not load: sites file {sites} is not valid YAML: line "), note
    assert "'\\t'" in note and note.endswith(
        "the sites shown are those it read: mend the file before restarting the Jupyter "
        "server"), note
    code, listed = await rest("GET", "sites")
    assert code == 200 and [s["name"] for s in listed["sites"]] == ["here"], listed
    sites.write_text(good + "- name: there\n  transport: {kind: local}\n  workdir: /w\n")
    note = await _said(rest)  # mended: the usual word, to restart
    assert note is not None and note.endswith("restart the Jupyter server to use the edited "
                                              "file") and "would not load" not in note, note


def test_fault_a_file_created_broken_after_a_start_without_one_says_its_error(tmp_path):
    sites = tmp_path / "sites.yaml"
    watch = SitesFileWatch.now(sites, "kernel")
    sites.write_text("sites:\n  - name: a\n" + LOCAL + "    speed_factor: 150%\n")
    note = watch.note()
    assert note is not None and note.startswith(
        f"the sites file {sites} was created after this kernel started without it, and it "
        f"would not load: sites file {sites}: site 'a' (sites[0]): speed_factor:"), note
    assert note.endswith("write 1.5 for 150%) (line 4); mend it, then restart the kernel"), note


def test_fault_a_secret_in_the_edited_files_error_is_not_in_the_note(tmp_path):
    """The note reaches every listing and the agent's context; the load error it quotes
    showed a folded preamble's `export SLURM_JWT=...` as written (the token whole)."""
    sites = tmp_path / "sites.yaml"
    sites.write_text(good := SITE)
    sites.chmod(0o600)
    watch = SitesFileWatch.now(sites, "kernel")
    sites.write_text(good + "    preamble: >\n      export SLURM_JWT=eyJhbGciOiJIUzI1NiJ9.tok"
                            "en123\n      module load x\n")
    note = watch.note()
    assert note is not None and "would not load" in note and "folded block" in note, note
    assert "SLURM_JWT=***" in note and "eyJhbGci" not in note and "token123" not in note, note
