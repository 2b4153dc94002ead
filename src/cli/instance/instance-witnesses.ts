import type { Pipeline } from '../../commands/pipeline.js';
import { parseVerifierKey } from '../../log/signed-note.js';
import type { WriteModels } from '../../projections/models.js';
import type { Config } from '../../services/config-schema.js';
import { createWitnessPush, type WitnessPush } from '../../services/witness/witness-push.js';
import { acceptedWitnesses } from './checkpoints.js';
import type { ServedStore } from './served-store.js';

/** How long one push to a witness may take, connection to last byte (a witness answers in milliseconds). */
const PUSH_TIMEOUT_MS = 10_000;

/**
 * Starts pushing the instance's checkpoints to `log.witnessPush` every `log.witnessPushSeconds`; refusals are recorded
 * through `onLeader` (on a JetStream node only the leader pushes, its own checkpoints).
 */
export function startInstanceWitnessPush(
  config: Config,
  served: Pick<ServedStore, 'instance' | 'transparency' | 'jetstream'>,
  onLeader: Pipeline<WriteModels>,
  log: (line: Record<string, unknown>) => void,
): WitnessPush {
  const { instance, transparency, jetstream } = served;
  let startedAt: string | undefined;
  const push = createWitnessPush({
    targets: config.log.witnessPush.map((w) => ({ url: w.url, key: parseVerifierKey(w.key)! })),
    accepted: acceptedWitnesses(config),
    transparency,
    pipeline: onLeader,
    intervalMs: config.log.witnessPushSeconds * 1000,
    maxAgeMs: config.log.cosignedMaxAgeSeconds * 1000,
    timeoutMs: Math.min(PUSH_TIMEOUT_MS, config.log.witnessPushSeconds * 1000),
    now: () => new Date(),
    // The log's age, for a log no witness ever cosigned: the time of its first live record, read once.
    logStartedAt: () => (startedAt ??= firstRecordAt(instance.log)),
    ...(jetstream ? { leads: () => jetstream.leadership().leading } : {}),
    log,
  });
  push.start();
  return push;
}

function firstRecordAt(log: ServedStore['instance']['log']): string | undefined {
  for (const r of log.read(log.first())) return r.at;
  return undefined;
}
