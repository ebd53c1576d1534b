#!/usr/bin/env python3
"""SQL lives in two rooms: `crates/core/src/store` (SQLite) and `crates/core/src/team/server`
(the team's PostgreSQL). This fails when any other non-test file of core runs a statement
(`sqlx::query…`), unless it is one of the older files listed in tests/arch/known_sql.txt that
have yet to move; it notes a listed file that no longer has any, so the list only shrinks.
Run by `make core-is-tauri-free` (part of `make test`)."""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "crates/core/src"
ROOMS = ("store/", "team/server/")
STATEMENT = re.compile(r"\bsqlx::(query|query_as|query_scalar|raw_sql)\b|\bquery(_as|_scalar)?(::<[^>]*>)?\(\s*\"")


def is_test(rel: str) -> bool:
    return rel.endswith("tests.rs") or "/tests/" in rel or rel.endswith("_tests.rs")


def main() -> int:
    known = {
        line.strip()
        for line in (ROOT / "tests/arch/known_sql.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    found = set()
    for path in sorted(CORE.rglob("*.rs")):
        rel = path.relative_to(CORE).as_posix()
        if rel.startswith(ROOMS):
            continue
        text = path.read_text()
        if is_test(rel):
            continue
        # Statements in a file's own #[cfg(test)] module do not count.
        body = text.split("#[cfg(test)]")[0]
        if STATEMENT.search(body):
            found.add(rel)
    new = sorted(found - known)
    for rel in sorted(known - found):
        print(f"sql rooms: {rel} runs no SQL any more; take it off tests/arch/known_sql.txt")
    if new:
        for rel in new:
            print(f"sql rooms: crates/core/src/{rel} runs SQL; put it in store/ (or team/server/ for the team's PostgreSQL)")
        return 1
    print(f"sql rooms: ok ({len(found)} older files still listed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
