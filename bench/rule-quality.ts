import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { eventOf } from '../src/events/union.js';
import type { LogRecord } from '../src/kernel/record.js';
import type { DetectionState } from '../src/projections/detection.js';
import { packState, unpackState } from '../src/projections/heap-models.js';
import { ruleQualityProjection, type RuleQualityState } from '../src/projections/rule-quality.js';
import { listRuleQuality } from '../src/projections/rule-quality-query.js';
import type { Figure } from './foundation.js';

/** The scale: 100,000 alerts over 3,000 rules. */
const ALERTS = 100_000;
const RULES = 3_000;
const RUNS = 15;
const DISPOSITIONS = ['true_positive', 'benign', 'false_positive'] as const;

/**
 * An analyst's log at that scale: every alert raised, four in five reviewed (half of those in bulk
 * reviews of 100), one in ten reviewed again with another disposition; about 11,000 matches excepted.
 */
function history(t0: number): LogRecord[] {
  const out: LogRecord[] = [];
  const at = (ms: number) => new Date(t0 + ms).toISOString();
  const push = (ms: number, e: { type: string; data: unknown }) =>
    out.push({ seq: out.length + 1, at: at(ms), prev: '', ...e } as LogRecord);
  for (let i = 0; i < ALERTS; i++)
    push(i * 1000, {
      ...eventOf('AlertRaised', {
        alertId: `alr_bench${i}`,
        // A skewed spread, as real rule sets alert: a few rules raise most alerts.
        ruleId: `rule-${Math.floor(RULES * (i / ALERTS) ** 3 * 7919) % RULES}`,
        groupKey: `host:h${i % 5000}`,
        title: `Bench rule ${i % RULES}`,
        level: 'medium',
        severity: 5,
        confidence: 0.7,
        matchReason: { selections: ['sel'], fields: [], keywords: [] },
        evidence: [],
        affectedSystems: [],
        firstSeen: at(i * 1000),
        lastSeen: at(i * 1000),
        tags: [],
      }),
    });
  const later = ALERTS * 1000;
  for (let i = 0; i < ALERTS; i += 200) {
    const bulk = Array.from({ length: 100 }, (_, k) => ({ alertId: `alr_bench${i + k}`, from: 'open' as const }));
    const reason = 'bench';
    push(later + i, {
      ...eventOf('AlertsBulkReviewed', {
        reviews: bulk,
        to: 'dismissed',
        disposition: DISPOSITIONS[i % 3]!,
        reason,
        principal: 'p',
        authentication: 'bearer',
      }),
    });
    for (let k = 100; k < 160; k++)
      push(later + i + k, {
        ...eventOf('AlertReviewed', {
          alertId: `alr_bench${i + k}`,
          from: 'open',
          to: 'dismissed',
          reason,
          principal: 'p',
          authentication: 'bearer',
          disposition: DISPOSITIONS[k % 3]!,
        }),
      });
    for (let k = 0; k < 20; k++)
      push(later * 2 + i + k, {
        ...eventOf('AlertReviewed', {
          alertId: `alr_bench${i + k}`,
          from: 'dismissed',
          to: 'dismissed',
          reason,
          principal: 'p',
          authentication: 'bearer',
          disposition: DISPOSITIONS[(k + 1) % 3]!,
        }),
      });
    push(later * 2 + i + 50, {
      ...eventOf('MatchesExcepted', {
        matches: Array.from({ length: 22 }, (_, k) => ({
          exceptionId: 'exc',
          ruleId: `rule-${(i + k) % RULES}`,
          eventIds: ['e'],
          time: at(i),
        })),
      }),
    });
  }
  return out;
}

const fold = (rs: readonly LogRecord[]) =>
  rs.reduce((s, r) => ruleQualityProjection.evolve(s, r), ruleQualityProjection.initial());

/** The heap in use after a full collection (the section runs in a process of its own, so the flag changes no other). */
function heapUsed(): number {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
  return process.memoryUsage().heapUsed;
}

function median(ms: number[]): number {
  return [...ms].sort((a, b) => a - b)[Math.floor(ms.length / 2)]!;
}

/**
 * The rule quality read model at 100,000 alerts and 3,000 rules: its fold, its heap after a collection, its
 * checkpoint, and the first page of `GET /api/v1/rules/quality` (noisiest first), in process.
 */
export async function ruleQualityBench(): Promise<Figure[]> {
  const records = history(Date.UTC(2026, 10, 1));
  const before = heapUsed();
  const t0 = performance.now();
  let s: RuleQualityState = fold(records);
  const foldMs = performance.now() - t0;
  const heap = heapUsed() - before;
  const t1 = performance.now();
  const packed = packState(ruleQualityProjection, s);
  s = unpackState(ruleQualityProjection, packed);
  const checkpointMs = performance.now() - t1;
  const installed = new Map(
    Array.from({ length: RULES }, (_, i) => [`rule-${i}`, { compiled: { title: `Bench rule ${i}` } }]),
  ) as unknown as DetectionState['rules'];
  const page = (sort: 'noisiest' | 'false_positive_share') => {
    const ms: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      // Each run asks again after a change, as a live instance would: every median worked out anew.
      for (const q of s.rules.values()) q.median = undefined;
      const t = performance.now();
      listRuleQuality(s, installed, sort, 100);
      ms.push(performance.now() - t);
    }
    return median(ms);
  };
  return [
    {
      name: 'rule quality: fold of 100,000 alerts over 3,000 rules',
      value: Math.round(foldMs),
      unit: 'ms',
      note: `${records.length} records`,
    },
    { name: 'rule quality: heap of the model', value: Math.round(heap / 1024 / 1024), unit: 'MiB' },
    {
      name: 'rule quality: checkpoint',
      value: Math.round(packed.length / 1024),
      unit: 'KiB',
      note: `packed and restored in ${checkpointMs.toFixed(0)} ms`,
    },
    { name: 'rule quality: first page, noisiest', value: Math.round(page('noisiest') * 10) / 10, unit: 'ms p50' },
    {
      name: 'rule quality: first page, false_positive_share',
      value: Math.round(page('false_positive_share') * 10) / 10,
      unit: 'ms p50',
    },
  ];
}
