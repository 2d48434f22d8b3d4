/**
 * KRaft metadata records encoded by hand (AbstractApiMessageSerde: frame version 1, apiKey, version
 * as unsigned varints, then the flexible v0 message of metadata/src/main/resources/common/metadata/
 * *Record.json with an empty tagged-field section), and a `__cluster_metadata-0`-style log of them.
 */
import { Log } from '../../src/engine/log/log.js';

const uvarint = (n: number): Buffer => {
  const out: number[] = [];
  while (n >= 0x80) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return Buffer.from(out);
};
const compactString = (s: string | null): Buffer => (s === null ? uvarint(0) : Buffer.concat([uvarint(Buffer.byteLength(s) + 1), Buffer.from(s)]));
const frame = (apiKey: number, body: Buffer[]): Buffer => Buffer.concat([uvarint(1), uvarint(apiKey), uvarint(0), ...body, uvarint(0)]);
const uuid = (n: number): Buffer => Buffer.alloc(16, n);
export const topicRecord = (name: string, id: number): Buffer => frame(2, [compactString(name), uuid(id)]);
export const removeTopicRecord = (id: number): Buffer => frame(9, [uuid(id)]);
export const configRecord = (type: number, resource: string, name: string, value: string | null): Buffer =>
  frame(4, [Buffer.from([type]), compactString(resource), compactString(name), compactString(value)]);

export async function writeMetadataLog(dir: string, values: Buffer[]): Promise<void> {
  const log = Log.open(dir, { config: { flushMode: 'async' } });
  for (const value of values) await log.append([{ key: null, value, timestamp: 1_700_000_000_000 }]);
  await log.close();
}
