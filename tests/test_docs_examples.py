"""Every example in README.md, docs/*.md and benchmarks/README.md works as written.

The examples are read from the files themselves, so a later edit of the docs is checked
too: each `diamond ...` line of a code block parses with the CLI's own parser, each inline
`diamond ...` / `%diamond ...` names only options its command has, each YAML block loads
with the sites-file or workflow loader, and each `python -m benchmarks.X` names a module
that takes the options shown. No test bed is used.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from diamond_jupyter.cli.main import build_parser
from diamond_jupyter.config import FederationConfig, SiteConfig
from diamond_jupyter.kernel.magics import _parser as magic_parser
from diamond_jupyter.workflow.model import load_workflow

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
        ROOT / "benchmarks" / "README.md"]

# Inline examples that show a mistake on purpose (what the error then says).
MEANT_WRONG = {"%diamond submit --tme 5"}


@dataclass(frozen=True)
class Example:
    doc: str
    line: int
    text: str

    def __str__(self) -> str:
        return f"{self.doc}:{self.line}: {self.text}"


@dataclass(frozen=True)
class Block:
    doc: str
    line: int  # of the opening fence
    lang: str
    lines: tuple[str, ...]


def _blocks(path: Path) -> Iterator[Block]:
    """Fenced blocks (their language) and indented ones (language "indented")."""
    opened: tuple[int, str] | None = None
    body: list[str] = []
    indented: list[str] = []
    previous = ""
    for number, line in enumerate(path.read_text().splitlines(), 1):
        fence = line.strip()
        if opened is None and (line.startswith("    ") and (indented or not previous.strip())):
            indented.append(line[4:])
        elif indented and line.strip():
            yield Block(path.name, number - len(indented) - 1, "indented", tuple(indented))
            indented = []
        previous = line
        if not fence.startswith("```"):
            if opened:
                body.append(line)
            continue
        if opened is None:
            opened, body = (number, fence[3:].strip()), []
        else:
            yield Block(path.name, opened[0], opened[1], tuple(body))
            opened = None


def _shell_commands(block: Block) -> Iterator[Example]:
    """A block's lines, continuations (`\\` at the end) joined, comment-only lines left."""
    pending = ""
    start = 0
    for offset, raw in enumerate(block.lines, 1):
        if not pending:
            start = block.line + offset
            if raw.lstrip().startswith("#"):
                continue
        pending = f"{pending} {raw.strip()}" if pending else raw.strip()
        if pending.endswith("\\"):
            pending = pending[:-1].rstrip()
            continue
        if pending:
            yield Example(block.doc, start, pending)
        pending = ""


def _diamond_argv(command: str) -> Iterator[list[str]]:
    """The arguments after each `diamond` a shell line runs (`a; b`, `x | diamond ...`,
    `id=$(diamond ...)`)."""
    for token_list in _split_pipeline(shlex.split(command.removeprefix("$ "), comments=True)):
        while token_list and re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", token_list[0]):
            token_list = token_list[1:]  # `DIAMOND_OTP=123456 diamond submit ...`
        if token_list and (token_list[0] == "diamond" or token_list[0].endswith("$(diamond")):
            yield [t.removesuffix(")") for t in token_list[1:]]


def _split_pipeline(tokens: list[str]) -> Iterator[list[str]]:
    part: list[str] = []
    for token in tokens:
        bare = token.rstrip(";")
        if bare != token or token in ("|", "&&", "||"):
            if bare and token not in ("|", "&&", "||"):
                part.append(bare)
            yield part
            part = []
        else:
            part.append(token)
    yield part


def code_block_commands() -> list[Example]:
    return [example for doc in DOCS for block in _blocks(doc)
            if block.lang in SHELL_BLOCKS for example in _shell_commands(block)
            if "diamond " in example.text and any(_diamond_argv(example.text))]


SHELL_BLOCKS = ("", "bash", "sh", "shell", "console", "indented")


def inline_commands(prefix: str) -> list[Example]:
    """`` `diamond ...` `` (prefix 'diamond') or `` `%diamond ...` `` spans in prose."""
    pattern = re.compile(r"`(" + re.escape(prefix) + r" [^`]+)`")
    found = []
    for doc in DOCS:
        for number, line in enumerate(doc.read_text().splitlines(), 1):
            found += [Example(doc.name, number, m.group(1)) for m in pattern.finditer(line)
                      if m.group(1) not in MEANT_WRONG]
    return found


def _parse(parser: argparse.ArgumentParser, argv: list[str]) -> str:
    """'' when argv parses, else what the parser said."""
    said = io.StringIO()
    try:
        with contextlib.redirect_stderr(said), contextlib.redirect_stdout(io.StringIO()):
            parser.parse_args(argv)
    except SystemExit as stop:
        return "" if stop.code == 0 else said.getvalue().strip().splitlines()[-1]
    except Exception as refused:  # the magics' parser raises instead of exiting
        return str(refused)
    return ""


def _subparser(parser: argparse.ArgumentParser, words: list[str]
               ) -> tuple[argparse.ArgumentParser, list[str]]:
    """The (sub)parser the leading command words select, and the words after them."""
    while words:
        commands = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not commands or words[0] not in commands[0].choices:
            break
        parser, words = commands[0].choices[words[0]], words[1:]
    return parser, words


def unknown_options(parser: argparse.ArgumentParser, words: list[str]) -> list[str]:
    """The `-x`/`--xx` words the selected command does not take (usage notation such as
    `[--only a|b]` or `--approval ask|auto` allowed)."""
    command, rest = _subparser(parser, words)
    unknown = []
    for word in rest:
        if word == "--":
            break
        option = word.strip("[]").split("=", 1)[0]
        if option.startswith("-") and len(option) > 1 and not option[1].isdigit() \
                and option not in command._option_string_actions:
            unknown.append(option)
    return unknown


CLI_BLOCK_EXAMPLES = code_block_commands()


def test_the_docs_hold_the_examples_these_tests_read():
    """The extraction finds the examples (else every check below would pass vacuously)."""
    assert len(CLI_BLOCK_EXAMPLES) >= 50
    assert len(inline_commands("diamond")) >= 50
    assert len(inline_commands("%diamond")) >= 5
    assert len(BENCHMARK_COMMANDS) >= 30


@pytest.mark.parametrize("example", CLI_BLOCK_EXAMPLES, ids=str)
def test_each_cli_line_of_a_code_block_parses(example: Example):
    for argv in _diamond_argv(example.text):
        if any("[" in word or "|" in word for word in argv):  # usage notation
            assert not unknown_options(build_parser(), argv), example
            continue
        assert _parse(build_parser(), argv) == "", f"{example}: {_parse(build_parser(), argv)}"


@pytest.mark.parametrize("example", inline_commands("diamond"), ids=str)
def test_each_inline_cli_example_names_options_its_command_takes(example: Example):
    words = example.text.split()[1:]
    # `testbed up|down|status` or `testbed up/down --json`: each of the commands shown
    alternatives = next((re.split(r"[|/]", w) for w in words[:2] if re.search(r"[|/]", w)
                         and not w.startswith("-") and not w.startswith("<")), None)
    for word in alternatives or [None]:
        shown = [word if w and re.search(r"[|/]", w) and word in re.split(r"[|/]", w)
                 else w for w in words]
        command, _ = _subparser(build_parser(), shown)
        assert command.prog != "diamond" or not shown or shown[0].startswith("-"), \
            f"{example}: no such command {shown[0]!r}"
        assert not unknown_options(build_parser(), shown), \
            f"{example}: {unknown_options(build_parser(), shown)}"


@pytest.mark.parametrize("example", inline_commands("%diamond") + inline_commands("%%diamond"),
                         ids=str)
def test_each_inline_magic_example_names_options_its_command_takes(example: Example):
    words = example.text.split()[1:]
    command, _ = _subparser(magic_parser(), words)
    assert command.prog != "%diamond", f"{example}: no such magic command {words[0]!r}"
    assert not unknown_options(magic_parser(), words), \
        f"{example}: {unknown_options(magic_parser(), words)}"


def test_the_readme_magic_cells_parse():
    cells = [block for block in _blocks(ROOT / "README.md")
             if block.lines and block.lines[0].startswith("%")]
    assert cells, "README.md shows no %diamond cell"
    for cell in cells:
        for line in cell.lines:
            if line.startswith("%diamond ") or line.startswith("%%diamond "):
                argv = shlex.split(line.split(" ", 1)[1])
                assert _parse(magic_parser(), argv) == "", f"README.md:{cell.line}: {line}"


def _yaml_blocks() -> list[Block]:
    return [block for doc in DOCS for block in _blocks(doc) if block.lang == "yaml"]


@pytest.mark.parametrize("block", _yaml_blocks(), ids=lambda b: f"{b.doc}:{b.line}")
def test_each_yaml_block_loads_with_its_loader(block: Block):
    text = "\n".join(block.lines)
    data = yaml.safe_load(text)
    if isinstance(data, dict) and "steps" in data:
        workflow = load_workflow(text, sites=["alpha", "beta"])
        assert [s.name for s in workflow.steps] == [s["name"] for s in data["steps"]]
    elif isinstance(data, dict) and "sites" in data:
        config = FederationConfig.model_validate(data)
        assert [s.name for s in config.sites] == [s["name"] for s in data["sites"]]
    elif isinstance(data, list):  # site entries shown on their own
        assert [SiteConfig.model_validate(s).name for s in data] == [s["name"] for s in data]
    else:  # a top-level sites-file key shown on its own
        config = FederationConfig.model_validate(data)
        assert set(data) <= set(config.model_fields_set)


def _sites_files() -> list[Block]:
    return [b for b in _yaml_blocks() if isinstance(yaml.safe_load("\n".join(b.lines)), dict)
            and "sites" in yaml.safe_load("\n".join(b.lines))]


@pytest.mark.parametrize("block", _sites_files(), ids=lambda b: f"{b.doc}:{b.line}")
def test_a_sites_file_the_docs_show_is_listed_by_diamond_sites_offline(block: Block,
                                                                      tmp_path: Path):
    """`diamond sites --offline` reads the file only (no site is asked)."""
    sites = tmp_path / "sites.yaml"
    sites.write_text("\n".join(block.lines))
    done = subprocess.run([sys.executable, "-m", "diamond_jupyter.cli", "sites", "--offline",
                           "--json", "--config", str(sites)], cwd=tmp_path, timeout=120,
                          capture_output=True, text=True,
                          env={**os.environ, "DIAMOND_DATA_DIR": str(tmp_path / "data")})
    assert done.returncode == 0, done.stderr
    listed = [s["name"] for s in json.loads(done.stdout)]
    assert listed == [s["name"] for s in yaml.safe_load(sites.read_text())["sites"]]


def test_the_readme_translate_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """`diamond translate --to flux job.pbs`: the script out, one line per dropped
    directive on stderr."""
    assert any(e.text.startswith("diamond translate --to flux job.pbs")
               for e in CLI_BLOCK_EXAMPLES)
    monkeypatch.setenv("DIAMOND_CONFIG", str(tmp_path / "none.yaml"))
    monkeypatch.setenv("DIAMOND_DATA_DIR", str(tmp_path / "data"))
    script = tmp_path / "job.pbs"
    script.write_text("#!/bin/bash\n#PBS -N sim\n#PBS -l nodes=2:ppn=4\n"
                      "#PBS -l walltime=00:10:00\n#PBS -m abe\ncd $PBS_O_WORKDIR\n./sim\n")
    done = subprocess.run([sys.executable, "-m", "diamond_jupyter.cli", "translate", "--to",
                           "flux", "job.pbs"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert "#flux:" in done.stdout and "./sim" in done.stdout
    assert "-m" in done.stderr or "mail" in done.stderr.lower(), done.stderr


BENCHMARK_PATTERN = re.compile(r"python -m benchmarks\.(\w+)((?:\s+[^`#\n]*)?)")


def _benchmark_commands() -> dict[str, list[Example]]:
    found: dict[str, list[Example]] = {}
    for doc in DOCS:
        for number, line in enumerate(doc.read_text().splitlines(), 1):
            for m in BENCHMARK_PATTERN.finditer(line):
                found.setdefault(m.group(1), []).append(
                    Example(doc.name, number, m.group(0).strip()))
    return found


BENCHMARK_COMMANDS = _benchmark_commands()


@pytest.mark.parametrize("module", sorted(BENCHMARK_COMMANDS))
def test_each_named_benchmark_exists_and_takes_the_options_shown(module: str, tmp_path: Path):
    assert (ROOT / "benchmarks" / f"{module}.py").is_file(), BENCHMARK_COMMANDS[module][0]
    # in a scratch directory: one that took no options wrote its output to a file "--help"
    done = subprocess.run([sys.executable, "-m", f"benchmarks.{module}", "--help"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, f"benchmarks.{module} --help: {done.stderr[-500:]}"
    for example in BENCHMARK_COMMANDS[module]:
        shown = set(re.findall(r"(?<![\w-])(--[a-z][\w-]*)", example.text))
        missing = sorted(o for o in shown if not re.search(re.escape(o) + r"\b", done.stdout))
        assert not missing, f"{example}: benchmarks.{module} takes no {missing}"
    assert list(tmp_path.iterdir()) == [], f"benchmarks.{module} --help wrote files"


def test_each_script_the_docs_name_exists():
    named = {(doc.name, m.group(1)) for doc in DOCS
             for m in re.finditer(r"(?<![\w/])(?:\./)?(scripts/[\w.-]+\.sh)", doc.read_text())}
    assert named
    missing = sorted(f"{doc}: {path}" for doc, path in named if not (ROOT / path).is_file())
    assert not missing


def test_the_hub_script_examples_take_the_options_shown():
    """`./scripts/hub.sh up --batch alpha --json` and the like (hub.sh runs
    `python -m diamond_jupyter.hub`)."""
    examples = [Example(doc.name, number, m.group(1))
                for doc in DOCS for number, line in enumerate(doc.read_text().splitlines(), 1)
                for m in re.finditer(r"scripts/hub\.sh ((?:up|down)[^`#\n]*)", line)]
    assert len(examples) >= 3
    helps: dict[str, str] = {}
    for example in examples:
        command = example.text.split()[0]
        if command not in helps:
            helps[command] = subprocess.run(
                [sys.executable, "-m", "diamond_jupyter.hub", command, "--help"], cwd=ROOT,
                capture_output=True, text=True, timeout=120, check=True).stdout
        shown = re.findall(r"(?<![\w-])(--[a-z][\w-]*)", example.text)
        assert all(o in helps[command] for o in shown), f"{example}: {helps[command]}"


def test_each_diamondapp_setting_the_docs_name_exists():
    from diamond_jupyter.server.app import DiamondApp

    traits = set(DiamondApp.class_trait_names(config=True))
    named = {(doc.name, name) for doc in DOCS
             for name in re.findall(r"DiamondApp\.([A-Za-z_]+)", doc.read_text())}
    for doc in DOCS:  # `{"DiamondApp": {...}}` JSON config blocks
        for block in _blocks(doc):
            if block.lang == "json" and any('"DiamondApp"' in line for line in block.lines):
                keys = json.loads("\n".join(block.lines))["DiamondApp"]
                named |= {(doc.name, key) for key in keys}
    assert len(named) >= 10
    unknown = sorted(f"{doc}: DiamondApp.{name}" for doc, name in named if name not in traits)
    assert not unknown


def _expand(path: str) -> list[str]:
    """`/workflows[/ID[/cancel|/plan]]` -> each path the notation means."""
    inner = re.search(r"\[([^\[\]]*)\]", path)
    if not inner:
        return [path]
    return [whole for choice in ["", *inner.group(1).split("|")]
            for whole in _expand(path[:inner.start()] + choice + path[inner.end():])]


def test_each_rest_route_the_docs_name_is_served_with_that_method():
    from tornado.web import RequestHandler

    from diamond_jupyter.server.routes import NoRouteHandler, routes

    served = [(re.compile(pattern), handler) for pattern, handler in routes()
              if handler is not NoRouteHandler]
    verb = r"(?:GET|POST|PUT|PATCH|DELETE)"
    named = {(doc.name, m.group(1), m.group(2)) for doc in DOCS for m in re.finditer(
        rf"(?<![\w/])({verb}(?:/{verb})*) (/diamond/api/[^\s`),;]*)", doc.read_text())}
    assert len(named) >= 10
    for doc, methods, shown in sorted(named):  # `POST/GET /x[/ID]`: each path takes one
        for path in _expand(shown.rstrip(".")):
            handler = next((h for pattern, h in served if pattern.fullmatch(path)), None)
            assert handler is not None, f"{doc}: {methods} {shown}: no route serves {path}"
            assert any(getattr(handler, m.lower()) is not getattr(RequestHandler, m.lower())
                       for m in methods.split("/")), \
                f"{doc}: {methods} {shown}: {handler.__name__} takes none of {methods}"


def test_each_project_file_the_docs_name_exists():
    """`tests/test_cli.py`, `docs/mfa.md`, `scripts/hub.sh`...: from the repository's root
    or from the doc's own directory."""
    pattern = re.compile(r"(?<![\w/.-])((?:tests|benchmarks|ui-tests|scripts|diamond_jupyter|"
                         r"docs|binder|src|schema)/[\w./-]+\.(?:py|tsx|ts|sh|md|yaml|json))(?!\w)")
    named = {(doc, m.group(1)) for doc in DOCS for m in pattern.finditer(doc.read_text())}
    assert len(named) >= 20
    missing = sorted(f"{doc.name}: {path}" for doc, path in named
                     if not (ROOT / path).exists() and not (doc.parent / path).exists())
    assert not missing


def test_each_federation_call_a_python_block_shows_exists_with_its_keywords():
    """`await fed.login("alpha-mfa", ask, persist_s=1800)`: the method and its keywords."""
    import inspect

    from diamond_jupyter.federation import Federation

    calls = [(block, m.group(1), m.group(2)) for doc in DOCS for block in _blocks(doc)
             if block.lang == "python" for line in block.lines
             for m in re.finditer(r"\bfed\.(\w+)\(([^)]*)\)", line)]
    assert len(calls) >= 4
    for block, method, arguments in calls:
        assert hasattr(Federation, method), f"{block.doc}:{block.line}: no Federation.{method}"
        parameters = inspect.signature(getattr(Federation, method)).parameters
        for keyword in re.findall(r"(\w+)=", arguments):
            assert keyword in parameters, \
                f"{block.doc}:{block.line}: Federation.{method} takes no {keyword}="


@pytest.mark.parametrize("block", [b for doc in DOCS for b in _blocks(doc) if b.lang == "python"],
                         ids=lambda b: f"{b.doc}:{b.line}")
def test_each_python_block_is_valid_python(block: Block):
    import ast

    source = "\n".join(block.lines)
    compile(source, f"{block.doc}:{block.line}", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)


@pytest.mark.parametrize("block", [b for doc in DOCS for b in _blocks(doc) if b.lang == "json"],
                         ids=lambda b: f"{b.doc}:{b.line}")
def test_each_json_block_is_json_once_its_placeholders_are_filled(block: Block):
    source = "\n".join(block.lines).replace("PORT", "8000")
    assert isinstance(json.loads(source), dict)


# ---- the examples run against a recorded site (real Slurm outputs, no test bed) ----------

@pytest.fixture
def recorded_user(tmp_path: Path) -> dict[str, str]:
    """The environment of a user whose one site, `rec`, answers with recorded real Slurm
    outputs (tests/local_slurm.py), working in tmp_path."""
    from local_slurm import RECORDED, recorded_sites_file

    sites = recorded_sites_file(tmp_path, RECORDED / "scontrol_node.txt",
                                RECORDED / "squeue_queue.txt")
    outside = {k: v for k, v in os.environ.items() if not k.startswith("DIAMOND_")}
    return {**outside, "DIAMOND_CONFIG": str(sites), "DIAMOND_DATA_DIR": str(tmp_path / "data"),
            "DIAMOND_HANDOVER": "0"}


def _run_example(text: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    """The README line `text` (its comment left off) as written, `diamond` being this
    checkout's CLI."""
    assert any(e.text.split("#")[0].strip() == text for e in CLI_BLOCK_EXAMPLES), \
        f"README.md no longer shows {text!r}"
    return subprocess.run([sys.executable, "-m", "diamond_jupyter.cli", *shlex.split(text)[1:]],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def test_the_readme_place_explain_example_ranks_the_site_and_says_a_rejection_why(
        recorded_user: dict[str, str], tmp_path: Path):
    """`diamond place job.sh --explain`: "rank every site, each rejection with its reason"."""
    (tmp_path / "job.sh").write_text("#!/bin/bash\n#SBATCH -n 1\n#SBATCH -t 10\n./sim\n")
    done = _run_example("diamond place job.sh --explain", recorded_user, tmp_path)
    assert done.returncode == 0, done.stderr
    head, columns, row = done.stdout.splitlines()[:3]
    assert head.startswith("policy diamond; choice rec;"), done.stdout
    assert columns.split()[:3] == ["SITE", "VERDICT", "PARTITION"], done.stdout
    assert row.split()[:3] == ["*", "rec", "READY"], done.stdout
    # a job no partition can hold: the site is ranked out with the reason
    (tmp_path / "job.sh").write_text("#!/bin/bash\n#SBATCH -N 5000\n#SBATCH -t 10\n./sim\n")
    done = _run_example("diamond place job.sh --explain", recorded_user, tmp_path)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "choice none" in done.stdout
    assert "INCOMPATIBLE needs 5000 nodes, partition debug allows at most 2" in done.stdout


def test_the_readme_place_example_with_a_dialect_and_a_policy_runs(
        recorded_user: dict[str, str], tmp_path: Path):
    """`diamond place job.txt --dialect pbs --policy min_cost`: a PBS script in a file
    whose name says nothing, ranked by cost."""
    (tmp_path / "job.txt").write_text("#!/bin/bash\n#PBS -l nodes=1:ppn=2\n"
                                      "#PBS -l walltime=00:10:00\n./sim\n")
    done = _run_example("diamond place job.txt --dialect pbs --policy min_cost",
                        recorded_user, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "rec\n"  # without --explain: the chosen site alone


def test_the_readme_translate_from_example_runs(recorded_user: dict[str, str], tmp_path: Path):
    """`diamond translate --from pbs --to slurm job.txt`: the Slurm script out, what is
    approximated said on stderr, naming it."""
    (tmp_path / "job.txt").write_text("#!/bin/bash\n#PBS -l nodes=1:ppn=2\n"
                                      "#PBS -l walltime=00:10:00\n./sim\n")
    done = _run_example("diamond translate --from pbs --to slurm job.txt", recorded_user,
                        tmp_path)
    assert done.returncode == 0, done.stderr
    assert "#SBATCH --time=00:10:00" in done.stdout and "./sim" in done.stdout, done.stdout
    assert "#SBATCH --ntasks-per-node=2" in done.stdout, done.stdout
    assert "#PBS" not in done.stdout
    assert all(line.startswith(("approximated: ", "dropped: ", "kept: ", "note: "))
               or line for line in done.stderr.splitlines())
    assert "approximated: stderr now goes with stdout" in done.stderr, done.stderr


def test_the_readme_sites_offline_example_asks_no_site(recorded_user: dict[str, str],
                                                       tmp_path: Path):
    """`diamond sites --offline`: "the sites file only: no site is asked" (the recorded
    site's commands, here made to fail loudly, are never run)."""
    for command in (tmp_path / "bin").iterdir():
        command.write_text(f"#!/bin/sh\necho asked >> {tmp_path}/asked\nexit 1\n")
    done = _run_example("diamond sites --offline", recorded_user, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[:2] == ["rec", "slurm"], done.stdout
    assert "not asked (--offline)" in done.stdout
    assert not (tmp_path / "asked").exists()


def test_the_readme_workflow_example_is_refused_naming_a_site_the_sites_file_lacks(
        recorded_user: dict[str, str], tmp_path: Path):
    """The README's workflow (`site: alpha`) run where the sites file has no alpha: exit 2
    naming the step and the site, nothing submitted."""
    [block] = [b for b in _yaml_blocks() if b.doc == "README.md"
               and (yaml.safe_load("\n".join(b.lines)) or {}).get("name") == "demo"]
    (tmp_path / "demo.yaml").write_text("\n".join(block.lines))
    done = _run_example("diamond workflow run demo.yaml --wait --json", recorded_user, tmp_path)
    assert done.returncode == 2, (done.stdout, done.stderr)
    [line] = done.stderr.strip().splitlines()
    assert line.endswith("demo.yaml: step 'prep': unknown site 'alpha' (known: rec, or auto) "
                         "(line 4)"), line
    assert json.loads(done.stdout)["reason"] == "bad-input"


class _Parsed(Exception):
    """Raised once a benchmark's parser accepted its arguments: nothing runs."""


def _parsed_benchmark_arguments(module: str, argv: list[str]) -> str:
    """'' when `python -m benchmarks.MODULE ARGV` parses its arguments, else what its
    parser said; the benchmark itself is never run."""
    import importlib

    original = argparse.ArgumentParser.parse_args

    def parse_then_stop(self, args=None, namespace=None):
        original(self, args, namespace)
        raise _Parsed

    said = io.StringIO()
    main = importlib.import_module(f"benchmarks.{module}").main
    argparse.ArgumentParser.parse_args = parse_then_stop  # type: ignore[method-assign]
    try:
        with contextlib.redirect_stderr(said), contextlib.redirect_stdout(io.StringIO()):
            main(argv)
    except _Parsed:
        return ""
    except SystemExit:
        return said.getvalue().strip().splitlines()[-1]
    finally:
        argparse.ArgumentParser.parse_args = original  # type: ignore[method-assign]
    return f"benchmarks.{module}.main ran without argparse"


# what the docs write for a value to fill in (trace names such as KTH-SP2-... are values)
PLACEHOLDERS = r"\.\.\.|\[|(?<![\w-])(?:S|T|N|SITE|LOG|FILE|SEEDS|RUN|OUT|NAME|DIR)(?![\w-])"


def _concrete_benchmark_examples() -> list[tuple[str, Example]]:
    """The benchmark commands shown whole (an inline span that ends on its line, or a code
    block's line) with values only (no LOG, SITE, S, `...` or `[...]`), of a benchmark with
    a `main(argv)`; not a module named alone, nor one named with an option (`--run`) that
    the prose goes on to fill."""
    found = []
    for doc in DOCS:
        for number, line in enumerate(doc.read_text().splitlines(), 1):
            for m in BENCHMARK_PATTERN.finditer(line):
                whole = "`" not in line or line[m.end():m.end() + 1] == "`"
                words = m.group(2).split()
                whole = whole and bool(words)
                if whole and not re.search(PLACEHOLDERS, m.group(0)) \
                        and "def main(argv" in (ROOT / "benchmarks" / f"{m.group(1)}.py"
                                                ).read_text():
                    found.append((m.group(1), Example(doc.name, number, m.group(0).strip())))
    return found


@pytest.mark.parametrize("module,example", _concrete_benchmark_examples(),
                         ids=lambda v: str(v) if isinstance(v, Example) else v)
def test_each_benchmark_example_s_values_are_accepted_by_its_parser(module: str,
                                                                   example: Example):
    """`python -m benchmarks.seeds placement`, `--profile depth_misleads`...: the values
    shown, not only the option names, are ones the benchmark takes."""
    argv = shlex.split(example.text)[3:]
    said = _parsed_benchmark_arguments(module, argv)
    if re.search(rf"argument {argv[-1]}: expected (at least )?one argument$", said):
        return  # the option named in prose that goes on to fill it
    assert said == "", f"{example}: {said}"


@pytest.mark.parametrize("module", ["placement", "workflow"])
def test_each_load_profile_the_docs_name_is_taken_and_a_misspelt_one_refused_at_once(
        module: str):
    """`--profile depth_misleads`, `--profile busy`: names the benchmarks' parsers take. A
    misspelt one was taken too, and failed only once the test bed was up and loaded."""
    named = {m.group(1) for doc in DOCS
             for m in re.finditer(r"--profile[= ]([a-z_0-9]+)", doc.read_text())}
    assert {"depth_misleads", "busy"} <= named
    for profile in sorted(named):
        assert _parsed_benchmark_arguments(module, ["--profile", profile]) == "", profile
    said = _parsed_benchmark_arguments(module, ["--profile", "depth_mislead"])
    assert "argument --profile: invalid choice: 'depth_mislead'" in said, said
    assert "'depth_misleads'" in said, said
