import type { Request, Response } from 'express';
import { routes, type RouteDefinition } from '../../generated/routes.js';
import { requireAuthentication } from '../../src/auth/require-authentication.js';
import { UnauthorizedError } from '../../src/errors/unauthorized-error.js';

const openScenario = routes.find((route) => route.operationId === 'openScenario') as RouteDefinition;
const submitBatch = routes.find((route) => route.operationId === 'submitBatch') as RouteDefinition;

function run(route: RouteDefinition, request: Partial<Request>): { error: unknown; logged: unknown[] } {
  const logged: unknown[] = [];
  const nextCalls: unknown[] = [];
  requireAuthentication(route)(
    { path: route.path, log: { error: (...args: unknown[]) => logged.push(args) }, ...request } as unknown as Request,
    {} as Response,
    (error?: unknown) => void nextCalls.push(error),
  );
  expect(nextCalls).toHaveLength(1);
  return { error: nextCalls[0], logged };
}

describe('the guard in front of every handler', () => {
  it('lets a request through that was authenticated for this operation', () => {
    const outcome = run(openScenario, {
      user: { id: 1, username: 'alice', isAdmin: false },
      authenticatedOperation: 'openScenario',
    });
    expect(outcome.error).toBeUndefined();
    expect(outcome.logged).toEqual([]);
  });

  it('answers 401 and logs an error when no user was authenticated', () => {
    const outcome = run(submitBatch, {});
    expect(outcome.error).toBeInstanceOf(UnauthorizedError);
    expect(outcome.error).toMatchObject({
      status: 401,
      code: 'UNAUTHENTICATED',
      message: expect.stringMatching(/score token/),
    });
    expect(outcome.logged).toHaveLength(1);
  });

  it('answers 401 when the user was authenticated for another operation (its schemes may differ)', () => {
    const outcome = run(submitBatch, {
      user: { id: 1, username: 'alice', isAdmin: false },
      authenticatedOperation: 'openScenario',
    });
    expect(outcome.error).toBeInstanceOf(UnauthorizedError);
    expect(outcome.logged).toHaveLength(1);
  });
});
