import { keyFingerprint } from '../../src/kernel/ed25519.js';
import { encodeBase64 } from '../../src/kernel/strict-base64.js';
import { parseSigmaText } from '../../src/detection/sigma-yaml.js';
import type { NormalizedEvent } from '../../src/events/normalized-event.js';
import { eventOf, type EventData } from '../../src/events/union.js';

/** A valid NormalizedEvent (a network connection) with overrides. */
export function normalizedEvent(over: Partial<NormalizedEvent> = {}): NormalizedEvent {
  return {
    schemaVersion: 1, id: 'evt-1', category: 'network', class: 'network_connection', activity: 'traffic', outcome: 'success',
    time: '2026-11-22T09:00:00Z', ingestedAt: '2026-11-22T09:00:01Z',
    source: { adapter: 'test', instance: 'unit', recordId: 'r1' },
    entityKeys: ['ip:10.0.0.1', 'ip:10.0.0.2'],
    sourceEndpoint: { ip: '10.0.0.1', port: 51000 }, destinationEndpoint: { ip: '10.0.0.2', port: 22 },
    attributes: { note: 'test' },
    ...over,
  };
}

/** `EventsIngested` of `events`. */
export const eventsIngested = (...events: NormalizedEvent[]) => eventOf('EventsIngested', { events });

/** `RawRecordsIngested` of one normalizer's records and the events they became. */
export const rawRecordsIngested = (normalizer: string, records: unknown[], events: NormalizedEvent[]) => eventOf('RawRecordsIngested', { normalizer, records, events });

/** A Sigma rule on Zeek DNS queries for `query`, with the given id. */
export const dnsRule = (id: string, query = 'evil.example') => `title: DNS ${query}
id: ${id}
status: test
logsource: {product: zeek, service: dns}
detection:
  sel:
    query: ${query}
  condition: sel
level: medium
`;

/** `RulesImported` of a Sigma text whose documents all carry an id (a built-in pack when `packVersion` is given). */
export function rulesImported(text: string, packVersion?: string) {
  const parsed = parseSigmaText(text);
  if (!parsed.ok) throw new Error(parsed.error);
  const rules = parsed.docs.map((doc) => ({ id: String((doc as { id: unknown }).id), doc }));
  return eventOf('RulesImported', packVersion === undefined ? { source: 'api', text, rules } : { source: 'builtin', packVersion, text, rules });
}

/** `RuleEnabledChanged`. */
export const ruleEnabledChanged = (ruleId: string, enabled: boolean, reason?: string) => eventOf('RuleEnabledChanged', { ruleId, enabled, ...(reason !== undefined ? { reason } : {}) });
/** `RuleQuarantined`. */
export const ruleQuarantined = (ruleId: string, alertId: string, measuredMs = 250) =>
  eventOf('RuleQuarantined', { ruleId, reason: 'over budget', budgetMs: 100, measuredMs, evaluations: 3, alertId });

/** `AlertRaised` of a detection match, with overrides. */
export function alertRaised(over: Partial<EventData<'AlertRaised'>> = {}) {
  return eventOf('AlertRaised', {
    alertId: 'alr_1', ruleId: 'rule-1', groupKey: 'ip:10.0.0.1', title: 'A detection', level: 'high', severity: 8, confidence: 0.7,
    matchReason: { selections: ['sel'], fields: [{ selection: 'sel', field: 'query', modifiers: [], value: 'evil.example' }], keywords: [] },
    evidence: [{ eventId: 'evt-1', time: '2026-11-22T09:00:00Z', summary: 'test dns_query/a success' }],
    affectedSystems: ['ip:10.0.0.1'], firstSeen: '2026-11-22T09:00:00.000Z', lastSeen: '2026-11-22T09:00:00.000Z', tags: [],
    ...over,
  });
}

/** `AlertReviewed` from `from` to `to`. */
export const alertReviewed = (alertId: string, from: 'open' | 'in_review' | 'dismissed', to: 'open' | 'in_review' | 'dismissed') =>
  eventOf('AlertReviewed', { alertId, from, to, reason: 'reviewed', principal: 'analyst-user', authentication: 'bearer' });

/** `IncidentOpened` by an analyst for `alertIds`. */
export const incidentOpened = (incidentId: string, alertIds: string[]) =>
  eventOf('IncidentOpened', { incidentId, title: 'An incident', origin: 'promoted', reason: 'same actor', alertIds, principal: 'analyst-user' });

/** `CollectorEnrollmentTokenIssued`. */
export const enrollmentTokenIssued = (over: Partial<EventData<'CollectorEnrollmentTokenIssued'>> = {}) =>
  eventOf('CollectorEnrollmentTokenIssued', { tokenId: 'cet_1', collectorId: 'web-01', tokenHash: 'hash-1', expiresAt: '2026-11-22T11:00:00.000Z', ...over });

/** `CollectorEnrolled` of `publicKey` in `epoch`. */
export const collectorEnrolled = (collectorId: string, publicKey: Uint8Array, epoch = 1, tokenId = 'cet_1') =>
  eventOf('CollectorEnrolled', { collectorId, epoch, tokenId, publicKey: encodeBase64(publicKey), keyFingerprint: keyFingerprint(publicKey) });

/** The id of WEBSHELL_RULE. */
export const WEBSHELL_RULE_ID = '11111111-2222-4333-8444-555555555555';

/** A Sigma rule on Zeek http: a PUT of a `.php` path (a webshell upload), high, by `Test Author`. */
export const WEBSHELL_RULE = `title: Webshell upload
id: ${WEBSHELL_RULE_ID}
status: test
author: Test Author
logsource: {product: zeek, service: http}
detection:
  sel:
    method: PUT
    uri|endswith: '.php'
  condition: sel
level: high
tags: [attack.persistence, attack.t1505.003]
`;
