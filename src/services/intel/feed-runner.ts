import { readFileSync } from 'node:fs';
import { decideFeedUpdate, type FeedUpdate } from '../../commands/intel-feeds.js';
import type { Pipeline } from '../../commands/pipeline.js';
import { readIndicatorList } from '../../detection/intel/lists.js';
import { readMispEvent } from '../../detection/intel/misp.js';
import { readStixBundle } from '../../detection/intel/stix-bundle.js';
import type { Indicator, UnsupportedIndicator } from '../../detection/intel/types.js';
import { secretFileProblem } from '../../kernel/secret-files.js';
import type { WriteModels } from '../../projections/models.js';
import type { IntelFeedConfig } from '../config-schema.js';
import { fetchDocument, fetchMispFeed } from './feed-fetch.js';
import { DEFAULT_TAXII_BOUNDS, pollTaxiiCollection } from './taxii-client.js';

/** A configured feed as its fetches go: the last attempt, success and error, and when it is fetched next. */
export interface FeedStatus {
  readonly name: string;
  readonly kind: IntelFeedConfig['kind'];
  /** `pending` before its first fetch; `failing` while fetches fail (its last good indicators stay active). */
  readonly state: 'pending' | 'ok' | 'failing';
  readonly lastAttemptAt: string | null;
  readonly lastSuccessAt: string | null;
  readonly lastError: string | null;
  readonly failures: number;
  readonly nextAttemptAt: string | null;
}

/** The feeds' runner: started with the service, stopped with it; `pollNow` fetches one feed at once. */
export interface FeedRunner {
  start(): void;
  stop(): Promise<void>;
  status(): FeedStatus[];
  pollNow(name: string): Promise<FeedStatus | undefined>;
}

/** What the runner needs. */
export interface FeedRunnerOptions {
  readonly feeds: readonly IntelFeedConfig[];
  /** The pipeline of the node that writes (on a JetStream node, the leader's). */
  readonly pipeline: Pipeline<WriteModels>;
  readonly now: () => Date;
  readonly log: (line: Record<string, unknown>) => void;
  readonly fetchImpl?: typeof fetch;
  /** On a JetStream node: whether this node leads (only the leader fetches; the others wait their turn). */
  readonly leads?: () => boolean;
  /** Called with the indicators a fetch added: the search of stored evidence for them (retro-search.ts). */
  readonly added?: (feed: string, version: string, indicators: readonly Indicator[]) => void;
}

/** The most a failing feed waits before it is tried again (doubling from 30 s), and never more than its interval. */
const FIRST_RETRY_MS = 30_000;

/** Bounds of one document or answer a feed fetch reads. */
const DOCUMENT_BOUNDS = { maxBytes: 256 * 1024 * 1024, timeoutMs: 60_000 };

/** The value of a feed's `Authorization` header from its owner-only file; a file others can read is refused. */
function authorizationOf(feed: IntelFeedConfig): string | undefined {
  if (feed.authFile === undefined) return undefined;
  const problem = secretFileProblem(feed.authFile);
  if (problem) throw new Error(`intel feed ${feed.name}: ${problem}`);
  return readFileSync(feed.authFile, 'utf8').trim();
}

/** Where a feed resumes: the TAXII `added_after` point, the MISP events' timestamps; in memory (a restart re-reads). */
interface Resume {
  addedAfter?: string;
  mispEvents: Map<string, number>;
}

/** Reads one feed into an update: what its documents hold now, as indicators, and their version. */
async function readFeed(feed: IntelFeedConfig, resume: Resume, fetchImpl: typeof fetch): Promise<FeedUpdate> {
  const authorization = authorizationOf(feed);
  const base = { feed: feed.name, kind: feed.kind } as const;
  switch (feed.kind) {
    case 'stix-bundle': {
      const doc = await fetchDocument(feed.url, authorization, DOCUMENT_BOUNDS, fetchImpl);
      const set = readStixBundle(JSON.parse(doc.body.toString('utf8')));
      return { ...base, version: `sha256:${doc.sha256}`, set, mode: 'replace' };
    }
    case 'list': {
      const doc = await fetchDocument(feed.url, authorization, DOCUMENT_BOUNDS, fetchImpl);
      const set = readIndicatorList(doc.body.toString('utf8'), feed.type);
      return { ...base, version: `sha256:${doc.sha256}`, set, mode: 'replace' };
    }
    case 'taxii21': {
      const poll = await pollTaxiiCollection(
        { url: feed.url, collection: feed.collection ?? '', ...(authorization ? { authorization } : {}) },
        resume.addedAfter,
        { ...DEFAULT_TAXII_BOUNDS, timeoutMs: DOCUMENT_BOUNDS.timeoutMs },
        fetchImpl,
      );
      const set = readStixBundle(poll.objects);
      if (poll.addedLast !== undefined) resume.addedAfter = poll.addedLast;
      return { ...base, version: `taxii:${poll.addedLast ?? 'none'}`, set, mode: 'merge' };
    }
    case 'misp': {
      const got = await fetchMispFeed(
        feed.url,
        resume.mispEvents,
        authorization,
        { ...DOCUMENT_BOUNDS, maxEvents: 1000 },
        fetchImpl,
      );
      const indicators: Indicator[] = [];
      const unsupported: UnsupportedIndicator[] = [];
      for (const c of got.changed) {
        const set = readMispEvent(c.event);
        indicators.push(...set.indicators);
        unsupported.push(...set.unsupported);
        resume.mispEvents.set(c.uuid, c.timestamp);
      }
      for (const uuid of got.removed) resume.mispEvents.delete(uuid);
      return { ...base, version: `sha256:${got.sha256}`, set: { indicators, unsupported }, mode: 'merge' };
    }
  }
}

/**
 * Fetches each configured feed at start and every `intervalSeconds`, and records what changed through the pipeline
 * (decideFeedUpdate). A fetch that fails changes nothing in the log: the feed's last good indicators stay active,
 * its state is `failing` with the error (never the credential), and it is tried again after 30 s, doubling, at most its
 * interval.
 */
export function createFeedRunner(o: FeedRunnerOptions): FeedRunner {
  const fetchImpl = o.fetchImpl ?? fetch;
  const states = new Map(
    o.feeds.map((f) => [
      f.name,
      {
        feed: f,
        status: {
          name: f.name,
          kind: f.kind,
          state: 'pending',
          lastAttemptAt: null,
          lastSuccessAt: null,
          lastError: null,
          failures: 0,
          nextAttemptAt: null,
        } as FeedStatus,
        resume: { mispEvents: new Map() } as Resume,
        timer: undefined as NodeJS.Timeout | undefined,
        running: Promise.resolve() as Promise<unknown>,
      },
    ]),
  );
  let stopped = false;

  const schedule = (name: string, delayMs: number) => {
    const s = states.get(name)!;
    if (stopped) return;
    if (s.timer) clearTimeout(s.timer);
    s.status = { ...s.status, nextAttemptAt: new Date(o.now().getTime() + delayMs).toISOString() };
    s.timer = setTimeout(() => void poll(name), delayMs);
    s.timer.unref();
  };

  const attempt = async (name: string): Promise<void> => {
    const s = states.get(name)!;
    if (o.leads && !o.leads()) return schedule(name, s.feed.intervalSeconds * 1000);
    const at = o.now().toISOString();
    try {
      const update = await readFeed(s.feed, s.resume, fetchImpl);
      const ctx = { now: o.now().toISOString() };
      const out = await o.pipeline.dispatch({ decide: (m) => decideFeedUpdate(m.intel, update, ctx.now), ctx });
      if (!out.ok) throw new Error(out.rejection.message);
      if (out.result.changed)
        o.log({
          level: 'info',
          msg: 'intel feed updated',
          feed: name,
          added: out.result.added,
          total: out.result.total,
        });
      if (out.result.addedIndicators.length > 0) o.added?.(name, update.version, out.result.addedIndicators);
      s.status = { ...s.status, state: 'ok', lastAttemptAt: at, lastSuccessAt: at, lastError: null, failures: 0 };
      schedule(name, s.feed.intervalSeconds * 1000);
    } catch (err) {
      const failures = s.status.failures + 1;
      const error = ((err as Error)?.message ?? String(err)).slice(0, 500);
      s.status = { ...s.status, state: 'failing', lastAttemptAt: at, lastError: error, failures };
      o.log({ level: 'warn', msg: 'intel feed failing', feed: name, failures, error });
      schedule(name, Math.min(s.feed.intervalSeconds * 1000, FIRST_RETRY_MS * 2 ** Math.min(failures - 1, 20)));
    }
  };

  // One fetch of a feed at a time: a poll asked for while one runs waits for it, then runs.
  function poll(name: string): Promise<unknown> {
    const s = states.get(name)!;
    s.running = s.running.then(() => (stopped ? undefined : attempt(name)));
    return s.running;
  }

  return {
    start() {
      for (const name of states.keys()) schedule(name, 0);
    },
    async stop() {
      stopped = true;
      for (const s of states.values()) if (s.timer) clearTimeout(s.timer);
      await Promise.all([...states.values()].map((s) => s.running.catch(() => undefined)));
    },
    status: () => [...states.values()].map((s) => s.status),
    async pollNow(name) {
      if (!states.has(name)) return undefined;
      await poll(name);
      return states.get(name)!.status;
    },
  };
}
