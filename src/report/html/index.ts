/** The self-contained HTML report (design.md, `report/`): `renderHtmlReport(resultDoc)` → HTML text. */
export { prepareHtmlReport, renderHtmlPieces, renderHtmlReport } from './render.js';
