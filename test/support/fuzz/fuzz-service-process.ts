import { startFuzzService, type FuzzService } from './fuzz-service.js';

/**
 * The fuzzer's service process (forked by fuzz-child-session.ts): the app and its worker alone on this event loop,
 * so the holds it measures are the service's own, never the fuzzer's request generation. It answers the fuzzer's
 * questions over the IPC channel (fuzz-ipc.ts) and exits when the channel closes.
 */

let service: FuzzService | undefined;

async function answer(message: { id: number; type: string; requestId?: string }): Promise<unknown> {
  const running = service as FuzzService;
  switch (message.type) {
    case 'causeOf':
      return running.errorLog.causeOf(message.requestId) ?? null;
    case 'eventLoop':
      return { holdsByRequestId: [...running.holdsByRequestId().entries()], longestHolds: running.longestHolds() };
    case 'backgroundErrors':
      return running.errorLog.background;
    case 'close':
      await running.close();
      service = undefined;
      return null;
    default:
      throw new Error(`unknown fuzz service question ${message.type}`);
  }
}

process.on('message', (message: { id: number; type: string; requestId?: string }) => {
  answer(message).then(
    (result) => process.send?.({ id: message.id, result }),
    (error: unknown) => process.send?.({ id: message.id, error: (error as Error).stack ?? String(error) }),
  );
});
process.on('disconnect', () => {
  void (service?.close() ?? Promise.resolve()).finally(() => process.exit(0));
});

startFuzzService({ echoErrors: process.env.FUZZ_ECHO_ERRORS === '1' }).then(
  (started) => {
    service = started;
    process.send?.({ type: 'ready', baseUrl: started.baseUrl, port: started.port, fixtures: started.fixtures });
  },
  (error: unknown) => {
    process.send?.({ type: 'failed', error: (error as Error).stack ?? String(error) });
    process.exitCode = 2;
    process.disconnect?.();
  },
);
