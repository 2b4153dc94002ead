import { describe, it } from 'node:test';
import { decideIngestRaw } from '../../src/commands/ingest-raw.js';
import { eventOf } from '../../src/events/union.js';
import { spec } from '../helpers/decider-spec.js';
import { eventsIngested, normalizedEvent, rawRecordsIngested } from '../helpers/event-fixtures.js';

const e1 = normalizedEvent({ id: 'raw-1' });
const e2 = normalizedEvent({ id: 'raw-2' });
const e3 = normalizedEvent({ id: 'raw-3' });
const none = { alerts: [], incidents: [] };

describe('decideIngestRaw', () => {
  it('keeps new raw records beside the events they became, with the normalizer and its options', () => {
    spec(decideIngestRaw).given([]).when({ normalizer: 'mesh-vpn-logs', logType: 'audit', meshnet: 'corp', normalized: [{ record: { a: 1 }, events: [e1] }, { record: { a: 2 }, events: [e2] }] })
      .then([eventOf('RawRecordsIngested', { normalizer: 'mesh-vpn-logs', logType: 'audit', meshnet: 'corp', records: [{ a: 1 }, { a: 2 }], events: [e1, e2] })], { accepted: [e1, e2], duplicates: 0, ...none });
  });

  it('skips a record whose events are all stored already (the same raw record sent again)', () => {
    spec(decideIngestRaw).given([rawRecordsIngested('syslog-rfc5424', ['line 1'], [e1])])
      .when({ normalizer: 'syslog-rfc5424', normalized: [{ record: 'line 1', events: [e1] }, { record: 'line 2', events: [e2] }] })
      .then([rawRecordsIngested('syslog-rfc5424', ['line 2'], [e2])], { accepted: [e1, e2], duplicates: 1, ...none });
  });

  it('records nothing when every record of the batch was ingested before, and answers its events accepted', () => {
    spec(decideIngestRaw).given([eventsIngested(e1, e2)])
      .when({ normalizer: 'syslog-rfc5424', normalized: [{ record: 'line 1', events: [e1] }, { record: 'line 2', events: [e2] }] })
      .then([], { accepted: [e1, e2], duplicates: 2, ...none });
  });

  it('keeps a record with one new event of several, storing only the new event', () => {
    spec(decideIngestRaw).given([eventsIngested(e1)])
      .when({ normalizer: 'linux-journal', normalized: [{ record: { MESSAGE: 'x' }, events: [e1, e3] }] })
      .then([rawRecordsIngested('linux-journal', [{ MESSAGE: 'x' }], [e3])], { accepted: [e1, e3], duplicates: 1, ...none });
  });

  it('dedupes by id within the batch: a second record with the same event id is not kept again', () => {
    spec(decideIngestRaw).given([])
      .when({ normalizer: 'syslog-rfc5424', normalized: [{ record: 'line 1', events: [e1] }, { record: 'line 1 again', events: [e1] }] })
      .then([rawRecordsIngested('syslog-rfc5424', ['line 1'], [e1])], { accepted: [e1, e1], duplicates: 1, ...none });
  });

  it('keeps a raw record that normalized to no event at all', () => {
    spec(decideIngestRaw).given([])
      .when({ normalizer: 'syslog-rfc5424', normalized: [{ record: 'a heartbeat', events: [] }] })
      .then([rawRecordsIngested('syslog-rfc5424', ['a heartbeat'], [])], { accepted: [], duplicates: 0, ...none });
  });
});
