import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as v from 'valibot';
import { batchOf, validateRecords } from '../../src/http/batch.js';
import { HttpError } from '../../src/http/errors.js';

/** The status, message and issues batchOf throws for `body` with a limit of 3 records. */
function refusal(body: unknown): [number, string, readonly string[] | undefined] {
  try {
    batchOf(body, 3);
  } catch (err) {
    assert.ok(err instanceof HttpError);
    return [err.status, err.message, err.issues];
  }
  assert.fail(`accepted ${JSON.stringify(body)}`);
}

const NOT_A_BATCH = '(body): expected an array of records, an object {records, context}, or one JSON object per line (Content-Type: application/x-ndjson)';

describe('batchOf', () => {
  it('takes an array of records or {records, context}', () => {
    assert.deepEqual(batchOf([1, { a: 2 }], 3), { records: [1, { a: 2 }] });
    assert.deepEqual(batchOf({ records: [1] }, 3), { records: [1] });
    assert.deepEqual(batchOf({ records: [1, 2, 3], context: { resource: { host: 'h1' } } }, 3), { records: [1, 2, 3], context: { resource: { host: 'h1' } } });
  });

  it('refuses a body that is neither, whatever it is', () => {
    for (const body of [null, 5, 'x', true, { nope: [] }, { records: 'x' }, { records: { 0: 1 } }]) {
      assert.deepEqual(refusal(body), [400, 'invalid batch', [NOT_A_BATCH]], JSON.stringify(body));
    }
  });

  it('refuses an empty batch in either form at records', () => {
    assert.deepEqual(refusal([]), [400, 'invalid batch', ['records: expected at least one record']]);
    assert.deepEqual(refusal({ records: [] }), [400, 'invalid batch', ['records: expected at least one record']]);
  });

  it('names every unknown key of {records, context}', () => {
    assert.deepEqual(refusal({ records: [1], resource: {}, scope: {} }), [400, 'invalid batch', [
      'resource: unknown key (expected records and context)',
      'scope: unknown key (expected records and context)',
    ]]);
  });

  it('wants a context that is an object, not an array or null', () => {
    for (const context of [[], null, 5, 'x']) {
      assert.deepEqual(refusal({ records: [1], context }), [400, 'invalid batch', ['context: expected an object']], JSON.stringify(context));
    }
  });

  it('answers too many records with 413, in either form', () => {
    assert.deepEqual(refusal([1, 2, 3, 4]), [413, 'batch of 4 records exceeds the limit of 3', undefined]);
    assert.deepEqual(refusal({ records: [1, 2, 3, 4] }), [413, 'batch of 4 records exceeds the limit of 3', undefined]);
  });

  it('names every problem at once when a batch has more than one', () => {
    const [status, , issues] = refusal({ records: [1, 2, 3, 4], context: [], extra: 1 });
    assert.equal(status, 400);
    assert.deepEqual(issues, ['records: batch of 4 records exceeds the limit of 3', 'context: expected an object', 'extra: unknown key (expected records and context)']);
  });
});

describe('validateRecords', () => {
  it('names every bad record by index and accepts none of them', () => {
    const schema = v.strictObject({ n: v.number() });
    assert.deepEqual(validateRecords(schema, [{ n: 1 }, { n: 2 }]), [{ n: 1 }, { n: 2 }]);
    assert.throws(() => validateRecords(schema, [{ n: 1 }, { n: 'x' }, {}]), (err: unknown) => {
      assert.ok(err instanceof HttpError);
      assert.equal(err.message, 'invalid records: the batch was not accepted');
      assert.deepEqual(err.issues?.map((i) => i.split(':')[0]), ['records[1].n', 'records[2].n']);
      return true;
    });
  });
});
