import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import { runCli, startServe, writeTestConfig } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { provision, startTestAuthority } from '../setup/harness.js';
import type { ConsoleView } from '../../src/projections/console-query.js';

/** Polls `read` until `done` holds (no timed assertion: the test's own timeout bounds it). */
async function until<T>(read: () => Promise<T>, done: (v: T) => boolean): Promise<T> {
  for (;;) {
    const v = await read();
    if (done(v)) return v;
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('the console projection of a managed deployment, end to end', () => {
  it('shows the deployment reporting to a real setup authority, then not delivered with the recovery action once the authority is gone', { timeout: 180_000 }, async () => {
    const authority = await startTestAuthority();
    // The authority's clock follows the instance's, so its snapshots are neither stale nor ahead.
    authority.setNow(new Date(Date.now() + 60_000).toISOString());
    const p = await provision(authority, await authority.signIn('alice'));
    const server: ServerType = await new Promise((resolve) => { const s = serve({ fetch: authority.app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s)); });
    const authorityUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const dir = tempDir();
    try {
      mkdirSync(join(dir.path, 'keys'), { mode: 0o700 });
      const keyFile = join(dir.path, 'keys', 'identity.pem');
      writeFileSync(keyFile, p.key.privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
      const config = writeTestConfig(dir.path, { deployment: { authorityUrl, deploymentId: p.deploymentId, identityKeyFile: keyFile, intervalSeconds: 1, centralVmId: 'vm-central' } });
      const consoleToken = (JSON.parse(runCli(['api-token-generate', 'central-console', 'console', '--config', config]).stdout) as { token: string }).token;
      const instance = await startServe(config, dir.path);
      const read = async () => {
        const res = await fetch(`${instance.url}/api/v1/console`, { headers: { authorization: `Bearer ${consoleToken}` } });
        assert.equal(res.status, 200);
        return (await res.json() as ConsoleView).deployment;
      };
      try {
        const reporting = await until(read, (d) => d.state === 'reporting');
        assert.equal(reporting.deploymentId, p.deploymentId);
        assert.equal(reporting.authorityUrl, authorityUrl);
        assert.equal(reporting.centralVmId, 'vm-central');
        assert.equal(reporting.authorityStatus, 'reporting', 'what the authority answered');
        assert.equal(reporting.centralMissing.likely, false);
        assert.match(reporting.centralMissing.recoveryAction!, /recovery token/);
        await new Promise<void>((resolve) => { server.close(() => resolve()); (server as { closeAllConnections?: () => void }).closeAllConnections?.(); });
        const failing = await until(read, (d) => d.state === 'not_delivered');
        assert.ok(failing.failingSince !== null && failing.lastError !== null);
        assert.ok(failing.lastDeliveredAt !== null && failing.lastDeliveredAt >= reporting.lastDeliveredAt!, 'the last delivery is kept');
      } finally {
        instance.proc.kill('SIGTERM');
        await instance.exited;
      }
    } finally {
      server.close();
      await authority.close();
      dir.cleanup();
    }
  });
});
