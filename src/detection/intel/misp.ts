import { cut, IntelFormatError, normalizeCidr, normalizeIp, normalizeTerm } from './normalize.js';
import type { Indicator, IndicatorSet, IndicatorTerm, RelatedObject, UnsupportedIndicator } from './types.js';

/**
 * MISP feeds (issue 60): a feed is `manifest.json` (every event's uuid and timestamp) and one `<uuid>.json` per
 * event. Only attributes marked `to_ids` (the producer's "meant for detection") become indicators.
 */

/** The most attributes one event may hold, objects' attributes included. */
export const MAX_MISP_ATTRIBUTES = 1_000_000;

type Obj = Record<string, unknown>;
type Kind = 'address' | 'domain' | 'url' | 'md5' | 'sha1' | 'sha256' | 'email';

const isObj = (x: unknown): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x);
const list = (x: unknown): unknown[] => (Array.isArray(x) ? x : []);

/**
 * What each supported attribute type holds: for a composite type (`a|b`), the kinds of its parts in order, undefined
 * for a part Vigil does not match (a file name, a port).
 */
const TYPES: Record<string, ReadonlyArray<Kind | undefined>> = {
  'ip-src': ['address'],
  'ip-dst': ['address'],
  'ip-src|port': ['address', undefined],
  'ip-dst|port': ['address', undefined],
  domain: ['domain'],
  hostname: ['domain'],
  'hostname|port': ['domain', undefined],
  'domain|ip': ['domain', 'address'],
  url: ['url'],
  link: ['url'],
  md5: ['md5'],
  sha1: ['sha1'],
  sha256: ['sha256'],
  'filename|md5': [undefined, 'md5'],
  'filename|sha1': [undefined, 'sha1'],
  'filename|sha256': [undefined, 'sha256'],
  'malware-sample': [undefined, 'md5'],
  email: ['email'],
  'email-src': ['email'],
  'email-dst': ['email'],
};

const SUPPORTED =
  'ip-src, ip-dst (and |port), domain, hostname, domain|ip, url, link, md5, sha1, sha256, ' +
  'filename|md5/sha1/sha256, malware-sample, email, email-src, email-dst';

/** Galaxy types named as the STIX object types an alert shows; others keep their MISP galaxy type. */
const GALAXY_TYPES: Record<string, string> = {
  'threat-actor': 'threat-actor',
  'mitre-intrusion-set': 'intrusion-set',
  'mitre-enterprise-attack-intrusion-set': 'intrusion-set',
  'mitre-malware': 'malware',
  malpedia: 'malware',
  ransomware: 'malware',
  rat: 'malware',
  botnet: 'malware',
  tool: 'tool',
  'mitre-tool': 'tool',
  'mitre-attack-pattern': 'attack-pattern',
};

function term(kind: Kind, raw: string): IndicatorTerm | undefined {
  if (kind === 'address') {
    if (raw.includes('/')) {
      const cidr = normalizeCidr(raw);
      return cidr === undefined ? undefined : { type: 'cidr', value: cidr };
    }
    return normalizeIp(raw);
  }
  const value = normalizeTerm(kind, raw);
  return value === undefined ? undefined : { type: kind, value };
}

/** Galaxy clusters (event and attribute level) and `misp-galaxy:<type>="<name>"` tags, as related objects. */
function relatedOf(holders: readonly Obj[]): RelatedObject[] {
  const found = new Map<string, RelatedObject>();
  const add = (galaxyType: string, name: string, id?: string) => {
    const type = GALAXY_TYPES[galaxyType] ?? cut(galaxyType, 64);
    const k = `${type}\u0000${name}`;
    if (!found.has(k) && found.size < 100) found.set(k, { type, name: cut(name, 256), ...(id ? { id } : {}) });
  };
  for (const h of holders) {
    for (const g of list(h['Galaxy'])) {
      if (!isObj(g)) continue;
      for (const c of list(g['GalaxyCluster'])) {
        if (!isObj(c) || typeof c['value'] !== 'string') continue;
        const type = typeof c['type'] === 'string' ? c['type'] : typeof g['type'] === 'string' ? g['type'] : 'galaxy';
        add(type, c['value'], typeof c['uuid'] === 'string' ? cut(c['uuid'], 64) : undefined);
      }
    }
    for (const t of list(h['Tag'])) {
      const m = isObj(t) && typeof t['name'] === 'string' ? /^misp-galaxy:([^=]+)="(.+)"$/.exec(t['name']) : null;
      if (m) add(m[1]!, m[2]!);
    }
  }
  return [...found.values()];
}

function tagNames(holders: readonly Obj[]): string[] {
  const names = holders.flatMap((h) => list(h['Tag']).map((t) => (isObj(t) ? t['name'] : undefined)));
  return [...new Set(names.filter((n): n is string => typeof n === 'string' && !n.startsWith('misp-galaxy:')))]
    .slice(0, 100)
    .map((n) => cut(n, 256));
}

/** `osint:certainty="93"` on the attribute, else on the event, as a 0..100 confidence. */
function certainty(holders: readonly Obj[]): number | undefined {
  for (const h of [...holders].reverse()) {
    for (const t of list(h['Tag'])) {
      const m = isObj(t) && typeof t['name'] === 'string' ? /^osint:certainty="(\d{1,3})"$/.exec(t['name']) : null;
      if (m && Number(m[1]) <= 100) return Number(m[1]);
    }
  }
  return undefined;
}

const toIds = (a: Obj) => a['to_ids'] === true || a['to_ids'] === 1 || a['to_ids'] === '1';

/** The event date (`YYYY-MM-DD`) as the start of that day, UTC. */
function eventDate(event: Obj): string | undefined {
  const d = event['date'];
  return typeof d === 'string' && /^\d{4}-\d\d-\d\d$/.test(d) && !Number.isNaN(Date.parse(d))
    ? `${d}T00:00:00Z`
    : undefined;
}

/** One `to_ids` attribute as an Indicator, or why it is not one. */
function readAttribute(a: Obj, event: Obj, index: number): Indicator | UnsupportedIndicator {
  const type = typeof a['type'] === 'string' ? a['type'] : '';
  const value = typeof a['value'] === 'string' ? a['value'] : '';
  const id = typeof a['uuid'] === 'string' ? cut(a['uuid'], 64) : `misp:${cut(type, 64)}:${cut(value, 256)}#${index}`;
  const source = cut(`${type}: ${value}`);
  const kinds = TYPES[type];
  if (!kinds)
    return {
      id,
      source,
      reason: `MISP attribute type '${cut(type, 64)}' is not supported (Vigil matches ${SUPPORTED})`,
    };
  const parts = kinds.length === 1 ? [value] : value.split('|');
  if (parts.length !== kinds.length) return { id, source, reason: `a ${type} value has ${kinds.length} parts: a|b` };
  const anyOf: IndicatorTerm[][] = [];
  for (let i = 0; i < kinds.length; i++) {
    const kind = kinds[i];
    if (kind === undefined) continue;
    const t = term(kind, parts[i]!);
    if (!t) return { id, source, reason: `'${cut(parts[i]!, 200)}' is not a valid ${kind} (MISP type ${type})` };
    anyOf.push([t]);
  }
  const holders = [event, a];
  const firstSeen = typeof a['first_seen'] === 'string' && !Number.isNaN(Date.parse(a['first_seen']));
  const validFrom = firstSeen ? (a['first_seen'] as string) : eventDate(event);
  const confidence = certainty(holders);
  const related = relatedOf(holders);
  const labels = tagNames(holders);
  const name = typeof event['info'] === 'string' && event['info'] !== '' ? cut(event['info'], 1024) : undefined;
  return {
    id,
    anyOf,
    source: `${type}: ${cut(value, 8192)}`,
    ...(validFrom ? { validFrom } : {}),
    ...(confidence !== undefined ? { confidence } : {}),
    ...(name ? { name } : {}),
    ...(labels.length > 0 ? { labels } : {}),
    ...(related.length > 0 ? { related } : {}),
  };
}

/**
 * The indicators of one MISP event as a MISP feed serves it (`{"Event": {...}}`; a bare event object is read too):
 * its `to_ids` attributes, those inside `Object[].Attribute[]` included; attributes without `to_ids` or marked
 * `deleted` are not meant for detection and are left out. An attribute's uuid is its id. validFrom is the attribute's
 * `first_seen` when it has one, else the start of the event's `date` (UTC) — not the attribute `timestamp`, which is
 * its last edit and would hide earlier sightings from the back-in-time search. Confidence comes from an
 * `osint:certainty` tag; `related` from the event's and attribute's galaxies (`Galaxy[].GalaxyCluster[]`) and
 * `misp-galaxy:` tags; labels are the other tags. Throws IntelFormatError for a document that is not an event.
 */
export function readMispEvent(json: unknown): IndicatorSet {
  const event = isObj(json) && isObj(json['Event']) ? json['Event'] : json;
  if (!isObj(event) || !(Array.isArray(event['Attribute']) || Array.isArray(event['Object']))) {
    throw new IntelFormatError('not a MISP event: expected {"Event": {"Attribute": [...], "Object": [...]}}');
  }
  const attributes = [
    ...list(event['Attribute']),
    ...list(event['Object']).flatMap((o) => (isObj(o) ? list(o['Attribute']) : [])),
  ];
  if (attributes.length > MAX_MISP_ATTRIBUTES) {
    throw new IntelFormatError(`the event holds ${attributes.length} attributes, more than ${MAX_MISP_ATTRIBUTES}`);
  }
  const indicators: Indicator[] = [];
  const unsupported: UnsupportedIndicator[] = [];
  attributes.forEach((a, i) => {
    if (!isObj(a) || !toIds(a) || a['deleted'] === true) return;
    const read = readAttribute(a, event, i);
    if ('reason' in read) unsupported.push(read);
    else indicators.push(read);
  });
  return { indicators, unsupported };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The events a MISP feed's `manifest.json` lists (`{"<uuid>": {"timestamp": "1472541011", ...}}`), with each
 * event's timestamp in seconds, so the client fetches only those changed since its last poll. Throws
 * IntelFormatError for a manifest that is not an object, an entry whose key is not a uuid (it names a file to fetch)
 * or whose timestamp is not a whole number of seconds.
 */
export function readMispManifest(json: unknown): Array<{ uuid: string; timestamp: number }> {
  if (!isObj(json)) throw new IntelFormatError('not a MISP manifest: expected {"<event uuid>": {"timestamp": ...}}');
  const entries = Object.entries(json);
  if (entries.length > MAX_MISP_ATTRIBUTES)
    throw new IntelFormatError(`the manifest lists more than ${MAX_MISP_ATTRIBUTES} events`);
  return entries.map(([uuid, entry]) => {
    if (!UUID.test(uuid)) throw new IntelFormatError(`manifest key '${cut(uuid, 64)}' is not an event uuid`);
    const ts = isObj(entry) ? entry['timestamp'] : undefined;
    const seconds = typeof ts === 'number' ? ts : typeof ts === 'string' && /^\d{1,12}$/.test(ts) ? Number(ts) : NaN;
    if (!Number.isSafeInteger(seconds) || seconds < 0) {
      throw new IntelFormatError(`manifest entry ${uuid} has no timestamp in seconds`);
    }
    return { uuid: uuid.toLowerCase(), timestamp: seconds };
  });
}
