import type { Hono, MiddlewareHandler } from 'hono';
import type { AppDeps, AppEnv, NetPolicy } from './env.js';
import { guard } from './guard.js';
import { honoPath, isGuarded, type Route } from './route.js';
import { coreRoutes } from './routes/core.js';
import { eventRoutes } from './routes/events.js';
import { ingestRoutes } from './routes/ingest.js';
import { collectorRoutes } from './routes/collectors.js';
import { ruleRoutes } from './routes/rules.js';
import { exceptionRoutes } from './routes/exceptions.js';
import { intelRoutes } from './routes/intel.js';
import { searchRoutes } from './routes/search.js';
import { alertRoutes } from './routes/alerts.js';
import { logRoutes } from './routes/log.js';
import { consoleRoutes } from './routes/console.js';
import { exportRoutes } from './routes/exports.js';
import { otlpRoutes } from './routes/otlp.js';
import { metricsRoutes } from './routes/metrics.js';
import { timed } from './request-metrics.js';
import { healthRoutes } from './routes/health.js';
import { refuseWritesPastFlood } from './disk-guard.js';
import { credentialRoutes } from './routes/credentials.js';
import { queryShape } from './query.js';

/** Every operation of the instance, in registration and documentation order. */
export const ROUTES: readonly Route[] = [
  ...coreRoutes,
  ...eventRoutes,
  ...ingestRoutes,
  ...collectorRoutes,
  ...ruleRoutes,
  ...exceptionRoutes,
  ...intelRoutes,
  ...searchRoutes,
  ...alertRoutes,
  ...logRoutes,
  ...exportRoutes,
  ...consoleRoutes,
  ...otlpRoutes,
  ...metricsRoutes,
  ...healthRoutes,
  ...credentialRoutes,
];

/**
 * Registers every route of the table on `app`: the guard of its permission, route template and
 * audit label (public routes have none), the check of its query's shape, its own middleware, then
 * its handler.
 */
export function registerRoutes(
  app: Hono<AppEnv>,
  deps: AppDeps,
  net: NetPolicy,
  routes: readonly Route[] = ROUTES,
): void {
  for (const r of routes) {
    const scope = { deps, net, route: r };
    const handlers: MiddlewareHandler<AppEnv>[] = [
      ...(deps.metrics ? [timed(deps.metrics, r.method.toUpperCase(), r.path)] : []),
      ...(isGuarded(r) ? [guard(deps, net, r.path, r.audit, r.permission)] : []),
      ...(r.method !== 'get' ? [refuseWritesPastFlood(deps)] : []),
      queryShape(r.query === undefined ? 'none' : r.query.type === 'strict_object' ? 'strict' : 'any'),
      ...(r.middleware?.(deps) ?? []),
      async (c) => r.handle(c, scope),
    ];
    app.on(r.method.toUpperCase(), [honoPath(r.path)], ...handlers);
  }
}
