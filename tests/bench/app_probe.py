#!/usr/bin/env python3
"""Start-up time and idle memory of a desktop binary, for tests/bench/app.sh.

Starts the binary on the current X display with a fresh profile (HOME, XDG folders, database),
polls the X server until a window with the given title is mapped (that is the start-up time),
lets it settle, then sums the proportional set size (PSS, shared pages split fairly) of the
process and every process it started (WebKitWebProcess, WebKitNetworkProcess) from
/proc/PID/smaps_rollup, and the same split by mapping (which library's code, which font, the
heap) from /proc/PID/smaps, so a gap between two apps can be traced to what holds it. Prints one
JSON object per run.
"""

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator

TIMEOUT_S = 90


def window_mapped(title: str) -> bool:
    tree = subprocess.run(["xwininfo", "-root", "-tree"], capture_output=True, text=True).stdout
    for line in tree.splitlines():
        if f'"{title}"' in line:
            window = line.split()[0]
            info = subprocess.run(["xwininfo", "-id", window], capture_output=True, text=True).stdout
            if "Map State: IsViewable" in info:
                return True
    return False


def children_of() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as stat:
                # The command name may hold spaces; the parent pid follows its closing parenthesis.
                ppid = int(stat.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(name))
    return children


def process_tree(root: int) -> list[int]:
    children = children_of()
    found, queue = [], [root]
    while queue:
        pid = queue.pop()
        found.append(pid)
        queue.extend(children.get(pid, []))
    return found


def role(pid: int, root: int) -> str:
    """Which of the three processes a pid is: the app itself, WebKit's web (page) or network one."""
    if pid == root:
        return "app"
    try:
        with open(f"/proc/{pid}/comm") as comm:
            name = comm.read().strip()
    except OSError:
        return "other"
    return {"WebKitWebProces": "web", "WebKitNetworkPr": "network"}.get(name, "other")


def memory_kb(pids: list[int], root: int) -> tuple[int, int, dict[str, int]]:
    """PSS and RSS summed over `pids`, and the PSS of each role (where the memory goes)."""
    pss = rss = 0
    by_role: dict[str, int] = {}
    for pid in pids:
        try:
            with open(f"/proc/{pid}/smaps_rollup") as rollup:
                for line in rollup:
                    if line.startswith("Pss:"):
                        kb = int(line.split()[1])
                        pss += kb
                        key = role(pid, root)
                        by_role[key] = by_role.get(key, 0) + kb
                    elif line.startswith("Rss:"):
                        rss += int(line.split()[1])
        except OSError:
            continue
    return pss, rss, by_role


def mapping_name(path: str, perms: str, binary: str) -> str:
    """A mapping's label that two apps share: each app's own executable is 'the app binary'."""
    if not path:
        return "anonymous"
    if path.startswith("["):
        return path.strip("[]")
    if path.startswith(("/memfd:", "/dev/shm", "SYSV")):
        return "shared memory"
    kind = "code" if "x" in perms else "data"
    file = path.split(" (deleted)")[0]
    if os.path.realpath(file) == os.path.realpath(binary):
        return f"the app binary {kind}"
    return f"{os.path.basename(file)} {kind}"


def pss_by_mapping(pids: list[int], root: int, binary: str) -> dict[str, int]:
    """PSS in kB by process role and mapping label, e.g. 'web: libjavascriptcoregtk-4.1.so.0.9.11 code'."""
    found: dict[str, int] = {}
    for pid in pids:
        label = None
        try:
            with open(f"/proc/{pid}/smaps") as smaps:
                for line in smaps:
                    fields = line.split(None, 5)
                    if "-" in fields[0] and not fields[0].endswith(":"):
                        path = fields[5].strip() if len(fields) > 5 else ""
                        label = f"{role(pid, root)}: {mapping_name(path, fields[1], binary)}"
                    elif fields[0] == "Pss:" and label:
                        found[label] = found.get(label, 0) + int(fields[1])
        except OSError:
            continue
    return found


@contextlib.contextmanager
def idle_app(binary: str, title: str, settle_s: float) -> Iterator[tuple[int, float]]:
    """Starts `binary` with a fresh profile, waits for its window and `settle_s` more, and yields
    its pid and start-up time in ms; the app and its children are stopped afterwards."""
    with tempfile.TemporaryDirectory(prefix="leasehold-bench-") as profile:
        env = dict(
            os.environ,
            HOME=profile,
            XDG_DATA_HOME=os.path.join(profile, "data"),
            XDG_CONFIG_HOME=os.path.join(profile, "config"),
            XDG_CACHE_HOME=os.path.join(profile, "cache"),
            LEASEHOLD_DB=os.path.join(profile, "leasehold.sqlite3"),
            WEBKIT_DISABLE_DMABUF_RENDERER="1",
            LIBGL_ALWAYS_SOFTWARE="1",
        )
        started = time.monotonic()
        app = subprocess.Popen(
            [binary], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )
        try:
            while not window_mapped(title):
                if app.poll() is not None:
                    raise RuntimeError(f"{binary} exited with {app.returncode} before mapping a window")
                if time.monotonic() - started > TIMEOUT_S:
                    raise RuntimeError(f"no window titled {title!r} after {TIMEOUT_S} s")
                time.sleep(0.01)
            startup_ms = (time.monotonic() - started) * 1000
            # Idle: the page has loaded and nothing is happening any more.
            time.sleep(settle_s)
            yield app.pid, startup_ms
        finally:
            os.killpg(app.pid, signal.SIGTERM)
            try:
                app.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(app.pid, signal.SIGKILL)
                app.wait()


def run_once(binary: str, title: str, settle_s: float) -> dict:
    with idle_app(binary, title, settle_s) as (pid, startup_ms):
        tree = process_tree(pid)
        pss, rss, by_role = memory_kb(tree, pid)
        return {
            "startup_ms": round(startup_ms, 1),
            "pss_kb": pss,
            "rss_kb": rss,
            "processes": len(tree),
            **{f"pss_{name}_kb": kb for name, kb in by_role.items()},
            "pss_by_mapping_kb": pss_by_mapping(tree, pid, binary),
        }


if __name__ == "__main__":
    binary, title, settle = sys.argv[1], sys.argv[2], float(sys.argv[3])
    print(json.dumps(run_once(binary, title, settle)), flush=True)
