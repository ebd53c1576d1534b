#!/usr/bin/env python3
"""A Tauri command is a thin adapter: it parses its input, makes one call into core and hands the
answer back (ARCHITECTURE.md, "Core decides, adapters adapt"). This fails when the body of a
`#[tauri::command]` in src-tauri/src is over 10 lines, unless the command is one of the older
ones listed in tests/arch/known_long_commands.txt; it notes a listed command that is short now or
gone, so the list only shrinks. `--all` prints every command's length, longest first.
Run by `make core-is-tauri-free` (part of `make test`)."""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ROOT / "src-tauri/src"
LIMIT = 10
FN = re.compile(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)")


def strip_strings_and_comments(line: str) -> str:
    """The braces that count: none inside a string, a char literal or a `//` comment."""
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])'", "''", line)
    return line.split("//")[0]


def commands(path: Path):
    """(name, first line, body lines) of each command in `path`: the body is what lies between
    the line that opens it and the line that closes it, blank lines left out (a comment counts:
    a command that needs explaining is deciding something)."""
    lines = path.read_text().splitlines()
    i = 0
    while i < len(lines):
        if lines[i].strip().startswith("#[tauri::command"):
            j = i
            while not FN.search(lines[j]):
                j += 1
            name = FN.search(lines[j]).group(1)
            # The body opens at the first `{` at depth 0 after the signature's parentheses.
            depth_paren = 0
            k = j
            opened = None
            while opened is None:
                code = strip_strings_and_comments(lines[k])
                for ch in code:
                    if ch in "(<[":
                        depth_paren += 1 if ch == "(" else 0
                    elif ch == ")":
                        depth_paren -= 1
                    elif ch == "{" and depth_paren == 0:
                        opened = k
                        break
                k += 1
            depth = 0
            end = opened
            for m in range(opened, len(lines)):
                code = strip_strings_and_comments(lines[m])
                depth += code.count("{") - code.count("}")
                if depth == 0:
                    end = m
                    break
            body = [
                line
                for line in lines[opened + 1 : end]
                if line.strip()
            ]
            yield name, j + 1, len(body)
            i = end + 1
        else:
            i += 1


def main() -> int:
    known_file = ROOT / "tests/arch/known_long_commands.txt"
    known = {
        line.strip()
        for line in known_file.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    } if known_file.exists() else set()
    every = []
    for path in sorted(SOURCES.rglob("*.rs")):
        rel = path.relative_to(ROOT).as_posix()
        for name, line, length in commands(path):
            every.append((length, name, rel, line))
    if "--all" in sys.argv:
        for length, name, rel, line in sorted(every, reverse=True):
            print(f"{length:4} {name} ({rel}:{line})")
    long = {name: (length, rel, line) for length, name, rel, line in every if length > LIMIT}
    for name in sorted(known - set(long)):
        print(f"thin commands: {name} is {LIMIT} lines or fewer now (or gone); take it off {known_file.relative_to(ROOT)}")
    new = sorted(set(long) - known)
    for name in new:
        length, rel, line = long[name]
        print(f"thin commands: {name} ({rel}:{line}) has {length} body lines, over {LIMIT}; "
              "move its chain into one core function and call that")
    if new:
        return 1
    print(f"thin commands: ok ({len(every)} commands, {len(long)} older ones still listed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
