import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_TAXII_BOUNDS, pollTaxiiCollection } from '../../src/services/intel/taxii-client.js';
import { FeedFetchError } from '../../src/services/intel/bounded-get.js';
import { TAXII_MEDIA, startTaxiiServer, type TaxiiServer } from '../helpers/taxii-server.js';

const TOKEN = 'Bearer taxii-test-token-9f2c';

/** `n` STIX 2.1 indicators for domains `evil-<i>.example`, added a millisecond apart from 2026-11-01. */
function indicators(n: number, from = 0) {
  return Array.from({ length: n }, (_, k) => {
    const i = from + k;
    return {
      object: {
        type: 'indicator',
        spec_version: '2.1',
        id: `indicator--00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
        created: '2026-11-01T00:00:00.000Z',
        modified: '2026-11-01T00:00:00.000Z',
        pattern_type: 'stix',
        pattern: `[domain-name:value = 'evil-${i}.example']`,
        valid_from: '2026-11-01T00:00:00Z',
      },
      dateAdded: new Date(Date.parse('2026-11-01T00:00:00.000Z') + i).toISOString(),
    };
  });
}

const ids = (objects: unknown[]) => objects.map((o) => (o as { id: string }).id);

describe('the TAXII 2.1 client against a server that follows the specification', () => {
  let paged: TaxiiServer;
  let dated: TaxiiServer;
  before(async () => {
    paged = await startTaxiiServer({ objects: indicators(25), authorization: TOKEN, pageSize: 10 });
    dated = await startTaxiiServer({ objects: indicators(25), authorization: TOKEN, pageSize: 10, withNext: false });
  });
  after(async () => {
    await paged.close();
    await dated.close();
  });

  it('finds the API root and the collection from discovery, and reads every page by next', async () => {
    const poll = await pollTaxiiCollection(
      { url: paged.discoveryUrl, collection: paged.collectionId, authorization: TOKEN },
      undefined,
      { ...DEFAULT_TAXII_BOUNDS, pageSize: 10 },
    );
    assert.equal(poll.objects.length, 25);
    assert.deepEqual(ids(poll.objects), ids(indicators(25).map((s) => s.object)));
    assert.equal(poll.pages, 3);
    assert.equal(poll.complete, true);
    assert.equal(poll.addedLast, indicators(25)[24]!.dateAdded);
    const objectRequests = paged.requests.filter((r) => r.path.endsWith('/objects/'));
    assert.deepEqual(
      objectRequests.map((r) => r.query['next'] ?? null),
      [null, '10', '20'],
    );
    assert.ok(objectRequests.every((r) => r.query['limit'] === '10'));
  });

  it('asks only for what was added after its last poll, and takes the collection by title too', async () => {
    const since = indicators(25)[19]!.dateAdded;
    const poll = await pollTaxiiCollection(
      { url: paged.apiRootUrl, collection: 'Indicators', authorization: TOKEN },
      since,
    );
    assert.deepEqual(
      ids(poll.objects),
      ids(
        indicators(25)
          .slice(20)
          .map((s) => s.object),
      ),
    );
    paged.add([{ type: 'indicator', id: 'indicator--new', pattern: "[ipv4-addr:value = '198.51.100.7']" }]);
    const later = await pollTaxiiCollection(
      { url: paged.discoveryUrl, collection: paged.collectionId, authorization: TOKEN },
      poll.addedLast,
    );
    assert.deepEqual(ids(later.objects), ['indicator--new']);
    const none = await pollTaxiiCollection(
      { url: paged.discoveryUrl, collection: paged.collectionId, authorization: TOKEN },
      later.addedLast,
    );
    assert.deepEqual(none.objects, []);
    assert.equal(none.addedLast, later.addedLast, 'an empty poll keeps the point it resumes from');
  });

  it('pages by added_after from X-TAXII-Date-Added-Last where the server gives no next', async () => {
    const poll = await pollTaxiiCollection(
      { url: dated.discoveryUrl, collection: dated.collectionId, authorization: TOKEN },
      undefined,
      { ...DEFAULT_TAXII_BOUNDS, pageSize: 10 },
    );
    assert.equal(poll.objects.length, 25);
    const afters = dated.requests
      .filter((r) => r.path.endsWith('/objects/'))
      .map((r) => r.query['added_after'] ?? null);
    assert.deepEqual(afters, [null, indicators(25)[9]!.dateAdded, indicators(25)[19]!.dateAdded]);
  });

  it('stops at its bounds with complete: false, and the next poll resumes where it stopped', async () => {
    const bounds = { ...DEFAULT_TAXII_BOUNDS, pageSize: 10, maxPages: 2 };
    const first = await pollTaxiiCollection(
      { url: dated.discoveryUrl, collection: dated.collectionId, authorization: TOKEN },
      undefined,
      bounds,
    );
    assert.equal(first.complete, false);
    assert.equal(first.objects.length, 20);
    const rest = await pollTaxiiCollection(
      { url: dated.discoveryUrl, collection: dated.collectionId, authorization: TOKEN },
      first.addedLast,
      bounds,
    );
    assert.equal(rest.complete, true);
    assert.deepEqual([...ids(first.objects), ...ids(rest.objects)], ids(indicators(25).map((s) => s.object)));
  });

  it('fails clearly, without the credential in the message: a wrong token, an unknown or unreadable collection, a server down', async () => {
    const reject = (p: Promise<unknown>, status: number, text: RegExp) =>
      assert.rejects(
        p,
        (err: unknown) =>
          err instanceof FeedFetchError &&
          err.status === status &&
          text.test(err.message) &&
          !err.message.includes('taxii-test-token'),
      );
    await reject(
      pollTaxiiCollection({ url: paged.discoveryUrl, collection: paged.collectionId, authorization: 'Bearer wrong' }),
      401,
      /401 authentication required/,
    );
    await reject(
      pollTaxiiCollection({ url: paged.discoveryUrl, collection: 'nope', authorization: TOKEN }),
      404,
      /no collection nope/,
    );
    await reject(
      pollTaxiiCollection({ url: paged.discoveryUrl, collection: 'Write only', authorization: TOKEN }),
      403,
      /cannot be read/,
    );
    paged.setDown(true);
    try {
      await reject(
        pollTaxiiCollection({ url: paged.discoveryUrl, collection: paged.collectionId, authorization: TOKEN }),
        503,
        /503 down for the test/,
      );
    } finally {
      paged.setDown(false);
    }
    await reject(
      pollTaxiiCollection({ url: 'http://127.0.0.1:9/taxii2/', collection: 'x', authorization: TOKEN }, undefined, {
        ...DEFAULT_TAXII_BOUNDS,
        timeoutMs: 2000,
      }),
      0,
      /no answer/,
    );
  });

  it('is a server that answers 406 to a client that does not accept TAXII 2.1, and 401 without the credential', async () => {
    const plain = await fetch(paged.discoveryUrl, { headers: { authorization: TOKEN, accept: 'application/json' } });
    assert.equal(plain.status, 406);
    assert.equal(plain.headers.get('content-type'), TAXII_MEDIA);
    assert.equal((await fetch(paged.discoveryUrl, { headers: { accept: TAXII_MEDIA } })).status, 401);
  });
});
