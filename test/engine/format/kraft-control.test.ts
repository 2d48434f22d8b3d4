/**
 * KRaft control record values (LeaderChange, SnapshotHeader/Footer, KRaftVersion, KRaftVoters)
 * decode to the JSON kafka-dump-log.sh prints: hand-encoded values byte by byte, the broker's own
 * snapshots and metadata logs in the fixtures, and damaged values fall back to undefined.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { describeKraftControl } from '../../../src/engine/format/kraft-control.js';
import { EntryScanner } from '../../../src/engine/segment/file-records.js';
import { decodeEntryRecords } from '../../../src/engine/format/entry-records.js';
import { realIO } from '../../../src/engine/io.js';
import { fixturesRoot, hasFixtures } from '../../helpers/fixtures.js';

import { requireFixtures } from '../../helpers/fixtures.js';
requireFixtures(import.meta.url);

const h = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');

describe('KRaft control record values', () => {
  it('LeaderChange v0: compact arrays of voters, tagged fields skipped', () => {
    // version 0, leader 3, voters [1,3] (compact length 3), granting [3] (length 2), no tags
    const v = h('0000 00000003 03 00000001 00 00000003 00 02 00000003 00 00');
    expect(describeKraftControl(2, v)).toBe('LeaderChange: {"version":0,"leaderId":3,"voters":[{"voterId":1},{"voterId":3}],"grantingVoters":[{"voterId":3}]}');
  });

  it('SnapshotHeader, SnapshotFooter and KRaftVersion', () => {
    expect(describeKraftControl(3, h('0000 0000018bcfe56800 00'))).toBe('SnapshotHeader {"version":0,"lastContainedLogTimestamp":1700000000000}');
    expect(describeKraftControl(4, h('0000 00'))).toBe('SnapshotFooter {"version":0}');
    expect(describeKraftControl(5, h('0000 0001 00'))).toBe('KRaftVersion {"version":0,"kRaftVersion":1}');
  });

  it('KRaftVoters: uuid as Kafka prints it (URL-safe base64, no padding), endpoints, version range', () => {
    const uuid = Buffer.from('c98b8cac5455415497d155503dc312ac', 'hex');
    const name = Buffer.from('CONTROLLER');
    const host = Buffer.from('localhost');
    const v = Buffer.concat([
      h('0000 02 00000001'),
      uuid,
      h('02'),
      Buffer.from([name.length + 1]),
      name,
      Buffer.from([host.length + 1]),
      host,
      h('2385 00'), // port 9093, endpoint tags
      h('0000 0001 00'), // kraft version feature 0..1, its tags
      h('00 00'), // voter tags, record tags
    ]);
    expect(describeKraftControl(6, v)).toBe(
      'KRaftVoters {"version":0,"voters":[{"voterId":1,"voterUuid":"yYuMrFRVQVSX0VVQPcMSrA","endpoints":[{"name":"CONTROLLER","host":"localhost","port":9093}],"kRaftVersionFeature":{"minSupportedVersion":0,"maxSupportedVersion":1}}]}',
    );
  });

  it('transaction markers and unknown types are not KRaft records; damaged values give undefined, never a throw', () => {
    expect(describeKraftControl(0, h('0000 00000005'))).toBeUndefined();
    expect(describeKraftControl(9, h('0000'))).toBeUndefined();
    expect(describeKraftControl(3, null)).toBeUndefined();
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 6 }), fc.uint8Array({ maxLength: 64 }), (type, bytes) => {
        const out = describeKraftControl(type, Buffer.from(bytes));
        expect(out === undefined || typeof out === 'string').toBe(true);
      }),
      { numRuns: 2000, seed: 5 },
    );
  });

  it.skipIf(!hasFixtures)("every KRaft control record in the brokers' metadata logs and snapshots decodes", () => {
    const seen = new Map<number, number>();
    for (const c of fs.readdirSync(path.join(fixturesRoot, 'segments'))) {
      const dir = path.join(fixturesRoot, 'segments', c, '__cluster_metadata-0');
      if (!fs.existsSync(dir)) continue;
      for (const f of fs.readdirSync(dir).filter((n) => n.endsWith('.log') || n.endsWith('.checkpoint'))) {
        const scanner = new EntryScanner({ io: realIO, path: path.join(dir, f), verifyCrc: true });
        for (const e of scanner.entries()) {
          if (!e.header || !(e.header.attributes & 0x20)) continue;
          for (const r of decodeEntryRecords(e)) {
            const type = r.key!.readInt16BE(2);
            const text = describeKraftControl(type, r.value);
            expect(text, `${c}/${f} offset ${r.offset} type ${type}`).toBeDefined();
            seen.set(type, (seen.get(type) ?? 0) + 1);
            if (type === 3) expect(JSON.parse(text!.slice('SnapshotHeader '.length)).lastContainedLogTimestamp).toBeLessThanOrEqual(r.timestamp);
          }
        }
      }
    }
    expect([...seen.keys()].sort()).toEqual(expect.arrayContaining([2, 3, 4]));
  });
});
