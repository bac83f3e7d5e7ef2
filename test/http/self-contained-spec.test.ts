import { readFileSync } from 'node:fs';
import request from 'supertest';
import { loadSpec } from '../../src/http/api-docs.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

/**
 * The served document is what consumers read (issue #29, item 9): nothing in it may point into this repository
 * (paths, npm commands, the operator's environment variables). Its links go to guides the service serves
 * itself (`/docs/guides/…`), it names a contact, and every operation declares the 500 a consumer can meet.
 */
const spec = loadSpec() as {
  info: { contact?: { name?: string; url?: string } };
  externalDocs?: { url: string };
  tags: Array<{ name: string; externalDocs?: { url: string } }>;
  paths: Record<string, Record<string, { operationId: string; responses: Record<string, { $ref?: string }> }>>;
  components: { responses: Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }> };
};
const text = JSON.stringify(spec);
const environmentVariables = [
  ...readFileSync(new URL('../../src/config/config.ts', import.meta.url), 'utf8').matchAll(
    /'([A-Z][A-Z0-9]*_[A-Z0-9_]+)'/g,
  ),
].map((match) => match[1]);

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

describe('the served document is self-contained', () => {
  it('names no repository file, npm command or environment variable', () => {
    expect(
      text.match(/(?<!\/)\b(?:docs|src|scripts|test)\/[\w./-]+|README\.md|\bnpm (?:run|ci|install)\b/g),
    ).toBeNull();
    expect(environmentVariables.length).toBeGreaterThan(40);
    expect(environmentVariables.filter((name) => new RegExp(`\\b${name}\\b`).test(text))).toEqual([]);
  });

  it('has a contact, and externalDocs at the top and on every tag', () => {
    expect(spec.info.contact).toEqual({ name: expect.any(String), url: expect.stringMatching(/^\/docs\/guides\//) });
    expect(spec.externalDocs?.url).toBe('/docs/guides');
    for (const tag of spec.tags)
      expect([tag.name, tag.externalDocs?.url]).toEqual([tag.name, expect.stringMatching(/^\/docs\/guides\/[\w-]+$/)]);
  });

  it('serves every guide it links to, as Markdown', async () => {
    const links = new Set([...text.matchAll(/\/docs\/guides(?:\/[\w-]+)?/g)].map((match) => match[0]));
    expect(links.size).toBeGreaterThan(8);
    for (const link of links) {
      const response = await request(t.app).get(link);
      expect([link, response.status, response.headers['content-type']]).toEqual([
        link,
        200,
        'text/markdown; charset=utf-8',
      ]);
      expect(response.text.length).toBeGreaterThan(100);
    }
  });

  it('serves nothing else of the checkout under /docs/guides', async () => {
    for (const path of [
      '/docs/guides/..%2Fpackage.json',
      '/docs/guides/adr',
      '/docs/guides/..',
      '/docs/guides/nonexistent',
      '/docs/guides/%2e%2e%2fREADME',
    ]) {
      expect([path, (await request(t.app).get(path)).status]).toEqual([path, 404]);
    }
  });

  it('declares 500 with the Error body on every operation', () => {
    const internal = spec.components.responses.InternalError;
    expect(internal.content?.['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
    for (const item of Object.values(spec.paths)) {
      for (const operation of Object.values(item)) {
        expect([operation.operationId, operation.responses['500']]).toEqual([
          operation.operationId,
          { $ref: '#/components/responses/InternalError' },
        ]);
      }
    }
  });
});
