/**
 * What every pass of Kafka's LogLoader (kafka-format.md §10) shares in one load: the partition
 * directory, whether the load only computes a view (a dry run or a reader), the report, the
 * lost+found keeper, the names the view resolves, and the partition's generation, bumped before
 * the first change readers in other processes could see.
 */
import path from 'node:path';
import type { FileIO } from '../io.js';
import { RECOVERY_POINT_CHECKPOINT, readOffsetCheckpoint, tpKey } from '../checkpoint.js';
import { beginChange, endChange } from '../cleaner/generation.js';
import { LostAndFound } from './lost-and-found.js';
import { emptyLoadReport, type LoadOptions, type LoadReport } from './load-report.js';

export class LoadContext {
  readonly opts: LoadOptions;
  readonly io: FileIO;
  readonly dir: string;
  /** The log directory: the parent, holding the checkpoints and the clean-shutdown marker. */
  readonly logDir: string;
  readonly dryRun: boolean;
  /**
   * Passes 1–4 only compute what they would leave (a dry run, or a reader): nothing is removed or
   * renamed, and segments are opened read-only under the names they have on disk.
   */
  readonly viewOnly: boolean;
  readonly report: LoadReport;
  readonly lost: LostAndFound;
  /** Final names still served by their `.swap` file (view only: the rename is only simulated). */
  readonly swapped = new Set<string>();
  /** Index files that did not exist when the segments were listed. */
  readonly missingIndexes = new Set<string>();
  /** Generation token while a change is in progress (see changing()). */
  private changeToken: number | undefined;

  constructor(opts: LoadOptions) {
    this.opts = opts;
    this.io = opts.io;
    this.dir = opts.dir;
    this.logDir = path.dirname(opts.dir);
    this.dryRun = opts.dryRun === true && !opts.readOnly;
    this.viewOnly = this.dryRun || opts.readOnly;
    this.report = emptyLoadReport(opts.dir, this.dryRun);
    this.lost = new LostAndFound(opts.io, opts.dir, { discard: opts.discardLost, dryRun: this.dryRun });
  }

  /**
   * Before the first change that removes, replaces or shortens segment files: readers in other
   * processes (Log.openStable) retry while the partition's generation is odd.
   */
  changing(): void {
    if (this.viewOnly || this.changeToken !== undefined) return;
    this.changeToken = beginChange(this.io, this.dir);
  }

  /** Ends the change changing() began, if any. */
  endChanging(): void {
    if (this.changeToken !== undefined) endChange(this.io, this.dir, this.changeToken);
  }

  /**
   * Removes a file (really, or in the dry run's view). Leftovers no reader opens (`.deleted`,
   * `.cleaned`, logtool's index `.tmp`) go without bumping the generation, so recovery can clear
   * them on a full disk, where the generation file cannot be written.
   */
  remove(name: string, readersSeeIt = true): void {
    if (readersSeeIt) this.changing();
    if (!this.viewOnly) this.io.unlink(path.join(this.dir, name));
    this.report.tempFilesRemoved.push(name);
  }

  /** This partition's entry in a checkpoint of the log directory; unreadable = empty, as Kafka does. */
  readCheckpoint(name: string): number | undefined {
    const tp = this.opts.tp;
    if (!tp) return undefined;
    const given = this.opts.directory;
    if (given) return (name === RECOVERY_POINT_CHECKPOINT ? given.recoveryPoints : given.logStartOffsets).get(tpKey(tp.topic, tp.partition));
    const file = path.join(this.logDir, name);
    try {
      return readOffsetCheckpoint(this.io, file).get(tpKey(tp.topic, tp.partition));
    } catch (e) {
      this.report.checkpointProblems.push({ file, reason: (e as Error).message });
      this.opts.onWarning({ file, message: `unreadable checkpoint treated as empty: ${(e as Error).message}` });
      return undefined;
    }
  }
}
