import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as v from 'valibot';
import { ConfigSchema } from '../../src/services/config-schema.js';
import { runCli, writeTestConfig } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const parse = (storage: unknown) => v.safeParse(ConfigSchema, { storage });
const messages = (r: ReturnType<typeof parse>) => (r.success ? [] : r.issues.map((i) => i.message));

describe('storage.backend configuration', () => {
  it('defaults to LMDB and fills the JetStream defaults when asked for JetStream', () => {
    const lmdb = parse({});
    assert.ok(lmdb.success);
    assert.equal(lmdb.output.storage.backend, 'lmdb');
    const js = parse({ backend: 'jetstream', jetstream: { servers: ['nats://10.0.0.1:4222'] } });
    assert.ok(js.success, JSON.stringify(messages(js)));
    assert.deepEqual(js.output.storage.jetstream, { servers: ['nats://10.0.0.1:4222'], stream: 'VIGIL_LOG', replicas: 3, leaseSeconds: 10, publishTimeoutSeconds: 10 });
  });

  it('refuses JetStream without its section, credentials in a server URL, a relative credentials file and an even replica count', () => {
    assert.match(messages(parse({ backend: 'jetstream' })).join(' '), /needs a storage.jetstream section/);
    assert.match(messages(parse({ backend: 'jetstream', jetstream: { servers: ['nats://user:secret@10.0.0.1:4222'] } })).join(' '), /never in the URL/);
    assert.match(messages(parse({ backend: 'jetstream', jetstream: { servers: ['nats://10.0.0.1:4222'], credentialsFile: 'nats.creds' } })).join(' '), /absolute path/);
    assert.equal(parse({ backend: 'jetstream', jetstream: { servers: ['nats://10.0.0.1:4222'], replicas: 2 } }).success, false);
  });

  it('refuses the offline token command on a JetStream node, whose store is a copy of the stream', () => {
    const dir = tempDir();
    try {
      const config = writeTestConfig(dir.path, { storage: { path: 'store', backend: 'jetstream', jetstream: { servers: ['nats://127.0.0.1:4222'] } } });
      const r = runCli(['collector-token', 'create', 'host-1', '--config', config]);
      assert.equal(r.status, 2, r.stdout + r.stderr);
      assert.match(r.stderr, /admin API of a running node/);
    } finally { dir.cleanup(); }
  });
});
