"""Sites files, fifteenth sweep: shell syntax in a partition, account or server name (the
faces refuse it in a job's partition; the sites file passed it to every job), a job
directive in a site's preamble (run on the login before each command, never in a job), a
Slurm-only key on another scheduler, retry waits whose longest is below the first, and a
site's key written at the top of the file. Each is refused naming the file, the key, the
line and what would be accepted, or taken as an admin means it (the guards: what earlier
sweeps left unsaid about keys beside the right scheduler, transports and metadata). The
tests marked `fault` failed before this sweep's fixes."""

from __future__ import annotations

import pytest
from test_config_unseen2 import loads, refused

LOCAL = "sites:\n  - name: a\n    transport: {kind: local}\n"
REST = ("sites:\n  - name: a\n    workdir: /w\n    transport: {kind: slurmrestd, "
        "url: 'http://ctl:6820', token_command: scontrol token")


# ---- shell syntax in the names a site's jobs are given -------------------------------------

SHELL_NAMES = [
    ("    default_partition: 'gpu;rm'\n", "default_partition", "'gpu;rm' holds ';'"),
    ("    default_partition: '$(id)'\n", "default_partition", "holds '$'"),
    ("    default_account: 'proj|x'\n", "default_account", "holds '|'"),
    ("    default_account: '`whoami`'\n", "default_account", "holds '`'"),
    ("    allowed_partitions: [debug, 'gpu&cpu']\n", "allowed_partitions.1", "holds '&'"),
    ("    scheduler: pbs\n    pbs_servers: ['srv>x']\n", "pbs_servers.0", "holds '>'"),
    ("    default_account: \"o'brien\"\n", "default_account", "holds \"'\""),
]


@pytest.mark.parametrize("lines,key,said", SHELL_NAMES)
def test_fault_shell_syntax_in_a_partition_account_or_server_name_is_refused(
        tmp_path, lines, key, said):
    """`default_partition: 'gpu;rm'` was taken and written into every job's directives; a
    face refuses the same partition typed for one job."""
    got = refused(tmp_path, LOCAL + lines)
    assert f"site 'a' (sites[0]): {key}: " in got and said in got, got
    assert "no scheduler's partition, account or server name holds" in got, got
    assert "letters, digits, _ . -, e.g. debug" in got, got
    assert got.endswith(f"(line {3 + lines.count(chr(10))})"), got


@pytest.mark.parametrize("lines", [
    "    scheduler: sge\n    default_partition: '*@node01'\n",
    "    scheduler: sge\n    allowed_partitions: ['all.q,short.q', '!gpu.q']\n",
    "    default_account: proj-2024_a.b\n",
    "    scheduler: pbs\n    pbs_servers: ['pbs01.example.org:15001']\n",
])
def test_grid_engine_wildcards_and_plain_names_are_kept(tmp_path, lines):
    site = loads(tmp_path, LOCAL + lines).sites[0]
    assert site.default_partition or site.allowed_partitions or site.default_account or \
        site.pbs_servers


# ---- a job directive in a site's preamble --------------------------------------------------

PREAMBLES = [
    ("    preamble: |\n      module load slurm\n      #SBATCH -p gpu\n",
     "preamble line 2 '#SBATCH -p gpu'", "a default partition is default_partition: NAME", 4),
    ("    preamble: \"#SBATCH --account=proj\\n\"\n",
     "preamble line 1 '#SBATCH --account=proj'", "default_account: NAME", 4),
    ("    scheduler: pbs\n    preamble: \"#PBS -A proj\\n\"\n",
     "preamble line 1 '#PBS -A proj'", "a default account is default_account: NAME", 5),
    ("    scheduler: lsf\n    preamble: \"  #BSUB -q short\\n\"\n",
     "preamble line 1 '#BSUB -q short'", "a default queue is default_partition: NAME", 5),
    ("    scheduler: sge\n    preamble: \"#$ -l h_rt=1:00:00\\n\"\n",
     "preamble line 1 '#$ -l h_rt=1:00:00'", "a job's own directives go in its script", 5),
    ("    scheduler: flux\n    preamble: \"# flux: -N 2\\n\"\n",
     "preamble line 1 '# flux: -N 2'", "a job's own directives go in its script", 5),
]


@pytest.mark.parametrize("lines,said,hint,line", PREAMBLES)
def test_fault_a_job_directive_in_a_preamble_is_refused_saying_where_it_goes(
        tmp_path, lines, said, hint, line):
    """The preamble runs on the login before each scheduler command: `#SBATCH -p gpu`
    there is a comment, and the partition the admin meant every job to have was never
    asked for."""
    got = refused(tmp_path, LOCAL + lines)
    assert f"site 'a' (sites[0]): {said} is a job directive" in got, got
    assert "runs on the login before each scheduler command" in got, got
    assert hint in got and got.endswith(f"(line {line})"), got


@pytest.mark.parametrize("preamble", ["# load the site's modules\nmodule load slurm\n",
                                      "#!/bin/bash\nexport X=1\n", "#SBATCHED=1\n"])
def test_a_preamble_with_plain_comments_is_kept(tmp_path, preamble):
    text = LOCAL + "    preamble: |\n" + "".join(f"      {ln}\n"
                                                   for ln in preamble.splitlines())
    assert loads(tmp_path, text).sites[0].preamble == preamble


# ---- keys beside the wrong scheduler -------------------------------------------------------

@pytest.mark.parametrize("lines,sched", [
    ("    scheduler: pbs\n    jobcomp: true\n", "pbs"),
    ("    scheduler: lsf\n    jobcomp: true\n", "lsf"),
    ("    scheduler: pbs\n    flavor: torque\n    jobcomp: true\n", "pbs flavor torque"),
])
def test_fault_jobcomp_on_a_scheduler_without_slurm_accounting_is_refused(tmp_path, lines,
                                                                          sched):
    """jobcomp was taken on a PBS or LSF site and read by nothing."""
    got = refused(tmp_path, LOCAL + lines)
    assert "jobcomp is for scheduler slurm, or pbs with flavor slurm" in got, got
    assert f"not {sched}: leave it out (line 2)" in got, got


def test_jobcomp_on_slurms_pbs_wrappers_is_taken(tmp_path):
    site = loads(tmp_path, LOCAL + "    scheduler: pbs\n    flavor: slurm\n"
                               "    jobcomp: true\n").sites[0]
    assert site.jobcomp and site.flavor == "slurm"


# ---- transfer retries ----------------------------------------------------------------------

def test_fault_a_longest_wait_below_the_first_is_refused_naming_both(tmp_path):
    got = refused(tmp_path, LOCAL + "transfers: {backoff_s: 10, backoff_max_s: 5}\n")
    assert "transfers: backoff_max_s 5 is below backoff_s 10" in got, got
    assert "give backoff_max_s at least 10 (or a smaller backoff_s) (line 4)" in got, got


def test_fault_a_first_wait_alone_is_not_cut_to_the_default_longest(tmp_path):
    """`backoff_s: 3600` alone: the waits were cut to the default longest, 30 s."""
    cfg = loads(tmp_path, LOCAL + "transfers: {backoff_s: 3600}\n")
    assert cfg.transfers.backoff_s == cfg.transfers.backoff_max_s == 3600


def test_a_longest_wait_equal_to_the_first_is_taken(tmp_path):
    cfg = loads(tmp_path, LOCAL + "transfers: {backoff_s: 5, backoff_max_s: 5}\n")
    assert (cfg.transfers.backoff_s, cfg.transfers.backoff_max_s) == (5, 5)


# ---- a site's key at the top of the file ---------------------------------------------------

@pytest.mark.parametrize("line", ["scheduler: pbs", "workdir: /scratch/diamond",
                                  "env: {OMP_NUM_THREADS: '4'}", "default_account: proj"])
def test_fault_a_sites_key_at_the_top_level_says_it_belongs_in_each_site(tmp_path, line):
    """`scheduler: pbs` written above or below `sites:` was "unknown key", with no word
    that it is each site's."""
    key = line.split(":")[0]
    got = refused(tmp_path, LOCAL + line + "\n")
    assert f": {key}: unknown key: {key} is a key of each site, written in the site's " \
           "entry under sites: (beside its `- name:`; accepted here: sites, store" in got, got
    assert got.endswith("(line 4)"), got


def test_a_top_level_key_misspelt_still_says_the_one_meant(tmp_path):
    got = refused(tmp_path, LOCAL + "stor: /tmp/s.sqlite3\n")
    assert "stor: unknown key (did you mean store?" in got, got


# ---- guards: what an admin writes and the file already says well ---------------------------

GUARDS = [
    (LOCAL + "    allowed_partitions: [cpu]\n    default_partition: gpu\n",
     "default_partition 'gpu' is not in allowed_partitions (cpu)"),
    (LOCAL + "    charge_factor: '1,5'\n", "charge_factor: Input should be a valid number"),
    (LOCAL + "    discovery: false\n", "write discovery: {enabled: false}"),
    ("sites:\n  - name: a\n    transport: {kind: local, host: h}\n",
     "host: for a transport of kind ssh, not local"),
    (REST + ", host: ctl}\n", "host: for a transport of kind ssh, not slurmrestd"),
    (REST + ", api_version: 0.0.38}\n", "(write v0.0.38)"),
    (REST + "}\n    files: {kind: slurmrestd}\n", "files.kind must be ssh or local"),
    (LOCAL + "    preamble: [module load x]\n", "write preamble: | and the shell lines"),
    (LOCAL + "    commands: {qsub: /usr/bin/qsub}\n", "'qsub' is not a slurm command"),
    (LOCAL + "    metadata: {architecure: x86_64}\n", "did you mean architecture?"),
    (LOCAL + "transfers: {retries: 3}\n", "transfers.retries: unknown key"),
    (LOCAL + "    env: {DEBUG: yes}\n", "put the value in quotes"),
]


@pytest.mark.parametrize("text,said", GUARDS)
def test_a_mistake_the_file_names_already_stays_named(tmp_path, text, said):
    got = refused(tmp_path, text)
    assert said in got and "(line " in got, got
