/**
 * `APP_ENV=local tsx scripts/seed-example.ts` (run by `make run` before the server starts):
 * creates the user `demo` if missing, imports examples/credit-decision.yaml and deploys it through
 * the ScenarioService, then prints a ready-to-paste scoring command. Running it again changes nothing.
 */
import { loadConfig } from '../src/config/config.js';
import { createLogger } from '../src/logger.js';
import { seedExample } from '../src/scenarios/example-seeder.js';
import { closeServices, createServices } from '../src/services.js';

const config = loadConfig();
const services = await createServices(config, createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel));
try {
  const seeded = await seedExample(services);
  const base = `http://localhost:${config.port}`;
  const inputs = JSON.stringify({ income: 52000, existingDebt: 4000, age: 34, employment: 'EMPLOYED' });
  // The score token is stored only as a hash: it can be shown when issued, and otherwise only replaced.
  const key = seeded.scoreToken
    ? [`Score it (${seeded.username}'s score token is shown only now; keep it):`, `  KEY=${seeded.scoreToken}`]
    : [`Score it (${seeded.username}'s score token was shown when it was issued; this gets a new one and retires the old):`,
      `  KEY=$(npm run --silent token -- ${seeded.username} --rotate | node -pe 'JSON.parse(require("fs").readFileSync(0)).scoreToken')`];
  const lines = [
    `seed: user "${seeded.username}" has scenario "${seeded.scenarioName}" (id ${seeded.scenarioId}), deployed version ${seeded.version}${seeded.deployed ? ' (deployed now)' : ' (already deployed)'}.`,
    ...key,
    `  curl -s -X POST "${base}/api/scenario/code/remote/score?name=${encodeURIComponent(seeded.scenarioName)}&key=$KEY" -H 'Content-Type: application/json' -d '${inputs}'`,
    `Bearer token for the management API: npm run --silent token -- ${seeded.username}   (prints JSON with "accessToken")`,
    `  e.g. curl -s "${base}/api/scenario/open/${seeded.scenarioId}?context=${encodeURIComponent(JSON.stringify({ actors: { requester: { username: seeded.username } } }))}" -H "Authorization: Bearer $(npm run --silent token -- ${seeded.username} | node -pe 'JSON.parse(require(\"fs\").readFileSync(0)).accessToken')"`,
  ];
  process.stderr.write(`${lines.join('\n')}\n`);
} catch (error) {
  process.stderr.write(`seed failed: ${(error as Error).message}\n`);
  process.exitCode = 1;
} finally {
  await closeServices(services);
}
