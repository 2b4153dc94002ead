import * as v from 'valibot';
import { createHash } from 'node:crypto';
import { decideFeedUpdate } from '../../commands/intel-feeds.js';
import { IntelFormatError } from '../../detection/intel/normalize.js';
import { readStixBundle } from '../../detection/intel/stix-bundle.js';
import { FEED_KINDS, UnsupportedIndicatorSchema } from '../../events/intel-events.js';
import { canonicalJson } from '../../kernel/canonical-json.js';
import { indicatorCount } from '../../projections/intel.js';
import { readJsonBody } from '../body.js';
import { HttpError, parseOr400 } from '../errors.js';
import { commandContext, executeAudited } from '../request-context.js';
import { route, type Route } from '../route.js';
import type { AppDeps } from '../env.js';

const Count = v.pipe(v.number(), v.integer());

/** What a feed's fetches are doing, for the feeds the service fetches itself (absent for posted feeds). */
const FetchStatusSchema = v.strictObject({
  state: v.picklist(['pending', 'ok', 'failing']),
  lastAttemptAt: v.nullable(v.string()),
  lastSuccessAt: v.nullable(v.string()),
  lastError: v.nullable(v.string()),
  failures: Count,
  nextAttemptAt: v.nullable(v.string()),
});

/** One feed as `GET /api/v1/intel/feeds` lists it: what the log holds of it, and its fetches when it is fetched. */
const FeedSchema = v.strictObject({
  name: v.string(),
  kind: v.picklist(FEED_KINDS),
  /** `ok` for a posted feed; for a fetched one, its fetches' state (`pending`, `ok`, `failing`). */
  state: v.picklist(['pending', 'ok', 'failing']),
  version: v.nullable(v.string()),
  updatedAt: v.nullable(v.string()),
  total: Count,
  lastChange: v.nullable(v.strictObject({ added: Count, removed: Count, expired: Count })),
  unsupported: v.array(UnsupportedIndicatorSchema),
  unsupportedCount: Count,
  fetch: v.optional(FetchStatusSchema),
  /** The search of stored evidence for the indicators its last change added (docs/intel.md "Back in time"). */
  retro: v.optional(
    v.strictObject({
      state: v.picklist(['running', 'done']),
      indicators: Count,
      since: v.string(),
      until: v.string(),
      scanned: Count,
      matched: Count,
      complete: v.boolean(),
      startedAt: v.string(),
      finishedAt: v.nullable(v.string()),
    }),
  ),
});

/** What a feed's update changed (`POST /api/v1/intel/bundles`). */
const UpdateAnswer = v.strictObject({
  feed: v.string(),
  version: v.string(),
  changed: v.boolean(),
  added: Count,
  removed: Count,
  expired: Count,
  total: Count,
  unsupported: v.array(UnsupportedIndicatorSchema),
  unsupportedCount: Count,
});

/** How long a posted bundle's answer waits for its search back in time (which goes on past it). */
const RETRO_WAIT_MS = 2000;

/** Query of `POST /api/v1/intel/bundles`: the feed the bundle's indicators join (default `posted`). */
export const PostBundleQuery = v.strictObject({
  feed: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'expected a feed name'))),
});

/** Every feed: those the service fetches (in the configured order), then those only posted, with what the log holds. */
export function feedsAnswer(deps: AppDeps) {
  const intel = deps.reads.intel;
  const fetched = deps.intelFeeds?.status() ?? [];
  const logged = (name: string) => {
    const f = intel.feeds.get(name);
    const retro = deps.intelRetro?.progress(name);
    return {
      ...(retro ? { retro } : {}),
      version: f?.version ?? null,
      updatedAt: f?.updatedAt ?? null,
      total: f?.total ?? 0,
      lastChange: f?.lastChange ?? null,
      unsupported: f?.unsupported ?? [],
      unsupportedCount: f?.unsupportedCount ?? 0,
    };
  };
  const feeds = [
    ...fetched.map(({ name, kind, ...fetch }) => ({ name, kind, state: fetch.state, ...logged(name), fetch })),
    ...[...intel.feeds.values()]
      .filter((f) => !fetched.some((x) => x.name === f.name))
      .map((f) => ({ name: f.name, kind: f.kind, state: 'ok' as const, ...logged(f.name) })),
  ];
  return { feeds, indicators: indicatorCount(intel) };
}

const listFeedsRoute = route({
  method: 'get',
  path: '/api/v1/intel/feeds',
  operationId: 'listIntelFeeds',
  summary: 'Threat intelligence feeds: kind, version, when updated, indicators held, what changed last, unsupported',
  permission: 'rules:read',
  audit: 'list_intel_feeds',
  success: {
    status: 200,
    description: '`{feeds, indicators}`',
    schema: v.strictObject({ feeds: v.array(FeedSchema), indicators: Count }),
  },
  errors: [],
  handle: async (c, { deps }) => {
    await deps.readYourWrites();
    return c.json(feedsAnswer(deps));
  },
});

const postBundleRoute = route({
  method: 'post',
  path: '/api/v1/intel/bundles',
  operationId: 'postIntelBundle',
  summary:
    "Add a STIX 2.1 bundle's indicators to a feed (`feed`, default `posted`): active at once for ingest; indicators " +
    'Vigil cannot evaluate are listed with why',
  permission: 'rules:write',
  audit: 'post_intel_bundle',
  query: PostBundleQuery,
  body: { json: v.unknown() },
  success: { status: 200, description: 'what the bundle changed', schema: UpdateAnswer },
  errors: [400, 413, 415],
  handle: async (c, { deps }) => {
    const q = parseOr400(PostBundleQuery, c.req.query(), 'query');
    const json = await readJsonBody(c, deps.config.limits.bodyBytes);
    let set;
    try {
      set = readStixBundle(json);
    } catch (err) {
      if (err instanceof IntelFormatError) throw new HttpError(400, 'not a STIX 2.1 bundle', [err.message]);
      throw err;
    }
    const version = `sha256:${createHash('sha256').update(canonicalJson(json)).digest('hex')}`;
    const ctx = commandContext(c, deps);
    const update = { feed: q.feed ?? 'posted', kind: 'posted' as const, version, set, mode: 'merge' as const };
    const { result } = await executeAudited(c, deps, (m) => decideFeedUpdate(m.intel, update, ctx.now), 200);
    const { addedIndicators, ...answer } = result;
    // The search back in time for what the bundle added: answered with once it is done, or after RETRO_WAIT_MS.
    const search =
      addedIndicators.length > 0 ? deps.intelRetro?.search(update.feed, version, addedIndicators) : undefined;
    if (search) await Promise.race([search.catch(() => undefined), new Promise((r) => setTimeout(r, RETRO_WAIT_MS))]);
    return c.json(answer, 200);
  },
});

const pollFeedRoute = route({
  method: 'post',
  path: '/api/v1/intel/feeds/{name}/poll',
  operationId: 'pollIntelFeed',
  summary: 'Fetch a configured feed now (rather than at its next interval); answers the feed as the list shows it',
  permission: 'rules:write',
  audit: 'poll_intel_feed',
  params: v.object({ name: v.string() }),
  body: { json: v.optional(v.strictObject({})) },
  success: { status: 200, description: 'the feed', schema: FeedSchema },
  errors: [404, 415],
  handle: async (c, { deps }) => {
    const name = c.req.param('name');
    const polled = await deps.intelFeeds?.pollNow(name);
    if (!polled) throw new HttpError(404, `no feed ${name.slice(0, 64)} is configured (intel.feeds)`);
    await deps.readYourWrites();
    return c.json(feedsAnswer(deps).feeds.find((f) => f.name === name)!);
  },
});

/** Threat intelligence routes (`/api/v1/intel`). */
export const intelRoutes: readonly Route[] = [listFeedsRoute, pollFeedRoute, postBundleRoute];
