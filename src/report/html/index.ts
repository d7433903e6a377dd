/** The self-contained HTML report (design.md, `report/`): `renderHtmlReport(resultDoc)` → HTML text. */
export { renderHtmlReport } from './render.js';
