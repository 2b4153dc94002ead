import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parseHunt } from '../../src/detection/hunt/index.js';
import { fencedBlocks } from '../docs/fenced-blocks.js';
import { repoPath } from '../helpers/paths.js';

const doc = readFileSync(repoPath('docs/hunting.md'), 'utf8');

describe('docs/hunting.md', () => {
  it('every line of its kql blocks parses', () => {
    const lines = fencedBlocks(doc)
      .filter((b) => b.lang === 'kql')
      .flatMap((b) => b.text.split('\n').filter((l) => l.trim() !== ''));
    assert.ok(lines.length >= 15);
    for (const line of lines) {
      const r = parseHunt(line);
      assert.ok(r.ok, `${line}: ${r.ok ? '' : r.error.message}`);
    }
  });

  it('its error table shows the messages the parser gives', () => {
    const section = doc.slice(doc.indexOf('## Errors'), doc.indexOf('## Limits'));
    const rows = [...section.matchAll(/^\| `(.+)` \| `(.+)` \|$/gm)];
    assert.ok(rows.length >= 5);
    for (const [, query, message] of rows) {
      const r = parseHunt(query!.replace(/\\\|/g, '|'));
      assert.equal(r.ok ? 'parsed' : r.error.message, message!.replace(/\\\|/g, '|'));
    }
  });

  it('says how a hunt is run: the API, the terminal, the console, its bounds and its proof', () => {
    for (const heading of ['## Running a hunt', '### From the API', '### From the terminal', '### From the console', '### How a hunt runs, and its bounds', '### Accountable: the audit record and the proof'])
      assert.ok(doc.includes(`\n${heading}\n`), heading);
  });
});
