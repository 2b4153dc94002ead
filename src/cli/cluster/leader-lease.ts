import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';

/** The lease naming the one node whose writer appends to the log (docs/scale-out.md). */
export interface LeaderLease {
  /** Whether this node holds the lease by its own clock, with a margin before the server would expire it. */
  held(): boolean;
  /** The node that held the lease when it was last looked at (this one, another, or none). */
  leader(): string | undefined;
  /** Stops campaigning and, when held, releases the lease so another node takes over at once. */
  stop(): Promise<void>;
}

/** What the lease needs: the bucket, this node's name, the lease time, and what to do on gaining and losing it. */
export interface LeaseOptions {
  readonly nc: NatsConnection;
  readonly bucket: string;
  readonly node: string;
  readonly ttlMs: number;
  readonly replicas: number;
  /** What the holder says in the lease besides its name: the settings every node must share (jetstream-settings.ts). */
  readonly advertise?: object;
  /** Runs once the lease is won; the node leads only after it resolves (it catches the log up). */
  onAcquired(): Promise<void>;
  /** Runs when the lease is lost (not renewed in time, or taken): the node stops appending. */
  onLost(reason: string): void;
  readonly log: (line: Record<string, unknown>) => void;
  /** Runs whenever the node seen holding the lease changes (undefined: none seen). */
  onLeaderChange?(leader: string | undefined): void;
  /** Monotonic milliseconds; the lease is judged by elapsed time, never by wall clocks. */
  readonly now?: () => number;
}

const KEY = 'leader';

/**
 * Campaigns for the lease in a KV bucket whose entries expire after the lease time: `create`
 * succeeds only when no node holds it, and the holder renews with `update` on the revision it
 * wrote, every third of the lease time. The holder counts the lease as held until 80% of the lease
 * time after it sent its last successful renewal, so it stops appending before the server could
 * give the lease to another node; the stream's expected last sequence fences any write that
 * still slips through (a paused process).
 */
export async function startLeaderLease(opts: LeaseOptions): Promise<LeaderLease> {
  const now = opts.now ?? (() => performance.now());
  const kv: KV = await new Kvm(opts.nc).create(opts.bucket, { ttl: opts.ttlMs, history: 1, replicas: opts.replicas });
  let revision: number | undefined;
  let validUntil = 0;
  let known: string | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let tick: Promise<void> = Promise.resolve();
  const value = JSON.stringify({ ...opts.advertise, node: opts.node });
  // The lease time the holder counts with: its own, or the bucket's when another node set it shorter meanwhile.
  let ttlMs = opts.ttlMs;
  const bucketTtl = async () => {
    const ttl = await kv
      .status()
      .then((s) => s.ttl)
      .catch(() => 0);
    return ttl > 0 ? Math.min(opts.ttlMs, ttl) : opts.ttlMs;
  };

  function see(leader: string | undefined): void {
    if (leader === known) return;
    known = leader;
    opts.onLeaderChange?.(leader);
  }

  function lose(reason: string): void {
    if (revision === undefined) return;
    revision = undefined;
    validUntil = 0;
    see(undefined);
    opts.log({ level: 'warn', msg: 'leader lease lost: this node stops appending', node: opts.node, reason });
    opts.onLost(reason);
  }

  async function campaign(): Promise<void> {
    const sent = now();
    if (revision !== undefined) {
      try {
        revision = await kv.update(KEY, value, revision);
        validUntil = sent + ttlMs * 0.8;
      } catch (err) {
        if (/wrong last sequence/i.test((err as Error)?.message ?? '')) lose('another node holds the lease');
        else if (now() >= validUntil) lose(`not renewed in time: ${(err as Error)?.message}`);
      }
      return;
    }
    try {
      const won = await kv.create(KEY, value);
      ttlMs = await bucketTtl();
      revision = won;
      validUntil = sent + ttlMs * 0.8;
      see(opts.node);
      opts.log({ level: 'info', msg: 'leader lease won: catching up, then appending', node: opts.node });
      // Renewals go on while the node catches up: a long catch-up must not cost the lease.
      opts.onAcquired().catch((err: unknown) => lose(`could not take over: ${(err as Error)?.message}`));
    } catch {
      const entry = await kv.get(KEY).catch(() => null);
      see(entry && entry.operation === 'PUT' ? (JSON.parse(entry.string()) as { node?: string }).node : undefined);
    }
  }

  function schedule(): void {
    if (stopped) return;
    timer = setTimeout(
      () => {
        tick = campaign().finally(schedule);
      },
      Math.max(200, Math.floor(ttlMs / 3)),
    );
  }

  tick = campaign().finally(schedule);
  await tick;
  return {
    held: () => revision !== undefined && now() < validUntil,
    leader: () => (revision !== undefined ? opts.node : known),
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await tick.catch(() => undefined);
      if (revision !== undefined) {
        const held = revision;
        revision = undefined;
        await kv.delete(KEY, { previousSeq: held }).catch(() => undefined);
      }
    },
  };
}
