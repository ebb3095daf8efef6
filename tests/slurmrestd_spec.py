"""The OpenAPI specification an installed slurmrestd plugin declares, read offline from the
plugin itself (Slurm 22.05 links each plugin's spec into its shared object as the bytes
between the symbols `_binary_openapi_json_start` and `_end`; its slurmrestd has no option
to print it), and a strict check of a reply against one of its schemas."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

PLUGIN_DIRS = [Path("/usr/lib/x86_64-linux-gnu/slurm-wlm"), Path("/usr/lib64/slurm"),
               Path("/usr/lib/slurm"), Path("/usr/local/lib/slurm")]
_SHT_DYNSYM = 11


def plugin_file(plugin: str) -> Path | None:
    """The installed `openapi_PLUGIN.so` (`v0_0_38`, `dbv0_0_38`), or None."""
    return next((p for d in PLUGIN_DIRS if (p := d / f"openapi_{plugin}.so").is_file()),
                None)


def installed_plugins() -> list[str]:
    """The OpenAPI plugins installed here, e.g. ['dbv0_0_38', 'v0_0_38']."""
    return sorted({p.name[len("openapi_"):-len(".so")] for d in PLUGIN_DIRS if d.is_dir()
                   for p in d.glob("openapi_*v0_0_*.so")})


def _sections(elf: bytes) -> list[tuple[int, int, int, int, int]]:
    """(type, address, offset, size, link) of each section of a little-endian ELF64."""
    if elf[:4] != b"\x7fELF" or elf[4] != 2 or elf[5] != 1:
        raise ValueError("not a little-endian ELF64 file")
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    size, count = struct.unpack_from("<HH", elf, 0x3A)
    out = []
    for i in range(count):
        kind, _flags, addr, off, length, link = struct.unpack_from(
            "<4xIQQQQI", elf, shoff + i * size)
        out.append((kind, addr, off, length, link))
    return out


def _symbols(elf: bytes, sections: list[tuple[int, int, int, int, int]]) -> dict[str, int]:
    """The dynamic symbols' addresses by name."""
    out: dict[str, int] = {}
    for kind, _addr, off, length, link in sections:
        if kind != _SHT_DYNSYM:
            continue
        names = sections[link][2]
        for at in range(off, off + length, 24):
            name, value = struct.unpack_from("<I4xQ", elf, at)
            end = elf.index(b"\0", names + name)
            out[elf[names + name:end].decode()] = value
    return out


def plugin_spec(plugin: str) -> dict[str, Any] | None:
    """The spec the installed plugin `plugin` declares, or None when it is not installed
    (or holds none)."""
    path = plugin_file(plugin)
    if path is None:
        return None
    elf = path.read_bytes()
    sections = _sections(elf)
    symbols = _symbols(elf, sections)
    start, end = (symbols.get(f"_binary_openapi_json_{k}") for k in ("start", "end"))
    if start is None or end is None:
        return None
    for _kind, addr, off, length, _link in sections:
        if addr and addr <= start < addr + length:
            return json.loads(elf[off + start - addr:off + end - addr])
    return None


def plugin_has_key(plugin: str, key: str) -> bool:
    """Whether the installed plugin holds `key` (`limits/max/jobs/per/user`) as one of its
    strings: a key of its parse tables, what it writes in its replies. (A short key may end
    a longer string, `id` that of `job_id`: the linker shares strings' tails.)"""
    path = plugin_file(plugin)
    data = path.read_bytes() if path is not None else b""
    return f"\0{key}\0".encode() in data or len(key) < 4 and f"{key}\0".encode() in data


def _resolve(schema: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any] | None:
    """A schema with its `$ref` followed (None: a reference the spec does not hold; the
    dbv0.0.38 spec names `v0.0.38_meta`, which only the slurm plugin's spec has: its own
    `dbv0.0.38_meta` is taken)."""
    while "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[1]
        schemas = spec["components"]["schemas"]
        found = schemas.get(name) or schemas.get(f"db{name}")
        if found is None:
            return None
        schema = found
    return schema


_TYPES: dict[str, tuple[type, ...]] = {"integer": (int,), "number": (int, float),
                                       "string": (str,), "boolean": (bool,)}


def departures(value: Any, schema: dict[str, Any], spec: dict[str, Any],
               at: str = "") -> list[str]:
    """Where `value` departs from `schema`: each key the schema does not declare
    (`qos/limits/max/jobs/per`, not looked into further; array items have no index) and
    each value of another type (`qos/id: integer, declared string`). A null is taken for
    any scalar (the plugins write an unset number as null)."""
    resolved = _resolve(schema, spec)
    if resolved is None or value is None:
        return []
    kind = resolved.get("type") or ("object" if "properties" in resolved else None)
    if kind == "object":
        if not isinstance(value, dict):
            return [f"{at}: {type(value).__name__}, declared object"]
        declared = resolved.get("properties") or {}
        out: list[str] = []
        for key, item in value.items():
            where = f"{at}/{key}" if at else key
            out += departures(item, declared[key], spec, where) if key in declared \
                else [where]
        return out
    if kind == "array":
        if not isinstance(value, list):
            return [f"{at}: {type(value).__name__}, declared array"]
        return [d for item in value for d in departures(item, resolved.get("items") or {},
                                                         spec, at)]
    if kind in _TYPES and (isinstance(value, bool) != (kind == "boolean")
                           or not isinstance(value, _TYPES[kind])):
        name = {bool: "boolean", int: "integer", float: "number", str: "string"}.get(
            type(value), type(value).__name__)
        return [f"{at}: {name}, declared {kind}"]
    return []


_SHT_RELA = 4
_R_X86_64_RELATIVE = 8


def parse_table_offsets(plugin: str, keys: list[str]) -> dict[str, list[int]] | None:
    """Where in its Slurm record each of `keys` is read from, by the installed plugin's
    parse tables (x86-64 builds of 22.05: an entry holds the field's offset in the record
    just before the pointer to its key); None where the plugin is not installed or not
    such a build."""
    path = plugin_file(plugin)
    if path is None:
        return None
    elf = path.read_bytes()
    if elf[:4] != b"\x7fELF" or struct.unpack_from("<H", elf, 0x12)[0] != 62:
        return None  # (not x86-64)
    sections = _sections(elf)

    def file_offset(addr: int) -> int | None:
        return next((off + addr - a for _k, a, off, length, _l in sections
                     if a and a <= addr < a + length), None)

    wanted = {}
    for key in keys:
        at = elf.find(f"\0{key}\0".encode())
        if at >= 0:
            wanted[next(a + at + 1 - off for _k, a, off, length, _l in sections
                        if a and off <= at + 1 < off + length)] = key
    out: dict[str, list[int]] = {k: [] for k in keys}
    for kind, _addr, off, length, _link in sections:
        if kind != _SHT_RELA:
            continue
        for at in range(off, off + length, 24):
            where, info, addend = struct.unpack_from("<QQq", elf, at)
            if info & 0xFFFFFFFF == _R_X86_64_RELATIVE and addend in wanted:
                entry = file_offset(where)
                if entry is not None:
                    out[wanted[addend]].append(struct.unpack_from("<Q", elf, entry - 8)[0])
    return out
