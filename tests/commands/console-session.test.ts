import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decideEndConsoleSession, decideStartConsoleSession, type EndConsoleSession, type StartConsoleSession } from '../../src/commands/console-session.js';
import { eventOf } from '../../src/events/union.js';
import { spec } from '../helpers/decider-spec.js';

const HASH = 'a'.repeat(64);
const ctx = { now: '2026-11-22T10:00:00.000Z', actor: { id: 'ana', authentication: 'bearer' } };
const start = spec((m, c: Partial<StartConsoleSession>) => decideStartConsoleSession(m.consoleSessions, { sessionHash: HASH, principal: 'ana', authentication: 'bearer', idleMinutes: 30, maxHours: 12, sourceAddress: '127.0.0.1', ...c }, ctx));
const end = spec((m, c: EndConsoleSession) => decideEndConsoleSession(m.consoleSessions, c));
const started = (over: { sessionHash?: string; expiresAt?: string } = {}) => eventOf('ConsoleSessionStarted', { sessionHash: HASH, principal: 'ana', authentication: 'bearer', expiresAt: '2026-11-22T22:00:00.000Z', idleMinutes: 30, sourceAddress: '127.0.0.1', ...over });

describe('console session deciders', () => {
  it('starts a session that ends at most maxHours from now', () => {
    start.given([]).when({}).then([started()], { expiresAt: '2026-11-22T22:00:00.000Z' });
  });

  it('refuses to start a session whose secret is already in use', () => {
    start.given([started()]).when({}).thenRejects('conflict');
  });

  it('ends an open session with its reason, naming its principal', () => {
    const { models } = end.given([started()]).when({ sessionHash: HASH, reason: 'signed_out' })
      .then([eventOf('ConsoleSessionEnded', { sessionHash: HASH, principal: 'ana', reason: 'signed_out' })], { ended: true });
    assert.deepEqual(models.consoleSessions.byHash, {});
  });

  it('refuses to end a session that is not open (signing out twice changes nothing)', () => {
    end.given([started(), eventOf('ConsoleSessionEnded', { sessionHash: HASH, principal: 'ana', reason: 'idle' })]).when({ sessionHash: HASH, reason: 'signed_out' }).thenRejects('not_found');
  });

  it('forgets sessions past their absolute end when a later session starts', () => {
    const other = 'b'.repeat(64);
    const { models } = start.given([started({ expiresAt: '2026-11-22T09:00:00.000Z' })]).when({ sessionHash: other }).thenAccepts(() => {});
    assert.deepEqual(Object.keys(models.consoleSessions.byHash), [other]);
  });
});
