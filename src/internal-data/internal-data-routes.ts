import type { OperationHandlers } from '../../generated/routes.js';
import { notImplemented } from '../http/not-implemented.js';
import type { Services } from '../services.js';

export type InternalDataOperation =
  | 'listCollections' | 'getCollectionRows' | 'getCollectionColumns' | 'getCollectionIndexes' | 'deleteCollection' | 'loadCollectionData';

export function createInternalDataHandlers(_services: Services): Pick<OperationHandlers, InternalDataOperation> {
  return {
    listCollections: notImplemented('listCollections'),
    getCollectionRows: notImplemented('getCollectionRows'),
    getCollectionColumns: notImplemented('getCollectionColumns'),
    getCollectionIndexes: notImplemented('getCollectionIndexes'),
    deleteCollection: notImplemented('deleteCollection'),
    loadCollectionData: notImplemented('loadCollectionData'),
  };
}
