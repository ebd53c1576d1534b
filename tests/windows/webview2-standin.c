/* A stand-in for Microsoft's WebView2 bootstrapper (MicrosoftEdgeWebview2Setup.exe) for the
 * installer test under Wine (tests/windows/run.sh): it writes its command line to
 * %TEMP%\webview2-standin.txt and registers the runtime per user the way the real one does
 * (EdgeUpdate\Clients\{F3017226-…} "pv"), so a second install finds it present. */
#include <windows.h>
#include <stdio.h>
#include <string.h>

int main(void) {
    char path[MAX_PATH];
    DWORD length = GetTempPathA(MAX_PATH, path);
    if (length == 0 || length + 32 > MAX_PATH) return 2;
    strcat(path, "webview2-standin.txt");
    FILE *out = fopen(path, "w");
    if (!out) return 3;
    fputs(GetCommandLineA(), out);
    fclose(out);
    HKEY key;
    if (RegCreateKeyExA(HKEY_CURRENT_USER,
                        "Software\\Microsoft\\EdgeUpdate\\Clients\\{F3017226-FE2A-4295-8BDF-00C3A9A7E4C5}",
                        0, NULL, 0, KEY_WRITE, NULL, &key, NULL) != ERROR_SUCCESS)
        return 4;
    const char version[] = "130.0.2849.80";
    RegSetValueExA(key, "pv", 0, REG_SZ, (const BYTE *)version, sizeof version);
    RegCloseKey(key);
    return 0;
}
