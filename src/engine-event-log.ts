import type { Logger } from 'pino';
import type { EngineEvent } from './engine/index.js';

/** One log line per engine host death, replacement or quarantine: what operators need to find the tenant. */
export function logEngineEvent(logger: Logger, event: EngineEvent): void {
  switch (event.kind) {
    case 'host-died':
      logger.warn(
        {
          host: event.host,
          pid: event.pid,
          exit: event.exit,
          owner: event.owner,
          runsFailed: event.runsFailed,
          runsRequeued: event.runsRequeued,
          // V8's own last words (e.g. "Fatal JavaScript invalid size error", "CALL_AND_RETRY_LAST"), never tenant data
          stderr: event.stderr.slice(-512),
        },
        'engine host died; another took its place',
      );
      return;
    case 'host-replaced':
      logger.info({ host: event.host, reason: event.reason }, 'engine host replaced');
      return;
    case 'tenant-quarantined':
      logger.warn(
        { owner: event.owner, crashes: event.crashes, minutes: Math.round(event.untilMs / 60_000) },
        'tenant quarantined: its runs killed engine hosts repeatedly and now run one at a time on a host of their own',
      );
  }
}
