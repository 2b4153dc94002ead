import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { NormalizedEvent } from '../../src/events/normalized-event.js';
import { NORMALIZERS } from '../../src/normalizers/registry.js';
import { fixturePath } from '../helpers/paths.js';

const CTX = { ingestedAt: '2025-01-01T00:00:00Z' } as const;

/** The events the real normalizer makes of a fixture's lines that `pick` selects. */
export function fixtureEvents(
  adapter: string,
  file: string[],
  pick: (record: Record<string, unknown>) => boolean,
  extra: Record<string, string> = {},
): NormalizedEvent[] {
  const lines = readFileSync(fixturePath(...file), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '');
  const out: NormalizedEvent[] = [];
  for (const line of lines) {
    const record = (file[0] === 'syslog-rfc5424' ? { message: line } : JSON.parse(line)) as Record<string, unknown>;
    if (!pick(record)) continue;
    const r = NORMALIZERS.get(adapter)!.normalize(record, { ...CTX, ...extra });
    assert.ok(r.ok, `${file.join('/')}: ${r.ok ? '' : r.error}`);
    out.push(...r.events);
  }
  assert.ok(out.length > 0, `no event picked from ${file.join('/')}`);
  return out;
}

/** A Zeek log's events (zeek-docs fixtures). */
export const zeek = (log: string, pick: (r: Record<string, unknown>) => boolean = () => true): NormalizedEvent[] =>
  fixtureEvents('network-monitor', ['network-monitor', 'zeek-docs', `${log}.jsonl`], pick, { logType: log });
