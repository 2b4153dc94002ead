import type { Category, Outcome } from '../../events/normalized-event.js';

/** One log line as the Linux message recognizer sees it: the emitting program, its text and where it came from. */
export interface LinuxMessageInput {
  readonly program?: string;
  readonly message: string;
  readonly host?: string;
  readonly pid?: string;
}

/** What a recognized Linux log line means, in NormalizedEvent vocabulary. */
export interface RecognizedMessage {
  readonly category: Category;
  readonly class: string;
  readonly activity: string;
  readonly outcome: Outcome;
  readonly severity: number;
  readonly actor?: Record<string, unknown>;
  readonly sourceEndpoint?: Record<string, unknown>;
  readonly destinationEndpoint?: Record<string, unknown>;
  readonly service?: Record<string, unknown>;
  readonly entityKeys: readonly string[];
  /** Values pulled out of the text, under names detection rules use (e.g. sudo's USER, COMMAND, PWD, TTY). */
  readonly fields: Readonly<Record<string, string>>;
}

/** One matcher: the trimmed message text plus the input it came from, to a meaning or undefined. */
export type Matcher = (text: string, input: LinuxMessageInput) => RecognizedMessage | undefined;
