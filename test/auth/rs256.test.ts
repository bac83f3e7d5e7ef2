import { generateKeyPairSync } from 'node:crypto';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { loadConfig } from '../../src/config/config.js';
import { applyTestEnvironment } from '../support/test-environment.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
const otherKeys = generateKeyPairSync('rsa', { modulusLength: 2048 });
let testApp: TestApp;

beforeAll(async () => {
  applyTestEnvironment();
  const base = loadConfig();
  testApp = await createTestApp({
    configOverrides: {
      jwt: {
        ...base.jwt,
        secret: undefined,
        publicKey: keys.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
        issuer: 'https://idp.example.test',
      },
    },
  });
});
afterAll(async () => testApp.close());

function sign(privateKey: typeof keys.privateKey, claims: Record<string, unknown>, options: jwt.SignOptions = {}) {
  return jwt.sign(claims, privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), {
    algorithm: 'RS256',
    expiresIn: 60,
    issuer: 'https://idp.example.test',
    ...options,
  });
}

describe('RS256 tokens from an external identity provider', () => {
  it('accepts a token signed with the configured key and provisions its user', async () => {
    const username = `idp-${Date.now()}`;
    const response = await request(testApp.app)
      .get('/api/internaldata/collections')
      .set('Authorization', `Bearer ${sign(keys.privateKey, { preferred_username: username })}`);
    expect(response.status).not.toBe(401);
    expect(await testApp.services.users.findByUsername(username)).toBeDefined();
  });

  it('answers 401 for a token without `exp`', async () => {
    const forever = jwt.sign(
      { preferred_username: 'idp-forever' },
      keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      { algorithm: 'RS256', issuer: 'https://idp.example.test' },
    );
    const response = await request(testApp.app)
      .get('/api/internaldata/collections')
      .set('Authorization', `Bearer ${forever}`);
    expect(response.status).toBe(401);
    expect(response.body.message).toMatch(/no `exp`/);
  });

  it('answers 401 for a token signed with another key', async () => {
    const response = await request(testApp.app)
      .get('/api/internaldata/collections')
      .set('Authorization', `Bearer ${sign(otherKeys.privateKey, { preferred_username: 'mallory' })}`);
    expect(response.status).toBe(401);
  });

  it('answers 401 for a token from another issuer', async () => {
    const response = await request(testApp.app)
      .get('/api/internaldata/collections')
      .set(
        'Authorization',
        `Bearer ${sign(keys.privateKey, { preferred_username: 'eve' }, { issuer: 'https://elsewhere.test' })}`,
      );
    expect(response.status).toBe(401);
  });

  it('answers 401 for an HS256 token even when signed with the public key as secret', async () => {
    const forged = jwt.sign({ preferred_username: 'eve' }, 'x'.repeat(32), {
      algorithm: 'HS256',
      issuer: 'https://idp.example.test',
    });
    const response = await request(testApp.app)
      .get('/api/internaldata/collections')
      .set('Authorization', `Bearer ${forged}`);
    expect(response.status).toBe(401);
  });
});
