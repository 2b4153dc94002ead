import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { stringifyBounded } from '../kernel/json/depth.js';

/**
 * A JSON response of values read from the log (events, evidence, graph entities): serialized so
 * that a value nested past the edge's bound, which only an old log can hold, is clamped instead of
 * failing the whole read.
 */
export function storedJson(c: Context, body: unknown, status: ContentfulStatusCode = 200): Response {
  return c.body(stringifyBounded(body), status, { 'Content-Type': 'application/json' });
}
