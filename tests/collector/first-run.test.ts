import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as v from 'valibot';
import { AgentConfigSchema } from '../../src/clients/collector/config.js';
import { loadAgentConfig } from '../../src/cli/collector-commands.js';
import { repoPath } from '../helpers/paths.js';
import { runCli, startServe, writeTestConfig } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { generateToken } from '../../src/auth/tokens.js';
import { ENROLLMENT_TOKEN_PREFIX } from '../../src/http/routes/collectors.js';

describe('the collector agent on a first run', () => {
  it('ships a sample collector.json that the agent itself accepts, with every key it documents', () => {
    const sample = JSON.parse(readFileSync(repoPath('docs', 'examples', 'collector.json'), 'utf8')) as Record<string, unknown>;
    const parsed = v.safeParse(AgentConfigSchema, sample);
    assert.ok(parsed.success, JSON.stringify(parsed.issues));
    assert.deepEqual(Object.keys(sample).sort(), Object.keys(AgentConfigSchema.entries).sort(), 'the sample shows every key');
    const loaded = loadAgentConfig(repoPath('docs', 'examples', 'collector.json'));
    assert.equal(loaded.collectorId, 'web-01');
    const docs = readFileSync(repoPath('docs', 'collector-agent.md'), 'utf8');
    assert.match(docs, /\*\*Write the config file first\*\*/);
    assert.match(docs, /\[examples\/collector\.json\]\(examples\/collector\.json\)/);
  });

  it('prints an enrollment refusal and an unreachable instance as what to do, not as an unexpected error', async () => {
    const dir = tempDir();
    const config = writeTestConfig(dir.path);
    const serve = await startServe(config, dir.path);
    try {
      const tokenFile = join(dir.path, 'enroll.token');
      // Well formed, but never issued by this instance.
      writeFileSync(tokenFile, `${generateToken(ENROLLMENT_TOKEN_PREFIX)}\n`, { mode: 0o600 });
      const enroll = (server: string) => runCli(['collector', 'enroll', '--server', server, '--collector-id', 'web-09', '--state-dir', join(dir.path, 'state'), '--token-file', tokenFile]);
      const refused = enroll(serve.url);
      assert.equal(refused.status, 1);
      assert.match(refused.stderr, /^vigil: enrollment refused \(HTTP 401\): /);
      assert.match(refused.stderr, /ask an admin for a new one \(vigil collector-token create web-09, or POST \/api\/v1\/collector\/enrollment-tokens\) and enroll again/);
      assert.doesNotMatch(refused.stderr, /unexpected error|    at /);
      serve.proc.kill('SIGTERM');
      await serve.exited;
      const unreachable = enroll(serve.url);
      assert.equal(unreachable.status, 1);
      assert.match(unreachable.stderr, new RegExp(`^vigil: cannot reach the instance at ${serve.url.replace(/[.]/g, '\\.')} \\(ECONNREFUSED\\): is vigil serve running there`));
    } finally {
      if (serve.proc.exitCode === null) { serve.proc.kill('SIGKILL'); await serve.exited; }
      dir.cleanup();
    }
  });
});
