import express, { type Router } from 'express';
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

/** `/health/live`: the process answers. `/health/ready`: MySQL and the job store answer too. */
export function healthRouter(checks: HealthChecks): Router {
  const router = express.Router(ROUTE_MATCHING);
  router.get('/health/live', (_request, response) => {
    response.json({ status: 'ok' });
  });
  router.get('/health/ready', async (_request, response) => {
    const [database, jobStore] = await Promise.all([outcome(checks.database), outcome(checks.jobStore)]);
    const ready = database === 'ok' && jobStore === 'ok';
    response.status(ready ? 200 : 503).json({ status: ready ? 'ok' : 'unavailable', checks: { database, jobStore } });
  });
  return router;
}
