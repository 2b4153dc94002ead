import { existsSync, readFileSync } from 'node:fs';
import * as v from 'valibot';
import { secretFileProblem } from '../kernel/secret-files.js';
import { decideIssueEnrollmentToken } from '../commands/collector-enrollment.js';
import type { Pipeline } from '../commands/pipeline.js';
import type { WriteModels } from '../projections/models.js';
import { IsoDateTime } from '../events/normalized-event.js';
import { nanosFromIso } from '../kernel/time.js';
import { COLLECTORS, type CollectorsState } from '../projections/collectors.js';

/** The grants file the installer writes on the central VM (docs/setup-protocol.md): token hashes only. */
export const EnrollmentGrantsSchema = v.object({
  deployment_id: v.pipe(v.string(), v.maxLength(128)),
  enrollment_epoch: v.pipe(v.number(), v.integer(), v.minValue(1)),
  collectors: v.pipe(
    v.array(
      v.object({
        collector_id: v.pipe(v.string(), v.regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, 'expected a collector id')),
        vm_id: v.pipe(v.string(), v.maxLength(128)),
        token_sha256: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/, 'expected a SHA-256 hex digest')),
        expires_at: IsoDateTime,
      }),
    ),
    v.maxLength(4096),
  ),
});

/**
 * Imports the setup authority's enrollment grants at start: each collector of the deployment's
 * current epoch gets a single-use enrollment token (by hash, as if `collector-token create` had made
 * it), so collectors enroll with the token the installer delivered. Already imported grants are
 * skipped, and so are grants expiring no later than the store last forgot expired tokens (they
 * may have been imported and used); a missing file imports nothing; an unsafe or invalid one
 * stops the start.
 */
export async function importEnrollmentGrants(
  pipeline: Pipeline<WriteModels>,
  path: string,
  now: string,
  warn: (line: Record<string, unknown>) => void = () => {},
): Promise<number> {
  if (!existsSync(path)) return 0;
  const problem = secretFileProblem(path);
  if (problem) throw new Error(`refusing to start: ${problem}`);
  const parsed = v.safeParse(EnrollmentGrantsSchema, JSON.parse(readFileSync(path, 'utf8')));
  if (!parsed.success)
    throw new Error(
      `enrollment grants file ${path} is invalid: ` +
        `${parsed.issues.map((i) => `${v.getDotPath(i) ?? '(root)'}: ${i.message}`).join('; ')}`,
    );
  const grants = parsed.output;
  let imported = 0;
  for (const g of grants.collectors) {
    // Compared as instants and recorded in the canonical UTC form the deciders compare (an offset
    // or a finer fraction would otherwise be compared as text); cut to the millisecond, never later.
    const expiresNs = nanosFromIso(g.expires_at)!;
    const expiresAt = new Date(Number(expiresNs / 1_000_000n)).toISOString();
    const known = pipeline.models.collectors;
    if (expiresNs <= nanosFromIso(now)! || known.tokenByHash.has(g.token_sha256)) continue;
    // Unexpired by the clock, yet expiring no later than a time the store has already seen (the
    // clock was set back, or was ahead then): its token may have been issued, used and forgotten,
    // and issuing it again would revive a used token.
    if (known.tokensForgottenThrough !== null && expiresAt <= known.tokensForgottenThrough) {
      warn({
        level: 'warn',
        msg:
          'enrollment grant not imported: it expires no later than the latest time this store forgot expired ' +
          'tokens, so it may have been used already; if it was not, issue the collector a token with vigil ' +
          'collector-token create',
        collectorId: g.collector_id,
        expiresAt,
        forgottenThrough: known.tokensForgottenThrough,
      });
      continue;
    }
    // The id names this grant's token (its hash), not only epoch and collector: another deployment's
    // grants (a new install on the same VMs) have the same epoch and collector ids.
    const cmd = {
      tokenId: `grant-e${grants.enrollment_epoch}-${g.collector_id}-${g.token_sha256.slice(0, 16)}`,
      collectorId: g.collector_id,
      tokenHash: g.token_sha256,
      expiresAt,
    };
    const outcome = await pipeline.dispatch({
      decide: () => decideIssueEnrollmentToken(cmd),
      ctx: { now, actor: { id: 'setup-authority', authentication: 'enrollment-grant' } },
    });
    if (outcome.ok) imported++;
  }
  return imported;
}
