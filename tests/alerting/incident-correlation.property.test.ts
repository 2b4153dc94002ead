import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { correlateIncidents, incidentSummary, type IncidentSettings } from '../../src/commands/alerting/incident-correlation.js';
import { incidentIdOf } from '../../src/commands/alerting/alert-facts.js';
import type { DomainEvent } from '../../src/commands/decision.js';
import type { AlertRaised, IncidentAlertsAdded, IncidentOpened } from '../../src/events/detection-records.js';
import type { AlertsState, AlertView, IncidentView } from '../../src/projections/alerts.js';

/**
 * The rule as first written, the plain way: every raised alert looks at every alert of its systems
 * (sorted by id). The indexed implementation must decide exactly what this one decides.
 */
function naiveCorrelate(state: AlertsState, raised: readonly AlertRaised[], settings: IncidentSettings) {
  interface Candidate { id: string; incidentId?: string; firstMs: number; lastMs: number; systems: readonly string[] }
  const ms = (iso: string) => Date.parse(iso);
  const local = new Map<string, Candidate>();
  const opened = new Map<string, IncidentOpened>();
  const added = new Map<string, IncidentAlertsAdded>();
  const candidate = (id: string): Candidate | undefined => {
    const l = local.get(id);
    if (l) return l;
    const a = state.alerts.get(id);
    const held = a?.incidentId !== undefined ? state.incidents.get(a.incidentId) : undefined;
    const closed = held !== undefined && (held.status === 'closed' || held.status === 'merged');
    return !a || a.status === 'dismissed' || closed ? undefined : { id, ...(a.incidentId ? { incidentId: a.incidentId } : {}), firstMs: ms(a.firstSeen), lastMs: ms(a.lastSeen), systems: a.affectedSystems };
  };
  for (const alert of raised) {
    const me: Candidate = { id: alert.alertId, firstMs: ms(alert.firstSeen), lastMs: ms(alert.lastSeen), systems: alert.affectedSystems };
    const near = new Set<string>();
    for (const sys of alert.affectedSystems) {
      for (const id of state.bySystem.get(sys) ?? []) near.add(id);
      for (const c of local.values()) if (c.systems.includes(sys)) near.add(c.id);
    }
    const peers = [...near].sort().map(candidate).filter((c): c is Candidate => c !== undefined && c.id !== me.id
      && me.firstMs - c.lastMs <= settings.incidentWindowMs && c.firstMs - me.lastMs <= settings.incidentWindowMs);
    const joined = peers.map((p) => p.incidentId).filter((i): i is string => i !== undefined).sort()[0];
    if (joined) {
      me.incidentId = joined;
      if (opened.has(joined)) opened.set(joined, { ...opened.get(joined)!, alertIds: [...opened.get(joined)!.alertIds, me.id] });
      else added.set(joined, { incidentId: joined, alertIds: [...(added.get(joined)?.alertIds ?? []), me.id], reason: `shares affected systems with the incident's alerts` });
    } else if (peers.length > 0) {
      const alertIds = [...peers.map((p) => p.id), me.id];
      const incidentId = incidentIdOf(alertIds[0]!);
      const shared = alert.affectedSystems.find((s) => peers.some((p) => p.systems.includes(s)));
      opened.set(incidentId, { incidentId, title: `Related alerts on ${shared ?? 'shared systems'}`, origin: 'correlated', reason: `alerts share ${shared} within ${Math.round(settings.incidentWindowMs / 60000)} min`, alertIds });
      for (const p of peers) local.set(p.id, { ...p, incidentId });
      me.incidentId = incidentId;
    }
    local.set(me.id, me);
  }
  const events: DomainEvent[] = [
    ...[...opened.values()].map((data) => ({ type: 'IncidentOpened', data })),
    ...[...added.values()].map((data) => ({ type: 'IncidentAlertsAdded', data })),
  ];
  const summaries = [
    ...[...opened.values()].map((o) => incidentSummary(o.incidentId, o.title, [], o.alertIds)),
    ...[...added.values()].map((a) => incidentSummary(a.incidentId, state.incidents.get(a.incidentId)?.title ?? '', state.incidents.get(a.incidentId)?.alertIds ?? [], a.alertIds)),
  ];
  return { events, summaries };
}

const SYSTEMS = ['host:a', 'host:b', 'ip:10.0.0.1', 'ip:10.0.0.2'];
const T0 = Date.parse('2026-11-23T10:00:00.000Z');
const iso = (minutes: number) => new Date(T0 + minutes * 60_000).toISOString();

const span = fc.tuple(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 0, max: 90 })).map(([start, length]) => ({ first: iso(start), last: iso(start + length) }));
const systems = fc.subarray(SYSTEMS, { minLength: 1, maxLength: 3 });
const storedAlert = fc.record({ span, systems, status: fc.constantFrom('open', 'open', 'in_review', 'dismissed'), incident: fc.option(fc.integer({ min: 0, max: 4 }), { nil: undefined }) });
const incidentStatus = fc.constantFrom('open', 'open', 'investigating', 'closed', 'merged');

/** A state with stored alerts (some in incidents, some dismissed, some in closed incidents), and alerts raised by a batch. */
const scenario = fc.record({
  stored: fc.array(storedAlert, { maxLength: 40 }),
  statuses: fc.array(incidentStatus, { minLength: 5, maxLength: 5 }),
  raised: fc.array(fc.record({ span, systems }), { maxLength: 25 }),
  windowMinutes: fc.constantFrom(5, 30, 60, 600),
}).map(({ stored, statuses, raised, windowMinutes }) => {
  const state: AlertsState = { alerts: new Map(), openByKey: new Map(), byKey: new Map(), bySystem: new Map(), systemLinks: 0, incidents: new Map() };
  statuses.forEach((status, i) => state.incidents.set(`inc_${i}`, { id: `inc_${i}`, title: `incident ${i}`, origin: 'correlated', status, mergedFrom: [], alertIds: [], entities: [], firstSeen: iso(0), lastSeen: iso(0), timeline: [] } as unknown as IncidentView));
  stored.forEach((s, i) => {
    const id = `alr_s${String(i).padStart(3, '0')}`;
    const alert = { id, status: s.status, affectedSystems: [...s.systems], firstSeen: s.span.first, lastSeen: s.span.last, ...(s.incident !== undefined ? { incidentId: `inc_${s.incident}` } : {}) } as unknown as AlertView;
    state.alerts.set(id, alert);
    if (s.incident !== undefined) state.incidents.get(`inc_${s.incident}`)!.alertIds.push(id);
    for (const sys of s.systems) {
      if (!state.bySystem.has(sys)) state.bySystem.set(sys, new Set());
      state.bySystem.get(sys)!.add(id);
    }
  });
  const alerts = raised.map((r, i) => ({ alertId: `alr_r${String(i).padStart(3, '0')}`, affectedSystems: [...r.systems], firstSeen: r.span.first, lastSeen: r.span.last }) as unknown as AlertRaised);
  return { state, raised: alerts, settings: { incidentWindowMs: windowMinutes * 60_000 } };
});

describe('incident correlation', () => {
  it('decides what the plain rule decides (every neighbour of every raised alert, in id order)', () => {
    fc.assert(fc.property(scenario, ({ state, raised, settings }) => {
      assert.deepEqual(correlateIncidents(state, raised, settings), naiveCorrelate(state, raised, settings));
    }), { numRuns: 500 });
  });

  it('joins the incident with the smallest id among near alerts, and leaves closed incidents alone', () => {
    const { state, raised, settings } = fc.sample(scenario, { seed: 7, numRuns: 1 })[0]!;
    state.alerts.clear(); state.bySystem.clear();
    const put = (id: string, incident: string, minutes: number) => {
      state.alerts.set(id, { id, status: 'open', affectedSystems: ['host:a'], firstSeen: iso(minutes), lastSeen: iso(minutes), incidentId: incident } as unknown as AlertView);
      if (!state.bySystem.has('host:a')) state.bySystem.set('host:a', new Set());
      state.bySystem.get('host:a')!.add(id);
    };
    state.incidents.get('inc_0')!.status = 'closed';
    state.incidents.get('inc_1')!.status = 'open';
    state.incidents.get('inc_2')!.status = 'open';
    put('alr_x', 'inc_0', 0); put('alr_y', 'inc_2', 1); put('alr_z', 'inc_1', 500);
    void raised;
    const me = { alertId: 'alr_new', affectedSystems: ['host:a'], firstSeen: iso(2), lastSeen: iso(2) } as unknown as AlertRaised;
    const out = correlateIncidents(state, [me], { ...settings, incidentWindowMs: 60 * 60_000 });
    assert.deepEqual(out.events, [{ type: 'IncidentAlertsAdded', data: { incidentId: 'inc_2', alertIds: ['alr_new'], reason: `shares affected systems with the incident's alerts` } }]);
  });

  it('names at most the newest 200 alert ids of an incident in the ingestion result, and counts them all', () => {
    const had = Array.from({ length: 300 }, (_, i) => `alr_${i}`);
    assert.deepEqual(incidentSummary('inc_1', 't', had, ['alr_new']), { id: 'inc_1', title: 't', alertIds: [...had.slice(101), 'alr_new'], alertCount: 301 });
    assert.deepEqual(incidentSummary('inc_1', 't', had.slice(0, 3), ['a', 'b']), { id: 'inc_1', title: 't', alertIds: ['alr_0', 'alr_1', 'alr_2', 'a', 'b'], alertCount: 5 });
    const joined = Array.from({ length: 250 }, (_, i) => `new_${i}`);
    assert.deepEqual(incidentSummary('inc_1', 't', had, joined), { id: 'inc_1', title: 't', alertIds: joined.slice(50), alertCount: 550 });
  });
});
