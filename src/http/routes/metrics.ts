import * as v from 'valibot';
import { route, type Route } from '../route.js';
import { HttpError } from '../errors.js';

const readMetricsRoute = route({
  method: 'get',
  path: '/metrics',
  operationId: 'readMetrics',
  summary:
    'Prometheus metrics in the text exposition format (docs/shippers.md "Prometheus"); unauthenticated from loopback ' +
    'only with `server.allowLoopbackMetrics`',
  permission: 'metrics:read',
  audit: 'read_metrics',
  // A scrape job's `params` (some exporters take a `collect[]`) are ignored: every metric is served.
  query: v.object({}),
  success: {
    status: 200,
    description: 'Prometheus text exposition format 0.0.4',
    media: { 'text/plain; version=0.0.4; charset=utf-8': 'Prometheus text exposition format 0.0.4' },
  },
  errors: [],
  handle: async (c, { deps }) => {
    if (!deps.metrics) throw new HttpError(404, 'no metrics on this app');
    // Gauges see every write acknowledged before the scrape; a read side too far behind still gets
    // its metrics (the lag gauge is what says so) rather than a 503.
    await deps.readYourWrites().catch(() => undefined);
    const text = await deps.metrics.registry.metrics();
    return c.body(text, 200, { 'content-type': deps.metrics.registry.contentType });
  },
});

/** `GET /metrics` (viewer, admin, or loopback with `server.allowLoopbackMetrics`). */
export const metricsRoutes: readonly Route[] = [readMetricsRoute];
