/** The comparison stage of `skill-up compare` (pure): arms from saved runs, the comparison, and its renderings. */
export { armsFromEngines, armsFromRuns, armsFromVariants, CompareInputError, type Arm, type ArmPair, type ComparedDoc, type CompareMode, type Group } from './arms.js';
export { compareArms, type CaseChange, type CaseSide, type ChangeLabel, type Comparison, type CompareOptions, type CompareVerdict, type GroupComparison } from './compare.js';
export { comparisonText } from './text.js';
export { comparisonMarkdown, type CompareMarkdownOptions } from './markdown.js';
export { comparisonHtml, escapeHtml, COMPARE_CSP } from './html.js';
export { comparisonJson, COMPARE_JSON_VERSION } from './json.js';
