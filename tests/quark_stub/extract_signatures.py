#!/usr/bin/env python3
"""Read AMD Quark's ONNX API signatures from an unpacked wheel, without importing it.

Usage:
    extract_signatures.py QUARK_DIR ORT_DIR OUT_JSON

QUARK_DIR is the folder an amd-quark wheel was unzipped into (it holds quark/),
ORT_DIR the folder an onnxruntime wheel was unzipped into (it holds onnxruntime/).
Everything is read with `ast` (and, for onnxruntime's C++ binding, by looking
for names in the shipped shared library's bytes); nothing is imported.

The JSON written is the "facts" file that make_stubs.py turns into stand-in
packages.  See README.md beside this file for the layout and how to regenerate.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

SCHEMA = 1

# The two public modules a quarkplan script imports from.
ENTRY_MODULES = ["quark.onnx", "quark.onnx.quantization.config.custom_config"]

# Modules of the config API whose every public top-level name a script may
# import directly (e.g. `from quark.onnx.quantization.config.spec import MX4Spec`,
# which 0.12.post1 defines there without exporting it from quark.onnx).
FULL_MODULES = [
    "quark.onnx.quantization.config.spec",
    "quark.onnx.quantization.config.algorithm",
    "quark.onnx.quantization.config.config",
    "quark.onnx.quantization.config.legacy",
    "quark.onnx.quantization.config.data_type",
    "quark.onnx.calibration.methods",
]
# Names such a module imports are exposed too when defined under these.
FULL_IMPORT_PREFIXES = ("quark.onnx.quantization.config.", "quark.onnx.calibration.", "quark.common.data_type",
                        "onnxruntime.quantization.")

# Where Quark keeps the custom-op library path getter (checked, not assumed).
LIBRARY_GETTER = "get_library_path"

ENUM_BASES = {"enum.Enum", "enum.IntEnum", "enum.StrEnum", "enum.Flag", "enum.IntFlag"}

# Names under which Quark's code holds the user's extra_options dict.
EXTRA_OPTIONS_NAMES = {"extra_options", "_extra_options"}

# ---------------------------------------------------------------------------
# onnxruntime: SessionOptions, GraphOptimizationLevel and provider names live in
# the C++ binding (onnxruntime_pybind11_state), so they cannot be read with ast.
# They are listed by hand from ORT's Python API docs:
#   https://onnxruntime.ai/docs/api/python/api_summary.html  (SessionOptions,
#   GraphOptimizationLevel) and https://onnxruntime.ai/docs/execution-providers/
# Each name is then looked for in the wheel's binary (found_in_binary), so a
# regeneration against a new ORT shows when one disappears.
# ---------------------------------------------------------------------------
ORT_SESSION_OPTIONS_MEMBERS = {
    # name: kind ("method" with its parameters, or "attribute")
    "register_custom_ops_library": {"kind": "method", "params": ["library_path"]},
    "add_session_config_entry": {"kind": "method", "params": ["config_key", "config_value"]},
    "graph_optimization_level": {"kind": "attribute"},
    "log_severity_level": {"kind": "attribute"},
    "intra_op_num_threads": {"kind": "attribute"},
}
ORT_GRAPH_OPTIMIZATION_LEVELS = [
    "ORT_DISABLE_ALL",
    "ORT_ENABLE_BASIC",
    "ORT_ENABLE_EXTENDED",
    "ORT_ENABLE_LAYOUT",
    "ORT_ENABLE_ALL",
]
ORT_PROVIDERS = [
    "CPUExecutionProvider",
    "CUDAExecutionProvider",
    "ROCMExecutionProvider",
    "MIGraphXExecutionProvider",
    "VitisAIExecutionProvider",
    "TensorrtExecutionProvider",
    "DmlExecutionProvider",
]


def src(node: ast.AST | None, limit: int = 400) -> str | None:
    if node is None:
        return None
    text = ast.unparse(node)
    return text if len(text) <= limit else text[:limit] + "..."


def literal(node: ast.AST) -> tuple[bool, Any]:
    """(True, value) when node is a JSON-able literal."""
    try:
        value = ast.literal_eval(node)
    except Exception:
        return False, None
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        if isinstance(value, (set, frozenset, tuple)):
            value = list(value)
            try:
                json.dumps(value)
            except (TypeError, ValueError):
                return False, None
        else:
            return False, None
    return True, value


class Index:
    """Maps dotted module names to source files under a list of roots."""

    def __init__(self, roots: list[Path]):
        self.roots = roots
        self._trees: dict[str, ast.Module | None] = {}

    def path(self, module: str) -> tuple[Path, Path] | None:
        rel = Path(*module.split("."))
        for root in self.roots:
            for cand in (root / rel.with_suffix(".py"), root / rel / "__init__.py"):
                if cand.is_file():
                    return root, cand
        return None

    def is_package(self, module: str) -> bool:
        p = self.path(module)
        return bool(p and p[1].name == "__init__.py")

    def rel(self, module: str) -> str | None:
        p = self.path(module)
        return str(p[1].relative_to(p[0])) if p else None

    def tree(self, module: str) -> ast.Module | None:
        if module not in self._trees:
            p = self.path(module)
            self._trees[module] = ast.parse(p[1].read_text(encoding="utf-8"), str(p[1])) if p else None
        return self._trees[module]


def top_level_statements(body: list[ast.stmt]):
    """Module-level statements, looking inside try/if blocks (e.g. guarded imports)."""
    for stmt in body:
        if isinstance(stmt, ast.Try):
            yield from top_level_statements(stmt.body)
            for h in stmt.handlers:
                yield from top_level_statements(h.body)
            yield from top_level_statements(stmt.orelse)
            yield from top_level_statements(stmt.finalbody)
        elif isinstance(stmt, ast.If):
            # `if TYPE_CHECKING:` imports do not exist at run time.
            if isinstance(stmt.test, ast.Name) and stmt.test.id == "TYPE_CHECKING":
                yield from top_level_statements(stmt.orelse)
                continue
            yield from top_level_statements(stmt.body)
            yield from top_level_statements(stmt.orelse)
        else:
            yield stmt


def absolute(module: str, is_pkg: bool, level: int, target: str | None) -> str:
    if level == 0:
        return target or ""
    parts = module.split(".")
    if not is_pkg:
        parts = parts[:-1]
    if level > 1:
        parts = parts[: len(parts) - (level - 1)]
    return ".".join(parts + ([target] if target else []))


class Extractor:
    def __init__(self, quark_dir: Path, ort_dir: Path):
        self.index = Index([quark_dir, ort_dir])
        self.quark_dir = quark_dir
        self.ort_dir = ort_dir
        self._bindings: dict[str, dict[str, dict[str, Any]]] = {}
        self.definitions: dict[str, dict[str, Any]] = {}
        self.namespaces: dict[str, dict[str, str]] = {}
        self._queue: list[str] = []

    # -- module bindings ---------------------------------------------------
    def bindings(self, module: str) -> dict[str, dict[str, Any]]:
        if module in self._bindings:
            return self._bindings[module]
        out: dict[str, dict[str, Any]] = {}
        tree = self.index.tree(module)
        if tree is None:
            self._bindings[module] = out
            return out
        is_pkg = self.index.is_package(module)
        for stmt in top_level_statements(tree.body):
            if isinstance(stmt, ast.ImportFrom):
                base = absolute(module, is_pkg, stmt.level, stmt.module)
                for a in stmt.names:
                    if a.name == "*":
                        continue
                    out[a.asname or a.name] = {"import": base, "name": a.name, "line": stmt.lineno}
            elif isinstance(stmt, ast.Import):
                for a in stmt.names:
                    if a.asname:
                        out[a.asname] = {"module": a.name, "line": stmt.lineno}
                    else:
                        top = a.name.split(".")[0]
                        out[top] = {"module": top, "line": stmt.lineno}
            elif isinstance(stmt, ast.ClassDef):
                out[stmt.name] = {"def": "class", "node": stmt, "line": stmt.lineno}
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out[stmt.name] = {"def": "function", "node": stmt, "line": stmt.lineno}
            elif isinstance(stmt, ast.Assign):
                for t in stmt.targets:
                    if isinstance(t, ast.Name):
                        out[t.id] = {"def": "value", "node": stmt.value, "line": stmt.lineno}
            elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
                out[stmt.target.id] = {"def": "value", "node": stmt.value, "line": stmt.lineno}
        self._bindings[module] = out
        return out

    def module_all(self, module: str) -> list[str] | None:
        b = self.bindings(module).get("__all__")
        if b and b.get("def") == "value":
            ok, val = literal(b["node"])
            if ok:
                return list(val)
        return None

    def resolve(self, module: str, name: str, depth: int = 0) -> dict[str, Any]:
        """Follow re-exports to where `name` is defined.

        Returns {"key": "mod:Name"} for a definition found in the wheels,
        {"module": "a.b"} for a module, {"external": "dotted.name"} otherwise,
        or {"missing": True} when the module does not bind the name.
        """
        if depth > 30:
            return {"external": f"{module}.{name}"}
        if self.index.path(module) is None:
            return {"external": f"{module}.{name}"}
        b = self.bindings(module).get(name)
        if b is None:
            sub = f"{module}.{name}"
            if self.index.path(sub):
                return {"module": sub}
            return {"missing": True}
        if "def" in b:
            return {"key": f"{module}:{name}"}
        if "module" in b:
            if self.index.path(b["module"]):
                return {"module": b["module"]}
            return {"external": b["module"]}
        target_mod, target_name = b["import"], b["name"]
        if self.index.path(target_mod) is None:
            return {"external": f"{target_mod}.{target_name}"}
        r = self.resolve(target_mod, target_name, depth + 1)
        if r.get("missing") and self.index.path(f"{target_mod}.{target_name}"):
            return {"module": f"{target_mod}.{target_name}"}
        return r

    def chain(self, module: str, name: str) -> list[str]:
        """Modules a name passes through on its way from its definition to `module`."""
        mods = [module]
        for _ in range(30):
            b = self.bindings(module).get(name)
            if not b or "import" not in b or self.index.path(b["import"]) is None:
                break
            module, name = b["import"], b["name"]
            mods.append(module)
        return mods

    # -- definitions -------------------------------------------------------
    def want(self, key: str) -> None:
        if key not in self.definitions and key not in self._queue:
            self._queue.append(key)

    def run_queue(self) -> None:
        while self._queue:
            key = self._queue.pop(0)
            if key in self.definitions:
                continue
            module, name = key.split(":", 1)
            b = self.bindings(module)[name]
            self.definitions[key] = {"module": module, "name": name, "file": self.index.rel(module), "line": b["line"]}
            if b["def"] == "class":
                self.definitions[key].update(self.class_facts(module, b["node"]))
            elif b["def"] == "function":
                self.definitions[key].update(self.function_facts(module, b["node"], method=False))
            else:
                self.definitions[key].update(self.value_facts(module, name, b["node"]))

    def note_names(self, module: str, node: ast.AST | None) -> None:
        """Record (in the module's namespace) every name an expression uses, so the
        stub can evaluate defaults and preset constructors."""
        if node is None:
            return
        ns = self.namespaces.setdefault(module, {})
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and n.id not in ns:
                r = self.resolve(module, n.id)
                if "key" in r:
                    ns[n.id] = r["key"]
                    self.want(r["key"])
                elif "external" in r:
                    ns[n.id] = "external:" + r["external"]

    def params(self, module: str, fn: ast.FunctionDef | ast.AsyncFunctionDef, drop_first: bool) -> list[dict[str, Any]]:
        a = fn.args
        out: list[dict[str, Any]] = []
        positional = [(p, "POSITIONAL_ONLY") for p in a.posonlyargs] + [(p, "POSITIONAL_OR_KEYWORD") for p in a.args]
        defaults: list[ast.expr | None] = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
        for (p, kind), d in zip(positional, defaults):
            out.append(self.param(module, p, kind, d))
        if a.vararg:
            out.append(self.param(module, a.vararg, "VAR_POSITIONAL", None))
        for p, d in zip(a.kwonlyargs, a.kw_defaults):
            out.append(self.param(module, p, "KEYWORD_ONLY", d))
        if a.kwarg:
            out.append(self.param(module, a.kwarg, "VAR_KEYWORD", None))
        if drop_first and out and out[0]["kind"] in ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD"):
            out = out[1:]
        return out

    def param(self, module: str, p: ast.arg, kind: str, default: ast.expr | None) -> dict[str, Any]:
        rec: dict[str, Any] = {"name": p.arg, "kind": kind, "has_default": default is not None}
        if default is not None:
            rec["default"] = src(default)
            self.note_names(module, default)
        if p.annotation is not None:
            rec["annotation"] = src(p.annotation)
            self.note_annotation(module, p.annotation)
        return rec

    def note_annotation(self, module: str, ann: ast.expr) -> None:
        if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
            try:
                ann = ast.parse(ann.value, mode="eval").body
            except SyntaxError:
                return
        # Only plain names and `A | B | None` unions are used by the stub's checks.
        parts: list[ast.expr] = []

        def flat(n: ast.expr) -> None:
            if isinstance(n, ast.BinOp) and isinstance(n.op, ast.BitOr):
                flat(n.left)
                flat(n.right)
            else:
                parts.append(n)

        flat(ann)
        if all(isinstance(x, ast.Name) or (isinstance(x, ast.Constant) and x.value is None) for x in parts):
            for x in parts:
                if isinstance(x, ast.Name):
                    self.note_names(module, x)

    def function_facts(self, module: str, fn: ast.FunctionDef | ast.AsyncFunctionDef, method: bool) -> dict[str, Any]:
        decos = [src(d) for d in fn.decorator_list]
        static = "staticmethod" in decos
        clsm = "classmethod" in decos
        rec: dict[str, Any] = {"kind": "function", "params": self.params(module, fn, drop_first=method and not static)}
        if method:
            rec["binding"] = "static" if static else "class" if clsm else "instance"
        if fn.returns is not None:
            rec["returns"] = src(fn.returns)
        kwarg = fn.args.kwarg.arg if fn.args.kwarg else None
        if kwarg:
            keys = sorted(string_keys_read(fn, {kwarg}))
            if keys:
                rec["kwargs_keys_read"] = keys
        return rec

    def resolve_expr(self, module: str, node: ast.expr) -> str:
        """Base classes / decorators: a definition key or 'external:dotted'."""
        if isinstance(node, ast.Name):
            r = self.resolve(module, node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            head = self.resolve(module, node.value.id)
            if "module" in head:
                r = self.resolve(head["module"], node.attr)
            elif "external" in head:
                return "external:" + head["external"] + "." + node.attr
            else:
                return "external:" + src(node)
        elif isinstance(node, ast.Subscript):
            return self.resolve_expr(module, node.value)
        else:
            return "external:" + (src(node) or "?")
        if "key" in r:
            self.want(r["key"])
            return r["key"]
        if "external" in r:
            return "external:" + r["external"]
        return "external:" + src(node)

    def class_facts(self, module: str, cls: ast.ClassDef) -> dict[str, Any]:
        bases = [self.resolve_expr(module, b) for b in cls.bases]
        rec: dict[str, Any] = {"kind": "class", "bases": bases}
        for kw in cls.keywords:
            if kw.arg == "metaclass":
                rec["metaclass"] = self.resolve_expr(module, kw.value)
        dc = None
        for d in cls.decorator_list:
            target = d.func if isinstance(d, ast.Call) else d
            name = target.id if isinstance(target, ast.Name) else target.attr if isinstance(target, ast.Attribute) else ""
            if name == "dataclass":
                dc = {"init": True, "eq": True, "frozen": False}
                if isinstance(d, ast.Call):
                    for kw in d.keywords:
                        ok, val = literal(kw.value)
                        if ok:
                            dc[kw.arg] = val
        rec["decorators"] = [src(d) for d in cls.decorator_list]
        if dc is not None:
            rec["dataclass"] = dc

        methods: dict[str, Any] = {}
        properties: dict[str, dict[str, bool]] = {}
        class_attrs: dict[str, Any] = {}
        own_fields: list[dict[str, Any]] = []
        members: list[dict[str, Any]] = []
        instance_attrs: set[str] = set()
        for stmt in cls.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                decos = [src(d) for d in stmt.decorator_list]
                if "property" in decos:
                    properties.setdefault(stmt.name, {"setter": False})
                elif any(d.endswith(".setter") for d in decos):
                    properties.setdefault(stmt.name, {"setter": False})["setter"] = True
                elif stmt.name == "__init__" or not stmt.name.startswith("_") or stmt.name in ("__call__",):
                    methods[stmt.name] = self.function_facts(module, stmt, method=True)
                for n in ast.walk(stmt):
                    targets: list[ast.expr] = []
                    if isinstance(n, ast.Assign):
                        targets = n.targets
                    elif isinstance(n, (ast.AnnAssign, ast.AugAssign)):
                        targets = [n.target]
                    for t in targets:
                        for tt in ast.walk(t):
                            if (
                                isinstance(tt, ast.Attribute)
                                and isinstance(tt.value, ast.Name)
                                and tt.value.id == "self"
                                and isinstance(tt.ctx, ast.Store)
                            ):
                                instance_attrs.add(tt.attr)
            elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                name = stmt.target.id
                ann = src(stmt.annotation) or ""
                if dc is not None and not ann.startswith("ClassVar") and not ann.startswith("typing.ClassVar"):
                    own_fields.append(self.field_facts(module, name, stmt))
                else:
                    class_attrs[name] = src(stmt.value) if stmt.value is not None else None
            elif isinstance(stmt, ast.Assign):
                for t in stmt.targets:
                    if isinstance(t, ast.Name):
                        ok, val = literal(stmt.value)
                        entry = {"name": t.id}
                        if ok:
                            entry["value"] = val
                        else:
                            entry["source"] = src(stmt.value)
                        members.append(entry)
                        class_attrs[t.id] = val if ok else src(stmt.value)
        rec["methods"] = methods
        if any(isinstance(st, ast.FunctionDef) and st.name == "__subclasshook__" for st in cls.body):
            rec["subclasshook"] = True  # isinstance() is duck-typed: the stub does not type-check it
        if properties:
            rec["properties"] = properties
        rec["class_attributes"] = sorted(class_attrs)
        rec["instance_attributes"] = sorted(instance_attrs)
        if dc is not None:
            rec["own_fields"] = own_fields
        rec["_members"] = [m for m in members if not m["name"].startswith("_")]
        return rec

    def field_facts(self, module: str, name: str, stmt: ast.AnnAssign) -> dict[str, Any]:
        f: dict[str, Any] = {"name": name, "annotation": src(stmt.annotation), "has_default": stmt.value is not None}
        self.note_annotation(module, stmt.annotation)
        v = stmt.value
        if v is None:
            return f
        if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "field":
            kws = {kw.arg: kw.value for kw in v.keywords}
            if "default" in kws:
                f["default"] = src(kws["default"])
                self.note_names(module, kws["default"])
            elif "default_factory" in kws:
                fac = kws["default_factory"]
                f["default_factory"] = src(fac)
                self.note_names(module, fac)
            else:
                f["has_default"] = False
        else:
            f["default"] = src(v)
            self.note_names(module, v)
        return f

    def value_facts(self, module: str, name: str, node: ast.expr) -> dict[str, Any]:
        ok, val = literal(node)
        if ok:
            return {"kind": "constant", "value": val}
        self.note_names(module, node)
        rec: dict[str, Any] = {"kind": "expression", "source": src(node, limit=20000)}
        if isinstance(node, ast.Call):
            rec["kind"] = "instance"
            rec["class"] = self.resolve_expr(module, node.func)
        elif isinstance(node, ast.Dict) and all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in node.keys if k is not None) and all(k is not None for k in node.keys):
            if all(isinstance(v, ast.Name) for v in node.values):
                rec["kind"] = "mapping"
                rec["entries"] = {k.value: v.id for k, v in zip(node.keys, node.values)}
                rec.pop("source")
        return rec

    # -- post-processing -----------------------------------------------------
    def finish(self) -> None:
        """Classify enums, compute inherited fields and effective __init__ parameters."""

        def base_keys(key: str) -> list[str]:
            return [b for b in self.definitions[key].get("bases", []) if not b.startswith("external:")]

        def is_enum(key: str, seen: set[str] | None = None) -> bool:
            d = self.definitions[key]
            for b in d.get("bases", []):
                if b.startswith("external:") and b[len("external:"):] in ENUM_BASES:
                    return True
                if not b.startswith("external:") and is_enum(b):
                    return True
            return False

        def mro(key: str) -> list[str]:
            out: list[str] = []

            def walk(k: str) -> None:
                if k in out:
                    return
                out.append(k)
                for b in base_keys(k):
                    walk(b)

            walk(key)
            return out

        for key, d in self.definitions.items():
            if d["kind"] != "class":
                continue
            members = d.pop("_members")
            if is_enum(key):
                d["kind"] = "enum"
                d["enum_style"] = "Enum"
                d["members"] = members
                continue
            simple = (
                members
                and not d["methods"]
                and not d.get("properties")
                and not d.get("dataclass")
                and all(m["name"].isupper() or m["name"][:1].isupper() for m in members)
                and not base_keys(key)
                and all(b in ("external:object",) for b in d["bases"])
            )
            if simple and all("value" in m for m in members) and not d["instance_attributes"]:
                d["kind"] = "enum"
                d["enum_style"] = "constants"
                d["members"] = members
                continue
            d["mro"] = mro(key)
            # Instance attributes set anywhere in the class or its bases.
            attrs: set[str] = set()
            for k in d["mro"]:
                attrs.update(self.definitions[k].get("instance_attributes", []))
            d["instance_attributes"] = sorted(attrs)

        for key, d in self.definitions.items():
            if d["kind"] != "class":
                continue
            if d.get("dataclass"):
                fields: list[dict[str, Any]] = []
                for k in reversed(d["mro"]):
                    for f in self.definitions[k].get("own_fields", []):
                        fields = [x for x in fields if x["name"] != f["name"]] + [f]
                d["fields"] = fields
            init = None
            for k in d["mro"]:
                dk = self.definitions[k]
                if "__init__" in dk["methods"]:
                    init = {"params": dk["methods"]["__init__"]["params"], "from": k}
                    break
                if dk.get("dataclass") and dk["dataclass"].get("init", True):
                    init = {
                        "params": [
                            {"name": f["name"], "kind": "POSITIONAL_OR_KEYWORD", "has_default": f["has_default"],
                             **{k: f[k] for k in ("default", "default_factory", "annotation") if f.get(k)}}
                            for f in d["fields"]
                        ],
                        "from": k + " (dataclass fields)",
                    }
                    break
            if init is None:
                ext = [b for k in d["mro"] for b in self.definitions[k]["bases"] if b.startswith("external:")]
                init = {"params": [], "from": "object" if not ext or all(b in ("external:object", "external:abc.ABC") for b in ext) else "external: " + ", ".join(ext)}
            d["init_params"] = init["params"]
            d["init_from"] = init["from"]


def string_keys_read(node: ast.AST, names: set[str]) -> set[str]:
    """String keys read from a dict held in a variable called one of `names`."""
    keys: set[str] = set()

    def is_target(n: ast.AST) -> bool:
        return isinstance(n, ast.Name) and n.id in names

    for n in ast.walk(node):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("get", "pop", "setdefault"):
            if is_target(n.func.value) and n.args and isinstance(n.args[0], ast.Constant) and isinstance(n.args[0].value, str):
                keys.add(n.args[0].value)
        elif isinstance(n, ast.Subscript) and is_target(n.value):
            if isinstance(n.slice, ast.Constant) and isinstance(n.slice.value, str):
                keys.add(n.slice.value)
        elif isinstance(n, ast.Compare) and len(n.ops) == 1 and isinstance(n.ops[0], (ast.In, ast.NotIn)):
            if is_target(n.comparators[0]) and isinstance(n.left, ast.Constant) and isinstance(n.left.value, str):
                keys.add(n.left.value)
    return keys


# ---------------------------------------------------------------------------
# extra_options keys
# ---------------------------------------------------------------------------
def is_extra_options_expr(n: ast.AST) -> bool:
    if isinstance(n, ast.Name) and n.id in EXTRA_OPTIONS_NAMES:
        return True
    if isinstance(n, ast.Attribute) and n.attr in EXTRA_OPTIONS_NAMES:
        return True
    if isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Constant) and n.slice.value == "extra_options":
        return True
    return False


def const_str(n: ast.AST | None) -> str | None:
    return n.value if isinstance(n, ast.Constant) and isinstance(n.value, str) else None


def scan_extra_options(root: Path, files: list[Path]) -> dict[str, Any]:
    sources: dict[str, list[str]] = {}
    nested: dict[str, set[str]] = {}
    qconfig_all_params: list[str] | None = None

    def add(key: str | None, where: str) -> None:
        if not key or key == "extra_options":
            return
        lst = sources.setdefault(key, [])
        if where not in lst and len(lst) < 4:
            lst.append(where)

    def add_nested(outer: ast.AST, key: str | None) -> None:
        # extra_options["Outer"]["key"] / extra_options.get("Outer", {}).get("key")
        if key is None:
            return
        outer_key = None
        if isinstance(outer, ast.Subscript) and is_extra_options_expr(outer.value):
            outer_key = const_str(outer.slice)
        elif (
            isinstance(outer, ast.Call)
            and isinstance(outer.func, ast.Attribute)
            and outer.func.attr == "get"
            and is_extra_options_expr(outer.func.value)
            and outer.args
        ):
            outer_key = const_str(outer.args[0])
        if outer_key and outer_key != "extra_options":
            nested.setdefault(outer_key, set()).add(key)

    for path in files:
        rel = str(path.relative_to(root))
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for n in ast.walk(tree):
            where_base = f"{rel}:{getattr(n, 'lineno', 0)}"
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("get", "pop", "setdefault"):
                if n.args:
                    key = const_str(n.args[0])
                    if is_extra_options_expr(n.func.value):
                        add(key, f"{where_base} {n.func.attr}")
                    elif n.func.attr == "get":
                        add_nested(n.func.value, key)
            if isinstance(n, ast.Subscript):
                key = const_str(n.slice)
                if is_extra_options_expr(n.value):
                    add(key, f"{where_base} []")
                else:
                    add_nested(n.value, key)
            if isinstance(n, ast.Compare) and len(n.ops) == 1 and isinstance(n.ops[0], (ast.In, ast.NotIn)):
                key = const_str(n.left)
                if is_extra_options_expr(n.comparators[0]):
                    add(key, f"{where_base} in")
                else:
                    add_nested(n.comparators[0], key)
            if isinstance(n, ast.Call):
                for kw in n.keywords:
                    if kw.arg == "extra_options" and isinstance(kw.value, ast.Dict):
                        for k in kw.value.keys:
                            add(const_str(k), f"{where_base} extra_options={{...}}")
            if isinstance(n, (ast.Assign, ast.AnnAssign)):
                targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                for t in targets:
                    if not isinstance(t, ast.Name) or n.value is None:
                        continue
                    lname = t.id.lower()
                    if t.id == "QCONFIG_ALL_PARAMS":
                        ok, val = literal(n.value)
                        if ok:
                            qconfig_all_params = sorted(val)
                        continue
                    # Module tables of user-facing keys: *extra_options* names
                    # (dict keys, list of strings or of (key, ...) tuples) and
                    # print_utils' _QCFG_CATEGORIES (key, default, consumed_by) rows.
                    if "extra_option" in lname or t.id == "_QCFG_CATEGORIES":
                        for k in table_keys(n.value, t.id):
                            add(k, f"{where_base} table {t.id}")
    pascal = {k: v for k, v in sources.items() if k[:1].isupper()}
    internal = sorted(k for k in sources if not k[:1].isupper())
    return {
        "keys": sorted(pascal),
        "sources": {k: pascal[k] for k in sorted(pascal)},
        "lowercase_keys_seen": internal,
        "nested_keys_seen": {k: sorted(v) for k, v in sorted(nested.items()) if k[:1].isupper()},
        "qconfig_all_params": qconfig_all_params,
    }


# Quark's quantizers subclass these onnxruntime classes and hand them the
# extra_options dict, so the keys these files read take effect under Quark too.
ORT_QUANTIZER_FILES = ["base_quantizer.py", "onnx_quantizer.py", "qdq_quantizer.py"]


def extra_options_facts(quark_dir: Path, ort_dir: Path) -> dict[str, Any]:
    quark = scan_extra_options(quark_dir, sorted((quark_dir / "quark" / "onnx").rglob("*.py")))
    ort_files = [ort_dir / "onnxruntime" / "quantization" / f for f in ORT_QUANTIZER_FILES]
    ort = scan_extra_options(ort_dir, [p for p in ort_files if p.is_file()])
    only_ort = [k for k in ort["keys"] if k not in quark["keys"]]
    return {
        "about": "keys Quark's source reads from an extra_options dict (get/pop/setdefault, [K], K in), "
        "keys of extra_options={...} literals (presets), and key tables (*extra_options* names, "
        "print_utils._QCFG_CATEGORIES); PascalCase only. onnxruntime_keys: read by the onnxruntime "
        "quantizer classes Quark subclasses (same ORT version as the onnxruntime section).",
        "keys": quark["keys"],
        "sources": quark["sources"],
        "onnxruntime_files": [str(p.relative_to(ort_dir)) for p in ort_files if p.is_file()],
        "onnxruntime_keys": only_ort,
        "onnxruntime_sources": {k: ort["sources"][k] for k in only_ort},
        "accepted": sorted(set(quark["keys"]) | set(only_ort)),
        "qconfig_all_params": quark["qconfig_all_params"],
        "lowercase_keys_seen": quark["lowercase_keys_seen"],
        "nested_keys_seen": quark["nested_keys_seen"],
    }


def table_keys(node: ast.expr, name: str) -> list[str]:
    out: list[str] = []
    if isinstance(node, ast.Dict):
        out += [k for k in (const_str(k) for k in node.keys) if k]
    elif isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        for e in node.elts:
            if const_str(e):
                out.append(e.value)  # type: ignore[attr-defined]
            elif isinstance(e, ast.Tuple) and e.elts:
                if name == "_QCFG_CATEGORIES" and len(e.elts) == 3 and isinstance(e.elts[2], ast.Tuple):
                    for row in e.elts[2].elts:
                        if isinstance(row, ast.Tuple) and row.elts and const_str(row.elts[0]):
                            out.append(row.elts[0].value)  # type: ignore[attr-defined]
                elif const_str(e.elts[0]):
                    out.append(e.elts[0].value)  # type: ignore[attr-defined]
    return out


# ---------------------------------------------------------------------------
def dist_facts(root: Path, project: str) -> dict[str, Any]:
    """Name and version from the unpacked wheel's *.dist-info, and the wheel's
    sha256 when the .whl file sits beside it."""
    out: dict[str, Any] = {}
    for dist in sorted(root.glob(f"{project}-*.dist-info")):
        meta = dist / "METADATA"
        if meta.is_file():
            for line in meta.read_text(encoding="utf-8", errors="replace").splitlines():
                if line.startswith("Version:"):
                    out["dist_version"] = line.split(":", 1)[1].strip()
                    break
        out["dist_info"] = dist.name
        whl = sorted(root.glob(dist.name[: -len(".dist-info")] + "-*.whl"))
        if whl:
            out["wheel"] = whl[0].name
            out["wheel_sha256"] = hashlib.sha256(whl[0].read_bytes()).hexdigest()
        break
    return out


def read_version(quark_dir: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    vf = quark_dir / "quark" / "version.py"
    if vf.is_file():
        for stmt in ast.parse(vf.read_text()).body:
            if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name):
                ok, val = literal(stmt.value)
                if ok:
                    out[stmt.targets[0].id] = val
        out["version_file"] = "quark/version.py"
    out.update(dist_facts(quark_dir, "amd_quark"))
    return out


def ort_facts(ex: Extractor, ort_dir: Path) -> dict[str, Any]:
    info: dict[str, Any] = {}
    bp = ort_dir / "onnxruntime" / "capi" / "build_and_package_info.py"
    if bp.is_file():
        for stmt in ast.parse(bp.read_text()).body:
            if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id == "__version__":
                info["version"] = ast.literal_eval(stmt.value)
    info.update(dist_facts(ort_dir, "onnxruntime"))
    mod = "onnxruntime.capi.onnxruntime_inference_collection"
    tree = ex.index.tree(mod)
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)} if tree else {}
    sess = classes.get("InferenceSession")
    base = classes.get("Session")
    init = next(n for n in sess.body if isinstance(n, ast.FunctionDef) and n.name == "__init__")
    methods: dict[str, Any] = {}
    for cls in (base, sess):
        if cls is None:
            continue
        for n in cls.body:
            if isinstance(n, ast.FunctionDef) and not n.name.startswith("_"):
                methods[n.name] = {"params": ex.params(mod, n, drop_first=True)}
    kw = sorted(string_keys_read(init, {init.args.kwarg.arg})) if init.args.kwarg else []
    info["InferenceSession"] = {
        "file": ex.index.rel(mod),
        "line": sess.lineno,
        "init_params": ex.params(mod, init, drop_first=True),
        "kwargs_keys_read": kw,
        "methods": methods,
    }
    binary = b""
    capi = ort_dir / "onnxruntime" / "capi"
    for p in list(capi.glob("onnxruntime_pybind11_state*")) + list(capi.glob("libonnxruntime.so*")):
        binary += p.read_bytes()

    def seen(name: str) -> bool:
        return bool(binary) and name.encode() in binary

    info["SessionOptions"] = {
        "source": "hand list (C++ binding): https://onnxruntime.ai/docs/api/python/api_summary.html#sessionoptions",
        "members": {k: {**v, "found_in_binary": seen(k)} for k, v in ORT_SESSION_OPTIONS_MEMBERS.items()},
    }
    info["GraphOptimizationLevel"] = {
        "source": "hand list (C++ binding): https://onnxruntime.ai/docs/api/python/api_summary.html",
        "members": [{"name": m, "value": i, "found_in_binary": seen(m)} for i, m in enumerate(ORT_GRAPH_OPTIMIZATION_LEVELS)],
    }
    info["providers"] = {
        "source": "hand list: https://onnxruntime.ai/docs/execution-providers/",
        "names": [{"name": p, "found_in_binary": seen(p)} for p in ORT_PROVIDERS],
    }
    return info


def main(argv: list[str]) -> int:
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    quark_dir, ort_dir, out = Path(argv[1]).resolve(), Path(argv[2]).resolve(), Path(argv[3])
    if not (quark_dir / "quark" / "onnx" / "__init__.py").is_file():
        print(f"no quark/onnx/__init__.py under {quark_dir}", file=sys.stderr)
        return 2
    ex = Extractor(quark_dir, ort_dir)

    exports: dict[str, dict[str, Any]] = {}
    public_modules: dict[str, dict[str, Any]] = {}
    interesting: dict[str, set[str]] = {}  # exported name -> definition keys
    for entry in ENTRY_MODULES:
        names: dict[str, str] = {}
        missing_all: list[str] = []
        all_names = ex.module_all(entry)
        for local, b in ex.bindings(entry).items():
            if local.startswith("__"):
                continue
            if entry == "quark.onnx" and "def" in b:
                continue  # quark.onnx's __init__ only re-exports
            if entry != "quark.onnx" and local in ("logger",):
                continue
            r = ex.resolve(entry, local)
            if "key" in r:
                names[local] = r["key"]
                ex.want(r["key"])
                interesting.setdefault(local, set()).add(r["key"])
            elif "external" in r and entry != "quark.onnx":
                continue
        for n in all_names or []:
            if n not in names:
                missing_all.append(n)
        exports[entry] = {"file": ex.index.rel(entry), "all": all_names, "all_but_not_bound": missing_all}
        public_modules[entry] = {"file": ex.index.rel(entry), "names": names, "all": all_names}
    for m in FULL_MODULES:
        if ex.index.path(m) is None:
            continue
        names = {}
        for local, b in ex.bindings(m).items():
            if local.startswith("_") or local == "logger":
                continue
            r = ex.resolve(m, local)
            if "key" not in r:
                continue
            if "def" in b or r["key"].split(":")[0].startswith(FULL_IMPORT_PREFIXES):
                names[local] = r["key"]
                ex.want(r["key"])
                interesting.setdefault(local, set()).add(r["key"])
        public_modules[m] = {"file": ex.index.rel(m), "names": names, "all": ex.module_all(m)}
    ex.run_queue()

    # Every module a listed name passes through (and their parent packages) is
    # importable in the stub, exposing the listed names it really binds.
    chain_modules: set[str] = set()
    for entry in ENTRY_MODULES + FULL_MODULES:
        for local in public_modules.get(entry, {}).get("names", {}):
            chain_modules.update(m for m in ex.chain(entry, local) if m.startswith("quark.") or m.startswith("onnxruntime."))
    for key in list(ex.definitions):
        chain_modules.add(key.split(":")[0])
    for m in list(chain_modules):
        parts = m.split(".")
        for i in range(1, len(parts)):
            chain_modules.add(".".join(parts[:i]))
    for m in sorted(chain_modules):
        if m in public_modules or ex.index.path(m) is None:
            continue
        names = {}
        for local in ex.bindings(m):
            if local in interesting:
                r = ex.resolve(m, local)
                if r.get("key") in interesting[local]:
                    names[local] = r["key"]
        public_modules[m] = {"file": ex.index.rel(m), "names": names, "all": ex.module_all(m)}
    ex.run_queue()
    ex.finish()

    # Where get_library_path lives.
    lib = ex.resolve("quark.onnx", LIBRARY_GETTER)
    lib_facts: dict[str, Any] = {"reexported_by": []}
    if "key" in lib:
        lib_facts["module"], lib_facts["name"] = lib["key"].split(":")
        lib_facts["file"] = ex.definitions[lib["key"]]["file"]
        lib_facts["params"] = ex.definitions[lib["key"]]["params"]
        lib_facts["reexported_by"] = [m for m, v in public_modules.items() if v["names"].get(LIBRARY_GETTER) == lib["key"] and m != lib_facts["module"]]

    def find(name: str, module_hint: str) -> str:
        for k in ex.definitions:
            if k.endswith(":" + name) and k.startswith(module_hint):
                return k
        raise SystemExit(f"{name} not found")

    qc = find("QuantizationConfig", "quark.onnx.quantization.config")
    cfg = find("Config", "quark.onnx.quantization.config.config")
    mq = find("ModelQuantizer", "quark.onnx.quantization")
    qconf = find("QConfig", "quark.onnx.quantization.config.config")

    cc_mod = "quark.onnx.quantization.config.custom_config"
    mapping_key = f"{cc_mod}:DefaultConfigMapping"
    presets = {}
    if mapping_key in ex.definitions and ex.definitions[mapping_key]["kind"] == "mapping":
        for preset, var in ex.definitions[mapping_key]["entries"].items():
            d = ex.definitions.get(f"{cc_mod}:{var}", {})
            presets[preset] = {"variable": var, "class": d.get("class"), "line": d.get("line")}

    facts: dict[str, Any] = {
        "schema": SCHEMA,
        "generated_by": "tests/quark_stub/extract_signatures.py",
        "quark": read_version(quark_dir),
        "exports": exports,
        "modules": public_modules,
        "namespaces": {m: dict(sorted(ns.items())) for m, ns in sorted(ex.namespaces.items())},
        "definitions": {k: ex.definitions[k] for k in sorted(ex.definitions)},
        "summary": {
            "legacy_quantization_config": {"key": qc, "fields": [f["name"] for f in ex.definitions[qc]["fields"]]},
            "config": {"key": cfg, "fields": [f["name"] for f in ex.definitions[cfg]["fields"]]},
            "qconfig": {
                "key": qconf,
                "dataclass": ex.definitions[qconf].get("dataclass"),
                "fields": [f["name"] for f in ex.definitions[qconf].get("fields", [])],
                "init_params": [p["name"] for p in ex.definitions[qconf]["init_params"]],
            },
            "model_quantizer": {
                "key": mq,
                "init_params": ex.definitions[mq]["init_params"],
                "quantize_model_params": ex.definitions[mq]["methods"]["quantize_model"]["params"],
            },
            "presets": presets,
            "get_library_path": lib_facts,
        },
        "extra_options": extra_options_facts(quark_dir, ort_dir),
        "onnxruntime": ort_facts(ex, ort_dir),
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(facts, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    print(f"wrote {out}: {len(ex.definitions)} definitions, {len(public_modules)} modules, "
          f"{len(facts['extra_options']['keys'])} extra_options keys, {len(presets)} presets")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
