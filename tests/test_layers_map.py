"""The import rules docs/architecture.md states for the bottom layers: the models (with
`digits`, the digits 0-9 check) import nothing of the package, dialects (and the needs
parser and the wording helpers) only the models, transports only the models, the
configuration, the asyncio helpers (`aio`) and the one-line logger (`log_lines`, so a
host's error text cannot forge a log line); and every module has its place in the layers,
so that a new one is checked too. Built on test_layers' graph (imports inside functions
count; type-only ones do not)."""

from __future__ import annotations

from test_layers import ABOVE, BELOW, FACADE, NAME, _under, graph

RULES = {
    "models": (["model", "config", "strict_yaml", "digits"], []),
    "pure": (["dialects", "needs", "script_body", "wording"], ["model", "digits"]),
    "bytes": (["transports"], ["model", "config", "aio", "log_lines", "digits"]),
}


def test_bottom_layers_import_only_what_the_map_allows():
    g = graph()
    bad = []
    for layer, (tops, allowed) in RULES.items():
        mods = [m for m in g if _under(m, tops)]
        assert mods, layer  # the map names real modules
        for m in sorted(mods):
            for target in sorted(g[m]):
                if target != NAME and not _under(target, tops + allowed):
                    bad.append(f"{layer}: {m} imports {target}")
    assert not bad, "\n".join(bad)


TOOLING = ["testbed", "hub", "_version"]  # the local test bed, its hub, the version file


def test_every_module_has_one_place_in_the_layers():
    lists = {"below": BELOW, "facade": FACADE, "above": ABOVE, "tooling": TOOLING}
    places = {m: [k for k, tops in lists.items() if _under(m, tops)] for m in graph()
              if m != NAME}
    assert not [m for m, p in places.items() if len(p) != 1], \
        {m: p for m, p in places.items() if len(p) != 1}
    stale = [t for tops in lists.values() for t in tops
             if not any(_under(m, [t]) for m in places)]
    assert not stale, f"listed but no such module: {stale}"
