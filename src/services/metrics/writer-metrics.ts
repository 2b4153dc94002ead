import type { Writer } from '../../commands/writer.js';
import type { Metrics } from './metrics.js';

/** The writer with each command's batch size and commit latency observed (the writer itself stays unaware). */
export function measuredWriter<M>(writer: Writer<M>, metrics: Metrics): Writer<M> {
  return {
    models: writer.models,
    // Not async: it would hold `decide` until the batch is durable (src/commands/writer.ts).
    execute(decide, ctx) {
      const end = metrics.writerCommitSeconds.startTimer();
      return writer.execute(decide, ctx).then((outcome) => {
        if (outcome.ok && outcome.records.length > 0) {
          end();
          metrics.writerBatchRecords.observe(outcome.records.length);
        }
        return outcome;
      });
    },
    cut: (events, ctx, cut) => writer.cut(events, ctx, cut),
    async record(events, ctx) {
      const end = metrics.writerCommitSeconds.startTimer();
      const records = await writer.record(events, ctx);
      if (records.length > 0) {
        end();
        metrics.writerBatchRecords.observe(records.length);
      }
      return records;
    },
  };
}
