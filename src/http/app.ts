import { Hono } from 'hono';
import { cidrSet } from '../kernel/cidr.js';
import type { AppDeps, AppEnv, NetPolicy } from './env.js';
import { HttpError, sendError } from './errors.js';
import { errorHandler, requestIds } from './middleware.js';
import { registerRoutes } from './route-table.js';
import { registerConsole } from './console/app.js';
import { createMetrics } from '../services/metrics/metrics.js';
import { COLLECTORS, type CollectorsState } from '../projections/collectors.js';
import { SYSTEM_LINKS_KEPT, type AlertsState } from '../projections/alerts.js';

/** Routes registered on the app, for 405 answers: a method and a path pattern each. */
function methodsFor(app: Hono<AppEnv>, path: string): string[] {
  const allowed = new Set<string>();
  for (const r of app.routes) {
    if (r.method === 'ALL') continue;
    const pattern = new RegExp(`^${r.path.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\/:[^/]+/g, '/[^/]+')}$`);
    if (pattern.test(path)) allowed.add(r.method);
  }
  return [...allowed];
}

function* openSeverities(s: AlertsState): Iterable<number> {
  for (const a of s.alerts.values()) if (a.status !== 'dismissed') yield a.severity;
}

/** The instance's Hono app, apart from listening, so tests can call `app.request()`. */
export function createApp(given: AppDeps): Hono<AppEnv> {
  const metrics = given.metrics ?? createMetrics();
  const deps: AppDeps = { ...given, metrics };
  metrics.observe({
    queue: () => deps.admission.depth(),
    readSideApplied: () => deps.reads.seq(),
    openAlertSeverities: () => openSeverities(deps.reads.alerts),
    alertSystemLinks: () => ({ kept: deps.reads.alerts.systemLinks, limit: SYSTEM_LINKS_KEPT }),
    collectorLastSeen: () => [...deps.reads.collectors.collectors.values()].map((c) => c.lastAcceptedAt),
    ...(deps.exports ? { exports: deps.exports } : {}),
    ...(deps.ruleCosts ? { ruleCosts: () => deps.ruleCosts!.all() } : {}),
    now: deps.now,
  });
  const app = new Hono<AppEnv>();
  const net: NetPolicy = {
    approved: cidrSet(deps.config.server.approvedSourceAddresses),
    trustedProxies: cidrSet(deps.config.server.trustedProxies),
  };

  app.use('*', requestIds());

  registerRoutes(app, deps, net);
  registerConsole(app, deps, net);

  app.notFound((c) => {
    const allowed = methodsFor(app, c.req.path);
    if (allowed.length > 0) {
      c.header('Allow', allowed.join(', '));
      return sendError(
        c,
        new HttpError(405, `method ${c.req.method} is not allowed on ${c.req.path}; allowed: ${allowed.join(', ')}`),
      );
    }
    return sendError(c, new HttpError(404, 'no such route'));
  });

  app.onError(errorHandler(deps.log));

  return app;
}
