import { createApp } from './app.js';
import { appDependencies } from './handler-map.js';
import { listen } from './net/listen.js';
import { createLogger } from './logger.js';
import { gracefulClose } from './http/graceful-close.js';
import { createHttpServer } from './http/server.js';
import { startMetricsServer } from './metrics/metrics-server.js';
import { closeServices, createServices, startWorkerRole } from './services.js';
import { logUnhandledRejections } from './process-guards.js';
import { loadConfigOrExit } from './startup-checks.js';
import { stopOnSignals } from './process-shutdown.js';

/**
 * SIGTERM budget (docs/execution.md, "Graceful shutdown"): HTTP connections drain within
 * HTTP_DRAIN_TIMEOUT_MS (an idle connection is closed after IDLE_CLOSE_MS without a request), jobs
 * within the queue's 20 s, then records, statistics and logs are flushed; the process is forced out
 * (exit 1) only at FORCE_EXIT_MS, inside the 30 s grace period orchestrators give by default.
 */
const IDLE_CLOSE_MS = 1000;
const HTTP_DRAIN_TIMEOUT_MS = 10_000;
const FORCE_EXIT_MS = 28_000;

async function main(): Promise<void> {
  const config = await loadConfigOrExit();
  const logger = createLogger(config.logLevel);
  logUnhandledRejections(logger);
  const services = await createServices(config, logger);
  await services.internalData
    .removeOrphanTables()
    .catch((error: unknown) => logger.error({ err: error }, 'could not look for tables left by interrupted loads'));
  const app = createApp(appDependencies(services));
  const server = createHttpServer(app, { maxHeaderBytes: config.limits.headerBytes, logger });
  server.keepAliveTimeout = 65_000;
  // Attached before listening, so that every connection is known to the close.
  const closeHttp = gracefulClose(server);
  await listen(server, config.port, { host: config.host, variable: 'PORT' });
  server.on('error', (error) => logger.error({ err: error }, 'HTTP server error'));
  logger.info(
    { host: config.host ?? 'every address', port: config.port, environment: config.environment },
    'listening',
  );
  // Start-up lines are written at once (an operator or a supervisor waits for them), not with the next 4 KiB.
  logger.flush();
  services.engine.warmUp();
  // Metrics on a listener of their own (METRICS_HOST:METRICS_PORT), never on the API's port.
  const metricsServer =
    services.metricsExposition &&
    (await startMetricsServer(services.metricsExposition, config.metrics, config.metrics.port, 'METRICS_PORT', logger));
  // The API runs an in-process execution worker unless RUN_WORKER=false (then run `npm run worker` processes).
  if (services.execution.settings.workerInApiProcess) await startWorkerRole(services);

  stopOnSignals(logger, {
    stopping: 'stopping: no new requests, finishing the ones in flight',
    failed: 'the API did not stop cleanly',
    forceExitMs: FORCE_EXIT_MS,
    stop: async () => {
      // Stop taking jobs at once (running ones finish or hand the rest back) while in-flight requests finish.
      const jobsStopped = services.execution
        .close()
        .catch((error: unknown) => logger.error({ err: error }, 'stopping the execution worker failed'));
      metricsServer?.close();
      const report = await closeHttp({ idleCloseMs: IDLE_CLOSE_MS, timeoutMs: HTTP_DRAIN_TIMEOUT_MS });
      logger.info(report, 'HTTP connections closed');
      await jobsStopped;
      // Decision records still buffered, run statistics, then the logs: after the last request and job.
      await closeServices(services);
    },
  });
}

main().catch((error: unknown) => {
  console.error(`Failed to start: ${(error as Error).message}`);
  process.exit(1);
});
