import { optionalDateTimeParameter } from '../http/date-time-parameter.js';
import type { OperationHandlers } from '../http/operation-handler.js';
import type { ScenarioScopedHandlers } from '../scenarios/scenario-answers.js';
import type { RecordsService } from './records-service.js';

export type RecordsHandlers = Pick<
  OperationHandlers,
  'listDecisionRecords' | 'getDecisionRecord' | 'getRecordingSettings' | 'updateRecordingSettings'
>;

/** HTTP in/out of the decision-record operations; the rules live in RecordsService. Requests reach here validated by the spec. */
export const createRecordsHandlers: ScenarioScopedHandlers<RecordsService, RecordsHandlers> = (records, answer) => {
  return {
    listDecisionRecords: answer(200, (actor, { params, query }) => {
      const { version, state, requestId, output, cursor, limit } = query;
      const from = optionalDateTimeParameter(query.from, 'query.from');
      const to = optionalDateTimeParameter(query.to, 'query.to');
      return records.list(actor, params.id, { version, state, requestId, from, to, output, cursor, limit });
    }),
    getDecisionRecord: answer(200, (actor, { params }) => records.get(actor, params.id, params.recordId)),
    getRecordingSettings: answer(200, (actor, { params }) => records.settingsOf(actor, params.id)),
    updateRecordingSettings: answer(200, (actor, { params, body }) => records.updateSettings(actor, params.id, body)),
  };
};
