import type { UserLookup } from '../auth/access-context.js';
import { optionalDateTimeParameter } from '../http/date-time-parameter.js';
import type { OperationHandlers } from '../http/operation-handler.js';
import { scenarioActorOf, type ManagementRequest } from '../scenarios/scenario-access.js';
import type { RecordsService } from './records-service.js';

export type RecordsOperation = 'listDecisionRecords' | 'getDecisionRecord' | 'getRecordingSettings' | 'updateRecordingSettings';

/** HTTP in/out of the decision-record operations; the rules live in RecordsService. Requests reach here validated by the spec. */
/** What the decision-record handlers need. */
export interface RecordsHandlerDeps {
  records: RecordsService;
  users: UserLookup;
}

export function createRecordsHandlers({ records, users }: RecordsHandlerDeps): Pick<OperationHandlers, RecordsOperation> {
  const actorOf = (request: ManagementRequest) => scenarioActorOf(request, users);

  return {
    async listDecisionRecords(request) {
      const { version, state, requestId, output, cursor, limit } = request.query;
      const actor = await actorOf(request);
      const from = optionalDateTimeParameter(request.query.from, 'query.from');
      const to = optionalDateTimeParameter(request.query.to, 'query.to');
      return { status: 200, body: await records.list(actor, request.params.id, { version, state, requestId, from, to, output, cursor, limit }) };
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
