import type { Diagnostic, GraphNode } from '../types.js';
import { isReservedName, referencedIdentifiers, SANDBOX_GLOBALS } from './js-identifiers.js';

export type SyntaxChecker = (
  code: string,
  kind: 'statements' | 'expression',
) => { message: string; line?: number; column?: number } | null;

/** Per-node helpers that check references and code, recording diagnostics against the node. */
export class NodeContext {
  constructor(
    readonly node: GraphNode,
    private readonly vars: Set<string>,
    private readonly open: boolean,
    private readonly allVariables: Set<string>,
    readonly diagnostics: Diagnostic[],
    private readonly checkSyntax: SyntaxChecker,
  ) {}

  /** An explicit reference to a variable by name. */
  reference(name: string, path: string): void {
    if (this.open || this.vars.has(name)) return;
    this.diagnostics.push({
      code: 'UNDEFINED_VARIABLE',
      message: `Node "${this.node.id}" reads variable "${name}", which no upstream node defines`,
      nodeId: this.node.id,
      path,
    });
  }

  /** Checks a code snippet; returns the variable names to bind for it. */
  code(code: string, path: string, kind: 'statements' | 'expression', own: Set<string> = new Set()): string[] {
    const problem = this.checkSyntax(code, kind);
    if (problem) {
      const code_ = kind === 'statements' ? 'SCRIPT_SYNTAX_ERROR' : 'EXPRESSION_SYNTAX_ERROR';
      this.diagnostics.push({
        code: code_,
        message: `Syntax error in node "${this.node.id}": ${problem.message}`,
        nodeId: this.node.id,
        path,
        ...(problem.line ? { line: problem.line, column: problem.column } : {}),
      });
      return [];
    }
    const bound: string[] = [];
    for (const name of referencedIdentifiers(code)) {
      if (own.has(name)) continue;
      if (this.vars.has(name)) bound.push(name);
      else if (this.open) {
        if (!SANDBOX_GLOBALS.has(name) && /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && !isReservedName(name))
          bound.push(name);
      } else if (this.allVariables.has(name)) {
        this.diagnostics.push({
          code: 'UNDEFINED_VARIABLE',
          message: `Node "${this.node.id}" reads variable "${name}", which no upstream node defines`,
          nodeId: this.node.id,
          path,
        });
      }
    }
    return bound;
  }

  /** An expression over a fixed set of names (validators). */
  expression(code: string, path: string, names: Set<string>): string[] {
    const problem = this.checkSyntax(code, 'expression');
    if (problem) {
      this.diagnostics.push({
        code: 'EXPRESSION_SYNTAX_ERROR',
        message: `Syntax error in node "${this.node.id}": ${problem.message}`,
        nodeId: this.node.id,
        path,
        ...(problem.line ? { line: problem.line, column: problem.column } : {}),
      });
      return [];
    }
    return [...referencedIdentifiers(code)].filter((n) => names.has(n));
  }
}
