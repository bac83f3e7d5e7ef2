import { BadRequestError } from '../errors/bad-request-error.js';
import type { OperationHandlers } from '../http/operation-handler.js';
import type { UserLookup } from '../auth/access-context.js';
import { scenarioActors } from './scenario-access.js';
import type { ScenarioService } from './scenario-service.js';
import { readVariablesCsv } from './variables-csv.js';
import { scenarioAnswers } from './scenario-answers.js';

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
  const actorOf = scenarioActors(users);
  const answer = scenarioAnswers(actorOf);

  return {
    listScenarios: answer(200, (actor, { query }) => scenarios.list(actor, query.cursor, query.limit)),
    openScenario: answer(200, (actor, { params }) => scenarios.open(actor, params.id)),
    listScenarioVersions: answer(200, (actor, { params }) => scenarios.listVersions(actor, params.id)),
    getScenarioInput: answer(200, (actor, { params }) => scenarios.inputs(actor, params.id)),
    getScenarioInputVariableNames: answer(200, (actor, { params }) => scenarios.inputNames(actor, params.id)),
    copyScenario: answer(200, (actor, { params }) => scenarios.copy(actor, params.id, params.copiedScenarioName)),
    renameScenario: answer(200, (actor, { params }) => scenarios.rename(actor, params.currentName, params.newName)),
    debugScenario: answer(200, (actor, { params, body }) => scenarios.debug(actor, params.id, body ?? {})),

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

    updateScenarioTestCase: answer(200, (actor, { params, body }) =>
      scenarios.updateTestCase(actor, params.id, params.testCaseId, body),
    ),
  };
}
