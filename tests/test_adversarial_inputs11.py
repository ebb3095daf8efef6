"""The eleventh sweep of hostile inputs and careless hands: what the ten before left.

The standard is the earlier sweeps' (tests/test_adversarial_inputs.py to
tests/test_adversarial_inputs10.py): bad input is refused with one line naming what, where
and what would be accepted, and loses nothing; what comes from a site, a job or a service is
data, never a command, a record, a line of its own or a path outside its place. Tests of
attacks that already failed safely say so ("guard")."""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import sweep_helpers

from diamond_jupyter.model import BadInput, SiteError

CLI = [sys.executable, "-m", "diamond_jupyter.cli"]
pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")


def _sites(tmp_path: Path) -> Path:
    p = tmp_path / "sites.yaml"
    p.write_text("sites:\n  - name: alpha\n    scheduler: slurm\n    transport: {kind: local}\n"
                 f"store: {tmp_path / 'store.sqlite3'}\n")
    p.chmod(0o600)
    return p


def _cli(tmp_path: Path, *args: str, stdin: Any = subprocess.DEVNULL,
         timeout: float = 60) -> subprocess.CompletedProcess:
    env = {**os.environ, "DIAMOND_HANDOVER": "0", "HOME": str(tmp_path)}
    return subprocess.run([*CLI, "--config", str(_sites(tmp_path)), *args], stdin=stdin,
                          capture_output=True, text=True, timeout=timeout, env=env)


# -- 1. a job script file that never ends, or that nobody writes -------------------------------

@pytest.mark.parametrize("command", [["translate", "--to", "pbs"], ["place"], ["submit"]])
@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_script_file_that_never_ends_is_refused_after_a_bounded_read(tmp_path, command,
                                                                        device):
    """`diamond submit /dev/zero` (a slip of the tab key) read the device for ever, its
    memory growing until the machine ran out; so did `place`, `translate` and the magics'
    FILE. The read stops past 4 MiB (Slurm's own default bound on a script): exit 2, one
    line naming the file and the bound."""
    res = _cli(tmp_path, *command, device)
    assert res.returncode == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and device in lines[0] and "more than 4194304 bytes" in lines[0]


async def test_a_script_fifo_nobody_writes_is_refused_naming_it_not_a_wait(tmp_path,
                                                                           monkeypatch):
    """A FIFO as the script (a colleague's `job.sh` that is a pipe) held the command, or the
    notebook's kernel, until someone wrote into it; then (session 26) it read as an empty
    script. Now a pipe silent for PIPE_SILENCE_S is refused naming the path, as a workflow's
    is; a pipe being written is read whole."""
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.transports import base as transport_base

    monkeypatch.setattr(transport_base, "PIPE_SILENCE_S", 0.2)
    fifo = tmp_path / "job.sh"
    os.mkfifo(fifo)
    with pytest.raises(BadInput) as e:
        await asyncio.wait_for(asyncio.to_thread(Federation.read_script, fifo), 10)
    assert str(e.value) == (f"{fifo}: a pipe that nothing wrote to for 0.2 s (no writer); "
                            "give the job script's file, or a pipe its writer fills")
    r, w = os.pipe()
    os.write(w, b"#!/bin/sh\n#SBATCH -t 5\necho hi\n")
    os.close(w)
    assert Federation.read_script(f"/dev/fd/{r}") == "#!/bin/sh\n#SBATCH -t 5\necho hi\n"
    os.close(r)


def test_a_script_fifo_its_writer_fills_is_read_and_one_gone_quiet_is_refused(
        tmp_path, monkeypatch):
    """`diamond submit <(./make.sh)`: the generated text, written as the reader reads; a
    writer that wrote part and then stopped (still holding the pipe open) is refused, not
    waited on and not taken for the whole script."""
    import threading

    from diamond_jupyter.federation import Federation
    from diamond_jupyter.transports import base as transport_base

    monkeypatch.setattr(transport_base, "PIPE_SILENCE_S", 1.0)  # load-proof
    fifo = tmp_path / "job.sh"
    os.mkfifo(fifo)
    body = "#!/bin/sh\n#SBATCH -t 5\n" + "echo hi\n" * 20000  # more than a pipe's buffer

    def write_all() -> None:
        with fifo.open("w") as f:  # opens when the reader does
            f.write(body)

    t = threading.Thread(target=write_all, daemon=True)
    t.start()
    assert Federation.read_script(fifo) == body
    t.join(10)

    release = threading.Event()

    def write_part() -> None:
        with fifo.open("w") as f:
            f.write("#!/bin/sh\n")
            f.flush()
            release.wait(30)

    t = threading.Thread(target=write_part, daemon=True)
    t.start()
    with pytest.raises(BadInput) as e:
        Federation.read_script(fifo)
    release.set()
    t.join(10)
    assert str(e.value).startswith(f"{fifo}: a pipe that nothing wrote to for 1 s "
                                   "(it stopped)")


def test_a_workflow_fifo_nobody_writes_is_refused_not_a_wait(tmp_path):
    """`diamond workflow run steps.yaml` where steps.yaml is a FIFO held the command for
    ever (the open waited for a writer). A pipe silent for 10 s is refused: exit 2, one
    line (a pipe its writer fills, `<(./make.py)`, is read: test_workflow_unseen8)."""
    fifo = tmp_path / "steps.yaml"
    os.mkfifo(fifo)
    res = _cli(tmp_path, "workflow", "run", str(fifo), timeout=60)
    assert res.returncode == 2 and "a pipe that nothing wrote to for 10 s" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


def test_a_script_read_from_stdin_or_a_plain_file_still_reads(tmp_path):
    """(guard for the bound) `diamond translate --to pbs /dev/stdin < job.sh` and a plain
    file read as before."""
    job = tmp_path / "job.sh"
    job.write_text("#!/bin/bash\n#SBATCH -t 5\necho hi\n")
    with job.open() as f:
        res = _cli(tmp_path, "translate", "--to", "pbs", "/dev/stdin", stdin=f)
    assert res.returncode == 0 and "#PBS -l walltime=00:05:00" in res.stdout
    assert _cli(tmp_path, "translate", "--to", "pbs", str(job)).returncode == 0


# -- 2. a file name that sha256sum escapes -------------------------------------------------------

class _ShellSite:
    """A site's transport for SftpSide.sha256: runs the command here, as the site would."""

    name = "alpha"

    async def run(self, argv: list[str], check: bool = True, timeout: float = 0) -> Any:
        res = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        assert res.returncode == 0, res.stderr
        return res


@pytest.mark.parametrize("name", ["a\\b.dat", "line\nbreak.dat", "plain.dat", "-dash.dat"])
async def test_a_file_whose_name_sha256sum_escapes_is_hashed_right(tmp_path, name):
    """GNU sha256sum writes `\\SUM  NAME` for a file whose name holds a backslash or a
    newline. The engine took the first word, `\\SUM`, as the site's sum: every copy of such
    a file to or from an SSH site failed as a "checksum mismatch" and removed what had
    arrived. The sum is read after the escape now, and a leading '-' is a name."""
    from diamond_jupyter.transfer.sftp import SftpSide

    f = tmp_path / name
    f.write_bytes(b"payload\n" * 100)
    side = SftpSide.__new__(SftpSide)
    side.transport, side.label = _ShellSite(), "alpha"
    assert await side.sha256(str(f)) == hashlib.sha256(f.read_bytes()).hexdigest()


@pytest.mark.parametrize("answer", ["", "sha256sum: command not found\n",
                                    "abc  file\n", "\x1b[2J" + "0" * 64 + "  f\n"])
def test_a_sha256sum_answer_without_a_sum_is_a_site_error_not_a_mismatch(answer):
    """A site whose `sha256sum` answers something else (an alias, a wrapper's banner) is a
    site error naming the answer visibly, not a checksum mismatch that removes the data."""
    from diamond_jupyter.transfer.sftp import sha256_of_line

    with pytest.raises(SiteError, match="sha256sum answered no sha256 sum") as e:
        sha256_of_line(answer, "alpha:/x\ny")
    assert "\n" not in str(e.value) and "\x1b" not in str(e.value)


# -- 3. names that are not UTF-8, and lone surrogates in JSON ------------------------------------

def test_a_local_file_whose_name_is_not_utf8_is_refused_in_one_line(tmp_path):
    """`diamond transfer caf\xe9.dat DEST` (a Latin-1 name, common on old shares) ended in a
    traceback (UnicodeEncodeError from the store). Now exit 2, one line naming the argument
    and the byte; nothing recorded."""
    name = os.fsdecode(b"caf\xe9.dat")
    (tmp_path / name).write_bytes(b"data")
    (tmp_path / "out").mkdir()
    res = _cli(tmp_path, "transfer", str(tmp_path / name), str(tmp_path / "out") + "/")
    assert res.returncode == 2, res.stderr
    assert res.stderr.startswith("diamond: src holds U+DCE9 ") and "0xE9" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and not os.listdir(tmp_path / "out")


def test_a_directory_holding_a_name_that_is_not_utf8_copies_the_rest_and_says_so(tmp_path):
    """Copied recursively, such a name inside the directory stopped the copy half way with a
    traceback (its files' list could not be hashed or stored). It is left out and said, the
    rest arrives, the transfer SUCCEEDED."""
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / os.fsdecode(b"caf\xe9")).write_bytes(b"x")
    (tree / "ok.txt").write_bytes(b"y")
    res = _cli(tmp_path, "transfer", "-r", str(tree), str(tmp_path / "out") + "/")
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("SUCCEEDED")
    assert "'caf\\udce9': the name is not UTF-8 text" in res.stderr
    assert os.listdir(tmp_path / "out" / "tree") == ["ok.txt"]


jp_server_config = sweep_helpers.one_local_site_server


rest = sweep_helpers.rest_caller


@pytest.mark.parametrize("path,body,where", [
    ("jobs", '{"script": "echo hi", "site": "here", "name": "a\\ud800b"}', "name"),
    ("jobs", '{"spec": {"script": "echo \\udcff", "name": "x"}, "site": "here"}',
     "spec.script"),
    ("transfers", '{"src": "/tmp/a\\udce9", "dst": "here:/tmp/b"}', "src"),
    ("place", '{"script": "echo hi", "metadata": {"k": ["ok", "\\udfff"]}}',
     "metadata.k[1]"),
    ("jobs", '{"script": "echo hi", "site": "here", "metadata": {"\\ud800": 1}}', "(a key)"),
])
async def test_a_lone_surrogate_in_a_body_is_a_400_naming_where(rest, path, body, where):
    """JSON may escape half of a character (`\\ud800` without its pair); Python reads it as
    a string no UTF-8 store, log or command can carry: a job's name or a transfer's path
    holding one ended in a 500 once the store wrote it. Refused before anything runs, naming
    the field; nothing recorded."""
    code, reply = await rest("POST", path, body.encode())
    assert code == 400, (code, reply)
    assert where in reply["message"] and "lone surrogate" in reply["message"], reply
    assert (await rest("GET", "jobs"))[1]["total"] == 0
    assert (await rest("GET", "transfers"))[1]["transfers"] == []


async def test_an_escaped_pair_in_a_body_is_one_character_and_kept(rest):
    """(guard for the check) An emoji written as its escaped pair is one character: kept."""
    code, reply = await rest("POST", "place", b'{"script": "echo \\ud83d\\ude00"}')
    assert code != 400 or "surrogate" not in str(reply), reply


def test_a_script_file_whose_name_is_not_utf8_gets_a_default_name_that_is_text(tmp_path):
    """`diamond submit caf\\xe9.sh` named the job after the file, a name no store could
    write (its submit ended in a traceback after the checks). The bytes that are not UTF-8
    become "_" in the default name; the job's own name, when the script gives one, stays."""
    from diamond_jupyter.cli.common import spec_from_file
    from diamond_jupyter.model import check_spec

    plain = tmp_path / os.fsdecode(b"caf\xe9.sh")
    plain.write_text("#!/bin/bash\necho hi\n")
    spec = spec_from_file(str(plain))
    assert spec.name == "caf_"
    check_spec(spec)
    named = tmp_path / os.fsdecode(b"n\xe9.sh")
    named.write_text("#!/bin/bash\n#SBATCH -J mine\necho hi\n")
    assert spec_from_file(str(named)).name == "mine"


# -- 4. a careless hetjob translated to LSF ---------------------------------------------------

@pytest.mark.parametrize("script,n,terms", [
    ("#SBATCH -N 1\n#SBATCH hetjob\n#SBATCH -N 1\n", 2, "1*{span[hosts=1]} + 1*{span[hosts=1]}"),
    ("#SBATCH -N 1\n#SBATCH hetjob\n#SBATCH -N 2 -n 4\n", 5,
     "1*{span[hosts=1]} + 4*{span[ptile=2]}"),
])
def test_a_hetjob_without_task_counts_translates_to_lsf(script, n, terms):
    """A two-part Slurm hetjob that gives node counts only (`-N 1`, `hetjob`, `-N 1`) was
    refused by `diamond translate --to lsf` ("the lsf translation does not read back ...
    `#BSUB -n 0`"): the compound terms counted a slot per node, the job's `-n` only tasks.
    `-n` is the sum of the terms' slots now, and reads back."""
    from diamond_jupyter.federation import Federation

    out, _warnings, _spec = Federation.translate(f"#!/bin/bash\n{script}echo hi\n", "lsf")
    assert f"#BSUB -n {n}\n" in out and f'#BSUB -R "{terms}"' in out


# -- 5. the magics' numbers, which argparse takes as any int ----------------------------------

async def test_a_magics_line_count_or_listing_limit_out_of_range_is_one_reason(tmp_path):
    """`%diamond logs JOB --lines -5` showed nothing and said nothing; `%diamond jobs
    --limit -1` blamed an `order` never given, and `--limit 10**30` ended in an
    OverflowError from SQLite (a traceback in the notebook). The facade every face calls
    refuses each with one line naming the option and the range; in-range values work."""
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.model import Job
    from diamond_jupyter.store import Store

    fed = Federation(_sites(tmp_path), store=Store(tmp_path / "store.sqlite3"))
    fed.store.upsert_job(Job(id="alpha:7", site="alpha", native_id="7", name="x"))
    try:
        for limit in (-1, 10**30):
            with pytest.raises(BadInput, match=rf"^limit must be a whole number from 0 to "
                                               rf"{2**63 - 1}, not {limit}"):
                fed.jobs(limit=limit)
        with pytest.raises(BadInput, match="^offset must be a whole number"):
            fed.jobs(offset=-3)
        assert [j.id for j in fed.jobs(limit=5)] == ["alpha:7"] and fed.jobs(limit=0) == []
        for lines in (-5, 0, 10**30, True):
            with pytest.raises(BadInput, match="^lines must be a whole number from 1 to "
                                               "1000000000"):
                await fed.logs("alpha:7", lines=lines)
    finally:
        await fed.close()


# -- 6. a slurmrestd token file that is no file ---------------------------------------------

def _rest_transport(token_file: Path) -> Any:
    from diamond_jupyter.config import TransportConfig
    from diamond_jupyter.transports.slurmrestd import SlurmRestTransport

    cfg = TransportConfig(kind="slurmrestd", url="http://rest.example:6820",
                          token_file=str(token_file))
    return SlurmRestTransport(cfg, "campus")


async def test_a_token_file_that_is_a_fifo_or_endless_is_a_site_error_at_once(tmp_path):
    """The slurmrestd door read its `token_file` whole at each renewal: a FIFO (nobody
    writing) held every request of the site for ever, /dev/zero filled the memory. Now a
    file that is no regular file, or holds more than a token could (64 KiB), is a site
    error naming it, at once."""
    fifo = tmp_path / "jwt"
    os.mkfifo(fifo)
    for path, why in ((fifo, "not a regular file"), (Path("/dev/zero"), "not a regular file")):
        with pytest.raises(SiteError, match=f"campus: cannot read the token file {path}: {why}"):
            await asyncio.wait_for(_rest_transport(path)._fetch_token(), 10)
    big = tmp_path / "big"
    big.write_bytes(b"x" * (65 << 10))
    with pytest.raises(SiteError, match="holds more than 65536 bytes, more than a token"):
        await _rest_transport(big)._fetch_token()


async def test_a_token_file_that_is_not_utf8_is_a_site_error_not_a_crash(tmp_path):
    """A token file with a stray byte that is not UTF-8 (an editor's Latin-1 comment) ended
    in a UnicodeDecodeError out of every request; now its token is still found, or the
    file is said to hold none."""
    jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhIn0.c2ln"
    good = tmp_path / "jwt"
    good.write_bytes(b"# caf\xe9\nSLURM_JWT=" + jwt.encode() + b"\n")
    assert await _rest_transport(good)._fetch_token() == jwt
    bad = tmp_path / "bad"
    bad.write_bytes(b"\xff\xfe junk\n")
    with pytest.raises(SiteError, match="gave no token"):
        await _rest_transport(bad)._fetch_token()


# -- 7. a destination that is a FIFO, a socket or a device ----------------------------------

def _specials(where: Path) -> list[Path]:
    """A FIFO and a socket here, and a character device (a /dev/null of our own) when the
    tests run as root (they do in the project's container, where the fault bit hardest)."""
    import socket
    import stat

    os.mkfifo(where / "fifo")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(where / "sock"))
    sock.close()
    made = [where / "fifo", where / "sock"]
    if os.getuid() == 0:
        os.mknod(where / "null", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        made.append(where / "null")
    return made


def test_a_copy_never_replaces_a_fifo_a_socket_or_a_device_named_as_its_destination(tmp_path):
    """`diamond transfer notes.txt /dev/null` (or a FIFO another program reads) SUCCEEDED:
    the part file was renamed over the device, so /dev/null became a regular file holding
    the notes, for every program of the machine, when run as root (a notebook container's
    user). Refused now, naming the destination and what it is; it stays as it was. Known
    before the copy starts: exit 2, no transfer recorded (it was a FAILED one, exit 1)."""
    import stat

    src = tmp_path / "notes.txt"
    src.write_text("notes\n")
    for special in _specials(tmp_path):
        before = special.lstat()
        for args in ([str(src), str(special)], ["-r", str(tmp_path / "none"), str(special)]):
            if args[0] == "-r":
                (tmp_path / "none").mkdir(exist_ok=True)
            res = _cli(tmp_path, "transfer", *args)
            assert res.returncode == 2, res.stdout
            assert res.stderr.startswith(f"diamond: dst: local:{special} is a ")
            assert "would replace it" in res.stderr and len(res.stderr.splitlines()) == 1
            after = special.lstat()
            assert (stat.S_IFMT(after.st_mode), after.st_ino) == (
                stat.S_IFMT(before.st_mode), before.st_ino)
    from diamond_jupyter.store import Store

    assert Store(tmp_path / "store.sqlite3").list_transfers(limit=None) == []


@pytest.mark.parametrize("overwrite", [False, True])
def test_a_copy_into_a_directory_leaves_a_special_file_of_that_name_and_says_so(tmp_path,
                                                                                 overwrite):
    """Copied into a directory where a FIFO (or socket, or device) has the file's name, even
    with --overwrite: the entry stays, the copy says it was left, the rest arrives."""
    import stat

    into = tmp_path / "into"
    into.mkdir()
    specials = _specials(into)
    tree = tmp_path / "tree"
    tree.mkdir()
    for s in specials:
        (tree / s.name).write_text("data\n")
    (tree / "plain.txt").write_text("plain\n")
    res = _cli(tmp_path, "transfer", "-r", *(["--overwrite"] if overwrite else []),
               str(tree), str(into))  # the tree's files into `into` itself
    assert res.returncode == 0, res.stderr
    for s in specials:
        assert f"diamond: skipped {s.name}: a " in res.stderr and not stat.S_ISREG(
            s.lstat().st_mode)
    assert (into / "plain.txt").read_text() == "plain\n"


@pytest.mark.parametrize("overwrite", [False, True])
async def test_a_fetch_leaves_a_special_file_where_a_result_would_go(tmp_path, overwrite):
    """A fetch into a directory where a FIFO, a socket or a device has a result file's
    name renamed the fetched file over it with --overwrite (a FIFO another program reads
    became a file). It is left as it is and said, with --overwrite too (without it, it was
    already left: guard); the rest arrives."""
    import stat

    from test_fetch_safe import _job, _local_fed, _write

    fed = _local_fed(tmp_path)
    wd, dest = tmp_path / "site-home" / "run", tmp_path / "dest"
    dest.mkdir()
    specials = _specials(dest)
    _write(wd, {s.name: "result\n" for s in specials} | {"plain.txt": "plain\n"})
    job = _job(fed.store, wd)
    try:
        got = await asyncio.wait_for(fed.fetch(job, dest, overwrite=overwrite), 30)
    finally:
        await fed.close()
    assert (dest / "plain.txt").read_text() == "plain\n"
    for s in specials:
        assert not stat.S_ISREG(s.lstat().st_mode)
        assert any(line.startswith(f"{s.name}: a ") and "not replaced" in line
                   for line in got.skipped), got.skipped


async def test_a_fetch_into_a_file_a_fifo_or_a_device_is_refused_before_the_site_is_asked(
        tmp_path):
    """`diamond fetch JOB results.txt` (a file there already), or into /dev/null, ended in
    a FileExistsError: a traceback on the command line, a 500 over REST. Refused now, naming
    the destination (or its part that is no directory) and what it is; a new directory
    path is made as before."""
    from test_fetch_safe import _job, _local_fed, _write

    fed = _local_fed(tmp_path)
    wd = tmp_path / "site-home" / "run"
    _write(wd, {"a.txt": "a\n"})
    job = _job(fed.store, wd)
    (tmp_path / "results.txt").write_text("mine\n")
    os.mkfifo(tmp_path / "pipe")
    try:
        for dest, said in ((tmp_path / "results.txt", "is a file"),
                           (tmp_path / "pipe", "is a FIFO"),
                           (Path("/dev/null"), "is a character device"),
                           (tmp_path / "results.txt" / "sub",
                            f"(its part {tmp_path / 'results.txt'}) is a file")):
            with pytest.raises(BadInput, match=rf"^dest: {re.escape(str(dest))} "
                                               rf"(.* )?{re.escape(said)}, not a directory"):
                await fed.fetch(job, dest)
        got = await fed.fetch(job, tmp_path / "new" / "dir")
        assert [p.name for p in got.paths] == ["a.txt"]
    finally:
        await fed.close()
    assert (tmp_path / "results.txt").read_text() == "mine\n"


# -- 8. an event replay asked for many kinds -----------------------------------------------

async def test_an_event_replay_for_a_thousand_kinds_answers_and_prefixes_are_literal(rest):
    """`GET /events?kinds=` with a thousand kinds (a client listing every kind it knows,
    generated) was a 500: one `OR` per kind, past SQLite's 1,000-deep expression tree. Any
    number of kinds answers now; prefixes past 200 are a 400 naming the bound; a `%` or `_`
    in a prefix is text, not a LIKE wildcard (`%.*` replayed every event)."""
    kinds = ",".join([f"made.up{i}" for i in range(2000)] + ["job.state"])
    code, reply = await rest("GET", f"events?kinds={kinds}")
    assert code == 200 and reply["events"] == [], reply
    code, reply = await rest("GET", "events?kinds=" + ",".join(f"p{i}.*" for i in range(201)))
    assert code == 400 and "kinds: at most 200 prefixes" in reply["message"], reply


def test_event_kind_prefixes_match_as_written(tmp_path):
    from diamond_jupyter.model import Event
    from diamond_jupyter.store import Store

    store = Store(tmp_path / "s.sqlite")
    for kind in ("job.state", "job.cancel-requested", "transfer.state", "JOB.odd", "jobXstate"):
        store.append_event(Event(kind=kind, data={}))
    kinds = lambda *ks: [e.kind for e in store.events_since(0, kinds=list(ks))]  # noqa: E731
    assert kinds("job.*") == ["job.state", "job.cancel-requested"]
    assert kinds("%.*") == [] and kinds("job_.*") == [] and kinds("jo_.*") == []
    assert kinds("transfer.state", "job.*", "job.state") == [
        "job.state", "job.cancel-requested", "transfer.state"]
    assert kinds(*[f"k{i}" for i in range(20000)], "jobXstate") == ["jobXstate"]


# -- 9. a sites file's preamble holding half a character ------------------------------------

def test_a_preamble_holding_a_lone_surrogate_is_refused_at_load(tmp_path):
    """YAML writes any character as `\\ud800`, half of one included: a preamble holding it
    loaded, and every submit to the site then failed when its script was encoded (a
    traceback, after placement). Refused when the sites file loads, naming the site and
    the field (YAML joins no escaped pair: `\\U0001F600` is the escape of a whole emoji,
    which loads)."""
    from diamond_jupyter.config import load_config

    p = tmp_path / "sites.yaml"
    p.write_text('sites:\n  - name: a\n    transport: {kind: local}\n'
                 '    preamble: "module load x  # \\ud800"\n')
    p.chmod(0o600)
    with pytest.raises(BadInput, match=r"site 'a' \(sites\[0\]\): preamble: holds '\\ud800', "
                                       r"half of a character"):
        load_config(p)
    p.write_text('sites:\n  - name: a\n    transport: {kind: local}\n'
                 '    preamble: "echo \\U0001F600"\n')
    assert load_config(p).sites[0].preamble == "echo \U0001f600"
