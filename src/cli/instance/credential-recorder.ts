import type { Credential } from '../../auth/registry.js';
import { decideRecordCredentials } from '../../commands/record-credentials.js';
import type { Pipeline } from '../../commands/pipeline.js';
import type { WriteModels } from '../../projections/models.js';
import { CREDENTIALS, type CredentialsState } from '../../projections/credentials.js';

/**
 * Records in the log what a loaded credential registry changed (decideRecordCredentials), with the
 * detection step; resolves to the number of changes. The actor is the service itself: the file
 * was written by `vigil api-token-generate` / `vigil credential` (or by hand), not through the API.
 */
export async function recordCredentialChanges(
  pipeline: Pipeline<WriteModels>,
  credentials: readonly Credential[],
  now: string,
): Promise<number> {
  const ctx = { now, actor: { id: 'vigil', authentication: 'credentials-file' } };
  const outcome = await pipeline.dispatch({
    decide: (m) => decideRecordCredentials(m.credentials, credentials, ctx),
    ctx,
  });
  return outcome.ok ? outcome.result.changes : 0;
}
