import { join } from 'node:path';
import { decideCreateException } from '../src/commands/exceptions.js';
import { decideImportRules } from '../src/commands/import-rules.js';
import { DEFAULT_RULE_LIMITS } from '../src/detection/rule-limits.js';
import { openInstanceStore, type InstanceStore } from '../src/cli/instance/open.js';
import { activeRuleSet } from '../src/projections/detection.js';
import { exceptionFor, exceptionsProjection } from '../src/projections/exceptions.js';
import { compileSigma } from '../src/detection/compile.js';
import { parseSigmaText } from '../src/detection/sigma-yaml.js';
import { mixedBatches, rulePack } from './detection.js';
import type { Figure } from './foundation.js';
import { median, percents, scratch, sharesInTurn } from './harness.js';

const RULES = 1000;
const EXCEPTIONS = 1000;
const NOW = '2026-11-22T10:00:00.000Z';
const ROUNDS = 3;

/** What each store holds, as its figure names it. */
const LABELS = {
  none: 'none',
  control: 'none (a control store)',
  mixed: '1000 (mixed)',
  all: '1000 (all)',
} as const;

/** A rule that matches half the sshd failures (a quarter of the events), so exceptions are checked 10,000 times. */
const NOISY = `title: Bench root password failures
id: 00000000-0000-4000-8000-b00000000001
logsource: {product: linux, service: sshd}
detection:
  keywords: ['port 4']
  condition: keywords
level: low
tags: [attack.t1110]
`;

/**
 * The exception `k` of a store: scoped to rule `k` (mixed: most are), to a tag, or to every rule (`all`: the worst
 * case, each one tried on every match), its condition an address no bench event has, so every match is checked
 * against every exception that may apply and none is excepted.
 */
function exception(k: number, ruleIds: readonly string[], mode: 'mixed' | 'all') {
  const scope =
    mode === 'all' || k % 20 === 0
      ? { kind: 'all' as const }
      : k % 20 === 1
        ? { kind: 'tag' as const, tag: 'attack.t1110' }
        : { kind: 'rule' as const, ruleId: ruleIds[k % ruleIds.length]! };
  return {
    scope,
    detection: { sel: { 'sourceEndpoint.ip': `192.0.2.${k % 250}`, 'actor.user': `svc-${k}` }, condition: 'sel' },
    reason: 'bench',
    owner: 'bench',
    expiresAt: '2026-12-20T00:00:00.000Z',
  };
}

/**
 * The cost of exceptions on ingest (issue 59: at most 5 % with 1,000 exceptions): three stores with the same 1,000
 * rules take the same 40 batches in turn (ingestInTurn charges each the CPU of its own batches): none, 1,000 exceptions
 * as a SOC makes them (most for one rule, some for a tag, 5 % for all rules), and 1,000 for all rules.
 */
export async function exceptionsBench(): Promise<Figure[]> {
  // `control` is a second store without exceptions: its share of `none` shows how far two equal stores differ here.
  const modes = ['none', 'control', 'mixed', 'all'] as const;
  const stores: Array<{ mode: (typeof modes)[number]; inst: InstanceStore }> = [];
  const ctx = { now: NOW, actor: { id: 'bench', authentication: 'bearer' } };
  for (const mode of modes) {
    const inst = await openInstanceStore(join(scratch(`exceptions-${mode}`), 'store'));
    const r = await inst.writer.execute(
      (m) => decideImportRules(m.detection, `${rulePack(RULES - 1)}\n---\n${NOISY}`, 'api', DEFAULT_RULE_LIMITS),
      ctx,
    );
    if (!r.ok) throw new Error(`bench rules do not import: ${r.rejection.message}`);
    const ruleIds = [...inst.reads.detection.rules.keys()];
    if (mode === 'mixed' || mode === 'all')
      for (let k = 0; k < EXCEPTIONS; k++) {
        const made = await inst.writer.execute(
          (m) =>
            decideCreateException(
              m,
              exception(k, ruleIds, mode),
              { ...ctx, requestId: `b${k}` },
              {
                mayBePermanent: false,
              },
            ),
          ctx,
        );
        if (!made.ok) throw new Error(`bench exception refused: ${made.rejection.issues?.join('; ')}`);
      }
    activeRuleSet(inst.reads.detection);
    stores.push({ mode, inst });
  }
  // Three rounds of 40,000 new events each: one round's ratio moves by several per cent, their median less.
  const turns = await sharesInTurn(
    stores.map((s) => s.inst),
    ROUNDS,
    (round) => mixedBatches(NOW, round * 40_000),
    NOW,
  );
  const figures: Figure[] = [];
  for (const s of stores) {
    figures.push({
      name: `ingest + detect, ${RULES} rules, exceptions: ${LABELS[s.mode]}`,
      value: Math.round(40_000 / (median(turns.cpuMs(s.inst)) / 1000)),
      unit: 'events/CPU-s',
      note: `median of ${ROUNDS} rounds; ${turns.alerts(s.inst)} alerts raised or grown`,
    });
    if (s.mode === 'none') continue;
    const shares = turns.shares(s.inst);
    figures.push({
      name:
        s.mode === 'control'
          ? '  control (no exceptions) as a share of none'
          : `  ${EXCEPTIONS} exceptions (${s.mode}) as a share of none`,
      value: Math.round(median(shares) * 1000) / 10,
      unit: '%',
      note: `median of rounds ${percents(shares)}` + (s.mode === 'control' ? '; the spread' : '; target >= 95 %'),
    });
  }
  figures.push(checkCost());
  for (const s of stores) await s.inst.close();
  return figures;
}

/**
 * The exception check alone, without the rest of ingest: 1,000 exceptions for all rules tried on 10,000 matches of the
 * noisy rule (none excepted), microseconds a match.
 */
function checkCost(): Figure {
  let s = exceptionsProjection.initial();
  for (let k = 0; k < EXCEPTIONS; k++) {
    const data = { exceptionId: `exc_${k}`, ...exception(k, [], 'all'), principal: 'bench', authentication: 'bearer' };
    s = exceptionsProjection.evolve(s, { seq: k + 1, at: NOW, type: 'ExceptionCreated', data, prev: '' });
  }
  const parsed = parseSigmaText(NOISY);
  const compiled = parsed.ok ? compileSigma(parsed.docs[0]) : undefined;
  if (!compiled?.ok) throw new Error('the noisy rule does not compile');
  const events = mixedBatches(NOW, 0)
    .flat()
    .flatMap((b) => b.events)
    .filter((e) => e.source.adapter === 'linux-journal')
    .slice(0, 10_000);
  const nowMs = Date.parse(NOW);
  exceptionFor(s, compiled.rule, [events[0]!], nowMs);
  const t = performance.now();
  for (const e of events) if (exceptionFor(s, compiled.rule, [e], nowMs)) throw new Error('a bench match was excepted');
  const us = ((performance.now() - t) * 1000) / events.length;
  return {
    name: `  the check alone: ${EXCEPTIONS} exceptions for all rules`,
    value: Math.round(us * 100) / 100,
    unit: 'µs/match',
    note: `${events.length.toLocaleString('en')} sshd events tried as matches of the noisy rule`,
  };
}
