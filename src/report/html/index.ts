/** The self-contained HTML report (design.md, `report/`): `renderHtmlReport(resultDoc)` → HTML text. */
export { prepareHtmlReport, renderHtmlReport } from './render.js';
