import * as v from 'valibot';
import { DestinationStatusSchema } from '../../services/export/destination.js';
import type { AppDeps } from '../env.js';
import { route, type Route } from '../route.js';

/**
 * Each destination's delivery state, live from the running exporters (a cluster's follower: as the log records it;
 * empty when export is off).
 */
function statuses(deps: AppDeps) {
  return deps.exports?.() ?? [];
}

const listExportsRoute = route({
  method: 'get',
  path: '/api/v1/exports',
  operationId: 'listExports',
  summary: 'Export destinations: kind, what each carries, cursor, lag, last success and last error',
  permission: 'exports:read',
  audit: 'list_exports',
  success: {
    status: 200,
    description:
      '`{enabled, destinations: [{name, kind, target, carries, includeRaw, cursor, head, lagRecords, state, ' +
      "lastSuccessAt?, lastError?, delivered, failedAttempts, deliveredBy?}]}`; on a cluster's follower " +
      '`deliveredBy: "leader"` and the cursor and state the log records',
    schema: v.strictObject({ enabled: v.boolean(), destinations: v.array(DestinationStatusSchema) }),
  },
  errors: [],
  handle: (c, { deps }) => {
    const destinations = statuses(deps);
    return c.json({ enabled: destinations.length > 0, destinations });
  },
});

/** Export status routes. */
export const exportRoutes: readonly Route[] = [listExportsRoute];
