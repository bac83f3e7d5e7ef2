import type { OperationHandlers } from '../../generated/routes.js';
import { notImplemented } from '../http/not-implemented.js';
import type { Services } from '../services.js';

export type ScenarioOperation =
  | 'openScenario' | 'listScenarioVersions' | 'getScenarioInput' | 'getScenarioInputVariableNames'
  | 'copyScenario' | 'renameScenario' | 'debugScenario' | 'validateScenario' | 'deployScenario'
  | 'createInputVariablesFromCsv' | 'importScenarios' | 'exportScenarios' | 'updateScenarioTestCase';

export function createScenarioHandlers(_services: Services): Pick<OperationHandlers, ScenarioOperation> {
  return {
    openScenario: notImplemented('openScenario'),
    listScenarioVersions: notImplemented('listScenarioVersions'),
    getScenarioInput: notImplemented('getScenarioInput'),
    getScenarioInputVariableNames: notImplemented('getScenarioInputVariableNames'),
    copyScenario: notImplemented('copyScenario'),
    renameScenario: notImplemented('renameScenario'),
    debugScenario: notImplemented('debugScenario'),
    validateScenario: notImplemented('validateScenario'),
    deployScenario: notImplemented('deployScenario'),
    createInputVariablesFromCsv: notImplemented('createInputVariablesFromCsv'),
    importScenarios: notImplemented('importScenarios'),
    exportScenarios: notImplemented('exportScenarios'),
    updateScenarioTestCase: notImplemented('updateScenarioTestCase'),
  };
}
