; Leasehold's Windows installer, built here with Debian's makensis (packaging/windows/build.sh).
; Tauri's own NSIS bundler downloads its NSIS toolset and plugin DLL from GitHub at build time,
; which this offline machine cannot do, so the installer is this script.
;
; Per user, no administrator: the files go to %LOCALAPPDATA%\Programs\Leasehold, the shortcut to
; the user's Start menu, the uninstall entry to HKCU. The app needs the WebView2 Runtime, which
; Windows 10 (since 2021 updates) and 11 ship; when it is missing the installer says where to get
; it and installs anyway (the bootstrapper cannot be bundled from here).
;
; makensis -DVERSION=0.1.0 -DBIN_DIR=… -DICON=… -DOUT_FILE=… [-DFAST] leasehold.nsi
; (-DFAST: zlib instead of solid LZMA, for the test build's speed.)

; A 64-bit installer for a 64-bit app (it also runs under Debian's 64-bit-only Wine in the tests).
Target amd64-unicode
ManifestDPIAware true
RequestExecutionLevel user
!ifdef FAST
  SetCompressor zlib
!else
  SetCompressor /SOLID lzma
!endif

!include "MUI2.nsh"
!include "LogicLib.nsh"

!define PRODUCT "Leasehold"
!define PUBLISHER "Leasehold"
!define UNINSTALL_KEY "Software\Microsoft\Windows\CurrentVersion\Uninstall\Leasehold"
; The WebView2 Runtime's client id; `pv` is its version once installed (per machine or per user).
!define WEBVIEW2_KEY "SOFTWARE\Microsoft\EdgeUpdate\Clients\{F3017226-FE2A-4295-8BDF-00C3A9A7E4C5}"
!define WEBVIEW2_URL "https://developer.microsoft.com/microsoft-edge/webview2/"

Name "${PRODUCT}"
OutFile "${OUT_FILE}"
InstallDir "$LOCALAPPDATA\Programs\${PRODUCT}"
InstallDirRegKey HKCU "${UNINSTALL_KEY}" "InstallLocation"
BrandingText "${PRODUCT} ${VERSION}"

VIProductVersion "${VERSION}.0"
VIAddVersionKey /LANG=1033 "ProductName" "${PRODUCT}"
VIAddVersionKey /LANG=1033 "FileDescription" "${PRODUCT} installer"
VIAddVersionKey /LANG=1033 "FileVersion" "${VERSION}"
VIAddVersionKey /LANG=1033 "ProductVersion" "${VERSION}"
VIAddVersionKey /LANG=1033 "LegalCopyright" "MIT OR Apache-2.0"

!define MUI_ICON "${ICON}"
!define MUI_UNICON "${ICON}"
!define MUI_ABORTWARNING
!define MUI_FINISHPAGE_RUN "$INSTDIR\leasehold-app.exe"

!insertmacro MUI_PAGE_DIRECTORY
!insertmacro MUI_PAGE_INSTFILES
!insertmacro MUI_PAGE_FINISH
!insertmacro MUI_UNPAGE_CONFIRM
!insertmacro MUI_UNPAGE_INSTFILES

!insertmacro MUI_LANGUAGE "SimpChinese"
!insertmacro MUI_LANGUAGE "English"

LangString WebView2Missing ${LANG_ENGLISH} "Leasehold shows its window with Microsoft Edge WebView2, which is not installed on this computer. Windows 10 and 11 normally include it. Leasehold will be installed now; before opening it, install the WebView2 Runtime from ${WEBVIEW2_URL}"
LangString WebView2Missing ${LANG_SIMPCHINESE} "算力租用管家的窗口由 Microsoft Edge WebView2 显示，这台电脑上还没有安装它（Windows 10 和 11 一般自带）。现在会继续安装；打开程序之前，请先从 ${WEBVIEW2_URL} 安装 WebView2 运行时。"
LangString AppRunning ${LANG_ENGLISH} "Leasehold is running. Quit it (tray icon → Quit) and click Retry."
LangString AppRunning ${LANG_SIMPCHINESE} "算力租用管家正在运行。请先退出（托盘图标 → 退出），再点“重试”。"

Function WebView2Present
  ; 64-bit Windows keeps the per-machine entry under WOW6432Node.
  ReadRegStr $0 HKLM "SOFTWARE\WOW6432Node\Microsoft\EdgeUpdate\Clients\{F3017226-FE2A-4295-8BDF-00C3A9A7E4C5}" "pv"
  ${If} $0 == ""
  ${OrIf} $0 == "0.0.0.0"
    ReadRegStr $0 HKCU "${WEBVIEW2_KEY}" "pv"
  ${EndIf}
  ${If} $0 == "0.0.0.0"
    StrCpy $0 ""
  ${EndIf}
FunctionEnd

Section "Leasehold" SecMain
  SectionIn RO
  SetShellVarContext current
  SetOutPath "$INSTDIR"
retry:
  ClearErrors
  File "${BIN_DIR}\leasehold-app.exe"
  ${If} ${Errors}
    MessageBox MB_RETRYCANCEL|MB_ICONEXCLAMATION "$(AppRunning)" IDRETRY retry
    Abort
  ${EndIf}
  File "${BIN_DIR}\leasehold.exe"
  ; The GNU build loads Microsoft's WebView2 loader from beside the app.
  File "${BIN_DIR}\WebView2Loader.dll"
  File "/oname=leasehold.ico" "${ICON}"

  CreateShortCut "$SMPROGRAMS\${PRODUCT}.lnk" "$INSTDIR\leasehold-app.exe" "" "$INSTDIR\leasehold.ico" 0

  WriteUninstaller "$INSTDIR\uninstall.exe"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "DisplayName" "${PRODUCT} · 算力租用管家"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "DisplayVersion" "${VERSION}"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "Publisher" "${PUBLISHER}"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "DisplayIcon" "$INSTDIR\leasehold.ico"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "InstallLocation" "$INSTDIR"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "UninstallString" '"$INSTDIR\uninstall.exe"'
  WriteRegStr HKCU "${UNINSTALL_KEY}" "QuietUninstallString" '"$INSTDIR\uninstall.exe" /S'
  WriteRegDWORD HKCU "${UNINSTALL_KEY}" "NoModify" 1
  WriteRegDWORD HKCU "${UNINSTALL_KEY}" "NoRepair" 1

  Call WebView2Present
  ${If} $0 == ""
    MessageBox MB_OK|MB_ICONINFORMATION "$(WebView2Missing)" /SD IDOK
  ${EndIf}
SectionEnd

; The user's data (%APPDATA%\Leasehold: the database, logs, known_hosts) and the keychain entries
; stay: an uninstall must never lose the ledger of bills.
Section "Uninstall"
  SetShellVarContext current
  Delete "$SMPROGRAMS\${PRODUCT}.lnk"
  Delete "$INSTDIR\leasehold-app.exe"
  Delete "$INSTDIR\leasehold.exe"
  Delete "$INSTDIR\WebView2Loader.dll"
  Delete "$INSTDIR\leasehold.ico"
  Delete "$INSTDIR\uninstall.exe"
  RMDir "$INSTDIR"
  DeleteRegKey HKCU "${UNINSTALL_KEY}"
SectionEnd
