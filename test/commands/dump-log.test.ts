/**
 * `logtool dump-log` (kafka-dump-log.sh's output) through the built CLI, compared line for line
 * with what kafka-format.md §16 says Kafka prints, the values computed by an independent reading
 * of the bytes (kafka-oracle.ts), never by logtool's own decoders:
 *
 *  - §19 worked example A: the batch line equals the line printed in the notes, character for
 *    character; example B (a COMMIT marker) prints `endTxnMarker: COMMIT coordinatorEpoch: 5`;
 *  - broker segments (ZooKeeper 2.x, KRaft with producer ids and a LEADER_CHANGE control batch,
 *    LogAppendTime + lz4, cleaned batches with a delete horizon): every batch and record line,
 *    `Non-consecutive offsets` on stderr for compacted partitions, exit 0;
 *  - lastSequence wrapping past 2^31 − 1; legacy v0/v1 message sets with each inner message's own
 *    CRC, validity and the wrapper's LogAppendTime;
 *  - trailing garbage (`Found N invalid bytes at the end of`), Kafka's record-size error, exit 3;
 *  - `.index` / `.timeindex` dumps: Kafka's stop at zero padding, mismatches of a deliberately
 *    broken index copy, the time-index report for a broker that indexed record offsets;
 *  - `dump-index --verify` (index-verifier.ts) accepting pre-2.0 first-offset keys and legacy
 *    wrappers' (previous last, last] ranges that Kafka's own dump-log reports as mismatches.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { fixturePath, hasFixtures, makeTempDir, removeTempDirs } from '../helpers/fixtures.js';
import {
  crc32,
  expectedBatchLine,
  expectedRecordLine,
  fixBatchCrc,
  legacyEntry,
  legacyGzipWrapper,
  offsetIndexBytes,
  records,
  timeIndexBytes,
  walk,
  WORKED_EXAMPLE_A,
  WORKED_EXAMPLE_B,
  type OracleEntry,
} from './kafka-oracle.js';

beforeAll(() => ensureBuilt(), 120_000);
afterAll(removeTempDirs);

const LOG0 = '00000000000000000000.log';

import { cli, type CliResult } from '../helpers/cli.js';

import { requireFixtures } from '../helpers/fixtures.js';
requireFixtures(import.meta.url);

const lines = (text: string): string[] => text.split('\n').filter((l, i, a) => !(l === '' && i === a.length - 1));

/** stdout split into the lines after each `Dumping <file>` line, by file. */
function sections(stdout: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let current: string[] = [];
  for (const l of lines(stdout)) {
    if (l.startsWith('Dumping ')) out.set(l.slice('Dumping '.length), (current = []));
    else current.push(l);
  }
  return out;
}

/** stderr blocks: a header line and the indented lines under it, by header. */
function stderrBlocks(stderr: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let current: string[] = [];
  for (const l of lines(stderr)) {
    if (l.startsWith('  ') || l.startsWith('Indexed offset: ')) current.push(l);
    else out.set(l, (current = []));
  }
  return out;
}

/** A temp partition dir holding `bytes` as its first segment. */
function segmentWith(bytes: Buffer, name = 't-0'): string {
  const dir = path.join(makeTempDir('logtool-dumplog-'), name);
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, LOG0), bytes);
  return dir;
}

/** What Kafka prints for one `.log` with --deep-iteration (and the non-consecutive gaps it collects). */
function expectedDump(file: string, opts: { print?: boolean } = {}): { stdout: string[]; gaps: string[] } {
  const buf = fs.readFileSync(file);
  const { entries, validBytes } = walk(buf);
  const out = [`Dumping ${file}`, `Log starting offset: ${Number(path.basename(file).split('.')[0])}`];
  const gaps: string[] = [];
  let last = -1;
  for (const e of entries) {
    out.push(expectedBatchLine(e));
    const rs = records(e);
    if (!rs) throw new Error(`oracle cannot decode codec ${e.codec} in ${file}`);
    for (const r of rs) {
      // Scala DumpLogSegments: the first record only sets lastOffset; gaps are prepended (newest first).
      if (last !== -1 && r.offset !== last + 1) gaps.unshift(`  ${last} is followed by ${r.offset}`);
      last = r.offset;
      out.push(expectedRecordLine(e, r, opts.print));
    }
  }
  if (validBytes < buf.length) out.push(`Found ${buf.length - validBytes} invalid bytes at the end of ${path.basename(file)}`);
  return { stdout: out, gaps };
}

/** stderr's `Non-consecutive offsets in <file>` blocks, by file. */
function gapBlocks(stderr: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const l of lines(stderr)) {
    const m = /^Non-consecutive offsets in (.*)$/.exec(l);
    if (m) out.set(m[1]!, (current = []));
    else if (current && l.startsWith('  ')) current.push(l);
    else current = undefined;
  }
  return out;
}

/**
 * The keys of a Scala 2.13.15 mutable.HashMap[String, _] after one put per key, in iteration order:
 * HashMap.put0 and growTable transcribed (buckets of [key, improved hash] kept sorted by hash,
 * split in order when the table doubles), with Java's String.hashCode.
 */
function scalaMapOrder(keys: string[]): string[] {
  let table: [string, number][][] = Array.from({ length: 16 }, () => []);
  let threshold = 12;
  let size = 0;
  for (const key of keys) {
    if (size + 1 >= threshold) {
      const next: [string, number][][] = Array.from({ length: table.length * 2 }, () => []);
      for (const bucket of table) for (const n of bucket) next[n[1] & (next.length - 1)]!.push(n);
      table = next;
      threshold = Math.floor(table.length * 0.75);
    }
    let h = 0;
    for (let i = 0; i < key.length; i++) h = (Math.imul(h, 31) + key.charCodeAt(i)) | 0;
    h ^= h >>> 16;
    const bucket = table[h & (table.length - 1)]!;
    let at = 0;
    while (at < bucket.length && bucket[at]![1] <= h) at++;
    bucket.splice(at, 0, [key, h]);
    size++;
  }
  return table.flatMap((b) => b.map(([k]) => k));
}

function logsOf(caseDir: string, partitions?: string[]): string[] {
  const root = fixturePath(caseDir);
  return (partitions ?? fs.readdirSync(root))
    .filter((p) => fs.statSync(path.join(root, p)).isDirectory())
    .sort()
    .flatMap((p) =>
      fs
        .readdirSync(path.join(root, p))
        .filter((f) => f.endsWith('.log') && fs.statSync(path.join(root, p, f)).size > 0)
        .sort()
        .map((f) => path.join(root, p, f)),
    );
}

// ---------------------------------------------------------------------------------------------

describe.concurrent('§19 worked examples', () => {
  it('example A: the batch line is the notes’ line, character for character', async () => {
    const dir = segmentWith(WORKED_EXAMPLE_A);
    const file = path.join(dir, LOG0);
    const r = await cli('dump-log', '--files', file);
    // Copied from kafka-format.md §19 (one line there, wrapped for width).
    const notes =
      'baseOffset: 0 lastOffset: 1 count: 2 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 partitionLeaderEpoch: 0 isTransactional: false isControl: false ' +
      'deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1700000000005 size: 84 magic: 2 compresscodec: none crc: 4259865977 isvalid: true';
    expect(lines(r.stdout)).toEqual([`Dumping ${file}`, 'Log starting offset: 0', notes]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });

  it('example A with --print-data-log: sequence, header keys, key and payload; --skip-record-metadata', async () => {
    const file = path.join(segmentWith(WORKED_EXAMPLE_A), LOG0);
    const printed = lines((await cli('dump-log', '--files', file, '--print-data-log')).stdout);
    expect(printed.slice(3)).toEqual([
      '| offset: 0 CreateTime: 1700000000000 keySize: 1 valueSize: 2 sequence: -1 headerKeys: [] key: k payload: v1',
      '| offset: 1 CreateTime: 1700000000005 keySize: -1 valueSize: 2 sequence: -1 headerKeys: [h] payload: v2',
    ]);
    // --skip-record-metadata with printing: the key takes the "| " prefix; the payload is always
    // printed as " payload: " (DumpLogSegments.dumpLog), so a record without a key starts with a space.
    const skipped = lines((await cli('dump-log', '--files', file, '--print-data-log', '--skip-record-metadata')).stdout);
    expect(skipped.slice(3)).toEqual(['| key: k payload: v1', ' payload: v2']);
  });

  it('example B: a COMMIT marker prints endTxnMarker and no key/payload; an ABORT copy prints ABORT', async () => {
    const file = path.join(segmentWith(Buffer.concat([WORKED_EXAMPLE_A, WORKED_EXAMPLE_B])), LOG0);
    const abort = Buffer.from(WORKED_EXAMPLE_B);
    abort[61 + 8] = 0; // control key type: COMMIT (1) → ABORT (0)
    const abortFile = path.join(segmentWith(fixBatchCrc(abort)), LOG0);
    const r = await cli('dump-log', '--files', `${file},${abortFile}`, '--print-data-log');
    const out = sections(r.stdout).get(file)!;
    expect(out[4]).toBe(
      'baseOffset: 10 lastOffset: 10 count: 1 baseSequence: -1 lastSequence: -1 producerId: 1000 producerEpoch: 0 partitionLeaderEpoch: 3 isTransactional: true isControl: true ' +
        'deleteHorizonMs: OptionalLong.empty position: 84 CreateTime: 1700000000000 size: 78 magic: 2 compresscodec: none crc: 4236554292 isvalid: true',
    );
    expect(out[5]).toBe('| offset: 10 CreateTime: 1700000000000 keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] endTxnMarker: COMMIT coordinatorEpoch: 5');
    expect(out).toHaveLength(6);
    const a = sections(r.stdout).get(abortFile)!;
    expect(a[1]).toMatch(/ isvalid: true$/);
    expect(a[2]).toBe('| offset: 10 CreateTime: 1700000000000 keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] endTxnMarker: ABORT coordinatorEpoch: 5');
    // Offsets 0, 1, 10: the gap goes to stderr; it is not an error. The ABORT file starts at 10:
    // Kafka's tool takes its first record's offset as the start, so that is no gap.
    const gaps = gapBlocks(r.stderr);
    expect(gaps.get(file)).toEqual(['  1 is followed by 10']);
    expect(gaps.has(abortFile)).toBe(false);
    expect(r.code).toBe(0);
  });

  it('index mismatches print as Kafka\'s prepended List: newest first, a repeated offset on each of its lines', async () => {
    const dir = segmentWith(WORKED_EXAMPLE_A); // one batch at position 0, last offset 1
    const idx = path.join(dir, '00000000000000000000.index');
    fs.writeFileSync(idx, offsetIndexBytes(0, [[5, 0], [3, 0], [3, 0]]));
    const r = await cli('dump-log', '--verify-index-only', '--files', idx);
    expect(r.code).toBe(3);
    expect(lines(r.stderr)).toEqual([`Mismatches in :${idx}`, '  Index offset: 3, log offset: 1', '  Index offset: 3, log offset: 1', '  Index offset: 5, log offset: 1']);
  });

  it('several files: the Non-consecutive blocks come in the order of the Scala mutable.Map Kafka keeps them in', async () => {
    const bytes = Buffer.concat([WORKED_EXAMPLE_A, WORKED_EXAMPLE_B]); // offsets 0, 1, 10: one gap
    const files = Array.from({ length: 13 }, (_, i) => path.join(segmentWith(bytes, `p-${i}`), LOG0));
    const r = await cli('dump-log', '--deep-iteration', '--files', files.join(','));
    expect(r.code).toBe(0);
    const order = lines(r.stderr).filter((l) => l.startsWith('Non-consecutive offsets in ')).map((l) => l.slice('Non-consecutive offsets in '.length));
    // 13 puts: the 12th finds size + 1 = 12 = 0.75 × 16 and doubles the table to 32 first.
    expect(order).toEqual(scalaMapOrder(files));
    expect(order).not.toEqual(files);
  });

  it('lastSequence and record sequences wrap past 2^31 − 1 to 0; a stale CRC prints isvalid: false, exit 3', async () => {
    const b = Buffer.from(WORKED_EXAMPLE_A);
    b.writeBigInt64BE(77n, 43); // producerId
    b.writeInt16BE(2, 51); // producerEpoch
    b.writeInt32BE(2147483647, 53); // baseSequence = Integer.MAX_VALUE, lastOffsetDelta 1
    const file = path.join(segmentWith(fixBatchCrc(b)), LOG0);
    const stale = Buffer.from(WORKED_EXAMPLE_A);
    stale[stale.length - 1] ^= 0xff; // header value "x" → another byte; CRC left as it was
    const staleFile = path.join(segmentWith(stale), LOG0);
    const r = await cli('dump-log', '--files', `${file},${staleFile}`, '--deep-iteration');
    const out = sections(r.stdout).get(file)!;
    expect(out[1]).toContain(' baseSequence: 2147483647 lastSequence: 0 producerId: 77 producerEpoch: 2 ');
    expect(out[1]).toBe(expectedBatchLine(walk(fs.readFileSync(file)).entries[0]!));
    expect(out[2]).toContain(' sequence: 2147483647 ');
    expect(out[3]).toContain(' sequence: 0 ');
    expect(sections(r.stdout).get(staleFile)![1]).toMatch(/ crc: 4259865977 isvalid: false$/);
    expect(r.code).toBe(3);
  });
});

describe.skipIf(!hasFixtures).concurrent('broker segments, every line against the bytes', () => {
  const CASES: [name: string, caseDir: string, partitions: string[] | undefined, option: string][] = [
    ['ZooKeeper 2.x, clean shutdown, with keys and payloads', 'segments/zk-cleanshutdown-volodymyrzee-2020', undefined, '--print-data-log'],
    ['KRaft: idempotent producer ids, LEADER_CHANGE control batch', 'segments/kraft-idempotent-ldipoc-2026', ['TestTopicPatient-0', '__cluster_metadata-0', '__consumer_offsets-6', 'Retry.TestTopicPatient-0'], '--deep-iteration'],
    ['LogAppendTime and lz4', 'segments/cp512-lz4-logappendtime-mscaldas-2019', undefined, '--deep-iteration'],
    ['cleaned segments with delete horizons and offset gaps', 'segments/kraft-confluentgo-mashakosher-2025', undefined, '--deep-iteration'],
  ];

  /** One dump per case, shared by the tests that look at it. */
  const runs = new Map<string, Promise<{ files: string[]; r: CliResult }>>();
  const run = (caseDir: string) => {
    if (!runs.has(caseDir)) {
      const [, , partitions, option] = CASES.find(([, c]) => c === caseDir)!;
      const files = logsOf(caseDir, partitions);
      runs.set(caseDir, cli('dump-log', '--files', files.join(','), option).then((r) => ({ files, r })));
    }
    return runs.get(caseDir)!;
  };

  for (const [name, caseDir, , option] of CASES) {
    it(`${name} (${caseDir})`, async () => {
      const { files, r } = await run(caseDir);
      expect(files.length).toBeGreaterThan(0);
      const expected = files.map((f) => expectedDump(f, { print: option === '--print-data-log' }));
      // Whole text: printed payloads may themselves hold line breaks, as in Kafka's output.
      expect(r.stdout).toBe(`${expected.flatMap((x) => x.stdout).join('\n')}\n`);
      const gaps = gapBlocks(r.stderr);
      for (const [i, f] of files.entries()) expect(gaps.get(f) ?? [], f).toEqual(expected[i]!.gaps);
      expect(r.code).toBe(0);
    });
  }

  it('the fixtures exercise what the line formats distinguish', async () => {
    const all = CASES.flatMap(([, c, p]) => logsOf(c, p)).flatMap((f) => walk(fs.readFileSync(f)).entries);
    const some = (pred: (e: OracleEntry) => boolean) => all.some(pred);
    expect(some((e) => e.hasDeleteHorizon)).toBe(true);
    expect(some((e) => e.timestampType === 'LogAppendTime' && e.codec === 3)).toBe(true);
    expect(some((e) => e.isControl)).toBe(true);
    expect(some((e) => e.producerId >= 0 && e.baseSequence >= 0)).toBe(true);
    expect((await run('segments/zk-cleanshutdown-volodymyrzee-2020')).r.stdout).toContain(' payload: ');
  });

  it('a delete horizon prints as OptionalLong[<baseTimestamp>]', async () => {
    const file = fixturePath('segments/kraft-confluentgo-mashakosher-2025/__consumer_offsets-15', LOG0);
    const horizon = walk(fs.readFileSync(file)).entries.filter((e) => e.hasDeleteHorizon);
    expect(horizon.length).toBeGreaterThan(0);
    const out = sections((await run('segments/kraft-confluentgo-mashakosher-2025')).r.stdout).get(file)!;
    for (const e of horizon) expect(out).toContain(expectedBatchLine(e));
    expect(out.filter((l) => l.includes('deleteHorizonMs: OptionalLong[')).map((l) => /OptionalLong\[(\d+)\]/.exec(l)![1])).toEqual(horizon.map((e) => String(e.baseTimestamp)));
  });

  it('a compacted partition reports its offset gaps on stderr, newest first, none before its first record', async () => {
    const block = lines((await run('segments/kraft-confluentgo-mashakosher-2025')).r.stderr);
    const gapsOf = (file: string) => {
      const at = block.indexOf(`Non-consecutive offsets in ${file}`);
      expect(at).toBeGreaterThanOrEqual(0);
      const rest = block.slice(at + 1);
      return rest.slice(0, rest.findIndex((l) => !l.startsWith('  ')) >>> 0);
    };
    // __consumer_offsets-2 starts past offset 0 (cleaned): Kafka's tool reports no "-1 is followed by".
    const starting = fixturePath('segments/kraft-confluentgo-mashakosher-2025/__consumer_offsets-2', LOG0);
    expect(walk(fs.readFileSync(starting)).entries[0]!.baseOffset).toBeGreaterThan(0);
    expect(gapsOf(starting)).toEqual(expectedDump(starting).gaps);
    expect(gapsOf(starting).some((g) => g.startsWith('  -1 '))).toBe(false);
    // Several gaps: printed in reverse order of meeting them (Scala prepends to a List).
    const file = fixturePath('segments/kraft-confluentgo-mashakosher-2025/__consumer_offsets-15', LOG0);
    const got = gapsOf(file);
    expect(got.length).toBeGreaterThan(1);
    expect(got).toEqual(expectedDump(file).gaps);
    const first = (g: string) => Number(g.trim().split(' ')[0]);
    expect(first(got[0]!)).toBeGreaterThan(first(got[got.length - 1]!));
  });

  it('--max-bytes reads only whole batches below the limit and never reports trailing bytes', async () => {
    const file = fixturePath('segments/kraft-idempotent-ldipoc-2026/TestTopicPatient-0', LOG0);
    const { entries } = walk(fs.readFileSync(file));
    const limit = entries[1]!.position + entries[1]!.size + 10; // two batches and part of the third
    const out = lines((await cli('dump-log', '--files', file, '--max-bytes', String(limit))).stdout);
    expect(out.slice(2)).toEqual(entries.slice(0, 2).map(expectedBatchLine));
  });
});

describe.skipIf(!hasFixtures).concurrent('trailing bytes', () => {
  const source = () => fixturePath('segments/zk-cleanshutdown-volodymyrzee-2020/first_topic-0', LOG0);

  it('garbage after the last batch: "Found N invalid bytes at the end of"; a size below 14: Kafka’s error; exit 3', async () => {
    const original = fs.readFileSync(source());
    // 0x7f7f7f7f as a size runs past the end; 10 bytes cannot hold an entry header.
    const garbage = [Buffer.alloc(100, 0x7f), Buffer.alloc(10, 0)];
    const files = garbage.map((g) => path.join(segmentWith(Buffer.concat([original, g])), LOG0));
    // A zero size field: Kafka's FileLogInputStream throws a CorruptRecordException instead.
    const corrupt = path.join(segmentWith(Buffer.concat([original, Buffer.alloc(40, 0)])), LOG0);
    const r = await cli('dump-log', '--files', [...files, corrupt].join(','));
    for (const [i, file] of files.entries()) {
      const out = sections(r.stdout).get(file)!;
      expect(out.at(-1)).toBe(`Found ${garbage[i]!.length} invalid bytes at the end of ${LOG0}`);
      expect(out.slice(1, -1)).toEqual(walk(original).entries.map(expectedBatchLine));
    }
    expect(sections(r.stdout).get(corrupt)!.slice(1)).toEqual(walk(original).entries.map(expectedBatchLine));
    expect(lines(r.stderr)).toEqual([`Found record size 0 smaller than minimum record overhead (14) in file ${corrupt}.`]);
    expect(r.code).toBe(3);
  });
});

// ---------------------------------------------------------------------------------------------

describe.skipIf(!hasFixtures).concurrent('legacy v0/v1 message sets', () => {
  // Hand-made inputs next to the fixtures, all dumped by one run.
  const msg = (o: number, ts: number, value: string, key: string | null = null, crc?: number) =>
    legacyEntry({ offset: o, magic: 1, timestamp: ts, key: key === null ? null : Buffer.from(key), value: Buffer.from(value), crc });
  const latInner = [0, 1, 2].map((i) => msg(i, 1000 + i, `v${i}`, `k${i}`));
  const latWrapper = legacyGzipWrapper({ offset: 9, magic: 1, timestamp: 777_000, logAppendTime: true, inner: latInner });
  const good = msg(0, 5, 'ok');
  const bad = msg(1, 6, 'bad', null, 12345);
  const badWrapper = legacyGzipWrapper({ offset: 1, magic: 1, timestamp: 6, inner: [good, bad] });
  const v0Inner = [40, 41].map((o) => legacyEntry({ offset: o, magic: 0, key: null, value: Buffer.from(`m${o}`) }));
  const v0Wrapper = legacyGzipWrapper({ offset: 41, magic: 0, inner: v0Inner });

  let files: { fixtures: string[]; lat: string; bad: string; v0: string };
  let r: CliResult;
  beforeAll(async () => {
    const names = [...fs.readdirSync(fixturePath('legacy')).map((n) => ['legacy', n]), ...fs.readdirSync(fixturePath('mixed')).filter((n) => !n.startsWith('kafkajs')).map((n) => ['mixed', n])];
    files = {
      fixtures: names.map(([d, n]) => path.join(segmentWith(fs.readFileSync(fixturePath(d!, n!)), `${n!.replace(/\W/g, '')}-0`), LOG0)),
      lat: path.join(segmentWith(latWrapper), LOG0),
      bad: path.join(segmentWith(badWrapper), LOG0),
      v0: path.join(segmentWith(v0Wrapper), LOG0),
    };
    r = await cli('dump-log', '--files', [...files.fixtures, files.lat, files.bad, files.v0].join(','), '--print-data-log');
  }, 60_000);

  it('every legacy and mixed fixture dumps as the oracle reads it', async () => {
    const out = sections(r.stdout);
    for (const f of files.fixtures) expect([`Dumping ${f}`, ...out.get(f)!]).toEqual(expectedDump(f, { print: true }).stdout);
    expect(r.stdout).toContain('NoTimestampType: -1');
  });

  it('compressed wrappers: one record line per inner message with that message’s own CRC', async () => {
    const file = files.fixtures.find((f) => f.includes('kafkagov1cv1v1c'))!;
    const out = sections(r.stdout).get(file)!;
    // The first wrapper (offset 1, gzip) holds offsets 0 and 1; each inner CRC differs from the wrapper's.
    expect(out[1]).toMatch(/^offset: 1 position: 0 CreateTime: \d+ size: 133 magic: 1 compresscodec: gzip crc: \d+ isvalid: true$/);
    const wrapperCrc = /crc: (\d+)/.exec(out[1]!)![1];
    for (const l of [out[2]!, out[3]!]) {
      expect(l).toMatch(/^\| offset: [01] CreateTime: \d+ keySize: \d+ valueSize: 33 isValid: true crc: \d+ key: /);
      expect(/crc: (\d+)/.exec(l)![1]).not.toBe(wrapperCrc);
    }
  });

  it('a v1 LogAppendTime wrapper: every inner record prints LogAppendTime and the wrapper timestamp', async () => {
    const out = sections(r.stdout).get(files.lat)!;
    expect(out[1]).toBe(`offset: 9 position: 0 LogAppendTime: 777000 size: ${latWrapper.length} magic: 1 compresscodec: gzip crc: ${latWrapper.readUInt32BE(12)} isvalid: true`);
    expect(out.slice(2)).toEqual(latInner.map((m, i) => `| offset: ${7 + i} LogAppendTime: 777000 keySize: 2 valueSize: 2 isValid: true crc: ${crc32(m.subarray(16))} key: k${i} payload: v${i}`));
  });

  it('an inner message with a wrong CRC prints isValid: false and its stored CRC (as Kafka), exit 3', async () => {
    const out = sections(r.stdout).get(files.bad)!;
    expect(out[1]).toMatch(/ isvalid: true$/); // the wrapper itself is intact
    expect(out[2]).toBe(`| offset: 0 CreateTime: 5 keySize: -1 valueSize: 2 isValid: true crc: ${good.readUInt32BE(12)} payload: ok`);
    expect(out[3]).toBe('| offset: 1 CreateTime: 6 keySize: -1 valueSize: 3 isValid: false crc: 12345 payload: bad');
    expect(r.code).toBe(3);
  });

  it('v0 wrappers keep absolute inner offsets and print NoTimestampType', async () => {
    const out = sections(r.stdout).get(files.v0)!;
    expect(out[1]).toMatch(/^offset: 41 position: 0 NoTimestampType: -1 size: \d+ magic: 0 compresscodec: gzip /);
    expect(out.slice(2)).toEqual(v0Inner.map((m, i) => `| offset: ${40 + i} NoTimestampType: -1 keySize: -1 valueSize: 3 isValid: true crc: ${m.readUInt32BE(12)} payload: m${40 + i}`));
  });
});

// ---------------------------------------------------------------------------------------------

/** Copy of a fixture partition's segment 0 (.log, .index, .timeindex) into a temp `t-0`. */
function copySegment(caseDir: string, partition: string): string {
  const dir = path.join(makeTempDir('logtool-dumplog-idx-'), partition);
  fs.mkdirSync(dir);
  for (const ext of ['log', 'index', 'timeindex']) fs.copyFileSync(fixturePath(caseDir, partition, `00000000000000000000.${ext}`), path.join(dir, `00000000000000000000.${ext}`));
  for (const f of fs.readdirSync(dir)) fs.chmodSync(path.join(dir, f), 0o644);
  return dir;
}

const readIndex = (file: string): [number, number][] => {
  const b = fs.readFileSync(file);
  return Array.from({ length: b.length / 8 }, (_, i) => [b.readInt32BE(i * 8), b.readInt32BE(i * 8 + 4)]);
};

describe.skipIf(!hasFixtures).concurrent('.index and .timeindex dumps', () => {
  const CASE = 'segments/zk-cleanshutdown-volodymyrzee-2020';
  const PART = '__consumer_offsets-12';

  it('broker, broken, zero-padded, all-zero and empty index copies and a broker time index, dumped in one run', async () => {
    const idxOf = (dir: string) => path.join(dir, '00000000000000000000.index');
    const [plain, broken, padded, zeros, empty] = [0, 1, 2, 3, 4].map(() => copySegment(CASE, PART));
    const entries = readIndex(idxOf(plain!));
    const batches = walk(fs.readFileSync(path.join(plain!, LOG0))).entries;
    const lastOffsetAt = new Map(batches.map((e) => [e.position, e.lastOffset]));
    // Broken copy: entry 3 points at entry 2's batch, entry 6 at entry 7's.
    const b = entries.map(([o, p]) => [o, p] as [number, number]);
    b[3]![1] = entries[2]![1];
    b[6]![1] = entries[7]![1];
    fs.writeFileSync(idxOf(broken!), offsetIndexBytes(0, b));
    fs.appendFileSync(idxOf(padded!), Buffer.alloc(8 * 50));
    fs.writeFileSync(idxOf(zeros!), Buffer.alloc(8 * 50));
    fs.writeFileSync(idxOf(empty!), Buffer.alloc(0));
    const files = [plain, broken, padded, zeros, empty].map((d) => idxOf(d!));
    const tidx = path.join(plain!, '00000000000000000000.timeindex');
    const r = await cli('dump-log', '--files', [...files, tidx].join(','));
    const out = sections(r.stdout);
    const printed = entries.map(([o, p]) => `offset: ${o} position: ${p}`);
    expect(out.get(files[0]!)).toEqual(printed);
    expect(out.get(files[1]!)).toEqual(b.map(([o, p]) => `offset: ${o} position: ${p}`));
    // Kafka trusts the whole file but stops at the first entry (after the first) at the base offset.
    expect(out.get(files[2]!)).toEqual(printed);
    // An all-zero (preallocated, never written) index is not "empty" to Kafka: it prints entry 0.
    expect(out.get(files[3]!)).toEqual(['offset: 0 position: 0']);
    expect(out.get(files[4]!)).toEqual([`${files[4]} is empty.`]);
    const blocks = stderrBlocks(r.stderr);
    expect(blocks.get(`Mismatches in :${files[1]}`)).toEqual([
      `  Index offset: ${entries[6]![0]}, log offset: ${lastOffsetAt.get(entries[7]![1])}`,
      `  Index offset: ${entries[3]![0]}, log offset: ${lastOffsetAt.get(entries[2]![1])}`,
    ]);
    const expectedBlocks = [`Mismatches in :${files[1]}`];
    if (batches[0]!.lastOffset !== 0) {
      expectedBlocks.push(`Mismatches in :${files[3]}`);
      expect(blocks.get(`Mismatches in :${files[3]}`)).toEqual([`  Index offset: 0, log offset: ${batches[0]!.lastOffset}`]);
    }

    // The time index of a broker that indexed the first record carrying the max timestamp, not
    // the batch's last offset: Kafka's dump reports those entries as not found.
    const tb = fs.readFileSync(tidx);
    const timeEntries = Array.from({ length: tb.length / 12 }, (_, i) => ({ ts: Number(tb.readBigInt64BE(i * 12)), offset: tb.readInt32BE(i * 12 + 8) }));
    const notFound: string[] = [];
    const mismatched: string[] = [];
    let prev = -1;
    for (const e of timeEntries) {
      const b = batches.find((x) => x.lastOffset >= e.offset);
      if (!b) notFound.push(`Indexed offset: ${e.offset}, found log offset: -1`);
      else if (b.lastOffset !== e.offset) notFound.push(`Indexed offset: ${e.offset}, found log offset: ${b.lastOffset}`);
      else {
        const max = Math.max(...records(b)!.map((x) => x.timestamp));
        if (max !== e.ts) mismatched.push(`  Index timestamp: ${e.ts}, log timestamp: ${max}`);
        expect(prev).toBeLessThan(e.ts);
      }
      prev = e.ts;
    }
    expect(notFound.length).toBeGreaterThan(0);
    expect(out.get(tidx)).toEqual(timeEntries.map((e) => `timestamp: ${e.ts} offset: ${e.offset}`));
    expect(blocks.get('The following indexed offsets are not found in the log.')).toEqual(notFound);
    expectedBlocks.push('The following indexed offsets are not found in the log.');
    if (mismatched.length) {
      expectedBlocks.push(`Found timestamp mismatch in :${tidx}`);
      expect(blocks.get(`Found timestamp mismatch in :${tidx}`)).toEqual(mismatched);
    }
    expect([...blocks.keys()].sort()).toEqual(expectedBlocks.sort());
    expect(r.code).toBe(3);

    // Only the intact copy, verified without printing: no output, no stderr, exit 0.
    const ok = await cli('dump-log', '--files', files[0]!, '--verify-index-only');
    expect(lines(ok.stdout)).toEqual([`Dumping ${files[0]}`]);
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
  });

  it('--index-sanity-check: a sound .index passes; a time index whose last timestamp is below its first fails', async () => {
    const dir = copySegment(CASE, PART);
    const idx = path.join(dir, '00000000000000000000.index');
    const tidx = path.join(dir, '00000000000000000000.timeindex');
    fs.writeFileSync(tidx, timeIndexBytes(0, [[2000, 5], [1000, 9]]));
    const r = await cli('dump-log', '--files', `${idx},${tidx}`, '--index-sanity-check');
    expect(lines(r.stdout)).toEqual([`Dumping ${idx}`, `${idx} passed sanity check.`, `Dumping ${tidx}`]);
    expect(lines(r.stderr)).toEqual([
      `Corrupt time index found, time index file (${tidx}) has non-zero size but the last timestamp is 1000 which is less than the first timestamp 2000`,
    ]);
    expect(r.code).toBe(3);
  });

});

// ---------------------------------------------------------------------------------------------

describe.skipIf(!hasFixtures).concurrent('dump-index --verify accepts what older brokers wrote', () => {
  it('pre-2.0 offset-index entries keyed on a v2 batch’s first offset', async () => {
    const dir = copySegment('segments/zk-cleanshutdown-volodymyrzee-2020', '__consumer_offsets-12');
    const idx = path.join(dir, '00000000000000000000.index');
    const baseAt = new Map(walk(fs.readFileSync(path.join(dir, LOG0))).entries.map((e) => [e.position, e.baseOffset]));
    const entries = readIndex(idx);
    expect(entries.some(([o, p]) => baseAt.get(p) !== o)).toBe(true); // multi-record batches: first ≠ last
    fs.writeFileSync(idx, offsetIndexBytes(0, entries.map(([, p]) => [baseAt.get(p)!, p])));
    const ok = await cli('dump-index', dir, '--verify');
    expect(ok.stderr).toBe('');
    expect(ok.stdout).toContain('All index entries verified.');
    expect(ok.code).toBe(0);
    // One past the batch's last offset is not in it.
    const lastAt = new Map(walk(fs.readFileSync(path.join(dir, LOG0))).entries.map((e) => [e.position, e.lastOffset]));
    const off = entries.map(([, p]) => [baseAt.get(p)!, p] as [number, number]);
    off[4]![0] = lastAt.get(off[4]![1])! + 1;
    fs.writeFileSync(idx, offsetIndexBytes(0, off));
    const bad = await cli('dump-index', dir, '--verify');
    expect(bad.stderr).toContain(`00000000000000000000.index entry 4: offset ${off[4]![0]} is not in the batch at position ${off[4]![1]}`);
    expect(bad.code).toBe(3);
  });

  it('legacy wrappers: an index key anywhere in (previous last offset, wrapper offset] is accepted', async () => {
    const msg = (o: number, ts: number) => legacyEntry({ offset: o, magic: 1, timestamp: ts, key: null, value: Buffer.from(`value-${o}`) });
    const w1 = legacyGzipWrapper({ offset: 2, magic: 1, timestamp: 1002, inner: [msg(0, 1000), msg(1, 1001), msg(2, 1002)] });
    const w2 = legacyGzipWrapper({ offset: 5, magic: 1, timestamp: 1005, inner: [msg(0, 1003), msg(1, 1004), msg(2, 1005)] });
    const m6 = msg(6, 1006);
    const w3 = legacyGzipWrapper({ offset: 8, magic: 1, timestamp: 1008, inner: [msg(0, 1007), msg(1, 1008)] });
    const p2 = w1.length;
    const p6 = p2 + w2.length;
    const p3 = p6 + m6.length;
    const dir = segmentWith(Buffer.concat([w1, w2, m6, w3]));
    const idx = path.join(dir, '00000000000000000000.index');
    const tidx = path.join(dir, '00000000000000000000.timeindex');
    const verify = async (index: [number, number][], time: [number, number][]) => {
      fs.writeFileSync(idx, offsetIndexBytes(0, index));
      fs.writeFileSync(tidx, timeIndexBytes(0, time));
      return cli('dump-index', dir, '--verify');
    };

    // First inner offsets (pre-2.0 style), and time entries on inner offsets of the wrapper holding the max timestamp.
    const firstKeys = await verify([[3, p2], [6, p6], [7, p3]], [[1005, 4], [1008, 7]]);
    expect(firstKeys.stderr).toBe('');
    expect(firstKeys.code).toBe(0);
    // Kafka's own dump-log, which expects the last offset, flags the same first-offset keys.
    const kafka = await cli('dump-log', '--files', idx, '--verify-index-only');
    expect(lines(kafka.stderr)).toEqual([`Mismatches in :${idx}`, '  Index offset: 7, log offset: 8', '  Index offset: 3, log offset: 5']);
    // Last offsets (2.0+ style) are accepted too.
    expect((await verify([[5, p2], [6, p6], [8, p3]], [[1005, 5], [1008, 8]])).code).toBe(0);

    // The previous wrapper's last offset is outside, and so is anything past the wrapper offset.
    const bad = await verify([[2, p2], [9, p3]], [[1005, 2]]);
    expect(bad.stderr).toContain(`entry 0: offset 2 is not in the batch at position ${p2} (legacy entry, offsets (2, 5])`);
    expect(bad.stderr).toContain(`entry 1: offset 9 is not in the batch at position ${p3} (legacy entry, offsets (6, 8])`);
    expect(bad.stderr).toContain('entry 0: timestamp 1005 differs from the max timestamp 1002 of the batch holding offset 2');
    expect(bad.code).toBe(3);
  });
});
