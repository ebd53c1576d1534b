#!/usr/bin/env python3
"""Fail on a new circle between the top-level modules of leasehold-core.

The UI has `ui/src/lib/imports.test.ts`; this is core's counterpart. It reads every file under
`crates/core/src` (test-only files left out), collects each reference to another top-level module
(`crate::billing::…`, `use crate::{store, billing::X}`, `super::super::store`), builds the graph
between top-level modules, and finds its strongly connected components. Each component of two or
more modules must be listed, modules sorted, in `tests/arch/known_cycles.txt` (today's circles):

- a component that is not listed, or one that grew beyond its listed line: exit 1, naming the
  edges that close it and where each one is written;
- a listed line that no longer exists (gone or smaller): a note, exit 0, so the list can shrink.

The circles between the direct sub-modules of `billing`, `monitor` and `team` are held to the
same list, as lines such as `team: alerts views` (issue 36, point 5: billing and monitor have none
left). The desktop app's modules (`src-tauri/src`: the state, the background loops, the tray, the
commands) are read the same way and may have no circle at all. Python 3 standard library only;
run from anywhere:

    python3 tests/arch/module_cycles.py
    python3 tests/arch/module_cycles.py --extra-edge target:stop   # self-test: must fail
    python3 tests/arch/module_cycles.py --extra-app-edge state:tray   # self-test: must fail
"""

import argparse
import os
import re
import sys
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SRC = os.path.join(ROOT, "crates", "core", "src")
APP_SRC = os.path.join(ROOT, "src-tauri", "src")
ALLOWLIST = os.path.join(ROOT, "tests", "arch", "known_cycles.txt")
SUBMODULE_REPORT = ("billing", "monitor", "team")

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def strip_code(text):
    """The text with comments, string and char literals blanked (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        two = text[i : i + 2]
        if two == "//":
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif two == "/*":
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif re.match(r'(?:b?r)(#*)"', text[i : i + 260]) and not (
            i and re.match(r"[A-Za-z0-9_]", text[i - 1])
        ):
            m = re.match(r'(?:b?r)(#*)"', text[i:])
            end = '"' + m.group(1)
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "'":
            m = re.match(r"'(?:\\(?:x[0-9A-Fa-f]{2}|u\{[0-9A-Fa-f]+\}|.)|[^\\'\n])'", text[i:])
            if m:  # a char literal; otherwise a lifetime, kept as is
                out.append(" " * m.end())
                i += m.end()
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def matching_brace(code, open_at):
    depth = 0
    for j in range(open_at, len(code)):
        if code[j] == "{":
            depth += 1
        elif code[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return len(code) - 1


def drop_cfg_test_blocks(code):
    """Remove inline `#[cfg(test)] mod name { … }` bodies."""
    while True:
        m = re.search(r"#\[cfg\(test\)\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+"
                      + IDENT + r"\s*\{", code)
        if not m:
            return code
        end = matching_brace(code, m.end() - 1)
        code = code[: m.start()] + re.sub(r"[^\n]", " ", code[m.start() : end + 1]) + code[end + 1 :]


def module_path(rel):
    """crates/core/src-relative path → module path, e.g. billing/engine.rs → [billing, engine]."""
    parts = rel[:-3].split("/")
    if parts[-1] in ("mod", "lib"):
        parts = parts[:-1]
    return parts


def test_only_files(files, codes):
    """Files a `#[cfg(test)] mod name;` declares, and files named or placed as tests."""
    out = set()
    for rel in files:
        name = os.path.basename(rel)
        if name == "tests.rs" or name.endswith("_tests.rs") or "/tests/" in "/" + rel:
            out.add(rel)
    for rel, code in codes.items():
        base = os.path.dirname(rel) if os.path.basename(rel) in ("mod.rs", "lib.rs") else rel[:-3]
        for m in re.finditer(r"#\[cfg\(test\)\]\s*(?:#\[[^\]]*\]\s*)*mod\s+(" + IDENT + r")\s*;", code):
            for cand in (f"{base}/{m.group(1)}.rs", f"{base}/{m.group(1)}/mod.rs"):
                out.add(cand.lstrip("/"))
    return out


def split_top(inner):
    items, depth, cur = [], 0, []
    for ch in inner:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            items.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    items.append("".join(cur))
    return [re.sub(r"\s+", "", it) for it in items if it.strip()]


def references(code):
    """Yield (absolute-or-relative prefix, path segments after it, offset) for every path."""
    # `crate::{a, b::c}` and `super::{…}` groups
    for m in re.finditer(r"\b(crate|(?:super\s*::\s*)*super|self)\s*::\s*\{", code):
        prefix = re.sub(r"\s+", "", m.group(1))
        end = matching_brace(code, m.end() - 1)
        for item in split_top(code[m.end() : end]):
            segs = re.findall(IDENT, item.split("{")[0])
            if segs:
                yield prefix, segs, m.start()
    for m in re.finditer(r"(?<![A-Za-z0-9_:])\$?\b(crate|(?:super\s*::\s*)*super)((?:\s*::\s*" + IDENT + r")+)", code):
        prefix = re.sub(r"\s+", "", m.group(1))
        segs = re.findall(IDENT, m.group(2))
        yield prefix, segs, m.start()


def resolve(here, prefix, segs):
    """Absolute module path of a reference made from module path `here`."""
    if prefix == "crate":
        return segs
    if prefix == "self":
        return here + segs
    ups = prefix.count("super")
    if ups > len(here):
        return None
    return here[: len(here) - ups] + segs


def collect(extra_edges, src=SRC):
    shown = os.path.relpath(src, ROOT).replace(os.sep, "/")
    files = []
    for dirpath, _, names in os.walk(src):
        for name in names:
            if name.endswith(".rs"):
                files.append(os.path.relpath(os.path.join(dirpath, name), src).replace(os.sep, "/"))
    files.sort()
    raw = {rel: open(os.path.join(src, rel), encoding="utf-8").read() for rel in files}
    codes = {rel: strip_code(text) for rel, text in raw.items()}
    skip = test_only_files(files, codes)

    lib = drop_cfg_test_blocks(codes["lib.rs"])
    modules = set(re.findall(r"\bmod\s+(" + IDENT + r")\s*;", lib))
    root_items = {}  # `pub use clock::Clock` in lib.rs: crate::Clock is the clock module's
    for m in re.finditer(r"\bpub\s+use\s+(" + IDENT + r")\s*::\s*([^;]*);", lib):
        for item in re.findall(IDENT, m.group(2)):
            root_items.setdefault(item, m.group(1))

    top = defaultdict(dict)  # a → {b: "file:line"}
    refs_by_file = {}
    for rel in files:
        if rel in skip or rel in ("lib.rs", "main.rs"):
            continue
        code = drop_cfg_test_blocks(codes[rel])
        here = module_path(rel)
        refs = []
        for prefix, segs, at in references(code):
            target = resolve(here, prefix, segs)
            if not target:
                continue
            line = code.count("\n", 0, at) + 1
            target = [root_items.get(target[0], target[0])] + target[1:]
            refs.append((target, f"{shown}/{rel}:{line}", code, at))
            if target[0] in modules and target[0] != here[0]:
                top[here[0]].setdefault(target[0], f"{shown}/{rel}:{line}")
        refs_by_file[rel] = (here, refs, code)
    for a, b in extra_edges:
        top[a].setdefault(b, "--extra-edge")
    return top, refs_by_file


def sccs(graph):
    """Tarjan's strongly connected components, each a sorted tuple, sizes ≥ 2 only."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    nodes = sorted(set(graph) | {b for a in graph for b in graph[a]})

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(tuple(sorted(comp)))

    sys.setrecursionlimit(10000)
    for v in nodes:
        if v not in index:
            visit(v)
    return sorted(out)


def submodule_graph(module, refs_by_file):
    """Edges between the direct sub-modules of `module` (`mod.rs` is the module's own file)."""
    children = {p[1] for (h, _, _) in refs_by_file.values() for p in [h] if len(p) > 1 and p[0] == module}
    mod_rel = f"{module}/mod.rs"
    reexports = {}  # item re-exported by mod.rs → the child it comes from
    if mod_rel in refs_by_file:
        code = refs_by_file[mod_rel][2]
        for m in re.finditer(r"\bpub(?:\([^)]*\))?\s+use\s+(?:self\s*::\s*)?(" + IDENT + r")\s*::\s*([^;]*);", code):
            child, rest = m.group(1), m.group(2)
            if child in children:
                for item in re.findall(IDENT, rest):
                    if item not in ("self", "as"):
                        reexports.setdefault(item, child)
    graph = defaultdict(dict)
    for rel, (here, refs, code) in refs_by_file.items():
        if not here or here[0] != module:
            continue
        src = here[1] if len(here) > 1 else "mod.rs"
        found = [(t, where) for (t, where, _, _) in refs]
        if src == "mod.rs":  # mod.rs names its children directly: `engine::compute(…)`
            body = re.sub(r"\bpub(?:\([^)]*\))?\s+use\s+[^;]*;", "", code)
            for m in re.finditer(r"(?<![A-Za-z0-9_:])(" + IDENT + r")\s*::", body):
                if m.group(1) in children:
                    line = code.count("\n", 0, m.start()) + 1
                    found.append(([module, m.group(1)], f"crates/core/src/{rel}:{line}"))
            found = [(t, w) for (t, w) in found if not _is_reexport_line(code, w)]
        for target, where in found:
            if len(target) < 2 or target[0] != module:
                continue
            dst = target[1] if target[1] in children else reexports.get(target[1], "mod.rs")
            if dst != src:
                graph[src].setdefault(dst, where)
    return graph


def _is_reexport_line(code, where):
    line = int(where.rsplit(":", 1)[1])
    text = code.split("\n")[line - 1]
    return re.match(r"\s*pub(?:\([^)]*\))?\s+use\b", text) is not None


def read_allowlist(path):
    """Top-level circles as sorted tuples; sub-module circles (`team: alerts views`) by module."""
    listed, by_module = [], defaultdict(list)
    if os.path.exists(path):
        for raw in open(path, encoding="utf-8"):
            text = raw.split("#", 1)[0].strip()
            if not text:
                continue
            module, colon, rest = text.partition(":")
            if colon:
                by_module[module.strip()].append(tuple(sorted(rest.split())))
            else:
                listed.append(tuple(sorted(text.split())))
    return listed, by_module


def cycle_edges(graph, comp):
    members = set(comp)
    return [(a, b, graph[a][b]) for a in sorted(members) for b in sorted(graph.get(a, ())) if b in members]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--extra-edge", action="append", default=[], metavar="A:B",
                    help="pretend module A references module B (to see the check fail)")
    ap.add_argument("--extra-app-edge", action="append", default=[], metavar="A:B",
                    help="pretend the app's module A references its module B")
    ap.add_argument("--allowlist", default=ALLOWLIST, help="the list of known circles")
    args = ap.parse_args()

    def edges(given, flag):
        out = []
        for e in given:
            a, sep, b = e.partition(":")
            if not sep or not a or not b:
                ap.error(f"{flag} wants A:B, got {e!r}")
            out.append((a, b))
        return out

    extra = edges(args.extra_edge, "--extra-edge")
    extra_app = edges(args.extra_app_edge, "--extra-app-edge")

    top, refs_by_file = collect(extra)
    found = sccs(top)
    listed, listed_sub = read_allowlist(args.allowlist)
    rel_allow = os.path.relpath(args.allowlist, ROOT)

    failures, notes = [], []
    for comp in found:
        if comp in listed:
            continue
        bigger_than = [l for l in listed if set(l) < set(comp)]
        what = "grew from '" + " ".join(bigger_than[0]) + "' to" if bigger_than else "new circle:"
        edges = "\n".join(f"      {a} → {b}   ({where})" for a, b, where in cycle_edges(top, comp))
        failures.append(f"  {what} {' '.join(comp)}\n    its edges:\n{edges}")
    for l in listed:
        if l not in found:
            now = [c for c in found if set(c) < set(l)]
            left = "; now " + ", ".join("'" + " ".join(c) + "'" for c in now) if now else ""
            notes.append(f"  '{' '.join(l)}' is gone{left}: remove or shrink its line in {rel_allow}")

    print("core module circles (top level):", "none" if not found else "")
    for comp in found:
        print("  " + " ".join(comp))
    print("sub-module circles (issue 36 point 5):")
    for module in SUBMODULE_REPORT:
        sub = submodule_graph(module, refs_by_file)
        comps = sccs(sub)
        if not comps:
            print(f"  {module}: none")
        for comp in comps:
            print(f"  {module}: {' ↔ '.join(comp)}")
            edges = cycle_edges(sub, comp)
            for a, b, where in edges:
                print(f"      {a} → {b}   ({where})")
            if comp not in listed_sub.get(module, []):
                lines = "\n".join(f"      {a} → {b}   ({where})" for a, b, where in edges)
                failures.append(f"  new circle in {module}: {' '.join(comp)}\n    its edges:\n{lines}")
        for l in listed_sub.get(module, []):
            if l not in comps:
                notes.append(f"  '{module}: {' '.join(l)}' is gone: remove its line in {rel_allow}")
    app_top, _ = collect(extra_app, APP_SRC)
    app_found = sccs(app_top)
    print("app module circles (src-tauri/src):", "none" if not app_found else "")
    for comp in app_found:
        edges = "\n".join(f"      {a} → {b}   ({where})" for a, b, where in cycle_edges(app_top, comp))
        print("  " + " ".join(comp))
        failures.append(f"  circle in the app: {' '.join(comp)}\n    its edges:\n{edges}")
    for n in notes:
        print("note:" + n[1:])
    if failures:
        print("\nFAIL: a circle between the app's modules, or between core modules that is not in "
              + rel_allow + ":", file=sys.stderr)
        print("\n".join(failures), file=sys.stderr)
        print("Break the circle (move the shared piece down, or pass a value/callback in) rather than "
              "adding it to the list.", file=sys.stderr)
        return 1
    print("module cycles: ok (no circle beyond " + rel_allow + ")")
    return 0


if __name__ == "__main__":
    sys.exit(main())
