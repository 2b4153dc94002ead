import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { openNote, parseNote, type NoteVerifier } from '../../log/signed-note.js';
import {
  ADD_CHECKPOINT_PATH,
  MAX_ANSWER_BYTES,
  cosignatureLines,
  parseSizeAnswer,
  withCosignatures,
} from '../../log/witness-protocol.js';

/** A witness's answer to one add-checkpoint request: its status, content type and body. */
export interface WitnessReply {
  readonly status: number;
  readonly contentType: string;
  readonly text: string;
}

/** What the instance makes of a reply to `old` and a checkpoint of `size` records. */
export type PushOutcome =
  | { readonly kind: 'cosigned'; readonly note: string }
  | { readonly kind: 'retry'; readonly old: number }
  | { readonly kind: 'refused'; readonly reason: string; readonly witnessSize?: number }
  | { readonly kind: 'failed'; readonly reason: string };

/** The checkpoint with only its log's own signature lines: what is sent, and what a reply's lines are checked on. */
export function logSignedOnly(note: string): string {
  const parsed = parseNote(note);
  if (!parsed.ok) return note;
  const origin = parsed.text.slice(0, parsed.text.indexOf('\n'));
  const lines = note.slice(parsed.text.length + 1, -1).split('\n');
  return `${parsed.text}\n${lines
    .filter((_, i) => parsed.signatures[i]!.name === origin)
    .map((l) => `${l}\n`)
    .join('')}`;
}

const excerpt = (text: string) => text.slice(0, 200).trim();

/**
 * What a tlog-witness reply means for the checkpoint `note` (log-signed only) of `size` records sent with `old`:
 * a 200 whose lines verify with the witness's key is a cosignature; a 409 naming a size below ours (or ours, sent
 * with another `old`) is asked again from that size; a 422, a 409 naming a size past ours or the very size sent (the
 * same size with another root), and a 200 whose cosignature does not verify are refusals (an inconsistent tree);
 * anything else (a 400, 403, 404, a 5xx, a malformed body) is a failure to retry later. Pure.
 */
export function interpretReply(
  reply: WitnessReply,
  sent: { readonly old: number; readonly size: number; readonly note: string },
  key: NoteVerifier,
): PushOutcome {
  const said = `HTTP ${reply.status}${reply.text ? `: ${excerpt(reply.text)}` : ''}`;
  if (reply.status === 200) {
    const lines = cosignatureLines(reply.text);
    if (!lines) return { kind: 'failed', reason: `${said} (not cosignature lines)` };
    const note = withCosignatures(sent.note, lines);
    const opened = openNote(note, key);
    if (!opened.ok) return { kind: 'refused', reason: `its cosignature does not verify (${opened.error})` };
    return { kind: 'cosigned', note };
  }
  if (reply.status === 422)
    return {
      kind: 'refused',
      reason: 'the consistency proof from the size it cosigned does not hold: the tree forked',
    };
  if (reply.status === 409) {
    const size = parseSizeAnswer(reply.text);
    if (size === undefined) return { kind: 'failed', reason: `${said} (not a tree size)` };
    if (size > sent.size)
      return {
        kind: 'refused',
        reason: `it cosigned ${size} records of this log, more than the ${sent.size} the instance has`,
        witnessSize: size,
      };
    if (size === sent.old && size !== sent.size)
      return { kind: 'failed', reason: `${said} (the size it names is the one sent)` };
    if (size === sent.old)
      return {
        kind: 'refused',
        reason: `it cosigned another tree of ${size} records of this log (same size, another root)`,
        witnessSize: size,
      };
    return { kind: 'retry', old: size };
  }
  return { kind: 'failed', reason: said };
}

/**
 * POSTs an add-checkpoint body to a witness's submission prefix, within `timeoutMs` and MAX_ANSWER_BYTES; `signal`
 * ends it early (the service stopping).
 */
export function postAddCheckpoint(
  prefix: string,
  body: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<WitnessReply> {
  const url = new URL(`${prefix.replace(/\/+$/, '')}${ADD_CHECKPOINT_PATH}`);
  const bytes = Buffer.from(body, 'utf8');
  return new Promise((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(
      url,
      {
        method: 'POST',
        headers: { 'content-type': 'text/plain; charset=utf-8', 'content-length': String(bytes.length) },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          // A witness's answer is a few lines: a longer one is not read to its end.
          if (size > MAX_ANSWER_BYTES) req.destroy(new Error(`an answer past ${MAX_ANSWER_BYTES} bytes`));
          else chunks.push(chunk);
        });
        res.on('end', () => {
          clearTimeout(timer);
          const contentType = String(res.headers['content-type'] ?? '');
          resolve({ status: res.statusCode ?? 0, contentType, text: Buffer.concat(chunks).toString('utf8') });
        });
        res.on('error', (err) => {
          clearTimeout(timer);
          reject(err);
        });
      },
    );
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    signal?.addEventListener('abort', () => req.destroy(new Error('stopped')), { once: true });
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.end(bytes);
  });
}
