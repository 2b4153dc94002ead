import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ROLES } from '../auth/roles.js';
import { CliError } from './cli-error.js';

/**
 * What `vigil help` says about one command: the synopsis printed with a usage error, and the help that `vigil help
 * <command>` and `vigil <command> --help` print (synopsis, what it does, options, exit status).
 */
export interface CommandHelp {
  /** One line for the overview. */
  readonly summary: string;
  /** The synopsis, one line per form, each starting with `vigil <command>`. */
  readonly usage: readonly string[];
  /** What the command does and its options, as printed. */
  readonly details: string;
  /** Exit status and its meaning, in ascending order. */
  readonly exits: ReadonlyArray<readonly [number, string]>;
}

const CONFIG = '--config FILE        the instance configuration (else VIGIL_CONFIG, else ./vigil.config.json)';
const USAGE_ERROR = [
  2,
  'usage error: an unknown command, subcommand or option, a missing or malformed argument',
] as const;

/** Every command of `vigil`, by name, in the order the overview lists them. */
export const COMMANDS: Readonly<Record<string, CommandHelp>> = {
  serve: {
    summary: 'start the instance: the HTTP API and the console',
    usage: ['vigil serve [--host H] [--port N] [--config FILE]'],
    details: `Starts the instance and runs until SIGTERM or SIGINT; SIGHUP re-reads the config's monitoring section.
The first line it prints says which config is in force, where the address came from and whether
loopback administration is on.

options:
  --host H             listen address, overriding server.host of the config (else VIGIL_HOST)
  --port N             listen port, overriding server.port of the config (else VIGIL_PORT)
  ${CONFIG}`,
    exits: [
      [0, 'stopped on SIGTERM or SIGINT'],
      [
        1,
        'refused to start: an invalid config, the store in use by another process, a start-up check (the message ' +
          'says what to do)',
      ],
      USAGE_ERROR,
      [70, 'stopped on a storage failure or an unexpected error while running'],
      [137, 'killed itself: the stop after a storage failure or an unexpected error did not finish in time'],
    ],
  },
  'api-token-generate': {
    summary: 'create a credential; prints its token once',
    usage: ['vigil api-token-generate <principal> <role> [--expires-at ISO] [--collector-id ID] [--config FILE]'],
    details: `Adds a credential to the registry (auth.credentialsFile of the config) and prints
{token, credential, fingerprint} once: only the token's SHA-256 is stored. A running instance picks
the new credential up without a restart.

  <principal>          the principal id: 1-128 characters, letters, digits, . _ @ -
  <role>               one of ${ROLES.join(', ')}

options:
  --expires-at ISO     the credential expires then (an ISO 8601 date-time)
  --collector-id ID    binds a collector-role credential to one collector
  ${CONFIG}`,
    exits: [
      [0, 'created; the token is printed'],
      [1, 'failed: an invalid config, a credential registry that is unsafe (mode) or unreadable'],
      [2, 'usage error: missing arguments, an unknown role or option, an invalid principal id or --expires-at'],
    ],
  },
  credential: {
    summary: 'list, disable or enable credentials',
    usage: [
      'vigil credential list [--config FILE]',
      'vigil credential disable <id> [--fingerprint F] [--config FILE]',
      'vigil credential enable <id> [--fingerprint F] [--config FILE]',
    ],
    details: `Lists the credentials of the registry (without their hashes, with the fingerprint that tells
rotations apart), or disables or enables one; a running instance picks the change up without a
restart and records it in the log.

options:
  --fingerprint F      which credential of <id>, when it has several (the fingerprint list prints)
  ${CONFIG}`,
    exits: [
      [0, 'listed, disabled or enabled'],
      [
        1,
        'failed: no such credential, several credentials of <id> and no --fingerprint, an unsafe registry, an ' +
          'invalid config',
      ],
      USAGE_ERROR,
    ],
  },
  replay: {
    summary: 'rebuild every read model from the log, or write them as of a record',
    usage: ['vigil replay [--until SEQ] [--config FILE]', 'vigil replay [--until SEQ] --out DIR [--config FILE]'],
    details: `Rebuilds every read model from record 1 and prints the counts and the rate; with --until, the
state as of record SEQ is shown, then the models are rebuilt to the head again. This rewrites the
stored read models: run it with the instance stopped (one process writes a store at a time).

With --out, nothing stored is touched, and it runs beside a serving instance: the log is read from
a read-only snapshot, folded into fresh models in memory, and the alerts, incidents and graph
(entities, relationships) as of SEQ (default: the head when it started) are written to DIR as
pretty-printed JSON, one file a model and summary.json, which is also printed.

options:
  --until SEQ          stop at record SEQ (a non-negative integer, at most the head)
  --out DIR            write the models as of SEQ into DIR (made mode 700; an existing DIR must be empty)
  ${CONFIG}`,
    exits: [
      [0, 'replayed; the summary is printed'],
      [
        1,
        'failed: the store in use by a running instance (without --out), SEQ outside the log, DIR not empty, ' +
          'an invalid config',
      ],
      USAGE_ERROR,
    ],
  },
  log: {
    summary: 'verify and export the log, prove it offline, cosign as a witness',
    usage: [
      'vigil log verify [--archives DIR] [--archive-keys FILE] [--config FILE]',
      'vigil log export [--from SEQ] [--to SEQ] [--raw] [--config FILE]',
      'vigil log public-key [--config FILE]',
      'vigil log quarantine-tail [--out DIR] [--reason TEXT] [--config FILE]',
      'vigil log rotate-key [--config FILE]',
      'vigil log verify --export FILE --checkpoint FILE --key VERIFIER [--rotations FILE]',
      'vigil log verify-consistency OLD NEW --key VERIFIER [--rotations FILE] [--proof FILE | --url URL]',
      'vigil log verify-inclusion RECORD CHECKPOINT --key VERIFIER [--rotations FILE] [--proof FILE | --url URL]',
      'vigil log witness-key NAME --out FILE',
      'vigil log cosign CHECKPOINT --key VERIFIER --witness-key FILE --state FILE [--proof FILE | --url URL]',
      'vigil log witness serve --key VERIFIER --witness-key FILE --state DIR [--listen HOST:PORT]',
    ],
    details: `verify               checks the hash chain, the Merkle tree and the signed checkpoints of the store
                       (from the retention cut); prints {ok, ...} naming the first bad record
  --archives DIR       also the archived segments in DIR: the whole history
  --archive-keys FILE  verifier keys of the nodes that wrote the archives, one a line (log public-key)
export                 the records as JSON lines on stdout (| head is fine: a closed pipe ends it with 0)
  --from SEQ --to SEQ  the range (default: from record 1 to the head)
  --raw                each record with its stored bytes
public-key             the verifier key of this instance's signed checkpoints (the current one)
quarantine-tail        moves the records past the last signed head (not written by a signing Vigil)
                       out of the store into a file, and records that in the log; the service stopped
  --out DIR            where the file goes (default: quarantine/ beside the store folder)
  --reason TEXT        why, recorded with it
rotate-key             replaces the embedded signer's key: a new key with a rotation note the old key
                       cosigns, the old key kept aside (<key>.retired-<time>), LogKeyRotated recorded in
                       the log; the service stopped (a separate signer: vigil signer rotate)
verify --export        offline, without a store: an export against a checkpoint and the log's key
                       (following the export's LogKeyRotated records to the keys that replaced it)
verify-consistency     offline: that checkpoint NEW extends checkpoint OLD
verify-inclusion       offline: that the exported record RECORD is in checkpoint CHECKPOINT
  --proof FILE         the proof (the API's JSON answer, or a list of base64 hashes)
  --url URL            fetch the proof from the instance (token in VIGIL_TOKEN), and the key rotations
  --rotations FILE     the log's key rotations: a JSON array of rotation notes, or the answer of
                       GET /api/v1/log/key-rotations; the key's chain accepts the keys they link to it
witness-key            creates a witness key in FILE (mode 600) and prints its verifier key
cosign                 as a witness: cosigns CHECKPOINT when it extends the one in --state (then kept there)
witness serve          a C2SP tlog-witness server (POST /add-checkpoint) that keeps, per log, the last
                       checkpoint it cosigned in --state DIR (0700) and cosigns only what extends it
  --key VERIFIER       the log's verifier key, or a file of them, one a line (log public-key)
  --witness-key FILE   the witness's key (witness-key made it; mode 600)
  --listen HOST:PORT   where it listens (default 127.0.0.1:4180); runs until SIGTERM or SIGINT

verify, export and public-key read the instance's store or key: ${CONFIG}
verify and export read a read-only snapshot of the store, beside a running instance (no lock is
taken): they cover the log up to its head when they started. GET /api/v1/log/verify (admin) runs
the same check inside the instance (docs/log.md).`,
    exits: [
      [0, 'verified (the log, the export or the proof); or done'],
      [
        1,
        'verification failed (a bad record, chain, checkpoint or proof: what is printed says which), ' +
          'or the operation failed (no store, no log key, a retention cut during an export, the proof could not ' +
          'be fetched, a witness that cannot start: its state in use, a key file others can read, the address taken)',
      ],
      [2, 'usage error; an input file that cannot be read, a malformed --key, a witness key file that exists'],
    ],
  },
  signer: {
    summary: 'run the head signer that holds the log signing key apart from the writer',
    usage: [
      'vigil signer key --out FILE',
      'vigil signer rotate --key OLD --out NEW --state DIR',
      'vigil signer serve --key FILE --state DIR --socket PATH',
    ],
    details: `The log's signing key signs the head of every commit (docs/log.md, "Signed heads"). Run apart from
vigil serve, as another user, it keeps the key out of reach of whatever can write the store: it signs
only heads that extend the last one it signed, and never rewinds a published checkpoint.

key                    creates a signing key in FILE (mode 600, refused if FILE exists); prints its verifier key
rotate                 a new key NEW (mode 600) for the log of key OLD, and the rotation note (signed by
                       NEW, cosigned by OLD) recorded in --state DIR; then restart serve with --key NEW:
                       the instance records the rotation in its log when it reconnects. An existing NEW
                       of the same log is never overwritten: the rotation to it is finished
serve                  answers the writer on the Unix socket PATH (mode 660: give the writer the socket's group)
  --key FILE           the signing key (default: $CREDENTIALS_DIRECTORY/log-signing.key, systemd's LoadCredential=)
  --state DIR          what it last signed and its journal (default: $STATE_DIRECTORY); 0700
  --socket PATH        the socket the instance's log.signer.socket names`,
    exits: [
      [0, 'the key was made or rotated; or the signer stopped on SIGTERM or SIGINT'],
      [
        1,
        'the key file is missing, readable by others or not a signer key; the state file or its rotations are ' +
          'unreadable',
      ],
      USAGE_ERROR,
    ],
  },
  openapi: {
    summary: 'print the OpenAPI document',
    usage: ['vigil openapi'],
    details: 'Prints the OpenAPI 3.1 document of /api/v1 (docs/openapi.json is this output: npm run openapi).',
    exits: [[0, 'printed'], USAGE_ERROR],
  },
  rules: {
    summary: 'import a Sigma rules directory over the API',
    usage: ['vigil rules import DIR|FILE [--url URL] [--batch-bytes N]'],
    details: `Imports every *.yml / *.yaml under DIR through POST /api/v1/rules/bulk of a running instance. The
token is read from VIGIL_TOKEN (a rule_admin or admin credential), never from the command line.
Prints a progress line on stderr and a summary on stdout: imported, then what the detection plan
says of the imported rules (ready, degraded, blocked, quarantined, disabled, byProblem,
byMissingSource: the plan's own counts, read from GET /api/v1/detection-plan), and invalid (file,
line and reason).

options:
  --url URL            the instance (default http://127.0.0.1:4173)
  --batch-bytes N      the largest request body (default 524288; keep it under the server's limits.bodyBytes)`,
    exits: [
      [0, 'every file imported (rules waiting for a source count as imported)'],
      [1, 'a file was refused (the summary lists it), or the server answered an error'],
      [2, 'usage error; VIGIL_TOKEN unset, DIR unreadable or holding no rule file'],
    ],
  },
  search: {
    summary: 'hunt: a KQL query with pipes over the stored evidence of a running instance',
    usage: [
      "vigil search 'QUERY' [--since T] [--until T] [--limit N] [--all [--max-pages N]] [--json] [--url URL]",
      'vigil search --proof ID --out DIR [--url URL]',
    ],
    details: `Runs QUERY (docs/hunting.md) through POST /api/v1/search of a running instance; every page is an
audited search. The token is read from VIGIL_TOKEN (any role with events:read), never from the command
line. Events print one a line (time, class, activity, outcome, entity keys, id), rows as a tab-separated
table; --json prints each page's whole answer as one JSON line. A line on stderr says the search's id,
what it scanned and whether a bound (limits.searchSeconds, limits.searchEvents) stopped it.

--proof ID writes what search ID cited into DIR: checkpoint.txt, and per record <seq>.record and
<seq>.proof.json, for: vigil log verify-inclusion DIR/<seq>.record DIR/checkpoint.txt --key KEY
--proof DIR/<seq>.proof.json

options:
  --since T, --until T an ISO 8601 time, or a span ago: 30m, 24h, 7d (default: the last 24 hours)
  --limit N            events a page answers, 1..1000 (default 100)
  --all                follow the pages (at most --max-pages, default 100)
  --url URL            the instance (default http://127.0.0.1:4173)`,
    exits: [
      [0, 'answered (complete or not: the stderr line says)'],
      [1, 'the server answered an error (a bad query names its position) or cannot be reached'],
      [2, 'usage error; VIGIL_TOKEN unset'],
    ],
  },
  collector: {
    summary: 'the collector agent on a host: enroll, run, status',
    usage: [
      'vigil collector enroll --server URL --collector-id ID --token-file F [--state-dir D | --config F]',
      'vigil collector run --config F',
      'vigil collector status --config F | --state-dir D',
    ],
    details: `enroll                 creates the agent's key in the state directory and enrolls it with a
                       single-use token (vigil collector-token create), read from --token-file (mode 600)
run                    ships the configured files and journal until SIGTERM or SIGINT; the bearer token is
                       bearerTokenFile of the agent config, else VIGIL_COLLECTOR_TOKEN
status                 the agent's enrollment, last acknowledged sequence and backlog (never creates anything)

options:
  --config F           the agent config (not the instance's; docs/collector-agent.md); gives --server,
                       --collector-id and --state-dir when they are not given
  --server URL         the instance
  --collector-id ID    the id the token was issued for
  --token-file F       the enrollment token
  --state-dir D        the agent's state directory`,
    exits: [
      [0, 'enrolled; run stopped on SIGTERM or SIGINT; status printed'],
      [
        1,
        'failed: enrollment refused or the instance unreachable (the message says what to do), ' +
          'the state directory in use by another agent or missing, an invalid agent config, no bearer token, ' +
          'a token file readable by others',
      ],
      USAGE_ERROR,
    ],
  },
  'collector-token': {
    summary: 'a single-use enrollment token for a collector',
    usage: ['vigil collector-token create <collector_id> [--expires-in 1h] [--config FILE]'],
    details: `Issues a single-use enrollment token for the collector <collector_id> and prints it once. It writes
through the store, so the instance must be stopped; with it running, use POST
/api/v1/collector/enrollment-tokens instead (the only way on a JetStream cluster).

options:
  --expires-in T       the token's lifetime, 1m to 7d, such as 15m, 1h, 2d (default 1h)
  ${CONFIG}`,
    exits: [
      [0, 'issued; the token is printed'],
      [1, 'failed: the store in use by a running instance, an invalid config'],
      [2, 'usage error; an invalid collector id or --expires-in, storage.backend "jetstream"'],
    ],
  },
  'setup-authority': {
    summary: 'the setup authority: serve, accounts, its systemd unit',
    usage: [
      'vigil setup-authority serve --config FILE',
      'vigil setup-authority account add <tenant> <user> --display-name NAME --email ADDRESS --config FILE',
      'vigil setup-authority account list --config FILE',
      'vigil setup-authority account disable|enable <tenant> <user> --config FILE',
      'vigil setup-authority unit --config FILE [--vigil-exec PATH]',
    ],
    details: `serve                  runs the setup authority (provisioning, heartbeats, recovery) until SIGTERM
                       or SIGINT
account add            creates an account and prints its token once
account list           the accounts, with their token fingerprints
account disable|enable turns an account off or on
unit                   prints the authority's sandboxed systemd unit for this config

options:
  --config FILE        the authority's config (docs/setup-protocol.md), not the instance's
  --vigil-exec PATH    where vigil is installed (default /usr/local/bin/vigil)`,
    exits: [
      [0, 'done; serve stopped on SIGTERM or SIGINT'],
      [1, 'failed: an invalid or unreadable config, an account that exists (add) or does not (disable, enable)'],
      [2, 'usage error; an invalid account, unit without --config'],
      [70, 'serve stopped on a storage failure'],
    ],
  },
  install: {
    summary: 'the installer, run from an orchestration host',
    usage: [
      'vigil install --setup-url URL --token-file FILE|- --work-dir DIR',
      '    (--inventory FILE | --tailscale-tailnet NAME --tailscale-api-key-file FILE [--tailscale-api-url URL])',
      '    (--transport ssh --ssh-key FILE [--known-hosts FILE] [--trust-on-first-use] | --transport directory:DIR)',
      '    [--yes] [--service-manager systemd|none] [--vigil-exec PATH] [--collector-file PATH]... [--recovery]',
      '    [--central-listen HOST:PORT] [--snapshot-interval SECONDS] [--wait-seconds SECONDS]',
      'vigil install --check ...the same options (no token needed)',
      'vigil install --resume ...the same options without --token-file',
      'vigil install --abandon --work-dir DIR --reason TEXT [--setup-url URL]',
    ],
    details: `Checks the VMs and the authority first (--check: only that; no claim, the token is not spent),
claims a setup session with the token (from FILE, or stdin with -), shows the plan and asks before it
changes anything (--yes: do not ask), stages every VM's files and switches them into place once all
staged, starts the services, and waits for the first snapshot. Its state is kept in
DIR/install-state.json: --resume continues the same session, --abandon gives it up at the authority.
See docs/installer.md for every option and a three-VM walkthrough.`,
    exits: [
      [0, 'installed (the summary is printed); --check: every check passed; --abandon: abandoned'],
      [
        1,
        'install stopped: a check failed, the token refused, the plan declined, a transport or service failure ' +
          '(the state is kept for --resume or --abandon)',
      ],
      [
        2,
        'usage error; a missing or contradictory option, a token file without a setup token, the token on stdin ' +
          'without --yes',
      ],
      [75, 'stopped in a state --resume continues: services to start (--service-manager none), no snapshot yet'],
    ],
  },
  help: {
    summary: "this overview, or one command's options and exit status",
    usage: ['vigil help [<command>]'],
    details: 'The same as vigil --help, or vigil <command> --help.',
    exits: [
      [0, 'printed'],
      [2, 'an unknown command'],
    ],
  },
};

/** Whether `name` is a command of `vigil`. */
export const isCommand = (name: string): boolean => Object.hasOwn(COMMANDS, name);

/** The synopsis of `command` as printed with a usage error. */
export function usageOf(command: string): string {
  const [first, ...more] = COMMANDS[command]!.usage;
  const lines = [`usage: ${first}`, ...more.map((l) => `       ${l}`)];
  return `${lines.join('\n')}\n(vigil help ${command}: the options and exit status)`;
}

/** `text` in lines of at most `columns` characters (a longer word stays whole), each after the first indented. */
function wrap(text: string, columns: number, indent: number): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && indent + line.length + 1 + word.length > columns) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  lines.push(line);
  return lines.join(`\n${' '.repeat(indent)}`);
}

/** What `vigil help <command>` prints. */
export function helpOf(command: string): string {
  const c = COMMANDS[command]!;
  const [first, ...more] = c.usage;
  const width = Math.max(...c.exits.map(([code]) => String(code).length));
  return [
    `usage: ${first}`,
    ...more.map((l) => `       ${l}`),
    '',
    c.details,
    '',
    'exit status:',
    ...c.exits.map(([code, meaning]) => `  ${String(code).padEnd(width)}  ${wrap(meaning, 96, width + 4)}`),
  ].join('\n');
}

/** What `vigil help` and `vigil --help` print. */
export function overview(): string {
  const names = Object.keys(COMMANDS);
  const width = Math.max(...names.map((n) => n.length));
  return [
    'usage: vigil <command> [options]',
    '',
    'commands:',
    ...names.map((n) => `  ${n.padEnd(width)}  ${COMMANDS[n]!.summary}`),
    '',
    "vigil help <command> (or vigil <command> --help) prints a command's options and exit status.",
    'The commands that read the instance take --config FILE (else VIGIL_CONFIG, else ./vigil.config.json).',
    '',
    'exit status: 0 done, 1 the operation failed (the message on stderr says why), 2 usage error;',
    'serve and setup-authority serve exit 70 on a storage failure (vigil help serve).',
  ].join('\n');
}

/** A usage error of `command` (the overview's, without one): `problem`, then the synopsis; exit status 2. */
export function usageError(command: string | undefined, problem: string): CliError {
  return new CliError(`${problem}\n${command === undefined ? overview() : usageOf(command)}`, 2);
}

/** Node's parseArgs error, said shortly: "unknown option --bogus" rather than its advice about positionals. */
function parseProblem(err: Error & { code?: string }): string {
  const unknown = /^Unknown option '([^']+)'/.exec(err.message);
  if (unknown) return `unknown option ${unknown[1]}`;
  const first = err.message.split('\n')[0]!.replace(/\.$/, '');
  return first.charAt(0).toLowerCase() + first.slice(1);
}

/**
 * parseArgs for `command`: its options strictly, any positionals; an unknown option or a missing value is a usage
 * error that names it (after `label`, such as `log verify`) and prints the command's synopsis.
 */
export function parseCommandArgs<O extends NonNullable<ParseArgsConfig['options']>>(
  command: string,
  args: readonly string[],
  options: O,
  label = command,
) {
  try {
    return parseArgs({ args: [...args], options, allowPositionals: true, strict: true });
  } catch (err) {
    const e = err as Error & { code?: string };
    if (e.code?.startsWith('ERR_PARSE_ARGS_')) throw usageError(command, `${label}: ${parseProblem(e)}`);
    throw err;
  }
}

/** Throws a usage error when `positionals` holds more than `max` arguments. */
export function noMoreThan(command: string, positionals: readonly string[], max: number): void {
  if (positionals.length > max) throw usageError(command, `${command}: unexpected argument ${positionals[max]}`);
}
