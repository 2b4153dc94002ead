import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { apiToken, startServe, writeTestConfig } from '../helpers/cli.js';
import { fixturePath } from '../helpers/paths.js';
import { startTaxiiServer } from '../helpers/taxii-server.js';
import { tempDir } from '../helpers/temp.js';

const MISP_EVENT = '57c4445b-c548-4654-af0b-4be3950d210f';
const MISP_MD5 = '0749bae92ca336a02c83d126e04ec628';

interface Feed {
  name: string;
  state: string;
  total: number;
  version: string | null;
  fetch?: { state: string; lastError: string | null; failures: number };
}
interface Alert {
  id: string;
  ruleId: string;
  title: string;
  matchReason: {
    intel: {
      feed: string;
      indicator: string;
      related: Array<{ type: string; name: string }>;
      fields: Array<{ field: string; value: string }>;
    };
  };
}

/**
 * Issue 60 on a real `vigil serve`: a TAXII 2.1 collection (the test server built from the specification, serving the
 * APT1 report's objects behind a bearer token read from an owner-only file) and a MISP feed (manifest and event over
 * HTTP) are fetched by the service; a Zeek dns record for an APT1 domain, a conn into an APT1 /15 and a Zeek files
 * record with the MISP event's md5 raise explained alerts; the TAXII server going down leaves the feed failing with its
 * last indicators still matching.
 */
describe('threat intelligence feeds fetched by vigil serve', () => {
  it(
    "fetches a TAXII 2.1 collection and a MISP feed, matches ingested Zeek records, and keeps a failing feed's set",
    { timeout: 120_000 },
    async () => {
      const dir = tempDir('vigil-intel-');
      const apt1 = JSON.parse(readFileSync(fixturePath('stix-2.1', 'apt1.json'), 'utf8')) as {
        objects: Array<Record<string, unknown> & { id: string; type: string }>;
      };
      const taxii = await startTaxiiServer({
        objects: apt1.objects.map((object, i) => ({
          object,
          dateAdded: new Date(Date.parse('2026-11-01T00:00:00Z') + i).toISOString(),
        })),
        authorization: 'Bearer apt1-feed-token',
        pageSize: 20,
      });
      // The MISP feed: a folder with its manifest and one event, served as a web server would.
      const misp = join(dir.path, 'misp');
      mkdirSync(misp);
      copyFileSync(fixturePath('misp', `${MISP_EVENT}.json`), join(misp, `${MISP_EVENT}.json`));
      writeFileSync(
        join(misp, 'manifest.json'),
        JSON.stringify({ [MISP_EVENT]: { timestamp: 1472541011, info: 'OSINT' } }),
      );
      const web = createServer((req, res) => {
        try {
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(readFileSync(join(misp, (req.url ?? '/').replace(/^\/+/, ''))));
        } catch {
          res.writeHead(404).end();
        }
      });
      await new Promise<void>((r) => web.listen(0, '127.0.0.1', r));
      const secrets = join(dir.path, 'feed-secrets');
      mkdirSync(secrets, { mode: 0o700 });
      writeFileSync(join(secrets, 'apt1.auth'), 'Bearer apt1-feed-token\n', { mode: 0o600 });
      chmodSync(join(secrets, 'apt1.auth'), 0o600);
      const config = writeTestConfig(dir.path, {
        intel: {
          feeds: [
            {
              name: 'apt1',
              kind: 'taxii21',
              url: taxii.discoveryUrl,
              collection: taxii.collectionId,
              authFile: join(secrets, 'apt1.auth'),
            },
            { name: 'osint', kind: 'misp', url: `http://127.0.0.1:${(web.address() as AddressInfo).port}/` },
          ],
        },
      });
      const admin = apiToken(config, 'intel-admin', 'admin');
      const serve = await startServe(config, dir.path);
      const api = async <T>(path: string, init: RequestInit = {}) => {
        const res = await fetch(`${serve.url}${path}`, {
          ...init,
          headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json', ...init.headers },
        });
        return { status: res.status, body: (await res.json()) as T };
      };
      const feeds = async () => (await api<{ feeds: Feed[] }>('/api/v1/intel/feeds')).body.feeds;
      try {
        // Both feeds are fetched at start.
        for (let i = 0; ; i++) {
          const f = await feeds();
          if (f.length === 2 && f.every((x) => x.state === 'ok')) break;
          assert.ok(i < 100, `the feeds were not fetched: ${JSON.stringify(f)}`);
          await new Promise((r) => setTimeout(r, 200));
        }
        const [apt1Feed, osint] = await feeds();
        assert.deepEqual([apt1Feed!.name, apt1Feed!.total, osint!.name, osint!.total], ['apt1', 10, 'osint', 3]);
        assert.match(apt1Feed!.version ?? '', /^taxii:2026-11-01T/);

        const zeek = (logType: string, records: unknown[]) =>
          api<{ alerts: Array<{ id: string; ruleId: string }> }>(`/api/v1/ingest/network-monitor?logType=${logType}`, {
            method: 'POST',
            body: JSON.stringify(records),
          });
        const ts = Math.floor(Date.now() / 1000);
        const dns = (uid: string, query: string) => ({
          ts,
          uid,
          'id.orig_h': '10.0.0.5',
          'id.orig_p': 53001,
          'id.resp_h': '10.0.0.53',
          'id.resp_p': 53,
          proto: 'udp',
          query,
          qtype_name: 'A',
        });
        const raisedBy = async (answer: Promise<{ body: { alerts: Array<{ id: string; ruleId: string }> } }>) => {
          const intel = (await answer).body.alerts.filter((a) => a.ruleId === 'vigil.threat-intel-match');
          return Promise.all(intel.map(async (a) => (await api<Alert>(`/api/v1/alerts/${a.id}`)).body));
        };
        const [domainAlert] = await raisedBy(zeek('dns', [dns('Cd1', 'update.hugesoft.org')]));
        assert.ok(domainAlert, 'a DNS query for an APT1 domain alerts');
        const why = domainAlert.matchReason.intel;
        assert.equal(why.feed, 'apt1');
        assert.deepEqual(
          why.fields.map((f) => [f.field, f.value]),
          [['query', 'update.hugesoft.org']],
        );
        assert.ok(
          why.related.some((r) => r.name === 'APT1'),
          JSON.stringify(why.related),
        );
        const [rangeAlert] = await raisedBy(
          zeek('conn', [
            {
              ts,
              uid: 'Cc1',
              'id.orig_h': '10.0.0.5',
              'id.orig_p': 50000,
              'id.resp_h': '223.167.10.10',
              'id.resp_p': 443,
              proto: 'tcp',
            },
          ]),
        );
        assert.ok(rangeAlert, 'a connection into an APT1 /15 alerts');
        assert.equal(rangeAlert.matchReason.intel.fields[0]!.value, '223.167.10.10');
        const [hashAlert] = await raisedBy(
          zeek('files', [
            {
              ts,
              fuid: 'Fx1',
              uid: 'Cf1',
              'id.orig_h': '10.0.0.5',
              'id.orig_p': 50001,
              'id.resp_h': '10.0.0.80',
              'id.resp_p': 80,
              source: 'HTTP',
              md5: MISP_MD5,
              mime_type: 'application/x-dosexec',
            },
          ]),
        );
        assert.ok(hashAlert, 'a file whose md5 the MISP event lists alerts');
        assert.equal(hashAlert.matchReason.intel.feed, 'osint');

        // The TAXII server goes down: the feed is failing, its indicators stay active.
        taxii.setDown(true);
        const polled = await api<Feed>('/api/v1/intel/feeds/apt1/poll', { method: 'POST', body: '{}' });
        assert.equal(polled.status, 200);
        assert.equal(polled.body.state, 'failing');
        assert.match(polled.body.fetch?.lastError ?? '', /503/);
        assert.doesNotMatch(polled.body.fetch?.lastError ?? '', /apt1-feed-token/);
        assert.equal(polled.body.total, 10, 'the last good set stays');
        const [still] = await raisedBy(zeek('dns', [dns('Cd2', 'msnhome.org')]));
        assert.ok(still, 'a failing feed still matches');
        assert.equal((await api('/api/v1/intel/feeds/nope/poll', { method: 'POST', body: '{}' })).status, 404);
      } finally {
        serve.proc.kill('SIGTERM');
        await serve.exited;
        await taxii.close();
        await new Promise<void>((r) => web.close(() => r()));
        dir.cleanup();
      }
    },
  );

  it(
    "searches stored evidence back in time when a bundle adds indicators: retro alerts with the event's time",
    { timeout: 60_000 },
    async () => {
      const dir = tempDir('vigil-retro-');
      const config = writeTestConfig(dir.path);
      const admin = apiToken(config, 'retro-admin', 'admin');
      const serve = await startServe(config, dir.path);
      const api = async <T>(path: string, init: RequestInit = {}) => {
        const res = await fetch(`${serve.url}${path}`, {
          ...init,
          headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json', ...init.headers },
        });
        return { status: res.status, body: (await res.json()) as T };
      };
      try {
        // Three days ago a host resolved a name no feed knew then; the evidence is stored.
        const ts = Math.floor(Date.now() / 1000) - 3 * 86_400;
        const dns = {
          ts,
          uid: 'Cold1',
          'id.orig_h': '10.0.0.9',
          'id.orig_p': 53002,
          'id.resp_h': '10.0.0.53',
          'id.resp_p': 53,
          proto: 'udp',
          query: 'late.evil.example',
          qtype_name: 'A',
        };
        const stored = await api<{ alerts: unknown[] }>('/api/v1/ingest/network-monitor?logType=dns', {
          method: 'POST',
          body: JSON.stringify([dns]),
        });
        assert.equal(stored.status, 202);
        assert.deepEqual(stored.body.alerts, []);
        const indicator = {
          type: 'indicator',
          spec_version: '2.1',
          id: 'indicator--late',
          created: '2026-01-01T00:00:00Z',
          modified: '2026-01-01T00:00:00Z',
          name: 'Late C2',
          pattern_type: 'stix',
          pattern: "[domain-name:value = 'evil.example']",
          valid_from: '2026-01-01T00:00:00Z',
        };
        const posted = await api<{ added: number }>('/api/v1/intel/bundles?feed=late', {
          method: 'POST',
          body: JSON.stringify({ type: 'bundle', id: 'bundle--late', objects: [indicator] }),
        });
        assert.equal(posted.body.added, 1);
        let feed: { retro?: { state: string; scanned: number; matched: number; complete: boolean } } | undefined;
        for (let i = 0; i < 100; i++) {
          feed = (await api<{ feeds: Array<typeof feed & { name: string }> }>('/api/v1/intel/feeds')).body.feeds.find(
            (f) => f.name === 'late',
          );
          if (feed?.retro?.state === 'done') break;
          await new Promise((r) => setTimeout(r, 100));
        }
        assert.deepEqual(
          { ...feed!.retro, scanned: 0 },
          { ...feed!.retro, state: 'done', matched: 1, complete: true, scanned: 0 },
        );
        const alerts = (
          await api<{ alerts: Array<{ id: string; ruleId: string; retro?: boolean; firstSeen: string }> }>(
            '/api/v1/alerts?rule=vigil.threat-intel-match',
          )
        ).body.alerts;
        assert.equal(alerts.length, 1);
        assert.equal(alerts[0]!.retro, true);
        assert.equal(Date.parse(alerts[0]!.firstSeen), ts * 1000, "the alert has the event's time");
        // Posting the same bundle again adds nothing and searches nothing again.
        const again = await api<{ added: number; changed: boolean }>('/api/v1/intel/bundles?feed=late', {
          method: 'POST',
          body: JSON.stringify({ type: 'bundle', id: 'bundle--late', objects: [indicator] }),
        });
        assert.deepEqual([again.body.added, again.body.changed], [0, false]);
      } finally {
        serve.proc.kill('SIGTERM');
        await serve.exited;
        dir.cleanup();
      }
    },
  );
});
