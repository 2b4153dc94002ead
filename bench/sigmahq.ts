import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { decideBulkImport } from '../src/commands/bulk-import-rules.js';
import { DEFAULT_RULE_LIMITS } from '../src/detection/rule-limits.js';
import { batches } from '../src/cli/rules-commands.js';
import { openInstanceStore } from '../src/cli/instance/open.js';
import { activeRuleSet, type DetectionState } from '../src/projections/detection.js';
import { NORMALIZERS } from '../src/normalizers/registry.js';
import { exportRequest, receiverBody, regressionCases } from '../tests/helpers/windows-events.js';
import type { Figure } from './foundation.js';
import { ingestInTurn, root, scratch } from './harness.js';
import { journalEntry, zeekConn } from './normalizers.js';
import type { NormalizedEvent } from '../src/events/normalized-event.js';

/** SigmaHQ's rules/ as the CLI sends them: files with names relative to the directory. */
export function sigmahqFiles(): Array<{ name: string; text: string }> {
  const dir = join(root, 'tests', 'fixtures', 'sigmahq', 'rules');
  const out: Array<{ name: string; text: string }> = [];
  const visit = (d: string): void => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) visit(p);
      else if (name.endsWith('.yml')) out.push({ name: relative(dir, p), text: readFileSync(p, 'utf8') });
    }
  };
  visit(dir);
  return out;
}

function zeekDns(i: number): Record<string, unknown> {
  return {
    ts: 1_795_338_000 + i * 0.001,
    uid: `D${i.toString(36)}`,
    'id.orig_h': `10.0.${(i >> 8) & 255}.${i & 255}`,
    'id.orig_p': 50000 + (i % 10000),
    'id.resp_h': '10.0.0.53',
    'id.resp_p': 53,
    proto: 'udp',
    trans_id: i & 65535,
    query: `host-${i % 977}.example.com`,
    qclass: 1,
    qclass_name: 'C_INTERNET',
    qtype: 1,
    qtype_name: 'A',
    rcode: 0,
    rcode_name: 'NOERROR',
    AA: false,
    TC: false,
    RD: true,
    RA: true,
    Z: 0,
    answers: ['192.0.2.7'],
    TTLs: [300],
    rejected: false,
  };
}

function zeekHttp(i: number): Record<string, unknown> {
  return {
    ts: 1_795_338_000 + i * 0.001,
    uid: `H${i.toString(36)}`,
    'id.orig_h': `10.1.${(i >> 8) & 255}.${i & 255}`,
    'id.orig_p': 51000 + (i % 10000),
    'id.resp_h': '198.51.100.80',
    'id.resp_p': 80,
    trans_depth: 1,
    method: i % 3 === 0 ? 'POST' : 'GET',
    host: `site-${i % 53}.example.org`,
    uri: `/app/page-${i % 211}.html?q=${i}`,
    version: '1.1',
    user_agent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64)',
    request_body_len: 0,
    response_body_len: 5120,
    status_code: 200,
    status_msg: 'OK',
  };
}

/** Everyday values for the fields SigmaHQ's Windows rules look at most. */
const EVERYDAY: Readonly<Record<string, string>> = {
  Image: 'C:\\Windows\\System32\\svchost.exe',
  OriginalFileName: 'svchost.exe',
  CommandLine: 'C:\\Windows\\system32\\svchost.exe -k netsvcs -p -s Schedule',
  ParentImage: 'C:\\Windows\\System32\\services.exe',
  ParentCommandLine: 'C:\\Windows\\system32\\services.exe',
  TargetFilename: 'C:\\Users\\alice\\AppData\\Local\\Temp\\~DF1234.tmp',
  TargetObject: 'HKU\\S-1-5-21-1-2-3-1001\\Software\\Microsoft\\Windows\\CurrentVersion\\Explorer\\RecentDocs\\.txt',
  Details: 'Binary Data',
  ImageLoaded: 'C:\\Windows\\System32\\kernel32.dll',
  TargetImage: 'C:\\Windows\\System32\\lsass.exe',
  SourceImage: 'C:\\Program Files\\Windows Defender\\MsMpEng.exe',
  GrantedAccess: '0x1000',
  CallTrace: 'C:\\Windows\\SYSTEM32\\ntdll.dll+9d4c4',
};

function everyday(body: Record<string, unknown>): Record<string, unknown> {
  const data = { ...(body['event_data'] as Record<string, string>) };
  for (const key of Object.keys(data)) if (Object.hasOwn(EVERYDAY, key)) data[key] = EVERYDAY[key]!;
  return { ...body, event_data: data };
}

/**
 * 40 batches of 1000 records and their events: Zeek conn, dns and http, sshd journal lines, and
 * Windows records (a fifth each).
 */
export function sigmahqStream(ingestedAt: string): Array<Array<{ record: unknown; events: NormalizedEvent[] }>> {
  const windows = regressionCases(join(root, 'tests', 'fixtures', 'sigmahq'))
    .flatMap((c) => c.events.filter((e) => (e['Event'] as Record<string, unknown>)['EventData'] !== undefined))
    .map((e) => receiverBody(e));
  const zeek = NORMALIZERS.get('network-monitor')!;
  const journal = NORMALIZERS.get('linux-journal')!;
  const otel = NORMALIZERS.get('opentelemetry-log')!;
  // 40 batches of 1000: Zeek conn, dns and http, sshd journal lines, and Windows records (a fifth each).
  const stream = Array.from({ length: 40 }, (_, b) =>
    Array.from({ length: 1000 }, (_, i) => {
      const k = b * 1000 + i;
      switch (k % 5) {
        case 0: {
          const record = zeekConn(k);
          const r = zeek.normalize(record, { ingestedAt, logType: 'conn' });
          return { record, events: r.ok ? r.events : [] };
        }
        case 1: {
          const record = zeekDns(k);
          const r = zeek.normalize(record, { ingestedAt, logType: 'dns' });
          return { record, events: r.ok ? r.events : [] };
        }
        case 2: {
          const record = zeekHttp(k);
          const r = zeek.normalize(record, { ingestedAt, logType: 'http' });
          return { record, events: r.ok ? r.events : [] };
        }
        case 3: {
          const record = journalEntry(k);
          const r = journal.normalize(record, { ingestedAt });
          return { record, events: r.ok ? r.events : [] };
        }
        default: {
          // One Windows record in a hundred is one of SigmaHQ's recorded attacks; the rest are the same
          // records with everyday values (a stream of only attacks would measure alerting, not detection).
          const recorded = windows[k % windows.length]!;
          const body = { ...(k % 100 === 4 ? recorded : everyday(recorded)), record_id: 1_000_000 + k };
          const record = exportRequest([body]);
          const r = otel.normalize(record, { ingestedAt });
          return { record, events: r.ok ? r.events : [] };
        }
      }
    }),
  );
  return stream;
}

/**
 * Issue 20's figures: importing SigmaHQ's 3,141 rules (in the CLI's batches, through the writer, so
 * decide, append and the read model's compile all count), and ingest + detect on a mixed Linux,
 * Zeek and Windows stream with all of them loaded against none.
 */
export async function sigmahqBench(): Promise<Figure[]> {
  const figures: Figure[] = [];
  const files = sigmahqFiles();
  const ingestedAt = '2026-11-22T10:00:00.000Z';
  const stream = sigmahqStream(ingestedAt);
  const events = stream.flat().reduce((n, x) => n + x.events.length, 0);
  const none = await openInstanceStore(join(scratch('sigmahq-none'), 'store'));
  const all = await openInstanceStore(join(scratch('sigmahq-all'), 'store'));
  const t0 = performance.now();
  let imported = 0;
  for (const batch of batches(files, 512 * 1024)) {
    const r = await all.writer.execute((m) => decideBulkImport(m.detection, batch, 'api', DEFAULT_RULE_LIMITS), {
      now: '2026-11-22T09:00:00.000Z',
    });
    if (!r.ok) throw new Error(`SigmaHQ rules do not import: ${r.rejection.message}`);
    imported += r.result.imported;
  }
  // The rule set (logsource index, prefilter automata) is built once the rules are in, on first use: count it here.
  activeRuleSet(all.reads.detection);
  figures.push({
    name: `import SigmaHQ rules/ (${files.length} files, 512 KiB batches, through the writer, then the rule set built)`,
    value: Math.round((performance.now() - t0) / 10) / 100,
    unit: 's',
    note: `${imported} rules imported; target < 10 s`,
  });
  // The two stores take the stream in turn, each charged the CPU time of its own batches (ingestInTurn).
  const spent = await ingestInTurn([none, all], stream, ingestedAt);
  const cpu = new Map([...spent].map(([k, v]) => [k, v.cpuMs]));
  const wall = new Map([...spent].map(([k, v]) => [k, v.wallMs]));
  const alerts = new Map([...spent].map(([k, v]) => [k, v.alerts]));
  const rate = (inst: typeof all, spent: Map<typeof all, number>) => events / (spent.get(inst)! / 1000);
  const stream_ = 'Zeek conn/dns/http, sshd journal, Windows with 1% recorded attacks; 1000/batch';
  figures.push({
    name: `ingest + detect, 0 rules (${stream_})`,
    value: Math.round(rate(none, cpu)),
    unit: 'events/CPU-s',
    note: `${Math.round(rate(none, wall))} events/s wall-clock; ${alerts.get(none)} alerts`,
  });
  figures.push({
    name: `ingest + detect, all SigmaHQ rules (${stream_})`,
    value: Math.round(rate(all, cpu)),
    unit: 'events/CPU-s',
    note: `${Math.round(rate(all, wall))} events/s wall-clock; ${alerts.get(all)} alerts raised or grown`,
  });
  figures.push({
    name: '  all SigmaHQ rules as a share of 0 rules',
    value: Math.round((rate(all, cpu) / rate(none, cpu)) * 1000) / 10,
    unit: '%',
    note: `target >= 50%; ${Math.round((rate(all, wall) / rate(none, wall)) * 1000) / 10} % wall-clock`,
  });
  await none.close();
  await all.close();
  return figures;
}
