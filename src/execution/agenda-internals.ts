import type { Agenda } from 'agenda';

/**
 * The only place that reaches past Agenda's public API. Everything else in the service uses
 * documented methods, events and options. What is used here was read in Agenda 6.2.6
 * (`dist/JobProcessor.js`); package.json pins that exact version, and
 * test/execution/agenda-internals.test.ts checks every assumption below against the installed
 * Agenda, so an upgrade that changes them fails that test instead of silently slowing workers.
 */
export const AGENDA_VERSION_RELIED_ON = '6.2.6';

/** The private JobProcessor that `agenda.start()` creates (`agenda.jobProcessor`). */
interface JobProcessorInternals {
  /** False once the processor was stopped or drained. */
  isRunning: boolean;
  /** Per job name: how many jobs this process holds locked (running or waiting to run). */
  jobStatus: Record<string, { locked: number; running: number } | undefined>;
  /** What a notification triggers: lock jobs of that name up to its limits, then run them. */
  handleNotification(notification: { jobName: string }): Promise<void>;
}

function processorOf(agenda: Agenda): JobProcessorInternals | undefined {
  const processor = (agenda as unknown as { jobProcessor?: JobProcessorInternals }).jobProcessor;
  return processor?.isRunning ? processor : undefined;
}

/** True while this Agenda instance processes jobs (started, not stopped or drained). */
export function isProcessingJobs(agenda: Agenda): boolean {
  return processorOf(agenda) !== undefined;
}

/** How many jobs of `name` this process holds locked now; undefined when it does not process jobs. */
export function lockedJobCount(agenda: Agenda, name: string): number | undefined {
  const processor = processorOf(agenda);
  return processor ? (processor.jobStatus[name]?.locked ?? 0) : undefined;
}

/**
 * Makes this process look for due jobs of `name` now, as a notification would (it locks them up
 * to the definition's limits and runs them), instead of at its next poll. Does nothing when the
 * process does not process jobs. Job-store errors are Agenda's to report (its 'error' event).
 */
export async function lookForJobsNow(agenda: Agenda, name: string): Promise<void> {
  await processorOf(agenda)?.handleNotification({ jobName: name });
}
