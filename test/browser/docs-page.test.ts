import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { httpRequest } from '../support/service-process.js';
import { startSeededService, type SeededService } from '../support/seeded-service.js';

/**
 * /docs in a real browser, as a new user meets it: the service as `make run` leaves it (a new database, the example
 * scenario seeded), Swagger UI authorized with demo's bearer token and score token (the only typing), and
 * openScenario, scoreScenario, submitBatch and listDecisionRecords (and listScenarios, scoreAsync and
 * getAsyncScoreResult) executed with the values the page pre-fills. Debian's Chromium (/usr/bin/chromium) driven by playwright-core; screenshots in
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
});

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

  /** Opens an operation, presses Execute with what the page pre-filled, and answers the status the page shows. */
  async function execute(operationId: string): Promise<number> {
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
    // biome-ignore lint/performance/useDomNodeTextContent: the status as the page renders it, through Playwright's locator
    return Number((await status.innerText()).trim());
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
  ])(
    'executes %s with its pre-filled values: 2xx',
    async (operationId) => {
      const status = await execute(operationId);
      expect([operationId, status >= 200 && status < 300 ? '2xx' : status]).toEqual([operationId, '2xx']);
    },
    60_000,
  );
});
