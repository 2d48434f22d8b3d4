/**
 * Broker-written log directories with lz4, gzip and snappy batches read end to end through the
 * public API (Log.open read-only, log.read), in place and unchanged: every record comes back, in
 * offset order, and the record counts match the header walk in cases.json.
 */
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compressionNames } from '../../../src/engine/format/compression.js';
import { decodeEntryRecords } from '../../../src/engine/format/entry-records.js';
import { Log, type LogRecord, type LogWarning } from '../../../src/api.js';
import { fixturePath, haveFixtures, loadCases, type SelfDecodedWalk } from './kafka-corpus.js';

import { requireFixtures } from '../../helpers/fixtures.js';
requireFixtures(import.meta.url);

const CODEC_CASES = [
  'segments/cp512-lz4-logappendtime-mscaldas-2019',
  'segments/gzip-nodelogcollector-berkayakcay-2024',
  'segments/zk-2.8-snappy-seanorth-2022',
  'segments/zk-gzip-mixed-macsakini-2023',
];

const cases = loadCases().filter((c) => CODEC_CASES.includes(c.case));

interface PartitionCase {
  caseName: string;
  partition: string;
  walks: SelfDecodedWalk[];
}

const partitions: PartitionCase[] = cases.flatMap((c) =>
  Object.entries(c.partitions ?? {})
    .filter(([, p]) => p.selfDecoded)
    .map(([partition, p]) => ({ caseName: c.case, partition, walks: Object.values(p.selfDecoded!) })),
);

/** Size and mtime of every file, to prove a read-only open leaves the fixture untouched. */
function snapshot(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .map((f) => {
      const st = statSync(path.join(dir, f));
      return `${f} ${st.size} ${st.mtimeMs}`;
    });
}

async function readAll(dir: string): Promise<{ records: LogRecord[]; codecs: Record<string, number>; crcOk: boolean; warnings: LogWarning[] }> {
  const warnings: LogWarning[] = [];
  const log = Log.open(dir, { readOnly: true, onWarning: (w) => warnings.push(w) });
  try {
    const records = [...log.read({ includeControl: true })].map((r) => ({ ...r, key: r.key && Buffer.from(r.key), value: r.value && Buffer.from(r.value) }));
    const codecs: Record<string, number> = {};
    let crcOk = true;
    for (const b of log.reader().batches({ verifyCrc: true })) {
      const name = compressionNames[b.entry.compression]!;
      codecs[name] = (codecs[name] ?? 0) + 1;
      crcOk &&= b.crcValid === true;
    }
    return { records, codecs, crcOk, warnings };
  } finally {
    await log.close();
  }
}

describe.skipIf(!haveFixtures)('broker log directories with compressed batches', () => {
  it('covers all four codec cases', () => {
    expect(cases.map((c) => c.case).sort()).toEqual([...CODEC_CASES].sort());
    const codecsSeen = new Set(partitions.flatMap((p) => p.walks.flatMap((w) => Object.keys(w.codecs))));
    expect([...codecsSeen].sort()).toEqual(['gzip', 'lz4', 'none', 'snappy']);
  });

  it.each(partitions.map((p) => [`${p.caseName.replace('segments/', '')} ${p.partition}`, p] as const))('%s reads fully', async (_label, p) => {
    const dir = fixturePath(path.join(p.caseName, p.partition));
    const before = snapshot(dir);
    const { records, codecs, crcOk, warnings } = await readAll(dir);
    expect(warnings).toEqual([]);
    expect(crcOk).toBe(true);

    const expectedRecords = p.walks.reduce((n, w) => n + w.records, 0);
    expect(records.length).toBe(expectedRecords);
    const expectedCodecs: Record<string, number> = {};
    for (const w of p.walks) for (const [k, v] of Object.entries(w.codecs)) expectedCodecs[k] = (expectedCodecs[k] ?? 0) + v;
    expect(codecs).toEqual(expectedCodecs);

    // Offsets strictly increase and stay within the walked range (compaction may leave gaps).
    const first = Math.min(...p.walks.map((w) => Number(w.firstOffset)));
    const last = Math.max(...p.walks.map((w) => Number(w.lastOffset)));
    for (let i = 0; i < records.length; i++) {
      const o = records[i]!.offset;
      expect(o >= first && o <= last).toBe(true);
      if (i > 0) expect(o).toBeGreaterThan(records[i - 1]!.offset);
    }
    expect(snapshot(dir)).toEqual(before);
  });

  it('LogAppendTime lz4 batches (mscaldas rekey topics): every record carries the batch maxTimestamp', async () => {
    const withLat = partitions.filter((p) => p.walks.some((w) => w.logAppendTimeBatches > 0));
    expect(withLat.length).toBeGreaterThan(0);
    for (const p of withLat) {
      const log = Log.open(fixturePath(path.join(p.caseName, p.partition)), { readOnly: true });
      try {
        let latBatches = 0;
        for (const { entry } of log.reader().batches()) {
          const h = entry.header!;
          if (!(h.attributes & 0x08)) continue;
          latBatches++;
          expect(entry.compression).toBe(3);
          const records = decodeEntryRecords(entry);
          expect(records.length).toBe(h.recordsCount);
          for (const r of records) expect(r.timestamp).toBe(h.maxTimestamp);
        }
        expect(latBatches).toBe(p.walks.reduce((n, w) => n + w.logAppendTimeBatches, 0));
      } finally {
        await log.close();
      }
    }
  });

  it('berkayakcay (kafkajs GZIP producer): one record per batch, null key, no headers, a JSON value', async () => {
    const c = cases.find((x) => x.case === 'segments/gzip-nodelogcollector-berkayakcay-2024')!;
    expect(String(c.expect_from_repo_code)).toMatch(/one record per batch, null key, no headers, JSON value, gzip/);
    for (const p of partitions.filter((x) => x.caseName === c.case)) {
      const { records, codecs } = await readAll(fixturePath(path.join(p.caseName, p.partition)));
      expect(codecs).toEqual({ gzip: records.length });
      for (const r of records) {
        expect(r.key).toBeNull();
        expect(r.headers).toEqual([]);
        expect(() => JSON.parse(r.value!.toString('utf8'))).not.toThrow();
      }
    }
  });
});
