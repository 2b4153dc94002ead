/** The DSSE payload type of a Vigil collector payload. */
export const PAYLOAD_TYPE = 'application/vnd.vigil.collector-payload+json; version=1';

/**
 * DSSE v1 pre-authentication encoding: `"DSSEv1" SP len(type) SP type SP len(body) SP body`,
 * lengths as ASCII decimal byte counts.
 */
export function pae(type: string, body: Uint8Array): Uint8Array {
  const typeBytes = Buffer.from(type, 'utf8');
  const head = Buffer.from(`DSSEv1 ${typeBytes.byteLength} `, 'utf8');
  const mid = Buffer.from(` ${body.byteLength} `, 'utf8');
  return Buffer.concat([head, typeBytes, mid, body]);
}
