import type { NormalizedEvent } from '../../events/normalized-event.js';
import { isoFromNanos } from '../../kernel/time.js';
import { type Decoded, all, at, fail, isAbsent, isObject, ok } from '../opentelemetry-log/decoded.js';
import { entityKey, entityKeyList } from '../opentelemetry-log/entity-keys.js';
import type { EventPlace } from '../record-id.js';
import { type AddrPort, DERP_MAGIC_IP, parseAddrPort } from './addr-port.js';
import { firstTime, rfc3339Nanos } from './event-time.js';
import { type FlowNode, flowEndpoint, flowNodes, nodeWithAddress } from './flow-nodes.js';
import { MESH_ADAPTER, type MeshBatch } from './mesh-batch.js';

/** The traffic arrays of a flow log record (netlogtype.Message) and the activity each gives. */
const TRAFFIC = [
  ['virtualTraffic', 'virtual'],
  ['subnetTraffic', 'subnet'],
  ['exitTraffic', 'exit'],
  ['physicalTraffic', 'physical'],
] as const;
const WINDOW_FIELDS = ['start', 'end', 'logged'] as const;
/** RFC 3339 with nanoseconds and an offset is 35 characters; anything longer is not a time. */
const MAX_TIME_TEXT = 64;

type Activity = (typeof TRAFFIC)[number][1];

interface FlowHeader {
  readonly nodeId: string;
  readonly time: string;
  readonly window: Readonly<Record<string, unknown>>;
  readonly nodes: readonly FlowNode[];
}

/** Adds one `network_flow` event per connection-counts entry of a Tailscale network flow log record. */
export function addFlowEvents(
  record: unknown,
  where: string,
  batch: MeshBatch,
  events: NormalizedEvent[],
): Decoded<true> {
  if (!isObject(record)) return fail(where, 'expected a network flow log record object');
  const header = flowHeader(record, where);
  if (!header.ok) return header;
  for (const [field, activity] of TRAFFIC) {
    const list = record[field];
    if (isAbsent(list)) continue;
    if (!Array.isArray(list)) return fail(at(where, field), 'expected an array of connection counts');
    for (const [j, entry] of list.entries()) {
      const path = `${at(where, field)}[${j}]`;
      const event = flowEvent(entry, path, activity, header.value, batch.placeOf(events.length, path), batch);
      if (!event.ok) return event;
      events.push(event.value);
    }
  }
  return ok(true);
}

/** The reporting node, the event time (`start`, else `end`, else `logged`) and the described nodes. */
function flowHeader(record: Record<string, unknown>, where: string): Decoded<FlowHeader> {
  const nodeId = record.nodeId;
  if (typeof nodeId !== 'string' || nodeId === '')
    return fail(at(where, 'nodeId'), 'expected the stable id of the reporting node');
  const time = firstTime(
    WINDOW_FIELDS.map((field) => ({
      path: at(where, field),
      value: record[field],
      parse: rfc3339Nanos,
      expected: 'an RFC 3339 date-time',
    })),
  );
  if (!time.ok) return time;
  // Copied into every event of the record, so only time-sized strings are kept; the chosen one parsed above.
  const window: Record<string, unknown> = {};
  for (const field of WINDOW_FIELDS) {
    const value = record[field];
    if (typeof value === 'string' && value.length <= MAX_TIME_TEXT) window[field] = value;
  }
  return ok({ nodeId, time: isoFromNanos(time.value), window, nodes: flowNodes(record) });
}

function flowEvent(
  entry: unknown,
  path: string,
  activity: Activity,
  header: FlowHeader,
  place: EventPlace,
  batch: MeshBatch,
): Decoded<NormalizedEvent> {
  if (!isObject(entry)) return fail(path, 'expected a connection counts object');
  const read = readConnection(entry, path);
  if (!read.ok) return read;
  const { proto, src, dst, ...counts } = read.value;
  // The tun device counts from the reporting node's side, so virtual traffic's source is that node (netlog.go).
  const srcNode =
    nodeWithAddress(header.nodes, src?.ip) ??
    (activity === 'virtual' ? { nodeId: header.nodeId, addresses: [] } : undefined);
  const dstNode = nodeWithAddress(header.nodes, dst?.ip);
  const sourceEndpoint = flowEndpoint(src, srcNode);
  const destinationEndpoint = flowEndpoint(dst, dstNode);
  return ok({
    schemaVersion: 1,
    id: place.id,
    category: 'network',
    class: 'network_flow',
    activity,
    outcome: 'unknown',
    time: header.time,
    ingestedAt: batch.ingestedAt,
    source: { adapter: MESH_ADAPTER, instance: 'network', recordId: place.recordId },
    entityKeys: entityKeyList([
      batch.meshnetKey,
      entityKey('node', header.nodeId),
      ...endKeys(src, srcNode),
      ...endKeys(dst, dstNode),
    ]),
    ...(sourceEndpoint ? { sourceEndpoint } : {}),
    ...(destinationEndpoint ? { destinationEndpoint } : {}),
    attributes: {
      nodeId: header.nodeId,
      ...header.window,
      ...(proto === undefined ? {} : { proto }),
      ...(src ? { src: entry.src } : {}),
      ...(dst ? { dst: entry.dst } : {}),
      ...counts,
    },
    rawReference: place.rawReference,
  });
}

/** `node:`, `user:` and `ip:` keys of one end; the DERP magic address names a relay region, not a host. */
function endKeys(addr: AddrPort | undefined, node: FlowNode | undefined): (string | undefined)[] {
  const ip = addr && addr.ip !== DERP_MAGIC_IP ? entityKey('ip', addr.ip) : undefined;
  return [entityKey('node', node?.nodeId), entityKey('user', node?.user), ip];
}

/** proto, src, dst and the four counters; Tailscale omits zero values, so an absent counter is 0. */
function readConnection(entry: Record<string, unknown>, path: string) {
  return all({
    proto: readProto(entry.proto, at(path, 'proto')),
    src: readAddrPort(entry.src, at(path, 'src')),
    dst: readAddrPort(entry.dst, at(path, 'dst')),
    txPkts: readCount(entry.txPkts, at(path, 'txPkts')),
    txBytes: readCount(entry.txBytes, at(path, 'txBytes')),
    rxPkts: readCount(entry.rxPkts, at(path, 'rxPkts')),
    rxBytes: readCount(entry.rxBytes, at(path, 'rxBytes')),
  });
}

function readProto(value: unknown, path: string): Decoded<number | undefined> {
  if (isAbsent(value)) return ok(undefined);
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 255) return ok(value);
  return fail(path, 'expected an IANA protocol number 0..255');
}

function readAddrPort(value: unknown, path: string): Decoded<AddrPort | undefined> {
  if (isAbsent(value)) return ok(undefined);
  const parsed = typeof value === 'string' ? parseAddrPort(value) : undefined;
  return parsed ? ok(parsed) : fail(path, 'expected "ip:port" or "[ipv6]:port"');
}

function readCount(value: unknown, path: string): Decoded<number> {
  if (isAbsent(value)) return ok(0);
  // uint64 counters above 2^53 arrive already rounded by the JSON parser; the rounded value is kept.
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return ok(value);
  return fail(path, 'expected a non-negative integer');
}
