import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Packr } from 'msgpackr';
import { decideIngestEvents } from '../../src/commands/ingest-events.js';
import { accessRecords } from '../../src/http/access-records.js';
import type { NormalizedEvent } from '../../src/events/normalized-event.js';
import { DEFAULT_DETECTION, openInstanceStore, type InstanceStore } from '../../src/cli/instance/open.js';

import { HEAP_PROJECTIONS, INDEX_PROJECTIONS, readProjections } from '../../src/projections/all.js';
import { tempDir } from '../helpers/temp.js';
import { installBuiltinRules } from '../../src/cli/instance/builtin-rules.js';
import { decidePromoteIncident, decideReviewAlert } from '../../src/commands/review-alert.js';
import type { AlertsState } from '../../src/projections/alerts.js';
import { detectionPlan } from '../../src/projections/plan.js';
import type { DetectionState } from '../../src/projections/detection.js';
import type { SourcesState } from '../../src/projections/sources.js';
import { decideAssignAlert } from '../../src/commands/assign-alert.js';
import { decideAddAlertNote } from '../../src/commands/add-alert-note.js';
import { decideBulkReview } from '../../src/commands/bulk-review-alerts.js';
import { decideIncidentStatus } from '../../src/commands/change-incident-status.js';
import { decideAssignIncident } from '../../src/commands/assign-incident.js';
import { decideMergeIncident } from '../../src/commands/merge-incidents.js';
import { decideAddIncidentAlerts } from '../../src/commands/add-incident-alerts.js';
import { decideSilenceCheck } from '../../src/commands/check-silence.js';
import { decideCreateException, decideExceptionCheck, decideRevokeException } from '../../src/commands/exceptions.js';
import { decideFeedUpdate } from '../../src/commands/intel-feeds.js';
import { DEFAULT_MONITORING } from '../../src/projections/monitoring-settings.js';
import type { LmdbStore } from '../../src/log/lmdb-store.js';
import { connectJetStream, ensureStream } from '../../src/log/jetstream-connect.js';
import { openJetStreamLog } from '../../src/log/jetstream-log.js';
import type { JetStreamConfig } from '../../src/log/jetstream-config.js';
import { startNats, type NatsCluster } from '../helpers/nats.js';

const packr = new Packr({ useRecords: false, mapsAsObjects: true });

/** Every read model, of the write side and (once caught up) of the read side, as comparable plain data. */
async function dump(inst: InstanceStore): Promise<unknown> {
  await inst.readYourWrites();
  const heap = HEAP_PROJECTIONS.map((p) => [p.name, packr.unpack(packr.pack(p.snapshot ? p.snapshot(inst.runtime.state(p.name)) : inst.runtime.state(p.name)))]);
  const plan = detectionPlan(inst.writer.models.detection, inst.writer.models.sources, new Date('2026-11-22T12:00:00Z'), 24);
  const read = readProjections();
  const indexes = [...INDEX_PROJECTIONS, ...read.indexes].flatMap((ix) => ix.dbs.map((db) => [db, [...inst.reads.db(db).getRange({})].map(({ key, value }) => [key, value])]));
  const readHeap = await Promise.all(read.heap.map(async (p) => [p.name, packr.unpack(packr.pack(await inst.readSide.snapshot(p.name)))]));
  // Not in the snapshot, but decides which alert a match joins: live, rebuilt and restored must agree.
  const openByKey = [...inst.writer.models.alerts.openByKey].sort();
  return { heap, indexes, plan, readHeap, openByKey };
}

/** sshd-like journal events: enough of them from one address trip the built-in brute-force rules. */
const sshArb = fc.record({
  n: fc.integer({ min: 0, max: 40 }),
  ip: fc.constantFrom('203.0.113.1', '203.0.113.2'),
  ok: fc.boolean(),
  second: fc.integer({ min: 0, max: 59 }),
}).map((r): NormalizedEvent => ({
  schemaVersion: 1, id: `ssh-${r.n}-${r.ip}-${r.ok}`, category: 'identity', class: 'authentication', activity: 'logon', outcome: r.ok ? 'success' : 'failure',
  time: `2026-11-22T10:00:${String(r.second).padStart(2, '0')}Z`, ingestedAt: '2026-11-22T11:00:00Z', severity: 5,
  source: { adapter: 'linux-journal', instance: 'bastion', recordId: String(r.n) }, entityKeys: [`ip:${r.ip}`, 'host:bastion', 'user:root'],
  actor: { user: 'root' }, sourceEndpoint: { ip: r.ip }, destinationEndpoint: { host: 'bastion' },
  attributes: { SYSLOG_IDENTIFIER: 'sshd', MESSAGE: r.ok ? 'Accepted password' : 'Failed password', src_ip: r.ip, user: 'root' },
}));

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
  fc.record({ kind: fc.constant('ingest' as const), events: fc.array(sshArb, { minLength: 1, maxLength: 8 }) }),
  fc.record({ kind: fc.constant('review' as const), pick: fc.nat(), status: fc.constantFrom('open', 'in_review', 'dismissed') as fc.Arbitrary<'open' | 'in_review' | 'dismissed'> }),
  fc.record({ kind: fc.constant('promote' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('assign' as const), pick: fc.nat(), to: fc.constantFrom('bob', 'eve', null) }),
  fc.record({ kind: fc.constant('note' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('incident_status' as const), pick: fc.nat(), status: fc.constantFrom('open', 'investigating', 'contained', 'closed') as fc.Arbitrary<'open' | 'investigating' | 'contained' | 'closed'> }),
  fc.record({ kind: fc.constant('incident_assign' as const), pick: fc.nat(), to: fc.constantFrom('bob', null) }),
  fc.record({ kind: fc.constant('merge' as const), pick: fc.nat(), into: fc.nat() }),
  fc.record({ kind: fc.constant('add_alerts' as const), pick: fc.nat(), alert: fc.nat() }),
  fc.record({ kind: fc.constant('bulk' as const), minSeverity: fc.integer({ min: 0, max: 10 }), status: fc.constantFrom('open', 'in_review', 'dismissed') as fc.Arbitrary<'open' | 'in_review' | 'dismissed'>, disposition: fc.constantFrom('benign', 'true_positive', undefined) }),
  fc.record({ kind: fc.constant('access' as const), status: fc.constantFrom(200, 401, 403), n: fc.nat(1000) }),
  fc.record({ kind: fc.constant('silence' as const), hours: fc.integer({ min: 0, max: 30 }) }),
  // Exceptions (issue 59): made, revoked, expired and reminded of, with what they keep from alerting in the log.
  fc.record({ kind: fc.constant('except' as const), ip: fc.constantFrom('203.0.113.1', '203.0.113.2', '10.0.0.1'), all: fc.boolean(), hours: fc.integer({ min: 1, max: 72 }) }),
  fc.record({ kind: fc.constant('revoke' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('exception_check' as const), hours: fc.integer({ min: 0, max: 96 }) }),
  // Threat intelligence (issue 60): indicators the generated events' addresses and domains hold, some expiring.
  fc.record({ kind: fc.constant('intel' as const), value: fc.constantFrom('x.org', '10.0.0.2', '203.0.113.1'), minute: fc.option(fc.integer({ min: 0, max: 59 }), { nil: undefined }) }),
);

/** How a run opens its store: LMDB, or a copy of a fresh JetStream stream (each run its own). */
interface Backend {
  readonly name: string;
  readonly runs: number;
  /** A new log for one run; `open(path)` opens (or reopens) a store on it. */
  fresh(): Promise<{ open(path: string): Promise<InstanceStore>; done(): Promise<void> }>;
}

const lmdbBackend: Backend = {
  name: 'LMDB', runs: 40,
  fresh: async () => ({ open: (path) => openInstanceStore(path, { checkpointEvery: 7 }), done: async () => {} }),
};

let nats: Promise<NatsCluster> | undefined;
after(async () => { if (nats) await (await nats).stop(); });
let streams = 0;
const jetStreamBackend: Backend = {
  name: 'JetStream', runs: 12,
  async fresh() {
    const { urls } = await (nats ??= startNats(1));
    const config: JetStreamConfig = { servers: [...urls], stream: `R${process.pid}_${++streams}`, replicas: 1, leaseSeconds: 10, publishTimeoutSeconds: 30 };
    const conn = await connectJetStream(config, 'replay');
    await ensureStream(conn, config, 8 * 1024 * 1024);
    const openLog = async (store: LmdbStore, onFatal?: (err: Error) => void) => {
      const log = await openJetStreamLog(store, conn, onFatal);
      await log.lead();
      return log;
    };
    return { open: (path) => openInstanceStore(path, { checkpointEvery: 7, openLog }), done: () => conn.close() };
  },
};

for (const backend of [lmdbBackend, jetStreamBackend]) describe(`read models (${backend.name})`, () => {
  it('equal the ones rebuilt from record 1, and the ones restored after a restart, for any command sequence', async () => {
    await fc.assert(fc.asyncProperty(fc.array(commandArb, { minLength: 1, maxLength: 25 }), async (commands) => {
      const dir = tempDir();
      const log = await backend.fresh();
      let inst = await log.open(`${dir.path}/store`);
      try {
        await installBuiltinRules(inst.pipeline, '2026-11-22T09:00:00Z');
        let i = 0;
        await Promise.all(commands.map(async (c) => {
          const ctx = { now: `2026-11-22T11:00:${String(i++ % 60).padStart(2, '0')}Z` };
          const actor = { id: 'prop-analyst', authentication: 'bearer' };
          const alertIds = () => [...inst.writer.models.alerts.alerts.keys()];
          if (c.kind === 'ingest') await inst.pipeline.dispatch({ decide: (m) => decideIngestEvents(m, c.events), ctx: ctx });
          else if (c.kind === 'review') {
            const ids = alertIds();
            if (ids.length > 0) await inst.writer.execute((m) => decideReviewAlert(m.alerts, ids[c.pick % ids.length]!, { status: c.status, reason: 'prop' }, { ...ctx, actor }), { ...ctx, actor });
          } else if (c.kind === 'assign' || c.kind === 'note') {
            const ids = alertIds();
            const id = ids[c.pick % Math.max(1, ids.length)];
            if (id !== undefined) {
              if (c.kind === 'assign') await inst.writer.execute((m) => decideAssignAlert(m.alerts, id, { assignee: c.to }, { ...ctx, actor }), { ...ctx, actor });
              else await inst.writer.execute((m) => decideAddAlertNote(m.alerts, id, { text: 'prop note' }, { ...ctx, actor }), { ...ctx, actor });
            }
          } else if (c.kind === 'incident_status' || c.kind === 'incident_assign' || c.kind === 'merge' || c.kind === 'add_alerts') {
            const incs = [...inst.writer.models.alerts.incidents.keys()];
            const id = incs[c.pick % Math.max(1, incs.length)];
            const by = { ...ctx, actor };
            // Refusals (a merged or closed incident) are part of the property: they must change nothing.
            if (id === undefined) { /* no incident yet */ }
            else if (c.kind === 'incident_status') await inst.writer.execute((m) => decideIncidentStatus(m.alerts, id, { status: c.status, reason: 'prop' }, by), by);
            else if (c.kind === 'incident_assign') await inst.writer.execute((m) => decideAssignIncident(m.alerts, id, { assignee: c.to }, by), by);
            else if (c.kind === 'merge') await inst.writer.execute((m) => decideMergeIncident(m.alerts, id, { into: incs[c.into % incs.length]!, reason: 'prop' }, by), by);
            else {
              const ids = alertIds();
              if (ids.length > 0) await inst.writer.execute((m) => decideAddIncidentAlerts(m.alerts, id, { alertIds: [ids[c.alert % ids.length]!], reason: 'prop' }, by), by);
            }
          } else if (c.kind === 'bulk') {
            await inst.writer.execute((m) => decideBulkReview(m.alerts, { filter: { minSeverity: c.minSeverity }, status: c.status, ...(c.disposition ? { disposition: c.disposition } : {}), reason: 'prop bulk' }, { ...ctx, actor }), { ...ctx, actor });
          } else if (c.kind === 'promote') {
            const ids = alertIds();
            if (ids.length > 0) await inst.writer.execute((m) => decidePromoteIncident(m.alerts, { alertIds: [ids[c.pick % ids.length]!], title: 't', reason: 'r' }, { ...ctx, actor }), { ...ctx, actor });
          }
          else if (c.kind === 'except') {
            const terms = {
              scope: c.all ? { kind: 'all' as const } : { kind: 'tag' as const, tag: 'attack.t1110' },
              detection: { sel: { 'sourceEndpoint.ip': c.ip }, condition: 'sel' },
              reason: 'prop', owner: 'prop-analyst',
              expiresAt: new Date(Date.parse('2026-11-22T11:00:00Z') + c.hours * 3_600_000).toISOString(),
            };
            await inst.writer.execute((m) => decideCreateException(m, terms, { ...ctx, actor, requestId: `x${i}` }, { mayBePermanent: false }), { ...ctx, actor });
          } else if (c.kind === 'revoke') {
            const ids = [...inst.writer.models.exceptions.exceptions.keys()];
            const id = ids[c.pick % Math.max(1, ids.length)];
            if (id !== undefined) await inst.writer.execute((m) => decideRevokeException(m, id, { comment: 'prop' }, { ...ctx, actor }), { ...ctx, actor });
          } else if (c.kind === 'exception_check') {
            const at = { now: new Date(Date.parse('2026-11-22T11:01:00Z') + c.hours * 3_600_000).toISOString() };
            await inst.writer.execute((m) => decideExceptionCheck(m, 72 * 3_600_000, at), at);
          }
          else if (c.kind === 'intel') {
            const type = c.value === 'x.org' ? 'domain' as const : 'ipv4' as const;
            const indicator = {
              id: `indicator--${c.value}`, anyOf: [[{ type, value: c.value }]], source: `[${type}:value = '${c.value}']`,
              ...(c.minute !== undefined ? { validUntil: `2026-11-22T10:${String(c.minute).padStart(2, '0')}:00Z` } : {}),
            };
            const update = { feed: 'prop', kind: 'posted' as const, version: `v${i}`, set: { indicators: [indicator], unsupported: [] }, mode: 'merge' as const };
            await inst.writer.execute((m) => decideFeedUpdate(m.intel, update, ctx.now), ctx);
          }
          else if (c.kind === 'silence') {
            const at = { now: new Date(Date.parse('2026-11-22T11:01:00Z') + c.hours * 3_600_000).toISOString() };
            await inst.writer.execute((m) => decideSilenceCheck({ monitoring: m.monitoring, alerts: m.alerts }, DEFAULT_MONITORING.silence, at), at);
          }
          else await inst.pipeline.record(accessRecords({ requestId: `r${c.n}-${i}`, operation: 'op', method: 'GET', route: '/api/v1/me', status: c.status, durationMs: 1, sourceAddress: '10.0.0.9', approved: false, at: ctx.now }), ctx);
        }));
        const live = await dump(inst);
        await inst.close();
        inst = await log.open(`${dir.path}/store`);
        assert.deepEqual(await dump(inst), live, 'restored from checkpoint + tail');
        await Promise.all([inst.runtime.rebuild(), inst.readSide.rebuild(inst.log.head().seq)]);
        assert.deepEqual(await dump(inst), live, 'rebuilt from record 1');
        if (backend === jetStreamBackend) {
          // Another node: a fresh store that copies the stream folds the same read models.
          await inst.close();
          inst = await log.open(`${dir.path}/copy`);
          assert.deepEqual(await dump(inst), live, 'copied from the stream into a fresh store');
        }
      } finally {
        await inst.close();
        await log.done();
        dir.cleanup();
      }
    }), { numRuns: backend.runs });
  });
});
