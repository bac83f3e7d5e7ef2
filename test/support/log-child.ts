/**
 * A child process for test/logger.test.ts: logs one line through the service's logger, then
 * `stay` (keeps running until killed), `exit` (process.exit at once), or `throw` (an uncaught exception).
 */
import { createLogger } from '../../src/logger.js';

const mode = process.argv[2];
const logger = createLogger('info');
logger.info({ mode }, 'one short line');
if (mode === 'stay') setInterval(() => undefined, 1000);
else if (mode === 'exit') process.exit(3);
else if (mode === 'throw')
  setImmediate(() => {
    throw new Error('boom');
  });
