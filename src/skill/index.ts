/** The `skill/` stage: parse and lint SKILL.md, select and install a skill's files. */
export { lintSkill, SPEC_FIELDS, LIMITS, type SkillLintResult } from './lint.js';
export { selectSkillFiles, ALWAYS_EXCLUDED } from './select.js';
export { installSkill, SkillInstallError, type InstallSkillOptions } from './install.js';
