"""The import rules docs/architecture.md states for the bottom layers: the models import
nothing of the package, dialects (and the needs parser) only the models, transports only the
models and the configuration. Built on test_layers' graph (imports inside functions count;
type-only ones do not)."""

from __future__ import annotations

from test_layers import NAME, _under, graph

RULES = {
    "models": (["model", "config"], []),
    "pure": (["dialects", "needs"], ["model"]),
    "bytes": (["transports"], ["model", "config"]),
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
