#!/usr/bin/env python3
"""quarkplan's Torch catalog against the Quark it describes (issue #23, item 5).

Usage (with a release's Python, scripts/quark_env.sh --python RELEASE):
    compare_torch_catalog.py QUARKPLAN RELEASE

Imports Quark's own template registry (quark.torch.LLMTemplate) and compares, for every model type:
the template exists on both sides, its default exclusions (exclude_layers_name), KV-cache and
attention-output layer patterns (kv_layers_name, q_layer_name), its built-in algorithm configs
(algo_config); and the scheme names Quark's registry takes (get_supported_schemes) against the
catalog's schemes and aliases. The catalog is the release's own, as quarkplan resolves it
(`quarkplan catalog torch --json --quark-version RELEASE`): every difference fails. Prints one line
per difference and a summary line.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def listify(v):
    if v is None:
        return []
    if isinstance(v, (list, tuple, set)):
        return sorted(str(x) for x in v)
    return [str(v)]


def quark_templates():
    from quark.torch import LLMTemplate

    out = {}
    for name in LLMTemplate.list_available():
        t = LLMTemplate.get(name)
        algos = getattr(t, "algo_config", None)
        if isinstance(algos, dict):  # every algorithm Quark knows is a key; the template's own configs are not None
            algo_names = sorted(str(k).lower() for k, v in algos.items() if v is not None)
        else:
            algo_names = sorted({str(getattr(a, "name", type(a).__name__)).lower() for a in (algos or [])})
        out[name] = {
            "exclude": listify(getattr(t, "exclude_layers_name", None)),
            "kv_layers": listify(getattr(t, "kv_layers_name", None)),
            "q_layers": listify(getattr(t, "q_layer_name", None)),
            "algorithms": algo_names,
        }
    return out


def main(argv):
    quarkplan, release = argv[1], argv[2]
    import quark

    if quark.__version__ != release:
        print(f"this Python runs amd-quark {quark.__version__}, not {release}", file=sys.stderr)
        return 2
    shown = subprocess.run([quarkplan, "catalog", "torch", "--json", "--quark-version", release], capture_output=True, text=True, check=True)
    cat = json.loads(shown.stdout)["torch"]
    stamped = True  # the release's own catalog
    ours = {t["model_type"]: t for t in cat["templates"]}
    theirs = quark_templates()
    diffs = []
    for name in sorted(set(ours) | set(theirs)):
        if name not in theirs:
            diffs.append(f"{name}: in the catalog, not a template of amd-quark {release}")
            continue
        if name not in ours:
            diffs.append(f"{name}: a template of amd-quark {release}, not in the catalog")
            continue
        o, q = ours[name], theirs[name]
        for field, key in (("exclude_defaults", "exclude"), ("kv_layers", "kv_layers"), ("q_layers", "q_layers")):
            if listify(o.get(field)) != q[key]:
                diffs.append(f"{name}: {field} {listify(o.get(field))} in the catalog, {q[key]} in Quark")
        if sorted(a.lower() for a in o.get("builtin_algorithms") or []) != q["algorithms"]:
            diffs.append(f"{name}: builtin_algorithms {sorted(o.get('builtin_algorithms') or [])} in the catalog, {q['algorithms']} in Quark")
    # The scheme names Quark's registry takes (the same for every template: llama's is read).
    from quark.torch import LLMTemplate

    quark_schemes = set(LLMTemplate.get("llama").get_supported_schemes())
    catalog_schemes = {x["name"] for x in cat["schemes"]} | set(cat.get("scheme_aliases", {}))
    for name in sorted(quark_schemes - catalog_schemes):
        diffs.append(f"scheme {name}: Quark's registry takes it, the catalog does not know it")
    for name in sorted(catalog_schemes - quark_schemes):
        diffs.append(f"scheme {name}: in the catalog, not in Quark's registry")
    for d in diffs:
        print(("MISMATCH " if stamped else "DIFFERS ") + d)
    what = f"the catalog of {cat['quark_version']}"
    print(f"torch templates and schemes, amd-quark {release} ({what}): {len(theirs)} templates and {len(quark_schemes)} schemes in Quark, "
          f"{len(ours)} and {len(catalog_schemes)} in the catalog, {len(diffs)} differences")
    return 1 if stamped and diffs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
