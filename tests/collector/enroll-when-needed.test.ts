import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { hashToken } from '../../src/auth/tokens.js';
import { needsEnrollment } from '../../src/clients/collector/enroll.js';
import { tempDir } from '../helpers/temp.js';

describe('collector enrollment from enrollmentTokenFile', () => {
  it('enrolls when there is no enrollment, a new token or another server, and not again with the same token', () => {
    const d = tempDir();
    const token = `lce_${'a'.repeat(43)}`;
    assert.equal(needsEnrollment(d.path, 'http://central:4173', token), true, 'never enrolled');
    const state = { collectorId: 'vm-web', server: 'http://central:4173', epoch: 1, keyFingerprint: 'f'.repeat(64), enrolledAt: '2026-11-22T10:00:00.000Z' };
    writeFileSync(join(d.path, 'enrollment.json'), JSON.stringify(state));
    assert.equal(needsEnrollment(d.path, 'http://central:4173', token), true, 'an enrollment that recorded no token hash');
    writeFileSync(join(d.path, 'enrollment.json'), JSON.stringify({ ...state, tokenSha256: hashToken(token) }));
    assert.equal(needsEnrollment(d.path, 'http://central:4173', token), false, 'the same token is not redeemed twice');
    assert.equal(needsEnrollment(d.path, 'http://central:4173', `lce_${'b'.repeat(43)}`), true, 'a new epoch token');
    assert.equal(needsEnrollment(d.path, 'http://other:4173', token), true, 'another central instance');
    d.cleanup();
  });
});
