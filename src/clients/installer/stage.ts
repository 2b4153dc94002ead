import type { VmBundle } from './bundle.js';
import type { VmTransport } from './transport.js';

/** The suffix of a staged file: written beside the live one, renamed over it only when every VM staged fine. */
export const STAGED_SUFFIX = '.vigil-staged';

/**
 * Stages a VM's bundle: every file written as `<path>.vigil-staged` with its final mode (the live files stay as they
 * are), the state directory created, and the modes read back: secrets must be 0600 in 0700 directories.
 */
export async function stageBundle(t: VmTransport, b: VmBundle): Promise<void> {
  for (const f of b.files) await t.writeFile(b.vmId, `${f.path}${STAGED_SUFFIX}`, f.content, f.mode);
  await t.makeDir(b.vmId, b.stateDir, 0o700);
  const secretDirs = [
    ...new Set(b.files.filter((f) => f.mode === 0o600).map((f) => f.path.slice(0, f.path.lastIndexOf('/')))),
  ];
  const expected = new Map<string, number>([
    ...b.files.map((f): [string, number] => [`${f.path}${STAGED_SUFFIX}`, f.mode]),
    ...secretDirs.map((d): [string, number] => [d, 0o700]),
    [b.stateDir, 0o700],
  ]);
  const actual = await t.modes(b.vmId, [...expected.keys()]);
  const wrong = [...expected]
    .filter(([path, mode]) => actual.get(path) !== mode)
    .map(([path, mode]) => `${path} is ${actual.get(path)?.toString(8) ?? 'missing'}, expected ${mode.toString(8)}`);
  if (wrong.length > 0) throw new Error(`${b.vmId}: files read back with the wrong permissions: ${wrong.join('; ')}`);
}

/** Switches a staged bundle into place: one rename per file (each atomic), in one call to the VM. */
export async function switchBundle(t: VmTransport, b: VmBundle): Promise<void> {
  await t.rename(
    b.vmId,
    b.files.map((f) => [`${f.path}${STAGED_SUFFIX}`, f.path] as const),
  );
}
