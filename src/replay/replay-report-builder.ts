import type { PortCallSite } from '../engine/index.js';
import type { RunError } from '../execution/run-outcome.js';
import type { DecisionRecordSummary } from '../records/decision-record.js';
import { createHash } from 'node:crypto';
import { canonicalJson } from './canonical-json.js';
import { DifferenceStats } from './difference-stats.js';
import { siteKey } from './recorded-calls.js';
import type { ReplayReport } from './replay.js';

type OutputReport = ReplayReport['outputs'][number];
type ReplayRun = ReplayReport['sample'][number];
type Outcome = ReplayRun['old'];

/** Distinct old → new pairs told apart per output; records of further pairs are only counted. */
const MAX_TRACKED_PAIRS = 10_000;
/** Pairs listed per output, most frequent first. */
const MAX_LISTED_PAIRS = 500;
/** Records that failed in one version only, listed. */
const MAX_FAILURE_RUNS = 1000;
/**
 * Most bytes of JSON a stored report takes (`replays.report`): it is written in one statement, escaped
 * (each quote of the JSON doubled in the worst case), which must stay below MariaDB's max_allowed_packet
 * (16 MiB by default). A report of 57 MB could never be stored, and its write was retried for ever.
 */
export const REPORT_MAX_BYTES = 4 * 1024 * 1024;

/** How the candidate ended on one record. */
export interface CandidateOutcome {
  result: Record<string, unknown> | null;
  error: RunError | null;
  /** HTTP calls it made that the record has no recording for (the run is not compared). */
  unrecorded: PortCallSite[];
  served: number;
  requestDiffers: number;
}

interface Transition {
  from: unknown;
  to: unknown;
  count: number;
}

/** One compared output's matrix and, for numbers, its differences. */
class OutputTally {
  compared = 0;
  changed = 0;
  /** Compared records in which either result has this output: none hints at a misspelt name. */
  present = 0;
  untrackedRecords = 0;
  readonly pairs = new Map<string, Transition>();
  readonly differences = new DifferenceStats();

  constructor(readonly name: string) {}

  add(oldValue: unknown, newValue: unknown, oldKey: string, newKey: string): void {
    this.compared += 1;
    if (oldValue !== undefined || newValue !== undefined) this.present += 1;
    if (oldKey !== newKey) this.changed += 1;
    const key = `${shortKey(oldKey)}\u0000${shortKey(newKey)}`;
    const pair = this.pairs.get(key);
    if (pair) pair.count += 1;
    else if (this.pairs.size < MAX_TRACKED_PAIRS)
      this.pairs.set(key, { from: shown(oldValue ?? null, oldKey), to: shown(newValue ?? null, newKey), count: 1 });
    else this.untrackedRecords += 1;
    if (
      typeof oldValue === 'number' &&
      typeof newValue === 'number' &&
      Number.isFinite(oldValue) &&
      Number.isFinite(newValue)
    )
      this.differences.add(oldValue, newValue);
  }

  report(): OutputReport {
    const sorted = [...this.pairs.entries()].sort(
      ([keyA, a], [keyB, b]) => b.count - a.count || (keyA < keyB ? -1 : keyA > keyB ? 1 : 0),
    );
    const listed = sorted.slice(0, MAX_LISTED_PAIRS).map(([, pair]) => pair);
    const left = sorted.slice(MAX_LISTED_PAIRS);
    return {
      name: this.name,
      compared: this.compared,
      changed: this.changed,
      transitions: listed,
      otherTransitions: {
        pairs: left.length,
        records: left.reduce((sum, [, pair]) => sum + pair.count, 0) + this.untrackedRecords,
      },
      differences: this.differences.summary(),
    };
  }
}

/**
 * Builds a replay's report record by record, in the order records are read (newest first), holding
 * only counters, the transition pairs, the numeric differences and the bounded lists — never the
 * results of every record.
 */
export class ReplayReportBuilder {
  replayed = 0;
  /** Records the candidate failed on or could not replay (the status's `failed`). */
  failed = 0;
  private compared = 0;
  private changed = 0;
  private readonly outputs: OutputTally[];
  private readonly failures = {
    onlyOld: 0,
    onlyNew: 0,
    both: 0,
    newErrorCodes: Object.create(null) as Record<string, number>,
    runs: [] as ReplayRun[],
    truncated: false,
  };
  private unrecordedRecords = 0;
  private readonly unrecordedSites = new Map<string, { nodeId: string; callPath: string[]; records: number }>();
  private served = 0;
  private requestDiffers = 0;
  private maskedRecords = 0;
  // No prototype: a variable named `__proto__` is a key like any other.
  private readonly maskedVariables: Record<string, number> = Object.create(null);
  private readonly versions = new Map<string, number>();
  private readonly sample: ReplayRun[] = [];

  constructor(
    outputs: readonly string[],
    private readonly sampleSize: number,
  ) {
    this.outputs = outputs.map((name) => new OutputTally(name));
  }

  add(record: DecisionRecordSummary, candidate: CandidateOutcome): void {
    this.replayed += 1;
    this.versions.set(record.version, (this.versions.get(record.version) ?? 0) + 1);
    this.served += candidate.served;
    this.requestDiffers += candidate.requestDiffers;
    if (record.maskedInputs.length > 0) {
      this.maskedRecords += 1;
      for (const name of record.maskedInputs) this.maskedVariables[name] = ownValue(this.maskedVariables, name, 0) + 1;
    }
    if (candidate.unrecorded.length > 0) {
      this.failed += 1;
      this.addUnrecorded(candidate.unrecorded);
      return;
    }
    const oldFailed = record.state === 'FAILED';
    const newFailed = candidate.error !== null;
    if (newFailed) {
      this.failed += 1;
      const code = (candidate.error as RunError).code;
      this.failures.newErrorCodes[code] = ownValue(this.failures.newErrorCodes, code, 0) + 1;
    }
    if (oldFailed || newFailed) {
      if (oldFailed && newFailed) {
        this.failures.both += 1;
        return;
      }
      if (oldFailed) this.failures.onlyOld += 1;
      else this.failures.onlyNew += 1;
      this.changed += 1;
      const listed = this.failures.runs.length < MAX_FAILURE_RUNS;
      if (!listed) this.failures.truncated = true;
      if (!listed && this.sample.length >= this.sampleSize) return;
      const run = sideBySide(record, candidate);
      if (listed) this.failures.runs.push(run);
      this.addToSample(run);
      return;
    }
    this.compared += 1;
    const oldResult = record.result ?? {};
    const newResult = candidate.result ?? {};
    let changed = false;
    for (const output of this.outputs) {
      const oldValue = ownValue(oldResult, output.name, undefined);
      const newValue = ownValue(newResult, output.name, undefined);
      const oldKey = canonicalJson(oldValue);
      const newKey = canonicalJson(newValue);
      if (oldKey !== newKey) changed = true;
      output.add(oldValue, newValue, oldKey, newKey);
    }
    if (changed) {
      this.changed += 1;
      if (this.sample.length < this.sampleSize) this.addToSample(sideBySide(record, candidate));
    }
  }

  /** The report, within `maxBytes` of JSON (fitReport); `notes` are added to the ones the figures call for. */
  build(notes: readonly string[], maxBytes = REPORT_MAX_BYTES): ReplayReport {
    return fitReport(this.fullReport(notes), maxBytes);
  }

  private fullReport(notes: readonly string[]): ReplayReport {
    const versions = [...this.versions.entries()]
      .sort(([a], [b]) => Number(a) - Number(b))
      .map(([version, count]) => `${version} (${count})`);
    return {
      replayed: this.replayed,
      compared: this.compared,
      changed: this.changed,
      outputs: this.outputs.map((output) => output.report()),
      failures: this.failures,
      unrecorded: {
        records: this.unrecordedRecords,
        calls: [...this.unrecordedSites.values()].sort((a, b) => b.records - a.records),
      },
      httpCalls: { served: this.served, requestDiffers: this.requestDiffers },
      maskedInputs: { records: this.maskedRecords, variables: this.maskedVariables },
      sample: this.sample,
      notes: [
        ...(versions.length > 0
          ? [`Old values are what the recorded runs decided, by version: ${versions.join(', ')}.`]
          : []),
        ...this.figureNotes(),
        ...notes,
      ],
    };
  }

  private figureNotes(): string[] {
    const notes: string[] = [];
    if (this.unrecordedRecords > 0) {
      notes.push(
        `${this.unrecordedRecords} record(s) were not compared: the candidate made HTTP calls their recordings have no answer for (see unrecorded); those calls were not made.`,
      );
    }
    if (this.requestDiffers > 0) {
      notes.push(
        `${this.requestDiffers} HTTP call(s) were sent with another method, URL or body than was recorded; they got the recorded answer all the same.`,
      );
    }
    const nowhere = this.outputs
      .filter((output) => output.compared > 0 && output.present === 0)
      .map((output) => `"${output.name}"`);
    if (nowhere.length > 0) {
      notes.push(
        `No result of either version has the output ${nowhere.join(', ')}, so it compares null with null: check the name.`,
      );
    }
    if (this.maskedRecords > 0) {
      notes.push(
        `${this.maskedRecords} record(s) had pii inputs stored masked (${Object.keys(this.maskedVariables).join(', ')}): the candidate got the masked text in their place.`,
      );
    }
    return notes;
  }

  private addUnrecorded(sites: PortCallSite[]): void {
    this.unrecordedRecords += 1;
    const seen = new Set<string>();
    for (const site of sites) {
      const key = siteKey(site.nodeId, site.callPath);
      if (seen.has(key)) continue;
      seen.add(key);
      const entry = this.unrecordedSites.get(key);
      if (entry) entry.records += 1;
      else this.unrecordedSites.set(key, { nodeId: site.nodeId, callPath: [...site.callPath], records: 1 });
    }
  }

  private addToSample(run: ReplayRun): void {
    if (this.sample.length < this.sampleSize) this.sample.push(run);
  }
}

function sideBySide(record: DecisionRecordSummary, candidate: CandidateOutcome): ReplayRun {
  return {
    recordId: record.id,
    requestId: record.requestId,
    beganAt: record.beganAt.toISOString(),
    inputs: shownObject(record.inputs) as Record<string, unknown>,
    old: {
      state: record.state,
      result: shownObject(record.result),
      error: shownError(record.error) as Outcome['error'],
    },
    new: {
      state: candidate.error ? 'FAILED' : 'SUCCEEDED',
      result: shownObject(candidate.result),
      error: shownError(candidate.error) as Outcome['error'],
    },
  };
}

/**
 * The report keeps what it shows small, whatever the records hold: up to 10,000 transition pairs and
 * 1,200 runs side by side are kept in memory and stored, so a value longer than these many characters of
 * JSON is shown cut (`{"truncated": "<its first characters>…", "chars": <its length>}`), and told apart
 * in the matrix by its hash. Decisions are short values; a huge one is reported, not copied.
 */
const MAX_SHOWN_VALUE_CHARS = 1024;
const MAX_SHOWN_OBJECT_CHARS = 16 * 1024;
const SHOWN_PREFIX_CHARS = 200;

/** A transition's key: the canonical JSON, or its hash when it is longer than a shown value. */
function shortKey(key: string): string {
  return key.length <= MAX_SHOWN_VALUE_CHARS ? key : `#${createHash('sha256').update(key).digest('hex')}`;
}

/** A transition's value as the report shows it (`json`: its canonical JSON text). */
function shown(value: unknown, json: string): unknown {
  return json.length <= MAX_SHOWN_VALUE_CHARS
    ? value
    : { truncated: `${json.slice(0, SHOWN_PREFIX_CHARS)}…`, chars: json.length };
}

/** Inputs or a result as a run side by side shows them: cut when longer than MAX_SHOWN_OBJECT_CHARS of JSON. */
function shownObject(value: Record<string, unknown> | null): Record<string, unknown> | null {
  if (value === null) return null;
  const json = JSON.stringify(value);
  return json.length <= MAX_SHOWN_OBJECT_CHARS
    ? value
    : { truncated: `${json.slice(0, SHOWN_PREFIX_CHARS)}…`, chars: json.length };
}

/**
 * A run's error as a run side by side shows it: as it is when its JSON is at most MAX_SHOWN_OBJECT_CHARS;
 * else its code, node and message (cut to MAX_SHOWN_VALUE_CHARS) with `detailsOmitted` (an error listing
 * 3,000 unknown inputs is 120 KB, and 1,200 runs are shown).
 */
function shownError(error: RunError | null | undefined): RunError | null {
  if (!error) return null;
  if (JSON.stringify(error).length <= MAX_SHOWN_OBJECT_CHARS) return error;
  const message = String(error.message ?? '');
  return {
    code: error.code,
    nodeId: error.nodeId ?? null,
    nodeName: error.nodeName ?? null,
    nodeType: error.nodeType ?? null,
    message:
      message.length <= MAX_SHOWN_VALUE_CHARS
        ? message
        : `${message.slice(0, MAX_SHOWN_VALUE_CHARS)}… [cut: ${message.length} characters]`,
    detailsOmitted: true,
  };
}

/**
 * The report cut to at most `maxBytes` of JSON, the largest parts first, saying what was left out in a
 * note: the runs side by side (sample and failed runs, halved in turn, `failures.truncated` set), then
 * each output's listed transitions (halved; the rest counted in `otherTransitions`), then the unrecorded
 * call sites. Counters and figures are never cut.
 */
function fitReport(report: ReplayReport, maxBytes: number): ReplayReport {
  const size = () => Buffer.byteLength(JSON.stringify(report), 'utf8');
  const original = size();
  if (original <= maxBytes) return report;
  const left = { sample: 0, failedRuns: 0, transitions: 0, calls: 0 };
  while (size() > maxBytes && (report.sample.length > 0 || report.failures.runs.length > 0)) {
    if (report.sample.length >= report.failures.runs.length) {
      const keep = Math.floor(report.sample.length / 2);
      left.sample += report.sample.length - keep;
      report.sample = report.sample.slice(0, keep);
    } else {
      const keep = Math.floor(report.failures.runs.length / 2);
      left.failedRuns += report.failures.runs.length - keep;
      report.failures.runs = report.failures.runs.slice(0, keep);
      report.failures.truncated = true;
    }
  }
  while (size() > maxBytes && report.outputs.some((output) => output.transitions.length > 0)) {
    for (const output of report.outputs) {
      const keep = Math.floor(output.transitions.length / 2);
      const dropped = output.transitions.slice(keep);
      left.transitions += dropped.length;
      output.transitions = output.transitions.slice(0, keep);
      output.otherTransitions = {
        pairs: output.otherTransitions.pairs + dropped.length,
        records: output.otherTransitions.records + dropped.reduce((sum, pair) => sum + pair.count, 0),
      };
    }
  }
  while (size() > maxBytes && report.unrecorded.calls.length > 0) {
    const keep = Math.floor(report.unrecorded.calls.length / 2);
    left.calls += report.unrecorded.calls.length - keep;
    report.unrecorded.calls = report.unrecorded.calls.slice(0, keep);
  }
  report.notes.push(
    `The report was cut to fit the ${maxBytes} bytes a stored report keeps (it took ${original}): left out ${left.sample} sample run(s), ${left.failedRuns} failed run(s), ${left.transitions} listed transition(s) and ${left.calls} unrecorded call site(s).`,
  );
  return report;
}

/**
 * The object's own property, else `absent`: output, variable and error-code names are the user's, and
 * `constructor` or `toString` must not read what every object inherits (a function, not a value).
 */
function ownValue<T, A>(object: Record<string, T>, name: string, absent: A): T | A {
  return Object.hasOwn(object, name) ? object[name] : absent;
}
