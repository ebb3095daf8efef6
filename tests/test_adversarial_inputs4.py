"""The fourth sweep of hostile inputs, from an attacker's side of each trust boundary: the
REST routes of a real Jupyter server (a local site, no test bed), transfers and the copies
they make of directories a job wrote, results fetched back, the kernel's and the agent's
text outputs, the store's redaction of secrets, approvals, the MCP face, the sites file and
workflow files.

The standard is the first sweep's (tests/test_adversarial_inputs.py): bad input is refused
with one line naming what and where (a 4xx, exit 2, a BadInput), never a 500, a traceback or
a hang; what a job wrote is data, copied only as regular files inside the place it was asked
from; nothing secret reaches the store."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import paramiko
import pytest
import sweep_helpers
import yaml
from one_site_engine import local_home_federation
from sweep_helpers import assert_script_secret_not_stored, store_files

from diamond_jupyter.model import BadInput, JobSpec

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")

ESC = "\x1b]52;c;cm0gLXJmIH4K\x07"  # OSC 52: writes the clipboard
SHOWN_NEVER = ("\x1b]", "\x07", "\x1b[2K", "\x9b")
SECRET = b"-----BEGIN OPENSSH PRIVATE KEY-----\nnot for you\n"


# -- a real server with one local site; the site's home is a private directory -------------------

@pytest.fixture
def home(tmp_path) -> Path:
    """The local site's login directory (its transport works in $HOME)."""
    h = tmp_path / "home"
    h.mkdir(exist_ok=True)
    return h


@pytest.fixture
def outside(tmp_path) -> Path:
    """A private directory outside both the server's root and the site's copies."""
    d = tmp_path / "outside"
    d.mkdir(exist_ok=True)
    (d / "id_rsa").write_bytes(SECRET)
    return d


@pytest.fixture
def jp_server_config(tmp_path, home, data_dir, monkeypatch):
    from server_conftest import diamond_config

    monkeypatch.setenv("HOME", str(home))
    sites = tmp_path / "sites.yaml"
    sites.write_text(yaml.safe_dump({"sites": [{
        "name": "here", "transport": {"kind": "local"},
        # secrets an admin put in the sites file: the site uses them, no face shows them
        "preamble": f"export SITE_TOKEN={SITE_SECRET}", "env": {"DB_PASS": SITE_SECRET}}]}))
    return diamond_config(str(sites), str(tmp_path / "store.sqlite3"))


SITE_SECRET = "Rk4Tn8Wq2Zm6Yc"


rest = sweep_helpers.rest_caller


@pytest.fixture
def raw(rest):
    """`await raw(METHOD, "path?q", body)` with the token, a body not in bytes sent as JSON
    (a POST without one as `{}`): (code, parsed JSON reply)."""

    async def call(method: str, path: str, body: Any = None) -> tuple[int, Any]:
        data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
        if method == "POST" and data is None:
            data = b"{}"
        return await rest(method, path, data)

    return call


def _bad(code: int, reply: Any, *want: str) -> str:
    assert code == 400, (code, reply)
    assert reply["reason"] == "bad-input", reply
    msg = reply["message"]
    assert "\n" not in msg and "\x00" not in msg, msg
    for w in want:
        assert w in msg, (w, msg)
    return msg


# -- 1. REST: transfer locations ----------------------------------------------------------------

@pytest.mark.parametrize("src,dst,where,char", [
    ("data/a\x00b", "here:x", "src", "NUL"),
    ("here:a\x00b", "x", "src", "NUL"),
    ("here:x", "out/a\x00b", "dst", "NUL"),
    ("here:a\nb", "x", "src", "newline"),
    ("here:x", "here:y\x1b[2K", "dst", "escape, U+001B"),
    ("here:x\u2028y", "z", "src", "LINE SEPARATOR"),
])
async def test_a_control_character_in_a_transfer_location_is_a_400_naming_it(
        raw, src, dst, where, char):
    """A NUL in a transfer's path was an 'unhandled error (see server log)', 500; a newline
    or an escape was taken as part of a file name and the copy was tried."""
    code, reply = await raw("POST", "transfers", {"src": src, "dst": dst, "wait": True})
    _bad(code, reply, f"{where} contains a control character ({char}")
    code, listed = await raw("GET", "transfers")
    assert code == 200 and listed["transfers"] == []  # nothing recorded


async def test_a_link_inside_a_directory_copied_from_the_root_is_not_followed(
        raw, jp_root_dir, home, outside):
    """The root's top-level links were refused, but a recursive copy followed every link
    below it: `data/k -> ~/.ssh/id_rsa` sent the key to the site."""
    data = jp_root_dir / "data"
    (data / "sub").mkdir(parents=True)
    (data / "real.txt").write_bytes(b"mine\n")
    (data / "sub" / "deep.txt").write_bytes(b"deep\n")
    (data / "k").symlink_to(outside / "id_rsa")
    (data / "sub" / "away").symlink_to(outside)
    code, rec = await raw("POST", "transfers", {"src": "data", "dst": "here:copied",
                                                "recursive": True, "wait": True})
    assert code == 200 and rec["state"] == "SUCCEEDED", rec
    got = sorted(str(p.relative_to(home / "copied")) for p in (home / "copied").rglob("*")
                 if p.is_file())
    assert got == ["real.txt", "sub/deep.txt"]
    assert not any(SECRET in p.read_bytes() for p in home.rglob("*") if p.is_file())
    skipped = rec["data"]["skipped"]
    assert "k: a symbolic link" in skipped and "sub/away: a symbolic link" in skipped


def _deep(n: int) -> dict:
    return json.loads('{"a":' * n + "1" + "}" * n)


@pytest.mark.parametrize("path,body,where", [
    ("jobs", {"script": "echo hi", "site": "here", "origin": _deep(500)}, "origin"),
    ("jobs", {"spec": {"script": "echo hi", "metadata": _deep(500)}, "site": "here"},
     "metadata"),
    ("workflows", {"workflow": {"name": "w", "steps": [{"name": "a", "script": "echo"}]},
                   "origin": _deep(500)}, "origin"),
    ("tasks", {"prompt": "hello", "origin": _deep(500)}, "origin"),
    ("place", {"spec": {"script": "echo hi", "metadata": {"x": [_deep(40)]}}}, "metadata"),
])
async def test_deeply_nested_free_form_json_is_a_400_naming_the_field(raw, path, body, where):
    """An `origin` or a spec's `metadata` nested 500 levels (a 10 kB body) was an
    'unhandled error', 500: the store could not serialise it (pydantic's depth limit)."""
    code, reply = await raw("POST", path, body)
    _bad(code, reply, f"{where} nests lists or mappings more than 32 levels deep")
    code, listed = await raw("GET", "jobs")
    assert code == 200 and listed["total"] == 0
    code, ok = await raw("POST", "place", {"spec": {"script": "echo", "metadata": _deep(30)}})
    assert code == 200, ok  # a reasonable depth is fine


async def test_an_error_quoting_a_password_is_logged_without_it(raw, caplog):
    """A transfer from `https://me:PASSWORD@host/x` is refused quoting the location: the
    server's log (tornado's warning line) had the password in clear."""
    caplog.set_level(logging.DEBUG)
    code, reply = await raw("POST", "transfers", {
        "src": "https://me:Vq7Lm2Xp9Kz@data.example.org/x", "dst": "x", "wait": True})
    _bad(code, reply, "unknown site 'https'", "Vq7Lm2Xp9Kz")  # the sender sees what it sent
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "unknown site 'https'" in logged and "https://me:***@data.example.org" in logged
    assert "Vq7Lm2Xp9Kz" not in logged


async def test_the_sites_configuration_is_shown_without_its_secrets(raw):
    """GET sites showed a preamble's `export SITE_TOKEN=...` as it was (env values under
    secret-looking names were masked, the preamble was not)."""
    for path in ("sites", "sites/here"):
        code, reply = await raw("GET", path)
        assert code == 200, reply
        shown = json.dumps(reply)
        assert SITE_SECRET not in shown and "export SITE_TOKEN=***" in shown, shown


async def test_a_name_filter_is_literal_text_not_a_pattern(raw, jp_serverapp):
    """`%` and `_` in a name filter match themselves (SQL LIKE reads them as wildcards)."""
    await raw("GET", "jobs")
    store = jp_serverapp.web_app.settings["diamond_app"].federation.store
    for token, name in (("aaaaaaaaaaa1", "a_b"), ("aaaaaaaaaaa2", "axb"),
                        ("aaaaaaaaaaa3", "100%")):
        store.record_intent("here", token, JobSpec(script="true\n", name=name))
    for query, names in (("a_b", ["a_b"]), ("%25", ["100%"]), ("_", ["a_b"])):
        code, reply = await raw("GET", f"jobs?name={query}")
        assert code == 200 and [j["name"] for j in reply["jobs"]] == names, (query, reply)


# -- 2. recursive copies of what a job wrote ----------------------------------------------------

def _bounded(coro: Any, fifos: tuple[Path, ...] = (), timeout: float = 20.0) -> Any:
    """Run `coro` for at most `timeout` s (TimeoutError after), then let go of any thread
    left blocked opening one of `fifos` (a writer opens it once), so a copy that hung fails
    the test instead of hanging the session."""
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(asyncio.wait_for(coro, timeout))
    finally:
        for f in fifos:
            try:
                os.close(os.open(f, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:  # no reader waiting on it: nothing to let go
                pass
        loop.close()


def _copy(src: Path, dst: Path, fifos: tuple[Path, ...] = ()):
    from diamond_jupyter.transfer.sftp import sftp_copy

    return _bounded(sftp_copy(None, str(src), None, str(dst), recursive=True,
                              progress=lambda d, t: None, cancel=threading.Event()), fifos)


def test_a_fifo_in_a_job_directory_neither_hangs_nor_is_copied(tmp_path):
    """`mkfifo out/pipe` in a job's output made a recursive stage-out block for ever in
    the open of the pipe (a thread and the transfer stuck)."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "result.txt").write_text("r")
    os.mkfifo(out / "pipe")
    res = _copy(out, tmp_path / "back", fifos=(out / "pipe",))
    assert [f["path"] for f in res.files] == ["result.txt"]
    assert res.skipped == ["pipe: not a regular file"]
    assert sorted(p.name for p in (tmp_path / "back").iterdir()) == ["result.txt"]


def test_a_link_to_a_device_is_not_copied(tmp_path):
    """A link to a device was read through (to /dev/zero: until the disk filled, the reader
    going to EOF); here /dev/null, which ends at once."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "dev").symlink_to("/dev/null")
    (out / "ok").write_text("ok")
    res = _copy(out, tmp_path / "back")
    assert [f["path"] for f in res.files] == ["ok"] and res.skipped == ["dev: a symbolic link"]


def test_a_single_source_that_is_a_device_is_refused_not_read(tmp_path):
    """A stage-out source the job replaced by a link to a device was read as a file."""
    from diamond_jupyter.transfer.sftp import sftp_copy

    (tmp_path / "out.bin").symlink_to("/dev/null")
    with pytest.raises(OSError, match="not a regular file"):
        _bounded(sftp_copy(None, str(tmp_path / "out.bin"), None, str(tmp_path / "copy"),
                           recursive=False, progress=lambda d, t: None,
                           cancel=threading.Event()))
    assert not (tmp_path / "copy").exists()


def test_a_local_fetch_refuses_a_file_swapped_for_a_fifo(tmp_path):
    """A file listed as regular and replaced by a FIFO before the copy hung the fetch."""
    from diamond_jupyter.model import SiteError
    from diamond_jupyter.transports.local import LocalTransport

    t = LocalTransport("here", workdir=str(tmp_path))
    os.mkfifo(tmp_path / "result.txt")
    with pytest.raises(SiteError, match="cannot fetch result.txt: not a regular file"):
        _bounded(t.get_file("result.txt", str(tmp_path / "got")), (tmp_path / "result.txt",))
    assert list(tmp_path.iterdir()) == [tmp_path / "result.txt"]


class _Listing:
    """What a hostile (or broken) SFTP server answers to directory listings."""

    def __init__(self, tree: dict[str, list[tuple[str, int]]]) -> None:
        self.tree = tree

    def listdir_attr(self, path: str) -> list[paramiko.SFTPAttributes]:
        out = []
        for name, mode in self.tree.get(path.rstrip("/"), []):
            a = paramiko.SFTPAttributes()
            a.filename, a.st_mode, a.st_size = name, mode, 1
            out.append(a)
        return out


def _sftp_side(tree: dict[str, list[tuple[str, int]]]):
    from diamond_jupyter.transfer.sftp import SftpSide

    class T:
        name = "alpha"

    return SftpSide(T(), _Listing(tree), "/home/me")


REG, DIR, LNK = stat.S_IFREG | 0o644, stat.S_IFDIR | 0o755, stat.S_IFLNK | 0o777


def test_an_sftp_listing_with_hostile_names_never_leaves_the_destination():
    """A name `../../.bashrc` from the site's listing was joined to the destination as it
    was: the copy wrote outside the directory asked for."""
    side = _sftp_side({"/r": [("ok.txt", REG), ("..", DIR), ("../../.bashrc", REG),
                              ("a/b", REG), ("", REG), (".", DIR), ("sub", DIR)],
                       "/r/sub": [("x\x00y", REG), ("deep.txt", REG)]})
    found = side.walk("/r")
    assert found.files == ["ok.txt", "sub/deep.txt"]
    assert len(found.skipped) == 6 and all("not a plain file name" in s for s in found.skipped)


def test_an_sftp_listing_skips_links_instead_of_reading_through_them():
    side = _sftp_side({"/r": [("key", LNK), ("dirlink", LNK), ("real", REG)]})
    found = side.walk("/r")
    assert found.files == ["real"]
    assert found.skipped == ["key: a symbolic link", "dirlink: a symbolic link"]


def test_parse_location_names_the_argument_and_keeps_plain_odd_names():
    from diamond_jupyter.transfer import parse_location

    sites = {"alpha": 1}
    for text in ("alpha:a\x00b", "a\rb", "a\x7fb", "alpha:\x85x"):
        with pytest.raises(BadInput, match=r"^dst contains a control character"):
            parse_location(text, sites, what="dst")
    for text in ("alpha:a b", "alpha:$(id)", "-rf", "alpha:ü/é", "alpha:a\tb"):
        assert str(parse_location(text, sites)) == text  # inert: a name, never a command


# -- 3. fetching results ------------------------------------------------------------------------

def _job_in(fed, wd: Path) -> str:
    fed.store.record_intent("here", "abc123abc123",
                            JobSpec(script="true\n", working_directory=str(wd)))
    return fed.store.bind_native_id("abc123abc123", "41").id


@pytest.mark.parametrize("dest", ["res\x00ults", "res\nults", "res\x1b[1Aults"])
async def test_a_control_character_in_a_fetch_destination_is_refused(tmp_path, dest):
    """`fed.fetch(job, "a\\x00b")` raised ValueError (embedded null byte) from pathlib:
    the CLI printed a traceback."""
    fed = local_home_federation(tmp_path)
    wd = tmp_path / "home" / "run"
    wd.mkdir()
    (wd / "r.txt").write_text("r")
    job = _job_in(fed, wd)
    try:
        with pytest.raises(BadInput, match=r"^dest contains a control character"):
            await fed.fetch(job, dest)
    finally:
        await fed.close()


async def test_the_agents_fetch_tool_refuses_the_same(tmp_path):
    from diamond_jupyter.skills import SkillContext, run_skill

    fed = local_home_federation(tmp_path)
    try:
        with pytest.raises(BadInput, match=r"dest contains a control character \(NUL"):
            await run_skill(SkillContext(fed), "fetch_results",
                            {"job_id": "here:41", "dest": "a\x00b"})
    finally:
        await fed.close()


async def test_a_fetched_directory_with_a_link_out_of_it_copies_only_its_files(tmp_path):
    fed = local_home_federation(tmp_path)
    wd = tmp_path / "home" / "run"
    (wd / "sub").mkdir(parents=True)
    (wd / "r.txt").write_text("r")
    secret = tmp_path / "elsewhere" / "id_rsa"
    secret.parent.mkdir()
    secret.write_bytes(SECRET)
    (wd / "sub" / "key").symlink_to(secret)
    job = _job_in(fed, wd)
    try:
        paths = (await fed.fetch(job, tmp_path / "got")).paths
    finally:
        await fed.close()
    assert [p.name for p in paths] == ["r.txt"]
    assert not any(SECRET in p.read_bytes() for p in (tmp_path / "got").rglob("*"))


async def test_an_approved_transfer_whose_link_was_retargeted_is_asked_again(tmp_path):
    """What the user approved is what runs: a link in the root re-pointed between the plan
    and the approval changes the source, and the plan is asked for again."""
    from diamond_jupyter.federation_plan import PlanChanged

    fed = local_home_federation(tmp_path)
    root = tmp_path / "root"
    for d in ("d1", "d2"):
        (root / d).mkdir(parents=True)
        (root / d / "f").write_text(d)
    (root / "data").symlink_to(root / "d1")
    fed.server_root = root
    try:
        plan = await fed.plan_transfer("data/f", "here:f")
        assert plan["data_movements"][0]["source"] == str(root / "d1" / "f")
        (root / "data").unlink()
        (root / "data").symlink_to(root / "d2")
        with pytest.raises(PlanChanged, match="would differ from the approved"):
            await fed.transfer_approved("data/f", "here:f", plan)
    finally:
        await fed.close()
    assert not (tmp_path / "home" / "f").exists()


async def test_a_nul_in_a_fetch_destination_is_a_400(raw, jp_serverapp):
    code, _ = await raw("GET", "jobs")  # the engine is started
    fed = jp_serverapp.web_app.settings["diamond_app"].federation
    fed.store.record_intent("here", "abc123abc123", JobSpec(script="true\n", name="j"))
    job = fed.store.bind_native_id("abc123abc123", "41")
    code, reply = await raw("POST", f"jobs/{job.id}/fetch", {"dest": "res\x00ults"})
    _bad(code, reply, "dest contains a control character (NUL")


# -- 4. what the kernel and the agent's card print ----------------------------------------------

def test_magic_fetch_prints_the_jobs_file_names_visibly(capsys):
    """`%diamond fetch` printed the paths of a job's files as they were: a file named with
    an escape sequence wrote the terminal's clipboard in a terminal IPython."""
    from diamond_jupyter.kernel import magics

    class Engine:
        def call(self, coro):
            return asyncio.run(coro)

        async def fetch(self, job, dest, files=None, overwrite=False):
            return {"dest": "/w/here-41", "skipped": [f"{ESC}.bashrc: a hidden name"],
                    "paths": [f"/w/here-41/{ESC}evil.txt", "/w/here-41/\x1b[2K\x1b[1Aok.txt"]}

    m = magics.DiamondMagics.__new__(magics.DiamondMagics)
    m._engine = Engine()
    paths = m.do_fetch(__import__("argparse").Namespace(job="here:41", dest=None, file=None,
                                                        overwrite=False), None)
    out = capsys.readouterr().out
    assert not any(s in out for s in SHOWN_NEVER), repr(out)
    assert "evil.txt" in out and "ok.txt" in out and "skipped" in out and ".bashrc" in out
    assert str(paths[0]).endswith(f"{ESC}evil.txt")  # the value itself is kept


def test_the_agent_task_card_shows_answers_and_tool_inputs_visibly():
    """The task card's text (a terminal IPython prints it) carried the model's answer and its
    tool inputs as they were; a job's output, echoed by the model, drove the terminal."""
    from diamond_jupyter.agent.notebook import TaskHandle

    task = {"id": "t1", "state": "done", "answer": f"done {ESC}\x1b[2K<script>x</script>",
            "error": "e\x9b2J", "steps": [
                {"kind": "tool_call", "data": {"tool": "logs", "input": {"job_id": ESC}}},
                {"kind": "model", "data": {"text": "\x1b]0;title\x07thinking"}}]}
    h = TaskHandle(None, task)
    text = repr(h)
    assert not any(s in text for s in SHOWN_NEVER + ("\x9b",)), repr(text)
    assert "done" in text and "thinking" in text
    assert "<script>" not in h._repr_html_() and "\x1b]" not in h._repr_html_()
    assert h.answer == task["answer"]  # the data is kept as it was


# -- 5. secrets in scripts never reach the store --------------------------------------------------

SECRETS = [
    ('curl -H "Authorization: Bearer Zq81mXo2Lr6vTt4w" https://api.example.org\n',
     "Zq81mXo2Lr6vTt4w"),
    ("curl -H 'Authorization: Basic dXNlcjpodW50ZXIy' https://x.example.org\n",
     "dXNlcjpodW50ZXIy"),
    ("wget --header='Authorization: token Pq4nX8sLw2Zr7kYv' https://x.example.org\n",
     "Pq4nX8sLw2Zr7kYv"),
    ("curl -H 'X-Api-Key: Mv7cR2pQ9zLk4tWs' https://x.example.org\n", "Mv7cR2pQ9zLk4tWs"),
    ("curl -H 'PRIVATE-TOKEN: Wn3hG8jDq5Xv1bRc' https://gitlab.example.org\n",
     "Wn3hG8jDq5Xv1bRc"),
    ("echo '{\"password\": \"Hn7qWz2pKd\"}' > cfg.json\n", "Hn7qWz2pKd"),
    ("cat > cfg.yaml <<EOF\ndb:\n  password: Tb6vYs3mQe\nEOF\n", "Tb6vYs3mQe"),
    ("python -c \"api_key = 'Jf5kLp8sWq'\"\n", "Jf5kLp8sWq"),
]


@pytest.mark.parametrize("script,secret", SECRETS)
def test_secrets_written_as_headers_json_or_yaml_are_not_stored(tmp_path, script, secret):
    """An opaque bearer token, Basic credentials, an API-key header, a password in JSON or
    YAML, `api_key = '...'`: none was recognised, each reached the store's files."""
    assert_script_secret_not_stored(tmp_path, script, secret)


def test_the_secret_itself_goes_but_the_text_around_it_stays():
    from diamond_jupyter.store import redact

    assert redact('curl -H "Authorization: Bearer Zq81mXo2Lr6vTt4w" https://x') == \
        'curl -H "Authorization: Bearer ***" https://x'
    assert redact('{"password": "x1", "user": "me"}') == '{"password": ***, "user": "me"}'
    text = ("echo step: 3 of 5; tokens: 12\nssh host:2222 -p 22\nratio=1:2 at 01:02:03\n"
            "curl https://git.example.org/r.git\nexport PASSES=3 max_tokens=100\n")
    assert redact(text) == text  # ordinary names, ports, times and numbers are kept


@pytest.mark.parametrize("text", ["a-" * 50000, "password" + " " * 100000,
                                  "password " * 20000, "x:" * 100000, "Authorization: " * 20000,
                                  "'" * 100000, "token= " * 30000])
def test_the_redactor_stays_linear_on_the_new_shapes(text):
    from diamond_jupyter.store import redact

    t0 = time.thread_time()
    redact(text)
    assert time.thread_time() - t0 < 0.5


def test_a_tasks_secret_inputs_are_sealed_not_stored_and_come_back_whole(tmp_path):
    """An agent task's tool-call inputs were stored redacted and read back redacted: the
    call a person approved then ran with `***` in place of the secret."""
    from diamond_jupyter.store import Store

    store = Store(tmp_path / "s.sqlite3")
    call = {"id": "c1", "name": "submit",
            "input": {"script": "export WANDB_API_KEY=Zq81mXo2Lr6vTt4w\npython train.py\n"}}
    rec = store.create_task("train it", data={"turn": {"calls": [call]}, "approval": "ask"})
    shown = store.get_task(rec.id, steps=False).data["turn"]["calls"][0]["input"]["script"]
    assert "Zq81mXo2Lr6vTt4w" not in shown and "WANDB_API_KEY=***" in shown
    store.update_task(rec.id, state="awaiting_approval", data={"pending": {"tool": "submit"}})
    store.claim_task(rec.id, "engine-1", states=("awaiting_approval",), to_state="running",
                     data={"decision": "approved"})
    store.release_task(rec.id, "engine-1")
    whole = store.task_data_to_run(rec.id)
    assert whole["turn"]["calls"][0] == call and whole["decision"] == "approved"
    assert whole["pending"] == {"tool": "submit"} and whole["approval"] == "ask"
    store.close()
    raw = store_files(tmp_path)
    assert b"Zq81mXo2Lr6vTt4w" not in raw


async def test_an_approved_call_whose_input_holds_a_secret_runs_as_approved(tmp_path, fake):
    """The approved transfer to `out/token=...` was re-planned from the redacted input
    (`out/token=***`): its plan differed, so it was asked again, and again, for ever."""
    from agents import agent
    from fake_llm import text, tool_use

    from diamond_jupyter.config import FederationConfig
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.store import Store

    src, dst = tmp_path / "in.txt", tmp_path / "out" / "token=Zq81mXo2Lr6vTt4w.txt"
    src.write_text("data\n")
    fake.script([tool_use("transfer", {"src": str(src), "dst": str(dst)})],
                lambda body: [text("copied")])
    fed = await Federation(FederationConfig(sites=[]),
                           store=Store(tmp_path / "s.sqlite")).start()
    try:
        task = await agent(fed).ask("copy it", approval="ask")
        held = await agent(fed).wait(task["id"], settled=True, timeout=60)
        assert held["state"] == "awaiting_approval", held
        assert not dst.exists()
        await agent(fed).approve(task["id"])
        done = await agent(fed).wait(task["id"], timeout=60)
        assert done["state"] == "done" and done["answer"] == "copied", done
        assert dst.read_text() == "data\n" and fake.calls == 2
    finally:
        await agent(fed).close()
        await fed.close()


# -- 6. the other faces: MCP, the command line --------------------------------------------------

async def test_the_mcp_transfer_tool_refuses_a_control_character_with_a_tool_error(tmp_path):
    from mcp.server.mcpserver.exceptions import ToolError

    from diamond_jupyter.mcp_server import _Engine, _tool
    from diamond_jupyter.skills import SKILLS

    sites = tmp_path / "sites.yaml"
    sites.write_text(yaml.safe_dump({"sites": [{"name": "here", "transport": {"kind": "local"}}],
                                     "store": str(tmp_path / "store.sqlite3")}))
    engine = _Engine(str(sites), "dry-run")
    try:
        tool = _tool(SKILLS["transfer"], engine)
        with pytest.raises(ToolError, match=r"src contains a control character \(NUL"):
            await tool(src="here:a\x00b", dst="x")
    finally:
        await engine.close()


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    sites = tmp_path / "sites.yaml"
    if not sites.exists():
        sites.write_text("sites:\n  - name: alpha\n    scheduler: slurm\n"
                         "    transport: {kind: local}\n"
                         f"store: {tmp_path / 'store.sqlite3'}\n")
    (tmp_path / "h").mkdir(exist_ok=True)
    env = {**os.environ, "DIAMOND_DATA_DIR": str(tmp_path / "data"),
           "HOME": str(tmp_path / "h"), "DIAMOND_CONFIG": str(sites)}
    return subprocess.run([sys.executable, "-m", "diamond_jupyter.cli", *args],
                          capture_output=True, text=True, env=env, timeout=120,
                          cwd=tmp_path)


def test_diamond_transfer_with_a_newline_exits_2_naming_the_argument(tmp_path):
    res = _cli(tmp_path, "transfer", "alpha:a\nb", "x", "--json")
    assert res.returncode == 2, (res.stdout, res.stderr)
    assert json.loads(res.stdout)["message"].startswith("src contains a control character")
    assert len(res.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "x").exists()


# -- 7. job names the scheduler reads otherwise ---------------------------------------------------

@pytest.mark.parametrize("name", ["run[1-1000]", "a[1-5]%2", "x]", "[0]"])
def test_an_lsf_job_name_never_becomes_a_job_array(name):
    """`#SBATCH -J run[1-1000]` translated to LSF became `#BSUB -J run[1-1000]`: bsub made
    it a job array of 1000 jobs, without a word."""
    from diamond_jupyter.dialects import get_script_dialect
    from diamond_jupyter.federation import Federation

    lsf = get_script_dialect("lsf")
    text, warnings, _ = Federation.translate(f"#!/bin/bash\n#SBATCH -J {name}\necho\n", "lsf")
    back = lsf.parse_script(text)
    assert back.array is None and "[" not in (back.name or "") and back.name
    assert any(f"job name {name!r}" in w and "job array" in w for w in warnings), warnings
    spec = JobSpec(script="true\n", name="keep", array={"expression": "1-3"})
    assert lsf.parse_script(lsf.render_script(spec).script).array.expression == "1-3"


@pytest.mark.parametrize("scheduler,name,asked", [
    ("sge", "-x", "j-x.dmd-abc123abc123"),
    ("sge", "2024-run", "j2024-run.dmd-abc123abc123"),
    ("pbs", "-x", "j-x.dmd-abc123abc123"),
    ("pbs", "3d-sim", "j3d-sim.dmd-abc123abc123"),  # PBS: the first character a letter
    ("slurm", "a,b", None),  # no --name list: every job, told apart by the token
])
async def test_a_lost_submit_is_looked_up_by_the_name_the_scheduler_holds(
        scheduler, name, asked):
    """After a lost submit answer, the job was looked up by the name as given: Grid Engine
    and PBS hold `-x` as `j-x` (a job never found: closed as never submitted while it ran),
    and `-x` or a Slurm name with a comma was refused, retried as 'unreachable' for ever."""
    from agents import SilentTransport

    from diamond_jupyter.config import SiteConfig, TransportConfig
    from diamond_jupyter.sites import Site

    t = SilentTransport("a")
    site = Site(SiteConfig(name="a", scheduler=scheduler,
                           transport=TransportConfig(kind="local")), transport=t)
    assert await site.find_by_token(name, "abc123abc123") == []
    argv = " ".join(t.argvs[-1])
    if asked is None:
        assert "--name" not in argv and "squeue" in argv
    else:
        assert asked in t.argvs[-1] or f"-N {asked}" in argv, t.argvs
    rendered = site.render(site.scheduler_spec(JobSpec(script="true\n", name=name),
                                               "abc123abc123")).script
    if asked is not None:
        assert asked in rendered  # what is asked for is what the script named


# -- 8. the sites file and workflow files -------------------------------------------------------

@pytest.mark.parametrize("entry,where", [
    ({"commands": {"sbatch": "--wrap=id"}}, "commands.sbatch"),
    ({"commands": {"sbatch": "/bin/sbatch; id"}}, "commands.sbatch"),
    ({"env": {"A;id": "1"}}, "env"),
    ({"workdir": "$(id)/x"}, "workdir"),
    ({"workdir": "~root/x"}, "workdir"),
    ({"default_partition": "-p"}, "default_partition"),
    ({"transport": {"kind": "ssh", "host": "-oProxyCommand=id"}}, "host: '-oProxyCommand=id'"),
])
def test_a_sites_file_cannot_smuggle_options_or_commands(tmp_path, entry, where):
    from diamond_jupyter.config import load_config

    site = {"name": "a", "scheduler": "slurm", "transport": {"kind": "local"}} | entry
    p = tmp_path / "sites.yaml"
    p.write_text(yaml.safe_dump({"sites": [site]}))
    with pytest.raises(BadInput) as e:
        load_config(p)
    assert where in str(e.value) and "\n" not in str(e.value).strip(), str(e.value)


@pytest.mark.parametrize("data,want", [
    ({"name": "../../x"}, "name: '../../x' is not a valid name"),
    ({"name": "w\n"}, "name: 'w\\n' is not a valid name"),
    ({"steps": [{"name": "\u0430", "script": "x"}]}, "is not a valid name"),  # Cyrillic a
    ({"steps": [{"name": "a", "script": "x"}, {"name": "b", "script": "x", "needs": ["a"],
                 "inputs": [{"from": "a", "path": "o", "as": "../../.bashrc"}]}]}, "no '..'"),
    ({"steps": [{"name": "a", "script": "x"}, {"name": "b", "script": "x", "needs": ["a"],
                 "inputs": [{"from": "a", "path": "o", "as": "-delete"}]}]}, "no leading /"),
])
def test_workflow_names_and_aliases_stay_names(data, want):
    from diamond_jupyter.workflow.model import parse_workflow

    wf = {"name": "w", "steps": [{"name": "a", "script": "#!/bin/bash\necho\n"}]} | data
    with pytest.raises(BadInput) as e:
        parse_workflow(wf, sites=["alpha"])
    assert want in str(e.value), str(e.value)
