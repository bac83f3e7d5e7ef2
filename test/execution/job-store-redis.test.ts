import { applyTestEnvironment } from '../support/test-environment.js';
import { jobStoreContract } from './support/job-store-contract.js';

/** The job store contract on Redis (JOBS_URL, the test Redis): each test under a key prefix of its own. */
applyTestEnvironment();
jobStoreContract('Redis (@agendajs/redis-backend)', () => ({ newJobsUrl: async () => process.env.JOBS_URL as string }));
