import { BadRequestError } from '../errors/bad-request-error.js';
import type { OperationHandlers } from '../http/operation-handler.js';
import type { ModelService } from './model-service.js';
import type { ModelTester } from './model-tester.js';

export type ModelOperation =
  | 'listModels'
  | 'getModel'
  | 'uploadModelVersion'
  | 'getModelVersion'
  | 'downloadModelVersion'
  | 'deleteModelVersion'
  | 'testModelVersion';

/** `latest` or a number (the spec's pattern has checked it). */
function versionOf(raw: string): number | 'latest' {
  return raw === 'latest' ? 'latest' : Number(raw);
}

/** What the model handlers need. */
export interface ModelHandlerDeps {
  models: ModelService;
  tester: ModelTester;
}

/** HTTP in/out of the model registry; the rules live in ModelService. Models belong to the token's user. */
export function createModelHandlers(services: ModelHandlerDeps): Pick<OperationHandlers, ModelOperation> {
  const { models, tester } = services;
  return {
    async listModels({ user }) {
      return { status: 200, body: await models.list(user.id) };
    },

    async getModel({ user, params }) {
      return { status: 200, body: await models.get(user.id, params.name) };
    },

    async uploadModelVersion({ user, params, body }) {
      // A text field named `file` passes the spec's validation: the upload must be a file.
      if (!body.file)
        throw new BadRequestError(
          'No file uploaded: send the model as the multipart file part "file".',
          'VALIDATION_FAILED',
          [{ path: 'body.file', message: 'a file is required' }],
        );
      return { status: 201, body: await models.upload(user.id, params.name, body.file) };
    },

    async getModelVersion({ user, params }) {
      return { status: 200, body: await models.version(user.id, params.name, versionOf(params.version)) };
    },

    async downloadModelVersion({ user, params }) {
      const { format, bytes } = await models.file(user.id, params.name, versionOf(params.version));
      if (format === 'ONNX') return { status: 200, contentType: 'application/octet-stream', body: bytes };
      return { status: 200, contentType: 'application/xml', body: bytes.toString('utf8') };
    },

    async testModelVersion({ user, params, body }) {
      const sample = (body ?? {}) as Record<string, unknown>;
      return { status: 200, body: await tester.test(user.id, params.name, versionOf(params.version), sample) };
    },

    async deleteModelVersion({ user, params }) {
      await models.delete(user.id, params.name, versionOf(params.version));
      return { status: 204 };
    },
  };
}
