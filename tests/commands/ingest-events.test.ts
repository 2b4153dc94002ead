import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decideIngestEvents } from '../../src/commands/ingest-events.js';
import { spec } from '../helpers/decider-spec.js';
import { eventsIngested, normalizedEvent, rawRecordsIngested } from '../helpers/event-fixtures.js';

const e1 = normalizedEvent({ id: 'evt-1' });
const e2 = normalizedEvent({ id: 'evt-2', attributes: { note: 'second' } });
/** evt-1 again with other content. */
const e1Changed = normalizedEvent({ id: 'evt-1', attributes: { note: 'changed' } });
const none = { alerts: [], incidents: [] };

describe('decideIngestEvents', () => {
  it('stores a batch of new events in one EventsIngested record and answers every event accepted', () => {
    spec(decideIngestEvents).given([]).when([e1, e2]).then([eventsIngested(e1, e2)], { accepted: [e1, e2], duplicates: 0, ...none });
  });

  it('records nothing for an identical resend, and still answers the events accepted', () => {
    spec(decideIngestEvents).given([eventsIngested(e1)]).when([e1]).then([], { accepted: [e1], duplicates: 1, ...none });
  });

  it('recognises a resend whose object keys come in another order as the same event', () => {
    const reordered = Object.fromEntries(Object.entries(e1).reverse()) as typeof e1;
    spec(decideIngestEvents).given([eventsIngested(e1)]).when([reordered]).then([], { accepted: [reordered], duplicates: 1, ...none });
  });

  it('stores only the new events of a batch that mixes resent and new ones', () => {
    spec(decideIngestEvents).given([eventsIngested(e1)]).when([e1, e2]).then([eventsIngested(e2)], { accepted: [e1, e2], duplicates: 1, ...none });
  });

  it('stores an event repeated identically within one batch once', () => {
    spec(decideIngestEvents).given([]).when([e1, e1]).then([eventsIngested(e1)], { accepted: [e1, e1], duplicates: 1, ...none });
  });

  it('refuses the whole batch when an id is already stored with other content, naming the id', () => {
    const rejection = spec(decideIngestEvents).given([eventsIngested(e1)]).when([e2, e1Changed])
      .thenRejects('conflict', /already stored with different content: evt-1$/);
    assert.deepEqual(rejection.details, { conflictingIds: ['evt-1'] });
  });

  it('refuses a batch that reuses an id with other content within itself', () => {
    spec(decideIngestEvents).given([]).when([e1, e1Changed]).thenRejects('conflict', /evt-1/);
  });

  it('compares against events stored by raw ingestion too', () => {
    spec(decideIngestEvents).given([rawRecordsIngested('syslog-rfc5424', ['<13>1 ...'], [e1])]).when([e1Changed]).thenRejects('conflict', /evt-1/);
  });
});
