import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { runCli, startServe, writeTestConfig, type ServeProcess } from '../helpers/cli.js';
import {
  ALICE_USER_ID, TAGGED_DEVICES_USER_ID, TAGGED_NODE_ID, WHOIS_TAGGED_NODE, WHOIS_USER_NODE, startLocalApiStandIn, type LocalApiStandIn,
} from '../helpers/localapi-stand-in.js';
import { tempDir } from '../helpers/temp.js';

/** A GET from a chosen loopback address, so the stand-in can tell the test's peers apart. */
function getFrom(url: string, path: string, from: string, headers: Record<string, string> = {}): Promise<{ status: number; body: unknown; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, url), { localAddress: from, headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => { text += d; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) as unknown : null, ms: performance.now() - started }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Polls until `check` holds (the allowlist file is re-read at most twice a second). */
async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 50; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.fail(`never: ${what}`);
}

const ALICE = '127.0.0.2';
const TAGGED = '127.0.0.3';
const BOB = '127.0.0.4';
const STRANGER = '127.0.0.5';
/** A user-owned node of a user the allowlist does not name: the user sample with other ids. */
const WHOIS_BOB = WHOIS_USER_NODE.replaceAll(ALICE_USER_ID, '6542213798054321').replace('nDbSrv01CNTRL', 'nBobLaptopCNTRL').replace('alice@example.com', 'bob@example.com');

describe('vigil serve with auth.mesh and a LocalAPI stand-in', () => {
  const dir = tempDir('vigil-mesh-');
  let daemon: LocalApiStandIn;
  let serve: ServeProcess;
  let adminToken: string;
  let viewerToken: string;
  const allowlistFile = join(dir.path, 'secrets', 'mesh-allowlist.json');
  const writeAllowlist = (allowlist: unknown[]) => {
    writeFileSync(`${allowlistFile}.tmp`, JSON.stringify({ allowlist }), { mode: 0o600 });
    renameSync(`${allowlistFile}.tmp`, allowlistFile);
  };

  before(async () => {
    daemon = await startLocalApiStandIn(dir.path, { [ALICE]: WHOIS_USER_NODE, [TAGGED]: WHOIS_TAGGED_NODE, [BOB]: WHOIS_BOB });
    const config = writeTestConfig(dir.path, {
      server: { host: '127.0.0.1', port: 0, allowLoopbackAdmin: true, trustedProxies: ['127.0.0.0/8'] },
      auth: {
        credentialsFile: 'secrets/credentials.json',
        mesh: {
          socketPath: daemon.socketPath,
          peerRanges: ['127.0.0.0/8'],
          allowlist: [{ user: ALICE_USER_ID, roles: ['analyst'] }],
          allowlistFile: 'secrets/mesh-allowlist.json',
        },
      },
    });
    adminToken = (JSON.parse(runCli(['api-token-generate', 'auditor', 'admin', '--config', config]).stdout) as { token: string }).token;
    viewerToken = (JSON.parse(runCli(['api-token-generate', 'reader', 'viewer', '--config', config]).stdout) as { token: string }).token;
    mkdirSync(join(dir.path, 'secrets'), { recursive: true, mode: 0o700 });
    // The shared tagged-devices profile is listed as admin: a tagged node must still not become it.
    writeAllowlist([{ node: TAGGED_NODE_ID, roles: ['viewer'] }, { user: TAGGED_DEVICES_USER_ID, roles: ['admin'] }]);
    serve = await startServe(config, dir.path);
  });

  after(async () => {
    serve?.proc.kill('SIGTERM');
    await serve?.exited;
    await daemon?.close();
    dir.cleanup();
  });

  it('gives an allowlisted user its roles and the names of its profile, asking the daemon for the peer ip:port', async () => {
    const me = await getFrom(serve.url, '/api/v1/me', ALICE);
    assert.equal(me.status, 200);
    assert.deepEqual(me.body, { id: `mesh:user:${ALICE_USER_ID}`, roles: ['analyst'], displayName: 'Alice Example', loginName: 'alice@example.com', authentication: 'mesh' });
    assert.match(daemon.asked.at(-1)!, /^127\.0\.0\.2:\d{1,5}$/);
    assert.equal((await getFrom(serve.url, '/api/v1/alerts', ALICE)).status, 200, 'analyst reads alerts');
    assert.equal((await getFrom(serve.url, '/api/v1/audit', ALICE)).status, 403, 'but not the audit trail');
  });

  it('names a tagged node by its stable id only, never by the shared tagged-devices profile', async () => {
    const me = await getFrom(serve.url, '/api/v1/me', TAGGED);
    assert.equal(me.status, 200);
    assert.deepEqual(me.body, { id: `mesh:node:${TAGGED_NODE_ID}`, roles: ['viewer'], displayName: 'Tagged Devices', loginName: 'tagged-devices', authentication: 'mesh' });
  });

  it('refuses an unlisted user and an unknown peer with the one 401 body, never loopback admin', async () => {
    const badBearer = await getFrom(serve.url, '/api/v1/me', STRANGER, { authorization: 'Bearer vgl_not-a-token' });
    assert.equal(badBearer.status, 401);
    for (const from of [BOB, STRANGER]) {
      const r = await getFrom(serve.url, '/api/v1/me', from);
      assert.equal(r.status, 401, from);
      assert.deepEqual(r.body, badBearer.body, from);
    }
  });

  it('never takes an identity from X-Forwarded-For, even from a trusted proxy', async () => {
    for (const [from, forwardedFor] of [[STRANGER, ALICE], [ALICE, ALICE], [TAGGED, `${ALICE}, ${TAGGED}`]] as const) {
      const r = await getFrom(serve.url, '/api/v1/me', from, { 'x-forwarded-for': forwardedFor });
      assert.equal(r.status, 401, `${from} forwarding for ${forwardedFor}`);
    }
  });

  it('lets a bearer header win over the mesh identity, checked as always', async () => {
    const withToken = await getFrom(serve.url, '/api/v1/me', ALICE, { authorization: `Bearer ${viewerToken}` });
    assert.equal(withToken.status, 200);
    assert.equal((withToken.body as { id: string; authentication: string }).id, 'reader');
    assert.equal((withToken.body as { authentication: string }).authentication, 'bearer');
    assert.equal((await getFrom(serve.url, '/api/v1/me', ALICE, { authorization: 'Bearer vgl_wrong' })).status, 401);
  });

  it('applies an allowlist file change without a restart', async () => {
    writeAllowlist([]);
    await eventually(async () => (await getFrom(serve.url, '/api/v1/me', TAGGED)).status === 401, 'the tagged node is refused once unlisted');
    writeAllowlist([{ node: TAGGED_NODE_ID, roles: ['viewer'] }]);
    await eventually(async () => (await getFrom(serve.url, '/api/v1/me', TAGGED)).status === 200, 'and admitted once listed again');
  });

  it('records the mesh identity in the audit trail and the access events', async () => {
    const audit = await getFrom(serve.url, '/api/v1/audit?limit=1000', STRANGER, { authorization: `Bearer ${adminToken}` });
    assert.equal(audit.status, 200);
    const entries = (audit.body as { entries: Array<{ principal: string | null; authentication: string; route: string; status: number }> }).entries;
    const alice = entries.filter((e) => e.principal === `mesh:user:${ALICE_USER_ID}`);
    assert.ok(alice.length >= 3, JSON.stringify(entries.slice(0, 5)));
    assert.ok(alice.every((e) => e.authentication === 'mesh'));
    assert.ok(entries.some((e) => e.principal === `mesh:node:${TAGGED_NODE_ID}` && e.authentication === 'mesh' && e.status === 200));
    const events = await getFrom(serve.url, '/api/v1/events?limit=1000', STRANGER, { authorization: `Bearer ${adminToken}` });
    const access = (events.body as { events: Array<{ class: string; actor: { user: string; authentication: string } | null; attributes: Record<string, unknown> }> }).events
      .filter((e) => e.class === 'api_access' && e.actor?.user === `mesh:user:${ALICE_USER_ID}`);
    assert.ok(access.length >= 1);
    assert.equal(access[0]!.actor!.authentication, 'mesh');
    assert.equal(access[0]!.attributes['authentication'], 'mesh');
    assert.equal(access[0]!.attributes['unapproved_device'], false, '127.0.0.2 is in the default approved ranges');
  });

  it('fails closed on a malformed answer, a slow daemon (within the timeout) and a daemon that is down', async () => {
    daemon.mode = 'garbage';
    assert.equal((await getFrom(serve.url, '/api/v1/me', ALICE)).status, 401);
    daemon.mode = 'slow';
    const slow = await getFrom(serve.url, '/api/v1/me', ALICE);
    assert.equal(slow.status, 401);
    assert.ok(slow.ms >= 900 && slow.ms < 3000, `answered in ${Math.round(slow.ms)} ms`);
    daemon.mode = 'normal';
    assert.equal((await getFrom(serve.url, '/api/v1/me', ALICE)).status, 200, 'and recovers');
    await daemon.close();
    assert.equal((await getFrom(serve.url, '/api/v1/me', ALICE)).status, 401);
    assert.equal((await getFrom(serve.url, '/health', ALICE)).status, 200);
    assert.match(serve.output(), /mesh daemon lookup failed/);
    assert.match(serve.output(), /malformed body/);
  });
});
