/** The comparison stage of `skill-up compare` (pure): arms from saved runs, the comparison, and its renderings. */
export { armsFromEngines, armsFromRuns, armsFromVariants, CompareInputError, type ComparedDoc } from './arms.js';
export { compareArms, type CompareOptions } from './compare.js';
export { comparisonText } from './text.js';
export { comparisonMarkdown } from './markdown.js';
export { comparisonHtml, escapeHtml, COMPARE_CSP } from './html.js';
export { comparisonJson } from './json.js';
