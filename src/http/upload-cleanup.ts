import { unlink } from 'node:fs/promises';
import type { RequestHandler } from 'express';

/** Uploaded files go to a temporary directory (memory stays bounded); they are removed when the response ends. */
export const removeUploadsWhenDone: RequestHandler = (request, response, next) => {
  response.on('close', () => {
    const files = request.files;
    const list = Array.isArray(files) ? files : files ? Object.values(files).flat() : [];
    if (request.file) list.push(request.file);
    for (const file of list) if (file.path) unlink(file.path).catch(() => undefined);
  });
  next();
};
