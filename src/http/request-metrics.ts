import type { MiddlewareHandler } from 'hono';
import type { Metrics } from '../services/metrics/metrics.js';
import type { AppEnv } from './env.js';

/** Observes the duration of every request of one route, labelled by its template (a closed set). */
export function timed(metrics: Metrics, method: string, template: string): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const end = metrics.httpDuration.startTimer({ method, route: template });
    try {
      await next();
    } finally {
      end({ status: `${String(c.res.status).slice(0, 1)}xx` });
    }
  };
}
