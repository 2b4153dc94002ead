import type { Config } from '../../services/config-schema.js';
import { startCheckpointer, type Transparency } from '../../log/checkpointer.js';
import { parseVerifierKey, type NoteVerifier } from '../../log/signed-note.js';
import type { EventStore } from '../../commands/event-store.js';

/** Publishes an instance's signed heads as checkpoints, as its configuration asks. */
export function startInstanceCheckpointer(
  es: Pick<EventStore, 'store' | 'log'>,
  config: Config,
): Promise<Transparency> {
  const heads = es.log.signer;
  if (!heads) return Promise.reject(new Error('the log signs no heads: open the store with its signer'));
  return startCheckpointer(es.store, es.log, heads, {
    everyRecords: config.log.checkpointEveryRecords,
    everySeconds: config.log.checkpointEverySeconds,
    witnesses: acceptedWitnesses(config),
  });
}

/** The witnesses whose cosignatures the instance accepts: `log.witnesses` and the ones it pushes to. */
export function acceptedWitnesses(config: Config): NoteVerifier[] {
  return [...config.log.witnesses, ...config.log.witnessPush.map((w) => w.key)].map((k) => parseVerifierKey(k)!);
}
