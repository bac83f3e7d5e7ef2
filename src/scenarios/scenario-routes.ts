import { BadRequestError } from '../errors/bad-request-error.js';
import type { OperationHandlers } from '../http/operation-handler.js';
import type { UserLookup } from '../auth/access-context.js';
import { scenarioActorOf, type ManagementRequest, type ScenarioActor } from './scenario-access.js';
import type { ScenarioService } from './scenario-service.js';
import { readVariablesCsv } from './variables-csv.js';

export type ScenarioOperation =
  | 'listScenarios'
  | 'openScenario'
  | 'listScenarioVersions'
  | 'getScenarioInput'
  | 'getScenarioInputVariableNames'
  | 'copyScenario'
  | 'renameScenario'
  | 'debugScenario'
  | 'validateScenario'
  | 'deployScenario'
  | 'createInputVariablesFromCsv'
  | 'importScenarios'
  | 'exportScenarios'
  | 'updateScenarioTestCase';

/** What the scenario handlers need. */
export interface ScenarioHandlerDeps {
  scenarios: ScenarioService;
  users: UserLookup;
}

/** HTTP in/out of the scenario operations; the rules live in ScenarioService. Requests reach here validated by the spec. */
export function createScenarioHandlers({
  scenarios,
  users,
}: ScenarioHandlerDeps): Pick<OperationHandlers, ScenarioOperation> {
  const actorOf = (request: ManagementRequest): Promise<ScenarioActor> => scenarioActorOf(request, users);

  return {
    async listScenarios(request) {
      return {
        status: 200,
        body: await scenarios.list(await actorOf(request), request.query.cursor, request.query.limit),
      };
    },

    async openScenario(request) {
      return { status: 200, body: await scenarios.open(await actorOf(request), request.params.id) };
    },

    async listScenarioVersions(request) {
      return { status: 200, body: await scenarios.listVersions(await actorOf(request), request.params.id) };
    },

    async getScenarioInput(request) {
      return { status: 200, body: await scenarios.inputs(await actorOf(request), request.params.id) };
    },

    async getScenarioInputVariableNames(request) {
      return { status: 200, body: await scenarios.inputNames(await actorOf(request), request.params.id) };
    },

    async copyScenario(request) {
      return {
        status: 200,
        body: await scenarios.copy(await actorOf(request), request.params.id, request.params.copiedScenarioName),
      };
    },

    async renameScenario(request) {
      return {
        status: 200,
        body: await scenarios.rename(await actorOf(request), request.params.currentName, request.params.newName),
      };
    },

    async debugScenario(request) {
      return {
        status: 200,
        body: await scenarios.debug(await actorOf(request), request.params.id, request.body ?? {}),
      };
    },

    async validateScenario(request) {
      await scenarios.validate(await actorOf(request), request.params.id, request.body);
      return { status: 204 };
    },

    async deployScenario(request) {
      await scenarios.deploy(await actorOf(request), request.params.id, {
        skipValidation: request.query.skip_validation === true,
        validationData: request.body,
        replay: request.query.replay,
      });
      return { status: 204 };
    },

    async createInputVariablesFromCsv(request) {
      await actorOf(request);
      const { file } = request.body;
      if (!file) {
        throw new BadRequestError(
          'Upload the CSV as a file in the multipart field "file" (a text field is not a file).',
          'VALIDATION_FAILED',
          [{ path: 'body.file', message: 'must be an uploaded file' }],
        );
      }
      const { variables, problems, problemCount } = await readVariablesCsv(file.path);
      if (problemCount > 0) {
        const listed = problemCount > problems.length ? ` (the first ${problems.length} are listed)` : '';
        throw new BadRequestError(
          `The CSV has ${problemCount} bad line(s)${listed}; first: ${problems[0].path}: ${problems[0].message}`,
          'INVALID_CSV',
          problems,
        );
      }
      return { status: 200, body: variables };
    },

    async importScenarios(request) {
      const outcomes = await scenarios.importScenarios(await actorOf(request), request.body, {
        overwriteDevelop: request.query.overwrite_develop === true,
        overwriteDeploy: request.query.overwrite_deploy === true,
      });
      return { status: 200, body: { scenarios: outcomes } };
    },

    async exportScenarios(request) {
      const versions = await scenarios.exportScenarios(await actorOf(request), request.query.name);
      // `type` when given, else what `Accept` prefers of JSON (the default) and YAML.
      const format =
        request.query.type ??
        (request.accepts(['application/json', 'application/yaml']) === 'application/yaml' ? 'yaml' : 'json');
      if (format === 'yaml') return { status: 200, contentType: 'application/yaml', body: versions };
      return { status: 200, body: versions };
    },

    async updateScenarioTestCase(request) {
      return {
        status: 200,
        body: await scenarios.updateTestCase(
          await actorOf(request),
          request.params.id,
          request.params.testCaseId,
          request.body,
        ),
      };
    },
  };
}
