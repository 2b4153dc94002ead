/**
 * The rule preview's worker thread (preview-evaluator.ts): compiles the rules it was started with,
 * then evaluates each chunk of events it is sent, in order, and answers with the matches.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { compileSigma } from '../../detection/compile.js';
import type { CompiledSigma } from '../../detection/types.js';
import type { RuleMatch } from '../../detection/engine.js';
import type { NormalizedEvent } from '../../events/normalized-event.js';
import { chunkMatcher } from './preview-evaluator.js';

/** What the worker is started with: the rule documents, as imported. */
export interface PreviewWorkerData {
  readonly docs: unknown[];
}

/** What the worker answers: once `ready` (or `error`), then `matches` (or `error`) per chunk. */
export type FromPreviewWorker =
  { kind: 'ready' } | { kind: 'matches'; matches: RuleMatch[] } | { kind: 'error'; message: string };

if (parentPort) {
  const port = parentPort;
  const post = (m: FromPreviewWorker) => port.postMessage(m);
  const rules: CompiledSigma[] = [];
  let failed: string | undefined;
  for (const doc of (workerData as PreviewWorkerData).docs) {
    const r = compileSigma(doc);
    if (r.ok) rules.push(r.rule);
    else failed ??= r.error;
  }
  if (failed !== undefined) post({ kind: 'error', message: failed });
  else {
    const match = chunkMatcher(rules);
    port.on('message', (events: NormalizedEvent[]) => {
      try {
        post({ kind: 'matches', matches: match(events) });
      } catch (err) {
        post({ kind: 'error', message: (err as Error).message });
      }
    });
    post({ kind: 'ready' });
  }
}
