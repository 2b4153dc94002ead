import type { Config } from '../../services/config-schema.js';
import { startCheckpointer, type Transparency } from '../../log/checkpointer.js';
import { loadOrCreateLogKey, logKeyPath } from '../../log/log-key.js';
import { parseVerifierKey, type NoteVerifier } from '../../log/signed-note.js';
import type { EventStore } from '../../commands/event-store.js';

/** Starts signing checkpoints of an instance's log with its own key, as its configuration asks. */
export function startInstanceCheckpointer(
  es: Pick<EventStore, 'store' | 'log'>,
  config: Config,
): Promise<Transparency> {
  const signer = loadOrCreateLogKey(logKeyPath(config.storage.path));
  return startCheckpointer(es.store, es.log, signer, {
    everyRecords: config.log.checkpointEveryRecords,
    everySeconds: config.log.checkpointEverySeconds,
    witnesses: acceptedWitnesses(config),
  });
}

/** The witnesses whose cosignatures the instance accepts: `log.witnesses` and the ones it pushes to. */
export function acceptedWitnesses(config: Config): NoteVerifier[] {
  return [...config.log.witnesses, ...config.log.witnessPush.map((w) => w.key)].map((k) => parseVerifierKey(k)!);
}
