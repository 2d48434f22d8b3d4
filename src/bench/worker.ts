/**
 * Child process of `logtool bench`: runs one scenario (named by the parent over IPC) and sends
 * back its summary, then exits. Its peak RSS is the scenario's own.
 */
import { benchScenarios } from './scenarios.js';
import { makeContext, summarize, type WorkerMessage, type WorkerRequest } from './runner.js';

const send = (m: WorkerMessage): Promise<void> => new Promise((resolve) => process.send!(m, undefined, {}, () => resolve()));

process.once('message', (req: WorkerRequest) => {
  void (async () => {
    try {
      const s = benchScenarios.find((x) => x.name === req.name);
      if (!s) throw new Error(`unknown scenario ${req.name}`);
      const ctx = makeContext(req.ctx, (fraction) => void send({ type: 'progress', fraction }));
      const result = await s.run(ctx);
      await send({ type: 'result', summary: summarize(result, process.resourceUsage().maxRSS / 1024) });
    } catch (e) {
      const err = e as Error;
      await send({ type: 'error', message: err?.message ?? String(e), stack: err?.stack });
    } finally {
      process.disconnect();
    }
  })();
});
