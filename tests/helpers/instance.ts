import { join } from 'node:path';
import * as v from 'valibot';
import { writeRegistry, type Credential } from '../../src/auth/registry.js';
import { ROLES, type Role } from '../../src/auth/roles.js';
import { generateToken, hashToken } from '../../src/auth/tokens.js';
import { openCredentialRegistry } from '../../src/auth/registry.js';
import type { MeshIdentity } from '../../src/auth/mesh-identity.js';
import { ConfigSchema, type Config } from '../../src/services/config-schema.js';
import { createApp } from '../../src/http/app.js';
import { createSearcher, type Searcher } from '../../src/services/hunt/searches.js';
import { openInstanceStore, type InstanceStore } from '../../src/cli/instance/open.js';
import { installBuiltinRules } from '../../src/cli/instance/builtin-rules.js';
import { tempDir } from './temp.js';
import { createIngestAdmission } from '../../src/http/admission.js';
import { refusalRecords } from '../../src/http/access-records.js';
import { createRefusalLedger, type RefusalLedger } from '../../src/http/refusals.js';
import { readYourWritesOf } from '../../src/http/read-consistency.js';
import { detectionSettingsOf } from '../../src/commands/alerting/detection-step.js';
import { startInstanceCheckpointer } from '../../src/cli/instance/checkpoints.js';
import { openInstanceSigner } from '../../src/cli/instance/head-signing.js';
import { liveLogVerifier } from '../../src/cli/instance/live-verify.js';
import type { Transparency } from '../../src/log/checkpointer.js';
import { normalizedEvent } from './event-fixtures.js';
import { createSelfMonitor, type FsSpace, type SelfMonitor } from '../../src/services/monitoring/self-monitor.js';
import type { MonitoringSettings } from '../../src/projections/monitoring-settings.js';

/** A test instance: real LMDB in a temp dir, a credential per role plus expired and disabled ones. */
export interface TestInstance {
  readonly app: ReturnType<typeof createApp>;
  readonly inst: InstanceStore;
  /** The instance's signed checkpoints and proofs. */
  readonly transparency: Transparency;
  readonly tokens: Record<Role | 'expired' | 'disabled', string>;
  readonly dir: string;
  readonly credentialsFile: string;
  readonly config: Config;
  /** Moves the app's clock. */
  setNow(iso: string): void;
  /** The self-monitor of the app: its clock is the app's, its disk is `setSpace`'s (no timer runs: call `check()`). */
  readonly monitor: SelfMonitor;
  /** Sets the free and total bytes the monitor sees of the store's filesystem (default: 100 of 200 GiB free). */
  setSpace(space: FsSpace): void;
  /** Applies monitoring settings as a SIGHUP reload would. */
  reloadMonitoring(settings: MonitoringSettings): void;
  /** Sets the TCP peer the app sees. */
  setPeer(peer: string | undefined): void;
  /** The refusal counts of the app (drain them to get the summaries the service would log). */
  readonly refusals: RefusalLedger;
  /** Appends the refusal summaries of every counted interval, as the service's timer does. */
  flushRefusals(): Promise<void>;
  /** Closes the store, runs `between` on its closed directory (to plant records), and opens it again. */
  restart(between?: (storePath: string) => Promise<void> | void): Promise<void>;
  request(path: string, init?: RequestInit & { token?: string }): Promise<Response>;
  close(): Promise<void>;
}

/** Starts a test instance with a config override (validated like the real one). */
export async function startTestInstance(configOverride: Record<string, unknown> = {}, opts: { builtinRules?: boolean; mesh?: MeshIdentity } = {}): Promise<TestInstance> {
  const dir = tempDir();
  const credentialsFile = join(dir.path, 'secrets', 'credentials.json');
  const tokens = {} as Record<Role | 'expired' | 'disabled', string>;
  const creds: Credential[] = [];
  for (const role of ROLES) {
    tokens[role] = generateToken();
    creds.push({ id: `${role}-user`, tokenHash: hashToken(tokens[role]), roles: [role], disabled: false });
  }
  tokens.expired = generateToken();
  creds.push({ id: 'expired-user', tokenHash: hashToken(tokens.expired), roles: ['admin'], disabled: false, expiresAt: '2020-01-01T00:00:00Z' });
  tokens.disabled = generateToken();
  creds.push({ id: 'disabled-user', tokenHash: hashToken(tokens.disabled), roles: ['admin'], disabled: true });
  writeRegistry(credentialsFile, creds);
  // Failed authentications are not throttled unless a test asks for it (auth-matrix tests send hundreds).
  const limits = { authFailures: { burst: 1_000_000, perMinute: 1_000_000 }, ...(configOverride.limits as Record<string, unknown> | undefined) };
  const config = v.parse(ConfigSchema, { auth: { credentialsFile }, storage: { path: join(dir.path, 'store') }, ...configOverride, limits });
  let transparency: Transparency;
  const open = async () => {
    const opened = await openInstanceStore(config.storage.path, { detection: { incidentWindowMs: config.detection.incidentWindowMinutes * 60_000 }, signer: await openInstanceSigner(config) });
    transparency = await startInstanceCheckpointer(opened, config);
    return opened;
  };
  let inst = await open();
  if (opts.builtinRules) await installBuiltinRules(inst.pipeline, '2026-11-22T09:59:00.000Z');
  let now = new Date('2026-11-22T10:00:00.000Z');
  let peer: string | undefined;
  const registry = openCredentialRegistry(credentialsFile, () => {}, 0);
  const refusals = createRefusalLedger(config.limits);
  let space: FsSpace = { freeBytes: 100 * 1024 ** 3, totalBytes: 200 * 1024 ** 3 };
  let monitor: SelfMonitor;
  const monitorOf = (store: InstanceStore) => createSelfMonitor({
    pipeline: store.pipeline, settings: config.monitoring, space: () => space, now: () => now, log: () => {}, sampleEveryMs: 0,
    progress: () => ({ headSeq: store.log.head().seq, readSeq: store.readSide.applied() }),
  });
  const appOf = (store: InstanceStore) => createApp({
    monitor: (monitor = monitorOf(store)),
    pipeline: store.pipeline,
    registry,
    config,
    now: () => now,
    peerOf: () => peer,
    peerPortOf: () => (peer === undefined ? undefined : 40000),
    ...(opts.mesh ? { mesh: opts.mesh } : {}),
    log: () => {},
    refusals,
    admission: createIngestAdmission(config.limits),
    reads: store.reads,
    graph: (q) => store.readSide.graph(q),
    readYourWrites: readYourWritesOf(() => store.readYourWrites()),
    transparency,
    verifyLog: liveLogVerifier(config.storage.path, transparency.verifier),
    search: (searcher = createSearcher({ storePath: config.storage.path, nice: 0 })),
  });
  let searcher: Searcher;
  let app = appOf(inst);
  // As `vigil serve` does: a batch from a silent source runs a check at once.
  const follow = () => inst.log.follow(inst.log.head().seq, (r) => monitor.noteRecord(r));
  let stopFollowing = follow();
  return {
    get app() { return app; },
    get inst() { return inst; },
    get transparency() { return transparency; },
    get monitor() { return monitor; },
    setSpace: (s) => { space = s; },
    reloadMonitoring: (s) => monitor.reload(s),
    tokens, dir: dir.path, credentialsFile, config, refusals,
    async flushRefusals() {
      const records = refusalRecords(refusals.drain(now, true));
      if (records.length > 0) await inst.pipeline.record(records, { now: now.toISOString() });
    },
    setNow: (iso) => { now = new Date(iso); },
    setPeer: (p) => { peer = p; },
    async restart(between) {
      await searcher.stop();
      stopFollowing();
      await monitor.stop();
      await transparency.stop();
      await inst.close();
      await between?.(config.storage.path);
      inst = await open();
      app = appOf(inst);
      stopFollowing = follow();
    },
    request(path, init = {}) {
      const { token, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (token) headers.set('authorization', `Bearer ${token}`);
      if (rest.body !== undefined && !headers.has('content-type')) headers.set('content-type', 'application/json');
      return Promise.resolve(app.request(path, { ...rest, headers }));
    },
    async close() {
      await searcher.stop();
      stopFollowing();
      await monitor.stop();
      await transparency.stop();
      await inst.close();
      dir.cleanup();
    },
  };
}

/** A valid NormalizedEvent with overrides (the one of tests/helpers/event-fixtures.ts, loosely typed for hostile cases). */
export function makeEvent(over: Record<string, unknown> = {}): Record<string, unknown> {
  return { ...normalizedEvent(), ...over };
}
