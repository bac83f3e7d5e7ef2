/** Renders generated/routes.ts: the route table (operationId → method, path, security) and the OperationId type. */
import { operationsOf, type Spec } from './spec-document.js';

export function renderRouteTable(spec: Spec, header: string): string {
  const rows = operationsOf(spec).map(({ path, method, operation }) => {
    const schemes = [...new Set((operation.security ?? []).flatMap((requirement) => Object.keys(requirement)))];
    const expressPath = path.replace(/\{([^}]+)\}/g, ':$1');
    return `  { operationId: '${operation.operationId}', method: '${method}', path: '${path}', expressPath: '${expressPath}', security: [${schemes.map((s) => `'${s}'`).join(', ')}] },`;
  });
  return `${header}
export type SecuritySchemeName = 'bearerAuth' | 'scoreTokenQuery' | 'scoreTokenHeader';

export interface RouteDefinition {
  readonly operationId: string;
  readonly method: 'get' | 'put' | 'post' | 'delete' | 'patch' | 'head' | 'options';
  /** The path as written in the spec (\`{param}\`). */
  readonly path: string;
  /** The same path in Express syntax (\`:param\`). */
  readonly expressPath: string;
  /** Schemes of which any one authenticates the request; empty for public operations. */
  readonly security: readonly SecuritySchemeName[];
}

export const routes = [
${rows.join('\n')}
] as const satisfies readonly RouteDefinition[];

/** Every operation of the spec; \`OperationHandlers\` (src/http/operation-handler.ts) needs a handler for each. */
export type OperationId = (typeof routes)[number]['operationId'];
`;
}
