import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RecordType } from '../../src/events/record-types.js';
import { graphProjection } from '../../src/projections/graph.js';
import { queryGraph } from '../../src/projections/graph-query.js';

describe('collector facts in the graph', () => {
  it('adds entities with their kinds and typed relationships, counting repeats', () => {
    const facts = [
      { fact: 'entity', key: 'host:web-01', kind: 'host', attributes: { os: 'Debian' } },
      { fact: 'relationship', from: 'host:web-01', to: 'port:web-01/tcp/22', type: 'listens_on' },
      { fact: 'relationship', from: 'host:web-01', to: 'ip:192.0.2.7', type: 'has_address' },
    ];
    const record = (seq: number, type: string, at: string) => ({ seq, at, type, data: { facts, events: [] }, prev: '' });
    let g = graphProjection.initial();
    g = graphProjection.evolve(g, record(1, RecordType.CollectorSubmissionAccepted, '2026-11-22T10:00:00.000Z'));
    g = graphProjection.evolve(g, record(2, RecordType.CollectorSubmissionAccepted, '2026-11-22T11:00:00.000Z'));
    // Facts only count from accepted submissions, whatever another record carries.
    g = graphProjection.evolve(g, record(3, RecordType.EventsIngested, '2026-11-22T12:00:00.000Z'));
    const page = queryGraph(g, { entity: 'host:web-01', limit: 100 })!;
    assert.deepEqual(page.entities.map((e) => [e.key, e.kind]).sort(), [['host:web-01', 'host'], ['ip:192.0.2.7', 'ip'], ['port:web-01/tcp/22', 'port']]);
    assert.deepEqual(page.relationships.map((r) => [r.type, r.count, r.firstSeen, r.lastSeen]).sort(), [
      ['has_address', 2, '2026-11-22T10:00:00.000Z', '2026-11-22T11:00:00.000Z'],
      ['listens_on', 2, '2026-11-22T10:00:00.000Z', '2026-11-22T11:00:00.000Z'],
    ]);
    assert.equal(g.entities.get('host:web-01')!.count, 2);
  });
});
