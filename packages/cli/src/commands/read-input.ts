/**
 * The one way the CLI reads an input a flag names: a regular file, or standard input when the user passes `-`.
 * A device, FIFO, socket or directory is refused before it is opened for reading (`/dev/zero` never ends, a FIFO
 * without a writer never answers); the byte limit counts the bytes actually read, so a file that grows while it is
 * read, or a stream, stops at the limit. Symbolic links are followed to a bounded depth.
 */
import { constants, type Stats } from "node:fs";
import { lstat, open, readlink } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { InputError } from "./args.js";
import type { InputStream } from "./registry.js";

/** What names standard input where a flag takes a file. */
export const STDIN_PATH = "-";

/** Links followed before a path is called a loop (Linux's own limit, MAXSYMLINKS). */
export const MAX_SYMLINKS = 40;

const READ_CHUNK_BYTES = 64 * 1024;

/** `O_NONBLOCK` where the platform has it: a FIFO swapped in after the check must not block the open. */
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

export interface InputRead {
  /** The flag as the user typed it (`--config`), or `stdin`. */
  field: string;
  /** The path, `-` for standard input. */
  path: string;
  maxBytes: number;
}

export function tooLarge(field: string, at: string | undefined, bytes: number, maxBytes: number): InputError {
  const mib = maxBytes >= 2 ** 20 ? ` (${(maxBytes / 2 ** 20).toFixed(0)} MiB)` : "";
  return new InputError(field, at, `holds more than ${maxBytes} bytes${mib}, the most that is read`, {
    maxBytes,
    bytesSeen: bytes,
  });
}

/** The bytes of `read.path` (or of `stdin` for `-`: a caller without one never passes `-`), at most `read.maxBytes`. */
export async function readInputBytes(read: InputRead, stdin?: InputStream): Promise<Buffer> {
  if (read.path === STDIN_PATH) {
    if (stdin === undefined) throw new InputError(read.field, read.path, "cannot be standard input here");
    return readStream(stdin, read.maxBytes, read.field);
  }
  const target = await resolveLinks(read.field, read.path);
  refuseNotRegular(read.field, read.path, target);
  return readRegularFile(read.field, read.path, target.path, read.maxBytes);
}

/** Reads a stream to its end, refusing it as soon as it passes the limit. */
export async function readStream(stream: InputStream, maxBytes: number, field = "stdin"): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of stream) {
    const buf = typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer);
    total += buf.length;
    if (total > maxBytes) throw tooLarge(field, field === "stdin" ? undefined : STDIN_PATH, total, maxBytes);
    chunks.push(buf);
  }
  return Buffer.concat(chunks);
}

interface Resolved {
  path: string;
  stats: Stats;
  /** Links followed to get there. */
  links: number;
}

/** Follows symbolic links one at a time (lstat, never open) up to MAX_SYMLINKS. */
async function resolveLinks(field: string, path: string): Promise<Resolved> {
  let at = path;
  for (let links = 0; links <= MAX_SYMLINKS; links++) {
    const stats = await lstat(at).catch((error: unknown) => {
      throw cannotRead(field, path, error);
    });
    if (!stats.isSymbolicLink()) return { path: at, stats, links };
    const target = await readlink(at).catch((error: unknown) => {
      throw cannotRead(field, path, error);
    });
    at = resolve(dirname(at), target);
  }
  throw new InputError(field, path, `is a symbolic link loop (more than ${MAX_SYMLINKS} links followed)`, {
    errno: "ELOOP",
    maxLinks: MAX_SYMLINKS,
  });
}

/** What a non-regular file is, in words and as a stable name for `params.fileKind`. */
export function fileKindOf(stats: Stats): { kind: string; words: string } | null {
  if (stats.isFile()) return null;
  if (stats.isDirectory()) return { kind: "directory", words: "a directory" };
  if (stats.isCharacterDevice()) return { kind: "character-device", words: "a character device" };
  if (stats.isBlockDevice()) return { kind: "block-device", words: "a block device" };
  if (stats.isFIFO()) return { kind: "fifo", words: "a FIFO (named pipe)" };
  if (stats.isSocket()) return { kind: "socket", words: "a socket" };
  return { kind: "other", words: "not a regular file" };
}

function refuseNotRegular(field: string, path: string, target: Resolved): void {
  const kind = fileKindOf(target.stats);
  if (kind === null) return;
  const via = target.links > 0 ? ` (a link to ${target.path})` : "";
  throw new InputError(
    field,
    path,
    `is ${kind.words}${via}, not a regular file: dsv4-kv reads regular files, or standard input for -`,
    { fileKind: kind.kind, ...(target.links > 0 ? { resolvedPath: target.path } : {}) },
  );
}

async function readRegularFile(field: string, path: string, target: string, maxBytes: number): Promise<Buffer> {
  const handle = await open(target, OPEN_FLAGS).catch((error: unknown) => {
    throw cannotRead(field, path, error);
  });
  try {
    // the path may have been replaced between the check and the open: the open file decides
    const stats = await handle.stat();
    refuseNotRegular(field, path, { path: target, stats, links: target === path ? 0 : 1 });
    if (stats.size > maxBytes) throw tooLarge(field, path, stats.size, maxBytes); // before reading any of it
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const buf = Buffer.allocUnsafe(Math.min(READ_CHUNK_BYTES, maxBytes + 1 - total));
      const { bytesRead } = await handle.read(buf, 0, buf.length, null);
      if (bytesRead === 0) return Buffer.concat(chunks, total);
      total += bytesRead;
      if (total > maxBytes) throw tooLarge(field, path, total, maxBytes);
      chunks.push(bytesRead === buf.length ? buf : buf.subarray(0, bytesRead));
    }
  } catch (error) {
    if (InputError.isInstance(error)) throw error;
    throw cannotRead(field, path, error);
  } finally {
    await handle.close();
  }
}

function cannotRead(field: string, path: string, error: unknown): InputError {
  if (InputError.isInstance(error)) return error as InputError;
  const code = (error as NodeJS.ErrnoException).code ?? "unknown error";
  const rule =
    code === "ELOOP"
      ? `is a symbolic link loop (a folder on its path links back; more than ${MAX_SYMLINKS} links)`
      : `cannot read the file (${code})`;
  return new InputError(field, path, rule, { errno: code });
}
