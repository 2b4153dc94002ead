import { describe, it } from 'node:test';
import { spec } from '../helpers/decider-spec.js';
import { decideRetentionPolicy } from '../../src/commands/record-retention.js';
import { eventOf } from '../../src/events/union.js';
import { RETENTION, type RecordedPolicy, type RetentionState } from '../../src/projections/retention.js';
import type { WriteModels } from '../../src/projections/models.js';

const on: RecordedPolicy = { enabled: true, days: { evidence: 30, alerts: 365, reviews: 365, incidents: 365, access: 365, audit: 730 }, segmentRecords: 1_048_576 };
const off: RecordedPolicy = { ...on, enabled: false };
const record = (m: WriteModels, p: RecordedPolicy) => decideRetentionPolicy(m.retention, p);

describe('retention policy record (decider specs)', () => {
  it('records nothing on a first start with retention off', () => {
    spec(record).given([]).when(off).then([], { changed: false });
  });

  it('records the policy when retention is first turned on', () => {
    spec(record).given([]).when(on).then([eventOf('RetentionPolicyRecorded', on)], { changed: true });
  });

  it('records nothing when the policy in force is the one last recorded', () => {
    spec(record).given([eventOf('RetentionPolicyRecorded', on)]).when(on).then([], { changed: false });
  });

  it('records a changed retention of one kind, and turning retention off', () => {
    const shorter = { ...on, days: { ...on.days, evidence: 7 } };
    spec(record).given([eventOf('RetentionPolicyRecorded', on)]).when(shorter).then([eventOf('RetentionPolicyRecorded', shorter)], { changed: true });
    spec(record).given([eventOf('RetentionPolicyRecorded', on)]).when(off).then([eventOf('RetentionPolicyRecorded', off)], { changed: true });
  });
});
