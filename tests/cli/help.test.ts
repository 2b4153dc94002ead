import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { CLI } from '../helpers/cli.js';
import { repoPath } from '../helpers/paths.js';
import { tempDir } from '../helpers/temp.js';
import { COMMANDS, helpOf, overview } from '../../src/cli/usage.js';

/**
 * Issue 63: the command line as people expect it. `--help` and `help <command>` print to stdout and exit 0; an
 * unknown command, subcommand or option prints what is wrong and the relevant usage on stderr and exits 2; every
 * command's help has an exit-status section. Checked for every command the help knows, so a new one is covered.
 */

interface Run {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The environment without the variables that would point a command at a config or a token of this machine. */
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('VIGIL_')));

/** Runs `vigil ...args` in `cwd` (an empty folder: nothing there to read or write). */
function vigil(cwd: string, args: readonly string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { cwd, env, timeout: 30_000, encoding: 'utf8' }, (err, stdout, stderr) => {
      const code = (err as { code?: unknown } | null)?.code;
      resolve({ status: err === null ? 0 : typeof code === 'number' ? code : null, stdout, stderr });
    });
  });
}

/** Runs every argument list, four at a time, and returns the runs in the same order. */
async function vigilAll(cwd: string, argLists: ReadonlyArray<readonly string[]>): Promise<Run[]> {
  const runs: Run[] = [];
  for (let i = 0; i < argLists.length; i += 4) runs.push(...(await Promise.all(argLists.slice(i, i + 4).map((a) => vigil(cwd, a)))));
  return runs;
}

/** The subcommands a command's synopsis names (`vigil log verify ...` -> verify), without repeats. */
function subcommandsOf(command: string): string[] {
  const subs = COMMANDS[command]!.usage.flatMap((line) => {
    const words = line.split(' ');
    return words[0] === 'vigil' && words[1] === command && /^[a-z][a-z-]*$/.test(words[2] ?? '') ? [words[2]!] : [];
  });
  return [...new Set(subs)];
}

const commands = Object.keys(COMMANDS);
const usageLine = (command: string) => new RegExp(`^usage: vigil ${command}\\b`, 'm');

describe('vigil help and usage errors', () => {
  it('--help, -h and help print the overview, listing every command, on stdout and exit 0', async () => {
    const dir = tempDir();
    try {
      const asks = [['--help'], ['-h'], ['help']];
      const runs = await vigilAll(dir.path, asks);
      for (const [i, r] of runs.entries()) {
        assert.equal(r.status, 0, `vigil ${asks[i]!.join(' ')}: ${r.stderr}`);
        assert.equal(r.stdout, `${overview()}\n`);
        assert.equal(r.stderr, '');
        for (const c of commands) assert.match(r.stdout, new RegExp(`^  ${c} `, 'm'), `the overview lists ${c}`);
        assert.match(r.stdout, /exit status: 0 .*1 .*2 usage error/);
      }
    } finally { dir.cleanup(); }
  });

  it('no command, an unknown command or an unknown option before any command: the overview on stderr, exit 2', async () => {
    const dir = tempDir();
    try {
      const cases: Array<[string[], RegExp]> = [
        [[], /^vigil: no command given\n/],
        [['bogus'], /^vigil: unknown command bogus\n/],
        [['bogus', '--help'], /^vigil: unknown command bogus\n/],
        [['--bogus'], /^vigil: unknown option --bogus\n/],
        [['help', 'bogus'], /^vigil: help: unknown command bogus\n/],
      ];
      const runs = await vigilAll(dir.path, cases.map(([args]) => args));
      cases.forEach(([args, message], i) => {
        const r = runs[i]!;
        assert.equal(r.status, 2, `vigil ${args.join(' ')}`);
        assert.equal(r.stdout, '', `vigil ${args.join(' ')} prints nothing on stdout`);
        assert.match(r.stderr, message);
        assert.ok(r.stderr.includes(overview()), `vigil ${args.join(' ')} prints the overview`);
        assert.doesNotMatch(r.stderr, /To specify a positional argument|unexpected error/, "not Node's parseArgs text");
      });
    } finally { dir.cleanup(); }
  });

  for (const command of commands) {
    describe(`vigil ${command}`, () => {
      const subs = subcommandsOf(command);

      it('help <command>, <command> --help and -h (after each subcommand too) print its help and exit 0', async () => {
        const dir = tempDir();
        try {
          const asks = [['help', command], [command, '--help'], [command, '-h'], ...subs.map((s) => [command, s, '--help'])];
          const runs = await vigilAll(dir.path, asks);
          asks.forEach((args, i) => {
            const r = runs[i]!;
            assert.equal(r.status, 0, `vigil ${args.join(' ')}: ${r.stderr}`);
            assert.equal(r.stdout, `${helpOf(command)}\n`, `vigil ${args.join(' ')}`);
            assert.equal(r.stderr, '');
          });
          assert.match(runs[0]!.stdout, usageLine(command));
        } finally { dir.cleanup(); }
      });

      it('its help documents its exit status: 0, 2 for a usage error, and each code it uses', () => {
        const exits = COMMANDS[command]!.exits.map(([code]) => code);
        assert.ok(exits.includes(0) && exits.includes(2), `${command} documents 0 and 2: ${exits.join(', ')}`);
        assert.deepEqual(exits, [...exits].sort((a, b) => a - b));
        const text = helpOf(command);
        assert.match(text, /\nexit status:\n/);
        for (const code of exits) assert.match(text, new RegExp(`^  ${code} +\\S`, 'm'));
      });

      it('an unknown option (after each subcommand too) or subcommand: what is wrong and its usage on stderr, exit 2', async () => {
        const dir = tempDir();
        try {
          const cases: Array<[string[], RegExp]> = [
            [[command, '--bogus'], /unknown option --bogus\n/],
            [[command, '--bogus=1'], /unknown option --bogus\n/],
            ...subs.map((s): [string[], RegExp] => [[command, s, '--bogus'], /unknown option --bogus\n/]),
            ...(subs.length > 0 ? [[[command, 'no-such-subcommand'], /unknown subcommand no-such-subcommand\n/] as [string[], RegExp]] : []),
          ];
          const runs = await vigilAll(dir.path, cases.map(([args]) => args));
          cases.forEach(([args, message], i) => {
            const r = runs[i]!;
            assert.equal(r.status, 2, `vigil ${args.join(' ')}: ${r.stderr}`);
            assert.equal(r.stdout, '', `vigil ${args.join(' ')} prints nothing on stdout`);
            assert.match(r.stderr, /^vigil: /);
            assert.match(r.stderr, message, `vigil ${args.join(' ')}`);
            assert.match(r.stderr, usageLine(command), `vigil ${args.join(' ')} prints the usage of ${command}`);
            assert.ok(r.stderr.includes(`vigil help ${command}`), 'and where its options and exit status are');
            assert.doesNotMatch(r.stderr, /To specify a positional argument|unexpected error/, "not Node's parseArgs text");
          });
        } finally { dir.cleanup(); }
      });
    });
  }
});

describe('vigil as a command', () => {
  it('package.json names the compiled CLI as the bin vigil, and the file runs with node from PATH', () => {
    const pkg = JSON.parse(readFileSync(repoPath('package.json'), 'utf8')) as { bin: Record<string, string> };
    assert.equal(repoPath(pkg.bin.vigil!), CLI);
    assert.match(readFileSync(CLI, 'utf8'), /^#!\/usr\/bin\/env node\n/);
  });
});
