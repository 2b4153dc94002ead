import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openMeshAllowlist, type MeshAllowlistEntry } from '../../src/auth/mesh-allowlist.js';
import { createMeshIdentity, type MeshIdentityOptions } from '../../src/auth/mesh-identity.js';
import { queryWhoIs, type WhoIsAnswer } from '../../src/auth/mesh-localapi.js';
import { ConfigError, loadConfig } from '../../src/cli/config-file.js';
import { ALICE_USER_ID, TAGGED_NODE_ID, WHOIS_USER_NODE, startLocalApiStandIn } from '../helpers/localapi-stand-in.js';
import { tempDir } from '../helpers/temp.js';
import { openMeshIdentity } from '../../src/cli/instance/mesh-identity.js';
import { MeshConfigSchema } from '../../src/services/config-schema.js';
import * as v from 'valibot';

const LIMITS = { timeoutMs: 300, maxBytes: 64 * 1024 };

describe('queryWhoIs', () => {
  it('asks the daemon over its socket and tells a found peer, an unknown one and a failure apart', async () => {
    const dir = tempDir();
    const daemon = await startLocalApiStandIn(dir.path, { '100.101.102.103': WHOIS_USER_NODE, 'fd7a:115c:a1e0::1a01:6503': WHOIS_USER_NODE });
    try {
      assert.deepEqual(await queryWhoIs(daemon.socketPath, '100.101.102.103:51234', LIMITS), { kind: 'found', body: WHOIS_USER_NODE });
      assert.deepEqual(await queryWhoIs(daemon.socketPath, '[fd7a:115c:a1e0::1a01:6503]:443', LIMITS), { kind: 'found', body: WHOIS_USER_NODE });
      assert.deepEqual(await queryWhoIs(daemon.socketPath, '100.64.0.1:1', LIMITS), { kind: 'unknown' });
      assert.deepEqual(daemon.asked, ['100.101.102.103:51234', '[fd7a:115c:a1e0::1a01:6503]:443', '100.64.0.1:1']);
      assert.deepEqual(await queryWhoIs(daemon.socketPath, 'not an address', LIMITS), { kind: 'failed', reason: 'daemon answered 400' });
      assert.deepEqual(await queryWhoIs(daemon.socketPath, '100.101.102.103:1', { ...LIMITS, maxBytes: 100 }), { kind: 'failed', reason: 'answer larger than 100 bytes' });
      daemon.mode = 'slow';
      const started = performance.now();
      assert.deepEqual(await queryWhoIs(daemon.socketPath, '100.101.102.103:1', LIMITS), { kind: 'failed', reason: 'no answer within 300 ms' });
      assert.ok(performance.now() - started < 1000);
    } finally {
      await daemon.close();
    }
    assert.deepEqual(await queryWhoIs(daemon.socketPath, '100.101.102.103:1', LIMITS), { kind: 'failed', reason: 'ENOENT' });
    assert.equal((await queryWhoIs('/tmp/a\0b.sock', '100.101.102.103:1', LIMITS)).kind, 'failed', 'a path the OS refuses is a failure, not a throw');
    dir.cleanup();
  });
});

describe('createMeshIdentity', () => {
  const setup = (over: Partial<MeshIdentityOptions> = {}) => {
    let now = 0;
    const asked: string[] = [];
    const problems: string[] = [];
    let answer: WhoIsAnswer = { kind: 'found', body: WHOIS_USER_NODE };
    let allowlist: MeshAllowlistEntry[] | undefined = [{ user: ALICE_USER_ID, roles: ['viewer'] }];
    const mesh = createMeshIdentity({
      peerRanges: ['100.64.0.0/10', 'fd7a:115c:a1e0::/48'],
      whois: async (addr) => { asked.push(addr); return answer; },
      allowlist: () => allowlist, nowMs: () => now, cacheMs: 1000, cacheEntries: 2, maxInFlight: 2, onProblem: (m) => problems.push(m),
      ...over,
    });
    return {
      mesh, asked, problems,
      tick: (ms: number) => { now += ms; },
      answer: (a: WhoIsAnswer) => { answer = a; },
      allow: (a: MeshAllowlistEntry[] | undefined) => { allowlist = a; },
    };
  };

  it('covers only its ranges and asks about the peer as ip:port, mapped IPv4 unwrapped and IPv6 bracketed', async () => {
    const t = setup();
    assert.equal(t.mesh.covers('10.0.0.1'), false);
    assert.equal(await t.mesh.identify('10.0.0.1', 1), undefined);
    assert.equal(await t.mesh.identify('100.64.0.1', undefined), undefined, 'no port, no question');
    assert.equal((await t.mesh.identify('::ffff:100.101.102.103', 4242))?.id, `mesh:user:${ALICE_USER_ID}`);
    await t.mesh.identify('fd7a:115c:a1e0::1', 443);
    assert.deepEqual(t.asked, ['100.101.102.103:4242', '[fd7a:115c:a1e0::1]:443']);
  });

  it('reuses an answer for the same ip:port until it expires, and keeps at most the bounded number', async () => {
    const t = setup();
    await t.mesh.identify('100.64.0.1', 1);
    await t.mesh.identify('100.64.0.1', 1);
    assert.equal(t.asked.length, 1);
    await t.mesh.identify('100.64.0.1', 2);
    await t.mesh.identify('100.64.0.1', 3);
    await t.mesh.identify('100.64.0.1', 1);
    assert.equal(t.asked.length, 4, 'the oldest of three was dropped from a cache of two');
    t.tick(1000);
    await t.mesh.identify('100.64.0.1', 3);
    assert.equal(t.asked.length, 5, 'expired');
  });

  it('applies an allowlist change to the next request, cached answer or not, and refuses all while the allowlist is broken', async () => {
    const t = setup();
    assert.ok(await t.mesh.identify('100.64.0.1', 1));
    t.allow([{ node: TAGGED_NODE_ID, roles: ['admin'] }]);
    assert.equal(await t.mesh.identify('100.64.0.1', 1), undefined);
    t.allow(undefined);
    assert.equal(await t.mesh.identify('100.64.0.1', 1), undefined);
    assert.equal(t.asked.length, 1);
  });

  it('caches no failure, and says why a lookup failed but not that a peer is unknown', async () => {
    const t = setup();
    t.answer({ kind: 'failed', reason: 'ENOENT' });
    assert.equal(await t.mesh.identify('100.64.0.1', 1), undefined);
    t.answer({ kind: 'found', body: '{"Node":' });
    assert.equal(await t.mesh.identify('100.64.0.1', 1), undefined);
    t.answer({ kind: 'unknown' });
    assert.equal(await t.mesh.identify('100.64.0.1', 1), undefined);
    t.answer({ kind: 'found', body: WHOIS_USER_NODE });
    assert.ok(await t.mesh.identify('100.64.0.1', 1));
    assert.equal(t.asked.length, 4);
    assert.deepEqual(t.problems, ['mesh daemon lookup failed: ENOENT', 'mesh daemon answered whois with a malformed body']);
  });

  it('refuses rather than queues past the bound of lookups waiting on the daemon, and admits again once they end', async () => {
    let release = () => {};
    const held = new Promise<WhoIsAnswer>((resolve) => { release = () => resolve({ kind: 'found', body: WHOIS_USER_NODE }); });
    const t = setup({ whois: () => held });
    const waiting = [t.mesh.identify('100.64.0.1', 1), t.mesh.identify('100.64.0.1', 2), t.mesh.identify('100.64.0.1', 1)];
    assert.equal(await t.mesh.identify('100.64.0.1', 3), undefined, 'a third lookup past a bound of two');
    assert.deepEqual(t.problems, ['more than 2 mesh daemon lookups waiting: refusing until they end']);
    release();
    assert.deepEqual((await Promise.all(waiting)).map((p) => p?.id), Array(3).fill(`mesh:user:${ALICE_USER_ID}`), 'the same ip:port shares one lookup');
    assert.ok(await t.mesh.identify('100.64.0.1', 3));
  });

  it('treats a whois call that throws or rejects as a failed lookup', async () => {
    const t = setup({ whois: () => { throw new Error('boom'); } });
    assert.equal(await t.mesh.identify('100.64.0.1', 1), undefined);
    const r = setup({ whois: () => Promise.reject(new Error('bang')) });
    assert.equal(await r.mesh.identify('100.64.0.1', 1), undefined);
    assert.deepEqual([...t.problems, ...r.problems], ['mesh daemon lookup failed: boom', 'mesh daemon lookup failed: bang']);
  });
});

describe('openMeshAllowlist', () => {
  it('adds the file to the inline entries, re-reads it when it changes, and fails closed while it is invalid or unsafe', () => {
    const dir = tempDir();
    mkdirSync(join(dir.path, 'secrets'), { mode: 0o700 });
    const file = join(dir.path, 'secrets', 'mesh.json');
    const errors: string[] = [];
    const inline: MeshAllowlistEntry[] = [{ user: ALICE_USER_ID, roles: ['viewer'] }];
    const current = openMeshAllowlist(inline, file, (m) => errors.push(m), 0);
    assert.deepEqual(current(), inline, 'a missing file adds nothing');
    writeFileSync(file, JSON.stringify({ allowlist: [{ node: TAGGED_NODE_ID, roles: ['viewer'] }] }), { mode: 0o600 });
    assert.deepEqual(current(), [...inline, { node: TAGGED_NODE_ID, roles: ['viewer'] }]);
    writeFileSync(file, JSON.stringify({ allowlist: [{ node: TAGGED_NODE_ID, roles: ['ingestor'] }] }));
    assert.equal(current(), undefined);
    assert.match(errors.at(-1)!, /^mesh allowlist .* not loaded, refusing every mesh identity: .*allowlist\.0\.roles\.0: expected one of viewer, analyst, rule_admin, admin/);
    writeFileSync(file, JSON.stringify({ allowlist: [{ user: ALICE_USER_ID, roles: ['admin'] }] }));
    assert.deepEqual(current(), [...inline, { user: ALICE_USER_ID, roles: ['admin'] }]);
    chmodSync(file, 0o644);
    assert.equal(current(), undefined);
    assert.match(errors.at(-1)!, /readable or writable by group or others/);
    dir.cleanup();
  });
});

describe('auth.mesh configuration', () => {
  const load = (mesh: unknown) => {
    const dir = tempDir();
    writeFileSync(join(dir.path, 'vigil.config.json'), JSON.stringify({ auth: { mesh } }));
    try {
      return loadConfig('vigil.config.json', {}, dir.path);
    } finally {
      dir.cleanup();
    }
  };

  it('defaults to the daemon socket and the tailnet ranges, and resolves its paths against the config folder', () => {
    const { config } = load({ allowlistFile: 'mesh.json' });
    assert.equal(config.auth.mesh?.socketPath, '/var/run/tailscale/tailscaled.sock');
    assert.deepEqual(config.auth.mesh?.peerRanges, ['100.64.0.0/10', 'fd7a:115c:a1e0::/48']);
    assert.deepEqual(config.auth.mesh?.allowlist, []);
    assert.match(config.auth.mesh?.allowlistFile ?? '', /^\/.*\/mesh\.json$/);
    assert.equal(load(undefined).config.auth.mesh, undefined, 'absent: no mesh identity');
  });

  it('refuses at start-up a role outside viewer, analyst, rule_admin, admin, and a malformed entry, naming the key', () => {
    const refused = (mesh: unknown, key: RegExp) => assert.throws(() => load(mesh), (err: unknown) => err instanceof ConfigError && key.test(err.message));
    refused({ allowlist: [{ user: ALICE_USER_ID, roles: ['viewer', 'ingestor'] }] }, /auth\.mesh\.allowlist\[0\]\.roles\[1\]: expected one of viewer, analyst, rule_admin, admin/);
    refused({ allowlist: [{ node: TAGGED_NODE_ID, roles: ['console'] }] }, /auth\.mesh\.allowlist\[0\]\.roles\[0\]/);
    refused({ allowlist: [{ node: TAGGED_NODE_ID, roles: [] }] }, /auth\.mesh\.allowlist\[0\]\.roles: expected at least one role/);
    refused({ allowlist: [{ user: ALICE_USER_ID, node: TAGGED_NODE_ID, roles: ['admin'] }] }, /auth\.mesh\.allowlist\[0\]: expected exactly one of user or node/);
    refused({ allowlist: [{ user: 6542213798012345, roles: ['admin'] }] }, /auth\.mesh\.allowlist\[0\]\.user/);
    refused({ allowlist: [{ user: ALICE_USER_ID, roles: ['admin'], group: 'x' }] }, /auth\.mesh\.allowlist\[0\]\.group: unknown key/);
    refused({ peerRanges: ['100.64.0.0/33'] }, /auth\.mesh\.peerRanges\[0\]/);
    refused({ socket: '/tmp/x' }, /auth\.mesh\.socket: unknown key/);
  });
});

describe('openMeshIdentity', () => {
  it('refuses to start on an allowlist file that is invalid or open to others, naming the key', () => {
    const dir = tempDir();
    mkdirSync(join(dir.path, 'secrets'), { mode: 0o700 });
    const allowlistFile = join(dir.path, 'secrets', 'mesh.json');
    const config = v.parse(MeshConfigSchema, { allowlistFile, socketPath: join(dir.path, 'absent.sock') });
    writeFileSync(allowlistFile, JSON.stringify({ allowlist: [{ node: TAGGED_NODE_ID, roles: ['collector'] }] }), { mode: 0o600 });
    assert.throws(() => openMeshIdentity(config, () => {}), /refusing to start: auth\.mesh\.allowlistFile: .*allowlist\.0\.roles\.0: expected one of viewer/);
    writeFileSync(allowlistFile, JSON.stringify({ allowlist: [{ node: TAGGED_NODE_ID, roles: ['viewer'] }] }));
    chmodSync(allowlistFile, 0o640);
    assert.throws(() => openMeshIdentity(config, () => {}), /refusing to start: auth\.mesh\.allowlistFile: .*chmod 600/);
    chmodSync(allowlistFile, 0o600);
    assert.equal(openMeshIdentity(config, () => {}).covers('100.64.0.1'), true);
    dir.cleanup();
  });

  it('logs a daemon that is down once, not once a request', async () => {
    const dir = tempDir();
    const lines: Array<Record<string, unknown>> = [];
    const mesh = openMeshIdentity(v.parse(MeshConfigSchema, { socketPath: join(dir.path, 'absent.sock'), allowlist: [{ user: ALICE_USER_ID, roles: ['viewer'] }] }), (l) => lines.push(l));
    for (let i = 0; i < 5; i++) assert.equal(await mesh.identify('100.64.0.1', 1000 + i), undefined);
    assert.deepEqual(lines, [{ level: 'warn', msg: 'mesh daemon lookup failed: ENOENT', socket: join(dir.path, 'absent.sock') }]);
    dir.cleanup();
  });
});
