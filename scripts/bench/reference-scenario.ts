/**
 * The reference credit decision used by the benchmarks: 12 inputs, one script (ratios), an eligibility decision,
 * an 8-characteristic scorecard and a 30-row decision table. Built three ways from the same data: as a scenario
 * document for our engine, as a JDM graph for @gorules/zen-engine, and as plain JavaScript (the ceiling).
 */
import { normalizeScenarioDocument, type ScenarioDocument } from '../../src/engine/index.js';

export interface CreditInputs {
  age: number;
  income: number;
  debt: number;
  employmentYears: number;
  housing: string;
  creditHistoryYears: number;
  latePayments: number;
  loanAmount: number;
  loanTermMonths: number;
  dependents: number;
  region: string;
  hasCollateral: boolean;
}

export interface CreditResult {
  decision: string;
  tier: string;
  limitFactor: number;
  score: number | null;
  reasonCodes: string[];
}

interface Bin {
  min?: number;
  max?: number;
  values?: string[];
  points: number;
}
interface Characteristic {
  name: string;
  variable: string;
  reasonCode: string;
  elsePoints: number;
  bins: Bin[];
}

export const BASE_SCORE = 400;

export const CHARACTERISTICS: Characteristic[] = [
  {
    name: 'Age',
    variable: 'age',
    reasonCode: 'AGE',
    elsePoints: 0,
    bins: [
      { max: 25, points: 10 },
      { min: 25, max: 35, points: 25 },
      { min: 35, max: 50, points: 40 },
      { min: 50, points: 30 },
    ],
  },
  {
    name: 'Income',
    variable: 'income',
    reasonCode: 'INCOME',
    elsePoints: 0,
    bins: [
      { max: 1500, points: 5 },
      { min: 1500, max: 3000, points: 25 },
      { min: 3000, max: 6000, points: 45 },
      { min: 6000, points: 60 },
    ],
  },
  {
    name: 'Debt to income',
    variable: 'dti',
    reasonCode: 'DTI',
    elsePoints: 0,
    bins: [
      { max: 0.2, points: 60 },
      { min: 0.2, max: 0.35, points: 40 },
      { min: 0.35, max: 0.5, points: 15 },
      { min: 0.5, points: 0 },
    ],
  },
  {
    name: 'Employment',
    variable: 'employmentYears',
    reasonCode: 'EMPLOYMENT',
    elsePoints: 0,
    bins: [
      { max: 1, points: 5 },
      { min: 1, max: 5, points: 20 },
      { min: 5, points: 35 },
    ],
  },
  {
    name: 'Housing',
    variable: 'housing',
    reasonCode: 'HOUSING',
    elsePoints: 0,
    bins: [
      { values: ['OWN'], points: 40 },
      { values: ['FAMILY'], points: 25 },
      { values: ['RENT'], points: 15 },
    ],
  },
  {
    name: 'Credit history',
    variable: 'creditHistoryYears',
    reasonCode: 'HISTORY',
    elsePoints: 0,
    bins: [
      { max: 2, points: 5 },
      { min: 2, max: 7, points: 25 },
      { min: 7, points: 45 },
    ],
  },
  {
    name: 'Late payments',
    variable: 'latePayments',
    reasonCode: 'LATE',
    elsePoints: 0,
    bins: [
      { max: 1, points: 50 },
      { min: 1, max: 3, points: 20 },
      { min: 3, points: -20 },
    ],
  },
  {
    name: 'Dependents',
    variable: 'dependents',
    reasonCode: 'DEPENDENTS',
    elsePoints: 0,
    bins: [
      { max: 1, points: 20 },
      { min: 1, max: 3, points: 15 },
      { min: 3, points: 5 },
    ],
  },
];
export const MAX_REASON_CODES = 3;

const SCORE_BANDS: [number | undefined, number | undefined][] = [
  [undefined, 500],
  [500, 550],
  [550, 600],
  [600, 650],
  [650, 700],
  [700, undefined],
];
const DTI_BANDS: [number | undefined, number | undefined][] = [
  [undefined, 0.2],
  [0.2, 0.35],
  [0.35, 0.5],
  [0.5, 0.7],
  [0.7, undefined],
];
const TIERS = ['A', 'B', 'C', 'D', 'E'];

/** The 30 rules (6 score bands × 5 DTI bands), in order. */
export const RULES = SCORE_BANDS.flatMap((score, s) =>
  DTI_BANDS.map((dti, d) => {
    const quality = s - d; // higher is better
    const decision = quality >= 3 ? 'APPROVE' : quality >= 0 ? 'REVIEW' : 'REJECT';
    const tier = TIERS[Math.max(0, Math.min(4, 4 - quality))];
    const limitFactor = decision === 'REJECT' ? 0 : Math.round((0.5 + quality * 0.25) * 100) / 100;
    return { score, dti, decision, tier, limitFactor };
  }),
);

const range = ([min, max]: [number | undefined, number | undefined]): string =>
  min === undefined ? `< ${max}` : max === undefined ? `>= ${min}` : `[${min}..${max})`;

/** Our scenario document (canonical strings), `variant` changes the base score to make distinct versions. */
export function referenceScenario(variant = 0): ScenarioDocument {
  return normalizeScenarioDocument({
    content: {
      nodes: [
        { id: 'start', type: 'START', name: 'Application' },
        { id: 'ratios', type: 'SCRIPT', name: 'Ratios' },
        { id: 'eligible', type: 'DECISION', name: 'Eligible?' },
        { id: 'scorecard', type: 'SCORECARD', name: 'Credit scorecard' },
        { id: 'policy', type: 'DECISION_TABLE', name: 'Policy' },
        { id: 'done', type: 'END', name: 'Decided' },
        { id: 'ineligible', type: 'SCRIPT', name: 'Ineligible' },
        { id: 'rejected', type: 'END', name: 'Rejected' },
      ],
      edges: [
        { from: 'start', to: 'ratios' },
        { from: 'ratios', to: 'eligible' },
        { from: 'eligible', to: 'scorecard', when: true },
        { from: 'eligible', to: 'ineligible', when: false },
        { from: 'scorecard', to: 'policy' },
        { from: 'policy', to: 'done' },
        { from: 'ineligible', to: 'rejected' },
      ],
    },
    nodeProperties: {
      start: {
        id: 'start',
        type: 'START',
        content: {
          inputs: [
            { name: 'age', type: { type: 'INTEGER' }, required: true },
            { name: 'income', type: { type: 'DOUBLE' }, required: true },
            { name: 'debt', type: { type: 'DOUBLE' }, required: true },
            { name: 'employmentYears', type: { type: 'INTEGER' }, required: true },
            {
              name: 'housing',
              type: { type: 'DICTIONARY', name: 'housing', options: ['OWN', 'RENT', 'FAMILY'] },
              required: true,
            },
            { name: 'creditHistoryYears', type: { type: 'INTEGER' }, required: true },
            { name: 'latePayments', type: { type: 'INTEGER' }, required: true },
            { name: 'loanAmount', type: { type: 'DOUBLE' }, required: true },
            { name: 'loanTermMonths', type: { type: 'INTEGER' }, required: true },
            { name: 'dependents', type: { type: 'INTEGER' }, required: true },
            { name: 'region', type: { type: 'STRING' }, required: true },
            { name: 'hasCollateral', type: { type: 'BOOLEAN' }, required: true },
          ],
        },
      },
      ratios: {
        id: 'ratios',
        type: 'SCRIPT',
        content: {
          language: 'javascript',
          outputs: ['dti', 'lti', 'paymentRatio'],
          code: 'dti = income > 0 ? debt / income : 99;\nlti = income > 0 ? loanAmount / (income * 12) : 99;\npaymentRatio = income > 0 ? loanAmount / loanTermMonths / income : 99;',
        },
      },
      eligible: {
        id: 'eligible',
        type: 'DECISION',
        content: { language: 'javascript', condition: 'age >= 18 && income > 0 && lti < 5' },
      },
      scorecard: {
        id: 'scorecard',
        type: 'SCORECARD',
        content: {
          baseScore: BASE_SCORE + variant,
          maxReasonCodes: MAX_REASON_CODES,
          characteristics: CHARACTERISTICS,
        },
      },
      policy: {
        id: 'policy',
        type: 'DECISION_TABLE',
        content: {
          hitPolicy: 'FIRST',
          inputs: [
            { name: 'score', type: 'NUMBER' },
            { name: 'dti', type: 'NUMBER' },
          ],
          outputs: [{ name: 'decision' }, { name: 'tier' }, { name: 'limitFactor' }],
          rules: RULES.map((r) => ({
            when: { score: range(r.score), dti: range(r.dti) },
            then: { decision: r.decision, tier: r.tier, limitFactor: r.limitFactor },
          })),
        },
      },
      done: {
        id: 'done',
        type: 'END',
        content: { outputs: ['decision', 'tier', 'limitFactor', 'score', 'reasonCodes'] },
      },
      ineligible: {
        id: 'ineligible',
        type: 'SCRIPT',
        content: {
          language: 'javascript',
          outputs: ['decision', 'tier', 'limitFactor', 'score', 'reasonCodes'],
          code: 'decision = "REJECT"; tier = "E"; limitFactor = 0; score = null; reasonCodes = ["INELIGIBLE"];',
        },
      },
      rejected: {
        id: 'rejected',
        type: 'END',
        content: { outputs: ['decision', 'tier', 'limitFactor', 'score', 'reasonCodes'] },
      },
    },
  });
}

/** The characteristics as the hand-written decision reads them: best points precomputed, bins as flat fields. */
interface HandBin {
  hasRange: boolean;
  min: number;
  max: number;
  value: string | null;
  points: number;
}
interface HandCharacteristic {
  variable: string;
  reasonCode: string;
  elsePoints: number;
  best: number;
  bins: HandBin[];
}
const HAND_CHARACTERISTICS: HandCharacteristic[] = CHARACTERISTICS.map((c) => ({
  variable: c.variable,
  reasonCode: c.reasonCode,
  elsePoints: c.elsePoints,
  best: Math.max(c.elsePoints, ...c.bins.map((b) => b.points)),
  bins: c.bins.map((b) => ({
    hasRange: b.min !== undefined || b.max !== undefined,
    min: b.min ?? -Infinity,
    max: b.max ?? Infinity,
    value: b.values ? b.values[0] : null,
    points: b.points,
  })),
}));
const HAND_RULES = RULES.map((r) => ({
  scoreMin: r.score[0] ?? -Infinity,
  scoreMax: r.score[1] ?? Infinity,
  dtiMin: r.dti[0] ?? -Infinity,
  dtiMax: r.dti[1] ?? Infinity,
  decision: r.decision,
  tier: r.tier,
  limitFactor: r.limitFactor,
}));
const byLossThenOrder = (a: [number, number, string], b: [number, number, string]) => b[0] - a[0] || a[1] - b[1];

/** The same decision by hand, as plain fast JavaScript (loops, Object.assign and assignments; no spreads, no forEach): the ceiling. */
export function decideByHand(i: CreditInputs): CreditResult {
  const income = i.income;
  const dti = income > 0 ? i.debt / income : 99;
  const lti = income > 0 ? i.loanAmount / (income * 12) : 99;
  if (!(i.age >= 18 && income > 0 && lti < 5))
    return { decision: 'REJECT', tier: 'E', limitFactor: 0, score: null, reasonCodes: ['INELIGIBLE'] };
  const values = Object.assign({}, i) as unknown as Record<string, unknown>;
  values.dti = dti;
  let score = BASE_SCORE;
  const lost: [number, number, string][] = [];
  for (let k = 0; k < HAND_CHARACTERISTICS.length; k++) {
    const c = HAND_CHARACTERISTICS[k];
    const x = values[c.variable];
    let p = c.elsePoints;
    for (let b = 0; b < c.bins.length; b++) {
      const bin = c.bins[b];
      if (bin.hasRange ? typeof x === 'number' && x >= bin.min && x < bin.max : x === bin.value) {
        p = bin.points;
        break;
      }
    }
    score += p;
    if (p < c.best) lost.push([c.best - p, k, c.reasonCode]);
  }
  lost.sort(byLossThenOrder);
  const reasonCodes: string[] = [];
  for (let k = 0; k < lost.length && k < MAX_REASON_CODES; k++) reasonCodes.push(lost[k][2]);
  for (let r = 0; r < HAND_RULES.length; r++) {
    const rule = HAND_RULES[r];
    if (score >= rule.scoreMin && score < rule.scoreMax && dti >= rule.dtiMin && dti < rule.dtiMax) {
      return { decision: rule.decision, tier: rule.tier, limitFactor: rule.limitFactor, score, reasonCodes };
    }
  }
  return { decision: null!, tier: null!, limitFactor: null!, score, reasonCodes };
}

/** The same decision as a JDM graph for @gorules/zen-engine. */
export function referenceJdm(): object {
  const zenRange = ([min, max]: [number | undefined, number | undefined]): string =>
    min === undefined ? `< ${max}` : max === undefined ? `>= ${min}` : `>= ${min} and < ${max}`;
  const nodes: object[] = [
    { id: 'in', type: 'inputNode', name: 'Application', position: { x: 0, y: 0 } },
    {
      id: 'ratios',
      type: 'expressionNode',
      name: 'Ratios',
      position: { x: 0, y: 0 },
      content: {
        passThrough: true,
        inputField: null,
        outputPath: null,
        executionMode: 'single',
        expressions: [
          { id: 'x1', key: 'dti', value: 'income > 0 ? debt / income : 99' },
          { id: 'x2', key: 'lti', value: 'income > 0 ? loanAmount / (income * 12) : 99' },
          { id: 'x3', key: 'paymentRatio', value: 'income > 0 ? loanAmount / loanTermMonths / income : 99' },
        ],
      },
    },
    {
      id: 'eligible',
      type: 'switchNode',
      name: 'Eligible?',
      position: { x: 0, y: 0 },
      content: {
        hitPolicy: 'first',
        statements: [
          { id: 'yes', condition: 'age >= 18 and income > 0 and lti < 5' },
          { id: 'no', condition: '' },
        ],
      },
    },
    ...CHARACTERISTICS.map((c, k) => ({
      id: `c${k}`,
      type: 'decisionTableNode',
      name: c.name,
      position: { x: 0, y: 0 },
      content: {
        hitPolicy: 'first',
        passThrough: true,
        inputField: null,
        outputPath: null,
        executionMode: 'single',
        inputs: [{ id: 'i', name: c.variable, field: c.variable }],
        outputs: [{ id: 'o', name: 'points', field: `points.${c.variable}` }],
        rules: [
          ...c.bins.map((b, r) => ({
            _id: `r${r}`,
            i: b.values ? b.values.map((v) => JSON.stringify(v)).join(', ') : zenRange([b.min, b.max]),
            o: String(b.points),
          })),
          { _id: 'else', i: '', o: String(c.elsePoints) },
        ],
      },
    })),
    // Score and reason codes in zen's own expression language (zen has no sort: each characteristic's rank among
    // the lost points is counted, then the first three ranks are picked in order).
    {
      id: 'reasons',
      type: 'expressionNode',
      name: 'Score and reason codes',
      position: { x: 0, y: 0 },
      content: {
        passThrough: true,
        inputField: null,
        outputPath: null,
        executionMode: 'single',
        expressions: reasonExpressions(),
      },
    },
    {
      id: 'policy',
      type: 'decisionTableNode',
      name: 'Policy',
      position: { x: 0, y: 0 },
      content: {
        hitPolicy: 'first',
        passThrough: true,
        inputField: null,
        outputPath: null,
        executionMode: 'single',
        inputs: [
          { id: 'score', name: 'score', field: 'score' },
          { id: 'dti', name: 'dti', field: 'dti' },
        ],
        outputs: [
          { id: 'decision', name: 'decision', field: 'decision' },
          { id: 'tier', name: 'tier', field: 'tier' },
          { id: 'limitFactor', name: 'limitFactor', field: 'limitFactor' },
        ],
        rules: RULES.map((r, k) => ({
          _id: `p${k}`,
          score: zenRange(r.score),
          dti: zenRange(r.dti),
          decision: JSON.stringify(r.decision),
          tier: JSON.stringify(r.tier),
          limitFactor: String(r.limitFactor),
        })),
      },
    },
    {
      id: 'reject',
      type: 'expressionNode',
      name: 'Ineligible',
      position: { x: 0, y: 0 },
      content: {
        passThrough: false,
        inputField: null,
        outputPath: null,
        executionMode: 'single',
        expressions: [
          { id: 'r1', key: 'decision', value: '"REJECT"' },
          { id: 'r2', key: 'tier', value: '"E"' },
          { id: 'r3', key: 'limitFactor', value: '0' },
          { id: 'r4', key: 'score', value: 'null' },
          { id: 'r5', key: 'reasonCodes', value: '["INELIGIBLE"]' },
        ],
      },
    },
    { id: 'out', type: 'outputNode', name: 'Result', position: { x: 0, y: 0 } },
  ];
  const chainIds = ['in', 'ratios', 'eligible'];
  const edges: object[] = [];
  const edge = (from: string, to: string, sourceHandle?: string) =>
    edges.push({
      id: `${from}-${to}`,
      type: 'edge',
      sourceId: from,
      targetId: to,
      ...(sourceHandle ? { sourceHandle } : {}),
    });
  edge(chainIds[0], chainIds[1]);
  edge(chainIds[1], chainIds[2]);
  edge('eligible', 'c0', 'yes');
  for (let k = 1; k < CHARACTERISTICS.length; k++) edge(`c${k - 1}`, `c${k}`);
  edge(`c${CHARACTERISTICS.length - 1}`, 'reasons');
  edge('reasons', 'policy');
  edge('policy', 'out');
  edge('eligible', 'reject', 'no');
  edge('reject', 'out');
  return { contentType: 'application/vnd.gorules.decision', nodes, edges };
}

/** zen expressions: score, lost points per characteristic, their ranks, and the top MAX_REASON_CODES reason codes. */
function reasonExpressions(): { id: string; key: string; value: string }[] {
  const points = CHARACTERISTICS.map((c) => `points.${c.variable}`);
  const best = CHARACTERISTICS.map((c) => Math.max(c.elsePoints, ...c.bins.map((b) => b.points)));
  const loss = (k: number) => `$.tmp.loss[${k}]`;
  // rank of k: characteristics that lost more, or as much and come first
  const rank = (k: number) =>
    CHARACTERISTICS.map((_, j) => (j === k ? null : `(${loss(j)} ${j < k ? '>=' : '>'} ${loss(k)} ? 1 : 0)`))
      .filter(Boolean)
      .join(' + ');
  const candidates = CHARACTERISTICS.map(
    (c, k) => `{ code: ${JSON.stringify(c.reasonCode)}, rank: ${rank(k)}, loss: ${loss(k)} }`,
  );
  const slots = Array.from(
    { length: MAX_REASON_CODES },
    (_, r) => `filter($.tmp.candidates, #.rank == ${r} and #.loss > 0)`,
  );
  return [
    { id: 'score', key: 'score', value: `${BASE_SCORE} + ${points.join(' + ')}` },
    { id: 'loss', key: 'tmp.loss', value: `[${points.map((p, k) => `${best[k]} - ${p}`).join(', ')}]` },
    { id: 'candidates', key: 'tmp.candidates', value: `[${candidates.join(', ')}]` },
    { id: 'reasonCodes', key: 'reasonCodes', value: `map(flatMap([${slots.join(', ')}], #), #.code)` },
  ];
}

/** Deterministic pseudo-random applications. */
export function sampleInputs(count: number, seed = 42): CreditInputs[] {
  let state = seed;
  const rnd = () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
  const pick = <T>(list: T[]) => list[Math.floor(rnd() * list.length)];
  return Array.from({ length: count }, () => ({
    age: 16 + Math.floor(rnd() * 60),
    income: Math.round(rnd() * 9000 * 100) / 100,
    debt: Math.round(rnd() * 4000 * 100) / 100,
    employmentYears: Math.floor(rnd() * 20),
    housing: pick(['OWN', 'RENT', 'FAMILY']),
    creditHistoryYears: Math.floor(rnd() * 15),
    latePayments: Math.floor(rnd() * 6),
    loanAmount: Math.round(rnd() * 200000),
    loanTermMonths: pick([12, 24, 36, 60, 120]),
    dependents: Math.floor(rnd() * 5),
    region: pick(['N', 'S', 'E', 'W']),
    hasCollateral: rnd() > 0.5,
  }));
}

export function pickResult(r: Record<string, unknown>): CreditResult {
  return {
    decision: r.decision as string,
    tier: r.tier as string,
    limitFactor: r.limitFactor as number,
    score: (r.score ?? null) as number | null,
    reasonCodes: r.reasonCodes as string[],
  };
}
