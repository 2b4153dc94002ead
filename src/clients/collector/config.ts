import * as v from 'valibot';
import { CollectorId } from '../../events/collector-protocol/envelope.js';

const PathText = v.pipe(v.string(), v.minLength(1), v.maxLength(4096));
const Ms = (min: number, max: number, dflt: number) =>
  v.optional(v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max)), dflt);

/** The collector agent's configuration file (docs/collector-agent.md). Unknown keys are errors. */
export const AgentConfigSchema = v.strictObject({
  server: v.pipe(v.string(), v.url(), v.regex(/^https?:\/\//, 'expected an http(s) URL'), v.maxLength(2048)),
  collectorId: CollectorId,
  /** Key, spool and cursors live here (created 0700). */
  stateDir: PathText,
  /** File holding the bearer token of a `collector` credential (else VIGIL_COLLECTOR_TOKEN). */
  bearerTokenFile: v.optional(PathText),
  /**
   * File with the single-use enrollment token (`vce_` issued by the instance, `lce_` by the setup authority):
   * `collector run` enrolls with it whenever it holds a token not yet used here.
   */
  enrollmentTokenFile: v.optional(PathText),
  journal: v.optional(
    v.strictObject({ enabled: v.optional(v.boolean(), true), command: v.optional(PathText, 'journalctl') }),
    {},
  ),
  /** Syslog-format files to tail across rotation. */
  files: v.optional(v.pipe(v.array(PathText), v.maxLength(64)), []),
  facts: v.optional(v.strictObject({ intervalMs: Ms(1000, 86_400_000, 300_000) }), {}),
  batch: v.optional(
    v.strictObject({
      maxEvents: Ms(1, 10_000, 500),
      maxBytes: Ms(1024, 3 * 1024 * 1024, 1024 * 1024),
      maxWaitMs: Ms(10, 600_000, 2000),
    }),
    {},
  ),
  retry: v.optional(v.strictObject({ initialMs: Ms(10, 60_000, 500), maxMs: Ms(100, 3_600_000, 30_000) }), {}),
  /** Stop reading sources while this many envelopes wait in the spool. */
  maxSpooled: Ms(1, 1_000_000, 10_000),
});

/** The validated agent configuration, defaults filled in. */
export type AgentConfig = v.InferOutput<typeof AgentConfigSchema>;
