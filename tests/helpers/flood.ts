/**
 * A load generator run as its own process (`node dist/tests/helpers/flood.js`), so the server under
 * test does not share its event loop: `workers` connections post batches of `batch` events to
 * /api/v1/events for `seconds`, honouring nothing (a hostile client retries at once). The token
 * comes from VIGIL_FLOOD_TOKEN, never argv. It writes the acknowledged event ids, one a line, to
 * `out`, and prints `{statuses, acknowledged}` as JSON.
 */
import { writeFileSync } from 'node:fs';
import { makeEvent } from './instance.js';

async function main(): Promise<void> {
  const [url, seconds, workers, batch, prefix, out] = process.argv.slice(2);
  const token = process.env['VIGIL_FLOOD_TOKEN'];
  if (!url || !seconds || !workers || !batch || !prefix || !out || !token) throw new Error('usage: flood URL SECONDS WORKERS BATCH PREFIX OUT (token in VIGIL_FLOOD_TOKEN)');
  const until = Date.now() + Number(seconds) * 1000;
  const statuses: Record<string, number> = {};
  const acknowledged: string[] = [];
  await Promise.all(Array.from({ length: Number(workers) }, async (_, w) => {
    for (let b = 0; Date.now() < until; b++) {
      const ids = Array.from({ length: Number(batch) }, (_, i) => `${prefix}${w}-b${b}-e${i}`);
      try {
        const res = await fetch(`${url}/api/v1/events`, {
          method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify(ids.map((id) => makeEvent({ id, source: { adapter: 'flood', instance: prefix, recordId: id } }))),
        });
        await res.arrayBuffer();
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
        if (res.status === 202) acknowledged.push(...ids);
      } catch {
        statuses['network'] = (statuses['network'] ?? 0) + 1;
      }
    }
  }));
  writeFileSync(out, acknowledged.join('\n'));
  process.stdout.write(`${JSON.stringify({ statuses, acknowledged: acknowledged.length })}\n`);
}

await main();
