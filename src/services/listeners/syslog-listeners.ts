import type { Pipeline } from '../../commands/pipeline.js';
import type { WriteModels } from '../../projections/models.js';
import type { Metrics } from '../metrics/metrics.js';
import { SYSLOG_BATCH_MS, type SyslogListenerConfig } from './syslog-config.js';
import { createSyslogIntake, type SyslogCluster, type SyslogIntake } from './syslog-intake.js';
import { startStreamListener, type RunningListener } from './syslog-stream.js';
import { startUdpListener } from './syslog-udp.js';

/** The running syslog listeners of an instance. */
export interface SyslogListeners {
  readonly listeners: readonly RunningListener[];
  /** Stops listening, then writes what was received and waits for it to be durable. */
  stop(): Promise<void>;
}

/** What the listeners need from the instance. */
export interface SyslogListenersDeps {
  readonly pipeline: Pipeline<WriteModels>;
  readonly metrics?: Metrics;
  readonly log: (line: Record<string, unknown>) => void;
  readonly now: () => Date;
  /** Seconds to wait while the store's disk is past its flood mark, else undefined (no gate when absent). */
  readonly refusesWrites?: () => number | undefined;
  /** On a JetStream cluster: batches reaching a follower go to the leader (syslog-intake.ts). */
  readonly cluster?: SyslogCluster;
}

/** Starts every configured listener (`syslog.listeners`), each with its own intake; all or none. */
export async function startSyslogListeners(
  configs: readonly SyslogListenerConfig[],
  deps: SyslogListenersDeps,
): Promise<SyslogListeners> {
  const running: RunningListener[] = [];
  const intakes: SyslogIntake[] = [];
  try {
    for (const config of configs) {
      const intake = createSyslogIntake(config.name, { ...deps, batchMs: SYSLOG_BATCH_MS });
      intakes.push(intake);
      const listenerDeps = { intake, log: deps.log, ...(deps.metrics ? { metrics: deps.metrics } : {}) };
      const listener =
        config.protocol === 'udp'
          ? await startUdpListener(config, listenerDeps)
          : await startStreamListener(config, listenerDeps);
      running.push(listener);
      const { address, port } = listener.address;
      deps.log({
        level: 'info',
        msg: 'syslog listening',
        listener: config.name,
        protocol: config.protocol,
        address,
        port,
      });
    }
  } catch (err) {
    await Promise.all(running.map((l) => l.stop()));
    throw err;
  }
  return {
    listeners: running,
    async stop() {
      await Promise.all(running.map((l) => l.stop()));
      await Promise.all(intakes.map((i) => i.stop()));
    },
  };
}
