/**
 * The stack ceiling (a'): a bare @hono/node-server route that JSON-parses each body and durably
 * appends it to LMDB, with no validation, auth, audit or read models. Prints its URL, then serves.
 */
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { open } from 'lmdb';
import { Packr } from 'msgpackr';

const db = open({ path: process.argv[2]!, compression: false });
const log = db.openDB<Uint8Array, number>({ name: 'log', encoding: 'binary', keyEncoding: 'uint32' });
const packr = new Packr({ useRecords: false });
let seq = 0;
const app = new Hono();
app.post('/ingest', async (c) => {
  const body = (await c.req.json()) as unknown[];
  const s = ++seq;
  await db.transaction(() => {
    log.putSync(s, packr.pack(body));
  });
  await db.flushed;
  return c.json({ accepted: body.length }, 202);
});
const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, (info) => {
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${info.port}/ingest` })}\n`);
});
process.on('SIGTERM', () => {
  server.close();
  void db.close().then(() => process.exit(0));
});
