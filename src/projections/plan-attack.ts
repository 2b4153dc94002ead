import type { PlanEntry, PlanState } from './plan.js';

/**
 * MITRE ATT&CK Enterprise tactics in the matrix's order, as Sigma tags them (`attack.initial-access`). ATT&CK v18 split
 * Defense Evasion into Stealth and Defense Impairment (SigmaHQ's rules now carry those); the old tactic keeps its
 * place for rule sets that still use it.
 */
export const ATTACK_TACTICS = [
  'reconnaissance',
  'resource-development',
  'initial-access',
  'execution',
  'persistence',
  'privilege-escalation',
  'defense-evasion',
  'stealth',
  'defense-impairment',
  'credential-access',
  'discovery',
  'lateral-movement',
  'collection',
  'command-and-control',
  'exfiltration',
  'impact',
] as const;

/** The states from best to worst, as a technique cell is coloured. */
const BEST_FIRST: readonly PlanState[] = ['ready', 'degraded', 'blocked', 'quarantined'];

/** One technique under one tactic: the enabled rules covering it (sub-techniques folded in), counted per state. */
export interface AttackCell {
  /** `t1059` (lower-case, as tagged). */
  readonly technique: string;
  /** The sub-techniques tagged under it (`t1059.001`), sorted. */
  readonly subTechniques: string[];
  readonly rules: number;
  readonly byState: Record<PlanState, number>;
  /** The best state among its rules (ready when any one is): the colour of its cell. */
  readonly best: PlanState;
  /** The worst state among its rules. */
  readonly worst: PlanState;
}

/** The coverage matrix: a column per tactic (ATT&CK order), and techniques tagged with no tactic. */
export interface AttackMatrix {
  readonly tactics: Array<{ tactic: string; techniques: AttackCell[] }>;
  /** Techniques of rules that carry no tactic tag. */
  readonly untactic: AttackCell[];
  /** Enabled rules with at least one technique tag. */
  readonly rulesTagged: number;
}

const TECHNIQUE = /^attack\.(t\d{4})(\.\d{3})?$/;

interface Acc {
  subs: Set<string>;
  rules: Set<string>;
  byState: Record<PlanState, number>;
}

function cell(technique: string, a: Acc): AttackCell {
  const present = BEST_FIRST.filter((s) => a.byState[s] > 0);
  return {
    technique,
    subTechniques: [...a.subs].sort(),
    rules: a.rules.size,
    byState: a.byState,
    best: present[0] ?? 'blocked',
    worst: present.at(-1) ?? 'blocked',
  };
}

/**
 * The ATT&CK coverage of enabled rules from their `attack.*` tags: each technique (`attack.tNNNN`, its
 * sub-techniques `attack.tNNNN.NNN` folded into it) under each tactic the rule is tagged with.
 */
export function attackMatrix(entries: readonly PlanEntry[]): AttackMatrix {
  const tactics = new Set<string>(ATTACK_TACTICS);
  const columns = new Map<string, Map<string, Acc>>();
  let rulesTagged = 0;
  for (const e of entries) {
    if (!e.enabled) continue;
    const techniques = new Map<string, Set<string>>();
    const ruleTactics: string[] = [];
    for (const tag of e.tags) {
      const m = TECHNIQUE.exec(tag);
      if (m) {
        const subs = techniques.get(m[1]!) ?? new Set<string>();
        techniques.set(m[1]!, subs);
        if (m[2]) subs.add(`${m[1]}${m[2]}`);
      } else if (tag.startsWith('attack.') && tactics.has(tag.slice(7))) ruleTactics.push(tag.slice(7));
    }
    if (techniques.size === 0) continue;
    rulesTagged += 1;
    for (const tactic of ruleTactics.length > 0 ? ruleTactics : ['']) {
      const column = columns.get(tactic) ?? new Map<string, Acc>();
      columns.set(tactic, column);
      for (const [id, subs] of techniques) {
        const acc = column.get(id) ?? {
          subs: new Set<string>(),
          rules: new Set<string>(),
          byState: { ready: 0, degraded: 0, blocked: 0, quarantined: 0 },
        };
        column.set(id, acc);
        for (const sub of subs) acc.subs.add(sub);
        if (!acc.rules.has(e.ruleId)) {
          acc.rules.add(e.ruleId);
          acc.byState[e.state] += 1;
        }
      }
    }
  }
  const cells = (tactic: string): AttackCell[] =>
    [...(columns.get(tactic) ?? new Map<string, Acc>()).entries()]
      .sort((a, b) => (a[0] < b[0] ? -1 : 1))
      .map(([id, acc]) => cell(id, acc));
  return {
    tactics: ATTACK_TACTICS.map((tactic) => ({ tactic, techniques: cells(tactic) })),
    untactic: cells(''),
    rulesTagged,
  };
}
