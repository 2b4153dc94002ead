import { closeSync, fstatSync, openSync, readSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** Where a tailed file stands. */
export interface FileCursor {
  readonly ino: number;
  readonly offset: number;
}

/** One complete line, where it started and where the next one starts. */
export interface TailedLine {
  readonly line: string;
  readonly ino: number;
  readonly offset: number;
  readonly next: number;
}

const CHUNK = 256 * 1024;
const MAX_LINE = 64 * 1024;

function inodeOf(path: string): number | undefined {
  try {
    return statSync(path).ino;
  } catch {
    return undefined;
  }
}

/** A rotated predecessor of `path` (same directory, name starting with its base name) with inode `ino`. */
function findRotated(path: string, ino: number): string | undefined {
  const base = basename(path);
  try {
    return readdirSync(dirname(path))
      .filter((n) => n.startsWith(base) && n !== base)
      .map((n) => join(dirname(path), n))
      .find((p) => inodeOf(p) === ino);
  } catch {
    return undefined;
  }
}

/**
 * Follows one syslog-format file across rotation (rename and create, or copytruncate): when the
 * path names a new inode, the old file is read to its end first; a file shorter than the offset
 * was truncated and is read from 0. `poll()` returns the complete lines written since.
 */
export class FileTail {
  private fd: number | undefined;
  private ino = 0;
  private offset = 0;
  private partial = Buffer.alloc(0);

  constructor(
    readonly path: string,
    cursor: FileCursor | undefined,
  ) {
    if (cursor) {
      const current = inodeOf(path);
      const source = current === cursor.ino ? path : findRotated(path, cursor.ino);
      if (source) this.open(source, cursor.offset);
    }
  }

  /** Where the next line starts (lines not yet complete are read again after a restart). */
  cursor(): FileCursor | undefined {
    return this.fd === undefined ? undefined : { ino: this.ino, offset: this.offset };
  }

  /** New complete lines, following rotation. Never throws for a missing file. */
  poll(maxLines: number): TailedLine[] {
    const out: TailedLine[] = [];
    if (this.fd === undefined && !this.tryOpen(this.path, 0)) return out;
    this.drain(out, maxLines);
    if (out.length >= maxLines) return out;
    const now = inodeOf(this.path);
    if (now !== undefined && now !== this.ino) {
      this.close();
      if (this.tryOpen(this.path, 0)) this.drain(out, maxLines);
    } else if (this.fd !== undefined && fstatSync(this.fd).size < this.offset) {
      this.offset = 0;
      this.partial = Buffer.alloc(0);
      this.drain(out, maxLines);
    }
    return out;
  }

  /** Closes the file. */
  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    this.partial = Buffer.alloc(0);
  }

  private tryOpen(path: string, offset: number): boolean {
    try {
      this.open(path, offset);
      return true;
    } catch {
      return false;
    }
  }

  private open(path: string, offset: number): void {
    this.fd = openSync(path, 'r');
    this.ino = fstatSync(this.fd).ino;
    this.offset = offset;
    this.partial = Buffer.alloc(0);
  }

  private drain(out: TailedLine[], maxLines: number): void {
    const buf = Buffer.alloc(CHUNK);
    while (this.fd !== undefined && out.length < maxLines) {
      // Complete lines already buffered come first; read more only when none is left.
      if (this.partial.indexOf(10) < 0) {
        const n = readSync(this.fd, buf, 0, CHUNK, this.offset + this.partial.length);
        if (n === 0) return;
        this.partial = Buffer.concat([this.partial, buf.subarray(0, n)]);
      }
      this.takeLines(out, maxLines);
    }
  }

  private takeLines(out: TailedLine[], maxLines: number): void {
    let data = this.partial;
    let start = 0;
    for (let nl = data.indexOf(10); nl >= 0 && out.length < maxLines; nl = data.indexOf(10, start)) {
      const line = data
        .subarray(start, Math.min(nl, start + MAX_LINE))
        .toString('utf8')
        .replace(/\r$/, '');
      out.push({ line, ino: this.ino, offset: this.offset, next: this.offset + nl + 1 - start });
      this.offset += nl + 1 - start;
      start = nl + 1;
    }
    data = data.subarray(start);
    if (data.length > MAX_LINE && data.indexOf(10) < 0) {
      // A runaway line without a newline is cut, so memory stays bounded.
      out.push({
        line: data.subarray(0, MAX_LINE).toString('utf8'),
        ino: this.ino,
        offset: this.offset,
        next: this.offset + data.length,
      });
      this.offset += data.length;
      data = Buffer.alloc(0);
    }
    this.partial = Buffer.from(data);
  }
}
