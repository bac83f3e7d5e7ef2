import type { components } from '../../generated/api-types.js';
import { NotFoundError } from '../errors/not-found-error.js';
import type { ScenarioAccess, ScenarioActor } from '../scenarios/scenario-access.js';
import type { DecisionRecord, DecisionRecordSummary } from './decision-record.js';
import type { DecisionRecordStore, RecordFilter } from './decision-record-store-type.js';
import type { RecordCursorCodec } from './record-cursor.js';
import type { RecordingSettings } from './recording-settings.js';
import type { RecordingSettingsService } from './recording-settings-service.js';

type DecisionRecordDto = components['schemas']['DecisionRecord'];
type DecisionRecordSummaryDto = components['schemas']['DecisionRecordSummary'];
type DecisionRecordPageDto = components['schemas']['DecisionRecordPage'];

/** A list request as the spec has validated it. */
/** A list request, its date-times parsed by the routes (src/http/date-time-parameter.ts: 400 outside 1970–9999). */
export interface RecordListQuery extends Omit<RecordFilter, 'outputs'> {
  output?: Record<string, string>;
  cursor?: string;
  limit?: number;
}

/** The spec's default page size. */
const DEFAULT_PAGE = 50;

/**
 * Browsing a scenario's decision records and changing how it records them. Who may: the scenario
 * operations' one ownership rule (ScenarioAccess, implemented by the scenarios feature).
 */
export class RecordsService {
  constructor(
    private readonly scenarios: ScenarioAccess,
    private readonly store: DecisionRecordStore,
    private readonly settings: RecordingSettingsService,
    private readonly cursors: RecordCursorCodec,
  ) {}

  async list(actor: ScenarioActor, scenarioId: string, query: RecordListQuery): Promise<DecisionRecordPageDto> {
    const scenario = await this.scenarios.accessible(actor, scenarioId);
    const after = query.cursor === undefined ? undefined : this.cursors.decode(scenario.id, query.cursor);
    const filter: RecordFilter = {
      version: query.version,
      state: query.state,
      requestId: query.requestId,
      from: query.from,
      to: query.to,
      outputs: query.output,
    };
    const page = await this.store.list(scenario.id, filter, after, query.limit ?? DEFAULT_PAGE);
    return {
      records: page.records.map(summaryDto),
      nextCursor: page.next ? this.cursors.encode(scenario.id, page.next) : null,
    };
  }

  async get(actor: ScenarioActor, scenarioId: string, recordId: string): Promise<DecisionRecordDto> {
    const scenario = await this.scenarios.accessible(actor, scenarioId);
    const record = await this.store.get(scenario.id, recordId);
    if (!record)
      throw new NotFoundError(`Scenario "${scenario.name}" has no decision record "${recordId}".`, 'RECORD_NOT_FOUND');
    return recordDto(record);
  }

  async settingsOf(actor: ScenarioActor, scenarioId: string): Promise<RecordingSettings> {
    const scenario = await this.scenarios.accessible(actor, scenarioId);
    return { ...(await this.settings.forScenario(scenario.id)) };
  }

  async updateSettings(
    actor: ScenarioActor,
    scenarioId: string,
    settings: RecordingSettings,
  ): Promise<RecordingSettings> {
    const scenario = await this.scenarios.accessible(actor, scenarioId);
    const { enabled, retentionDays, syncSampleRate, trace } = settings;
    return this.settings.update(scenario.id, { enabled, retentionDays, syncSampleRate, trace });
  }
}

function commonDto(record: Omit<DecisionRecord, 'trace' | 'captures'>): Omit<DecisionRecordDto, 'trace' | 'captures'> {
  return {
    id: record.id,
    scenarioId: String(record.scenarioId),
    scenarioName: record.scenarioName,
    version: record.version,
    mode: record.mode,
    requesterId: String(record.requesterId),
    requestId: record.requestId,
    batchId: record.batchId,
    state: record.state,
    inputs: record.inputs,
    maskedInputs: record.maskedInputs,
    result: record.result,
    error: record.error,
    beganAt: record.beganAt.toISOString(),
    endedAt: record.endedAt.toISOString(),
    durationMicros: record.durationMicros,
  };
}

function summaryDto(record: DecisionRecordSummary): DecisionRecordSummaryDto {
  return { ...commonDto(record), hasTrace: record.hasTrace, captureCount: record.captureCount };
}

function recordDto(record: DecisionRecord): DecisionRecordDto {
  return {
    ...commonDto(record),
    trace: record.trace as DecisionRecordDto['trace'],
    captures: record.captures as DecisionRecordDto['captures'],
  };
}
