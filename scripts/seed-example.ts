/**
 * `APP_ENV=local tsx scripts/seed-example.ts` (run by `make run` before the server starts):
 * creates the user `demo` if missing, imports examples/credit-decision.yaml and deploys it through
 * the ScenarioService, makes the record, batch and replays the spec's examples name by id (scripts/example-runs.ts:
 * /docs executes them as pre-filled), then prints ready-to-paste commands (src/scenarios/example-instructions.ts:
 * they carry this process's APP_ENV and DATABASE_URL). Running it again changes nothing.
 */
import { loadConfig } from '../src/config/config.js';
import { createLogger } from '../src/logger.js';
import { exampleInstructions } from '../src/scenarios/example-instructions.js';
import { seedExample } from '../src/scenarios/example-seeder.js';
import { closeServices, createServices } from '../src/services.js';
import { seedExampleRuns } from './example-runs.js';

const config = loadConfig();
const services = await createServices(config, createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel));
try {
  const seeded = await seedExample(services);
  const made = await seedExampleRuns(services, seeded);
  const lines = [
    ...exampleInstructions(seeded, config),
    ...(made.length > 0 ? [`seed: made what /docs names by id: ${made.join(', ')}.`] : []),
  ];
  process.stderr.write(`${lines.join('\n')}\n`);
} catch (error) {
  process.stderr.write(`seed failed: ${(error as Error).message}\n`);
  process.exitCode = 1;
} finally {
  await closeServices(services);
}
