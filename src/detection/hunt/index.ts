// TEMPORARY STUB (replaced by the hunt-language branch): field:value terms joined by `and`, `| stats count() by f`.
import type { NormalizedEvent } from '../../events/normalized-event.js';

export interface HuntSyntaxError {
  readonly position: number;
  readonly expected: readonly string[];
  readonly message: string;
}
export interface HuntQuery {
  readonly filter: { terms: [string, string][] };
  readonly pipes: readonly { by: string[] }[];
}
export type HuntParse = { ok: true; query: HuntQuery } | { ok: false; error: HuntSyntaxError };
export interface HuntIndexTerms {
  category?: string[];
  class?: string[];
  adapter?: string[];
  entityKey?: string[];
}
export interface HuntAggregator {
  add(e: NormalizedEvent): void;
  merge(other: HuntAggregator): void;
  finish(): { columns: string[]; rows: (string | number | null)[][] };
  readonly truncated: boolean;
}
export interface CompiledHunt {
  readonly query: HuntQuery;
  matches(e: NormalizedEvent): boolean;
  readonly indexTerms: HuntIndexTerms;
  readonly output: 'events' | 'rows';
  readonly order:
    | { readonly field: 'time'; readonly descending: boolean }
    | { readonly field: string; readonly descending: boolean; readonly needsAll: true };
  readonly head: number | undefined;
  project(e: NormalizedEvent): Record<string, unknown>;
  aggregator(range: { sinceMs: number; untilMs: number }): HuntAggregator;
}
export const HUNT_FIELDS: readonly string[] = ['category', 'class', 'source.adapter', 'entityKeys'];

export function parseHunt(text: string): HuntParse {
  const [filter = '', ...pipes] = text.split('|');
  const terms: [string, string][] = [];
  for (const t of filter.split(/\s+and\s+/)) {
    if (t.trim() === '' || t.trim() === '*') continue;
    const i = t.indexOf(':');
    if (i < 0) return { ok: false, error: { position: 0, expected: [':'], message: 'at 0: expected :' } };
    terms.push([t.slice(0, i).trim(), t.slice(i + 1).trim().replace(/^"|"$/g, '')]);
  }
  return {
    ok: true,
    query: { filter: { terms }, pipes: pipes.map((p) => ({ by: (p.split(' by ')[1] ?? '').split(',').map((s) => s.trim()).filter(Boolean) })) },
  };
}
export function printHunt(q: HuntQuery): string {
  return q.filter.terms.map(([f, v]) => `${f}:"${v}"`).join(' and ') || '*';
}
const at = (e: unknown, path: string): unknown =>
  path.split('.').reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), e);
export function compileHunt(q: HuntQuery): CompiledHunt {
  const idx: HuntIndexTerms = {};
  for (const [f, v] of q.filter.terms) {
    if (f === 'category') idx.category = [v];
    if (f === 'class') idx.class = [v];
    if (f === 'source.adapter') idx.adapter = [v];
    if (f === 'entityKeys') idx.entityKey = [v];
  }
  const matches = (e: NormalizedEvent) =>
    q.filter.terms.every(([f, v]) => {
      const x = at(e, f);
      return Array.isArray(x) ? x.includes(v) : String(x) === v;
    });
  const by = q.pipes[0]?.by;
  const aggregator = (): HuntAggregator => {
    const counts = new Map<string, number>();
    const a: HuntAggregator = {
      add: (e) => {
        const k = JSON.stringify((by ?? []).map((f) => at(e, f) ?? null));
        counts.set(k, (counts.get(k) ?? 0) + 1);
      },
      merge: () => undefined,
      finish: () => ({
        columns: [...(by ?? []), 'count'],
        rows: [...counts].map(([k, n]) => [...(JSON.parse(k) as (string | null)[]), n]),
      }),
      truncated: false,
    };
    return a;
  };
  return {
    query: q,
    matches,
    indexTerms: idx,
    output: by ? 'rows' : 'events',
    order: { field: 'time', descending: true },
    head: undefined,
    project: (e) => e as unknown as Record<string, unknown>,
    aggregator,
  };
}
export function huntToSigma(
  q: HuntQuery,
  o: { title: string; id: string },
): { ok: true; yaml: string } | { ok: false; reasons: string[] } {
  if (q.pipes.length > 0) return { ok: false, reasons: ['pipes do not map'] };
  const sel = q.filter.terms.map(([f, v]) => `    ${f}: '${v}'`).join('\n');
  return {
    ok: true,
    yaml: `title: ${o.title}\nid: ${o.id}\nstatus: experimental\nlogsource: {}\ndetection:\n  sel:\n${sel}\n  condition: sel\n`,
  };
}
