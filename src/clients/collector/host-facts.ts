import { readFileSync } from 'node:fs';
import { hostname, networkInterfaces, release } from 'node:os';
import type { Fact } from '../../events/collector-protocol/envelope.js';

function osRelease(): Record<string, string> {
  try {
    const out: Record<string, string> = {};
    for (const line of readFileSync('/etc/os-release', 'utf8').split('\n')) {
      const m = /^([A-Z_]+)=(?:"(.*)"|(.*))$/.exec(line.trim());
      if (m) out[m[1]!] = m[2] ?? m[3] ?? '';
    }
    return out;
  } catch {
    return {};
  }
}

/** TCP ports in LISTEN state (state 0A) from /proc/net/tcp and tcp6. */
export function listeningPorts(files = ['/proc/net/tcp', '/proc/net/tcp6']): number[] {
  const ports = new Set<number>();
  for (const f of files) {
    let text: string;
    try {
      text = readFileSync(f, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols[3] === '0A' && cols[1]) ports.add(Number.parseInt(cols[1].split(':').at(-1)!, 16));
    }
  }
  return [...ports].filter((p) => Number.isInteger(p) && p > 0).sort((a, b) => a - b);
}

/**
 * Host facts for the graph: the host (hostname, OS release, kernel), its addresses (`has_address`)
 * and its listening TCP ports (`listens_on`).
 */
export function hostFacts(collectorId: string): Fact[] {
  const host = hostname().toLowerCase().slice(0, 200) || collectorId;
  const os = osRelease();
  const hostKey = `host:${host}`;
  const facts: Fact[] = [
    {
      fact: 'entity',
      key: hostKey,
      kind: 'host',
      attributes: {
        hostname: host,
        os: os.PRETTY_NAME ?? null,
        osId: os.ID ?? null,
        osVersion: os.VERSION_ID ?? null,
        kernel: release(),
        collectorId,
      },
    },
  ];
  const addresses = new Set<string>();
  for (const list of Object.values(networkInterfaces()))
    for (const a of list ?? []) if (!a.internal) addresses.add(a.address);
  for (const ip of [...addresses].slice(0, 64)) {
    facts.push(
      { fact: 'entity', key: `ip:${ip}`, kind: 'ip' },
      { fact: 'relationship', from: hostKey, to: `ip:${ip}`, type: 'has_address' },
    );
  }
  for (const port of listeningPorts().slice(0, 512)) {
    const key = `port:${host}/tcp/${port}`;
    facts.push(
      { fact: 'entity', key, kind: 'port', attributes: { protocol: 'tcp', port } },
      { fact: 'relationship', from: hostKey, to: key, type: 'listens_on' },
    );
  }
  return facts;
}
