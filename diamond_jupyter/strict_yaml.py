"""YAML as the project reads the files people write (sites files, workflow files).

PyYAML's safe loader (no tags that build objects), refusing what YAML would accept
silently: a key given twice in one mapping (YAML keeps the last, so `scheduler: slurm`
then `scheduler: pbs` made a PBS site, and a second `needs:` dropped a step's first),
flow collections nested deeper than a limit (each level costs the parser a frame), and a
whole number written otherwise than in decimal digits (`port: 022` is octal 18, `0x16` is 22,
`1:30` is 90 in YAML 1.1: `NumberNotAsWritten`), and a base-60 float (`1:30.5` is 90.5).
Merge keys (`<<: *defaults`) still
override as YAML means them.
"""

from __future__ import annotations

import contextlib
import datetime
import gc
import re
import unicodedata
from collections.abc import Callable, Iterator
from typing import Any

import yaml
from yaml.constructor import ConstructorError
from yaml.scanner import ScannerError

from .digits import ascii_digits

MERGE_TAG = "tag:yaml.org,2002:merge"
INT_TAG = "tag:yaml.org,2002:int"
FLOAT_TAG = "tag:yaml.org,2002:float"
_DECIMAL = re.compile(r"[-+]?(?:0|[1-9][0-9_]*)")


class NumberNotAsWritten(ConstructorError):
    """A whole number YAML 1.1 reads in another base than the decimal a person means (named
    where it is, with what to write instead); `document`: the tree it was found in."""

    document: yaml.Node | None = None


def _number_problem(node: yaml.Node, value: float, key: str = "") -> NumberNotAsWritten | None:
    """The refusal of an int `node` written as octal (`022`), hexadecimal (`0x16`), binary
    (`0b11`) or base 60 (`1:30`), or of a float `node` in base 60 (`1:30.5`); None for
    decimal digits (`22`, `-3`, `1_000`, `2.5`) and for a leading 0 that changes nothing
    (`07`)."""
    text = node.value
    if node.tag == FLOAT_TAG and ":" not in text or _DECIMAL.fullmatch(text):
        return None
    digits = text.lstrip("+-")
    if isinstance(value, float):
        value = round(value, 9)  # 685230.15, not its binary neighbour
    if digits.startswith("0x"):
        why, meant = "0x makes it hexadecimal", f"write it in decimal ({value})"
    elif digits.startswith("0b"):
        why, meant = "0b makes it binary", f"write it in decimal ({value})"
    elif ":" in digits:
        why, meant = ("numbers joined by ':' are one number in base 60",
                      f"write the number meant in decimal ({value} if that is it)")
    else:
        decimal = int(text.replace("_", ""), 10)
        if decimal == value:  # `07`, `00`: the same number either way
            return None
        why = "a leading 0 makes it octal"
        meant = f"write it without the leading 0 ({decimal}), or as {value} if octal was meant"
    named = f"{key}: " if key else ""
    return NumberNotAsWritten(
        None, None, f"{named}{text} is read by YAML as {value}, not as written ({why}): "
        f"{meant}, or quote it ('{text}') if it is text", node.start_mark)


# PyYAML's own reading of a number node, by its tag
_PYYAML_NUMBER: dict[str, Any] = {INT_TAG: yaml.SafeLoader.construct_yaml_int,
                                  FLOAT_TAG: yaml.SafeLoader.construct_yaml_float}


def _number_as_written(loader: Any, node: yaml.ScalarNode, key: str = "") -> int | float:
    """The int or float `node` holds (its tag says which), as PyYAML reads it; the refusal
    of `_number_problem` (naming `key` when given) raised when it is not as written."""
    value = _PYYAML_NUMBER[node.tag](loader, node)
    problem = _number_problem(node, value, key)
    if problem is not None:
        raise problem
    return value


class _Strict:
    """What both loaders add to PyYAML's safe constructor (mixed in before it)."""

    max_depth = 64

    def construct_strict_number(self, node: yaml.ScalarNode) -> int | float:
        """PyYAML's int or float, refused when not written as `_number_problem` accepts."""
        return _number_as_written(self, node)

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, yaml.Node] = {}
            merge: yaml.Node | None = None
            for key_node, value_node in node.value:
                _check_number_under(self, key_node, value_node)
                if key_node.tag == MERGE_TAG and merge is not None:
                    # PyYAML merged both, the first winning, where a later key wins elsewhere
                    raise ConstructorError(
                        None, None, f"key '<<' is given twice (first on line "
                        f"{merge.start_mark.line + 1}); merge several in one: <<: [*a, *b] "
                        "(the first that gives a key wins)", key_node.start_mark)
                if key_node.tag == MERGE_TAG:
                    merge = key_node
                if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == MERGE_TAG:
                    continue
                key = self.construct_object(key_node)  # type: ignore[attr-defined]
                try:
                    first = seen.setdefault(key, key_node)
                except TypeError:  # an unhashable key: PyYAML's own error follows
                    continue
                if first is not key_node:
                    # `{size: 1,000,000}`: each comma ends an entry, `000` is a key twice
                    commas = " (a number written with commas inside `{...}` is read as " \
                        "several entries, its digits after each comma as keys: write it " \
                        "without commas)" if node.flow_style and isinstance(key, int) and \
                        ascii_digits(key_node.value) else ""
                    raise ConstructorError(
                        None, None, f"key {key!r} is given twice (first on line "
                        f"{first.start_mark.line + 1}); give it once{commas}",
                        key_node.start_mark)
        return super().construct_mapping(node, deep=deep)  # type: ignore[misc]

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
            # the tree as written is given back after construction (`read_document`)
            vars(self).setdefault("flattened", []).append((node, node.value))
            node.value = first + own

    def get_single_data(self) -> Any:
        """The document (see `read_document`)."""
        return self.read_document()[0]

    def read_document(self) -> tuple[Any, yaml.Node | None]:
        """The document and the node tree it was built from, once its flow collections are
        known to nest at most `max_depth` deep (libyaml, which reads them in C, stops only
        at 1,000). The tree is as written (merge keys in place), for saying where a value
        is; a NumberNotAsWritten carries it as `document`."""
        node = self.get_single_node()  # type: ignore[attr-defined]
        if node is None:
            return None, None
        _check_flow_depth(node, self.max_depth)
        _check_expansion(node)
        try:
            return self.construct_document(node), node  # type: ignore[attr-defined]
        except NumberNotAsWritten as e:
            e.document = node
            raise
        finally:
            for mapping, written in reversed(vars(self).pop("flattened", [])):
                mapping.value = written


def _check_number_under(loader: Any, key_node: yaml.Node, value_node: yaml.Node) -> None:
    """A number not written in decimal as `key`'s value, or as an item of its list, refused
    naming the key (`port: 022`, `ports[1]: 0x16`, `keepalive_s: 1:30.5`)."""
    if not isinstance(key_node, yaml.ScalarNode):
        return
    items = [("", value_node)] if isinstance(value_node, yaml.ScalarNode) else \
        [(f"[{i}]", v) for i, v in enumerate(value_node.value)] \
        if isinstance(value_node, yaml.SequenceNode) else []
    for index, item in items:
        if isinstance(item, yaml.ScalarNode) and item.tag in (INT_TAG, FLOAT_TAG) and \
                not _DECIMAL.fullmatch(item.value) and (item.tag == INT_TAG or ":" in item.value):
            _number_as_written(loader, item, key_node.value + index)


# Values that aliases may add to a document beyond its own (each `*name` counts what its
# anchor holds): a file repeats a block a few hundred times, not a billion
MAX_ALIAS_VALUES = 100_000


class TooManyAliasValues(ConstructorError):
    """Aliases expand the document past MAX_ALIAS_VALUES (said the same by either reader:
    not read again)."""


def _check_expansion(root: yaml.Node) -> None:
    """ConstructorError when aliases (`*name`) make the document hold more than
    MAX_ALIAS_VALUES values beyond its own nodes: nine anchors of nine aliases each (a
    "billion laughs") read in microseconds, as shared objects, but every check that walks,
    copies or prints the value (a list of steps' inputs, a number's error message) spent
    minutes and gigabytes on it. Named at the innermost anchor past the bound."""
    sizes: dict[int, int] = {}
    entered: set[int] = set()
    todo: list[tuple[yaml.Node, bool]] = [(root, False)]
    while todo:
        node, children_done = todo.pop()
        if id(node) in sizes or not children_done and id(node) in entered:
            continue  # sized, or a collection that holds itself (its loop is refused later)
        if isinstance(node, yaml.SequenceNode):
            children = node.value
        elif isinstance(node, yaml.MappingNode):
            children = [part for pair in node.value for part in pair]
        else:
            sizes[id(node)] = 1
            continue
        if not children_done:
            entered.add(id(node))
            todo.append((node, True))
            todo += [(c, False) for c in children if id(c) not in sizes]
            continue
        sizes[id(node)] = size = 1 + sum(sizes.get(id(c), 1) for c in children)
        if size > MAX_ALIAS_VALUES + len(sizes):
            raise TooManyAliasValues(
                None, None, f"anchors and aliases (&name, *name) make it hold more than "
                f"{MAX_ALIAS_VALUES:,} values (an alias repeats all its anchor holds, and "
                "aliases of aliases multiply): write the repeated part out, or repeat it "
                "fewer times", node.start_mark)


def _check_flow_depth(root: yaml.Node, max_depth: int) -> None:
    """ScannerError at the first flow collection (`[...]`, `{...}`) nested more than
    `max_depth` deep (walked without recursion; an alias's node is walked once)."""
    todo: list[tuple[yaml.Node, int]] = [(root, 0)]
    seen: set[int] = set()
    while todo:
        node, depth = todo.pop()
        if not isinstance(node, (yaml.SequenceNode, yaml.MappingNode)) or id(node) in seen:
            continue
        seen.add(id(node))
        depth = depth + 1 if node.flow_style else 0
        if depth > max_depth:
            raise ScannerError(None, None, f"collections nested more than {max_depth} deep",
                               node.start_mark)
        if isinstance(node, yaml.SequenceNode):
            todo += [(child, depth) for child in node.value]
        else:
            todo += [(part, depth) for pair in node.value for part in pair]


class _PyStrictLoader(_Strict, yaml.SafeLoader):
    """PyYAML's own reader (pure Python): its errors are the ones the faces show."""

    yaml_constructors = {**yaml.SafeLoader.yaml_constructors,
                         INT_TAG: _Strict.construct_strict_number,
                         FLOAT_TAG: _Strict.construct_strict_number}

    def fetch_flow_collection_start(self, TokenClass: Any) -> None:  # noqa: N803
        # refused as it is read: the pure-Python parser takes a frame per level
        if self.flow_level >= self.max_depth:
            raise ScannerError(None, None, f"collections nested more than {self.max_depth} "
                               "deep", self.get_mark())
        super().fetch_flow_collection_start(TokenClass)


# libyaml's reader, where this PyYAML was built with it (about 20 times faster: a sites file
# near its 4 MB bound took PyYAML's pure-Python reader about 20 s); the same safe
# constructor, so the same values, tags and checks
_FAST_BASE: type | None = getattr(yaml, "CSafeLoader", None) if yaml.__with_libyaml__ else None


def strict_loader(max_depth: int = 64, *, fast: bool = False) -> type:
    """A safe loader class that refuses a key given twice (naming both lines) and flow
    collections nested more than `max_depth` deep; `fast`: read by libyaml where PyYAML has
    it (its error messages differ: see `strict_load`)."""
    base: type = _PyStrictLoader
    if fast and _FAST_BASE is not None:
        base = type("_CStrictLoader", (_Strict, _FAST_BASE),
                    {"yaml_constructors": _PyStrictLoader.yaml_constructors})
    return type("StrictLoader", (base,), {"max_depth": max_depth})


# Up to this size a text libyaml refuses is read again by PyYAML's pure-Python reader for
# its error (a fraction of a second); a larger one gets libyaml's own (same line and column)
RETELL_MAX_CHARS = 256 << 10


def strict_load(text: str, max_depth: int = 64) -> Any:
    """`text` read by the strict loader (see `strict_read`)."""
    return strict_read(text, max_depth)[0]


def strict_read(text: str, max_depth: int = 64) -> tuple[Any, yaml.Node | None]:
    """`text` read by the strict loader, with the node tree its value was built from (one
    reading gives both, so a text read is always one whose lines can be found): by libyaml
    where PyYAML has it, and, when that refuses a text of at most RETELL_MAX_CHARS, again
    by PyYAML's pure-Python reader, whose error (or value) is the one given: the same text
    gives the same message with either build of PyYAML. A text holding a tab is read by the
    pure-Python reader alone: libyaml takes a tab between tokens (`name:<TAB>value`) as a
    blank, which this reader refuses (`tab_hint`)."""
    with _no_cycle_collection():
        if "\t" in text:
            return _read(text, strict_loader(max_depth))
        try:
            return _read(text, strict_loader(max_depth, fast=True))
        except TooManyAliasValues:
            raise
        except (yaml.YAMLError, RecursionError):
            if _FAST_BASE is None or len(text) > RETELL_MAX_CHARS:
                raise
        return _read(text, strict_loader(max_depth))


def _read(text: str, loader: type) -> tuple[Any, yaml.Node | None]:
    """`read_document` of a `loader` (a strict_loader class) reading `text`."""
    reader = loader(text)
    try:
        return reader.read_document()
    finally:
        reader.dispose()


def compose(text: str) -> yaml.Node | None:
    """`text`'s node tree (for line numbers), by libyaml where PyYAML has it."""
    with _no_cycle_collection():
        return yaml.compose(text, Loader=_FAST_BASE or yaml.SafeLoader)  # noqa: S506


@contextlib.contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """Python's cycle collector paused while a tree is built: it walked every node made so
    far again and again, so reading grew with the square of the file (4,000 sites 0.18 s,
    32,000 sites 2.9 s); what the reader frees it frees at once, the rest is collected
    after."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


BOOL_TAG = "tag:yaml.org,2002:bool"


def boolean_word(node: yaml.Node | None) -> str:
    """'; YAML reads `on` as true': for a scalar YAML 1.1 reads as a boolean though it is
    written otherwise than true/false (`yes`, `on`, `off`, `no`), so an error that names
    the boolean names the word written too; '' for any other node."""
    if not isinstance(node, yaml.ScalarNode) or node.tag != BOOL_TAG or \
            node.value.lower() in ("true", "false"):
        return ""
    meant = "true" if node.value.lower() in ("yes", "on", "y") else "false"
    return f"; YAML reads `{node.value}` as {meant}"


def node_at(root: yaml.Node | None, loc: tuple[Any, ...]) -> yaml.Node | None:
    """The value node at `loc` in a composed YAML tree; None where the place is not in it."""
    node = root
    for part in loc:
        found = _child(node, part)
        if found is None:
            return None
        node = found[0]
    return node


def _child(node: yaml.Node | None, part: Any) -> tuple[yaml.Node, yaml.Node | None] | None:
    """The value at key or index `part` of `node`, with its key's node (None for a list
    item); a key a merge (`<<: *anchor`) brought in is looked up in the merged mappings."""
    if isinstance(node, yaml.MappingNode):
        todo = [node]
        while todo:
            m = todo.pop(0)
            for k, v in m.value:
                if k.tag == MERGE_TAG:
                    todo += [v] if isinstance(v, yaml.MappingNode) else [
                        x for x in getattr(v, "value", []) if isinstance(x, yaml.MappingNode)]
                elif isinstance(k, yaml.ScalarNode) and k.value == str(part):
                    return v, k
    elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and \
            0 <= part < len(node.value):
        return node.value[part], None
    return None


def line_of(root: yaml.Node | None, loc: tuple[Any, ...]) -> int | None:
    """The 1-based line of the key (or list item) at `loc` (mapping keys and list indices,
    as pydantic gives an error's place) in a composed YAML tree, or of the deepest part of it
    found; a key a merge (`<<: *anchor`) brought in is looked up in the merged mappings."""
    node, line = root, None
    for part in loc:
        child = _child(node, part)
        if child is None:
            break
        node, at = child  # at: the key's node (a block value starts a line later)
        line = (at or node).start_mark.line + 1
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
_ODD_BLANKS = re.compile("[\u00a0\u1680\u2000-\u200b\u202f\u205f\u3000\ufeff]")


_ODD_INDENT = re.compile(f"^[ \t]*({_ODD_BLANKS.pattern})", re.M)


def odd_blank_hint(text: str, *, indentation_only: bool = False) -> str:
    """For a YAML error: '; line N, column M holds a NO-BREAK SPACE (U+00A0) ...' naming
    the first blank YAML does not take for a space (it makes the text around it one word,
    so PyYAML's complaint points elsewhere); '' when there is none. `indentation_only`: one
    in a line's indentation (for a file YAML read, but as other keys than meant)."""
    start = len(text) - len(text.lstrip("\ufeff"))  # the file's own byte-order mark(s)
    m = _ODD_INDENT.search(text, start) if indentation_only else _ODD_BLANKS.search(text, start)
    if m is not None and indentation_only:
        m = _ODD_BLANKS.search(text, m.start(1))
    if m is None:
        return ""
    line = text.count("\n", 0, m.start()) + 1
    col = m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
    if m.group() == "\ufeff":  # a second file's mark, left inside by joining files
        return (f"; line {line}, column {col} holds a byte-order mark (U+FEFF), invisible, "
                "which an editor puts at the start of a file and joining two files leaves "
                "inside: delete that character")
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


def first_key_not_text(data: Any, skip: Callable[[tuple[Any, ...]], bool] = lambda loc: False
                       ) -> tuple[tuple[Any, ...], Any] | None:
    """The first mapping key in `data` that YAML did not read as text (`1:`, `true:`, `~:`,
    `2024-01-01:`: a number, a boolean, null, a date), as (the place of its mapping, the
    key); None when every key is text. `skip(loc)`: a value not looked into (one holding
    anything, e.g. an `x-` block of anchors). A value an alias shares is looked at once."""
    seen: set[int] = set()
    todo: list[tuple[tuple[Any, ...], Any]] = [((), data)]
    while todo:
        loc, obj = todo.pop()
        if not isinstance(obj, (dict, list)) or id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, dict):
            bad = next((k for k in obj if not isinstance(k, str)), _NONE)
            if bad is not _NONE:
                return loc, bad
            items = [(loc + (k,), v) for k, v in obj.items()]
        else:
            items = [(loc + (i,), v) for i, v in enumerate(obj)]
        todo.extend(reversed([(at, v) for at, v in items if not skip(at)]))
    return None


_NONE = object()


def key_not_text(root: yaml.Node | None, loc: tuple[Any, ...], key: Any) -> tuple[str, str]:
    """How a key `first_key_not_text` found reads in a message: (`1 is a number`, ' (line
    N)'), the key as written in the file (`yes`, `0x1F`) when its node is found."""
    kind = "a boolean" if isinstance(key, bool) else "null (no key)" if key is None else \
        "a number" if isinstance(key, (int, float)) else \
        "a date" if isinstance(key, datetime.date) else type(key).__name__
    written, line = ("~" if key is None else str(key).lower() if isinstance(key, bool)
                     else str(key)), ""
    mapping = node_at(root, loc)
    for k, _ in mapping.value if isinstance(mapping, yaml.MappingNode) else []:
        if isinstance(k, yaml.ScalarNode) and k.tag not in (MERGE_TAG, STR_TAG) and \
                _same_key(k, key):
            written, line = k.value or "~", f" (line {k.start_mark.line + 1})"
            break
    return f"{written} is read by YAML as {kind}", line


STR_TAG = "tag:yaml.org,2002:str"


def _same_key(node: yaml.ScalarNode, key: Any) -> bool:
    try:
        value = yaml.safe_load(yaml.serialize(node))
    except yaml.YAMLError:
        return False
    return type(value) is type(key) and value == key


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _spaces(count: int) -> str:
    return f"{count} space" if count == 1 else f"{count} spaces"


def _key_column(line: str) -> int:
    """Where the key of a block line starts: past its indentation and any `- ` of a list."""
    at = _indent(line)
    while line[at:at + 2] == "- ":
        at += 2 + _indent(line[at + 2:])
    return at


def _content_above(lines: list[str], row: int) -> int | None:
    """The nearest line above `row` holding more than blanks and a comment."""
    return next((n for n in range(min(row, len(lines)) - 1, -1, -1)
                 if lines[n].strip() and not lines[n].lstrip().startswith("#")), None)


_NO_SPACE_KEY = re.compile(r"^[ ]*(?:- +)*([A-Za-z_][A-Za-z0-9_.-]*):([^\s:/].*)$")


# a key whose value is a flow list that ends where more text goes on
_LIST_THEN_TEXT = re.compile(r"\s*(?:-\s+)?[^\s:#][^:#]*:\s+(\[[^\]]*\])\s*$")


def structure_hint(text: str, e: yaml.YAMLError) -> str:
    """Plain words for PyYAML's complaints about a file's shape, which name its parser's
    states (`expected <block end>, but found '<block mapping start>'`, `mapping values are
    not allowed here`, `could not find expected ':'`): which line is out of step and how to
    write it; '' for any other complaint."""
    problem = str(getattr(e, "problem", "") or "")
    mark, ctx = getattr(e, "problem_mark", None), getattr(e, "context_mark", None)
    context = str(getattr(e, "context", "") or "")
    if mark is None:
        return ""
    lines = text.splitlines()
    here = lines[mark.line] if mark.line < len(lines) else ""
    if (flow := _LIST_THEN_TEXT.match(here[:mark.column])) and here[mark.column:].strip():
        # `host: [2001:db8::1]:2200`: a list, then text YAML cannot place
        written = here[flow.start(1):].split(" #", 1)[0].strip()[:60]
        return (f"; line {mark.line + 1}'s value `{written}` begins with `[`, which YAML "
                "reads as a list, and text follows its `]`: if the whole is one value (as "
                f"a host [IPv6]:PORT is), put it in quotes, '{written}'")
    if problem.startswith("expected <block end>, but found") and here.strip():
        above = _content_above(lines, mark.line)
        if above is None:
            return ""
        key = lines[above].strip().split(":", 1)[0].lstrip("- ")
        return (f"; line {mark.line + 1} is indented {_spaces(_indent(here))}, which lines "
                f"up with nothing above it (line {above + 1}'s `{key[:40]}` is indented "
                f"{_key_column(lines[above])}): indent a key as far as the other keys of its "
                "mapping, and a `- ` as far as the other items of its list")
    if problem == "mapping values are not allowed here":
        above = _content_above(lines, mark.line)
        if above is not None and (m := _NO_SPACE_KEY.match(lines[above])):
            return (f"; line {above + 1} `{m.group(1)}:{m.group(2)[:30]}` has no space after "
                    f"its colon, so YAML reads it as text, not a key: write "
                    f"`{m.group(1)}: {m.group(2)[:30]}`")
        before = here[:mark.column]
        if ": " in before.lstrip(" -"):
            return (f"; line {mark.line + 1} holds a second `key:` inside a value: give a "
                    "mapping its own lines below its key, or braces ({kind: local}); a value "
                    "holding `: ` is quoted")
        if above is not None and _indent(here) > _key_column(lines[above]):
            return (f"; line {mark.line + 1} is indented {_spaces(_indent(here))}, deeper than "
                    f"line {above + 1}'s key ({_key_column(lines[above])}), so YAML reads it as "
                    "that value going on: indent it as far as the key it sits beside")
        return ""
    if problem == "could not find expected ':'" and ctx is not None \
            and context == "while scanning a simple key" and ctx.line < len(lines):
        word = lines[ctx.line].strip()
        return (f"; line {ctx.line + 1} (`{word[:40]}`) has no `:` after its key: write "
                f"`{word[:40]}:` with its value after it or indented below it")
    if context == "while scanning a quoted scalar" and ctx is not None:
        quote = lines[ctx.line][ctx.column:ctx.column + 1] if ctx.line < len(lines) else "'"
        return (f"; the {quote} opened on line {ctx.line + 1}, column {ctx.column + 1} is never "
                "closed")
    if context.startswith("while parsing a flow") and ctx is not None and \
            ctx.line < mark.line and ctx.line < len(lines):
        bracket = lines[ctx.line][ctx.column:ctx.column + 1]
        return (f"; the {bracket} opened on line {ctx.line + 1}, column {ctx.column + 1} is not "
                f"closed before line {mark.line + 1}")
    return ""
