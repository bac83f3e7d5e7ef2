import type { Logger } from 'pino';
import { BufferedRunWriter, type RunWriterOptions } from './buffered-run-writer.js';
import type { SplitRunSink } from './live-splits.js';
import type { SplitRun } from './split.js';
import type { MySqlSplitStore } from './split-store.js';

/** Split runs written in bulk behind the live path, as shadow runs are (BufferedRunWriter). */
export class SplitRunWriter extends BufferedRunWriter<SplitRun> implements SplitRunSink {
  constructor(store: MySqlSplitStore, options: RunWriterOptions, logger: Logger) {
    super((runs) => store.insertRuns(runs), options, logger, 'split runs');
  }
}
