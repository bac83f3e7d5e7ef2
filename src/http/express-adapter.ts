import type { Request, RequestHandler } from 'express';
import type { AnyOperationHandler, UploadedFile } from './operation-handler.js';
import type { OperationShape } from './operation-shape.js';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';
import { sendReply } from './send-reply.js';

/** The declared header parameters of the request, by lower-case name (as the spec's validator left them). */
function declaredHeaders(request: Request, names: string[]): Record<string, unknown> {
  const headers: Record<string, unknown> = {};
  for (const name of names) {
    const value = request.headers[name];
    if (value !== undefined) headers[name] = value;
  }
  return headers;
}

/** The multipart body with each file field holding its upload; a text field sent under a file's name is dropped. */
function withUploads(request: Request, fields: string[]): Record<string, unknown> {
  const body: Record<string, unknown> = { ...(request.body as Record<string, unknown> | undefined) };
  for (const field of fields) delete body[field];
  const files = Array.isArray(request.files) ? request.files : [];
  for (const file of files) {
    if (!fields.includes(file.fieldname) || typeof file.path !== 'string') continue;
    const upload: UploadedFile = { path: file.path, originalName: file.originalname, size: file.size };
    body[file.fieldname] = upload;
  }
  return body;
}

/**
 * The one place where Express meets the typed handlers (src/http/operation-handler.ts): it builds
 * the typed request from what authentication and the spec's validator left on the Express request,
 * runs the handler, and sends its reply (src/http/send-reply.ts). A thrown error goes to the error
 * handler (src/errors/error-handler.ts), the only place that answers errors.
 */
export function expressHandler(handler: AnyOperationHandler, shape: OperationShape): RequestHandler {
  return (request, response, next) => {
    const typed = {
      user: request.user as AuthenticatedUser,
      requestId: request.id,
      params: request.params,
      query: request.query,
      headers: declaredHeaders(request, shape.headerNames),
      body: shape.uploadFields.length > 0 ? withUploads(request, shape.uploadFields) : (request.body as unknown),
      accepts: (mediaTypes: string[]) => request.accepts(mediaTypes),
    };
    // The spec's validator has checked (and coerced) every part: the handler's types hold from here on.
    handler(typed as never)
      .then((reply) => {
        if (shape.variesOnAccept) response.vary('Accept');
        return sendReply(response, reply, request.log);
      })
      .catch(next);
  };
}
