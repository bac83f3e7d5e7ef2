import express, { type Router } from 'express';
import { RETRY_AFTER_SECONDS } from '../errors/error-handler.js';
import { ROUTE_MATCHING } from './route-matching.js';

export interface HealthChecks {
  database(): Promise<void>;
  jobStore(): Promise<void>;
}

async function outcome(check: () => Promise<void>): Promise<'ok' | string> {
  try {
    await check();
    return 'ok';
  } catch (error) {
    return `unavailable: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/**
 * `/health/live`: the process answers (it stays up through MySQL and job-store outages).
 * `/health/ready`: MySQL and the job store answer too; otherwise 503 with `Retry-After`, naming
 * the one that does not (`checks.database` / `checks.jobStore`: "unavailable: …").
 */
export function healthRouter(checks: HealthChecks): Router {
  const router = express.Router(ROUTE_MATCHING);
  router.get('/health/live', (_request, response) => {
    response.json({ status: 'ok' });
  });
  router.get('/health/ready', async (_request, response) => {
    const [database, jobStore] = await Promise.all([outcome(checks.database), outcome(checks.jobStore)]);
    const ready = database === 'ok' && jobStore === 'ok';
    if (!ready) response.set('Retry-After', String(RETRY_AFTER_SECONDS));
    response.status(ready ? 200 : 503).json({ status: ready ? 'ok' : 'unavailable', checks: { database, jobStore } });
  });
  return router;
}
