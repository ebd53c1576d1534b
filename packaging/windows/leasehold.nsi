; Leasehold's Windows installer, built here with Debian's makensis (packaging/windows/build.sh).
; Tauri's own NSIS bundler downloads its NSIS toolset and plugin DLL from GitHub at build time,
; which this offline machine cannot do, so the installer is this script.
;
; Per user, no administrator: the files go to %LOCALAPPDATA%\Programs\Leasehold, the shortcut to
; the user's Start menu, the uninstall entry to HKCU. The app needs the WebView2 Runtime, which
; Windows 10 (since 2021 updates) and 11 ship; when it is missing the installer downloads
; Microsoft's bootstrapper and runs it with `/silent /install`, and says so clearly when that
; fails (offline): Leasehold is installed anyway.
;
; The self-update (tauri-plugin-updater) runs this installer as
;   setup.exe /P /UPDATE /R /ARGS …
; /P passive (progress only, no questions), /S silent, /UPDATE update mode (no Start-menu
; shortcut recreated, the WebView2 step skipped, the data folder untouched as always), /R start
; Leasehold again when done, /ARGS the arguments to start it with.
;
; makensis -DVERSION=0.1.0 -DBIN_DIR=… -DICON=… -DOUT_FILE=… [-DFAST]
;          [-DWEBVIEW2_BOOTSTRAPPER_URL=http://127.0.0.1:…/setup.exe] leasehold.nsi
; (-DFAST: zlib instead of solid LZMA, for the test build's speed; the bootstrapper URL is
; replaced only by tests, with a stand-in served on loopback.)

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
!include "FileFunc.nsh"

!define PRODUCT "Leasehold"
!define PUBLISHER "Leasehold"
!define UNINSTALL_KEY "Software\Microsoft\Windows\CurrentVersion\Uninstall\Leasehold"
; The WebView2 Runtime's client id; `pv` is its version once installed (per machine or per user).
!define WEBVIEW2_KEY "SOFTWARE\Microsoft\EdgeUpdate\Clients\{F3017226-FE2A-4295-8BDF-00C3A9A7E4C5}"
!define WEBVIEW2_URL "https://developer.microsoft.com/microsoft-edge/webview2/"
!ifndef WEBVIEW2_BOOTSTRAPPER_URL
  ; Microsoft's Evergreen bootstrapper (what Tauri's own installer downloads).
  !define WEBVIEW2_BOOTSTRAPPER_URL "https://go.microsoft.com/fwlink/p/?LinkId=2124703"
!endif

Var Passive
Var UpdateMode
Var Relaunch
Var RelaunchArgs

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

; A passive install (the updater's /P) shows only the progress page.
!define MUI_PAGE_CUSTOMFUNCTION_PRE SkipWhenPassive
!insertmacro MUI_PAGE_DIRECTORY
!insertmacro MUI_PAGE_INSTFILES
!define MUI_PAGE_CUSTOMFUNCTION_PRE SkipWhenPassive
!insertmacro MUI_PAGE_FINISH
!insertmacro MUI_UNPAGE_CONFIRM
!insertmacro MUI_UNPAGE_INSTFILES

!insertmacro MUI_LANGUAGE "SimpChinese"
!insertmacro MUI_LANGUAGE "English"

LangString WebView2Installing ${LANG_ENGLISH} "Installing Microsoft Edge WebView2, which Leasehold shows its window with…"
LangString WebView2Installing ${LANG_SIMPCHINESE} "正在安装 Microsoft Edge WebView2（算力租用管家用它显示窗口）…"
LangString WebView2DownloadFailed ${LANG_ENGLISH} "Leasehold needs Microsoft Edge WebView2, which is not installed, and it could not be downloaded (is this computer offline?). Leasehold will be installed now; before opening it, connect to the internet and run this installer again, or install the WebView2 Runtime from ${WEBVIEW2_URL}"
LangString WebView2DownloadFailed ${LANG_SIMPCHINESE} "算力租用管家需要 Microsoft Edge WebView2，这台电脑上没有安装，而且无法下载（是否没有联网？）。现在会继续安装；打开程序之前，请联网后重新运行本安装程序，或从 ${WEBVIEW2_URL} 安装 WebView2 运行时。"
LangString WebView2SetupFailed ${LANG_ENGLISH} "Microsoft Edge WebView2 could not be installed (its installer ended with code $1). Leasehold will be installed now; before opening it, install the WebView2 Runtime from ${WEBVIEW2_URL}"
LangString WebView2SetupFailed ${LANG_SIMPCHINESE} "Microsoft Edge WebView2 安装失败（安装程序返回代码 $1）。现在会继续安装；打开程序之前，请从 ${WEBVIEW2_URL} 安装 WebView2 运行时。"
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

Function .onInit
  ${GetParameters} $R0
  ClearErrors
  ${GetOptions} $R0 "/P" $R1
  ${IfNot} ${Errors}
    StrCpy $Passive 1
    SetAutoClose true
  ${EndIf}
  ClearErrors
  ${GetOptions} $R0 "/UPDATE" $R1
  ${IfNot} ${Errors}
    StrCpy $UpdateMode 1
  ${EndIf}
  ClearErrors
  ${GetOptions} $R0 "/R" $R1
  ${IfNot} ${Errors}
    StrCpy $Relaunch 1
  ${EndIf}
  ClearErrors
  ${GetOptions} $R0 "/ARGS" $RelaunchArgs
  ${If} ${Silent}
    StrCpy $Passive 1
  ${EndIf}
FunctionEnd

Function SkipWhenPassive
  ${If} $Passive == 1
    Abort
  ${EndIf}
FunctionEnd

; Downloads Microsoft's bootstrapper and runs it silently. Windows' own downloader (urlmon, the
; system's proxy and TLS; Wine has it too, which the installer test relies on); PowerShell's
; Invoke-WebRequest when that fails. NSISdl cannot reach even loopback under Wine.
Function InstallWebView2
  DetailPrint "$(WebView2Installing)"
  StrCpy $2 "$TEMP\MicrosoftEdgeWebview2Setup.exe"
  Delete "$2"
  System::Call 'urlmon::URLDownloadToFileW(p 0, w "${WEBVIEW2_BOOTSTRAPPER_URL}", w "$2", i 0, p 0) i .r0'
  ${If} $0 != 0
    nsExec::ExecToLog `powershell.exe -NoProfile -NonInteractive -ExecutionPolicy Bypass -Command "[Net.ServicePointManager]::SecurityProtocol = [Net.SecurityProtocolType]::Tls12; Invoke-WebRequest -UseBasicParsing -TimeoutSec 60 -Uri '${WEBVIEW2_BOOTSTRAPPER_URL}' -OutFile '$2'"`
    Pop $0
  ${EndIf}
  ${IfNot} ${FileExists} "$2"
    MessageBox MB_OK|MB_ICONEXCLAMATION "$(WebView2DownloadFailed)" /SD IDOK
    Return
  ${EndIf}
  ExecWait '"$2" /silent /install' $1
  Delete "$2"
  ${If} $1 != 0
    MessageBox MB_OK|MB_ICONEXCLAMATION "$(WebView2SetupFailed)" /SD IDOK
  ${EndIf}
FunctionEnd

Section "Leasehold" SecMain
  SectionIn RO
  SetShellVarContext current
  SetOutPath "$INSTDIR"
  ; The updater quits the app as it starts this installer: give the old process a few seconds
  ; to let go of its file before asking.
  StrCpy $3 0
retry:
  ClearErrors
  File "${BIN_DIR}\leasehold-app.exe"
  ${If} ${Errors}
    ${If} $3 < 20
      IntOp $3 $3 + 1
      Sleep 500
      Goto retry
    ${EndIf}
    MessageBox MB_RETRYCANCEL|MB_ICONEXCLAMATION "$(AppRunning)" /SD IDCANCEL IDRETRY retry
    Abort
  ${EndIf}
  File "${BIN_DIR}\leasehold.exe"
  ; The GNU build loads Microsoft's WebView2 loader from beside the app.
  File "${BIN_DIR}\WebView2Loader.dll"
  File "/oname=leasehold.ico" "${ICON}"

  ; An update keeps the shortcut the user has (or removed).
  ${If} $UpdateMode != 1
    CreateShortCut "$SMPROGRAMS\${PRODUCT}.lnk" "$INSTDIR\leasehold-app.exe" "" "$INSTDIR\leasehold.ico" 0
  ${EndIf}

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

  ; The app an update replaces already ran, so the runtime is there: no download in update mode.
  ${If} $UpdateMode != 1
    Call WebView2Present
    ${If} $0 == ""
      Call InstallWebView2
    ${EndIf}
  ${EndIf}

  ${If} $Relaunch == 1
    Exec '"$INSTDIR\leasehold-app.exe" $RelaunchArgs'
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
