// `npm run lint` (with knip): typescript-eslint with type information over src/, engines/,
// test/, bench/ and the config files. Type information comes from tsconfig.eslint.json (the
// build's settings plus tests and benchmarks). Any finding, warning or error, fails the lint.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'test-artifacts/**',
      // Fixtures are inputs of the tests (some deliberately malformed), not code of the project.
      '**/fixtures/**',
      'engines/*/samples/**',
      'examples/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: 'module',
      globals: { ...globals.node },
      parserOptions: { project: './tsconfig.eslint.json', tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // The defects this lint is for: promises nobody awaits or that land where a callback's
      // return value is ignored, awaits of non-promises, dead bindings, assertions that change nothing.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      '@typescript-eslint/no-unnecessary-type-assertion': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { prefer: 'type-imports', fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      // Off: parsed input (JSON.parse, YAML) is deliberately typed as `any`/`unknown` and then
      // validated against a schema or narrowed; these rules flag only that style.
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      // Off: `String(x ?? '')` of a parsed JSON field typed `unknown` is that same style.
      '@typescript-eslint/no-base-to-string': 'off',
      // Off: an `async` implementation of a Promise-returning interface turns throws into
      // rejections, which is why such functions are async even with nothing to await.
      '@typescript-eslint/require-await': 'off',
      // Off: tests match column-aligned terminal output, where the run of spaces is the point.
      'no-regex-spaces': 'off',
    },
  },
  {
    files: ['test/**/*.ts', '**/*.test.ts'],
    rules: {
      // Off: vitest's mocks and `expect(obj.method)` pass methods unbound by design.
      '@typescript-eslint/unbound-method': 'off',
      // Off: tests read the JSON documents they check by path (`doc.jobs[0].turns`), the JSON.parse style.
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    // Plain JavaScript (benchmarks, this file): no type annotations to import or assert.
    files: ['**/*.js', '**/*.mjs'],
    rules: {
      '@typescript-eslint/consistent-type-imports': 'off',
    },
  },
  {
    // The HTML report's page script: browser JavaScript, not part of the TypeScript program.
    files: ['src/report/html/assets/**/*.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { sourceType: 'script', globals: { ...globals.browser }, parserOptions: { project: false, projectService: false } },
  },
);
