/** The parts of a service that have started so far, stopped in the reverse order of their starts. */
export interface StopList {
  /** Adds how to stop a part that has just started. */
  push(stop: () => Promise<void> | void): void;
  /** Stops every part added, the last added first, each once the one added after it has stopped. */
  stopAll(): Promise<void>;
}

/** Creates an empty list of parts to stop. */
export function createStopList(): StopList {
  const stops: Array<() => Promise<void> | void> = [];
  return {
    push(stop) {
      stops.push(stop);
    },
    async stopAll() {
      // Taken off as they run, so a second call stops nothing twice.
      for (let stop = stops.pop(); stop; stop = stops.pop()) await stop();
    },
  };
}
