"""What both Quark test runners (run_quark.py for ONNX, run_torch.py for Torch) use: running
quarkplan, the first line of an error, and the checks `quarkplan verify --json` reports broken."""
from __future__ import annotations

import json
import subprocess


def sh(cmd, cwd=None, timeout=None):
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def first_line(text) -> str:
    for line in str(text).splitlines():
        if line.strip():
            return line.strip()[:400]
    return ""


def broken_checks(verify_json: str) -> list[str]:
    """The ids of the checks `quarkplan verify --json` reports broken (under "error" when any is)."""
    try:
        j = json.loads(verify_json)
    except ValueError:
        return []
    v = j.get("verification") or j.get("error", {}).get("verification") or j
    return [c.get("id") for c in v.get("checks", []) if c.get("result") == "broken"]
