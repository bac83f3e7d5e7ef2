import { optionalDateTimeParameter } from '../http/date-time-parameter.js';
import type { OperationHandlers } from '../http/operation-handler.js';
import type { ScenarioActorOf } from '../scenarios/scenario-access.js';
import type { RecordsService } from './records-service.js';

export type RecordsOperation =
  | 'listDecisionRecords'
  | 'getDecisionRecord'
  | 'getRecordingSettings'
  | 'updateRecordingSettings';

/** What the decision-record handlers need. */
export interface RecordsHandlerDeps {
  records: RecordsService;
  actorOf: ScenarioActorOf;
}

/** HTTP in/out of the decision-record operations; the rules live in RecordsService. Requests reach here validated by the spec. */
export function createRecordsHandlers({
  records,
  actorOf,
}: RecordsHandlerDeps): Pick<OperationHandlers, RecordsOperation> {
  return {
    async listDecisionRecords(request) {
      const { version, state, requestId, output, cursor, limit } = request.query;
      const actor = await actorOf(request);
      const from = optionalDateTimeParameter(request.query.from, 'query.from');
      const to = optionalDateTimeParameter(request.query.to, 'query.to');
      return {
        status: 200,
        body: await records.list(actor, request.params.id, {
          version,
          state,
          requestId,
          from,
          to,
          output,
          cursor,
          limit,
        }),
      };
    },

    async getDecisionRecord(request) {
      return {
        status: 200,
        body: await records.get(await actorOf(request), request.params.id, request.params.recordId),
      };
    },

    async getRecordingSettings(request) {
      return { status: 200, body: await records.settingsOf(await actorOf(request), request.params.id) };
    },

    async updateRecordingSettings(request) {
      return {
        status: 200,
        body: await records.updateSettings(await actorOf(request), request.params.id, request.body),
      };
    },
  };
}
