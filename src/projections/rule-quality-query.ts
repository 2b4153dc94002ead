import { decodeCursor, encodeCursor } from './cursor.js';
import type { DetectionState } from './detection.js';
import { emptyQuality, medianFirstReview, type RuleQuality, type RuleQualityState } from './rule-quality.js';

/** The orders of `GET /api/v1/rules/quality`. */
export const RULE_QUALITY_SORTS = ['noisiest', 'false_positive_share', 'alerts'] as const;

/** An order of the rule quality list. */
export type RuleQualitySort = (typeof RULE_QUALITY_SORTS)[number];

/** A rule's quality as the API answers it. */
export interface QualityAnswer {
  alertsRaised: number;
  alertsReviewed: number;
  dispositions: { true_positive: number; benign: number; false_positive: number };
  /** Each disposition's share of the alerts that have one (0..1); null when none has. */
  shares: { true_positive: number | null; benign: number | null; false_positive: number | null };
  medianTimeToFirstReviewSeconds: number | null;
  matchesExcepted: number;
}

/** One row of the rule quality list. */
export interface QualityRow {
  ruleId: string;
  title: string;
  /** False for a rule that raised alerts and is not installed (Vigil's own self-monitoring rules). */
  installed: boolean;
  quality: QualityAnswer;
}

const share = (n: number, total: number) => (total === 0 ? null : n / total);

/** The quality of a rule as the API answers it (zeros for a rule that never raised an alert). */
export function qualityAnswer(q: RuleQuality = emptyQuality()): QualityAnswer {
  const d = q.dispositions;
  const total = d.true_positive + d.benign + d.false_positive;
  const median = medianFirstReview(q);
  return {
    alertsRaised: q.alertsRaised,
    alertsReviewed: q.alertsReviewed,
    dispositions: { ...d },
    shares: {
      true_positive: share(d.true_positive, total),
      benign: share(d.benign, total),
      false_positive: share(d.false_positive, total),
    },
    // Milliseconds are what record times hold: no more digits than that.
    medianTimeToFirstReviewSeconds: median === null ? null : Math.round(median * 1000) / 1000,
    matchesExcepted: q.matchesExcepted,
  };
}

/** The share of a rule's dispositioned alerts analysts found `false_positive` or `benign`; -1 when none has one. */
export function noiseShare(q: RuleQuality): number {
  const d = q.dispositions;
  const total = d.true_positive + d.benign + d.false_positive;
  return total === 0 ? -1 : (d.false_positive + d.benign) / total;
}

function falsePositiveShare(q: RuleQuality): number {
  const d = q.dispositions;
  const total = d.true_positive + d.benign + d.false_positive;
  return total === 0 ? -1 : d.false_positive / total;
}

/** A row's place in an order: its keys, greatest first, then its rule id. */
type Position = [number, number, string];

function positionOf(sort: RuleQualitySort, id: string, q: RuleQuality): Position {
  switch (sort) {
    case 'noisiest':
      return [q.alertsRaised, noiseShare(q), id];
    case 'false_positive_share':
      return [falsePositiveShare(q), q.alertsRaised, id];
    case 'alerts':
      return [q.alertsRaised, 0, id];
  }
}

const compare = (a: Position, b: Position) => b[0] - a[0] || b[1] - a[1] || (a[2] < b[2] ? -1 : a[2] > b[2] ? 1 : 0);

function isPosition(x: unknown): x is Position {
  return (
    Array.isArray(x) &&
    x.length === 3 &&
    typeof x[0] === 'number' &&
    typeof x[1] === 'number' &&
    typeof x[2] === 'string'
  );
}

/**
 * A page of rules by quality, `limit` after `cursor`: every installed rule and every rule that raised an alert. The
 * cursor holds the last row's place in the order, so a rule that moves between pages is not shown twice in a row of
 * pages unless it moved past the cursor. Undefined when the cursor is not one of this order's.
 */
export function listRuleQuality(
  quality: RuleQualityState,
  installed: DetectionState['rules'],
  sort: RuleQualitySort,
  limit: number,
  cursor?: string,
): { rules: QualityRow[]; nextCursor: string | null } | undefined {
  let after: Position | undefined;
  if (cursor !== undefined) {
    const c = decodeCursor<unknown>(cursor);
    if (!Array.isArray(c) || c[0] !== sort || !isPosition(c.slice(1))) return undefined;
    after = c.slice(1) as Position;
  }
  const empty = emptyQuality();
  const pool: Array<{ pos: Position; id: string; q: RuleQuality }> = [];
  for (const id of installed.keys()) {
    const q = quality.rules.get(id) ?? empty;
    pool.push({ pos: positionOf(sort, id, q), id, q });
  }
  for (const [id, q] of quality.rules) if (!installed.has(id)) pool.push({ pos: positionOf(sort, id, q), id, q });
  const rest = after === undefined ? pool : pool.filter((r) => compare(r.pos, after) > 0);
  rest.sort((a, b) => compare(a.pos, b.pos));
  const page = rest.slice(0, limit);
  return {
    rules: page.map((r) => {
      const rule = installed.get(r.id);
      return {
        ruleId: r.id,
        title: rule?.compiled.title ?? r.q.title,
        installed: rule !== undefined,
        quality: qualityAnswer(r.q),
      };
    }),
    nextCursor: rest.length > limit ? encodeCursor([sort, ...page.at(-1)!.pos]) : null,
  };
}
