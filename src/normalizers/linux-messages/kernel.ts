import { portNumber, recognized, type Verdict } from './build.js';
import type { LinuxMessageInput, RecognizedMessage } from './types.js';

/** `[12345.678901] ` as printed when kernel lines reach syslog through klogd or dmesg. */
const KERNEL_CLOCK = /^\[ {0,12}\d{1,12}\.\d{1,9}\] /;
/** The process name is the kernel's 15-byte comm, so the first `)` followed by a separator closes it. */
const OOM = new RegExp(
  String.raw`^(Out of memory(?: \([\w ]{1,40}\))?|Memory cgroup out of memory): ` +
    String.raw`Kill(?:ed)? process (\d{1,10}) \((.{1,16}?)\)(?=[ ,]|$)`,
);
const OOM_UID = / UID:(\d{1,10})/;

function oomKill(input: LinuxMessageInput, text: string): RecognizedMessage | undefined {
  const m = OOM.exec(text);
  if (!m) return undefined;
  const verdict: Verdict = {
    category: 'system',
    class: 'process',
    activity: 'oom_kill',
    outcome: 'success',
    severity: 6,
  };
  const constraint = m[1]!.startsWith('Memory cgroup') ? 'memcg' : undefined;
  return recognized(input, verdict, { pid: m[2], process: m[3], uid: OOM_UID.exec(text)?.[1], constraint });
}

const KEY_VALUE = /^([A-Z]{1,16})=(.{0,256})$/;

/** The `KEY=VALUE` tokens of a netfilter LOG line (`IN=eth0 OUT= SRC=.. DST=.. PROTO=TCP SPT=.. ` +
  `DPT=..`), at most 64. */
function netfilterTokens(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const token of text.split(' ', 64)) {
    const kv = KEY_VALUE.exec(token);
    if (kv && out[kv[1]!] === undefined) out[kv[1]!] = kv[2]!;
  }
  return out;
}

/** The rule's verdict from the log prefix the administrator (or ufw) chose. */
function firewallAction(prefix: string): { action: string; verdict: Verdict } {
  const base = { category: 'network', class: 'firewall' } as const;
  if (/BLOCK|DROP|REJECT|DENY/i.test(prefix)) {
    return { action: 'block', verdict: { ...base, activity: 'block', outcome: 'failure', severity: 3 } };
  }
  if (/ALLOW|ACCEPT/i.test(prefix))
    return { action: 'accept', verdict: { ...base, activity: 'allow', outcome: 'success', severity: 1 } };
  return { action: 'log', verdict: { ...base, activity: 'log', outcome: 'unknown', severity: 2 } };
}

function firewall(input: LinuxMessageInput, text: string): RecognizedMessage | undefined {
  // The LOG prefix is free text chosen by the rule author; the packet description starts at IN=.
  const at = text.startsWith('IN=') ? 0 : text.indexOf(' IN=') + 1;
  if (at === 0 && !text.startsWith('IN=')) return undefined;
  const kv = netfilterTokens(text.slice(at));
  const src = kv['SRC'],
    dst = kv['DST'];
  if (src === undefined || dst === undefined) return undefined;
  const prefix = text.slice(0, at).trim();
  const { action, verdict } = firewallAction(prefix);
  const proto = kv['PROTO']?.toLowerCase();
  const dport = portNumber(kv['DPT']);
  const fields = {
    ...kv,
    prefix,
    action,
    blocked: action === 'block' ? 'true' : action === 'accept' ? 'false' : undefined,
    src_ip: src,
    dst_ip: dst,
    src_port: kv['SPT'],
    dst_port: kv['DPT'],
    proto,
  };
  const service = proto !== undefined && dport !== undefined ? { port: dport, protocol: proto } : undefined;
  const result = recognized(input, verdict, fields, service ? { service } : {});
  if (!service) return result;
  return { ...result, entityKeys: [...result.entityKeys, `port:${proto}/${dport}`] };
}

/** Recognizes kernel OOM kills and netfilter (ufw / iptables LOG) packet lines. */
export function recognizeKernel(text: string, input: LinuxMessageInput): RecognizedMessage | undefined {
  const body = text.replace(KERNEL_CLOCK, '');
  return oomKill(input, body) ?? firewall(input, body);
}
