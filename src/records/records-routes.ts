import type { Request } from 'express';
import type { OperationHandlers } from '../../generated/routes.js';
import { scenarioActorOf } from '../scenarios/scenario-access.js';
import type { Services } from '../services.js';
import type { RecordingSettings } from './recording-settings.js';
import type { RecordListQuery } from './records-service.js';

export type RecordsOperation = 'listDecisionRecords' | 'getDecisionRecord' | 'getRecordingSettings' | 'updateRecordingSettings';

/** HTTP in/out of the decision-record operations; the rules live in RecordsService. Requests reach here validated by the spec. */
export function createRecordsHandlers(services: Services): Pick<OperationHandlers, RecordsOperation> {
  const records = services.records.service;
  const actorOf = (request: Request) => scenarioActorOf(request, services.users);
  const idOf = (request: Request): string => String(request.params.id);

  return {
    async listDecisionRecords(request, response) {
      const query = request.query as Omit<RecordListQuery, 'limit'> & { limit?: number | string };
      response.json(await records.list(await actorOf(request), idOf(request), {
        version: query.version,
        state: query.state,
        requestId: query.requestId,
        from: query.from,
        to: query.to,
        output: query.output,
        cursor: query.cursor,
        limit: query.limit === undefined ? undefined : Number(query.limit),
      }));
    },

    async getDecisionRecord(request, response) {
      response.json(await records.get(await actorOf(request), idOf(request), String(request.params.recordId)));
    },

    async getRecordingSettings(request, response) {
      response.json(await records.settingsOf(await actorOf(request), idOf(request)));
    },

    async updateRecordingSettings(request, response) {
      response.json(await records.updateSettings(await actorOf(request), idOf(request), request.body as RecordingSettings));
    },
  };
}
