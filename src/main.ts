import { createApp } from './app.js';
import { createHandlerMap } from './http/handler-map.js';
import { listen } from './http/listen.js';
import { createLogger } from './logger.js';
import { createHttpServer } from './http/server.js';
import { startMetricsServer } from './metrics/metrics-server.js';
import { closeServices, createServices, fastLaneOperations, healthChecks, startWorkerRole } from './services.js';
import { logUnhandledRejections } from './process-guards.js';
import { loadConfigOrExit } from './startup-checks.js';

async function main(): Promise<void> {
  const config = await loadConfigOrExit();
  const logger = createLogger(config.logLevel);
  logUnhandledRejections(logger);
  const services = await createServices(config, logger);
  await services.internalData.removeOrphanTables().catch((error: unknown) => logger.error({ err: error }, 'could not look for tables left by interrupted loads'));
  const app = createApp({
    config,
    logger,
    users: services.users,
    handlers: createHandlerMap(services),
    health: healthChecks(services),
    fastLane: fastLaneOperations(services),
    yamlParser: services.yamlParser,
  });
  const server = createHttpServer(app, { maxHeaderBytes: config.limits.headerBytes, logger });
  server.keepAliveTimeout = 65_000;
  await listen(server, config.port, { host: config.host, variable: 'PORT' });
  server.on('error', (error) => logger.error({ err: error }, 'HTTP server error'));
  logger.info({ host: config.host ?? 'every address', port: config.port, environment: config.environment }, 'listening');
  // Start-up lines are written at once (an operator or a supervisor waits for them), not with the next 4 KiB.
  logger.flush();
  services.engine.warmUp();
  // Metrics on a listener of their own (METRICS_HOST:METRICS_PORT), never on the API's port.
  const metricsServer = services.metricsExposition && await startMetricsServer(services.metricsExposition, config.metrics, config.metrics.port, 'METRICS_PORT', logger);
  // The API runs an in-process execution worker unless RUN_WORKER=false (then run `npm run worker` processes).
  if (services.execution.settings.workerInApiProcess) await startWorkerRole(services);

  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping: no new requests, finishing the ones in flight');
    logger.flush();
    const force = setTimeout(() => process.exit(1), 30_000);
    force.unref();
    // Stop taking jobs at once (held ones are unlocked for other workers) while in-flight requests finish.
    const jobsStopped = services.execution.close().catch((error: unknown) => logger.error({ err: error }, 'stopping the execution worker failed'));
    metricsServer?.close();
    server.close(() => {
      jobsStopped
        .then(() => closeServices(services))
        .then(() => logger.flush())
      .then(() => process.exit(0))
        .catch(() => process.exit(1));
    });
    server.closeIdleConnections();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((error: unknown) => {
  console.error(`Failed to start: ${(error as Error).message}`);
  process.exit(1);
});
