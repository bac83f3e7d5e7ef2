import { BadRequestError } from '../errors/bad-request-error.js';
import type { OperationHandlers } from '../http/operation-handler.js';
import type { InternalDataService } from './internal-data-service.js';

export type InternalDataOperation =
  | 'listCollections'
  | 'getCollectionRows'
  | 'getCollectionColumns'
  | 'getCollectionIndexes'
  | 'deleteCollection'
  | 'loadCollectionData';

/** What the internal-data handlers need. */
export interface InternalDataHandlerDeps {
  internalData: InternalDataService;
}

/**
 * HTTP in/out of the collections; the rules live in InternalDataService. Collections belong to the
 * token's user: each user has their own namespace.
 */
export function createInternalDataHandlers(
  services: InternalDataHandlerDeps,
): Pick<OperationHandlers, InternalDataOperation> {
  const { internalData } = services;
  return {
    async listCollections({ user }) {
      return { status: 200, body: await internalData.list(user.id) };
    },

    async getCollectionRows({ user, params, query }) {
      const { limit, offset, filter } = query;
      return { status: 200, body: await internalData.rows(user.id, params.collection_name, { limit, offset, filter }) };
    },

    async getCollectionColumns({ user, params }) {
      return { status: 200, body: await internalData.columns(user.id, params.collection_name) };
    },

    async getCollectionIndexes({ user, params }) {
      return { status: 200, body: await internalData.indexes(user.id, params.collection_name) };
    },

    async deleteCollection({ user, params }) {
      await internalData.delete(user.id, params.collection_name);
      return { status: 204 };
    },

    async loadCollectionData({ user, params, query, body }) {
      // A text field named `file` passes the spec's validation: the upload must be a file.
      if (!body.file)
        throw new BadRequestError(
          'No file uploaded: send the CSV as the multipart file part "file".',
          'VALIDATION_FAILED',
          [{ path: 'body.file', message: 'a file is required' }],
        );
      const report = await internalData.load({
        ownerId: user.id,
        collection: params.collection_name,
        fileName: query.fileName,
        indexes: query.indexes,
        path: body.file.path,
      });
      return { status: report.created ? 201 : 200, body: report };
    },
  };
}
