/**
 * Typed errors. Every error logtool raises on purpose is a LogtoolError: it carries the file and
 * byte position where that applies, and the exit code the CLI maps it to. Anything else reaching
 * the CLI is a bug and is reported as such.
 */

/** Exit codes, documented in the README. */
export const ExitCode = {
  ok: 0,
  /** I/O failure, lock held by another process, missing directory. */
  operational: 1,
  /** Bad command line; also API misuse (kinds invalid-argument, invalid-state, refused). */
  usage: 2,
  /** Corruption, index mismatch, or anything repaired/repairable in the data. */
  data: 3,
} as const;
export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

export type ErrorKind =
  /** A bad command line: the CLI's kind only (src/commands, program.ts); the engine never raises it. */
  | 'usage'
  /** The library was called with an option, property or directory it cannot work with (API misuse). */
  | 'invalid-argument'
  /**
   * An operation the object's current state refuses: a read-only log, an ended or rolled-back
   * transaction, a compaction already running, a take transaction already open.
   */
  | 'invalid-state'
  /**
   * What Kafka itself refuses a producer: a fenced epoch, an out-of-order sequence, an abort of a
   * transaction that is not open. Nothing was written.
   */
  | 'refused'
  | 'io'
  | 'lock'
  | 'not-found'
  | 'corrupt'
  | 'unsupported'
  | 'out-of-range'
  | 'too-large'
  | 'closed'
  /** A broken invariant (assert): a bug in logtool, never the user's input. */
  | 'internal';

const exitCodeByKind: Record<ErrorKind, ExitCodeValue> = {
  usage: ExitCode.usage,
  'invalid-argument': ExitCode.usage,
  'invalid-state': ExitCode.usage,
  refused: ExitCode.usage,
  io: ExitCode.operational,
  lock: ExitCode.operational,
  'not-found': ExitCode.operational,
  closed: ExitCode.operational,
  'out-of-range': ExitCode.operational,
  corrupt: ExitCode.data,
  unsupported: ExitCode.data,
  'too-large': ExitCode.data,
  internal: ExitCode.operational,
};

export interface ErrorLocation {
  file?: string;
  position?: number;
}

export class LogtoolError extends Error {
  readonly kind: ErrorKind;
  readonly file: string | undefined;
  readonly position: number | undefined;

  constructor(kind: ErrorKind, message: string, where: ErrorLocation = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'LogtoolError';
    this.kind = kind;
    this.file = where.file;
    this.position = where.position;
  }

  get exitCode(): ExitCodeValue {
    return exitCodeByKind[this.kind];
  }

  /** One line for a human: "<file> at byte <pos>: <message>". */
  describe(): string {
    const where = this.file === undefined ? '' : this.position === undefined ? `${this.file}: ` : `${this.file} at byte ${this.position}: `;
    return `${this.kind === 'internal' ? 'internal error: ' : ''}${where}${this.message}`;
  }
}

/** Raised while decoding bytes; the caller adds the file name. */
export class CorruptDataError extends LogtoolError {
  constructor(message: string, position?: number, file?: string) {
    super('corrupt', message, { file, position });
    this.name = 'CorruptDataError';
  }
}

/**
 * API misuse: an option or property value the engine cannot work with. The message names the
 * options (`options`, as the API spells them), never a command-line flag; a command that takes
 * them from flags can say which flag (commands/compact.ts).
 */
export class InvalidArgumentError extends LogtoolError {
  readonly options: readonly string[];
  constructor(options: readonly string[], message: string, where: ErrorLocation = {}) {
    super('invalid-argument', message, where);
    this.name = 'InvalidArgumentError';
    this.options = options;
  }
}

/**
 * A directory the API cannot work with (kind `invalid-argument`, `options` the parameter: `dir`,
 * `logDirs`): not a directory, not named as Kafka names partitions, a log directory where a
 * partition directory is needed or the reverse, one partition named by two directories. `file` is
 * the directory.
 */
export class InvalidDirectoryError extends InvalidArgumentError {
  constructor(message: string, file: string, option: 'dir' | 'logDirs' = 'dir') {
    super([option], message, { file });
    this.name = 'InvalidDirectoryError';
  }
}

/** A write refused because the path inside a partition is a symbolic link (exit 1, naming it). */
export class SymlinkError extends LogtoolError {
  constructor(file: string) {
    super('io', 'is a symbolic link; logtool does not write through symbolic links inside a partition directory (replace it with a regular file or directory)', { file });
    this.name = 'SymlinkError';
  }
}

/** Turns a Node.js system error into a LogtoolError naming the path. */
export function ioError(err: unknown, path: string, action: string): LogtoolError {
  const e = err as NodeJS.ErrnoException;
  if (e instanceof LogtoolError) return e;
  const code = e?.code ?? 'EIO';
  const kind: ErrorKind = code === 'ENOENT' ? 'not-found' : 'io';
  return new LogtoolError(kind, `${action} failed: ${code}${e?.message ? ` (${e.message.replace(/^\w+: /, '')})` : ''}`, { file: path }, { cause: err });
}

/** A broken invariant: the engine's state or a caller of an engine module is wrong (exit 1). */
export class InternalError extends LogtoolError {
  constructor(message: string, where: ErrorLocation = {}) {
    super('internal', message, where);
    this.name = 'InternalError';
  }
}

/**
 * Invariant check at a boundary (TigerBeetle style): never for user input, which gets a typed
 * error of its own kind. Throws an InternalError (kind 'internal') naming the file and byte
 * position when given.
 */
export function assert(condition: unknown, message: string, where?: ErrorLocation): asserts condition {
  if (!condition) throw new InternalError(`assertion failed: ${message}`, where);
}
