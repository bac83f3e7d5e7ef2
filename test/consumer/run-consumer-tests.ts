/**
 * `npm run test:consumer`: what a consumer's CI does with this service's contract, with four generators.
 * 1. Starts the real service (src/main.ts) on a free port of 127.0.0.1, against the test database and job store
 *    (APP_ENV=test; DATABASE_URL and JOBS_URL are honoured), after migrating it.
 * 2. Generates a client from the served /openapi.json with each generator's default options, into
 *    test/consumer/generated/<generator>/ (gitignored): openapi-typescript (types for openapi-fetch),
 *    @hey-api/openapi-ts, orval (its default axios functions, plus the one option it needs: see
 *    tours/orval-axios.ts) and swagger-typescript-api.
 * 3. Per generator: compiles its tour (test/consumer/tours/<generator>-tour.ts, shared steps in steps.ts) with the
 *    generated code under `tsc --strict` (test/consumer/tsconfig.json), counts the casts in the tour's source,
 *    checks that the tour calls every operation of the spec (generated/routes.ts), and runs it against the service
 *    as a new user.
 * Prints, per generator, type errors, casts, operations covered and steps passed of total; exits 1 unless every
 * generator has 0 type errors, 0 casts, every operation and every step passed. The tours run even when the compile
 * fails, so the output shows both what does not type-check and what does not work.
 * `-- --base-url URL` uses a service that is already running instead (its users are made with scripts/token.ts
 * of this checkout, so it must share DATABASE_URL and the JWT secret). `-- --only <generator>` runs one.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { routes } from '../../generated/routes.js';
import { castsIn, operationsCalledBy } from './tour-source.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const generated = fileURLToPath(new URL('./generated/', import.meta.url));
const tours = fileURLToPath(new URL('./tours/', import.meta.url));
const bin = (name: string) => `${root}node_modules/.bin/${name}`;

interface Outcome {
  code: number;
  output: string;
}

/** Runs a command to its end, echoing its output with an indent, and answers its exit code and output. */
function run(command: string, args: string[], env: NodeJS.ProcessEnv = {}, quiet = false): Promise<Outcome> {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
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
    if (service.exitCode !== null)
      throw new Error(`the service exited with code ${service.exitCode} before it was ready`);
    const ready = await fetch(`${baseUrl}/health/ready`).then(
      (response) => response.status === 200,
      () => false,
    );
    if (ready) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`the service was not ready within ${timeoutMs} ms`);
}

interface Tokens {
  username: string;
  accessToken: string;
  scoreToken: string;
}

async function newUser(prefix: string, env: NodeJS.ProcessEnv): Promise<Tokens> {
  const { code, output } = await run(
    process.execPath,
    ['--import', 'tsx', 'scripts/token.ts', `${prefix}-${randomUUID().slice(0, 8)}`],
    env,
    true,
  );
  if (code !== 0) throw new Error(`scripts/token.ts failed: ${output}`);
  return JSON.parse(output.trim().split('\n').pop() ?? '{}') as Tokens;
}

/** One generator: how it generates its client from the served document, and the tour that drives it. */
interface Generator {
  /** Folder under generated/, and the tour's file name (`tours/<name>-tour.ts`). */
  name: string;
  title: string;
  generate: (specUrl: string, output: string) => Promise<Outcome>;
  /** Hand-written files of the tour besides the tour itself (scanned for casts too). */
  helpers?: string[];
}

const generators: Generator[] = [
  {
    name: 'openapi-fetch',
    title: 'openapi-typescript + openapi-fetch',
    generate: (specUrl, output) => run(bin('openapi-typescript'), [specUrl, '-o', `${output}schema.ts`]),
  },
  {
    name: 'hey-api',
    title: '@hey-api/openapi-ts (fetch client)',
    generate: (specUrl, output) => run(bin('openapi-ts'), ['-i', specUrl, '-o', output]),
  },
  {
    name: 'orval',
    title: 'orval (axios functions)',
    helpers: ['orval-axios.ts'],
    // Defaults, plus the one option orval 7 needs with axios 1.21's typings: its request function (tours/orval-axios.ts).
    generate: async (specUrl, output) => {
      const config = `${output}orval.config.cjs`;
      await writeFile(
        config,
        `module.exports = ${JSON.stringify(
          {
            scoring: {
              input: { target: specUrl },
              output: {
                target: 'api.ts',
                override: { mutator: { path: '../../tours/orval-axios.ts', name: 'orvalAxios', extension: '.js' } },
              },
            },
          },
          null,
          2,
        )};\n`,
      );
      return run(bin('orval'), ['--config', config]);
    },
  },
  {
    name: 'swagger-typescript-api',
    title: 'swagger-typescript-api (Api class, fetch)',
    generate: (specUrl, output) =>
      run(bin('swagger-typescript-api'), ['generate', '--path', specUrl, '--output', output]),
  },
];

interface Report {
  title: string;
  generated: boolean;
  typeErrors: number;
  casts: string[];
  operationsMissing: string[];
  passed: number;
  total: number;
  ran: boolean;
}

const reports: Report[] = [];
const failures: string[] = [];
const serviceEnv: NodeJS.ProcessEnv = {
  APP_ENV: 'test',
  NODE_ENV: 'test',
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
  NODE_OPTIONS: '',
};
let service: ChildProcess | undefined;
const args = parseArgs({ options: { 'base-url': { type: 'string' }, only: { type: 'string' } } }).values;
const runningService = args['base-url'];
const chosen = generators.filter((generator) => !args.only || generator.name === args.only);

/** Compiles one generator's tour and client on their own, so each generator's type errors are its own. */
async function compile(generator: Generator): Promise<number> {
  const tsconfig = `${generated}tsconfig.${generator.name}.json`;
  await writeFile(
    tsconfig,
    JSON.stringify(
      {
        extends: '../tsconfig.json',
        include: [`../tours/${generator.name}-tour.ts`, '../tours/steps.ts', `${generator.name}/**/*.ts`],
      },
      null,
      2,
    ),
  );
  const { output } = await run(bin('tsc'), ['-p', tsconfig]);
  return output.split('\n').filter((line) => /error TS\d+/.test(line)).length;
}

/** Steps passed and total, from the tour's last line (`steps: N of M passed`). */
function stepsOf(output: string): { passed: number; total: number } {
  const match = /steps: (\d+) of (\d+) passed/.exec(output);
  return match ? { passed: Number(match[1]), total: Number(match[2]) } : { passed: 0, total: 0 };
}

try {
  console.log('== consumer tests: migrate the test database');
  const migrated = await run(process.execPath, ['--import', 'tsx', 'scripts/migrate.ts'], serviceEnv);
  if (migrated.code !== 0) throw new Error('migration failed');

  let baseUrl = runningService?.replace(/\/$/, '') ?? '';
  if (!runningService) {
    baseUrl = `http://127.0.0.1:${await freePort()}`;
    console.log(`== start the service on ${baseUrl}`);
    service = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: root,
      env: { ...process.env, ...serviceEnv, PORT: new URL(baseUrl).port },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    await waitUntilReady(baseUrl, service, 60_000);
  }
  await rm(generated, { recursive: true, force: true });

  for (const generator of chosen) {
    const output = `${generated}${generator.name}/`;
    await mkdir(output, { recursive: true });
    console.log(`== ${generator.title}: generate from ${baseUrl}/openapi.json`);
    const generatedOk = (await generator.generate(`${baseUrl}/openapi.json`, output)).code === 0;
    console.log(`== ${generator.title}: tsc --strict on the tour and the generated client`);
    const typeErrors = await compile(generator);
    const sources = await Promise.all(
      [`${generator.name}-tour.ts`, ...(generator.helpers ?? [])].map((file) =>
        readFile(`${tours}${file}`, 'utf8').then((text) => ({ file, text })),
      ),
    );
    const casts = sources.flatMap(({ file, text }) =>
      castsIn(text).map((cast) => `${file}:${cast.line}: ${cast.text}`),
    );
    const operationsMissing = routes
      .map((route) => route.operationId)
      .filter((id) => !operationsCalledBy(sources[0]?.text ?? '', routes).has(id));

    console.log(`== ${generator.title}: the tour, as a new user`);
    const tokens = await newUser(`consumer-${generator.name}`, serviceEnv);
    const tour = await run(process.execPath, ['--import', 'tsx', `test/consumer/tours/${generator.name}-tour.ts`], {
      CONSUMER_BASE_URL: baseUrl,
      CONSUMER_USERNAME: tokens.username,
      CONSUMER_ACCESS_TOKEN: tokens.accessToken,
      CONSUMER_SCORE_TOKEN: tokens.scoreToken,
    });
    reports.push({
      title: generator.title,
      generated: generatedOk,
      typeErrors,
      casts,
      operationsMissing,
      ...stepsOf(tour.output),
      ran: tour.code === 0,
    });
  }
} catch (error) {
  console.log(`consumer tests could not run: ${(error as Error).message}`);
  failures.push('the consumer tests ran');
} finally {
  if (service && service.exitCode === null) {
    const exited = new Promise((resolve) => service?.once('exit', resolve));
    service.kill('SIGTERM');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
    if (service.exitCode === null) service.kill('SIGKILL');
  }
}

console.log(
  '\n== consumer tests, per generator (the bar: generates, 0 type errors, 0 casts, every operation, every step)',
);
console.log(
  `  ${'generator'.padEnd(44)} ${'generates'.padEnd(10)} ${'type errors'.padEnd(12)} ${'casts'.padEnd(6)} ${'operations'.padEnd(11)} steps passed`,
);
for (const report of reports) {
  const operations = `${routes.length - report.operationsMissing.length}/${routes.length}`;
  console.log(
    `  ${report.title.padEnd(44)} ${(report.generated ? 'yes' : 'NO').padEnd(10)} ${String(report.typeErrors).padEnd(12)} ${String(report.casts.length).padEnd(6)} ${operations.padEnd(11)} ${report.passed}/${report.total}`,
  );
  for (const cast of report.casts) console.log(`      cast: ${cast}`);
  if (report.operationsMissing.length > 0)
    console.log(`      operations not called: ${report.operationsMissing.join(', ')}`);
  const ok =
    report.generated &&
    report.typeErrors === 0 &&
    report.casts.length === 0 &&
    report.operationsMissing.length === 0 &&
    report.ran &&
    report.total > 0 &&
    report.passed === report.total;
  if (!ok) failures.push(report.title);
}
if (reports.length < chosen.length)
  failures.push(...chosen.slice(reports.length).map((generator) => `${generator.title} (not run)`));
console.log(
  failures.length === 0
    ? `consumer: all ${reports.length} generators passed`
    : `consumer: FAILED: ${failures.join('; ')}`,
);
process.exitCode = failures.length === 0 ? 0 : 1;
