import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Packr } from 'msgpackr';
import { decideIngestEvents } from '../../src/commands/ingest-events.js';
import { accessRecords } from '../../src/http/access-records.js';
import type { NormalizedEvent } from '../../src/events/normalized-event.js';
import { openInstanceStore, type InstanceStore } from '../../src/instance/open.js';
import { HEAP_PROJECTIONS, INDEX_PROJECTIONS } from '../../src/projections/all.js';
import { tempDir } from '../helpers/temp.js';

const packr = new Packr({ useRecords: false, mapsAsObjects: true });

/** Every read model as comparable plain data. */
function dump(inst: InstanceStore): unknown {
  const heap = HEAP_PROJECTIONS.map((p) => [p.name, packr.unpack(packr.pack(p.snapshot ? p.snapshot(inst.runtime.state(p.name)) : inst.runtime.state(p.name)))]);
  const indexes = INDEX_PROJECTIONS.flatMap((ix) => ix.dbs.map((db) => [db, [...inst.runtime.db(db).getRange({})].map(({ key, value }) => [key, value])]));
  return { heap, indexes };
}

const eventArb = fc.record({
  id: fc.constantFrom('e1', 'e2', 'e3', 'e4', 'e5', 'e6'),
  category: fc.constantFrom('network', 'identity', 'system'),
  minute: fc.integer({ min: 0, max: 59 }),
  keys: fc.uniqueArray(fc.constantFrom('ip:10.0.0.1', 'ip:10.0.0.2', 'host:a', 'user:bob', 'domain:x.org', 'meshnet:corp', 'node:n1'), { maxLength: 5 }),
  user: fc.option(fc.constantFrom('bob', 'eve'), { nil: undefined }),
  severity: fc.integer({ min: 0, max: 10 }),
}).map((r): NormalizedEvent => ({
  schemaVersion: 1, id: r.id, category: r.category as NormalizedEvent['category'], class: r.category === 'network' ? 'dns_query' : 'authentication', activity: 'a', outcome: 'success',
  time: `2026-11-22T10:${String(r.minute).padStart(2, '0')}:00Z`, ingestedAt: '2026-11-22T11:00:00Z', severity: r.severity,
  source: { adapter: 'prop', instance: 'x', recordId: r.id }, entityKeys: r.keys,
  ...(r.user ? { actor: { user: r.user } } : {}),
  sourceEndpoint: { ip: '10.0.0.1' }, destinationEndpoint: { ip: '10.0.0.2', port: 53 }, attributes: {},
}));

const commandArb = fc.oneof(
  fc.record({ kind: fc.constant('ingest' as const), events: fc.array(eventArb, { minLength: 1, maxLength: 4 }) }),
  fc.record({ kind: fc.constant('access' as const), status: fc.constantFrom(200, 401, 403), n: fc.nat(1000) }),
);

describe('read models', () => {
  it('equal the ones rebuilt from record 1, and the ones restored after a restart, for any command sequence', async () => {
    await fc.assert(fc.asyncProperty(fc.array(commandArb, { minLength: 1, maxLength: 25 }), async (commands) => {
      const dir = tempDir();
      let inst = await openInstanceStore(`${dir.path}/store`, { checkpointEvery: 7 });
      try {
        let i = 0;
        await Promise.all(commands.map(async (c) => {
          const ctx = { now: `2026-11-22T11:00:${String(i++ % 60).padStart(2, '0')}Z` };
          if (c.kind === 'ingest') await inst.writer.execute((m) => decideIngestEvents(m, c.events), ctx);
          else await inst.writer.record(accessRecords({ requestId: `r${c.n}-${i}`, operation: 'op', method: 'GET', route: '/api/v1/me', status: c.status, durationMs: 1, sourceAddress: '10.0.0.9', approved: false, at: ctx.now }), ctx);
        }));
        const live = dump(inst);
        await inst.close();
        inst = await openInstanceStore(`${dir.path}/store`, { checkpointEvery: 7 });
        assert.deepEqual(dump(inst), live, 'restored from checkpoint + tail');
        await inst.runtime.rebuild();
        assert.deepEqual(dump(inst), live, 'rebuilt from record 1');
      } finally {
        await inst.close();
        dir.cleanup();
      }
    }), { numRuns: 40 });
  });
});
