"""The package's import graph: no cycles, and nothing below the facade imports it.

Built with `ast` from the source: every import counts, one inside a function too; only
imports under `if TYPE_CHECKING:` (type-only) are left out.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import diamond_jupyter

PKG = Path(diamond_jupyter.__file__).parent
NAME = "diamond_jupyter"

# Below the facade: none of these may import the facade (or anything above it).
BELOW = ["aio", "dialects", "transports", "sites", "sites_rest", "site_kinds", "discovery",
         "sites_file_watch",
         "discovery_site", "monitor", "journal", "store", "transfer", "placement",
         "placement_ahead", "placement_deps", "placement_explain", "placement_fair_share",
         "placement_fit",
         "placement_het", "placement_hosts", "placement_limits", "placement_node_notes",
         "placement_pbs_resv", "placement_priority", "placement_rank", "placement_resv",
         "placement_sge", "placement_sge_limits", "placement_sge_names", "placement_sim",
         "placement_slurm_sched",
         "placement_time",
         "calibration", "leases", "events",
         "model", "config", "workflow", "wrapper", "needs", "script_body", "capabilities",
         "software", "summary", "attention", "attention_journal", "dashboard", "strict_yaml",
         "fetch_guard", "private_files", "option_types", "wording", "site_bounds",
         "sge_expression", "sections", "job_dependencies", "dependency_journal", "digits",
         "placement_stale", "accounting_turns", "log_lines"]
FACADE = sorted(p.stem for p in PKG.glob("federation*.py"))  # the facade and its parts
ABOVE = ["agent", "skills", "skills_models", "skills_workflow", "cli", "kernel", "server",
         "mcp_server"]


def module_name(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in PKG.rglob("*.py") if "node_modules" not in p.parts}


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imported(mod: str, path: Path, known: set[str]) -> set[str]:
    """The package's modules `mod` imports (at any depth of its code, not type-only)."""
    tree = ast.parse(path.read_text(), str(path))
    is_pkg = path.name == "__init__.py"
    out: set[str] = set()

    def resolve(target: str) -> str | None:
        """The package module a dotted name is, or is inside (its longest known prefix)."""
        parts = target.split(".")
        while parts:
            name = ".".join(parts)
            if name in known:
                return name
            parts.pop()
        return None

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            for a in node.names:
                if (m := resolve(a.name)) is not None:
                    out.add(m)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = mod.split(".") if is_pkg else mod.split(".")[:-1]
                base = base[:len(base) - (node.level - 1)]
                stem = ".".join(base + ([node.module] if node.module else []))
            else:
                stem = node.module or ""
            for a in node.names:  # "from . import x" may name a module, else stem has x
                m = resolve(f"{stem}.{a.name}") or resolve(stem)
                if m is not None:
                    out.add(m)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    out.discard(mod)
    # importing a module runs its package's __init__ first
    return out | {p for p in (".".join(m.split(".")[:i]) for m in out
                              for i in range(1, m.count(".") + 1)) if p in known and p != mod
                  and not mod.startswith(p + ".")}


@functools.cache
def graph() -> dict[str, set[str]]:
    mods = modules()
    known = set(mods)
    return {m: imported(m, p, known) for m, p in mods.items()}


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(g.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            strong(v)
    return out


def _path(g: dict[str, set[str]], comp: list[str]) -> str:
    """One loop inside a component, for the failure message."""
    start, members = comp[0], set(comp)
    prev: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(g[v] & members):
                if w == start:
                    loop = [v]
                    while loop[-1] != start:
                        loop.append(prev[loop[-1]])
                    return " -> ".join([start, *reversed(loop[:-1]), start])
                if w not in prev:
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    return ", ".join(comp)


def _under(mod: str, tops: list[str]) -> bool:
    rest = mod.removeprefix(NAME + ".")
    return any(rest == t or rest.startswith(t + ".") for t in tops)


def reach(g: dict[str, set[str]], start: str) -> dict[str, str]:
    """Every module `start` imports, directly or not: module -> the one that imports it."""
    seen: dict[str, str] = {}
    todo = [start]
    while todo:
        v = todo.pop()
        for w in g[v]:
            if w not in seen and w != start:
                seen[w] = v
                todo.append(w)
    return seen


def test_the_graph_sees_imports_inside_functions_and_skips_type_only_ones(tmp_path):
    pkg = tmp_path / "p"
    pkg.mkdir()
    src = ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import b\n"
           "def f():\n    from .c import x\n    import p.d\n")
    (pkg / "a.py").write_text(src)
    known = {"p", "p.a", "p.b", "p.c", "p.d"}
    assert imported("p.a", pkg / "a.py", known) == {"p.c", "p.d"}
    loop = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(loop) == [["a", "b", "c"]]
    assert _path(loop, ["a", "b", "c"]) == "a -> b -> c -> a"


def test_no_import_cycles():
    g = graph()
    found = cycles(g)
    assert not found, "import cycles (an import inside a function counts):\n" + "\n".join(
        _path(g, c) for c in found)


def test_nothing_below_the_facade_imports_it_or_what_is_above_it():
    g = graph()
    below = [m for m in g if _under(m, BELOW)]
    assert len(below) > 20  # the list names real modules
    bad = []
    for m in sorted(below):
        via = reach(g, m)
        for target in sorted(via):
            if _under(target, FACADE + ABOVE):
                chain = [target]
                while chain[-1] != m:
                    chain.append(via[chain[-1]])
                bad.append(" -> ".join(reversed(chain)))
                break
    assert not bad, "below the facade, imports of the facade or a face:\n" + "\n".join(bad)


def test_the_facade_never_touches_a_transport():
    """Site work (listing, fetching, describing, preparing a job) is the Site's: the
    facade calls the Site, which alone uses its transport."""
    used = []
    for mod, path in modules().items():
        if _under(mod, FACADE):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Attribute) and node.attr == "transport":
                    used.append(f"{path.name}:{node.lineno}")
    assert not used, "the facade uses a site's transport at " + ", ".join(used)


def test_the_facade_imports_no_face_and_not_the_agent():
    """The agent is above the facade, as MCP is: the faces own it."""
    g = graph()
    bad = []
    for m in sorted(m for m in g if _under(m, FACADE)):
        via = reach(g, m)
        for target in sorted(via):
            if _under(target, ABOVE):
                chain = [target]
                while chain[-1] != m:
                    chain.append(via[chain[-1]])
                bad.append(" -> ".join(reversed(chain)))
                break
    assert not bad, "the facade imports what is above it:\n" + "\n".join(bad)


def test_the_server_mcp_and_magics_reach_the_store_only_through_the_facade():
    """A face calls the Federation, never its store (`fed.store.x`): the facade owns what a
    face is told (the CLI's resume/handover still read the store for their lists)."""
    faces = ["server", "mcp_server", "kernel"]
    used = []
    for mod, path in modules().items():
        if _under(mod, faces):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Attribute) and node.attr == "store":
                    used.append(f"{path.name}:{node.lineno}")
    assert not used, "a face reaches the facade's store at " + ", ".join(used)
