/**
 * `logtool transactions abort <dir> --producer-id P [--producer-epoch E]`: ends a partition's open
 * transaction with an ABORT marker, as Kafka's coordinator or `kafka-transactions.sh abort` would
 * (partition-state/abort-transaction.ts), and records it in `.txnindex`, so read_committed readers
 * and the cleaner move past it. A writable command: it takes the writer lock, so it is refused
 * while another writer or a broker holds the directory.
 */
import { Command } from 'commander';
import { LogtoolError } from '../api/format.js';
import { abortTarget, abortTransaction } from '../inspect/abort-transaction.js';
import { partitionProducerState } from '../inspect/log.js';
import { Output } from '../render/output.js';
import { closeAfter } from './close-after.js';
import { openLog, parseInteger, type WarningCounter } from './shared.js';

interface AbortOpts {
  producerId?: number;
  producerEpoch?: number;
  json?: boolean;
}

export function abortCommand(): Command {
  return new Command('abort')
    .description("append an ABORT marker for a producer's open transaction (as a transaction coordinator would)")
    .argument('<dir>', 'partition directory')
    .option('--producer-id <id>', 'the producer whose open transaction is aborted', parseInteger('--producer-id', 0))
    .option('--producer-epoch <epoch>', "the marker's producer epoch (default: the producer's current one; never older)", parseInteger('--producer-epoch', 0))
    .option('--json', 'print the report as one JSON object')
    .addHelpText(
      'after',
      `
The marker carries the producer's last known coordinator epoch (0 if none) and the latest leader epoch
of leader-epoch-checkpoint (else the producer's last batch's). Only abort a transaction no running
producer or coordinator still owns: find them with \`logtool transactions find-hanging\`.

Examples:
  logtool transactions abort /var/lib/kafka/data/payments-3 --producer-id 4001
  logtool transactions abort logdata/orders-0 --producer-id 7 --producer-epoch 2 --json`,
    )
    .action(async (dir: string, opts: AbortOpts) => {
      if (opts.producerId === undefined) throw new LogtoolError('usage', '--producer-id is required');
      const out = new Output();
      const counter: WarningCounter = { count: 0 };
      // Refuse on a read-only open first: a refused abort opens nothing for writing, writes nothing.
      const reader = openLog(dir, { readOnly: true });
      try {
        abortTarget(partitionProducerState(reader), { producerId: opts.producerId, producerEpoch: opts.producerEpoch }, reader.dir);
      } finally {
        await reader.close();
      }
      const log = openLog(dir, { create: false }, counter);
      const r = await closeAfter(log, () => abortTransaction(log, { producerId: opts.producerId!, producerEpoch: opts.producerEpoch }));
      if (opts.json) await out.json(r);
      else
        await out.line(
          `aborted the transaction of producer ${r.producerId} (epoch ${r.producerEpoch}) from offset ${r.firstOffset}: ABORT marker at offset ${r.markerOffset} ` +
            `(coordinator epoch ${r.coordinatorEpoch}, leader epoch ${r.partitionLeaderEpoch}); last stable offset now ${r.txnIndexEntry.lastStableOffset}`,
        );
      await out.flush();
      if (counter.count > 0) process.exitCode = 3;
    });
}
