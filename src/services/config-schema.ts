import { DEFAULT_RULE_BUDGET } from '../commands/alerting/rule-budget.js';
import { DEFAULT_RULE_LIMITS } from '../detection/rule-limits.js';
import * as v from 'valibot';
import { INDICATOR_TYPES } from '../events/intel-events.js';
import { parseCidr } from '../kernel/cidr.js';
import { MeshAllowlistSchema } from '../auth/mesh-allowlist.js';
import { parseVerifierKey } from '../log/signed-note.js';
import { ExportConfigSchema } from './export/config.js';
import { SyslogListenersSchema } from './listeners/syslog-config.js';
import { MonitoringSchema } from '../projections/monitoring-settings.js';
import { JetStreamConfigSchema } from '../log/jetstream-config.js';
import { RetentionSchema } from '../log/retention/settings.js';

const Cidr = v.pipe(
  v.string(),
  v.check((s) => parseCidr(s) !== undefined, 'expected a CIDR range such as 10.0.0.0/8 or fd00::/8'),
);
const CidrList = v.pipe(v.array(Cidr), v.maxLength(1024));
const Bytes = (max: number) => v.pipe(v.number(), v.integer(), v.minValue(1024), v.maxValue(max));
const Count = (max: number) => v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(max));
const PathText = v.pipe(v.string(), v.minLength(1), v.maxLength(4096));
const VerifierKey = v.pipe(
  v.string(),
  v.maxLength(512),
  v.check((s) => parseVerifierKey(s) !== undefined, 'expected a signed-note verifier key name+hash+key'),
);
/** A witness's submission prefix: https://, or http:// to this machine (a forged refusal would raise an alert). */
const WitnessUrl = v.pipe(
  v.string(),
  v.maxLength(2048),
  v.url('expected a URL'),
  v.check((u) => {
    const url = new URL(u);
    return (
      url.protocol === 'https:' ||
      (url.protocol === 'http:' && /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/.test(url.hostname))
    );
  }, 'expected an https:// URL (http:// only to a loopback address)'),
  v.check((u) => new URL(u).search === '' && new URL(u).hash === '', 'expected a URL prefix without ? or #'),
);
/** A witness the instance pushes its checkpoints to (docs/log.md, "Witnesses"). */
const WitnessPushSchema = v.strictObject({ url: WitnessUrl, key: VerifierKey });

/** Request and batch limits (spec 8); each has a default and a hard ceiling. */
export const LimitsSchema = v.strictObject({
  bodyBytes: v.optional(Bytes(64 * 1024 * 1024), 1024 * 1024),
  recordsPerRequest: v.optional(Count(100_000), 10_000),
  pageSize: v.optional(Count(1000), 1000),
  /** Ingest admitted but not yet durable, in request bytes: past it ingest routes answer 429. */
  ingestQueueBytes: v.optional(Bytes(1024 * 1024 * 1024), 4 * 1024 * 1024),
  /** Ingest admitted but not yet durable, in records: past it ingest routes answer 429. */
  ingestQueueEvents: v.optional(Count(10_000_000), 8_000),
  /**
   * Seconds an admitted ingest request has to send its whole body (408 past it), so a slow body cannot hold its share
   * of the queue.
   */
  ingestBodySeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(600)), 30),
  /** Seconds any client has to send a request's whole header block (408 and the connection closed past it). */
  headerSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(300)), 10),
  /** Seconds any client has to send a whole request, headers and body, on every route (408 and closed past it). */
  requestSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(600)), 30),
  /** Connections one source address may hold open at once; one more is closed at once. */
  connectionsPerAddress: v.optional(Count(100_000), 256),
  /**
   * Rule previews: wall-clock seconds one may run, and how many run at once (each in a worker thread of its own; one
   * more is a 429).
   */
  previewSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(300)), 10),
  previewsAtOnce: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(16)), 2),
  /** Failed authentications per source address: a token bucket; an empty bucket answers 429. */
  authFailures: v.optional(
    v.strictObject({
      burst: v.optional(Count(1_000_000), 20),
      perMinute: v.optional(Count(1_000_000), 30),
    }),
    {},
  ),
  /** Entities the in-memory graph keeps; past it the least recently seen is forgotten (events stay in the log). */
  graphEntities: v.optional(Count(100_000_000), 200_000),
  /** Relationships the in-memory graph keeps; past it the least recently seen is forgotten. */
  graphRelationships: v.optional(Count(100_000_000), 400_000),
  /**
   * How much lower than the writer the read side's thread is scheduled (a Linux nice value): when
   * the CPU is short, acknowledging evidence goes first and reads wait for the read side. 0: the same.
   */
  readSideNice: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(19)), 10),
  /**
   * Refused requests (failed authentication, throttled, overloaded) are logged as one summary per address and interval.
   */
  refusalSummarySeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(3600)), 60),
  /** How long one search (`POST /api/v1/search`) may scan before it answers what it has (`complete: false`). */
  searchSeconds: v.optional(v.pipe(v.number(), v.minValue(0.1), v.maxValue(600)), 10),
  /** How many stored events one search may read before it answers what it has (`complete: false`). */
  searchEvents: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1000), v.maxValue(100_000_000)), 5_000_000),
});

/** The validated limits. */
export type Limits = v.InferOutput<typeof LimitsSchema>;

/** Identity through the local mesh daemon (spec 5.1 #8, docs/configuration.md "Mesh identity"). */
export const MeshConfigSchema = v.strictObject({
  /** The daemon's LocalAPI Unix socket. */
  socketPath: v.optional(PathText, '/var/run/tailscale/tailscaled.sock'),
  /** TCP peers in these ranges, with no Authorization header, are looked up; the default is the tailnet's. */
  peerRanges: v.optional(CidrList, ['100.64.0.0/10', 'fd7a:115c:a1e0::/48']),
  /** Entries fixed until a restart. */
  allowlist: v.optional(MeshAllowlistSchema, []),
  /** An owner-only `{allowlist: [...]}` file, re-read when it changes. */
  allowlistFile: v.optional(PathText),
});

/** The validated `auth.mesh` section. */
export type MeshConfig = v.InferOutput<typeof MeshConfigSchema>;

/** One threat intelligence feed the instance fetches itself (docs/intel.md "Feeds the service fetches"). */
export const IntelFeedSchema = v.strictObject({
  /** The feed's name, as alerts and `GET /api/v1/intel/feeds` say it. */
  name: v.pipe(v.string(), v.regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'expected a feed name')),
  kind: v.picklist(['stix-bundle', 'taxii21', 'misp', 'list']),
  /** An absolute path or an http(s) URL; for `taxii21` the discovery or API root URL; for `misp` the feed's folder. */
  url: v.pipe(v.string(), v.minLength(1), v.maxLength(2048), v.regex(/^(\/|https?:\/\/)/, 'an absolute path or a URL')),
  /** `taxii21`: the collection's id or title. */
  collection: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(256))),
  /** `list`: the type of its values, or `auto` (guessed per value). */
  type: v.optional(v.picklist([...INDICATOR_TYPES, 'auto']), 'auto'),
  /** An owner-only file holding the `Authorization` header's value (`Bearer …` or `Basic …`). */
  authFile: v.optional(PathText),
  intervalSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(60), v.maxValue(86_400)), 3600),
});

/** One configured feed. */
export type IntelFeedConfig = v.InferOutput<typeof IntelFeedSchema>;

/** The instance configuration (`vigil.config.json`). Unknown keys are errors, named by path. */
export const ConfigSchema = v.strictObject({
  server: v.optional(
    v.strictObject({
      host: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(255)), '127.0.0.1'),
      port: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(65535)), 4173),
      allowLoopbackAdmin: v.optional(v.boolean(), false),
      approvedSourceAddresses: v.optional(CidrList, ['127.0.0.0/8', '::1/128']),
      trustedProxies: v.optional(CidrList, []),
      /** `GET /metrics` without a credential from a loopback peer (a Prometheus on the same machine). */
      allowLoopbackMetrics: v.optional(v.boolean(), false),
    }),
    {},
  ),
  auth: v.optional(
    v.strictObject({
      credentialsFile: v.optional(PathText, 'data/credentials.json'),
      mesh: v.optional(MeshConfigSchema),
    }),
    {},
  ),
  storage: v.optional(
    v.pipe(
      v.strictObject({
        path: v.optional(PathText, 'data/store'),
        /**
         * Where the log lives: "lmdb" (this machine, the default) or "jetstream" (a NATS cluster, docs/scale-out.md).
         */
        backend: v.optional(v.picklist(['lmdb', 'jetstream']), 'lmdb'),
        jetstream: v.optional(JetStreamConfigSchema),
      }),
      v.check(
        (s) => s.backend !== 'jetstream' || s.jetstream !== undefined,
        'storage.backend "jetstream" needs a storage.jetstream section (servers at least)',
      ),
    ),
    {},
  ),
  limits: v.optional(LimitsSchema, {}),
  /** Deployment snapshots to the setup authority (docs/setup-protocol.md); absent = not a managed deployment. */
  deployment: v.optional(
    v.strictObject({
      authorityUrl: v.pipe(v.string(), v.maxLength(2048), v.url(), v.regex(/^https?:\/\//, 'expected an http(s) URL')),
      deploymentId: v.pipe(v.string(), v.regex(/^dep_[A-Za-z0-9_-]{22}$/, 'expected a dep_... deployment id')),
      identityKeyFile: v.pipe(
        PathText,
        v.check((p) => p.startsWith('/'), 'expected an absolute path'),
      ),
      intervalSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(3600)), 60),
      instanceUrl: v.optional(v.pipe(v.string(), v.maxLength(2048), v.url())),
      centralVmId: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(128))),
      /** The installer's enrollment grants (token hashes of this epoch's collectors), imported at start. */
      enrollmentGrantsFile: v.optional(
        v.pipe(
          PathText,
          v.check((p) => p.startsWith('/'), 'expected an absolute path'),
        ),
      ),
    }),
  ),
  /** Signed checkpoints of the log's Merkle tree (docs/log.md, "verifying the log as an outsider"). */
  log: v.optional(
    v.strictObject({
      checkpointEveryRecords: v.optional(
        v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100_000_000)),
        10_000,
      ),
      checkpointEverySeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(86_400)), 60),
      /**
       * Who signs the head of every commit (docs/log.md, "Signed heads"): a `vigil signer` process on
       * `socket`, which holds the key the writer cannot read; without a socket, this process with the
       * key file `keyFile` (default: `$CREDENTIALS_DIRECTORY/log-signing.key` under systemd's
       * `LoadCredential=`, else `keys/log-signing.key` beside the store folder) and its state in `stateDir`
       * (default: `signer/` beside the store folder).
       */
      signer: v.optional(
        v.strictObject({
          socket: v.optional(PathText),
          keyFile: v.optional(PathText),
          stateDir: v.optional(PathText),
          /** How long a start waits for the signer's socket to answer. */
          waitSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(600)), 30),
        }),
        {},
      ),
      /** Verifier keys (`name+hash+key`) of witnesses whose cosignatures the instance accepts and serves. */
      witnesses: v.optional(v.pipe(v.array(VerifierKey), v.maxLength(64)), []),
      /** Witnesses pushed every checkpoint over C2SP tlog-witness; their keys count as `witnesses` too. */
      witnessPush: v.optional(v.pipe(v.array(WitnessPushSchema), v.maxLength(16)), []),
      witnessPushSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(86_400)), 60),
      /** Past this age of the newest cosignature the health detail says the checkpoints are stale. */
      cosignedMaxAgeSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(30 * 86_400)), 900),
    }),
    {},
  ),
  /** What leaves the machine (docs/export.md); absent: nothing does. */
  export: v.optional(ExportConfigSchema, {}),
  /** Threat intelligence the instance fetches itself (docs/intel.md); posted bundles need none of it. */
  intel: v.optional(
    v.strictObject({
      feeds: v.optional(v.pipe(v.array(IntelFeedSchema), v.maxLength(64)), []),
      /** How many days of stored evidence are searched again for indicators a feed adds (0: none). */
      retroDays: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(365)), 30),
      /** The most events one such search reads, and the longest it runs. */
      retroMaxEvents: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100_000_000)), 5_000_000),
      retroSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(86_400)), 600),
    }),
    {},
  ),
  detection: v.optional(
    v.strictObject({
      incidentWindowMinutes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(10_080)), 60),
      freshnessHours: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(720)), 24),
      /** How long before an exception expires its owner is reminded by an alert (docs/detections.md "Exceptions"). */
      exceptionReminderHours: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(720)), 72),
      /** What an import refuses outright (docs/detections.md "Rule budgets"). */
      limits: v.optional(
        v.strictObject({
          valuesPerField: v.optional(
            v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100_000)),
            DEFAULT_RULE_LIMITS.valuesPerField,
          ),
          regexesPerRule: v.optional(
            v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(10_000)),
            DEFAULT_RULE_LIMITS.regexesPerRule,
          ),
          patternLength: v.optional(
            v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(4096)),
            DEFAULT_RULE_LIMITS.patternLength,
          ),
          compiledSize: v.optional(
            v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(16_777_216)),
            DEFAULT_RULE_LIMITS.compiledSize,
          ),
        }),
        {},
      ),
      /** The time a rule may take at run time before it is quarantined (docs/detections.md "Rule budgets"). */
      ruleBudget: v.optional(
        v.strictObject({
          batchMs: v.optional(
            v.pipe(v.number(), v.integer(), v.minValue(10), v.maxValue(60_000)),
            DEFAULT_RULE_BUDGET.batchMs,
          ),
          eventMicros: v.optional(
            v.pipe(v.number(), v.integer(), v.minValue(10), v.maxValue(1_000_000)),
            DEFAULT_RULE_BUDGET.eventMicros,
          ),
        }),
        {},
      ),
    }),
    {},
  ),
  /** The analyst console's browser sessions (docs/console.md). */
  console: v.optional(
    v.strictObject({
      sessionIdleMinutes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1440)), 30),
      sessionMaxHours: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(168)), 12),
    }),
    {},
  ),
  /** Syslog listeners (docs/shippers.md): none unless configured. */
  syslog: v.optional(
    v.strictObject({
      listeners: v.optional(SyslogListenersSchema, []),
    }),
    {},
  ),
  /** Silent sources, disk watermarks and health (docs/monitoring.md); reloaded on SIGHUP. */
  monitoring: v.optional(MonitoringSchema, {}),
  /** Retention: what expires from the live store, archived first (docs/log.md "Retention"); off by default. */
  retention: v.optional(RetentionSchema, {}),
});

/** The validated configuration with every default filled in. */
export type Config = v.InferOutput<typeof ConfigSchema>;
