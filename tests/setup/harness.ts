import assert from 'node:assert/strict';
import { CSRF_FIELD } from '../../src/http/web/csrf.js';
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { join } from 'node:path';
import * as v from 'valibot';
import { generateToken, hashToken } from '../../src/auth/tokens.js';
import { openAccountRegistry, writeAccounts, type Account } from '../../src/setup/accounts.js';
import { createAuthorityApp } from '../../src/setup/app.js';
import { AuthorityConfigSchema, type AuthorityConfig } from '../../src/setup/config.js';
import { proofMessage, signedBytes, SNAPSHOT_DOMAIN } from '../../src/setup/identity-key.js';
import type { Mailer } from '../../src/setup/mailer.js';
import { openAuthorityStore, type AuthorityStore } from '../../src/setup/open.js';
import { loadRecoveryKey, type RecoveryKey } from '../../src/setup/recovery-crypto.js';
import { createRecoveryMonitor, type RecoveryMonitor } from '../../src/setup/recovery-monitor.js';
import { tempDir } from '../helpers/temp.js';

/** An Ed25519 identity for tests: SPKI PEM and a signer. */
export interface TestKey { readonly pem: string; readonly privateKey: KeyObject; sign(bytes: Uint8Array): string }

/** A fresh Ed25519 key pair. */
export function newKey(): TestKey {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  return { pem: publicKey.export({ type: 'spki', format: 'pem' }).toString(), privateKey, sign: (bytes) => sign(null, bytes, privateKey).toString('base64') };
}

/** A signed-in browser: its cookie header and CSRF token. */
export interface Browser { readonly cookie: string; readonly csrf: string }

/** An in-process authority on a real LMDB store with a movable clock. */
export interface TestAuthority {
  readonly app: ReturnType<typeof createAuthorityApp>;
  readonly store: AuthorityStore;
  readonly monitor: RecoveryMonitor;
  readonly key: RecoveryKey;
  readonly dir: string;
  readonly config: AuthorityConfig;
  readonly tokens: Record<'alice' | 'bob' | 'carol', string>;
  setNow(iso: string): void;
  advance(seconds: number): void;
  now(): Date;
  json(path: string, init?: { method?: string; body?: unknown; headers?: Record<string, string>; browser?: Browser; bearer?: string }): Promise<{ status: number; body: any; headers: Headers }>;
  signIn(who: 'alice' | 'bob' | 'carol'): Promise<Browser>;
  close(): Promise<void>;
}

/** Starts a test authority; tenants: alice (t-acme), bob (t-acme), carol (t-other). */
export async function startTestAuthority(over: Record<string, unknown> = {}, mailer?: Mailer): Promise<TestAuthority> {
  const dir = tempDir('vigil-authority-');
  const accountsFile = join(dir.path, 'secrets', 'accounts.json');
  const tokens = { alice: generateToken('lsa_'), bob: generateToken('lsa_'), carol: generateToken('lsa_') };
  const account = (tenantId: string, userId: string, token: string): Account => ({ tenantId, userId, displayName: userId, email: `${userId}@example.test`, tokenHash: hashToken(token), disabled: false });
  writeAccounts(accountsFile, [account('t-acme', 'alice', tokens.alice), account('t-acme', 'bob', tokens.bob), account('t-other', 'carol', tokens.carol)]);
  const config = v.parse(AuthorityConfigSchema, {
    server: { publicUrl: 'http://authority.test' }, storage: { path: join(dir.path, 'store') }, accounts: { file: accountsFile },
    recovery: { keyFile: join(dir.path, 'secrets', 'recovery.key') }, ...over,
  });
  const key = loadRecoveryKey(config.recovery.keyFile);
  const store = await openAuthorityStore(config.storage.path);
  let now = new Date('2026-11-22T10:00:00.000Z');
  const accounts = openAccountRegistry(accountsFile, () => {}, 0);
  const deps = { pipeline: store.pipeline, accounts, config, recoveryKey: key, now: () => now, publicUrl: () => 'http://authority.test', log: () => {} };
  const app = createAuthorityApp(deps);
  const monitor = createRecoveryMonitor({ pipeline: store.pipeline, now: () => now, timeoutSeconds: config.recovery.heartbeatTimeoutSeconds, key, accounts, ...(mailer ? { mailer } : {}), publicUrl: () => 'http://authority.test', log: () => {} });
  const t: TestAuthority = {
    app, store, monitor, key, dir: dir.path, config, tokens,
    setNow: (iso) => { now = new Date(iso); },
    advance: (s) => { now = new Date(now.getTime() + s * 1000); },
    now: () => now,
    async json(path, init = {}) {
      const headers = new Headers(init.headers);
      if (init.body !== undefined && !headers.has('content-type')) headers.set('content-type', 'application/json');
      if (init.browser) { headers.set('cookie', init.browser.cookie); if (!headers.has('x-csrf-token')) headers.set('x-csrf-token', init.browser.csrf); }
      if (init.bearer) headers.set('authorization', `Bearer ${init.bearer}`);
      const res = await app.request(`http://authority.test${path}`, { method: init.method ?? (init.body === undefined ? 'GET' : 'POST'), headers, ...(init.body !== undefined ? { body: typeof init.body === 'string' ? init.body : JSON.stringify(init.body) } : {}) });
      const text = await res.text();
      return { status: res.status, body: text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text, headers: res.headers };
    },
    async signIn(who) {
      const r = await t.json('/v1/browser-sessions', { body: { token: tokens[who] } });
      if (r.status !== 201) throw new Error(`sign-in failed: ${JSON.stringify(r.body)}`);
      const cookie = /^(vigil-setup=[^;]+)/.exec(r.headers.get('set-cookie') ?? '')![1]!;
      return { cookie, csrf: r.body.csrf_token };
    },
    async close() {
      await monitor.stop();
      await store.close();
      dir.cleanup();
    },
  };
  return t;
}

/** The scope the tests claim: a central VM and two remote collectors. */
export const SCOPE = { central_vm_id: 'vm-central', vms: ['vm-web', 'vm-central', 'vm-db'] };

/** Creates, connects, claims and proves a session; returns every secret the installer would hold. */
export async function provision(t: TestAuthority, browser: Browser, scope: unknown = SCOPE) {
  const created = await t.json('/v1/setup-sessions', { body: {}, browser });
  const sessionId: string = created.body.session_id;
  await t.json('/v1/setup-sessions/connect', { body: { setup_token: created.body.setup_token } });
  const key = newKey();
  const claim = await t.json('/v1/setup-sessions/claim', { body: { setup_token: created.body.setup_token, deployment_identity: { public_key_spki_pem: key.pem }, installation_scope: scope } });
  const deploymentId: string = claim.body.deployment_id;
  const proof = key.sign(proofMessage(sessionId, deploymentId, claim.body.challenge));
  const proven = await t.json(`/v1/setup-sessions/${sessionId}/prove`, { body: { signature: proof }, bearer: claim.body.session_token });
  return { sessionId, deploymentId, key, sessionToken: claim.body.session_token as string, claim, proven, setupToken: created.body.setup_token as string };
}

/** Sends a signed snapshot stamped `updatedAt` (default: the test clock). */
export function sendSnapshot(t: TestAuthority, deploymentId: string, key: TestKey, over: Record<string, unknown> = {}) {
  const payload = JSON.stringify({ deployment_id: deploymentId, updated_at: t.now().toISOString(), instance_url: 'http://vm-central:4173', systems_reporting_live: 3, ...over });
  return t.json(`/v1/deployments/${deploymentId}/snapshots`, { body: { payload, signature: key.sign(signedBytes(SNAPSHOT_DOMAIN, payload)) } });
}

/** Where the authority's pages are asked as a browser would (its Host and Origin). */
export const ORIGIN = 'http://authority.test';

/** A page request as a browser sends it: the session cookie, and for a form its fields, Origin and Sec-Fetch-Site. */
export async function page(t: TestAuthority, path: string, init: { cookie?: string; form?: Record<string, string>; origin?: string; site?: string } = {}) {
  const headers = new Headers({ host: 'authority.test' });
  if (init.cookie) headers.set('cookie', init.cookie);
  if (init.form) {
    headers.set('content-type', 'application/x-www-form-urlencoded');
    headers.set('origin', init.origin ?? ORIGIN);
    headers.set('sec-fetch-site', init.site ?? 'same-origin');
  }
  const res = await t.app.request(`${ORIGIN}${path}`, { method: init.form ? 'POST' : 'GET', headers, ...(init.form ? { body: new URLSearchParams(init.form).toString() } : {}) });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** The CSRF token a page put in its forms. */
export function formToken(html: string): string {
  const m = new RegExp(`name="${CSRF_FIELD}" value="([^"]+)"`).exec(html);
  assert.ok(m, 'the page carries a CSRF token in its forms');
  return m[1]!;
}
