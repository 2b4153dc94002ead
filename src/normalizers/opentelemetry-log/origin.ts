import { decodeKeyValues } from './any-value.js';
import { type Decoded, at, fail, isAbsent, isObject, ok } from './decoded.js';
import { entityKey, shortString } from './entity-keys.js';
import { readString } from './fields.js';

/** The resource and instrumentation scope a LogRecord was emitted under, decoded once per group. */
export interface LogOrigin {
  /** Resource attributes as `{key: value}` (OTLP keys such as `host.name` stay one key). */
  readonly resource: Readonly<Record<string, unknown>>;
  /** `{name, version, attributes}` of the InstrumentationScope, only the parts that are set. */
  readonly scope: Readonly<Record<string, unknown>> | undefined;
  /** `source.instance`: resource `host.name`, else `service.name`, else `-`. */
  readonly instance: string;
  /** `host:` and `service:` keys from the resource. */
  readonly entityKeys: readonly string[];
  /** `{name, version?}` from `service.name` / `service.version`. */
  readonly service: Readonly<Record<string, unknown>> | undefined;
}

/** Decodes an OTLP Resource (`{attributes, droppedAttributesCount}`) into its attribute object. */
export function decodeResource(resource: unknown, path: string): Decoded<Record<string, unknown>> {
  if (isAbsent(resource)) return ok({});
  if (!isObject(resource)) return fail(path, 'expected a Resource object');
  return decodeKeyValues(resource.attributes, at(path, 'attributes'));
}

/** Decodes an InstrumentationScope into `{name, version, attributes}`, or undefined when absent or empty. */
export function decodeScope(scope: unknown, path: string): Decoded<Record<string, unknown> | undefined> {
  if (isAbsent(scope)) return ok(undefined);
  if (!isObject(scope)) return fail(path, 'expected an InstrumentationScope object');
  const name = readString(scope.name, at(path, 'name'));
  if (!name.ok) return name;
  const version = readString(scope.version, at(path, 'version'));
  if (!version.ok) return version;
  const attributes = decodeKeyValues(scope.attributes, at(path, 'attributes'));
  if (!attributes.ok) return attributes;
  const out: Record<string, unknown> = {};
  if (name.value) out.name = name.value;
  if (version.value) out.version = version.value;
  if (Object.keys(attributes.value).length > 0) out.attributes = attributes.value;
  return ok(Object.keys(out).length > 0 ? out : undefined);
}

/** What every event under one resource and scope shares. */
export function logOrigin(resource: Record<string, unknown>, scope: Record<string, unknown> | undefined): LogOrigin {
  const host = resource['host.name'];
  const serviceName = resource['service.name'];
  const serviceVersion = resource['service.version'];
  const service =
    typeof serviceName === 'string' && serviceName !== ''
      ? {
          name: serviceName,
          ...(typeof serviceVersion === 'string' && serviceVersion !== '' ? { version: serviceVersion } : {}),
        }
      : undefined;
  return {
    resource,
    scope,
    instance: shortString(host) ?? shortString(serviceName) ?? '-',
    entityKeys: [entityKey('host', host), entityKey('service', serviceName)].filter((k) => k !== undefined),
    service,
  };
}
