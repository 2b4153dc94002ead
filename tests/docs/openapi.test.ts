import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { openApiDocument } from '../../src/http/openapi.js';
import { repoPath } from '../helpers/paths.js';

describe('docs/openapi.json', () => {
  it('is the document generated from the valibot schemas (run `npm run openapi` when this fails)', () => {
    const committed = JSON.parse(readFileSync(repoPath('docs', 'openapi.json'), 'utf8')) as unknown;
    assert.deepEqual(committed, openApiDocument());
  });

  it('describes every route with an ErrorResponse for each error status', () => {
    const doc = openApiDocument() as { paths: Record<string, Record<string, { responses: Record<string, { content?: { 'application/json': { schema: { $ref?: string } } } }> }>> };
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        for (const [status, r] of Object.entries(op.responses)) {
          if (Number(status) >= 400) assert.equal(r.content?.['application/json'].schema.$ref, '#/components/schemas/ErrorResponse', `${method} ${path} ${status}`);
        }
      }
    }
  });
});
