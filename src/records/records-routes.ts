import type { OperationHandlers } from '../http/operation-handler.js';
import { scenarioActorOf, type ManagementRequest } from '../scenarios/scenario-access.js';
import type { Services } from '../services.js';

export type RecordsOperation = 'listDecisionRecords' | 'getDecisionRecord' | 'getRecordingSettings' | 'updateRecordingSettings';

/** HTTP in/out of the decision-record operations; the rules live in RecordsService. Requests reach here validated by the spec. */
export function createRecordsHandlers(services: Pick<Services, 'records' | 'users'>): Pick<OperationHandlers, RecordsOperation> {
  const records = services.records.service;
  const actorOf = (request: ManagementRequest) => scenarioActorOf(request, services.users);

  return {
    async listDecisionRecords(request) {
      const { version, state, requestId, from, to, output, cursor, limit } = request.query;
      return { status: 200, body: await records.list(await actorOf(request), request.params.id, { version, state, requestId, from, to, output, cursor, limit }) };
    },

    async getDecisionRecord(request) {
      return { status: 200, body: await records.get(await actorOf(request), request.params.id, request.params.recordId) };
    },

    async getRecordingSettings(request) {
      return { status: 200, body: await records.settingsOf(await actorOf(request), request.params.id) };
    },

    async updateRecordingSettings(request) {
      return { status: 200, body: await records.updateSettings(await actorOf(request), request.params.id, request.body) };
    },
  };
}
