import * as v from 'valibot';

const PathText = v.pipe(v.string(), v.minLength(1), v.maxLength(4096));
const Seconds = (min: number, max: number, fallback: number) =>
  v.optional(v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max)), fallback);
const HttpUrl = v.pipe(v.string(), v.maxLength(2048), v.url(), v.regex(/^https?:\/\//, 'expected an http(s) URL'));

/** SMTP delivery of recovery e-mails (nodemailer); the password is read from an owner-only file. */
export const EmailSchema = v.strictObject({
  from: v.pipe(v.string(), v.maxLength(320), v.email()),
  smtp: v.strictObject({
    host: v.pipe(v.string(), v.minLength(1), v.maxLength(255)),
    port: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(65535)), 587),
    /** Implicit TLS (port 465); otherwise STARTTLS is used when the server offers it. */
    secure: v.optional(v.boolean(), false),
    requireTLS: v.optional(v.boolean(), false),
    user: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(320))),
    passwordFile: v.optional(PathText),
  }),
});

/** The setup authority's configuration (`vigil setup-authority serve --config F`). */
export const AuthorityConfigSchema = v.strictObject({
  server: v.optional(
    v.strictObject({
      host: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(255)), '127.0.0.1'),
      port: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(65535)), 4174),
      /** The URL browsers and installers use (origin checks, cookies, links); defaults to the listening address. */
      publicUrl: v.optional(HttpUrl),
    }),
    {},
  ),
  storage: v.optional(v.strictObject({ path: v.optional(PathText, 'data/authority/store') }), {}),
  accounts: v.optional(v.strictObject({ file: v.optional(PathText, 'data/authority-secrets/accounts.json') }), {}),
  sessions: v.optional(
    v.strictObject({
      setupTokenTtlSeconds: Seconds(60, 86_400, 900),
      sessionTokenTtlSeconds: Seconds(300, 7 * 86_400, 86_400),
      browserSessionTtlSeconds: Seconds(300, 7 * 86_400, 8 * 3600),
      enrollmentTokenTtlSeconds: Seconds(300, 30 * 86_400, 86_400),
    }),
    {},
  ),
  recovery: v.optional(
    v.strictObject({
      keyFile: v.optional(PathText, 'data/authority-secrets/recovery.key'),
      heartbeatTimeoutSeconds: Seconds(1, 30 * 86_400, 900),
      checkIntervalSeconds: Seconds(1, 3600, 30),
    }),
    {},
  ),
  email: v.optional(EmailSchema),
  limits: v.optional(
    v.strictObject({
      bodyBytes: v.optional(
        v.pipe(v.number(), v.integer(), v.minValue(16_384), v.maxValue(4 * 1024 * 1024)),
        256 * 1024,
      ),
    }),
    {},
  ),
});

/** The validated authority configuration, defaults filled in. */
export type AuthorityConfig = v.InferOutput<typeof AuthorityConfigSchema>;
