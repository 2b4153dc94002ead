import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { NormalizedEvent } from '../../src/events/normalized-event.js';
import { compileHunt, HUNT_LIMITS, parseHunt, type CompiledHunt } from '../../src/detection/hunt/index.js';

let n = 0;
function ev(user: string, host: string | undefined, time: string, tags?: unknown[]): NormalizedEvent {
  n++;
  return {
    schemaVersion: 1,
    id: `ev-${n}`,
    category: 'identity',
    class: 'authentication',
    activity: 'logon',
    outcome: 'success',
    time: `2026-03-01T${time}Z`,
    ingestedAt: `2026-03-01T${time}Z`,
    source: { adapter: 'linux-journal', instance: 'web', recordId: `r${n}` },
    entityKeys: [`user:${user}`],
    actor: host === undefined ? { user } : { user, host },
    attributes: tags === undefined ? {} : { tags },
  };
}

/** Six logons, hand-counted below. */
const EVENTS = [
  ev('alice', 'web1', '10:05:00', ['a', 'b']),
  ev('alice', 'web2', '10:20:00', ['a']),
  ev('alice', 'web1', '11:10:00', []),
  ev('bob', 'web1', '11:15:00', ['b']),
  ev('bob', undefined, '12:59:59', ['a', 'a']),
  ev('carol', 'web3', '10:00:00'),
];
const RANGE = { sinceMs: Date.parse('2026-03-01T10:00:00Z'), untilMs: Date.parse('2026-03-01T13:00:00Z') };

function compiled(text: string): CompiledHunt {
  const r = parseHunt(text);
  if (!r.ok) assert.fail(r.error.message);
  return compileHunt(r.query);
}

/** What an engine does: the matching events into one aggregator. */
function run(text: string, events = EVENTS) {
  const hunt = compiled(text);
  const agg = hunt.aggregator(RANGE);
  for (const e of events) if (hunt.matches(e)) agg.add(e);
  return agg.finish();
}

describe('hunt aggregations on a known data set', () => {
  it('stats count() by one and two fields, groups sorted by count then keys, a missing field under null', () => {
    assert.deepEqual(run('| stats count() by actor.user'), {
      columns: ['actor.user', 'count'],
      rows: [['alice', 3], ['bob', 2], ['carol', 1]],
    });
    assert.deepEqual(run('* | stats count() by actor.user, actor.host').rows, [
      ['alice', 'web1', 2],
      ['alice', 'web2', 1],
      ['bob', null, 1],
      ['bob', 'web1', 1],
      ['carol', 'web3', 1],
    ]);
    assert.deepEqual(run('| stats count()'), { columns: ['count'], rows: [[6]] });
    assert.deepEqual(run('actor.user:alice | stats count()').rows, [[3]]);
  });

  it('dc() counts distinct present values', () => {
    assert.deepEqual(run('| stats count(), dc(actor.host) by actor.user'), {
      columns: ['actor.user', 'count', 'dc(actor.host)'],
      rows: [['alice', 3, 2], ['bob', 2, 1], ['carol', 1, 1]],
    });
  });

  it('counts an array-valued by-field under each distinct element', () => {
    assert.deepEqual(run('| stats count() by attributes.tags').rows, [['a', 3], [null, 2], ['b', 2]]);
  });

  it('top N answers count and percent of the matching events', () => {
    assert.deepEqual(run('| top 2 actor.host'), {
      columns: ['actor.host', 'count', 'percent'],
      rows: [['web1', 3, 50], [null, 1, 16.67]],
    });
    assert.deepEqual(run('| top actor.user').rows, [['alice', 3, 50], ['bob', 2, 33.33], ['carol', 1, 16.67]]);
  });

  it('sort and head apply to rows', () => {
    assert.deepEqual(run('| stats count() by actor.user | sort count').rows, [['carol', 1], ['bob', 2], ['alice', 3]]);
    assert.deepEqual(run('| stats count() by actor.user | sort -actor.user | head 2').rows, [['carol', 1], ['bob', 2]]);
    assert.deepEqual(run('| top actor.user | head 1').rows, [['alice', 3, 50]]);
  });

  it('timechart counts every bucket of the range, zeros included', () => {
    assert.deepEqual(run('| timechart span=1h count()'), {
      columns: ['time', 'count'],
      rows: [['2026-03-01T10:00:00.000Z', 3], ['2026-03-01T11:00:00.000Z', 2], ['2026-03-01T12:00:00.000Z', 1]],
    });
    assert.deepEqual(run('| timechart span=1h count() by actor.user').rows, [
      ['2026-03-01T10:00:00.000Z', 'alice', 2],
      ['2026-03-01T10:00:00.000Z', 'bob', 0],
      ['2026-03-01T10:00:00.000Z', 'carol', 1],
      ['2026-03-01T11:00:00.000Z', 'alice', 1],
      ['2026-03-01T11:00:00.000Z', 'bob', 1],
      ['2026-03-01T11:00:00.000Z', 'carol', 0],
      ['2026-03-01T12:00:00.000Z', 'alice', 0],
      ['2026-03-01T12:00:00.000Z', 'bob', 1],
      ['2026-03-01T12:00:00.000Z', 'carol', 0],
    ]);
  });

  it('timechart span=auto picks at most 120 buckets (5m over 3h) and leaves out events outside the range', () => {
    const rows = run('| timechart span=auto count()', [...EVENTS, ev('dave', 'x', '13:00:00'), ev('dave', 'x', '09:59:59')]).rows;
    assert.equal(rows.length, 36);
    assert.deepEqual(rows[0], ['2026-03-01T10:00:00.000Z', 1]);
    assert.deepEqual(rows[1], ['2026-03-01T10:05:00.000Z', 1]);
    assert.deepEqual(rows[35], ['2026-03-01T12:55:00.000Z', 1]);
    assert.equal(rows.reduce((s, r) => s + (r[1] as number), 0), 6);
  });

  it('timechart by keeps the 10 most frequent values and counts the rest as other', () => {
    const many = Array.from({ length: 12 }, (_v, i) => Array.from({ length: 12 - i }, () => ev('u', `h${String(i).padStart(2, '0')}`, '10:30:00'))).flat();
    const rows = run('| timechart span=1d count() by actor.host', many).rows;
    assert.deepEqual(rows.map((r) => r[1]), ['h00', 'h01', 'h02', 'h03', 'h04', 'h05', 'h06', 'h07', 'h08', 'h09', 'other']);
    assert.deepEqual(rows.map((r) => r[2]), [12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2 + 1]);
    assert.equal(rows[0]![0], '2026-03-01T00:00:00.000Z');
  });

  it('two aggregators over a split of the events merge into what one over all of them answers', () => {
    for (const text of [
      '| stats count(), dc(actor.host) by actor.user, attributes.tags | sort -actor.user',
      '| top 3 actor.host',
      '| timechart span=30m count() by actor.user',
      '| timechart span=1h count()',
    ]) {
      for (let cut = 0; cut <= EVENTS.length; cut++) {
        const hunt = compiled(text);
        const a = hunt.aggregator(RANGE);
        const b = hunt.aggregator(RANGE);
        EVENTS.slice(0, cut).forEach((e) => a.add(e));
        EVENTS.slice(cut).forEach((e) => b.add(e));
        a.merge(b);
        assert.deepEqual(a.finish(), run(text), `${text} cut at ${cut}`);
      }
    }
  });

  it('refuses to merge aggregators of different pipes', () => {
    const stats = compiled('| stats count()').aggregator(RANGE);
    assert.throws(() => stats.merge(compiled('| top x').aggregator(RANGE)), /different pipes/);
  });

  it('stops adding new groups past 100,000 and says so', () => {
    const agg = compiled('| stats count() by id').aggregator(RANGE);
    const base = EVENTS[0]!;
    for (let i = 0; i <= HUNT_LIMITS.groups; i++) agg.add({ ...base, id: `e${i}` });
    assert.equal(agg.truncated, true);
    assert.equal(agg.finish().rows.length, HUNT_LIMITS.groups);
    const small = compiled('| stats count() by id').aggregator(RANGE);
    small.add(base);
    assert.equal(small.truncated, false);
  });
});

describe('hunt event output', () => {
  it('answers events newest first by default, with the head limit', () => {
    const h = compiled('actor.user:alice | head 2');
    assert.equal(h.output, 'events');
    assert.deepEqual(h.order, { field: 'time', descending: true });
    assert.equal(h.head, 2);
    assert.throws(() => h.aggregator(RANGE), /answers events/);
  });

  it('a sort on another field needs every match', () => {
    assert.deepEqual(compiled('| sort time').order, { field: 'time', descending: false });
    const { key, ...order } = compiled('| sort -actor.user').order as { key: (e: unknown) => unknown };
    assert.deepEqual(order, { field: 'actor.user', descending: true, needsAll: true });
    assert.equal(key(EVENTS[0]!), 'alice', 'its key is the event\'s value there');
  });

  it('fields projects to id, time and the named paths', () => {
    const h = compiled('| fields actor.user, attributes.tags, attributes.nope');
    assert.deepEqual(h.project(EVENTS[0]!), { id: EVENTS[0]!.id, time: EVENTS[0]!.time, 'actor.user': 'alice', 'attributes.tags': ['a', 'b'] });
    assert.equal(compiled('x').project(EVENTS[1]!), EVENTS[1]);
  });

  it('an aggregation answers rows', () => {
    assert.equal(compiled('| top x').output, 'rows');
    assert.equal(compiled('| top x').head, undefined);
  });
});
