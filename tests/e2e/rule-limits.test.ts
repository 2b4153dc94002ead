import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { apiToken, startServe, writeTestConfig, type ServeProcess } from '../helpers/cli.js';
import { WEBSHELL_RULE, WEBSHELL_RULE_ID } from '../helpers/event-fixtures.js';
import {
  MANY_REGEXES_ID,
  MANY_VALUES_ID,
  manyRegexesRule,
  manyValue,
  manyValuesRule,
} from '../helpers/rule-limit-fixtures.js';
import { tempDir } from '../helpers/temp.js';

/**
 * Issue 57 end to end on a real `vigil serve`: an import refuses, with a 400 naming the rule and the
 * limit, a rule over `detection.limits`, and accepts a large rule within them, which then runs.
 */

interface ErrorResponse { error: string; issues?: string[] }

/** A served instance from a config with `extra`, and an admin token. */
async function instance(extra: Record<string, unknown> = {}): Promise<{ serve: ServeProcess; admin: string }> {
  const dir = tempDir();
  const config = writeTestConfig(dir.path, extra);
  const admin = apiToken(config, 'admin', 'admin');
  return { serve: await startServe(config, dir.path), admin };
}

async function stop(serve: ServeProcess): Promise<void> {
  serve.proc.kill('SIGTERM');
  await serve.exited;
}

function post(serve: ServeProcess, token: string, path: string, body: string, type: string): Promise<Response> {
  return fetch(`${serve.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': type },
    body,
  });
}

/** A Zeek http record; every 50th asks for a uri holding one of the values of the large rule. */
const httpRecord = (n: number) => ({
  ts: 1_795_338_000 + n, uid: `Climit${n}`,
  'id.orig_h': '198.51.100.9', 'id.orig_p': 40_000 + n, 'id.resp_h': '10.7.0.1', 'id.resp_p': 80,
  method: 'GET', uri: n % 50 === 0 ? `/dl/${manyValue(n * 40)}/x` : `/static/${n}.css`, host: 'web',
});

describe('rule limits (vigil serve end to end)', () => {
  it('refuses the 8,000-regex rule with a 400, accepts the 23,600-value rule, and runs it on ingest', { timeout: 180_000 }, async () => {
    const { serve, admin } = await instance();
    try {
      const refused = await post(serve, admin, '/api/v1/rules', manyRegexesRule(), 'application/yaml');
      assert.equal(refused.status, 400);
      const body = await refused.json() as ErrorResponse;
      assert.match(body.error, /nothing was imported/);
      assert.deepEqual(body.issues, [
        `document 1, line 1: rule "Many regular expressions" (${MANY_REGEXES_ID}): 8000 regular expressions, ` +
          'more than detection.limits.regexesPerRule (64)',
      ]);
      const absent = await fetch(`${serve.url}/api/v1/rules/${MANY_REGEXES_ID}`, { headers: { authorization: `Bearer ${admin}` } });
      assert.equal(absent.status, 404, 'nothing was installed');

      // The bulk route refuses the same document on its own and installs its neighbour.
      const files = [{ name: 'regexes.yml', text: manyRegexesRule() }, { name: 'webshell.yml', text: WEBSHELL_RULE }];
      const bulk = await post(serve, admin, '/api/v1/rules/bulk', JSON.stringify({ files }), 'application/json');
      assert.equal(bulk.status, 201);
      const summary = await bulk.json() as { ruleIds: string[]; invalid: Array<{ file: string; title?: string; error: string }> };
      assert.deepEqual(summary.ruleIds, [WEBSHELL_RULE_ID]);
      assert.equal(summary.invalid.length, 1);
      assert.equal(summary.invalid[0]!.file, 'regexes.yml');
      assert.equal(summary.invalid[0]!.title, 'Many regular expressions');
      assert.match(summary.invalid[0]!.error, /8000 regular expressions, more than detection\.limits\.regexesPerRule \(64\)$/);

      const accepted = await post(serve, admin, '/api/v1/rules', manyValuesRule(), 'application/yaml');
      assert.equal(accepted.status, 201, await accepted.clone().text());
      assert.deepEqual(await accepted.json(), { ruleIds: [MANY_VALUES_ID] });

      const records = Array.from({ length: 500 }, (_, n) => httpRecord(n));
      const ingest = await post(serve, admin, '/api/v1/ingest/network-monitor?logType=http', JSON.stringify(records), 'application/json');
      assert.equal(ingest.status, 202, await ingest.clone().text());
      const result = await ingest.json() as { accepted: unknown[]; alerts: Array<{ ruleId: string }> };
      assert.equal(result.accepted.length, 500);
      assert.deepEqual([...new Set(result.alerts.map((a) => a.ruleId))], [MANY_VALUES_ID]);

      const listed = await fetch(`${serve.url}/api/v1/alerts?rule=${MANY_VALUES_ID}&limit=1000`, { headers: { authorization: `Bearer ${admin}` } });
      assert.equal(listed.status, 200);
      const alerts = (await listed.json() as { alerts: Array<{ ruleId: string; evidenceCount: number }> }).alerts;
      assert.ok(alerts.length > 0);
      assert.equal(alerts.reduce((n, a) => n + a.evidenceCount, 0), 10, 'the ten records holding a value, and no other');
    } finally {
      await stop(serve);
    }
  });

  it('follows detection.limits from the config: regexesPerRule 2 refuses a rule of 3 and accepts one of 2', { timeout: 120_000 }, async () => {
    const { serve, admin } = await instance({ detection: { limits: { regexesPerRule: 2 } } });
    try {
      const three = await post(serve, admin, '/api/v1/rules', manyRegexesRule(3), 'application/yaml');
      assert.equal(three.status, 400);
      const body = await three.json() as ErrorResponse;
      assert.deepEqual(body.issues, [
        `document 1, line 1: rule "Many regular expressions" (${MANY_REGEXES_ID}): 3 regular expressions, ` +
          'more than detection.limits.regexesPerRule (2)',
      ]);
      const two = await post(serve, admin, '/api/v1/rules', manyRegexesRule(2), 'application/yaml');
      assert.equal(two.status, 201, await two.clone().text());
    } finally {
      await stop(serve);
    }
  });
});
