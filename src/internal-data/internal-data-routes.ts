import type { Request, RequestHandler } from 'express';
import type { OperationHandlers } from '../../generated/routes.js';
import { BadRequestError } from '../errors/bad-request-error.js';
import type { AuthenticatedUser } from '../http/request-context.js';
import type { Services } from '../services.js';

export type InternalDataOperation =
  | 'listCollections' | 'getCollectionRows' | 'getCollectionColumns' | 'getCollectionIndexes' | 'deleteCollection' | 'loadCollectionData';

type AsyncHandler = (request: Request, response: Parameters<RequestHandler>[1]) => Promise<void>;

function handle(run: AsyncHandler): RequestHandler {
  return (request, response, next) => {
    run(request, response).catch(next);
  };
}

/** Collections belong to the token's user: each user has their own namespace. */
function ownerId(request: Request): number {
  return (request.user as AuthenticatedUser).id;
}

function collectionName(request: Request): string {
  return String(request.params.collection_name);
}

/** The uploaded `file` part (multer put it on disk); a text field named `file` passes the spec's validation, so check here. */
function uploadedFile(request: Request): Express.Multer.File {
  const files = Array.isArray(request.files) ? request.files : request.files ? Object.values(request.files).flat() : [];
  const file = files.find((candidate) => candidate.fieldname === 'file' && typeof candidate.path === 'string');
  if (!file) throw new BadRequestError('No file uploaded: send the CSV as the multipart file part "file".', 'VALIDATION_FAILED', [{ path: 'body.file', message: 'a file is required' }]);
  return file;
}

export function createInternalDataHandlers(services: Services): Pick<OperationHandlers, InternalDataOperation> {
  const { internalData } = services;
  return {
    listCollections: handle(async (request, response) => {
      response.json(await internalData.list(ownerId(request)));
    }),
    getCollectionRows: handle(async (request, response) => {
      const { limit, offset, filter } = request.query as { limit?: number | string; offset?: number | string; filter?: Record<string, string> };
      response.json(await internalData.rows(ownerId(request), collectionName(request), {
        limit: limit === undefined ? undefined : Number(limit),
        offset: offset === undefined ? undefined : Number(offset),
        filter,
      }));
    }),
    getCollectionColumns: handle(async (request, response) => {
      response.json(await internalData.columns(ownerId(request), collectionName(request)));
    }),
    getCollectionIndexes: handle(async (request, response) => {
      response.json(await internalData.indexes(ownerId(request), collectionName(request)));
    }),
    deleteCollection: handle(async (request, response) => {
      await internalData.delete(ownerId(request), collectionName(request));
      response.status(204).end();
    }),
    loadCollectionData: handle(async (request, response) => {
      const file = uploadedFile(request);
      const { fileName, indexes } = request.query as { fileName: string; indexes?: string };
      const report = await internalData.load({ ownerId: ownerId(request), collection: collectionName(request), fileName, indexes, path: file.path });
      response.status(report.created ? 201 : 200).json(report);
    }),
  };
}
