#!/usr/bin/env python3
"""Run many quarkplan-printed scripts against the Quark stand-ins in one process.

Usage:
    run_scripts.py FACTS_JSON MANIFEST_JSON

MANIFEST_JSON is a list of {"script": PATH, "cwd": DIR, "args": [...],
"env": {NAME: VALUE} (optional), "inputs": [{"name", "shape", "type"}], "outputs": [...] (optional)}. The
stand-ins are generated once; each script runs as __main__ in its cwd with its
model inputs in QUARK_STUB_MODEL_INPUTS (what InferenceSession.get_inputs()
reports), exactly as run_script.py runs one.

Prints one line per script, "PASS SCRIPT" or "FAIL SCRIPT: <the one-line
error>", then "N passed, M failed". Exit 0 when every script passed, 1 otherwise.
Standard library only.
"""

from __future__ import annotations

import io
import json
import os
import runpy
import sys
import tempfile
from contextlib import redirect_stdout
from pathlib import Path

sys.dont_write_bytecode = True
sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_stubs  # noqa: E402
import run_script  # noqa: E402


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    facts_path, manifest_path = argv[1], argv[2]
    facts = json.loads(Path(facts_path).read_text(encoding="utf-8"))
    manifest = json.loads(Path(manifest_path).read_text(encoding="utf-8"))
    passed = failed = 0
    home = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="quark_stub_") as stub_dir:
        make_stubs.generate(facts_path, stub_dir)
        sys.path.insert(0, os.path.abspath(stub_dir))
        for entry in manifest:
            script = os.path.abspath(entry["script"])
            os.environ["QUARK_STUB_MODEL_INPUTS"] = json.dumps(entry.get("inputs", []))
            for k, v in entry.get("env", {}).items():
                os.environ[k] = v
            if "outputs" in entry:
                os.environ["QUARK_STUB_MODEL_OUTPUTS"] = json.dumps(entry["outputs"])
            else:
                os.environ.pop("QUARK_STUB_MODEL_OUTPUTS", None)
            # Fresh stand-in modules per script, so no state leaks from one to
            # the next; the runtime behind them (the facts, read once) holds
            # constants only and stays loaded.
            for name in list(sys.modules):
                if name.split(".")[0] in run_script.STUBBED and name.split(".")[0] != "_quark_stub":
                    del sys.modules[name]
            sys.argv = [script] + list(entry.get("args", []))
            verdict = None
            os.chdir(entry.get("cwd", home))
            try:
                with redirect_stdout(io.StringIO()):
                    runpy.run_path(script, run_name="__main__")
            except SystemExit as e:
                if e.code not in (None, 0):
                    verdict = f"SystemExit: {e.code}"
            except BaseException as e:  # noqa: BLE001 - report anything the script raised
                verdict = run_script.one_line(e, script, facts, stub_dir)
            finally:
                os.chdir(home)
            if verdict is None:
                passed += 1
                print(f"PASS {script}")
            else:
                failed += 1
                print(f"FAIL {script}: {verdict}")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
