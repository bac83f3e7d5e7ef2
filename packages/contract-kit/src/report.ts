import type { Exchange } from './contract-client.js';
import type { ServedSpec } from './served-spec.js';

/** One row per operation of the served spec: what was called, what came back, and whether it all held. */
interface OperationRow {
  operationId: string;
  method: string;
  path: string;
  calls: number;
  statuses: number[];
  result: 'PASS' | 'FAIL' | 'NOT RUN';
}

export interface ContractReport {
  rows: OperationRow[];
  /** Every exchange with a violation. */
  failures: Exchange[];
  exchanges: Exchange[];
  passed: boolean;
}

export function buildReport(spec: ServedSpec, exchanges: Exchange[]): ContractReport {
  const rows: OperationRow[] = [...spec.operations.values()].map((operation) => {
    const mine = exchanges.filter((exchange) => exchange.operationId === operation.operationId);
    const statuses = [
      ...new Set(mine.map((exchange) => exchange.status).filter((status): status is number => status !== undefined)),
    ].sort();
    const result =
      mine.length === 0 ? 'NOT RUN' : mine.some((exchange) => exchange.violations.length > 0) ? 'FAIL' : 'PASS';
    return {
      operationId: operation.operationId,
      method: operation.method.toUpperCase(),
      path: operation.path,
      calls: mine.length,
      statuses,
      result,
    };
  });
  // Steps may name operations the served spec lacks (an operation renamed or removed): they count too.
  for (const exchange of exchanges) {
    if (!spec.operations.has(exchange.operationId) && !rows.some((row) => row.operationId === exchange.operationId)) {
      rows.push({
        operationId: exchange.operationId,
        method: '',
        path: '(not in the served spec)',
        calls: 1,
        statuses: [],
        result: 'FAIL',
      });
    }
  }
  const failures = exchanges.filter((exchange) => exchange.violations.length > 0);
  return { rows, failures, exchanges, passed: failures.length === 0 && !rows.some((row) => row.result === 'FAIL') };
}

function table(header: string[], lines: string[][]): string {
  const widths = header.map((title, column) => Math.max(title.length, ...lines.map((line) => line[column].length)));
  const format = (cells: string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column]))
      .join('  ')
      .trimEnd();
  return [format(header), format(widths.map((width) => '-'.repeat(width))), ...lines.map(format)].join('\n');
}

export function formatReport(report: ContractReport): string {
  const lines = report.rows.map((row) => [
    row.operationId,
    `${row.method} ${row.path}`.trim(),
    String(row.calls),
    row.statuses.join(','),
    row.result,
  ]);
  const parts = [table(['operation', 'method and path', 'calls', 'statuses', 'result'], lines)];
  if (report.failures.length > 0) {
    parts.push('', 'Violations:');
    for (const failure of report.failures) {
      parts.push(
        `- ${failure.operationId}: ${failure.label} — ${failure.method} ${failure.url}${failure.status ? ` → ${failure.status}` : ''}`,
      );
      for (const violation of failure.violations) parts.push(`    ${violation}`);
    }
  }
  const passed = report.rows.filter((row) => row.result === 'PASS').length;
  const failed = report.rows.filter((row) => row.result === 'FAIL').length;
  const notRun = report.rows.filter((row) => row.result === 'NOT RUN').length;
  parts.push(
    '',
    `contract: ${passed} passed, ${failed} failed (operations; ${notRun} not run, ${report.exchanges.length} requests checked)`,
  );
  return parts.join('\n');
}
