import type { RequestHandler } from 'express';
import multer, { MulterError, type Options, type StorageEngine } from 'multer';
import { BadRequestError } from '../errors/bad-request-error.js';

/** Writing an upload to disk failed: the server's fault (500), unlike a malformed form. */
class UploadStorageError extends Error {
  constructor(cause: Error) {
    super(`Storing the upload failed: ${cause.message}`, { cause });
    this.name = 'UploadStorageError';
  }
}

/** `storage`, with its failures told apart from those of the form itself. */
function markingFailures(storage: StorageEngine): StorageEngine {
  return {
    _handleFile: (request, file, callback) =>
      storage._handleFile(request, file, (error, info) => callback(error ? new UploadStorageError(error) : null, info)),
    _removeFile: (request, file, callback) => storage._removeFile(request, file, callback),
  };
}

/**
 * Multipart bodies (multer), read before the operation's request check. A form with the wrong boundary
 * or cut short ("Unexpected end of form", "Malformed part header", a missing boundary) is 400
 * MALFORMED_BODY; multer's limits keep their meaning (413 for sizes and counts, see error-handler.ts);
 * only a failure to store the file on disk is a 500. Each uploaded file's field gets an empty string in the body,
 * so the spec's `format: binary` properties validate; the Express adapter (src/http/express-adapter.ts)
 * then hands each file to the handler in its field, as an UploadedFile.
 */
export function multipartBody(options: { storage: StorageEngine; limits: Options['limits'] }): RequestHandler {
  const upload = multer({ storage: markingFailures(options.storage), limits: options.limits }).any();
  return (request, response, next) => {
    // Any other content type was refused before (415, validate-request.ts), or carries no body bytes.
    if (!request.is('multipart/form-data')) {
      next();
      return;
    }
    upload(request, response, (error: unknown) => {
      if (error instanceof MulterError || error instanceof UploadStorageError) {
        next(error);
        return;
      }
      if (error) {
        const reason = error instanceof Error ? error.message : String(error);
        next(new BadRequestError(`The multipart body is malformed: ${reason}.`, 'MALFORMED_BODY'));
        return;
      }
      const files = Array.isArray(request.files) ? request.files : [];
      for (const file of files) (request.body as Record<string, unknown>)[file.fieldname] = '';
      next();
    });
  };
}
