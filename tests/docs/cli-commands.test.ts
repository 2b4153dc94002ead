import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { COMMANDS } from '../../src/cli/usage.js';
import { repoPath } from '../helpers/paths.js';

/**
 * Issue 63: the docs write the command line one way, `vigil <command>` (`npx vigil` in a clone, `vigil` once
 * linked, as README.md says), and every command line they show names a command `vigil help` knows, with options
 * its help lists.
 */

const DOCS = ['README.md', ...readdirSync(repoPath('docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** The `vigil ...` command lines of a Markdown text: code spans, and lines of fenced blocks. */
export function commandLines(text: string): string[] {
  const lines = [...text.matchAll(/`(vigil [a-z][^`]*)`/g)].map((m) => m[1]!);
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    else if (fenced) {
      const m = /^\s*(?:\$ )?(vigil [a-z].*)$/.exec(line);
      if (m) lines.push(m[1]!.replace(/\s+#.*$/, ''));
    }
  }
  return lines;
}

describe('the vigil command lines of the docs', () => {
  it('finds command lines in code spans and fenced blocks, not in prose', () => {
    assert.deepEqual(commandLines('run `vigil serve --port 1` or\n```sh\nvigil log verify   # check\n```\nthe vigil user'), [
      'vigil serve --port 1',
      'vigil log verify',
    ]);
  });

  it('name a command vigil help knows, with options its help lists', () => {
    const problems: string[] = [];
    let seen = 0;
    for (const file of DOCS) {
      for (const line of commandLines(readFileSync(repoPath(file), 'utf8'))) {
        seen++;
        const command = COMMANDS[line.split(/\s+/)[1]!];
        if (!command) {
          problems.push(`${file}: ${line}: no such command`);
          continue;
        }
        const help = `${command.usage.join(' ')} ${command.details}`;
        for (const option of line.match(/--[a-z][a-z-]*/g) ?? [])
          if (!new RegExp(`${option}\\b`).test(help)) problems.push(`${file}: ${line}: ${option} is not in its help`);
      }
    }
    assert.ok(seen > 100, `only ${seen} command lines found`);
    assert.deepEqual(problems, []);
  });

  it('run it as vigil, never as node dist/src/cli/main.js', () => {
    const raw = DOCS.filter((file) => readFileSync(repoPath(file), 'utf8').includes('node dist/src/cli/main.js'));
    assert.deepEqual(raw, []);
  });
});
