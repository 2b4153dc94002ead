import type { Pipeline } from '../../commands/pipeline.js';
import type { WriteModels } from '../../projections/models.js';
import { importEnrollmentGrants } from '../../services/enrollment-grants.js';
import { installBuiltinRules } from './builtin-rules.js';

/**
 * Work for the writer once the service is wired (credential changes, the retention policy): each part sets its own
 * once it has started, and the start-up writes run it again whenever a JetStream node starts leading.
 */
export interface WiredWork {
  credentials: () => void;
  retentionPolicy: () => Promise<void>;
}

/**
 * What the writer does at start (the wired work, the built-in rule pack, the enrollment grants of `grantsFile`);
 * on a JetStream node, each time the node starts leading.
 */
export function startupWritesOf(
  pipeline: Pipeline<WriteModels>,
  grantsFile: string | undefined,
  wired: WiredWork,
  log: (line: Record<string, unknown>) => void,
): () => Promise<void> {
  return async () => {
    wired.credentials();
    await wired.retentionPolicy();
    const pack = await installBuiltinRules(pipeline, new Date().toISOString());
    if (pack.installed)
      log({ level: 'info', msg: 'built-in rule pack installed', version: pack.version, rules: pack.rules });
    if (grantsFile) {
      const imported = await importEnrollmentGrants(pipeline, grantsFile, new Date().toISOString(), log);
      if (imported > 0) log({ level: 'info', msg: 'enrollment grants imported', grants: imported });
    }
  };
}
