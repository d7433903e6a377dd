/**
 * The `config/` stage: eval.yaml + case files → a validated, fully merged `Suite`.
 *
 * Every problem of the whole suite (eval.yaml, each case file, each SKILL.md) is collected
 * before anything is thrown, so a user fixes a suite in one pass.
 */
import path from 'node:path';
import { lintSkill } from '../skill/lint.js';
import { planSkillInstall, SkillInstallError } from '../skill/install.js';
import type { CaseSpec, JudgeSpec, Suite } from './types.js';
import { buildCase, idFromFileName, type CaseDefaults } from './case.js';
import { ConfigError, DiagnosticBag, type Diagnostic } from './diagnostics.js';
import { isFile, resolveEvalFile, skillRootOf } from './discover.js';
import { buildEval, phraseEvalSchema } from './eval.js';
import { forgetRealPaths, outsideSkillProblem } from './paths.js';
import { reportSchemaErrors } from './schema-errors.js';
import { buildTriggerCases } from './triggers.js';
import { Field, readYamlSource, type YamlSource } from './yaml-source.js';
import { openYamlCache, type YamlCache } from './yaml-cache.js';

export { resolveEvalFile } from './discover.js';

/** Options of {@link loadSuite}. */
export interface LoadOptions {
  /** Folder relative targets are resolved against (and where discovery starts). */
  cwd: string;
  /**
   * `true` (default; `skill-up validate`): a problem in any case file makes loadSuite throw.
   * `false` (`skill-up run` with case filters): a case file whose problems are confined to
   * itself is left out of `suite.cases` and listed in `invalidCases` instead, so unrelated
   * broken cases do not block a filtered run; the caller must fail if it selects one of them.
   * Problems in eval.yaml, inline cases, SKILL.md and duplicate ids always throw.
   */
  validateAllCases?: boolean;
}

/** A case file left out under `validateAllCases: false`. */
export interface InvalidCase {
  /** The case id (explicit or from the file name). */
  id: string;
  file: string;
  diagnostics: Diagnostic[];
}

/** What {@link loadSuite} returns. */
export interface LoadResult {
  suite: Suite;
  /** Warnings of the whole suite (unsupported fields ignored, SKILL.md advice, …), sorted by file and line. */
  warnings: Diagnostic[];
  /** Notes (`info`): e.g. each SKILL.md field that is one engine's extension. `validate` prints them; `run` does not. */
  notes?: Diagnostic[];
  /** Only with `validateAllCases: false`: case files with errors, left out of the suite. */
  invalidCases: InvalidCase[];
}

interface LoadedCase {
  spec: CaseSpec;
  /** Where the id is written (the `id` value, or the case's root when it comes from the file name). */
  idAt: Field;
  /** The case itself (a case file's root, or its `cases.inline` item). */
  field: Field;
}

/**
 * Loads and validates a suite.
 *
 * `target` is resolved by {@link resolveEvalFile} (an eval file, a skill folder, a folder
 * holding eval.yaml, or undefined to discover upwards from `opts.cwd`). The skill root is the
 * parent of the `evals/` folder holding eval.yaml, else eval.yaml's own folder; every
 * relative path of the format is relative to it, and every path in the result is absolute.
 *
 * Checks, each reported at `file:line:col` with its field path: YAML syntax; the JSON
 * Schemas (`schemas/eval.schema.json`, `schemas/case.schema.json`: unknown keys with a
 * did-you-mean, wrong types, enums, ranges); case files that do not exist, globs that match
 * nothing, files listed twice; duplicate case ids (reported at every place); `input.prompt`
 * XOR `input.turns`; regexes that do not compile; fixture, patch, golden and script paths that
 * are missing or escape the skill folder; workspace paths that are absolute or climb out;
 * engine names (aliases, did-you-mean, `engine.custom` for other names); secrets in a custom
 * engine's command, args, cwd or URL; SKILL.md of every `skills[]` entry (via `lintSkill`).
 *
 * @returns the suite with `cases.defaults` and eval-level judges merged into every case, and
 *   the warnings (unsupported alibaba fields that are ignored, lint advice).
 * @throws ConfigError holding every error (and warning) found; never any other error for bad input.
 */
export async function loadSuite(target: string | undefined, opts: LoadOptions): Promise<LoadResult> {
  const evalFile = resolveEvalFile(target, opts.cwd);
  const skillDir = skillRootOf(evalFile);
  const bag = new DiagnosticBag();
  // eval.yaml and the case files answered from the suite's parse cache where unchanged; saved below.
  const yamlCache = openYamlCache(skillDir);
  forgetRealPaths();

  const evalSrc = readYamlSource(evalFile, bag, yamlCache);
  const evalRoot = Field.root(evalSrc, bag);
  // With a syntax error the parsed data is partial: eval-level checks would only add noise,
  // but the case files it names are still read, so their problems are reported too.
  const evalOk = evalSrc.ok && checkDocument(evalRoot, 'eval');
  const quiet = new DiagnosticBag();
  const parts = buildEval(evalOk ? evalRoot : Field.root(evalSrc, quiet), evalFile, skillDir);

  const cases: LoadedCase[] = [];
  for (const item of parts.inline) {
    cases.push({ spec: buildCase(item, evalFile, undefined, parts.defaults), idAt: item.has('id') ? item.get('id') : item, field: item });
  }
  // eval.yaml `triggers.file`: one trigger case per item, reported at its line of the JSON file.
  if (evalOk) for (const t of buildTriggerCases(parts.triggers, parts.defaults)) cases.push({ spec: t.spec, idAt: t.at, field: t.at });
  const invalidCases: InvalidCase[] = [];
  const caseBags: DiagnosticBag[] = [];
  for (const { file } of parts.caseFiles) {
    const caseBag = new DiagnosticBag();
    const loaded = loadCaseFile(file, caseBag, parts.defaults, yamlCache);
    if (opts.validateAllCases === false && caseBag.hasErrors) {
      invalidCases.push({ id: loaded?.spec.id ?? idFromFileName(file), file, diagnostics: caseBag.sorted() });
      bag.warn(file, 0, 0, '', 'this case has errors and was left out of the run (see `skill-up validate`)');
      continue;
    }
    caseBags.push(caseBag);
    if (loaded) cases.push(loaded);
  }
  if (evalOk) {
    reportDuplicateIds(cases, skillDir);
    reportCapturesWithoutResume(cases, parts.suite.engines);
    reportInheritedJudgesWithoutCriteria(cases, parts.defaults.judges, evalRoot);
  }
  // Case fields report into their own bag (duplicate ids included), merged only now.
  for (const b of caseBags) bag.items.push(...b.items);
  if (evalOk && cases.length === 0 && invalidCases.length === 0 && !bag.hasErrors) {
    const at = evalRoot.has('cases') ? evalRoot.get('cases') : evalRoot;
    at.error('the suite has no cases: list case files in `cases.files` (e.g. `[evals/cases/*.yaml]`) or write cases under `cases.inline`', 'key');
  }
  await lintSkills(parts.suite.skills.map((s) => s.path), evalRoot, skillDir, bag);
  await checkSkillSelections(parts.suite.skills, evalRoot, skillDir, bag);
  // Also when the suite has errors: the files that parsed cleanly are valid YAML all the same.
  yamlCache.save();

  if (bag.hasErrors) throw new ConfigError(bag.sorted());
  const suite: Suite = { ...parts.suite, cases: cases.map((c) => c.spec) };
  const sorted = bag.sorted();
  return { suite, warnings: sorted.filter((d) => d.severity === 'warning'), notes: sorted.filter((d) => d.severity === 'info'), invalidCases };
}

/** Reads, validates and builds one case file; undefined when it is unreadable or not YAML. */
function loadCaseFile(file: string, bag: DiagnosticBag, defaults: CaseDefaults, cache: YamlCache): LoadedCase | undefined {
  const src: YamlSource = readYamlSource(file, bag, cache);
  if (!src.ok) return undefined;
  const root = Field.root(src, bag);
  if (!checkDocument(root, 'case')) return undefined;
  const spec = buildCase(root, file, idFromFileName(file), defaults);
  return { spec, idAt: root.has('id') ? root.get('id') : root, field: root };
}

/**
 * Validates a whole document against its schema. False when the document is not a map at all
 * (empty, a list, a scalar): nothing more can be checked in it.
 */
function checkDocument(root: Field, kind: 'eval' | 'case'): boolean {
  const what = kind === 'eval' ? 'an eval file' : 'a case file';
  const wanted = kind === 'eval' ? 'a map starting with `schema_version: v1alpha1`' : 'a map with at least `input: {prompt: …}`';
  if (root.missing) {
    root.error(`the file is empty; ${what} must be ${wanted}`);
    return false;
  }
  if (!root.isMap()) {
    const got = Array.isArray(root.value) ? 'a list' : `a single value (${typeof root.value})`;
    const hint = Array.isArray(root.value) && kind === 'case' ? '; write one case per file (remove the leading `- `)' : '';
    root.error(`${what} must be ${wanted}, but this file is ${got}${hint}`);
    return false;
  }
  reportSchemaErrors(kind, root, kind === 'eval' ? phraseEvalSchema : undefined);
  return true;
}

/**
 * Reports every place a case id is used more than once, naming the other places. Ids that
 * differ only in letter case (`Same`, `same`) count as the same: their job folders would be
 * one folder on a case-insensitive file system (macOS, Windows).
 */
function reportDuplicateIds(cases: LoadedCase[], skillDir: string): void {
  const byId = new Map<string, LoadedCase[]>();
  for (const c of cases) {
    if (c.spec.id === '') continue;
    const key = c.spec.id.toLowerCase();
    byId.set(key, [...(byId.get(key) ?? []), c]);
  }
  for (const group of byId.values()) {
    if (group.length < 2) continue;
    for (const c of group) {
      const id = c.spec.id;
      const others = group.filter((o) => o !== c).map((o) => (o.spec.id === id ? placeOf(o, skillDir) : `${placeOf(o, skillDir)} (as \`${o.spec.id}\`)`));
      const fromName = c.idAt.segments.length === 0 || !c.idAt.segments.includes('id') ? ' (taken from the file name)' : '';
      const caseOnly = group.some((o) => o.spec.id !== id)
        ? '. Case ids must be unique in a suite, also ignoring letter case: their job folders would be the same folder on macOS and Windows'
        : '. Case ids must be unique in a suite';
      c.idAt.error(`duplicate case id \`${id}\`${fromName}; also used at ${others.join(', ')}${caseOnly}`, 'value');
    }
  }
}

/**
 * A conversation (more than one turn) with `capture` needs an engine that resumes a session:
 * a custom engine without `conversation_mode: stateful` gets the turns as one prompt, so every
 * job of the case would error (src/run/job.ts converse). Reported at the first `capture`.
 */
function reportCapturesWithoutResume(cases: LoadedCase[], engines: Suite['engines']): void {
  const batch = engines.filter((e) => e.name === 'custom' && e.custom !== undefined && e.custom.conversationMode !== 'stateful');
  if (batch.length === 0) return;
  for (const c of cases) {
    if (c.spec.turns.length < 2 || (c.spec.engines && !c.spec.engines.includes('custom'))) continue;
    const turn = c.field
      .get('input')
      .get('turns')
      .items()
      .find((t) => t.get('capture').items().length > 0);
    if (!turn) continue;
    const names = batch.map((e) => `\`${e.displayName}\``).join(', ');
    turn.get('capture').error(
      `\`capture\` needs an engine that resumes the session, but custom engine ${names} has no \`conversation_mode: stateful\`: its ${c.spec.turns.length} turns would be sent as one prompt and nothing could be captured (every job would error); set \`engine.custom.conversation_mode: stateful\` or remove the capture`,
      'key',
    );
  }
}

/**
 * An eval-level agent_judge may leave `criteria` to the cases (alibaba files do), but a case
 * that inherits it unchanged would have nothing to grade.
 */
function reportInheritedJudgesWithoutCriteria(cases: LoadedCase[], evalJudges: JudgeSpec[], evalRoot: Field): void {
  const users = cases.filter((c) => c.spec.judges === evalJudges).map((c) => `\`${c.spec.id}\``);
  if (users.length === 0) return;
  evalJudges.forEach((j, i) => {
    if (j.type !== 'agent_judge' || j.criteria.length > 0) return;
    const at = evalRoot.has('judge') ? evalRoot.get('judge') : evalRoot.get('judges').get(i);
    // `criteria` written but not a list: the schema says it must be a list, at its line; "no criteria" would mislead.
    if (at.has('criteria') && !Array.isArray(at.get('criteria').value)) return;
    at.get('type').error(
      `this \`agent_judge\` has no \`criteria\`, and case${users.length > 1 ? 's' : ''} ${users.join(', ')} use${users.length > 1 ? '' : 's'} it as is; add \`criteria\` here or give ${users.length > 1 ? 'those cases' : 'that case'} a judge with criteria`,
    );
  });
}

function placeOf(c: LoadedCase, skillDir: string): string {
  const { line, col } = c.idAt.position('value');
  return `${path.relative(skillDir, c.idAt.src.file) || path.basename(c.idAt.src.file)}:${line}:${col}`;
}

/**
 * Lints SKILL.md of every skill folder. Problems about the folder itself (SKILL.md missing)
 * are reported at the eval.yaml entry that names the folder, so they have a line.
 */
async function lintSkills(dirs: string[], evalRoot: Field, skillDir: string, bag: DiagnosticBag): Promise<void> {
  const explicit = evalRoot.get('skills').items().length > 0;
  for (const [i, dir] of dirs.entries()) {
    let diagnostics: Diagnostic[];
    try {
      ({ diagnostics } = await lintSkill(dir));
    } catch (e) {
      diagnostics = [{ file: path.join(dir, 'SKILL.md'), line: 0, col: 0, path: '', message: `cannot lint SKILL.md: ${(e as Error).message}`, severity: 'error' }];
    }
    for (const d of diagnostics) {
      if (d.line > 0) {
        bag.items.push(d);
        continue;
      }
      const at = explicit ? evalRoot.get('skills').get(skillIndex(evalRoot, skillDir, dir, i)).get('path') : evalRoot.get('skills');
      const where = explicit ? `in ${dir}` : `in the skill root ${dir} (\`skills\` defaults to it)`;
      const { line, col } = at.position(explicit ? 'value' : 'key');
      bag.items.push({ ...d, file: evalRoot.src.file, line, col, path: at.path, message: `${d.message} (${where})` });
    }
  }
}

/**
 * Checks each skill's file selection as `run` will install it (skill/install.ts: SKILL.md
 * selected, no symbolic link out of the skill folder), reported at the eval.yaml entry that
 * names the skill, so `validate` finds what `run` would refuse before its first job.
 */
async function checkSkillSelections(skills: Suite['skills'], evalRoot: Field, skillDir: string, bag: DiagnosticBag): Promise<void> {
  const explicit = evalRoot.get('skills').items().length > 0;
  for (const [i, s] of skills.entries()) {
    // A missing SKILL.md, or one that leads out of the skill folder, is lintSkill's to report (once).
    const skillMd = path.join(s.path, 'SKILL.md');
    if (!isFile(skillMd) || outsideSkillProblem(s.path, skillMd) !== undefined) continue;
    try {
      await planSkillInstall({ skillDir: s.path, include: s.include, exclude: s.exclude });
    } catch (e) {
      if (!(e instanceof SkillInstallError)) throw e;
      const at = explicit ? evalRoot.get('skills').get(skillIndex(evalRoot, skillDir, s.path, i)).get('path') : evalRoot.get('skills');
      const { line, col } = at.position(explicit ? 'value' : 'key');
      bag.error(evalRoot.src.file, line, col, at.path, e.message);
    }
  }
}

/** The `skills[]` index whose folder is `dir` (skipped entries shift positions). */
function skillIndex(root: Field, skillDir: string, dir: string, fallback: number): number {
  const items = root.get('skills').items();
  const found = items.findIndex((f) => {
    const p = f.get('path').str();
    return p !== undefined && path.resolve(skillDir, p) === dir;
  });
  return found >= 0 ? found : fallback;
}
