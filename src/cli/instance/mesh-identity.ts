import { existsSync } from 'node:fs';
import { openMeshAllowlist, readMeshAllowlist } from '../../auth/mesh-allowlist.js';
import { createMeshIdentity, type MeshIdentity } from '../../auth/mesh-identity.js';
import { queryWhoIs } from '../../auth/mesh-localapi.js';
import { secretFileProblem } from '../../kernel/secret-files.js';
import type { MeshConfig } from '../../services/config-schema.js';

/** Bounds of the daemon lookups: the request waits at most this long for an identity. */
const WHOIS_LIMITS = { timeoutMs: 1000, maxBytes: 256 * 1024 };
const CACHE_MS = 10_000;
const CACHE_ENTRIES = 4096;
const MAX_IN_FLIGHT = 256;
/** The same lookup problem is logged at most once a minute, so a dead daemon cannot flood the log. */
const PROBLEM_LOG_MS = 60_000;

/**
 * Opens mesh identity for `vigil serve`: the allowlist file, when configured, must be valid and
 * owner-only at start-up (the error names the key), and is then watched; lookups go to the
 * daemon's socket with the bounds above.
 */
export function openMeshIdentity(mesh: MeshConfig, log: (line: Record<string, unknown>) => void): MeshIdentity {
  const file = mesh.allowlistFile;
  if (file !== undefined && existsSync(file)) {
    const problem = secretFileProblem(file);
    if (problem) throw new Error(`refusing to start: auth.mesh.allowlistFile: ${problem}`);
    try {
      readMeshAllowlist(file);
    } catch (err) {
      throw new Error(`refusing to start: auth.mesh.allowlistFile: ${(err as Error).message}`);
    }
  }
  const logged = new Map<string, number>();
  return createMeshIdentity({
    peerRanges: mesh.peerRanges,
    whois: (addr) => queryWhoIs(mesh.socketPath, addr, WHOIS_LIMITS),
    allowlist: openMeshAllowlist(mesh.allowlist, file, (message) => log({ level: 'error', msg: message })),
    nowMs: () => performance.now(),
    cacheMs: CACHE_MS,
    cacheEntries: CACHE_ENTRIES,
    maxInFlight: MAX_IN_FLIGHT,
    onProblem(message) {
      const now = performance.now();
      if (now - (logged.get(message) ?? -Infinity) < PROBLEM_LOG_MS) return;
      if (logged.size > 100) logged.clear();
      logged.set(message, now);
      log({ level: 'warn', msg: message, socket: mesh.socketPath });
    },
  });
}
