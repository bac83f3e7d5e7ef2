import { routes } from '../../generated/routes.js';
import { castsIn, operationsCalledBy } from './tour-source.js';

describe('what the consumer runner reads in a tour', () => {
  it('counts as-casts, non-null assertions and angle-bracket casts', () => {
    const source = 'const a = x as Foo;\nconst b = y!.z;\nconst c = <Foo>bar;\nconst d = items[0]!;\n';
    expect(castsIn(source).map((cast) => cast.line)).toEqual([1, 2, 3, 4]);
  });

  it('ignores as const, !==, negation, generic arrow functions, comments and strings', () => {
    const source = [
      "const e = ['a'] as const;",
      'if (a !== b && !c) {}',
      'export const f = <T>(config: T): T => config;',
      '// read it as text, x as y',
      "check(ok, 'name the requester as generated!');",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a tour's source text, with a template literal in it
      'const g = `${name} as ${other}!`;',
    ].join('\n');
    expect(castsIn(source)).toEqual([]);
  });

  it('finds operations called by name or, for openapi-fetch, by method and path', () => {
    const called = operationsCalledBy(
      "await scoreScenario({ query });\nawait client.GET('/api/models/{name}', {});\n// openScenario(",
      routes,
    );
    expect([...called].sort()).toEqual(['getModel', 'scoreScenario']);
  });
});
