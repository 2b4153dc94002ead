import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoPath } from './paths.js';

/** Node.js and the compiled repository as another user can run them. */
export interface RunnableAs {
  /** The Node.js binary. */
  readonly node: string;
  /** `path` of the compiled repository (`dist/...`), where that user can read it. */
  readonly repo: (...path: string[]) => string;
  readonly cleanup: () => void;
}

/** Whether `uid` can run Node.js at `node` and read `file`. */
function readableBy(uid: number, gid: number, node: string, file: string): boolean {
  const r = spawnSync('setpriv', [`--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', node, '-e', `require('fs').accessSync(${JSON.stringify(file)})`], { encoding: 'utf8' });
  return r.status === 0;
}

/** Hard links of `from` at `to` (a copy where the file system will not link them), modes kept. */
function linkTree(from: string, to: string): void {
  if (spawnSync('cp', ['-al', from, to]).status === 0) return;
  const copied = spawnSync('cp', ['-a', from, to], { encoding: 'utf8' });
  if (copied.status !== 0) throw new Error(`cp -a ${from} ${to}: ${copied.stderr}`);
}

/**
 * Node.js and the compiled repository where user `uid` can run them: hard links of them under a temp folder anyone
 * may enter. (CI clones the repository into a 0700 temp folder, and the second run's Node.js lives there too, so
 * another user could run neither where they are; opening the folders above them for the test would race with
 * another test file doing the same and closing them again.)
 */
export function runnableAs(uid: number, gid: number): RunnableAs {
  const dir = mkdtempSync(join(tmpdir(), 'vigil-as-user-'));
  chmodSync(dir, 0o755);
  const root = join(dir, 'vigil');
  mkdirSync(root, { mode: 0o755 });
  for (const part of ['package.json', 'dist', 'node_modules', 'rules']) linkTree(repoPath(part), join(root, part));
  const node = join(dir, 'node');
  linkTree(process.execPath, node);
  if (!readableBy(uid, gid, node, join(root, 'dist', 'src', 'cli', 'main.js')))
    throw new Error(`user ${uid} cannot run the copy of the repository at ${root}`);
  return { node, repo: (...p) => join(root, ...p), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
