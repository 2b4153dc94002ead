import { readFileSync } from 'node:fs';
import { isIPv4 } from 'node:net';
import * as v from 'valibot';
import { secretFileProblem } from '../../kernel/secret-files.js';
import { formatIssues } from '../../kernel/issues.js';
import { CENTRAL_TAG, type InventoryProvider, type InventoryVm } from './inventory.js';

/** The Tailscale API's base URL. */
export const TAILSCALE_API_URL = 'https://api.tailscale.com';

/** The device tag that marks a central-VM candidate in a tailnet (`vigil:central` in a static inventory). */
export const TAILSCALE_CENTRAL_TAG = 'tag:vigil-central';

/** The device tag that keeps a device out of the proposed scope (`install: false`). */
export const TAILSCALE_SKIP_TAG = 'tag:vigil-skip';

const MAX_DEVICES = 10_000;
const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

/** The fields of a device (`GET /api/v2/tailnet/{tailnet}/devices`) discovery reads; others are ignored. */
const DeviceSchema = v.object({
  id: v.pipe(v.string(), v.maxLength(256)),
  name: v.pipe(v.string(), v.minLength(1), v.maxLength(512)),
  hostname: v.optional(v.pipe(v.string(), v.maxLength(512))),
  os: v.optional(v.pipe(v.string(), v.maxLength(64)), ''),
  addresses: v.optional(v.pipe(v.array(v.pipe(v.string(), v.maxLength(64))), v.maxLength(64)), []),
  tags: v.optional(v.pipe(v.array(v.pipe(v.string(), v.maxLength(128))), v.maxLength(64)), []),
  authorized: v.optional(v.boolean(), true),
});

const DevicesSchema = v.object({ devices: v.pipe(v.array(DeviceSchema), v.maxLength(MAX_DEVICES)) });

type Device = v.InferOutput<typeof DeviceSchema>;

/** Where to list a tailnet's devices and the file holding the API access token (owner-only). */
export interface TailscaleOptions {
  readonly tailnet: string;
  readonly apiKeyFile: string;
  readonly apiUrl?: string;
}

/**
 * A device as an inventory VM: its id is the first label of its MagicDNS name (unique in the
 * tailnet), its address its Tailscale IPv4 address, `os` linux, windows or other; tagged
 * `tag:vigil-central` it is a central candidate, tagged `tag:vigil-skip` or not authorized it is
 * kept out of the scope. Undefined for a name that is not a valid VM id.
 */
export function deviceToVm(d: Device): InventoryVm | undefined {
  const id = d.name.split('.')[0] ?? '';
  if (!/^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$/.test(id)) return undefined;
  const os = d.os.toLowerCase() === 'linux' ? 'linux' : d.os.toLowerCase() === 'windows' ? 'windows' : 'other';
  const address = d.addresses.find((a) => isIPv4(a)) ?? d.addresses[0];
  return {
    id,
    os,
    name: d.name,
    ...(address ? { address } : {}),
    tags: [...(d.tags.includes(TAILSCALE_CENTRAL_TAG) ? [CENTRAL_TAG] : []), ...d.tags.slice(0, 31)],
    install: d.authorized && !d.tags.includes(TAILSCALE_SKIP_TAG),
  };
}

function readApiKey(path: string): string {
  const problem = secretFileProblem(path);
  if (problem) throw new Error(`Tailscale API key: ${problem}`);
  const key = readFileSync(path, 'utf8').trim();
  if (!/^[A-Za-z0-9_-]{8,512}$/.test(key))
    throw new Error(`Tailscale API key: ${path} must hold one access token (tskey-api-...)`);
  return key;
}

/**
 * Discovery from the Tailscale API, read-only: one `GET /api/v2/tailnet/{tailnet}/devices` with the
 * access token read from an owner-only file (sent only in the Authorization header).
 */
export function tailscaleInventoryProvider(o: TailscaleOptions): InventoryProvider {
  const base = (o.apiUrl ?? TAILSCALE_API_URL).replace(/\/+$/, '');
  const url = `${base}/api/v2/tailnet/${encodeURIComponent(o.tailnet)}/devices`;
  return {
    name: `tailscale:${o.tailnet}`,
    async list() {
      const res = await fetch(url, {
        headers: { authorization: `Bearer ${readApiKey(o.apiKeyFile)}`, accept: 'application/json' },
        signal: AbortSignal.timeout(30_000),
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`Tailscale API: GET ${url}: HTTP ${res.status}`);
      if (text.length > MAX_RESPONSE_BYTES)
        throw new Error(`Tailscale API: the device list is larger than ${MAX_RESPONSE_BYTES} bytes`);
      let raw: unknown;
      try {
        raw = JSON.parse(text);
      } catch {
        throw new Error('Tailscale API: the device list is not JSON');
      }
      const parsed = v.safeParse(DevicesSchema, raw);
      if (!parsed.success)
        throw new Error(`Tailscale API: unexpected device list:\n  ${formatIssues(parsed.issues).join('\n  ')}`);
      const vms: InventoryVm[] = [];
      const seen = new Set<string>();
      for (const d of parsed.output.devices) {
        const vm = deviceToVm(d);
        if (!vm || seen.has(vm.id.toLowerCase())) continue;
        seen.add(vm.id.toLowerCase());
        vms.push(vm);
      }
      return vms;
    },
  };
}
