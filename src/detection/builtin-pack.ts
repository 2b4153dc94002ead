import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where the built-in rule pack lives in the repository (`rules/builtin/*.yml`). */
export const BUILTIN_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'rules', 'builtin');

/** The built-in pack: all files as one multi-document YAML text, and its version (a hash of the text). */
export function loadBuiltinPack(dir = BUILTIN_DIR): { text: string; version: string } {
  const text = readdirSync(dir)
    .filter((f) => f.endsWith('.yml'))
    .sort()
    .map((f) => readFileSync(join(dir, f), 'utf8').trim())
    .join('\n---\n');
  return { text, version: createHash('sha256').update(text).digest('hex').slice(0, 16) };
}
