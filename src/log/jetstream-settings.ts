/**
 * The cluster settings that live in NATS, checked against this node's configuration at start: the
 * stream's replicas, duplicate window and largest message, and the leader lease bucket's lease time,
 * history and replicas. What NATS changes in place is changed (one info line each, old and new value);
 * what it cannot change, or refuses to, stops the start with the setting, both values and what to do
 * (docs/scale-out.md, "Cluster settings").
 */
import type { JetStreamManager, StreamConfig } from '@nats-io/jetstream';
import type { JetStreamConfig } from './jetstream-config.js';

/** Where a node says what it changed (the service's log). */
export type SettingNotice = (line: Record<string, unknown>) => void;

/** The lease's KV bucket, and the stream NATS keeps it in. */
export const leaseBucketOf = (stream: string): string => `${stream}_leader`;
const bucketStreamOf = (stream: string): string => `KV_${leaseBucketOf(stream)}`;

/** The settings every node of one cluster must share; the lease holder advertises its own in the lease. */
export interface SharedSettings {
  readonly leaseSeconds: number;
  readonly replicas: number;
  readonly publishTimeoutSeconds: number;
}

export const sharedSettingsOf = (config: JetStreamConfig): SharedSettings => ({
  leaseSeconds: config.leaseSeconds,
  replicas: config.replicas,
  publishTimeoutSeconds: config.publishTimeoutSeconds,
});

/** A setting to bring to its configured value: its values, its configuration key, what to do if refused. */
interface Change {
  readonly setting: keyof StreamConfig;
  readonly from: number;
  readonly to: number;
  readonly configKey: string;
  readonly remedy: string;
}

const NANOS = 1_000_000_000;
const shown = (c: Change, n: number) => (/max_age|duplicate_window/.test(c.setting) ? `${n / NANOS} s` : String(n));
const replicasRemedy = (config: JetStreamConfig, have: number) =>
  `run ${config.replicas} NATS servers in one cluster with JetStream on, or set storage.jetstream.replicas back to ` +
  `${have} on every node`;

/**
 * Applies `changes` to `stream` in one update (with `along`, what they need besides), and logs each; a
 * refusal by NATS stops the start.
 */
async function apply(
  jsm: JetStreamManager,
  stream: string,
  changes: readonly Change[],
  notice: SettingNotice,
  along: Partial<StreamConfig> = {},
): Promise<void> {
  if (changes.length === 0) return;
  const update = { ...along, ...Object.fromEntries(changes.map((c) => [c.setting, c.to])) };
  const refused = (why: string) => {
    const listed = changes.map(
      (c) => `${c.setting} is ${shown(c, c.from)} in NATS and ${c.configKey} asks for ${shown(c, c.to)}`,
    );
    return new Error(
      `refusing to start: ${stream}: ${listed.join('; ')}, and NATS refused the change (${why}): ` +
        `${changes.map((c) => c.remedy).join('; ')} (docs/scale-out.md, "Cluster settings")`,
    );
  };
  const updated = await jsm.streams.update(stream, update).catch((err: Error) => {
    throw refused(err.message);
  });
  // A server may answer an update without applying all of it (a standalone server keeps one replica).
  const kept = changes.filter((c) => (updated.config as unknown as Record<string, unknown>)[c.setting] !== c.to);
  if (kept.length > 0) throw refused(`it kept ${kept.map((c) => c.setting).join(', ')}`);
  if (changes.some((c) => c.setting === 'num_replicas')) await placed(jsm, stream);
  for (const c of changes) {
    notice({
      level: 'info',
      msg: 'cluster setting updated to match the configuration',
      stream,
      setting: c.setting,
      old: shown(c, c.from),
      new: shown(c, c.to),
      configKey: c.configKey,
    });
  }
}

/** Waits (up to 30 s) until a stream whose replicas changed has a leader and every replica is current. */
async function placed(jsm: JetStreamManager, stream: string): Promise<void> {
  for (let tries = 0; tries < 150; tries++) {
    const info = await jsm.streams.info(stream).catch(() => undefined);
    const cluster = info?.cluster;
    if (!cluster || (cluster.leader && (cluster.replicas ?? []).every((r) => r.current))) return;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * Brings an existing log stream to the configuration: its replicas (either way, as configured), its
 * duplicate window and its largest message (raised only: a larger one than this node needs is kept,
 * so nodes never undo each other's change).
 */
export async function updateStreamSettings(
  jsm: JetStreamManager,
  have: StreamConfig,
  wanted: { num_replicas: number; duplicate_window: number; max_msg_size: number },
  config: JetStreamConfig,
  notice: SettingNotice,
): Promise<void> {
  const changes: Change[] = [];
  if (have.num_replicas !== wanted.num_replicas) {
    changes.push({
      setting: 'num_replicas',
      from: have.num_replicas,
      to: wanted.num_replicas,
      configKey: 'storage.jetstream.replicas',
      remedy: replicasRemedy(config, have.num_replicas),
    });
  }
  if ((have.duplicate_window ?? 0) < wanted.duplicate_window) {
    changes.push({
      setting: 'duplicate_window',
      from: have.duplicate_window ?? 0,
      to: wanted.duplicate_window,
      configKey: 'storage.jetstream.publishTimeoutSeconds (4 x, at least 120 s)',
      remedy: 'lower storage.jetstream.publishTimeoutSeconds',
    });
  }
  if (have.max_msg_size > 0 && have.max_msg_size < wanted.max_msg_size) {
    changes.push({
      setting: 'max_msg_size',
      from: have.max_msg_size,
      to: wanted.max_msg_size,
      configKey: "the NATS servers' max_payload",
      remedy: 'give every NATS server the same max_payload',
    });
  }
  await apply(jsm, have.name, changes, notice);
}

/**
 * Brings an existing lease bucket to the configuration: its lease time (`max_age`, either way), one
 * entry of history and its replicas. A bucket that does not exist yet is left to the lease, which
 * creates it with these values. Memory storage cannot be changed in place and is refused.
 */
export async function updateLeaseBucket(
  jsm: JetStreamManager,
  config: JetStreamConfig,
  notice: SettingNotice,
): Promise<void> {
  const name = bucketStreamOf(config.stream);
  const info = await jsm.streams.info(name).catch((err: Error) => {
    if ((err as { name?: string }).name === 'StreamNotFoundError' || /stream not found/i.test(err.message))
      return undefined;
    throw err;
  });
  if (!info) return;
  const have = info.config;
  if (have.storage !== 'file') {
    throw new Error(
      `refusing to start: the lease bucket ${leaseBucketOf(config.stream)} has storage ${have.storage} in NATS and ` +
        `needs file, which NATS cannot change in place: stop every node, remove the bucket ` +
        `(nats kv del ${leaseBucketOf(config.stream)}) and start the nodes again ` +
        `(docs/scale-out.md, "Cluster settings")`,
    );
  }
  const changes: Change[] = [];
  const lease = config.leaseSeconds * NANOS;
  if (have.max_age !== lease) {
    changes.push({
      setting: 'max_age',
      from: have.max_age,
      to: lease,
      configKey: 'storage.jetstream.leaseSeconds',
      remedy: 'set storage.jetstream.leaseSeconds between 3 and 300',
    });
  }
  if (have.max_msgs_per_subject !== 1) {
    changes.push({
      setting: 'max_msgs_per_subject',
      from: have.max_msgs_per_subject,
      to: 1,
      configKey: 'the lease (one entry of history)',
      remedy: `remove the bucket with every node stopped (nats kv del ${leaseBucketOf(config.stream)})`,
    });
  }
  if (have.num_replicas !== config.replicas) {
    changes.push({
      setting: 'num_replicas',
      from: have.num_replicas,
      to: config.replicas,
      configKey: 'storage.jetstream.replicas',
      remedy: replicasRemedy(config, have.num_replicas),
    });
  }
  // NATS keeps a bucket's duplicate window within its max_age (as it made it: the smaller of the two and 2 minutes).
  const along = have.max_age !== lease ? { duplicate_window: Math.min(lease, 120 * NANOS) } : {};
  await apply(jsm, name, changes, notice, along);
}

/**
 * Refuses to start while another node holds the lease with other shared settings: a node that changed
 * them under a running leader would cut its lease short or undo its change at the next start. Every
 * node needs the same values; a change is made on every node's configuration, and the nodes refuse
 * until the leader runs with it too (under systemd they start again by themselves). A lease written
 * by a version that did not advertise its settings, or by this very node, is not compared.
 */
export async function checkLeaseHolder(jsm: JetStreamManager, config: JetStreamConfig, self: string): Promise<void> {
  const bucket = leaseBucketOf(config.stream);
  const entry = await jsm.streams
    .getMessage(bucketStreamOf(config.stream), { last_by_subj: `$KV.${bucket}.leader` })
    .catch(() => null);
  if (!entry || /DEL|PURGE/.test(entry.header?.get('KV-Operation') ?? '')) return;
  let held: Partial<SharedSettings> & { node?: unknown };
  try {
    held = JSON.parse(entry.string()) as typeof held;
  } catch {
    return;
  }
  if (held.node === self || typeof held.node !== 'string') return;
  const mine = sharedSettingsOf(config);
  const differ = (Object.keys(mine) as (keyof SharedSettings)[]).filter(
    (k) => held[k] !== undefined && held[k] !== mine[k],
  );
  if (differ.length === 0) return;
  const listed = differ.map((k) => `storage.jetstream.${k} is ${held[k]} there and ${mine[k]} here`).join(', ');
  throw new Error(
    `refusing to start: node ${held.node} leads the cluster with other settings (${listed}): every node needs the ` +
      `same values; change the configuration of every node, then restart the leader too: this node starts once the ` +
      `node that leads has the new values (docs/scale-out.md, "Cluster settings")`,
  );
}
