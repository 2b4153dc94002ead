import { isObject } from '../opentelemetry-log/decoded.js';
import { type AddrPort, DERP_MAGIC_IP } from './addr-port.js';

/** A node described by a flow record's `srcNode` / `dstNodes` (netlogtype.Node). */
export interface FlowNode {
  readonly nodeId: string;
  readonly name?: string;
  readonly addresses: readonly string[];
  readonly user?: string;
  readonly tags?: readonly string[];
}

/**
 * The nodes a record describes: `srcNode` (the reporting node) then `dstNodes` (peers it saw). These
 * are enrichment added by recent clients, so a malformed entry is skipped rather than refusing the flow.
 */
export function flowNodes(record: Record<string, unknown>): FlowNode[] {
  const raw = [record.srcNode, ...(Array.isArray(record.dstNodes) ? record.dstNodes : [])];
  return raw.map(flowNode).filter((node) => node !== undefined);
}

function flowNode(value: unknown): FlowNode | undefined {
  if (!isObject(value) || typeof value.nodeId !== 'string' || value.nodeId === '') return undefined;
  const strings = (list: unknown) =>
    Array.isArray(list) ? list.filter((s): s is string => typeof s === 'string') : [];
  const tags = strings(value.tags);
  return {
    nodeId: value.nodeId,
    ...(typeof value.name === 'string' && value.name !== '' ? { name: value.name } : {}),
    addresses: strings(value.addresses),
    ...(typeof value.user === 'string' && value.user !== '' ? { user: value.user } : {}),
    ...(tags.length > 0 ? { tags } : {}),
  };
}

/** The described node that owns an IP address, if any. */
export function nodeWithAddress(nodes: readonly FlowNode[], ip: string | undefined): FlowNode | undefined {
  return ip === undefined ? undefined : nodes.find((node) => node.addresses.includes(ip));
}

/**
 * An endpoint object `{ip, port, node, name, user, tags}`. Port 0 means "none or scrubbed" (ICMP,
 * anonymised exit traffic, the underlay side of physical traffic) and is left out; a DERP relay
 * (`127.3.3.40:<region>`) becomes `{derpRegion}`.
 */
export function flowEndpoint(
  addr: AddrPort | undefined,
  node: FlowNode | undefined,
): Record<string, unknown> | undefined {
  if (addr === undefined && node === undefined) return undefined;
  const out: Record<string, unknown> = {};
  // A DERP relay is a region, not a host: no `ip`, so the graph draws no edge to a fake hub address.
  if (addr?.ip === DERP_MAGIC_IP) out.derpRegion = addr.port;
  else if (addr) {
    out.ip = addr.ip;
    if (addr.port > 0) out.port = addr.port;
  }
  if (node) {
    out.node = node.nodeId;
    if (node.name) out.name = node.name;
    if (node.user) out.user = node.user;
    if (node.tags) out.tags = node.tags;
  }
  return out;
}
