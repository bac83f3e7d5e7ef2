import { randomUUID } from 'node:crypto';
import type { RequestListener } from 'node:http';
import type { Logger } from 'pino';
import { createApp, type AppDependencies } from '../../src/app.js';
import { issueAccessToken } from '../../src/auth/access-token.js';
import { loadConfig, type AppConfig } from '../../src/config/config.js';
import { appDependencies } from '../../src/handler-map.js';
import { createLogger } from '../../src/logger.js';
import { closeServices, createServices, type Services } from '../../src/services.js';
import type { OperationHandlers } from '../../src/http/operation-handler.js';
import { applyTestEnvironment } from './test-environment.js';

export interface TestUser {
  id: number;
  username: string;
  accessToken: string;
  scoreToken: string;
  /** `context` query value naming this user as requester (and optionally an owner). */
  context(owner?: string): string;
}

export interface TestApp {
  /** The service's request listener (the score fast lane, then Express), for supertest. */
  app: RequestListener;
  services: Services;
  config: AppConfig;
  /** A new user with a unique name (tests never share users, so they never share data). */
  newUser(options?: { admin?: boolean; prefix?: string }): Promise<TestUser>;
  close(): Promise<void>;
}

/** The interface's AccessControlContext as JSON: `requester` acting, on `owner`'s scenarios when given. */
export function contextFor(requester: string, owner?: string): string {
  return JSON.stringify({
    actors: owner
      ? { requester: { username: requester }, resourceOwner: { username: owner } }
      : { requester: { username: requester } },
  });
}

/**
 * The real app on the real test database and job store, validating every response against the
 * spec (a response that breaks the contract becomes a 500 and fails the test).
 */
export interface TestAppOptions {
  configOverrides?: Partial<AppConfig>;
  handlers?: Partial<OperationHandlers>;
  /** Replaces operations on the fast lane (e.g. to break the contract on purpose). */
  fastLane?: AppDependencies['fastLane'];
  /** Receives the app's logs instead of the configured logger (e.g. to tie a 500 to its logged cause). */
  logger?: Logger;
}

export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  applyTestEnvironment();
  // Responses are validated (VALIDATE_RESPONSES defaults to true in tests) unless a test overrides it.
  const config = { ...loadConfig(), ...options.configOverrides };
  const logger = options.logger ?? createLogger(config.logLevel);
  const services = await createServices(config, logger);
  const served = appDependencies(services);
  const app = createApp({
    ...served,
    handlers: { ...served.handlers, ...options.handlers },
    fastLane: served.fastLane && { ...served.fastLane, ...options.fastLane },
  });
  return {
    app,
    services,
    config,
    async newUser({ admin = false, prefix = 'user' } = {}) {
      const username = `${prefix}-${randomUUID().slice(0, 12)}`;
      const user = await services.users.ensureUser(username, admin);
      const scoreToken = await services.users.issueScoreToken(user.id);
      if (!scoreToken) throw new Error(`new user ${username} already had a score token`);
      return {
        id: user.id,
        username,
        accessToken: issueAccessToken(config.jwt, username, admin),
        scoreToken,
        context: (owner?: string) => contextFor(username, owner),
      };
    },
    close: () => closeServices(services),
  };
}

export interface SharedTestApp {
  /** The file's app (read it inside tests and hooks: it exists from beforeAll on). */
  readonly app: TestApp;
  /** A user of its own, created with the app. */
  readonly user: TestUser;
}

/** One app and one user for a test file or describe block: created before its tests, closed after them. */
export function useTestApp(options?: TestAppOptions): SharedTestApp {
  let app: TestApp | undefined;
  let user: TestUser | undefined;
  beforeAll(async () => {
    app = await createTestApp(options);
    user = await app.newUser();
  });
  afterAll(async () => app?.close());
  return {
    get app() {
      return app as TestApp;
    },
    get user() {
      return user as TestUser;
    },
  };
}
