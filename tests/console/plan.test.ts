import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startConsoleHarness, type ConsoleHarness } from './harness.js';

/**
 * Issue 59.4 in a browser: the /plan page opens on the grouped view (counts, fixes by source with rule counts), shows
 * the ATT&CK coverage matrix, and a technique cell leads to the plan filtered to that technique's rules.
 */

const rule = (n: number, title: string, logsource: string, tags: string[]) =>
  `title: ${title}\nid: 5eed0000-0000-4000-8000-${String(n).padStart(12, '0')}\nlogsource: ${logsource}\n` +
  `tags: [${tags.join(', ')}]\ndetection: {sel: {CommandLine|contains: x}, condition: sel}\nlevel: high\n`;

const RULES = [
  rule(1, 'Plan test encoded PowerShell', '{product: windows, category: process_creation}', ['attack.execution', 'attack.t1059.001']),
  rule(2, 'Plan test cmd', '{product: windows, category: process_creation}', ['attack.execution', 'attack.t1059']),
  rule(3, 'Plan test Linux shell', '{product: linux, category: process_creation}', ['attack.execution', 'attack.t1059.004']),
  rule(4, 'Plan test CloudTrail', '{product: aws, service: cloudtrail}', ['attack.initial-access', 'attack.t1078']),
  rule(5, 'Plan test registry run key', '{product: windows, category: registry_set}', ['attack.persistence', 'attack.t1547.001']),
];

describe('the /plan page in Chromium', () => {
  let h: ConsoleHarness;
  before(async () => {
    h = await startConsoleHarness();
    const res = await h.api('rule_admin', '/api/v1/rules/bulk', {
      method: 'POST',
      body: JSON.stringify({ files: RULES.map((text, i) => ({ name: `plan-${i}.yml`, text })) }),
    });
    assert.equal(res.status, 201, await res.text());
  });
  after(async () => { await h?.close(); });

  it('shows the grouped view first, then the ATT&CK matrix, and a technique cell opens its rules', async () => {
    const { context, page } = await h.signedIn('viewer');
    try {
      await page.goto(`${h.url}/plan`);
      const headings = await page.locator('main h2').allTextContents();
      assert.deepEqual(headings.slice(0, 3), ['Fixes by source', 'ATT&CK coverage', 'Rules'], 'grouped view first');
      const fixes = page.locator('table.fixes tbody tr');
      const fixText = await fixes.allTextContents();
      const windows = fixText.find((t) => t.includes('win:cat:process_creation'));
      assert.ok(windows, fixText.join('\n'));
      assert.match(windows, /^\s*2(?!\d)/, 'the Windows process_creation fix would unblock 2 rules');
      const linux = fixText.find((t) => t.includes('linux:class:process_creation'))!;
      assert.match(linux, /logsource unsupported/);
      assert.match(linux, /auditd EXECVE/);
      assert.doesNotMatch(linux, /vigil collector enroll/);
      assert.ok(fixText.some((t) => t.includes('{product: aws, service: cloudtrail}')));

      const matrix = page.locator('.attack-matrix');
      assert.ok(await matrix.isVisible());
      const tactics = await matrix.locator('.tactic h3').allTextContents();
      assert.deepEqual(tactics.slice(0, 3), ['initial-access', 'execution', 'persistence'], 'ATT&CK order');
      assert.match(await page.locator('p.legend').textContent() ?? '', /best/);
      const t1059 = matrix.locator('a.technique', { hasText: 'T1059' });
      assert.equal(await t1059.count(), 1, 'sub-techniques folded into T1059');
      assert.match(await t1059.getAttribute('class') ?? '', /cell-blocked/);
      assert.match(await t1059.getAttribute('title') ?? '', /3 rules \(3 blocked\); sub-techniques T1059\.001, T1059\.004/);

      await Promise.all([page.waitForURL(/tag=attack\.t1059/), t1059.click()]);
      const rows = await page.locator('table:not(.fixes) tbody tr').allTextContents();
      assert.equal(rows.length, 3, rows.join('\n'));
      for (const r of rows) assert.match(r, /Plan test (encoded PowerShell|cmd|Linux shell)/);
      assert.match(await page.locator('.stats').textContent() ?? '', /3\s*rules matching/);

      await page.fill('input[name=text]', 'linux');
      await Promise.all([page.waitForURL(/text=linux/), page.click('form.filters button[type=submit]')]);
      const filtered = await page.locator('table:not(.fixes) tbody tr').allTextContents();
      assert.equal(filtered.length, 1);
      assert.match(filtered[0]!, /Plan test Linux shell.*logsource unsupported/s);
    } finally {
      await context.close();
    }
  });

  it('answers a bad filter with a 400 page', async () => {
    const res = await fetch(`${h.url}/plan?state=nope`, { headers: { authorization: `Bearer ${h.tokens.viewer}`, accept: 'text/html' } });
    assert.equal(res.status, 400);
  });
});
