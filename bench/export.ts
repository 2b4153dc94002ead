import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { eventBodies } from './events.js';
import type { Figure } from './foundation.js';
import { benchConfig, cli, load, scratch, startChild, stopChild, token } from './harness.js';

/**
 * A webhook receiver in a process of its own (the bench's own event loop is blocked while the load
 * generator runs): answers `status` (503 with Retry-After: 1 when failing) and counts the items it
 * took, which `GET /count` reports.
 */
async function receiver(status: 200 | 503): Promise<{ url: string; items: () => Promise<number>; close(): void }> {
  const code = `
    import { createServer } from 'node:http';
    let items = 0;
    const server = createServer((req, res) => {
      if (req.method === 'GET') { res.end(String(items)); return; }
      const chunks = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        if (${status} === 200) items += JSON.parse(Buffer.concat(chunks).toString('utf8')).items.length;
        res.writeHead(${status}, ${status} === 503 ? { 'retry-after': '1' } : {}).end();
      });
    });
    server.listen(0, '127.0.0.1', () =>
      console.log(JSON.stringify({ url: 'http://127.0.0.1:' + server.address().port + '/hook' })));
  `;
  const child = await startChild(['--input-type=module', '-e', code], scratch('receiver'));
  return {
    url: child.url,
    items: async () => Number(await (await fetch(child.url.replace('/hook', '/count'))).text()),
    close: () => child.proc.kill('SIGTERM'),
  };
}

/** Ingest throughput of `POST /api/v1/events` with the given export destinations. */
async function ingestWith(destinations: unknown[], bodies: string[]): Promise<number> {
  const dir = scratch('export');
  const secrets = join(dir, 'secrets-export');
  mkdirSync(secrets, { mode: 0o700 });
  writeFileSync(join(secrets, 'hook.secret'), 'bench-secret-0123456789abcdef', { mode: 0o600 });
  const config = benchConfig(dir, {
    export: { destinations: destinations.map((d) => ({ ...(d as object), secretFile: join(secrets, 'hook.secret') })) },
  });
  const t = token(config, dir, 'bench', 'ingestor');
  const serve = await startChild([cli, 'serve', '--config', config], dir);
  const result = load(`${serve.url}/api/v1/events`, bodies, 1000, { token: t, seconds: 10 });
  await stopChild(serve.proc);
  return result.eventsPerSecond;
}

/** Ingest with no export, with a healthy webhook taking every event, and with one answering 503 throughout. */
export async function exportBench(): Promise<Figure[]> {
  const bodies = eventBodies('x', 120, 1000);
  const healthy = await receiver(200);
  const failing = await receiver(503);
  const events = (url: string) => [{ name: 'bench', kind: 'webhook', url, carries: ['events'], batchSize: 1000 }];
  const none: number[] = [];
  const down: number[] = [];
  const up: number[] = [];
  // Alternating rounds, best of two each, so drift touches all three alike.
  for (let i = 0; i < 2; i++) {
    none.push(await ingestWith([], bodies));
    down.push(await ingestWith(events(failing.url), bodies));
    up.push(await ingestWith(events(healthy.url), bodies));
  }
  const delivered = await healthy.items();
  healthy.close();
  failing.close();
  const [n, d, u] = [Math.max(...none), Math.max(...down), Math.max(...up)];
  return [
    { name: 'ingest, no export', value: Math.round(n), unit: 'events/s', note: '1000-event batches, 4 connections' },
    { name: 'ingest, one webhook answering 503 + Retry-After throughout', value: Math.round(d), unit: 'events/s' },
    { name: 'failing destination / no export', value: Math.round((d / n) * 1000) / 10, unit: '%' },
    {
      name: 'ingest, one healthy webhook carrying every event',
      value: Math.round(u),
      unit: 'events/s',
      note: `${delivered} items delivered in both runs, the instance stopped after each 10 s load`,
    },
    { name: 'healthy destination / no export', value: Math.round((u / n) * 1000) / 10, unit: '%' },
  ];
}
