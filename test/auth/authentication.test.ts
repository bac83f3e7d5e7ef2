import jwt from 'jsonwebtoken';
import request from 'supertest';
import { routes, type RouteDefinition } from '../../generated/routes.js';
import { loadConfig } from '../../src/config/config.js';
import { createTestApp, useTestApp } from '../support/test-app.js';
import { bearerRoutes, sampleUrl, scoreTokenRoutes } from '../support/sample-requests.js';

const t = useTestApp();

function send(route: RouteDefinition, url = sampleUrl(route)) {
  return request(t.app.app)[route.method](url);
}

describe('bearer operations', () => {
  it('covers every operation of the spec with one scheme or the other', () => {
    expect(bearerRoutes.length + scoreTokenRoutes.length).toBe(routes.length);
    expect(routes).toHaveLength(53);
  });

  it.each(bearerRoutes.map((route) => [route.operationId, route] as const))(
    '%s answers 401 without a token',
    async (_id, route) => {
      const response = await send(route);
      expect(response.status).toBe(401);
      expect(response.body).toMatchObject({ status: 401, code: 'UNAUTHENTICATED' });
      expect(response.body.message).toMatch(/bearer/i);
    },
  );

  it.each(bearerRoutes.map((route) => [route.operationId, route] as const))(
    '%s answers 401 with a token signed by another key',
    async (_id, route) => {
      const forged = jwt.sign({ preferred_username: t.user.username }, 'not-the-secret', {
        algorithm: 'HS256',
        expiresIn: 60,
      });
      const response = await send(route).set('Authorization', `Bearer ${forged}`);
      expect(response.status).toBe(401);
    },
  );

  it('answers 401 for an expired token', async () => {
    const expired = jwt.sign(
      { preferred_username: t.user.username, exp: Math.floor(Date.now() / 1000) - 10 },
      t.app.config.jwt.secret as string,
      { algorithm: 'HS256' },
    );
    const response = await request(t.app.app)
      .get('/api/internaldata/collections')
      .set('Authorization', `Bearer ${expired}`);
    expect(response.status).toBe(401);
  });

  describe('token lifetime (JWT_MAX_LIFETIME_SECONDS, 24 h by default)', () => {
    const secret = () => t.app.config.jwt.secret as string;
    const now = () => Math.floor(Date.now() / 1000);
    const list = (token: string) =>
      request(t.app.app).get('/api/internaldata/collections').set('Authorization', `Bearer ${token}`);

    it('answers 401 for a token without `exp`, and says so', async () => {
      const forever = jwt.sign({ preferred_username: t.user.username }, secret(), { algorithm: 'HS256' });
      const response = await list(forever);
      expect(response.status).toBe(401);
      expect(response.body.message).toMatch(/no `exp`/);
    });

    it('answers 401 for a token that expires further away than the maximum lifetime', async () => {
      const tooLong = jwt.sign({ preferred_username: t.user.username }, secret(), {
        algorithm: 'HS256',
        expiresIn: t.app.config.jwt.maxLifetimeSeconds + 120,
      });
      const response = await list(tooLong);
      expect(response.status).toBe(401);
      expect(response.body.message).toMatch(/JWT_MAX_LIFETIME_SECONDS/);
    });

    it('answers 401 for a token whose iat-to-exp lifetime is longer than the maximum, though it expires soon', async () => {
      const oldAndLong = jwt.sign(
        { preferred_username: t.user.username, iat: now() - 3 * 86_400, exp: now() + 60 },
        secret(),
        { algorithm: 'HS256' },
      );
      expect((await list(oldAndLong)).status).toBe(401);
    });

    it('answers 401 for a token issued more than 60 s in the future, and accepts one issued within the skew', async () => {
      const future = jwt.sign({ preferred_username: t.user.username, iat: now() + 3600, exp: now() + 3700 }, secret(), {
        algorithm: 'HS256',
      });
      const response = await list(future);
      expect(response.status).toBe(401);
      expect(response.body.message).toMatch(/issued in the future/);
      const skewed = jwt.sign({ preferred_username: t.user.username, iat: now() + 30, exp: now() + 600 }, secret(), {
        algorithm: 'HS256',
      });
      expect((await list(skewed)).status).toBe(200);
    });

    it('accepts a token that expires within the maximum lifetime', async () => {
      const fine = jwt.sign({ preferred_username: t.user.username }, secret(), {
        algorithm: 'HS256',
        expiresIn: t.app.config.jwt.maxLifetimeSeconds - 60,
      });
      expect((await list(fine)).status).toBe(200);
    });

    it('honours a configured maximum', async () => {
      const strict = await createTestApp({
        configOverrides: { jwt: { ...t.app.config.jwt, maxLifetimeSeconds: 300 } },
      });
      try {
        const tenMinutes = jwt.sign({ preferred_username: t.user.username }, secret(), {
          algorithm: 'HS256',
          expiresIn: 600,
        });
        const fiveMinutes = jwt.sign({ preferred_username: t.user.username }, secret(), {
          algorithm: 'HS256',
          expiresIn: 240,
        });
        expect(
          (await request(strict.app).get('/api/internaldata/collections').set('Authorization', `Bearer ${tenMinutes}`))
            .status,
        ).toBe(401);
        expect(
          (await request(strict.app).get('/api/internaldata/collections').set('Authorization', `Bearer ${fiveMinutes}`))
            .status,
        ).toBe(200);
      } finally {
        await strict.close();
      }
    });

    it('is 24 hours unless configured', () => {
      expect(loadConfig({ APP_ENV: 'local' }).jwt.maxLifetimeSeconds).toBe(86_400);
      expect(loadConfig({ APP_ENV: 'local', JWT_MAX_LIFETIME_SECONDS: '900' }).jwt.maxLifetimeSeconds).toBe(900);
      expect(() => loadConfig({ APP_ENV: 'local', JWT_MAX_LIFETIME_SECONDS: '0' })).toThrow(
        /JWT_MAX_LIFETIME_SECONDS must be at least 1/,
      );
    });
  });

  it('answers 401 naming the claim when the username has whitespace', async () => {
    const padded = jwt.sign({ preferred_username: ` ${t.user.username}` }, t.app.config.jwt.secret as string, {
      algorithm: 'HS256',
      expiresIn: 60,
    });
    const response = await request(t.app.app)
      .get('/api/internaldata/collections')
      .set('Authorization', `Bearer ${padded}`);
    expect(response.status).toBe(401);
    expect(response.body.message).toMatch(/preferred_username/);
  });

  it('answers 401 for a token with the "none" algorithm', async () => {
    const unsigned = jwt.sign({ preferred_username: t.user.username }, '', { algorithm: 'none' });
    const response = await request(t.app.app)
      .get('/api/internaldata/collections')
      .set('Authorization', `Bearer ${unsigned}`);
    expect(response.status).toBe(401);
  });

  it('answers 401 before looking at a malformed body', async () => {
    const response = await request(t.app.app)
      .post('/api/scenario/import')
      .set('Content-Type', 'application/json')
      .send('{"not json');
    expect(response.status).toBe(401);
  });

  it('provisions a t.user seen for the first time in a valid token, without a score token until one is issued', async () => {
    const username = `fresh-${Date.now()}`;
    const token = jwt.sign({ preferred_username: username }, t.app.config.jwt.secret as string, {
      algorithm: 'HS256',
      expiresIn: 60,
    });
    const response = await request(t.app.app)
      .get('/api/internaldata/collections')
      .set('Authorization', `Bearer ${token}`);
    expect(response.status).not.toBe(401);
    const provisioned = await t.app.services.users.findByUsername(username);
    expect(provisioned).toMatchObject({ username, enabled: true, hasScoreToken: false });
  });
});

describe('score-token operations', () => {
  it.each(scoreTokenRoutes.map((route) => [route.operationId, route] as const))(
    '%s answers 401 without a score token',
    async (_id, route) => {
      const response = await send(route);
      expect(response.status).toBe(401);
      expect(response.body.code).toBe('UNAUTHENTICATED');
    },
  );

  it.each(scoreTokenRoutes.map((route) => [route.operationId, route] as const))(
    '%s answers 401 with a wrong score token in the header',
    async (_id, route) => {
      const response = await send(route).set('Score-Token', 'wrong-token');
      expect(response.status).toBe(401);
      expect(response.body.code).toBe('INVALID_SCORE_TOKEN');
    },
  );

  it.each(scoreTokenRoutes.map((route) => [route.operationId, route] as const))(
    '%s answers 401 with a wrong score token in `key`',
    async (_id, route) => {
      const response = await send(
        route,
        `${sampleUrl(route)}${sampleUrl(route).includes('?') ? '&' : '?'}key=wrong-token`,
      );
      expect(response.status).toBe(401);
    },
  );

  it('does not accept a bearer access token in place of a score token', async () => {
    const response = await request(t.app.app)
      .post('/api/scenario/code/remote/score?name=x')
      .set('Authorization', `Bearer ${t.user.accessToken}`)
      .send({});
    expect(response.status).toBe(401);
  });
});
