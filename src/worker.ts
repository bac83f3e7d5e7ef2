import { createLogger } from './logger.js';
import { startMetricsServer } from './metrics/metrics-server.js';
import { closeServices, createServices, startWorkerRole } from './services.js';
import { logUnhandledRejections } from './process-guards.js';
import { loadConfigOrExit } from './startup-checks.js';
import { stopOnSignals } from './process-shutdown.js';

/**
 * A job-processing process (`npm run worker`): runs async runs, batch chunks and callback
 * deliveries from the shared job store; serves no API requests. Start as many as needed next to the API
 * processes. With METRICS_ENABLED it serves its own metrics (async runs, batch elements, callbacks)
 * on WORKER_METRICS_PORT. SIGTERM/SIGINT: stop taking jobs, unlock the ones held (another worker
 * takes them at once; their finished elements are kept), close connections, exit.
 */
async function main(): Promise<void> {
  const config = await loadConfigOrExit();
  const logger = createLogger(config.logLevel);
  logUnhandledRejections(logger);
  const services = await createServices(config, logger);
  const metricsServer =
    services.metricsExposition &&
    (await startMetricsServer(
      services.metricsExposition,
      config.metrics,
      config.metrics.workerPort,
      'WORKER_METRICS_PORT',
      logger,
    ));
  services.engine.warmUp();
  await startWorkerRole(services);
  logger.info({ pid: process.pid, environment: config.environment }, 'worker ready');
  // Start-up lines are written at once, not with the next 4 KiB (src/logger.ts).
  logger.flush();

  stopOnSignals(logger, {
    stopping: 'worker stopping: no new jobs, releasing held ones',
    failed: 'worker did not stop cleanly',
    forceExitMs: 30_000,
    stop: async () => {
      metricsServer?.close();
      await closeServices(services);
    },
  });
}

main().catch((error: unknown) => {
  console.error(`Worker failed to start: ${(error as Error).message}`);
  process.exit(1);
});
