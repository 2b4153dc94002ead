import type { InstallationScope } from '../../setup/scope.js';
import type { AuthorityClient } from './authority-client.js';
import type { Provisioning } from './bundle.js';
import type { StateStore } from './install-state.js';
import type { InventoryProvider, InventoryVm } from './inventory.js';
import type { InstallPlan, PlanEntry } from './plan.js';
import type { CheckResult, Probe } from './preflight.js';
import type { ServiceManager } from './services.js';
import type { VmTransport } from './transport.js';

/** The person declined the plan: nothing was claimed or touched. */
export class InstallDeclinedError extends Error {
  override readonly name = 'InstallDeclinedError';
}

/** What one installer run needs. */
export interface InstallOptions {
  readonly client: AuthorityClient;
  readonly setupUrl: string;
  /** The setup token (`lst_...`), or the recovery token (`lrc_...`) with `recovery`; absent when resuming. */
  readonly token: string | undefined;
  readonly recovery: boolean;
  /** Continue the run kept in `state` (same session, no token) instead of claiming. */
  readonly resume: boolean;
  readonly state: StateStore;
  readonly inventory: InventoryProvider;
  /** Builds the transport for `approved` VMs: it can reach only them (before a claim: the scope proposed). */
  readonly transport: (approved: readonly string[], vms: readonly InventoryVm[]) => VmTransport & { probe?: Probe };
  /** Shows the plan and answers whether to go on (the CLI asks, or `--yes` answers for the person). */
  readonly confirm: (planText: string, plan: InstallPlan) => Promise<boolean>;
  /** Shows the check table (each run checks before it claims or resumes). */
  readonly reportChecks: (results: readonly CheckResult[]) => void;
  readonly isOrchestrationHost: (address: string) => boolean;
  /** The `vigil` executable on the VMs (the units' ExecStart). */
  readonly vigilExec: string;
  readonly serviceManager: ServiceManager;
  /** Syslog-format files each collector also tails (the journal is always followed where there is one). */
  readonly collectorFiles: readonly string[];
  readonly centralListen: { host: string; port: number };
  readonly snapshotIntervalSeconds: number;
  readonly waitMs: number;
  readonly pollMs: number;
  readonly progress: (line: Record<string, unknown>) => void;
  /** Called as soon as the console credential exists (after the proof), so a run that dies later still keeps it. */
  readonly onConsoleCredential: (deploymentId: string, credential: ConsoleCredential) => void;
}

/** The console credential the authority releases once. */
export type ConsoleCredential = Provisioning['central']['console_credential'];

/**
 * How a run ended: `completed`; `awaiting_services` (files in place, the operator starts the services, then
 * `--resume` waits); `awaiting_snapshot` (the wait ran out: `--resume` waits again).
 */
export interface InstallResult {
  readonly status: 'completed' | 'awaiting_services' | 'awaiting_snapshot';
  readonly sessionId: string;
  readonly deploymentId: string;
  readonly scope: InstallationScope;
  readonly centralVmId: string;
  readonly enrollmentEpoch: number;
  readonly touched: readonly string[];
  /** Discovered VMs left out: excluded, no collector for their OS, or outside the approved scope. */
  readonly notInstalled: readonly PlanEntry[];
  readonly consoleCredential: ConsoleCredential;
  /** With `awaiting_services`: what to start on each VM. */
  readonly toStart: ReadonlyArray<{ vm: string; unit: string; execStart: readonly string[] }>;
}
