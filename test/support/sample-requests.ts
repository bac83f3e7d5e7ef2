import { routes, type RouteDefinition } from '../../generated/routes.js';

const SAMPLE_PATH_VALUES: Record<string, string> = {
  id: '1',
  testCaseId: '1',
  copiedScenarioName: 'copy',
  currentName: 'current',
  newName: 'renamed',
  name: 'scenario',
  batchTaskId: '00000000-0000-4000-8000-000000000000',
  collection_name: 'customers',
  recordId: '00000000-0000-4000-8000-000000000001',
  replayId: '00000000-0000-4000-8000-000000000000',
  shadowId: '00000000-0000-4000-8000-000000000001',
  splitId: '00000000-0000-4000-8000-000000000002',
  version: '1',
};

/** A concrete URL for each operation of the spec (path parameters filled with plausible values). */
export function sampleUrl(route: RouteDefinition): string {
  return route.path.replace(/\{([^}]+)\}/g, (_match, name: string) => {
    const value = SAMPLE_PATH_VALUES[name];
    if (!value) throw new Error(`no sample value for path parameter ${name}`);
    return value;
  });
}

const allRoutes: readonly RouteDefinition[] = routes;

export const bearerRoutes = allRoutes.filter((route) => route.security.includes('bearerAuth'));
export const scoreTokenRoutes = allRoutes.filter((route) =>
  route.security.some((scheme) => scheme.startsWith('scoreToken')),
);
