import * as v from 'valibot';
import { EVENT_LIMITS, IsoDateTime, NormalizedEventSchema } from '../normalized-event.js';

/** Protocol limits (spec 8 and docs/collector-protocol.md). */
export const ENVELOPE_LIMITS = {
  /** The transport JSON of one envelope. */
  transportBytes: 5 * 1024 * 1024,
  /** The signed bytes (PAE over the JCS payload). */
  signedBytes: 4 * 1024 * 1024,
  eventsPerPayload: 10_000,
  factsPerPayload: 10_000,
} as const;

/** A collector id: 1-128 characters, letters, digits, `. _ @ -`, starting with a letter or digit. */
export const CollectorId = v.pipe(
  v.string(),
  v.regex(/^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$/, 'expected 1-128 characters: letters, digits, . _ @ -'),
);

const Name = v.pipe(
  v.string(),
  v.regex(/^[a-z][a-z0-9_]{0,63}$/, 'expected 1-64 characters: a-z, 0-9, _ (starting with a letter)'),
);
const EntityKey = v.pipe(
  v.string(),
  v.minLength(3),
  v.maxLength(EVENT_LIMITS.entityKeyLength),
  v.regex(/^[a-z][a-z0-9_]{0,63}:./, 'expected kind:identifier'),
);
const Attributes = v.optional(v.record(v.string(), v.unknown()));

/** A fact naming one entity of the graph: its key `kind:identifier`, its kind and attributes. */
export const EntityFactSchema = v.pipe(
  v.strictObject({ fact: v.literal('entity'), key: EntityKey, kind: Name, attributes: Attributes }),
  v.check((f) => f.key.startsWith(`${f.kind}:`), 'key must start with kind:'),
);

/** A fact naming one typed relationship between two entity keys. */
export const RelationshipFactSchema = v.strictObject({
  fact: v.literal('relationship'),
  from: EntityKey,
  to: EntityKey,
  type: Name,
  attributes: Attributes,
});

/** One fact of a payload. */
export const FactSchema = v.union([EntityFactSchema, RelationshipFactSchema]);

/** An event as a collector submits it: a NormalizedEvent without category and outcome (spec 2.7). */
export const SubmittedEventSchema = v.omit(NormalizedEventSchema, ['category', 'outcome']);

/** The signed payload (spec 2.7); every field is required. */
export const PayloadSchema = v.strictObject({
  schemaVersion: v.literal(1),
  collectorId: CollectorId,
  sequence: v.pipe(v.number(), v.safeInteger(), v.minValue(1)),
  collectedAt: IsoDateTime,
  facts: v.pipe(v.array(FactSchema), v.maxLength(ENVELOPE_LIMITS.factsPerPayload)),
  events: v.pipe(v.array(SubmittedEventSchema), v.maxLength(ENVELOPE_LIMITS.eventsPerPayload)),
});

/** The envelope (spec 2.7): `signature` is standard base64 of the 64-byte Ed25519 signature. */
export const EnvelopeSchema = v.strictObject({
  algorithm: v.literal('Ed25519'),
  payload: PayloadSchema,
  signature: v.pipe(v.string(), v.maxLength(128)),
});

/** A collector payload. */
export type Payload = v.InferOutput<typeof PayloadSchema>;
/** One fact. */
export type Fact = v.InferOutput<typeof FactSchema>;
/** A submitted event. */
export type SubmittedEvent = v.InferOutput<typeof SubmittedEventSchema>;
/** A collector envelope. */
export type Envelope = v.InferOutput<typeof EnvelopeSchema>;
