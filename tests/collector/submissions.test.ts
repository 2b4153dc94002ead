import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readRegistry, writeRegistry } from '../../src/auth/registry.js';
import { generateToken, hashToken } from '../../src/auth/tokens.js';
import { generateKeyPair } from '../../src/kernel/ed25519.js';
import type { CollectorSubmissionAccepted, CollectorSubmissionRejected } from '../../src/events/collector-records.js';
import { RecordType } from '../../src/events/record-types.js';
import { installBuiltinRules } from '../../src/cli/instance/builtin-rules.js';
import { startTestInstance, type TestInstance } from '../helpers/instance.js';
import { enrollCollector, envelopeText, issueToken, makePayload, postEnrollment, recordsOf, submit, type TestKey } from './helpers.js';

const reasons = (t: TestInstance) => recordsOf<CollectorSubmissionRejected>(t, RecordType.CollectorSubmissionRejected).map((r) => r.event.attributes.reason);

describe('POST /api/v1/collector/submissions', () => {
  let t: TestInstance;
  let key: TestKey;
  before(async () => {
    t = await startTestInstance();
    await installBuiltinRules(t.inst.pipeline, '2026-11-22T09:00:00.000Z');
    key = await enrollCollector(t, 'web-01');
  });
  after(async () => { await t.close(); });

  it('accepts sequence 1 with the submission result, stores the events as collector evidence and folds the graph counts', async () => {
    const res = await submit(t, envelopeText(makePayload('web-01', 1, 3), key));
    assert.equal(res.status, 202, await res.clone().text());
    assert.deepEqual(await res.json(), { collectorId: 'web-01', sequence: 1, graph: { entities: 1, relationships: 1 }, acceptedEvents: 3 });
    const page = await (await t.request('/api/v1/events?adapter=collector', { token: t.tokens.viewer })).json() as { events: Array<Record<string, any>> };
    assert.equal(page.events.length, 3);
    const e0 = page.events.find((e) => e.id === 'web-01-s1-e0')!;
    assert.deepEqual([e0.category, e0.outcome, e0.class], ['identity', 'failure', 'authentication']);
    assert.deepEqual(e0.source, { adapter: 'collector', instance: 'web-01', recordId: 'web-01-s1-r0' });
    assert.deepEqual(e0.attributes.collector_input, { adapter: 'linux-journal', instance: 'web-01' });
  });

  it('answers an exact retry of the last envelope with its original result and applies it once', async () => {
    const text = envelopeText(makePayload('web-01', 2, 2), key);
    const first = await submit(t, text);
    assert.equal(first.status, 202);
    const before = recordsOf(t, RecordType.CollectorSubmissionAccepted).length;
    const again = await submit(t, text);
    assert.equal(again.status, 202);
    assert.deepEqual(await again.json(), await first.json());
    assert.equal(recordsOf(t, RecordType.CollectorSubmissionAccepted).length, before);
  });

  it('refuses equivocation, replay and a gap with 409 and the expected sequence, recording each reason', async () => {
    const equivocation = await submit(t, envelopeText(makePayload('web-01', 2, 1, 'other'), key));
    assert.equal(equivocation.status, 409);
    assert.deepEqual(await equivocation.json(), { reason: 'equivocation', expectedSequence: 3, error: 'sequence 2 was already accepted with a different payload' });
    const replay = await submit(t, envelopeText(makePayload('web-01', 1, 3), key));
    assert.equal(replay.status, 409);
    assert.equal((await replay.json() as { reason: string }).reason, 'replay');
    const gap = await submit(t, envelopeText(makePayload('web-01', 5), key));
    assert.equal(gap.status, 409);
    assert.equal((await gap.json() as { expectedSequence: number }).expectedSequence, 3);
    assert.deepEqual(reasons(t).slice(-3), ['equivocation', 'replay', 'sequence_gap']);
    assert.equal((await submit(t, envelopeText(makePayload('web-01', 3), key))).status, 202);
  });

  it('refuses a bad signature (401), an unknown collector (403) and malformed envelopes (400), recording each', async () => {
    const other = generateKeyPair();
    const bad = await submit(t, envelopeText(makePayload('web-01', 4), { seed: other.seed, publicKey: other.publicKey }));
    assert.equal(bad.status, 401);
    assert.equal((await bad.json() as { reason: string }).reason, 'bad_signature');
    const unknown = await submit(t, envelopeText(makePayload('ghost', 1), key));
    assert.equal(unknown.status, 403);
    const malformed = await submit(t, '{"algorithm":"Ed25519","payload":{},"signature":"x"}');
    assert.equal(malformed.status, 400);
    assert.ok(((await malformed.json()) as { issues: string[] }).issues.length > 0);
    const dup = await submit(t, envelopeText(makePayload('web-01', 4), key).replace('"algorithm":"Ed25519"', '"algorithm":"Ed25519","algorithm":"Ed25519"'));
    assert.equal(dup.status, 400);
    assert.deepEqual(reasons(t).slice(-4), ['bad_signature', 'unknown_collector', 'malformed', 'malformed']);
    const last = recordsOf<CollectorSubmissionRejected>(t, RecordType.CollectorSubmissionRejected).at(-4)!;
    assert.deepEqual([last.event.source.adapter, last.event.source.instance, last.event.class, last.event.category], ['vigil', 'collector', 'collector_submission_rejected', 'finding']);
  });

  it('raises alerts from the built-in rules on a bad signature and on equivocation', async () => {
    const alerts = await (await t.request('/api/v1/alerts', { token: t.tokens.viewer })).json() as { alerts: Array<{ ruleId: string }> };
    const rules = new Set(alerts.alerts.map((a) => a.ruleId));
    assert.ok(rules.has('6f0a1c52-3d7e-4c1b-9a31-0b7d6f1e2a51'), `bad signature alert among ${[...rules].join(', ')}`);
    assert.ok(rules.has('6f0a1c52-3d7e-4c1b-9a31-0b7d6f1e2a52'), 'equivocation alert');
    assert.ok(rules.has('6f0a1c52-3d7e-4c1b-9a31-0b7d6f1e2a53'), 'replay alert');
  });

  it('refuses a payload for another collector than the credential is bound to (403)', async () => {
    const bound = generateToken();
    writeRegistry(t.credentialsFile, [...readRegistry(t.credentialsFile), { id: 'db-collector', tokenHash: hashToken(bound), roles: ['collector'], disabled: false, collectorId: 'db-01' }]);
    const res = await submit(t, envelopeText(makePayload('web-01', 4), key), bound);
    assert.equal(res.status, 403);
    assert.equal((await res.json() as { reason: string }).reason, 'collector_mismatch');
    assert.equal(reasons(t).at(-1), 'collector_mismatch');
  });

  it('answers 413 for transport JSON over 5 MiB without reading it all', async () => {
    const res = await submit(t, JSON.stringify({ algorithm: 'Ed25519', payload: { pad: 'x'.repeat(5 * 1024 * 1024) }, signature: '' }));
    assert.equal(res.status, 413);
  });

  it('answers 413 for signed bytes over 4 MiB', async () => {
    const payload = makePayload('web-01', 4, 1);
    (payload.events as Array<Record<string, any>>)[0]!.attributes.blob = 'y'.repeat(4 * 1024 * 1024 + 10);
    const res = await submit(t, envelopeText(payload, key));
    assert.equal(res.status, 413);
  });

  it('keeps the stored events after a re-enrollment and refuses envelopes signed with the old epoch key', async () => {
    const fresh = await enrollCollector(t, 'web-01');
    const old = await submit(t, envelopeText(makePayload('web-01', 1, 1, 'epoch2'), key));
    assert.equal(old.status, 401);
    const res = await submit(t, envelopeText(makePayload('web-01', 1, 1, 'epoch2'), fresh));
    assert.equal(res.status, 202);
    const accepted = recordsOf<CollectorSubmissionAccepted>(t, RecordType.CollectorSubmissionAccepted);
    assert.deepEqual(accepted.map((a) => [a.epoch, a.sequence]), [[1, 1], [1, 2], [1, 3], [2, 1]]);
    const reused = await postEnrollment(t, 'web-01', await issueToken(t, 'web-01'), fresh.publicKey);
    assert.equal(reused.status, 409);
  });
});

describe('POST /api/v1/collector/enrollments', () => {
  let t: TestInstance;
  before(async () => { t = await startTestInstance(); });
  after(async () => { await t.close(); });

  it('consumes a token atomically: of 50 concurrent uses exactly one succeeds', async () => {
    const token = await issueToken(t, 'race-01');
    const results = await Promise.all(Array.from({ length: 50 }, () => postEnrollment(t, 'race-01', token, generateKeyPair().publicKey)));
    const statuses = results.map((r) => r.status).sort();
    assert.equal(statuses.filter((s) => s === 201).length, 1);
    assert.deepEqual([...new Set(statuses.filter((s) => s !== 201))], [401]);
    const list = await (await t.request('/api/v1/collectors', { token: t.tokens.admin })).json() as { collectors: Array<{ collectorId: string; epoch: number }> };
    assert.deepEqual(list.collectors.map((c) => [c.collectorId, c.epoch]), [['race-01', 1]]);
  });

  it('refuses an expired token, a token for another collector, and a small-order key', async () => {
    const token = await issueToken(t, 'exp-01', '1m');
    t.setNow('2026-11-22T10:02:00.000Z');
    assert.equal((await postEnrollment(t, 'exp-01', token, generateKeyPair().publicKey)).status, 401);
    t.setNow('2026-11-22T10:00:00.000Z');
    const other = await issueToken(t, 'a-01');
    assert.equal((await postEnrollment(t, 'b-01', other, generateKeyPair().publicKey)).status, 403);
    const smallOrder = new Uint8Array(32); smallOrder[0] = 1;
    const res = await postEnrollment(t, 'a-01', other, smallOrder);
    assert.equal(res.status, 400);
    assert.match(JSON.stringify(await res.json()), /small-order/);
    assert.equal((await postEnrollment(t, 'a-01', other, generateKeyPair().publicKey)).status, 201);
  });

  it('answers the same 401 body for unknown, used and expired tokens, without a bearer credential', async () => {
    const unknown = await postEnrollment(t, 'x-01', `vce_${'A'.repeat(43)}`, generateKeyPair().publicKey);
    assert.equal(unknown.status, 401);
    assert.deepEqual(await unknown.json(), { error: 'invalid, used or expired enrollment token' });
    const types = recordsOf<{ reason: string }>(t, RecordType.CollectorEnrollmentRejected).map((r) => r.reason);
    assert.ok(types.includes('unknown_token') && types.includes('token_used') && types.includes('token_expired'));
  });
});
