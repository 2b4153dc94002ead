import * as v from 'valibot';
import { route, type Route } from '../route.js';

const Count = v.pipe(v.number(), v.integer());
const Silent = v.strictObject({
  source: v.string(),
  kind: v.picklist(['source', 'collector']),
  lastSeenAt: v.string(),
  alertId: v.string(),
});
const Time = v.nullable(v.string());
const Witnesses = v.strictObject({
  status: v.picklist(['off', 'ok', 'stale']),
  maxAgeSeconds: Count,
  lastCosignedAt: Time,
  ageSeconds: v.nullable(Count),
  pushed: v.array(
    v.strictObject({
      name: v.string(),
      url: v.string(),
      state: v.picklist(['pending', 'ok', 'retrying', 'refused']),
      knownSize: Count,
      lastCosignedAt: Time,
      lastError: v.nullable(v.string()),
      nextAttemptAt: Time,
    }),
  ),
});
const Watched = (status: string) => ({ status: v.picklist(['ok', status]), watched: Count, silent: v.array(Silent) });

/** The answer of `GET /api/v1/health` (docs/monitoring.md). */
export const HealthDetailSchema = v.strictObject({
  status: v.picklist(['ok', 'degraded']),
  checkedAt: v.string(),
  components: v.strictObject({
    writer: v.strictObject({
      status: v.picklist(['ok', 'saturated']),
      queue: v.strictObject({ requests: Count, bytes: Count, records: Count, maxBytes: Count, maxRecords: Count }),
      headSeq: v.nullable(Count),
    }),
    readSide: v.strictObject({ status: v.picklist(['ok', 'behind']), appliedSeq: v.nullable(Count), lag: Count }),
    disk: v.union([
      v.strictObject({
        status: v.string(),
        writesRefused: v.boolean(),
        freeBytes: v.number(),
        totalBytes: v.number(),
        freePercent: v.number(),
        sampledAt: v.string(),
        watermarks: v.pipe(v.looseObject({}), v.description('the watermarks in force (docs/monitoring.md)')),
      }),
      v.strictObject({ status: v.literal('unknown') }),
    ]),
    sources: v.strictObject(Watched('silent')),
    collectors: v.strictObject(Watched('silent')),
    exports: v.strictObject({
      status: v.picklist(['off', 'ok', 'retrying', 'failing']),
      destinations: v.array(
        v.strictObject({
          name: v.string(),
          kind: v.picklist(['webhook', 'otlp', 'syslog']),
          state: v.picklist(['delivering', 'retrying', 'failing']),
          lagRecords: Count,
          lastSuccessAt: v.optional(v.string()),
          deliveredBy: v.optional(v.literal('leader')),
        }),
      ),
    }),
    witnesses: Witnesses,
  }),
});

/**
 * `GET /api/v1/health`: each component's state for operators (admin only), while `/health` stays
 * aggregate. Read from the live process, not the read side: it answers even when the read side lags.
 */
const readHealthDetailRoute = route({
  method: 'get',
  path: '/api/v1/health',
  operationId: 'readHealthDetail',
  summary:
    "Each component's state: writer queue, read-side lag, disk and watermarks, silent sources and collectors, export " +
    "lag, the witnesses' cosignatures",
  permission: 'health:detail',
  audit: 'read_health_detail',
  success: {
    status: 200,
    description:
      '`{status, checkedAt, components: {writer, readSide, disk, sources, collectors, exports, witnesses}}` ' +
      '(docs/monitoring.md)',
    schema: HealthDetailSchema,
  },
  errors: [],
  handle: (c, { deps }) => {
    const queue = deps.admission.depth();
    const limits = deps.config.limits;
    const monitor = deps.monitor;
    const progress = monitor?.progress();
    const disk = monitor?.disk();
    const sources = monitor?.sources();
    const lag = progress ? Math.max(0, progress.headSeq - progress.readSeq) : 0;
    const silentOf = (kind: 'source' | 'collector') =>
      (sources?.silent ?? []).filter((s) => s.kind === kind).slice(0, 1000);
    const sourcesSilent = silentOf('source');
    const collectorsSilent = silentOf('collector');
    const destinations = deps.exports?.() ?? [];
    const exportStatus =
      destinations.length === 0
        ? 'off'
        : destinations.some((d) => d.state === 'failing')
          ? 'failing'
          : destinations.some((d) => d.state === 'retrying')
            ? 'retrying'
            : 'ok';
    return c.json({
      status: monitor?.status() ?? 'ok',
      checkedAt: deps.now().toISOString(),
      components: {
        writer: {
          status:
            queue.records >= limits.ingestQueueEvents || queue.bytes >= limits.ingestQueueBytes ? 'saturated' : 'ok',
          queue: { ...queue, maxBytes: limits.ingestQueueBytes, maxRecords: limits.ingestQueueEvents },
          headSeq: progress?.headSeq ?? null,
        },
        readSide: { status: lag === 0 ? 'ok' : 'behind', appliedSeq: progress?.readSeq ?? null, lag },
        disk: disk
          ? {
              status: disk.level,
              writesRefused: disk.level === 'flood',
              freeBytes: disk.freeBytes,
              totalBytes: disk.totalBytes,
              freePercent: disk.freePercent,
              sampledAt: disk.sampledAt,
              watermarks: disk.watermarks,
            }
          : { status: 'unknown' },
        sources: {
          status: sourcesSilent.length > 0 ? 'silent' : 'ok',
          watched: sources?.watched.source ?? 0,
          silent: sourcesSilent,
        },
        collectors: {
          status: collectorsSilent.length > 0 ? 'silent' : 'ok',
          watched: sources?.watched.collector ?? 0,
          silent: collectorsSilent,
        },
        exports: {
          status: exportStatus,
          destinations: destinations.map((d) => ({
            name: d.name,
            kind: d.kind,
            state: d.state,
            lagRecords: d.lagRecords,
            ...(d.lastSuccessAt !== undefined ? { lastSuccessAt: d.lastSuccessAt } : {}),
            ...(d.deliveredBy !== undefined ? { deliveredBy: d.deliveredBy } : {}),
          })),
        },
        witnesses: deps.witnesses?.() ?? {
          status: 'off',
          maxAgeSeconds: deps.config.log.cosignedMaxAgeSeconds,
          lastCosignedAt: null,
          ageSeconds: null,
          pushed: [],
        },
      },
    });
  },
});

/** The admin's health detail. */
export const healthRoutes: readonly Route[] = [readHealthDetailRoute];
