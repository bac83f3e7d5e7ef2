import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { loadSpec } from '../../src/http/api-docs.js';
import { httpRequest } from '../support/service-process.js';
import { startSeededService, type SeededService } from '../support/seeded-service.js';

/**
 * /docs in a real browser, as a new user meets it: the service as `make run` leaves it (a new database, the example
 * scenario seeded), Swagger UI authorized with demo's bearer token and score token (the only typing), and
 * openScenario, scoreScenario, submitBatch and listDecisionRecords (and listScenarios, scoreAsync,
 * getAsyncScoreResult, and the operations naming the seeded record, batch and replays by id) executed with the
 * values the page pre-fills. Debian's Chromium (/usr/bin/chromium) driven by playwright-core; screenshots in
 * test/browser/screenshots/ (not committed). Without /usr/bin/chromium the browser tests are skipped.
 */
const CHROMIUM = '/usr/bin/chromium';
const SCREENSHOTS = fileURLToPath(new URL('./screenshots/', import.meta.url));
// Without the background-networking flags Chromium's own connections are refused on a closed network.
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium)
  console.warn(
    `test/browser/docs-page.test.ts: skipping the /docs browser tests: ${CHROMIUM} is not installed (apt-get install chromium)`,
  );

let service: SeededService;
let context: BrowserContext | undefined;
let page: Page;
let profile: string | undefined;

beforeAll(async () => {
  service = await startSeededService();
  if (!hasChromium) return;
  await mkdir(SCREENSHOTS, { recursive: true });
  profile = await mkdtemp(join(tmpdir(), 'docs-page-chromium-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 1000 },
  });
  page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(15_000);
}, 90_000);

afterAll(async () => {
  await context?.close();
  if (profile) await rm(profile, { recursive: true, force: true });
  await service?.stop();
});

describe('a new install', () => {
  it("gives the example scenario and its first test case the ids the spec's examples name", async () => {
    const bearer = { Authorization: `Bearer ${service.accessToken}` };
    const listed = await httpRequest(service.port, 'GET', '/api/scenario', { headers: bearer });
    expect(listed.body.scenarios.map((scenario: { id: string; name: string }) => [scenario.id, scenario.name])).toEqual(
      [['1', 'credit-decision']],
    );
    const opened = await httpRequest(service.port, 'GET', '/api/scenario/open/1', { headers: bearer });
    expect(opened.body.testCases[0].id).toBe('1');
  });

  it('has the record, batch, replays, shadow and split the path examples name: each answers 2xx as pre-filled', async () => {
    const bearer = { Authorization: `Bearer ${service.accessToken}` };
    const scorer = { 'Score-Token': service.scoreToken };
    const answers: string[] = [];
    for (const [operationId, headers] of [
      ['getDecisionRecord', bearer],
      ['getBatchStatus', scorer],
      ['getBatchResults', scorer],
      ['getReplay', bearer],
      ['cancelReplay', bearer],
      // The shadow is seeded stopped: start it, stop it again. Promote before end: promoting deploys the challenger,
      // which ends the shadow and the split, and endSplit answers an ended split as it is.
      ['getShadow', bearer],
      ['startShadow', bearer],
      ['stopShadow', bearer],
      ['getSplit', bearer],
      ['promoteSplit', bearer],
      ['endSplit', bearer],
    ] as const) {
      const [method, path] = prefilledPath(operationId);
      const body = prefilledBody(operationId);
      const answer = await httpRequest(service.port, method, path, { headers, body });
      answers.push(`${operationId} ${method} ${path}: ${answer.status}`);
    }
    expect(answers.filter((answer) => !/: 2\d\d$/.test(answer))).toEqual([]);
  });

  it('has the batch finished and the replay of getReplay finished, with the seeded record in its report', async () => {
    const [, batchPath] = prefilledPath('getBatchStatus');
    let batch = await httpRequest(service.port, 'GET', batchPath, { headers: { 'Score-Token': service.scoreToken } });
    for (let attempt = 0; attempt < 100 && batch.body.state !== 'FINISHED'; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      batch = await httpRequest(service.port, 'GET', batchPath, { headers: { 'Score-Token': service.scoreToken } });
    }
    expect([batch.body.state, batch.body.resultsIds.length]).toEqual(['FINISHED', 2]);
    const [, replayPath] = prefilledPath('getReplay');
    const replay = await httpRequest(service.port, 'GET', replayPath, {
      headers: { Authorization: `Bearer ${service.accessToken}` },
    });
    expect([replay.body.state, replay.body.report.replayed]).toEqual(['FINISHED', 1]);
  });
});

/** The JSON body /docs pre-fills for an operation: its request body's example (undefined without one). */
function prefilledBody(operationId: string): unknown {
  const spec = loadSpec() as unknown as {
    paths: Record<
      string,
      Record<string, { operationId?: string; requestBody?: { content?: Record<string, { example?: unknown }> } }>
    >;
  };
  for (const item of Object.values(spec.paths))
    for (const operation of Object.values(item))
      if (operation.operationId === operationId) return operation.requestBody?.content?.['application/json']?.example;
  throw new Error(`no operation ${operationId}`);
}

/** The method and path /docs sends for an operation, its path parameters pre-filled with their examples (no query: `context` {} sends nothing). */
function prefilledPath(operationId: string): [string, string] {
  const spec = loadSpec() as unknown as {
    paths: Record<
      string,
      Record<
        string,
        { operationId?: string; parameters?: Array<{ name?: string; in?: string; example?: unknown; $ref?: string }> }
      >
    >;
    components: { parameters: Record<string, { name: string; example?: unknown }> };
  };
  for (const [template, item] of Object.entries(spec.paths))
    for (const [method, operation] of Object.entries(item)) {
      if (operation.operationId !== operationId) continue;
      const parameters = (operation.parameters ?? []).map((parameter) =>
        parameter.$ref ? spec.components.parameters[parameter.$ref.split('/').pop() ?? ''] : parameter,
      );
      const path = template.replace(/\{([^}]+)\}/g, (_match, name: string) =>
        encodeURIComponent(String(parameters.find((parameter) => parameter?.name === name)?.example)),
      );
      return [method.toUpperCase(), path];
    }
  throw new Error(`no operation ${operationId}`);
}

(hasChromium ? describe : describe.skip)('/docs in Chromium', () => {
  const shot = (name: string) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: false });

  /** Fills one scheme of the Authorize dialog and confirms it. */
  async function authorize(scheme: string, value: string) {
    const container = page
      .locator('.auth-container')
      .filter({ has: page.locator('h4 code', { hasText: new RegExp(`^${scheme}$`) }) });
    await container.locator('input').fill(value);
    await container.locator('button.authorize').click();
    await container.locator('h6', { hasText: 'Authorized' }).waitFor();
  }

  /** Opens an operation, presses Execute with what the page pre-filled, and answers the status and body the page shows. */
  async function execute(operationId: string): Promise<{ status: number; shown: string }> {
    const block = page.locator(`[id$="-${operationId}"].opblock`);
    await block.locator('.opblock-summary').first().click();
    // What the page pre-filled, before anything is sent: a map parameter's row if it has one (it must read {}).
    const map = block.locator('tr[data-param-name="output"], tr[data-param-name="filter"]');
    await ((await map.count()) > 0 ? map.first() : block.locator('button.execute')).scrollIntoViewIfNeeded();
    await shot(`${operationId}-form`);
    await block.locator('button.execute').click();
    const status = block.locator('.live-responses-table tbody .response-col_status').first();
    try {
      await status.waitFor({ timeout: 20_000 });
      await block.locator('.live-responses-table').scrollIntoViewIfNeeded();
    } finally {
      // Also when no answer came: the page then shows why (e.g. a required field left empty).
      await shot(operationId);
    }
    const shown = block.locator('.live-responses-table tbody .response-col_description').first();
    return {
      // biome-ignore lint/performance/useDomNodeTextContent: the status as the page renders it, through Playwright's locator
      status: Number((await status.innerText()).trim()),
      // biome-ignore lint/performance/useDomNodeTextContent: the body as the page renders it
      shown: await shown.innerText(),
    };
  }

  it('authorizes with the bearer token and the score token', async () => {
    await page.goto(`http://127.0.0.1:${service.port}/docs`);
    await page.locator('.opblock').first().waitFor({ timeout: 30_000 });
    await shot('docs');
    await page.locator('button.btn.authorize').first().click();
    await authorize('bearerAuth', service.accessToken);
    await authorize('scoreTokenHeader', service.scoreToken);
    await shot('authorized');
    await page.locator('button.btn-done').first().click();
    expect(await page.locator('button.btn.authorize.locked').count()).toBeGreaterThan(0);
  }, 60_000);

  it.each([
    'listScenarios',
    'openScenario',
    'scoreScenario',
    'submitBatch',
    'listDecisionRecords',
    'scoreAsync',
    'getAsyncScoreResult',
    'getDecisionRecord',
    'getBatchStatus',
    'getBatchResults',
    'getReplay',
    'cancelReplay',
  ])(
    'executes %s with its pre-filled values: 2xx',
    async (operationId) => {
      const { status, shown } = await execute(operationId);
      expect([operationId, status >= 200 && status < 300 ? '2xx' : status]).toEqual([operationId, '2xx']);
      // Every answer is shown as what it is: an NDJSON stream as its lines, not "can't parse JSON".
      expect(shown).not.toContain("can't parse");
    },
    60_000,
  );
});
