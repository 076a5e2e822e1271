/**
 * What every command whose work grows with its input shares (prove residency, simulate residency, online-mtp,
 * compress): the estimate line it prints before it starts, its progress with an ETA on stderr (a rewritten line on
 * a terminal, plain lines at a steady rate through a pipe or into a log file), `--quiet`, and `--time-limit`, which
 * ends the run with a partial result marked as such.
 */
import { getHeapStatistics } from "node:v8";
import type { FlagSpec } from "./flags.js";
import type { OutputStream } from "./registry.js";

/** A terminal's progress line is rewritten at most this often. */
export const TTY_PROGRESS_MS = 500;
/** Through a pipe or into a file, one plain line this often: a log shows the run is alive without filling up. */
export const PIPE_PROGRESS_MS = 2000;

/** The exit code of a run stopped at --time-limit before it found a failure (its result is partial). */
export const EXIT_PARTIAL = 3;

export const QUIET_FLAG = {
  type: "bool",
  help: "print no estimate and no progress on stderr",
} as const satisfies FlagSpec;

/** The --time-limit default of every long command: ten minutes, past the documented examples, short of a CI job. */
export const DEFAULT_TIME_LIMIT_SECONDS = 600;

/** Seven days: the longest --time-limit (a typo of minutes as seconds still ends). */
export const MAX_TIME_LIMIT_SECONDS = 7 * 86_400;

/** `--time-limit SECONDS` with the command's default. */
export function timeLimitFlag(defaultSeconds: number) {
  return {
    type: "number",
    min: 0,
    minExclusive: true,
    max: MAX_TIME_LIMIT_SECONDS,
    arg: "SECONDS",
    default: defaultSeconds,
    help: "stop after this many seconds with a partial result, marked as such (exit 3 when nothing failed so far)",
  } as const satisfies FlagSpec;
}

export function formatDuration(s: number): string {
  if (s < 60) return `${Math.round(s)} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(Math.round(s % 60)).padStart(2, "0")} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, "0")} min`;
}

/** `12/200 steps (6.0%), 3 s elapsed, ETA 47 s` for a progress line. */
export function formatProgress(done: number, total: number, elapsedSeconds: number, unit = "steps"): string {
  const pct = total > 0 ? (100 * done) / total : 100;
  const eta = done > 0 ? formatDuration((elapsedSeconds * (total - done)) / done) : "unknown";
  return `${done}/${total} ${unit} (${pct.toFixed(1)}%), ${formatDuration(elapsedSeconds)} elapsed, ETA ${eta}`;
}

/** Thousands separated, for estimates (`1,315,070`). */
export const count = (n: number): string => n.toLocaleString("en-US");

export interface ProgressOptions {
  /** The command (`simulate compress`): each line starts with it. */
  label: string;
  /** What `done` counts (`steps`, `batches`, `prefixes planned`). */
  unit?: string;
  quiet?: boolean;
  now?: () => number;
  /** Interval between lines; default TTY_PROGRESS_MS on a terminal, PIPE_PROGRESS_MS otherwise. */
  everyMs?: number;
}

/** A run's stderr: the estimate line, then progress with an ETA; nothing with `quiet`. */
export class Progress {
  private readonly tty: boolean;
  private readonly now: () => number;
  private readonly everyMs: number;
  private readonly started: number;
  private last: number;
  private lineOpen = false;

  constructor(
    private readonly stderr: OutputStream,
    private readonly o: ProgressOptions,
  ) {
    this.tty = stderr.isTTY === true;
    this.now = o.now ?? (() => performance.now());
    this.everyMs = o.everyMs ?? (this.tty ? TTY_PROGRESS_MS : PIPE_PROGRESS_MS);
    this.started = this.now();
    this.last = this.started;
  }

  /** A line of its own (the estimate before the run), unless quiet. */
  note(text: string): void {
    if (this.o.quiet) return;
    this.clear();
    this.stderr.write(`${this.o.label}: ${text}\n`);
  }

  /** Progress at `done` of `total`; written when the interval has passed. `detail` follows the ETA. */
  update(done: number, total: number, detail?: string): void {
    if (this.o.quiet) return;
    const t = this.now();
    if (t - this.last < this.everyMs) return;
    this.last = t;
    const text = `${this.o.label}: ${formatProgress(done, total, (t - this.started) / 1000, this.o.unit)}`;
    const line = detail === undefined ? text : `${text}; ${detail}`;
    if (this.tty) {
      this.stderr.write(`\r\x1b[K${line}`);
      this.lineOpen = true;
    } else {
      this.stderr.write(`${line}\n`);
    }
  }

  /** Clears a terminal's progress line (before the result, or a message). */
  clear(): void {
    if (!this.lineOpen) return;
    this.stderr.write("\r\x1b[K");
    this.lineOpen = false;
  }
}

/**
 * A long command's start: its estimate line on stderr, ending with the time limit and the flag that sets it, then
 * progress and the deadline, both timed from now.
 */
export function startTimedRun(
  stderr: OutputStream,
  options: ProgressOptions,
  timeLimitSeconds: number,
  estimate: string,
): { progress: Progress; deadline: Deadline } {
  const progress = new Progress(stderr, options);
  progress.note(`${estimate}; time limit ${timeLimitSeconds} s (--time-limit)`);
  return { progress, deadline: new Deadline(timeLimitSeconds) };
}

/** A wall-clock limit started now. */
export class Deadline {
  private readonly started: number;

  constructor(
    readonly seconds: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.started = now();
  }

  /** The instant the limit ends, on `performance.now()`'s clock (for library options that take one). */
  get endsAt(): number {
    return this.started + this.seconds * 1000;
  }

  expired(): boolean {
    return this.now() >= this.endsAt;
  }
}

/** What a partial result says, in text: which limit stopped it, what ran, how to run it all. */
export function partialLine(seconds: number, ran: string): string {
  const limit = `--time-limit ${seconds} s`;
  return `PARTIAL: stopped at the time limit (${limit}) after ${ran}; raise --time-limit to run it all`;
}

/** `partialLine` for a run of `total` units that stopped after `done` (`12 of 300 steps`). */
export function partialAfter(seconds: number, done: number, total: number, unit: string): string {
  return partialLine(seconds, `${count(done)} of ${count(total)} ${unit}`);
}

/** The fields a --json result carries: `complete`, and why it stopped when it is not. */
export function completionJson(complete: boolean, seconds: number): Record<string, unknown> {
  return complete ? { complete: true } : { complete: false, stoppedBy: "time-limit", timeLimitSeconds: seconds };
}

/** Bytes this process's JS heap may still grow by: what a run's kept state is checked against before it starts. */
export function heapBytesFree(): number {
  const heap = getHeapStatistics();
  return heap.heap_size_limit - heap.used_heap_size;
}
