import { Packr } from 'msgpackr';
import { decideIngestEvents } from '../../src/commands/ingest-events.js';
import { DEFAULT_DETECTION, type InstanceStore } from '../../src/cli/instance/open.js';
import type { NormalizedEvent } from '../../src/events/normalized-event.js';
import { HEAP_PROJECTIONS, INDEX_PROJECTIONS, readProjections } from '../../src/projections/all.js';

/** Shared by the retention tests: a clock in days, the evidence they ingest, and every read model as data. */

const packr = new Packr({ useRecords: false, mapsAsObjects: true });
const DAY = 86_400_000;
const T0 = Date.parse('2026-10-01T10:00:00Z');

/** Day `n` of the tests' history, as ISO 8601. */
export const day = (n: number) => new Date(T0 + n * DAY).toISOString();

/** sshd failures from one address: enough of them trip the built-in brute-force rules. */
export function sshFailure(n: number, at: string): NormalizedEvent {
  return {
    schemaVersion: 1, id: `ssh-${at}-${n}`, category: 'identity', class: 'authentication', activity: 'logon', outcome: 'failure',
    time: at, ingestedAt: at, severity: 5, source: { adapter: 'linux-journal', instance: 'bastion', recordId: String(n) },
    entityKeys: ['ip:203.0.113.9', 'host:bastion', 'user:root'], actor: { user: 'root' }, sourceEndpoint: { ip: '203.0.113.9' }, destinationEndpoint: { host: 'bastion' },
    attributes: { SYSLOG_IDENTIFIER: 'sshd', MESSAGE: 'Failed password', src_ip: '203.0.113.9', user: 'root' },
  };
}

/** A DNS query from `host`. */
export function dnsEvent(n: number, at: string, host: string): NormalizedEvent {
  return {
    schemaVersion: 1, id: `dns-${at}-${n}`, category: 'network', class: 'dns_query', activity: 'query', outcome: 'success',
    time: at, ingestedAt: at, severity: 1, source: { adapter: 'prop', instance: 'x', recordId: String(n) },
    entityKeys: [`host:${host}`, `domain:d${n % 7}.example`], sourceEndpoint: { ip: '10.0.0.1' }, destinationEndpoint: { ip: '10.0.0.2', port: 53 }, attributes: {},
  };
}

/** Ingests one-event records at `at`, in one group commit. */
export async function ingest(inst: InstanceStore, events: NormalizedEvent[], at: string): Promise<void> {
  const ctx = { now: at };
  await Promise.all(events.map((e) => inst.pipeline.dispatch({ decide: (m) => decideIngestEvents(m, [e]), ctx: ctx })));
}

/** Every read model, of both sides, as plain data (as the replay property test compares them). */
export async function dump(inst: InstanceStore): Promise<unknown> {
  await inst.readYourWrites();
  // The read side forgets what a cut removed a slice per turn: the models are compared once it has.
  await inst.readSide.settle();
  const heap = HEAP_PROJECTIONS.map((p) => [p.name, packr.unpack(packr.pack(p.snapshot ? p.snapshot(inst.runtime.state(p.name)) : inst.runtime.state(p.name)))]);
  const read = readProjections();
  const indexes = [...INDEX_PROJECTIONS, ...read.indexes].flatMap((ix) => ix.dbs.map((db) => [db, [...inst.reads.db(db).getRange({})].map(({ key, value }) => [key, value])]));
  const readHeap = await Promise.all(read.heap.map(async (p) => [p.name, packr.unpack(packr.pack(await inst.readSide.snapshot(p.name)))]));
  return { heap, indexes, readHeap };
}
