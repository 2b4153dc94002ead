import { randomBytes } from 'node:crypto';
import type { Context } from 'hono';
import * as v from 'valibot';
import { generateToken, hashToken } from '../../auth/tokens.js';
import { publicKeyFromSpkiPem } from '../../kernel/ed25519.js';
import { CollectorId, ENVELOPE_LIMITS, EnvelopeSchema } from '../../events/collector-protocol/envelope.js';
import { openEnvelope } from '../../events/collector-protocol/open-envelope.js';
import { decideEnroll, decideIssueEnrollmentToken } from '../../commands/collector-enrollment.js';
import { decideSubmission } from '../../commands/collector-submit.js';
import type { SubmissionResult } from '../../events/collector-records.js';
import { TOKEN_LIFETIME, parseLifetime } from '../../commands/collector-token-lifetime.js';
import { COLLECTORS, type CollectorsState } from '../../projections/collectors.js';
import { CollectorSummarySchema, listCollectors } from '../../projections/collectors-query.js';
import { accessRecords } from '../access-records.js';
import { readBodyBytes, readJsonBody } from '../body.js';
import { clientAddress } from '../client-address.js';
import type { AppDeps, AppEnv } from '../env.js';
import { HttpError, STATUS_OF, fromRejection, parseOr400 } from '../errors.js';
import { commandContext, executeAudited } from '../request-context.js';
import { route, type Route, type RouteScope } from '../route.js';
import { admitIngest } from '../admission.js';
import { submissionSlice } from '../../commands/slices.js';

/** Prefix of enrollment tokens, so secret scanners can recognise a leaked one. */
export const ENROLLMENT_TOKEN_PREFIX = 'vce_';

/** Body of `POST /api/v1/collector/enrollment-tokens`. */
export const IssueTokenBody = v.strictObject({
  collectorId: CollectorId,
  expiresIn: v.optional(
    v.pipe(
      v.string(),
      v.check((s) => parseLifetime(s) !== undefined, 'expected a lifetime from 1m to 7d such as 15m, 1h, 2d'),
    ),
  ),
});

/** Body of `POST /api/v1/collector/enrollments`. */
export const EnrollBody = v.strictObject({
  collectorId: CollectorId,
  // vce_: issued by this instance; lce_: released by the setup authority (imported enrollment grants).
  enrollmentToken: v.pipe(
    v.string(),
    v.regex(/^(vce|lce)_[A-Za-z0-9_-]{43}$/, 'expected an enrollment token (vce_... or lce_...)'),
  ),
  publicKey: v.pipe(v.string(), v.maxLength(1024)),
});

/** Access and audit records of an enrollment request (no bearer: the token in the body is the credential). */
function enrollmentAudit(
  c: Context<AppEnv>,
  { deps, net, route: entry }: RouteScope,
  started: number,
): (status: number) => ReturnType<typeof accessRecords> {
  const source = clientAddress(deps.peerOf(c.env?.incoming), c.req.header('x-forwarded-for'), net.trustedProxies);
  c.set('sourceAddress', source);
  return (status) =>
    accessRecords({
      requestId: c.get('requestId'),
      operation: entry.audit!,
      method: 'POST',
      route: entry.path,
      status,
      durationMs: Math.round((performance.now() - started) * 1000) / 1000,
      sourceAddress: source,
      approved: source !== 'unknown' && net.approved.has(source),
      at: deps.now().toISOString(),
    });
}

async function enroll(c: Context<AppEnv>, scope: RouteScope): Promise<Response> {
  const { deps } = scope;
  const audit = enrollmentAudit(c, scope, performance.now());
  const ctx = commandContext(c, deps);
  let decided = false;
  try {
    const body = parseOr400(EnrollBody, await readJsonBody(c, deps.config.limits.bodyBytes), 'enrollment');
    const key = publicKeyFromSpkiPem(body.publicKey);
    if (!key.ok) throw new HttpError(400, 'invalid enrollment', [`publicKey: ${key.error}`]);
    const cmd = {
      collectorId: body.collectorId,
      tokenHash: hashToken(body.enrollmentToken),
      publicKey: key.key,
      requestId: c.get('requestId'),
      at: ctx.now,
      sourceAddress: c.get('sourceAddress'),
    };
    decided = true;
    const outcome = await deps.pipeline.dispatch({
      decide: (m) => decideEnroll(m.collectors, cmd),
      facts: (d) => audit(d.ok ? 201 : STATUS_OF[d.rejection.kind]),
      ctx,
    });
    if (!outcome.ok) throw fromRejection(outcome.rejection);
    return c.json(outcome.result, 201);
  } catch (err) {
    // A request refused before its decision still leaves an access record of the attempt.
    if (!decided && err instanceof HttpError) await deps.pipeline.record(audit(err.status), ctx);
    throw err;
  }
}

const issueEnrollmentTokenRoute = route({
  method: 'post',
  path: '/api/v1/collector/enrollment-tokens',
  operationId: 'issueEnrollmentToken',
  summary: 'Create a single-use, short-lived collector enrollment token (shown once)',
  permission: 'collectors:admin',
  audit: 'issue_enrollment_token',
  body: { json: IssueTokenBody },
  success: {
    status: 201,
    description: '`{tokenId, collectorId, expiresAt, token}`',
    schema: v.strictObject({ tokenId: v.string(), collectorId: v.string(), expiresAt: v.string(), token: v.string() }),
  },
  errors: [400, 413, 415],
  handle: async (c, { deps }) => {
    const body = parseOr400(
      IssueTokenBody,
      await readJsonBody(c, deps.config.limits.bodyBytes),
      'enrollment token request',
    );
    const token = generateToken(ENROLLMENT_TOKEN_PREFIX);
    const lifetime = body.expiresIn !== undefined ? parseLifetime(body.expiresIn)! : TOKEN_LIFETIME.defaultMs;
    const cmd = {
      tokenId: randomBytes(8).toString('hex'),
      collectorId: body.collectorId,
      tokenHash: hashToken(token),
      expiresAt: new Date(deps.now().getTime() + lifetime).toISOString(),
    };
    const { result } = await executeAudited(c, deps, () => decideIssueEnrollmentToken(cmd), 201);
    return c.json({ ...result, token }, 201);
  },
});

const enrollCollectorRoute = route({
  method: 'post',
  path: '/api/v1/collector/enrollments',
  operationId: 'enrollCollector',
  summary: 'Enroll a collector key with a single-use token; starts a new epoch (docs/collector-protocol.md)',
  permission: { public: 'the enrollment token in the body authenticates' },
  audit: 'enroll_collector',
  body: { json: EnrollBody },
  success: {
    status: 201,
    description: '`{collectorId, epoch, keyFingerprint, nextSequence}`',
    schema: v.strictObject({
      collectorId: v.string(),
      epoch: v.pipe(v.number(), v.integer()),
      keyFingerprint: v.string(),
      nextSequence: v.pipe(v.number(), v.integer()),
    }),
  },
  errors: [400, 401, 403, 409, 413, 415],
  handle: (c, scope) => enroll(c, scope),
});

const submitCollectorEnvelopeRoute = route({
  method: 'post',
  path: '/api/v1/collector/submissions',
  operationId: 'submitCollectorEnvelope',
  summary: 'Submit a signed collector envelope (spec 4.3, docs/collector-protocol.md)',
  permission: 'collector:submit',
  audit: 'submit_collector_envelope',
  body: { json: EnvelopeSchema },
  middleware: (deps) => [
    admitIngest(deps.admission, ENVELOPE_LIMITS.transportBytes, deps.config.limits.ingestBodySeconds * 1000),
  ],
  success: { status: 202, description: 'Collector submission result', schema: 'CollectorSubmissionResult' },
  errors: [400, 409, 413, 415, 429],
  handle: async (c, { deps }) => {
    const staged = await stageSubmission(c, deps);
    const { result } = await staged.answer;
    return c.json(result, 202);
  },
});

/**
 * Reads, opens and stages an envelope. Its own function, so that neither the envelope's bytes
 * nor its parsed events stay reachable once it is decided, while its commit is awaited (V8 would
 * promote them to its old space meanwhile: docs/benchmarks.md, 2026-12-01).
 */
async function stageSubmission(
  c: Context<AppEnv>,
  deps: AppDeps,
): Promise<{ answer: Promise<{ result: SubmissionResult }> }> {
  const type = c.req.header('content-type');
  if (type !== undefined && !/^application\/([\w.+-]*\+)?json\b/i.test(type))
    throw new HttpError(415, 'expected Content-Type: application/json');
  const opened = openEnvelope(await readBodyBytes(c, ENVELOPE_LIMITS.transportBytes));
  if (opened.ok) c.get('ingestTicket').records(opened.envelope.payload.events.length);
  const p = c.get('principal');
  const cmd = {
    opened,
    principal: p.id,
    requestId: c.get('requestId'),
    at: deps.now().toISOString(),
    sourceAddress: c.get('sourceAddress'),
    ...(p.collectorId !== undefined ? { boundCollectorId: p.collectorId } : {}),
  };
  const answer = executeAudited(c, deps, (m) => decideSubmission(submissionSlice(m), cmd), 202);
  // Its rejection is the handler's to answer, a turn later.
  answer.catch(() => undefined);
  return { answer };
}

const listCollectorsRoute = route({
  method: 'get',
  path: '/api/v1/collectors',
  operationId: 'listCollectors',
  summary: 'Enrolled collectors: epoch, key fingerprint, last sequence, accepted and rejected counts',
  permission: 'collectors:admin',
  audit: 'list_collectors',
  success: {
    status: 200,
    description: '`{collectors}`',
    schema: v.strictObject({ collectors: v.array(CollectorSummarySchema) }),
  },
  errors: [],
  handle: async (c, { deps }) => {
    // Sees every write acknowledged before the request.
    await deps.readYourWrites();
    return c.json({ collectors: listCollectors(deps.reads.collectors) });
  },
});

/**
 * The collector routes: enrollment tokens (admin), enrollment (no bearer; the single-use token
 * in the body authenticates), signed submissions (collector), and the collector list (admin).
 */
export const collectorRoutes: readonly Route[] = [
  issueEnrollmentTokenRoute,
  enrollCollectorRoute,
  submitCollectorEnvelopeRoute,
  listCollectorsRoute,
];
