/**
 * `npm run test:consumer`: what a consumer's CI does with this service's contract.
 * 1. Starts the real service (src/main.ts) on a free port of 127.0.0.1, against the test database and job store
 *    (APP_ENV=test; DATABASE_URL and JOBS_URL are honoured), after migrating it.
 * 2. Generates two clients from the served /openapi.json, with default options, into test/consumer/generated/
 *    (gitignored): openapi-typescript (types for openapi-fetch) and @hey-api/openapi-ts (SDK + fetch client).
 * 3. Compiles the two README tours (test/consumer/tours/) and the generated code with `tsc --strict`.
 * 4. Runs each tour against the service, as its own new user.
 * Prints one line per step and `consumer: N passed, N failed`; exits 1 when anything failed. The tours run even
 * when the compile fails, so the output shows both what does not type-check and what does not work.
 * `-- --base-url URL` uses a service that is already running instead (its users are made with scripts/token.ts
 * of this checkout, so it must share DATABASE_URL and the JWT secret).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = fileURLToPath(new URL('../..', import.meta.url));
const generated = fileURLToPath(new URL('./generated/', import.meta.url));
const bin = (name: string) => `${root}node_modules/.bin/${name}`;

interface Outcome { code: number; output: string }

/** Runs a command to its end, echoing its output with an indent, and answers its exit code and output. */
function run(command: string, args: string[], env: NodeJS.ProcessEnv = {}, quiet = false): Promise<Outcome> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const take = (chunk: Buffer) => {
      output += chunk.toString();
      if (!quiet) process.stdout.write(chunk.toString().replace(/^(?=.)/gm, '    '));
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.on('close', (code) => resolve({ code: code ?? 1, output }));
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function waitUntilReady(baseUrl: string, service: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (service.exitCode !== null) throw new Error(`the service exited with code ${service.exitCode} before it was ready`);
    const ready = await fetch(`${baseUrl}/health/ready`).then((response) => response.status === 200, () => false);
    if (ready) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`the service was not ready within ${timeoutMs} ms`);
}

interface Tokens { username: string; accessToken: string; scoreToken: string }

async function newUser(prefix: string, env: NodeJS.ProcessEnv): Promise<Tokens> {
  const { code, output } = await run(process.execPath, ['--import', 'tsx', 'scripts/token.ts', `${prefix}-${randomUUID().slice(0, 8)}`], env, true);
  if (code !== 0) throw new Error(`scripts/token.ts failed: ${output}`);
  return JSON.parse(output.trim().split('\n').pop() ?? '{}') as Tokens;
}

/** openapi-fetch cannot send multipart without a custom serialiser (see its tour): the CSV is loaded here for it. */
async function loadCustomers(baseUrl: string, tokens: Tokens): Promise<void> {
  const form = new FormData();
  form.append('file', new Blob(['customer_id,segment,limit\n1,RETAIL,5000\n2,SME,20000\n'], { type: 'text/csv' }), 'customers.csv');
  const response = await fetch(`${baseUrl}/api/internaldata/collections/loadData/customers?fileName=customers.csv&indexes=customer_id,true`, {
    method: 'POST', headers: { Authorization: `Bearer ${tokens.accessToken}` }, body: form,
  });
  if (response.status !== 201 && response.status !== 200) throw new Error(`loading the CSV for the openapi-fetch tour answered ${response.status}: ${await response.text()}`);
}

const results: Array<[string, boolean]> = [];
const serviceEnv: NodeJS.ProcessEnv = { APP_ENV: 'test', NODE_ENV: 'test', LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn', NODE_OPTIONS: '' };
let service: ChildProcess | undefined;
const runningService = parseArgs({ options: { 'base-url': { type: 'string' } } }).values['base-url'];

try {
  console.log('== consumer tests: migrate the test database');
  const migrated = await run(process.execPath, ['--import', 'tsx', 'scripts/migrate.ts'], serviceEnv);
  if (migrated.code !== 0) throw new Error('migration failed');

  let baseUrl = runningService?.replace(/\/$/, '') ?? '';
  if (!runningService) {
    baseUrl = `http://127.0.0.1:${await freePort()}`;
    console.log(`== start the service on ${baseUrl}`);
    service = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd: root, env: { ...process.env, ...serviceEnv, PORT: new URL(baseUrl).port }, stdio: ['ignore', 'inherit', 'inherit'] });
    await waitUntilReady(baseUrl, service, 60_000);
  }

  console.log(`== generate clients from ${baseUrl}/openapi.json`);
  await rm(generated, { recursive: true, force: true });
  const openapiTypescript = await run(bin('openapi-typescript'), [`${baseUrl}/openapi.json`, '-o', `${generated}openapi-typescript/schema.ts`]);
  const heyApi = await run(bin('openapi-ts'), ['-i', `${baseUrl}/openapi.json`, '-o', `${generated}hey-api`]);
  results.push(['openapi-typescript generates', openapiTypescript.code === 0], ['@hey-api/openapi-ts generates', heyApi.code === 0]);

  console.log('== tsc --strict on the tours and the generated clients (test/consumer/tsconfig.json)');
  const compiled = await run(bin('tsc'), ['-p', 'test/consumer/tsconfig.json']);
  results.push(['the tours type-check (tsc --strict)', compiled.code === 0]);

  const tourEnv = async (prefix: string) => {
    const tokens = await newUser(prefix, serviceEnv);
    return { tokens, env: { CONSUMER_BASE_URL: baseUrl, CONSUMER_USERNAME: tokens.username, CONSUMER_ACCESS_TOKEN: tokens.accessToken, CONSUMER_SCORE_TOKEN: tokens.scoreToken } };
  };
  console.log('== the README tour with openapi-fetch');
  const fetchTour = await tourEnv('consumer-openapi-fetch');
  await loadCustomers(baseUrl, fetchTour.tokens);
  results.push(['the openapi-fetch tour', (await run(process.execPath, ['--import', 'tsx', 'test/consumer/tours/openapi-fetch-tour.ts'], fetchTour.env)).code === 0]);
  console.log('== the README tour with @hey-api/openapi-ts');
  const heyTour = await tourEnv('consumer-hey-api');
  results.push(['the @hey-api/openapi-ts tour', (await run(process.execPath, ['--import', 'tsx', 'test/consumer/tours/hey-api-tour.ts'], heyTour.env)).code === 0]);
} catch (error) {
  console.log(`consumer tests could not run: ${(error as Error).message}`);
  results.push(['the consumer tests ran', false]);
} finally {
  if (service && service.exitCode === null) {
    const exited = new Promise((resolve) => service?.once('exit', resolve));
    service.kill('SIGTERM');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
    if (service.exitCode === null) service.kill('SIGKILL');
  }
}

for (const [name, passed] of results) console.log(`  ${passed ? 'ok    ' : 'FAILED'}  ${name}`);
const failed = results.filter(([, passed]) => !passed).length;
console.log(`consumer: ${results.length - failed} passed, ${failed} failed`);
process.exitCode = failed === 0 ? 0 : 1;
