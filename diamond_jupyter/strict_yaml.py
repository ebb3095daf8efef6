"""YAML as the project reads the files people write (sites files, workflow files).

PyYAML's safe loader (no tags that build objects), refusing what YAML would accept
silently: a key given twice in one mapping (YAML keeps the last, so `scheduler: slurm`
then `scheduler: pbs` made a PBS site, and a second `needs:` dropped a step's first),
and flow collections nested deeper than a limit (each level costs the parser a frame).
Merge keys (`<<: *defaults`) still override as YAML means them.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.constructor import ConstructorError
from yaml.scanner import ScannerError

MERGE_TAG = "tag:yaml.org,2002:merge"


def strict_loader(max_depth: int = 64) -> type[yaml.SafeLoader]:
    """A SafeLoader class that refuses a key given twice (naming both lines) and flow
    collections nested more than `max_depth` deep."""

    class StrictLoader(yaml.SafeLoader):
        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            if isinstance(node, yaml.MappingNode):
                seen: dict[Any, yaml.Node] = {}
                for key_node, _ in node.value:
                    if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == MERGE_TAG:
                        continue
                    key = self.construct_object(key_node)
                    try:
                        first = seen.setdefault(key, key_node)
                    except TypeError:  # an unhashable key: PyYAML's own error follows
                        continue
                    if first is not key_node:
                        raise ConstructorError(
                            None, None, f"key {key!r} is given twice (first on line "
                            f"{first.start_mark.line + 1}); give it once", key_node.start_mark)
            return super().construct_mapping(node, deep=deep)

        def fetch_flow_collection_start(self, TokenClass: Any) -> None:  # noqa: N803
            if self.flow_level >= max_depth:
                raise ScannerError(None, None, f"collections nested more than {max_depth} "
                                   "deep", self.get_mark())
            super().fetch_flow_collection_start(TokenClass)

    return StrictLoader


def line_of(root: yaml.Node | None, loc: tuple[Any, ...]) -> int | None:
    """The 1-based line of the key (or list item) at `loc` (mapping keys and list indices,
    as pydantic gives an error's place) in a composed YAML tree, or of the deepest part of it
    found; a key a merge (`<<: *anchor`) brought in is looked up in the merged mappings."""
    node, line = root, None
    for part in loc:
        found: yaml.Node | None = None
        at: yaml.Node | None = None  # the key's node: a block value starts a line later
        if isinstance(node, yaml.MappingNode):
            todo = [node]
            while todo and found is None:
                m = todo.pop(0)
                for k, v in m.value:
                    if k.tag == MERGE_TAG:
                        todo += [v] if isinstance(v, yaml.MappingNode) else [
                            x for x in getattr(v, "value", []) if isinstance(x, yaml.MappingNode)]
                    elif isinstance(k, yaml.ScalarNode) and k.value == str(part):
                        found, at = v, k
                        break
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and \
                0 <= part < len(node.value):
            found = node.value[part]
        if found is None:
            break
        node, line = found, (at or found).start_mark.line + 1
    return line


def tab_hint(text: str, mark: Any, indentation: str) -> str:
    """What to do about a tab PyYAML refused at `mark`: in the indentation, `indentation`;
    after other text on its line (`name:<TAB>value`, `{a: 1,<TAB>b: 2}`), that a space is
    needed there (YAML allows a tab as a separator; this reader does not)."""
    lines = text.splitlines()
    line = lines[mark.line] if mark is not None and mark.line < len(lines) else ""
    before = line[:mark.column] if mark is not None else ""
    if before.strip(" \t\ufeff"):
        return ("(a tab after other text on the line, e.g. between a key and its value: "
                "put a space there instead)")
    return indentation
