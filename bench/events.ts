/** A realistic NormalizedEvent (a Zeek-like connection) with a unique id. */
export function benchEvent(id: string, i: number): Record<string, unknown> {
  const a = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
  return {
    schemaVersion: 1,
    id,
    category: 'network',
    class: 'network_connection',
    activity: 'traffic',
    outcome: 'success',
    time: new Date(Date.UTC(2026, 10, 22, 0, 0, 0) + i * 7).toISOString(),
    ingestedAt: '2026-11-22T12:00:00.000Z',
    severity: 1,
    source: { adapter: 'bench', instance: 'conn', recordId: id },
    entityKeys: [`ip:${a}`, 'ip:192.0.2.10', 'service:https'],
    sourceEndpoint: { ip: a, port: 40000 + (i % 20000) },
    destinationEndpoint: { ip: '192.0.2.10', port: 443 },
    service: { name: 'https', protocol: 'tcp', port: 443 },
    attributes: {
      uid: `C${id}`,
      proto: 'tcp',
      duration: 0.25,
      orig_bytes: 512,
      resp_bytes: 4096,
      conn_state: 'SF',
      history: 'ShADadfF',
    },
  };
}

/** `n` JSON bodies of `size` events each, with ids unique across bodies. */
export function eventBodies(prefix: string, n: number, size: number): string[] {
  return Array.from({ length: n }, (_, b) =>
    JSON.stringify(Array.from({ length: size }, (_, i) => benchEvent(`${prefix}-${b}-${i}`, b * size + i))),
  );
}
