#!/usr/bin/env python3
"""A Tauri command is a thin adapter: it parses its input, makes one call into core and hands the
answer back (ARCHITECTURE.md, "Core decides, adapters adapt"). This fails when the body of a
`#[tauri::command]` in src-tauri/src is over 10 lines, unless the command is one of the older
ones listed in tests/arch/known_long_commands.txt; it notes a listed command that is short now or
gone, so the list only shrinks. It also fails when a command chains two or more calls into core
(`module::function(…)`, or a type's function other than a plain constructor): a chain is a use
case and belongs in `leasehold_core::usecase`. The app's own parts (`crate::…`) and Tauri's do
not count. `--all` prints every command's length and core calls, longest first.
Run by `make core-is-tauri-free` (part of `make test`)."""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ROOT / "src-tauri/src"
LIMIT = 10
FN = re.compile(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)")
# A call through a path: `ledger::list(`, `WatchdogOptions::resolve(`, `a::b::<T>(`.
PATH_CALL = re.compile(
    r"\b((?:[A-Za-z_][A-Za-z0-9_]*::)+)([A-Za-z_][A-Za-z0-9_]*)\s*(?:::<[^>]*>)?\("
)
# Paths that are not core: the app's own parts, the standard library, Tauri, and JSON.
NOT_CORE = {"crate", "self", "super", "std", "core", "alloc", "tauri", "serde_json"}
# Building a value is not deciding anything.
CONSTRUCTORS = {"new", "default", "from"}


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
            yield name, j + 1, body
            i = end + 1
        else:
            i += 1


def core_calls(body: list[str]) -> list[str]:
    """The calls into core in a command's body, as written (`team::status`)."""
    found = []
    for line in body:
        for call in PATH_CALL.finditer(strip_strings_and_comments(line)):
            path, function = call.group(1), call.group(2)
            if path.split("::")[0] in NOT_CORE or function in CONSTRUCTORS:
                continue
            found.append(path + function)
    return found


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
        for name, line, body in commands(path):
            every.append((len(body), name, rel, line, core_calls(body)))
    if "--all" in sys.argv:
        for length, name, rel, line, calls in sorted(every, reverse=True):
            print(f"{length:4} {name} ({rel}:{line}) {', '.join(calls)}")
    long = {name: (length, rel, line) for length, name, rel, line, _ in every if length > LIMIT}
    for name in sorted(known - set(long)):
        print(f"thin commands: {name} is {LIMIT} lines or fewer now (or gone); take it off {known_file.relative_to(ROOT)}")
    new = sorted(set(long) - known)
    for name in new:
        length, rel, line = long[name]
        print(f"thin commands: {name} ({rel}:{line}) has {length} body lines, over {LIMIT}; "
              "move its chain into one core function and call that")
    chains = [(name, rel, line, calls) for _, name, rel, line, calls in every if len(calls) > 1]
    for name, rel, line, calls in chains:
        print(f"thin commands: {name} ({rel}:{line}) chains {len(calls)} calls into core "
              f"({', '.join(calls)}); make them one use case in leasehold_core::usecase")
    if new or chains:
        return 1
    print(f"thin commands: ok ({len(every)} commands, none chains core, {len(long)} older ones still listed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
