#!/usr/bin/env python3
"""Parse every Python file listed (one path a line) with Python's own parser.

Usage: parse_scripts.py LIST_FILE
Prints "FAIL PATH:LINE: message" for each file that does not parse, then
"N passed, M failed"; exit 0 when every file parsed. Standard library only.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    passed = failed = 0
    for path in Path(argv[1]).read_text(encoding="utf-8").split("\n"):
        if not path:
            continue
        try:
            ast.parse(Path(path).read_text(encoding="utf-8"), filename=path)
            passed += 1
        except SyntaxError as e:
            failed += 1
            print(f"FAIL {path}:{e.lineno}: {e.msg}: {(e.text or '').rstrip()}")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
