// Generated from the Tauri commands' Rust signatures (src-tauri/src/commands/*.rs, registered in
// src-tauri/src/lib.rs) by `make bindings` (src-tauri/src/typed_calls.rs). Do not edit.
// Each function calls one command through `call` (errors arrive as `BackendError`); its argument's
// fields are the command's parameters in camelCase, as Tauri names them.
import { Channel } from '@tauri-apps/api/core'
import { call } from '../backend/ipc'
import type { AcceptReport } from './AcceptReport'
import type { AccountRef } from './AccountRef'
import type { AccountRemoved } from './AccountRemoved'
import type { AccountSummary } from './AccountSummary'
import type { AccountSyncReport } from './AccountSyncReport'
import type { AddReport } from './AddReport'
import type { Alert } from './Alert'
import type { AlertRule } from './AlertRule'
import type { AppInfo } from './AppInfo'
import type { AtRiskReport } from './AtRiskReport'
import type { BackupProgress } from './BackupProgress'
import type { BackupRecord } from './BackupRecord'
import type { BackupStatus } from './BackupStatus'
import type { BidReport } from './BidReport'
import type { BidState } from './BidState'
import type { BillingRules } from './BillingRules'
import type { Board } from './Board'
import type { BuildInfo } from './BuildInfo'
import type { BusyHours } from './BusyHours'
import type { CancelReport } from './CancelReport'
import type { CatalogListing } from './CatalogListing'
import type { CheckOutcome } from './CheckOutcome'
import type { Conflict } from './Conflict'
import type { ConnectPlan } from './ConnectPlan'
import type { CostEstimate } from './CostEstimate'
import type { Delivery } from './Delivery'
import type { DestinationSummary } from './DestinationSummary'
import type { Estimate } from './Estimate'
import type { EstimateInput } from './EstimateInput'
import type { EstimateRequest } from './EstimateRequest'
import type { Explanation } from './Explanation'
import type { FinalBill } from './FinalBill'
import type { Forecast } from './Forecast'
import type { ForwardInfo } from './ForwardInfo'
import type { ForwardRequest } from './ForwardRequest'
import type { GeneratedKey } from './GeneratedKey'
import type { GpuMinute } from './GpuMinute'
import type { HandCheck } from './HandCheck'
import type { HandStop } from './HandStop'
import type { HourlyExtra } from './HourlyExtra'
import type { HuntReport } from './HuntReport'
import type { IncreaseReport } from './IncreaseReport'
import type { InstallReport } from './InstallReport'
import type { InstanceDetail } from './InstanceDetail'
import type { InstanceLink } from './InstanceLink'
import type { InstanceStatus } from './InstanceStatus'
import type { InstanceSummary } from './InstanceSummary'
import type { JobLog } from './JobLog'
import type { JobRecord } from './JobRecord'
import type { JobStatus } from './JobStatus'
import type { KeepAliveQuote } from './KeepAliveQuote'
import type { KeepAliveReport } from './KeepAliveReport'
import type { Kept } from './Kept'
import type { Lang } from './Lang'
import type { LinkStatus } from './LinkStatus'
import type { ListedInstance } from './ListedInstance'
import type { LocalGpuReport } from './LocalGpuReport'
import type { LoginChoices } from './LoginChoices'
import type { MarketView } from './MarketView'
import type { ModelShape } from './ModelShape'
import type { MonitorEvent } from './MonitorEvent'
import type { NewInstance } from './NewInstance'
import type { OfferFilter } from './OfferFilter'
import type { Policy } from './Policy'
import type { PowerAction } from './PowerAction'
import type { PowerReport } from './PowerReport'
import type { PowerVerb } from './PowerVerb'
import type { Preferences } from './Preferences'
import type { PriceCheck } from './PriceCheck'
import type { PriceCheckInput } from './PriceCheckInput'
import type { PriceEntry } from './PriceEntry'
import type { PriceIncrease } from './PriceIncrease'
import type { ProbeEvent } from './ProbeEvent'
import type { ProblemReport } from './ProblemReport'
import type { Provider } from './Provider'
import type { ProviderPreset } from './ProviderPreset'
import type { QuotedFee } from './QuotedFee'
import type { RecipeInfo } from './RecipeInfo'
import type { RecipeStatuses } from './RecipeStatuses'
import type { RecommendRequest } from './RecommendRequest'
import type { Recommendation } from './Recommendation'
import type { ReconcileRow } from './ReconcileRow'
import type { RefreshRound } from './RefreshRound'
import type { ReminderKind } from './ReminderKind'
import type { ReminderRules } from './ReminderRules'
import type { RemoveReport } from './RemoveReport'
import type { RentDefaults } from './RentDefaults'
import type { RentRequest } from './RentRequest'
import type { RentVsBuy } from './RentVsBuy'
import type { RentVsBuyInput } from './RentVsBuyInput'
import type { Rented } from './Rented'
import type { RunSummary } from './RunSummary'
import type { SavedTarget } from './SavedTarget'
import type { ServeCheck } from './ServeCheck'
import type { Snooze } from './Snooze'
import type { StepEvent } from './StepEvent'
import type { StopPlan } from './StopPlan'
import type { StopReport } from './StopReport'
import type { StopVia } from './StopVia'
import type { StoreStatus } from './StoreStatus'
import type { SyncReport } from './SyncReport'
import type { TeamLink } from './TeamLink'
import type { TeamStatus } from './TeamStatus'
import type { TerminalExit } from './TerminalExit'
import type { TestReport } from './TestReport'
import type { TorchWheelChoice } from './TorchWheelChoice'
import type { TorchWheelRequest } from './TorchWheelRequest'
import type { Totals } from './Totals'
import type { TrayLabels } from './TrayLabels'
import type { UpdateOffer } from './UpdateOffer'
import type { UpdateProgress } from './UpdateProgress'
import type { VerifyOutcome } from './VerifyOutcome'
import type { WatchdogOptions } from './WatchdogOptions'
import type { WatchdogRequest } from './WatchdogRequest'
import type { WatchdogStatus } from './WatchdogStatus'
import type { WebhookView } from './WebhookView'

/**
 * Whether the app can start, and on what. The UI asks this before anything else.
 *
 * `store_status` in src-tauri/src/commands/store.rs.
 */
export function storeStatus(): Promise<StoreStatus> {
  return call<StoreStatus>('store_status')
}

/**
 * Open the database again (after space was freed or the other program closed it).
 *
 * `store_retry` in src-tauri/src/commands/store.rs.
 */
export function storeRetry(): Promise<StoreStatus> {
  return call<StoreStatus>('store_retry')
}

/**
 * Copy the database into a private temporary folder and run the app on the copy, read-only.
 *
 * `store_open_copy` in src-tauri/src/commands/store.rs.
 */
export function storeOpenCopy(): Promise<StoreStatus> {
  return call<StoreStatus>('store_open_copy')
}

/**
 * Keep the old file under a timestamped name and start with an empty database.
 *
 * `store_start_fresh` in src-tauri/src/commands/store.rs.
 */
export function storeStartFresh(): Promise<StoreStatus> {
  return call<StoreStatus>('store_start_fresh')
}

/** `app_quit` in src-tauri/src/commands/store.rs. */
export function appQuit(): Promise<void> {
  return call<void>('app_quit')
}

/** `app_info` in src-tauri/src/commands/app.rs. */
export function appInfo(): Promise<AppInfo> {
  return call<AppInfo>('app_info')
}

/**
 * Settings → "Copy a problem report": redacted by core, shown to the user, copied only by them.
 *
 * `problem_report` in src-tauri/src/commands/app.rs.
 */
export function problemReport(): Promise<ProblemReport> {
  return call<ProblemReport>('problem_report')
}

/** `load_preferences` in src-tauri/src/commands/settings.rs. */
export function loadPreferences(): Promise<Preferences> {
  return call<Preferences>('load_preferences')
}

/** `save_preferences` in src-tauri/src/commands/settings.rs. */
export function savePreferences(args: { preferences: Preferences }): Promise<void> {
  return call<void>('save_preferences', args)
}

/** `load_draft` in src-tauri/src/commands/settings.rs. */
export function loadDraft(args: { wizard: string }): Promise<unknown> {
  return call<unknown>('load_draft', args)
}

/** `save_draft` in src-tauri/src/commands/settings.rs. */
export function saveDraft(args: { wizard: string; draft: unknown }): Promise<void> {
  return call<void>('save_draft', args)
}

/** `clear_draft` in src-tauri/src/commands/settings.rs. */
export function clearDraft(args: { wizard: string }): Promise<void> {
  return call<void>('clear_draft', args)
}

/** `provider_presets` in src-tauri/src/commands/billing.rs. */
export function providerPresets(): Promise<ProviderPreset[]> {
  return call<ProviderPreset[]>('provider_presets')
}

/** `currencies` in src-tauri/src/commands/billing.rs. */
export function currencies(): Promise<string[]> {
  return call<string[]>('currencies')
}

/**
 * Every check that needs no database, run as the user steps through the form.
 *
 * `validate_rental` in src-tauri/src/commands/billing.rs.
 */
export function validateRental(args: { rental: NewInstance }): Promise<void> {
  return call<void>('validate_rental', args)
}

/**
 * A fee as the provider quotes it (per day, per month, per GB) as the hourly figure the rules keep.
 *
 * `fee_per_hour` in src-tauri/src/commands/billing.rs.
 */
export function feePerHour(args: { extra: HourlyExtra; fee: QuotedFee }): Promise<string> {
  return call<string>('fee_per_hour', args)
}

/** `add_rental` in src-tauri/src/commands/billing.rs. */
export function addRental(args: { rental: NewInstance }): Promise<InstanceSummary> {
  return call<InstanceSummary>('add_rental', args)
}

/** `list_rentals` in src-tauri/src/commands/billing.rs. */
export function listRentals(): Promise<InstanceSummary[]> {
  return call<InstanceSummary[]>('list_rentals')
}

/** `rental_detail` in src-tauri/src/commands/billing.rs. */
export function rentalDetail(args: { name: string }): Promise<InstanceDetail> {
  return call<InstanceDetail>('rental_detail', args)
}

/** `record_power` in src-tauri/src/commands/billing.rs. */
export function recordPower(args: { name: string; action: PowerAction }): Promise<InstanceSummary> {
  return call<InstanceSummary>('record_power', args)
}

/** `forecast_rental` in src-tauri/src/commands/billing.rs. */
export function forecastRental(args: { name: string; until: string }): Promise<Forecast> {
  return call<Forecast>('forecast_rental', args)
}

/** `estimate_cost` in src-tauri/src/commands/billing.rs. */
export function estimateCost(args: { input: EstimateInput }): Promise<CostEstimate> {
  return call<CostEstimate>('estimate_cost', args)
}

/** `rent_vs_buy` in src-tauri/src/commands/billing.rs. */
export function rentVsBuy(args: { input: RentVsBuyInput }): Promise<RentVsBuy> {
  return call<RentVsBuy>('rent_vs_buy', args)
}

/** `estimate_vram` in src-tauri/src/commands/catalog.rs. */
export function estimateVram(args: { request: EstimateRequest }): Promise<Estimate> {
  return call<Estimate>('estimate_vram', args)
}

/** `recommend_gpus` in src-tauri/src/commands/catalog.rs. */
export function recommendGpus(args: { request: RecommendRequest }): Promise<Recommendation> {
  return call<Recommendation>('recommend_gpus', args)
}

/** `choose_torch_wheel` in src-tauri/src/commands/catalog.rs. */
export function chooseTorchWheel(args: { request: TorchWheelRequest }): Promise<TorchWheelChoice> {
  return call<TorchWheelChoice>('choose_torch_wheel', args)
}

/** `gpu_catalog` in src-tauri/src/commands/catalog.rs. */
export function gpuCatalog(): Promise<CatalogListing> {
  return call<CatalogListing>('gpu_catalog')
}

/** `model_presets` in src-tauri/src/commands/catalog.rs. */
export function modelPresets(): Promise<ModelShape[]> {
  return call<ModelShape[]>('model_presets')
}

/**
 * NVML is loaded on first use; `async` keeps that off the UI thread.
 *
 * `local_gpus` in src-tauri/src/commands/catalog.rs.
 */
export function localGpus(args: { request: EstimateRequest | null }): Promise<LocalGpuReport> {
  return call<LocalGpuReport>('local_gpus', args)
}

/** `connect_choices` in src-tauri/src/commands/ssh.rs. */
export function connectChoices(): Promise<LoginChoices> {
  return call<LoginChoices>('connect_choices')
}

/**
 * Not logged: a pasted line may carry a secret (`sshpass -p …`).
 *
 * `connect_preview` in src-tauri/src/commands/ssh.rs.
 */
export function connectPreview(args: { sshCommand: string }): Promise<DestinationSummary> {
  return call<DestinationSummary>('connect_preview', args)
}

/** `connect_generate_key` in src-tauri/src/commands/ssh.rs. */
export function connectGenerateKey(): Promise<GeneratedKey> {
  return call<GeneratedKey>('connect_generate_key')
}

/**
 * Test the connection step by step; on success the target is saved on the instance.
 *
 * `connect_test` in src-tauri/src/commands/ssh.rs.
 */
export function connectTest(args: { instance: string; plan: ConnectPlan; onStep: (message: StepEvent) => void }): Promise<TestReport> {
  return call<TestReport>('connect_test', { ...args, onStep: new Channel<StepEvent>(args.onStep) })
}

/** `connect_saved_target` in src-tauri/src/commands/ssh.rs. */
export function connectSavedTarget(args: { instance: string }): Promise<SavedTarget | null> {
  return call<SavedTarget | null>('connect_saved_target', args)
}

/** `connect_status` in src-tauri/src/commands/ssh.rs. */
export function connectStatus(args: { instance: string }): Promise<LinkStatus> {
  return call<LinkStatus>('connect_status', args)
}

/** `connect_disconnect` in src-tauri/src/commands/ssh.rs. */
export function connectDisconnect(args: { instance: string }): Promise<void> {
  return call<void>('connect_disconnect', args)
}

/**
 * A login shell on the instance; raw output bytes and then a JSON `TerminalExit` arrive on
 * `on_output`. Returns the terminal id for writes and resizes.
 *
 * `terminal_open` in src-tauri/src/commands/ssh.rs.
 */
export function terminalOpen(args: { instance: string; cols: number; rows: number; onOutput: (message: ArrayBuffer | TerminalExit) => void }): Promise<number> {
  return call<number>('terminal_open', { ...args, onOutput: new Channel<ArrayBuffer | TerminalExit>(args.onOutput) })
}

/** `terminal_write` in src-tauri/src/commands/ssh.rs. */
export function terminalWrite(args: { id: number; data: string }): Promise<void> {
  return call<void>('terminal_write', args)
}

/** `terminal_resize` in src-tauri/src/commands/ssh.rs. */
export function terminalResize(args: { id: number; cols: number; rows: number }): Promise<void> {
  return call<void>('terminal_resize', args)
}

/** `terminal_close` in src-tauri/src/commands/ssh.rs. */
export function terminalClose(args: { id: number }): Promise<void> {
  return call<void>('terminal_close', args)
}

/** `forward_open` in src-tauri/src/commands/ssh.rs. */
export function forwardOpen(args: { instance: string; request: ForwardRequest }): Promise<ForwardInfo> {
  return call<ForwardInfo>('forward_open', args)
}

/**
 * Forwards of an instance; none when it is not connected (listing never dials).
 *
 * `forward_list` in src-tauri/src/commands/ssh.rs.
 */
export function forwardList(args: { instance: string }): Promise<ForwardInfo[]> {
  return call<ForwardInfo[]>('forward_list', args)
}

/** `forward_close` in src-tauri/src/commands/ssh.rs. */
export function forwardClose(args: { instance: string; id: number }): Promise<void> {
  return call<void>('forward_close', args)
}

/**
 * The kept offers ranked for the task Choose GPU describes, through the screen's filter
 * (its price cap in the user's currency), in the user's currency.
 *
 * `market_for_task` in src-tauri/src/commands/market.rs.
 */
export function marketForTask(args: { request: RecommendRequest; filter: OfferFilter; currency: string }): Promise<MarketView> {
  return call<MarketView>('market_for_task', args)
}

/**
 * Fetch every provider's offers now (the app also does every 15 minutes), and fire the alerts
 * that now hold.
 *
 * `market_refresh` in src-tauri/src/commands/market.rs.
 */
export function marketRefresh(): Promise<RefreshRound> {
  return call<RefreshRound>('market_refresh')
}

/**
 * Every price alert, oldest first.
 *
 * `market_alerts` in src-tauri/src/commands/market.rs.
 */
export function marketAlerts(): Promise<Alert[]> {
  return call<Alert[]>('market_alerts')
}

/**
 * Watch for `gpu` below a price or back in stock.
 *
 * `market_alert_add` in src-tauri/src/commands/market.rs.
 */
export function marketAlertAdd(args: { gpu: string; rule: AlertRule }): Promise<Alert> {
  return call<Alert>('market_alert_add', args)
}

/** `market_alert_remove` in src-tauri/src/commands/market.rs. */
export function marketAlertRemove(args: { id: number }): Promise<void> {
  return call<void>('market_alert_remove', args)
}

/**
 * What the review screen starts from: the image, the disk and the user's public key.
 *
 * `market_rent_defaults` in src-tauri/src/commands/market.rs.
 */
export function marketRentDefaults(args: { provider: Provider }): Promise<RentDefaults> {
  return call<RentDefaults>('market_rent_defaults', args)
}

/**
 * Rent the offer and record it as created; nothing is recorded when the provider refuses.
 *
 * `market_rent` in src-tauri/src/commands/market.rs.
 */
export function marketRent(args: { request: RentRequest }): Promise<Rented> {
  return call<Rented>('market_rent', args)
}

/**
 * What `text` means on `instance` (its latest Verify run and planned task). `plan`, when
 * given, becomes the instance's planned task.
 *
 * `explain_error` in src-tauri/src/commands/explain.rs.
 */
export function explainError(args: { instance: string | null; text: string; lang: Lang; plan: EstimateRequest | null }): Promise<Explanation> {
  return call<Explanation>('explain_error', args)
}

/**
 * The task planned for `instance`, to fill the box's plan fields.
 *
 * `explain_plan` in src-tauri/src/commands/explain.rs.
 */
export function explainPlan(args: { instance: string }): Promise<EstimateRequest | null> {
  return call<EstimateRequest | null>('explain_plan', args)
}

/** `install_recipes` in src-tauri/src/commands/install.rs. */
export function installRecipes(): Promise<RecipeInfo[]> {
  return call<RecipeInfo[]>('install_recipes')
}

/**
 * Start `recipe` with `options` on `instance`; returns at once with the running job.
 *
 * `install_start` in src-tauri/src/commands/install.rs.
 */
export function installStart(args: { instance: string; recipe: string; options: Record<string, string> }): Promise<JobStatus> {
  return call<JobStatus>('install_start', args)
}

/**
 * The jobs of `instance`, oldest first.
 *
 * `job_list` in src-tauri/src/commands/install.rs.
 */
export function jobList(args: { instance: string }): Promise<JobRecord[]> {
  return call<JobRecord[]>('job_list', args)
}

/**
 * Stream job `id`'s log from byte `from` until it ends; reconnects by itself after a drop.
 *
 * `job_attach` in src-tauri/src/commands/install.rs.
 */
export function jobAttach(args: { instance: string; id: string; from: number; onLog: (message: JobLog) => void }): Promise<JobStatus> {
  return call<JobStatus>('job_attach', { ...args, onLog: new Channel<JobLog>(args.onLog) })
}

/**
 * Stop job `id`'s whole process group.
 *
 * `job_cancel` in src-tauri/src/commands/install.rs.
 */
export function jobCancel(args: { instance: string; id: string }): Promise<CancelReport> {
  return call<CancelReport>('job_cancel', args)
}

/**
 * Each recipe's state on `instance` from its last Verify run (the recipe cards).
 *
 * `install_status` in src-tauri/src/commands/install.rs.
 */
export function installStatus(args: { instance: string }): Promise<RecipeStatuses> {
  return call<RecipeStatuses>('install_status', args)
}

/**
 * The jobs of `instance` with the state of the running ones read again from the instance
 * (after an app restart or a reconnect).
 *
 * `job_refresh` in src-tauri/src/commands/install.rs.
 */
export function jobRefresh(args: { instance: string }): Promise<JobRecord[]> {
  return call<JobRecord[]>('job_refresh', args)
}

/**
 * Check the server a finished server recipe (Ollama, vLLM, TGI) left running, through a port
 * forward: one answer, its speed, and whether an Ollama model spills onto the CPU.
 *
 * `install_check_server` in src-tauri/src/commands/install.rs.
 */
export function installCheckServer(args: { instance: string; id: string; lang: Lang }): Promise<ServeCheck> {
  return call<ServeCheck>('install_check_server', args)
}

/**
 * Run the checks on `instance`; `stress` adds the matmul stress test. Findings are written in
 * `lang`. Fails with `verify.cancelled` when stopped with `verify_cancel`.
 *
 * `verify_run` in src-tauri/src/commands/verify.rs.
 */
export function verifyRun(args: { instance: string; stress: boolean; lang: Lang; onProgress: (message: ProbeEvent) => void }): Promise<VerifyOutcome> {
  return call<VerifyOutcome>('verify_run', { ...args, onProgress: new Channel<ProbeEvent>(args.onProgress) })
}

/**
 * Stop the checks running on `instance` (no-op when none run).
 *
 * `verify_cancel` in src-tauri/src/commands/verify.rs.
 */
export function verifyCancel(args: { instance: string }): Promise<void> {
  return call<void>('verify_cancel', args)
}

/**
 * Earlier runs of `instance`, newest first.
 *
 * `verify_history` in src-tauri/src/commands/verify.rs.
 */
export function verifyHistory(args: { instance: string }): Promise<RunSummary[]> {
  return call<RunSummary[]>('verify_history', args)
}

/**
 * One stored run and what changed since the run before it.
 *
 * `verify_load` in src-tauri/src/commands/verify.rs.
 */
export function verifyLoad(args: { id: number }): Promise<VerifyOutcome> {
  return call<VerifyOutcome>('verify_load', args)
}

/**
 * Prices paid for earlier rentals (the newest rental per GPU): the recommender's price list
 * for the GPUs the user has not typed a price for.
 *
 * `earlier_prices` in src-tauri/src/commands/catalog.rs.
 */
export function earlierPrices(): Promise<PriceEntry[]> {
  return call<PriceEntry[]>('earlier_prices')
}

/**
 * Stream `instance`'s GPUs every `interval_ms` (default 1000) until `monitor_stop`.
 *
 * `monitor_start` in src-tauri/src/commands/monitor.rs.
 */
export function monitorStart(args: { instance: string; intervalMs: number | null; lang: Lang; onEvent: (message: MonitorEvent) => void }): Promise<void> {
  return call<void>('monitor_start', { ...args, onEvent: new Channel<MonitorEvent>(args.onEvent) })
}

/**
 * Stop `instance`'s stream (no-op when none runs).
 *
 * `monitor_stop` in src-tauri/src/commands/monitor.rs.
 */
export function monitorStop(args: { instance: string }): Promise<void> {
  return call<void>('monitor_stop', args)
}

/**
 * The last day of `instance`'s minute history.
 *
 * `monitor_history` in src-tauri/src/commands/monitor.rs.
 */
export function monitorHistory(args: { instance: string }): Promise<GpuMinute[]> {
  return call<GpuMinute[]>('monitor_history', args)
}

/**
 * `instance`'s GPU-busy hours and what its idle time cost.
 *
 * `monitor_busy_hours` in src-tauri/src/commands/monitor.rs.
 */
export function monitorBusyHours(args: { instance: string }): Promise<BusyHours> {
  return call<BusyHours>('monitor_busy_hours', args)
}

/**
 * What the popup shows now (the scheduler's last tick).
 *
 * `remind_board` in src-tauri/src/commands/remind.rs.
 */
export function remindBoard(): Promise<Board> {
  return call<Board>('remind_board')
}

/** `remind_snooze` in src-tauri/src/commands/remind.rs. */
export function remindSnooze(args: { instanceId: number; kind: ReminderKind; occurrence: string; snooze: Snooze }): Promise<void> {
  return call<void>('remind_snooze', args)
}

/** `remind_dismiss` in src-tauri/src/commands/remind.rs. */
export function remindDismiss(args: { instanceId: number; kind: ReminderKind; occurrence: string }): Promise<void> {
  return call<void>('remind_dismiss', args)
}

/** `remind_rules_load` in src-tauri/src/commands/remind.rs. */
export function remindRulesLoad(): Promise<ReminderRules> {
  return call<ReminderRules>('remind_rules_load')
}

/** `remind_rules_save` in src-tauri/src/commands/remind.rs. */
export function remindRulesSave(args: { rules: ReminderRules }): Promise<void> {
  return call<void>('remind_rules_save', args)
}

/** `webhook_list` in src-tauri/src/commands/remind.rs. */
export function webhookList(): Promise<WebhookView[]> {
  return call<WebhookView[]>('webhook_list')
}

/**
 * `url` and `secret` are credentials: skipped by the log, kept only in the keychain.
 *
 * `webhook_add` in src-tauri/src/commands/remind.rs.
 */
export function webhookAdd(args: { kind: string; label: string; url: string; secret: string | null }): Promise<WebhookView> {
  return call<WebhookView>('webhook_add', args)
}

/** `webhook_remove` in src-tauri/src/commands/remind.rs. */
export function webhookRemove(args: { id: number }): Promise<void> {
  return call<void>('webhook_remove', args)
}

/** `webhook_test` in src-tauri/src/commands/remind.rs. */
export function webhookTest(args: { id: number }): Promise<Delivery> {
  return call<Delivery>('webhook_test', args)
}

/**
 * The tray's words in the UI's language (the tray is drawn by Rust, the text lives in the
 * locale files).
 *
 * `tray_labels` in src-tauri/src/commands/remind.rs.
 */
export function trayLabels(args: { labels: TrayLabels }): Promise<void> {
  return call<void>('tray_labels', args)
}

/**
 * Whether the app starts at login.
 *
 * `autostart_enabled` in src-tauri/src/commands/remind.rs.
 */
export function autostartEnabled(): Promise<boolean> {
  return call<boolean>('autostart_enabled')
}

/** `autostart_set` in src-tauri/src/commands/remind.rs. */
export function autostartSet(args: { enabled: boolean }): Promise<void> {
  return call<void>('autostart_set', args)
}

/** `watchdog_defaults` in src-tauri/src/commands/watchdog.rs. */
export function watchdogDefaults(args: { instance: string }): Promise<WatchdogOptions> {
  return call<WatchdogOptions>('watchdog_defaults', args)
}

/**
 * Install (or replace) the watchdog with `request` over the instance's defaults.
 *
 * `watchdog_install` in src-tauri/src/commands/watchdog.rs.
 */
export function watchdogInstall(args: { instance: string; request: WatchdogRequest }): Promise<InstallReport> {
  return call<InstallReport>('watchdog_install', args)
}

/** `watchdog_status` in src-tauri/src/commands/watchdog.rs. */
export function watchdogStatus(args: { instance: string; stateDir: string | null }): Promise<WatchdogStatus> {
  return call<WatchdogStatus>('watchdog_status', args)
}

/** `watchdog_remove` in src-tauri/src/commands/watchdog.rs. */
export function watchdogRemove(args: { instance: string; stateDir: string | null }): Promise<RemoveReport> {
  return call<RemoveReport>('watchdog_remove', args)
}

/**
 * How "Stop now" would go: the command, the API, whether an id and a key are saved.
 *
 * `stop_plan` in src-tauri/src/commands/stop.rs.
 */
export function stopPlan(args: { instance: string }): Promise<StopPlan> {
  return call<StopPlan>('stop_plan', args)
}

/**
 * Keep a provider's API key in the OS keychain.
 *
 * `stop_save_api_key` in src-tauri/src/commands/stop.rs.
 */
export function stopSaveApiKey(args: { api: Provider; apiKey: string }): Promise<void> {
  return call<void>('stop_save_api_key', args)
}

/**
 * Power `instance` off now (over SSH with `command` on the live connection, or through its
 * provider's API) and record `stopped` once confirmed; the live connection is closed
 * afterwards.
 *
 * `stop_now` in src-tauri/src/commands/stop.rs.
 */
export function stopNow(args: { instance: string; via: StopVia; command: string | null; providerId: string | null }): Promise<StopReport> {
  return call<StopReport>('stop_now', args)
}

/** `account_list` in src-tauri/src/commands/account.rs. */
export function accountList(): Promise<AccountSummary[]> {
  return call<AccountSummary[]>('account_list')
}

/**
 * Check the key with one read-only call, keep it in the keychain, then sync once.
 *
 * `account_add` in src-tauri/src/commands/account.rs.
 */
export function accountAdd(args: { account: AccountRef; apiKey: string }): Promise<AddReport> {
  return call<AddReport>('account_add', args)
}

/** `account_remove` in src-tauri/src/commands/account.rs. */
export function accountRemove(args: { account: AccountRef }): Promise<AccountRemoved> {
  return call<AccountRemoved>('account_remove', args)
}

/**
 * Sync one account now (or every one); each account's failure is its own.
 *
 * `account_sync` in src-tauri/src/commands/account.rs.
 */
export function accountSync(args: { account: AccountRef | null }): Promise<AccountSyncReport[]> {
  return call<AccountSyncReport[]>('account_sync', args)
}

/**
 * Which account and provider instance `instance` is linked to, if any.
 *
 * `account_link` in src-tauri/src/commands/account.rs.
 */
export function accountLink(args: { instance: string }): Promise<InstanceLink | null> {
  return call<InstanceLink | null>('account_link', args)
}

/**
 * Power on, off or release through the provider's API; recorded once the provider confirms.
 *
 * `account_power` in src-tauri/src/commands/account.rs.
 */
export function accountPower(args: { instance: string; verb: PowerVerb }): Promise<PowerReport> {
  return call<PowerReport>('account_power', args)
}

/**
 * The imported instance was named or kept: its card goes away.
 *
 * `account_acknowledge` in src-tauri/src/commands/account.rs.
 */
export function accountAcknowledge(args: { instance: string }): Promise<void> {
  return call<void>('account_acknowledge', args)
}

/**
 * Apply the price change the sync held back for `instance`, from when it was first seen.
 *
 * `account_accept` in src-tauri/src/commands/account.rs.
 */
export function accountAccept(args: { instance: string }): Promise<AcceptReport> {
  return call<AcceptReport>('account_accept', args)
}

/**
 * The ledger beside the provider's charges for the last `days` days.
 *
 * `account_reconcile` in src-tauri/src/commands/account.rs.
 */
export function accountReconcile(args: { instance: string; days: number }): Promise<ReconcileRow[]> {
  return call<ReconcileRow[]>('account_reconcile', args)
}

/**
 * Apply the rule reconcile suggested, from now on.
 *
 * `account_apply_rule` in src-tauri/src/commands/account.rs.
 */
export function accountApplyRule(args: { instance: string; rules: BillingRules }): Promise<void> {
  return call<void>('account_apply_rule', args)
}

/**
 * Every instance the keeper looks after, with its hunt, deadline, policy and next step.
 *
 * `keeper_list` in src-tauri/src/commands/keeper.rs.
 */
export function keeperList(): Promise<Kept[]> {
  return call<Kept[]>('keeper_list')
}

/**
 * Start (or pick up) the power-on hunt and run it in the background; the answer is where it
 * stands now, `keeper_list` follows it.
 *
 * `keeper_hunt_start` in src-tauri/src/commands/keeper.rs.
 */
export function keeperHuntStart(args: { instance: string; forMinutes: number | null; maxSpend: string | null }): Promise<HuntReport> {
  return call<HuntReport>('keeper_hunt_start', args)
}

/** `keeper_hunt_stop` in src-tauri/src/commands/keeper.rs. */
export function keeperHuntStop(args: { instance: string }): Promise<void> {
  return call<void>('keeper_hunt_stop', args)
}

/**
 * Set an instance's policy (or the default one, `instance` null) as the form shows it: a stage
 * left null is cleared; the bid cap stays as it was.
 *
 * `keeper_set_policy` in src-tauri/src/commands/keeper.rs.
 */
export function keeperSetPolicy(args: { instance: string | null; stopAfterIdleMinutes: number | null; releaseAfterStoppedDays: number | null; autoRelease: boolean; off: boolean }): Promise<Policy> {
  return call<Policy>('keeper_set_policy', args)
}

/**
 * The highest bid `keeper_bid` may place on this Vast.ai rental; the rest of its policy stays.
 *
 * `keeper_set_bid_cap` in src-tauri/src/commands/keeper.rs.
 */
export function keeperSetBidCap(args: { instance: string; bidCap: string }): Promise<Policy> {
  return call<Policy>('keeper_set_bid_cap', args)
}

/**
 * What keeping a stopped instance alive costs, before anything is done.
 *
 * `keeper_keep_alive_quote` in src-tauri/src/commands/keeper.rs.
 */
export function keeperKeepAliveQuote(args: { instance: string }): Promise<KeepAliveQuote> {
  return call<KeepAliveQuote>('keeper_keep_alive_quote', args)
}

/**
 * Power it on and off again at no more than the accepted cost.
 *
 * `keeper_keep_alive` in src-tauri/src/commands/keeper.rs.
 */
export function keeperKeepAlive(args: { instance: string; acceptedCost: string }): Promise<KeepAliveReport> {
  return call<KeepAliveReport>('keeper_keep_alive', args)
}

/**
 * Whether a Vast.ai interruptible instance was outbid.
 *
 * `keeper_vast_look` in src-tauri/src/commands/keeper.rs.
 */
export function keeperVastLook(args: { instance: string }): Promise<BidState> {
  return call<BidState>('keeper_vast_look', args)
}

/** `keeper_bid` in src-tauri/src/commands/keeper.rs. */
export function keeperBid(args: { instance: string; price: string }): Promise<BidReport> {
  return call<BidReport>('keeper_bid', args)
}

/** `keeper_price_increase` in src-tauri/src/commands/keeper.rs. */
export function keeperPriceIncrease(args: { instance: string; accept: boolean }): Promise<IncreaseReport> {
  return call<IncreaseReport>('keeper_price_increase', args)
}

/**
 * The host's pending price increase on a Vast.ai rental, if any; nothing is answered.
 *
 * `keeper_price_increase_look` in src-tauri/src/commands/keeper.rs.
 */
export function keeperPriceIncreaseLook(args: { instance: string }): Promise<PriceIncrease | null> {
  return call<PriceIncrease | null>('keeper_price_increase_look', args)
}

/**
 * "Already stopped at the provider — record it": record `stopped` on the user's word, then
 * look (the provider's API, else a fresh SSH login) whether it still answers; the reminders
 * raise `stop_contradicted` when it does.
 *
 * `stop_record_by_hand` in src-tauri/src/commands/stop.rs.
 */
export function stopRecordByHand(args: { instance: string }): Promise<HandStop> {
  return call<HandStop>('stop_record_by_hand', args)
}

/**
 * Look again whether a stop recorded by hand holds (after the user stopped it in the console).
 *
 * `stop_check_again` in src-tauri/src/commands/stop.rs.
 */
export function stopCheckAgain(args: { instance: string }): Promise<HandCheck | null> {
  return call<HandCheck | null>('stop_check_again', args)
}

/**
 * A second look at a price before it is recorded (New rental's review): far from what was paid
 * before for this GPU or from the market's live offers, pays for the card within a week, over
 * the budget, or in the wrong currency.
 *
 * `price_check` in src-tauri/src/commands/billing.rs.
 */
export function priceCheck(args: { input: PriceCheckInput }): Promise<PriceCheck> {
  return call<PriceCheck>('price_check', args)
}

/** `team_link` in src-tauri/src/commands/team.rs. */
export function teamLink(): Promise<TeamLink | null> {
  return call<TeamLink | null>('team_link')
}

/** `team_connect` in src-tauri/src/commands/team.rs. */
export function teamConnect(args: { url: string; member: string; team: string; password: string | null }): Promise<TeamLink> {
  return call<TeamLink>('team_connect', args)
}

/** `team_sync` in src-tauri/src/commands/team.rs. */
export function teamSync(): Promise<SyncReport> {
  return call<SyncReport>('team_sync')
}

/** `team_status` in src-tauri/src/commands/team.rs. */
export function teamStatus(): Promise<TeamStatus> {
  return call<TeamStatus>('team_status')
}

/** `team_conflicts` in src-tauri/src/commands/team.rs. */
export function teamConflicts(): Promise<Conflict[]> {
  return call<Conflict[]>('team_conflicts')
}

/** `team_disconnect` in src-tauri/src/commands/team.rs. */
export function teamDisconnect(): Promise<TeamLink | null> {
  return call<TeamLink | null>('team_disconnect')
}

/**
 * What on `instance` would be lost (default roots when `roots` is empty).
 *
 * `backup_scan` in src-tauri/src/commands/backup.rs.
 */
export function backupScan(args: { instance: string; roots: string[] }): Promise<AtRiskReport> {
  return call<AtRiskReport>('backup_scan', args)
}

/**
 * Copy `paths` from `instance` into `local_dir`, reporting progress; recorded when done.
 *
 * `backup_run` in src-tauri/src/commands/backup.rs.
 */
export function backupRun(args: { instance: string; paths: string[]; localDir: string; exportEnvironment: boolean; onProgress: (message: BackupProgress) => void }): Promise<BackupRecord[]> {
  return call<BackupRecord[]>('backup_run', { ...args, onProgress: new Channel<BackupProgress>(args.onProgress) })
}

/**
 * Stop the backup running for `instance` (what was copied stays; running it again resumes).
 *
 * `backup_cancel` in src-tauri/src/commands/backup.rs.
 */
export function backupCancel(args: { instance: string }): Promise<void> {
  return call<void>('backup_cancel', args)
}

/**
 * `git push` in repository `repo` on `instance`; the record keeps its output.
 *
 * `backup_git_push` in src-tauri/src/commands/backup.rs.
 */
export function backupGitPush(args: { instance: string; repo: string }): Promise<BackupRecord> {
  return call<BackupRecord>('backup_git_push', args)
}

/**
 * Copy `path` into the provider's file storage on `instance` (AutoDL's autodl-fs).
 *
 * `backup_to_file_storage` in src-tauri/src/commands/backup.rs.
 */
export function backupToFileStorage(args: { instance: string; path: string }): Promise<BackupRecord> {
  return call<BackupRecord>('backup_to_file_storage', args)
}

/**
 * Every backup of `instance`, newest first.
 *
 * `backup_history` in src-tauri/src/commands/backup.rs.
 */
export function backupHistory(args: { instance: string }): Promise<BackupRecord[]> {
  return call<BackupRecord[]>('backup_history', args)
}

/**
 * Last backup, wipe deadline and latest check of `instance` (the instance page's card).
 *
 * `backup_status` in src-tauri/src/commands/backup.rs.
 */
export function backupStatus(args: { instance: string }): Promise<BackupStatus> {
  return call<BackupStatus>('backup_status', args)
}

/**
 * Run the release checklist live on `instance` and record it.
 *
 * `release_check` in src-tauri/src/commands/backup.rs.
 */
export function releaseCheck(args: { instance: string }): Promise<CheckOutcome> {
  return call<CheckOutcome>('release_check', args)
}

/**
 * Record the release of `instance` when nothing blocked is left un-overridden and `confirm`
 * is its name; returns the final bill.
 *
 * `release_instance` in src-tauri/src/commands/backup.rs.
 */
export function releaseInstance(args: { instance: string; confirm: string; overrides: [string, string][]; noCheck: string | null }): Promise<FinalBill> {
  return call<FinalBill>('release_instance', args)
}

/**
 * The final bill of `instance` as of now.
 *
 * `release_bill` in src-tauri/src/commands/backup.rs.
 */
export function releaseBill(args: { instance: string }): Promise<FinalBill> {
  return call<FinalBill>('release_bill', args)
}

/**
 * Keep `keep_uid` (the refused event or the one standing in its place) and withdraw the other;
 * answers the conflicts left.
 *
 * `team_resolve_conflict` in src-tauri/src/commands/team.rs.
 */
export function teamResolveConflict(args: { eventUid: string; keepUid: string }): Promise<Conflict[]> {
  return call<Conflict[]>('team_resolve_conflict', args)
}

/**
 * Dismiss a notice a pull stored (name kept under another name, unreadable row) once read;
 * answers the conflicts left.
 *
 * `team_dismiss_conflict` in src-tauri/src/commands/team.rs.
 */
export function teamDismissConflict(args: { key: string }): Promise<Conflict[]> {
  return call<Conflict[]>('team_dismiss_conflict', args)
}

/**
 * Set the team's monthly budget in one currency (every member sees it; 50/80/100 % reminders);
 * answers the team status with it.
 *
 * `team_set_budget` in src-tauri/src/commands/team.rs.
 */
export function teamSetBudget(args: { currency: string; amount: string }): Promise<TeamStatus> {
  return call<TeamStatus>('team_set_budget', args)
}

/**
 * The project `instance` is rented for, if anyone said.
 *
 * `instance_project` in src-tauri/src/commands/team.rs.
 */
export function instanceProject(args: { instance: string }): Promise<string | null> {
  return call<string | null>('instance_project', args)
}

/**
 * Say which project `instance` is rented for (`None` clears it); answers it as saved.
 *
 * `instance_set_project` in src-tauri/src/commands/team.rs.
 */
export function instanceSetProject(args: { instance: string; project: string | null }): Promise<string | null> {
  return call<string | null>('instance_set_project', args)
}

/**
 * Word `instance`'s open stream's findings in `lang` from now on (the app's language changed);
 * no-op when none runs.
 *
 * `monitor_language` in src-tauri/src/commands/monitor.rs.
 */
export function monitorLanguage(args: { instance: string; lang: Lang }): Promise<void> {
  return call<void>('monitor_language', args)
}

/**
 * Name who is told about any member's instance left running, and after how many idle minutes
 * (the instance's own member always is); answers the team status with them.
 *
 * `team_set_alerts` in src-tauri/src/commands/team.rs.
 */
export function teamSetAlerts(args: { recipients: string[]; afterMinutes: number }): Promise<TeamStatus> {
  return call<TeamStatus>('team_set_alerts', args)
}

/**
 * Close a team reminder (a team budget's threshold, a left-running alert) in the popup.
 *
 * `team_dismiss_reminder` in src-tauri/src/commands/team.rs.
 */
export function teamDismissReminder(args: { kind: ReminderKind; occurrence: string }): Promise<void> {
  return call<void>('team_dismiss_reminder', args)
}

/**
 * Put off a team reminder (a team budget's threshold, a left-running alert) for an hour or until
 * tomorrow morning.
 *
 * `team_snooze_reminder` in src-tauri/src/commands/team.rs.
 */
export function teamSnoozeReminder(args: { kind: ReminderKind; occurrence: string; snooze: Snooze }): Promise<void> {
  return call<void>('team_snooze_reminder', args)
}

/**
 * Share (or stop sharing) this laptop's last Verify results with the team from the next sync;
 * answers the team status.
 *
 * `team_share_verify` in src-tauri/src/commands/team.rs.
 */
export function teamShareVerify(args: { share: boolean }): Promise<TeamStatus> {
  return call<TeamStatus>('team_share_verify', args)
}

/** `update_about` in src-tauri/src/commands/update.rs. */
export function updateAbout(): Promise<BuildInfo> {
  return call<BuildInfo>('update_about')
}

/**
 * What the last check found, for the dialog (`None`: nothing to offer).
 *
 * `update_pending` in src-tauri/src/commands/update.rs.
 */
export function updatePending(args: { language: string }): Promise<UpdateOffer | null> {
  return call<UpdateOffer | null>('update_pending', args)
}

/**
 * "Check now": asks the servers at once; a skipped version is offered again.
 *
 * `update_check_now` in src-tauri/src/commands/update.rs.
 */
export function updateCheckNow(args: { language: string }): Promise<UpdateOffer | null> {
  return call<UpdateOffer | null>('update_check_now', args)
}

/** `update_skip` in src-tauri/src/commands/update.rs. */
export function updateSkip(args: { version: string }): Promise<void> {
  return call<void>('update_skip', args)
}

/**
 * "Install and restart": waits while a backup, a followed install, a stop or a release runs,
 * downloads, checks the signature, installs and restarts. Nothing is installed when any step fails.
 *
 * `update_install` in src-tauri/src/commands/update.rs.
 */
export function updateInstall(args: { progress: (message: UpdateProgress) => void }): Promise<void> {
  return call<void>('update_install', { ...args, progress: new Channel<UpdateProgress>(args.progress) })
}

/** `instance_status` in src-tauri/src/commands/status.rs. */
export function instanceStatus(args: { instance: string }): Promise<InstanceStatus> {
  return call<InstanceStatus>('instance_status', args)
}

/**
 * Every rental with its status (the Rentals page).
 *
 * `instance_statuses` in src-tauri/src/commands/status.rs.
 */
export function instanceStatuses(): Promise<ListedInstance[]> {
  return call<ListedInstance[]>('instance_statuses')
}

/**
 * The line over the Rentals list: costing now and this month (in this computer's time zone),
 * per currency.
 *
 * `rentals_totals` in src-tauri/src/commands/status.rs.
 */
export function rentalsTotals(): Promise<Totals> {
  return call<Totals>('rentals_totals')
}

/**
 * Update the rules to the GPU count the monitor sees, from now on.
 *
 * `instance_match_gpu_count` in src-tauri/src/commands/status.rs.
 */
export function instanceMatchGpuCount(args: { instance: string }): Promise<InstanceStatus> {
  return call<InstanceStatus>('instance_match_gpu_count', args)
}

/**
 * The renter says the rental's price is right: the "price looks wrong" card goes until the
 * price changes.
 *
 * `instance_acknowledge_price` in src-tauri/src/commands/status.rs.
 */
export function instanceAcknowledgePrice(args: { instance: string }): Promise<InstanceStatus> {
  return call<InstanceStatus>('instance_acknowledge_price', args)
}

/**
 * "Not now" to connecting and verifying an instance Leasehold brought up itself.
 *
 * `instance_follow_up_dismiss` in src-tauri/src/commands/status.rs.
 */
export function instanceFollowUpDismiss(args: { instance: string }): Promise<void> {
  return call<void>('instance_follow_up_dismiss', args)
}
