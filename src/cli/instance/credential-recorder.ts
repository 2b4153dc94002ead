import type { Credential } from '../../auth/registry.js';
import { detectIn } from '../../commands/alerting/detection-step.js';
import type { DetectionSettings } from '../../commands/alerting/evaluate.js';
import { decideRecordCredentials } from '../../commands/record-credentials.js';
import type { Writer } from '../../commands/writer.js';
import { CREDENTIALS, type CredentialsState } from '../../projections/credentials.js';

/**
 * Records in the log what a loaded credential registry changed (decideRecordCredentials), with the
 * detection step; resolves to the number of changes. The actor is the service itself: the file
 * was written by `vigil api-token-generate` / `vigil credential` (or by hand), not through the API.
 */
export async function recordCredentialChanges(writer: Writer, credentials: readonly Credential[], now: string, settings: DetectionSettings): Promise<number> {
  const ctx = { now, actor: { id: 'vigil', authentication: 'credentials-file' } };
  const outcome = await writer.execute((m) => detectIn(m, decideRecordCredentials(m.state<CredentialsState>(CREDENTIALS), credentials, ctx), [], ctx, settings), ctx);
  return outcome.ok ? outcome.result.result.changes : 0;
}
