import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Packr } from 'msgpackr';
import { decideIngestEvents } from '../../src/commands/ingest-events.js';
import type { DetectionHitsRecorded } from '../../src/events/detection-records.js';
import { INSTANCE_EVENTS } from '../../src/events/union.js';
import type { NormalizedEvent } from '../../src/events/normalized-event.js';
import { installBuiltinRules } from '../../src/cli/instance/builtin-rules.js';
import { DEFAULT_DETECTION, openInstanceStore, type InstanceStore } from '../../src/cli/instance/open.js';
import type { NewRecord } from '../../src/kernel/record.js';
import type { AlertsState } from '../../src/projections/alerts.js';
import { detectionProjection, type DetectionState } from '../../src/projections/detection.js';
import { schemaIssues } from '../helpers/stored-events.js';
import { tempDir } from '../helpers/temp.js';

const packr = new Packr({ useRecords: false, mapsAsObjects: true });

/** A failed sshd logon from `ip` at second `sec` past 10:00. */
const failure = (n: number, ip: string, sec: number): NormalizedEvent => ({
  schemaVersion: 1, id: `ssh-${n}`, category: 'identity', class: 'authentication', activity: 'logon', outcome: 'failure',
  time: `2026-11-22T10:00:${String(sec).padStart(2, '0')}Z`, ingestedAt: '2026-11-22T11:00:00Z',
  source: { adapter: 'linux-journal', instance: 'bastion', recordId: String(n) }, entityKeys: [`ip:${ip}`, 'host:bastion'],
  actor: { user: 'root' }, sourceEndpoint: { ip }, destinationEndpoint: { host: 'bastion' },
  attributes: { SYSLOG_IDENTIFIER: 'sshd', MESSAGE: 'Failed password', src_ip: ip, user: 'root' },
});

/** The data an earlier version wrote for the same hits: `DetectionHits` with one-letter names. */
const legacyHits = (d: DetectionHitsRecorded) => ({
  hits: d.hits.map((h) => ({ r: h.ruleId, ...(h.ruleName !== undefined ? { n: h.ruleName } : {}), e: h.eventId, t: h.timeMs, v: h.values })),
});

/** Correlation windows and alerts as comparable plain data. */
const windowsAndAlerts = (inst: InstanceStore) => packr.unpack(packr.pack({
  detection: detectionProjection.snapshot!(inst.writer.models.detection),
  alerts: [...inst.writer.models.alerts.alerts.values()],
}));

describe('a log with legacy DetectionHits records', () => {
  it('replays to the same correlation windows and alerts as the same hits recorded as DetectionHitsRecorded', async () => {
    const dir = tempDir();
    const current = await openInstanceStore(`${dir.path}/current`);
    const legacy = await openInstanceStore(`${dir.path}/legacy`);
    try {
      await installBuiltinRules(current.pipeline, '2026-11-22T09:00:00Z');
      for (let batch = 0; batch < 4; batch++) {
        const events = [0, 1, 2].map((i) => failure(batch * 3 + i, i === 2 ? '203.0.113.2' : '203.0.113.1', batch * 10 + i));
        const ctx = { now: `2026-11-22T11:00:0${batch}Z` };
        const outcome = await current.pipeline.dispatch({ decide: (m) => decideIngestEvents(m, events), ctx: ctx });
        assert.ok(outcome.ok);
      }
      const written = [...current.log.read(1)];
      assert.ok(written.filter((r) => r.type === 'DetectionHitsRecorded').length >= 4, 'every batch recorded hits');
      const old: NewRecord[] = written.map((r) => ({
        type: r.type === 'DetectionHitsRecorded' ? 'DetectionHits' : r.type, at: r.at, ...(r.actor ? { actor: r.actor } : {}),
        data: r.type === 'DetectionHitsRecorded' ? legacyHits(r.data as DetectionHitsRecorded) : r.data,
      }));
      await legacy.log.append(old);
      const stored = [...legacy.log.read(1)];
      assert.deepEqual(schemaIssues(stored, INSTANCE_EVENTS), [], 'the old records have the legacy stored shape');
      assert.ok(stored.some((r) => r.type === 'DetectionHits') && !stored.some((r) => r.type === 'DetectionHitsRecorded'));

      await legacy.runtime.rebuild();
      const expected = windowsAndAlerts(current);
      const groups = Object.values((expected as { detection: { correlation: DetectionState['correlation'] } }).detection.correlation.correlations).flatMap((c) => Object.keys(c.groups));
      assert.ok(groups.length > 0, 'the windows hold groups, so the comparison can fail');
      assert.ok((expected as { alerts: unknown[] }).alerts.length > 0, 'alerts were raised from the hits');
      assert.deepEqual(windowsAndAlerts(legacy), expected);
    } finally {
      await current.close();
      await legacy.close();
      dir.cleanup();
    }
  });
});
