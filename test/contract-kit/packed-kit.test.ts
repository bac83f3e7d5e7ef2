import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { freePort } from '../support/private-redis.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const KIT = join(ROOT, 'packages/contract-kit');

/** What a consumer's CI does: pack the kit, install the tarball in an empty folder, run its bin. */
describe('the contract kit as a package', () => {
  let folder: string;
  let testApp: TestApp;
  let server: Server;
  let baseUrl: string;
  let user: TestUser;

  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), 'contract-kit-'));
    await run('npm', ['pack', '--silent', '--pack-destination', folder], { cwd: KIT, timeout: 120_000 });
    const tarball = readdirSync(folder).find((name) => name.endsWith('.tgz'));
    if (!tarball) throw new Error(`npm pack wrote no tarball into ${folder}`);
    await run('npm', ['init', '-y'], { cwd: folder });
    await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', `./${tarball}`], {
      cwd: folder,
      timeout: 120_000,
    });
    testApp = await createTestApp();
    server = createServer(testApp.app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    user = await testApp.newUser({ prefix: 'kit' });
  }, 240_000);
  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    await testApp?.close();
    rmSync(folder, { recursive: true, force: true });
  });

  const kit = (args: string[], env: Record<string, string> = {}) =>
    run('npx', ['--no-install', 'scoring-contract', ...args], {
      cwd: folder,
      env: { ...process.env, ...env, NODE_OPTIONS: '' },
      timeout: 120_000,
    }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (error: { code: number; stdout: string; stderr: string }) => ({
        code: error.code,
        stdout: error.stdout,
        stderr: error.stderr,
      }),
    );

  it('installs with only its own dependencies', () => {
    const installed = readdirSync(join(folder, 'node_modules')).filter((name) => !name.startsWith('.'));
    expect(installed.sort()).toEqual(expect.arrayContaining(['@scenario-scoring', 'ajv', 'ajv-formats', 'yaml']));
    expect(installed).not.toContain('express');
    expect(installed).not.toContain('isolated-vm');
  });

  it('names an unreachable base URL and exits 2', async () => {
    const port = await freePort();
    const answer = await kit(['--base-url', `http://127.0.0.1:${port}`]);
    expect(answer.code).toBe(2);
    expect(answer.stderr).toContain(`cannot reach http://127.0.0.1:${port}/openapi.json`);
  });

  it('checks a deployment against the pinned contract, read-only, and passes', async () => {
    const answer = await kit(['--base-url', baseUrl, '--spec', join(ROOT, 'spec/openapi.json')], {
      CONTRACT_BEARER_TOKEN: user.accessToken,
      CONTRACT_SCORE_TOKEN: user.scoreToken,
      CONTRACT_CONTEXT: user.context(),
    });
    expect(answer.stdout).toMatch(/contract: \d+ passed, 0 failed/);
    expect(answer.code).toBe(0);
  });

  it('fails an operation of the pinned contract that the deployment does not serve', async () => {
    const pinned = join(folder, 'pinned.yaml');
    const { writeFileSync, readFileSync } = await import('node:fs');
    const { stringify } = await import('yaml');
    const document = JSON.parse(readFileSync(join(ROOT, 'spec/openapi.json'), 'utf8')) as {
      paths: Record<string, Record<string, unknown>>;
    };
    document.paths['/api/scenario/{id}/archive'] = {
      post: { operationId: 'archiveScenario', responses: { 204: { description: 'archived' } } },
    };
    writeFileSync(pinned, stringify(document));
    const answer = await kit(['--base-url', baseUrl, '--spec', pinned]);
    expect(answer.code).toBe(1);
    expect(answer.stdout).toContain(
      "the deployment's /openapi.json has no operation archiveScenario (POST /api/scenario/{id}/archive)",
    );
  });
});
