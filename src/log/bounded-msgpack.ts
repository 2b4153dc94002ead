import { MAX_JSON_DEPTH, TRUNCATED } from '../kernel/json/depth.js';

/**
 * An iterative MessagePack decoder for the records msgpackr cannot decode because they nest deeper
 * than its recursion allows (a record written before the edge bounded nesting, or by another
 * tool). It reads the whole format the log writes (plain maps, arrays, strings, binaries, numbers,
 * extensions as raw bytes) and replaces every container past `maxDepth` with the TRUNCATED marker,
 * consuming its bytes without building it. Maps become plain objects with string keys.
 */

type Container =
  | { kind: 'array'; value: unknown[]; left: number; skip: boolean }
  | { kind: 'map'; value: Record<string, unknown>; left: number; key: string | undefined; skip: boolean };

/** Thrown for bytes that are not MessagePack. */
export class MsgpackFormatError extends Error {
  override readonly name = 'MsgpackFormatError';
}

const utf8 = new TextDecoder('utf-8');

export function decodeBounded(bytes: Uint8Array, maxDepth = MAX_JSON_DEPTH): unknown {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let pos = 0;
  const stack: Container[] = [];
  let result: unknown;
  let done = false;

  const need = (n: number): void => {
    if (pos + n > bytes.length) throw new MsgpackFormatError(`truncated at byte ${pos}`);
  };
  const u8 = (): number => {
    need(1);
    return bytes[pos++]!;
  };
  const u16 = (): number => {
    need(2);
    const v = view.getUint16(pos);
    pos += 2;
    return v;
  };
  const u32 = (): number => {
    need(4);
    const v = view.getUint32(pos);
    pos += 4;
    return v;
  };
  const str = (n: number): string => {
    need(n);
    const s = utf8.decode(bytes.subarray(pos, pos + n));
    pos += n;
    return s;
  };
  const bin = (n: number): Uint8Array => {
    need(n);
    const b = bytes.slice(pos, pos + n);
    pos += n;
    return b;
  };

  /** Places a finished value in its parent, closing every container it completes. */
  const place = (value: unknown): void => {
    for (;;) {
      const top = stack[stack.length - 1];
      if (!top) {
        result = value;
        done = true;
        return;
      }
      if (top.kind === 'array') {
        if (!top.skip) top.value.push(value);
      } else if (top.key === undefined) {
        top.key = typeof value === 'string' ? value : String(value);
        return;
      } else {
        if (!top.skip)
          Object.defineProperty(top.value, top.key, { value, enumerable: true, writable: true, configurable: true });
        top.key = undefined;
      }
      if (--top.left > 0) return;
      stack.pop();
      value = top.skip && !stack[stack.length - 1]?.skip ? TRUNCATED : top.value;
    }
  };

  /** Opens a container of `n` entries; an empty one is a finished value at once. */
  const open = (kind: 'array' | 'map', n: number): void => {
    const skip = stack.length >= maxDepth || (stack[stack.length - 1]?.skip ?? false);
    if (n === 0) return place(skip ? TRUNCATED : kind === 'array' ? [] : {});
    stack.push(
      kind === 'array' ? { kind, value: [], left: n, skip } : { kind, value: {}, left: n, key: undefined, skip },
    );
  };

  while (!done) {
    const b = u8();
    if (b <= 0x7f) place(b);
    else if (b <= 0x8f) open('map', b & 0x0f);
    else if (b <= 0x9f) open('array', b & 0x0f);
    else if (b <= 0xbf) place(str(b & 0x1f));
    else if (b >= 0xe0) place(b - 0x100);
    else {
      switch (b) {
        case 0xc0:
          place(null);
          break;
        case 0xc2:
          place(false);
          break;
        case 0xc3:
          place(true);
          break;
        case 0xc4:
          place(bin(u8()));
          break;
        case 0xc5:
          place(bin(u16()));
          break;
        case 0xc6:
          place(bin(u32()));
          break;
        case 0xc7: {
          const n = u8();
          u8();
          place(bin(n));
          break;
        }
        case 0xc8: {
          const n = u16();
          u8();
          place(bin(n));
          break;
        }
        case 0xc9: {
          const n = u32();
          u8();
          place(bin(n));
          break;
        }
        case 0xca:
          need(4);
          place(view.getFloat32(pos));
          pos += 4;
          break;
        case 0xcb:
          need(8);
          place(view.getFloat64(pos));
          pos += 8;
          break;
        case 0xcc:
          place(u8());
          break;
        case 0xcd:
          place(u16());
          break;
        case 0xce:
          place(u32());
          break;
        case 0xcf: {
          need(8);
          const v = view.getBigUint64(pos);
          pos += 8;
          place(v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v);
          break;
        }
        case 0xd0:
          need(1);
          place(view.getInt8(pos));
          pos += 1;
          break;
        case 0xd1:
          need(2);
          place(view.getInt16(pos));
          pos += 2;
          break;
        case 0xd2:
          need(4);
          place(view.getInt32(pos));
          pos += 4;
          break;
        case 0xd3: {
          need(8);
          const v = view.getBigInt64(pos);
          pos += 8;
          place(v >= -BigInt(Number.MAX_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v);
          break;
        }
        case 0xd4:
          u8();
          place(bin(1));
          break;
        case 0xd5:
          u8();
          place(bin(2));
          break;
        case 0xd6:
          u8();
          place(bin(4));
          break;
        case 0xd7:
          u8();
          place(bin(8));
          break;
        case 0xd8:
          u8();
          place(bin(16));
          break;
        case 0xd9:
          place(str(u8()));
          break;
        case 0xda:
          place(str(u16()));
          break;
        case 0xdb:
          place(str(u32()));
          break;
        case 0xdc:
          open('array', u16());
          break;
        case 0xdd:
          open('array', u32());
          break;
        case 0xde:
          open('map', u16());
          break;
        case 0xdf:
          open('map', u32());
          break;
        default:
          throw new MsgpackFormatError(`unknown type byte 0x${b.toString(16)} at byte ${pos - 1}`);
      }
    }
  }
  return result;
}
