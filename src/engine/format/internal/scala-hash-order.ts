/**
 * The iteration order of Scala 2.13's mutable.HashMap and mutable.HashSet (scala/scala v2.13.15,
 * the Scala version Kafka 4.0 builds with: src/library/scala/collection/mutable/HashMap.scala,
 * HashSet.scala), so that output Kafka prints by iterating one (DumpLogSegments' per-file reports,
 * a transaction's partitions) can be reproduced. The order is deterministic: a table of 16 buckets
 * at first, bucket = improved hash (h ^ (h >>> 16), h the key's Java hashCode) & (length − 1),
 * each bucket sorted by improved hash (signed) and then by insertion; `add`/`put` doubles the
 * table first when size + 1 reaches 0.75 of its length (even for a key already present), and
 * `addAll` of a collection of known size n first grows it to tableSizeFor((n + 1) / 0.75).
 */

/** Java's String.hashCode (UTF-16 code units, int32 arithmetic). */
export function javaStringHash(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
  return h;
}

const LOAD_FACTOR = 0.75;
/** HashSet/HashMap.tableSizeFor. */
const tableSizeFor = (capacity: number): number => Math.min(2 ** Math.floor(Math.log2(Math.max(capacity - 1, 4))) * 2, 2 ** 30);

/** A Scala mutable hash table's keys (by identity `id`, with their Java hash) and their order. */
export class ScalaHashOrder<V> {
  private tableLength = 16;
  private readonly entries = new Map<string, { hash: number; seq: number; value: V }>();

  /** HashMap.put / HashSet.add: the growth check, then the key if it is new (a known key keeps its place, takes the value). */
  put(id: string, javaHash: number, value: V): void {
    if (this.entries.size + 1 >= Math.floor(this.tableLength * LOAD_FACTOR)) this.tableLength *= 2;
    const known = this.entries.get(id);
    if (known) known.value = value;
    else this.entries.set(id, { hash: javaHash ^ (javaHash >>> 16), seq: this.entries.size, value });
  }

  /** addElem alone, as addAll adds the elements of an immutable HashSet (no growth check). */
  putWithoutGrowth(id: string, javaHash: number, value: V): void {
    if (!this.entries.has(id)) this.entries.set(id, { hash: javaHash ^ (javaHash >>> 16), seq: this.entries.size, value });
  }

  /** sizeHint(n), as addAll calls it for a collection of known size n. */
  sizeHint(n: number): void {
    this.tableLength = Math.max(this.tableLength, tableSizeFor(Math.floor((n + 1) / LOAD_FACTOR)));
  }

  get(id: string): V | undefined {
    return this.entries.get(id)?.value;
  }

  /** [id, value] in the order the Scala table iterates. */
  ordered(): [string, V][] {
    const mask = this.tableLength - 1;
    return [...this.entries]
      .sort(([, a], [, b]) => (a.hash & mask) - (b.hash & mask) || a.hash - b.hash || a.seq - b.seq)
      .map(([id, e]) => [id, e.value]);
  }
}

/**
 * A Scala mutable.Map[String, V] keyed by file path (DumpLogSegments' report maps): `set` is put,
 * iteration is the Scala table's order.
 */
export class ScalaStringMap<V> {
  private readonly order = new ScalaHashOrder<V>();

  get(key: string): V | undefined {
    return this.order.get(key);
  }

  set(key: string, value: V): void {
    this.order.put(key, javaStringHash(key), value);
  }

  values(): V[] {
    return this.order.ordered().map(([, v]) => v);
  }

  [Symbol.iterator](): Iterator<[string, V]> {
    return this.order.ordered()[Symbol.iterator]();
  }
}
