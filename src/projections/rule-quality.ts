import { exhaustive } from '../events/read.js';
import { ALERT_DISPOSITIONS } from '../events/detection-events.js';
import type { AlertDisposition } from '../events/detection-records.js';
import { epochMillisOf } from '../kernel/time.js';
import { instanceProjection } from './types.js';

/** How analysts' verdicts have gone for one rule's alerts (docs/detections.md, "Rule quality"). */
export interface RuleQuality {
  /** The title of the rule's latest alert: names a rule that is not installed (a self-monitoring one). */
  title: string;
  alertsRaised: number;
  /** Alerts reviewed at least once (any review: a status change counts, with or without a disposition). */
  alertsReviewed: number;
  /** The latest disposition of each alert that has one, counted by disposition. */
  dispositions: Record<AlertDisposition, number>;
  /** Seconds from each reviewed alert's raising to its first review, in the order they were reviewed. */
  firstReviewSeconds: number[];
  /** Matches of the rule an exception kept from alerting. */
  matchesExcepted: number;
  /** The median of `firstReviewSeconds`, worked out when first asked after it changed (not in the snapshot). */
  median?: number | null | undefined;
}

/**
 * What the fold remembers of one alert: its rule, when it was raised (until its first review: after it, only the
 * rule's list of review times needs it) and its latest disposition.
 */
interface AlertMark {
  readonly ruleId: string;
  /** Epoch milliseconds of its `AlertRaised` record; undefined once it has been reviewed. */
  raisedMs: number | undefined;
  disposition: AlertDisposition | undefined;
}

/** Rule quality by rule id, and the few facts per alert that reviews are attributed by. */
export interface RuleQualityState {
  rules: Map<string, RuleQuality>;
  alerts: Map<string, AlertMark>;
}

/** A rule with no alert, no review and no excepted match. */
export function emptyQuality(title = ''): RuleQuality {
  return {
    title,
    alertsRaised: 0,
    alertsReviewed: 0,
    dispositions: { true_positive: 0, benign: 0, false_positive: 0 },
    firstReviewSeconds: [],
    matchesExcepted: 0,
  };
}

function ruleOf(s: RuleQualityState, ruleId: string, title = ''): RuleQuality {
  let q = s.rules.get(ruleId);
  if (!q) s.rules.set(ruleId, (q = emptyQuality(title)));
  return q;
}

function raise(s: RuleQualityState, alertId: string, ruleId: string, title: string, at: string): void {
  // An alert id is raised once; were one raised again, its first raising is the one its reviews follow.
  if (s.alerts.has(alertId)) return;
  const q = ruleOf(s, ruleId, title);
  q.title = title;
  q.alertsRaised++;
  s.alerts.set(alertId, { ruleId, raisedMs: epochMillisOf(at), disposition: undefined });
}

function review(s: RuleQualityState, alertId: string, disposition: AlertDisposition | undefined, at: string): void {
  const mark = s.alerts.get(alertId);
  if (!mark) return;
  const q = ruleOf(s, mark.ruleId);
  if (mark.raisedMs !== undefined) {
    // The first review: a record written later is never earlier, but a clock stepped back on a new leader could be.
    const ms = (epochMillisOf(at) ?? mark.raisedMs) - mark.raisedMs;
    q.firstReviewSeconds.push(Math.max(0, ms) / 1000);
    q.alertsReviewed++;
    q.median = undefined;
    mark.raisedMs = undefined;
  }
  // A review without a disposition (a status change) leaves the one given before, as the alert's detail does.
  if (disposition === undefined || disposition === mark.disposition) return;
  if (mark.disposition !== undefined) q.dispositions[mark.disposition]--;
  q.dispositions[disposition]++;
  mark.disposition = disposition;
}

/** The median of `values` (the mean of the two middle ones for an even count); null for none. */
export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = Float64Array.from(values).sort();
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The median seconds from raising to first review of a rule's alerts (null when none was reviewed), cached. */
export function medianFirstReview(q: RuleQuality): number | null {
  if (q.median === undefined) q.median = median(q.firstReviewSeconds);
  return q.median;
}

/** A rule's entry as a checkpoint holds it. */
type StoredRule = [string, string, number, number, [number, number, number], number[], number];
/** An alert's mark in a checkpoint: id, rule id, raised (epoch ms; -1 once reviewed), disposition (-1: none). */
type StoredAlert = [string, string, number, number];

/**
 * Per rule: alerts raised and reviewed, the latest disposition of each alert counted, the times to first review and
 * the matches exceptions kept from alerting. Memory grows with alerts (a mark each, about 100 bytes) and reviews (8
 * bytes each), as the alerts model does, never with events.
 */
export const ruleQualityProjection = instanceProjection({
  name: 'ruleQuality',
  version: 1,
  folds: ['AlertRaised', 'AlertReviewed', 'AlertsBulkReviewed', 'MatchesExcepted'],
  initial: (): RuleQualityState => ({ rules: new Map(), alerts: new Map() }),
  evolve(s, record) {
    switch (record.type) {
      case 'AlertRaised':
        raise(s, record.data.alertId, record.data.ruleId, record.data.title, record.at);
        return s;
      case 'AlertReviewed':
        review(s, record.data.alertId, record.data.disposition, record.at);
        return s;
      case 'AlertsBulkReviewed':
        for (const r of record.data.reviews) review(s, r.alertId, record.data.disposition, record.at);
        return s;
      case 'MatchesExcepted':
        // Each entry is one match of one rule (however many events it took), kept from alerting by an exception.
        for (const m of record.data.matches) ruleOf(s, m.ruleId).matchesExcepted++;
        return s;
      default:
        return exhaustive(record, s);
    }
  },
  snapshot: (s) => ({
    rules: [...s.rules].map(([id, q]): StoredRule => [
      id,
      q.title,
      q.alertsRaised,
      q.alertsReviewed,
      [q.dispositions.true_positive, q.dispositions.benign, q.dispositions.false_positive],
      q.firstReviewSeconds,
      q.matchesExcepted,
    ]),
    alerts: [...s.alerts].map(([id, m]): StoredAlert => [
      id,
      m.ruleId,
      m.raisedMs ?? -1,
      m.disposition === undefined ? -1 : ALERT_DISPOSITIONS.indexOf(m.disposition),
    ]),
  }),
  restore(data) {
    const d = data as { rules: StoredRule[]; alerts: StoredAlert[] };
    const rules = new Map<string, RuleQuality>();
    for (const [id, title, alertsRaised, alertsReviewed, [tp, benign, fp], times, matchesExcepted] of d.rules)
      rules.set(id, {
        title,
        alertsRaised,
        alertsReviewed,
        dispositions: { true_positive: tp, benign, false_positive: fp },
        firstReviewSeconds: times,
        matchesExcepted,
      });
    const alerts = new Map<string, AlertMark>();
    for (const [id, ruleId, raised, disposition] of d.alerts)
      alerts.set(id, {
        ruleId,
        raisedMs: raised < 0 ? undefined : raised,
        disposition: disposition < 0 ? undefined : ALERT_DISPOSITIONS[disposition],
      });
    return { rules, alerts };
  },
});
