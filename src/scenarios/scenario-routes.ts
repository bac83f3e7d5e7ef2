import { readFile } from 'node:fs/promises';
import type { Request } from 'express';
import { stringify as toYaml } from 'yaml';
import type { OperationHandlers } from '../../generated/routes.js';
import { BadRequestError } from '../errors/bad-request-error.js';
import type { Services } from '../services.js';
import { scenarioActorOf, type ScenarioActor } from './scenario-access.js';
import type { ScenarioImportDto, ScenarioTestCaseSaveDto } from './scenario-types.js';
import { parseVariablesCsv } from './variables-csv.js';

export type ScenarioOperation =
  | 'openScenario' | 'listScenarioVersions' | 'getScenarioInput' | 'getScenarioInputVariableNames'
  | 'copyScenario' | 'renameScenario' | 'debugScenario' | 'validateScenario' | 'deployScenario'
  | 'createInputVariablesFromCsv' | 'importScenarios' | 'exportScenarios' | 'updateScenarioTestCase';

/** `type` when given, else what `Accept` prefers of JSON (the default) and YAML. */
function exportFormat(request: Request): 'json' | 'yaml' {
  if (request.query.type === 'json' || request.query.type === 'yaml') return request.query.type;
  return request.accepts(['application/json', 'application/yaml']) === 'application/yaml' ? 'yaml' : 'json';
}

/** HTTP in/out of the scenario operations; the rules live in ScenarioService. Requests reach here validated by the spec. */
export function createScenarioHandlers(services: Services): Pick<OperationHandlers, ScenarioOperation> {
  const scenarios = services.scenarios;
  const actorOf = (request: Request): Promise<ScenarioActor> => scenarioActorOf(request, services.users);
  const idOf = (request: Request, name = 'id'): string => String(request.params[name]);
  /** The optional JSON object of a body (debugging or validation data); undefined when there is no body. */
  const optionalData = (request: Request): Record<string, unknown> | undefined => (request.body === undefined ? undefined : (request.body as Record<string, unknown>));
  const flag = (request: Request, name: string): boolean => {
    const value = request.query[name] as unknown;
    return value === true || value === 'true';
  };

  return {
    async openScenario(request, response) {
      response.json(await scenarios.open(await actorOf(request), idOf(request)));
    },

    async listScenarioVersions(request, response) {
      response.json(await scenarios.listVersions(await actorOf(request), idOf(request)));
    },

    async getScenarioInput(request, response) {
      response.json(await scenarios.inputs(await actorOf(request), idOf(request)));
    },

    async getScenarioInputVariableNames(request, response) {
      response.json(await scenarios.inputNames(await actorOf(request), idOf(request)));
    },

    async copyScenario(request, response) {
      response.json(await scenarios.copy(await actorOf(request), idOf(request), String(request.params.copiedScenarioName)));
    },

    async renameScenario(request, response) {
      response.json(await scenarios.rename(await actorOf(request), String(request.params.currentName), String(request.params.newName)));
    },

    async debugScenario(request, response) {
      response.json(await scenarios.debug(await actorOf(request), idOf(request), optionalData(request) ?? {}));
    },

    async validateScenario(request, response) {
      await scenarios.validate(await actorOf(request), idOf(request), optionalData(request));
      response.status(204).end();
    },

    async deployScenario(request, response) {
      const replay = typeof request.query.replay === 'string' ? request.query.replay : undefined;
      await scenarios.deploy(await actorOf(request), idOf(request), { skipValidation: flag(request, 'skip_validation'), validationData: optionalData(request), replay });
      response.status(204).end();
    },

    async createInputVariablesFromCsv(request, response) {
      await actorOf(request);
      const files = Array.isArray(request.files) ? request.files : [];
      const file = files.find((candidate) => candidate.fieldname === 'file');
      if (!file?.path) {
        throw new BadRequestError('Upload the CSV as a file in the multipart field "file" (a text field is not a file).', 'VALIDATION_FAILED', [{ path: 'body.file', message: 'must be an uploaded file' }]);
      }
      const { variables, problems } = parseVariablesCsv(await readFile(file.path, 'utf8'));
      if (problems.length > 0) {
        throw new BadRequestError(`The CSV has ${problems.length} bad line(s); first: ${problems[0].path}: ${problems[0].message}`, 'INVALID_CSV', problems);
      }
      response.json(variables);
    },

    async importScenarios(request, response) {
      const outcomes = await scenarios.importScenarios(await actorOf(request), request.body as ScenarioImportDto | ScenarioImportDto[], {
        overwriteDevelop: flag(request, 'overwrite_develop'),
        overwriteDeploy: flag(request, 'overwrite_deploy'),
      });
      response.json({ scenarios: outcomes });
    },

    async exportScenarios(request, response) {
      const name = typeof request.query.name === 'string' ? request.query.name : undefined;
      const versions = await scenarios.exportScenarios(await actorOf(request), name);
      response.vary('Accept');
      if (exportFormat(request) === 'yaml') {
        response.type('application/yaml').send(toYaml(versions, { lineWidth: 0 }));
        return;
      }
      response.json(versions);
    },

    async updateScenarioTestCase(request, response) {
      const saved = await scenarios.updateTestCase(await actorOf(request), idOf(request), idOf(request, 'testCaseId'), request.body as ScenarioTestCaseSaveDto);
      response.json(saved);
    },
  };
}
