import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../src/cli/config-file.js';
import { ConfigSchema } from '../../src/services/config-schema.js';
import { startServe } from '../helpers/cli.js';
import { repoPath } from '../helpers/paths.js';
import { tempDir } from '../helpers/temp.js';
import { fencedBlocks } from './fenced-blocks.js';

/*
 * The instance config examples of the docs: a ```json block right after `<!-- config-example -->`
 * is a whole `vigil.config.json`, and `vigil serve` must start with it and answer /health. What
 * only the reader's machine has is replaced first: the listen address (127.0.0.1, a free port),
 * the store, credentials file and archive folder (in a temp folder), and the syslog listeners'
 * addresses (loopback, free ports). A block after `<!-- config-example: schema only, <why> -->`
 * needs what the test machine has not (a NATS cluster, receivers and their secret files, a setup
 * authority): it is checked by the config loader `vigil serve` uses, which names any bad key.
 */

const MARK = /<!-- config-example(?:: schema only, ([^>]+?))? -->\s*$/;

interface Example {
  readonly where: string;
  readonly config: Record<string, unknown>;
  /** Why it is only checked against the schema; undefined when it is started. */
  readonly schemaOnly: string | undefined;
}

function markdownFiles(rel = 'docs'): string[] {
  const out = rel === 'docs' ? ['README.md'] : [];
  for (const name of readdirSync(repoPath(rel)).sort()) {
    const child = `${rel}/${name}`;
    if (statSync(repoPath(child)).isDirectory()) out.push(...markdownFiles(child));
    else if (name.endsWith('.md')) out.push(child);
  }
  return out;
}

function examples(): Example[] {
  const out: Example[] = [];
  for (const file of markdownFiles()) {
    for (const b of fencedBlocks(readFileSync(repoPath(file), 'utf8'))) {
      const mark = MARK.exec(b.before);
      if (!mark) continue;
      const where = `${file}:${b.line}`;
      assert.equal(b.lang, 'json', `${where}: a config example is a json block`);
      const config = JSON.parse(b.text) as Record<string, unknown>;
      assert.ok(config !== null && typeof config === 'object' && !Array.isArray(config), `${where}: not an object`);
      out.push({ where, config, schemaOnly: mark[1] });
    }
  }
  return out;
}

type Obj = Record<string, unknown>;
const section = (c: Obj, key: string): Obj => (c[key] ??= {}) as Obj;

/** The example with what only the reader's machine has replaced by the test's own (see above). */
function runnable(example: Obj, dir: string): Obj {
  const c = structuredClone(example);
  Object.assign(section(c, 'server'), { host: '127.0.0.1', port: 0 });
  section(c, 'auth').credentialsFile = 'secrets/credentials.json';
  section(c, 'storage').path = 'store';
  const retention = c.retention as Obj | undefined;
  if (retention?.archiveDir !== undefined) retention.archiveDir = join(dir, 'archive');
  const listeners = (c.syslog as { listeners?: Obj[] } | undefined)?.listeners ?? [];
  for (const l of listeners) Object.assign(l, { host: '127.0.0.1', port: 0 });
  return c;
}

describe('docs config examples', () => {
  const found = examples();

  it('show every section of the instance config at least once', () => {
    const shown = new Set(found.flatMap((e) => Object.keys(e.config)));
    assert.deepEqual(Object.keys(ConfigSchema.entries).filter((k) => !shown.has(k)), []);
  });

  it('are each accepted by the config loader', () => {
    for (const e of found) {
      const dir = tempDir();
      try {
        const path = join(dir.path, 'vigil.config.json');
        writeFileSync(path, JSON.stringify(e.config));
        assert.doesNotThrow(() => loadConfig(path, {}, dir.path), `${e.where}`);
      } finally {
        dir.cleanup();
      }
    }
  });

  for (const e of found.filter((x) => x.schemaOnly === undefined)) {
    it(`starts vigil serve with the example of ${e.where}`, async () => {
      const dir = tempDir();
      try {
        const path = join(dir.path, 'vigil.config.json');
        writeFileSync(path, JSON.stringify(runnable(e.config, dir.path)));
        const serve = await startServe(path, dir.path);
        try {
          const res = await fetch(`${serve.url}/health`);
          assert.equal(res.status, 200);
          // `degraded` only says the test machine's disk is past its low mark.
          assert.match(((await res.json()) as { status: string }).status, /^(ok|degraded)$/);
        } finally {
          serve.proc.kill('SIGTERM');
          await serve.exited;
        }
      } finally {
        dir.cleanup();
      }
    });
  }
});
