import * as v from 'valibot';
import { parseCheckpoint } from '../../log/checkpoint.js';
import { parseNote, verifierKeyString } from '../../log/signed-note.js';
import type { Transparency } from '../../log/checkpointer.js';
import { readJsonBody } from '../body.js';
import type { AppDeps } from '../env.js';
import { HttpError, parseOr400 } from '../errors.js';
import { route, type Route } from '../route.js';

const TreeSize = v.pipe(v.string(), v.regex(/^\d{1,10}$/, 'expected a tree size'), v.transform(Number));
const Seq = v.pipe(
  v.string(),
  v.regex(/^[1-9]\d{0,9}$/, 'expected a record sequence number from 1'),
  v.transform(Number),
);

/** Query of `GET /api/v1/log/checkpoint`: the latest checkpoint, or the one of exactly `size` records. */
export const CheckpointQuery = v.strictObject({ size: v.optional(TreeSize) });
/** Query of `GET /api/v1/log/proofs/inclusion`: record `seq` in the tree of `size` records. */
export const InclusionQuery = v.strictObject({ seq: Seq, size: TreeSize });
/** Query of `GET /api/v1/log/proofs/consistency`: between the trees of `from` and `to` records. */
export const ConsistencyQuery = v.strictObject({ from: TreeSize, to: TreeSize });
/** Body of `POST /api/v1/log/checkpoint/cosignatures`: a stored checkpoint with witness signature lines added. */
export const CosignBody = v.strictObject({ checkpoint: v.pipe(v.string(), v.minLength(1), v.maxLength(64 * 1024)) });

const Size = v.pipe(v.number(), v.integer());
const Base64 = v.pipe(v.string(), v.description('base64'));

const b64 = (a: Uint8Array) => Buffer.from(a).toString('base64');

function transparency(deps: AppDeps): Transparency {
  if (!deps.transparency) throw new HttpError(404, 'this service keeps no signed checkpoints');
  return deps.transparency;
}

/** The checkpoint of a note as JSON: the note itself (what verifiers check) and its fields for convenience. */
function checkpointJson(t: Transparency, note: string): Record<string, unknown> {
  const parsed = parseNote(note);
  const cp = parsed.ok ? parseCheckpoint(parsed.text) : undefined;
  if (!cp?.ok) throw new Error('a stored checkpoint does not parse');
  return {
    origin: cp.checkpoint.origin,
    tree_size: cp.checkpoint.size,
    root_hash: b64(cp.checkpoint.root),
    key: verifierKeyString(t.verifier),
    checkpoint: note,
  };
}

function withinCommitted(t: Transparency, ...sizes: number[]): void {
  const committed = t.committedSize();
  for (const s of sizes)
    if (s > committed) throw new HttpError(400, `tree size ${s} is beyond the log (${committed} records)`);
}

const readCheckpointRoute = route({
  method: 'get',
  path: '/api/v1/log/checkpoint',
  operationId: 'readLogCheckpoint',
  summary: 'The latest signed checkpoint of the log (C2SP tlog-checkpoint), or the one of `size` records',
  permission: 'log:read',
  audit: 'read_log_checkpoint',
  query: CheckpointQuery,
  success: {
    status: 200,
    description: '`{origin, tree_size, root_hash, key, checkpoint}` (checkpoint: the signed note text)',
    schema: v.strictObject({
      origin: v.string(),
      tree_size: Size,
      root_hash: Base64,
      key: v.string(),
      checkpoint: v.string(),
    }),
  },
  errors: [400, 404],
  handle: (c, { deps }) => {
    const t = transparency(deps);
    const q = parseOr400(CheckpointQuery, c.req.query(), 'query');
    const note = t.checkpoint(q.size);
    if (!note)
      throw new HttpError(404, q.size === undefined ? 'no checkpoint yet' : `no checkpoint of ${q.size} records`);
    return c.json(checkpointJson(t, note));
  },
});

const readInclusionRoute = route({
  method: 'get',
  path: '/api/v1/log/proofs/inclusion',
  operationId: 'readLogInclusionProof',
  summary: 'RFC 9162 inclusion proof of record `seq` in the tree of `size` records',
  permission: 'log:read',
  audit: 'read_log_inclusion_proof',
  query: InclusionQuery,
  success: {
    status: 200,
    description:
      '`{tree_size, leaf_index, leaf_hash, inclusion_path}` (RFC 9162 InclusionProofDataV2 fields; hashes base64; ' +
      'leaf_index = seq - 1)',
    schema: v.strictObject({
      tree_size: Size,
      leaf_index: Size,
      leaf_hash: Base64,
      inclusion_path: v.array(Base64),
    }),
  },
  errors: [400, 404],
  handle: (c, { deps }) => {
    const t = transparency(deps);
    const q = parseOr400(InclusionQuery, c.req.query(), 'query');
    withinCommitted(t, q.size);
    if (q.seq > q.size) throw new HttpError(400, `record ${q.seq} is not in a tree of ${q.size} records`);
    // A proof that needs an expired record's bytes throws ProofNeedsArchive: a 404 (src/http/middleware.ts).
    const proof = t.inclusion(q.seq, q.size);
    return c.json({
      tree_size: q.size,
      leaf_index: q.seq - 1,
      leaf_hash: b64(proof.leafHash),
      inclusion_path: proof.path.map(b64),
    });
  },
});

const readConsistencyRoute = route({
  method: 'get',
  path: '/api/v1/log/proofs/consistency',
  operationId: 'readLogConsistencyProof',
  summary: 'RFC 9162 consistency proof between the trees of `from` and `to` records',
  permission: 'log:read',
  audit: 'read_log_consistency_proof',
  query: ConsistencyQuery,
  success: {
    status: 200,
    description:
      '`{tree_size_1, tree_size_2, consistency_path}` (RFC 9162 ConsistencyProofDataV2 fields; hashes base64)',
    schema: v.strictObject({ tree_size_1: Size, tree_size_2: Size, consistency_path: v.array(Base64) }),
  },
  errors: [400, 404],
  handle: (c, { deps }) => {
    const t = transparency(deps);
    const q = parseOr400(ConsistencyQuery, c.req.query(), 'query');
    if (q.from > q.to) throw new HttpError(400, 'from must not exceed to');
    withinCommitted(t, q.to);
    return c.json({ tree_size_1: q.from, tree_size_2: q.to, consistency_path: t.consistency(q.from, q.to).map(b64) });
  },
});

const cosignCheckpointRoute = route({
  method: 'post',
  path: '/api/v1/log/checkpoint/cosignatures',
  operationId: 'cosignLogCheckpoint',
  summary: 'Add the cosignatures of configured witnesses (`log.witnesses`) to a stored checkpoint',
  permission: 'log:cosign',
  audit: 'cosign_log_checkpoint',
  body: { json: CosignBody },
  success: {
    status: 200,
    description: '`{added, checkpoint}`: the stored checkpoint with every cosignature it now carries',
    schema: v.strictObject({ added: Size, checkpoint: v.string() }),
  },
  errors: [400, 404, 415],
  handle: async (c, { deps }) => {
    const t = transparency(deps);
    const body = parseOr400(CosignBody, await readJsonBody(c, deps.config.limits.bodyBytes), 'body');
    const r = await t.cosign(body.checkpoint);
    if (!r.ok) throw new HttpError(r.status, r.error);
    return c.json({ added: r.added, checkpoint: r.note });
  },
});

/**
 * The verdict of `vigil log verify` (and of `GET /api/v1/log/verify`): `ok` with what was checked, or the first bad
 * record and why. Loose: a check added to the verification adds its field.
 */
export const LogVerdictSchema = v.looseObject({
  ok: v.boolean(),
  records: Size,
  head: v.optional(v.pipe(v.string(), v.description('SHA-256 (hex) of the last record verified'))),
  from: v.optional(v.pipe(Size, v.description('the first record, after a retention cut'))),
  badSeq: v.optional(v.pipe(Size, v.description('the first bad record'))),
  reason: v.optional(v.string()),
  tree: v.optional(
    v.looseObject({
      ok: v.boolean(),
      root: v.optional(Base64),
      checkpoints: v.optional(Size),
      checkpointsBeforeCut: v.optional(Size),
      reason: v.optional(v.string()),
    }),
  ),
});

/** A verdict of the log's verification. */
export type LogVerdict = v.InferOutput<typeof LogVerdictSchema>;

function verifier(deps: AppDeps): () => Promise<LogVerdict> {
  if (!deps.verifyLog) throw new HttpError(404, 'this service verifies no log here');
  return deps.verifyLog;
}

const verifyLogRoute = route({
  method: 'get',
  path: '/api/v1/log/verify',
  operationId: 'verifyLog',
  summary: 'Verify the log as `vigil log verify` does (chain, Merkle tree, checkpoints), beside ingest',
  permission: 'log:verify',
  audit: 'verify_log',
  success: {
    status: 200,
    description:
      'The verdict, as `vigil log verify` prints it: `{ok: true, records, head, tree}` up to the head the check read ' +
      'when it began, or `{ok: false, records, badSeq, reason}`. It runs in a worker thread on a read-only snapshot; ' +
      "one runs at a time, and a request made while one runs is answered with that one's verdict.",
    schema: LogVerdictSchema,
  },
  errors: [404],
  handle: async (c, { deps }) => c.json(await verifier(deps)()),
});

const readKeyRotationsRoute = route({
  method: 'get',
  path: '/api/v1/log/key-rotations',
  operationId: 'readLogKeyRotations',
  summary: "The rotations of the log's signing key, in log order (the chain of keys a verifier follows)",
  permission: 'log:read',
  audit: 'read_log_key_rotations',
  success: {
    status: 200,
    description:
      '`{rotations: [{seq, note}]}`: the seq of each `LogKeyRotated` record and its rotation note (signed by the ' +
      'new key, cosigned by the old one)',
    schema: v.strictObject({ rotations: v.array(v.strictObject({ seq: Size, note: v.string() })) }),
  },
  errors: [],
  // Sees every write acknowledged before the request (a rotation is recorded at the start that follows it).
  handle: async (c, { deps }) => {
    await deps.readYourWrites();
    return c.json({ rotations: deps.reads.keyRotations.rotations.map(({ seq, note }) => ({ seq, note })) });
  },
});

/** Signed checkpoints and RFC 9162 proofs; they read the log's own tree, which holds every acknowledged write. */
export const logRoutes: readonly Route[] = [
  readCheckpointRoute,
  readInclusionRoute,
  readConsistencyRoute,
  readKeyRotationsRoute,
  cosignCheckpointRoute,
  verifyLogRoute,
];
