import type { DeployedScenario } from '../scenarios/deployed-scenarios.js';
import type { DecisionRecord } from './decision-record.js';
import type { DecisionRecorder } from './decision-recorder.js';
import type { InputMasker } from './input-masking.js';
import type { RecordingSettings } from './recording-settings.js';
import type { RecordingSettingsService } from './recording-settings-service.js';
import { RunCapture } from './run-capture.js';
import type { RecordedOutcome, RunRecorder, RunRecording, RunToRecord } from './run-recorder.js';
import { MadeRecord } from './stored-run-records.js';

/**
 * Decides per run whether it is recorded (the scenario's settings: enabled; sync runs sampled at
 * `syncSampleRate`; async and batch runs always), captures its port calls, and hands the finished
 * record, pii inputs masked, to the DecisionRecorder (sync runs) or to the run's `hold` (stored runs:
 * written with their outcome, src/records/stored-run-records.ts).
 */
export class ScenarioRunRecorder implements RunRecorder {
  constructor(
    private readonly settings: RecordingSettingsService,
    private readonly masker: InputMasker,
    private readonly recorder: DecisionRecorder,
    private readonly random: () => number = Math.random,
  ) {}

  start(
    deployed: DeployedScenario,
    inputs: Record<string, unknown>,
    run: RunToRecord,
  ): RunRecording | undefined | Promise<RunRecording | undefined> {
    // The hot path: settings read less than 5 s ago answer at once, without a promise.
    const settings = this.settings.cached(deployed.scenarioId);
    if (settings) return this.recording(settings, deployed, inputs, run);
    return this.settings.forScenario(deployed.scenarioId).then((read) => this.recording(read, deployed, inputs, run));
  }

  private recording(
    settings: Readonly<RecordingSettings>,
    deployed: DeployedScenario,
    inputs: Record<string, unknown>,
    run: RunToRecord,
  ): RunRecording | undefined {
    if (!settings.enabled) return undefined;
    // random() < 1 always holds and < 0 never: rates 1 and 0 record every and no sync run.
    if (run.mode === 'SYNC' && !(this.random() < settings.syncSampleRate)) return undefined;
    return new ScenarioRunRecording(this, settings.trace, deployed, inputs, run);
  }

  /** Hands a finished run's record to the recorder; never throws. */
  finish(
    deployed: DeployedScenario,
    inputs: Record<string, unknown>,
    run: RunToRecord,
    capture: RunCapture,
    outcome: RecordedOutcome,
  ): void {
    let record: DecisionRecord;
    try {
      record = this.recordOf(deployed, inputs, run, capture, outcome);
    } catch (error) {
      // Recording never fails a run: a record that cannot be made is counted and logged instead.
      this.recorder.unrecordable(error);
      return;
    }
    // A stored run's record is written with its outcome (StoredRunRecords); a sync run's is buffered.
    if (run.hold) run.hold(new MadeRecord(record));
    else this.recorder.record(record);
  }

  private recordOf(
    deployed: DeployedScenario,
    inputs: Record<string, unknown>,
    run: RunToRecord,
    capture: RunCapture,
    outcome: RecordedOutcome,
  ): DecisionRecord {
    const pii = this.masker.piiInputs(deployed.document);
    const masked = this.masker.maskInputs(inputs, pii);
    return {
      id: run.id,
      ownerId: deployed.ownerId,
      scenarioId: deployed.scenarioId,
      scenarioName: deployed.name,
      version: deployed.version,
      versionId: deployed.versionId,
      mode: run.mode,
      requesterId: run.requesterId,
      requestId: run.requestId,
      batchId: run.batchId ?? null,
      state: outcome.error ? 'FAILED' : 'SUCCEEDED',
      inputs: masked.inputs,
      maskedInputs: masked.masked,
      result: outcome.result,
      error:
        outcome.error && masked.masked.length > 0
          ? this.masker.maskError(outcome.error, masked.masked, inputs)
          : outcome.error,
      beganAt: outcome.beganAt,
      endedAt: outcome.endedAt,
      durationMicros: outcome.durationMicros,
      trace: outcome.trace ? this.masker.maskTrace(outcome.trace, masked.masked, inputs) : null,
      captures: capture.captures,
    };
  }
}

/** One run being recorded (a class rather than closures: one object per recorded run on the hot path). */
class ScenarioRunRecording implements RunRecording {
  readonly portHooks = new RunCapture();

  constructor(
    private readonly owner: ScenarioRunRecorder,
    readonly trace: boolean,
    private readonly deployed: DeployedScenario,
    private readonly inputs: Record<string, unknown>,
    private readonly run: RunToRecord,
  ) {}

  finish(outcome: RecordedOutcome): void {
    this.owner.finish(this.deployed, this.inputs, this.run, this.portHooks, outcome);
  }
}
