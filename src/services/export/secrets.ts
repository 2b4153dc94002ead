import { readFileSync } from 'node:fs';
import { secretFileProblem } from '../../kernel/secret-files.js';

/** Reads a secret file, refusing one that group or others can reach (and saying how to fix it). */
export function readSecretFile(path: string, what: string): string {
  const problem = secretFileProblem(path);
  if (problem) throw new Error(`refusing to start: ${what}: ${problem}`);
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(
      `refusing to start: ${what}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
}

const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}$/;
const RESERVED = new Set([
  'content-type',
  'content-length',
  'host',
  'vigil-signature',
  'vigil-delivery',
  'transfer-encoding',
  'connection',
]);

/** Extra request headers from a 0600 JSON object file (`{"Authorization": "Bearer ..."}`). */
export function readHeadersFile(path: string, what: string): Record<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readSecretFile(path, what));
  } catch (err) {
    if (err instanceof SyntaxError) throw new Error(`refusing to start: ${what}: ${path} is not JSON`);
    throw err;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new Error(`refusing to start: ${what}: ${path} must hold a JSON object of header names to values`);
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(parsed)) {
    if (!HEADER_NAME.test(k) || RESERVED.has(k.toLowerCase()))
      throw new Error(`refusing to start: ${what}: header ${JSON.stringify(k.slice(0, 64))} is not allowed`);
    if (typeof val !== 'string' || val.length > 8192 || /[\r\n\0]/.test(val))
      throw new Error(`refusing to start: ${what}: header ${k} must be a single-line string`);
    out[k] = val;
  }
  return out;
}
