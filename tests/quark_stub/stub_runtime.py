"""Run-time half of the Quark / onnxruntime / numpy stand-ins.

make_stubs.py copies this file to OUT_DIR/_quark_stub/runtime.py beside the
facts JSON (OUT_DIR/_quark_stub/facts.json), and writes tiny package files
(quark/onnx/__init__.py, onnxruntime/__init__.py, numpy/__init__.py, ...) that
call into it.  Only the standard library is used.

Every refusal raises an exception whose message starts with "quark-stub:".
"""

from __future__ import annotations

import ast
import builtins
import collections.abc
import copy
import enum
import functools
import inspect
import json
import math
import os
import re
import struct
import sys
import zipfile
from typing import Any

PREFIX = "quark-stub: "
HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "facts.json"), encoding="utf-8") as _f:
    FACTS: dict[str, Any] = json.load(_f)

DEFS: dict[str, dict[str, Any]] = FACTS["definitions"]
MODULES: dict[str, dict[str, Any]] = FACTS["modules"]
NAMESPACES: dict[str, dict[str, str]] = FACTS["namespaces"]
QUARK_VERSION = FACTS["quark"].get("__version__", "?")
QUARK_COMMIT = FACTS["quark"].get("git_version")
ORT = FACTS["onnxruntime"]
EXTRA_KEYS = set(FACTS["extra_options"]["accepted"])
QCONFIG_ALL_PARAMS = set(FACTS["extra_options"].get("qconfig_all_params") or [])
LIBRARY_PATH = os.path.join(HERE, "libcustom_ops_stub.so")
TAG = f"Quark {QUARK_VERSION}" + (f" @{QUARK_COMMIT}" if QUARK_COMMIT else "")


def stub_error(exc_type: type[BaseException], msg: str) -> BaseException:
    return exc_type(PREFIX + msg)


def where(key: str) -> str:
    d = DEFS.get(key, {})
    tag = f"onnxruntime {FACTS['onnxruntime'].get('version')}" if key.startswith("onnxruntime:") else TAG
    return f"{d.get('file', '?')}:{d.get('line', '?')}, {tag}"


def log_call(what: str, **info: Any) -> None:
    """Append one JSON line per stub call to $QUARK_STUB_LOG (when set)."""
    path = os.environ.get("QUARK_STUB_LOG")
    if not path:
        return
    rec = {"call": what, **{k: _jsonable(v) for k, v in info.items()}}
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(rec, sort_keys=True) + "\n")


def _jsonable(v: Any, depth: int = 0) -> Any:
    if depth > 6:
        return repr(v)
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, enum.Enum):
        return f"{type(v).__name__}.{v.name}"
    if isinstance(v, (list, tuple)):
        return [_jsonable(x, depth + 1) for x in v]
    if isinstance(v, dict):
        return {str(_jsonable(k, depth + 1)): _jsonable(x, depth + 1) for k, x in v.items()}
    if isinstance(v, type):
        return v.__name__
    if isinstance(v, StubObject):
        return {"__class__": type(v).__name__, **{k: _jsonable(x, depth + 1) for k, x in vars(v).items() if not k.startswith("_qs")}}
    return repr(v)


# ---------------------------------------------------------------------------
# Name resolution: definition keys ("module:Name") -> stub objects
# ---------------------------------------------------------------------------
_built: dict[str, Any] = {}
_building: set[str] = set()


class ModuleNamespace(collections.abc.Mapping):
    """Names visible in a Quark module, for evaluating defaults and presets."""

    def __init__(self, module: str):
        self.module = module

    def __getitem__(self, name: str) -> Any:
        target = NAMESPACES.get(self.module, {}).get(name) or MODULES.get(self.module, {}).get("names", {}).get(name)
        if target is None:
            key = f"{self.module}:{name}"
            if key in DEFS:
                target = key
        if target is None or target.startswith("external:"):
            raise KeyError(name)
        return obtain(target)

    def __iter__(self):
        return iter(NAMESPACES.get(self.module, {}))

    def __len__(self) -> int:
        return len(NAMESPACES.get(self.module, {}))


def evaluate(module: str, source: str) -> Any:
    return eval(source, {"__builtins__": builtins}, ModuleNamespace(module))  # noqa: S307 - our own facts


def obtain(key: str) -> Any:
    if key in _built:
        return _built[key]
    if key not in DEFS:
        raise stub_error(AttributeError, f"no definition {key} in the facts ({TAG})")
    if key in _building:
        raise stub_error(RuntimeError, f"circular definition while building {key}")
    _building.add(key)
    try:
        d = DEFS[key]
        kind = d["kind"]
        if kind == "enum":
            obj = make_enum(key, d)
        elif kind == "class":
            obj = make_class(key, d)
        elif kind == "function":
            obj = make_function(key, d)
        elif kind == "constant":
            obj = copy.deepcopy(d["value"])
        elif kind == "mapping":
            obj = PresetMapping(key, d)
        else:  # instance / expression
            try:
                obj = evaluate(d["module"], d["source"])
            except Exception as e:
                if str(e).startswith(PREFIX):
                    raise stub_error(type(e), f"building {d['name']} ({where(key)}) from its source failed: {str(e)[len(PREFIX):]}") from e
                raise stub_error(RuntimeError, f"cannot build {d['name']} ({where(key)}): {type(e).__name__}: {e}") from e
        _built[key] = obj
        return obj
    finally:
        _building.discard(key)


class PresetMapping(dict):
    """DefaultConfigMapping: built entry by entry on first use."""

    def __init__(self, key: str, d: dict[str, Any]):
        super().__init__()
        self._entries = d["entries"]
        self._module = d["module"]
        for name in self._entries:
            dict.__setitem__(self, name, None)

    def __getitem__(self, name: str) -> Any:
        if name not in self._entries:
            raise KeyError(name)
        value = dict.__getitem__(self, name)
        if value is None:
            value = obtain(f"{self._module}:{self._entries[name]}")
            dict.__setitem__(self, name, value)
        return value

    def values(self):  # type: ignore[override]
        return [self[k] for k in self._entries]

    def items(self):  # type: ignore[override]
        return [(k, self[k]) for k in self._entries]

    def get(self, name: str, default: Any = None) -> Any:
        return self[name] if name in self._entries else default


# ---------------------------------------------------------------------------
# Enums
# ---------------------------------------------------------------------------
class StubEnumMeta(enum.EnumMeta):
    def __getattr__(cls, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        members = ", ".join(cls.__members__)
        raise stub_error(AttributeError, f"{cls.__name__} has no member '{name}' (members: {members}; {where(cls._qs_key)})")


class StubEnum(enum.Enum, metaclass=StubEnumMeta):
    pass


class ConstantsMeta(type):
    def __getattr__(cls, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        raise stub_error(AttributeError, f"{cls.__name__} has no member '{name}' (members: {', '.join(cls._qs_members)}; {where(cls._qs_key)})")


def make_enum(key: str, d: dict[str, Any]) -> Any:
    members = d.get("members", [])
    if d.get("enum_style") == "constants":
        ns = {m["name"]: m.get("value") for m in members}
        ns.update({"_qs_key": key, "_qs_members": [m["name"] for m in members], "__module__": d["module"]})
        return ConstantsMeta(d["name"], (), ns)
    pairs = []
    for i, m in enumerate(members):
        value = m.get("value", f"<{m.get('source', i)}>")
        pairs.append((m["name"], value))
    cls = StubEnum(d["name"], pairs, module=d["module"], qualname=d["name"])
    type.__setattr__(cls, "_qs_key", key)
    return cls


# ---------------------------------------------------------------------------
# Signatures, defaults and annotation checks
# ---------------------------------------------------------------------------
class _Missing:
    def __repr__(self) -> str:
        return "<default>"


MISSING = _Missing()


def make_signature(params: list[dict[str, Any]]) -> inspect.Signature:
    out = []
    for p in params:
        kind = getattr(inspect.Parameter, p["kind"])
        default = MISSING if p.get("has_default") else inspect.Parameter.empty
        if kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            default = inspect.Parameter.empty
        out.append(inspect.Parameter(p["name"], kind, default=default))
    return inspect.Signature(out)


def describe_signature(name: str, params: list[dict[str, Any]]) -> str:
    parts = []
    star = False
    for p in params:
        if p["kind"] == "KEYWORD_ONLY" and not star:
            parts.append("*")
            star = True
        prefix = {"VAR_POSITIONAL": "*", "VAR_KEYWORD": "**"}.get(p["kind"], "")
        star = star or p["kind"] == "VAR_POSITIONAL"
        parts.append(prefix + p["name"] + ("=..." if p.get("has_default") else ""))
    return f"{name}({', '.join(parts)})"


def bind(key: str, label: str, params: list[dict[str, Any]], args: tuple, kwargs: dict) -> inspect.BoundArguments:
    sig = make_signature(params)
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as e:
        raise stub_error(TypeError, f"{label}: {e} (real signature {describe_signature(label, params)} at {where(key)})") from None
    return bound


def default_value(module: str, p: dict[str, Any]) -> Any:
    if "default_factory" in p:
        try:
            return evaluate(module, p["default_factory"])()
        except Exception:
            return None
    src = p.get("default")
    if src is None:
        return None
    try:
        return copy.deepcopy(evaluate(module, src))
    except Exception:
        try:
            return ast.literal_eval(src)
        except Exception:
            return None


def annotation_classes(module: str, ann: str | None) -> tuple[tuple[type, ...], bool] | None:
    """For annotations like `A`, `A | B | None`: the stub classes and whether None is allowed.
    None when the annotation cannot be checked (builtins, generics, external types)."""
    if not ann:
        return None
    ann = ann.strip()
    if len(ann) >= 2 and ann[0] == ann[-1] and ann[0] in "'\"":
        ann = ann[1:-1]
    if any(c in ann for c in "[]()'\","):
        return None
    classes: list[type] = []
    allow_none = False
    for part in (x.strip() for x in ann.split("|")):
        if part == "None":
            allow_none = True
            continue
        if not re.fullmatch(r"[A-Za-z_]\w*", part):
            return None
        try:
            obj = ModuleNamespace(module)[part]
        except KeyError:
            return None
        if not isinstance(obj, type) or getattr(obj, "_qs_duck_typed", False):
            return None
        classes.append(obj)
    if not classes:
        return None
    return tuple(classes), allow_none


def check_annotation(key: str, label: str, name: str, ann: str | None, value: Any) -> None:
    if value is MISSING:
        return
    d = DEFS.get(key, {})
    spec = annotation_classes(d.get("module", ""), ann)
    if spec is None:
        return
    classes, allow_none = spec
    if value is None and allow_none:
        return
    if isinstance(value, classes):
        return
    # The legacy QuantizationConfig's calibrate_method is annotated
    # CalibrationMethod | PowerOfTwoMethod, but api.py hands it on unchanged to
    # quantize_static, whose annotation (quantizers/interface.py) and code also
    # take LayerWiseMethod: a dataclass does not enforce its annotations.
    if name == "calibrate_method" and isinstance(value, enum.Enum) and type(value).__name__ == "LayerWiseMethod":
        return
    got = type(value).__name__ if not isinstance(value, type) else f"the class {value.__name__}"
    if isinstance(value, enum.Enum):
        got = f"{type(value).__name__}.{value.name}"
    raise stub_error(TypeError, f"{label}: {name} must be {ann}, got {got} ({where(key)})")


# ---------------------------------------------------------------------------
# Classes
# ---------------------------------------------------------------------------
class StubObject:
    """Base of every generated Quark class.  Checks only apply to the generated
    classes themselves: a script's own subclass (a CalibrationDataReader, say)
    behaves like a normal Python class."""

    _qs_key = ""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        cls = type(self)
        key = _generated_base(cls)._qs_key
        d = DEFS[key]
        label = d["name"]
        bound = bind(key, label, d["init_params"], args, kwargs)
        log_call(f"{d['module']}.{d['name']}", arguments=dict(bound.arguments))
        values: dict[str, Any] = {}
        for p in d["init_params"]:
            if p["kind"] in ("VAR_POSITIONAL", "VAR_KEYWORD"):
                values[p["name"]] = bound.arguments.get(p["name"], () if p["kind"] == "VAR_POSITIONAL" else {})
                continue
            v = bound.arguments.get(p["name"], MISSING)
            check_annotation(key, label, p["name"], p.get("annotation"), v)
            if v is MISSING:
                v = default_value(_param_module(key, d), p)
            values[p["name"]] = v
        settable = _settable(key)
        if d.get("dataclass"):
            for f in d.get("fields", []):
                if f["name"] in values:
                    object.__setattr__(self, f["name"], values[f["name"]])
                elif f.get("has_default"):
                    object.__setattr__(self, f["name"], default_value(d["module"], f))
        for name, v in values.items():
            if name in settable and name not in vars(self):
                object.__setattr__(self, name, v)
        hook = INIT_HOOKS.get(d["name"])
        if hook:
            hook(self, values)

    def __setattr__(self, name: str, value: Any) -> None:
        cls = type(self)
        if "_qs_key" not in cls.__dict__ or name.startswith("_qs"):
            object.__setattr__(self, name, value)
            return
        key = cls._qs_key
        d = DEFS[key]
        if name not in _settable(key):
            what = "field" if d.get("dataclass") else "attribute"
            known = sorted(_settable(key))
            raise stub_error(AttributeError, f"{d['name']} has no {what} '{name}' (known: {', '.join(known)}; {where(key)})")
        for f in d.get("fields", []):
            if f["name"] == name:
                check_annotation(key, f"{d['name']}.{name}", name, f.get("annotation"), value)
        object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        cls = type(self)
        if name.startswith("__") or "_qs_key" not in cls.__dict__:
            raise AttributeError(name)
        key = cls._qs_key
        if name in _settable(key):
            return None  # set by Quark's code, not modelled by the stub
        d = DEFS[key]
        raise stub_error(AttributeError, f"'{d['name']}' object has no attribute '{name}' ({where(key)})")

    def __repr__(self) -> str:
        cls = type(self)
        items = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.startswith("_qs"))
        return f"{cls.__name__}({items})"

    def __eq__(self, other: Any) -> bool:
        # Like the real classes: dataclass(eq=True) compares fields, others identity.
        if _dataclass_eq(type(self)):
            if type(self) is not type(other):
                return NotImplemented
            return {k: v for k, v in vars(self).items() if not k.startswith("_qs")} == {
                k: v for k, v in vars(other).items() if not k.startswith("_qs")}
        return self is other

    def __hash__(self) -> int:
        if _dataclass_eq(type(self)):
            raise stub_error(TypeError, f"unhashable type: '{type(self).__name__}' (a dataclass with eq=True, as in Quark)")
        return id(self)


def _dataclass_eq(cls: type) -> bool:
    key = getattr(cls, "_qs_key", "")
    dc = DEFS.get(key, {}).get("dataclass") if key else None
    return bool(dc and dc.get("eq", True) and not dc.get("frozen", False))


def _generated_base(cls: type) -> type:
    for c in cls.__mro__:
        if "_qs_key" in c.__dict__ and c.__dict__["_qs_key"]:
            return c
    raise TypeError(cls)


def _param_module(key: str, d: dict[str, Any]) -> str:
    src = d.get("init_from", "")
    return src.split(":")[0] if ":" in src else d["module"]


@functools.lru_cache(maxsize=None)
def _settable(key: str) -> frozenset[str]:
    d = DEFS[key]
    names = set(d.get("instance_attributes", []))
    names.update(f["name"] for f in d.get("fields", []))
    for k in d.get("mro", [key]):
        dk = DEFS.get(k, {})
        names.update(n for n, p in dk.get("properties", {}).items() if p.get("setter"))
        names.update(dk.get("class_attributes", []))
    return frozenset(names)


def make_class(key: str, d: dict[str, Any]) -> type:
    bases = tuple(obtain(b) for b in d.get("bases", []) if not b.startswith("external:") and DEFS.get(b, {}).get("kind") == "class")
    if not bases:
        bases = (StubObject,)
    ns: dict[str, Any] = {"_qs_key": key, "__module__": d["module"], "__qualname__": d["name"]}
    if d.get("subclasshook"):
        ns["_qs_duck_typed"] = True
    ns["__doc__"] = f"Stand-in for {d['module']}.{d['name']} ({where(key)})."
    for mname, m in d.get("methods", {}).items():
        if mname == "__init__":
            continue
        ns[mname] = make_method(key, d, mname, m)
    for pname in d.get("properties", {}):
        ns[pname] = property(lambda self: None)
    cls = type(d["name"], bases, ns)
    try:
        cls.__signature__ = make_signature(d["init_params"])  # type: ignore[attr-defined]
    except (ValueError, TypeError):
        pass
    return cls


def make_method(key: str, d: dict[str, Any], mname: str, m: dict[str, Any]) -> Any:
    label = f"{d['name']}.{mname}"
    params = m["params"]
    hook = METHOD_HOOKS.get(label)

    def method(*args: Any, **kwargs: Any) -> Any:
        if m.get("binding") == "instance":
            self, args = args[0], args[1:]
        else:
            self = None
        bound = bind(key, label, params, args, kwargs)
        for p in params:
            check_annotation(key, label, p["name"], p.get("annotation"), bound.arguments.get(p["name"], MISSING))
        log_call(f"{d['module']}.{label}", arguments=dict(bound.arguments))
        if hook:
            return hook(self, bound)
        return None

    method.__name__ = mname
    method.__qualname__ = label
    if m.get("binding") == "static":
        return staticmethod(method)
    if m.get("binding") == "class":
        return classmethod(lambda cls, *a, **k: method(*a, **k))
    return method


def make_function(key: str, d: dict[str, Any]) -> Any:
    label = d["name"]
    params = d["params"]
    hook = FUNCTION_HOOKS.get(label)

    def function(*args: Any, **kwargs: Any) -> Any:
        bound = bind(key, label, params, args, kwargs)
        for p in params:
            check_annotation(key, label, p["name"], p.get("annotation"), bound.arguments.get(p["name"], MISSING))
        log_call(f"{d['module']}.{label}", arguments=dict(bound.arguments))
        if hook:
            return hook(bound)
        return None

    function.__name__ = label
    function.__qualname__ = label
    function.__module__ = d["module"]
    function.__signature__ = make_signature(params)  # type: ignore[attr-defined]
    return function


# ---------------------------------------------------------------------------
# Quark behaviour that the checks need
# ---------------------------------------------------------------------------
def _def_named(name: str, module_prefix: str = "quark.onnx") -> str:
    for k in DEFS:
        if k.endswith(":" + name) and k.startswith(module_prefix):
            return k
    raise KeyError(name)


def cls_named(name: str, module_prefix: str = "quark.onnx") -> type:
    return obtain(_def_named(name, module_prefix))


def _qconfig_init(self: Any, values: dict[str, Any]) -> None:
    # config.py: `self.x = x or {}` ... and **kwargs become extra_options.
    object.__setattr__(self, "specific_layer_config", values.get("specific_layer_config") or {})
    object.__setattr__(self, "layer_type_config", values.get("layer_type_config") or {})
    object.__setattr__(self, "exclude", values.get("exclude") or [])
    object.__setattr__(self, "algo_config", values.get("algo_config") or [])
    object.__setattr__(self, "extra_options", dict(values.get("kwargs") or {}))


INIT_HOOKS: dict[str, Any] = {"QConfig": _qconfig_init}


def effective_extra_options(config: Any) -> tuple[dict[str, Any], str]:
    Config = cls_named("Config")
    QConfig = cls_named("QConfig")
    if isinstance(config, Config):
        gq = config.global_quant_config
        eo = gq.extra_options
        if not isinstance(eo, dict):
            raise stub_error(TypeError, f"QuantizationConfig.extra_options must be a dict, got {type(eo).__name__}")
        return eo, "QuantizationConfig.extra_options"
    eo = dict(config.extra_options)
    if "extra_options" in eo:
        nested = eo.pop("extra_options")
        if nested is not None and not isinstance(nested, dict):
            raise stub_error(TypeError, "QConfig(extra_options=...) must be a dict (maps.py _check_q_config asserts it)")
        eo.update(nested or {})
    else:
        for k in eo:
            print(f"{PREFIX}warning: QConfig keyword {k}= outside extra_options={{...}} (Quark warns: deprecated direct usage)", file=sys.stderr)
    return eo, "QConfig extra_options"


def check_extra_options(config: Any, when: str) -> dict[str, Any]:
    eo, label = effective_extra_options(config)
    bad = [k for k in eo if k not in EXTRA_KEYS]
    direct = [k for k in bad if isinstance(config, cls_named("QConfig")) and k in config.extra_options]
    if direct:
        raise stub_error(TypeError, f"{when}: QConfig got keyword argument{'s' if len(direct) > 1 else ''} "
                         f"{', '.join(repr(k) for k in direct)}: not a QConfig parameter "
                         f"({', '.join(p['name'] for p in DEFS[_def_named('QConfig')]['init_params'] if p['kind'] != 'VAR_KEYWORD')}) "
                         f"and not an extra option {TAG}'s source reads (QConfig(**kwargs) become extra_options)")
    if bad:
        raise stub_error(ValueError,
                         f"{when}: unknown extra_options key{'s' if len(bad) > 1 else ''} {', '.join(repr(k) for k in bad)} "
                         f"in {label}: {TAG}'s quark/onnx source never reads {'them' if len(bad) > 1 else 'it'}")
    check_providers(eo.get("ExecutionProviders"), f"{when}: extra_options['ExecutionProviders']")
    if isinstance(config, cls_named("Config")):
        check_providers(config.global_quant_config.execution_providers, f"{when}: QuantizationConfig.execution_providers")
    if isinstance(config, cls_named("QConfig")) and QCONFIG_ALL_PARAMS:
        for k in eo:
            if k not in QCONFIG_ALL_PARAMS:
                print(f"{PREFIX}warning: {k} is not in QCONFIG_ALL_PARAMS (Quark logs '{k} is an invalid parameter in QCONFIG')", file=sys.stderr)
    return eo


def check_providers(value: Any, label: str) -> None:
    if value is None:
        return
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise stub_error(TypeError, f"{label} must be a list of provider names, got {value!r}")
    for p in value:
        if p not in ORT_PROVIDERS:
            raise stub_error(ValueError, f"{label}: unknown execution provider {p!r} (known: {', '.join(ORT_PROVIDERS)})")


def qconfig_quant_format(config: Any) -> str:
    """maps.py _map_q_config: QuantFormat.QDQ when activations and weights are both
    Int8/UInt8, else ExtendedQuantFormat.QDQ (information for tests, not a check)."""
    g = config.global_config
    act = g.input_tensors if g.input_tensors is not None else g.activation
    plain = (cls_named("Int8"), cls_named("UInt8"))
    if act is not None and g.weight is not None and act.data_type in plain and g.weight.data_type in plain:
        return "QuantFormat.QDQ"
    return "ExtendedQuantFormat.QDQ"


# Integer Q/DQ are standard ONNX (or com.microsoft for 16/32-bit zero points,
# which ONNX Runtime runs); every float and block format is written with Quark's
# own com.amd.quark ops (quantizers/extended_quantizer.py _create_customqdq_nodes),
# which ONNX Runtime loads only with Quark's custom-op library registered.
_INTEGER_TYPES = {"Int8", "UInt8", "Int16", "UInt16", "Int32", "UInt32", "Int4", "UInt4"}
_INTEGER_QUANT_TYPES = {"QInt8", "QUInt8", "QInt16", "QUInt16", "QInt32", "QUInt32", "QInt4", "QUInt4"}


def needs_custom_ops(config: Any) -> bool:
    QConfig = cls_named("QConfig")
    if isinstance(config, QConfig):
        g = config.global_config
        act = g.input_tensors if g.input_tensors is not None else g.activation
        for spec in (act, g.weight):
            dt = getattr(spec, "data_type", None)
            if dt is not None and getattr(dt, "__name__", str(dt)) not in _INTEGER_TYPES:
                return True
        return False
    q = config.global_quant_config
    if getattr(q, "use_dynamic_quant", False):
        return False
    for t in (q.activation_type, q.weight_type):
        name = getattr(t, "name", str(t)).split(".")[-1]
        if name not in _INTEGER_QUANT_TYPES:
            return True
    return False


def warn_scale_calibration(config: Any) -> None:
    """maps.py _map_q_config logs these ("deployment cannot proceed"); the stand-in warns too."""
    g = config.global_config
    ScaleType, CalibMethod = cls_named("ScaleType"), cls_named("CalibMethod")
    for part in ("input_tensors", "weight"):
        spec = getattr(g, part, None)
        if spec is None:
            continue
        st, cm = spec.scale_type, spec.calibration_method
        if st == ScaleType.Float32 and cm == CalibMethod.MinMSE:
            print(f"{PREFIX}warning: {part}: Quark warns that CalibMethod.MinMSE with ScaleType.Float32 cannot be deployed", file=sys.stderr)
        if st == ScaleType.PowerOf2 and cm not in (CalibMethod.MinMSE, CalibMethod.MinMax):
            print(f"{PREFIX}warning: {part}: Quark warns that ScaleType.PowerOf2 needs CalibMethod.MinMSE or MinMax", file=sys.stderr)


def check_qconfig(config: Any, when: str) -> None:
    """What maps.py's _check_global_config / _check_qlayer_config enforce, plus types."""
    QLayerConfig = cls_named("QLayerConfig")
    QTensorConfig = cls_named("QTensorConfig")
    AlgoConfig = cls_named("AlgoConfig")
    g = config.global_config
    if not isinstance(g, QLayerConfig):
        raise stub_error(TypeError, f"{when}: QConfig.global_config must be a QLayerConfig, got {type(g).__name__}")
    for part in ("input_tensors", "activation", "weight", "bias", "output_tensors"):
        v = getattr(g, part, None)
        if v is not None and not isinstance(v, QTensorConfig):
            raise stub_error(TypeError, f"{when}: QLayerConfig.{part} must be a QTensorConfig spec, got {type(v).__name__}")
    if g.activation is not None and g.input_tensors is not None:
        raise stub_error(ValueError, f"{when}: Both `activation` and `input_tensors` are provided. Please just use `input_tensors`. (maps.py)")
    if g.activation is None and g.input_tensors is None:
        raise stub_error(ValueError, f"{when}: You must specify `input_tensors`. (maps.py)")
    if g.weight is None:
        raise stub_error(ValueError, f"{when}: You must specify either `weight`. (maps.py)")
    for a in config.algo_config or []:
        if not isinstance(a, AlgoConfig):
            raise stub_error(TypeError, f"{when}: QConfig.algo_config items must be AlgoConfig objects, got {type(a).__name__}")
    check_exclude(config.exclude, "QConfig.exclude", when, allow_strings=True)
    if when.endswith("quantize_model"):
        warn_scale_calibration(config)
    for table in ("specific_layer_config", "layer_type_config"):
        for k, v in (getattr(config, table) or {}).items():
            if k is not None and not isinstance(k, QLayerConfig):
                raise stub_error(TypeError, f"{when}: QConfig.{table} keys must be QLayerConfig (or None), got {type(k).__name__}")
            if k is not None and k.activation is not None and k.input_tensors is None:
                raise stub_error(ValueError, f"{when}: QConfig.{table}: The api `activation` has been replaced with `input_tensors` (maps.py _check_qlayer_config)")
            if not isinstance(v, list):
                raise stub_error(TypeError, f"{when}: QConfig.{table} values must be lists of names, got {type(v).__name__}")


def check_exclude(items: Any, label: str, when: str, allow_strings: bool) -> None:
    """maps.py sends str items to nodes_to_exclude and *tuple* items to
    subgraphs_to_exclude (anything else is dropped); quant_utils.match_subgraphs
    then reads a tuple as (start_node_names, end_node_names), two lists."""
    if items is None:
        return
    if not isinstance(items, list):
        raise stub_error(TypeError, f"{when}: {label} must be a list, got {type(items).__name__}")
    for item in items:
        if isinstance(item, str) and allow_strings:
            continue
        if isinstance(item, tuple):
            if len(item) == 2 and all(isinstance(x, list) and all(isinstance(n, str) for n in x) for x in item):
                continue
            raise stub_error(TypeError, f"{when}: {label} subgraph {item!r} must be a tuple of two lists of node names "
                             "([start names], [end names]); quant_utils.match_subgraphs iterates each part")
        kind = "a node name (str) or " if allow_strings else ""
        raise stub_error(TypeError, f"{when}: {label} item {item!r} is not {kind}a ([start], [end]) tuple "
                         "(maps.py keeps only str and tuple items)")


def _check_config(self: Any, when: str) -> None:
    config = self._qs_config
    if isinstance(config, cls_named("QConfig")):
        check_qconfig(config, when)
    else:
        q = config.global_quant_config
        check_exclude(q.subgraphs_to_exclude, "QuantizationConfig.subgraphs_to_exclude", when, allow_strings=False)
        for n in q.nodes_to_exclude or []:
            if not isinstance(n, str):
                raise stub_error(TypeError, f"{when}: QuantizationConfig.nodes_to_exclude items must be node names (str), got {n!r}")
    check_extra_options(config, when)


def _model_quantizer_init(self: Any, values: dict[str, Any]) -> None:
    config = values["config"]
    Config, QConfig = cls_named("Config"), cls_named("QConfig")
    if not isinstance(config, (Config, QConfig)):
        raise stub_error(ValueError, f"ModelQuantizer: quantization config must be one of Config and QConfig, got {type(config).__name__} (api.py)")
    if isinstance(config, Config) and not isinstance(config.global_quant_config, cls_named("QuantizationConfig")):
        raise stub_error(TypeError, f"ModelQuantizer: Config.global_quant_config must be a QuantizationConfig, got {type(config.global_quant_config).__name__}")
    object.__setattr__(self, "_qs_config", config)
    object.__setattr__(self, "config", config.global_quant_config if isinstance(config, Config) else config)
    _check_config(self, "ModelQuantizer(config)")


INIT_HOOKS["ModelQuantizer"] = _model_quantizer_init


def _path_like(v: Any) -> bool:
    return isinstance(v, (str, os.PathLike))


def write_model(path: Any, called: str, info: dict[str, Any]) -> None:
    path = os.fspath(path)
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise stub_error(FileNotFoundError, f"{called}: the output folder {parent} does not exist")
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"quark_stub": True, "called": called, "quark": TAG, **{k: _jsonable(v) for k, v in info.items()}}, f, indent=1, sort_keys=True)


def _quantize_model(self: Any, bound: inspect.BoundArguments) -> Any:
    a = bound.arguments
    when = "ModelQuantizer.quantize_model"
    _check_config(self, when)
    config = self._qs_config
    QConfig, AlgoConfig = cls_named("QConfig"), cls_named("AlgoConfig")
    model_input = a.get("model_input")
    if _path_like(model_input) and not os.path.exists(model_input):
        raise stub_error(FileNotFoundError, f"{when}: Input model file {model_input} does not exist.")
    cdp = a.get("calibration_data_path")
    if cdp is not None and not os.path.isdir(cdp):
        raise stub_error(NotADirectoryError, f"{when}: calibration_data_path {cdp!r} is not an existing directory")
    algorithms = a.get("algorithms")
    if isinstance(config, QConfig):
        if algorithms:
            raise stub_error(ValueError, f"{when}: algorithms= is ignored with a QConfig (api.py uses config.algo_config); put them in QConfig(algo_config=[...])")
        algorithms = config.algo_config
    for alg in algorithms or []:
        if not isinstance(alg, AlgoConfig):
            raise stub_error(TypeError, f"{when}: algorithms items must be AlgoConfig objects (CLEConfig(), ...), got {type(alg).__name__}")
    eo, _ = effective_extra_options(config)
    info = {
        "config": type(config).__name__,
        "model_input": model_input if _path_like(model_input) else type(model_input).__name__,
        "calibration_data_path": cdp,
        "calibration_data_reader": type(a.get("calibration_data_reader")).__name__ if a.get("calibration_data_reader") is not None else None,
        "algorithms": [type(x).__name__ for x in algorithms or []],
        "extra_options": eo,
    }
    if isinstance(config, QConfig):
        info["global_config"] = config.global_config
        info["exclude"] = config.exclude
        info["quant_format_hint"] = qconfig_quant_format(config)
    else:
        info["quantization_config"] = config.global_quant_config
        info["quant_format_hint"] = _jsonable(config.global_quant_config.quant_format)
    info["needs_custom_ops"] = needs_custom_ops(config)
    out = a.get("model_output")
    if out is None:
        return StubModelProto(info)
    write_model(out, when, info)
    return None


class StubModelProto:
    """What quantize_model returns when model_output is None (real: onnx.ModelProto)."""

    def __init__(self, info: dict[str, Any]):
        self.quark_stub_info = info

    def SerializeToString(self) -> bytes:
        return json.dumps({"quark_stub": True, **_jsonable(self.quark_stub_info)}).encode()


def _get_default_config(bound: inspect.BoundArguments) -> Any:
    name = bound.arguments["config_name"]
    key = _def_named("DefaultConfigMapping")
    mapping = obtain(key)
    if not isinstance(name, str) or name not in mapping:
        raise stub_error(ValueError, f"get_default_config: Unexpected config name: {name!r} ({TAG} presets: {', '.join(mapping)})")
    return copy.deepcopy(mapping[name])


def _get_default_config_mapping(bound: inspect.BoundArguments) -> Any:
    return obtain(_def_named("DefaultConfigMapping"))


def _get_library_path(bound: inspect.BoundArguments) -> str:
    return LIBRARY_PATH


def _quantize_function(name: str):
    def hook(bound: inspect.BoundArguments) -> Any:
        a = bound.arguments
        mi = a.get("model_input")
        if _path_like(mi) and not os.path.exists(mi):
            raise stub_error(FileNotFoundError, f"{name}: Input model file {mi} does not exist.")
        eo = a.get("extra_options") or {}
        bad = [k for k in eo if k not in EXTRA_KEYS]
        if bad:
            raise stub_error(ValueError, f"{name}: unknown extra_options key(s) {', '.join(map(repr, bad))}: {TAG}'s quark/onnx source never reads them")
        cdp = a.get("calibration_data_path")
        if cdp is not None and not os.path.isdir(cdp):
            raise stub_error(NotADirectoryError, f"{name}: calibration_data_path {cdp!r} is not an existing directory")
        out = a.get("model_output")
        if out is not None:
            write_model(out, name, {"arguments": {k: v for k, v in a.items() if k != "extra_options"}, "extra_options": eo})
        return None

    return hook


FUNCTION_HOOKS: dict[str, Any] = {
    "get_default_config": _get_default_config,
    "get_default_config_mapping": _get_default_config_mapping,
    "get_library_path": _get_library_path,
    "quantize_static": _quantize_function("quantize_static"),
    "quantize_dynamic": _quantize_function("quantize_dynamic"),
}

METHOD_HOOKS: dict[str, Any] = {
    "ModelQuantizer.quantize_model": _quantize_model,
    "QConfig.get_default_config": lambda self, bound: cls_named("Config")(
        global_quant_config=_get_default_config(bound)
    ),
}


# ---------------------------------------------------------------------------
# Stub modules
# ---------------------------------------------------------------------------
def stub_module(g: dict[str, Any]) -> None:
    """Called by each generated quark/... module file with its globals()."""
    modname = g["__name__"]
    info = MODULES.get(modname, {"names": {}, "all": None, "file": "?"})
    names: dict[str, str] = info["names"]
    children = sorted({m[len(modname) + 1:].split(".")[0] for m in MODULES if m.startswith(modname + ".")})
    if modname == "quark":
        g["__version__"] = QUARK_VERSION
    if info.get("all") is not None:
        if modname in FACTS.get("exports", {}):
            # The real list, even where it names something the module lacks
            # (quark.onnx lists VitisExtendedQuantizer): `import *` fails as it would.
            g["__all__"] = list(info["all"])
        else:
            g["__all__"] = [n for n in info["all"] if n in names]

    def __getattr__(name: str) -> Any:
        if name in names:
            obj = obtain(names[name])
            g[name] = obj
            return obj
        if name in children:
            import importlib

            return importlib.import_module(f"{modname}.{name}")
        if name.startswith("__"):
            raise AttributeError(name)
        raise stub_error(AttributeError, f"module '{modname}' has no attribute '{name}' ({info.get('file')}, {TAG})")

    def __dir__() -> list[str]:
        return sorted(set(names) | set(children) | {k for k in g if not k.startswith("_")})

    g["__getattr__"] = __getattr__
    g["__dir__"] = __dir__
    g["__quark_stub__"] = {"facts": FACTS["quark"], "names": sorted(names)}


# ---------------------------------------------------------------------------
# onnxruntime
# ---------------------------------------------------------------------------
ORT_PROVIDERS = [p["name"] for p in ORT["providers"]["names"]]
ORT_SO_MEMBERS = ORT["SessionOptions"]["members"]
ORT_TYPES = {
    "tensor(float)": "float32", "tensor(double)": "float64", "tensor(float16)": "float16",
    "tensor(int8)": "int8", "tensor(uint8)": "uint8", "tensor(int16)": "int16", "tensor(uint16)": "uint16",
    "tensor(int32)": "int32", "tensor(uint32)": "uint32", "tensor(int64)": "int64", "tensor(uint64)": "uint64",
    "tensor(bool)": "bool",
}


def _ort_enum() -> Any:
    levels = [(m["name"], m["value"]) for m in ORT["GraphOptimizationLevel"]["members"] if m.get("found_in_binary", True)]
    cls = StubEnum("GraphOptimizationLevel", levels, module="onnxruntime", qualname="GraphOptimizationLevel")
    type.__setattr__(cls, "_qs_key", "onnxruntime:GraphOptimizationLevel")
    return cls


GraphOptimizationLevel = _ort_enum()
DEFS.setdefault("onnxruntime:GraphOptimizationLevel", {"file": "C++ binding, hand list in the facts", "line": "-"})
DEFS.setdefault("onnxruntime:InferenceSession", {"file": ORT["InferenceSession"]["file"], "line": ORT["InferenceSession"]["line"]})

_SO_DEFAULTS = {"graph_optimization_level": "ORT_ENABLE_ALL", "log_severity_level": 2, "intra_op_num_threads": 0}
_SO_TYPES = {"log_severity_level": int, "intra_op_num_threads": int}


class SessionOptions:
    """onnxruntime.SessionOptions stand-in: only the members listed in the facts."""

    def __init__(self) -> None:
        object.__setattr__(self, "_qs_values", {})
        object.__setattr__(self, "_qs_custom_ops", [])
        object.__setattr__(self, "_qs_config_entries", {})

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        m = ORT_SO_MEMBERS.get(name)
        if m is None:
            raise stub_error(AttributeError, f"onnxruntime.SessionOptions has no member '{name}' in the stub's list ({', '.join(ORT_SO_MEMBERS)}; ORT {ORT.get('version')})")
        if m["kind"] == "attribute":
            if name in self._qs_values:
                return self._qs_values[name]
            d = _SO_DEFAULTS.get(name)
            return getattr(GraphOptimizationLevel, d) if name == "graph_optimization_level" else d
        return getattr(self, "_qs_" + name)

    def __setattr__(self, name: str, value: Any) -> None:
        m = ORT_SO_MEMBERS.get(name)
        if m is None or m["kind"] != "attribute":
            raise stub_error(AttributeError, f"onnxruntime.SessionOptions: cannot set '{name}' (settable in the stub's list: {', '.join(k for k, v in ORT_SO_MEMBERS.items() if v['kind'] == 'attribute')})")
        if name == "graph_optimization_level" and not isinstance(value, GraphOptimizationLevel):
            raise stub_error(TypeError, f"SessionOptions.graph_optimization_level must be an onnxruntime.GraphOptimizationLevel member, got {value!r}")
        if name in _SO_TYPES and (not isinstance(value, _SO_TYPES[name]) or isinstance(value, bool)):
            raise stub_error(TypeError, f"SessionOptions.{name} must be an int, got {value!r}")
        self._qs_values[name] = value

    def _qs_register_custom_ops_library(self, *args: Any, **kwargs: Any) -> None:
        params = [{"name": n, "kind": "POSITIONAL_OR_KEYWORD", "has_default": False} for n in ORT_SO_MEMBERS["register_custom_ops_library"]["params"]]
        bound = bind("onnxruntime:InferenceSession", "SessionOptions.register_custom_ops_library", params, args, kwargs)
        path = list(bound.arguments.values())[0]
        if not isinstance(path, (str, os.PathLike)) or os.fspath(path) != LIBRARY_PATH:
            raise stub_error(ValueError, f"SessionOptions.register_custom_ops_library expects the path that quark.onnx get_library_path() returns, got {path!r}")
        self._qs_custom_ops.append(os.fspath(path))
        log_call("onnxruntime.SessionOptions.register_custom_ops_library", path=path)

    def _qs_add_session_config_entry(self, *args: Any, **kwargs: Any) -> None:
        params = [{"name": n, "kind": "POSITIONAL_OR_KEYWORD", "has_default": False} for n in ORT_SO_MEMBERS["add_session_config_entry"]["params"]]
        bound = bind("onnxruntime:InferenceSession", "SessionOptions.add_session_config_entry", params, args, kwargs)
        k, v = bound.arguments.values()
        if not isinstance(k, str) or not isinstance(v, str):
            raise stub_error(TypeError, f"SessionOptions.add_session_config_entry takes two str, got {k!r}, {v!r}")
        self._qs_config_entries[k] = v


class NodeArg:
    def __init__(self, name: str, shape: list[Any], type: str):
        self.name, self.shape, self.type = name, shape, type

    def __repr__(self) -> str:
        return f"NodeArg(name={self.name!r}, type={self.type!r}, shape={self.shape!r})"


def _node_args(var: str, default: list[dict[str, Any]] | None) -> list[NodeArg]:
    raw = os.environ.get(var)
    if raw is None:
        if default is None:
            raise stub_error(RuntimeError, f"{var} is not set: the test must give the model's inputs as a JSON list of {{name, shape, type}}")
        items = default
    else:
        try:
            items = json.loads(raw)
        except ValueError as e:
            raise stub_error(ValueError, f"{var} is not JSON: {e}") from None
    return [NodeArg(i["name"], list(i.get("shape", [])), i.get("type", "tensor(float)")) for i in items]


class InferenceSession:
    """onnxruntime.InferenceSession stand-in (signature read from ORT's Python source)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        facts = ORT["InferenceSession"]
        bound = bind("onnxruntime:InferenceSession", "InferenceSession", facts["init_params"], args, kwargs)
        a = bound.arguments
        extra = a.get("kwargs", {})
        for k in extra:
            if k not in facts["kwargs_keys_read"]:
                raise stub_error(TypeError, f"InferenceSession: unexpected keyword argument '{k}' (ORT reads only {', '.join(facts['kwargs_keys_read'])} from **kwargs; {facts['file']})")
        path = a["path_or_bytes"]
        if isinstance(path, (str, os.PathLike)):
            if not os.path.isfile(path):
                raise stub_error(FileNotFoundError, f"InferenceSession: model file {os.fspath(path)!r} does not exist")
        elif not isinstance(path, bytes):
            raise stub_error(TypeError, f"InferenceSession: Unable to load from type '{type(path)}'")
        so = a.get("sess_options")
        if so is not None and not isinstance(so, SessionOptions):
            raise stub_error(TypeError, f"InferenceSession: sess_options must be an onnxruntime.SessionOptions, got {type(so).__name__}")
        providers = a.get("providers")
        options = a.get("provider_options")
        names = []
        if providers is not None:
            if isinstance(providers, str) or not isinstance(providers, collections.abc.Sequence):
                raise stub_error(ValueError, "InferenceSession: 'providers' should be a sequence.")
            for p in providers:
                if isinstance(p, tuple):
                    if len(p) != 2 or not isinstance(p[0], str) or not isinstance(p[1], dict):
                        raise stub_error(ValueError, f"InferenceSession: a provider tuple must be (name, options dict), got {p!r}")
                    name = p[0]
                elif isinstance(p, str):
                    name = p
                else:
                    raise stub_error(ValueError, f"InferenceSession: providers items must be names or (name, dict) tuples, got {p!r}")
                if name not in ORT_PROVIDERS:
                    raise stub_error(ValueError, f"InferenceSession: unknown execution provider {name!r} (known: {', '.join(ORT_PROVIDERS)})")
                names.append(name)
        if options is not None:
            if providers is None:
                raise stub_error(ValueError, "InferenceSession: provider_options given without providers")
            if isinstance(options, (str, dict)) or not isinstance(options, collections.abc.Sequence):
                raise stub_error(ValueError, "InferenceSession: 'provider_options' should be a sequence.")
            if len(options) != len(providers):
                raise stub_error(ValueError, "InferenceSession: 'providers' and 'provider_options' should be the same length if both are given.")
            if not all(isinstance(p, str) for p in providers):
                raise stub_error(ValueError, "InferenceSession: Only string values for 'providers' are supported if 'provider_options' is given.")
            if not all(isinstance(o, dict) for o in options):
                raise stub_error(ValueError, "InferenceSession: 'provider_options' values must be dicts.")
        # A model Quark wrote with its own ops loads only with its library registered.
        if isinstance(path, (str, os.PathLike)):
            try:
                with open(path, encoding="utf-8") as f:
                    written = json.load(f)
            except (ValueError, UnicodeDecodeError, OSError):
                written = None
            if isinstance(written, dict) and written.get("quark_stub") and written.get("needs_custom_ops") and not (so is not None and so._qs_custom_ops):
                raise stub_error(RuntimeError, f"InferenceSession: {os.fspath(path)} holds Quark's custom Q/DQ ops (com.amd.quark): register the library first "
                                 "(so.register_custom_ops_library(quark.onnx.get_library_path()))")
        self._path = path
        self._sess_options = so
        self._providers = names or ["CPUExecutionProvider"]
        self._provider_options = list(options) if options is not None else [dict(p[1]) if isinstance(p, tuple) else {} for p in providers or []]
        log_call("onnxruntime.InferenceSession", path=path if not isinstance(path, bytes) else "<bytes>", providers=providers, provider_options=options,
                 custom_ops=list(so._qs_custom_ops) if so is not None else [])

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if name in ORT["InferenceSession"]["methods"]:
            raise stub_error(NotImplementedError, f"InferenceSession.{name} is real in ORT {ORT.get('version')} but the stub does not implement it")
        raise stub_error(AttributeError, f"'InferenceSession' object has no attribute '{name}' (ORT {ORT.get('version')})")

    def get_inputs(self) -> list[NodeArg]:
        return _node_args("QUARK_STUB_MODEL_INPUTS", None)

    def get_outputs(self) -> list[NodeArg]:
        return _node_args("QUARK_STUB_MODEL_OUTPUTS", [{"name": "output", "shape": [1], "type": "tensor(float)"}])

    def get_providers(self) -> list[str]:
        return list(self._providers)

    def get_provider_options(self) -> dict[str, dict[str, str]]:
        return {p: {str(k): str(v) for k, v in (o or {}).items()} for p, o in zip(self._providers, self._provider_options or [{}] * len(self._providers))}

    def get_session_options(self) -> Any:
        return self._sess_options if self._sess_options is not None else SessionOptions()

    def run(self, output_names: Any, input_feed: Any, run_options: Any = None) -> list[Any]:
        inputs = self.get_inputs()
        outputs = self.get_outputs()
        if not isinstance(input_feed, dict):
            raise stub_error(TypeError, f"InferenceSession.run: input_feed must be a dict, got {type(input_feed).__name__}")
        want = [i.name for i in inputs]
        missing = [n for n in want if n not in input_feed]
        if missing:
            raise stub_error(ValueError, f"InferenceSession.run: Required inputs ({missing}) are missing from input feed ({list(input_feed)}).")
        extra = [n for n in input_feed if n not in want]
        if extra:
            raise stub_error(ValueError, f"InferenceSession.run: Invalid input name: {extra[0]} (inputs: {want})")
        batch = None
        for i in inputs:
            v = input_feed[i.name]
            shape = getattr(v, "shape", None)
            feed_dtype = getattr(v, "dtype", None)
            if shape is None or feed_dtype is None:
                raise stub_error(TypeError, f"InferenceSession.run: feed {i.name!r} must be an array with .shape and .dtype, got {type(v).__name__}")
            shape = tuple(shape)
            if len(shape) != len(i.shape):
                raise stub_error(ValueError, f"InferenceSession.run: Invalid rank for input: {i.name} Got: {len(shape)} Expected: {len(i.shape)}")
            for got, exp in zip(shape, i.shape):
                if isinstance(exp, int) and exp >= 0 and got != exp:
                    raise stub_error(ValueError, f"InferenceSession.run: Got invalid dimensions for input: {i.name} (got {list(shape)}, expected {i.shape})")
            want_dtype = ORT_TYPES.get(i.type)
            got_dtype = getattr(feed_dtype, "name", str(feed_dtype))
            if want_dtype and got_dtype != want_dtype:
                raise stub_error(TypeError, f"InferenceSession.run: Unexpected input data type for {i.name}. Actual: ({got_dtype}) , expected: ({want_dtype})")
            if batch is None and shape:
                batch = shape[0]
        if output_names is None:
            chosen = outputs
        else:
            if isinstance(output_names, str) or not isinstance(output_names, collections.abc.Sequence):
                raise stub_error(TypeError, "InferenceSession.run: output_names must be None or a list of names")
            known = {o.name: o for o in outputs}
            for n in output_names:
                if n not in known:
                    raise stub_error(ValueError, f"InferenceSession.run: Invalid output name: {n} (outputs: {list(known)})")
            chosen = [known[n] for n in output_names]
        log_call("onnxruntime.InferenceSession.run", feeds={k: list(getattr(v, 'shape', ())) for k, v in input_feed.items()})
        result = []
        for o in chosen:
            shape = [d if isinstance(d, int) and d >= 0 else (batch if batch is not None and j == 0 else 1) for j, d in enumerate(o.shape)]
            result.append(ndarray(tuple(shape), dtype(ORT_TYPES.get(o.type, "float32"))))
        return result


def get_available_providers() -> list[str]:
    return ["CPUExecutionProvider"]


def get_all_providers() -> list[str]:
    return list(ORT_PROVIDERS)


def stub_onnxruntime(g: dict[str, Any]) -> None:
    g.update(
        InferenceSession=InferenceSession,
        SessionOptions=SessionOptions,
        GraphOptimizationLevel=GraphOptimizationLevel,
        NodeArg=NodeArg,
        get_available_providers=get_available_providers,
        get_all_providers=get_all_providers,
        __version__=ORT.get("version", "0"),
    )
    info = MODULES.get("onnxruntime", {"names": {}})

    def __getattr__(name: str) -> Any:
        if name in info.get("names", {}):
            obj = obtain(info["names"][name])
            g[name] = obj
            return obj
        if name == "quantization":
            import importlib

            return importlib.import_module("onnxruntime.quantization")
        if name.startswith("__"):
            raise AttributeError(name)
        raise stub_error(AttributeError, f"module 'onnxruntime' has no attribute '{name}' in the stub (it provides InferenceSession, SessionOptions, GraphOptimizationLevel, get_available_providers; ORT {ORT.get('version')})")

    g["__getattr__"] = __getattr__


# ---------------------------------------------------------------------------
# numpy (just enough for a check step: load .npy/.npz, shapes and dtypes)
# ---------------------------------------------------------------------------
_DTYPES = {
    "bool": ("|b1", 1, "b"), "int8": ("|i1", 1, "i"), "uint8": ("|u1", 1, "u"),
    "int16": ("<i2", 2, "i"), "uint16": ("<u2", 2, "u"), "int32": ("<i4", 4, "i"), "uint32": ("<u4", 4, "u"),
    "int64": ("<i8", 8, "i"), "uint64": ("<u8", 8, "u"), "float16": ("<f2", 2, "f"), "float32": ("<f4", 4, "f"),
    "float64": ("<f8", 8, "f"),
}
_DESCR = {v[0].lstrip("<|="): k for k, v in _DTYPES.items()}
_DESCR.update({"b1": "bool", "?": "bool"})


class dtype:
    def __init__(self, spec: Any = "float64"):
        if isinstance(spec, dtype):
            name = spec.name
        elif isinstance(spec, type) and issubclass(spec, _scalar):
            name = spec.__name__.rstrip("_")
        elif spec is float:
            name = "float64"
        elif spec is int:
            name = "int64"
        elif spec is bool:
            name = "bool"
        elif isinstance(spec, str):
            s = spec.lstrip("<>|=")
            name = spec if spec in _DTYPES else _DESCR.get(s)
            if name is None:
                raise stub_error(TypeError, f"numpy stand-in: data type {spec!r} not understood")
            if spec.startswith(">"):
                raise stub_error(TypeError, f"numpy stand-in: big-endian {spec!r} not supported")
        else:
            raise stub_error(TypeError, f"numpy stand-in: data type {spec!r} not understood")
        self.name = name
        self.str, self.itemsize, self.kind = _DTYPES[name]

    def __eq__(self, other: Any) -> bool:
        try:
            return self.name == dtype(other).name
        except Exception:
            return False

    def __hash__(self) -> int:
        return hash(self.name)

    def __repr__(self) -> str:
        return f"dtype('{self.name}')"

    __str__ = lambda self: self.name  # noqa: E731


class _scalar:
    def __new__(cls, value: Any = 0) -> Any:
        n = cls.__name__
        return bool(value) if n == "bool_" else float(value) if n.startswith("float") else int(value)


def _scalar_type(name: str) -> type:
    return type(name, (_scalar,), {"__module__": "numpy"})


float16, float32, float64 = (_scalar_type(n) for n in ("float16", "float32", "float64"))
int8, uint8, int16, uint16, int32, uint32, int64, uint64 = (
    _scalar_type(n) for n in ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64")
)
bool_ = _scalar_type("bool_")


class ndarray:
    """Shape and dtype only: the stub never computes with values."""

    def __init__(self, shape: Any, dt: Any = "float64"):
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        for s in shape:
            if not isinstance(s, int) or s < 0:
                raise stub_error(ValueError, f"numpy stand-in: bad shape {shape!r}")
        self.shape = shape
        self.dtype = dt if isinstance(dt, dtype) else dtype(dt)

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))
    nbytes = property(lambda self: self.size * self.dtype.itemsize)

    def __len__(self) -> int:
        if not self.shape:
            raise stub_error(TypeError, "numpy stand-in: len() of unsized object")
        return self.shape[0]

    def __repr__(self) -> str:
        return f"ndarray(shape={self.shape}, dtype={self.dtype.name})"

    def astype(self, dt: Any, copy: bool = True) -> "ndarray":
        return ndarray(self.shape, dtype(dt))

    def reshape(self, *shape: Any) -> "ndarray":
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        shape = tuple(shape)
        if shape.count(-1) > 1:
            raise stub_error(ValueError, "numpy stand-in: can only specify one unknown dimension")
        known = math.prod(s for s in shape if s != -1)
        if -1 in shape:
            if known == 0 or self.size % known:
                raise stub_error(ValueError, f"numpy stand-in: cannot reshape array of size {self.size} into shape {shape}")
            shape = tuple(self.size // known if s == -1 else s for s in shape)
        if math.prod(shape) != self.size:
            raise stub_error(ValueError, f"numpy stand-in: cannot reshape array of size {self.size} into shape {shape}")
        return ndarray(shape, self.dtype)

    def __getitem__(self, idx: Any) -> "ndarray":
        idx = idx if isinstance(idx, tuple) else (idx,)
        shape = list(self.shape)
        out: list[int] = []
        for j, ix in enumerate(idx):
            if j >= len(shape):
                raise stub_error(IndexError, "numpy stand-in: too many indices")
            if isinstance(ix, int):
                if not -shape[j] <= ix < shape[j]:
                    raise stub_error(IndexError, f"numpy stand-in: index {ix} is out of bounds for axis {j} with size {shape[j]}")
            elif isinstance(ix, slice):
                out.append(len(range(*ix.indices(shape[j]))))
            else:
                raise stub_error(TypeError, f"numpy stand-in: unsupported index {ix!r}")
        return ndarray(tuple(out) + tuple(shape[len(idx):]), self.dtype)

    def transpose(self, *axes: Any) -> "ndarray":
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        if not axes:
            axes = tuple(reversed(range(self.ndim)))
        if sorted(axes) != list(range(self.ndim)):
            raise stub_error(ValueError, f"numpy stand-in: axes {axes} don't match array of rank {self.ndim}")
        return ndarray(tuple(self.shape[a] for a in axes), self.dtype)

    def __array__(self) -> "ndarray":
        return self

    def copy(self) -> "ndarray":
        return ndarray(self.shape, self.dtype)


def _shape_of(obj: Any) -> tuple[tuple[int, ...], str]:
    if isinstance(obj, ndarray):
        return obj.shape, obj.dtype.name
    if isinstance(obj, (list, tuple)):
        if not obj:
            return (0,), "float64"
        subs = [_shape_of(x) for x in obj]
        if any(s[0] != subs[0][0] for s in subs):
            raise stub_error(ValueError, "numpy stand-in: inhomogeneous shape")
        kinds = {s[1] for s in subs}
        kind = "float64" if "float64" in kinds or "float32" in kinds else "int64" if "int64" in kinds else subs[0][1]
        return (len(obj),) + subs[0][0], kind
    if isinstance(obj, bool):
        return (), "bool"
    if isinstance(obj, int):
        return (), "int64"
    if isinstance(obj, float):
        return (), "float64"
    raise stub_error(TypeError, f"numpy stand-in: cannot make an array from {type(obj).__name__}")


def array(obj: Any, dtype: Any = None, copy: bool = True) -> ndarray:  # noqa: A002 - numpy's name
    shape, kind = _shape_of(obj)
    return ndarray(shape, globals()["dtype"](dtype) if dtype is not None else kind)


asarray = array


def zeros(shape: Any, dtype: Any = "float64") -> ndarray:  # noqa: A002
    return ndarray(shape, globals()["dtype"](dtype))


ones = empty = zeros


def zeros_like(a: ndarray, dtype: Any = None) -> ndarray:  # noqa: A002
    return ndarray(a.shape, a.dtype if dtype is None else globals()["dtype"](dtype))


ones_like = empty_like = zeros_like


def expand_dims(a: Any, axis: Any) -> ndarray:
    a = a if isinstance(a, ndarray) else array(a)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    nd = a.ndim + len(axes)
    norm = sorted(ax + nd if ax < 0 else ax for ax in axes)
    if any(not 0 <= ax < nd for ax in norm) or len(set(norm)) != len(norm):
        raise stub_error(ValueError, f"numpy stand-in: axis {axis} is out of bounds for array of dimension {nd}")
    it = iter(a.shape)
    return ndarray(tuple(1 if i in norm else next(it) for i in range(nd)), a.dtype)


def stack(arrays: Any, axis: int = 0) -> ndarray:
    arrays = [x if isinstance(x, ndarray) else array(x) for x in arrays]
    if not arrays or any(x.shape != arrays[0].shape for x in arrays):
        raise stub_error(ValueError, "numpy stand-in: all input arrays must have the same shape")
    shape = list(arrays[0].shape)
    axis = axis + len(shape) + 1 if axis < 0 else axis
    shape.insert(axis, len(arrays))
    return ndarray(tuple(shape), arrays[0].dtype)


def concatenate(arrays: Any, axis: int = 0) -> ndarray:
    arrays = [x if isinstance(x, ndarray) else array(x) for x in arrays]
    first = arrays[0]
    axis = axis + first.ndim if axis < 0 else axis
    for x in arrays:
        if x.ndim != first.ndim or any(a != b for j, (a, b) in enumerate(zip(x.shape, first.shape)) if j != axis):
            raise stub_error(ValueError, "numpy stand-in: concatenate: shapes do not match")
    shape = list(first.shape)
    shape[axis] = sum(x.shape[axis] for x in arrays)
    return ndarray(tuple(shape), first.dtype)


def _read_npy(data: bytes, name: str) -> ndarray:
    if not data.startswith(b"\x93NUMPY"):
        raise stub_error(ValueError, f"numpy stand-in: {name} is not an .npy file (bad magic)")
    major = data[6]
    if major == 1:
        (hlen,) = struct.unpack("<H", data[8:10])
        start = 10
    elif major in (2, 3):
        (hlen,) = struct.unpack("<I", data[8:12])
        start = 12
    else:
        raise stub_error(ValueError, f"numpy stand-in: {name}: unknown .npy version {major}")
    header = ast.literal_eval(data[start:start + hlen].decode("latin1"))
    arr = ndarray(tuple(header["shape"]), dtype(header["descr"]))
    body = len(data) - start - hlen
    if body < arr.nbytes:
        raise stub_error(ValueError, f"numpy stand-in: {name}: file holds {body} data bytes, shape {arr.shape} {arr.dtype.name} needs {arr.nbytes}")
    return arr


class NpzFile(collections.abc.Mapping):
    def __init__(self, path: str):
        self._zip = zipfile.ZipFile(path)
        self.files = [n[:-4] if n.endswith(".npy") else n for n in self._zip.namelist()]

    def __getitem__(self, key: str) -> ndarray:
        member = key + ".npy" if key + ".npy" in self._zip.namelist() else key
        if member not in self._zip.namelist():
            raise stub_error(KeyError, f"numpy stand-in: {key} is not a file in the archive")
        return _read_npy(self._zip.read(member), f"{key} in npz")

    def __iter__(self):
        return iter(self.files)

    def __len__(self) -> int:
        return len(self.files)

    def __enter__(self) -> "NpzFile":
        return self

    def __exit__(self, *a: Any) -> None:
        self._zip.close()

    def close(self) -> None:
        self._zip.close()


def load(file: Any, mmap_mode: Any = None, allow_pickle: bool = False, fix_imports: bool = True, encoding: str = "ASCII", **kwargs: Any) -> Any:
    path = os.fspath(file)
    with open(path, "rb") as f:
        head = f.read(6)
    if head.startswith(b"PK"):
        return NpzFile(path)
    with open(path, "rb") as f:
        return _read_npy(f.read(), path)


def save(file: Any, arr: Any, allow_pickle: bool = True, fix_imports: bool = True) -> None:
    a = arr if isinstance(arr, ndarray) else array(arr)
    path = os.fspath(file)
    if not path.endswith(".npy"):
        path += ".npy"
    header = repr({"descr": a.dtype.str, "fortran_order": False, "shape": a.shape}).encode("latin1")
    pad = 64 - (10 + len(header) + 1) % 64
    header += b" " * pad + b"\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + b"\x00" * a.nbytes)


class _Random:
    def seed(self, seed: Any = None) -> None:
        return None

    def rand(self, *shape: int) -> ndarray:
        return ndarray(shape, "float64")

    randn = rand

    def random(self, size: Any = None) -> Any:
        return 0.5 if size is None else ndarray(size, "float64")

    random_sample = random

    def uniform(self, low: float = 0.0, high: float = 1.0, size: Any = None) -> Any:
        return low if size is None else ndarray(size, "float64")

    def normal(self, loc: float = 0.0, scale: float = 1.0, size: Any = None) -> Any:
        return loc if size is None else ndarray(size, "float64")

    def randint(self, low: int, high: Any = None, size: Any = None, dtype: Any = "int64") -> Any:
        return low if size is None else ndarray(size, globals()["dtype"](dtype))

    def default_rng(self, seed: Any = None) -> "_Random":
        return self


random = _Random()


def stub_numpy(g: dict[str, Any]) -> None:
    names = [
        "dtype", "ndarray", "float16", "float32", "float64", "int8", "uint8", "int16", "uint16", "int32", "uint32",
        "int64", "uint64", "bool_", "array", "asarray", "zeros", "ones", "empty", "zeros_like", "ones_like",
        "empty_like", "expand_dims", "stack", "concatenate", "load", "save", "random",
    ]
    mod = sys.modules[__name__]
    g.update({n: getattr(mod, n) for n in names})
    g["__version__"] = "0.0+quark-stub"

    def __getattr__(name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise stub_error(AttributeError, f"the numpy stand-in does not provide numpy.{name} (it has: {', '.join(names)})")

    g["__getattr__"] = __getattr__
