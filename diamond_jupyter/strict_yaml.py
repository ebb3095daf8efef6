"""YAML as the project reads the files people write (sites files, workflow files).

PyYAML's safe loader (no tags that build objects), refusing what YAML would accept
silently: a key given twice in one mapping (YAML keeps the last, so `scheduler: slurm`
then `scheduler: pbs` made a PBS site, and a second `needs:` dropped a step's first),
and flow collections nested deeper than a limit (each level costs the parser a frame).
Merge keys (`<<: *defaults`) still override as YAML means them.
"""

from __future__ import annotations

import re
import unicodedata
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

        def flatten_mapping(self, node: Any) -> None:
            """Merge keys as YAML defines them: of a list of mappings (`<<: [*gpu,
            *defaults]`) the earlier one wins a key both give, and the mapping's own keys win
            over every merged one (this PyYAML let the later template win: a step meant for
            one site went to the other's)."""
            merged: list[tuple[Any, Any]] = []
            own: list[tuple[Any, Any]] = []
            for key_node, value_node in node.value:
                if key_node.tag != MERGE_TAG:
                    if key_node.tag == "tag:yaml.org,2002:value":
                        key_node.tag = "tag:yaml.org,2002:str"
                    own.append((key_node, value_node))
                    continue
                if isinstance(value_node, yaml.MappingNode):
                    subs = [value_node]
                elif isinstance(value_node, yaml.SequenceNode):
                    subs = value_node.value
                else:
                    raise ConstructorError("while constructing a mapping", node.start_mark,
                                           "expected a mapping or list of mappings for "
                                           f"merging, but found {value_node.id}",
                                           value_node.start_mark)
                for sub in subs:
                    if not isinstance(sub, yaml.MappingNode):
                        raise ConstructorError("while constructing a mapping", node.start_mark,
                                               f"expected a mapping for merging, but found "
                                               f"{sub.id}", sub.start_mark)
                    self.flatten_mapping(sub)
                    merged += sub.value

            def key(k: Any) -> Any:
                return (k.tag, k.value) if isinstance(k, yaml.ScalarNode) else id(k)

            if merged:
                seen = {key(k) for k, _ in own}
                first: list[tuple[Any, Any]] = []
                for k, v in merged:
                    if key(k) not in seen:
                        seen.add(key(k))
                        first.append((k, v))
                node.value = first + own

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
# blanks YAML does not read as blanks (a no-break space from a web page or a word processor,
# the other Unicode spaces, a zero-width space)
_ODD_BLANKS = re.compile("[\u00a0\u1680\u2000-\u200b\u202f\u205f\u3000]")


def odd_blank_hint(text: str) -> str:
    """For a YAML error: '; line N, column M holds a NO-BREAK SPACE (U+00A0) ...' naming
    the first blank YAML does not take for a space (it makes the text around it one word,
    so PyYAML's complaint points elsewhere); '' when there is none."""
    m = _ODD_BLANKS.search(text)
    if m is None:
        return ""
    line = text.count("\n", 0, m.start()) + 1
    col = m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
    name = unicodedata.name(m.group(), "SPACE")
    return (f"; line {line}, column {col} holds a {name} (U+{ord(m.group()):04X}), which YAML "
            "does not read as a space (text copied from a web page or a document has them): "
            "type a plain space there")


def alias_hint(text: str, problem: str, mark: Any) -> str:
    """For PyYAML's 'found undefined alias NAME': where the anchor `&NAME` is, when it is
    defined only below its first use (YAML reads an alias only after its anchor)."""
    m = re.fullmatch(r"found undefined alias '?([^'\s]+)'?", problem or "")
    if m is None or mark is None:
        return ""
    at = re.search(r"&" + re.escape(m.group(1)) + r"(?![^\s,\]}])", text)
    if at is None:
        return f"; no anchor &{m.group(1)} is defined in the file"
    line = text.count("\n", 0, at.start()) + 1
    return (f"; its anchor &{m.group(1)} is on line {line}, below: YAML reads an alias only "
            "after its anchor, so move the anchor above its first use")
