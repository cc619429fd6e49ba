#!/usr/bin/env python3
"""Execute a quarkplan-printed Python script against the Quark stand-ins.

Usage:
    run_script.py FACTS_JSON SCRIPT [--inputs JSON] [--outputs JSON] [--keep DIR] [-- SCRIPT_ARGS...]

Generates the stand-in quark / onnxruntime / numpy packages (make_stubs.py) into
a temporary folder, puts it first on sys.path and runs SCRIPT as __main__ in the
current working directory (relative paths in the script resolve from there).

--inputs / --outputs: the model's inputs / outputs that the onnxruntime stand-in
reports, as a JSON list of {"name", "shape", "type"} (or @FILE); they are passed
through the environment variables QUARK_STUB_MODEL_INPUTS / _OUTPUTS.
--keep DIR: generate the stubs into DIR and keep them (for debugging).

Exit status 0 when the script ran to the end; 1 with one line on stderr:
  "quark-stub: ..."       the stand-ins refused something (a wrong name, keyword,
                          enum member, field or extra_options key, a missing file...)
  "TypeName: message ..." any other error raised by the script itself
each followed by " [SCRIPT:LINE]" when the failing line of SCRIPT is known.
Standard library only.
"""

from __future__ import annotations

import json
import os
import runpy
import sys
import tempfile
import traceback
from pathlib import Path

sys.dont_write_bytecode = True  # keep the source tree and the temp stubs free of __pycache__
sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_stubs  # noqa: E402

PREFIX = "quark-stub:"
STUBBED = ("quark", "onnxruntime", "numpy", "_quark_stub")


def _json_arg(value: str) -> str:
    text = Path(value[1:]).read_text(encoding="utf-8") if value.startswith("@") else value
    json.loads(text)  # fail early on bad JSON
    return text


def one_line(exc: BaseException, script: str, facts: dict, stub_dir: str) -> str:
    msg = str(exc)
    frames = traceback.extract_tb(exc.__traceback__)
    stub_root = os.path.abspath(stub_dir) + os.sep
    origin = getattr(exc, "filename", None) if isinstance(exc, SyntaxError) else (frames[-1].filename if frames else None)
    if not msg.startswith(PREFIX) and origin and os.path.abspath(origin).startswith(stub_root):
        # Raised by the stand-ins' own code without a verdict: a bug of theirs.
        msg = f"{PREFIX} internal error in the stand-ins: {type(exc).__name__}: {msg}"
    if isinstance(exc, ImportError) and not msg.startswith(PREFIX):
        name = exc.name or ""
        if name.split(".")[0] in STUBBED:
            tag = f"Quark {facts['quark'].get('__version__')}"
            if isinstance(exc, ModuleNotFoundError):
                msg = f"{PREFIX} {msg} (no such module in {tag} / the stand-ins)"
            else:
                where = facts["modules"].get(name, {}).get("file") or name
                msg = f"{PREFIX} {msg.split(' (')[0]} ({where} in {tag} does not bind it)"
    if not msg.startswith(PREFIX):
        msg = f"{type(exc).__name__}: {msg}"
    line = None
    for fs in frames:
        if os.path.abspath(fs.filename) == os.path.abspath(script):
            line = fs.lineno
    msg = " | ".join(x.strip() for x in msg.splitlines() if x.strip())
    return msg + (f" [{script}:{line}]" if line else "")


def main(argv: list[str]) -> int:
    args = argv[1:]
    script_args: list[str] = []
    if "--" in args:
        i = args.index("--")
        args, script_args = args[:i], args[i + 1:]
    opts = {"--inputs": None, "--outputs": None, "--keep": None}
    pos: list[str] = []
    it = iter(args)
    for a in it:
        if a in opts:
            try:
                opts[a] = next(it)
            except StopIteration:
                print(f"{a} needs a value", file=sys.stderr)
                return 2
        else:
            pos.append(a)
    if len(pos) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    facts_path, script = pos
    facts = json.loads(Path(facts_path).read_text(encoding="utf-8"))
    if opts["--inputs"] is not None:
        os.environ["QUARK_STUB_MODEL_INPUTS"] = _json_arg(opts["--inputs"])
    if opts["--outputs"] is not None:
        os.environ["QUARK_STUB_MODEL_OUTPUTS"] = _json_arg(opts["--outputs"])

    tmp = None
    if opts["--keep"]:
        stub_dir = opts["--keep"]
    else:
        tmp = tempfile.TemporaryDirectory(prefix="quark_stub_")
        stub_dir = tmp.name
    try:
        make_stubs.generate(facts_path, stub_dir)
        for name in list(sys.modules):
            if name.split(".")[0] in STUBBED:
                del sys.modules[name]
        sys.path.insert(0, os.path.abspath(stub_dir))
        sys.argv = [script] + script_args
        try:
            runpy.run_path(script, run_name="__main__")
        except SystemExit as e:
            if e.code in (None, 0):
                return 0
            print(f"SystemExit: {e.code} [{script}]", file=sys.stderr)
            return 1
        except BaseException as e:  # noqa: BLE001 - report anything the script raised
            sys.stdout.flush()
            print(one_line(e, script, facts, stub_dir), file=sys.stderr)
            return 1
        sys.stdout.flush()
        return 0
    finally:
        if tmp is not None:
            tmp.cleanup()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
