#!/usr/bin/env python3
"""Which crates' machine code an idle app keeps in memory, for the idle-memory gap of app.sh.

Starts the binary as app_probe.py does, reads which pages of its executable code are resident
(/proc/PID/pagemap's present bit) and gives each resident page to the crate whose functions fill
most of it (symbols from `nm`, so the binary must keep its symbol table, as debug and our release
builds do). Prints MiB resident next to MiB of code per crate. A monomorphized generic counts for
the crate that defines it (`core::ptr::drop_in_place<our type>` is `core`), so `core` and `alloc`
are largely our own crates' instantiations.

    xvfb-run -a python3 tests/bench/app_code_by_crate.py target/debug/leasehold-app 'Leasehold · 算力租用管家'
"""

import bisect
import os
import re
import struct
import subprocess
import sys
from collections import Counter

from app_probe import idle_app

PAGE = 4096
SETTLE_S = 5


def crate_of(symbol: str) -> str:
    """`leasehold_core::store::open` → leasehold_core; `<alloc::vec::Vec<T> as …>::drop` → alloc."""
    name = re.sub(r"^<+(?:impl |dyn )?", "", symbol)
    found = re.match(r"([A-Za-z_][A-Za-z0-9_]*)(?:::|$)", name)
    return found.group(1) if found else "(unnamed)"


def code_symbols(binary: str) -> list[tuple[int, int, str]]:
    """(address, size, crate) of every function, sorted by address."""
    listing = subprocess.run(
        ["nm", "--demangle", "--defined-only", "--print-size", binary], capture_output=True, text=True, check=True
    ).stdout
    symbols = []
    for line in listing.splitlines():
        fields = line.split(" ", 3)
        if len(fields) == 4 and fields[2] in "tTwW":
            symbols.append((int(fields[0], 16), int(fields[1], 16), crate_of(fields[3])))
    return sorted(symbols)


def owner_of_page(symbols: list[tuple[int, int, str]], starts: list[int], page: int) -> str:
    bytes_by_crate: Counter[str] = Counter()
    index = max(bisect.bisect_right(starts, page) - 1, 0)
    while index < len(symbols) and symbols[index][0] < page + PAGE:
        address, size, crate = symbols[index]
        overlap = min(address + size, page + PAGE) - max(address, page)
        if overlap > 0:
            bytes_by_crate[crate] += overlap
        index += 1
    return bytes_by_crate.most_common(1)[0][0] if bytes_by_crate else "(between functions)"


def resident_code_pages(pid: int, binary: str) -> list[int]:
    """File addresses (as `nm` prints them) of the executable's resident code pages."""
    mappings = []
    with open(f"/proc/{pid}/maps") as maps:
        for line in maps:
            fields = line.split()
            if len(fields) >= 6 and os.path.realpath(fields[5]) == os.path.realpath(binary):
                low, high = (int(part, 16) for part in fields[0].split("-"))
                mappings.append((low, high, fields[1], int(fields[2], 16)))
    # A position-independent binary is loaded at some base: where its file offset 0 is mapped.
    base = min(low - offset for low, _, _, offset in mappings)
    pages = []
    with open(f"/proc/{pid}/pagemap", "rb") as pagemap:
        for low, high, perms, _ in mappings:
            if "x" not in perms:
                continue
            count = (high - low) // PAGE
            pagemap.seek(low // PAGE * 8)
            entries = pagemap.read(count * 8)
            for index in range(count):
                (entry,) = struct.unpack_from("<Q", entries, index * 8)
                if entry >> 63:
                    pages.append(low + index * PAGE - base)
    return pages


def main(binary: str, title: str) -> None:
    symbols = code_symbols(binary)
    starts = [address for address, _, _ in symbols]
    with idle_app(binary, title, SETTLE_S) as (pid, _):
        pages = resident_code_pages(pid, binary)
    resident: Counter[str] = Counter(owner_of_page(symbols, starts, page) for page in pages)
    total: Counter[str] = Counter()
    for _, size, crate in symbols:
        total[crate] += size
    print(f"resident code of {os.path.basename(binary)}: {len(pages) * PAGE / 2**20:.1f} MiB")
    print(f"{'crate':<28}{'resident MiB':>14}{'code MiB':>10}")
    for crate, page_count in resident.most_common(20):
        print(f"{crate:<28}{page_count * PAGE / 2**20:>14.2f}{total[crate] / 2**20:>10.2f}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
