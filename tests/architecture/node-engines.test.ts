import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { repoPath } from '../helpers/paths.js';

/**
 * Issue 63: the Node.js lines package.json accepts are lines every installed package accepts too, so `npm install`
 * prints no EBADENGINE warning on any of them (@nats-io/* 3.4.0 brought @nats-io/nuid 3.0.0, `node >= 22`, onto a
 * project that accepts 20). Checked at the lowest version of each accepted line, against package-lock.json, which
 * records every package's `engines`.
 */

type Version = readonly [number, number, number];

const cmp = (a: Version, b: Version): number => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];

/** One comparator of a range (`>=20.19.0`, `^22.12.0`, `>= 18.x`, `20`) as a test of a version. */
function comparator(text: string): (v: Version) => boolean {
  const m = /^(>=|<=|>|<|=|\^|~)?v?(\d+|x|\*)(?:\.(\d+|x|\*))?(?:\.(\d+|x|\*))?$/.exec(text);
  if (!m) throw new Error(`a range this check does not read: ${text}`);
  const [, op = '', ...parts] = m;
  const given = parts.filter((p) => p !== undefined && p !== 'x' && p !== '*').map(Number);
  const low: Version = [given[0] ?? 0, given[1] ?? 0, given[2] ?? 0];
  // The first version past a partial or caret/tilde range: 20 -> 21.0.0, 20.6 -> 20.7.0, ^20.19.0 -> 21.0.0.
  const next = (level: number): Version => (level === 0 ? [low[0] + 1, 0, 0] : level === 1 ? [low[0], low[1] + 1, 0] : [low[0], low[1], low[2] + 1]);
  switch (op) {
    case '>=': return (v) => cmp(v, low) >= 0;
    case '>': return given.length === 3 ? (v) => cmp(v, low) > 0 : (v) => cmp(v, next(given.length - 1)) >= 0;
    case '<': return (v) => cmp(v, low) < 0;
    case '<=': return (v) => (given.length === 3 ? cmp(v, low) <= 0 : cmp(v, next(given.length - 1)) < 0);
    case '^': return (v) => cmp(v, low) >= 0 && cmp(v, next(low[0] > 0 || given.length < 2 ? 0 : low[1] > 0 || given.length < 3 ? 1 : 2)) < 0;
    case '~': return (v) => cmp(v, low) >= 0 && cmp(v, next(given.length < 2 ? 0 : 1)) < 0;
    default: return (v) => cmp(v, low) >= 0 && (given.length === 3 ? cmp(v, low) === 0 : cmp(v, next(given.length - 1)) < 0);
  }
}

/** Whether `version` is in the npm range `range` (the subset packages' `engines.node` use: ||, comparators, x). */
function satisfies(version: Version, range: string): boolean {
  return range.split('||').some((alternative) => {
    const comparators = alternative.trim().replace(/(>=|<=|>|<|=|\^|~)\s+/g, '$1').split(/\s+/).filter((c) => c !== '' && c !== '*');
    return comparators.every((c) => comparator(c)(version));
  });
}

/** The lowest version of each line a range accepts: `^20.19.0 || ^22.12.0 || >=24.0.0` -> 20.19.0, 22.12.0, 24.0.0. */
function lowestOfEachLine(range: string): Version[] {
  return range.split('||').map((alternative) => {
    const m = /^\s*(?:>=|\^|~)?\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?\s*$/.exec(alternative);
    if (!m) throw new Error(`package.json engines.node: expected lines such as ^20.19.0 or >=24.0.0, found ${alternative}`);
    return [Number(m[1]), Number(m[2] ?? 0), Number(m[3] ?? 0)] as const;
  });
}

const show = (v: Version) => v.join('.');

describe('the Node.js lines package.json accepts', () => {
  const pkg = JSON.parse(readFileSync(repoPath('package.json'), 'utf8')) as { engines: { node: string } };
  const lock = JSON.parse(readFileSync(repoPath('package-lock.json'), 'utf8')) as {
    packages: Record<string, { engines?: { node?: string } | string[] }>;
  };

  it('reads ranges as npm does (the check is not vacuous)', () => {
    assert.equal(satisfies([20, 19, 0], '>= 22.x'), false);
    assert.equal(satisfies([22, 0, 0], '>= 22.x'), true);
    assert.equal(satisfies([20, 19, 0], '^18.19.0 || >=20.6.0'), true);
    assert.equal(satisfies([19, 0, 0], '^18.19.0 || >=20.6.0'), false);
    assert.equal(satisfies([20, 5, 0], '^16 || ^18 || >=20'), true);
    assert.equal(satisfies([21, 0, 0], '^20.19.0 || ^22.12.0'), false);
    assert.equal(satisfies([14, 6, 0], '>= 14.6'), true);
    assert.equal(satisfies([22, 11, 9], '^20.19.0 || ^22.12.0 || >=24.0.0'), false);
    assert.deepEqual(lowestOfEachLine(pkg.engines.node).map(show), ['20.19.0', '22.12.0', '24.0.0']);
  });

  it('is accepted by every package npm installs, at the lowest version of each line', () => {
    const lines = lowestOfEachLine(pkg.engines.node);
    const refusals: string[] = [];
    let checked = 0;
    for (const [path, entry] of Object.entries(lock.packages)) {
      const range = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
      if (path === '' || range === undefined) continue;
      checked++;
      for (const v of lines)
        if (!satisfies(v, range)) refusals.push(`${path.replace(/^.*node_modules\//, '')} wants node ${range}: not ${show(v)}`);
    }
    assert.ok(checked > 20, `only ${checked} packages with engines.node in package-lock.json`);
    assert.deepEqual(refusals, []);
  });

  it('includes the Node.js this runs on', () => {
    const [major, minor, patch] = process.versions.node.split('.').map(Number) as [number, number, number];
    assert.ok(satisfies([major, minor, patch], pkg.engines.node), `${process.versions.node} is not in ${pkg.engines.node}`);
  });
});
