import type { MiningModel } from './model-document.js';

/**
 * Segmentation@missingPredictionTreatment and @missingThreshold (PMML 4.4, "Multiple Models"), for model-codegen.ts:
 * what the combination does with a segment that applies (its predicate is true) and predicts nothing. As the
 * reference evaluator, JPMML, reads the specification:
 *
 * - `returnMissing`: the segmentation predicts nothing.
 * - `skipSegment`: the segment is left out of the combination (`selectFirst`: the next segment that applies
 *   answers, whatever the threshold). The segmentation predicts nothing when the left-out segments' share of the applying segments'
 *   weight (Segment@weight, whatever the method) exceeds `missingThreshold` (default 1: never), or when nothing is
 *   left. Not for `modelChain` (the reader refuses it).
 * - `continue` (the default): the missing prediction takes part as a value. The votes count it as a vote for
 *   "missing", which the segmentation predicts (nothing) when it has more votes than every category, or when the
 *   missing segments' share of the weight exceeds `missingThreshold`; the probabilities are the categories' shares
 *   of the other votes. A model chain passes its missing outputs on to the later segments; `selectFirst` answers
 *   the first applying segment's result, missing or not; the methods that compute with the predictions (sums,
 *   averages, medians, `max`) cannot compute with a missing one, and predict nothing.
 *
 * The generated statements keep `aw` (the applying segments' weight) and `mw` (the weight of those that predicted
 * nothing) only when the threshold can be exceeded.
 */
export class MissingPredictions {
  readonly treatment: NonNullable<MiningModel['missingPredictionTreatment']>;
  private readonly threshold: number;
  /** a missing prediction is left out of the arithmetic, not the end of it */
  private readonly leavesOut: boolean;
  private readonly shared: boolean;

  /** `votes`: the combination counts categories (majorityVote, weightedMajorityVote). */
  constructor(m: MiningModel, votes: boolean) {
    this.treatment = m.missingPredictionTreatment ?? 'continue';
    this.threshold = m.missingThreshold ?? 1;
    this.leavesOut = this.treatment === 'skipSegment' || (votes && this.treatment === 'continue');
    this.shared = this.leavesOut && this.threshold < 1;
  }

  /** skipSegment: a segment that predicts nothing is left out (inline sums of trees have no result to leave out). */
  get skips(): boolean {
    return this.treatment === 'skipSegment';
  }

  declarations(): string {
    return this.shared ? 'let aw = 0, mw = 0;' : '';
  }

  /** Statements for the result `r` of an applying segment of weight `weight`: `use` it, or treat its absence. */
  onResult(weight: string, use: string, onMissing = ''): string {
    if (!this.leavesOut) return `if (r === null) return null; ${use}`;
    if (!this.shared)
      return onMissing === '' ? `if (r !== null) { ${use} }` : `if (r === null) { ${onMissing} } else { ${use} }`;
    return `aw += ${weight}; if (r === null) { mw += ${weight}; ${onMissing} } else { ${use} }`;
  }

  /** After the segments: no prediction when the missing share exceeds the threshold. */
  shareCheck(): string[] {
    return this.shared ? [`if (mw / aw > ${JSON.stringify(this.threshold)}) return null;`] : [];
  }
}
