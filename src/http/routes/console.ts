import { detectionPlan } from '../../projections/plan.js';
import type { ActivityState } from '../../projections/activity.js';
import type { AlertsState } from '../../projections/alerts.js';
import { ConsoleViewSchema, consoleView, type ConsoleView } from '../../projections/console-query.js';
import type { DetectionState } from '../../projections/detection.js';
import type { SourcesState } from '../../projections/sources.js';
import type { AppDeps } from '../env.js';
import { route, type Route } from '../route.js';

/**
 * The console projection as of every write acknowledged before the call: what `GET /api/v1/console`
 * answers, and what the console's pages render.
 */
export async function readConsole(deps: AppDeps): Promise<ConsoleView> {
  await deps.readYourWrites();
  const m = deps.reads;
  const now = deps.now();
  const dep = deps.config.deployment;
  const reporter = deps.deployment?.();
  return consoleView({
    alerts: m.alerts,
    activity: m.activity,
    plan: detectionPlan(m.detection, m.sources, now, deps.config.detection.freshnessHours),
    now,
    ...(dep
      ? {
          deployment: {
            deploymentId: dep.deploymentId,
            authorityUrl: dep.authorityUrl,
            ...(dep.centralVmId ? { centralVmId: dep.centralVmId } : {}),
            ...(reporter ? { reporter } : {}),
          },
        }
      : {}),
  });
}

/** When `/api/snapshot` was marked deprecated (RFC 9745 `Deprecation`: a structured-field date). */
const SNAPSHOT_DEPRECATED_AT = '@1795392000';

const readConsoleRoute = route({
  method: 'get',
  path: '/api/v1/console',
  operationId: 'readConsole',
  summary:
    'The raw-log-free console projection: alerts and incidents by state, systems reporting, sources and rates, the ' +
    'plan, the deployment',
  permission: 'console:read',
  audit: 'read_console',
  success: { status: 200, description: 'ConsoleView', schema: ConsoleViewSchema },
  errors: [],
  handle: async (c, { deps }) => c.json(await readConsole(deps)),
});

const readLegacySnapshotRoute = route({
  method: 'get',
  path: '/api/snapshot',
  operationId: 'readLegacySnapshot',
  summary:
    "Unsupported for integrations (spec 9): the temporary browser fixture, the console projection's shape; use " +
    '/api/v1/console',
  permission: 'console:read',
  audit: 'read_legacy_snapshot',
  success: {
    status: 200,
    description: 'ConsoleView, with `Deprecation`, `Warning` and a `Link` to /api/v1/console',
    schema: ConsoleViewSchema,
  },
  errors: [],
  handle: async (c, { deps }) => {
    const view = await readConsole(deps);
    c.header('Deprecation', SNAPSHOT_DEPRECATED_AT);
    c.header(
      'Warning',
      '299 vigil "unsupported: /api/snapshot is a temporary browser fixture; integrations use /api/v1/console ' +
        '(docs/api.md)"',
    );
    c.header('Link', '</api/v1/console>; rel="successor-version"');
    c.header('Cache-Control', 'no-store');
    return c.json(view);
  },
});

/** The console projection and its legacy alias. */
export const consoleRoutes: readonly Route[] = [readConsoleRoute, readLegacySnapshotRoute];
