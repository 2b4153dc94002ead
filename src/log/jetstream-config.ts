import * as v from 'valibot';

const PathText = v.pipe(
  v.string(),
  v.minLength(1),
  v.maxLength(4096),
  v.check((p) => p.startsWith('/'), 'expected an absolute path'),
);
const ServerUrl = v.pipe(
  v.string(),
  v.maxLength(2048),
  v.regex(
    /^(nats|tls):\/\/[^\s/@]+(:\d+)?\/?$/,
    'expected nats://host:port or tls://host:port (credentials go in a file, never in the URL)',
  ),
);

/**
 * The `storage.jetstream` section: where the replicated log lives when `storage.backend` is "jetstream"
 * (docs/scale-out.md).
 */
export const JetStreamConfigSchema = v.strictObject({
  /** Seed URLs of the NATS cluster; the client learns the rest of the cluster from them. */
  servers: v.pipe(v.array(ServerUrl), v.minLength(1), v.maxLength(16)),
  /** The stream holding the log (one message per batch); created at first start, validated after. */
  stream: v.optional(
    v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{1,64}$/, 'expected 1-64 letters, digits, _ or -')),
    'VIGIL_LOG',
  ),
  /** Copies of every message in the cluster: 3 survives the loss of one server, 1 is for a single server. */
  replicas: v.optional(v.picklist([1, 3, 5]), 3),
  /** A NATS user credentials file (JWT and NKey seed, `nsc` format), owner-only. */
  credentialsFile: v.optional(PathText),
  /** A file holding a NATS authentication token, owner-only. */
  tokenFile: v.optional(PathText),
  /** This node's name in the cluster (the leader lease names it); defaults to the host name and port. */
  nodeName: v.optional(
    v.pipe(v.string(), v.regex(/^[A-Za-z0-9_.-]{1,64}$/, 'expected 1-64 letters, digits, ., _ or -')),
  ),
  /** How long a leader lease lasts unless renewed; a dead leader is replaced within about this time. */
  leaseSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(3), v.maxValue(300)), 10),
  /** How long a publish may wait for the stream's acknowledgement before its outcome counts as unknown. */
  publishTimeoutSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(120)), 10),
});

/** The validated `storage.jetstream` section. */
export type JetStreamConfig = v.InferOutput<typeof JetStreamConfigSchema>;
