import type { CommandContext, DomainEvent } from '../decision.js';
import { DetectionRecord, type AlertEvidenceAdded, type AlertRaised } from '../../events/detection-records.js';
import type { NormalizedEvent } from '../../events/normalized-event.js';
import type { FeedMatch } from '../../detection/intel/indicator-index.js';
import { epochMillisOf } from '../../kernel/time.js';
import { EVIDENCE_KEPT, alertKey, type AlertsState } from '../../projections/alerts.js';
import type { IntelState } from '../../projections/intel.js';
import { affectedSystems, alertIdOf, evidenceOf } from './alert-facts.js';
import type { AlertSummary } from './evaluate.js';

/** Vigil's rule of threat intelligence matches (docs/intel.md): one alert per feed's indicator, systems gathered. */
export const THREAT_INTEL_RULE = 'vigil.threat-intel-match';

/** A record this evaluation builds up before it is appended. */
type Mutable<T> = { -readonly [K in keyof T]: T[K] };

const isoOf = (ms: number, fallback: string) => (Number.isFinite(ms) ? new Date(ms).toISOString() : fallback);

/** The first value an indicator names, for its alert's title when it has no name. */
const firstValue = (m: FeedMatch) => m.terms[0]?.value ?? m.indicator.id;

/** The alert's explanation of one match: indicator, feed and version, confidence, validity, context, fields. */
function reasonOf(m: FeedMatch): AlertRaised['matchReason'] {
  const i = m.indicator;
  return {
    intel: {
      indicator: i.id,
      ...(i.name !== undefined ? { name: i.name } : {}),
      pattern: i.source,
      feed: m.feed,
      version: m.version,
      ...(i.confidence !== undefined ? { confidence: i.confidence } : {}),
      ...(i.validFrom !== undefined ? { validFrom: i.validFrom } : {}),
      ...(i.validUntil !== undefined ? { validUntil: i.validUntil } : {}),
      related: (i.related ?? []).map((r) => ({
        type: r.type,
        name: r.name,
        ...(r.id !== undefined ? { id: r.id } : {}),
      })),
      fields: m.fields.map((f) => ({ field: f.field, value: f.value, type: f.term.type })),
    },
  };
}

/**
 * Matches evidence against the active indicators (src/projections/intel.ts) at each event's own time, and raises one
 * alert of THREAT_INTEL_RULE per feed's indicator (grown by later matches while it is not dismissed), each explaining
 * which indicator, feed and version, confidence, validity and related objects, and which event field held the value.
 * `retro`: the evidence is stored evidence searched again for new indicators (retro-search.ts): the alerts it raises
 * say so (`retro: true`), and an event an alert holds already is not added to it again. Pure.
 */
export function intelAlerts(
  intel: Pick<IntelState, 'index'>,
  alerts: AlertsState,
  evidence: readonly NormalizedEvent[],
  ctx: CommandContext,
  options: { readonly retro?: boolean } = {},
): { events: DomainEvent[]; alerts: AlertSummary[] } {
  if (intel.index.size === 0 || evidence.length === 0) return { events: [], alerts: [] };
  const raised = new Map<string, Mutable<AlertRaised>>();
  const grown = new Map<string, Mutable<AlertEvidenceAdded>>();
  const nowMs = epochMillisOf(ctx.now) ?? 0;
  for (const event of evidence) {
    const atMs = epochMillisOf(event.time) ?? nowMs;
    for (const m of intel.index.match(event, atMs)) {
      const groupKey = `${m.feed}\u0000${m.indicator.id}`;
      const key = alertKey(THREAT_INTEL_RULE, groupKey);
      const systems = affectedSystems(event);
      const time = isoOf(atMs, ctx.now);
      const here = raised.get(key);
      if (here) {
        if (here.evidence.length < EVIDENCE_KEPT) here.evidence.push(evidenceOf(event));
        for (const s of systems) if (!here.affectedSystems.includes(s)) here.affectedSystems.push(s);
        if (time > here.lastSeen) here.lastSeen = time;
        continue;
      }
      const openId = alerts.openByKey.get(key);
      // A search back in time may meet an event its alert holds already (matched live, or by an earlier search).
      if (
        options.retro &&
        openId !== undefined &&
        alerts.alerts.get(openId)!.evidence.some((r) => r.eventId === event.id)
      )
        continue;
      if (openId !== undefined) {
        const g = grown.get(openId);
        if (g) {
          g.evidence.push(evidenceOf(event));
          for (const s of systems) if (!g.affectedSystems.includes(s)) g.affectedSystems.push(s);
          if (time > g.lastSeen) g.lastSeen = time;
        } else
          grown.set(openId, {
            alertId: openId,
            evidence: [evidenceOf(event)],
            affectedSystems: [...systems],
            lastSeen: time,
            confidence: alerts.alerts.get(openId)!.confidence,
          });
        continue;
      }
      let alertId = alertIdOf(THREAT_INTEL_RULE, groupKey, event.id);
      for (let n = 2; alerts.alerts.has(alertId); n++)
        alertId = `${alertIdOf(THREAT_INTEL_RULE, groupKey, event.id)}-${n}`;
      const confidence = (m.indicator.confidence ?? 50) / 100;
      raised.set(key, {
        alertId,
        ruleId: THREAT_INTEL_RULE,
        groupKey,
        title: `threat-intel match: ${(m.indicator.name ?? firstValue(m)).slice(0, 200)} (${m.feed})`,
        author: 'Vigil',
        level: 'high',
        severity: 8,
        confidence,
        matchReason: reasonOf(m),
        evidence: [evidenceOf(event)],
        affectedSystems: [...systems],
        firstSeen: time,
        lastSeen: time,
        tags: ['vigil.threat-intel', ...(m.indicator.labels ?? []).slice(0, 20).map((l) => `intel.${l}`)],
        ...(options.retro ? { retro: true } : {}),
      });
    }
  }
  const events: DomainEvent[] = [
    ...[...raised.values()].map((data) => ({ type: DetectionRecord.AlertRaised, data })),
    ...[...grown.values()].map((data) => ({ type: DetectionRecord.AlertEvidenceAdded, data })),
  ];
  const summaries: AlertSummary[] = [
    ...[...raised.values()].map((a) => summaryOf(a, a.affectedSystems, 'open', true)),
    ...[...grown.values()].map((g) => {
      const a = alerts.alerts.get(g.alertId)!;
      const systems = [...new Set([...a.affectedSystems, ...g.affectedSystems])];
      return summaryOf(
        { ...a, alertId: a.id, lastSeen: g.lastSeen > a.lastSeen ? g.lastSeen : a.lastSeen },
        systems,
        a.status,
        false,
      );
    }),
  ];
  return { events, alerts: summaries };
}

/** An intel alert as the ingestion result lists it (its first 20 systems). */
function summaryOf(
  a: Pick<AlertRaised, 'alertId' | 'title' | 'severity' | 'confidence' | 'firstSeen' | 'lastSeen'> & {
    author?: string;
  },
  systems: readonly string[],
  status: string,
  raised: boolean,
): AlertSummary {
  return {
    id: a.alertId,
    status,
    ruleId: THREAT_INTEL_RULE,
    title: a.title,
    author: 'Vigil',
    severity: a.severity,
    confidence: a.confidence,
    affectedSystems: systems.slice(0, 20),
    affectedSystemsCount: systems.length,
    affectedSystemsComplete: true,
    firstSeen: a.firstSeen,
    lastSeen: a.lastSeen,
    raised,
  };
}
