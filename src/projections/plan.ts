import { describeLogsource } from '../detection/logsources.js';
import { sourceFix, sourceGuide } from '../detection/source-guide.js';
import { epochMillisOf } from '../kernel/time.js';
import type { DetectionState, InstalledRule, RuleQuarantine } from './detection.js';
import type { SourcesState } from './sources.js';

/** A missing capability and the fix a user can act on. */
export interface MissingCapability {
  readonly capability: string;
  readonly problem: 'no_source' | 'stale' | 'field_never_seen';
  readonly fix: string;
}

/** One rule's line in the detection plan. */
export interface PlanEntry {
  readonly ruleId: string;
  readonly title: string;
  readonly author?: string;
  readonly enabled: boolean;
  /** `quarantined`: over its time budget at run time, it does not evaluate until a rule_admin enables it again. */
  readonly state: 'ready' | 'degraded' | 'blocked' | 'quarantined';
  readonly requiredCapabilities: string[];
  readonly missingCapabilities: MissingCapability[];
  /** Why and when the rule was quarantined (state `quarantined`). */
  readonly quarantine?: RuleQuarantine;
}

/** The detection plan (spec 2.10): every rule's state and a summary. */
export interface DetectionPlan {
  readonly generatedAt: string;
  readonly freshnessHours: number;
  readonly summary: {
    rules: number;
    ready: number;
    degraded: number;
    blocked: number;
    quarantined: number;
    disabled: number;
  };
  readonly rules: PlanEntry[];
}

/** A human name for a detection source key (`zeek:dns` -> `network-monitor logType=dns`). */
export function describeSource(key: string): string {
  return sourceGuide(key).describe;
}

function fieldSeen(field: string, sources: SourcesState, keys: readonly string[]): boolean {
  // Dotted paths into the event (`attributes.target.type`, `actor.user`) and the event's own fields are
  // always present when the source is; attribute names must have been observed.
  if (/^(attributes|actor|sourceEndpoint|destinationEndpoint|service|correlation|source)\./.test(field)) return true;
  if (['category', 'class', 'activity', 'outcome', 'severity', 'time', 'id'].includes(field)) return true;
  return keys.some((k) => sources.get(k)?.fields.has(field));
}

function planRule(
  rule: InstalledRule,
  det: DetectionState,
  sources: SourcesState,
  nowMs: number,
  freshMs: number,
  freshnessHours: number,
): PlanEntry {
  const c = rule.compiled;
  const detections =
    c.kind === 'detection'
      ? [c]
      : [...det.rules.values()]
          .map((r) => r.compiled)
          .filter(
            (r): r is Extract<typeof r, { kind: 'detection' }> =>
              r.kind === 'detection' && (c.rules.includes(r.id) || (r.name !== undefined && c.rules.includes(r.name))),
          );
  const keys = [...new Set(detections.flatMap((d) => d.indexKeys))];
  const fields = [...new Set(detections.flatMap((d) => d.fields))];
  const required = [...keys.map(describeSource), ...fields.map((f) => `field ${f}`)];
  const missing: MissingCapability[] = [];
  const seen = keys.filter((k) => sources.has(k));
  const unmapped = detections.filter((d) => d.unmapped !== undefined);
  for (const d of unmapped) {
    missing.push({
      capability: `logsource ${describeLogsource(d.logsource)}`,
      problem: 'no_source',
      fix:
        `${d.unmapped}. The rule is stored and runs as soon as a normalizer maps this logsource; until then it ` +
        `cannot fire.`,
    });
  }
  if (unmapped.length > 0 && keys.length === 0) {
    // Nothing else to say: no Vigil source can feed the rule.
  } else if (seen.length === 0) {
    missing.push({
      capability: keys.map(describeSource).join(' or ') || 'a source',
      problem: 'no_source',
      fix: sourceFix(keys),
    });
  } else {
    const fresh = seen.filter((k) => nowMs - (epochMillisOf(sources.get(k)!.lastIngestedAt) ?? 0) <= freshMs);
    if (fresh.length === 0)
      missing.push({
        capability: seen.map(describeSource).join(' or '),
        problem: 'stale',
        fix: `${seen.map(describeSource).join(' or ')}: no records in the last ${freshnessHours} h (last at ${seen
          .map((k) => sources.get(k)!.lastIngestedAt)
          .sort()
          .at(-1)})`,
      });
    for (const f of fields) {
      if (!fieldSeen(f, sources, seen))
        missing.push({
          capability: `field ${f}`,
          problem: 'field_never_seen',
          fix:
            `field ${f} has never been seen in ${seen.map(describeSource).join(' or ')}; check the source's ` +
            `configuration or the rule's field name`,
        });
    }
  }
  const state = rule.quarantine
    ? 'quarantined'
    : missing.some((m) => m.problem === 'no_source')
      ? 'blocked'
      : missing.length > 0
        ? 'degraded'
        : 'ready';
  return {
    ruleId: rule.id,
    title: c.title,
    ...(c.author !== undefined ? { author: c.author } : {}),
    enabled: rule.enabled,
    state,
    requiredCapabilities: required,
    missingCapabilities: missing,
    ...(rule.quarantine ? { quarantine: rule.quarantine } : {}),
  };
}

/**
 * Which rules can fire: quarantined when the rule went over its time budget (it does not evaluate),
 * blocked when no source of the rule's logsource was ever seen, degraded when
 * the sources are stale (nothing within the freshness window) or a referenced field was never
 * observed, ready otherwise. A correlation needs what the rules it references need.
 */
export function detectionPlan(
  det: DetectionState,
  sources: SourcesState,
  now: Date,
  freshnessHours: number,
): DetectionPlan {
  const freshMs = freshnessHours * 3600 * 1000;
  const rules = [...det.rules.values()]
    .map((r) => planRule(r, det, sources, now.getTime(), freshMs, freshnessHours))
    .sort((a, b) => a.title.localeCompare(b.title));
  const enabled = rules.filter((r) => r.enabled);
  return {
    generatedAt: now.toISOString(),
    freshnessHours,
    summary: {
      rules: rules.length,
      ready: enabled.filter((r) => r.state === 'ready').length,
      degraded: enabled.filter((r) => r.state === 'degraded').length,
      blocked: enabled.filter((r) => r.state === 'blocked').length,
      quarantined: enabled.filter((r) => r.state === 'quarantined').length,
      disabled: rules.length - enabled.length,
    },
    rules,
  };
}
