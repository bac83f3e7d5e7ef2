import type { Express, Request, RequestHandler, Response } from 'express';

/** An operation as the warm-up sends it: method, spec path and the media types of its request body. */
export interface WarmUpOperation {
  method: string;
  path: string;
  bodyMediaTypes: string[];
}

/**
 * express-openapi-validator builds an operation's request validator at the operation's first request of each
 * Content-Type (as validator-content-type.ts leaves it), on the event loop: 30–200 ms each on this machine, once
 * per process, in the middle of serving (issue #26's fairness, #28's "no request holds the event loop over
 * 100 ms"). This builds them before the service listens: one synthetic request per operation and Content-Type
 * the validator will see (none; each body media type, bare and with `charset=utf-8`), run through the
 * validator's own middlewares only: no authentication, no handler, nothing stored. What they answer (most are
 * 400: they carry nothing) is ignored. Answers how many requests it sent.
 */
export async function warmUpValidator(
  app: Express,
  validator: RequestHandler[],
  operations: readonly WarmUpOperation[],
): Promise<number> {
  let sent = 0;
  for (const operation of operations) {
    const url = operation.path.replace(/\{[^}]+\}/g, '1');
    const contentTypes = [
      undefined,
      ...operation.bodyMediaTypes.flatMap((type) =>
        type.startsWith('multipart/') ? [type] : [type, `${type}; charset=utf-8`],
      ),
    ];
    for (const contentType of contentTypes) {
      await throughValidator(app, validator, operation.method.toUpperCase(), url, contentType);
      sent += 1;
      // One operation at a time: whatever else starts up meanwhile gets the event loop in between.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  return sent;
}

/** Runs a bodiless request through the validator's middlewares until one ends it (an error) or all passed. */
async function throughValidator(
  app: Express,
  validator: RequestHandler[],
  method: string,
  url: string,
  contentType: string | undefined,
): Promise<void> {
  const request = Object.create(app.request) as Request;
  const response = Object.create(app.response) as Response;
  Object.assign(request, {
    app,
    res: response,
    method,
    url,
    originalUrl: url,
    baseUrl: '',
    params: {},
    body: undefined,
    headers: contentType ? { 'content-type': contentType } : {},
  });
  Object.defineProperty(request, 'query', { value: {}, writable: true, configurable: true, enumerable: true });
  Object.assign(response, { app, req: request });
  for (const middleware of validator) {
    const failed = await new Promise<boolean>((resolve) => {
      try {
        void middleware(request, response, (error?: unknown) => resolve(error !== undefined));
      } catch {
        resolve(true);
      }
    });
    if (failed) return;
  }
}
