import { route, type Route } from '../route.js';
import { HttpError } from '../errors.js';

const readMetricsRoute = route({
  method: 'get', path: '/metrics', operationId: 'readMetrics',
  summary: 'Prometheus metrics in the text exposition format (docs/shippers.md "Prometheus"); unauthenticated from loopback only with `server.allowLoopbackMetrics`',
  permission: 'metrics:read', audit: 'read_metrics',
  success: { status: 200, description: 'Prometheus text exposition format 0.0.4' }, errors: [],
  handle: async (c, { deps }) => {
    if (!deps.metrics) throw new HttpError(404, 'no metrics on this app');
    const text = await deps.metrics.registry.metrics();
    return c.body(text, 200, { 'content-type': deps.metrics.registry.contentType });
  },
});

/** `GET /metrics` (viewer, admin, or loopback with `server.allowLoopbackMetrics`). */
export const metricsRoutes: readonly Route[] = [readMetricsRoute];
