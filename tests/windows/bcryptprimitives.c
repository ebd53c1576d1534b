/* Test harness only: Debian 12's Wine 8.0 lacks bcryptprimitives.dll, which every Windows 10/11
 * ships and Rust's standard library (1.78+) imports for ProcessPrng, its random source. This
 * stand-in gives the same call through RtlGenRandom (advapi32's SystemFunction036), so the real
 * leasehold.exe starts under that Wine. tests/windows/run.sh builds it into the Wine prefix only
 * when Wine has no bcryptprimitives.dll of its own; nothing of it is shipped. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG chunk = length > 0x10000000 ? 0x10000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
