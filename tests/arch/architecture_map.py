#!/usr/bin/env python3
"""ARCHITECTURE.md's module table is the map a newcomer reads first (issue 36 point 6): one row
per top-level module of crates/core/src, each row's "owns" cell at most 30 words, the rest left
to the module's own `//!` doc. This fails when a module has no row, a row names a module that is
gone, or a row grows past 30 words. Run by `make core-is-tauri-free` (part of `make test`)."""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORDS = 30
ROW = re.compile(r"^\| `([a-z_]+)` \| (.*) \|$")


def modules() -> set[str]:
    lib = (ROOT / "crates/core/src/lib.rs").read_text()
    return set(re.findall(r"^pub mod ([a-z_]+);", lib, re.M))


def table() -> dict[str, str]:
    text = (ROOT / "ARCHITECTURE.md").read_text()
    start = text.index("| module | owns |")
    rows = {}
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        match = ROW.match(line)
        if match:
            rows[match.group(1)] = match.group(2)
    return rows


def main() -> int:
    rows, found = table(), modules()
    problems = [f"`{name}` has no row in ARCHITECTURE.md's module table" for name in sorted(found - set(rows))]
    problems += [f"`{name}` has a row but no module in crates/core/src/lib.rs" for name in sorted(set(rows) - found)]
    for name, owns in sorted(rows.items()):
        words = len(owns.split())
        if words > WORDS:
            problems.append(f"`{name}`'s row is {words} words, over {WORDS}: move the detail into its `//!` doc")
    for problem in problems:
        print(f"architecture map: {problem}")
    if problems:
        return 1
    print(f"architecture map: ok ({len(rows)} modules, each row {WORDS} words or fewer)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
